"""Shadow prices and break-even prices on tiny problems worked out by hand.

Same tiny world as tests/core/test_model.py: an H100 instance serves 10 requests/s, an L4
instance 2 requests/s; one period of 1 month = 730 hours.
"""

from __future__ import annotations

import pytest

from conftest import H1, HOURS, L4, offering, problem, serve
from solver.analyses.sensitivity import (
    REPORT_SWEEPS,
    break_even_for_pool,
    break_even_prices,
    budget_sweep,
    carbon_frontier,
    demand_sweep,
    price_scenarios,
    report_sweeps,
    shadow_prices,
    with_pool_price,
)
from solver.analyses.sensitivity.pricing import with_pool_prices
from solver.core.backends import SolveOptions
from solver.core.compile import compile_problem
from solver.core.model import build_model
from solver.solve import optimise

# Carbon per instance-hour (test_model.test_carbon_cap_binds): us-east 0.306144 kg,
# eu-north 0.033984 kg. Moving one instance-hour from us to eu saves 0.27216 kg for $1.
SWAP_KG_PER_HOUR = 0.306144 - 0.033984
EU = offering("h1eu", "h100-sxm", 1, 5.0, region="eu-north")


def solved(p, cat):
    compiled = compile_problem(p, cat, prune_dominated=False)
    return optimise(compiled, build_model(compiled), solver="highs", options=SolveOptions())


def dual(report, family):
    [d] = [d for d in report.duals if d.family == family]
    return d


def test_carbon_dual_is_the_hand_carbon_price_and_predicts_the_cap_step(tiny_catalog):
    # 200 req/s = 20 H100 instances. Cap at exactly 10 us + 10 eu:
    #   730 x (10 x 0.306144 + 10 x 0.033984) / 1000 = 2.482934 t; cost 730 x (40 + 50) = $65,700.
    # In the plan's LP each tonne of cap lets 1 / (0.730 x 0.27216) instance-months move
    # back to us, saving $730 each: carbon price = 1 / 0.27216 kg = $3,674.29 per tCO2e.
    cat = tiny_catalog([H1, EU])
    # (+1e-5 t: the hand figures round the embodied share 164 kg / 43,800 h = 0.0037443 kg)
    cap = HOURS * 10 * (0.306144 + 0.033984) / 1000 + 1e-5
    sol = solved(problem([serve(200)], carbon_cap_tco2e=cap), cat)
    assert sol.result.objective == pytest.approx(65_700, rel=1e-6)
    report = shadow_prices(sol)
    carbon = dual(report, "carbon_cap")
    assert carbon.worth == pytest.approx(1000 / SWAP_KG_PER_HOUR, rel=1e-4)  # $3,674.29/t
    assert carbon.worth > 0
    # Raise the cap by one swap (0.198677 t): the MIP cost falls by dual x change = $730.
    step_t = HOURS * SWAP_KG_PER_HOUR / 1000
    looser = solved(problem([serve(200)], carbon_cap_tco2e=cap + step_t), cat)
    assert sol.result.objective - looser.result.objective == pytest.approx(
        carbon.worth * step_t, rel=1e-4
    )


def test_budget_dual_under_min_carbon_is_kg_per_dollar(tiny_catalog):
    # min carbon within a budget of $65,700 (10 us + 10 eu): each extra dollar moves
    # 1/730 instance-month to eu, saving 730 x 0.27216 kg / $730 = 0.27216 kg = 2.7216e-4 t.
    cat = tiny_catalog([H1, EU])
    sol = solved(problem([serve(200)], budget_usd=65_700, objective="min_carbon"), cat)
    report = shadow_prices(sol)
    budget = dual(report, "budget")
    assert budget.worth == pytest.approx(SWAP_KG_PER_HOUR / 1000, rel=1e-4)
    assert "tCO2e" in budget.unit


def test_demand_dual_is_marginal_cost_per_million_tokens(tiny_catalog):
    # 25 req/s: plan 2 H100 + 3 L4. In its LP the marginal request/s comes from the
    # cheapest unit per request/s in the plan: H100 $4/h for 10 req/s = $0.40 per req/s-hour
    # (L4: $1/2 = $0.50). Over 730 h: $292 per req/s. Nothing is fixed, so a dual exists.
    report = shadow_prices(solved(problem([serve(25)]), tiny_catalog([H1, L4])))
    demand = dual(report, "demand_bucket")
    assert demand.d_objective_d_rhs == pytest.approx(0.4 * HOURS, rel=1e-6)
    # budget and carbon rows are absent: the problem has none, and none is shown as zero
    assert not [d for d in report.duals if d.family in {"budget", "carbon_cap"}]
    # $ per 1M output tokens: one more request/s is 100 more output tokens/s, which over
    # 730 h is 100 x 730 x 3,600 = 262.8M tokens for $292: $292 / 262.8 = $1.1111 per 1M.
    # The same by the unit: an H100 at $4/h makes 1,000 tokens/s x 3,600 s = 3.6M tokens
    # an hour, $4 / 3.6 = $1.1111 per 1M.
    assert demand.usd_per_mtoken == pytest.approx(4.0 / 3.6, rel=1e-6)
    # named by its workload, period and block (the row key [chat,0,0,0])
    assert (demand.workload, demand.period, demand.block) == ("chat", "all", "day")


def test_n_plus_1_dual_is_named_and_priced_per_million_tokens(tiny_catalog):
    # 20 req/s (2,000 tokens/s) with N+1: eleven L4s ($11/h; 2,200 - 200 >= 2,000 tokens/s)
    # beat 3 H100s ($12/h). The N+1 row holds the capacity (tokens/s over the block): one
    # more token/s is 1/200 of an L4, $1/h / 200 x 730 h = $3.65, and in tokens an L4
    # makes 200 x 3,600 = 720,000 tokens for $1: $1 / 0.72 = $1.3889 per 1M tokens.
    sol = solved(problem([serve(20, redundancy="n_plus_1")]), tiny_catalog([H1, L4]))
    assert sol.result.objective == pytest.approx(11 * HOURS)
    report = shadow_prices(sol)
    n1 = dual(report, "n_plus_1")
    assert n1.constraint == "n_plus_1[chat,0,0]"
    assert n1.d_objective_d_rhs == pytest.approx(HOURS / 200, rel=1e-6)
    assert n1.usd_per_mtoken == pytest.approx(1 / 0.72, rel=1e-6)
    assert (n1.workload, n1.period, n1.block, n1.pool) == ("chat", "all", "day", None)
    # a pool's rows name the pool, period and block
    avail = next(d for d in report.duals if d.family == "availability")
    assert avail.pool in {"acme/us-east/l4#on_demand", "acme/us-east/h1#on_demand"}
    assert (avail.workload, avail.period, avail.block) == (None, "all", "day")


def test_break_even_prices_by_hand(tiny_catalog):
    # 25 req/s on H1 ($4/h, 10 req/s), L4 ($1/h, 2 req/s) and L4b (eu, $1.20/h, unused).
    # Optimum 2 H1 + 3 L4 = $11/h.
    # H1 leaves above p where the best plan using it, min(p + 8, 2p + 3, 3p), reaches the
    #   best plan without it (13 L4 = $13/h): 2p + 3 = 13 -> p = $5.00.
    # L4 leaves above q: without it the best plan is 2 H1 + 3 L4b = $11.60; 8 + 3q = 11.6
    #   -> q = $1.20 (L4b takes its place).
    # L4b enters below $1.00 (it ties L4 there).
    l4b = offering("l4b", "l4", 1, 1.2, region="eu-north", nvlink=False)
    cat = tiny_catalog([H1, L4, l4b])
    sol = solved(problem([serve(25)]), cat)
    rows = {b.offering: b for b in break_even_prices(sol)}
    assert rows["acme/us-east/h1"].break_even_price == pytest.approx(5.0, rel=1e-6)
    assert rows["acme/us-east/h1"].direction == "leaves above"
    assert rows["acme/us-east/l4"].break_even_price == pytest.approx(1.2, rel=1e-6)
    assert rows["acme/eu-north/l4b"].break_even_price == pytest.approx(1.0, rel=1e-6)
    assert rows["acme/eu-north/l4b"].direction == "enters below"
    # sorted by closeness to the current price: L4b (-16.7%), L4 (+20%), H1 (+25%)
    assert [b.offering for b in break_even_prices(sol)][0] == "acme/eu-north/l4b"


def test_plan_changes_just_past_break_even_and_not_short_of_it(tiny_catalog):
    l4b = offering("l4b", "l4", 1, 1.2, region="eu-north", nvlink=False)
    cat = tiny_catalog([H1, L4, l4b])
    sol = solved(problem([serve(25)]), cat)
    for b in break_even_prices(sol):
        for factor, changes in (
            ((0.99, False), (1.01, True))
            if b.in_plan
            else (
                (1.01, False),
                (0.99, True),
            )
        ):
            variant = with_pool_price(sol.compiled, b.pool_id, b.break_even_price * factor)
            other = optimise(variant, build_model(variant), solver="highs", options=SolveOptions())
            uses = any(
                int(p) == list(variant.pools["pool_id"]).index(b.pool_id)
                for p, x, k in zip(
                    other.model.variables["pool"],
                    other.result.values,
                    other.model.variables["kind"],
                    strict=True,
                )
                if x > 1e-7 and k in {"x", "z", "buy", "commit"}
            )
            assert uses != (b.in_plan == changes), (b.offering, factor)


def test_break_even_of_a_pool_the_plan_cannot_do_without(tiny_catalog):
    # Only one offering: it never leaves, whatever its price.
    sol = solved(problem([serve(25)]), tiny_catalog([H1]))
    b = break_even_for_pool(sol.compiled, sol.result.objective, "acme/us-east/h1#on_demand", True)
    assert b.break_even_price is None and "infeasible without it" in b.note


def test_carbon_frontier_is_monotone(tiny_catalog):
    # From the min-carbon plan (20 eu: 0.4962 t, $73,000) to the min-cost plan
    # (20 us: 4.4697 t, $58,400): cost falls as the cap rises.
    cat = tiny_catalog([H1, EU])
    compiled = compile_problem(problem([serve(200)]), cat, prune_dominated=False)
    points = carbon_frontier(compiled, points=5)
    costs = [p.total_cost_usd for p in points]
    assert costs[0] == pytest.approx(73_000, rel=1e-6)
    assert costs[-1] == pytest.approx(58_400, rel=1e-6)
    assert all(a >= b - 1e-6 for a, b in zip(costs, costs[1:], strict=False))


def test_demand_sweep_and_price_scenarios(tiny_catalog):
    compiled = compile_problem(problem([serve(25)]), tiny_catalog([H1, L4]), prune_dominated=False)
    # 25 -> $11/h; 50 req/s -> 5 H1 = $20/h (4 H1 + 5 L4 = $21).
    points = demand_sweep(compiled, [1.0, 2.0])
    assert [p.total_cost_usd for p in points] == pytest.approx([11 * HOURS, 20 * HOURS])
    points, share = price_scenarios(compiled, n=6, spread=0.1, seed=1)
    assert len(points) == 6 and all(0 < s <= 1 for s in share.values())
    # H1 at $3.6-4.4 always beats L4 at $0.9-1.1 per 2 req/s for the bulk: always used
    assert share["acme/us-east/h1#on_demand"] == pytest.approx(1.0)


def test_sweeps_in_local_processes_and_on_a_dask_cluster_agree(tiny_catalog):
    # The same demand sweep serially, across 2 local processes, and on a Dask LocalCluster:
    # 25 -> $11/h, 50 -> $20/h, 75 req/s -> 7 H1 + 3 L4 = $31/h (8 H1 = $32).
    from dask.distributed import Client, LocalCluster

    compiled = compile_problem(problem([serve(25)]), tiny_catalog([H1, L4]), prune_dominated=False)
    expected = [11 * HOURS, 20 * HOURS, 31 * HOURS]
    serial = demand_sweep(compiled, [1.0, 2.0, 3.0])
    local = demand_sweep(compiled, [1.0, 2.0, 3.0], workers=2)
    with LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            remote = demand_sweep(compiled, [1.0, 2.0, 3.0], scheduler=client)
    for points in (serial, local, remote):
        assert [p.total_cost_usd for p in points] == pytest.approx(expected)


def test_the_reports_sweeps_in_one_pool_are_the_four_sweeps(tiny_catalog):
    # procure report runs the frontier, budget and demand sweeps and price scenarios as one
    # run of tasks (report_sweeps); each must be what its own function gives. By hand, as in
    # the tests above: demand x1 -> 2 H1 + 3 L4 = $11/h, x2 -> 5 H1 = $20/h; the frontier
    # from all-EU ($5/h, greener) to all-US H1.
    compiled = compile_problem(
        problem([serve(25)]), tiny_catalog([H1, L4, EU]), prune_dominated=False
    )
    budgets = [6 * HOURS, 11 * HOURS]
    alone = {
        "carbon frontier": carbon_frontier(compiled, points=3),
        "budget sweep": budget_sweep(compiled, budgets),
        "demand sweep": demand_sweep(compiled, [1.0, 2.0]),
        "price scenarios": price_scenarios(compiled, n=3, spread=0.1, seed=1),
    }
    assert [p.total_cost_usd for p in alone["demand sweep"]] == pytest.approx(
        [11 * HOURS, 20 * HOURS]
    )
    for workers in (1, 2):
        together = report_sweeps(
            compiled,
            frontier_points=3,
            budgets_usd=budgets,
            demand_factors=[1.0, 2.0],
            scenarios=3,
            spread=0.1,
            seed=1,
            workers=workers,
        )
        assert list(together) == list(REPORT_SWEEPS)
        assert together == alone, workers


def _uses(solution, pool_id) -> bool:
    pools = list(solution.compiled.pools["pool_id"])
    v = solution.model.variables
    used = v["kind"].isin(["x", "z", "buy", "commit"]).to_numpy() & (solution.result.values > 1e-7)
    return pools.index(pool_id) in set(v.loc[used, "pool"])


def _check_break_even_rows(sol, rows):
    for b in rows:
        assert b.break_even_price is not None, b
        # just past the break-even the plan changes (the pool enters or leaves); just short
        # of it, it does not
        # a row stands for its class (same_as: tied pools, their prices moved with it), so
        # the whole class is priced at the factor and "uses" means any pool of the class
        pools = [b.pool_id, *b.same_as]
        for factor in (1.002, 0.998):
            scale = b.break_even_price * factor / b.current_price
            variant = with_pool_prices(sol.compiled, dict.fromkeys(pools, scale))
            other = optimise(
                variant,
                build_model(variant),
                solver="highspy",
                options=SolveOptions(relative_gap=1e-6),
            )
            changes = any(_uses(other, p) for p in pools) != b.in_plan
            # a pool in the plan leaves above its price, one outside enters below it
            assert changes == ((factor > 1) == b.in_plan), (b.offering, b.mode, factor)


@pytest.fixture(scope="module")
def seed_solution():
    from conftest import ROOT
    from solver.inputs.catalog import load_catalog
    from solver.inputs.problem import load_problem

    p = load_problem(ROOT / "problems/seed-2m-13b.yaml")
    # The seed's workloads and every pool (no pruning), without the N+1 rows: their
    # binaries make each of the dozens of re-solves a break-even search runs about 10x
    # slower, and N+1 has its own tests (tests/core/test_model_headroom.py).
    serving = [
        w.model_copy(update={"redundancy": 1}) if w.kind == "inference" else w for w in p.workloads
    ]
    p = p.model_copy(update={"workloads": serving})
    compiled = compile_problem(p, load_catalog(), prune_dominated=False)
    return optimise(compiled, build_model(compiled), solver="highspy", options=SolveOptions())


def test_seed_break_even_rows_flip_the_plan_just_past_them(seed_solution):
    rows = break_even_prices(seed_solution, limit=2)
    priced = [b for b in rows if b.break_even_price is not None]
    in_plan = [b for b in priced if b.in_plan][:2]
    outside = [b for b in priced if not b.in_plan][:1]
    assert in_plan and outside
    _check_break_even_rows(seed_solution, in_plan + outside)


@pytest.mark.slow
def test_seed_every_break_even_row_flips_the_plan(seed_solution):
    rows = break_even_prices(seed_solution, limit=40)
    _check_break_even_rows(seed_solution, [b for b in rows if b.break_even_price is not None])


def test_one_offering_at_one_price_in_two_regions_is_one_break_even_row(tiny_catalog):
    # The H100 ($4/h, 10 req/s) in us-east and, at the same price, in eu-north; the L4
    # at $1.5/h serves 2 req/s. 20 req/s: two H100s ($8/h) beat ten L4s ($15/h).
    # Each H100 pool alone would "leave the plan above $4.00 (+0%)": its twin takes over
    # at any higher price. As one class their price moves together, and the plan
    # leaves them when 2p > 15: p = $7.50 (+87.5%). One row stands for both.
    twin = offering("h1", "h100-sxm", 1, 4.0, region="eu-north")
    cat = tiny_catalog([H1, twin, offering("l4", "l4", 1, 1.5, nvlink=False)])
    rows = break_even_prices(solved(problem([serve(20)]), cat))
    h100 = [b for b in rows if b.accelerator == "h100-sxm"]
    assert len(h100) == 1
    [row] = h100
    assert row.in_plan and row.same_as
    assert {row.pool_id, *row.same_as} == {
        "acme/us-east/h1#on_demand",
        "acme/eu-north/h1#on_demand",
    }
    assert row.break_even_price == pytest.approx(7.5, rel=1e-6)
    assert row.change_pct == pytest.approx(87.5, rel=1e-6)


def test_the_frontier_chain_takes_a_looser_caps_plan_only_where_a_solve_gives_the_same(
    tiny_catalog, monkeypatch
):
    # 200 req/s = 20 H100 instances, k in us-east and 20 - k in eu-north for one month:
    # CO2e = 0.4962 t + k x 0.198677 t ($730 x $1 cheaper per instance moved to us).
    # Caps, loosest first: the min-cost plan's own CO2e (k = 20, 4.4697 t: carried from
    # the min-cost end, no solve); 3.0 t (k = floor(2.5038 / 0.198677) = 12: 2.8803 t,
    # solved); 2.9 t (>= 2.8803 t: k = 12 again, carried); 2.85 t (< 2.8803: k = 11,
    # solved). So 2 solves of 4, and every point equal to its cap solved on its own.
    from solver.analyses.sensitivity import sweeps

    compiled = compile_problem(problem([serve(200)]), tiny_catalog([H1, EU]), prune_dominated=False)
    high, _low = sweeps._frontier_ends(compiled, "highspy")
    assert high.total_co2e_t == pytest.approx(0.4962 + 20 * 0.198677, abs=2e-3)
    caps = [high.total_co2e_t, 3.0, 2.9, 2.85]
    tasks = [
        (
            ("problem", {"objective": "min_cost", "carbon_cap_tco2e": c}),
            "carbon_cap_tco2e",
            c,
            "highspy",
        )
        for c in caps
    ]
    alone = [sweeps.solve_point(compiled, t) for t in tasks]
    solved_caps: list[float] = []
    cold = sweeps.solve_point

    def counted(c, task):
        solved_caps.append(task[2])
        return cold(c, task)

    monkeypatch.setattr(sweeps, "solve_point", counted)
    chain = sweeps.frontier_chain(compiled, (tasks, high))
    assert solved_caps == [3.0, 2.85]
    # a carried point keeps the looser cap's bound (valid for a tighter cap too): the same
    # to rounding as its own solve's, so the points are compared without bound and gap
    plain = {"bound", "gap"}
    assert [p.model_dump(exclude=plain) for p in chain] == [
        p.model_dump(exclude=plain) for p in alone
    ]
    for p, q in zip(chain, alone, strict=True):
        assert p.bound == pytest.approx(q.bound, rel=1e-9) and p.gap <= 1e-4
    assert [p.total_co2e_t for p in chain[1:]] == pytest.approx(
        [0.4962 + 12 * 0.198677, 0.4962 + 12 * 0.198677, 0.4962 + 11 * 0.198677], abs=2e-3
    )


def test_break_even_classes_go_to_the_workers_the_plans_own_first(tiny_catalog, monkeypatch):
    # The world of test_break_even_prices_by_hand: the plan uses H1 and L4, not L4b. By
    # name L4b ("acme/eu-north/...") would come first; the plan's own classes (each one more
    # optimum to prove: the plan without it) go first, the largest spend in the plan first
    # (2 H1 x $4 x 730 h = $5,840, then 3 L4 x $1 x 730 h = $2,190), L4b last. The prices
    # are the ones worked by hand there ($5.00, $1.20, $1.00), whatever the order.
    from solver.analyses.sensitivity import break_even as module

    l4b = offering("l4b", "l4", 1, 1.2, region="eu-north", nvlink=False)
    sol = solved(problem([serve(25)]), tiny_catalog([H1, L4, l4b]))
    sent: list[str] = []
    run = module.run_unpruned_tasks

    def recorded(fn, tasks, **kw):
        sent.extend(p for group in tasks for p, _twins in group)
        return run(fn, tasks, **kw)

    monkeypatch.setattr(module, "run_unpruned_tasks", recorded)
    spend = module.plan_spend(
        sol.model,
        module.price_slopes(sol.compiled, sol.model),
        sol.result.values,
        sol.compiled.pools["pool_id"],
    )
    assert spend == pytest.approx(
        {"acme/us-east/h1#on_demand": 2 * 4.0 * HOURS, "acme/us-east/l4#on_demand": 3 * HOURS}
    )
    rows = {b.offering: b.break_even_price for b in break_even_prices(sol)}
    assert sent == [
        "acme/us-east/h1#on_demand",
        "acme/us-east/l4#on_demand",
        "acme/eu-north/l4b#on_demand",
    ]
    assert rows == pytest.approx(
        {"acme/us-east/h1": 5.0, "acme/us-east/l4": 1.2, "acme/eu-north/l4b": 1.0}, rel=1e-6
    )
