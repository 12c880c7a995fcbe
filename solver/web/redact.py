"""No connection string in any message: database URLs (with their user, password, host
and port) are replaced by a placeholder in every text a page, an API answer or a command
shows; a store is named by :func:`store_label` (its kind and database name only)."""

from __future__ import annotations

import re
from pathlib import PurePath

from sqlalchemy.engine import URL

#: a database URL: a known scheme (with or without a driver) and everything up to a space
#: or a quote
_DB_URL = re.compile(
    r"\b(?:sqlite|postgres(?:ql)?|mysql|mariadb|oracle|mssql)(?:\+[\w-]+)?://[^\s'\"<>]*",
    re.IGNORECASE,
)
PLACEHOLDER = "<database URL>"


def redact(text: str) -> str:
    """``text`` with every database URL replaced by :data:`PLACEHOLDER`."""
    return _DB_URL.sub(PLACEHOLDER, text)


def store_label(url: URL) -> str:
    """A store as messages name it: ``SQLite file workspace.db`` or ``PostgreSQL database
    procure`` (never its user, password, host, port or folder)."""
    if url.get_backend_name() == "sqlite":
        return f"SQLite file {PurePath(url.database or 'memory').name}"
    return f"{url.get_backend_name()} database {url.database or ''}".strip()
