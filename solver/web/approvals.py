"""Plan approvals: a stored plan is submitted, needs one finance and one infra
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
``plan.reject``, ``plan.void``; the digests are of the review before and after).

Separation of duties, checked here whatever a page shows:

- only infra and finance submit (the guard's rule: an admin manages accounts and does
  not submit); only infra and finance decide, and never on a request they submitted;
- the approvals required per role count distinct people, the submitter never among them;
- a submission binds the plan and the exact problem and catalog digests it was solved
  for: a plan whose variant no longer reads to those digests (its problem was edited
  since) cannot be submitted, a problem with a plan awaiting approval (or approved) cannot
  be edited (409), and each decision re-derives the digests: should they differ anyway
  (the catalog's files changed under a restarted server) the request is void, never
  approved;
- a submission is one conditional write: of several at once one wins, the others get 409.
"""

from __future__ import annotations

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from solver.errors import ProcureError
from solver.web import audit, auth
from solver.web.forms import read_form
from solver.web.guard import current_user
from solver.web.store import Approval, PlanRecord, PlanReview, Variant
from solver.web.store.accounts import Decision, PlanStatus
from solver.web.store.models import utc_now

#: the approvals a plan needs by default: one of each role
DEFAULT_APPROVALS = {"finance": 1, "infra": 1}
#: only these roles approve or reject (the server checks it: auth.RULES)
APPROVER_ROLES = {"finance", "infra"}
#: only these roles submit plans (README: infra and finance submit; an admin does not)
SUBMITTER_ROLES = {"finance", "infra"}
#: a request in these states holds its problem: no edit until it is decided
HOLDING = (PlanStatus.SUBMITTED, PlanStatus.APPROVED)


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
    return (
        review
        if review is not None
        else PlanReview(plan_id=plan_id, status=PlanStatus.DRAFT, round=0)
    )


def statuses(session: Session, plan_ids: list[int]) -> dict[int, str]:
    """Each plan's approval status (``draft`` for a plan never submitted), for the pages
    that list plans."""
    if not plan_ids:
        return {}
    rows = session.execute(
        select(PlanReview.plan_id, PlanReview.status).where(PlanReview.plan_id.in_(plan_ids))
    ).all()
    found = {int(plan_id): str(status) for plan_id, status in rows}
    return {i: found.get(i, PlanStatus.DRAFT.value) for i in plan_ids}


def _state(review: PlanReview) -> dict:
    return {
        "plan_id": review.plan_id,
        "status": review.status,
        "round": review.round,
        "problem_sha256": review.problem_sha256 or "",
        "catalog_sha256": review.catalog_sha256 or "",
    }


def decisions(session: Session, plan_id: int, round_: int | None = None) -> list[Approval]:
    query = select(Approval).where(Approval.plan_id == plan_id)
    if round_ is not None:
        query = query.where(Approval.round == round_)
    return list(session.scalars(query.order_by(Approval.id)).all())


def missing(session: Session, review: PlanReview, required: dict[str, int]) -> dict[str, int]:
    """The approvals the current round still needs, by role: each role's count of distinct
    people who approved, never the submitter."""
    got: dict[str, set[str]] = {}
    for d in decisions(session, review.plan_id, review.round):
        if d.decision == Decision.APPROVE and d.user_name != review.submitted_by:
            got.setdefault(d.role, set()).add(d.user_name)
    short = {r: n - len(got.get(r, ())) for r, n in required.items()}
    return {r: n for r, n in short.items() if n > 0}


def _conflict(message: str) -> HTTPException:
    return HTTPException(409, message)


def current_digests(session: Session, record: PlanRecord) -> tuple[str, str]:
    """The problem and catalog digests the plan's variant reads to now (its problem's
    current YAML, the catalog's files as the server reads them).

    Raises
    ------
    HTTPException
        409 when the plan has no variant or its variant no longer reads.
    """
    from solver.web.workspace import variant_inputs

    variant = session.get(Variant, record.variant_id) if record.variant_id else None
    if variant is None:
        raise _conflict(f"plan {record.id} has no variant: solve a variant and submit its plan")
    try:
        inputs = variant_inputs(variant, record.catalog_dir or None)
    except ProcureError as exc:
        raise _conflict(f"plan {record.id}: its variant no longer reads: {exc}") from None
    return inputs.problem_sha256, inputs.catalog_sha256


def _stale(now: tuple[str, str], bound: tuple[str, str]) -> str:
    """'' when ``now`` is ``bound``, else what changed (for a message): digests shortened
    to 12 hex digits."""
    pairs = zip(("problem", "catalog"), bound, now, strict=True)
    return "; ".join(f"{n} {b[:12]} is now {c[:12]}" for n, b, c in pairs if b != c)


def submit(session: Session, plan_id: int, user: str) -> PlanReview:
    """Submit a plan for approval (one conditional write: of concurrent submissions one
    wins, the others get 409), binding the problem and catalog digests it solves."""
    record = session.get(PlanRecord, plan_id)
    if record is None:
        raise HTTPException(404, f"no plan {plan_id}")
    bound = (record.problem_sha256, record.catalog_sha256)
    changed = _stale(current_digests(session, record), bound)
    if changed:
        raise _conflict(
            f"plan {plan_id} was solved for inputs that changed since ({changed}): solve its "
            "variant again and submit the new plan"
        )
    review = session.get(PlanReview, plan_id)
    if review is not None and review.status in HOLDING:
        raise _conflict(f"plan {plan_id} is already {review.status}")
    before = _state(review) if review is not None and review.round else None
    values = {"status": PlanStatus.SUBMITTED, "submitted_by": user, "updated_at": utc_now()}
    values |= {"problem_sha256": bound[0], "catalog_sha256": bound[1]}
    written = 1
    try:
        if review is None:
            session.add(PlanReview(plan_id=plan_id, round=1, **values))
            session.flush()
        else:
            written = session.execute(
                update(PlanReview)
                .where(PlanReview.plan_id == plan_id, PlanReview.round == review.round)
                .where(PlanReview.status.not_in(HOLDING))
                .values(round=review.round + 1, **values)
                .execution_options(synchronize_session=False)
            ).rowcount
    except IntegrityError:
        written = 0
    if written != 1:
        session.rollback()
        raise _conflict(f"plan {plan_id} was submitted meanwhile: see its approval page")
    session.expire_all()
    review = session.get(PlanReview, plan_id)
    audit.record(session, user, "plan.submit", f"plan {plan_id}", before, _state(review))
    session.commit()
    return review


def _void_if_changed(session: Session, review: PlanReview, user: str) -> None:
    """Void the request (committed, audited) and refuse with 409 when the plan's variant
    no longer reads to the digests the submission bound."""
    record = session.get(PlanRecord, review.plan_id)
    bound = (review.problem_sha256, review.catalog_sha256)
    changed = _stale(current_digests(session, record), bound)
    if not changed:
        return
    before = _state(review)
    review.status, review.updated_at = PlanStatus.VOID, utc_now()
    detail = f"inputs changed after submission: {changed}"
    audit.record(session, user, "plan.void", f"plan {review.plan_id}", before, _state(review),
                 detail)  # fmt: skip
    session.commit()
    raise _conflict(
        f"plan {review.plan_id}'s request is void: {detail}. Solve the variant again and "
        "submit the new plan"
    )


def _hold_round(session: Session, plan_id: int, round_: int) -> None:
    """Lock the review of the round until the transaction ends (a conditional write:
    PostgreSQL's row lock, SQLite's write lock); 409 when it was decided meanwhile."""
    done = session.execute(
        update(PlanReview)
        .where(PlanReview.plan_id == plan_id, PlanReview.round == round_)
        .where(PlanReview.status == PlanStatus.SUBMITTED)
        .values(updated_at=utc_now())
        .execution_options(synchronize_session=False)
    )
    if done.rowcount != 1:
        session.rollback()
        raise _conflict(f"plan {plan_id} was decided meanwhile: see its approval page")
    session.expire_all()


def decide(
    session: Session, plan_id: int, user: str, role: str, decision: str, comment: str, required
) -> PlanReview:
    """Approve or reject the current round (as ``role``); approved when none is missing.
    The submitter never decides; each person decides once a round."""
    review = session.get(PlanReview, plan_id)
    if review is None or review.status != PlanStatus.SUBMITTED:
        status = review.status if review is not None else PlanStatus.DRAFT
        raise _conflict(f"plan {plan_id} is {status}, not submitted: nothing to {decision}")
    if role not in APPROVER_ROLES:
        raise HTTPException(403, f"the {role} role may not {decision} plans")
    if user == review.submitted_by:
        raise HTTPException(
            403,
            f"{user} submitted plan {plan_id}: someone else must {decision} it "
            "(separation of duties)",
        )
    if decision == Decision.REJECT and not comment.strip():
        raise HTTPException(400, "comment: a rejection needs a comment (what to change)")
    if decision == Decision.APPROVE:
        _void_if_changed(session, review, user)
    before = _state(review)
    _hold_round(session, plan_id, review.round)
    review = session.get(PlanReview, plan_id)
    if any(d.user_name == user for d in decisions(session, plan_id, review.round)):
        session.rollback()
        raise _conflict(f"{user} has already decided on plan {plan_id} in this round")
    if decision == Decision.APPROVE and role not in missing(session, review, required):
        session.rollback()
        raise _conflict(f"plan {plan_id} needs no more {role} approvals")
    session.add(Approval(plan_id=plan_id, round=review.round, user_name=user, role=role,
                         decision=decision, comment=comment.strip()))  # fmt: skip
    session.flush()
    if decision == Decision.REJECT:
        review.status = PlanStatus.REJECTED
    elif not missing(session, review, required):
        review.status = PlanStatus.APPROVED
    review.updated_at = utc_now()
    detail = comment.strip() if decision == Decision.REJECT else f"status {review.status}"
    audit.record(
        session, user, f"plan.{decision}", f"plan {plan_id}", before, _state(review), detail
    )
    session.commit()
    return review


def holding_plan(session: Session, problem_id: int) -> tuple[int, str] | None:
    """A plan of one of the problem's variants that is approved or awaiting approval, with
    its status (approved first); None when there is none."""
    found = session.execute(
        select(PlanReview.plan_id, PlanReview.status)
        .join(PlanRecord, PlanRecord.id == PlanReview.plan_id)
        .join(Variant, Variant.id == PlanRecord.variant_id)
        .where(Variant.problem_id == problem_id, PlanReview.status.in_(HOLDING))
        .order_by(PlanReview.status, PlanReview.plan_id)
        .limit(1)
    ).first()
    return (int(found[0]), str(found[1])) if found is not None else None


def locking_plan(session: Session, problem_id: int) -> int | None:
    """An approved plan of one of the problem's variants (the problem is then locked)."""
    found = holding_plan(session, problem_id)
    return found[0] if found is not None and found[1] == PlanStatus.APPROVED else None


def ensure_unlocked(session: Session, problem_id: int) -> None:
    """Refuse (409) to change a problem one of whose plans is approved, or awaits approval
    (an approval binds the exact problem the plan was solved for)."""
    found = holding_plan(session, problem_id)
    if found is None:
        return
    plan_id, status = found
    if status == PlanStatus.APPROVED:
        raise _conflict(
            f"problem {problem_id} is locked: plan {plan_id} of it is approved. "
            "Add a new problem (paste the changed YAML on the home page) for a new plan"
        )
    raise _conflict(
        f"problem {problem_id} is held: plan {plan_id} of it awaits approval, and an "
        "approval is for the exact problem it was solved for. Have the plan rejected "
        "first (a comment saying what changes), or add a new problem for the change"
    )


def approval_json(session: Session, plan_id: int, required: dict[str, int]) -> dict:
    review = review_of(session, plan_id)
    return {
        **_state(review),
        "submitted_by": review.submitted_by,
        "locked": review.status == PlanStatus.APPROVED,
        "required": required,
        "missing": missing(session, review, required)
        if review.status == PlanStatus.SUBMITTED
        else {},
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


def commitment_lifecycle(session: Session, plan_id: int) -> str:
    """The FOCUS lifecycle status of a plan's new commitments (the working draft's
    ContractCommitmentLifecycleStatus): ``Active`` once the plan is approved, ``Proposed``
    ("being negotiated or modeled") before."""
    return "Active" if review_of(session, plan_id).status == PlanStatus.APPROVED else "Proposed"


def final_orders_csv(session: Session, plan_id: int) -> str:
    """The approved plan's orders, each row marked final with its approvers."""
    from solver.outputs.files import csv_text
    from solver.outputs.orders import orders_combined
    from solver.web.workspace import plan_of

    review = session.get(PlanReview, plan_id)
    if review is None or review.status != PlanStatus.APPROVED:
        status = review.status if review is not None else PlanStatus.DRAFT
        raise _conflict(f"plan {plan_id} is {status}: only approved plans export final orders")
    approvers = [
        f"{d.user_name} ({d.role})"
        for d in decisions(session, plan_id, review.round)
        if d.decision == Decision.APPROVE
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
    auth.add_rule(r"^/plans/\d+/submit$", SUBMITTER_ROLES)

    def required() -> dict[str, int]:
        return app.state.required_approvals

    @app.get("/plans/{plan_id}/approval")
    def approval_page(request: Request, plan_id: int):
        with store.sessions() as session:
            if session.get(PlanRecord, plan_id) is None:
                raise HTTPException(404, f"no plan {plan_id}")
            context = {"plan_id": plan_id, "review": approval_json(session, plan_id, required())}
        context["viewer"] = current_user(request)
        viewer = context["viewer"]
        context["can_decide"] = (
            viewer.role in APPROVER_ROLES and viewer.name != context["review"]["submitted_by"]
        )
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

    for decision in Decision:
        _decision_route(app, decision, required)

    @app.get("/plans/{plan_id}/orders-final.csv")
    def final_orders(request: Request, plan_id: int):
        with store.sessions() as session:
            body = final_orders_csv(session, plan_id)
        who = current_user(request).name
        name = f"plan-{plan_id}-orders-final.csv"
        audit.record_alone(store, who, "export.orders_final_csv", f"plan {plan_id}", name)
        headers = {"Content-Disposition": f'attachment; filename="plan-{plan_id}-orders-final.csv"'}
        return Response(body, media_type="text/csv", headers=headers)


def _decision_route(app: FastAPI, decision: str, required) -> None:
    store = app.state.store

    async def decide_plan(request: Request, plan_id: int):
        form = await read_form(request)
        viewer = current_user(request)
        comment = str(form.get("comment") or "")

        def write() -> None:
            with store.sessions() as session:
                decide(session, plan_id, viewer.name, viewer.role, decision, comment, required())

        await run_in_threadpool(write)
        return RedirectResponse(f"/plans/{plan_id}/approval", status_code=303)

    app.post(f"/plans/{{plan_id}}/{decision}", name=f"{decision}_plan")(decide_plan)
