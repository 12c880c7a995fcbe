"""Analysis jobs run in a child process as solves do (issue 50, Build 2-3): a cancelled
"what moves it" leaves no process after 5 s, and a running job's stage shows its
progress: a MIP's incumbent, bound and gap, its steps with the time left, and what is
left of its time limit.
"""

from __future__ import annotations

import time

import psutil
from fastapi.testclient import TestClient

from solver.web.app import create_app
from solver.web.job_process import JobProgress
from solver.web.store import Job
from solver.web.workspace import add_problem
from tests.web.conftest import SEED_YAML, job_id_of, sign_in, wait_for_job
from tests.web.test_cancel_stops import HARD_YAML, gone, wait_until


def test_job_progress_reads_steps_mips_and_the_limit():
    # a job 100 s from its limit, 4 of 7 pool classes done in 12 s: 12 / 4 x 3 = 9 s left
    watch = JobProgress(time.monotonic() + 100.0, "queued")
    watch.update({"stage": "break-even prices: 0 of 7 pool classes", "progress": 0.2,
                  "done": 0, "total": 7})  # fmt: skip
    watch.began["break-even prices: 4 of 7 pool classes"] = time.monotonic() - 12.0
    line, fraction = watch.update(
        {"stage": "break-even prices: 4 of 7 pool classes", "progress": 0.63, "done": 4,
         "total": 7}
    )  # fmt: skip
    assert fraction == 0.63
    assert line.startswith("break-even prices: 4 of 7 pool classes; about 9 s left")
    assert "time limit in 10" in line or "time limit in 99" in line
    # a MIP's look: incumbent 1,000,000, bound 990,000, gap (1e6 - 990e3) / 1e6 = 1.00%
    mip = {"incumbent": 1e6, "bound": 990e3, "gap": 0.01, "elapsed_s": 3.2, "time_limit_s": None}
    line, fraction = watch.update({"mip": mip})
    assert "MIP incumbent $1,000,000, bound $990,000, gap 1.00%, 3 s" in line
    assert fraction == 0.63  # a MIP's look leaves the fraction as it was
    assert len(watch.update({"stage": "x" * 300})[0]) == JobProgress.WIDTH


def test_a_cancelled_what_moves_it_leaves_no_process_after_5_s(tmp_path):
    app = create_app(f"sqlite:///{tmp_path / 'w.db'}")
    runner = app.state.runner
    with app.state.store.sessions() as session:
        seed_id = add_problem(session, SEED_YAML).variants[0].id
    server = psutil.Process()
    with TestClient(app) as client:
        sign_in(client, app)
        seed = job_id_of(client.post(f"/variants/{seed_id}/solve", follow_redirects=False))
        plan_id = wait_for_job(client, seed)["plan_id"]
        # every pool's break-even price: minutes of MIPs, far past the 5 s looked at here
        asked = client.post(
            f"/plans/{plan_id}/sensitivity", data={"break_even": "all"}, follow_redirects=False
        )
        job_id = job_id_of(asked)
        wait_until(lambda: job_id in runner.children, 60, "the analysis' child process started")
        pid = runner.children[job_id]
        # into the break-even search (its steps come from the child as it goes)
        wait_until(
            lambda: "pool classes" in client.get(f"/api/jobs/{job_id}").json()["stage"],
            240,
            "the break-even search's first step",
        )
        family = [pid, *(c.pid for c in psutil.Process(pid).children(recursive=True))]
        stage = client.get(f"/api/jobs/{job_id}").json()["stage"]
        client.post(f"/jobs/{job_id}/cancel")
        took_s = wait_until(
            lambda: all(gone(p) for p in family), 5, "the cancelled analysis' processes ended"
        )
        wait_until(lambda: not runner._running, 5, "the job's thread released its turn")
        job = client.get(f"/api/jobs/{job_id}").json()
        left = [c for c in server.children(recursive=True) if "spawn_main" in str(c.cmdline())]
        # a limit of its own: 5 s is short of the solve for the analysis (the seed's solve,
        # then compiled again unpruned: 4 s and more alone), so the job times out
        refused = client.post(f"/plans/{plan_id}/sensitivity", data={"time_limit_s": "abc"})
        short = job_id_of(
            client.post(f"/plans/{plan_id}/sensitivity", data={"break_even": "3",
                        "time_limit_s": "5"}, follow_redirects=False)
        )  # fmt: skip
        timed = wait_for_job(client, short, timeout_s=60)
    runner.close()
    assert refused.status_code == 400 and "time_limit_s" in refused.text
    assert timed["status"] == "timed_out" and timed["options"] == {"time_limit_s": 5.0}
    assert "stopped at its time limit of 5 s" in timed["error"]
    print(f"analysis cancel: {len(family)} processes gone in {took_s:.1f} s; stage was {stage!r}")
    assert job["status"] == "cancelled"
    assert left == []
    assert "time limit in" in stage  # the job's limit (900 s by default), counting down


def test_a_running_solve_shows_its_mips_incumbent_bound_and_gap(tmp_path):
    # the hard variant of test_cancel_stops: its MIP runs for minutes with a plan and a gap
    app = create_app(f"sqlite:///{tmp_path / 'w.db'}")
    runner = app.state.runner
    with app.state.store.sessions() as session:
        hard_id = add_problem(session, HARD_YAML).variants[0].id
    with TestClient(app) as client:
        sign_in(client, app)
        job_id = job_id_of(
            client.post(f"/variants/{hard_id}/solve", data={"time_limit_s": "120"},
                        follow_redirects=False)
        )  # fmt: skip
        wait_until(
            lambda: "gap" in client.get(f"/api/jobs/{job_id}").json()["stage"],
            90,
            "the MIP's gap on the job's stage",
        )
        stage = client.get(f"/api/jobs/{job_id}").json()["stage"]
        page = client.get(f"/jobs/{job_id}").text
        pid = runner.children[job_id]
        client.post(f"/jobs/{job_id}/cancel")
        wait_until(lambda: gone(pid), 5, "the cancelled solve's process ended")
        with app.state.store.sessions() as session:
            assert session.get(Job, job_id).status == "cancelled"
    runner.close()
    print(f"solve stage: {stage!r}")
    assert "MIP incumbent $" in stage and ", bound $" in stage and ", gap " in stage
    assert "time limit in " in stage  # of its 120 s
    assert "MIP incumbent $" in page  # on the job's page
