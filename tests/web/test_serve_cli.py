"""``procure serve`` from the command line: the README's one command starts the workspace
on the seed and answers ``/health``; bad options get one message and exit code 2."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
from typer.testing import CliRunner

from solver.cli import app


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_procure_serve_starts_on_the_seed(tmp_path):
    port = _free_port()
    procure = Path(sys.executable).with_name("procure")
    server = subprocess.Popen(
        [str(procure), "serve", "--port", str(port)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        # the first start makes an admin with a random password, printed once
        lines = []
        while not lines or not lines[-1].startswith("workspace on"):
            lines.append(server.stdout.readline())
            assert lines[-1], "".join(lines)
        [first] = [line for line in lines if line.startswith("first start: made the account")]
        password = first.split("password ", 1)[1].split(" ", 1)[0]
        assert len(password) == 16  # token_urlsafe(12): 12 random bytes in base64
        stop, health = time.monotonic() + 60, None
        while time.monotonic() < stop and server.poll() is None:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.2)
        assert health is not None and health.status_code == 200
        # every page but sign-in and health is behind the guard (issue 31)
        anonymous = httpx.get(f"http://127.0.0.1:{port}/")
        assert anonymous.status_code == 303 and anonymous.headers["location"] == "/login?next=/"
        added = subprocess.run(
            [str(procure), "users", "add", "ana", "--role", "viewer", "--password-stdin"],
            cwd=tmp_path, input="correct horse battery\n", capture_output=True, text=True,
        )  # fmt: skip
        assert added.returncode == 0, added.stderr
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
            token = client.get("/login").headers["x-csrf-token"]  # the form's pre-session
            signed = client.post(
                "/login",
                data={"name": "ana", "password": "correct horse battery", "csrf_token": token},
            )
            assert signed.status_code == 303
            home = client.get("/").text
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
            token = client.get("/login").headers["x-csrf-token"]
            admin = client.post(
                "/login", data={"name": "admin", "password": password, "csrf_token": token}
            )
            assert admin.status_code == 303 and client.get("/admin/users").status_code == 200
        assert 'href="/problems/1">seed-2m-13b</a>' in home  # an empty workspace gets the seed
        # the default database: a file beside the workspace
        assert (tmp_path / "procure-workspace.db").is_file()
        # the running server, by procure serve's default --instance name, HOST:PORT
        assert _servers(tmp_path) == [f"{socket.gethostname()}:{port}"]
    finally:
        server.terminate()
        out, _ = server.communicate(timeout=30)
    out = "".join(lines) + out
    assert f"http://127.0.0.1:{port}/" in out and "added the seed problem" in out
    assert _servers(tmp_path) == []  # stopped cleanly: its row is gone


def _servers(folder) -> list[str]:
    import sqlite3

    connection = sqlite3.connect(folder / "procure-workspace.db")
    try:
        return [name for (name,) in connection.execute("SELECT name FROM servers")]
    finally:
        connection.close()


def test_bad_options_get_one_message():
    port = CliRunner().invoke(app, ["serve", "--port", "70000"])
    assert port.exit_code == 2 and "--port: port 70000 is out of range" in port.output
    db = CliRunner().invoke(app, ["serve", "--db", "mysql://u@h/db"])
    assert db.exit_code == 2 and "--db: unsupported database URL mysql://" in db.output
    assert "Traceback" not in port.output + db.output


def test_users_add_refuses_a_bad_role_and_a_short_password(tmp_path):
    url = f"sqlite:///{tmp_path / 'w.db'}"
    role = CliRunner().invoke(app, ["users", "add", "bo", "--role", "boss", "--db", url])
    assert role.exit_code == 2 and "--role: unknown role 'boss'" in role.output
    # 7 characters: one short of the 8 NIST SP 800-63B asks for at least
    short = CliRunner().invoke(
        app, ["users", "add", "bo", "--password-stdin", "--db", url], input="1234567\n"
    )
    assert short.exit_code == 2 and "the password has 7 characters" in short.output
    ok = CliRunner().invoke(
        app, ["users", "add", "bo", "--role", "finance", "--password-stdin", "--db", url],
        input="12345678\n",
    )  # fmt: skip
    assert ok.exit_code == 0 and "added bo (finance)" in ok.output
    again = CliRunner().invoke(
        app, ["users", "add", "bo", "--password-stdin", "--db", url], input="12345678\n"
    )
    assert again.exit_code == 2 and "user 'bo' exists" in again.output
    assert "Traceback" not in role.output + short.output + again.output
