"""Plan approvals (issue 31): a stored plan is submitted, needs one finance and one infra
approval (``create_app(approvals=...)``, ``procure serve --approvals``), and once approved
is locked: its problem can no longer be edited (a change is a new problem, hence a new
plan; plans themselves are never changed) and only then do its orders export marked final.
A rejection carries a comment and ends the round; the plan can be submitted again.

- ``GET /plans/{id}/approval``: status, decisions, the forms a role may use;
- ``POST /plans/{id}/submit``, ``/approve``, ``/reject`` (comment required);
- ``GET /api/plans/{id}/approval``: the same as JSON;
- ``GET /plans/{id}/orders-final.csv``: the orders, each row marked ``final`` with the
  approvers; 409 unless the plan is approved.

Every status change is in the audit trail (``plan.submit``, ``plan.approve``,
``plan.reject``; the digests are of the review before and after).
"""

from __future__ import annotations

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from solver.errors import ProcureError
from solver.web import audit, auth
from solver.web.guard import current_user
from solver.web.store import Approval, PlanRecord, PlanReview, Variant
from solver.web.store.models import utc_now

#: the approvals a plan needs by default: one of each role (issue 31)
DEFAULT_APPROVALS = {"finance": 1, "infra": 1}
#: only these roles approve or reject (the server checks it: auth.RULES)
APPROVER_ROLES = {"finance", "infra"}


def parse_approvals(text: str) -> dict[str, int]:
    """``finance=1,infra=1`` as {role: count}; roles are finance and infra."""
    out: dict[str, int] = {}
    fix = "e.g. finance=1,infra=1 (finance and infra, each 0 or more, at least one in all)"
    for part in filter(None, (p.strip() for p in text.split(","))):
        role, _, count = part.partition("=")
        if role.strip() not in APPROVER_ROLES or not count.strip().isdigit():
            raise ProcureError(f"{part!r} is not ROLE=COUNT", field="--approvals", fix=fix)
        out[role.strip()] = int(count)
    if sum(out.values()) < 1:
        raise ProcureError("no approval required", field="--approvals", fix=fix)
    return out


def review_of(session: Session, plan_id: int) -> PlanReview:
    review = session.get(PlanReview, plan_id)
    return review if review is not None else PlanReview(plan_id=plan_id, status="draft", round=0)


def _state(review: PlanReview) -> dict:
    return {"plan_id": review.plan_id, "status": review.status, "round": review.round}


def decisions(session: Session, plan_id: int, round_: int | None = None) -> list[Approval]:
    query = select(Approval).where(Approval.plan_id == plan_id)
    if round_ is not None:
        query = query.where(Approval.round == round_)
    return list(session.scalars(query.order_by(Approval.id)).all())


def missing(session: Session, review: PlanReview, required: dict[str, int]) -> dict[str, int]:
    """The approvals the current round still needs, by role."""
    got: dict[str, int] = {}
    for d in decisions(session, review.plan_id, review.round):
        if d.decision == "approve":
            got[d.role] = got.get(d.role, 0) + 1
    return {r: n - got.get(r, 0) for r, n in required.items() if n - got.get(r, 0) > 0}


def _conflict(message: str) -> HTTPException:
    return HTTPException(409, message)


def submit(session: Session, plan_id: int, user: str) -> PlanReview:
    if session.get(PlanRecord, plan_id) is None:
        raise HTTPException(404, f"no plan {plan_id}")
    review = review_of(session, plan_id)
    if review.status in ("submitted", "approved"):
        raise _conflict(f"plan {plan_id} is already {review.status}")
    before = _state(review) if review.round else None
    review.status, review.round, review.submitted_by = "submitted", review.round + 1, user
    review.updated_at = utc_now()
    session.add(review)
    audit.record(session, user, "plan.submit", f"plan {plan_id}", before, _state(review))
    session.commit()
    return review


def decide(
    session: Session, plan_id: int, user: str, role: str, decision: str, comment: str, required
) -> PlanReview:
    """Approve or reject the current round (as ``role``); approved when none is missing."""
    review = session.get(PlanReview, plan_id)
    if review is None or review.status != "submitted":
        status = review.status if review is not None else "draft"
        raise _conflict(f"plan {plan_id} is {status}, not submitted: nothing to {decision}")
    if role not in APPROVER_ROLES:
        raise HTTPException(403, f"the {role} role may not {decision} plans")
    if any(d.user_name == user for d in decisions(session, plan_id, review.round)):
        raise _conflict(f"{user} has already decided on plan {plan_id} in this round")
    if decision == "reject" and not comment.strip():
        raise HTTPException(400, "comment: a rejection needs a comment (what to change)")
    if decision == "approve" and role not in missing(session, review, required):
        raise _conflict(f"plan {plan_id} needs no more {role} approvals")
    before = _state(review)
    session.add(Approval(plan_id=plan_id, round=review.round, user_name=user, role=role,
                         decision=decision, comment=comment.strip()))  # fmt: skip
    session.flush()
    if decision == "reject":
        review.status = "rejected"
    elif not missing(session, review, required):
        review.status = "approved"
    review.updated_at = utc_now()
    detail = comment.strip() if decision == "reject" else f"status {review.status}"
    audit.record(
        session, user, f"plan.{decision}", f"plan {plan_id}", before, _state(review), detail
    )
    session.commit()
    return review


def locking_plan(session: Session, problem_id: int) -> int | None:
    """An approved plan of one of the problem's variants (the problem is then locked)."""
    return session.scalar(
        select(PlanReview.plan_id)
        .join(PlanRecord, PlanRecord.id == PlanReview.plan_id)
        .join(Variant, Variant.id == PlanRecord.variant_id)
        .where(Variant.problem_id == problem_id, PlanReview.status == "approved")
        .limit(1)
    )


def ensure_unlocked(session: Session, problem_id: int) -> None:
    """Refuse (409) to change a problem one of whose plans is approved."""
    plan_id = locking_plan(session, problem_id)
    if plan_id is not None:
        raise _conflict(
            f"problem {problem_id} is locked: plan {plan_id} of it is approved. "
            "Add a new problem (paste the changed YAML on the home page) for a new plan"
        )


def approval_json(session: Session, plan_id: int, required: dict[str, int]) -> dict:
    review = review_of(session, plan_id)
    return {
        **_state(review),
        "submitted_by": review.submitted_by,
        "locked": review.status == "approved",
        "required": required,
        "missing": missing(session, review, required) if review.status == "submitted" else {},
        "decisions": [
            {
                "round": d.round,
                "user": d.user_name,
                "role": d.role,
                "decision": d.decision,
                "comment": d.comment,
                "at": d.created_at.isoformat() + "Z",
            }
            for d in decisions(session, plan_id)
        ],  # fmt: skip
    }


def final_orders_csv(session: Session, plan_id: int) -> str:
    """The approved plan's orders, each row marked final with its approvers."""
    from solver.outputs.files import csv_text
    from solver.outputs.orders import orders_combined
    from solver.web.workspace import plan_of

    review = session.get(PlanReview, plan_id)
    if review is None or review.status != "approved":
        status = review.status if review is not None else "draft"
        raise _conflict(f"plan {plan_id} is {status}: only approved plans export final orders")
    approvers = [
        f"{d.user_name} ({d.role})"
        for d in decisions(session, plan_id, review.round)
        if d.decision == "approve"
    ]
    frame = orders_combined(plan_of(session.get(PlanRecord, plan_id)))
    frame.insert(0, "approved_by", "; ".join(approvers))
    frame.insert(0, "plan_id", plan_id)
    frame.insert(0, "order_status", "final")
    return csv_text(frame)


def register(app: FastAPI) -> None:
    """Add the approval routes to ``app`` (and their role rule to the guard)."""
    store = app.state.store
    auth.add_rule(r"^/plans/\d+/(approve|reject)$", APPROVER_ROLES)

    def required() -> dict[str, int]:
        return app.state.required_approvals

    @app.get("/plans/{plan_id}/approval")
    def approval_page(request: Request, plan_id: int):
        with store.sessions() as session:
            if session.get(PlanRecord, plan_id) is None:
                raise HTTPException(404, f"no plan {plan_id}")
            context = {"plan_id": plan_id, "review": approval_json(session, plan_id, required())}
        context["viewer"] = current_user(request)
        context["can_decide"] = context["viewer"].role in APPROVER_ROLES
        context["can_submit"] = auth.allowed(context["viewer"].role, "POST", "/plans/0/submit")
        return request.app.state.templates.TemplateResponse(request, "approval.html.j2", context)

    @app.get("/api/plans/{plan_id}/approval")
    def approval_api(plan_id: int):
        with store.sessions() as session:
            return JSONResponse(approval_json(session, plan_id, required()))

    @app.post("/plans/{plan_id}/submit")
    def submit_plan(request: Request, plan_id: int):
        with store.sessions() as session:
            submit(session, plan_id, current_user(request).name)
        return RedirectResponse(f"/plans/{plan_id}/approval", status_code=303)

    for decision in ("approve", "reject"):
        _decision_route(app, decision, required)

    @app.get("/plans/{plan_id}/orders-final.csv")
    def final_orders(plan_id: int):
        with store.sessions() as session:
            body = final_orders_csv(session, plan_id)
        headers = {"Content-Disposition": f'attachment; filename="plan-{plan_id}-orders-final.csv"'}
        return Response(body, media_type="text/csv", headers=headers)


def _decision_route(app: FastAPI, decision: str, required) -> None:
    store = app.state.store

    async def decide_plan(request: Request, plan_id: int):
        form = await request.form()
        viewer = current_user(request)
        with store.sessions() as session:
            comment = str(form.get("comment") or "")
            decide(session, plan_id, viewer.name, viewer.role, decision, comment, required())
        return RedirectResponse(f"/plans/{plan_id}/approval", status_code=303)

    app.post(f"/plans/{{plan_id}}/{decision}", name=f"{decision}_plan")(decide_plan)
