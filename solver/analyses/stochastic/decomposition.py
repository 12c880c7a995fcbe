"""Scenario decomposition: candidate commitments priced exactly in every scenario, with the
expected hindsight bound as a proven lower bound.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from solver.analyses.stochastic.extensive import risk_objective
from solver.analyses.stochastic.recourse import (
    compared_costs,
    ev_first_stage,
    first_stage,
    past_deadline,
    run_scenarios,
    same_first_stage,
    scenario_plan,
    solved_alone,
    within_caps,
)
from solver.analyses.stochastic.setup import Setup
from solver.analyses.stochastic.summary import summarised
from solver.errors import InfeasibleError, NoPlanError

MAX_OWN_CANDIDATES = 5  # decomposition: scenarios whose own commitments are tried


def solve_by_decomposition(setup: Setup, solver, options, workers, scheduler):
    """Scenario decomposition with a proven bound.

    Each scenario is solved alone (in parallel): their expected dual bound is a lower
    bound on the expected cost of any commitments (no shared plan beats hindsight).
    Candidate commitments: each scenario's own (at most five, at spread percentiles of
    hindsight cost), the deterministic plan's (expected prices and demand), and the
    probability-weighted consensus of the scenarios' own rounded down and up. This is a
    heuristic for the plan (progressive hedging would refine it) with an exact bound.
    Each candidate is priced exactly: its commitments fixed, every scenario re-planned
    (in parallel); the cheapest in expectation is the plan, its gap against the lower
    bound reported.
    """
    alone = solved_alone(setup, solver, options, workers, scheduler)
    risk = setup.uncertainty.risk
    # the objective is non-decreasing in each scenario's cost, none below its hindsight bound
    lower = risk_objective([x[1] for x in alone], setup.probs, risk)
    own = [first_stage(m, x[2]) for m, x in zip(setup.models, alone, strict=True)]
    ev = ev_first_stage(setup, solver, options)
    keys = sorted(set().union(*own)) if own else []
    mean = {k: sum(p * o.get(k, 0.0) for p, o in zip(setup.probs, own, strict=True)) for k in keys}
    # every scenario's own commitments when there are few; else those of the scenarios at
    # the 10th, 30th, 50th, 70th and 90th percentiles of hindsight cost
    picked: Sequence[int] = range(len(own))
    if len(own) > MAX_OWN_CANDIDATES:
        order = np.argsort([x[0] for x in alone], kind="stable")
        picked = sorted({int(order[int(q * (len(own) - 1))]) for q in (0.1, 0.3, 0.5, 0.7, 0.9)})
    # priced in this order, so that a time limit leaves out the scenarios' own last
    candidates = [ev.first, {k: float(np.floor(v + 1e-9)) for k, v in mean.items()},
                  {k: float(np.ceil(v - 1e-9)) for k, v in mean.items()},
                  *(own[k] for k in picked)]  # fmt: skip
    unique: list[dict] = []
    for c in candidates:
        if not any(same_first_stage(c, u) for u in unique):
            unique.append(c)
    t0 = time.perf_counter()
    n = len(setup.names)
    tasks = [(s, c) for c in unique for s in range(n)]
    results = run_scenarios(setup, tasks, solver, options, workers, scheduler)
    setup.seconds["candidates"] = time.perf_counter() - t0
    best, best_cost, eev = None, np.inf, None
    priced = len(unique)
    for k, c in enumerate(unique):
        part = results[k * n : (k + 1) * n]
        if any(x is None for x in part):
            if past_deadline(setup) and all(x is None for x in results[(k + 1) * n - 1 :]):
                priced = min(priced, k)  # not reached: the time limit stopped the tasks
            continue
        expected = float(sum(p * x[0] for p, x in zip(setup.probs, part, strict=True)))
        co2 = float(sum(p * x[3] for p, x in zip(setup.probs, part, strict=True)))
        if not within_caps(setup, [x[0] for x in part], expected, co2):
            continue
        if same_first_stage(c, ev.first):
            eev = expected
        objective = risk_objective([x[0] for x in part], setup.probs, risk)
        if objective < best_cost - 1e-6:
            best, best_cost = k, objective
    if priced < len(unique):
        setup.cut.append(
            f"{len(unique) - priced} of {len(unique)} candidate commitments not priced"
        )
    if best is None and priced < len(unique):
        raise NoPlanError(
            f"the time limit ran out before a candidate was priced in every scenario "
            f"({'; '.join(setup.cut)}), before any two-stage plan",
            field="--time-limit",
            fix="give it more time (--time-limit S), or fewer scenarios (n_scenarios)",
        )
    if best is None:
        raise InfeasibleError(
            "no candidate commitments give every scenario a feasible plan",
            field="uncertainty",
            fix="relax the budget or carbon cap, or use the extensive form (fewer scenarios)",
        )
    part = results[best * n : (best + 1) * n]
    plans = [scenario_plan(setup, s, part[s][2], None, solver) for s in range(n)]
    # candidates the time limit left unpriced are not known: their None is no verdict
    known = [(c, results[k * n : (k + 1) * n]) for k, c in enumerate(unique) if k < priced]
    compared = compared_costs(setup, ev, solver, options, workers, scheduler, known)
    return summarised(setup, None, plans, ev, eev, alone, compared, "decomposition", lower)
