"""``procure alternatives --preferences``: the price of each preference.

For each provider, accelerator, purchase mode and region group (residency zone) the
optimum uses, the cost of excluding it (row ``exclude_group``: none of its units); for
each one it does not use but could (a group with options in the compiled problem), the
cost of requiring it (``require_group``: at least one of its units). Each is a re-solve of
the problem's objective over its options pruned within the groups of that kind (exact for
both rows, :func:`~solver.analyses.alternatives.groups.pruned_within_groups`), verified
like any plan; a re-solve that its time limit stops is "not proven" (its cost is then an
upper bound of the preference's).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from solver.analyses.alternatives.groups import (
    PREFERENCE_KINDS,
    group_vars,
    plan_groups,
    with_rows,
)
from solver.analyses.alternatives.resolves import analysis_model, check_problem, verified_plan
from solver.core.backends import SolveOptions, Termination, get_backend
from solver.core.families import new_row
from solver.inputs.catalog import Catalog
from solver.inputs.problem import Problem
from solver.plan import Plan
from solver.units import DEFAULT_SOLVER


@dataclass(frozen=True)
class Preference:
    """The price of one preference.

    Attributes
    ----------
    kind
        ``providers``, ``accelerators``, ``commitments`` or ``region_groups``.
    group
        The provider, accelerator, mode or residency zone.
    action
        ``exclude`` (the optimum uses it) or ``require`` (it does not).
    status
        ``optimal``, ``not proven`` (the time limit stopped the re-solve with a plan),
        ``infeasible`` (no plan keeps the preference) or ``no plan`` (stopped without one).
    cost_usd
        The re-solve's total cost, USD (None without a plan).
    delta_usd
        Its objective less the optimum's, USD: what the preference costs (None without a
        plan).
    plan
        The re-solve's verified plan (None without one).
    """

    kind: str
    group: str
    action: str
    status: str
    cost_usd: float | None
    delta_usd: float | None
    plan: Plan | None


@dataclass(frozen=True)
class Preferences:
    """The optimum and the price of each preference, kind by kind.

    Attributes
    ----------
    optimum
        The optimum, as ``procure solve`` gives it.
    rows
        One per group priced, in kind order, excluded groups first, then by delta.
    seconds
        Wall time of the whole analysis, s.
    """

    optimum: Plan
    rows: list[Preference]
    seconds: float


def preferences(
    problem: Problem,
    catalog: Catalog,
    *,
    kinds: tuple[str, ...] = tuple(PREFERENCE_KINDS),
    solver: str = DEFAULT_SOLVER,
    options: SolveOptions | None = None,
) -> Preferences:
    """The optimum and, per kind, the cost of excluding each group it uses and of requiring
    each group it could use but does not. ``options.time_limit_s`` limits each solve.

    Raises
    ------
    ProcureError
        A two-stage objective or uncertainty scenarios; the optimum's own errors.
    VerificationError
        A plan failed the independent verifier.
    """
    from solver.solve import solve_verified

    check_problem(problem, "--preferences")
    options = options or SolveOptions()
    started = time.perf_counter()
    optimum, solution = solve_verified(problem, catalog, solver=solver, options=options)
    backend = get_backend(solver)
    rows: list[Preference] = []
    for kind in kinds:
        base = analysis_model(solution.compiled.problem, catalog, "--preferences", kind)
        members = group_vars(base.compiled, base.model, kind)
        used = plan_groups(optimum, base.compiled, kind)
        mine: list[Preference] = []
        for group in sorted(members):
            units = dict.fromkeys(members[group], 1.0)
            if group in used:
                action, row = "exclude", new_row("exclude_group", (group,), units, "<=", 0.0)
            else:
                action, row = "require", new_row("require_group", (group,), units, ">=", 1.0)
            model = with_rows(base.model, [row])
            result = backend.solve(model, options)
            if result.termination == Termination.INFEASIBLE:
                mine.append(Preference(kind, group, action, "infeasible", None, None, None))
                continue
            if not result.has_solution:
                mine.append(Preference(kind, group, action, "no plan", None, None, None))
                continue
            proven = result.termination == Termination.OPTIMAL
            plan = verified_plan(
                base,
                catalog,
                model,
                result,
                status=result.termination.value,
                time_limited=not proven,
            )
            delta = (plan.objective or 0.0) - (optimum.objective or 0.0)
            status = "optimal" if proven else "not proven"
            mine.append(Preference(kind, group, action, status, plan.total_cost_usd, delta, plan))
        mine.sort(
            key=lambda p: (
                p.action != "exclude",
                p.delta_usd is None,
                p.delta_usd or 0.0,
                p.group,
            )
        )
        rows.extend(mine)
    return Preferences(optimum=optimum, rows=rows, seconds=time.perf_counter() - started)
