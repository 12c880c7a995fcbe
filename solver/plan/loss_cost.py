"""What surviving each kind of loss costs (``loss_costs`` on the plan): for each kind of
failure domain (zone, region, provider) some serving workload must survive, the same
problem solved again with that kind taken out of every workload's ``survive_loss_of``
(verified like any plan), its total against the plan's, and the plan's largest single
point of failure of that kind (``points_of_failure``).

The plan without the rule is solved with the solver, method and gap of the plan, within
the share of the time limit left for it; when it cannot be solved in time the entry says
so (``note``) and leaves the cost out. The difference of two plans each within its gap of
its optimum is within the sum of the gaps of the true difference; both gaps are shown.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from solver.core.backends import SolveOptions
from solver.errors import ProcureError
from solver.inputs.problem import InferenceWorkload, Problem
from solver.plan import Plan
from solver.plan.exposure import KINDS, LossCost

#: Share of the solve's time limit kept for the plans without each rule, together
LOSS_COST_SHARE = 0.1


def surviving(problem: Problem) -> dict[str, list[str]]:
    """Kind of domain -> the serving workloads that must survive its loss (kinds in
    zone, region, provider order)."""
    out: dict[str, list[str]] = {}
    for kind in KINDS:
        names = [
            w.name
            for w in problem.workloads
            if isinstance(w, InferenceWorkload) and kind in w.survive_loss_of
        ]
        if names:
            out[kind] = names
    return out


def without_kind(problem: Problem, kind: str) -> Problem:
    """``problem`` with ``kind`` taken out of every workload's ``survive_loss_of``."""
    workloads = [
        w.model_copy(update={"survive_loss_of": [k for k in w.survive_loss_of if k != kind]})
        if isinstance(w, InferenceWorkload) and kind in w.survive_loss_of
        else w
        for w in problem.workloads
    ]
    return problem.model_copy(update={"workloads": workloads})


#: Solves a problem within the options given and returns its verified plan (the caller's
#: solve: :func:`solver.solve.solve_verified` with its solver and method)
Resolve = Callable[[Problem, SolveOptions], Plan]


def loss_costs(
    plan: Plan,
    problem: Problem,
    resolve: Resolve,
    options: SolveOptions,
    time_left_s: float | None,
) -> list[LossCost] | None:
    """The plan's ``loss_costs`` (module docstring); None when no workload must survive a
    loss. ``resolve`` solves each problem without a rule; ``time_left_s``: seconds those
    solves may use together (None: no limit).

    Raises
    ------
    None of its own: a problem without a rule that is not solved (a ProcureError) leaves
    its entry's cost out, with the reason in ``note``.
    """
    kinds = surviving(problem)
    if not kinds:
        return None
    t0 = time.perf_counter()
    out = []
    for k, (kind, names) in enumerate(kinds.items()):
        worst = max(
            (p for p in plan.points_of_failure or [] if p.kind == kind),
            key=lambda p: p.share_of_capacity,
            default=None,
        )
        entry = LossCost(
            kind=kind,
            workloads=names,
            total_cost_usd=plan.total_cost_usd,
            largest_domain=None if worst is None else worst.domain,
            largest_share_of_capacity=None if worst is None else worst.share_of_capacity,
        )
        left = None if time_left_s is None else time_left_s - (time.perf_counter() - t0)
        if left is not None and left <= 0.1:
            out.append(entry.model_copy(update={"note": "no time left to solve it"}))
            continue
        share = None if left is None else left / (len(kinds) - k)
        try:
            other = resolve(without_kind(problem, kind), replace(options, time_limit_s=share))
        except ProcureError as exc:
            out.append(entry.model_copy(update={"note": f"not solved: {exc.message}"}))
            continue
        update = {
            "without_total_usd": other.total_cost_usd,
            "without_gap": other.gap,
            "cost_usd": plan.total_cost_usd - other.total_cost_usd,
        }
        out.append(entry.model_copy(update=update))
    return out
