"""Hostile and fault cases against a real ``procure serve`` (uvicorn, its own process, a
SQLite file): an alias bomb posted as a problem refused at once while ``/health`` keeps
answering; ``/health`` answering while a solve runs; ten identical solves at once giving
no 500 and one stored plan; a server stopped by SIGTERM marking its running job
``interrupted``; ``serve`` refusing with one message a database it cannot use."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from solver.inputs.yamlio import MAX_NODES
from tests.hostile.test_inputs_yaml import bomb_text
from tests.web.conftest import SEED_YAML

PROCURE = Path(sys.executable).with_name("procure")
USER, PASSWORD = "hostile-infra", "correct horse battery"
#: the longest a /health answer may take while the server is busy (it answers in a few
#: ms when idle; generous for a loaded 2-core machine, far below the minutes a blocked
#: event loop took)
HEALTH_BOUND_S = 2.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(db: str, port: int) -> subprocess.Popen:
    server = subprocess.Popen(
        [str(PROCURE), "serve", "--db", db, "--port", str(port), "--no-seed"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    stop = time.monotonic() + 90
    while time.monotonic() < stop and server.poll() is None:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            time.sleep(0.2)
    server.kill()
    raise AssertionError(f"the server did not start: {server.stderr.read()[-2000:]}")


def _add_user(db: str) -> None:
    cmd = [str(PROCURE), "users", "add", USER, "--role", "infra", "--password-stdin"]
    done = subprocess.run([*cmd, "--db", db], input=PASSWORD + "\n", capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@contextmanager
def _signed_in(base: str):
    with httpx.Client(base_url=base, timeout=120) as client:
        # the sign-in form's pre-session token (GET /login sets its cookie and header)
        token = client.get("/login").headers["x-csrf-token"]
        r = client.post("/login", data={"name": USER, "password": PASSWORD, "csrf_token": token})
        assert r.status_code == 303, r.text[:500]
        client.headers["X-CSRF-Token"] = client.get("/api/me").json()["csrf_token"]
        yield client


@contextmanager
def _server(tmp_path):
    db = f"sqlite:///{tmp_path / 'workspace.db'}"
    port = _free_port()
    server = _start(db, port)
    _add_user(db)
    try:
        with _signed_in(f"http://127.0.0.1:{port}") as client:
            yield server, client, db
    finally:
        if server.poll() is None:
            server.terminate()
            server.wait(60)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with _server(tmp_path_factory.mktemp("served")) as (server, client, db):
        added = client.post("/problems", data={"yaml_text": SEED_YAML})
        assert added.status_code == 303, added.text[:500]
        yield server, client, db


class HealthWatch:
    """Polls ``/health`` from its own thread until stopped: every answer's status and time."""

    def __init__(self, base: str) -> None:
        self.base, self.answers = base, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        with httpx.Client(base_url=self.base, timeout=60) as client:
            while not self._stop.is_set():
                started = time.perf_counter()
                status = client.get("/health").status_code
                self.answers.append((status, time.perf_counter() - started))
                self._stop.wait(0.05)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(60)


def _variant(client: httpx.Client, name: str, **fields) -> int:
    made = client.post("/problems/1/variants", data={"name": name, **fields})
    assert made.status_code == 303, made.text[:1000]
    page = client.get("/problems/1").text
    head = page[: page.index(f'class="solve" data-variant="{name}"')]
    return int(head[head.rindex("/variants/") + len("/variants/") :].split("/")[0])


def _wait(client: httpx.Client, job_id: int, timeout_s: float = 600) -> dict:
    stop = time.monotonic() + timeout_s
    while time.monotonic() < stop:
        job = client.get(f"/api/jobs/{job_id}").json()
        if job["status"] not in ("queued", "running"):
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} still open after {timeout_s} s")


def test_an_alias_bomb_is_refused_at_once_while_health_answers(served):
    server, client, _ = served
    before = client.get("/api/plans").status_code, client.get("/").text.count("/problems/")
    with HealthWatch(str(client.base_url)) as watch:
        time.sleep(0.3)
        started = time.perf_counter()
        refused = client.post("/problems", data={"yaml_text": bomb_text()})
        elapsed_s = time.perf_counter() - started
        time.sleep(0.3)
    # refused at once (bench/web/web_load.py --hostile: at most 0.12 s per bomb under load);
    # 5 s is a bound for a loaded machine, far from the minutes it held the server
    assert elapsed_s < 5.0, elapsed_s
    assert refused.status_code == 400
    assert f"more than {MAX_NODES:,} values" in refused.text
    assert "problem.yaml: line " in refused.text
    assert watch.answers and all(status == 200 for status, _ in watch.answers)
    assert max(t for _, t in watch.answers) < HEALTH_BOUND_S
    # nothing stored, and the server still serves
    assert (client.get("/api/plans").status_code, client.get("/").text.count("/problems/")) == (
        before
    )
    assert server.poll() is None


def test_ten_identical_solves_at_once_give_no_500_and_one_plan(served):
    _, client, _ = served
    variant = _variant(client, "ten-at-once", budget_usd="2500000")
    plans_before = {p["id"] for p in client.get("/api/plans").json()}
    barrier = threading.Barrier(10)
    answers: list[httpx.Response] = []

    def solve() -> None:
        with httpx.Client(base_url=client.base_url, timeout=120) as own:
            own.cookies, own.headers = client.cookies, client.headers
            barrier.wait()
            answers.append(own.post(f"/variants/{variant}/solve"))

    with HealthWatch(str(client.base_url)) as watch:
        people = [threading.Thread(target=solve) for _ in range(10)]
        for p in people:
            p.start()
        for p in people:
            p.join(120)
        statuses = sorted(a.status_code for a in answers)
        jobs = {
            int(a.headers["location"].rsplit("/", 1)[1])
            for a in answers
            if a.headers.get("location", "").startswith("/jobs/")
        }
        finished = [_wait(client, j) for j in jobs]
    assert statuses == [303] * 10, [a.text[:300] for a in answers if a.status_code != 303]
    # every job done (none failed on the unique plan digest), all with the same plan
    assert finished and all(job["status"] == "done" for job in finished), finished
    plan_ids = {job["plan_id"] for job in finished}
    plans_after = {p["id"] for p in client.get("/api/plans").json()}
    assert len(plan_ids) == 1 and plans_after - plans_before == plan_ids
    # health answered throughout the solve (the solve runs beside the event loop)
    assert watch.answers and all(status == 200 for status, _ in watch.answers)
    assert max(t for _, t in watch.answers) < HEALTH_BOUND_S


def test_sigterm_marks_the_running_job_interrupted(tmp_path):
    with _server(tmp_path) as (server, client, db):
        assert client.post("/problems", data={"yaml_text": SEED_YAML}).status_code == 303
        queued = client.post("/variants/1/solve")
        job_id = int(queued.headers["location"].rsplit("/", 1)[1])
        stop = time.monotonic() + 60
        while client.get(f"/api/jobs/{job_id}").json()["status"] == "queued":
            assert time.monotonic() < stop, "the job never started"
            time.sleep(0.05)
        assert client.get(f"/api/jobs/{job_id}").json()["status"] == "running"
        server.send_signal(signal.SIGTERM)
        server.wait(120)
        stderr = server.stderr.read()
    assert "Traceback" not in stderr, stderr[-3000:]
    from solver.web.store import Job, open_store

    with open_store(db).sessions() as session:
        job = session.get(Job, job_id)
        # marked by the stopping server itself (no restart has run)
        assert job.status == "interrupted", (job.status, job.error)
        assert job.stage == "interrupted: the server stopped before the job finished"
        assert job.error == ""


def _refused_to_serve(db: str) -> str:
    done = subprocess.run(
        [str(PROCURE), "serve", "--db", db, "--port", str(_free_port()), "--no-seed"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("error: --db: ")
    assert "fix: " in done.stderr
    return done.stderr


def test_serve_refuses_a_read_only_database_with_one_message(tmp_path):
    path = tmp_path / "workspace.db"
    from solver.web.store import open_store

    open_store(f"sqlite:///{path}").engine.dispose()  # a workspace, at the newest migration
    message = _refused_to_serve(f"sqlite:///file:{path}?mode=ro&uri=true")
    assert "cannot start on this database: the workspace database is read-only" in message


def test_serve_refuses_a_file_that_is_not_a_database(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("these are notes, not a database\n" * 200)
    message = _refused_to_serve(f"sqlite:///{path}")
    assert "damaged or not a database" in message


def test_serve_refuses_a_port_in_use_with_one_message(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        db = f"sqlite:///{tmp_path / 'workspace.db'}"
        done = subprocess.run(
            [str(PROCURE), "serve", "--db", db, "--port", str(port), "--no-seed"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"error: --port: cannot listen on 127.0.0.1:{port} (")
    assert "Traceback" not in done.stderr and "fix: " in done.stderr
    assert not (tmp_path / "workspace.db").exists()  # refused before the database
