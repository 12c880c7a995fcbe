"""The workspace's routes (see :mod:`solver.web.app` for the list)."""

from __future__ import annotations

import json
from datetime import date
from functools import lru_cache
from types import SimpleNamespace

from fastapi import FastAPI, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from sqlalchemy import select

from solver.errors import ProcureError
from solver.inputs.importers.feeds import SOURCES as PRICE_SOURCES
from solver.web import audit, auth
from solver.web.approvals import ensure_unlocked, statuses
from solver.web.events import asked, exported
from solver.web.faults import MAX_ID
from solver.web.forms import read_form
from solver.web.guard import current_user
from solver.web.replay_page import register_replay
from solver.web.store import Analysis, Job, PlanRecord, ProblemRecord
from solver.web.store.models import JobStatus
from solver.web.variant_fields import (
    CONFIDENCES,
    DOMAINS,
    GUARDS,
    form_meeting_changes,
    region_groups,
)
from solver.web.whatif import WHATIF_TIME_LIMIT_S, base_plan_of, error_json, what_if
from solver.web.workspace import (
    CHANGE_FIELDS,
    add_problem,
    add_variant,
    catalog_of_plan,
    changes_of,
    checked_problem_text,
    plan_of,
    problem_of_plan,
    shipped_or_dir_catalog,
)

MODES = ("on_demand", "spot", "reserved_1y", "reserved_3y", "owned")
TIERS = ("", "marketplace", "neocloud", "hyperscaler")


def _page(request: Request, name: str, context: dict, status: int = 200):
    return request.app.state.templates.TemplateResponse(request, name, context, status_code=status)


def _see(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def _get(session, model, key: int, what: str):
    row = session.get(model, key)
    if row is None:
        raise HTTPException(404, f"no {what} {key}")
    return row


def _error(exc: ProcureError) -> dict:
    """A ProcureError for a page: its whole message (as the CLI prints it) and its field."""
    return {"message": str(exc), "field": exc.field or "", "fix": exc.fix}


def _number(form, key: str, label: str) -> float | None:
    raw = str(form.get(key) or "").replace(",", "").replace("_", "").strip()
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError:
        raise ProcureError(f"{raw!r} is not a number", field=key, fix=f"e.g. {label}") from None


def _names(form, key: str) -> list[str] | None:
    names = [n.strip() for n in str(form.get(key) or "").replace("\n", ",").split(",")]
    return [n for n in names if n] or None


def _multipliers(text: str) -> list[dict]:
    """``provider=coreweave 0.9`` / ``accelerator=H100 1.2`` lines as price multipliers."""
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        fix = "one per line: provider=NAME FACTOR or accelerator=NAME FACTOR, e.g. provider=aws 1.1"
        if len(parts) != 2 or "=" not in parts[0]:
            raise ProcureError(
                f"line {n}: {line.strip()!r} is not understood", fix=fix, field="price_multipliers"
            )
        key, _, name = parts[0].partition("=")
        if key not in ("provider", "accelerator") or not name:
            raise ProcureError(
                f"line {n}: {key!r} is neither provider nor accelerator",
                field="price_multipliers",
                fix=fix,
            )
        try:
            factor = float(parts[1])
        except ValueError:
            raise ProcureError(
                f"line {n}: {parts[1]!r} is not a number", field="price_multipliers", fix=fix
            ) from None
        out.append({key: name, "factor": factor})
    return out


def form_changes(form) -> dict:
    """A variant's changes from its form (empty fields: the problem's own value)."""
    changes: dict = {}
    for key, label in (("budget_usd", "1500000"), ("carbon_cap_tco2e", "500")):
        value = _number(form, key, label)
        if value is not None:
            changes[key] = value
    for key, label, low in (("demand_factor", "1.2", 0.0), ("growth_per_period", "0.1", -1.0)):
        value = _number(form, key, label)
        if value is not None and not value > low:
            raise ProcureError(f"{value:g} is not above {low:g}", field=key, fix=f"e.g. {label}")
        if value is not None:
            changes[key] = value
    for key in ("providers", "regions"):
        names = _names(form, key)
        if names:
            changes[key] = names
    modes = [m for m in form.getlist("modes") if m]
    if modes and set(modes) != set(MODES):
        changes["modes"] = modes
    if form.get("min_tier"):
        changes["min_tier"] = str(form.get("min_tier"))
    multipliers = _multipliers(str(form.get("price_multipliers") or ""))
    if multipliers:
        changes["price_multipliers"] = multipliers
    changes.update(form_meeting_changes(form))
    return changes


def all_in_usd(records: list[PlanRecord]) -> dict[int, float]:
    """Plan id -> its all-in total (``all_in_cost_usd`` of its stored plan JSON; a plan
    stored before all in, its compute total), for the list pages' headline."""
    out: dict[int, float] = {}
    for r in records:
        try:
            stored = json.loads(r.plan_json).get("all_in_cost_usd")
        except (ValueError, AttributeError):
            stored = None
        out[r.id] = float(stored) if stored is not None else float(r.total_cost_usd)
    return out


def _home(request: Request, error: dict | None = None, yaml_text: str = "", status: int = 200):
    with request.app.state.store.sessions() as session:
        problems = session.scalars(select(ProblemRecord).order_by(ProblemRecord.id)).all()
        plans = session.scalars(select(PlanRecord).order_by(PlanRecord.id.desc()).limit(50)).all()
        jobs = session.scalars(select(Job).order_by(Job.id.desc()).limit(10)).all()
        for p in problems:
            list(p.variants)
        for j in jobs:
            _ = j.variant.problem.name
        context = {"problems": problems, "plans": plans, "jobs": jobs, "error": error}
        context["yaml_text"] = yaml_text
        context["review"] = statuses(session, [r.id for r in plans])
        context["all_in"] = all_in_usd(list(plans))
        context["may_change"] = auth.allowed(current_user(request).role, "POST", "/problems")
        return _page(request, "home.html.j2", context, status)


#: the variant form's fields, where an error is shown beside its field
FORM_FIELDS = ("name", *CHANGE_FIELDS)


#: error fields whose form field has another name
_FIELD_OF = {"uncertainty": "n_scenarios"}


def _at(field: str) -> str:
    """The variant form field an error's field path belongs to ('' for none): the path's
    last part that is a form field (``workloads[1] (chat).survive_loss_of.0``:
    survive_loss_of; the workload fields are set on every online workload), else its head."""
    head = field.split(" ")[0].split("[")[0].split(".")[0]
    parts = [p.split("[")[0].strip() for p in reversed(field.split("."))]
    for name in (*parts, head):
        name = _FIELD_OF.get(name, name)
        if name in FORM_FIELDS:
            return name
    return ""


def _problem_page(
    request: Request,
    problem_id: int,
    error: dict | None = None,
    form=None,
    status: int = 200,
    place: str = "",
):
    with request.app.state.store.sessions() as session:
        problem = _get(session, ProblemRecord, problem_id, "problem")
        variants = list(problem.variants)
        plans = {
            v.id: session.scalars(
                select(PlanRecord).where(PlanRecord.variant_id == v.id).order_by(PlanRecord.id)
            ).all()
            for v in variants
        }
        context = {
            "problem": problem,
            "variants": [(v, changes_of(v), plans[v.id]) for v in variants],
            "error": None if error is None else {**error, "at": _at(error["field"])},
            "place": place,
            "form": form or {},
            "modes": MODES,
            "tiers": TIERS,
            "change_fields": CHANGE_FIELDS,
            "review": statuses(session, [r.id for rs in plans.values() for r in rs]),
            "all_in": all_in_usd([r for rs in plans.values() for r in rs]),
            "may_change": auth.allowed(
                current_user(request).role, "POST", f"/problems/{problem_id}/variants"
            ),
            "region_groups": region_groups(shipped_or_dir_catalog(request.app.state.catalog_dir)),
            "domains": DOMAINS,
            "confidences": CONFIDENCES,
            "guards": GUARDS,
            "base_plan": base_plan_of(session, variants),
            "whatif_limit_s": WHATIF_TIME_LIMIT_S,
            "price_sources": PRICE_SOURCES,
        }
        return _page(request, "problem.html.j2", context, status)


def _new_problem(request: Request, text: str):
    """``POST /problems`` off the event loop: read, check and store (nothing on an error)."""
    store = request.app.state.store
    try:
        with store.sessions() as session:
            record = add_problem(session, text, request.app.state.catalog_dir)
            who = current_user(request).name
            record.created_by = who
            audit.record(session, who, "problem.add", f"problem {record.id}", None, text)
            session.commit()
    except ProcureError as exc:
        return _home(request, _error(exc), text, status=400)
    return _see(f"/problems/{record.id}")


def _edit_problem(request: Request, problem_id: int, text: str):
    """``POST /problems/ID/yaml`` off the event loop."""
    store = request.app.state.store
    try:
        problem = checked_problem_text(text, request.app.state.catalog_dir)
    except ProcureError as exc:
        return _problem_page(request, problem_id, _error(exc), {"yaml_text": text}, 400, "yaml")
    with store.sessions() as session:
        record = _get(session, ProblemRecord, problem_id, "problem")
        ensure_unlocked(session, problem_id)
        before = record.yaml_text
        record.yaml_text, record.name = text, problem.name
        who = current_user(request).name
        audit.record(session, who, "problem.edit", f"problem {problem_id}", before, text)
        session.commit()
    return _see(f"/problems/{problem_id}")


def _new_variant(request: Request, problem_id: int, form):
    """``POST /problems/ID/variants`` off the event loop."""
    store = request.app.state.store
    try:
        changes = form_changes(form)
        with store.sessions() as session:
            problem = _get(session, ProblemRecord, problem_id, "problem")
            variant = add_variant(
                session,
                problem,
                str(form.get("name") or ""),
                changes,
                request.app.state.catalog_dir,
            )
            who = current_user(request).name
            variant.created_by = who
            entity = f"variant {variant.id} ({variant.name}) of problem {problem_id}"
            audit.record(session, who, "variant.add", entity, None, changes)
            session.commit()
    except ProcureError as exc:
        shown = {**dict(form), "survive_loss_of": form.getlist("survive_loss_of")}
        return _problem_page(request, problem_id, _error(exc), shown, 400, "variant")
    return _see(f"/problems/{problem_id}")


def _what_if(request: Request, problem_id: int, form) -> JSONResponse:
    """``POST /api/problems/ID/whatif`` off the event loop (:mod:`solver.web.whatif`)."""
    with request.app.state.store.sessions() as session:
        problem = _get(session, ProblemRecord, problem_id, "problem")
        try:
            answer = what_if(session, problem, form_changes(form), request.app.state.catalog_dir)
        except ProcureError as exc:
            return JSONResponse(error_json(exc, _at(exc.field or "")), status_code=400)
    return JSONResponse(answer)


def register(app: FastAPI) -> None:  # noqa: C901 - one route each, no logic between them
    """Add the workspace's routes to ``app``."""
    runner = app.state.runner

    @app.get("/")
    def home(request: Request):
        return _home(request)

    @app.post("/problems")
    async def new_problem(request: Request):
        form = await read_form(request)
        return await run_in_threadpool(_new_problem, request, str(form.get("yaml_text") or ""))

    @app.get("/problems/{problem_id}")
    def problem_page(request: Request, problem_id: int):
        return _problem_page(request, problem_id)

    @app.post("/problems/{problem_id}/yaml")
    async def edit_problem(request: Request, problem_id: int):
        form = await read_form(request)
        text = str(form.get("yaml_text") or "")
        return await run_in_threadpool(_edit_problem, request, problem_id, text)

    @app.post("/problems/{problem_id}/variants")
    async def new_variant(request: Request, problem_id: int):
        form = await read_form(request)
        return await run_in_threadpool(_new_variant, request, problem_id, form)

    @app.post("/api/problems/{problem_id}/whatif")
    async def what_if_route(request: Request, problem_id: int):
        form = await read_form(request)
        return await run_in_threadpool(_what_if, request, problem_id, form)

    @app.post("/variants/{variant_id}/solve")
    async def solve_variant(request: Request, variant_id: int):
        form = await read_form(request)
        return await run_in_threadpool(_solve_variant, request, variant_id, form)

    def _solve_variant(request: Request, variant_id: int, form) -> RedirectResponse:
        from solver.web.jobs import checked_time_limit

        try:
            limit = checked_time_limit(form.get("time_limit_s"))
            job = runner.submit(variant_id, time_limit_s=limit, who=current_user(request).name)
        except ProcureError as exc:
            raise HTTPException(400, str(exc)) from None
        asked(request, job, f"variant {variant_id}")
        if job.status == JobStatus.DONE and job.plan_id is not None:
            return _see(f"/plans/{job.plan_id}")
        return _see(f"/jobs/{job.id}")

    _register_jobs(app)
    _register_plans(app)
    from solver.web import analysis_pages

    analysis_pages.register(app)


def job_json(job: Job) -> dict:
    return {
        "id": job.id,
        "kind": job.kind,
        "variant_id": job.variant_id,
        "status": job.status,
        "stage": job.stage,
        "progress": job.progress,
        "error": job.error,
        "plan_id": job.plan_id,
        "rerun_of": job.rerun_of,
        "owner": job.owner,
        "options": json.loads(job.options_json or "{}"),
        "created_at": job.created_at.isoformat() + "Z",
        "started_at": job.started_at.isoformat() + "Z" if job.started_at else None,
        "finished_at": job.finished_at.isoformat() + "Z" if job.finished_at else None,
    }


def _register_jobs(app: FastAPI) -> None:
    store, runner = app.state.store, app.state.runner

    @app.get("/jobs")
    def jobs_page(request: Request):
        with store.sessions() as session:
            jobs = session.scalars(select(Job).order_by(Job.id.desc()).limit(200)).all()
            rows = [(j, j.variant.name, j.variant.problem.name) for j in jobs]
            return _page(request, "jobs.html.j2", {"rows": rows})

    @app.get("/jobs/{job_id}")
    def job_page(request: Request, job_id: int):
        with store.sessions() as session:
            job = _get(session, Job, job_id, "job")
            context = {"job": job, "variant": job.variant, "problem": job.variant.problem}
            return _page(request, "job.html.j2", context)

    @app.get("/api/jobs/{job_id}")
    def job_api(job_id: int):
        with store.sessions() as session:
            return job_json(_get(session, Job, job_id, "job"))

    @app.post("/jobs/{job_id}/cancel")
    def cancel_job(job_id: int):
        runner.cancel(job_id)
        return _see(f"/jobs/{job_id}")

    @app.post("/jobs/{job_id}/rerun")
    def rerun_job(request: Request, job_id: int):
        try:
            job = runner.rerun(job_id)
        except ProcureError as exc:
            raise HTTPException(400, str(exc)) from None
        asked(request, job, f"rerun of job {job_id}")
        if job.status == JobStatus.DONE and job.plan_id is not None:
            return _see(f"/plans/{job.plan_id}")
        return _see(f"/jobs/{job.id}")


def _record(store, plan_id: int) -> PlanRecord:
    with store.sessions() as session:
        record = _get(session, PlanRecord, plan_id, "plan")
        if record.variant is not None:
            _ = record.variant.problem.name
        return record


def _download(body: str | bytes, name: str, media: str) -> Response:
    headers = {"Content-Disposition": f'attachment; filename="{name}"'}
    return Response(body, media_type=media, headers=headers)


def _register_plans(app: FastAPI) -> None:
    from solver.web.price_watch import latest_watch_id, watch_view
    from solver.web.views import plan_view

    store = app.state.store

    @lru_cache(maxsize=256)
    def plan_html(
        plan_id: int,
        analysis_id: int | None,
        watch_id: int | None = None,
        viewer: tuple[str, str] = ("", "viewer"),
        review: str = "draft",
    ) -> str:
        # a stored plan never changes (a change is a new plan): its page is made once per
        # reader (name, role: the buttons shown), and again when an analysis of it is
        # stored or its approval status changes
        from solver.analyses.sensitivity import SensitivityReport

        report = None
        if analysis_id is not None:
            with store.sessions() as session:
                text = session.get(Analysis, analysis_id).result_json
            report = SensitivityReport.model_validate_json(text)
        template = app.state.templates.env.get_template("plan.html.j2")
        view = plan_view(_record(store, plan_id), report)
        reader = {
            "viewer": SimpleNamespace(name=viewer[0], role=viewer[1]),
            "may_change": auth.allowed(viewer[1], "POST", f"/plans/{plan_id}/sensitivity"),
            "review_status": review,
        }
        return template.render(view | reader | {"price_watch": watch_view(store, watch_id)})

    @app.get("/plans/{plan_id}")
    def plan_page(request: Request, plan_id: int):
        who = current_user(request)
        with store.sessions() as session:
            latest = session.scalars(
                select(Analysis.id)
                .where(Analysis.plan_id == plan_id, Analysis.kind == "sensitivity")
                .order_by(Analysis.break_even_limit.is_(None).desc(), Analysis.id.desc())
            ).first()
            review = statuses(session, [plan_id])[plan_id]
        watch = latest_watch_id(store, plan_id)
        return HTMLResponse(plan_html(plan_id, latest, watch, (who.name, who.role), review))

    @app.post("/plans/{plan_id}/sensitivity")
    async def analyse_plan(plan_id: int, request: Request):
        form = await read_form(request)
        raw = str(form.get("break_even") or "3").strip()
        seconds = form.get("time_limit_s")
        return await run_in_threadpool(_analyse, request, plan_id, raw, seconds)

    def _analyse(request: Request, plan_id: int, raw: str, seconds: object = None):
        from solver.web.jobs import checked_time_limit

        try:
            limit = None if raw == "all" else int(raw)
            if limit is not None and not -1 <= limit <= MAX_ID:
                raise ValueError
        except ValueError:
            raise HTTPException(
                400, f"break_even {raw!r}: give -1 (none), 0 or more, or all"
            ) from None
        try:
            time_limit_s = checked_time_limit(seconds)
            job = app.state.runner.submit_sensitivity(plan_id, limit, time_limit_s=time_limit_s)
        except ProcureError as exc:
            raise HTTPException(400, str(exc)) from None
        asked(request, job, f"plan {plan_id}, break-even {raw}")
        if job.status == JobStatus.DONE:
            return _see(f"/plans/{plan_id}")
        return _see(f"/jobs/{job.id}")

    _register_downloads(app)
    _register_catalog(app)
    register_replay(app)


def _register_downloads(app: FastAPI) -> None:
    store = app.state.store

    @app.get("/api/plans/{plan_id}")
    def plan_api(plan_id: int):
        record = _record(store, plan_id)
        return Response(record.plan_json, media_type="application/json")

    @app.get("/plans/{plan_id}/orders.xlsx")
    def orders_xlsx_file(request: Request, plan_id: int):
        from solver.outputs.orders import orders_xlsx

        record = _record(store, plan_id)
        body = orders_xlsx(plan_of(record), catalog_of_plan(record), problem_of_plan(record))
        media = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
        exported(request, plan_id, f"plan-{plan_id}-orders.xlsx")
        return _download(body, f"plan-{plan_id}-orders.xlsx", media)

    @app.get("/plans/{plan_id}/orders.csv")
    def orders_csv_file(request: Request, plan_id: int):
        from solver.outputs.files import csv_text, money_rounded
        from solver.outputs.orders import orders_combined

        body = csv_text(money_rounded(orders_combined(plan_of(_record(store, plan_id)))))
        exported(request, plan_id, f"plan-{plan_id}-orders.csv")
        return _download(body, f"plan-{plan_id}-orders.csv", "text/csv")

    def focus_rows(plan_id: int):
        from solver.outputs.focus import focus_frame

        record = _record(store, plan_id)
        plan = plan_of(record)
        if not plan.start_date:
            raise HTTPException(400, "the plan has no start date: set start: in its problem")
        return focus_frame(
            plan,
            problem_of_plan(record),
            catalog_of_plan(record),
            date.fromisoformat(plan.start_date),
        )

    @app.get("/plans/{plan_id}/focus.csv")
    def focus_file(request: Request, plan_id: int):
        from solver.outputs.focus import focus_csv

        body = focus_csv(focus_rows(plan_id))
        exported(request, plan_id, f"plan-{plan_id}-focus.csv")
        return _download(body, f"plan-{plan_id}-focus.csv", "text/csv")

    @app.get("/plans/{plan_id}/focus-contract-commitment.csv")
    def focus_contracts_file(request: Request, plan_id: int):
        """FOCUS 1.3's Contract Commitment dataset of the plan: its commitments Proposed
        until the workspace approves the plan, then Active."""
        from solver.outputs.focus import focus_csv
        from solver.outputs.focus_contracts import contract_commitment_frame
        from solver.web.approvals import commitment_lifecycle

        rows = focus_rows(plan_id)
        with store.sessions() as session:
            lifecycle = commitment_lifecycle(session, plan_id)
        frame = contract_commitment_frame(rows, lifecycle=lifecycle)
        name = f"plan-{plan_id}-focus-contract-commitment.csv"
        exported(request, plan_id, name)
        return _download(focus_csv(frame), name, "text/csv")


def _register_catalog(app: FastAPI) -> None:
    from solver.web.views import CATALOG_TABLES, catalog_view, compare_view

    store = app.state.store

    @app.get("/compare")
    def compare(request: Request, a: int, b: int):
        return _page(request, "compare.html.j2", compare_view(_record(store, a), _record(store, b)))

    @app.get("/catalog")
    def catalog(
        request: Request,
        table: str = "offerings",
        provider: str = "",
        accelerator: str = "",
        region: str = "",
        mode: str = "",
        sort: str = "",
    ):
        if table not in CATALOG_TABLES:
            raise HTTPException(404, f"no catalog table {table!r}: one of {CATALOG_TABLES}")
        filters = {
            "provider": provider or None,
            "accelerator": accelerator or None,
            "region": region or None,
            "mode": mode or None,
            "sort": sort or None,
        }
        cat = shipped_or_dir_catalog(app.state.catalog_dir)
        error, html, count = None, "", 0
        try:
            html, count = catalog_view(cat, table, filters)
        except ProcureError as exc:
            error = _error(exc)
        context = {
            "table": table,
            "tables": CATALOG_TABLES,
            "filters": filters,
            "html": html,
            "count": count,
            "error": error,
        }
        return _page(request, "catalog.html.j2", context, 400 if error else 200)

    @app.get("/api/plans")
    def plans_api():
        with store.sessions() as session:
            rows = session.scalars(select(PlanRecord).order_by(PlanRecord.id)).all()
            return JSONResponse(
                [
                    {
                        "id": r.id,
                        "variant_id": r.variant_id,
                        "problem": r.problem_name,
                        "total_cost_usd": r.total_cost_usd,
                        "verified": r.verified,
                        "solver": r.solver,
                        "gap": r.gap,
                        "inputs_digest": r.inputs_digest,
                        "catalog_sha256": r.catalog_sha256,
                        "price_multipliers": json.loads(r.price_multipliers_json),
                    }
                    for r in rows
                ]
            )
