"""The audit trail (issue 31): one append-only row per change of a problem, variant, plan
status, price file, quote, user or role: who, when, what, and the SHA-256 digests of the
thing before and after (empty when it did not exist before, or no longer exists after).

Any module that changes one of those calls :func:`record` in the same database session as
the change, so that the entry and the change are committed together or not at all. The
table refuses UPDATE and DELETE (triggers of migration 0005).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json

from sqlalchemy import select
from sqlalchemy.orm import Session

from solver.web.store import AuditEntry

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
    entry = AuditEntry(
        user_name=user,
        action=action,
        entity=entity,
        before_sha256=digest(before),
        after_sha256=digest(after),
        detail=detail,
    )
    session.add(entry)
    return entry


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
