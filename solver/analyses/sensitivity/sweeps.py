"""Sweeps: the carbon frontier, budget and demand sweeps and price scenarios, each a list
of independent re-solves of variants of a compiled problem (:func:`run_tasks`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

import numpy as np

from solver.analyses.sensitivity.monotone import monotone_budget, monotone_frontier
from solver.analyses.sensitivity.pricing import (
    pools_in_plan,
    run_unpruned_tasks,
    with_pool_prices,
)
from solver.analyses.sensitivity.results import SweepPoint
from solver.core.backends import SolveOptions, Termination
from solver.core.compile import Compiled, repruned
from solver.core.model import build_model, has_second_stage
from solver.errors import InfeasibleError, ProcureError
from solver.solve import Solution, optimise


def variant(compiled: Compiled, change: tuple) -> Compiled:
    """The compiled problem with one change: ("problem", {field: value}),
    ("demand", factor) or ("prices", per-pool factors in pool order)."""
    kind, what = change
    if kind == "problem":
        return replace(compiled, problem=compiled.problem.model_copy(update=what))
    if kind == "demand":
        return with_demand_factor(compiled, what)
    if kind == "prices":
        return with_pool_prices(compiled, dict(zip(compiled.pools["pool_id"], what, strict=True)))
    raise ValueError(f"unknown change {kind!r}")


#: the relative gap a sweep point is proven to when no other is given: the solve's own
#: default (``procure solve --gap``); ``procure report`` proves its sweeps to
#: :data:`SWEEP_GAP` instead (``--sweep-gap``)
POINT_GAP = SolveOptions().relative_gap

#: ``procure report``'s default ``--sweep-gap``: each point of the frontier, the budget and
#: demand sweeps and the price scenarios is proven to within 0.5% of its optimum. Basis
#: (docs/concepts/sensitivity.md, "The sweep gap"): the scenarios vary prices by ±20%, 40
#: times more; the catalogue's prices are list prices, not transaction prices; measured on
#: the seed it takes most of what a looser gap saves (bench/RESULTS.md, "report_sweeps.py:
#: the sweep gap").
SWEEP_GAP = 5e-3


def solve_point(compiled: Compiled, task: tuple) -> SweepPoint:
    """Solve one variant of a compiled problem to the task's relative gap (its fifth item;
    :data:`POINT_GAP` when it has four); summarise it."""
    change, sweep, value, solver, *rest = task
    gap = float(rest[0]) if rest else POINT_GAP
    compiled = repruned(variant(compiled, change))
    try:
        options = SolveOptions(relative_gap=gap)
        solution = optimise(compiled, build_model(compiled), solver=solver, options=options)
    except ProcureError as exc:  # infeasible or stopped: a point of the sweep, not an error
        status = "infeasible" if isinstance(exc, InfeasibleError) else "no_solution"
        return SweepPoint(sweep=sweep, value=value, status=status)
    return summary(solution, sweep, value)


def summary(solution: Solution, sweep: str, value: float) -> SweepPoint:
    """A solved variant as a point of ``sweep`` at ``value``: its status, objective, total
    cost (USD), CO2e (t), mean served fraction and the pools its plan uses."""
    e = solution.model.expressions
    x = solution.result.values
    assert x is not None and solution.result.objective is not None  # optimise raises otherwise
    served = _served(solution)
    result = solution.result
    return SweepPoint(
        sweep=sweep,
        value=value,
        status=solution.result.termination.value,
        objective=float(solution.result.objective),
        total_cost_usd=e["total_cost_usd"].value(x),
        total_co2e_t=e["total_co2e_t"].value(x),
        served_fraction=served,
        used=sorted(pools_in_plan(solution.model, x, solution.compiled.pools)),
        bound=result.bound,
        gap=result.gap,
    )


def _served(solution: Solution) -> float:
    from solver.plan import served_fraction

    assert solution.result.values is not None  # optimise raises where it finds no plan
    fractions = served_fraction(solution.compiled, solution.model, solution.result.values)
    return float(np.mean(list(fractions.values()))) if fractions else 1.0


def _frontier_ends(
    compiled: Compiled,
    solver: str,
    deadline: float | None = None,
    min_cost: SweepPoint | None = None,
    gap: float = POINT_GAP,
) -> list:
    """The frontier's two ends, in this process: the min-cost plan (cap inf) and the
    min-carbon plan (cap 0); None for one not started by ``deadline``. ``min_cost``, when
    given, is the min-cost end already solved (the problem as posed, when it is min cost
    without a cap: :func:`as_posed`)."""
    tasks = [
        (
            ("problem", {"objective": objective, "carbon_cap_tco2e": None}),
            "carbon_cap_tco2e",
            cap,
            solver,
            gap,
        )
        for objective, cap in (("min_cost", np.inf), ("min_carbon", 0.0))
    ]
    if min_cost is None:
        return run_unpruned_tasks(solve_point, tasks, shared=compiled, deadline=deadline)
    end = run_unpruned_tasks(solve_point, tasks[1:], shared=compiled, deadline=deadline)
    return [min_cost.model_copy(update={"sweep": "carbon_cap_tco2e", "value": np.inf}), *end]


def as_posed(solution: Solution) -> SweepPoint | None:
    """The solved problem as posed, as a sweep point (sweep and value set by the caller):
    a sweep point that is the problem itself (a demand factor of 1; the min-cost end of
    the frontier when the problem is min cost with no cap) is this plan, and is not
    solved again. None when the solve was not proven (stopped by a limit) or has a second
    stage (its objective is not one criterion)."""
    if has_second_stage(solution.compiled.problem) or solution.result.values is None:
        return None
    if solution.result.termination != Termination.OPTIMAL:
        return None
    return summary(solution, "as posed", 1.0)


def _frontier_tasks(ends: list, points: int, solver: str, gap: float = POINT_GAP) -> list | None:
    """The frontier's caps from the min-carbon plan's CO2e to the min-cost plan's, as tasks;
    None when an end has no CO2e (no plan): the frontier is then the ends that have one."""
    high, low = ends
    if high.total_co2e_t is None or low.total_co2e_t is None:
        return None
    caps = np.linspace(low.total_co2e_t, high.total_co2e_t, points)
    caps[0] *= 1.0 + 1e-6  # the min-carbon value itself, with room for rounding
    return [
        (
            ("problem", {"objective": "min_cost", "carbon_cap_tco2e": float(c)}),
            "carbon_cap_tco2e",
            float(c),
            solver,
            gap,
        )
        for c in caps
    ]


def frontier_chain(compiled: Compiled, task: tuple) -> list[SweepPoint]:
    """The frontier's caps, loosest first, in this process (``task``: the cap tasks of
    :func:`_frontier_tasks`, loosest first, and the min-cost end's point).

    A cap at or above the CO2e of the plan proven optimal at the next looser cap (or, when
    given, the min-cost end's) takes that plan without a solve: it meets the tighter cap,
    and no plan under a tighter cap costs less than the looser optimum, so it is optimal
    (within the same gap) there too. On the seed the 51.9 t cap is taken so from the
    63.2 t cap's 49.7 t plan (docs/concepts/sensitivity.md). Every other cap is solved as
    :func:`solve_point`.
    """
    tasks, proven = task
    out: list[SweepPoint] = []
    for t in tasks:
        cap = t[2]
        co2e = None if proven is None else proven.total_co2e_t
        if proven is not None and proven.status == "optimal" and co2e is not None and co2e <= cap:
            out.append(proven.model_copy(update={"value": cap}))
            continue
        point = solve_point(compiled, t)
        out.append(point)
        proven = point  # a cap with no proven plan carries nothing to the tighter ones
    return out


def carbon_frontier(
    compiled: Compiled,
    *,
    points: int = 8,
    solver: str = "highspy",
    gap: float = POINT_GAP,
    **run,
) -> list[SweepPoint]:
    """Cost versus CO2e: min cost under caps from the min-carbon plan to the min-cost plan,
    each proven to the relative ``gap`` (a fraction) and repaired so that a looser cap
    never costs more (:func:`~solver.analyses.sensitivity.monotone.monotone_frontier`)."""
    ends = _frontier_ends(compiled, solver, gap=gap)
    tasks = _frontier_tasks(ends, points, solver, gap)
    if tasks is None:
        return [p for p in ends if p.total_co2e_t is not None]
    return monotone_frontier(run_unpruned_tasks(solve_point, tasks, shared=compiled, **run), gap)


def _budget_tasks(budgets_usd: Iterable[float], solver: str, gap: float = POINT_GAP) -> list:
    return [
        (
            ("problem", {"objective": "max_served", "budget_usd": float(b)}),
            "budget_usd",
            float(b),
            solver,
            gap,
        )
        for b in budgets_usd
    ]


def budget_sweep(
    compiled: Compiled,
    budgets_usd: Iterable[float],
    *,
    solver: str = "highspy",
    gap: float = POINT_GAP,
    **run,
) -> list[SweepPoint]:
    """Served demand and cost versus budget (objective: max served within budget), each
    point proven to the relative ``gap`` and repaired so that more budget never does worse
    (:func:`~solver.analyses.sensitivity.monotone.monotone_budget`)."""
    tasks = _budget_tasks(budgets_usd, solver, gap)
    return monotone_budget(run_unpruned_tasks(solve_point, tasks, shared=compiled, **run), gap)


def with_demand_factor(compiled: Compiled, factor: float) -> Compiled:
    """Online and batch demand scaled by ``factor`` (training unchanged)."""
    demand = compiled.demand.copy()
    demand["demand"] = demand["demand"] * factor
    return replace(compiled, demand=demand)


def _demand_tasks(factors: Iterable[float], solver: str, gap: float = POINT_GAP) -> list:
    return [(("demand", float(f)), "demand_factor", float(f), solver, gap) for f in factors]


def demand_sweep(
    compiled: Compiled,
    factors: Iterable[float],
    *,
    solver: str = "highspy",
    gap: float = POINT_GAP,
    **run,
) -> list[SweepPoint]:
    """Cost versus demand growth (every inference demand scaled), each point proven to the
    relative ``gap``."""
    tasks = _demand_tasks(factors, solver, gap)
    return run_unpruned_tasks(solve_point, tasks, shared=compiled, **run)


def _scenario_tasks(
    compiled: Compiled, n: int, spread: float, seed: int, solver: str, gap: float = POINT_GAP
) -> list:
    """``n`` price scenarios: every pool's price x a factor drawn uniformly in 1 ± spread."""
    rng = np.random.default_rng(seed)
    k = len(compiled.pools)
    draws = [rng.uniform(1.0 - spread, 1.0 + spread, size=k) for _ in range(n)]
    return [(("prices", f), "scenario", float(s), solver, gap) for s, f in enumerate(draws)]


def _scenario_share(points: list[SweepPoint]) -> dict[str, float]:
    """Per pool used in any scenario, the share of feasible scenarios whose plan uses it."""
    ok = [p for p in points if p.total_cost_usd is not None]
    share: dict[str, float] = {}
    for p in ok:
        for pool in p.used:
            share[pool] = share.get(pool, 0.0) + 1.0 / len(ok)
    return dict(sorted(share.items(), key=lambda kv: (-kv[1], kv[0])))


def price_scenarios(
    compiled: Compiled,
    *,
    n: int = 20,
    spread: float = 0.2,
    seed: int = 0,
    solver: str = "highspy",
    gap: float = POINT_GAP,
    **run,
) -> tuple[list[SweepPoint], dict[str, float]]:
    """Every pool's price drawn uniformly within ±``spread``; how often each pool stays
    (each scenario proven to the relative ``gap``).

    Returns the points and, per pool used in any scenario, the share of feasible
    scenarios whose optimal plan uses it.
    """
    tasks = _scenario_tasks(compiled, n, spread, seed, solver, gap)
    points = run_unpruned_tasks(solve_point, tasks, shared=compiled, **run)
    return points, _scenario_share(points)


#: the report's sweeps, in the order it names them (and names those cut by a deadline)
REPORT_SWEEPS = ("carbon frontier", "budget sweep", "demand sweep", "price scenarios")


def report_sweeps(
    compiled: Compiled,
    *,
    frontier_points: int = 8,
    budgets_usd: Sequence[float] = (),
    demand_factors: Sequence[float] = (0.5, 1.0, 1.5, 2.0, 3.0),
    scenarios: int = 20,
    spread: float = 0.2,
    seed: int = 0,
    solver: str = "highspy",
    progress: Callable[[int, int], None] | None = None,
    deadline: float | None = None,
    posed: SweepPoint | None = None,
    gap: float = SWEEP_GAP,
    **run,
) -> dict[str, object]:
    """The carbon frontier, the budget and demand sweeps and the price scenarios of
    ``procure report``, as :func:`carbon_frontier`, :func:`budget_sweep`,
    :func:`demand_sweep` and :func:`price_scenarios` give them, in one run of tasks.

    The frontier's two ends are solved first (its caps come from them); then every other
    point goes to one pool, the frontier's caps first: they are the longest (autoscaled,
    each several times a price scenario, bench/speed/report_sweeps.py --per-point), and a pool
    that takes the longest first ends its last tasks together. One pool for the four
    sweeps, rather than one each, leaves no worker idle at a sweep's end while another
    finishes its last point (bench/archive/RESULTS-2026.md, "Autoscale the default: the report").

    Returns, by name (:data:`REPORT_SWEEPS`), the frontier's points, the budget sweep's,
    the demand sweep's, and the scenarios' (points, shares); None for a sweep with a point
    not started by ``deadline`` (a sweep is shown whole or not at all). ``progress(done,
    total)`` counts the points of the pool. Every point is proven to the relative ``gap``
    (:data:`SWEEP_GAP` by default: the report's ``--sweep-gap``) and carries it; the
    frontier and the budget sweep are repaired to stay monotone
    (:mod:`solver.analyses.sensitivity.monotone`).
    """
    out: dict[str, object] = dict.fromkeys(REPORT_SWEEPS)
    parts: dict[str, list] = {}
    problem = compiled.problem
    min_cost_end = (
        posed if problem.objective == "min_cost" and problem.carbon_cap_tco2e is None else None
    )
    ends = _frontier_ends(compiled, solver, deadline, min_cost=min_cost_end, gap=gap)
    if all(p is not None for p in ends):  # else the frontier is cut: left None
        caps = _frontier_tasks(ends, frontier_points, solver, gap)
        if caps is None:  # an end without a plan: the frontier is the ends that have one
            out["carbon frontier"] = [p for p in ends if p.total_co2e_t is not None]
        else:  # one task, loosest cap first (frontier_chain), shown in the caps' order
            # the chains start with no plan: the top cap is the min-cost plan's own CO2e,
            # where tied min-cost plans differ in CO2e (on the seed a solve under that cap
            # gives one of 76.9 t, not the min-cost end's 86.0 t: the point would move)
            parts["carbon frontier"] = [
                (_CHAIN, (chain, None)) for chain in _chains(caps[::-1], run.get("workers", 1))
            ]
    parts["price scenarios"] = _scenario_tasks(compiled, scenarios, spread, seed, solver, gap)
    demand = _demand_tasks(demand_factors, solver, gap)
    parts["demand sweep"] = [_AS_POSED if t[2] == 1.0 and posed else t for t in demand]
    parts["budget sweep"] = _budget_tasks(budgets_usd, solver, gap)
    tasks = [t for part in parts.values() for t in part if t is not _AS_POSED]
    done = run_unpruned_tasks(
        _report_task, tasks, shared=compiled, progress=progress, deadline=deadline, **run
    )
    results = iter(done)
    for name, part in parts.items():
        got: list | None = [
            posed.model_copy(update={"sweep": "demand_factor", "value": 1.0})
            if t is _AS_POSED and posed is not None
            else next(results)
            for t in part
        ]
        if name == "carbon frontier" and got is not None:  # the chains' points, loosest first
            got = None if any(c is None for c in got) else [p for c in got for p in c][::-1]
            got = None if got is None else monotone_frontier(got, gap)
        if name == "budget sweep" and got is not None and all(p is not None for p in got):
            got = monotone_budget(got, gap)
        if got is not None and all(p is not None for p in got):
            out[name] = (got, _scenario_share(got)) if name == "price scenarios" else got
    return out


#: a run of the frontier's caps as one task (:func:`frontier_chain`); a demand factor of 1, the
#: problem as posed, answered by the report's own plan
_CHAIN, _AS_POSED = "frontier chain", ("as posed",)


def _chains(tasks: list, workers: int) -> list[list]:
    """``tasks`` in ``workers`` runs of neighbours (one when serial), so the frontier's
    caps still run in parallel: a cap takes a plan only from the looser caps of its run."""
    n = max(1, min(workers, len(tasks)))
    edges = np.linspace(0, len(tasks), n + 1).round().astype(int)
    return [tasks[a:b] for a, b in zip(edges, edges[1:], strict=False)]


def _report_task(compiled: Compiled, task: tuple) -> SweepPoint | list[SweepPoint]:
    """One of :func:`report_sweeps`' tasks: the frontier's chain of caps, or one point."""
    if task[0] == _CHAIN:
        return frontier_chain(compiled, task[1])
    return solve_point(compiled, task)
