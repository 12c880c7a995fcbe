"""Cancel means stop (issue 50, Build 3): a workspace solve runs in a child process that a
cancel, or the job's time limit, ends within seconds, its memory given back; jobs queue
per user.

The hard problem: the shipped ``traffic-mix-measured`` limited to one provider's
on-demand offerings (massedcompute), issue 50's "what if we stay with massedcompute?".
Small (one workload, one provider), but its MIP is slow to prove: issue 50 measured it
not proven within 240 s, and ``procure solve`` on it ran 124 s here (2026-12-02, 77 s
of CPU under the shared load) with no plan, far past 30 s.
"""

from __future__ import annotations

import time

import psutil
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from conftest import ROOT
from solver.web import jobs as jobs_module
from solver.web.app import create_app
from solver.web.store import Job, PlanRecord, Variant
from solver.web.workspace import add_problem, add_variant
from tests.web.conftest import SEED_TOTAL_USD, SEED_YAML, job_id_of, sign_in, wait_for_job

HARD_YAML = (
    (ROOT / "problems" / "traffic-mix-measured.yaml")
    .read_text()
    .replace("modes: [on_demand, spot, reserved_1y]", "modes: [on_demand]")
    .replace("residency: [us]", "residency: [us]\nproviders: [massedcompute]")
)
assert "providers: [massedcompute]" in HARD_YAML and "modes: [on_demand]\n" in HARD_YAML


def rss_bytes(process: psutil.Process) -> int:
    """Resident memory of ``process`` and all its children, bytes."""
    total = process.memory_info().rss
    for child in process.children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def wait_until(predicate, timeout_s: float, what: str) -> float:
    """Poll ``predicate`` every 0.1 s; the seconds it took. Fails after ``timeout_s``."""
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        if predicate():
            return time.monotonic() - start
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout_s} s")


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _hard_app(tmp_path):
    app = create_app(f"sqlite:///{tmp_path / 'w.db'}")
    with app.state.store.sessions() as session:
        hard_id = add_problem(session, HARD_YAML).variants[0].id
        seed_id = add_problem(session, SEED_YAML).variants[0].id
    return app, hard_id, seed_id


def test_a_hard_solve_cancelled_from_the_workspace_stops_and_gives_back_its_memory(tmp_path):
    app, hard_id, seed_id = _hard_app(tmp_path)
    runner = app.state.runner
    server = psutil.Process()
    with TestClient(app) as client:
        sign_in(client, app)
        # before: a server that has run a job (the seed's solve, to the end: its first job
        # takes ~13 MiB once, for good, whatever the job; measured 164 -> 180 -> 181 ->
        # 181 MiB over three cancelled hard solves), so that the difference is the solve's
        seed = job_id_of(client.post(f"/variants/{seed_id}/solve", follow_redirects=False))
        assert wait_for_job(client, seed)["status"] == "done"
        with app.state.store.sessions() as session:
            problem_id = session.get(Variant, hard_id).problem_id
        assert client.get(f"/problems/{problem_id}").status_code == 200
        before = rss_bytes(server)
        job_id = job_id_of(client.post(f"/variants/{hard_id}/solve", follow_redirects=False))
        wait_until(lambda: job_id in runner.children, 60, "the solve's child process started")
        pid = runner.children[job_id]
        child = psutil.Process(pid)
        assert pid in [c.pid for c in server.children(recursive=True)]
        # let it solve: 8 s is past the child's start (imports, compile) and into the MIP
        time.sleep(8)
        assert child.is_running() and client.get(f"/api/jobs/{job_id}").json()["status"] == (
            "running"
        )
        during = rss_bytes(server)
        client.post(f"/jobs/{job_id}/cancel")
        # the brief's bound: no solver process left after 5 s (the runner looks every
        # 0.5 s, SIGTERM, SIGKILL after 2 s: 2.5 s at worst plus the load)
        took_s = wait_until(lambda: gone(pid), 5, "the cancelled solve's process ended")
        wait_until(lambda: not runner._running, 5, "the job's thread released its turn")
        spawned = [c for c in server.children(recursive=True) if "spawn_main" in str(c.cmdline())]
        assert spawned == []
        after = rss_bytes(server)
        # nothing of it kept: the server's own work is idle (a solver thread left would
        # burn a core: ~2 s of CPU in 2 s; the idle server polls nothing)
        cpu_0 = sum(server.cpu_times()[:2])
        time.sleep(2)
        cpu_s = sum(server.cpu_times()[:2]) - cpu_0
        job = client.get(f"/api/jobs/{job_id}").json()
    runner.close()
    print(
        f"cancel: process gone in {took_s:.1f} s; RSS before {before / 2**20:.0f} MiB, "
        f"solving {during / 2**20:.0f} MiB, after {after / 2**20:.0f} MiB; "
        f"server CPU in 2 s after: {cpu_s:.2f} s"
    )
    assert job["status"] == "cancelled" and job["plan_id"] is None
    assert during > before  # the child held memory while it solved (its own RSS)
    assert abs(after - before) <= 0.10 * before  # the brief: back within 10 %
    assert cpu_s < 0.5
    with app.state.store.sessions() as session:  # the seed's plan only
        assert session.scalars(select(PlanRecord.variant_id)).all() == [seed_id]


def test_a_job_past_its_time_limit_stops_and_says_why(tmp_path):
    app, hard_id, _ = _hard_app(tmp_path)
    runner = app.state.runner
    with TestClient(app) as client:
        sign_in(client, app)
        asked = client.post(
            f"/variants/{hard_id}/solve", data={"time_limit_s": "6"}, follow_redirects=False
        )
        job_id = job_id_of(asked)
        wait_until(lambda: job_id in runner.children, 60, "the solve's child process started")
        pid = runner.children[job_id]
        job = wait_for_job(client, job_id, timeout_s=60)
        wait_until(lambda: gone(pid), 5, "the timed-out solve's process ended")
        page = client.get(f"/jobs/{job_id}").text
    runner.close()
    assert job["status"] == "timed_out" and job["plan_id"] is None
    assert job["options"] == {"time_limit_s": 6.0}
    assert "stopped at its time limit of 6 s" in job["error"]
    assert 'class="status-timed_out">timed_out' in page
    with app.state.store.sessions() as session:
        assert session.scalar(select(func.count()).select_from(PlanRecord)) == 0


@pytest.mark.parametrize("value", ["abc", "0", "-5", "inf"])
def test_a_bad_time_limit_is_refused_with_the_field_and_the_fix(tmp_path, value):
    app, _, seed_id = _hard_app(tmp_path)
    with TestClient(app) as client:
        sign_in(client, app)
        asked = client.post(f"/variants/{seed_id}/solve", data={"time_limit_s": value})
        with app.state.store.sessions() as session:
            jobs = session.scalar(select(func.count()).select_from(Job))
    app.state.runner.close()
    assert asked.status_code == 400
    assert "time_limit_s" in asked.text and "seconds, above 0" in asked.text
    assert jobs == 0


def test_one_users_hard_solves_queue_and_leave_room_for_others(tmp_path, monkeypatch):
    # one running job per user here (the default is 2): ann's second solve (the seed)
    # waits while her hard one runs; bob's solve (the seed with a 10 % capacity margin)
    # runs beside it and finishes
    monkeypatch.setattr(jobs_module, "MAX_JOBS_PER_USER", 1)
    app, hard_id, seed_id = _hard_app(tmp_path)
    runner = app.state.runner
    with app.state.store.sessions() as session:
        problem = session.get(Variant, seed_id).problem
        margin_id = add_variant(session, problem, "margin-10", {"demand_headroom": 0.1}).id
    ann = runner.submit(hard_id, time_limit_s=120, who="ann")
    wait_until(lambda: ann.id in runner.children, 60, "ann's hard solve started")
    ann_2 = runner.submit(seed_id, who="ann")
    bob = runner.submit(margin_id, who="bob")

    def status(job_id: int) -> str:
        with app.state.store.sessions() as session:
            return session.get(Job, job_id).status

    wait_until(lambda: status(bob.id) not in ("queued", "running"), 120, "bob's solve ended")
    assert status(bob.id) == "done"
    assert status(ann.id) == "running" and status(ann_2.id) == "queued"
    pid = runner.children[ann.id]
    runner.cancel(ann.id)
    wait_until(lambda: gone(pid), 5, "ann's cancelled solve's process ended")
    # ann's second solve takes her turn once the first has stopped, and finishes
    wait_until(lambda: status(ann_2.id) == "done", 120, "ann's second solve done")
    with app.state.store.sessions() as session:
        seed_plan = session.get(PlanRecord, session.get(Job, ann_2.id).plan_id)
        assert seed_plan.total_cost_usd == pytest.approx(SEED_TOTAL_USD, abs=0.01)
        assert session.scalar(select(func.count()).select_from(PlanRecord)) == 2  # not ann's
    runner.close()
