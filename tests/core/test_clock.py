"""Plan time (solver/core/clock.py): calendar hours when the problem states its start, 730-hour
months when it does not. Every figure below is a count of days x 24."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from solver.core.clock import Clock, add_months


def test_average_months_are_730_hours():
    # no start: 8,760 h / 12 per month whatever today is
    clock = Clock()
    assert not clock.calendar
    assert clock.hours(0, 12) == 8_760.0
    assert clock.hours(2.5, 3.0) == 365.0
    assert clock.month_at(1_095.0) == 1.5


def test_calendar_months_have_their_real_hours():
    clock = Clock(date(2027, 1, 1))
    assert clock.calendar
    assert clock.hours(0, 1) == 744.0  # January: 31 days
    assert clock.hours(1, 2) == 672.0  # February 2027: 28 days
    assert clock.hours(3, 4) == 720.0  # April: 30 days
    assert clock.hours(13, 14) == 696.0  # February 2028, a leap year: 29 days
    assert clock.hours(0, 12) == 8_760.0  # 2027: 365 days
    assert clock.hours(12, 24) == 8_784.0  # 2028: 366 days
    # a 3-year term from 2027-01: 365 + 366 + 365 = 1,096 days = 26,304 h, not 36 x 730
    assert clock.hours(0, 36) == 26_304.0
    # half of February is half its hours; the inverse finds the month again
    assert clock.hours(1, 1.5) == 336.0
    assert clock.month_at(744.0 + 336.0) == pytest.approx(1.5)
    assert clock.month_at(clock.hours_at(29.25)) == pytest.approx(29.25)
    assert clock.hours(2, 2) == 0.0 and clock.hours(3, 2) == 0.0


def test_a_start_inside_a_month_counts_whole_months_from_that_day():
    # 2027-01-15 .. 2027-02-15 is 31 days; 2027-02-15 .. 2027-03-15 is 28
    clock = Clock(date(2027, 1, 15))
    assert clock.hours(0, 1) == 744.0
    assert clock.hours(1, 2) == 672.0
    assert clock.timestamp(1, date(2030, 1, 1)) == datetime(2027, 2, 15)


def test_month_ends_are_clipped():
    assert add_months(date(2027, 1, 31), 1) == date(2027, 2, 28)
    assert add_months(date(2028, 1, 31), 1) == date(2028, 2, 29)
    assert add_months(date(2027, 1, 31), 2) == date(2027, 3, 31)
    assert add_months(date(2027, 11, 1), 3) == date(2028, 2, 1)
    assert add_months(date(2027, 3, 1), -3) == date(2026, 12, 1)


def test_average_months_are_dated_from_the_label_start():
    # without a start the months are 730 h long from the default start
    assert Clock().timestamp(1, date(2027, 1, 1)) == datetime(2027, 1, 31, 10)
