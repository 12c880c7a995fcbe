"""Plans that carry the estimate's uncertainty (issue 33): capacity_confidence,
capacity_optimism and the plan's capacity-band assumptions.

The tiny serving problem of tests/conftest.py: an H100 instance serves 10 requests/s of a
100/100-token bucket (measured), $4/h, one month = 730 h, max_utilisation 1.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import H1, HOURS, check, problem, serve, units
from solver import physics
from solver.errors import ProcureError
from solver.physics.constants import CAPACITY_BAND_LOG, CAPACITY_BAND_LOG_MEASURED
from solver.solve import solve_problem


def test_capacity_derate_is_the_band_quantile():
    # z_0.9 = 1.2816: a 0.283 band (TensorRT-LLM/vLLM on CUDA) keeps exp(-0.3627) = 0.6958
    # of the estimate; a 0.182 band (Gaudi) exp(-0.2332) = 0.7920; none asked keeps 1.
    assert float(physics.capacity_derate(0.9, 0.283)) == pytest.approx(0.6958, abs=1e-4)
    assert float(physics.capacity_derate(0.9, 0.182)) == pytest.approx(0.7920, abs=1e-4)
    assert float(physics.capacity_derate(None, 0.283)) == 1.0
    # by source: measured keeps its own 0.02 band whatever the vendor; physics and
    # calibrated take their runtime's (vllm-cuda on NVIDIA, gaudi on Intel, pooled on TPU)
    bands = physics.capacity_band_log(
        np.array(["nvidia", "intel", "google", "nvidia"], dtype=object),
        np.array(["physics", "calibrated", "physics", "measured"], dtype=object),
    )
    expected = [CAPACITY_BAND_LOG["vllm-cuda"], CAPACITY_BAND_LOG["gaudi"], 0.193, 0.02]
    assert list(bands) == pytest.approx(expected)
    assert CAPACITY_BAND_LOG_MEASURED == 0.02


def test_confidence_and_optimism_add_units_and_the_verifier_agrees(tiny_catalog):
    cat = tiny_catalog([H1])
    # today: 40 req/s over 10 per unit = 4 units
    assert units(solve_problem(problem([serve(40)]), cat)) == {"acme/us-east/h1": 4}
    # 90% confidence on a measured profile: 10 x exp(-1.2816 x 0.02) = 9.747 req/s per unit,
    # 40 / 9.747 = 4.10 -> 5 units ($4 x 730 h each)
    sure = solve_problem(problem([serve(40)], capacity_confidence=0.9), cat)
    assert units(sure) == {"acme/us-east/h1": 5}
    assert sure.total_cost_usd == pytest.approx(5 * 4.0 * HOURS)
    ok, detail = check(sure, "unit time split across buckets")
    assert ok, detail
    # estimates taken as 1.6x optimistic: 10 / 1.6 = 6.25 per unit, 40 / 6.25 = 6.4 -> 7
    wary = solve_problem(problem([serve(40)], capacity_optimism=1.6), cat)
    assert units(wary) == {"acme/us-east/h1": 7}


def test_plan_says_what_it_serves_if_estimates_are_one_and_a_half_times_optimistic(
    tiny_catalog,
):
    cat = tiny_catalog([H1])
    plan = solve_problem(problem([serve(40)]), cat)
    found = {(a.kind, a.name): a for a in plan.assumptions}
    # 4 units x 10 req/s = 40 req/s against 40 at max_utilisation 1: if every estimate is
    # 1.5x optimistic they serve 40 / 1.5 = 26.7 req/s, 0.667 of peak
    stress = found[("capacity_band", "peak_served_if_1.5x_optimistic")]
    assert stress.value == pytest.approx(1 / 1.5, abs=1e-4)
    counted = found[("capacity_band", "capacity_counted")]
    # no confidence asked: the whole estimate is counted; the 90% band of the measured
    # profile is exp(-+1.6449 x 0.02) = 0.9676-1.0334
    assert counted.value == 1.0
    assert (counted.low, counted.high) == pytest.approx(
        (math.exp(-1.6449 * 0.02), math.exp(1.6449 * 0.02)), abs=1e-4
    )


@pytest.mark.parametrize(
    "field, bad",
    [("capacity_confidence", 1.0), ("capacity_confidence", 0.2), ("capacity_optimism", 0.5)],
)
def test_capacity_fields_are_validated(field, bad):
    # confidence 0.5 <= c < 1 (a quantile of the band); optimism >= 1 (a factor the
    # estimates are too high by)
    with pytest.raises(ProcureError) as exc:
        problem([serve(40)], **{field: bad})
    assert field in str(exc.value) or field in (exc.value.field or "")


def test_a_percentage_for_a_confidence_gets_a_fix_that_says_fraction():
    # 90 (a percentage) is refused with a fix naming the fraction 0.9
    with pytest.raises(ProcureError) as exc:
        problem([serve(40)], capacity_confidence=90)
    assert "0.9 for 90%" in exc.value.fix
