"""The L-shaped method (Van Slyke and Wets; Birge and Louveaux, chapter 5): a master over the
commitments, cut by each scenario's LP recourse, every candidate priced exactly.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import cast

import numpy as np
import pandas as pd

from solver.analyses.stochastic.extensive import FIRST_STAGE, add_cvar, risk_objective
from solver.analyses.stochastic.recourse import (
    compared_costs,
    ev_first_stage,
    first_stage,
    fix_first_stage,
    plan_values,
    same_first_stage,
    scenario_plan,
    scenario_task,
    solved_alone,
    within_caps,
)
from solver.analyses.stochastic.setup import Setup
from solver.analyses.stochastic.summary import summarised
from solver.core.backends.base import relative_gap
from solver.core.model import (
    Expression,
    LinearModel,
    VarKind,
    new_row,
)
from solver.errors import InfeasibleError

MAX_BENDERS_ITERATIONS = 50  # L-shaped method: master solves at most


def cut_task(shared, task):
    """Benders: scenario ``s`` with its first stage fixed at ``first``: the exact cost
    (integer recourse, as :func:`scenario_task`) and a cut from the LP relaxation.

    The cut is (kind, value, gradient by first-stage name): ``optimality`` when the LP is
    feasible (its optimal value; the reduced costs of the fixed first-stage variables are a
    subgradient of that value in the first stage), ``feasibility`` when it is not (the
    same from the LP that minimises the total violation of the scenario's rows).
    """
    from solver.core.backends import get_backend

    compiled, models, solver, options = shared
    s, first = task
    exact = scenario_task(shared, task)
    lp = fix_first_stage(models[s], first)
    lp = replace(lp, variables=lp.variables.assign(integer=False))
    backend = get_backend(solver if "duals" in get_backend(solver).features else "highspy")
    kind, r = "optimality", backend.solve(lp, replace(options, time_limit_s=None))
    if not r.has_solution:
        kind, r = "feasibility", backend.solve(elastic(lp), replace(options, time_limit_s=None))
    first_rows = lp.variables["kind"].isin(FIRST_STAGE).to_numpy()
    names = lp.variables["name"][first_rows]
    gradient = dict(zip(names, r.reduced_costs[: len(first_rows)][first_rows], strict=True))
    return exact, (kind, float(r.objective), {k: float(g) for k, g in gradient.items()})


def elastic(model: LinearModel) -> LinearModel:
    """``model`` with a slack on every row, minimising their sum: zero where the rows can
    hold, else how far they are from holding (feasibility cuts)."""
    n, rows, objective = len(model.variables), [], Expression()
    slacks: list[str] = []
    for r in model.rows:
        coefs = dict(r.coefs)
        for sign in {"<=": (-1.0,), ">=": (1.0,), "==": (-1.0, 1.0)}[r.sense]:
            coefs[n + len(slacks)] = sign
            objective.add(n + len(slacks), 1.0)
            slacks.append(f"slack[{r.name},{sign:+g}]")
        rows.append(replace(r, coefs=coefs))
    extra = pd.DataFrame({"name": slacks, "kind": VarKind.RISK.value, "integer": False,
                          "lb": 0.0, "ub": np.inf})  # fmt: skip
    variables = pd.concat([model.variables, extra], ignore_index=True)
    return LinearModel(variables, rows, objective, model.expressions)


def benders_master(setup: Setup, floors_usd: list[float], cuts: list) -> LinearModel:
    """The master of the L-shaped method: the first-stage variables, their own rows, and
    per scenario theta_s >= its hindsight bound (``floors_usd``) and every cut so far
    (``cuts``: (scenario, kind, value, gradient, first stage it was taken at)).
    Objective sum_s p_s theta_s (+ weight x CVaR of the thetas with risk:); with caps in
    expectation, sum_s p_s theta_s <= budget; theta_s <= max_scenario_cost_usd."""
    base = setup.models[0].variables
    is_first = base["kind"].isin(FIRST_STAGE).to_numpy()
    first = base[is_first].reset_index(drop=True)
    pos = {n: i for i, n in enumerate(first["name"])}
    old = {int(i): pos[n] for i, n in zip(np.flatnonzero(is_first), first["name"], strict=True)}
    n_first, names = len(first), setup.names
    thetas = pd.DataFrame({"name": [f"theta@{x}" for x in names], "kind": VarKind.RECOURSE.value,
                           "integer": False, "lb": floors_usd, "ub": np.inf})  # fmt: skip
    rows = [
        replace(r, coefs={old[i]: c for i, c in r.coefs.items()})
        for r in setup.models[0].rows
        if r.coefs and all(i in old for i in r.coefs)
    ]
    for k, (s, kind, value, gradient, at) in enumerate(cuts):
        coefs = {pos[n]: -g for n, g in gradient.items() if g}
        rhs = value - sum(g * at.get(n, 0.0) for n, g in gradient.items())
        if kind == "optimality":  # theta_s >= value + g (x - at)
            rows.append(new_row("benders_cut", (k,), coefs | {n_first + s: 1.0}, ">=", rhs))
        else:  # value + g (x - at) <= 0
            rows.append(new_row("benders_cut", (k,), coefs, ">=", rhs))
    u, p = setup.uncertainty, setup.problem
    expected = Expression()
    for s, prob in enumerate(setup.probs):
        expected.add(n_first + s, prob)
        if u.max_scenario_cost_usd is not None:
            cap = u.max_scenario_cost_usd
            rows.append(new_row("scenario_cost_cap", (names[s],), {n_first + s: 1.0}, "<=", cap))
    if setup.caps == "expectation" and p.budget_usd is not None:
        rows.append(new_row("budget", (), dict(expected.coefs), "<=", p.budget_usd))
    per_scenario = {}
    for s, x in enumerate(names):
        per_scenario[f"total_cost_usd@{x}"] = Expression()
        per_scenario[f"total_cost_usd@{x}"].add(n_first + s, 1.0)
    variables = pd.concat([first, thetas], ignore_index=True)
    master = LinearModel(variables, rows, expected, per_scenario | {"total_cost_usd": expected})
    if u.risk is not None:
        master = add_cvar(master, setup.probs, names, u.risk.cvar_level, u.risk.weight)
    return master


def solve_by_benders(setup: Setup, solver, options, workers, scheduler):
    """The L-shaped method (Van Slyke and Wets; Birge and Louveaux, chapter 5).

    The master (:func:`benders_master`) chooses the commitments; each scenario with them
    fixed is solved twice, in parallel (``workers`` processes or a Dask ``scheduler``,
    :func:`cut_task`): with integer recourse, for the exact cost of the candidate (the
    upper bound: the best candidate within the caps is the plan), and as an LP, for a cut.
    The LP recourse is never above the integer one, so its cuts under-estimate the true
    scenario cost and the master's bound is a proven lower bound; each theta_s also starts
    at the scenario's hindsight bound, so the bound is never weaker than wait-and-see.
    The first candidate is the deterministic plan's commitments. Stops when the gap is
    within ``options.relative_gap``, when the master proposes a candidate already priced
    (the LP cuts are exact there; what gap is left is the integrality of the recourse),
    or after MAX_BENDERS_ITERATIONS.
    """
    from solver.solve import optimise

    alone = solved_alone(setup, solver, options, workers, scheduler)
    risk, n = setup.uncertainty.risk, len(setup.names)
    floors = [x[1] for x in alone]
    lower = risk_objective(floors, setup.probs, risk)
    ev = ev_first_stage(setup, solver, options)
    t0, cuts, priced = time.perf_counter(), [], []
    candidate: dict[str, float] | None = ev.first
    best, best_cost, eev, iterations = None, np.inf, None, 0
    shared = (setup.compiled, setup.models, solver, options)
    from solver.analyses.runner import run_tasks

    while candidate is not None and iterations < MAX_BENDERS_ITERATIONS:
        iterations += 1
        results = run_tasks(cut_task, [(s, candidate) for s in range(n)], shared=shared,
                            workers=workers, scheduler=scheduler)  # fmt: skip
        part = [exact for exact, _ in results]
        priced.append((candidate, part))
        cuts += [(s, *cut, candidate) for s, (_, cut) in enumerate(results)]
        if all(x is not None for x in part):
            costs = [x[0] for x in part]
            expected = float(np.dot(setup.probs, costs))
            co2 = float(np.dot(setup.probs, [x[3] for x in part]))
            if same_first_stage(candidate, ev.first) and within_caps(setup, costs, expected, co2):
                eev = expected
            objective = risk_objective(costs, setup.probs, risk)
            if within_caps(setup, costs, expected, co2) and objective < best_cost - 1e-6:
                best, best_cost = len(priced) - 1, objective
        master = benders_master(setup, floors, cuts)
        try:
            r = optimise(setup.compiled[0], master, solver=solver, options=options).result
        except InfeasibleError:
            break  # no commitments satisfy the cuts: none is feasible in every scenario
        bound = r.bound if r.bound is not None and np.isfinite(r.bound) else r.objective
        lower = max(lower, float(cast(float, bound)))  # the master has a plan: its objective
        nxt = first_stage(master, plan_values(r))
        gap = relative_gap(best_cost, lower) if best is not None else None
        done = gap is not None and gap <= options.relative_gap
        candidate = None if done or any(same_first_stage(nxt, c) for c, _ in priced) else nxt
    setup.seconds["benders"] = time.perf_counter() - t0
    if best is None:
        raise InfeasibleError(
            "no commitments the L-shaped method tried give every scenario a feasible plan",
            field="uncertainty",
            fix="relax the budget or carbon cap, or use --stochastic-method extensive",
        )
    part = priced[best][1]
    plans = [scenario_plan(setup, s, part[s][2], None, solver) for s in range(n)]
    compared = compared_costs(setup, ev, solver, options, workers, scheduler, priced)
    lower = min(lower, best_cost)  # a bound within the solver's tolerance of the plan
    proven = relative_gap(best_cost, lower) <= options.relative_gap
    sp = summarised(setup, None, plans, ev, eev, alone, compared, "benders", lower, proven)
    sp.notes.append(
        f"L-shaped method: {iterations} master solves, {len(cuts)} cuts "
        f"({sum(c[1] == 'feasibility' for c in cuts)} feasibility), {len(priced)} candidates "
        "priced exactly"
    )
    return sp
