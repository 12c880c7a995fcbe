"""The carbon frontier and the two-stage plan of a stored plan, as pages (each run as a
job: :mod:`solver.web.analysis_jobs`), linked from the plan page.

Routes (state-changing ones are POSTs, added here as the other routes are, so the
sign-in guard wraps them the same way):

- ``GET /plans/{id}/frontier``: the latest frontier job's progress (cancel, run again) and
  the frontier stored (``?analysis=ID``: an earlier one) as a table and a Chart.js chart;
  ``POST /plans/{id}/frontier`` (form ``points``) queues one;
- ``GET /plans/{id}/two-stage``, ``POST /plans/{id}/two-stage`` (form ``method``): the
  same for the two-stage plan of a problem with ``uncertainty:``;
- ``GET /api/plans/{id}/analyses?kind=frontier|two_stage|sensitivity``: the stored
  results as JSON (what the CLI prints for the same input).
"""

from __future__ import annotations

import json

import pandas as pd
from fastapi import FastAPI, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, RedirectResponse
from sqlalchemy import select

from solver.errors import ProcureError
from solver.web.alternatives_job import DEFAULT_MEASURE, DEFAULT_N, DEFAULT_SLACK, MEASURES
from solver.web.alternatives_job import options_of as alternatives_options
from solver.web.alternatives_job import view as alternatives_view
from solver.web.analysis_jobs import (
    DEFAULT_FRONTIER_POINTS,
    MAX_FRONTIER_POINTS,
    TWO_STAGE_METHODS,
)
from solver.web.formats import money
from solver.web.forms import read_form
from solver.web.preferences_job import view as preferences_view
from solver.web.store import Analysis, Job, PlanRecord
from solver.web.views import script_json
from solver.web.workspace import plan_of, problem_of_plan

#: the page of each kind, by its URL part
PAGES = {
    "frontier": "frontier",
    "two-stage": "two_stage",
    "alternatives": "alternatives",
    "preferences": "preferences",
}


def abatement_usd_per_t(co2e_t: list[float], cost_usd: list[float]) -> list[float | None]:
    """For each point of a frontier, what each tonne cut cost to reach it from the nearest
    point with more CO2e: (its cost - that point's cost) / (that point's CO2e - its CO2e),
    USD per t CO2e; None for the point with the most CO2e (the min-cost end) and for a
    point no lower in CO2e than the next.

    Parameters
    ----------
    co2e_t, cost_usd
        The points' total CO2e (t) and total cost (USD), in any order.
    """
    order = sorted(range(len(co2e_t)), key=lambda i: co2e_t[i])
    out: list[float | None] = [None] * len(co2e_t)
    for here, above in zip(order, order[1:], strict=False):
        cut_t = co2e_t[above] - co2e_t[here]
        if cut_t > 1e-9:
            out[here] = (cost_usd[here] - cost_usd[above]) / cut_t
    return out


def frontier_view(result: dict | None, plan=None) -> dict:
    """A stored frontier as the report shows it (:func:`solver.outputs.report.sweep_table`)
    with each point's cost per tonne cut (:func:`abatement_usd_per_t`), and the points for
    the chart: cost (USD) against CO2e (t), solved caps only, and ``plan`` (the page's
    plan) marked."""
    from solver.analyses.sensitivity import SweepPoint
    from solver.outputs.report import sweep_table
    from solver.web.formats import frame_table, money

    if result is None:
        return {"table": "", "chart_json": "null", "abatement": ""}
    points = [SweepPoint.model_validate(p) for p in result["points"]]
    # the solved caps: (point, CO2e t, cost USD)
    solved = [
        (p, float(p.total_co2e_t), float(p.total_cost_usd))
        for p in points
        if p.total_cost_usd is not None and p.total_co2e_t is not None
    ]
    chart = {
        "co2e_t": [round(t, 4) for _, t, _ in solved],
        "cost_usd": [round(c, 2) for _, _, c in solved],
        "cap_tco2e": [p.value for p, _, _ in solved],
        "plan": None
        if plan is None
        else {"co2e_t": round(plan.total_co2e_t, 4), "cost_usd": round(plan.total_cost_usd, 2)},
    }
    per_t = abatement_usd_per_t([t for _, t, _ in solved], [c for _, _, c in solved])
    by_point = {id(p): rate for (p, _, _), rate in zip(solved, per_t, strict=True)}
    at = {id(p): (t, c) for p, t, c in solved}
    frame = sweep_table(points)
    frame["cost per tonne cut (USD per t CO2e)"] = [
        money(by_point.get(id(p)), cents=True) for p in points
    ]
    if plan is not None:
        frame["the page's plan"] = [
            "this plan"
            if id(p) in at
            and abs(at[id(p)][1] - plan.total_cost_usd) < 0.5
            and abs(at[id(p)][0] - plan.total_co2e_t) < 1e-3
            else ""
            for p in points
        ]
    whole = ""
    if len(solved) >= 2:
        _, low_t, low_usd = min(solved, key=lambda s: s[1])
        _, high_t, high_usd = max(solved, key=lambda s: s[1])
        if high_t - low_t > 1e-9:
            rate = (low_usd - high_usd) / (high_t - low_t)
            whole = (
                f"From the least-cost to the least-carbon point: {high_t - low_t:,.1f} t CO2e "
                f"cut for {money(low_usd - high_usd)}, {money(rate, cents=True)} per t CO2e "
                "on average."
            )
    return {"table": frame_table(frame), "chart_json": script_json(chart), "abatement": whole}


def two_stage_view(result: dict | None) -> dict:
    """A stored two-stage plan as the report shows it: its sentences, the per-scenario
    table (:func:`solver.outputs.two_stage.two_stage_frame`), the commitments signed now, and
    the scenario costs for the chart."""
    from solver.analyses.stochastic import StochasticPlan
    from solver.outputs.two_stage import two_stage_frame, two_stage_sentences
    from solver.web.formats import frame_table

    if result is None:
        return {"sp": None, "chart_json": "null"}
    sp = StochasticPlan.model_validate(result)
    frame = two_stage_frame(sp)
    money = [c for c in frame.columns if c.endswith("_usd")]
    commitments = pd.DataFrame(
        [
            {
                "item": i.item,
                "provider": i.provider,
                "offering": i.offering,
                "mode": i.mode,
                "units": i.units,
                "cost_usd": i.cost_usd,
            }
            for i in sp.commitments
        ]
    )
    chart = {
        "scenarios": [o.name for o in sp.scenarios],
        "two_stage_plan_usd": [round(o.total_cost_usd, 2) for o in sp.scenarios],
        "all_rented_usd": [o.all_rented_cost_usd for o in sp.scenarios],
        "hindsight_usd": [o.hindsight_cost_usd for o in sp.scenarios],
        "expected_cost_usd": round(sp.expected_cost_usd, 2),
    }
    return {
        "sp": sp,
        "sentences": two_stage_sentences(sp),
        "table": frame_table(frame, money_columns=money),
        "commitments": frame_table(commitments, money_columns=["cost_usd"], total="total")
        if len(commitments)
        else "",
        "chart_json": script_json(chart),
    }


def _see(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def _page(app: FastAPI, request: Request, plan_id: int, kind: str, analysis_id: int | None):

    with app.state.store.sessions() as session:
        record = session.get(PlanRecord, plan_id)
        if record is None:
            raise HTTPException(404, f"no plan {plan_id}")
        stored = session.scalars(
            select(Analysis)
            .where(Analysis.plan_id == plan_id, Analysis.kind == kind)
            .order_by(Analysis.id.desc())
        ).all()
        job = session.scalars(
            select(Job).where(Job.plan_id == plan_id, Job.kind == kind).order_by(Job.id.desc())
        ).first()
        shown = next((a for a in stored if a.id == analysis_id), stored[0] if stored else None)
        if analysis_id is not None and (shown is None or shown.id != analysis_id):
            raise HTTPException(404, f"no {kind} analysis {analysis_id} of plan {plan_id}")
        result = None if shown is None else json.loads(shown.result_json)
        plan = plan_of(record)
        if kind == "frontier":
            view = frontier_view(result, plan)
        elif kind == "alternatives":
            view = alternatives_view(result)
        elif kind == "preferences":
            view = preferences_view(result)
        else:
            view = two_stage_view(result)
        context = {
            "record": record,
            "plan": plan,
            "usd": money,
            "job": job,
            "shown": shown,
            "stored": [(a, json.loads(a.options_json or "{}")) for a in stored],
            "default_points": DEFAULT_FRONTIER_POINTS,
            "max_points": MAX_FRONTIER_POINTS,
            "methods": TWO_STAGE_METHODS,
            "measures": MEASURES,
            "defaults": {"slack": DEFAULT_SLACK, "n": DEFAULT_N, "differ_by": DEFAULT_MEASURE},
            "has_uncertainty": problem_of_plan(record).uncertainty is not None,
            **view,
        }
        name = f"{kind}.html.j2"
        return app.state.templates.TemplateResponse(request, name, context)


def _options(kind: str, form) -> dict:
    """The options of a request from its form (as the CLI's options)."""
    if kind == "alternatives":
        return alternatives_options(form)
    if kind == "preferences":
        return {}  # every kind of group, as procure alternatives --preferences
    if kind == "frontier":
        raw = str(form.get("points") or DEFAULT_FRONTIER_POINTS).strip()
        try:
            return {"points": int(raw)}
        except ValueError:
            return {"points": raw}  # refused with its message by check_analysis
    return {"method": str(form.get("method") or "auto")}


def _register_page(app: FastAPI, page: str, kind: str) -> None:
    """``GET`` and ``POST /plans/{id}/<page>`` of one kind of analysis."""

    @app.get(f"/plans/{{plan_id}}/{page}", name=f"{kind}_page")
    def analysis_page(request: Request, plan_id: int, analysis: int | None = None):
        return _page(app, request, plan_id, kind, analysis)

    @app.post(f"/plans/{{plan_id}}/{page}", name=f"{kind}_submit")
    async def analyse(request: Request, plan_id: int):
        options = _options(kind, await read_form(request))
        return await run_in_threadpool(submit, request, plan_id, options)

    def submit(request: Request, plan_id: int, options: dict):
        """Check and queue the analysis off the event loop (it reads the plan's problem)."""
        from solver.web.events import asked

        try:
            job = app.state.runner.submit_analysis(plan_id, kind, options)
        except ProcureError as exc:
            raise HTTPException(400, str(exc)) from None
        asked(request, job, f"plan {plan_id}, {json.dumps(options, sort_keys=True)}")
        return _see(f"/plans/{plan_id}/{page}")


def register(app: FastAPI) -> None:
    """Add the frontier and two-stage pages to ``app``."""
    store = app.state.store
    for page, kind in PAGES.items():
        _register_page(app, page, kind)

    @app.get("/api/plans/{plan_id}/analyses")
    def analyses_api(plan_id: int, kind: str | None = None):
        with store.sessions() as session:
            query = select(Analysis).where(Analysis.plan_id == plan_id).order_by(Analysis.id)
            if kind:
                query = query.where(Analysis.kind == kind)
            return JSONResponse(
                [
                    {
                        "id": a.id,
                        "kind": a.kind,
                        "job_id": a.job_id,
                        "options": json.loads(a.options_json or "{}"),
                        "break_even_limit": a.break_even_limit,
                        "created_at": a.created_at.isoformat() + "Z",
                        "result": json.loads(a.result_json),
                    }
                    for a in session.scalars(query)
                ]
            )
