"""The model's time axis: the problem's periods in months and hours on one clock (its
:class:`Calendar`), and the load blocks of a day common to all workloads."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from solver.core.clock import Clock
from solver.inputs.load import LoadBlocks
from solver.inputs.problem import Problem


@dataclass(frozen=True)
class Calendar:
    """The problem's periods on its clock, built once per compile.

    Attributes
    ----------
    periods
        name, months, hours, start_month, end_month (index = period number; months from
        the plan's start, hours on ``clock``).
    clock
        Months -> hours for this problem (:class:`solver.core.clock.Clock`: calendar hours
        when the problem states its start, else 730-hour months).
    """

    periods: pd.DataFrame
    clock: Clock

    @property
    def horizon_months(self) -> float:
        """The end of the last period, months from the plan's start."""
        return float(self.periods["months"].sum())


def build_calendar(problem: Problem) -> Calendar:
    """The problem's periods with their start/end month and their hours on its clock."""
    months = np.array([p.months for p in problem.resolved_periods], dtype=float)
    start = np.concatenate([[0.0], np.cumsum(months)[:-1]])
    clock = Clock(problem.start)
    periods = pd.DataFrame(
        {
            "name": [p.name for p in problem.resolved_periods],
            "months": months,
            "hours": [clock.hours(a, a + m) for a, m in zip(start, months, strict=True)],
            "start_month": start,
            "end_month": start + months,
        }
    )
    return Calendar(periods=periods, clock=clock)


def build_periods(problem: Problem) -> pd.DataFrame:
    """The periods table of :func:`build_calendar` (name, months, hours, start_month,
    end_month)."""
    return build_calendar(problem).periods


def blocks_table(problem: Problem, load: LoadBlocks) -> pd.DataFrame:
    """The model's load blocks from the resolved load curve: common to all workloads.

    Columns name, hours_per_day, fraction (of each period's hours) and demand_factor:
    the block's factor when it is common to every online workload (explicit
    ``load_blocks``), NaN otherwise; :func:`solver.core.compile.demand.build_demand`
    applies each workload's own.
    """
    explicit = problem.load_blocks
    return pd.DataFrame(
        {
            "name": list(load.names),
            "hours_per_day": list(load.hours_per_day),
            "fraction": [h / 24.0 for h in load.hours_per_day],
            "demand_factor": [
                np.nan if b.demand_factor is None else b.demand_factor for b in explicit
            ]
            if explicit is not None
            else [np.nan] * len(load.names),
        }
    )
