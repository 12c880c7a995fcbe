"""Plan time: months counted from the plan's start, and the hours they hold.

A problem that states its ``start`` is planned on the calendar: month k of the plan is
the k-th calendar month from the start date, with its real hours (672 in a February, 744
in a January; a leap February 696), and a fraction of a month is that fraction of its
hours. Rent, reservation terms, training windows and the FOCUS rows all count these
hours, so a 3-year reservation from 2027-01 bills 26,304 h (8,760 + 8,784 + 8,760), not
36 x 730.

A problem without ``start`` is planned in average months of 730 h (8,760 h / 12, the
convention of cloud price pages: AWS and GCP quote a month as 730 hours), so its costs
do not depend on the day it is solved; its dates count from the default start (the first
of next month) and label the same 730-hour months.

Every cost stage takes its hours from one :class:`Clock`; the verifier computes calendar
hours on its own (:mod:`solver.trust.verify`) to check them.
"""

from __future__ import annotations

import calendar
import math
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from solver.units import HOURS_PER_MONTH

_EPS = 1e-9


def first_day(start: date | None, today: date | None = None) -> date:
    """The plan's first day: the problem's ``start``, else the first of the month after
    ``today`` (default: the day it runs)."""
    if start is not None:
        return start
    today = today or date.today()
    return date(today.year + today.month // 12, today.month % 12 + 1, 1)


def add_months(day: date, months: int) -> date:
    """``day`` moved by whole calendar months, its day of month clipped (Jan 31 + 1 = Feb 28)."""
    years, month0 = divmod(day.month - 1 + months, 12)
    year = day.year + years
    return date(year, month0 + 1, min(day.day, calendar.monthrange(year, month0 + 1)[1]))


#: (begin month, end month, USD) of a charge inside one month
Slice = tuple[float, float, float]


def month_slices(begin_month: float, end_month: float) -> list[tuple[float, float]]:
    """[begin_month, end_month) cut at whole months: [(begin, end)] inside one month each."""
    out, m = [], begin_month
    while m < end_month - 1e-6:
        nxt = min(end_month, math.floor(m + _EPS) + 1.0)
        out.append((m, nxt))
        m = nxt
    return out


@dataclass(frozen=True)
class Clock:
    """Months from the plan's start -> hours from it (see the module docstring).

    Parameters
    ----------
    start
        The plan's first day when the problem states it (calendar months), else None
        (average months of ``HOURS_PER_MONTH``).
    """

    start: date | None = None

    @property
    def calendar(self) -> bool:
        """True when months are calendar months with their real hours."""
        return self.start is not None

    def hours_at(self, month: float) -> float:
        """Hours from the start to ``month`` months after it."""
        if self.start is None:
            return month * HOURS_PER_MONTH
        whole = math.floor(month + _EPS)
        first = self._hours_to(whole)
        if abs(month - whole) <= _EPS:
            return first
        return first + (month - whole) * (self._hours_to(whole + 1) - first)

    def hours(self, begin_month: float, end_month: float) -> float:
        """Hours in [begin_month, end_month) (0 when it is empty)."""
        if end_month <= begin_month:
            return 0.0
        return self.hours_at(end_month) - self.hours_at(begin_month)

    def month_at(self, hours: float) -> float:
        """Inverse of :meth:`hours_at`: the month (fractional) ``hours`` after the start."""
        if self.start is None:
            return hours / HOURS_PER_MONTH
        whole = math.floor(hours / HOURS_PER_MONTH)  # within a month of the answer
        while self._hours_to(whole) > hours + _EPS:
            whole -= 1
        while self._hours_to(whole + 1) <= hours + _EPS:
            whole += 1
        first, nxt = self._hours_to(whole), self._hours_to(whole + 1)
        return whole + (hours - first) / (nxt - first)

    def month_after(self, begin_month: float, hours: float) -> float:
        """The month ``hours`` after month ``begin_month``."""
        return self.month_at(self.hours_at(begin_month) + hours)

    def spread(self, usd: float, begin_month: float, end_month: float) -> list[Slice]:
        """``usd`` over [begin_month, end_month) by month, in proportion to each month's
        hours: (begin, end, usd) per month slice (:func:`month_slices`)."""
        total = self.hours(begin_month, end_month)
        return [
            (a, b, usd * self.hours(a, b) / total) for a, b in month_slices(begin_month, end_month)
        ]

    def timestamp(self, month: float, label_start: date) -> datetime:
        """The moment ``month`` months after the start (``label_start`` for average months)."""
        return datetime.combine(self.start or label_start, datetime.min.time()) + timedelta(
            hours=self.hours_at(month)
        )

    def _hours_to(self, whole_months: int) -> float:
        assert self.start is not None
        return (add_months(self.start, whole_months) - self.start).days * 24.0
