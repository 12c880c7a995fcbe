"""The daily load curve (issue 11): default diurnal shape, derived blocks, refusals.

Numbers are worked by hand in the comments; the solve tests use conftest's tiny
catalog (H100 instance: on-demand $4/h, 1-year reserved $3/h, 10 req/s per unit).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import H1, serve, units
from solver.cli import app
from solver.errors import ProcureError
from solver.inputs.load import diurnal_factors, resolve_load
from solver.inputs.problem import parse_problem
from solver.solve import solve_problem


def problem(workloads, **extra):
    data = {"name": "tiny", "horizon_months": 1, "modes": ["on_demand"], "workloads": workloads}
    data.update(extra)
    return parse_problem(data)


def test_default_shape_r3_has_mean_1_and_max_3():
    # r = 3: mean of s = ((1 + cos)/2)^k over 24 hours is C(2k, k) / 4^k: k=1 0.5, k=2 0.375,
    # k=3 0.3125 <= 1/3 -> k = 3; trough m = (1 - 3 x 0.3125) / (1 - 0.3125) = 1/11.
    f = diurnal_factors(3.0)
    assert f.mean() == pytest.approx(1.0)
    assert f.max() == pytest.approx(3.0) and int(f.argmax()) == 14
    assert f.min() == pytest.approx(1 / 11)
    # 6 h from the peak s = ((1 + cos 90 deg) / 2)^3 = 1/8: f = 1/11 + (3 - 1/11) / 8 = 5/11
    assert f[20] == pytest.approx(5 / 11)


def test_flat_day_for_r1():
    assert np.allclose(diurnal_factors(1.0), 1.0)
    lb = resolve_load(problem([serve(10)]))
    assert lb.names == ("day",) and lb.hours_per_day == (24.0,)
    assert lb.factors["chat"] == (1.0,)


def test_default_blocks_4_8_12_for_r3():
    # Peak hours 12-15 (14 at 3; 13, 15 and the tie 12/16 broken to the earlier hour),
    # shoulder the next 8 (16, 11, 17, 10, 18, 9, 19, 8), base the other 12.
    # Factors = max over each block: 3; f(16) = 1/11 + (30/11) x ((1 + cos 30 deg)/2)^3
    # = 0.0909 + 2.7273 x 0.81218 ... exactly 1/11 + (3 - 1/11) x 0.9330127^3 = 2.4536;
    # base max f(20) = 5/11 (6 h from the peak).
    lb = resolve_load(problem([serve(10, peak_to_average=3)]))
    assert lb.names == ("peak", "shoulder", "base")
    assert lb.hours_per_day == (4.0, 8.0, 12.0)
    assert lb.hours[0] == (12, 13, 14, 15)
    s2 = ((1 + math.cos(math.pi / 6)) / 2) ** 3
    peak, shoulder, base = lb.factors["chat"]
    assert peak == pytest.approx(3.0)
    assert shoulder == pytest.approx(1 / 11 + (3 - 1 / 11) * s2)
    assert base == pytest.approx(5 / 11)


def test_hourly_profile_normalised_and_cut_into_blocks():
    # Hours 0-11 at 1, 12-15 at 4, 16-23 at 2.5: mean (12 + 16 + 20) / 24 = 2, so the
    # factors are 0.5, 2 and 1.25: blocks peak (12-15) 2, shoulder (16-23) 1.25, base 0.5.
    hourly = [1.0] * 12 + [4.0] * 4 + [2.5] * 8
    lb = resolve_load(problem([serve(10)], load_profile={"hourly": hourly}))
    assert lb.hours == ((12, 13, 14, 15), tuple(range(16, 24)), tuple(range(12)))
    assert lb.factors["chat"] == pytest.approx((2.0, 1.25, 0.5))


def test_workload_profile_wins_over_problem_and_blocks_align_peaks():
    # The problem's flat profile is overridden by the workload's; a second workload with a
    # blocks profile (no clock hours) has its 4 h block laid on the aggregate's top hours.
    hourly = [1.0] * 12 + [4.0] * 4 + [2.5] * 8  # as above: 0.5 / 2 / 1.25
    a = serve(10, load_profile={"hourly": hourly})
    # 4 h at 3.5 and 20 h at 0.5: mean (14 + 10) / 24 = 1, factors unchanged
    b = dict(
        serve(
            10,
            load_profile={
                "blocks": [
                    {"name": "rush", "hours_per_day": 4, "factor": 3.5},
                    {"name": "rest", "hours_per_day": 20, "factor": 0.5},
                ]
            },
        ),
        name="api",
    )
    lb = resolve_load(problem([a, b], load_profile={"hourly": [1.0] * 24}))
    assert lb.factors["chat"] == pytest.approx((2.0, 1.25, 0.5))
    assert lb.factors["api"] == pytest.approx((3.5, 0.5, 0.5))


def test_reserved_base_on_demand_peak(tiny_catalog):
    # 10 req/s average; 8 h at 2x (20 req/s: 2 H100) and 16 h at 0.5x (5 req/s: 1 H100);
    # mean (16 + 8) / 24 = 1. 12 months = 8,760 h, 2,920 of them peak. Per day:
    #   all on-demand: 2 x $4 x 8 h + 1 x $4 x 16 h = $128
    #   1 reserved (flat) + 1 on-demand at peak: $3 x 24 + $4 x 8 = $104   <- optimum
    #   2 reserved: $3 x 2 x 24 = $144
    # Year: 1 x $3 x 8,760 + 1 x $4 x 2,920 = 26,280 + 11,680 = $37,960.
    # `fleet: per_block` (opt-in): the on-demand unit runs at peak only. Under the default
    # autoscale a rented offering deployed runs a unit all day, and the optimum is all
    # on-demand, 1 unit +1 at peak: $128 x 365 = $46,720.
    profile = {
        "blocks": [
            {"name": "peak", "hours_per_day": 8, "factor": 2.0},
            {"name": "base", "hours_per_day": 16, "factor": 0.5},
        ]
    }
    p = problem(
        [serve(10, fleet="per_block")],
        horizon_months=12,
        modes=["on_demand", "reserved_1y"],
        load_profile=profile,
    )
    plan = solve_problem(p, tiny_catalog([H1]))
    assert plan.status == "optimal"
    assert plan.total_cost_usd == pytest.approx(37_960)
    assert units(plan, "reservation") == {"acme/us-east/h1": 1}
    rented = {i.block: i.units for i in plan.line_items if i.item == "rent"}
    assert rented.get("peak") == 1 and not rented.get("base")


def test_default_curve_cheaper_than_peak_all_day(tiny_catalog):
    # 10 req/s at r = 3 on on-demand H100s, 1 month (730 h): blocks need
    # ceil(30 / 10) = 3 units for 4 h, ceil(24.54 / 10) = 3 for 8 h, ceil(4.55 / 10) = 1
    # for 12 h: (3 x 4 + 3 x 8 + 1 x 12) / 24 x 730 h x $4 = 48 / 24 x 2,920 = $5,840,
    # versus the old default, 3 units all day: 3 x 730 x $4 = $8,760.
    plan = solve_problem(problem([serve(10, peak_to_average=3)]), tiny_catalog([H1]))
    assert plan.total_cost_usd == pytest.approx(5840)


BAD = [
    ({"hourly": [1.0] * 23}, "has 23 values; give 24"),
    ({"hourly": [1.0] * 23 + [-1.0]}, "greater than or equal to 0"),
    ({"hourly": [1.0] * 23 + [float("nan")]}, "finite"),
    ({"hourly": [0.0] * 24}, "all zeros"),
    ({"blocks": [{"name": "a", "hours_per_day": 20, "factor": 1}]}, "cover 20 h/day"),
    ({"hourly": [1.0] * 24, "blocks": []}, "exactly one"),
    ({"hourly": [1.0] * 24, "shape": "x"}, "shape"),
]


@pytest.mark.parametrize(("profile", "fragment"), BAD)
def test_bad_profiles_refused_naming_the_field(profile, fragment):
    with pytest.raises(ProcureError) as err:
        problem([serve(10)], load_profile=profile)
    assert fragment in err.value.render()
    assert "load_profile" in (err.value.field or "")


def test_bad_workload_profile_names_the_workload():
    with pytest.raises(ProcureError) as err:
        problem([serve(10, load_profile={"hourly": [1.0] * 25})])
    assert "has 25 values" in err.value.message and "chat" in err.value.field


def test_load_blocks_and_profile_together_refused():
    blocks = [{"name": "day", "hours_per_day": 24, "demand_factor": 1}]
    with pytest.raises(ProcureError, match="give one"):
        problem([serve(10)], load_blocks=blocks, load_profile={"hourly": [1.0] * 24})


def test_cli_exit_2_without_traceback(tmp_path):
    bad = tmp_path / "p.yaml"
    bad.write_text(
        "name: t\nhorizon_months: 1\nload_profile: {hourly: [1, 2, 3]}\nworkloads:\n"
        "  - {kind: inference, name: chat, model: llama-3-8b, demand: {requests_per_s: 1},\n"
        "     prompt_tokens: 10, output_tokens: 10, ttft_slo: 1 s, tpot_slo: 50 ms}\n"
    )
    result = CliRunner().invoke(app, ["solve", str(bad)])
    assert result.exit_code == 2
    assert "has 3 values; give 24" in result.output and "Traceback" not in result.output


def test_schema_shows_the_new_fields():
    result = CliRunner().invoke(app, ["schema"])
    assert result.exit_code == 0
    assert "load_profile" in result.output and "24 demand factors" in result.output


def test_peak_to_average_contradicting_the_profile_refused():
    # The hourly profile above peaks at 2 x its average; peak_to_average 3 says otherwise.
    hourly = [1.0] * 12 + [4.0] * 4 + [2.5] * 8
    p = problem([serve(10, peak_to_average=3, load_profile={"hourly": hourly})])
    with pytest.raises(ProcureError, match="peak is 2 x"):
        resolve_load(p)
    # r above 24 cannot be an hourly shape with mean 1 (all demand in one hour is 24)
    with pytest.raises(ProcureError, match="above 24"):
        resolve_load(problem([serve(10, peak_to_average=30)]))
