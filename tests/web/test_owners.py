"""Jobs have owners (issue 30): two servers on one database, each starting, mark
``interrupted`` only the open jobs no live server runs — their own earlier run's, those
of a server gone silent, and those of none — never the other live server's. On SQLite (two
apps, one file) and on PostgreSQL when ``PROCURE_TEST_POSTGRES_URL`` is set. No solve runs
here: the jobs are rows as a running or killed server leaves them."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from solver.web.app import create_app
from solver.web.jobs import LEASE_S
from solver.web.store import Job, Server
from solver.web.store.models import utc_now
from solver.web.workspace import add_problem
from tests.web.conftest import SEED_YAML, fresh_url


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path_factory) -> str:
    return fresh_url(request.param, tmp_path_factory)


def _open_job(app, variant_id: int, owner: str, status: str = "running") -> int:
    with app.state.store.sessions() as session:
        job = Job(variant_id=variant_id, status=status, stage=status, owner=owner)
        session.add(job)
        session.commit()
        return job.id


def _status(app, job_id: int) -> str:
    with app.state.store.sessions() as session:
        return session.get(Job, job_id).status


def test_a_server_marks_only_the_jobs_no_live_server_runs(url):
    a = create_app(url, instance="host-a:8000")
    with a.state.store.sessions() as session:
        variant_id = add_problem(session, SEED_YAML).variants[0].id
    a_running = _open_job(a, variant_id, a.state.runner.instance_id)
    a_queued = _open_job(a, variant_id, a.state.runner.instance_id, "queued")
    nobody = _open_job(a, variant_id, "")  # a job of a server before owners (migration 0002)
    # a server that stopped sending heartbeats twice the lease ago: gone
    with a.state.store.sessions() as session:
        old = utc_now() - timedelta(seconds=2 * LEASE_S)
        session.add(Server(id="ghost", name="host-g:8000", started_at=old, seen_at=old))
        session.commit()
    ghost = _open_job(a, variant_id, "ghost")

    # B starts on the same database while A runs: 2 jobs are no live server's (nobody's and
    # the ghost's); A's running and queued jobs are left to A
    b = create_app(url, instance="host-b:8000")
    assert b.state.interrupted_at_start == 2
    assert [_status(b, j) for j in (a_running, a_queued, nobody, ghost)] == [
        "running",
        "queued",
        "interrupted",
        "interrupted",
    ]
    assert b.state.runner.instance_id != a.state.runner.instance_id  # random at each start
    b_running = _open_job(b, variant_id, b.state.runner.instance_id)

    # A is killed and starts again (same name, a new instance id): it marks its own 2
    # earlier jobs, never B's, whose heartbeat is fresh
    restarted = create_app(url, instance="host-a:8000")
    assert restarted.state.interrupted_at_start == 2
    assert [_status(restarted, j) for j in (a_running, a_queued, b_running)] == [
        "interrupted",
        "interrupted",
        "running",
    ]
    # the earlier run's and the ghost's rows are gone; A (restarted) and B remain
    with restarted.state.store.sessions() as session:
        names = sorted(session.scalars(select(Server.name)).all())
    assert names == ["host-a:8000", "host-b:8000"]

    # B stops (shut down, as on SIGTERM): it marks its own open job interrupted and its
    # row goes; A's next heartbeat (called here) finds nothing left to mark
    b.state.runner.close()
    assert _status(restarted, b_running) == "interrupted"
    assert restarted.state.runner.interrupt_open_jobs() == 0
    for app in (a, restarted):
        app.state.runner.close()


def test_the_heartbeat_keeps_a_server_live(tmp_path, monkeypatch):
    # heartbeats every 0.05 s instead of 10 s: seen_at moves on; a server removed by
    # another (silent past the lease, say a paused machine) registers itself again
    import time

    from solver.web import jobs

    monkeypatch.setattr(jobs, "HEARTBEAT_S", 0.05)
    app = create_app(f"sqlite:///{tmp_path / 'w.db'}", instance="host-a:8000")
    me = app.state.runner.instance_id

    def seen():
        with app.state.store.sessions() as session:
            return session.scalars(select(Server.seen_at).where(Server.id == me)).first()

    first = seen()
    stop = time.monotonic() + 10
    while seen() == first and time.monotonic() < stop:
        time.sleep(0.02)
    assert seen() > first
    with app.state.store.sessions() as session:
        session.query(Server).delete()
        session.commit()
    while seen() is None and time.monotonic() < stop:
        time.sleep(0.02)
    assert seen() is not None
    app.state.runner.close()  # a clean stop removes its row, and no heartbeat brings it back
    time.sleep(0.2)
    assert seen() is None
