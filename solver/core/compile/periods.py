"""The model's time axis: the problem's periods with their hours on the problem's clock,
and the load blocks of a day common to all workloads."""

from __future__ import annotations

import numpy as np
import pandas as pd

from solver.core.clock import Clock
from solver.inputs.load import resolve_load
from solver.inputs.problem import (
    Problem,
)


def build_periods(problem: Problem) -> pd.DataFrame:
    """Periods with their start/end month and their hours on the problem's clock
    (:mod:`solver.clock`: calendar hours when the problem states its start)."""
    months = np.array([p.months for p in problem.resolved_periods], dtype=float)
    start = np.concatenate([[0.0], np.cumsum(months)[:-1]])
    clock = Clock(problem.start)
    return pd.DataFrame(
        {
            "name": [p.name for p in problem.resolved_periods],
            "months": months,
            "hours": [clock.hours(a, a + m) for a, m in zip(start, months, strict=True)],
            "start_month": start,
            "end_month": start + months,
        }
    )


def build_blocks(problem: Problem) -> pd.DataFrame:
    """The model's load blocks (:func:`solver.load.resolve_load`): common to all workloads.

    Columns name, hours_per_day, fraction (of each period's hours) and demand_factor:
    the block's factor when it is common to every online workload (explicit
    ``load_blocks``), NaN otherwise; :func:`build_demand` applies each workload's own.
    """
    load = resolve_load(problem)
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
