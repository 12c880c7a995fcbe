"""SLOs at a percentile under load (issue 33): the problem field, compile and the verifier.

One H100 instance ($4/h, tests/conftest.py H1) serves Llama 3 8B BF16, 100-token prompts
and 1,000-token answers, within a 10 ms time per output token: decode is memory-bound, so
the batch the SLO allows sets the capacity (physics worked in tests/physics/
test_load_latency.py).
"""

from __future__ import annotations

import pytest

from conftest import H1, HOURS, check, problem, units
from solver.core.compile import compile_problem
from solver.errors import ProcureError
from solver.solve import solve_problem


def chat(**extra) -> dict:
    w = dict(
        kind="inference",
        name="chat",
        model="llama-3-8b",
        demand={"tokens_per_s": 7800},
        prompt_tokens=100,
        output_tokens=1000,
        ttft_slo="1 s",
        tpot_slo="10 ms",
    )
    w.update(extra)
    return w


def test_p99_slo_needs_a_third_unit_where_the_mean_needs_two(tiny_catalog):
    cat = tiny_catalog([H1])
    # the mean is asked for by name (p99 is the default)
    mean = compile_problem(problem([chat(slo_percentile="mean")]), cat).options.iloc[0]
    p99 = compile_problem(problem([chat(slo_percentile=0.99)]), cat).options.iloc[0]
    # At the mean the 10 ms step allows 51 sequences (9.985 ms): 51 / 9.985 ms = 5,107 tok/s.
    # At p99 under Poisson arrivals at 80% utilisation the planned batch b must keep
    # ceil(0.8 b + 2.3263 sqrt(0.8 b) - 0.5) <= 51 running: b = 46 (36.8 + 14.1 - 0.5 =
    # 50.4 -> 51) meets, b = 47 (37.6 + 14.3 - 0.5 = 51.4 -> 52) does not; 46 / 9.79 ms =
    # 4,699 tok/s.
    assert (int(mean["batch"]), int(p99["batch"])) == (51, 46)
    assert float(mean["tokens_per_s_per_unit"]) == pytest.approx(5107.4, abs=0.5)
    assert float(p99["tokens_per_s_per_unit"]) == pytest.approx(4698.7, abs=0.5)
    # demand 7,800 / 0.8 = 9,750 tok/s: 9,750 / 5,107 = 1.91 -> 2 units at the mean,
    # 9,750 / 4,699 = 2.07 -> 3 at p99 ($4 x 730 h each)
    at_mean = solve_problem(problem([chat(slo_percentile="mean")]), cat)
    at_p99 = solve_problem(problem([chat(slo_percentile=0.99)]), cat)
    assert units(at_mean) == {"acme/us-east/h1": 2}
    assert units(at_p99) == {"acme/us-east/h1": 3}
    assert at_p99.total_cost_usd == pytest.approx(3 * 4.0 * HOURS)
    # the verifier recomputes the SLOs at p99 from the physics (not the solver's numbers)
    ok, detail = check(at_p99, "memory and SLOs met (physics recomputed)")
    assert ok, detail


def test_p90_at_eighty_percent_utilisation_keeps_the_planned_step_within_the_limit(tiny_catalog):
    # p90: b = 53: 42.4 + 1.2816 x 6.512 - 0.5 = 50.25 -> 51 running meets the percentile;
    # b = 54: 43.2 + 1.2816 x 6.573 - 0.5 = 51.1 -> 52 misses. But the capacity reported
    # is b / t(b), and at the mean the 10 ms step allows only 51 sequences: the
    # operating-point rule (docs/guides/operating-point.md) keeps the planned batch's own
    # step within the limit, so 51 (was 53 before the rule, a step over 10 ms reported).
    cat = tiny_catalog([H1])
    p90 = compile_problem(problem([chat(slo_percentile=0.9)]), cat).options.iloc[0]
    assert int(p90["batch"]) == 51


@pytest.mark.parametrize("bad", [1.0, 0.3, "p99"])
def test_slo_percentile_must_be_a_fraction_from_one_half_below_one(bad):
    # 0.5 <= p < 1 (p50 is the median; p = 1 has no finite quantile under Poisson arrivals)
    with pytest.raises(ProcureError) as exc:
        problem([chat(slo_percentile=bad)])
    assert "slo_percentile" in str(exc.value) or "slo_percentile" in (exc.value.field or "")


def test_a_percentage_for_a_percentile_gets_a_fix_that_says_fraction():
    # 99 (a percentage, the likely slip for p99) is refused with a fix naming 0.99
    with pytest.raises(ProcureError) as exc:
        problem([chat(slo_percentile=99)])
    assert "0.99 for p99" in exc.value.fix


def test_online_workloads_are_checked_at_p99_unless_the_problem_asks_for_the_mean():
    # issue 47: p99 is the default (MLPerf Inference's server scenario states its limits
    # at p99); 'mean' (or null) keeps the mean, and the percentile is echoed on the plan
    default = problem([chat()]).workloads[0]
    assert default.slo_percentile == 0.99
    assert default.load_percentile is not None
    assert (default.load_percentile.p, default.load_percentile.rho) == (0.99, 0.8)
    for mean in ("mean", None):
        w = problem([chat(slo_percentile=mean)]).workloads[0]
        assert w.slo_percentile is None and w.load_percentile is None
