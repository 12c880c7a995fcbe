"""``procure alternatives``: near-optimal plans that differ most from the optimum and from
each other (modelling to generate alternatives, MGA).

The Hop-Skip-Jump method of Brill, Chang and Hopkins (1982, "Modeling to generate
alternatives: the HSJ approach and an illustration using a problem in land use
planning", Management Science 28(3)), as energy-system planners use it (DeCarolis 2011,
Energy Economics 33(2); PyPSA's ``optimize_mga``, GenX's ``ModelingToGenerateAlternatives``):
solve the optimum ``C*``; then, with the objective held within ``(1 + slack) C*``
(row ``near_optimal``), minimise how often the groups of the chosen measure (providers,
accelerators, regions or purchase modes) were already used by the plans found so far,
each group's binary ``used[g]`` weighted by the number of those plans using it; a row
``differs_from`` per earlier plan asks for a set of groups that is not that plan's. Ties
go to the cheaper plan (the cost, scaled below one weight, is added to the objective).
docs/guides/alternatives.md derives it and works a case by hand.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from solver.analyses.alternatives.groups import (
    MEASURES,
    plan_groups,
    with_indicators,
    with_rows,
)
from solver.analyses.alternatives.resolves import (
    Base,
    analysis_model,
    check_problem,
    verified_plan,
)
from solver.core.backends import SolveOptions, Termination, get_backend
from solver.core.families import new_row
from solver.core.matrix import Expression, LinearModel, Row
from solver.errors import ProcureError
from solver.inputs.catalog import Catalog
from solver.inputs.problem import Problem
from solver.plan import Plan
from solver.units import DEFAULT_SOLVER

#: The most alternatives one call looks for (each is a MIP over every option).
MAX_ALTERNATIVES = 20
#: The largest slack: past it a plan is no longer "near" the optimum.
MAX_SLACK = 1.0
#: Weight of the cost in the objective, at most ``TIE_WEIGHT`` of one group's weight: among
#: plans that reuse as little, the cheaper one.
TIE_WEIGHT = 0.5


@dataclass(frozen=True)
class Alternative:
    """One near-optimal plan.

    Attributes
    ----------
    plan
        The plan, verified; ``status`` is ``feasible`` (it is not the cost optimum).
    groups
        The groups of the measure it uses.
    reused
        How many of its groups earlier plans (the optimum first) used, counted with their
        weights: the measure the search minimised.
    proven
        Whether the solver proved that no plan within the slack reuses less (False when
        its time ran out first: a plan within the slack, not proven the most different).
    """

    plan: Plan
    groups: frozenset[str]
    reused: float
    proven: bool


@dataclass(frozen=True)
class Alternatives:
    """Everything ``procure alternatives`` shows.

    Attributes
    ----------
    optimum
        The optimum, as ``procure solve`` gives it.
    optimum_groups
        The groups of the measure the optimum uses.
    measure
        ``providers``, ``accelerators``, ``regions`` or ``commitments``.
    slack
        Fraction of the optimum's objective an alternative may cost more.
    cap_usd
        The objective an alternative may not exceed, USD: (1 + slack) x the optimum's.
    alternatives
        The plans found, in the order found.
    asked
        How many were asked for.
    stopped
        Why fewer than ``asked`` were found ('' when all were).
    seconds
        Wall time of the whole analysis, s.
    """

    optimum: Plan
    optimum_groups: frozenset[str]
    measure: str
    slack: float
    cap_usd: float
    alternatives: list[Alternative]
    asked: int
    stopped: str
    seconds: float


def check_arguments(slack: float, n: int, measure: str) -> None:
    """Refuse a slack, count or measure the analysis cannot use.

    Raises
    ------
    ProcureError
        Naming the option and the values it takes.
    """
    if not 0.0 < slack <= MAX_SLACK:
        raise ProcureError(
            f"--slack {slack:g} is not a fraction in (0, {MAX_SLACK:g}]",
            field="--slack",
            fix="give the fraction the plans may cost more than the optimum, e.g. --slack 0.02",
        )
    if not 1 <= n <= MAX_ALTERNATIVES:
        raise ProcureError(
            f"--n {n} is not between 1 and {MAX_ALTERNATIVES}",
            field="--n",
            fix="ask for a few alternatives, e.g. --n 4",
        )
    if measure not in MEASURES:
        raise ProcureError(
            f"--differ-by {measure!r} is not a measure",
            field="--differ-by",
            fix=f"use one of {', '.join(MEASURES)}",
        )


def near_optimal_row(base: Base, optimum_objective: float, slack: float) -> Row:
    """``near_optimal``: the objective <= (1 + slack) x the optimum's (a cent of tolerance)."""
    cap = optimum_objective + slack * abs(optimum_objective) + 0.01
    return new_row(
        "near_optimal", (), dict(base.objective.coefs), "<=", cap - base.objective.constant
    )


def differs_row(index: int, used: dict[str, int], groups: frozenset[str]) -> Row:
    """``differs_from``: the set of groups used is not ``groups``: at least one group of it
    unused or one group outside it used, ``sum_{g in S} (1 - u_g) + sum_{g not in S} u_g
    >= 1``."""
    coefs = {u: (-1.0 if g in groups else 1.0) for g, u in used.items()}
    inside = sum(1 for g in used if g in groups)
    return new_row("differs_from", (index,), coefs, ">=", 1.0 - inside)


def reuse_objective(
    used: dict[str, int], earlier: list[frozenset[str]], base: Base, cap_usd: float
) -> Expression:
    """sum_g (plans so far using g) x used[g], plus the objective scaled to at most
    :data:`TIE_WEIGHT` at the cap (the cheaper of two plans that reuse as much)."""
    out = Expression()
    for group, u in used.items():
        out.add(u, float(sum(group in s for s in earlier)))
    scale = TIE_WEIGHT / max(abs(cap_usd), 1.0)
    for i, c in base.objective.coefs.items():
        out.add(i, scale * c)
    out.constant += scale * base.objective.constant
    return out


def alternatives(
    problem: Problem,
    catalog: Catalog,
    *,
    slack: float = 0.02,
    n: int = 4,
    measure: str = "providers",
    solver: str = DEFAULT_SOLVER,
    options: SolveOptions | None = None,
) -> Alternatives:
    """The optimum and up to ``n`` verified plans within ``slack`` of it whose sets of
    ``measure`` groups differ from the optimum's and from each other's, each reusing as
    little as it can of the groups the plans before it used.

    ``options.time_limit_s`` limits each solve (the optimum and each alternative); an
    alternative found when the limit stops its solve is kept and marked not proven.

    Raises
    ------
    ProcureError
        Bad arguments; a two-stage objective; the optimum's own errors (infeasible, no
        plan within the limit).
    VerificationError
        A plan failed the independent verifier.
    """
    from solver.solve import solve_verified

    check_arguments(slack, n, measure)
    check_problem(problem, "procure alternatives")
    options = options or SolveOptions()
    started = time.perf_counter()
    optimum, solution = solve_verified(problem, catalog, solver=solver, options=options)
    base = analysis_model(solution.compiled.problem, catalog, "procure alternatives", measure)
    if optimum.objective is None:
        raise ProcureError("the optimum has no objective value", fix="report this bug")
    first = plan_groups(optimum, base.compiled, measure)
    keep = near_optimal_row(base, optimum.objective, slack)
    cap_usd = keep.rhs + base.objective.constant
    model, used = with_indicators(base.compiled, with_rows(base.model, [keep]), measure)
    backend = get_backend(solver)
    earlier = [first]
    found: list[Alternative] = []
    stopped = ""
    while len(found) < n:
        rows = [differs_row(i, used, s) for i, s in enumerate(earlier)]
        search = with_rows(model, rows)
        search = LinearModel(
            search.variables,
            search.rows,
            reuse_objective(used, earlier, base, cap_usd),
            search.expressions,
            "alternative",
            # sum over provider (or pool) groups of the plans so far using each
            objective_unit="plans reused",
        )
        result = backend.solve(search, options)
        if result.termination == Termination.INFEASIBLE:
            stopped = (
                f"no other plan within {slack:.1%} of the optimum uses a different set of {measure}"
            )
            break
        if not result.has_solution:
            stopped = (
                f"the solver stopped without a further plan ({result.termination.value}); "
                "give it more time (--time-limit S)"
            )
            break
        proven = result.termination == Termination.OPTIMAL
        plan = verified_plan(
            base,
            catalog,
            search,
            result,
            status="feasible",
            time_limited=not proven,
        )
        groups = plan_groups(plan, base.compiled, measure)
        reused = float(sum(sum(g in s for s in earlier) for g in groups))
        found.append(Alternative(plan, groups, reused, proven))
        earlier.append(groups)
    return Alternatives(
        optimum=optimum,
        optimum_groups=first,
        measure=measure,
        slack=slack,
        cap_usd=cap_usd,
        alternatives=found,
        asked=n,
        stopped=stopped,
        seconds=time.perf_counter() - started,
    )
