"""What each serving architecture would cost: the problem re-solved with every online
workload aggregated, and with every one disaggregated (``procure solve
--compare-architectures``; the plan's ``architecture_costs``)."""

from __future__ import annotations

from solver.core.backends import SolveOptions
from solver.errors import InfeasibleError, ProcureError
from solver.inputs.catalog import Catalog
from solver.inputs.problem import InferenceWorkload, Problem
from solver.plan import Plan

ARCHITECTURES = ("aggregated", "disaggregated")


def can_disaggregate(w: object) -> bool:
    """An online workload that may take ``architecture: disaggregated`` (no traffic mix,
    no failure domains: the problem file refuses those with it)."""
    return isinstance(w, InferenceWorkload) and not w.traffic_mix and not w.survive_loss_of


def with_architecture(problem: Problem, architecture: str) -> Problem:
    """The problem with every online workload that can take it (:func:`can_disaggregate`)
    set to ``architecture``; the others aggregated."""
    workloads = [
        w.model_copy(update={"architecture": architecture if can_disaggregate(w) else "aggregated"})
        if isinstance(w, InferenceWorkload)
        else w
        for w in problem.workloads
    ]
    return problem.model_copy(update={"workloads": workloads})


def architecture_costs(
    problem: Problem,
    catalog: Catalog,
    *,
    solver: str,
    options: SolveOptions | None = None,
    method: str = "auto",
) -> dict[str, float | None]:
    """Total cost (USD, at catalog prices) of the verified optimal plan with every online
    workload ``aggregated``, and with every one that can (:func:`can_disaggregate`)
    ``disaggregated``; None where no plan serves it that way (no offering pairs, an SLO no
    pool meets, no workload that can)."""
    from solver.solve import solve_problem

    out: dict[str, float | None] = {}
    for arch in ARCHITECTURES:
        if arch == "disaggregated" and not any(map(can_disaggregate, problem.workloads)):
            out[arch] = None  # no online workload can be served so
            continue
        try:
            plan: Plan = solve_problem(
                with_architecture(problem, arch),
                catalog,
                solver=solver,
                options=options,
                explain=False,
                method=method,
            )
        except (InfeasibleError, ProcureError):
            out[arch] = None
            continue
        out[arch] = plan.total_cost_usd
    return out
