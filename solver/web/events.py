"""The audit trail's events that change nothing stored but that a reviewer asks about
(issue 51): a solve or an analysis asked for (``job.KIND``, with the job's owner set) and
a download of a plan's file (``export.*``), each by the signed-in account."""

from __future__ import annotations

from fastapi import Request

from solver.web import audit
from solver.web.guard import current_user
from solver.web.store import Job
from solver.web.store.models import JobStatus


def asked(request: Request, job: Job, detail: str = "") -> None:
    """Who asked for ``job``: its owner (``created_by``, when the job has none yet: an open
    job asked again keeps its first owner) and a ``job.KIND`` entry in the audit trail."""
    who = current_user(request).name
    store = request.app.state.store
    with store.sessions() as session:
        row = session.get(Job, job.id)
        if row is not None and not row.created_by:
            row.created_by = who
        stored = f"; plan {job.plan_id}" if job.status == JobStatus.DONE and job.plan_id else ""
        audit.record(session, who, f"job.{job.kind}", f"job {job.id}", detail=detail + stored)
        session.commit()


def exported(request: Request, plan_id: int, name: str) -> None:
    """An ``export.*`` entry in the audit trail for a download of a plan's file ``name``
    (``plan-3-orders.xlsx``: action ``export.orders_xlsx``)."""
    kind = name.split("-", 2)[2].replace(".", "_").replace("-", "_")
    who = current_user(request).name
    audit.record_alone(request.app.state.store, who, f"export.{kind}", f"plan {plan_id}", name)
