"""What compile returns: the options table and its context as plain tables
(:class:`Compiled`), and the counts of options generated and pruned (:class:`CompileReport`)."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace

import pandas as pd

from solver.core.clock import Clock
from solver.core.compile.periods import Calendar
from solver.core.compile.resolved import ResolvedInputs
from solver.inputs.presets import ModelSpec
from solver.inputs.problem import (
    Problem,
)


@dataclass
class CompileReport:
    """Counts of options generated and pruned, with reasons."""

    pools: int = 0
    generated: int = 0
    kept: int = 0
    infeasible: Counter = field(default_factory=Counter)  # reason -> pool-workload pairs
    pruned: Counter = field(default_factory=Counter)  # reason -> options
    per_workload: dict[str, int] = field(default_factory=dict)
    why_not: dict[str, dict[str, str]] = field(default_factory=dict)  # workload -> best reason
    # workload -> {factor, points, spread, measured_on}: physics scaled to measurements
    calibration: dict[str, dict] = field(default_factory=dict)
    # the daily load curve's blocks and per-workload factors (solver.inputs.load.LoadBlocks.as_dict)
    load_curve: dict = field(default_factory=dict)
    # how a column-generation solve went (solver.core.columns.ColumnReport.as_dict), if one ran
    columns: dict = field(default_factory=dict)
    # how a root solve went (solver.core.root.RootReport.as_dict), if one ran
    root: dict = field(default_factory=dict)
    # tie classes solved as one column each (solver.core.compile.ties.solve_tied), if any
    ties: dict = field(default_factory=dict)
    # workload -> [{list, values, vendor, options_left_out}]: what its accelerator and
    # vendor lists and its runtime left out (the plan says so under it)
    hardware: dict[str, list[dict]] = field(default_factory=dict)

    def as_dict(self) -> dict:
        extra = {"columns": self.columns} if self.columns else {}
        extra |= {"root": self.root} if self.root else {}
        extra |= {"ties": self.ties} if self.ties else {}
        extra |= {"hardware": self.hardware} if self.hardware else {}
        return {
            **extra,
            "calibration": self.calibration,
            "load_curve": self.load_curve,
            "pools": self.pools,
            "options_generated": self.generated,
            "options_kept": self.kept,
            "excluded_by_requirement": dict(sorted(self.infeasible.items())),
            "pruned_as_dominated": dict(sorted(self.pruned.items())),
            "options_per_workload": self.per_workload,
        }


@dataclass(frozen=True)
class Compiled:
    """Everything the MIP needs, as plain tables (every column with its unit and meaning
    in :mod:`solver.inputs.tables`).

    Attributes
    ----------
    periods
        name, months, hours, start_month, end_month (index = period number).
    blocks
        name, hours_per_day, fraction (of each period's hours), demand_factor.
    pools
        one row per capacity pool (cloud offering x mode, or server x site).
    options
        one row per option (see module docstring).
    bucket_capacity
        option_id, bucket, requests_per_s_per_unit (traffic-mix workloads).
    demand
        workload, period, block, bucket (-1 = whole), demand (tokens/s or requests/s).
    training_hours
        option_id, period, hours: the periods each training option runs in.
    inputs
        The inputs compile resolved once and read (:class:`ResolvedInputs`): the catalog
        with the problem's sites, its calendar, load curve and costs.
    """

    problem: Problem
    periods: pd.DataFrame
    blocks: pd.DataFrame
    pools: pd.DataFrame
    options: pd.DataFrame
    bucket_capacity: pd.DataFrame
    demand: pd.DataFrame
    models: dict[str, ModelSpec]
    report: CompileReport
    inputs: ResolvedInputs
    quota_accelerators: tuple[str | None, ...] = ()  # resolved accelerator id per quota
    training_hours: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=["option_id", "period", "hours"])
    )  # option_id, period, hours: the periods a training option runs in
    pruned_dominated: bool = False  # options valid only at these prices and demands
    # training on capacity blocks, one row per block option (solver.core.compile.blocks)
    capacity_blocks: pd.DataFrame = field(default_factory=pd.DataFrame)
    # (workload, provider) whose egress price another provider of the workload's options
    # shares, taken from the whole problem for a column-generation master (its egress
    # spend attributed as the full model's: solver.core.formulation.egress); None: from
    # the options at hand
    egress_shared: frozenset[tuple[str, str]] | None = None

    def training_runs(self) -> dict[int, list[tuple[int, float]]]:
        """Training option id -> [(period index, hours run in it)], in period order."""
        runs: dict[int, list[tuple[int, float]]] = defaultdict(list)
        for k, t, h in self.training_hours.itertuples(index=False):
            runs[int(k)].append((int(t), float(h)))
        return runs

    @property
    def calendar(self) -> Calendar:
        """The problem's periods on its clock, as compiled (:class:`Calendar`)."""
        return self.inputs.calendar

    @property
    def clock(self) -> Clock:
        """Months -> hours for this problem (:class:`solver.core.clock.Clock`)."""
        return self.inputs.calendar.clock


def with_options(compiled: Compiled, options: pd.DataFrame) -> Compiled:
    """``compiled`` with only ``options`` (a subset of its options table, ids unchanged),
    and the training hours and traffic-mix capacities of those options."""
    ids = options["option_id"]
    th, bc = compiled.training_hours, compiled.bucket_capacity
    return replace(
        compiled,
        options=options,
        training_hours=th[th["option_id"].isin(ids)],
        bucket_capacity=bc[bc["option_id"].isin(ids)],
    )
