"""The time budget shared by the CPU received (solver.core.time_budget).

Each test builds a budget whose clocks stand where the test says (a start in the past, a
CPU count behind it), so the figures are worked by hand and do not depend on the machine's
load; the few milliseconds the test itself takes are inside the tolerances.
"""

from __future__ import annotations

import time

import pytest

from solver.core.time_budget import RESERVE_SHARE, ROUND_SAFETY, Budget


def _budget(limit_s: float, wall_ago_s: float, cpu_used_s: float, reserve_s: float) -> Budget:
    return Budget(
        limit_s,
        wall0=time.perf_counter() - wall_ago_s,
        cpu0=time.process_time() - cpu_used_s,
        reserve_s=reserve_s,
    )


def test_no_limit_answers_go_on():
    b = Budget.of(None)
    phase = b.phase(0.5)
    assert b.left_s() is None and b.cpu_left_s() is None and phase.wall_s() is None
    assert phase.affords(1e9)  # no limit: every round fits


def test_a_fresh_budget_keeps_its_reserve():
    # 10 s: RESERVE_SHARE (10%) = 1 s kept for the plan and the verifier, 9 s to share;
    # under 0.5 s of history the rate is taken as 1 CPU second per second
    b = Budget.of(10.0)
    assert RESERVE_SHARE == 0.1
    assert b.left_s() == pytest.approx(9.0, abs=0.1)
    phase = b.phase(0.5)  # half of the 9 CPU seconds to come: 4.5
    assert phase.cpu_s == pytest.approx(4.5, abs=0.1)
    # a round is started only if 1.25 x its cost fits: 1.25 x 3 = 3.75 <= 4.5; 1.25 x 4 = 5
    assert ROUND_SAFETY == 1.25
    assert phase.affords(3.0) and not phase.affords(4.0)


def test_a_quarter_of_a_cpu_shrinks_every_share_alike():
    # 20 s asked, 10 s gone, 2.5 CPU s received: a rate of 0.25 (the process got a quarter
    # of a core, as beside three busy jobs). Left: 20 - 2 (reserve) - 10 = 8 s of wall
    # clock, so 8 x 0.25 = 2 CPU s to come. Half of it for a phase: 1 CPU s, which at
    # 0.25 is 4 s of wall clock for its solver calls
    b = _budget(20.0, wall_ago_s=10.0, cpu_used_s=2.5, reserve_s=2.0)
    assert b.rate() == pytest.approx(0.25, abs=0.01)
    assert b.left_s() == pytest.approx(8.0, abs=0.05)
    assert b.cpu_left_s() == pytest.approx(2.0, abs=0.05)
    phase = b.phase(0.5)
    assert phase.cpu_s == pytest.approx(1.0, abs=0.05)
    assert phase.wall_s() == pytest.approx(4.0, abs=0.2)
    # a round that cost 0.9 CPU s last time does not fit (1.125 > 1), one of 0.7 does
    assert not phase.affords(0.9) and phase.affords(0.7)
    # the same phase on a whole core (rate 1): 8 CPU s to come, 4 for the phase
    quiet = _budget(20.0, wall_ago_s=10.0, cpu_used_s=10.0, reserve_s=2.0).phase(0.5)
    assert quiet.cpu_s == pytest.approx(4.0, abs=0.1) and quiet.affords(0.9)


def test_a_spent_budget_affords_nothing_and_gives_the_least_time():
    b = _budget(5.0, wall_ago_s=6.0, cpu_used_s=6.0, reserve_s=0.5)
    assert b.left_s() == pytest.approx(-1.5, abs=0.05) and b.cpu_left_s() == 0.0
    phase = b.phase(1.0)
    assert not phase.affords(0.01)
    assert phase.wall_s() == 0.01  # a solver call given the least: it answers at once


def test_round_costs_are_measured_in_cpu_seconds():
    b = Budget.of(100.0)
    phase = b.phase(1.0)
    stop = time.process_time() + 0.05
    while time.process_time() < stop:  # 50 ms of CPU
        pass
    phase.round_done()
    assert phase.rounds == 1 and 0.04 <= phase.last_round_cpu_s < 1.0
    time.sleep(0.05)  # a wait is not CPU: the next round costs nothing yet
    phase.round_done()
    assert phase.last_round_cpu_s < 0.04


def test_a_budget_started_in_the_past_measures_its_rate_from_now():
    # a solve's budget starts at the solve's start (before the compile) but counts CPU
    # from when it is made: 30 s ago with the CPU read now, the rate is not 0 CPU s per
    # 30 s (which would shrink every phase to nothing) but measured from now (1 over the
    # first 0.5 s); the wall left still counts from the start: 60 - 6 (reserve) - 30 = 24 s
    b = Budget.of(60.0, time.perf_counter() - 30.0)
    assert b.rate() == 1.0
    assert b.left_s() == pytest.approx(24.0, abs=0.1)
    assert b.cpu_left_s() == pytest.approx(24.0, abs=0.1)
