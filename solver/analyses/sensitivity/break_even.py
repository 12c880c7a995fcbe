"""Break-even prices for many pools: which pools to search (those in the plan and the
closest others by an LP estimate), in classes, run in parallel.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
import pandas as pd

from solver.analyses.sensitivity.classes import pool_classes
from solver.analyses.sensitivity.duals import plan_moves, support_lp
from solver.analyses.sensitivity.pricing import (
    PriceSlopes,
    pools_in_plan,
    price_slopes,
    require_unpruned,
    run_unpruned_tasks,
)
from solver.analyses.sensitivity.results import BreakEven
from solver.analyses.sensitivity.search import break_even_for_pool
from solver.core.backends import SolveOptions, get_backend
from solver.core.matrix import Row
from solver.core.model import LinearModel, has_second_stage
from solver.solve import Solution
from solver.units import Mode


def break_even_candidates(solution: Solution) -> tuple[list[str], set[str]]:
    """Pools that could serve a workload (those with options), and those in the plan."""
    compiled = solution.compiled
    require_unpruned(compiled)
    assert solution.result.values is not None  # a solved problem
    in_plan = pools_in_plan(solution.model, solution.result.values, compiled.pools)
    pools = compiled.pools
    price = np.where(pools["kind"] == "owned", pools["capex_usd"], pools["price_usd_per_hour"])
    priced = set(pools["pool_id"][price > 0])
    return sorted(set(compiled.options["pool_id"]) & priced), in_plan


def break_even_task(shared: tuple, classes: list[tuple[str, list[str]]]) -> list[BreakEven]:
    compiled, model, slopes, base_objective, start, in_plan, solver, warm = shared
    options = SolveOptions(relative_gap=1e-6)
    return [
        break_even_for_pool(
            compiled,
            base_objective,
            p,
            p in in_plan,
            solver=solver,
            options=options,
            warm=warm,
            model=model,
            slopes=slopes,
            start=start,
            twins=twins,
        )
        for p, twins in classes
    ]


def break_even_prices(
    solution: Solution,
    *,
    pools: Iterable[str] | None = None,
    limit: int | None = None,
    solver: str = "highspy",
    warm: bool = True,
    workers: int = 1,
    scheduler: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    deadline: float | None = None,
    left_out: list[str] | None = None,
) -> list[BreakEven]:
    """Break-even prices for pools, sorted by how close each is to its current price.

    Parameters
    ----------
    pools
        Pool ids to analyse; default every pool that could serve a workload.
    limit
        Analyse the pools in the plan and, of the others, the ``limit`` closest to
        entering by the LP estimate (:func:`entry_estimates`); None analyses all.
    warm
        Warm re-solves (:func:`break_even_for_pool`).
    workers, scheduler
        Parallelism (:func:`run_tasks`); pools are sent in chunks.
    deadline
        A ``time.perf_counter()`` time: pools not started by then are left out (in the
        order of their closeness to entering, so the nearest are done first).
    left_out
        When given, the pools the deadline left out are appended to it (and their twins).
    """
    compiled = solution.compiled
    if has_second_stage(compiled.problem):
        return []  # prices do not enter a carbon-first objective's first stage
    candidates, in_plan = break_even_candidates(solution)
    if pools is not None:
        wanted = set(pools)
        candidates = [p for p in candidates if p in wanted]
    twins_of: dict[str, list[str]] = {}
    for members in pool_classes(compiled, candidates):
        used = [p for p in members if p in in_plan]
        rep = (used or members)[0]  # a class is in the plan when any member is
        twins_of[rep] = [p for p in members if p != rep]
    candidates = sorted(twins_of)
    inside = [p for p in candidates if p in in_plan]
    outside = [p for p in candidates if p not in in_plan]
    if limit is not None:
        estimate = entry_estimates(solution)
        outside = sorted(outside, key=lambda p: (-estimate.get(p, -np.inf), p))[:limit]
    model = solution.model  # built from ``compiled`` (a second stage returned above)
    assert solution.result.objective is not None  # a solved problem
    slopes = price_slopes(compiled, model)
    # the plan's own classes first: each searches for one more optimum (the plan without
    # it) and is the longest, and local processes take the classes in this order, so the
    # long ones start first and the short ones fill the end; among them the largest spend
    # in the plan first (not a predictor of time: on the capped seed it kept the two
    # longest apart, where the order by name did not; docs/concepts/sensitivity.md,
    # "Classes of interchangeable pools"); then the others, the closest to entering
    assert solution.result.values is not None  # a solved problem
    spend = plan_spend(model, slopes, solution.result.values, compiled.pools["pool_id"])
    inside.sort(key=lambda p: (-sum(spend.get(q, 0.0) for q in (p, *twins_of[p])), p))
    classes = [(p, twins_of[p]) for p in inside + outside]
    # local processes take one class at a time (the search's times differ 5x: no idle
    # worker at the end); a cluster takes a few chunks per worker
    chunks = max(1, workers) * 4 if scheduler else len(classes)
    groups = [classes[i::chunks] for i in range(min(chunks, len(classes)))]
    shared = (
        compiled,
        model,
        slopes,
        float(solution.result.objective),
        solution.result.values,
        in_plan,
        solver,
        warm,
    )
    n = len(classes)
    results = run_unpruned_tasks(
        break_even_task,
        groups,
        shared=shared,
        workers=workers,
        scheduler=scheduler,
        # in pools (classes) done, though tasks are groups of them
        progress=(lambda done, total: progress(round(done * n / total), n)) if progress else None,
        deadline=deadline,
    )
    if left_out is not None:
        left_out += [q for g, r in zip(groups, results, strict=True) if r is None
                     for p, twins in g for q in (p, *twins)]  # fmt: skip
    return sorted(
        (b for group in results if group is not None for b in group),
        key=lambda b: (b.change_pct is None, abs(b.change_pct or 0.0), b.pool_id),
    )


def plan_spend(
    model: LinearModel, slopes: PriceSlopes, values: np.ndarray, pool_ids: pd.Series
) -> dict[str, float]:
    """Per pool id, what the plan pays for it at today's price (USD: its price-weighted
    usage, d(cost)/d(price) of its variables at the plan, times its price)."""
    pool = model.variables["pool"].to_numpy()
    mine = pool >= 0
    usage = pd.Series((slopes.objective * values)[mine]).groupby(pool[mine]).sum()
    return {
        str(pool_ids.iat[k]): float(u * slopes.base_price[k])
        for k, u in zip(usage.index.astype(int), usage.to_numpy(float), strict=True)
        if u > 0
    }


def entry_estimates(solution: Solution) -> dict[str, float]:
    """Per pool: the LP estimate of the price, as a fraction of today's, at which it starts
    to pay (what a unit is worth at the plan's duals, :func:`unit_values`, over its cost);
    the plan's own pools come out at 1.0.

    Only an ordering for choosing which pools outside the plan to search exactly; 1.0 or
    more means "about to enter". Reserved and owned units are charged their commitment or
    capex per period, a training cluster of them its units' commitments; a pool whose
    units a limit shuts out at any price (:func:`cannot_be_used`) is left out.
    """
    compiled, model = solution.compiled, solution.model
    assert solution.result.values is not None  # a solved problem
    lp = support_lp(model, solution.result.values)
    result = get_backend("highspy").solve(lp, SolveOptions())
    if result.reduced_costs is None:
        return {}
    v = lp.variables
    cost = np.zeros(len(v))
    for j, c in lp.objective.coefs.items():
        cost[j] += c
    value = unit_values(lp, result.duals or {}, solution.result.values, cost)
    pools = compiled.pools
    months = compiled.periods["months"].to_numpy()
    hours = compiled.periods["hours"].to_numpy()
    use = np.flatnonzero(v["kind"].isin(("x", "z")).to_numpy() & (v["pool"].to_numpy() >= 0))
    p = v["pool"].to_numpy()[use].astype(int)
    t = np.maximum(v["period"].to_numpy()[use].astype(int), 0)
    owned = (pools["kind"] == "owned").to_numpy()[p]
    reserved = pools["mode"].isin([Mode.RESERVED_1Y, Mode.RESERVED_3Y]).to_numpy()[p]
    with np.errstate(divide="ignore", invalid="ignore"):
        per_month = (pools["capex_usd"] / pools["lifetime_months"]).to_numpy(float)[p] + pools[
            "hosting_usd_per_month"
        ].to_numpy(float)[p]
    full = cost[use] + np.where(
        owned,
        months[t] * np.where(owned, per_month, 0.0),
        np.where(reserved, pools["price_usd_per_hour"].to_numpy(float)[p] * hours[t], 0.0),
    )
    # a training cluster of reserved or owned units commits to them: its units x what the
    # objective charges to reserve or buy one in its period, not one unit's period share
    commits = v[v["kind"].isin(("buy", "commit")).to_numpy()]
    keys = zip(commits["pool"].astype(int), commits["period"].astype(int), strict=True)
    commit_usd = dict(zip(keys, cost[commits.index], strict=True))
    options = compiled.options.set_index("option_id")
    units = options["n_units"] if "n_units" in options else pd.Series(dtype=float)
    cluster = (owned | reserved) & (v["kind"].to_numpy()[use] == "z")
    for i in np.flatnonzero(cluster):
        j = use[i]
        n = float(units.get(v["option_id"].iat[j], 1.0))
        full[i] = cost[j] + n * commit_usd.get((int(p[i]), int(t[i])), 0.0)
    paid = (full > 0) & ~cannot_be_used(model)[use]
    ratio = pd.Series(value[use][paid] / full[paid], index=pools["pool_id"].to_numpy()[p][paid])
    return {str(k): float(r) for k, r in ratio.groupby(level=0).max().items()}


#: row families whose terms are units, accelerators or power, never a price
UNIT_LIMITS = frozenset({"quota", "availability", "power_cap"})


def cannot_be_used(model: LinearModel) -> np.ndarray:
    """Per variable of ``model``: an integer one that no plan can set to 1 at any price, as
    one row of units alone says: a quota, availability or power row (:data:`UNIT_LIMITS`:
    no price in it, so a lower price does not lift it) of nonnegative terms over variables
    at least 0 in which its own coefficient exceeds the row's bound (a cluster larger than
    its quota: on h100-quota-training every pool but one outside the plan, "no feasible
    plan can use it"). Its estimate would rank a pool that can never enter."""
    v = model.variables
    lb = v["lb"].to_numpy(float)
    out = np.zeros(len(v), dtype=bool)
    integer = v["integer"].to_numpy(bool)
    for row in model.rows:
        if row.family not in UNIT_LIMITS or row.sense != "<=":
            continue
        if any(a < 0 or lb[j] < 0 for j, a in row.coefs.items()):
            continue
        for j, a in row.coefs.items():
            if integer[j] and a > row.rhs * (1 + 1e-9) + 1e-9:
                out[j] = True
    return out


def unit_values(
    lp: LinearModel, duals: dict[str, float], plan: np.ndarray, cost: np.ndarray
) -> np.ndarray:
    """What one unit of each variable of the plan's LP ``lp`` is worth at its duals
    (objective units): the sum over its rows of dual x coefficient, read so that a dual
    the plan does not determine counts for nothing.

    - A row in which nothing of the plan can move is left out (:func:`plan_moves`: its
      dual is one of many; on the seed the egress rows of unused providers made every big
      unit look 20-50 times worth its price).
    - Except a choice among such (one cluster per training workload, ``train_once``: the
      chosen cluster and no other in the plan): its dual is the one that makes the chosen
      cluster worth its cost (reduced cost 0), so another is worth what the chosen costs.
    - Capacity counts no more than a covering row asks for (a big server is not worth more
      than the demand it can meet), nor, in an N+1 row, more than the plan's largest unit
      there (:func:`largest_unit_lost`): a larger unit would become the unit lost, so it
      adds only the capacity of the one it displaces as such.
    - Egress capacity counts no more than the block's egress (``egress_serve``).
    """
    fixed = (lp.variables["lb"] == lp.variables["ub"]).to_numpy()
    serve = {r.key: r.rhs for r in lp.rows if r.family == "egress_serve"}
    value = np.zeros(len(lp.variables))
    choices: list[tuple[Row, int]] = []
    for row in lp.rows:
        if not plan_moves(row, plan, fixed):
            used = [j for j in row.coefs if abs(plan[j]) > 1e-9]
            if len(used) == 1 and row.sense == "==":
                choices.append((row, used[0]))
            continue
        y = duals.get(row.name, 0.0)
        if not y:
            continue
        most = np.inf
        if row.sense == ">=" and row.rhs > 0:
            most = row.rhs
            if row.family == "n_plus_1":
                most = min(most, largest_unit_lost(row, plan))
        least = -serve.get(row.key[:3], np.inf) if row.family == "egress_capacity" else -np.inf
        for j, a in row.coefs.items():
            value[j] += y * float(np.clip(a, least, most))
    for row, j in choices:  # the chosen one is worth its cost: its reduced cost is 0
        y = (cost[j] - value[j]) / row.coefs[j]
        for k, a in row.coefs.items():
            value[k] += y * a
    return value


def largest_unit_lost(row: Row, values: np.ndarray) -> float:
    """The capacity (the row's units) an N+1 row of the plan ``values`` takes off for the
    largest unit lost: its top variables' terms (negative coefficients) at the plan; inf
    when it takes none off (no unit in use there)."""
    lost = -sum(a * values[j] for j, a in row.coefs.items() if a < 0)
    return float(lost) if lost > 1e-9 else float("inf")
