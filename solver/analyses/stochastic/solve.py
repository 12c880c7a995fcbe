"""Solving a problem with ``uncertainty:`` in two stages: the method chosen, run, and the
commitments checked against the prices the problem accepts.
"""

from __future__ import annotations

import time

from solver.analyses.stochastic.benders import solve_by_benders
from solver.analyses.stochastic.decomposition import solve_by_decomposition
from solver.analyses.stochastic.extensive import add_cvar, extensive_form
from solver.analyses.stochastic.recourse import (
    compared_costs,
    ev_first_stage,
    fix_first_stage,
    plan_values,
    scenario_plan,
    solved_alone,
    until_deadline,
)
from solver.analyses.stochastic.result import StochasticPlan
from solver.analyses.stochastic.setup import Setup
from solver.analyses.stochastic.summary import summarised, with_period_notes, with_point_estimate
from solver.core.backends import SolveOptions
from solver.core.clock import first_day
from solver.core.model import (
    budget_bound,
)
from solver.core.time_budget import RESERVE_SHARE
from solver.errors import InfeasibleError, ProcureError
from solver.inputs.catalog import Catalog
from solver.inputs.problem import (
    Problem,
)
from solver.trust.price_requirements import refuse_weak_prices, weak_prices_in


def solve_stochastic(
    problem: Problem,
    catalog: Catalog,
    *,
    solver: str = "highspy",
    options: SolveOptions | None = None,
    method: str = "auto",
    workers: int = 1,
    scheduler: str | None = None,
) -> StochasticPlan:
    """The two-stage plan of a problem with ``uncertainty:`` (docs/guides/uncertainty.md).

    ``method``: ``extensive`` (one model of every scenario, proven optimal),
    ``decomposition`` (scenario subproblems, in parallel on ``workers`` processes or a
    Dask ``scheduler``:
    :func:`~solver.analyses.stochastic.decomposition.solve_by_decomposition`),
    ``benders`` (the L-shaped method, its scenario solves in parallel the same way:
    :func:`~solver.analyses.stochastic.benders.solve_by_benders`), or ``auto``
    (extensive up to 10 scenarios).

    Raises
    ------
    ProcureError
        Bad scenarios; an objective other than min_cost.
    InfeasibleError
        No commitments work in every scenario (under the caps).
    VerificationError
        A scenario's plan failed the independent verifier (a bug in procure).
    """
    if method not in ("auto", "extensive", "decomposition", "benders"):
        raise ProcureError(
            f"unknown method {method!r}",
            field="--stochastic-method",
            fix="use auto, extensive, decomposition or benders",
        )
    options = options or SolveOptions()
    started = time.perf_counter()
    setup = Setup(problem, catalog)
    if options.time_limit_s is not None:  # the limit holds end to end
        setup.deadline = started + (1.0 - RESERVE_SHARE) * options.time_limit_s
    if method == "benders":
        sp = solve_by_benders(setup, solver, options, workers, scheduler)
    elif method == "decomposition" or (method == "auto" and len(setup.scenarios) > 10):
        sp = solve_by_decomposition(setup, solver, options, workers, scheduler)
    else:
        sp = _extensive(setup, solver, options, workers, scheduler)
    # what is signed now must rest on prices the problem accepts; each
    # scenario's rentals are not kept as line items, so only the commitments are checked
    weak = weak_prices_in(sp.commitments, problem, first_day(problem.start))
    refuse_weak_prices(weak, sp.expected_cost_usd, catalog.directory)
    sp = with_point_estimate(setup, sp, solver, options, workers, scheduler)
    return with_period_notes(sp, setup.compiled[0])


def _extensive(setup: Setup, solver: str, options: SolveOptions, workers, scheduler):
    from solver.solve import optimise

    u = setup.uncertainty
    budget = setup.problem.budget_usd
    if budget is not None:  # the costs beside compute held at their bound (model.budget_bound)
        bound = budget_bound(setup.compiled[0])
        budget = (budget - bound.constant_usd) / bound.multiplier
    ef, maps = extensive_form(
        setup.models, setup.probs, setup.names, caps=setup.caps,
        budget_usd=budget, carbon_cap_tco2e=setup.problem.carbon_cap_tco2e,
        max_scenario_cost_usd=u.max_scenario_cost_usd,
    )  # fmt: skip
    if u.risk is not None:
        ef = add_cvar(ef, setup.probs, setup.names, u.risk.cvar_level, u.risk.weight)
    solution = optimise(
        setup.compiled[0], ef, solver=solver, options=until_deadline(setup, options)
    )
    r = solution.result
    if setup.deadline is not None and r.termination.value == "feasible":
        setup.cut.append("the extensive form's proof of optimality (its gap is stated)")
    setup.seconds["extensive_form"] = r.solve_seconds
    values = plan_values(r)
    plans = [scenario_plan(setup, s, values[maps[s]], r, solver) for s in range(len(setup.names))]
    ev = ev_first_stage(setup, solver, options)
    t0 = time.perf_counter()
    fixed = fix_first_stage(ef, ev.first)
    try:
        fixed_result = optimise(
            setup.compiled[0], fixed, solver=solver, options=until_deadline(setup, options)
        ).result
        eev = ef.expressions["total_cost_usd"].value(plan_values(fixed_result))
    except InfeasibleError:
        eev = None
    setup.seconds["eev"] = time.perf_counter() - t0
    alone = solved_alone(setup, solver, options, workers, scheduler)
    compared = compared_costs(setup, ev, solver, options, workers, scheduler)
    return summarised(setup, r, plans, ev, eev, alone, compared, "extensive_form", r.bound)
