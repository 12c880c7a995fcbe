"""What the constraint families build together: the variables and rows
(:class:`Builder`) and the shared state of one model build (:class:`State`).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Protocol, cast

import numpy as np
import pandas as pd

from solver.core import ledger
from solver.core.compile import Compiled
from solver.core.families import new_row
from solver.core.matrix import Expression, Row, VarKind
from solver.inputs.load import block_changes, resolve_load
from solver.inputs.tables import row_tuples


class OptionRow(Protocol):
    """A row of the compiled options table (:func:`row_tuples`): the columns read here."""

    option_id: int
    workload: str
    pool_id: str
    mode: str
    provider: str
    price_usd_per_hour: float
    energy_usd_per_unit_hour: float
    kgco2e_per_unit_hour: float
    tokens_per_s_per_unit: float
    disagg_group: str  # disaggregated options only (solver/core/compile/disagg.py)
    start_period: int
    rent_usd: float
    energy_usd: float
    job_hours: float
    kgco2e: float
    n_units: float


def guard_band(row: Any) -> float:
    """The guard's band of a compiled pool, option or block row (its
    ``guard_band_fraction``; 0 where the table has none: the guard off)."""
    return float(getattr(row, "guard_band_fraction", 0.0) or 0.0)


def pool_role(row: Any) -> str:
    """A serving option's role in a disaggregated group ('prefill' or 'decode'), '' for an
    aggregated option (or a table without the column)."""
    role = getattr(row, "pool_role", "")
    return role if isinstance(role, str) else ""


def option_rows(frame: pd.DataFrame) -> list[OptionRow]:
    """The options table's rows as named tuples (:func:`row_tuples`)."""
    # row_tuples builds its named tuple at run time from the frame's columns
    return cast(list[OptionRow], row_tuples(frame))


class Builder:
    """The variables (one dict of columns each, the variables table's rows) and rows of a
    model being built."""

    def __init__(self) -> None:
        self.vars: list[dict[str, Any]] = []
        self.rows: list[Row] = []
        self.names: set[str] = set()

    def var(
        self,
        name: str,
        kind: VarKind,
        *,
        integer: bool,
        lb: float = 0.0,
        ub: float = np.inf,
        **meta: Any,
    ) -> int:
        """A new variable with bounds ``[lb, ub]`` and what it means (``meta``: option_id,
        pool, period, block, bucket, workload, plan); its index."""
        self.vars.append(
            {
                "name": name,
                "kind": VarKind(kind).value,
                "integer": integer,
                "lb": lb,
                "ub": ub,
                **meta,
            }
        )
        return len(self.vars) - 1

    def row(self, family: str, key: tuple, coefs: dict[int, float], sense: str, rhs: float) -> None:
        """A row of ``family`` (:func:`solver.core.families.new_row`); none when ``coefs`` is
        empty (a row that must fail with nothing in it is appended with ``new_row``)."""
        if not coefs:
            return
        self.rows.append(new_row(family, key, dict(coefs), sense, rhs))


def _bounds(periods: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(start month, end month) of each period as arrays."""
    return (
        periods["start_month"].to_numpy(dtype=float),
        periods["end_month"].to_numpy(dtype=float),
    )


class State:
    """What the constraint families build together: the variables and rows (``B``), the
    cost, CO2e and capex expressions, and what later families need from earlier ones
    (units of each pool in use, demand coefficients, serving capacity per unit, owned
    power per site)."""

    def __init__(self, compiled: Compiled, cap_demand_rows: bool = False) -> None:
        self.compiled = compiled
        self.cap_demand_rows = cap_demand_rows
        self.problem = compiled.problem
        self.periods, self.blocks = compiled.periods, compiled.blocks
        self.pools, self.options = compiled.pools, compiled.options
        self.n_t, self.n_b = len(self.periods), len(self.blocks)
        # pandas-stubs type .iat as any scalar; end_month is a float column
        self.horizon_months = float(self.periods["end_month"].iat[-1])  # type: ignore[arg-type]
        self.period_bounds = _bounds(self.periods)
        plain = compiled.demand[compiled.demand["bucket"] < 0]
        self.block_demand = {
            (w, int(t), int(b)): float(d)
            for w, t, b, d in zip(
                plain["workload"], plain["period"], plain["block"], plain["demand"], strict=True
            )
        }
        # (term months, first period) -> the ledger's charge of a reservation at $1/h
        self.reservation_per_usd: dict[tuple[float, int], ledger.Charge] = {}
        self.p_hours = self.periods["hours"].to_numpy()
        self.b_frac = self.blocks["fraction"].to_numpy()
        self.pool_idx = {pid: i for i, pid in enumerate(self.pools["pool_id"].tolist())}
        self.allow_shortfall = self.problem.objective == "max_served"
        # shortfall variable -> output tokens/s per unit of it, per (workload, t, b)
        self.shortfall_tps: dict[tuple, dict[int, float]] = defaultdict(dict)
        self.workloads = {w.name: w for w in self.problem.workloads}
        self.B = Builder()
        self.cost = Expression()
        self.co2_kg = Expression()
        self.capex = Expression()
        self.cost_by_provider: dict[str, Expression] = defaultdict(Expression)
        self.cost_by_period = [Expression() for _ in range(self.n_t)]
        # the guard's premium (price_guard): usd x band per charge, in the objective only
        self.guard_by_period = [Expression() for _ in range(self.n_t)]
        self.shortfall_penalty = Expression()
        # egress by default (formulation.egress), in the objective beside compute
        self.egress = Expression()
        self.egress_by_period = [Expression() for _ in range(self.n_t)]
        # egress by (provider, period), for support's spend (formulation.support): none
        # where providers share a price (the plan splits those tokens by capacity)
        self.egress_by_provider: dict[tuple[str, int], Expression] = defaultdict(Expression)
        # provider -> period -> USD of fixed charges (the fleet held at the start)
        self.const_by_provider_period: dict[str, dict[int, float]] = defaultdict(
            lambda: defaultdict(float)
        )
        # support plans (formulation.support), in the objective and the budget row
        self.support = Expression()
        self.support_by_period = [Expression() for _ in range(self.n_t)]
        self.support_by_provider: dict[str, Expression] = {}
        # the switching cost's starts (_add_starts), in the objective only
        self.switching = Expression()
        # moves between periods (formulation.moves), in the objective only
        self.migration = Expression()
        self.block_starts = (
            block_changes(resolve_load(self.problem))
            if any(getattr(w, "switching_cost_usd", 0.0) > 0 for w in self.problem.workloads)
            else {}
        )
        # pool -> (t, b) -> {var: units of the pool it uses}
        self.usage: dict[int, dict[tuple[int, int], dict[int, float]]] = defaultdict(
            lambda: defaultdict(lambda: defaultdict(float))
        )
        # (workload, t, b, bucket) -> {var: tokens/s or requests/s it serves}
        self.demand_rows: dict[tuple, dict[int, float]] = defaultdict(lambda: defaultdict(float))
        # (workload, t, b) -> {var: 1} serving units; {x var: tokens/s per unit} for N+1
        self.redundancy_rows: dict[tuple, dict[int, float]] = defaultdict(
            lambda: defaultdict(float)
        )
        self.unit_capacity: dict[tuple, dict[int, float]] = defaultdict(dict)
        # (disaggregated group, role, t, b) -> {x var: output tokens/s per unit}
        self.disagg_rows: dict[tuple, dict[int, float]] = defaultdict(dict)
        # (workload, t, b) -> {s var: 1}: what its disaggregated groups serve (N+1 rows)
        self.disagg_served: dict[tuple, dict[int, float]] = defaultdict(dict)
        # x var (rented, one block) -> deploy var of its offering (autoscaled fleets)
        self.deploy_of: dict[int, int] = {}
        # the domain cuts' sums of units, shared by the rows that count the same units
        self.domain_sums: dict[frozenset[tuple[int, float]], int] = {}
        # (site, t) -> {buy var: kW}; kW of servers owned at the start
        self.fleet_by_site: dict[tuple[str, int], dict[int, float]] = defaultdict(
            lambda: defaultdict(float)
        )
        self.fleet_const_kw: dict[tuple[str, int], float] = defaultdict(float)

    def add_cost(
        self,
        i: int,
        usd: float,
        provider: str,
        by_period: dict[int, float],
        band: float = 0.0,
    ) -> None:
        """Charge ``usd`` per unit of variable ``i`` to the provider and the periods; a
        ``band`` (the guard's fraction of its price confidence) adds ``usd x band`` per
        period to the guard's premium (docs/concepts/price-guard.md)."""
        self.cost.add(i, usd)
        self.cost_by_provider[provider].add(i, usd)
        for t, share in by_period.items():
            self.cost_by_period[t].add(i, share)
            if band:
                self.guard_by_period[t].add(i, share * band)

    def add_const(self, usd: float, provider: str, by_period: dict[int, float]) -> None:
        """A fixed charge (the fleet held at the start)."""
        self.cost.constant += usd
        self.cost_by_provider[provider].constant += usd
        for t, share in by_period.items():
            self.cost_by_period[t].constant += share
            self.const_by_provider_period[provider][t] += share
