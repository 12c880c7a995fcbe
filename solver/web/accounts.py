"""Sign-in, sign-out and the admin pages (accounts and roles, the audit trail) of the
workspace. The guard (:mod:`solver.web.guard`) has already checked the account,
its role and the CSRF token of every request that reaches these routes but ``/login``.

- ``GET /login`` (the form, with its pre-session token: a cookie and the form's field,
  also in the response's ``X-CSRF-Token`` header for scripts), ``POST /login`` (refused
  from another site's Origin or Referer, without the pre-session token, and while the
  client is backing off: :mod:`solver.web.signin`), ``POST /logout``; ``GET /api/me``:
  the account, its role and its CSRF token (for scripts: send it as ``X-CSRF-Token``);
- ``GET /account``, ``POST /account/password``: one's own password (any role; the
  current password asked; one's other sessions end);
- ``GET /admin/users``, ``POST /admin/users`` (add), ``POST /admin/users/{id}/role``,
  ``POST /admin/users/{id}/password`` (reset: the admin sets a new one, the account's
  sessions end), ``POST /admin/users/{id}/active`` (disable or enable);
- ``GET /admin/audit`` and ``GET /admin/audit.csv``: the audit trail, oldest first.
"""

from __future__ import annotations

import secrets

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from solver.errors import ProcureError
from solver.web import audit, auth, signin
from solver.web.forms import read_form
from solver.web.guard import SESSION_COOKIE, current_user
from solver.web.store import ROLES, User


def _page(request: Request, name: str, context: dict, status: int = 200):
    return request.app.state.templates.TemplateResponse(request, name, context, status_code=status)


def _safe_next(target: str) -> str:
    """Only a path of this site (no ``//host`` or ``http://``): no open redirect."""
    bad = not target.startswith("/") or target.startswith(("//", "/\\")) or "\\" in target
    return "/" if bad else target


def _peer(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def client_key(request: Request) -> str:
    """The client a sign-in comes from (:func:`solver.web.signin.client_of`)."""
    forwarded = request.headers.getlist("x-forwarded-for")
    return signin.client_of(_peer(request), forwarded, request.app.state.trusted_proxies)


def _own_host(request: Request) -> str:
    proxies = request.app.state.trusted_proxies
    forwarded = request.headers.get("x-forwarded-host")
    if forwarded and signin.is_trusted(_peer(request), proxies):
        return forwarded.split(",")[0].strip()
    return request.headers.get("host", "")


def _login_cookie(request: Request) -> str:
    return request.cookies.get(signin.LOGIN_COOKIE) or secrets.token_urlsafe(32)


def _login_page(request: Request, context: dict, status: int = 200, headers=None):
    """The sign-in form with its pre-session token (a new cookie when it has none)."""
    cookie = _login_cookie(request)
    token = signin.login_token(request.app.state.secret_key, cookie)
    response = _page(request, "login.html.j2", {**context, "login_token": token}, status)
    response.headers["X-CSRF-Token"] = token
    for key, value in (headers or {}).items():
        response.headers[key] = value
    response.set_cookie(
        signin.LOGIN_COOKIE,
        cookie,
        max_age=auth.SESSION_HOURS * 3600,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/login",
    )
    return response


def _refused(request: Request, form, context: dict) -> Response | None:
    """The sign-in refused before any password is checked (another site, no pre-session
    token, a client backing off), else None."""
    state = request.app.state
    why = signin.foreign_origin(
        _own_host(request), request.headers.get("origin"), request.headers.get("referer")
    )
    if why is not None:
        return _login_page(request, {**context, "error": why + ": sign in on this site"}, 403)
    cookie = request.cookies.get(signin.LOGIN_COOKIE)
    if not signin.login_token_ok(state.secret_key, cookie, str(form.get("csrf_token") or "")):
        message = (
            "the sign-in form's token is missing or expired (or the form came from "
            "another site): reload the sign-in page and sign in again"
        )
        return _login_page(request, {**context, "error": message}, 403)
    wait_s, whose = state.rate_limit.wait_s(client_key(request), context["name"])
    if wait_s > 0:
        after = signin.retry_after(wait_s)
        who = "from this address" if whose == "client" else f"for {context['name']} from here"
        message = f"too many failed sign-ins {who}: try again in {after} s"
        return _login_page(request, {**context, "error": message}, 429, {"Retry-After": after})
    return None


def _sign_in(request: Request, form) -> Response:
    state = request.app.state
    name = str(form.get("name") or "").strip()
    password, target = str(form.get("password") or ""), str(form.get("next") or "/")
    context = {"name": name, "next": target}
    refused = _refused(request, form, context)
    if refused is not None:
        return refused
    client = client_key(request)
    with state.store.sessions() as session:
        user = auth.verify_password(session, name, password)
        if user is None:
            state.rate_limit.failed(client, name)
            return _login_page(request, {**context, "error": "wrong name or password"}, 401)
        token = auth.start_session(session, user)
        audit.record(session, user.name, "user.signin", f"user {user.name}", detail=client)
        session.commit()
    state.rate_limit.succeeded(client, name)
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
    response.delete_cookie(signin.LOGIN_COOKIE, path="/login")
    return response


def register(app: FastAPI) -> None:
    """Add the sign-in and admin routes to ``app``."""
    store = app.state.store

    @app.get("/login")
    def login_page(request: Request, next: str = "/"):
        return _login_page(request, {"name": "", "next": next, "error": None})

    @app.post("/login")
    async def login(request: Request):
        form = await read_form(request)
        return await run_in_threadpool(_sign_in, request, form)

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

    auth.add_rule(r"^/account/password$", set(ROLES))

    @app.get("/account")
    def account_page(request: Request):
        return _page(request, "account.html.j2", {"error": None, "done": False})

    @app.post("/account/password")
    async def change_password(request: Request):
        form = await read_form(request)
        viewer = current_user(request)

        def write() -> None:  # Argon2 checks and hashing: off the event loop
            new = str(form.get("new_password") or "")
            if new != str(form.get("repeat_password") or ""):
                raise ProcureError(
                    "the new password and its repeat differ",
                    field="repeat_password",
                    fix="type the same new password twice",
                )
            with store.sessions() as session:
                user = auth.verify_password(
                    session, viewer.name, str(form.get("current_password") or "")
                )
                if user is None:
                    raise ProcureError(
                        "the current password is wrong (or the account signs in through the "
                        "proxy only)",
                        field="current_password",
                        fix="type the password you signed in with",
                    )
                auth.set_password(session, user, new, viewer.name, viewer.session_token)

        try:
            await run_in_threadpool(write)
        except ProcureError as exc:
            error = {"message": str(exc), "field": exc.field or ""}
            return _page(request, "account.html.j2", {"error": error, "done": False}, 400)
        return _page(request, "account.html.j2", {"error": None, "done": True})

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
        form = await read_form(request)
        by = current_user(request).name

        def write() -> None:  # Argon2 hashing and the insert: off the event loop
            with store.sessions() as session:
                auth.add_user(
                    session,
                    str(form.get("name") or "").strip(),
                    str(form.get("role") or ""),
                    str(form.get("password") or ""),
                    by=by,
                )

        try:
            await run_in_threadpool(write)
        except ProcureError as exc:
            error = {"message": str(exc), "field": exc.field or ""}
            return _users_page(request, error, 400)
        return RedirectResponse("/admin/users", status_code=303)

    @app.post("/admin/users/{user_id}/role")
    async def change_role(request: Request, user_id: int):
        form = await read_form(request)
        by = current_user(request).name

        def write() -> None:
            with store.sessions() as session:
                user = session.get(User, user_id)
                if user is None:
                    raise HTTPException(404, f"no user {user_id}")
                auth.set_role(session, user, str(form.get("role") or ""), by)

        try:
            await run_in_threadpool(write)
        except ProcureError as exc:
            return _users_page(request, {"message": str(exc), "field": exc.field or ""}, 400)
        return RedirectResponse("/admin/users", status_code=303)

    def _admin_write(request: Request, user_id: int, change) -> Response:
        """Apply ``change(session, user, by)`` to account ``user_id``; its message on the
        accounts page when refused."""
        by = current_user(request).name
        try:
            with store.sessions() as session:
                user = session.get(User, user_id)
                if user is None:
                    raise HTTPException(404, f"no user {user_id}")
                change(session, user, by)
        except ProcureError as exc:
            return _users_page(request, {"message": str(exc), "field": exc.field or ""}, 400)
        return RedirectResponse("/admin/users", status_code=303)

    @app.post("/admin/users/{user_id}/password")
    async def reset_password(request: Request, user_id: int):
        form = await read_form(request)
        password = str(form.get("password") or "")

        def change(session, user, by):
            auth.set_password(session, user, password, by)

        return await run_in_threadpool(_admin_write, request, user_id, change)

    @app.post("/admin/users/{user_id}/active")
    async def set_active(request: Request, user_id: int):
        form = await read_form(request)
        active = str(form.get("active") or "") == "yes"

        def change(session, user, by):
            auth.set_active(session, user, active, by)

        return await run_in_threadpool(_admin_write, request, user_id, change)

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
