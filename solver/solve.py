"""One solve, end to end: compile -> build -> solve (one or two stages) -> plan -> verify.

Pure data in, data out: no printing, no files. The CLI calls :func:`solve_problem`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from datetime import date

import numpy as np

from solver.core.backends import SolveOptions, SolveResult, Termination, get_backend
from solver.core.columns import solve_by_columns, use_columns
from solver.core.compile import Compiled, compile_problem, ties
from solver.core.model import (
    LinearModel,
    Row,
    build_model,
    has_second_stage,
    second_stage,
    stage_objective,
)
from solver.core.refine import refine_periods
from solver.core.restrictions import (
    described,
    lifted_periods,
    lifted_problem,
    period_restrictions,
)
from solver.core.root import solve_at_root, use_root
from solver.core.stay_put import STAY_PUT_SHARE, settled, stay_put
from solver.core.time_budget import RESERVE_SHARE
from solver.errors import InfeasibleError, NoPlanError, ProcureError
from solver.inputs.catalog import Catalog
from solver.inputs.problem import InferenceWorkload, Problem
from solver.money import usd
from solver.plan import Plan, extract_plan, input_digests
from solver.plan.loss_cost import LOSS_COST_SHARE, loss_costs, surviving
from solver.plan.market import market_warnings
from solver.plan.provenance import with_currency
from solver.plan.reporting import in_reporting_periods
from solver.plan.warnings import PlanWarning
from solver.trust.plausibility import implausible_values
from solver.trust.price_requirements import refuse_weak_prices, weak_prices
from solver.trust.refinement import check_split_periods
from solver.trust.verify import verify_plan
from solver.units import DEFAULT_SOLVER


class VerificationError(ProcureError):
    """The verifier rejected a plan: it is never shown as a plan."""


#: the relative gap a solve proves unless asked for another (a plan records any other)
DEFAULT_GAP = SolveOptions().relative_gap


def solve_problem(
    problem: Problem,
    catalog: Catalog,
    *,
    solver: str = DEFAULT_SOLVER,
    options: SolveOptions | None = None,
    explain: bool = True,
    method: str = "auto",
) -> Plan:
    """Compile, model, solve, extract and verify; return a verified plan.

    ``explain`` (default) re-solves an infeasible problem elastically to say what to relax;
    ``method`` as in :func:`solve_verified`.

    Raises
    ------
    InfeasibleError
        The problem has no feasible plan.
    VerificationError
        The solver's plan failed the independent verifier.
    ProcureError
        Bad input, or the solver stopped without a plan.
    """
    return solve_verified(
        problem, catalog, solver=solver, options=options, explain=explain, method=method
    )[0]


def check_before_solving(problem: Problem, catalog: Catalog) -> None:
    """Refuse what :func:`solve_verified` refuses before it solves, without solving: a
    currency the catalog has no rate for, and every name the problem gives (accelerators,
    vendors, providers, regions, residency zones, sites, models, offerings, quotas,
    savings plans) that the catalog does not know, by compiling the problem. A problem
    whose workloads can run nowhere is not refused here: that is the solve's answer
    (:class:`~solver.errors.InfeasibleError`, with what to relax).

    Raises
    ------
    ProcureError
        The message :func:`solve_verified` would raise, naming the field.
    """
    catalog.rate(problem.currency, field="currency", instead="leave currency out (USD)")
    try:
        compile_problem(problem, catalog)
    except InfeasibleError:
        return


def solve_verified(
    problem: Problem,
    catalog: Catalog,
    *,
    solver: str = DEFAULT_SOLVER,
    options: SolveOptions | None = None,
    explain: bool = True,
    prune_dominated: bool = True,
    method: str = "auto",
    price_restrictions: bool = True,
    split_periods: bool = True,
    with_loss_costs: bool = True,
) -> tuple[Plan, Solution]:
    """:func:`solve_problem`, also returning the solution (model and values) behind the plan.

    ``prune_dominated=False`` keeps every option (for analyses that move prices).
    ``method``: ``full`` builds every option into one MIP; ``root`` solves the full LP
    with MIR cuts, a MIP over its support and one after reduced-cost fixing
    (:mod:`solver.core.root`); ``columns`` solves by column generation and a restricted MIP
    with its gap against the full LP bound (:mod:`solver.core.columns`); ``auto`` (default)
    takes ``root`` on large problems and ``columns`` on the largest with the HiGHS
    solvers, except for analyses (``prune_dominated=False``).
    ``price_restrictions`` (default): a plan whose periods outlive a server's life or a
    reservation's term carries a warning with the cost of the same problem with its
    periods split (:func:`period_warnings`).
    ``split_periods`` (default): where a candidate's life or term ends inside a period,
    the problem is solved over its periods split there and the plan reported in its own
    periods (:func:`solved_split`); the plan's ``solution`` is then the split problem's.
    ``with_loss_costs`` (default): a problem whose workloads must survive a loss is solved
    again without each kind, within :data:`LOSS_COST_SHARE` of the time limit, for the
    plan's ``loss_costs`` (:mod:`solver.analyses.loss_cost`).
    """
    options = options or SolveOptions()
    started = time.perf_counter()
    limit = options.time_limit_s
    # before any work: the totals' currency has a rate
    rate = catalog.rate(problem.currency, field="currency", instead="leave currency out (USD)")
    try:
        compiled = compile_problem(problem, catalog, prune_dominated=prune_dominated)
    except InfeasibleError as exc:  # a workload that can run nowhere
        raise (explained(exc, problem, catalog, None) if explain else exc) from None
    if split_periods:
        args = (solver, options, explain, prune_dominated, method, started)
        split = solved_split(problem, catalog, compiled, *args)
        if split is not None:  # lines merged back into the problem's periods: rates again
            return with_currency(split[0], problem, rate, catalog), split[1]
    solution = None
    # the plans that stay put (solver.core.stay_put) take their share of the limit
    moves = charges_moves(problem)
    priced = with_loss_costs and bool(surviving(problem))
    if limit is not None and (moves or priced):
        later = STAY_PUT_SHARE * moves + LOSS_COST_SHARE * priced
        options = replace(options, time_limit_s=limit * (1.0 - later))
    # analyses that move prices (prune_dominated=False) need every option in the model
    large = None
    if solver in ("highs", "highspy") and prune_dominated:
        if use_columns(compiled, method):
            large = ("columns", solve_by_columns)
        elif use_root(compiled, method):
            large = ("root", solve_at_root)
    if large is not None:
        remaining_time(options, time.perf_counter() - started, "compiling the problem")
        solved = large[1](compiled, options, started)
        if solved is not None:
            sub, model, result, report = solved
            setattr(compiled.report, large[0], report.as_dict())
            compile_seconds = time.perf_counter() - started - result.solve_seconds
            if result.termination != Termination.INFEASIBLE:  # else: the full model says why
                solution = Solution(sub, model, checked(result, compiled))
    if solution is None:
        model = build_model(compiled)
        compile_seconds = time.perf_counter() - started
        options = remaining_time(options, compile_seconds, "compiling and building the model")
        options = kept_for_the_plan(options, limit)
        try:
            solution = optimise(compiled, model, solver=solver, options=options, tied=True)
        except InfeasibleError as exc:
            raise (explained(exc, problem, catalog, compiled) if explain else exc) from None
    if moves:  # the stay-put search, until the loss costs' share of the limit
        left = None if limit is None else limit * (1 - RESERVE_SHARE - LOSS_COST_SHARE * priced)
        left = None if left is None else left - elapsed(started)
        solution = replace(
            solution, result=stay_put(solution.model, solution.result, options, left)
        )
    plan = with_cash_flow(
        plan_of(solution).model_copy(update={"compile_seconds": compile_seconds}),
        problem,
        catalog,
        solution.compiled,
    )
    plan = verified(
        plan,
        problem,
        catalog,
        what="the solver's plan",
        fix="this is a bug in procure: report it with the problem file",
        inputs=input_digests(problem, catalog),
        # a plan not proven within the gap asked for, under a time limit: the only limit a
        # solve is given, so the one that stopped it (Termination.FEASIBLE)
        stopped_at_time_limit=limit is not None and plan.status == "feasible",
        gap_asked=None if options.relative_gap == DEFAULT_GAP else options.relative_gap,
    )
    refuse_weak_prices(weak_prices(plan, problem), plan.total_cost_usd, catalog.directory)
    warned = implausible_values(problem) + market_warnings(plan)
    plan = plan.model_copy(update={"warnings": warned})
    if price_restrictions:
        spent = time.perf_counter() - started
        found = period_warnings(problem, catalog, compiled, plan, solver, options, method, spent)
        plan = plan.model_copy(update={"warnings": plan.warnings + found})
    if priced:
        left = None if limit is None else limit * (1 - RESERVE_SHARE) - elapsed(started)
        plan = with_loss_costs_of(plan, problem, catalog, solver, options, method, left)
    return with_currency(plan, problem, rate, catalog), solution


def with_loss_costs_of(
    plan: Plan,
    problem: Problem,
    catalog: Catalog,
    solver: str,
    options: SolveOptions,
    method: str,
    left_s: float | None,
) -> Plan:
    """The plan with its ``loss_costs`` (:mod:`solver.plan.loss_cost`: the problem solved
    without each kind of loss it survives, within ``left_s`` seconds), verified again.

    Raises
    ------
    VerificationError
        The verifier rejected the plan's loss costs (a bug in procure).
    """

    def resolve(without: Problem, opts: SolveOptions) -> Plan:
        return solve_verified(
            without,
            catalog,
            solver=solver,
            options=opts,
            explain=False,
            method=method,
            price_restrictions=False,
            with_loss_costs=False,
        )[0]

    plan = plan.model_copy(
        update={"loss_costs": loss_costs(plan, problem, resolve, options, left_s)}
    )
    return verified(  # the loss costs checked with the rest
        plan,
        problem,
        catalog,
        what="the plan's loss costs",
        fix="this is a bug in procure: report it with the problem file",
    )


def charges_moves(problem: Problem) -> bool:
    """Whether any serving workload's moves between periods are charged (the plan is then
    searched for one that stays put: :mod:`solver.core.stay_put`)."""
    return any(isinstance(w, InferenceWorkload) and w.migration_charged for w in problem.workloads)


def elapsed(started: float) -> float:
    """Seconds since ``started`` (a ``time.perf_counter()``)."""
    return time.perf_counter() - started


def solved_split(
    problem: Problem,
    catalog: Catalog,
    compiled: Compiled,
    solver: str,
    options: SolveOptions,
    explain: bool,
    prune_dominated: bool,
    method: str,
    started: float,
) -> tuple[Plan, Solution] | None:
    """The plan of ``problem`` solved over its periods split where a candidate's life or
    term ends (:func:`solver.core.refine.refine_periods`), reported in its own periods
    (:func:`solver.plan.reporting.in_reporting_periods`), with the verifier's checks of
    the split plan against the split problem and the ``split_periods`` check
    (:mod:`solver.trust.refinement`); None when no period needs splitting or the split
    cannot be faithful (the caller solves the periods as written and warns).
    """
    refinement = refine_periods(compiled)
    if refinement is None or not refinement.split:
        return None
    split = lifted_problem(problem, refinement.pieces)
    if split is None:
        return None
    left = remaining_time(options, time.perf_counter() - started, "compiling the problem")
    try:
        inner, solution = solve_verified(
            split,
            catalog,
            solver=solver,
            options=left,
            explain=False,
            prune_dominated=prune_dominated,
            method=method,
            price_restrictions=False,
            split_periods=False,
            with_loss_costs=False,
        )
    except InfeasibleError as exc:  # the split problem holds every plan of the problem
        raise (explained(exc, problem, catalog, compiled) if explain else exc) from None
    reported = in_reporting_periods(inner, refinement.pieces)
    check = check_split_periods(problem, split, inner, reported)
    # the costs beside compute, the unit costs and the cash flow worked again on the
    # problem's own periods (the split problem's egress and staff are by its pieces), as
    # a plan file of the problem re-derives them
    reported = with_cash_flow(reported, problem, catalog, compiled)
    checks = [*inner.checks, check]
    if not check.ok:
        raise VerificationError(
            f"the plan solved over split periods failed independent verification "
            f"(split_periods: {check.detail})",
            fix="this is a bug in procure: report it with the problem file",
        )
    report = {**reported.compile_report, "split_periods": refinement.as_dict()}
    reported = reported.model_copy(
        update={
            "checks": checks,
            "verified": all(c.ok for c in checks),
            "inputs": input_digests(problem, catalog),
            "warnings": implausible_values(problem) + market_warnings(reported),
            "compile_report": report,
        }
    )
    return reported, solution


def period_warnings(
    problem: Problem,
    catalog: Catalog,
    compiled: Compiled,
    plan: Plan,
    solver: str,
    options: SolveOptions,
    method: str,
    spent_s: float,
) -> list[PlanWarning]:
    """Warnings for the periods that outlive a server's life or a reservation's term
    (:mod:`solver.core.restrictions`), each with the cost of the same problem with those
    periods split: solved here, within what is left of the time limit. When it cannot be
    priced (no time left, a budget on a split period, no plan) the warning says so.
    """
    found = period_restrictions(compiled)
    if not found:
        return []
    pieces = lifted_periods(compiled.periods, found)
    lifted = lifted_problem(problem, pieces)
    cost, why = None, ""
    if lifted is None:
        why = "a period budget or scenario names a split period, or the split is not valid"
    else:
        try:
            left = remaining_time(options, spent_s, "pricing the split periods")
            other = solve_verified(
                lifted,
                catalog,
                solver=solver,
                options=left,
                explain=False,
                method=method,
                price_restrictions=False,
                with_loss_costs=False,
            )[0]
            cost = other.total_cost_usd
        except ProcureError as exc:
            why = f"the split problem was not solved: {exc.message}"
    split = [f"{n} {m:g}" for name, p in pieces.items() if len(p) > 1 for n, m in p]
    out = []
    for r in found:
        head = described(r)
        if cost is not None:
            tail = (
                f"; with the periods split ({', '.join(split)} months) the same problem costs "
                f"{usd(cost)} against {usd(plan.total_cost_usd)}: write those periods to "
                "let the plan buy and replace (or reserve again) within the horizon"
            )
        else:
            tail = f"; what lifting it would cost is not known ({why}): write shorter periods"
        out.append(
            PlanWarning(
                kind="period_structure",
                field="periods",
                detail=head + tail,
                alternative_cost_usd=cost,
                saving_usd=None if cost is None else plan.total_cost_usd - cost,
            )
        )
    return out


def solve_for_analysis(
    problem: Problem,
    catalog: Catalog,
    *,
    solver: str = DEFAULT_SOLVER,
    options: SolveOptions | None = None,
    method: str = "auto",
) -> tuple[Plan, Solution]:
    """The plan :func:`solve_verified` gives (the same model, solver and options, so the
    same plan as ``procure solve``), and a solution over every option holding that plan,
    for analyses that move prices, demand or limits.

    The options are compiled again without pruning; an option keeps its id (and its
    variables their names) with and without pruning, so the plan carries over by name
    (:func:`carried`).
    """
    plan, solution = solve_verified(problem, catalog, solver=solver, options=options, method=method)
    # the problem the solution holds: split where a life or term ends (solved_split)
    problem = solution.compiled.problem
    compiled = compile_problem(problem, catalog, prune_dominated=False)
    model = build_model(compiled)
    if has_second_stage(problem):  # the first criterion's optimum, kept as solved
        kept = next(r for r in solution.model.rows if r.family == "objective_stage")
        first = stage_objective(model, problem, first=True)
        keep = Row(kept.name, kept.family, kept.key, dict(first.coefs), kept.sense, kept.rhs)
        model = model.with_stage(stage_objective(model, problem, first=False), keep, "second")
    values = carried(solution.model, solution.result.values, model)
    return plan, Solution(compiled, model, replace(solution.result, values=values))


def carried(model: LinearModel, values: np.ndarray, other: LinearModel) -> np.ndarray:
    """A plan of ``model`` as values of ``other``'s variables: matched by name (else 0),
    and the N+1 class taken as largest (``top``) set again from the units in use, since
    classes are numbered per model: in each ``n_plus_1`` row, the class of the largest
    unit in use (the smallest class when none is, unless the block may go unserved)."""
    by_name = dict(zip(model.variables["name"], values, strict=True))
    out = np.array([by_name.get(n, 0.0) for n in other.variables["name"]])
    kind = other.variables["kind"].to_numpy()
    tops = kind == "top"
    if not tops.any():
        return out
    out[tops] = 0.0
    # under max_served a block served by no unit takes no class (``largest_unit <= 1``)
    optional = {r.key for r in other.rows if r.family == "largest_unit" and r.sense == "<="}
    for row in other.rows:
        if row.family != "n_plus_1":
            continue
        classes = {j: -c for j, c in row.coefs.items() if kind[j] == "top"}
        used = [c for j, c in row.coefs.items() if kind[j] == "x" and out[j] > 0.5]
        if not classes or (not used and row.key in optional):
            continue
        largest = max(used, default=min(classes.values()))
        top = min(classes, key=lambda j: (abs(classes[j] - largest), j))
        out[top] = 1.0
    return out


def with_cash_flow(
    plan: Plan, problem: Problem, catalog: Catalog, compiled: Compiled | None = None
) -> Plan:
    """The plan with its calendar: ``start_date`` (the problem's ``start``, else the first
    of next month), its cost lines (:func:`solver.plan.costs.with_cost_lines`) and the
    monthly ``cash_flow``; with the ``compiled`` problem it was solved on, the budget
    row's ``budget_basis``."""
    from solver.core.model import budget_bound
    from solver.plan.cashflow import cash_flow, first_of_next_month
    from solver.plan.costs import with_cost_lines
    from solver.plan.unit_costs import with_unit_costs

    start = problem.start or first_of_next_month(date.today())
    plan = with_unit_costs(with_cost_lines(plan, problem, catalog, start), problem)
    basis = ""
    if problem.budget_usd is not None and plan.cost_lines and compiled is not None:
        basis = budget_bound(compiled).basis
    return plan.model_copy(
        update={
            "start_date": start.isoformat(),
            "month_hours": "calendar" if problem.start else "average_730",
            "cash_flow": cash_flow(plan, problem, catalog, start),
            "budget_basis": basis,
        }
    )


def verified(
    plan: Plan,
    problem: Problem,
    catalog: Catalog,
    *,
    what: str,
    fix: str,
    **fields: object,
) -> Plan:
    """The plan stamped with the independent verifier's ``checks`` and ``verified``, with
    any other ``fields`` set (``inputs``: the digests it was solved from).

    Raises
    ------
    VerificationError
        A check failed: ``what`` names the plan in the message, ``fix`` says what to do.
    """
    checks = verify_plan(plan, problem, catalog)
    plan = plan.model_copy(
        update={
            "checks": checks,
            "verified": all(c.ok for c in checks),
            **fields,
        }
    )
    if not plan.verified:
        failed = "; ".join(f"{c.name}: {c.detail}" for c in checks if not c.ok)
        raise VerificationError(f"{what} failed independent verification ({failed})", fix=fix)
    return plan


def explained(
    exc: InfeasibleError, problem: Problem, catalog: Catalog, compiled: Compiled | None
) -> InfeasibleError:
    """The infeasibility error with the smallest relaxations that would make it feasible."""
    from solver.trust.infeasibility import explain_infeasibility

    alternatives = explain_infeasibility(problem, catalog, compiled).sentences()
    if not alternatives:
        return exc
    listing = "\n".join(f"  - {a}" for a in alternatives)
    return InfeasibleError(
        f"{exc.message}; any one of these makes it feasible:\n{listing}",
        file=exc.file,
        field=exc.field,
        fix="apply one of the relaxations above to the problem file",
    )


def remaining_time(options: SolveOptions, spent_s: float, doing: str) -> SolveOptions:
    """The options with the time limit less what was already spent (the limit holds end
    to end: compile, build and solve).

    Raises
    ------
    NoPlanError
        The limit was used up before the solver could start.
    """
    if options.time_limit_s is None:
        return options
    left = options.time_limit_s - spent_s
    if left <= 0:
        raise NoPlanError(
            f"the time limit ran out while {doing} ({spent_s:.1f} s; the solve was given "
            f"{options.time_limit_s:.1f} s of --time-limit), before any plan was found",
            field="--time-limit",
            fix="give it more time (--time-limit S), or make the problem smaller",
        )
    return replace(options, time_limit_s=left)


def kept_for_the_plan(options: SolveOptions, limit_s: float | None) -> SolveOptions:
    """The options with :data:`solver.core.time_budget.RESERVE_SHARE` of the time limit
    ``limit_s`` taken off what the solver gets: kept for the plan, the verifier and the
    output, so that a plan found by the solver is shown within the limit (at least 0.01 s
    is left to the solver, which then answers with what it has)."""
    if limit_s is None or options.time_limit_s is None:
        return options
    left = max(0.01, options.time_limit_s - RESERVE_SHARE * limit_s)
    return replace(options, time_limit_s=min(options.time_limit_s, left))


@dataclass(frozen=True)
class Solution:
    """A solved model: the compiled problem, the model of the last stage, the result."""

    compiled: Compiled
    model: LinearModel
    result: SolveResult


def optimise(
    compiled: Compiled,
    model: LinearModel,
    *,
    solver: str,
    options: SolveOptions,
    tied: bool = False,
) -> Solution:
    """Solve a built model (with the second stage when the objective has one).

    ``tied``: ``model`` is ``build_model(compiled)`` as built, so it may be solved through
    its tie classes (:func:`solver.core.compile.ties.solve_tied`: identical pools as one
    column, the plan expanded back into the model's own variables).

    Raises
    ------
    InfeasibleError, ProcureError
        No feasible plan; an unbounded model; the solver stopped without a plan.
    """
    backend = get_backend(solver)
    through = None
    began = time.perf_counter()
    if tied:
        through = ties.solve_tied(compiled, model, lambda m: backend.solve(m, options))
    if through is not None:
        result, compiled.report.ties = through
    else:  # the time a tie class's solve took is spent
        rest = remaining_time(options, elapsed(began), "solving its tie classes")
        result = backend.solve(model, rest)
    seconds = result.solve_seconds
    final_model = model
    if result.has_solution and has_second_stage(compiled.problem):
        stage2 = second_stage(model, compiled.problem, result.objective)
        if options.time_limit_s is not None and options.time_limit_s - seconds <= 0:
            second = replace(result, values=None)  # no time left: keep the first stage's plan
        else:
            left = None if options.time_limit_s is None else options.time_limit_s - seconds
            second = backend.solve(stage2, replace(options, time_limit_s=left))
        seconds += second.solve_seconds
        if second.has_solution:
            result = replace(second, solve_seconds=seconds)
            final_model = stage2
    return Solution(compiled, final_model, checked(result, compiled))


def checked(result: SolveResult, compiled: Compiled) -> SolveResult:
    """The result if it holds a plan.

    Raises
    ------
    InfeasibleError, ProcureError, NoPlanError
        No feasible plan; an unbounded model; a solver error; stopped without a plan.
    """
    if result.termination == Termination.INFEASIBLE:
        raise InfeasibleError(
            f"problem {compiled.problem.name!r} has no feasible plan"
            + (f" ({result.message})" if result.message else ""),
            fix="relax the budget, carbon cap, quotas or deadlines (see the problem's constraints)",
        )
    if result.termination == Termination.UNBOUNDED:
        raise ProcureError(
            f"problem {compiled.problem.name!r} is unbounded",
            fix="this is a modelling bug; report it with the problem file",
        )
    if result.termination == Termination.ERROR:  # e.g. CP-SAT refusing a non-integer model
        raise ProcureError(
            f"solver {result.solver} could not solve {compiled.problem.name!r}"
            + (f": {result.message}" if result.message else ""),
            field="--solver",
            fix="pick another --solver (highs, highspy, cbc or scip)",
        )
    if not result.has_solution:
        raise NoPlanError(
            f"the solver stopped without a plan ({result.termination.value}"
            + (f": {result.message}" if result.message else "")
            + "); this says nothing about whether a plan exists",
            field="--time-limit",
            fix="give the solver more time (--time-limit S)",
        )
    return result


def plan_of(solution: Solution) -> Plan:
    """The (unverified) plan of a solution.

    Raises
    ------
    VerificationError
        The line items do not add up to the model's cost expression at the solution: the
        plan and the model priced something differently (a bug in procure).
    """
    # an arrival a time-limited solve left at 1 where nothing arrives: not charged
    r = settled(solution.model, solution.result)
    plan = extract_plan(
        solution.compiled,
        solution.model,
        r.values,
        status=r.termination.value,
        objective=r.objective,
        gap=r.gap,
        solver=r.solver,
        solve_seconds=r.solve_seconds,
    )
    model_usd = solution.model.expressions["total_cost_usd"].value(r.values)
    if abs(plan.total_cost_usd - model_usd) > 1e-6 * max(1.0, abs(model_usd)) + 0.01:
        raise VerificationError(
            f"the plan's line items total {usd(plan.total_cost_usd)} but the model's cost is "
            f"{usd(model_usd)} at the same solution",
            fix="this is a bug in procure (the cost ledger and the model disagree); report it "
            "with the problem file",
        )
    check_egress_priced(plan, solution.model, r.values, solution.compiled.problem)
    return plan


def check_egress_priced(
    plan: Plan, model: LinearModel, values: np.ndarray | None, problem: Problem
) -> None:
    """The egress the objective priced (``egress_usd``) against what the plan's egress
    lines charge for the same workloads (:func:`solver.plan.default_costs.priced_egress_usd`,
    the cheapest routing of the plan's fleet): equal to the cent at an optimum; an
    incumbent short of optimal may have priced a dearer routing than its fleet needs
    (the plan charges the cheapest), never a cheaper one.

    Raises
    ------
    VerificationError
        The plan charges more egress than the objective priced (a bug in procure).
    """
    from solver.plan.default_costs import priced_egress_usd

    priced = model.expressions.get("egress_usd")
    if priced is None or values is None or (not priced.coefs and not priced.constant):
        return
    model_usd = priced.value(values)
    plan_usd = priced_egress_usd(plan, problem)
    if plan_usd > model_usd + 0.005:
        raise VerificationError(
            f"the plan's egress lines charge {usd(plan_usd)} for the workloads the model "
            f"priced at {usd(model_usd)}",
            fix="this is a bug in procure (the egress routing and the model disagree); "
            "report it with the problem file",
        )


def solve_compiled(
    compiled: Compiled, model: LinearModel, *, solver: str, options: SolveOptions
) -> tuple[Plan, LinearModel]:
    """Solve a built model; return its (unverified) plan and the last stage's model."""
    solution = optimise(compiled, model, solver=solver, options=options)
    return plan_of(solution), solution.model
