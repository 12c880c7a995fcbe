"""A price snapshot uploaded from a problem page, as a job (issue 51, Build 1): what
``procure prices pull SOURCE --from-file FILE [--date D] [--provider P]`` does, without
a shell on the server.

``POST /problems/{id}/prices`` (multipart: ``source``, ``file``, ``price_date``,
``provider``) checks the source, the date and the file at once (a bad one is refused with
its message, no job) and queues a ``prices_pull`` job on the problem's first variant
(a job belongs to a variant; the snapshot itself belongs to the workspace). The job reads
the file with the CLI's importer (:func:`solver.inputs.importers.feeds.pull_prices`,
prices held against each offering's latest stored price as the CLI holds them), stores the
snapshot (:func:`solver.web.store.snapshots.save_snapshot`) with its audit entry
(``price_snapshot.add`` by the user who uploaded it) and says in its stage what it stored,
mapped and held. "Watch prices" on a plan page then compares with it.
"""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from fastapi import FastAPI, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import RedirectResponse
from starlette.datastructures import UploadFile as StarletteUploadFile

from solver.errors import ProcureError
from solver.web.forms import read_form
from solver.web.guard import current_user
from solver.web.store import Job, ProblemRecord
from solver.web.store.models import JobStatus, utc_now

#: the job's kind
KIND = "prices_pull"


def check_upload(source: str, price_date: str, provider: str, name: str, data: bytes) -> dict:
    """The job's options from an upload, checked as ``procure prices pull`` checks them.

    Raises
    ------
    ProcureError
        An unknown source, a bad or future date, an empty or non-UTF-8 file, a SkyPilot
        file without its cloud.
    """
    from solver.inputs.importers.feeds import check_snapshot_date, check_source

    check_source(source)
    today = datetime.now(UTC).date()
    day = check_snapshot_date(price_date.strip() or today.isoformat(), today)
    if not data:
        raise ProcureError(
            "no file was uploaded, or it is empty", field="file", fix="choose the saved response"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ProcureError(
            f"{name or 'the file'} is not UTF-8 text",
            field="file",
            fix=f"upload the {source} response as saved",
        ) from None
    if source == "skypilot" and not provider.strip():
        raise ProcureError(
            "a SkyPilot vms.csv does not say its cloud",
            field="provider",
            fix="name the cloud the file is for, e.g. lambda",
        )
    return {
        "source": source,
        "price_date": str(day),
        "provider": provider.strip().lower() or None,
        "file_name": Path(name or "response").name,
        "text": text,
    }


def submit_upload(
    runner, variant_id: int, options: dict, who: str, *, rerun_of: int | None = None
) -> Job:
    """Queue the pull (the runner runs :func:`run_upload`)."""
    with runner.store.sessions() as session:
        job = Job(
            kind=KIND,
            variant_id=variant_id,
            options_json=json.dumps(options),
            owner=runner.instance_id,
            created_by=who,
            rerun_of=rerun_of,
        )
        session.add(job)
        session.commit()
    return runner.enqueue(job)


def run_upload(runner, job_id: int) -> None:
    """Read the uploaded response into a snapshot and store it (the CLI's importer)."""
    from solver.inputs.importers.feeds import pull_prices
    from solver.web import audit
    from solver.web.store.snapshots import save_snapshot, stored_references
    from solver.web.workspace import shipped_or_dir_catalog

    with runner.store.sessions() as session:
        job = session.get(Job, job_id)
        if job is None or job.status != JobStatus.QUEUED:
            return
        options, who = json.loads(job.options_json), job.created_by
    stage = f"reading the {options['source']} response {options['file_name']}"
    if not runner.update_job(
        job_id, status=JobStatus.RUNNING, stage=stage, progress=0.1, started_at=utc_now()
    ):
        return
    catalog = shipped_or_dir_catalog(runner.catalog_dir)
    refs = stored_references(runner.store, options["price_date"])
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / options["file_name"]
        path.write_text(options["text"], encoding="utf-8")
        pull = pull_prices(
            options["source"],
            path,
            catalog.offerings,
            price_date=options["price_date"],
            provider=options["provider"],
            references=refs,
        )

    def record(session, snapshot_id: int) -> None:
        rows = pull.rows[["offering_id", "mode", "price"]].astype(str).to_dict("records")
        after = {"source": pull.source, "price_date": str(pull.price_date), "rows": rows}
        audit.record(
            session, who, "price_snapshot.add", f"price snapshot {snapshot_id}", None, after
        )

    snapshot_id = save_snapshot(runner.store, pull, record=record)
    mapped = int(pull.rows["in_catalog"].sum())
    said = (
        f"snapshot {snapshot_id}: {len(pull.rows)} prices from {options['source']} of "
        f"{options['price_date']} ({mapped} of catalog offerings)"
    )
    if len(pull.held):
        said += f"; {len(pull.held)} held for review, not stored"
    runner.update_job(
        job_id, status=JobStatus.DONE, stage=said, progress=1.0, finished_at=utc_now()
    )


def register(app: FastAPI) -> None:
    """Add ``POST /problems/{id}/prices`` to ``app``."""

    @app.post("/problems/{problem_id}/prices")
    async def upload_prices(request: Request, problem_id: int):
        form = await read_form(request)
        upload = form.get("file")
        data, name = b"", ""
        if isinstance(upload, StarletteUploadFile):
            data, name = await upload.read(), upload.filename or ""
        fields = (str(form.get(k) or "") for k in ("source", "price_date", "provider"))
        source, price_date, provider = fields
        upload_fields = (source, price_date, provider, name)
        return await run_in_threadpool(_queue, request, problem_id, upload_fields, data)

    def _queue(request: Request, problem_id: int, fields: tuple[str, str, str, str], data: bytes):
        with app.state.store.sessions() as session:
            problem = session.get(ProblemRecord, problem_id)
            if problem is None or not problem.variants:
                raise HTTPException(404, f"no problem {problem_id}")
            variant_id = problem.variants[0].id
        try:
            options = check_upload(*fields, data)
        except ProcureError as exc:
            raise HTTPException(400, str(exc)) from None
        job = submit_upload(app.state.runner, variant_id, options, current_user(request).name)
        return RedirectResponse(f"/jobs/{job.id}", status_code=303)
