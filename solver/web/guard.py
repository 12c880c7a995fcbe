"""The workspace's global guard: one ASGI middleware in front of every route,
so that a route added later is covered without doing anything.

For every request it

1. bounds the body (:data:`MAX_BODY_BYTES`, by Content-Length before reading and while
   reading), so an oversized upload is refused (413) before anything parses it;
2. lets through only the open paths (sign-in, health check, static files) without an
   account; anyone else is sent to sign in (pages: 303) or refused (API and
   state-changing requests: 401);
3. on a state-changing request (POST, PUT, PATCH, DELETE) checks the CSRF token (form
   field ``csrf_token`` or header ``X-CSRF-Token``) and the role rules of
   :func:`solver.web.auth.allowed` (403 when either fails);
4. adds the security headers to every response (``Cache-Control: no-store`` to every
   one but the vendored static files: no page or download is kept by a browser or a
   proxy cache), and to every HTML page's POST forms a hidden field with the session's
   CSRF token (pages need not do it themselves).

The signed-in account is in ``request.scope["procure.user"]`` (:func:`current_user`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from urllib.parse import parse_qs, quote

from anyio import to_thread

from solver.web import auth

#: the largest request body accepted (1 MB: the seed problem is 3 kB)
MAX_BODY_BYTES = 1_000_000
SESSION_COOKIE = "procure_session"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = b"x-csrf-token"
OPEN_PATHS = ("/login", "/health")
OPEN_PREFIXES = ("/static/",)
STATE_CHANGING = ("POST", "PUT", "PATCH", "DELETE")
#: Content-Security-Policy: scripts only from the app's own (vendored) files, no inline
#: script; no framing (clickjacking); forms post only back to the app
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
]
#: every response but the static files: kept by no cache (pages and downloads hold plans,
#: prices and the audit trail, and survive sign-out in a shared browser's cache otherwise)
NO_STORE = (b"cache-control", b"no-store")
_POST_FORM = re.compile(rb"(<form\b[^>]*\bmethod=\"post\"[^>]*>.*?)(</form>)", re.I | re.S)


@dataclass(frozen=True)
class Viewer:
    """The signed-in account as the routes see it (plain data, no database session)."""

    id: int
    name: str
    role: str
    csrf: str
    session_token: str = ""


def current_user(request) -> Viewer:
    """The signed-in account of a request (the guard has put it there)."""
    return request.scope["procure.user"]


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return None


def _cookie(scope, name: str) -> str | None:
    raw = _header(scope, b"cookie") or ""
    for part in raw.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


async def _plain(send, status: int, message: str, headers=(), api: bool = False) -> None:
    if api:
        body, media = json.dumps({"error": message}).encode(), b"application/json"
    else:
        body, media = message.encode("utf-8"), b"text/plain; charset=utf-8"
    start = [(b"content-type", media), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": [*start, *headers]})
    await send({"type": "http.response.body", "body": body})


async def _read_body(receive) -> tuple[bytes | None, list]:
    """The whole body, or None once it passes :data:`MAX_BODY_BYTES`."""
    chunks, size, messages = [], 0, []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return b"".join(chunks), messages
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None, messages
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), messages


def _form_token(scope, body: bytes) -> str | None:
    given = _header(scope, CSRF_HEADER)
    if given:
        return given
    media = (_header(scope, b"content-type") or "").lower()
    if media.startswith("application/x-www-form-urlencoded"):
        values = parse_qs(body.decode("utf-8", "replace")).get(CSRF_FIELD)
        return values[0] if values else None
    if media.startswith("multipart/form-data"):
        found = re.search(rb'name="csrf_token"\r\n\r\n([0-9a-f]{64})\r\n', body)
        return found.group(1).decode() if found else None
    return None


class Guard:
    """The ASGI middleware (see the module's docstring); ``app.state`` holds the store,
    the secret key, the rate limit and the trusted proxy header (None: off)."""

    def __init__(self, app, web):
        self.app, self.web = app, web

    def _identify(self, scope) -> Viewer | None:
        state = self.web.state
        with state.store.sessions() as session:
            header = state.trusted_user_header
            name = _header(scope, header.lower().encode()) if header else None
            if name:
                user, key = auth.user_by_name(session, name.strip()), "proxy:" + name.strip()
            else:
                token = _cookie(scope, SESSION_COOKIE)
                user = auth.user_of_session(session, token) if token else None
                key = token or ""
            if user is None:
                return None
            csrf = auth.csrf_token(state.secret_key, key)
            return Viewer(user.id, user.name, user.role, csrf, "" if name else key)

    async def __call__(self, scope, receive, send):  # noqa: C901 - the steps in order
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path, method = scope["path"], scope["method"]
        api = path.startswith("/api/")
        send = _secured(send, cache=path.startswith(OPEN_PREFIXES))
        body = b""
        if method in STATE_CHANGING:
            length = _header(scope, b"content-length")
            if length and length.isdigit() and int(length) > MAX_BODY_BYTES:
                return await _plain(send, 413, _too_large(int(length)), api=api)
            body, messages = await _read_body(receive)
            if body is None:
                return await _plain(send, 413, _too_large(None), api=api)
            receive = _replay(messages)
        if path in OPEN_PATHS or path.startswith(OPEN_PREFIXES):
            return await self.app(scope, receive, send)
        viewer = await to_thread.run_sync(self._identify, scope)
        if viewer is None:
            if method in ("GET", "HEAD") and not api:
                target = "/login?next=" + quote(path)
                return await _plain(send, 303, "sign in", [(b"location", target.encode())])
            return await _plain(send, 401, "sign in first (POST /login)", api=api)
        scope["procure.user"] = viewer
        if method in STATE_CHANGING and not auth.csrf_ok(
            self.web.state.secret_key, _key(viewer, scope), _form_token(scope, body)
        ):
            return await _plain(
                send, 403, "missing or wrong CSRF token: reload the page and try again", api=api
            )
        if not auth.allowed(viewer.role, method, path):
            message = f"the {viewer.role} role may not {method} {path}"
            if api:
                return await _plain(send, 403, message, api=True)
            return await self._forbidden(send, viewer, method, path, message)
        await self.app(scope, receive, _with_csrf(send, viewer.csrf))

    async def _forbidden(self, send, viewer: Viewer, method: str, path: str, message: str):
        """The styled 403 page: what was refused, the role it needs, who is signed in."""
        needed = auth.needed_roles_text(method, path)
        body = (
            self.web.state.templates.env.get_template("forbidden.html.j2")
            .render(message=message, needed=needed, viewer=viewer, path=path)
            .encode("utf-8")
        )
        start = [
            (b"content-type", b"text/html; charset=utf-8"),
            (b"content-length", str(len(body)).encode()),
        ]
        await send({"type": "http.response.start", "status": 403, "headers": start})
        await send({"type": "http.response.body", "body": body})


def _key(viewer: Viewer, scope) -> str:
    return viewer.session_token or "proxy:" + viewer.name


def _too_large(size: int | None) -> str:
    got = f"{size:,} bytes" if size is not None else "more"
    return f"the request body has {got}: the limit is {MAX_BODY_BYTES:,} bytes"


def _replay(messages: list):
    queue = list(messages)

    async def receive():
        if queue:
            return queue.pop(0)
        return {"type": "http.disconnect"}

    return receive


def _secured(send, cache: bool = False):
    """Add :data:`SECURITY_HEADERS` (and :data:`NO_STORE`, replacing any other
    ``Cache-Control``, unless ``cache``) to a response."""

    async def wrapped(message):
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            if not cache:
                headers = [(k, v) for k, v in headers if k.lower() != NO_STORE[0]]
                headers.append(NO_STORE)
            names = {k.lower() for k, _ in headers}
            extra = [(k, v) for k, v in SECURITY_HEADERS if k not in names]
            message = {**message, "headers": [*headers, *extra]}
        await send(message)

    return wrapped


def _with_csrf(send, token: str):
    """Add the CSRF field to every POST form of an HTML response, just before its
    ``</form>`` (the response is buffered to do so)."""
    field = f'<input type="hidden" name="{CSRF_FIELD}" value="{token}">'.encode()
    held: dict = {}

    async def wrapped(message):
        if message["type"] == "http.response.start":
            media = dict(message.get("headers", [])).get(b"content-type", b"")
            if media.startswith(b"text/html"):
                held["start"], held["body"] = message, []
                return
            return await send(message)
        if "start" not in held or message["type"] != "http.response.body":
            return await send(message)
        held["body"].append(message.get("body", b""))
        if message.get("more_body", False):
            return
        body = _POST_FORM.sub(lambda m: m.group(1) + field + m.group(2), b"".join(held["body"]))
        headers = [(k, v) for k, v in held["start"]["headers"] if k != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        await send({**held["start"], "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return wrapped
