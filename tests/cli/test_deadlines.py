"""A deadline that holds (issue 34, item 3): a command given --time-limit answers, or stops
with a clear message, within 20% of it.

Before issue 34 the limit was handed to the solver only: compiling, building the model,
the analyses around the solves and phases with no interrupt point ran on (567 s against
60 s for --method full on the largest bench case). Now the CLI's alarm stops the command
at the limit + 10% (solver.cli.common.DEADLINE_GRACE) wherever Python runs next, and a
watchdog ends the process at + 18% (DEADLINE_HARD) if a C call holds the main thread.
Both are tested here with bodies that overrun on purpose (a sleep; a sleep with the
alarm's signal blocked, as a C call that never returns to Python would be).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest
from typer.testing import CliRunner

from conftest import CHAT_WORKLOAD, offering, write_catalog
from solver.cli import app
from solver.cli.common import DEADLINE_GRACE, DEADLINE_HARD, EXIT_NO_PLAN

runner = CliRunner()


@pytest.fixture
def setup(tmp_path):
    cat = write_catalog(tmp_path / "cat", [offering("h1", "h100-sxm", 1, 4.0)])
    prob = tmp_path / "p.yaml"
    prob.write_text(
        "name: cli\nhorizon_months: 1\nmodes: [on_demand]\nworkloads:\n" + CHAT_WORKLOAD
    )
    return cat, prob, tmp_path


def test_a_solve_that_overruns_stops_at_the_limit_with_a_message(setup, monkeypatch):
    import solver.solve

    def slow(*args, **kwargs):  # a phase that ignores the limit it was given
        time.sleep(30)

    monkeypatch.setattr(solver.solve, "solve_problem", slow)
    cat, prob, tmp = setup
    out_file = tmp / "plan.json"
    started = time.perf_counter()
    args = ["solve", str(prob), "--catalog", str(cat), "--time-limit", "1", "--out", str(out_file)]
    out = runner.invoke(app, args)
    elapsed = time.perf_counter() - started
    assert out.exit_code == EXIT_NO_PLAN, out.output
    assert "stopped at the time limit: --time-limit 1 s ran out" in out.output
    assert "nothing was written" in out.output and not out_file.exists()
    # 1 s asked: stopped at 1.1 s (the grace), well inside 1.2 s plus the runner's start
    assert 1.0 <= elapsed < 1.0 * (1 + DEADLINE_GRACE) + 0.5


def test_a_command_inside_its_limit_is_not_stopped(setup):
    cat, prob, _ = setup
    out = runner.invoke(app, ["solve", str(prob), "--catalog", str(cat), "--time-limit", "60"])
    assert out.exit_code == 0, out.output
    assert "total cost" in out.output


def test_a_phase_with_no_interrupt_point_is_ended_by_the_watchdog(tmp_path):
    # SIGALRM blocked in the main thread stands for a C call that never returns to Python:
    # the alarm cannot act, the watchdog ends the process at 1.18 s with the message
    script = textwrap.dedent(
        """
        import signal, time
        from solver.cli.common import _run
        def body():
            signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])
            time.sleep(20)
        _run(False, body, 1.0)
        """
    )
    started = time.perf_counter()
    env = dict(os.environ, PROCURE_HARD_DEADLINE="1")  # the suite turns it off in-process
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env
    )
    elapsed = time.perf_counter() - started
    assert done.returncode == EXIT_NO_PLAN, done.stderr
    assert "stopped at the time limit: --time-limit 1 s ran out" in done.stderr
    # 1 s x 1.18 = 1.18 s after the limit started, plus the interpreter's start (~1-3 s
    # under load); far from the 20 s the body would take
    assert elapsed < 1.0 * (1 + DEADLINE_HARD) + 8.0
