"""``procure resolve``: the baseline rebased, priced at the old and the new prices, the
re-solve with its stability rows, verified, and the diff of the two plans.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from solver.analyses.diff import PlanDiff, diff_plans
from solver.analyses.resolve.decisions import (
    baseline_pools,
)
from solver.analyses.resolve.pricing import evaluate_decisions
from solver.analyses.resolve.rebasing import Rebased, rebase
from solver.analyses.resolve.stability import StabilityInfo, add_stability, count_changes
from solver.core.backends import SolveOptions
from solver.core.compile import Compiled, compile_problem, repruned
from solver.core.model import (
    build_model,
)
from solver.errors import ProcureError
from solver.inputs.catalog import Catalog
from solver.inputs.problem import (
    Problem,
)
from solver.money import usd
from solver.plan import LineItem, Plan, input_digests
from solver.units import DEFAULT_SOLVER


@dataclass(frozen=True)
class Resolution:
    """Everything ``procure resolve`` shows.

    Attributes
    ----------
    rebased
        The problem from ``as_of`` and what was carried over.
    plan
        The new plan, verified against the rebased problem and the new catalog.
    baseline, baseline_at_new_prices
        The baseline's remaining decisions in the rebased problem, priced at the
        old and the new catalog.
    diff
        ``baseline`` versus ``plan`` (price effect from ``baseline_at_new_prices``).
    unplaced
        Baseline items with no place in the new model (kept at their old cost).
    stability
        What the stability rows were, if any.
    """

    rebased: Rebased
    plan: Plan
    baseline: Plan
    baseline_at_new_prices: Plan
    diff: PlanDiff
    unplaced: list[LineItem]
    stability: StabilityInfo | None


def _evaluated(compiled: Compiled, items: list[LineItem]) -> tuple[Plan, list[LineItem]]:
    return evaluate_decisions(compiled, build_model(compiled), items, label="baseline")


def _stable_solution(
    compiled, model, future_items, max_changes, switching_cost_usd, solver, options
):
    """The re-solve's optimum, with the stability rows the user asked for (if any), and
    what they cost (a :class:`StabilityInfo`, or None)."""
    from solver.solve import carried, optimise

    def unconstrained():
        """The plain problem's optimum, pruned for its own prices, limits and demand."""
        pruned = repruned(compiled)
        return optimise(pruned, build_model(pruned), solver=solver, options=options)

    stability = None
    if max_changes is not None:
        # The unconstrained optimum first: when it already keeps the limit it is also the
        # constrained optimum (and the MIP with change indicators is not needed).
        free = unconstrained()
        free_cost = free.model.expressions["total_cost_usd"].value(free.result.values)
        values = carried(free.model, free.result.values, model)
        free_changes = count_changes(compiled, model, values, future_items)
        if free_changes <= max_changes:
            solution = free
            stability = StabilityInfo(max_changes, None, 0, 0, [], free_cost, free_changes, False)
        else:
            extended, info = add_stability(compiled, model, future_items, max_changes=max_changes)
            solution = optimise(compiled, extended, solver=solver, options=options)
            stability = replace(
                info, unconstrained_cost_usd=free_cost, unconstrained_changes=free_changes
            )
    elif switching_cost_usd is not None:
        extended, stability = add_stability(
            compiled, model, future_items, switching_cost_usd=switching_cost_usd
        )
        solution = optimise(compiled, extended, solver=solver, options=options)
    else:
        solution = unconstrained()
    return solution, stability


def _resolution_notes(baseline, old_view, plan, rebased, unplaced, stability, as_of) -> list[str]:
    """What the diff of a re-solve should say besides the line items."""
    notes = []
    if unplaced:
        notes.append(
            f"{len(unplaced)} baseline line item(s) have no place in the new problem (offering "
            "gone or no longer allowed): kept at their old cost on both sides of the price effect"
        )
    if as_of is None and not math.isclose(
        old_view.total_cost_usd, baseline.total_cost_usd, rel_tol=1e-6, abs_tol=0.01
    ):
        notes.append(
            f"the baseline costs ${baseline.total_cost_usd:,.2f} in its file but "
            f"${old_view.total_cost_usd:,.2f} at the --catalog prices: was it solved on "
            "another catalog?"
        )
    if rebased.as_of is not None:
        notes.append(
            f"both plans from {rebased.as_of} on; the baseline's remaining decisions "
            "re-read in the re-based problem (fleet and commitments made before it count "
            "as existing)"
        )
    if stability is not None and stability.unavoidable:
        notes.append(f"{len(stability.unavoidable)} baseline line item(s) cannot be kept")
    if stability is not None and stability.unconstrained_cost_usd is not None:
        extra = plan.total_cost_usd - stability.unconstrained_cost_usd
        notes.append(
            f"without --max-changes the re-solve changes {stability.unconstrained_changes} line "
            f"item(s) and costs ${stability.unconstrained_cost_usd:,.2f}; the limit of "
            f"{stability.max_changes} costs {usd(extra, signed=True)}"
        )
    return notes


def resolve(
    problem: Problem,
    baseline: Plan,
    old_catalog: Catalog,
    new_catalog: Catalog,
    *,
    as_of: str | None = None,
    max_changes: int | None = None,
    switching_cost_usd: float | None = None,
    solver: str = DEFAULT_SOLVER,
    options: SolveOptions | None = None,
) -> Resolution:
    """Re-solve ``problem`` from ``as_of`` at the new prices, keeping what is done.

    Raises
    ------
    ProcureError
        See :func:`rebase` and :func:`add_stability`; bad input.
    InfeasibleError
        Nothing satisfies the rebased problem (and the stability rows).
    VerificationError
        The new plan failed the independent verifier.
    """
    import time

    from solver.plan.provenance import with_currency
    from solver.solve import (
        kept_for_the_plan,
        period_warnings,
        plan_of,
        remaining_time,
        verified,
        with_cash_flow,
    )
    from solver.trust.price_requirements import refuse_weak_prices, weak_prices

    if max_changes is not None and switching_cost_usd is not None:
        raise ProcureError(
            "give --max-changes or --switching-cost-usd, not both",
            field="--max-changes/--switching-cost-usd",
            fix="pick one way to keep the plan stable",
        )
    options = options or SolveOptions()
    started = time.perf_counter()
    rebased = rebase(problem, baseline, old_catalog, as_of)
    compiled = compile_problem(rebased.problem, new_catalog, prune_dominated=False)
    compiled_old = compile_problem(rebased.problem, old_catalog, prune_dominated=False)
    # The baseline is read at either prices in a model pruned for them with its own pools
    # kept (each of its decisions has its variable; no other option is needed to price it).
    keep = baseline_pools(compiled, rebased.future_items)
    old_view, unplaced = _evaluated(repruned(compiled_old, keep), rebased.future_items)
    at_new, _ = _evaluated(repruned(compiled, keep), rebased.future_items)
    # the stability rows are written over every option (the unpruned model)
    stable = max_changes is not None or switching_cost_usd is not None
    model = build_model(compiled) if stable else None
    compile_seconds = time.perf_counter() - started
    # the limit holds end to end: the solver gets what the compiles left, less the reserve
    # for the plan and the verifier
    limit = options.time_limit_s
    options = remaining_time(options, compile_seconds, "compiling the re-solve's models")
    options = kept_for_the_plan(options, limit)
    solution, stability = _stable_solution(
        compiled, model, rebased.future_items, max_changes, switching_cost_usd, solver, options
    )
    plan = plan_of(solution)
    plan = plan.model_copy(update={"compile_seconds": compile_seconds})
    plan = with_cash_flow(plan, rebased.problem, new_catalog, compiled)
    plan = verified(
        plan,
        rebased.problem,
        new_catalog,
        what="the re-solved plan",
        fix="this is a bug in procure: report it with the problem, baseline and prices",
        inputs=input_digests(rebased.problem, new_catalog),
        stopped_at_time_limit=limit is not None and plan.status == "feasible",
    )
    weak = weak_prices(plan, rebased.problem)
    refuse_weak_prices(weak, plan.total_cost_usd, new_catalog.directory)
    # a period of the re-based problem that outlives a server's life or a term: said on
    # the new plan with the cost of splitting it, as procure solve says it
    spent = time.perf_counter() - started
    found = period_warnings(
        rebased.problem, new_catalog, compiled, plan, solver, options, "auto", spent
    )
    plan = plan.model_copy(update={"warnings": plan.warnings + found})
    rate = new_catalog.rate(
        rebased.problem.currency, field="currency", instead="leave currency out (USD)"
    )
    plan = with_currency(plan, rebased.problem, rate, new_catalog)
    notes = _resolution_notes(baseline, old_view, plan, rebased, unplaced, stability, as_of)
    diff = diff_plans(
        old_view, plan, old_at_new_prices=at_new, price_source="the re-solve's prices", notes=notes
    )
    return Resolution(
        rebased=rebased,
        plan=plan,
        baseline=old_view,
        baseline_at_new_prices=at_new,
        diff=diff,
        unplaced=unplaced,
        stability=stability,
    )
