"""One re-solve of a model the alternatives and preferences analyses extended, made into a
verified plan like any plan (:func:`verified_plan`), and the model they start from
(:func:`analysis_model`).
"""

from __future__ import annotations

from dataclasses import dataclass

from solver.core.backends import SolveResult
from solver.core.compile import Compiled, compile_problem
from solver.core.matrix import Expression, LinearModel
from solver.core.model import build_model, has_second_stage, stage_objective
from solver.errors import ProcureError
from solver.inputs.catalog import Catalog
from solver.inputs.problem import Problem
from solver.plan import Plan, input_digests


@dataclass(frozen=True)
class Base:
    """What every re-solve of an analysis starts from.

    Attributes
    ----------
    problem
        The problem the optimum was solved on (split where a life or term ends, as
        ``procure solve`` solves it).
    compiled
        That problem compiled with the options a cheaper one *of the same group* replaces
        pruned (an option that a cheaper one of another group replaces at the optimum may
        be the one an alternative needs).
    model
        Its model; ``objective`` is the problem's (first-stage) objective.
    objective
        The objective expression, USD (the plan's cost plus any switching or migration
        charge).
    """

    problem: Problem
    compiled: Compiled
    model: LinearModel
    objective: Expression


def check_problem(problem: Problem, option: str) -> None:
    """Refuse a problem the analyses cannot compare plans of, before any solve.

    Raises
    ------
    ProcureError
        A two-stage objective or uncertainty scenarios (the analyses compare plans by one
        objective of one stage).
    """
    if has_second_stage(problem):
        raise ProcureError(
            f"{option} compares plans by one objective; {problem.objective!r} has two stages",
            field="objective",
            fix="use objective min_cost, min_npv, cost_plus_carbon or max_served",
        )
    if problem.uncertainty is not None:
        raise ProcureError(
            f"{option} compares plans of one scenario; the problem has uncertainty scenarios",
            field="uncertainty",
            fix="leave uncertainty out of the problem for this analysis",
        )


def analysis_model(problem: Problem, catalog: Catalog, option: str, measure: str) -> Base:
    """The model of ``problem`` over its options pruned within each group of ``measure``
    (:func:`~solver.analyses.alternatives.groups.pruned_within_groups`).

    Raises
    ------
    ProcureError
        The problem has a two-stage objective or uncertainty scenarios (the analyses
        compare plans by one objective of one stage).
    """
    check_problem(problem, option)
    from solver.analyses.alternatives.groups import pruned_within_groups

    compiled = pruned_within_groups(
        compile_problem(problem, catalog, prune_dominated=False), measure
    )
    model = build_model(compiled)
    return Base(problem, compiled, model, stage_objective(model, problem, first=True))


def verified_plan(
    base: Base,
    catalog: Catalog,
    model: LinearModel,
    result: SolveResult,
    *,
    status: str,
    time_limited: bool,
) -> Plan:
    """The plan of ``result`` (a solve of ``model``, an extension of ``base.model``), its
    ``objective`` the problem's objective at it, with its cash flow, checked by the
    independent verifier against the problem and the catalog, in the problem's currency.

    Raises
    ------
    VerificationError
        The verifier rejected the plan (a bug in procure: such a plan is never shown).
    """
    from solver.plan.provenance import with_currency
    from solver.solve import Solution, plan_of, verified, with_cash_flow

    if result.values is None:
        raise ValueError("verified_plan needs a result with a plan")
    plan = plan_of(Solution(base.compiled, model, result))
    plan = plan.model_copy(
        update={"objective": base.objective.value(result.values), "status": status}
    )
    plan = with_cash_flow(plan, base.problem, catalog, base.compiled)
    plan = verified(
        plan,
        base.problem,
        catalog,
        what="a re-solved plan",
        fix="this is a bug in procure: report it with the problem file",
        inputs=input_digests(base.problem, catalog),
        stopped_at_time_limit=time_limited,
    )
    rate = catalog.rate(base.problem.currency, field="currency", instead="leave currency out (USD)")
    return with_currency(plan, base.problem, rate, catalog)
