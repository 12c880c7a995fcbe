"""Compile resolves the problem's inputs once at the door (solver/core/compile/resolved.py)
and builds one calendar that the model and the plan's charges read
(solver/core/compile/periods.py, solver/plan/charges.py)."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from datetime import date
from typing import Any

import pytest

import solver.core.compile  # noqa: F401  (loads every module of the package)
from conftest import seed_problem
from solver.core.clock import Clock
from solver.core.compile import compile_problem
from solver.core.compile.periods import build_calendar
from solver.inputs.catalog import load_catalog
from solver.plan.charges import plan_calendar

#: the resolvers compile must call once each, whatever module of compile reads them
RESOLVERS = ("resolve_load", "with_problem_sites", "resolve_problem_costs", "hardware_rules")


def _count_calls(monkeypatch: pytest.MonkeyPatch, calls: Counter[str]) -> None:
    """Count every call of a resolver through any module of solver.core.compile, and
    every Clock made."""
    for name, module in list(sys.modules.items()):
        if not name.startswith("solver.core.compile"):
            continue
        for resolver in RESOLVERS:
            original = getattr(module, resolver, None)
            if original is None:
                continue

            def counted(*args: Any, _f: Callable = original, _n: str = resolver, **kw: Any):
                calls[_n] += 1
                return _f(*args, **kw)

            monkeypatch.setattr(module, resolver, counted)
    make_clock = Clock.__init__

    def clock(self: Clock, *args: Any, **kw: Any) -> None:
        calls["Clock"] += 1
        make_clock(self, *args, **kw)

    monkeypatch.setattr(Clock, "__init__", clock)


def test_one_compile_resolves_each_input_once(monkeypatch):
    # The seed has one serving workload (its load curve), no sites of its own (the
    # catalog's are joined all the same), no costs entries and a start date (one clock).
    # Before the inputs were resolved at the door the load curve was resolved three
    # times (blocks, demand and the report) and a Clock made per use.
    problem, catalog = seed_problem(), load_catalog()
    calls: Counter[str] = Counter()
    _count_calls(monkeypatch, calls)
    compiled = compile_problem(problem, catalog)
    assert dict(calls) == {
        "resolve_load": 1,
        "with_problem_sites": 1,
        "resolve_problem_costs": 1,
        "hardware_rules": 1,
        "Clock": 1,
    }
    # reading the clock and the calendar later makes no new one
    assert compiled.clock is compiled.calendar.clock is compiled.inputs.calendar.clock
    assert compiled.periods is compiled.calendar.periods
    assert calls["Clock"] == 1


def test_the_calendar_counts_real_calendar_hours_from_the_seeds_start():
    # The seed starts 2027-01: its first period (3 months) is January + February + March
    # 2027 = 31 + 28 + 31 days = 90 x 24 = 2,160 h; the second (12 months) runs April
    # 2027 to March 2028, which holds the leap February 2028: 366 x 24 = 8,784 h.
    calendar = build_calendar(seed_problem())
    assert calendar.clock == Clock(date(2027, 1, 1))
    assert list(calendar.periods["hours"])[:2] == [2_160.0, 8_784.0]
    assert list(calendar.periods["start_month"]) == [0.0, 3.0, 15.0, 27.0]
    assert calendar.horizon_months == 36.0


def test_the_plan_calendar_is_the_compiled_one():
    # plan/charges.py builds its calendar with compile's build_calendar: the same start
    # months, the same lengths and the same clock as the compiled problem's.
    problem = seed_problem()
    compiled = compile_problem(problem, load_catalog())
    cal = plan_calendar(problem)
    periods = compiled.periods
    assert cal.start_month == dict(zip(periods["name"], periods["start_month"], strict=True))
    assert cal.months == dict(zip(periods["name"], periods["months"], strict=True))
    assert cal.horizon_months == compiled.calendar.horizon_months == 36.0
    assert cal.clock == compiled.clock
    # a problem that states its start is dated from it, whatever start the caller gives
    assert cal.dates == Clock(date(2027, 1, 1))
    assert plan_calendar(problem, date(2030, 5, 1)).dates == Clock(date(2027, 1, 1))
