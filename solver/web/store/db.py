"""Open the workspace database: upgrade it with the shipped Alembic migrations, then hand
out sessions.

URLs: ``sqlite:///path/to/workspace.db`` (the default, a file), or a PostgreSQL server
``postgresql+psycopg://user@host:5432/name`` (``postgresql://`` is read the same way).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from solver.errors import ProcureError

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
#: the default database: a file beside the workspace (the folder ``procure serve`` runs in)
DEFAULT_DB_FILE = "procure-workspace.db"


@dataclass(frozen=True)
class Store:
    """An open database: its engine and a session factory."""

    engine: Engine
    sessions: sessionmaker[Session]

    @property
    def url(self) -> str:
        return self.engine.url.render_as_string(hide_password=True)

    @property
    def label(self) -> str:
        """The database as messages name it (no user, password, host or folder)."""
        from solver.web.redact import store_label

        return store_label(self.engine.url)


def normalise_url(url: str) -> str:
    """``postgresql://`` and ``postgres://`` as the psycopg 3 driver; a bare path as a
    SQLite file."""
    if "://" not in url:
        return f"sqlite:///{Path(url).resolve()}"
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def _engine(url: str) -> Engine:
    """The engine of ``url``; a URL that cannot be read is refused naming ``--db`` (and
    never quoting the URL: it may hold a password)."""
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    try:
        return _make_engine(url)
    except (ArgumentError, NoSuchModuleError, ValueError) as exc:
        from solver.web.redact import redact

        reason = redact(str(exc).strip().splitlines()[0]) if str(exc).strip() else "unreadable"
        raise ProcureError(
            f"the database URL cannot be read: {reason}",
            field="--db",
            fix="use sqlite:///FILE (the default) or postgresql://user@host:5432/name",
        ) from None


def _make_engine(url: str) -> Engine:
    url = normalise_url(url)
    if not url.startswith(("sqlite", "postgresql")):
        raise ProcureError(
            f"unsupported database URL {url.split('://')[0]}://...",
            field="--db",
            fix="use sqlite:///FILE (the default) or postgresql://user@host:5432/name",
        )
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_connection, _record) -> None:  # a writer never blocks readers
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        return engine
    return create_engine(url, pool_pre_ping=True)


def upgrade(engine: Engine) -> None:
    """Bring the database to the newest migration (Alembic ``upgrade head``)."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def open_store(url: str) -> Store:
    """Open (and upgrade) the database at ``url``.

    Raises
    ------
    ProcureError
        The URL's kind is not supported, or the server cannot be reached (the message
        names ``--db`` and what to check).
    """
    from sqlalchemy.exc import OperationalError

    engine = _engine(url)
    try:
        upgrade(engine)
    except OperationalError as exc:
        from solver.web.redact import redact

        reason = redact(str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc))
        raise ProcureError(
            f"cannot open the database: {reason}",
            field="--db",
            fix="check the URL, that the server runs and the database exists "
            "(sqlite:///FILE needs a folder you can write)",
        ) from None
    return Store(engine, sessionmaker(engine, expire_on_commit=False))
