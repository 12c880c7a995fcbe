"""``procure report``'s sweeps run beside its break-even search (in a process of their
own) on local workers: the same figures as one after the other, the sweeps' errors
raised in the report, and no process left behind.

The tiny world of test_sensitivity.py: H100 (``h1``) 10 req/s at $4/h, L4 2 req/s at
$1/h, 730 h.
"""

from __future__ import annotations

import multiprocessing

import pytest

from conftest import H1, HOURS, L4, problem, serve
from solver.analyses import report_analysis
from solver.analyses.report_analysis import build_analysis, overlaps
from solver.solve import solve_for_analysis

KW = dict(frontier_points=3, scenarios=3, spread=0.1, demand_factors=(1.0, 2.0))


def _figures(analysis) -> list:
    points = [
        *analysis.carbon_frontier,
        *analysis.budget_sweep,
        *analysis.demand_sweep,
        *analysis.scenario_points,
    ]
    return [(p.sweep, p.value, p.status, p.total_cost_usd, p.used) for p in points]


@pytest.fixture
def solved(tiny_catalog):
    return solve_for_analysis(problem([serve(25)]), tiny_catalog([H1, L4]))


def test_the_sweeps_beside_the_break_even_search_give_the_serial_figures(solved):
    plan, solution = solved
    # 25 req/s at least cost: 2 H1 + 3 L4 = 26 req/s at $11/h (3 H1: $12/h; 1 H1 + 8 L4:
    # $12/h; 13 L4: $13/h), 730 h
    assert plan.total_cost_usd == pytest.approx(11 * HOURS)
    assert overlaps(2, None) and not overlaps(1, None) and not overlaps(2, "tcp://x:8786")
    serial = build_analysis(plan, solution, workers=1, **KW)
    beside = build_analysis(plan, solution, workers=2, **KW)
    assert _figures(beside) == _figures(serial)
    assert [b.model_dump() for b in beside.sensitivity.break_even] == [
        b.model_dump() for b in serial.sensitivity.break_even
    ]
    # 2 x demand, 50 req/s: 5 H1 at $20/h (4 H1 + 5 L4: $21/h), proven to the sweep gap
    doubled = beside.demand_sweep[1]
    assert doubled.value == 2.0
    assert doubled.total_cost_usd == pytest.approx(20 * HOURS, rel=beside.sweep_gap)
    assert multiprocessing.active_children() == []  # the sweeps' process and its workers


def test_an_error_in_the_sweeps_process_is_raised_by_the_report(solved, monkeypatch):
    plan, solution = solved

    def broken(*args, **kwargs):
        raise ValueError("no sweeps today")

    # the sweeps' process is forked from this one: it runs the patched function
    monkeypatch.setattr(report_analysis, "report_sweeps", broken)
    with pytest.raises(ValueError, match="no sweeps today"):
        build_analysis(plan, solution, workers=2, **KW)
    assert multiprocessing.active_children() == []


def test_a_report_stopped_in_its_break_even_search_ends_the_sweeps_process(solved, monkeypatch):
    plan, solution = solved
    started: list = []
    real = report_analysis.SweepsBeside

    def recording(*args, **kwargs):
        started.append(real(*args, **kwargs))
        return started[-1]

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(report_analysis, "SweepsBeside", recording)
    monkeypatch.setattr(report_analysis, "sensitivity_report", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_analysis(plan, solution, workers=2, **KW)
    assert len(started) == 1 and not started[0]._process.is_alive()
    assert multiprocessing.active_children() == []


def test_under_a_deadline_the_sections_run_one_after_the_other(solved, monkeypatch):
    import time

    plan, solution = solved
    started: list = []
    monkeypatch.setattr(report_analysis, "SweepsBeside", lambda *a, **k: started.append(a))
    # a deadline an hour away cuts nothing, but keeps the break-even search's CPUs its own
    far = time.perf_counter() + 3600.0
    out = build_analysis(plan, solution, workers=2, sections_deadline=far, **KW)
    assert started == [] and out.cut_at_time_limit == [] and out.demand_sweep


def _counted(counter, task):
    """A task that counts the tasks running with it (``counter``: running, most seen)."""
    import time

    with counter.get_lock():
        counter[0] += 1
        counter[1] = max(counter[1], counter[0])
    time.sleep(0.4)
    with counter.get_lock():
        counter[0] -= 1
    return task


def test_pools_under_shared_workers_run_no_more_tasks_at_once_than_its_slots():
    from solver.analyses.runner import run_tasks, shared_workers

    # 6 tasks of 0.4 s on 3 local workers: 3 at once, as the pool alone runs them; under
    # shared_workers(2), 2 at once at most, every task still run (results in order)
    counter = multiprocessing.get_context("fork").Array("i", [0, 0])
    with shared_workers(2):
        assert run_tasks(_counted, list(range(6)), shared=counter, workers=3) == list(range(6))
    assert 1 <= counter[1] <= 2  # 3 when the slots do not hold
