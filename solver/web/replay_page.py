"""The workspace's replay of a plan: ``GET /plans/{id}/replay`` replays the plan's serving
fleets against the synthetic traffic of its problem's load curve (``procure replay``'s
defaults) and shows it beside the plan's limits and load (:mod:`solver.outputs.replay_html`)."""

from __future__ import annotations

from fastapi import FastAPI, HTTPException
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse

from solver.web.store import PlanRecord
from solver.web.workspace import catalog_of_plan, plan_of, problem_of_plan


def register_replay(app: FastAPI) -> None:
    """Add the replay page to ``app`` (its store and templates on ``app.state``)."""
    store = app.state.store

    def page(plan_id: int) -> str:
        from solver.analyses.replay import replay_plan
        from solver.outputs.replay_html import replay_section_html

        with store.sessions() as session:
            record = session.get(PlanRecord, plan_id)
            if record is None:
                raise HTTPException(404, f"no plan {plan_id}")
            if record.variant is not None:
                _ = record.variant.problem.name
        plan = plan_of(record)
        result = replay_plan(plan, problem_of_plan(record), catalog_of_plan(record))
        section = (
            replay_section_html(result)
            if result.rows
            else replay_section_html(None, "The plan serves no online workload: nothing to replay.")
        )
        template = app.state.templates.env.get_template("replay.html.j2")
        return template.render(plan_id=plan_id, section=section, total=plan.total_cost_usd)

    @app.get("/plans/{plan_id}/replay")
    async def replay_page(plan_id: int) -> HTMLResponse:
        return HTMLResponse(await run_in_threadpool(page, plan_id))
