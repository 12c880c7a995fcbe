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

Each result is stored in ``analyses`` (kind, the options asked as JSON, the result as
JSON: ``{"points": [SweepPoint, ...]}`` or the :class:`StochasticPlan`).
"""

from __future__ import annotations

import json

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


def two_stage_plan(problem, catalog, method: str, scheduler=None):
    """The two-stage plan of ``procure solve`` (``--stochastic-method method``, gap 1e-4)."""
    from solver.analyses.stochastic import solve_stochastic
    from solver.core.backends import SolveOptions
    from solver.units import DEFAULT_SOLVER

    return solve_stochastic(
        problem,
        catalog,
        solver=DEFAULT_SOLVER,
        options=SolveOptions(relative_gap=DEFAULT_GAP),
        method=method,
        scheduler=scheduler,
    )


def run_analysis(runner, job_id: int, kind: str) -> None:
    """Run a queued ``frontier`` or ``two_stage`` job and store its result (nothing when it
    is cancelled meanwhile: :class:`solver.web.jobs.JobCancelled` ends it)."""
    with runner.store.sessions() as session:
        queued = queued_plan_job(session, job_id)
    if queued is None:
        return
    problem, catalog, plan_id = queued.problem, queued.catalog, queued.plan_id
    options = json.loads(queued.options_json)
    if kind == "frontier":
        stage = "solving the plan's problem for the analysis (as procure report)"
    elif kind == "alternatives":
        stage = (
            f"the optimum, then up to {options['n']} plans within {options['slack']:.1%} of it "
            f"that differ in {options['differ_by']} (as procure alternatives)"
        )
    elif kind == "preferences":
        stage = (
            "the optimum, then one re-solve per provider, accelerator, purchase mode and "
            "region group: excluding it or requiring it (as procure alternatives --preferences)"
        )
    else:
        stage = f"two-stage plan ({options['method']}): scenarios on the Dask cluster"
    if not runner.update_job(
        job_id, status=JobStatus.RUNNING, stage=stage, progress=0.05, started_at=utc_now()
    ):
        return
    if kind == "frontier":
        points = frontier_points(
            problem,
            catalog,
            options["points"],
            solved=lambda: runner.step_job(
                job_id, stage="the two ends: the min-cost and the min-CO2e plans", progress=0.15
            ),
            scheduler=runner.client(),
            progress=lambda done, total: runner.step_job(
                job_id,
                stage=f"carbon frontier: {done} of {total} caps",
                progress=0.2 + 0.75 * done / max(total, 1),
            ),
        )
        result = {"points": [p.model_dump(mode="json") for p in points]}
    elif kind == "alternatives":
        from solver.web.alternatives_job import run

        result = run(problem, catalog, options)
    elif kind == "preferences":
        from solver.web.preferences_job import run as run_preferences

        result = run_preferences(problem, catalog, options)
    else:
        sp = two_stage_plan(problem, catalog, options["method"], scheduler=runner.client())
        result = sp.model_dump(mode="json")
    with runner.store.sessions() as session:
        if session.scalars(select(Job.status).where(Job.id == job_id)).first() != JobStatus.RUNNING:
            return  # cancelled while it ran
        session.add(
            Analysis(
                plan_id=plan_id,
                job_id=job_id,
                kind=kind,
                options_json=queued.options_json,
                result_json=json.dumps(result),
            )
        )
        session.commit()
    runner.update_job(
        job_id, status=JobStatus.DONE, stage="stored", progress=1.0, finished_at=utc_now()
    )
