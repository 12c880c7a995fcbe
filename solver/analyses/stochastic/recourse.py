"""Scenario solves with the first stage fixed or free (in parallel, within the deadline), the
deterministic plan's first stage, and each scenario's plan read and verified.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import cast

import numpy as np
import pandas as pd

from solver.analyses.stochastic.extensive import FIRST_STAGE
from solver.analyses.stochastic.scenarios import (
    demand_factors,
    keep_pools,
    price_factors,
    scenario_compiled,
    scenario_problem,
)
from solver.analyses.stochastic.setup import Setup
from solver.core.backends import SolveOptions
from solver.core.backends.base import SolveResult
from solver.core.compile import Compiled
from solver.core.model import (
    LinearModel,
    build_model,
)
from solver.errors import InfeasibleError, NoPlanError
from solver.plan import LineItem, extract_plan
from solver.units import Item


def fix_first_stage(model: LinearModel, first: dict[str, float]) -> LinearModel:
    """``model`` with its first-stage variables fixed at ``first`` (by name; others 0)."""
    v = model.variables.copy()
    is_first = v["kind"].isin(FIRST_STAGE).to_numpy()
    # as floats: with no first-stage variable at all (nothing can be committed) the empty
    # object array would not go into the float bounds (pandas: TypeError)
    chosen = v.loc[is_first, "name"].map(first).fillna(0.0).to_numpy(dtype=float)
    v.loc[is_first, "lb"] = chosen
    v.loc[is_first, "ub"] = chosen
    return replace(model, variables=v)


def first_stage(model: LinearModel, values: np.ndarray) -> dict[str, float]:
    v = model.variables
    first = v["kind"].isin(FIRST_STAGE).to_numpy()
    return {n: float(round(x)) for n, x in zip(v["name"][first], values[first], strict=True)}


def scenario_task(shared, task):
    """Solve one scenario alone, its first stage fixed or free: (cost, bound, values), or
    None when it has no feasible plan."""
    from solver.solve import optimise

    compiled, models, solver, options = shared
    s, first = task
    model = models[s] if first is None else fix_first_stage(models[s], first)
    try:
        r = optimise(compiled[s], model, solver=solver, options=options).result
    except InfeasibleError:
        return None
    cost = models[s].expressions["total_cost_usd"].value(r.values)
    co2 = models[s].expressions["total_co2e_t"].value(r.values)
    bound = r.bound if r.bound is not None and np.isfinite(r.bound) else r.objective
    return cost, float(bound), r.values, co2


def run_scenarios(setup: Setup, tasks: list, solver, options, workers, scheduler) -> list:
    """The scenario solves ``tasks``; those not started by ``setup.deadline`` are None."""
    from solver.analyses.runner import run_tasks

    shared = (setup.compiled, setup.models, solver, until_deadline(setup, options))
    return run_tasks(
        scenario_task, tasks, shared=shared, workers=workers, scheduler=scheduler,
        deadline=setup.deadline,
    )  # fmt: skip


def until_deadline(setup: Setup, options: SolveOptions) -> SolveOptions:
    """``options`` with a time limit no later than ``setup.deadline`` (at least 0.01 s)."""
    if setup.deadline is None:
        return options
    left = max(0.01, setup.deadline - time.perf_counter())  # past it: no task starts
    limit = options.time_limit_s
    return replace(options, time_limit_s=left if limit is None else min(limit, left))


def past_deadline(setup: Setup) -> bool:
    return setup.deadline is not None and time.perf_counter() > setup.deadline


def solved_alone(setup: Setup, solver, options, workers, scheduler) -> list:
    """Each scenario solved alone with hindsight (wait and see)."""
    t0 = time.perf_counter()
    out = run_scenarios(
        setup, [(s, None) for s in range(len(setup.names))], solver, options, workers, scheduler
    )
    setup.seconds["wait_and_see"] = time.perf_counter() - t0
    if any(x is None for x in out) and past_deadline(setup):
        raise NoPlanError(
            f"the time limit ran out after {sum(x is not None for x in out)} of {len(out)} "
            "scenarios were solved with hindsight (the bound needs them all), before any "
            "two-stage plan",
            field="--time-limit",
            fix="give it more time (--time-limit S), or fewer scenarios (n_scenarios)",
        )
    if any(x is None for x in out):
        raise InfeasibleError(
            f"scenario {setup.names[out.index(None)]!r} has no feasible plan even with hindsight",
            field="uncertainty",
            fix="relax the budget, carbon cap or demand of that scenario",
        )
    return out


def same_first_stage(a: dict, b: dict) -> bool:
    return all(abs(a.get(k, 0.0) - b.get(k, 0.0)) < 1e-6 for k in set(a) | set(b))


def within_caps(setup: Setup, costs: list[float], expected: float, co2_t: float) -> bool:
    """Caps the scenario subproblems do not see: the worst case; the budget and carbon
    cap in expectation."""
    u, p = setup.uncertainty, setup.problem
    if u.max_scenario_cost_usd is not None and max(costs) > u.max_scenario_cost_usd * (1 + 1e-9):
        return False
    if setup.caps == "expectation":
        if p.budget_usd is not None and expected > p.budget_usd * (1 + 1e-9):
            return False
        if p.carbon_cap_tco2e is not None and co2_t > p.carbon_cap_tco2e * (1 + 1e-9):
            return False
    return True


def scenario_plan(setup: Setup, s: int, values: np.ndarray, result, solver: str):
    """Scenario ``s``'s plan, checked against its own problem and catalog."""
    from solver.solve import VerificationError, verified, with_cash_flow

    problem_s, catalog_s = setup.inputs[s]
    model = setup.models[s]
    plan = extract_plan(
        setup.compiled[s], model, values,
        status="optimal" if result is None else result.termination.value,
        objective=None, gap=None if result is None else result.gap, solver=solver,
        solve_seconds=0.0 if result is None else result.solve_seconds,
    )  # fmt: skip
    model_usd = model.expressions["total_cost_usd"].value(values)
    if abs(plan.total_cost_usd - model_usd) > 1e-6 * max(1.0, abs(model_usd)) + 0.01:
        raise VerificationError(
            f"scenario plan lines total ${plan.total_cost_usd:,.2f}, the model ${model_usd:,.2f}",
            fix="this is a bug in procure: report it with the problem file",
        )
    # its cost lines beside compute (all in by default) and calendar, as a solve's plan
    plan = with_cash_flow(plan, problem_s, catalog_s)
    return verified(
        plan,
        problem_s,
        catalog_s,
        what=f"scenario {setup.names[s]!r}'s plan",
        fix="this is a bug in procure: report it with the problem file",
    )


class EV:
    """The deterministic plan at expected prices and demands: its first stage."""

    def __init__(self, first: dict[str, float], commitments: list[LineItem]) -> None:
        self.first, self.commitments = first, commitments


def ev_first_stage(setup: Setup, solver: str, options: SolveOptions) -> EV:
    """The EV plan's first stage: expected prices, demands and capacity shares (each
    option's capacity x sum_s p_s share_s)."""
    t0 = time.perf_counter()
    problem, catalog = setup.problem, setup.catalog
    probs = setup.probs
    pf = cast(
        pd.DataFrame,
        sum(p * price_factors(catalog, s) for p, s in zip(probs, setup.scenarios, strict=True)),
    )
    dfs = [demand_factors(problem, s) for s in setup.scenarios]
    df = {k: float(sum(p * d[k] for p, d in zip(probs, dfs, strict=True))) for k in dfs[0]}
    problem_ev = scenario_problem(problem, df, "every_scenario")
    shares = cast(np.ndarray, sum(p * x for p, x in zip(probs, setup.shares, strict=True)))
    ev = scenario_compiled(setup.base, problem_ev, pf, df, shares)
    out = first_stage_of(setup, ev, solver, options)
    setup.seconds["deterministic"] = time.perf_counter() - t0
    return out


def first_stage_of(setup: Setup, compiled: Compiled, solver: str, options) -> EV:
    """The first stage of the deterministic plan of ``compiled`` (kept pools only)."""
    from solver.solve import optimise

    (ev,) = keep_pools([compiled], setup.kept)
    model = build_model(ev)
    result = optimise(ev, model, solver=solver, options=until_deadline(setup, options)).result
    values = plan_values(result)
    plan = extract_plan(
        ev, model, values, status="optimal", objective=None, gap=None, solver=solver,
        solve_seconds=0.0,
    )  # fmt: skip
    commitments = [i for i in plan.line_items if i.item in (Item.RESERVATION, Item.PURCHASE)]
    return EV(first_stage(model, values), commitments)


def compared_costs(setup: Setup, ev: EV, solver, options, workers, scheduler, known=()) -> tuple:
    """Per scenario, what the deterministic plan's commitments and no new commitments
    (everything rented) cost, rentals re-planned in that scenario (in parallel).

    Returns
    -------
    tuple of two lists
        (deterministic, all rented) cost per scenario in USD; None where that scenario
        has no feasible plan under those commitments. ``known``: (first stage, results of
        :func:`scenario_task` per scenario) already solved, not solved again.
    """
    n = len(setup.names)
    wanted = [ev.first, {}]
    found = [next((part for c, part in known if same_first_stage(c, f)), None) for f in wanted]
    todo: list[dict] = []
    for f, part in zip(wanted, found, strict=True):
        if part is None and not any(same_first_stage(f, t) for t in todo):
            todo.append(f)
    t0 = time.perf_counter()
    tasks = [(s, f) for f in todo for s in range(n)]
    results = run_scenarios(setup, tasks, solver, options, workers, scheduler)
    setup.seconds["compared"] = time.perf_counter() - t0
    if todo and past_deadline(setup) and any(x is None for x in results):  # else: infeasible
        setup.cut.append(
            "the comparison with the deterministic plan and with renting everything: "
            f"{sum(x is None for x in results)} of {len(results)} scenario re-plans"
        )
    out = []
    for f, part in zip(wanted, found, strict=True):
        if part is None:
            j = next(j for j, t in enumerate(todo) if same_first_stage(f, t))
            part = results[j * n : (j + 1) * n]
        out.append([None if x is None else float(x[0]) for x in part])
    return out[0], out[1]


def plan_values(result: SolveResult) -> np.ndarray:
    """The values of a result :func:`solver.solve.optimise` returned (it always holds a plan:
    it raises when the solver found none)."""
    assert result.values is not None, "optimise returns only results that hold a plan"
    return result.values
