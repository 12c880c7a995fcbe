"""``procure users add``: accounts of the workspace (``procure serve``); ``procure users
audit-check``: the audit trail's chained digests verified."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from solver.cli.common import DebugOpt, _run, app
from solver.errors import ProcureError

users_app = typer.Typer(no_args_is_help=True, help="Accounts of the workspace (procure serve).")
app.add_typer(users_app, name="users")

DbOpt = Annotated[
    str | None,
    typer.Option(
        help="Database URL: sqlite:///FILE or postgresql://user@host:5432/name "
        "(default: procure-workspace.db in this folder, as procure serve)"
    ),
]


def _password(from_stdin: bool, proxy_only: bool) -> str | None:
    if proxy_only:
        return None
    if from_stdin:
        text = sys.stdin.readline().rstrip("\r\n")
        if not text:
            raise ProcureError(
                "no password on standard input",
                field="--password-stdin",
                fix="pipe the password in: printf '%s\\n' \"$PASSWORD\" | procure users add ...",
            )
        return text
    return typer.prompt("password", hide_input=True, confirmation_prompt=True)


@users_app.command("add")
def users_add(
    name: Annotated[str, typer.Argument(help="The account's name (its sign-in name)")],
    role: Annotated[str, typer.Option(help="viewer, infra, finance or admin")] = "viewer",
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read the password from standard input")
    ] = False,
    proxy_only: Annotated[
        bool,
        typer.Option(
            "--proxy-only",
            help="No password: the account signs in only through the trusted proxy header",
        ),
    ] = False,
    db: DbOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Add an account (the password is asked for twice, or read from standard input)."""

    def body() -> None:
        from solver.web import auth
        from solver.web.store import open_store
        from solver.web.store.db import DEFAULT_DB_FILE

        auth.check_role(role)
        password = _password(password_stdin, proxy_only)
        store = open_store(db or f"sqlite:///{Path(DEFAULT_DB_FILE).resolve()}")
        import getpass

        with store.sessions() as session:
            auth.add_user(session, name, role, password, by=f"cli:{getpass.getuser()}",
                          field="--password-stdin" if password_stdin else "password")  # fmt: skip
        typer.echo(f"added {name} ({role}) to {store.label}")

    _run(debug, body)


#: ``procure users audit-check``: the audit trail's chain is broken (a row was changed or
#: one before it removed); 0 when whole, 2 for bad input as every command
EXIT_AUDIT_BROKEN = 3


@users_app.command("audit-check")
def users_audit_check(db: DbOpt = None, debug: DebugOpt = False) -> None:
    """Verify the audit trail's chained digests (exit 3 naming the first broken row).

    Exit 0 when every row is as written; 3 naming the first row that was changed, or
    whose predecessor was removed; 2 when the database cannot be opened."""

    def body() -> None:
        from solver.web import audit
        from solver.web.store import open_store
        from solver.web.store.db import DEFAULT_DB_FILE

        store = open_store(db or f"sqlite:///{Path(DEFAULT_DB_FILE).resolve()}")
        with store.sessions() as session:
            found = audit.first_broken(audit.entries(session))
        if found.broken_id is not None:
            typer.echo(
                f"audit trail broken at row {found.broken_id}: {found.reason} "
                f"({found.rows} row(s) before it are intact, up to row {found.last_id})",
                err=True,
            )
            raise typer.Exit(EXIT_AUDIT_BROKEN)
        typer.echo(
            f"audit trail intact: {found.rows} row(s), last row {found.last_id}, "
            f"head digest {found.head_sha256 or '(none)'}"
        )

    _run(debug, body)
