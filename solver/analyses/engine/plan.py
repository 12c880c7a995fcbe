"""A warm solution made into a verified plan, the way :func:`solver.solve.solve_verified`
makes a cold one: the line items (checked against the model's cost), the calendar, the
independent verifier (a refused plan is never shown), the price-confidence rule, the
warnings and the currency.
"""

from __future__ import annotations

import hashlib
import json
import time

from solver.inputs.catalog import Catalog
from solver.inputs.problem import Problem
from solver.plan import Plan, input_digests
from solver.plan.lines.digests import PlanInputs, problem_json
from solver.plan.market import market_warnings
from solver.plan.provenance import with_currency
from solver.solve import DEFAULT_GAP, Solution, plan_of, verified, with_cash_flow
from solver.trust.plausibility import implausible_values
from solver.trust.price_requirements import refuse_weak_prices, weak_prices


def digests(problem: Problem, catalog: Catalog, catalog_sha256: str | None) -> PlanInputs:
    """:func:`solver.plan.input_digests`, the catalog's digest taken as given when it is."""
    if catalog_sha256 is None:
        return input_digests(problem, catalog)
    text = problem_json(problem)
    return PlanInputs(
        problem_sha256=hashlib.sha256(text.encode()).hexdigest(),
        problem=json.loads(text),
        catalog_sha256=catalog_sha256,
    )


def verified_plan(
    solution: Solution,
    problem: Problem,
    catalog: Catalog,
    time_limit_s: float | None,
    started: float,
    relative_gap: float = DEFAULT_GAP,
    catalog_sha256: str | None = None,
) -> Plan:
    """The verified plan of ``solution`` for ``problem`` and ``catalog``.

    ``time_limit_s`` is the limit the solve had (None: none), ``started`` its
    ``time.perf_counter()`` at the start (the plan's ``compile_seconds`` is the time
    before the solver ran), ``relative_gap`` the gap it proved, ``catalog_sha256`` the
    catalog's digest when known (:func:`solver.plan.input_digests` takes it otherwise).

    Raises
    ------
    VerificationError
        The verifier refused the plan (a bug in procure: never shown as a plan).
    ProcureError
        A plan resting on prices weaker than the problem allows.
    """
    rate = catalog.rate(problem.currency, field="currency", instead="leave currency out (USD)")
    spent = time.perf_counter() - started - solution.result.solve_seconds
    plan = with_cash_flow(
        plan_of(solution).model_copy(update={"compile_seconds": max(0.0, spent)}),
        problem,
        catalog,
        solution.compiled,
    )
    plan = verified(
        plan,
        problem,
        catalog,
        what="the warm engine's plan",
        fix="this is a bug in procure: report it with the problem file",
        inputs=digests(problem, catalog, catalog_sha256),
        stopped_at_time_limit=time_limit_s is not None and plan.status == "feasible",
        gap_asked=None if relative_gap == DEFAULT_GAP else relative_gap,
    )
    refuse_weak_prices(weak_prices(plan, problem), plan.total_cost_usd, catalog.directory)
    plan = plan.model_copy(update={"warnings": implausible_values(problem) + market_warnings(plan)})
    return with_currency(plan, problem, rate, catalog)
