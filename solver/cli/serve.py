"""``procure serve``: the workspace in the browser (solver/web; README, "Workspace")."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from solver.cli.common import CatalogOpt, DebugOpt, _run, app
from solver.errors import ProcureError

#: the problem an empty workspace starts with (the README's seed scenario)
SEED = Path(__file__).resolve().parents[2] / "problems" / "seed-2m-13b.yaml"


def seed_if_empty(store, seed: Path = SEED) -> bool:
    """Add the seed problem to a workspace without problems; True when it did."""
    from sqlalchemy import func, select

    from solver.web.store import ProblemRecord
    from solver.web.workspace import add_problem

    if not seed.is_file():
        return False
    with store.sessions() as session:
        if session.scalar(select(func.count()).select_from(ProblemRecord)):
            return False
        add_problem(session, seed.read_text(encoding="utf-8"))
    return True


def first_admin(store) -> str:
    """Make the account ``admin`` (role admin) with a random password, returned: an empty
    workspace is otherwise one nobody can sign in to."""
    import secrets

    from solver.web import auth

    password = secrets.token_urlsafe(12)  # 96 random bits
    with store.sessions() as session:
        auth.add_user(session, "admin", "admin", password, by="procure serve (first start)")
    return password


def has_users(store) -> bool:
    from sqlalchemy import func, select

    from solver.web.store import User

    with store.sessions() as session:
        return bool(session.scalar(select(func.count()).select_from(User)))


@contextmanager
def database_refusal():
    """A database that cannot be opened, migrated or written at start: one message naming
    ``--db`` and what to do (:func:`solver.web.faults.describe_fault`; never the URL, the
    SQL or a traceback), exit 2."""
    from alembic.util import CommandError

    from solver.web.faults import DATABASE_ERRORS, describe_fault

    try:
        yield
    except DATABASE_ERRORS as exc:
        fault = describe_fault(exc)
        raise ProcureError(
            f"cannot start on this database: {fault.message}", field="--db", fix=fault.fix
        ) from None
    except CommandError as exc:  # a revision this version of procure does not know
        first = str(exc).splitlines()[0] if str(exc) else "unknown revision"
        raise ProcureError(
            f"cannot migrate this database ({first})",
            field="--db",
            fix="use the procure version that made it, or another database",
        ) from None


def check_can_listen(host: str, port: int) -> None:
    """Refuse with one message a port the server could not listen on (in use, or not
    allowed), before the database is opened."""
    import socket

    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
            probe.bind((host, port))
    except OSError as exc:
        raise ProcureError(
            f"cannot listen on {host}:{port} ({exc.strerror or exc})",
            field="--port",
            fix="stop what uses that port, or choose another with --port (or --host)",
        ) from None


def _first_start(web, seed: bool, trusted_user_header: str | None) -> None:
    """Seed an empty workspace, say which jobs were interrupted, make the first admin."""
    if seed and seed_if_empty(web.state.store):
        typer.echo(f"added the seed problem ({SEED.name})")
    if web.state.interrupted_at_start:
        typer.echo(f"{web.state.interrupted_at_start} job(s) left running were interrupted")
    if not has_users(web.state.store):
        if trusted_user_header:
            typer.echo("no accounts yet: add one with procure users add NAME --role admin")
        else:  # the first start: one admin to sign in with (as Jupyter prints its token)
            password = first_admin(web.state.store)
            typer.echo(
                f"first start: made the account admin (role admin), password {password} "
                "(shown once; add people with procure users add NAME --role ROLE)"
            )


@app.command()
def serve(
    db: Annotated[
        str | None,
        typer.Option(
            help="Database URL: sqlite:///FILE or postgresql://user@host:5432/name "
            "(default: procure-workspace.db in this folder)"
        ),
    ] = None,
    port: Annotated[int, typer.Option(help="TCP port")] = 8000,
    host: Annotated[
        str, typer.Option(help="Address to listen on (0.0.0.0: every interface)")
    ] = "127.0.0.1",
    scheduler: Annotated[
        str | None,
        typer.Option(help="Dask scheduler (tcp://host:8786) for the jobs; default a local cluster"),
    ] = None,
    catalog: CatalogOpt = None,
    trusted_user_header: Annotated[
        str | None,
        typer.Option(
            help="Off by default. Sign people in by this header (e.g. X-Forwarded-User) set "
            "by a reverse proxy that authenticates them; only behind such a proxy"
        ),
    ] = None,
    approvals: Annotated[
        str,
        typer.Option(help="Approvals a plan needs, by role (finance and infra)"),
    ] = "finance=1,infra=1",
    trusted_proxies: Annotated[
        str | None,
        typer.Option(
            help="Off by default. Reverse proxies (addresses or networks, comma-separated) "
            "whose X-Forwarded-For and X-Forwarded-Host are believed (sign-in back-off, "
            "origin check); from anyone else those headers are ignored"
        ),
    ] = None,
    seed: Annotated[
        bool, typer.Option("--seed/--no-seed", help="Start an empty workspace with the seed")
    ] = True,
    instance: Annotated[
        str | None,
        typer.Option(
            help="This server's name, kept across restarts (default HOST:PORT): at its "
            "start it marks interrupted only the jobs its earlier run left open (and "
            "those of servers gone silent), not those of other servers on the database"
        ),
    ] = None,
    debug: DebugOpt = False,
) -> None:
    """Start the workspace: problems, variants, plans and comparisons in the browser."""

    def body() -> None:
        import uvicorn

        from solver.web.app import create_app
        from solver.web.store.db import DEFAULT_DB_FILE

        if not 0 < port < 65536:
            raise ProcureError(f"port {port} is out of range", field="--port", fix="e.g. 8000")
        from solver.web.approvals import parse_approvals

        url = db or f"sqlite:///{Path(DEFAULT_DB_FILE).resolve()}"
        import socket

        check_can_listen(host, port)

        with database_refusal():
            web = create_app(
                url,
                scheduler=scheduler,
                catalog_dir=str(catalog) if catalog else None,
                instance=instance or f"{socket.gethostname()}:{port}",
                trusted_user_header=trusted_user_header,
                approvals=parse_approvals(approvals),
                trusted_proxies=trusted_proxies,
            )
            _first_start(web, seed, trusted_user_header)
        typer.echo(f"workspace on {web.state.store.label}: http://{host}:{port}/")
        uvicorn.run(web, host=host, port=port, log_level="warning")

    _run(debug, body)
