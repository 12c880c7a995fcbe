"""Sign-in, sign-out and the admin pages (accounts and roles, the audit trail) of the
workspace (issue 31). The guard (:mod:`solver.web.guard`) has already checked the account,
its role and the CSRF token of every request that reaches these routes but ``/login``.

- ``GET /login``, ``POST /login`` (rate-limited: :class:`solver.web.auth.RateLimit`),
  ``POST /logout``; ``GET /api/me``: the account, its role and its CSRF token (for
  scripts: send it as ``X-CSRF-Token``);
- ``GET /admin/users``, ``POST /admin/users`` (add), ``POST /admin/users/{id}/role``;
- ``GET /admin/audit`` and ``GET /admin/audit.csv``: the audit trail, oldest first.
"""

from __future__ import annotations

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from solver.errors import ProcureError
from solver.web import audit, auth
from solver.web.guard import SESSION_COOKIE, current_user
from solver.web.store import ROLES, User


def _page(request: Request, name: str, context: dict, status: int = 200):
    return request.app.state.templates.TemplateResponse(request, name, context, status_code=status)


def _safe_next(target: str) -> str:
    """Only a path of this site (no ``//host`` or ``http://``): no open redirect."""
    bad = not target.startswith("/") or target.startswith(("//", "/\\")) or "\\" in target
    return "/" if bad else target


def _client(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def _sign_in(request: Request, name: str, password: str, target: str):
    state = request.app.state
    keys = (f"ip:{_client(request)}", f"name:{name}")
    context = {"name": name, "next": target}
    if state.rate_limit.blocked(*keys):
        limit = state.rate_limit
        message = (
            f"more than {limit.limit} failed sign-ins in {limit.window_s:g} s: "
            "wait a minute and try again"
        )
        return _page(request, "login.html.j2", {**context, "error": message}, 429)
    with state.store.sessions() as session:
        user = auth.verify_password(session, name, password)
        if user is None:
            state.rate_limit.failed(*keys)
            return _page(
                request, "login.html.j2", {**context, "error": "wrong name or password"}, 401
            )
        token = auth.start_session(session, user)
    response = RedirectResponse(_safe_next(target), status_code=303)
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=auth.SESSION_HOURS * 3600,
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
        path="/",
    )
    return response


def register(app: FastAPI) -> None:
    """Add the sign-in and admin routes to ``app``."""
    store = app.state.store

    @app.get("/login")
    def login_page(request: Request, next: str = "/"):
        return _page(request, "login.html.j2", {"name": "", "next": next, "error": None})

    @app.post("/login")
    async def login(request: Request):
        form = await request.form()
        return _sign_in(
            request,
            str(form.get("name") or "").strip(),
            str(form.get("password") or ""),
            str(form.get("next") or "/"),
        )

    @app.post("/logout")
    def logout(request: Request):
        viewer = current_user(request)
        if viewer.session_token:
            with store.sessions() as session:
                auth.end_session(session, viewer.session_token)
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(SESSION_COOKIE, path="/")
        return response

    @app.get("/api/me")
    def me(request: Request):
        viewer = current_user(request)
        return JSONResponse({"name": viewer.name, "role": viewer.role, "csrf_token": viewer.csrf})

    _register_admin(app)


def _users_page(request: Request, error: dict | None = None, status: int = 200):
    from sqlalchemy import select

    with request.app.state.store.sessions() as session:
        users = session.scalars(select(User).order_by(User.id)).all()
        context = {"users": users, "roles": ROLES, "error": error}
        return _page(request, "admin_users.html.j2", context, status)


def _register_admin(app: FastAPI) -> None:
    store = app.state.store

    @app.get("/admin/users")
    def users_page(request: Request):
        return _users_page(request)

    @app.post("/admin/users")
    async def add_user(request: Request):
        form = await request.form()
        try:
            with store.sessions() as session:
                auth.add_user(
                    session,
                    str(form.get("name") or "").strip(),
                    str(form.get("role") or ""),
                    str(form.get("password") or ""),
                    by=current_user(request).name,
                )
        except ProcureError as exc:
            error = {"message": str(exc), "field": exc.field or ""}
            return _users_page(request, error, 400)
        return RedirectResponse("/admin/users", status_code=303)

    @app.post("/admin/users/{user_id}/role")
    async def change_role(request: Request, user_id: int):
        form = await request.form()
        try:
            with store.sessions() as session:
                user = session.get(User, user_id)
                if user is None:
                    raise HTTPException(404, f"no user {user_id}")
                auth.set_role(
                    session, user, str(form.get("role") or ""), current_user(request).name
                )
        except ProcureError as exc:
            return _users_page(request, {"message": str(exc), "field": exc.field or ""}, 400)
        return RedirectResponse("/admin/users", status_code=303)

    @app.get("/admin/audit")
    def audit_page(request: Request):
        with store.sessions() as session:
            rows = audit.entries(session, limit=500)
        return _page(request, "admin_audit.html.j2", {"rows": rows})

    @app.get("/admin/audit.csv")
    def audit_file():
        with store.sessions() as session:
            body = audit.audit_csv(audit.entries(session))
        headers = {"Content-Disposition": 'attachment; filename="audit.csv"'}
        return Response(body, media_type="text/csv", headers=headers)
