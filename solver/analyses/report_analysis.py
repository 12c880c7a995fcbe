"""The analysis behind ``procure report``: the sensitivity analysis and the sweeps of a
solved plan, run together and returned as one plain :class:`Analysis` that the renderers
(:mod:`solver.outputs.report`) turn into files.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

import numpy as np
from pydantic import BaseModel, Field

from solver.analyses.sensitivity import REPORT_SWEEPS, report_sweeps, sensitivity_report
from solver.analyses.sensitivity.results import SensitivityReport, SweepPoint
from solver.analyses.sensitivity.sweeps import SWEEP_GAP, as_posed
from solver.analyses.stochastic import StochasticPlan
from solver.plan import Plan
from solver.solve import Solution


class Analysis(BaseModel):
    """Everything ``procure report`` shows, as one JSON-able object."""

    plan: Plan
    sensitivity: SensitivityReport
    carbon_frontier: list[SweepPoint] = Field(default_factory=list)
    budget_sweep: list[SweepPoint] = Field(default_factory=list)
    demand_sweep: list[SweepPoint] = Field(default_factory=list)
    scenario_share: dict[str, float] = Field(
        default_factory=dict, description="pool -> share of price scenarios whose plan uses it"
    )
    scenario_points: list[SweepPoint] = Field(
        default_factory=list,
        description="Each price scenario's re-optimised plan: its total (the distribution "
        "of the total the report shows as p10/p50/p90 and a histogram)",
    )
    scenario_spread: float = 0.0
    sweep_gap: float | None = Field(
        None,
        description="The relative gap (a fraction) every point of the frontier, the budget "
        "and demand sweeps and the price scenarios was proven to (``--sweep-gap``); each "
        "point carries the gap it reached (``gap``)",
    )
    scenarios: int = 0
    budget_usd: float | None = Field(None, description="The problem's total budget")
    two_stage: StochasticPlan | None = Field(
        None,
        description="Problems with uncertainty: the two-stage plan, every scenario's cost "
        "under it, under the deterministic plan's commitments and with everything rented",
    )
    cut_at_time_limit: list[str] = Field(
        default_factory=list,
        description="The sections --time-limit left out (not started before its deadline); "
        "written only when there are some",
    )


def budget_grid_usd(plan: Plan, points: int = 6) -> list[float]:
    """The budget sweep's budgets: 0.5 to 1.25 x what the plan's budget row holds, its
    all-in cost (compute and the costs beside it: storage, egress, support, staff, tax,
    contingency), which is its compute cost when the problem has no costs block."""
    base = plan.all_in_cost_usd if plan.all_in_cost_usd is not None else plan.total_cost_usd
    return [float(b) for b in np.linspace(0.5 * base, 1.25 * base, points)]


def build_analysis(
    plan: Plan,
    solution: Solution,
    *,
    solver: str = "highspy",
    break_even_limit: int | None = 12,
    frontier_points: int = 8,
    budget_points: int = 6,
    demand_factors: Sequence[float] = (0.5, 1.0, 1.5, 2.0, 3.0),
    scenarios: int = 20,
    spread: float = 0.2,
    workers: int = 1,
    scheduler: str | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    two_stage: StochasticPlan | None = None,
    deadline: float | None = None,
    sections_deadline: float | None = None,
    sweep_gap: float = SWEEP_GAP,
) -> Analysis:
    """Run the sensitivity analysis and the sweeps behind ``procure report``.

    ``progress(stage, done, total)`` is called as each solve finishes; ``two_stage``, the
    two-stage plan of a problem with uncertainty, is carried into the report as it is;
    ``deadline`` (a ``time.perf_counter()`` time) bounds the break-even search as in
    :func:`~solver.analyses.sensitivity.sensitivity_report`; ``sections_deadline`` the
    sections after it (frontier, sweeps, scenarios, run together by
    :func:`~solver.analyses.sensitivity.report_sweeps`): one with a point not started by
    then is left out, empty, and named in ``cut_at_time_limit`` (the report says so).
    ``sweep_gap`` is the relative gap (a fraction) every sweep point is proven to
    (:data:`~solver.analyses.sensitivity.sweeps.SWEEP_GAP` by default); the plan and the
    break-even prices keep the solve's default gap.
    """

    def tick(stage: str) -> Callable[[int, int], None] | None:
        if progress is None:
            return None
        report = progress
        return lambda done, total: report(stage, done, total)

    compiled = solution.compiled
    sens = sensitivity_report(
        solution,
        break_even_limit=break_even_limit,
        solver=solver,
        progress=tick("break-even prices"),
        deadline=deadline,
        workers=workers,
        scheduler=scheduler,
    )
    serving = any(getattr(w, "kind", "") != "training" for w in compiled.problem.workloads)
    sweeps = report_sweeps(
        compiled,
        frontier_points=frontier_points,
        budgets_usd=budget_grid_usd(plan, budget_points) if serving else (),
        demand_factors=demand_factors,
        scenarios=scenarios,
        spread=spread,
        solver=solver,
        progress=tick("frontier, sweeps and scenarios"),
        deadline=sections_deadline,
        posed=as_posed(solution),  # the points that are the problem itself: not solved again
        gap=sweep_gap,
        workers=workers,
        scheduler=scheduler,
    )
    cut = [name for name in REPORT_SWEEPS if sweeps[name] is None]
    # report_sweeps gives each sweep's points by name, the scenarios' with their shares
    frontier = cast(list[SweepPoint], sweeps["carbon frontier"] or [])
    budget = cast(list[SweepPoint], sweeps["budget sweep"] or [])
    demand = cast(list[SweepPoint], sweeps["demand sweep"] or [])
    points, share = cast(
        tuple[list[SweepPoint], dict[str, float]], sweeps["price scenarios"] or ([], {})
    )
    return Analysis(
        plan=plan,
        sensitivity=sens,
        carbon_frontier=frontier,
        budget_sweep=budget,
        demand_sweep=demand,
        scenario_share=share,
        scenario_points=points,
        scenario_spread=spread,
        sweep_gap=sweep_gap,
        scenarios=scenarios,
        budget_usd=compiled.problem.budget_usd,
        two_stage=two_stage,
        cut_at_time_limit=cut,
    )
