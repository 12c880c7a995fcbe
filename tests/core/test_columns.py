"""Column generation (issue 14, solver/core/columns.py): the pricing is exact, the bound is
the full LP's, and the plan is feasible and verified.

The instances are bench/generate.py's (the shipped catalog grown to N offerings, seeded
workloads over monthly periods), small enough for the full model to be solved beside.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from generate import generated_problem, scaled_catalog  # noqa: E402

from solver.core import bounds, columns, cuts, reduced_costs  # noqa: E402
from solver.core.backends import SolveOptions  # noqa: E402
from solver.core.compile import compile_problem  # noqa: E402
from solver.core.model import build_model  # noqa: E402
from solver.solve import solve_verified  # noqa: E402


@pytest.fixture(scope="module")
def case():
    """1,000 offerings x 10 workloads x 3 monthly periods: its compiled problem and the
    full model's LP relaxation (demand rows capped, as the masters' are) and MIP optimum
    (the reference)."""
    problem = generated_problem(10, 3, seed=2)
    catalog = scaled_catalog(1_000)
    compiled = compile_problem(problem, catalog)
    full = build_model(compiled, cap_demand_rows=True)
    lp = columns._solve_lp(full, None)
    assert not isinstance(lp, str), lp
    plan, _ = solve_verified(
        problem, catalog, solver="highspy", options=SolveOptions(relative_gap=1e-6), method="full"
    )
    return problem, catalog, compiled, lp.objective, plan


@pytest.fixture(scope="module")
def by_columns(case):
    """The same case solved by column generation: (plan, solution)."""
    problem, catalog, _, _, _ = case
    return solve_verified(
        problem,
        catalog,
        solver="highspy",
        options=SolveOptions(relative_gap=1e-6),
        method="columns",
    )


def test_every_priced_option_has_a_column_table_row(case):
    _, _, compiled, _, _ = case
    mask = columns.priced_mask(compiled)
    pricing = reduced_costs.Pricing(compiled, mask)
    # serving columns: every (option, period, block) of a priced serving option
    assert len(pricing.columns) + len(pricing.training) == columns.priced_columns(compiled)
    assert mask.sum() > 0


def dearest_first(compiled, mask):
    """A first master of the dearest priced options (USD per token/s) until their room
    covers each workload's peak twice, and each training job's dearest cluster: the
    cheap options must come in through the pricing."""
    opt = compiled.options
    keep = ~mask
    pools = compiled.pools.set_index("pool_id")
    peak = compiled.demand[compiled.demand["bucket"] < 0].groupby("workload")["demand"].max()
    cand = opt[mask]
    for w, g in cand.groupby("workload"):
        if (g["workload_kind"] == "training").all():
            keep[opt.index.get_indexer([(g["rent_usd"] + g["energy_usd"]).idxmax()])] = True
            continue
        g = g.assign(score=g["price_usd_per_hour"] / g["tokens_per_s_per_unit"])
        g = g.sort_values("score", ascending=False)
        room = (g["pool_id"].map(pools["availability_cap"]) * g["tokens_per_s_per_unit"]).cumsum()
        chosen = g.index[room.shift(fill_value=0) < 2 * peak[w]]
        keep[opt.index.get_indexer(chosen)] = True
    return keep


def test_a_dear_first_master_is_priced_up_to_the_full_lp(case, monkeypatch):
    # the first master holds only dear options: the pricing must add columns; the
    # Lagrangian bound of the first round is at most the full LP (a valid lower bound);
    # at convergence the restricted LP is the full LP
    problem, catalog, compiled, full_lp, _ = case
    monkeypatch.setattr(columns, "first_master", dearest_first)
    monkeypatch.setattr(columns, "ADDED_PER_WORKLOAD", 2)
    plan, solution = solve_verified(
        problem,
        catalog,
        solver="highspy",
        options=SolveOptions(relative_gap=1e-6),
        method="columns",
    )
    report = solution.compiled.report.columns
    assert report["rounds"] > 1
    first = report["history"][0]
    assert first["columns_priced_negative"] > 0
    assert first["bound_usd"] <= full_lp * (1 + 1e-9)
    assert report["converged"]
    # priced out before any cut: the restricted LP is the full LP (same optimum to 1e-7)
    before_cuts = [h for h in report["history"] if h["cuts"] == 0]
    assert before_cuts[-1]["columns_priced_negative"] == 0
    assert before_cuts[-1]["lp_usd"] == pytest.approx(full_lp, rel=1e-7)


def test_rounding_cuts_lift_the_bound_but_never_above_the_optimum(case, by_columns):
    # the cuts hold for every integer plan: the bound rises above the plain LP and stays
    # at or below the full MIP's optimum (solved to a 1e-6 gap beside)
    _, _, _, full_lp, best = case
    _, solution = by_columns
    report = solution.compiled.report.columns
    assert report["cut_rounds"] >= 1 and report["history"][-1]["cuts"] > 0
    assert report["lp_bound"] > full_lp * (1 + 1e-6)
    # (bounds are on the objective: at guarded prices under the default guard)
    assert report["lp_bound"] <= best.objective * (1 + 1e-6)


def test_the_plan_is_feasible_and_its_gap_is_against_the_full_bound(case, by_columns):
    # the restricted MIP's plan costs at least the full MIP's optimum (it is a plan of the
    # full problem) and its stated gap is (cost - bound) / cost, the bound being the full
    # LP with rounding cuts: between the plain LP and the optimum
    problem, catalog, _, full_lp, best = case
    plan, solution = by_columns
    # (costs compared in the objective: at guarded prices under the default guard)
    assert plan.objective >= best.objective * (1 - 1e-6)
    bound = solution.compiled.report.columns["lp_bound"]
    assert full_lp * (1 - 1e-9) <= bound <= best.objective * (1 + 1e-6)
    assert plan.gap == pytest.approx((plan.objective - bound) / plan.objective, rel=1e-6)
    assert plan.status == ("optimal" if plan.gap <= 1e-6 else "feasible")
    assert solution.compiled.report.columns["options_in_master"] < len(
        compile_problem(problem, catalog).options
    )


def test_auto_keeps_small_problems_on_the_full_model(case):
    _, _, compiled, _, _ = case
    assert columns.priced_columns(compiled) < columns.AUTO_COLUMNS
    assert not columns.use_columns(compiled, "auto")
    assert columns.use_columns(compiled, "columns")
    assert not columns.use_columns(compiled, "full")


def test_pricing_matches_the_solver_on_every_column_of_the_full_model(case):
    # with every option in the master, the pricing's reduced cost of each priced column
    # equals HiGHS's (c - A^T y) at the LP optimum: checked inside, raises on a mismatch
    _, _, compiled, _, _ = case
    mask = columns.priced_mask(compiled)
    pricing = reduced_costs.Pricing(compiled, mask)
    model = build_model(compiled, cap_demand_rows=True)
    lp = columns._solve_lp(model, None)
    assert not isinstance(lp, str), lp
    rc_s, rc_z = pricing.reduced_costs(pricing.duals(model, lp.row_dual))
    assert reduced_costs.check_pricing(model, lp.col_dual, pricing, rc_s, rc_z) <= 1e-6
    # at the full LP's optimum no column has a negative reduced cost
    assert np.min(rc_s) >= -1e-6 * max(1.0, np.abs(pricing.columns["obj"]).max())


GOLDEN = Path(__file__).resolve().parents[1] / "golden"
SHIPPED = sorted(
    p
    for p in (Path(__file__).resolve().parents[2] / "problems").glob("*.yaml")
    if p.stem != "infeasible-budget"
)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_shipped_problem_by_columns_costs_its_full_optimum(path):
    # the restricted MIP over the priced-in options reaches the same optimal cost as the
    # full model (tests/golden, solved to a 1e-4 gap) on every shipped problem: the first
    # master and the pricing leave out nothing the optimum needs; the plan is verified
    from solver.inputs.catalog import load_catalog
    from solver.inputs.problem import load_problem

    golden = json.loads((GOLDEN / f"{path.stem}.json").read_text())["output"]
    plan = solve_verified(load_problem(path), load_catalog(), method="columns")[0]
    assert plan.total_cost_usd == pytest.approx(golden["total_cost_usd"], rel=2e-4)
    assert plan.gap is not None and plan.gap >= 0


def test_the_infeasible_problem_by_columns_still_says_what_to_relax():
    # the restricted master is infeasible: the full model is solved and explains it
    from solver.errors import InfeasibleError
    from solver.inputs.catalog import load_catalog
    from solver.inputs.problem import load_problem

    path = Path(__file__).resolve().parents[2] / "problems" / "infeasible-budget.yaml"
    with pytest.raises(InfeasibleError, match="raise budget_usd to"):
        solve_verified(load_problem(path), load_catalog(), method="columns")


def test_a_time_limit_spent_compiling_says_so(case):
    # the limit holds from compile on: 1 ms is gone before the first master's LP
    from solver.errors import NoPlanError

    problem, catalog, _, _, _ = case
    with pytest.raises(NoPlanError, match="time limit"):
        solve_verified(problem, catalog, options=SolveOptions(time_limit_s=0.001), method="columns")


def test_npv_objective_bound_stays_below_the_optimum():
    # min_npv at 10%/year: discounted column costs and discounted reservation rates in the
    # pricing (checked against HiGHS each round); the bound never passes the full optimum
    problem = generated_problem(8, 3, seed=5).model_copy(
        update={"objective": "min_npv", "discount_rate": 0.10}
    )
    catalog = scaled_catalog(1_000)
    opts = SolveOptions(relative_gap=1e-6)
    best = solve_verified(problem, catalog, solver="highspy", options=opts, method="full")[0]
    plan, solution = solve_verified(
        problem, catalog, solver="highspy", options=opts, method="columns"
    )
    assert solution.compiled.report.columns["lp_bound"] <= best.objective * (1 + 1e-6)
    assert plan.objective >= best.objective * (1 - 1e-6)


def test_mir_coefficients_by_hand():
    # Demand 2,500 tok/s; units of 1,000, 800, 500 and 300 tok/s; divisor 1,000:
    # D/d = 2.5, f = 0.5. 1,000: 1. 800: 0.8 -> 0 + min(0.8, 0.5)/0.5 = 1. 500: 0.5 -> 1.
    # 300: 0.3 -> 0.3/0.5 = 0.6 (the Chvatal-Gomory rounding would give ceil(0.3) = 1).
    # Right-hand side ceil(2.5) = 3: the LP's 2.5 units of 1,000 are cut off.
    coef = cuts.mir_coefficients([1000.0, 800.0, 500.0, 300.0], 2500.0, 1000.0)
    assert coef == pytest.approx([1.0, 1.0, 1.0, 0.6])
    # a whole D/d has no MIR: the rounding ceil(a/d) (2,000 / 1,000 = 2, f = 0)
    assert cuts.mir_coefficients([300.0, 1500.0], 2000.0, 1000.0) == pytest.approx([1, 2])


@given(
    st.lists(st.integers(1, 40), min_size=1, max_size=3),
    st.integers(1, 100),
    st.integers(1, 40),
)
@settings(max_examples=200, deadline=None)
def test_mir_cut_holds_for_every_whole_plan(sizes, demand, divisor):
    # every integer point of sum a_k x_k >= D (x_k up to ceil(D / a_k) + 1, which is
    # enough: the coefficients are >= 0) satisfies the cut
    a = np.array(sizes, dtype=float)
    coef = cuts.mir_coefficients(a, float(demand), float(divisor))
    rhs = np.ceil(demand / divisor - 1e-9)
    ranges = [range(int(np.ceil(demand / k)) + 2) for k in sizes]
    for x in itertools.product(*ranges):
        x = np.array(x, dtype=float)
        if a @ x >= demand:
            assert coef @ x >= rhs - 1e-9


def test_large_masters_keep_only_the_tight_cuts():
    # x = 2.5 units of 1,000 tok/s: the cut x >= 3 (divisor 1,000, 2,500 tok/s) is met with
    # equality once the LP holds x = 3, and is kept; a cut x >= 2 is slack and goes. The
    # demand row itself always stays.
    from solver.core.model import Expression, LinearModel, Row

    variables = pd.DataFrame({"name": ["x"], "kind": ["x"], "integer": [True], "lb": [0.0]})
    demand = Row("demand[w]", "demand", ("w", 0, 0), {0: 1000.0}, ">=", 2500.0)
    tight = Row("cut[3]", cuts.Cuts.FAMILY, ("w", 0, 0, 1000.0), {0: 1.0}, ">=", 3.0)
    slack = Row("cut[2]", cuts.Cuts.FAMILY, ("w", 0, 0, 1250.0), {0: 1.0}, ">=", 2.0)
    model = LinearModel(variables, [demand, tight, slack], Expression(), {})
    kept = columns._tight_cuts(model, np.array([3.0]))
    assert [r.name for r in kept.rows] == ["demand[w]", "cut[3]"]


class _HandPricing:
    """A pricing of one serving column left out, by hand: option B ($3/h, 100 tok/s) for
    the one demand row ('w', 0, 0), 730 h; its reduced cost c - a y at the demand dual."""

    serving = pd.DataFrame(
        {
            "col": [0],
            "workload": ["w"],
            "pool_id": ["B"],
            "period": [0],
            "block": [0],
            "tps": [100.0],
            "absent_dual": [0.0],  # rented: no reservation's rate
        }
    )
    train_usage = pd.DataFrame(
        {"pool_id": [], "period": [], "block": [], "absent_dual": pd.Series([], dtype=float)}
    )
    training = pd.DataFrame({"workload": pd.Series([], dtype=object)})
    columns = pd.DataFrame({"ub": [10.0]})

    def reduced_costs(self, duals):
        y = duals["demand"][("w", 0, 0)]
        return np.array([3.0 * 730 - 100.0 * y]), np.zeros(0)


def test_the_repaired_bound_by_hand():
    # One demand row, 100 tok/s over 730 h. The master holds option A only ($4/h, 50
    # tok/s): its LP runs 2 units, $5,840, at the demand dual y = 4 x 730 / 50 = $58.40
    # per tok/s. Option B ($3/h, 100 tok/s, availability 10) is left out: rc = 3 x 730
    # - 100 x 58.40 = -$3,650, so the plain Lagrangian bound is 5,840 - 3,650 x 10 =
    # -$30,660 (useless). Lowered by 3,650 / 100 = 36.50, the dual is y' = 21.90: B's
    # rc' = 2,190 - 100 x 21.90 = 0, A's rc' = 0 + 50 x 36.50 = 1,825 >= 0 at x = 0, and
    # L(y') = 5,840 - 36.50 x 100 = $2,190: one unit of B, the full problem's LP (and its
    # optimum). The bound is the best possible here, and it is below every plan.
    from solver.core.matrix import Expression, LinearModel, Row

    variables = pd.DataFrame(
        {"name": ["x[A]"], "kind": ["x"], "integer": [True], "lb": [0.0], "ub": [10.0]}
    )
    demand = Row("demand[w,0,0]", "demand", ("w", 0, 0), {0: 50.0}, ">=", 100.0)
    objective = Expression()
    objective.add(0, 4.0 * 730)
    model = LinearModel(variables, [demand], objective, {})
    lp = bounds.LPSolution(5_840.0, np.array([58.4]), np.array([0.0]), np.array([2.0]))
    duals = {"demand": {("w", 0, 0): 58.4}}
    rc = (np.array([-3_650.0]), np.zeros(0))
    out = (np.array([True]), np.zeros(0, dtype=bool))
    new, drop = bounds.repaired_duals(_HandPricing(), duals, rc, out, 1e-7)
    assert new["demand"][("w", 0, 0)] == pytest.approx(21.90)
    assert drop == {("demand", ("w", 0, 0)): pytest.approx(36.50)}
    bound = bounds.repaired_bound(_HandPricing(), model, lp, duals, rc, out, 1e-7)
    assert bound == pytest.approx(2_190.0)


def _lagrangian_of_master(model, lp, new):
    """L(y') over the master's columns, worked directly: sum_r y'_r b_r + sum_j
    min(rc'_j lb_j, rc'_j ub_j), rc' = c - A^T y' (each row's dual from ``new`` by family
    and key, else the LP's; a dual of the wrong sign taken as 0)."""
    y = lp.row_dual.copy()
    for r, row in enumerate(model.rows):
        by_key = new.get(row.family)
        if isinstance(by_key, dict) and row.key in by_key:
            y[r] = by_key[row.key]
        if row.sense == ">=":
            y[r] = max(y[r], 0.0)
        elif row.sense == "<=":
            y[r] = min(y[r], 0.0)
    rc = np.zeros(len(model.variables))
    for j, c in model.objective.coefs.items():
        rc[j] += c
    value = model.objective.constant
    for r, row in enumerate(model.rows):
        value += y[r] * row.rhs
        for j, a in row.coefs.items():
            rc[j] -= a * y[r]
    lb = model.variables["lb"].to_numpy(float)
    ub = model.variables["ub"].to_numpy(float)
    rc = np.where(np.abs(rc) < 1e-7, 0.0, rc)
    with np.errstate(invalid="ignore"):
        terms = np.where(rc > 0, rc * lb, np.where(rc < 0, rc * ub, 0.0))
    return value + float(terms.sum())


def test_the_repaired_bound_on_a_dear_master_is_valid_and_beats_the_plain_one(case):
    # a first master of the dearest options: the plain Lagrangian bound (master LP + the
    # out columns' negative reduced costs x their availability) is far below; the
    # repaired one is at most the full LP (a valid bound), above the plain one, and its
    # master part equals L(y') worked directly from the rows (no LP identity used)
    from solver.core.compile import with_options
    from solver.core.time_budget import Budget

    _, _, compiled, full_lp, _ = case
    g = columns._Generation(compiled, Budget.of(None))
    g.keep = dearest_first(compiled, columns.priced_mask(compiled))
    pricing = g.pricing
    sub = with_options(compiled, compiled.options[g.keep])
    sub = dataclasses.replace(sub, egress_shared=pricing.shared)  # as the masters have it
    model = build_model(sub, cap_demand_rows=True)
    lp = columns._solve_lp(model, None)
    assert not isinstance(lp, str), lp
    duals = pricing.duals(model, lp.row_dual)
    duals["_egress_master"] = columns.master_egress_prices(sub.options, g.routed, pricing.shared)
    rc_s, rc_z = pricing.reduced_costs(duals)
    out_s, out_z = ~g.keep[g.s_pos], ~g.keep[g.z_pos]
    plain = lp.objective + float(
        np.sum(np.minimum(rc_s[out_s], 0.0) * pricing.columns["ub"].to_numpy()[out_s])
        + np.sum(np.minimum(rc_z[out_z], 0.0))
    )
    rc, out = (rc_s, rc_z), (out_s, out_z)
    bound = bounds.repaired_bound(pricing, model, lp, duals, rc, out, g.tol)
    assert plain < bound <= full_lp * (1 + 1e-9)
    new, drop = bounds.repaired_duals(pricing, duals, rc, out, g.tol, (model, lp))
    # lowered on demand, train_once and egress_serve rows; a reserved row moved either
    # way; an egress capacity row (<=, dual <= 0) raised toward 0
    either = ("reserved_capacity", "egress_capacity")
    assert drop and all(d > 0 for (family, _), d in drop.items() if family not in either)
    assert all(d < 0 for (family, _), d in drop.items() if family == "egress_capacity")
    assert any(family == "reserved_capacity" for family, _ in drop)  # the reserved step ran
    rc2_s, rc2_z = pricing.reduced_costs(new)
    out_part = float(
        np.sum(np.minimum(rc2_s[out_s], 0.0) * pricing.columns["ub"].to_numpy()[out_s])
        + np.sum(np.minimum(rc2_z[out_z], 0.0))
    )
    direct = _lagrangian_of_master(model, lp, new) + out_part
    assert bound == pytest.approx(direct, rel=1e-6)
    assert direct <= full_lp * (1 + 1e-9)


def test_the_repaired_bound_of_a_master_with_cuts_is_valid(case):
    # a dear first master with MIR cuts separated from its LP (as the cut phase does
    # before the pricing has converged): the cuts' duals are set to 0 in the repaired
    # duals (a >= row's: of the right sign), so the bound is L(y') worked directly from
    # the rows, at most the full LP; with the cuts' duals left in place the columns left
    # out kept negative reduced costs and the bound fell to minus millions at fleet scale
    from solver.core.compile import with_options
    from solver.core.time_budget import Budget

    _, _, compiled, full_lp, _ = case
    g = columns._Generation(compiled, Budget.of(None))
    g.keep = dearest_first(compiled, columns.priced_mask(compiled))
    pricing = g.pricing
    sub = with_options(compiled, compiled.options[g.keep])
    sub = dataclasses.replace(sub, egress_shared=pricing.shared)
    base = build_model(sub, cap_demand_rows=True)
    lp0 = columns._solve_lp(base, None)
    assert not isinstance(lp0, str), lp0
    assert g.cuts.separate(base, lp0.values)  # the LP buys fractional units: cuts exist
    model = g.cuts.add_to(base)
    lp = columns._solve_lp(model, None)
    assert not isinstance(lp, str), lp
    duals = pricing.duals(model, lp.row_dual)
    duals["_cuts"] = g.cuts.frame(duals)
    duals["_egress_master"] = columns.master_egress_prices(sub.options, g.routed, pricing.shared)
    assert any(duals.get(cuts.Cuts.FAMILY, {}).values())  # some cut has a dual
    rc_s, rc_z = pricing.reduced_costs(duals)
    out_s, out_z = ~g.keep[g.s_pos], ~g.keep[g.z_pos]
    rc, out = (rc_s, rc_z), (out_s, out_z)
    bound = bounds.repaired_bound(pricing, model, lp, duals, rc, out, g.tol)
    new, _ = bounds.repaired_duals(pricing, duals, rc, out, g.tol, (model, lp))
    assert not any(new[cuts.Cuts.FAMILY].values())
    rc2_s, rc2_z = pricing.reduced_costs(new)
    out_part = float(
        np.sum(np.minimum(rc2_s[out_s], 0.0) * pricing.columns["ub"].to_numpy()[out_s])
        + np.sum(np.minimum(rc2_z[out_z], 0.0))
    )
    direct = _lagrangian_of_master(model, lp, new) + out_part
    assert bound == pytest.approx(direct, rel=1e-6)
    assert bound <= full_lp * (1 + 1e-9)


def test_a_mip_cut_off_before_any_plan_leaves_the_lp_rounded_up(case, monkeypatch):
    # the restricted MIP stopped by its time limit with no plan: the master's LP rounded
    # up meets every row of the master, so it is a plan of the full problem, verified like
    # any other; it costs at least the full MIP's optimum, and its gap is against the
    # column generation's bound, which is at most that optimum
    from solver.core.backends import Termination
    from solver.core.backends.base import SolveResult

    problem, catalog, _, _, best = case

    def no_plan(self, options, start=None):
        return SolveResult(Termination.NO_SOLUTION, "highspy", None, None, None, None, 0.0)

    monkeypatch.setattr(columns.HighsSession, "solve", no_plan)
    plan, solution = solve_verified(
        problem,
        catalog,
        solver="highspy",
        options=SolveOptions(relative_gap=1e-6),
        method="columns",
    )
    assert plan.verified and plan.status == "feasible"
    assert plan.objective >= best.objective * (1 - 1e-6)
    bound = solution.compiled.report.columns["lp_bound"]
    assert bound <= best.objective * (1 + 1e-6)
    assert plan.gap == pytest.approx((plan.objective - bound) / plan.objective, rel=1e-6)


def test_support_rows_are_priced_and_match_the_solver(case):
    # AWS's support (Business, by default) is in the model: its rented serving options
    # are priced now (every period is one month, reduced_costs.support_priced), each
    # column's rent entering its month's support_spend row. On the full model's LP a month
    # with AWS spend has a non-zero support_spend dual (USD of support per USD spent; about
    # 0.030 on this case), and the pricing's reduced costs with it equal HiGHS's on every
    # column (checked inside); without it they do not
    _, _, compiled, _, _ = case
    assert reduced_costs.support_priced(compiled)
    mask = columns.priced_mask(compiled)
    pricing = reduced_costs.Pricing(compiled, mask)
    assert pricing.supported == {"aws"} and (pricing.serving["spend"] > 0).any()
    model = build_model(compiled, cap_demand_rows=True)
    lp = columns._solve_lp(model, None)
    assert not isinstance(lp, str), lp
    duals = pricing.duals(model, lp.row_dual)
    assert any(abs(y) > 1e-6 for y in duals["support_spend"].values())
    rc_s, rc_z = pricing.reduced_costs(duals)
    assert reduced_costs.check_pricing(model, lp.col_dual, pricing, rc_s, rc_z) <= 1e-6
    # without the support term the AWS columns would be off by rent x the dual
    no_support = {**duals, "support_spend": {}}
    rc0, _ = pricing.reduced_costs(no_support)
    with pytest.raises(Exception, match="differ from the solver"):
        reduced_costs.check_pricing(model, lp.col_dual, pricing, rc0, rc_z)
