"""Faults answered as messages, never as a bare 500 or a traceback.

- A database that cannot do what a request asks (read-only, disk full, locked, gone):
  503 with what happened and what to do (:func:`describe_fault`), as a page or as JSON
  under ``/api/``, with ``Retry-After``; the message never carries the database URL, the
  SQL or the driver's text. A unique constraint that a concurrent request won: 409.
  Raised in a route (the exception handler) or in the global guard before it (the
  outermost middleware, :class:`DatabaseFaults`).
- Ids: every integer path or query parameter of every route is a row id, a whole number
  from 1 to :data:`MAX_ID` (a signed 64-bit integer, the widest id either database
  stores); anything else (``-1``, ``0``, ``2**70``, ``abc``) is a 404 naming it
  (:func:`ids_in_range`, a dependency of the whole app), before the route or the
  database sees it.
"""

from __future__ import annotations

import json
import re
import types
import typing
from dataclasses import dataclass

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

#: the largest id a row can have (SQLite INTEGER and PostgreSQL BIGINT: signed 64 bits)
MAX_ID = 2**63 - 1
#: seconds a client is told to wait before trying again after a 503
RETRY_AFTER_S = 5
_DIGITS = re.compile(r"[0-9]{1,19}")


@dataclass(frozen=True)
class Fault:
    """What a database error means for the person who met it."""

    status: int
    message: str
    fix: str

    def text(self) -> str:
        return f"{self.message}\n  fix: {self.fix}"


def _reason(exc: BaseException) -> tuple[str, str]:
    """The driver's SQLSTATE (PostgreSQL; '' for SQLite) and its message, lowercased."""
    orig = getattr(exc, "orig", None) or exc
    return str(getattr(orig, "sqlstate", "") or ""), str(orig).lower()


def describe_fault(exc: BaseException) -> Fault:
    """The status, message and fix of a database error (409 for a unique constraint a
    concurrent request won; 503 for the rest). Nothing of the error's own text is copied:
    it may hold the URL, the SQL or the values."""
    if isinstance(exc, IntegrityError):
        return Fault(
            409,
            "this clashes with something stored meanwhile (the same name, or the same plan)",
            "reload the page: what was stored is there; then try again if still needed",
        )
    state, text = _reason(exc)
    if state == "25006" or "readonly" in text or "read-only" in text:
        return Fault(
            503,
            "the workspace database is read-only: nothing can be saved",
            "make the database writable by the server (for SQLite the file and its "
            "folder), or restart procure serve with --db on a writable database",
        )
    if state == "53100" or "disk is full" in text or "no space" in text:
        return Fault(
            503,
            "the disk of the workspace database is full: nothing can be saved",
            "free space where the database is stored, then try again",
        )
    if state in ("55P03", "40P01", "40001") or "locked" in text or "busy" in text:
        return Fault(
            503,
            "the workspace database is busy (another writer holds a lock)",
            f"try again in {RETRY_AFTER_S} seconds; if it lasts, look for another program "
            "holding the database open",
        )
    if "not a database" in text or "malformed" in text:
        return Fault(
            503,
            "the workspace database file is damaged or not a database",
            "restore it from a backup, or restart procure serve with --db on another file",
        )
    return Fault(
        503,
        "the workspace database did not answer",
        "try again in a moment; if it lasts, check that the database server runs and "
        "that procure serve --db names it",
    )


DATABASE_ERRORS = (DBAPIError, PoolTimeoutError)


def _is_api(path: str) -> bool:
    return path.startswith("/api/")


def _fault_response(request: Request, fault: Fault):
    headers = {"Retry-After": str(RETRY_AFTER_S)} if fault.status == 503 else {}
    if _is_api(request.url.path):
        body = {"error": fault.message, "fix": fault.fix}
        return JSONResponse(body, status_code=fault.status, headers=headers)
    context = {"message": fault.text()}
    return request.app.state.templates.TemplateResponse(
        request, "error.html.j2", context, status_code=fault.status, headers=headers
    )


class DatabaseFaults:
    """Outermost ASGI middleware: a database error raised before any route (in the global
    guard's sign-in lookup) answered as :func:`describe_fault` says, in plain text or
    JSON; one raised after the response started is left alone (nothing can be said)."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = False

        async def tracked(message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except DATABASE_ERRORS as exc:
            if started:
                raise
            fault = describe_fault(exc)
            if _is_api(scope["path"]):
                body = json.dumps({"error": fault.message, "fix": fault.fix}).encode()
                media = b"application/json"
            else:
                body, media = fault.text().encode(), b"text/plain; charset=utf-8"
            headers = [(b"content-type", media), (b"content-length", str(len(body)).encode())]
            if fault.status == 503:
                headers.append((b"retry-after", str(RETRY_AFTER_S).encode()))
            await send({"type": "http.response.start", "status": fault.status, "headers": headers})
            await send({"type": "http.response.body", "body": body})


def _is_int(annotation: object) -> bool:
    """``int``, ``int | None`` or ``Optional[int]``."""
    if annotation is int:
        return True
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args == [int]
    return False


def valid_id(raw: str) -> bool:
    """Whether ``raw`` is a row id: digits only, 1 to :data:`MAX_ID`."""
    return bool(_DIGITS.fullmatch(raw)) and 1 <= int(raw) <= MAX_ID


def ids_in_range(request: Request) -> None:
    """Refuse (404) a route's integer path or query parameter that is not a row id
    (:func:`valid_id`); a dependency of the whole app, run before the route's own."""
    route = request.scope.get("route")
    dependant = getattr(route, "dependant", None)
    if dependant is None:
        return
    given = [(p, request.path_params.get(p.name)) for p in dependant.path_params]
    given += [(p, request.query_params.get(p.alias)) for p in dependant.query_params]
    for param, raw in given:
        if raw is None or not _is_int(param.field_info.annotation):
            continue
        if not valid_id(str(raw)):
            what = param.name.removesuffix("_id").replace("_", " ")
            shown = raw if len(raw) <= 40 else raw[:40] + "..."
            raise HTTPException(404, f"no {what} {shown!r}: an id is a whole number from 1")


def register(app: FastAPI) -> None:
    """Answer database errors as :func:`describe_fault` says, in routes and before them.
    Call after every other middleware is added (this one must be the outermost)."""

    @app.exception_handler(DBAPIError)
    async def _database_error(request: Request, exc: DBAPIError):
        return _fault_response(request, describe_fault(exc))

    @app.exception_handler(PoolTimeoutError)
    async def _pool_timeout(request: Request, exc: PoolTimeoutError):
        return _fault_response(request, describe_fault(exc))

    app.add_middleware(DatabaseFaults)
