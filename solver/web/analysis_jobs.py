"""The carbon frontier and the two-stage plan of a stored plan's problem, as jobs of the
workspace (:class:`solver.web.jobs.JobRunner`), computed exactly as the CLI computes them:

- ``frontier``: ``procure report``'s cost-versus-CO2e frontier
  (:func:`solver.analyses.report_analysis.build_analysis`): the problem solved for analysis
  (:func:`solver.solve.solve_for_analysis`, the plan of ``procure solve``), then
  :func:`solver.analyses.sensitivity.carbon_frontier` over ``points`` caps, its re-solves
  on the workspace's Dask cluster through the runner, one progress step each;
- ``alternatives``: ``procure alternatives``' near-optimal plans
  (:mod:`solver.web.alternatives_job`);
- ``preferences``: ``procure alternatives --preferences``' price of each preference
  (:mod:`solver.web.preferences_job`);
- ``two_stage``: ``procure solve``'s two-stage plan of a problem with ``uncertainty:``
  (:func:`solver.analyses.stochastic.solve_stochastic`, gap 1e-4, the method asked for),
  its scenario solves on the same cluster.

- ``sensitivity``: ``procure sensitivity``'s shadow prices and break-even prices (the
  plan's pools and ``break_even_limit`` others), "what moves it" on the plan page.

Each result is stored in ``analyses`` (kind, the options asked as JSON, the result as
JSON: ``{"points": [SweepPoint, ...]}``, the :class:`StochasticPlan` or the
:class:`SensitivityReport`).

Where: on this server's own cluster (no ``procure serve --scheduler``) an analysis runs in
the job's child process (:func:`solver.web.job_process.run_in_child`, as a solve does):
cancel and the time limit end it within seconds, its memory given back, and it reports
each step and its MIPs' incumbent, bound and gap (:class:`~solver.web.job_process.JobProgress`)
as it goes. Its re-solves then run in local processes of that child
(:data:`ANALYSIS_WORKERS`), as the CLI's do. On a remote scheduler it runs in the job's
thread, its re-solves on the cluster, and stops at its next progress step.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable

from sqlalchemy import select

from solver.errors import ProcureError
from solver.web.store import Analysis, Job, PlanRecord
from solver.web.store.models import JobStatus, utc_now
from solver.web.workspace import DEFAULT_GAP, problem_of_plan, queued_plan_job

#: ``procure report --frontier-points``' default; at least 2 (the two ends), as the CLI
DEFAULT_FRONTIER_POINTS = 8
#: the most caps a page may ask for (each is a MIP solve on the shared cluster)
MAX_FRONTIER_POINTS = 40
#: ``procure solve --stochastic-method``
TWO_STAGE_METHODS = ("auto", "extensive", "decomposition", "benders")
#: local processes of a job's child for an analysis's re-solves: the CLI's default
#: (``--workers``: this machine's CPUs, at most 8), so "what moves it" takes what
#: ``procure sensitivity`` takes
ANALYSIS_WORKERS = max(
    1,
    min(
        8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    ),
)
#: share of a job's time limit left when the analysis starts that its break-even search may
#: use: pools not reached by then are left out and named (as ``procure sensitivity
#: --time-limit``), so a job near its limit stores what it found rather than time out
BREAK_EVEN_SHARE = 0.85

#: ``step(stage, fraction done, steps done, steps in all)``: an analysis's progress
Step = Callable[[str, float, "int | None", "int | None"], None]


def check_analysis(record: PlanRecord, kind: str, options: dict) -> None:
    """Refuse a request the analysis would refuse, before any job is queued.

    Raises
    ------
    ProcureError
        An unknown kind, a number of points out of range, an unknown method, or a
        two-stage plan of a problem without ``uncertainty:``.
    """
    if kind == "frontier":
        points = options.get("points")
        if not isinstance(points, int) or not 2 <= points <= MAX_FRONTIER_POINTS:
            raise ProcureError(
                f"frontier points {points!r} is not a whole number from 2 to {MAX_FRONTIER_POINTS}",
                field="points",
                fix=f"e.g. {DEFAULT_FRONTIER_POINTS} (the two ends and the caps between)",
            )
        return
    if kind == "two_stage":
        method = options.get("method")
        if method not in TWO_STAGE_METHODS:
            raise ProcureError(
                f"two-stage method {method!r} is unknown",
                field="method",
                fix="use " + ", ".join(TWO_STAGE_METHODS),
            )
        if problem_of_plan(record).uncertainty is None:
            raise ProcureError(
                f"plan {record.id}'s problem has no uncertainty: section, so there is no "
                "two-stage plan to make",
                field="uncertainty",
                fix="add scenarios under uncertainty: in the problem's YAML "
                "(docs/guides/uncertainty.md, 'Commit now, adapt later') in a new problem",
            )
        return
    if kind == "alternatives":
        from solver.web.alternatives_job import check

        check(record, options)
        return
    if kind == "preferences":
        from solver.web.preferences_job import check as check_preferences

        check_preferences(record)
        return
    raise ProcureError(
        f"no analysis {kind!r}", fix="use frontier, two_stage, alternatives or preferences"
    )


def frontier_points(problem, catalog, points: int, solved=None, **run) -> list:
    """The carbon frontier of ``procure report`` (``--frontier-points points``): the
    problem solved for analysis, then min cost under ``points`` CO2e caps from the
    min-carbon plan to the min-cost plan. ``solved()`` is called between the two;
    ``run``: the runner's scheduler and progress."""
    from solver.analyses.sensitivity import carbon_frontier
    from solver.solve import solve_for_analysis
    from solver.units import DEFAULT_SOLVER, WARM_SOLVER

    _, solution = solve_for_analysis(problem, catalog, solver=DEFAULT_SOLVER)
    if solved is not None:
        solved()
    return carbon_frontier(solution.compiled, points=points, solver=WARM_SOLVER, **run)


def two_stage_plan(problem, catalog, method: str, scheduler=None, workers: int = 1):
    """The two-stage plan of ``procure solve`` (``--stochastic-method method``, gap 1e-4),
    its scenario solves on ``scheduler`` or ``workers`` local processes."""
    from solver.analyses.stochastic import solve_stochastic
    from solver.core.backends import SolveOptions
    from solver.units import DEFAULT_SOLVER

    return solve_stochastic(
        problem,
        catalog,
        solver=DEFAULT_SOLVER,
        options=SolveOptions(relative_gap=DEFAULT_GAP),
        method=method,
        workers=workers,
        scheduler=scheduler,
    )


def stage_of(kind: str, options: dict) -> str:
    """The job's first stage line: what it computes."""
    if kind == "sensitivity":
        return "solving the plan's problem for the analysis (as procure sensitivity)"
    if kind == "frontier":
        return "solving the plan's problem for the analysis (as procure report)"
    if kind == "alternatives":
        return (
            f"the optimum, then up to {options['n']} plans within {options['slack']:.1%} of it "
            f"that differ in {options['differ_by']} (as procure alternatives)"
        )
    if kind == "preferences":
        return (
            "the optimum, then one re-solve per provider, accelerator, purchase mode and "
            "region group: excluding it or requiring it (as procure alternatives --preferences)"
        )
    return f"two-stage plan ({options['method']}): scenarios"


def compute(
    kind: str,
    problem,
    catalog,
    options: dict,
    break_even_limit: int | None,
    *,
    step: Step,
    scheduler=None,
    workers: int = 1,
    deadline: float | None = None,
) -> str:
    """One analysis of a plan's problem, its result as JSON (what ``analyses`` stores).

    Parameters
    ----------
    step
        Called at each step (:data:`Step`).
    scheduler, workers
        Where the re-solves run: a Dask client, or this many local processes.
    deadline
        A ``time.perf_counter()`` time by which a sensitivity's break-even search stops
        starting pools (they are left out and named).
    """
    run = {"scheduler": scheduler} if scheduler is not None else {"workers": workers}
    if kind == "sensitivity":
        from solver.analyses.sensitivity import sensitivity_report, shadow_prices
        from solver.solve import solve_for_analysis
        from solver.units import DEFAULT_SOLVER, WARM_SOLVER

        _, solution = solve_for_analysis(problem, catalog, solver=DEFAULT_SOLVER)
        if break_even_limit == -1:
            return shadow_prices(solution, solver=WARM_SOLVER).model_dump_json()
        step("break-even prices", 0.2, None, None)
        report = sensitivity_report(
            solution,
            break_even_limit=break_even_limit,
            solver=WARM_SOLVER,
            deadline=deadline,
            progress=lambda done, total: step(
                f"break-even prices: {done} of {total} pool classes",
                0.2 + 0.75 * done / max(total, 1),
                done,
                total,
            ),
            **run,
        )
        return report.model_dump_json()
    if kind == "frontier":
        points = frontier_points(
            problem,
            catalog,
            options["points"],
            solved=lambda: step(
                "the two ends: the min-cost and the min-CO2e plans", 0.15, None, None
            ),
            progress=lambda done, total: step(
                f"carbon frontier: {done} of {total} caps",
                0.2 + 0.75 * done / max(total, 1),
                done,
                total,
            ),
            **run,
        )
        return json.dumps({"points": [p.model_dump(mode="json") for p in points]})
    if kind == "alternatives":
        from solver.web.alternatives_job import run as run_alternatives

        return json.dumps(run_alternatives(problem, catalog, options))
    if kind == "preferences":
        from solver.web.preferences_job import run as run_preferences

        return json.dumps(run_preferences(problem, catalog, options))
    sp = two_stage_plan(problem, catalog, options["method"], **run)
    return sp.model_dump_json()


def analysis_task(_shared: object, task: dict) -> dict:
    """An analysis in a job's child process (:func:`solver.web.job_process.run_in_child`):
    ``{"result_json": ...}``, or the user's error as its message (never a traceback). Its
    steps go to the parent as progress messages (:func:`solver.web.job_process.report`)."""
    from solver.web.job_process import report

    def step(stage: str, fraction: float, done: int | None, total: int | None) -> None:
        report({"stage": stage, "progress": fraction, "done": done, "total": total})

    left = task.get("time_left_s")
    deadline = None if left is None else time.perf_counter() + BREAK_EVEN_SHARE * left
    try:
        result = compute(
            task["kind"],
            task["problem"],
            task["catalog"],
            task["options"],
            task["break_even_limit"],
            step=step,
            workers=task["workers"],
            deadline=deadline,
        )
    except ProcureError as exc:
        return {"error": str(exc)}
    return {"result_json": result}


def run_analysis(runner, job_id: int, kind: str) -> None:
    """Run a queued analysis job (:data:`solver.web.jobs.ANALYSIS_KINDS`) and store its
    result (nothing when it is cancelled or timed out meanwhile: the child is stopped, or
    :class:`solver.web.jobs.JobCancelled` ends it at its next step)."""
    from solver.web.job_process import JobProgress, run_in_child

    with runner.store.sessions() as session:
        queued = queued_plan_job(session, job_id)
    if queued is None:
        return
    problem, catalog, plan_id = queued.problem, queued.catalog, queued.plan_id
    options = json.loads(queued.options_json or "{}")
    stage = stage_of(kind, options)
    if not runner.update_job(
        job_id, status=JobStatus.RUNNING, stage=stage, progress=0.05, started_at=utc_now()
    ):
        return
    if not runner.scheduler:  # a child process, stopped on cancel or at the time limit
        deadline = runner.deadline_of(job_id)
        watch = JobProgress(deadline, stage)
        last = [0.0]

        def on_progress(message: dict) -> None:
            line, fraction = watch.update(message)
            now = time.monotonic()
            if "stage" in message or now - last[0] >= 1.0:  # a MIP's look: once a second
                last[0] = now
                values: dict = {"stage": line}
                if fraction is not None:
                    values["progress"] = fraction
                runner.update_job(job_id, **values)

        task = {
            "kind": kind,
            "problem": problem,
            "catalog": catalog,
            "options": options,
            "break_even_limit": queued.break_even_limit,
            "workers": ANALYSIS_WORKERS,
            "time_left_s": None if deadline is None else max(0.0, deadline - time.monotonic()),
        }
        try:
            answer = run_in_child(
                analysis_task,
                task,
                should_stop=lambda: runner._stop_reason(job_id),
                on_start=lambda pid: runner.children.__setitem__(job_id, pid),
                on_progress=on_progress,
            )
        finally:
            runner.children.pop(job_id, None)
        if "error" in answer:
            runner.update_job(
                job_id,
                status="failed",
                stage="failed",
                error=answer["error"],
                finished_at=utc_now(),
            )
            return
        result_json = answer["result_json"]
    else:
        result_json = compute(
            kind,
            problem,
            catalog,
            options,
            queued.break_even_limit,
            step=lambda stage, fraction, done, total: runner.step_job(
                job_id, stage=stage, progress=fraction
            ),
            scheduler=runner.client(),
        )
    with runner.store.sessions() as session:
        if session.scalars(select(Job.status).where(Job.id == job_id)).first() != JobStatus.RUNNING:
            return  # cancelled while it ran
        if kind == "sensitivity":
            session.add(
                Analysis(
                    plan_id=plan_id,
                    job_id=job_id,
                    kind="sensitivity",
                    break_even_limit=queued.break_even_limit,
                    result_json=result_json,
                )
            )
        else:
            session.add(
                Analysis(
                    plan_id=plan_id,
                    job_id=job_id,
                    kind=kind,
                    options_json=queued.options_json,
                    result_json=result_json,
                )
            )
        session.commit()
    runner.update_job(
        job_id, status=JobStatus.DONE, stage="stored", progress=1.0, finished_at=utc_now()
    )
