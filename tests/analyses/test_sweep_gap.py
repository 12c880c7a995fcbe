"""The report's sweep gap (``procure report --sweep-gap``): every point proven to it and
carrying the gap it reached, and the monotone repair of the frontier and the budget sweep.

The repair cases are worked by hand on points as a sweep gives them; the solves use the
tiny world of test_sensitivity.py (H100 10 req/s $4/h, L4 2 req/s $1/h, 730 h).
"""

from __future__ import annotations

import inspect

import pytest
from typer.testing import CliRunner

from conftest import H1, HOURS, L4, offering, problem, serve, write_catalog
from solver.analyses.sensitivity import report_sweeps
from solver.analyses.sensitivity.monotone import monotone_budget, monotone_frontier
from solver.analyses.sensitivity.results import SweepPoint
from solver.analyses.sensitivity.sweeps import POINT_GAP, SWEEP_GAP
from solver.core.compile import compile_problem
from solver.outputs.report_sweep_views import plans_label, sweep_table, within

EU = offering("h1eu", "h100-sxm", 1, 5.0, region="eu-north")


def _cap(cap: float, cost: float, bound: float, co2e: float, pools: list[str]) -> SweepPoint:
    return SweepPoint(
        sweep="carbon_cap_tco2e",
        value=cap,
        status="optimal",
        objective=cost,
        total_cost_usd=cost,
        total_co2e_t=co2e,
        served_fraction=1.0,
        used=pools,
        bound=bound,
        gap=(cost - bound) / cost,
    )


def test_a_looser_cap_takes_the_tighter_caps_cheaper_plan_and_keeps_its_own_bound():
    # Three caps proven to 0.5%. The 3 t cap's solve stopped at $100,200 (bound $99,700:
    # gap 0.499%) although the 2 t cap's plan costs $99,800 and emits 1.9 t <= 3 t: it is
    # a plan of the 3 t problem too, so the 3 t point shows it. Its bound stays the 3 t
    # problem's own $99,700 (the 2 t bound, $99,500, is no bound for a looser cap), so its
    # gap is (99,800 - 99,700) / 99,800 = 0.1002%.
    points = [
        _cap(3.0, 100_200.0, 99_700.0, 2.9, ["b"]),
        _cap(1.0, 101_000.0, 100_600.0, 0.9, ["c"]),
        _cap(2.0, 99_800.0, 99_500.0, 1.9, ["a"]),
    ]
    out = monotone_frontier(points)
    assert [p.value for p in out] == [1.0, 2.0, 3.0]
    assert out[:2] == [points[1], points[2]]  # nothing tighter is cheaper: unchanged
    repaired = out[2]
    assert (repaired.total_cost_usd, repaired.total_co2e_t, repaired.used) == (
        99_800.0,
        1.9,
        ["a"],
    )
    assert (repaired.value, repaired.bound, repaired.plan_of) == (3.0, 99_700.0, 2.0)
    assert repaired.gap == pytest.approx(100.0 / 99_800.0, rel=1e-12)  # 0.1002%
    costs = [p.total_cost_usd for p in out]
    assert costs == sorted(costs, reverse=True)  # looser, never dearer


def test_without_the_repair_the_looser_cap_would_show_the_dearer_plan():
    # the same points with the 2 t cap's plan dearer than the 3 t cap's: nothing to take
    points = [
        _cap(2.0, 100_300.0, 99_900.0, 1.9, ["a"]),
        _cap(3.0, 100_200.0, 99_700.0, 2.9, ["b"]),
    ]
    assert monotone_frontier(points) == points


def _budget(budget: float, objective: float, bound: float, served: float) -> SweepPoint:
    return SweepPoint(
        sweep="budget_usd",
        value=budget,
        status="optimal",
        objective=objective,
        total_cost_usd=budget * 0.99,
        served_fraction=served,
        bound=bound,
        gap=(objective - bound) / objective,
    )


def test_more_budget_never_serves_less():
    # max served: the objective is cost + the shortfall's penalty. The $20k point's solve
    # stopped at objective 1,000,600 (bound 996,100: gap 0.4497%) serving 0.80; the $10k
    # plan serves 0.82 at objective 1,000,500, fits $20k, and is better on both: taken,
    # with the $20k bound: gap (1,000,500 - 996,100) / 1,000,500 = 0.4398%.
    taken = monotone_budget(
        [_budget(20_000, 1_000_600.0, 996_100, 0.80), _budget(10_000, 1_000_500.0, 995_000, 0.82)]
    )
    assert [p.value for p in taken] == [10_000, 20_000]
    assert [p.served_fraction for p in taken] == [0.82, 0.82]
    assert taken[1].plan_of == 10_000 and taken[1].bound == 996_100
    assert taken[1].gap == pytest.approx(4_400.0 / 1_000_500.0, rel=1e-12)  # 0.4398%


def test_a_plan_that_serves_more_within_the_sweep_gap_is_taken():
    # $20k: objective 1,000,000, bound 995,000 (gap 0.5%), serves 0.80. The $10k plan
    # serves 0.82 at objective 1,002,000, higher: taking it would state a gap of
    # (1,002,000 - 995,000) / 1,002,000 = 0.6986%, beyond the sweep's 0.5%: not taken.
    # With the $20k bound at 997,000 (own gap 0.3%) the $10k plan's gap there is
    # 5,000 / 1,002,000 = 0.4990% <= 0.5%: taken, and the chart serves more.
    low = [_budget(10_000, 1_002_000.0, 994_000, 0.82)]
    not_taken = monotone_budget([*low, _budget(20_000, 1_000_000.0, 995_000, 0.80)], 0.005)
    assert not_taken[1].served_fraction == 0.80 and not_taken[1].plan_of is None
    taken = monotone_budget([*low, _budget(20_000, 1_000_000.0, 997_000, 0.80)], 0.005)
    assert taken[1].served_fraction == 0.82 and taken[1].plan_of == 10_000
    assert taken[1].gap == pytest.approx(5_000.0 / 1_002_000.0, rel=1e-12)  # 0.4990%
    # without the sweep's gap (0: the point's own 0.3% only) it is not taken
    assert monotone_budget([*low, _budget(20_000, 1_000_000.0, 997_000, 0.80)])[1].plan_of is None


def test_gap_in_words_never_claims_more_than_the_proof():
    assert within(0.0) == "optimal"
    assert within(1e-4) == "optimal"  # the solve's own default gap
    assert within(0.005) == "within 0.5%"
    assert within(0.0043) == "within 0.43%"  # 0.4% would claim more
    assert within(0.00432) == "within 0.44%"  # rounded up, never down
    assert within(None) == "not proven"
    pts = [_cap(1.0, 100.0, 99.6, 1.0, []), _cap(2.0, 100.0, 99.9, 1.0, [])]  # 0.4%, 0.1%
    assert plans_label(pts) == "plans within 0.4% of optimal"
    # a point stored before points kept their gap (a workspace frontier, an old
    # analysis.json): proven to the default then, as its status says
    old = _cap(1.0, 100.0, 100.0, 1.0, []).model_copy(update={"gap": None, "bound": None})
    assert sweep_table([old])["proven"].tolist() == ["optimal"]
    assert plans_label([old]) == "optimal plans"


def test_report_sweeps_prove_every_point_to_the_sweep_gap(tiny_catalog, monkeypatch):
    # every solve of the sweeps is asked for the sweep gap, and every point states a gap
    # no larger; in this tiny world the plans are the optima (25 req/s: 2 H1 + 3 L4 =
    # $11/h, 1.5 x: 37.5 req/s = 3 H1 + 4 L4 ($16/h)... as test_sensitivity's sweeps)
    from solver.analyses.sensitivity import sweeps

    asked: list[float] = []
    real = sweeps.optimise

    def recording(compiled, model, *, solver, options, **kw):
        asked.append(options.relative_gap)
        return real(compiled, model, solver=solver, options=options, **kw)

    monkeypatch.setattr(sweeps, "optimise", recording)
    compiled = compile_problem(
        problem([serve(25)]), tiny_catalog([H1, L4, EU]), prune_dominated=False
    )
    out = report_sweeps(
        compiled,
        frontier_points=3,
        budgets_usd=[6 * HOURS, 11 * HOURS],
        demand_factors=[1.0, 2.0],
        scenarios=3,
        spread=0.1,
        seed=1,
        gap=0.01,
    )
    assert asked and set(asked) == {0.01}
    points = [
        *out["carbon frontier"],  # type: ignore[misc]
        *out["budget sweep"],  # type: ignore[misc]
        *out["demand sweep"],  # type: ignore[misc]
        *out["price scenarios"][0],  # type: ignore[index]
    ]
    assert all(p.gap is not None and 0 <= p.gap <= 0.01 for p in points)
    assert all(p.bound is not None and p.bound <= p.objective * (1 + 1e-9) for p in points)
    # 2 x demand: 50 req/s = 5 H1 = $20/h, within 1% of it
    assert out["demand sweep"][1].total_cost_usd == pytest.approx(20 * HOURS, rel=0.01)
    frontier = out["carbon frontier"]
    costs = [p.total_cost_usd for p in frontier]  # type: ignore[union-attr]
    assert costs == sorted(costs, reverse=True)  # looser caps, never dearer
    table = sweep_table(frontier)  # type: ignore[arg-type]
    assert all(s == "optimal" or s.startswith("within ") for s in table["proven"])


def test_the_cli_default_is_the_sweep_gap_and_a_bad_one_is_refused(tmp_path):
    from solver.cli import analyses

    default = inspect.signature(analyses.report).parameters["sweep_gap"].default
    assert default == SWEEP_GAP == 5e-3
    assert POINT_GAP == 1e-4  # the plan's own, which break-even prices keep
    cat = write_catalog(tmp_path / "cat", [offering("h1", "h100-sxm", 1, 4.0)])
    prob = tmp_path / "p.yaml"
    prob.write_text("name: x\n")
    from solver.cli import app

    for bad in ("-0.1", "1.5", "nan"):
        res = CliRunner().invoke(
            app,
            [
                "report",
                str(prob),
                "--catalog",
                str(cat),
                "--out",
                str(tmp_path / "r"),
                "--sweep-gap",
                bad,
            ],
        )
        assert res.exit_code == 2, res.output
        assert "--sweep-gap" in res.output and "Traceback" not in res.output
