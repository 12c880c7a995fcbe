"""The analysis behind ``procure report``: the sensitivity analysis and the sweeps of a
solved plan, run together and returned as one plain :class:`Analysis` that the renderers
(:mod:`solver.outputs.report`) turn into files.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from multiprocessing.connection import Connection
from typing import Any, cast

import numpy as np
from pydantic import BaseModel, Field

from solver.analyses.runner import shared_workers
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

    On local workers (``workers`` > 1, no ``scheduler``) and with neither deadline, the
    sweeps run beside the break-even search (:class:`SweepsBeside`), the two sharing
    ``workers`` CPUs (:func:`~solver.analyses.runner.shared_workers`); the figures are
    the same (docs/concepts/sensitivity.md, "The sweeps beside the break-even search").
    """

    def tick(stage: str) -> Callable[[int, int], None] | None:
        if progress is None:
            return None
        report = progress
        return lambda done, total: report(stage, done, total)

    compiled = solution.compiled
    serving = any(getattr(w, "kind", "") != "training" for w in compiled.problem.workloads)
    sweep_args: dict[str, Any] = dict(
        frontier_points=frontier_points,
        budgets_usd=budget_grid_usd(plan, budget_points) if serving else (),
        demand_factors=demand_factors,
        scenarios=scenarios,
        spread=spread,
        solver=solver,
        deadline=sections_deadline,
        posed=as_posed(solution),  # the points that are the problem itself: not solved again
        gap=sweep_gap,
        workers=workers,
        scheduler=scheduler,
    )
    sens_args: dict[str, Any] = dict(
        break_even_limit=break_even_limit,
        solver=solver,
        progress=tick("break-even prices"),
        deadline=deadline,
        workers=workers,
        scheduler=scheduler,
    )
    # on local workers the sweeps run beside the break-even search (in a process of their
    # own, with their own workers), so neither's last tasks leave a CPU idle; the two
    # pools' tasks share ``workers`` CPUs (shared_workers: no more at once than before)
    # (not under a deadline: the break-even search keeps its CPUs until its own, as before)
    together = overlaps(workers, scheduler) and deadline is None and sections_deadline is None
    with shared_workers(workers) if together else nullcontext():
        beside = SweepsBeside(compiled, sweep_args) if together else None
        sens, sweeps = _sections(beside, solution, compiled, sweep_args, tick, **sens_args)
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


def _sections(
    beside: SweepsBeside | None,
    solution: Solution,
    compiled: Any,
    sweep_args: dict[str, Any],
    tick: Callable[[str], Callable[[int, int], None] | None],
    **sens_args: Any,
) -> tuple[SensitivityReport, dict[str, object]]:
    """The break-even search (here), then the sweeps: read from ``beside``, where they run
    already, else run here; ``beside`` is stopped whatever happens."""
    try:
        sens = sensitivity_report(solution, **sens_args)
        progress = tick("frontier, sweeps and scenarios")
        if beside is not None:
            return sens, beside.result(progress)
        return sens, report_sweeps(compiled, progress=progress, **sweep_args)
    finally:
        if beside is not None:
            beside.stop()


def overlaps(workers: int, scheduler: object) -> bool:
    """Whether :func:`build_analysis` runs the sweeps beside the break-even search: on
    local workers (``workers`` > 1, no Dask scheduler, which shares its workers itself)
    where processes can be forked (the sweeps' process is a copy of this one)."""
    return workers > 1 and scheduler is None and "fork" in multiprocessing.get_all_start_methods()


class SweepsBeside:
    """:func:`~solver.analyses.sensitivity.report_sweeps` in a process of its own, started
    now and read by :meth:`result`.

    ``procure report`` runs the break-even search, then the sweeps, each over the local
    workers; each ends with its last, longest tasks on one worker while the others idle
    (bench/RESULTS.md, "report_sections.py"). Run side by side, the two keep every CPU
    busy until the last of them ends. The process is forked from this one, before the
    break-even search starts its own workers, and is no daemon: it starts the sweeps' own
    workers (``workers`` of them) as :func:`~solver.analyses.runner.run_tasks` does. It
    ends with its parent (as a pool worker does), and :meth:`stop` ends it, and so its
    workers, when the report stops early (an error, Ctrl-C, SIGTERM).

    Parameters
    ----------
    compiled
        The problem, unpruned (as :func:`report_sweeps` takes it).
    args
        :func:`report_sweeps`' keyword arguments but ``progress``.
    """

    def __init__(self, compiled: Any, args: dict[str, Any]) -> None:
        context = multiprocessing.get_context("fork")
        self._got, sent = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_sweeps_process,
            args=(sent, os.getpid(), compiled, args),
            name="procure-report-sweeps",
            daemon=False,  # it has workers of its own
        )
        self._process.start()
        sent.close()  # the child's end: EOF here when the child ends

    def result(self, progress: Callable[[int, int], None] | None = None) -> dict[str, object]:
        """The sweeps' results (as :func:`report_sweeps` returns them), once they are in;
        ``progress(done, total)`` is called for each point finished so far and after.

        Raises
        ------
        Exception
            The error the sweeps raised, or ``RuntimeError`` when their process ended
            without an answer (killed).
        """
        while True:
            try:
                kind, *what = self._got.recv()
            except EOFError:
                self._process.join()
                raise RuntimeError(
                    "the report's sweeps ended without their results "
                    f"(exit code {self._process.exitcode})"
                ) from None
            if kind == "progress":
                if progress is not None:
                    progress(*what)
            elif kind == "error":
                raise what[0]
            else:
                self._process.join()
                return cast(dict[str, object], what[0])

    def stop(self, grace_s: float = 2.0) -> None:
        """End the sweeps' process (SIGTERM, then SIGKILL after ``grace_s``) if it still
        runs, and reap it; its workers end with it (``PR_SET_PDEATHSIG``)."""
        process = self._process
        if process.is_alive():
            process.terminate()
            process.join(grace_s)
            if process.is_alive():
                process.kill()
        process.join()
        self._got.close()


def _sweeps_process(sent: Connection, parent_pid: int, compiled: Any, args: dict) -> None:
    """The body of :class:`SweepsBeside`'s process: the sweeps, their progress and their
    result (or their error) sent to the parent."""
    from solver.analyses.runner import _quiet_worker

    _quiet_worker(parent_pid)
    try:
        out = report_sweeps(compiled, progress=lambda d, t: sent.send(("progress", d, t)), **args)
        sent.send(("result", out))
    except BaseException as exc:  # noqa: BLE001 (sent to the parent, which raises it)
        try:
            sent.send(("error", exc))
        except Exception:  # noqa: BLE001 (an error that does not pickle: its text)
            sent.send(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))
    finally:
        sent.close()
