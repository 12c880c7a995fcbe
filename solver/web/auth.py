"""Accounts, sessions, CSRF tokens and the role rules of the workspace; the
sign-in's back-off, origin check and pre-session token are in :mod:`solver.web.signin`.
Plain functions on a database session; the HTTP side (the global guard that applies them
to every request) is :mod:`solver.web.guard`.

- Passwords are hashed with Argon2id (argon2-cffi's defaults, RFC 9106's second
  recommended option: t=3, m=64 MiB, p=4); an account without a hash (made for the
  trusted proxy header) cannot sign in with a password.
- A session is a random 256-bit token in an HttpOnly SameSite cookie; the database keeps
  only its SHA-256, and signing out ends it for good.
- A CSRF token is HMAC-SHA256(secret key, session) : the secret key is made on the first
  start and kept in the database's ``settings`` table, never in the repository.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from datetime import timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from solver.errors import ProcureError
from solver.web import audit
from solver.web.store import ROLES, Setting, User, WebSession
from solver.web.store.models import utc_now

#: sessions older than this are refused (sign in again)
SESSION_HOURS = 12
#: the shortest password accepted (NIST SP 800-63B section 5.1.1.2: at least 8 characters)
MIN_PASSWORD_CHARS = 8
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$")

_HASHER = None


def hasher():
    global _HASHER
    if _HASHER is None:
        from argon2 import PasswordHasher

        _HASHER = PasswordHasher()
    return _HASHER


def check_role(role: str, field: str = "--role") -> str:
    if role not in ROLES:
        raise ProcureError(f"unknown role {role!r}", field=field, fix=f"one of {', '.join(ROLES)}")
    return role


def _check_password(password: str, field: str) -> None:
    if len(password) < MIN_PASSWORD_CHARS:
        raise ProcureError(
            f"the password has {len(password)} characters",
            field=field,
            fix=f"use at least {MIN_PASSWORD_CHARS} characters",
        )


def add_user(
    session: Session, name: str, role: str, password: str | None, by: str, field: str = "password"
) -> User:
    """Add an account (``password`` None: only the trusted proxy header can sign it in),
    with its audit entry; committed."""
    if not NAME_PATTERN.match(name or ""):
        raise ProcureError(
            f"{name!r} is not a user name",
            field="name",
            fix="letters, digits and . _ @ - (up to 100), starting with a letter or digit",
        )
    check_role(role, "role" if field == "password" else "--role")
    if session.scalar(select(User).where(User.name == name)) is not None:
        raise ProcureError(
            f"user {name!r} exists", field="name", fix="choose another name, or change its role"
        )
    if password is not None:
        _check_password(password, field)
    user = User(
        name=name,
        role=role,
        password_hash=hasher().hash(password) if password is not None else "",
        created_by=by,
    )
    session.add(user)
    audit.record(session, by, "user.add", f"user {name}", None, {"name": name, "role": role})
    session.commit()
    return user


def set_role(session: Session, user: User, role: str, by: str) -> None:
    """Change an account's role (its audit entry with it); committed."""
    check_role(role, "role")
    admins = session.scalar(
        select(func.count()).select_from(User).where(User.role == "admin", User.active)
    )
    if user.role == "admin" and role != "admin" and admins <= 1:
        raise ProcureError(
            f"{user.name} is the only admin", field="role", fix="make another account admin first"
        )
    before = {"name": user.name, "role": user.role}
    user.role = role
    audit.record(
        session, by, "role.change", f"user {user.name}", before, {"name": user.name, "role": role},
        detail=f"{before['role']} -> {role}",
    )  # fmt: skip
    session.commit()


def set_password(
    session: Session, user: User, password: str, by: str, keep_token: str = ""
) -> None:
    """Give ``user`` a new password (their own change, or an admin's reset) and end their
    sessions but the one of ``keep_token`` (the browser that changed it); audited as
    ``user.password`` (own) or ``user.reset`` (by someone else); committed.

    Raises
    ------
    ProcureError
        The password is shorter than :data:`MIN_PASSWORD_CHARS`.
    """
    _check_password(password, "password")
    user.password_hash = hasher().hash(password)
    _end_sessions(session, user, keep_token)
    action = "user.password" if by == user.name else "user.reset"
    audit.record(session, by, action, f"user {user.name}")
    session.commit()


def set_active(session: Session, user: User, active: bool, by: str) -> None:
    """Enable or disable an account (a disabled one cannot sign in and its sessions end);
    audited as ``user.enable`` or ``user.disable``; committed.

    Raises
    ------
    ProcureError
        Disabling oneself, or the only active admin.
    """
    if not active and user.name == by:
        raise ProcureError(
            "you cannot disable your own account", field="active", fix="ask another admin"
        )
    admins = (
        session.scalar(
            select(func.count()).select_from(User).where(User.role == "admin", User.active)
        )
        or 0
    )
    if not active and user.role == "admin" and user.active and admins <= 1:
        raise ProcureError(
            f"{user.name} is the only active admin",
            field="active",
            fix="make another account admin first",
        )
    before = {"name": user.name, "active": user.active}
    user.active = active
    if not active:
        _end_sessions(session, user, "")
    after = {"name": user.name, "active": active}
    action = "user.enable" if active else "user.disable"
    audit.record(session, by, action, f"user {user.name}", before, after)
    session.commit()


def _end_sessions(session: Session, user: User, keep_token: str) -> None:
    keep = _sha(keep_token) if keep_token else ""
    rows = session.scalars(
        select(WebSession).where(WebSession.user_id == user.id, WebSession.ended_at.is_(None))
    )
    for row in rows:
        if row.token_sha256 != keep:
            row.ended_at = utc_now()


def verify_password(session: Session, name: str, password: str) -> User | None:
    """The active account ``name`` when ``password`` is its password, else None (the hash
    is checked even for an unknown name, so that timing does not tell names apart)."""
    from argon2.exceptions import InvalidHashError, VerificationError

    user = session.scalar(select(User).where(User.name == name))
    stored = user.password_hash if user is not None and user.password_hash else _dummy_hash()
    try:
        hasher().verify(stored, password)
    except (VerificationError, InvalidHashError):
        return None
    if user is None or not user.active or not user.password_hash:
        return None
    return user


_DUMMY: list[str] = []


def _dummy_hash() -> str:
    if not _DUMMY:
        _DUMMY.append(hasher().hash(secrets.token_hex(16)))
    return _DUMMY[0]


def secret_key(session: Session) -> str:
    """The workspace's secret key, made (256 random bits) and stored on the first call."""
    row = session.get(Setting, "secret_key")
    if row is None:
        row = Setting(key="secret_key", value=secrets.token_hex(32))
        session.add(row)
        session.commit()
    return row.value


def _sha(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def start_session(session: Session, user: User) -> str:
    """A new session for ``user``: the cookie's token (only its digest is stored)."""
    token = secrets.token_urlsafe(32)
    session.add(WebSession(token_sha256=_sha(token), user_id=user.id))
    session.commit()
    return token


def end_session(session: Session, token: str) -> None:
    """Sign out: the session can never be used again."""
    row = session.scalar(select(WebSession).where(WebSession.token_sha256 == _sha(token)))
    if row is not None and row.ended_at is None:
        row.ended_at = utc_now()
        session.commit()


def user_of_session(session: Session, token: str) -> User | None:
    """The active account of a live session token, else None (ended, expired, unknown)."""
    row = session.scalar(select(WebSession).where(WebSession.token_sha256 == _sha(token)))
    if row is None or row.ended_at is not None:
        return None
    if utc_now() - row.created_at > timedelta(hours=SESSION_HOURS):
        return None
    user = session.get(User, row.user_id)
    return user if user is not None and user.active else None


def user_by_name(session: Session, name: str) -> User | None:
    user = session.scalar(select(User).where(User.name == name))
    return user if user is not None and user.active else None


def csrf_token(secret: str, key: str) -> str:
    """The CSRF token of a session (``key``: its cookie token, or ``proxy:NAME``)."""
    return hmac.new(secret.encode(), ("csrf:" + key).encode(), hashlib.sha256).hexdigest()


def csrf_ok(secret: str, key: str, given: str | None) -> bool:
    return bool(given) and hmac.compare_digest(csrf_token(secret, key), given)


#: who may make a state-changing request, first match wins; anything not listed:
#: infra, finance, admin (a viewer changes nothing). Other modules add rules with
#: :func:`add_rule` (e.g. approvals: only finance and infra approve).
RULES: list[tuple[re.Pattern, frozenset[str]]] = [
    (re.compile(r"^/logout$"), frozenset(ROLES)),
    (re.compile(r"^/admin(/|$)"), frozenset({"admin"})),
]
DEFAULT_WRITERS = frozenset({"infra", "finance", "admin"})
#: pages only some roles may read (GET); anything else any signed-in account reads
READ_RULES: list[tuple[re.Pattern, frozenset[str]]] = [
    (re.compile(r"^/admin(/|$)"), frozenset({"admin"})),
]


def add_rule(pattern: str, roles: set[str], read: bool = False) -> None:
    """A rule before the others (once: a second app adding the same rule changes nothing)."""
    rules = READ_RULES if read else RULES
    rule = (re.compile(pattern), frozenset(roles))
    if rule not in rules:
        rules.insert(0, rule)


def roles_for(method: str, path: str) -> frozenset[str]:
    """The roles that may ``method`` ``path``: the first rule that matches, else every
    role for a read and :data:`DEFAULT_WRITERS` for a change."""
    state_changing = method not in ("GET", "HEAD", "OPTIONS")
    for pattern, roles in RULES if state_changing else READ_RULES:
        if pattern.search(path):
            return roles
    return DEFAULT_WRITERS if state_changing else frozenset(ROLES)


def allowed(role: str, method: str, path: str) -> bool:
    """Whether ``role`` may ``method`` ``path`` (the server's check, whatever a page shows)."""
    return role in roles_for(method, path)


def may(role: str, method: str, path: str) -> bool:
    """:func:`allowed`, for templates: whether to show a button that requests ``path``."""
    return allowed(role, method, path)


def needed_roles_text(method: str, path: str) -> str:
    """The roles that may ``method`` ``path`` in words, least to most: ``infra, finance or
    admin``."""
    names = [r for r in ROLES if r in roles_for(method, path)]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
