"""How rented serving units may change over the day (``fleet``, issue 28): per load
block, autoscaled (the offerings deployed for a period run all day, units added at
peak) or flat; worked by hand on the tiny catalog, and on the shipped seed."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import H1, HOURS, L4, check, problem, serve
from solver.core import dominance
from solver.core.backends import SolveOptions
from solver.core.compile import compile_problem
from solver.core.model import build_model
from solver.errors import ProcureError
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import load_problem, parse_problem
from solver.solve import optimise, solve_problem

ROOT = Path(__file__).resolve().parents[2]

# Two 12-hour blocks, factors 1.6 and 0.4 (mean 1): 10 req/s on average is 16 req/s at
# peak and 4 at base. An H100 instance (H1) serves 10 req/s for $4/h, an L4 2 for $1/h.
BLOCKS = {
    "blocks": [
        {"name": "peak", "hours_per_day": 12, "factor": 1.6},
        {"name": "base", "hours_per_day": 12, "factor": 0.4},
    ]
}
BLOCK_HOURS = HOURS / 2  # 365 h of each block in the one-month period


def _plan(tiny_catalog, fleet: str | None):
    extra = {} if fleet is None else {"fleet": fleet}
    p = problem([serve(10, **extra)], load_profile=BLOCKS)
    return solve_problem(p, tiny_catalog([H1, L4]))


def _units(plan) -> dict[tuple[str, str], float]:
    return {(i.instance_type, i.block): i.units for i in plan.line_items if i.item == "rent"}


def test_autoscale_is_the_default(tiny_catalog):
    # Without `fleet` the workload autoscales (issue 28: "autoscales ... (the default)"):
    # the plan below, {L4}: 8 at peak, 2 at base, $8 x 365 + $2 x 365 = $3,650, not the
    # per-block $3,285 (next test); the settings table says it is the default
    plan = _plan(tiny_catalog, None)
    assert plan.total_cost_usd == pytest.approx(8 * BLOCK_HOURS + 2 * BLOCK_HOURS)
    assert _units(plan) == {("l4", "peak"): 8, ("l4", "base"): 2}
    setting = next(a for a in plan.assumptions if a.name == "fleet")
    assert (setting.value, setting.basis) == ("autoscale", "default")
    ok, _ = check(plan, "autoscaled fleet: a deployed offering runs all day")
    assert ok


def test_per_block_is_opt_in_and_swaps_hardware(tiny_catalog):
    # Peak 16 req/s: 1 H1 + 3 L4 = $7/h (2 H1 or 8 L4 cost $8); base 4 req/s: 2 L4 = $2/h.
    # $7 x 365 + $2 x 365 = $3,285; the H100 runs at peak only.
    plan = _plan(tiny_catalog, "per_block")
    assert plan.total_cost_usd == pytest.approx(7 * BLOCK_HOURS + 2 * BLOCK_HOURS)
    assert _units(plan) == {("h1", "peak"): 1, ("l4", "peak"): 3, ("l4", "base"): 2}
    h1 = next(d for d in plan.deployments if d.offering.endswith("/h1"))
    assert (h1.base_units, h1.peak_units) == (0, 1)


def test_autoscale_keeps_the_offerings_all_day(tiny_catalog):
    # Every deployed offering runs at least one unit in both blocks:
    #   {H1, L4}: peak 1 H1 + 3 L4 $7, base 1 H1 + 1 L4 $5 -> $12 per hour of a block pair;
    #   {H1}:     peak 2 H1 $8, base 1 H1 $4 -> $12;
    #   {L4}:     peak 8 L4 $8, base 2 L4 $2 -> $10, the cheapest.
    # $8 x 365 + $2 x 365 = $3,650 (+$365, +11% on the per-block plan).
    plan = _plan(tiny_catalog, "autoscale")
    assert plan.total_cost_usd == pytest.approx(8 * BLOCK_HOURS + 2 * BLOCK_HOURS)
    assert _units(plan) == {("l4", "peak"): 8, ("l4", "base"): 2}
    (d,) = plan.deployments
    assert (d.base_units, d.peak_units, d.units_by_block) == (2, 8, {"peak": 8, "base": 2})
    ok, detail = check(plan, "autoscaled fleet: a deployed offering runs all day")
    assert ok, detail


def test_flat_runs_the_peak_fleet_all_day(tiny_catalog):
    # The same units in both blocks, so the peak's cheapest mix all day: 1 H1 + 3 L4 at
    # $7/h x 730 h = $5,110.
    plan = _plan(tiny_catalog, "flat")
    assert plan.total_cost_usd == pytest.approx(7 * HOURS)
    assert _units(plan) == {
        ("h1", "peak"): 1,
        ("l4", "peak"): 3,
        ("h1", "base"): 1,
        ("l4", "base"): 3,
    }
    ok, detail = check(plan, "flat fleet: the same units in every block")
    assert ok, detail


def test_a_bad_fleet_names_the_field():
    data = {
        "name": "x",
        "horizon_months": 1,
        "workloads": [serve(10, fleet="steady")],
    }
    with pytest.raises(ProcureError) as err:
        parse_problem(data)
    assert "fleet" in str(err.value) + str(err.value.field or "")
    assert "autoscale" in str(err.value) + str(err.value.fix or "")


def _seed(fleet: str):
    p = load_problem(ROOT / "problems" / "seed-2m-13b.yaml")
    workloads = [
        w.model_copy(update={"fleet": fleet}) if w.kind == "inference" else w for w in p.workloads
    ]
    return p.model_copy(update={"workloads": workloads})


def test_the_seed_autoscaled_changes_no_hardware_within_a_day(seed_plan):
    # Autoscaled (the default, so the shipped seed as solved, tests/golden), each serving
    # period runs the same two offerings all day (issue 47's chunked-prefill sizing; before
    # it, Lambda GH200 alone): Lambda GH200 in europe-central-1 at $2.29/h (list; 1 at base,
    # 3 at shoulder, 1 at peak) and Seeweb H200 (ECS1GPU10) at EUR 2.60/h x 1.1761 =
    # $3.05786/h (list; 1 at base, 2 at shoulder, 4 at peak). Both are list prices, whose
    # band is 0: price_guard: none plans the same (guarded, only the training's price rises,
    # to $422,763.09 in the objective). Serving by hand, unit-hours
    # a day over the 12 h base, 8 h shoulder and 4 h peak: Lambda 1 x 12 + 3 x 8 + 1 x 4 = 40,
    # Seeweb 1 x 12 + 2 x 8 + 4 x 4 = 44, over the 366 + 365 + 275 = 1,006 days of months
    # 4-36 from 2027-04: 40 x 1,006 x $2.29 + 44 x 1,006 x $3.05786 = $92,149.60 +
    # $135,353.12 = $227,502.72; plus training (5 MI325X-8x, $142,525.82) = $370,028.54 at
    # catalog prices.
    plan = seed_plan
    serving = sum(i.cost_usd for i in plan.line_items if i.item == "rent")
    by_hand = 40 * 1006 * 2.29 + 44 * 1006 * 2.60 * 1.1761
    assert serving == pytest.approx(by_hand, abs=0.01) == pytest.approx(227_502.72, abs=0.01)
    assert {d.offering for d in plan.deployments} == {
        "lambda/europe-central-1/gpu_1x_gh200",
        "seeweb/it-fr2/ECS1GPU10",
    }
    assert plan.total_cost_usd == pytest.approx(370_028.54, abs=0.01)
    for d in plan.deployments:
        assert d.base_units >= 1, d  # every deployed offering runs all day
    keys = {(d.workload, d.period, d.offering) for d in plan.deployments}
    assert len(keys) == len(plan.deployments)  # one deployment per offering and period


def test_the_fleet_lines_read_as_base_and_units_added_where_most_run(seed_plan):
    # The seed (default: autoscaled, guarded), in each serving period: Lambda GH200 1 at
    # base, 3 at shoulder, 1 at peak: 1 all day, 2 more "at shoulder"; Seeweb H200 1, 2, 4:
    # 1 all day, 3 more "at peak".
    import json

    from solver.outputs.text import fleet_lines
    from solver.plan import Plan

    assert fleet_lines(seed_plan) == [
        f"fleet chat-13b {t}: lambda/europe-central-1/gpu_1x_gh200 1 +2 at shoulder, "
        "seeweb/it-fr2/ECS1GPU10 1 +3 at peak"
        for t in ("m04-15", "m16-27", "m28-36")
    ]
    golden = json.loads((ROOT / "tests" / "golden" / "traffic-mix-measured.json").read_text())
    plan = Plan.model_validate({**golden["output"], "cash_flow": []})  # undated in golden
    [line] = fleet_lines(plan)
    # guarded (the default), traffic-mix-measured serves on Lambda GH200 (list) alone: 3 at
    # base, 6 at shoulder, 6 at peak: 3 all day, 3 more
    assert line.endswith("lambda/us-east-1/gpu_1x_gh200 3 +3 at peak")


def test_the_restricted_start_stops_at_one_percent_and_the_solve_does_not():
    # The autoscaled seed's LP support, as a MIP (HighsSession.restricted_start): with the
    # ``fleet_small_cover`` rows (issue 28) the LP's support holds the seed's optimal plan,
    # so that MIP's optimum is the seed's own (bench/archive/RESULTS-2026.md, "Autoscaled
    # fleets: a start at 1%" and "the lost unit at least the largest deployed"); no start can
    # cost less than the optimum, in the objective (at guarded prices under the default
    # guard, with the egress it prices) $422,799.14 (the golden's guarded_total_usd
    # $422,763.09 + egress_in_objective_usd $36.05). Its plan is only a start, so that
    # MIP stops within START_GAP = 1% of its bound: a start costs between $422,799.14 and
    # $422,799.14 / 0.99 = $427,069.84. The session's own gap (1e-4) is back afterwards, so
    # the whole MIP from that start still proves the seed's optimum, $422,799.14, to 1e-4.
    from solver.core.backends.highs_backend import START_GAP, HighsSession, _option

    assert START_GAP == 0.01
    compiled = compile_problem(_seed("autoscale"), load_catalog())
    model = build_model(compiled)
    session = HighsSession(model)
    session.h.setOptionValue("mip_rel_gap", 1e-4)
    start = session.restricted_start()
    cost = float(session.cost @ start + model.objective.constant)
    assert 422_799.14 - 0.01 <= cost <= 422_799.14 / 0.99
    assert _option(session.h, "mip_rel_gap") == pytest.approx(1e-4)
    result = session.solve(SolveOptions(relative_gap=1e-4), start=start)
    assert result.objective == pytest.approx(422_799.14, abs=0.01)
    assert result.gap <= 1e-4


def test_pruning_keeps_the_autoscaled_optimum():
    # Dominance compares an autoscaled fleet's columns over the whole day (one stand-in in
    # every block) and asks one cheaper pool to hold a pool's units (solver/core/
    # dominance.py, prune_dominated_pools): the pruned and the unpruned model of the
    # autoscaled eu-70b problem have the same optimal objective, and pruning drops options
    # (47 kept of 153 when measured; bench/quality/fleet_exactness.py runs more problems).
    p = load_problem(ROOT / "problems" / "eu-70b-chat-carbon.yaml")
    workloads = [
        w.model_copy(update={"fleet": "autoscale"}) if w.kind == "inference" else w
        for w in p.workloads
    ]
    p = p.model_copy(update={"workloads": workloads})
    assert any(dominance.steady_fleet(w) for w in p.workloads)
    cat = load_catalog()
    costs, kept = [], []
    for prune in (True, False):
        compiled = compile_problem(p, cat, prune_dominated=prune)
        kept.append(len(compiled.options))
        solution = optimise(
            compiled, build_model(compiled), solver="highs", options=SolveOptions(relative_gap=1e-9)
        )
        costs.append(solution.result.objective)
    assert costs[0] == pytest.approx(costs[1], rel=1e-9)
    assert kept[0] < kept[1]


def test_autoscale_under_n_plus_1_ties_each_deployment_to_the_largest_unit(tiny_catalog):
    # N+1 (capacity less the largest unit >= demand), peak 16 req/s, base 4:
    #   {L4}:     peak 8 + 1 = 9 L4 $9, base 2 + 1 = 3 L4 $3 -> $12;
    #   {H1}:     peak 3 H1 $12 (2 H1 less one is 10 < 16), base 2 H1 $8 -> $20;
    #   {H1, L4}: peak 2 H1 + 3 L4 $11 (20 + 6 - 10 = 16), base 1 H1 + 2 L4 $6 -> $17.
    # {L4} is cheapest: $9 x 365 + $3 x 365 = $4,380. The model has one fleet_class row per
    # deployable offering and block (2 offerings x 2 blocks = 4), and they cut no plan off.
    p = problem([serve(10, fleet="autoscale", redundancy="n_plus_1")], load_profile=BLOCKS)
    cat = tiny_catalog([H1, L4])
    model = build_model(compile_problem(p, cat))
    assert sum(r.family == "fleet_class" for r in model.rows) == 4
    plan = solve_problem(p, cat)
    assert plan.total_cost_usd == pytest.approx(9 * BLOCK_HOURS + 3 * BLOCK_HOURS)
    assert _units(plan) == {("l4", "peak"): 9, ("l4", "base"): 3}


def _day_columns(whole_day: bool):
    """Three options of one workload and period, two blocks (demand 8 and 4 tokens/s), in
    the frame rule 2 reads (solver/core/dominance.py ``_columns``): A $1/h for 4 tokens/s,
    B $2.5/h for 8, C $1.5/h for 12; every pool with room."""
    import pandas as pd

    rows = []
    for block, demand in ((0, 8.0), (1, 4.0)):
        for opt, price, cap in ((0, 1.0, 4.0), (1, 2.5, 8.0), (2, 1.5, 12.0)):
            rows.append((opt, "chat", f"p{opt}", "", cap, price, 0.0, 0, block, demand))
    cols = pd.DataFrame(
        rows,
        columns=["opt", "workload", "pool_id", "key", "cap", "price", "co2", "period", "block"]
        + ["demand"],
    )
    cols = cols.sort_values(["block", "price", "cap"], ascending=[True, True, False])
    cols = cols.reset_index(drop=True)
    cols["ub"] = 1.0
    cols["whole_day"] = whole_day
    cols["group"] = cols["block"]
    cols["row"] = cols.groupby(["pool_id", "period", "block"], sort=False).ngroup()
    return cols


@pytest.mark.parametrize("whole_day", [False, True])
def test_rule_2_over_the_whole_day(whole_day):
    # Units counted at most the demand: at peak (8) A 4, B 8, C 8; at base (4) all 4.
    # B: 2 A ($2) replace one B ($2.5) at peak, 1 A ($1) at base: dominated in both blocks.
    # C: 2 A ($2) cost more than one C ($1.5) at peak; 1 A ($1) replaces it at base.
    # Per block C's base column drops (C still serves the peak); over the whole day C is
    # kept in both blocks (A does not stand in for it at peak), B drops in both.
    import numpy as np

    cols = _day_columns(whole_day)
    n = len(cols)
    alive = dominance._serving_fixpoint(
        cols,
        np.ones(n, dtype=bool),
        np.zeros(n),
        np.full(n, 100.0),
        np.zeros(n, dtype=bool),
        np.zeros(n, dtype=bool),
        whole_multiples=True,
    )
    kept = {
        (int(o), int(b)) for o, b, a in zip(cols["opt"], cols["block"], alive, strict=True) if a
    }
    if whole_day:
        assert kept == {(0, 0), (0, 1), (2, 0), (2, 1)}
    else:
        assert kept == {(0, 0), (0, 1), (2, 0)}


@pytest.mark.parametrize(
    ("deployed", "usd_per_block_pair"),
    [({"l4"}, 12.0), ({"h1"}, 20.0), ({"h1", "l4"}, 17.0)],
)
def test_the_top_cuts_keep_every_deployment_at_its_worked_cost(
    tiny_catalog, deployed, usd_per_block_pair
):
    # The N+1 autoscaled problem above (peak 16 req/s, base 4; H1 10 req/s $4/h, L4 2 req/s
    # $1/h), each set of deployments fixed: {L4} $9 + $3 = $12, {H1} $12 + $8 = $20,
    # {H1, L4} $11 + $6 = $17 per hour of a block pair (worked in the test above), times
    # 365 h. fleet_top_used and fleet_same_top (solver/core/formulation/fleet_rules.py,
    # add_fleet_tops) hold for every plan whose largest unit is taken as the class lost,
    # so none of the three is cut off or made dearer. Classes per block: peak
    # min(10, 16) = 10 and 2; base min(10, 4) = 4 and 2: 2 blocks x 2 classes = 4
    # fleet_top_used rows, and 2 ordered block pairs x 2 classes = 4 fleet_same_top rows.
    p = problem([serve(10, fleet="autoscale", redundancy="n_plus_1")], load_profile=BLOCKS)
    compiled = compile_problem(p, tiny_catalog([H1, L4]))
    model = build_model(compiled)
    assert sum(r.family == "fleet_top_used" for r in model.rows) == 4
    assert sum(r.family == "fleet_same_top" for r in model.rows) == 4
    v = model.variables
    offering = compiled.options.set_index("option_id")["pool_id"]
    for j in v.index[v["kind"] == "deploy"]:
        on = any(f"/{name}#" in offering[v.at[j, "option_id"]] for name in deployed)
        v.loc[j, ["lb", "ub"]] = float(on)
    solution = optimise(compiled, model, solver="highspy", options=SolveOptions(relative_gap=1e-9))
    assert solution.result.objective == pytest.approx(usd_per_block_pair * BLOCK_HOURS)


def test_an_autoscaled_fleet_solved_by_column_generation_costs_what_the_full_model_does(
    tiny_catalog,
):
    # Column generation prices per-block columns only: an autoscaled workload's options
    # stay in the master (their deploy binaries and fleet_* rows are not priced; before,
    # its reduced-cost check stopped the solve as "a bug in procure"). Autoscaled, the
    # tiny case is {L4}: 8 at peak, 2 at base, $8 x 365 + $2 x 365 = $3,650, by either method
    p = problem([serve(10, fleet="autoscale")], load_profile=BLOCKS)
    catalog = tiny_catalog([H1, L4])
    full = solve_problem(p, catalog, method="full")
    by_columns = solve_problem(p, catalog, method="columns")
    assert full.total_cost_usd == pytest.approx(8 * BLOCK_HOURS + 2 * BLOCK_HOURS)
    assert by_columns.total_cost_usd == pytest.approx(full.total_cost_usd)


def test_a_fleet_line_names_the_block_where_an_offering_runs_the_most_units():
    # A traffic mix can run an offering hardest outside the peak block: 2 at base, 4 at
    # shoulder, 1 at peak is 1 all day and 4 - 1 = 3 more at shoulder (not "at peak")
    from types import SimpleNamespace

    from solver.outputs.text import fleet_lines

    blocks = [{"name": b} for b in ("peak", "shoulder", "base")]
    deployment = SimpleNamespace(
        workload="chat",
        period="p1",
        offering="a6000",
        base_units=1.0,
        peak_units=4.0,
        units_by_block={"peak": 1.0, "shoulder": 4.0, "base": 2.0},
    )
    plan = SimpleNamespace(
        deployments=[deployment], compile_report={"load_curve": {"blocks": blocks}}
    )
    assert fleet_lines(plan) == ["fleet chat p1: a6000 1 +3 at shoulder"]


def _lp_relaxation_per_block_pair_hour(model) -> float:
    """The model's LP relaxation (every variable continuous), USD per hour of a block pair."""
    import highspy
    import numpy as np

    from solver.core.backends.highs_backend import HighsSession

    session = HighsSession(model)
    n = len(session.cost)
    kinds = np.full(n, highspy.HighsVarType.kContinuous)
    session.h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), kinds)
    session.h.run()
    value = session.h.getInfo().objective_function_value + model.objective.constant
    return value / BLOCK_HOURS


def test_the_small_cover_cuts_the_small_unit_lost_and_keeps_the_optimum(tiny_catalog, monkeypatch):
    # The N+1 autoscaled problem above (peak 16 req/s, base 4; H1 10 req/s $4/h, L4 2 req/s
    # $1/h; in the rows 1 req/s = 100 tokens/s, classes capped at the block's demand: peak
    # H1 1000, L4 200; base H1 400, L4 200). fleet_small_cover
    # (solver/core/formulation/fleet_rules.py): one row per block with demand and class
    # but the largest: 2 blocks x 1 = 2.
    #   peak: 200 xL >= (1600 + 200) tL, i.e. xL >= 9 tL;  base: xL >= 3 tL.
    # LP with them, t = top of H1 (tL = 1 - t). Peak: 1000 xH + 200 xL >= 1600 + 1000 t +
    # 200 (1 - t) = 1800 + 800 t; H1 is the cheaper capacity ($4 / 1000 < $1 / 200), so
    # the least cost takes xL = 9 (1 - t) and xH = 2.6 t: $9 + 1.4 t >= $9. Base: 400 xH +
    # 200 xL >= 600 + 200 t; L4 is the cheaper capacity ($1 / 200 < $4 / 400): $3 + t >= $3.
    # So the LP is $12 per block-pair hour at t = 0, the MIP's optimum ({L4}, worked above):
    # the relaxation closes. Without the rows the LP (HiGHS) is $10.4970: it deploys 0.0162
    # of an H1 (1.62 H1 at peak under its bound of 100 units per deployment) and takes the
    # L4 as the unit lost at 0.984 in both blocks with only 0.984 L4 at peak; the peak row
    # above cuts that point (200 x 0.984 = 197 < 1800 x 0.984 = 1771).
    import solver.core.formulation.fleet_rules as fleet_rules

    p = problem([serve(10, fleet="autoscale", redundancy="n_plus_1")], load_profile=BLOCKS)
    cat = tiny_catalog([H1, L4])
    compiled = compile_problem(p, cat)
    model = build_model(compiled)
    assert sum(r.family == "fleet_small_cover" for r in model.rows) == 2
    assert _lp_relaxation_per_block_pair_hour(model) == pytest.approx(12.0, rel=1e-6)
    plan = solve_problem(p, cat)
    assert plan.total_cost_usd == pytest.approx(12.0 * BLOCK_HOURS)
    monkeypatch.setattr(fleet_rules, "add_fleet_small_cover", lambda *args: None)
    before = build_model(compiled)
    assert not any(r.family == "fleet_small_cover" for r in before.rows)
    assert _lp_relaxation_per_block_pair_hour(before) == pytest.approx(10.49697, rel=1e-5)
    assert solve_problem(p, cat).total_cost_usd == pytest.approx(12.0 * BLOCK_HOURS)


# A switching cost (`switching_cost_usd`, issue 28: "a switching or minimum-run cost is
# available in solve too"): USD per unit started within the day, in the objective only.
# The blocks profile names no clock hours, so the day passes once from base to peak and
# once back; the month has 730 / 24 = 30.417 days.
DAYS = HOURS / 24


def _switching(tiny_catalog, fleet: str, usd: float):
    p = problem([serve(10, fleet=fleet, switching_cost_usd=usd)], load_profile=BLOCKS)
    return solve_problem(p, tiny_catalog([H1, L4]))


@pytest.mark.parametrize(
    ("fleet", "usd", "cost", "units", "starts_a_day"),
    [
        # per block, free starts: 1 H1 + 3 L4 at peak, 2 L4 at base ($3,285, two starts a
        # day at base -> peak: the H1 and a third L4)
        ("per_block", 0.0, 7 * BLOCK_HOURS + 2 * BLOCK_HOURS, {("h1", "peak"): 1,
         ("l4", "peak"): 3, ("l4", "base"): 2}, 0),
        # $20 a start: two starts cost 2 x 20 x 30.417 = $1,216.67 -> $4,501.67 a month;
        # keeping the 3 L4 at base ($3 for 12 h) leaves one start (the H1): $3,650 +
        # $608.33 = $4,258.33, below; the flat 1 H1 + 3 L4 all day is $5,110; 2 H1 / 1 H1
        # $4,380 + $608.33
        ("per_block", 20.0, 7 * BLOCK_HOURS + 3 * BLOCK_HOURS, {("h1", "peak"): 1,
         ("l4", "peak"): 3, ("l4", "base"): 3}, 1),
        # $100 a start: one start costs $3,041.67, so no start: the peak's fleet all day,
        # 1 H1 + 3 L4 = $7 x 730 = $5,110
        ("per_block", 100.0, 7 * HOURS, {("h1", "peak"): 1, ("l4", "peak"): 3,
         ("h1", "base"): 1, ("l4", "base"): 3}, 0),
        # autoscaled, $20 a start: {L4} 8/2 is $3,650 + 6 starts ($3,650) = $7,300;
        # {H1, L4} 1+3 / 1+1 is $4,380 + 2 starts = $5,596.67; {H1} 2/1 is $4,380 + 1 start
        # = $4,988.33, the cheapest (flat $5,110)
        ("autoscale", 20.0, 8 * BLOCK_HOURS + 4 * BLOCK_HOURS, {("h1", "peak"): 2,
         ("h1", "base"): 1}, 1),
    ],
)  # fmt: skip
def test_a_switching_cost_charges_the_units_started_each_day(
    tiny_catalog, fleet, usd, cost, units, starts_a_day
):
    plan = _switching(tiny_catalog, fleet, usd)
    assert plan.total_cost_usd == pytest.approx(cost)
    assert _units(plan) == units
    # in the objective, not in the cost
    assert plan.switching_penalty_usd == pytest.approx(usd * starts_a_day * DAYS)
    assert plan.objective == pytest.approx(cost + usd * starts_a_day * DAYS)


def test_a_negative_switching_cost_is_refused_by_name(tmp_path):
    path = tmp_path / "p.yaml"
    text = (ROOT / "problems/seed-2m-13b.yaml").read_text()
    path.write_text(text.replace("    redundancy: n_plus_1", "    redundancy: n_plus_1\n"
                                 "    switching_cost_usd: -5"))  # fmt: skip
    with pytest.raises(ProcureError) as err:
        load_problem(path)
    assert "switching_cost_usd" in str(err.value.field) + str(err.value)


def test_the_verifier_recomputes_the_switching_penalty(tiny_catalog):
    # The $20 per-block plan above starts one H100 a day: $20 x 30.417 = $608.33. A plan
    # file claiming no penalty (or twice it) fails the verifier's recomputation from the
    # units by block.
    from solver.trust.verify import verify_plan

    p = problem([serve(10, fleet="per_block", switching_cost_usd=20.0)], load_profile=BLOCKS)
    cat = tiny_catalog([H1, L4])
    plan = solve_problem(p, cat)
    ok, detail = check(plan, "switching penalty recomputed from the units by block")
    assert ok and plan.switching_penalty_usd == pytest.approx(20 * DAYS), detail
    for claimed in (0.0, 40 * DAYS):
        forged = plan.model_copy(update={"switching_penalty_usd": claimed})
        failed = {c.name for c in verify_plan(forged, p, cat) if not c.ok}
        assert failed == {"switching penalty recomputed from the units by block"}
