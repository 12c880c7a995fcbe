"""The workspace's "watch" job: a stored plan compared
with the latest price snapshot, as ``procure watch PLAN --prices snapshot:latest`` does
(:func:`solver.analyses.watch.watch`: which of its lines moved, by how much, and whether
the optimum moved by more than the threshold, with what is committed held), its result
stored in ``price_watches`` and shown on the plan page.

The job runs in a :class:`~solver.web.jobs.JobRunner` thread like a sensitivity job (the
re-solve is one MIP); the snapshot's rows that named a catalog offering when pulled are
applied over the plan's own catalog with the CLI's defaults (prices moving more than 2x
are reported, not taken); a price the pull held for review, or one not applied, that
names a line of the plan makes the verdict ``needs_review``.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Protocol

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import RedirectResponse
from sqlalchemy import select

from solver.errors import ProcureError
from solver.web.store import Job, PlanRecord, PriceSnapshot, PriceWatch, Store
from solver.web.store.models import utc_now
from solver.web.store.snapshots import find_snapshot, snapshot_rows

#: a line's price, or the optimum's saving, must move by more than this to count (the
#: default of ``procure watch --threshold-pct``)
WATCH_THRESHOLD_PCT = 5.0


class WatchRunner(Protocol):
    """What a watch job needs of the job runner (:class:`solver.web.jobs.JobRunner`'s public
    interface; named here, not imported: the runner imports this module)."""

    store: Store
    instance_id: str

    def enqueue(self, job: Job) -> Job:
        """Run a stored, queued job on the runner's pool."""
        ...

    def update_job(self, job_id: int, **values: object) -> bool:
        """Update a job still open; False once it was cancelled."""
        ...


def submit_watch(runner: WatchRunner, plan_id: int, *, rerun_of: int | None = None) -> Job:
    """Queue a watch of a stored plan against the latest snapshot (refused at once, with
    no job, when the plan or a snapshot is missing)."""
    with runner.store.sessions() as session:
        record = session.get(PlanRecord, plan_id)
        if record is None or record.variant_id is None:
            raise ProcureError(f"no stored plan {plan_id}", fix="pick one on the home page")
        find_snapshot(runner.store, "latest")
        job = Job(
            kind="watch",
            variant_id=record.variant_id,
            plan_id=plan_id,
            rerun_of=rerun_of,
            owner=runner.instance_id,  # else "" (no server): the next heartbeat interrupts it
        )
        session.add(job)
        session.commit()
    return runner.enqueue(job)


def run_watch_job(runner: WatchRunner, job_id: int) -> None:
    """The job: the plan, its problem and catalog, the latest snapshot applied, the watch."""
    from solver.analyses.price_review import known_ids, prices_to_review
    from solver.analyses.watch import WATCH_EXIT, watch
    from solver.inputs.importers.feeds import price_csv_of
    from solver.inputs.price_holds import held_from_listed
    from solver.inputs.prices import apply_price_file
    from solver.outputs.actuals import watch_json
    from solver.web.workspace import queued_plan_job

    store = runner.store
    with store.sessions() as session:
        queued = queued_plan_job(session, job_id)
    if queued is None:
        return
    plan, problem, catalog, plan_id = queued.plan, queued.problem, queued.catalog, queued.plan_id
    snap = find_snapshot(store, "latest")
    stage = f"comparing with price snapshot {snap.id} ({snap.source}, {snap.price_date})"
    if not runner.update_job(
        job_id, status="running", stage=stage, progress=0.1, started_at=utc_now()
    ):
        return
    rows = snapshot_rows(store, snap.id)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"snapshot-{snap.id}.csv"
        price_csv_of(rows).to_csv(path, index=False)
        repriced = apply_price_file(catalog, path, fmt="csv")
    runner.update_job(job_id, stage="re-solving at the snapshot's prices", progress=0.3)
    held = held_from_listed(snap.unmapped_json)
    review = prices_to_review(repriced.report.rows, held, plan, known_ids(catalog))
    result = watch(
        plan, problem, catalog, repriced.catalog, threshold_pct=WATCH_THRESHOLD_PCT, review=review
    )
    with store.sessions() as session:
        if session.scalars(select(Job.status).where(Job.id == job_id)).first() != "running":
            return  # cancelled while it ran
        text = watch_json(result, WATCH_EXIT[result.verdict])
        session.add(
            PriceWatch(
                plan_id=plan_id,
                job_id=job_id,
                snapshot_id=snap.id,
                verdict=result.verdict,
                result_json=text,
            )
        )
        session.commit()
    runner.update_job(job_id, status="done", stage="stored", progress=1.0, finished_at=utc_now())


def latest_watch_id(store: Store, plan_id: int) -> int | None:
    """The newest stored watch of a plan, if any."""
    with store.sessions() as session:
        query = select(PriceWatch.id).where(PriceWatch.plan_id == plan_id)
        return session.scalars(query.order_by(PriceWatch.id.desc())).first()


def watch_view(store: Store, watch_id: int | None) -> dict:
    """What the plan page shows of a watch: ``watched`` False when none is stored."""
    if watch_id is None:
        return {"watched": False}
    with store.sessions() as session:
        row = session.get(PriceWatch, watch_id)
        snap = session.get(PriceSnapshot, row.snapshot_id) if row is not None else None
        if row is None or snap is None:  # removed since it was listed
            return {"watched": False}
        doc = json.loads(row.result_json)
        about = f"snapshot {snap.id}: {snap.source} prices of {snap.price_date}"
        when = row.created_at.strftime("%Y-%m-%d %H:%M")
    return {
        "watched": True,
        "verdict": doc["verdict"].replace("_", " "),
        "snapshot": about,
        "when": when,
        "threshold_pct": doc["threshold_pct"],
        "moved": doc["moved"],
        "plan_at_new_prices_usd": doc["plan_at_new_prices_usd"],
        "optimum_usd": doc["optimum_usd"],
        "saving_pct": doc["saving_pct"],
        "infeasible": doc["infeasible"],
        "review": doc.get("review", []),
    }


def register(app: FastAPI) -> None:
    """``POST /plans/{id}/watch``: queue the job, then its page."""

    @app.post("/plans/{plan_id}/watch")
    def watch_plan(request: Request, plan_id: int):
        from solver.web.events import asked

        try:
            job = app.state.runner.submit_watch(plan_id)
        except ProcureError as exc:
            raise HTTPException(400, str(exc)) from None
        asked(request, job, f"plan {plan_id}")
        return RedirectResponse(f"/jobs/{job.id}", status_code=303)
