"""The audit trail: one append-only row per change of a problem, variant, plan
status, price file, quote, user or role, and per event a reviewer asks about (issue 51:
``job.solve``, ``job.sensitivity``, ``job.frontier``, ``job.two_stage``, ``export.*`` for
every download of orders and FOCUS files, ``user.signin``): who, when, what, and the
SHA-256 digests of the thing before and after (empty when it did not exist before, or no
longer exists after).

Any module that changes one of those calls :func:`record` in the same database session as
the change, so that the entry and the change are committed together or not at all. The
table refuses UPDATE, DELETE, TRUNCATE and a replacing INSERT (triggers of migrations 0005
and 0006).

Each row also stores a chained digest (:func:`chain_digest`): SHA-256 of the previous
row's chain digest and the row's canonical content (:func:`canonical`). Rows are appended
one at a time (:func:`record` holds a lock until its transaction ends), so the chain is a
line, and :func:`first_broken` finds the first row that was edited or whose predecessor
was removed, even by someone able to switch the triggers off.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from solver.web.store import AuditEntry
from solver.web.store.models import utc_now

#: the fields of a row its chain digest covers, in this order
CHAIN_FIELDS = (
    "id",
    "at",
    "user_name",
    "action",
    "entity",
    "before_sha256",
    "after_sha256",
    "detail",
)
#: the PostgreSQL advisory lock that appends to the audit trail one at a time
PG_CHAIN_LOCK = 0x70726F63

#: the CSV export's columns, in order
CSV_COLUMNS = (
    "id",
    "at_utc",
    "user",
    "action",
    "entity",
    "before_sha256",
    "after_sha256",
    "detail",
)


def digest(value) -> str:
    """SHA-256 of a text (as UTF-8), of bytes, or of anything JSON can write (keys sorted);
    '' for None (nothing there)."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        data = value
    elif isinstance(value, str):
        data = value.encode("utf-8")
    else:
        data = json.dumps(value, sort_keys=True, default=str).encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def record(
    session: Session,
    user: str,
    action: str,
    entity: str,
    before=None,
    after=None,
    detail: str = "",
) -> AuditEntry:
    """Add one audit entry to ``session`` (committed with the change it records).

    Parameters
    ----------
    user
        Who made the change (an account name; ``cli:NAME`` for the command line).
    action
        What was done, ``thing.verb``: e.g. ``problem.add``, ``plan.approve``, ``user.role``.
    entity
        Which thing, e.g. ``plan 3``, ``user alice``.
    before, after
        The thing before and after the change, digested with :func:`digest`.
    """
    previous_id, previous_chain = _last_link(session)
    entry = AuditEntry(
        id=_next_id(session, previous_id),
        at=utc_now(),
        user_name=user,
        action=action,
        entity=entity,
        before_sha256=digest(before),
        after_sha256=digest(after),
        detail=detail,
    )
    entry.chain_sha256 = chain_digest(previous_chain, _fields(entry))
    session.add(entry)
    session.flush()
    return entry


def record_alone(store, user: str, action: str, entity: str, detail: str = "") -> None:
    """Record an event that changes nothing stored (a solve asked for, an analysis queued,
    a download, a sign-in) in a transaction of its own.

    Parameters
    ----------
    store
        The workspace's :class:`~solver.web.store.Store`.
    user, action, entity, detail
        As :func:`record`; no digests (nothing before or after).
    """
    with store.sessions() as session:
        record(session, user, action, entity, detail=detail)
        session.commit()


def _last_link(session: Session) -> tuple[int, str]:
    """The newest row's id and chain digest (0 and '' when none), read under a lock held
    until the caller's transaction ends, so no other writer appends meanwhile."""
    session.flush()  # the change this entry records first (on SQLite: the write lock)
    connection = session.connection()
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": PG_CHAIN_LOCK})
    else:  # SQLite: a write statement takes the database's write lock for the transaction
        connection.execute(text("UPDATE settings SET value = value WHERE key = 'secret_key'"))
    row = connection.execute(
        text("SELECT id, chain_sha256 FROM audit_log ORDER BY id DESC LIMIT 1")
    ).first()
    return (int(row[0]), str(row[1])) if row is not None else (0, "")


def _next_id(session: Session, previous_id: int) -> int:
    """The new row's id, above the newest (PostgreSQL: from the table's sequence)."""
    connection = session.connection()
    if connection.dialect.name == "postgresql":
        nxt = connection.execute(
            text("SELECT nextval(pg_get_serial_sequence('audit_log', 'id'))")
        ).scalar_one()
        return max(int(nxt), previous_id + 1)
    return previous_id + 1


def _fields(entry: AuditEntry) -> dict:
    return {name: getattr(entry, name) for name in CHAIN_FIELDS}


def canonical(row: Mapping) -> str:
    """A row's content as the chain digests it: a JSON array of :data:`CHAIN_FIELDS` (the
    time as ISO 8601 UTC without zone, e.g. ``2026-12-02T02:25:09.123456``), compact,
    non-ASCII kept as UTF-8."""
    values = [row[name] for name in CHAIN_FIELDS]
    values[1] = values[1].isoformat()
    return json.dumps(values, ensure_ascii=False, separators=(",", ":"))


def chain_digest(previous_sha256: str, row: Mapping) -> str:
    """SHA-256 (hex) of the previous row's chain digest ('' for the first row), a newline
    and the row's :func:`canonical` content, as UTF-8."""
    data = (previous_sha256 + "\n" + canonical(row)).encode("utf-8")
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class ChainCheck:
    """What :func:`first_broken` found: rows checked, the last good link, and the first
    broken row (None: the chain is whole)."""

    rows: int
    last_id: int
    head_sha256: str
    broken_id: int | None = None
    reason: str = ""


def first_broken(rows: Iterable[AuditEntry]) -> ChainCheck:
    """Recompute the chain over ``rows`` (oldest first) and stop at the first row whose
    stored chain digest differs from the recomputed one."""
    previous, count, last_id = "", 0, 0
    for row in rows:
        expected = chain_digest(previous, _fields(row))
        if row.chain_sha256 != expected:
            reason = (
                "it has no chain digest"
                if not row.chain_sha256
                else "its content was changed, or the row before it was removed"
            )
            return ChainCheck(count, last_id, previous, row.id, reason)
        previous, count, last_id = expected, count + 1, row.id
    return ChainCheck(count, last_id, previous)


def entries(session: Session, limit: int | None = None) -> list[AuditEntry]:
    """The audit entries, oldest first (the newest ``limit`` when given)."""
    query = select(AuditEntry).order_by(AuditEntry.id)
    rows = session.scalars(query).all()
    return list(rows[-limit:]) if limit else list(rows)


def audit_csv(rows: list[AuditEntry]) -> str:
    """The entries as CSV (:data:`CSV_COLUMNS`), oldest first; text cells neutralised as in
    every CSV procure writes (a rejection comment starting ``=`` is not a formula)."""
    from solver.outputs.files import neutralise_cell

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for e in rows:
        writer.writerow(
            [
                neutralise_cell(v)
                for v in (
                    e.id,
                    e.at.isoformat(timespec="seconds") + "Z",
                    e.user_name,
                    e.action,
                    e.entity,
                    e.before_sha256,
                    e.after_sha256,
                    e.detail,
                )
            ]
        )
    return out.getvalue()
