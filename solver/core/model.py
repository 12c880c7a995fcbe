"""Build the solver-neutral MIP of DESIGN.md section 5 from the compiled options.

The model is plain data: a variables table (with what each variable means:
kind, option, pool, period, block, bucket), rows with a stable family name and
key, an objective, and named linear expressions (total cost, CO2e, cost per
provider and period) that the report and the second stage of a lexicographic
objective reuse. Backends translate it; nothing here imports a solver.

Constraint families (the registry :data:`FAMILIES` gives each its meaning, the unit of
its dual, the names of its key and whether it is reported as binding); every row, here
and in the modules that add their own, is made by :func:`new_row`, which names it from
its family and key:

demand, demand_bucket, mix_capacity, redundancy, n_plus_1, n_plus_1_units, largest_unit,
unit_class, fleet_flat, fleet_base, fleet_deploy, fleet_class, fleet_top_used,
fleet_small_cover, fleet_same_top (how a rented fleet may change over the day), train_once,
owned_capacity, reserved_capacity, availability, quota, budget, capex_budget, period_budget,
carbon_cap, provider_share, power_cap, staff_fleet, staff_tier (:mod:`solver.core.staff`),
objective_stage;
demand_rounding (cuts of a column-generation master, :mod:`solver.core.columns`);
change_link, max_changes, switching (re-solving against a baseline,
:mod:`solver.analyses.resolve`); scenario_cost_cap, cvar_excess, benders_cut (two-stage
plans, :mod:`solver.analyses.stochastic`); force_use (break-even re-solves,
:mod:`solver.analyses.sensitivity`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, cast

import numpy as np
import pandas as pd

from solver.core import ledger
from solver.core.compile import Compiled
from solver.core.staff import add_staff_scale
from solver.errors import InfeasibleError
from solver.inputs.costs import resolve_problem_costs
from solver.inputs.load import block_changes, resolve_load
from solver.inputs.problem import InferenceWorkload, Problem, SavingsPlan, Workload
from solver.inputs.tables import row_tuples
from solver.units import RENTED_MODES, Mode


@dataclass(frozen=True)
class Family:
    """A constraint family: what it says, what its dual means, the names of its key.

    Attributes
    ----------
    description
        What a row of the family says.
    dual_unit
        The unit of a row's dual (shadow price).
    keys
        The name of each part of a row's key, in order; a name ending in ``?`` may be
        left off the end (a commitment's ``availability`` has no block).
    binds
        Whether a row that holds with equality is reported in a plan's ``binding`` list:
        limits are (budget, carbon, availability, ...), the rows that define the plan
        (demand, capacity links, cuts) are not.
    """

    description: str
    dual_unit: str
    keys: tuple[str, ...] = ()
    binds: bool = True

    def takes(self, key: tuple) -> bool:
        """Whether ``key`` has the family's parts (optional ones may be left off the end)."""
        required = sum(not k.endswith("?") for k in self.keys)
        return required <= len(key) <= len(self.keys)


_WPB = ("workload", "period", "block")
_PPB = ("pool", "period", "block")
FAMILIES: dict[str, Family] = {
    "demand": Family(
        "capacity x units + shortfall >= demand of a workload in a period/block",
        "USD per (token/s) over the block",
        _WPB,
        binds=False,
    ),
    "demand_bucket": Family(
        "requests/s served in a traffic-mix bucket >= its demand",
        "USD per (request/s) over the block",
        (*_WPB, "bucket"),
        binds=False,
    ),
    "mix_capacity": Family(
        "time shares of a unit across buckets <= units",
        "USD per unit",
        ("option", "period", "block"),
        binds=False,
    ),
    "redundancy": Family(
        "serving units >= the workload's minimum serving units", "USD per unit", _WPB
    ),
    "n_plus_1": Family(
        "serving capacity - its largest unit in use >= peak demand / max_utilisation (N+1)",
        "USD per (token/s) over the block",
        _WPB,
    ),
    "n_plus_1_units": Family(
        "at least two serving units wherever there is demand (implied by N+1)",
        "USD per unit",
        _WPB,
    ),
    "largest_unit": Family(
        "exactly one capacity class is taken as the largest serving unit (N+1)",
        "USD",
        _WPB,
        binds=False,
    ),
    "unit_class": Family(
        "units of a capacity class only if the class taken as largest is as large (N+1)",
        "USD per unit",
        (*_WPB, "class"),
        binds=False,
    ),
    "fleet_flat": Family(
        "a flat fleet: units of a rented offering the same in every load block",
        "USD per unit",
        ("option", "period", "block"),
        binds=False,
    ),
    "fleet_start": Family(
        "units of a rented offering started from one load block to the next (each day) "
        ">= the units added",
        "USD per unit started a day",
        ("option", "period", "block", "next_block"),
        binds=False,
    ),
    "fleet_base": Family(
        "an autoscaled fleet: a deployed offering runs at least one unit in every block",
        "USD per unit",
        ("option", "period", "block"),
        binds=False,
    ),
    "fleet_deploy": Family(
        "an autoscaled fleet: units of an offering only if it is deployed in the period",
        "USD per unit",
        ("option", "period", "block"),
        binds=False,
    ),
    "fleet_class": Family(
        "an autoscaled fleet: a deployed offering's capacity class is at most the class "
        "taken as the largest unit in every block (N+1)",
        "USD",
        ("option", "period", "block"),
        binds=False,
    ),
    "fleet_top_used": Family(
        "an autoscaled fleet under N+1: a capacity class is taken as the largest unit only "
        "if one of its offerings is deployed (or a flat unit of it held)",
        "USD",
        ("workload", "period", "block", "class"),
        binds=False,
    ),
    "fleet_small_cover": Family(
        "an autoscaled fleet under N+1: units no larger than a class carry the block with "
        "the unit lost when one of those classes is taken as the largest unit",
        "USD per (token/s) over the block",
        ("workload", "period", "block", "class"),
        binds=False,
    ),
    "fleet_same_top": Family(
        "an autoscaled fleet under N+1: the largest unit is the same in every block of the "
        "period (tops of classes at least as large in one block <= in another)",
        "USD",
        ("workload", "period", "block", "to_block", "class"),
        binds=False,
    ),
    "domain_loss": Family(
        "serving capacity outside one region (provider) >= peak demand / max_utilisation",
        "USD per (token/s) over the block",
        (*_WPB, "kind", "domain"),
    ),
    "domain_share": Family(
        "serving capacity in one region (provider) <= its share of the workload's capacity",
        "USD per (token/s) over the block",
        (*_WPB, "kind", "domain"),
    ),
    "train_once": Family(
        "each training workload runs on exactly one cluster", "USD", ("workload",), binds=False
    ),
    "owned_capacity": Family(
        "owned units in use <= existing + bought and delivered",
        "USD per server",
        _PPB,
        binds=False,
    ),
    "reserved_capacity": Family(
        "reserved units in use <= active commitments", "USD per instance", _PPB, binds=False
    ),
    "availability": Family(
        "units of an offering and mode <= its availability cap",
        "USD per instance",
        ("pool", "period", "block?"),
    ),
    "quota": Family(
        "cloud accelerators of a provider/region/type <= quota",
        "USD per accelerator",
        ("quota", "period", "block"),
    ),
    # savings plans (issue 29 part 3): spend-based commitments, beside reservations
    "savings_plan_cover": Family(
        "plan-rate spend of the usage a savings plan covers in an hour <= its commitment",
        "USD per USD/h",
        ("plan", "period", "block"),
        binds=False,
    ),
    "savings_plan_use": Family(
        "on-demand units covered by savings plans <= units in use",
        "USD per instance",
        ("pool", "period", "block"),
        binds=False,
    ),
    "savings_plan_limit": Family(
        "USD per hour committed by a savings plan <= its max_usd_per_hour",
        "USD per USD/h",
        ("plan", "period"),
    ),
    "budget": Family("total cost <= budget", "USD per USD"),
    "capex_budget": Family("purchases <= capex budget", "USD per USD"),
    "period_budget": Family(
        "cost attributed to a period <= its budget", "USD per USD", ("period",)
    ),
    "carbon_cap": Family("total CO2e <= cap", "USD per tCO2e"),
    "provider_share": Family(
        "cost on a provider <= share x total cost", "USD per USD", ("provider",)
    ),
    "power_cap": Family(
        "owned server power at a site <= its power cap", "USD per kW", ("site", "period")
    ),
    # staff by fleet size past 1,000 servers at a site (core/staff.py)
    "staff_fleet": Family(
        "a site's staff segments add up to its average owned fleet in the period",
        "USD per server",
        ("site", "period"),
        binds=False,
    ),
    "staff_tier": Family(
        "a site's staff segments fill in order (fill: segment full before the next opens)",
        "USD per server",
        ("site", "period", "segment", "side"),
        binds=False,
    ),
    "objective_stage": Family(
        "first-stage objective kept (lexicographic)", "-", ("stage",), binds=False
    ),
    # mixed-integer rounding cuts of a column-generation master (core/columns.py: Cuts)
    "demand_rounding": Family(
        "MIR of a demand row with divisor d: whole units of size d, >= ceil(demand / d) (a cut)",
        "USD per unit",
        (*_WPB, "divisor"),
        binds=False,
    ),
    # stability rows of a re-solve (analyses/resolve.py: add_stability)
    "change_link": Family(
        "a line item's units differ from the baseline only if its change indicator is 1",
        "USD per unit",
        ("group", "direction"),
        binds=False,
    ),
    "max_changes": Family("line items changed from the baseline <= limit", "USD per change"),
    "switching": Family(
        "units switched >= |units - baseline units| (switching cost)",
        "USD",
        ("group", "direction"),
        binds=False,
    ),
    # two-stage plans (analyses/stochastic.py); a scenario's copy of a row above has the
    # scenario as one more key part (see :func:`new_row`)
    "scenario_cost_cap": Family(
        "a scenario's cost <= max_scenario_cost_usd", "USD per USD", ("scenario",)
    ),
    "cvar_excess": Family(
        "a scenario's excess >= its cost - the value at risk (CVaR linearisation)",
        "USD per USD",
        ("scenario",),
        binds=False,
    ),
    "benders_cut": Family(
        "a scenario's recourse cost >= its L-shaped cut (or a feasibility cut)",
        "USD per USD",
        ("cut",),
        binds=False,
    ),
    # break-even re-solves (analyses/sensitivity.py)
    "force_use": Family(
        "at least one unit of a pool in use (a break-even re-solve)",
        "USD per unit",
        ("pool",),
        binds=False,
    ),
}


class VarKind(StrEnum):
    """What a variable of the model decides (the variables table's ``kind``)."""

    X = "x"  # serving units of an option in a period (and block, when rented)
    Y = "y"  # time share of an option's units on one traffic-mix bucket
    Z = "z"  # 1 when a training job runs on this cluster option
    BUY = "buy"  # servers bought in a period
    COMMIT = "commit"  # instances reserved from a period for the term
    SAVINGS_PLAN = "savings_plan"  # USD per hour committed from a period for the term
    SP_COVER = "sp_cover"  # on-demand units of a pool a savings plan pays for (per block)
    TOP = "top"  # 1 when a capacity class is the largest serving unit (N+1)
    DEPLOY = "deploy"  # 1 when a rented offering is in a workload's fleet in a period
    START = "start"  # units of a rented offering started between two load blocks, a day
    SHORTFALL = "shortfall"  # demand left unserved (max_served)
    CHANGE = "change"  # 1 when a line item differs from the baseline (re-solve)
    SWITCH = "switch"  # units switched from the baseline (re-solve)
    RISK = "risk"  # CVaR of a two-stage plan: its threshold and each scenario's excess
    RECOURSE = "recourse"  # Benders master: a scenario's cost as its cuts bound it
    STAFF = "staff"  # servers of a site's fleet on one staff segment (core/staff.py)
    STAFF_TIER = "staff_tier"  # 1 when a site's staff segment is full (core/staff.py)


@dataclass(frozen=True)
class Row:
    """One linear constraint: sum(coefs[i] * x[i]) sense rhs."""

    name: str
    family: str
    key: tuple
    coefs: dict[int, float]
    sense: str  # "<=", ">=", "=="
    rhs: float


def row_name(family: str, key: tuple, scenario: str | None = None) -> str:
    """A row's name: ``family[k1,k2,...]`` (a float key part with 9 significant digits),
    then ``@scenario`` for a scenario's copy."""
    parts = ",".join(f"{k:.9g}" if isinstance(k, float) else str(k) for k in key)
    return f"{family}[{parts}]" + ("" if scenario is None else f"@{scenario}")


def new_row(
    family: str,
    key: tuple,
    coefs: dict[int, float],
    sense: str,
    rhs: float,
    *,
    scenario: str | None = None,
) -> Row:
    """The one door for rows: a :class:`Row` of a registered family, named from it.

    Parameters
    ----------
    family
        A name in :data:`FAMILIES`.
    key
        One part per name of the family's ``keys``.
    coefs, sense, rhs
        sum(coefs[i] * x[i]) sense rhs.
    scenario
        A scenario's copy of the row (a two-stage plan): named ``...@scenario``, with the
        scenario as the key's last part.

    Raises
    ------
    ValueError
        A family not in :data:`FAMILIES`, or a key of the wrong length.
    """
    registered = FAMILIES.get(family)
    if registered is None:
        raise ValueError(f"row family {family!r} is not in FAMILIES (solver/core/model.py)")
    if not registered.takes(key):
        raise ValueError(f"a {family} row's key is {registered.keys}, not {key!r}")
    name = row_name(family, key, scenario)
    if scenario is not None:
        key = (*key, scenario)
    return Row(name, family, key, coefs, sense, float(rhs))


@dataclass
class Expression:
    """A named linear expression: sum(coefs[i] * x[i]) + constant."""

    coefs: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    constant: float = 0.0

    def add(self, index: int, value: float) -> None:
        if value:
            self.coefs[index] += value

    def value(self, x: np.ndarray) -> float:
        return float(sum(c * x[i] for i, c in self.coefs.items()) + self.constant)


@dataclass
class LinearModel:
    """A solver-neutral mixed-integer linear program (minimisation)."""

    variables: pd.DataFrame
    rows: list[Row]
    objective: Expression
    expressions: dict[str, Expression]
    stage: str = "main"

    @property
    def n_integer(self) -> int:
        return int(self.variables["integer"].sum())

    def with_stage(self, objective: Expression, keep: Row | None, stage: str) -> LinearModel:
        """The same model with a new objective and optionally one more row."""
        rows = self.rows + ([keep] if keep is not None else [])
        return LinearModel(self.variables, rows, objective, self.expressions, stage)


# one block's N+1 classes (:func:`_add_fleet_tops`): (D_b, [(class capacity, top var,
# the class's x vars)]), classes largest first
_BlockTops = tuple[float, list[tuple[float, int, list[int]]]]


class _OptionRow(Protocol):
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
    start_period: int
    rent_usd: float
    energy_usd: float
    job_hours: float
    kgco2e: float
    n_units: float


class _PoolRow(Protocol):
    """A row of the compiled pools table (:func:`row_tuples`): the columns read here."""

    pool_id: str
    offering_id: str
    kind: str
    mode: str
    provider: str
    site_id: str
    availability_cap: float
    existing_units: float
    price_usd_per_hour: float
    term_months: float
    lead_months: float
    lifetime_months: float
    hosting_usd_per_month: float
    power_kw_max: float
    embodied_kgco2e_unit: float
    idle_kgco2e_per_month: float


class _DemandRow(Protocol):
    """A row of the compiled demand table: per workload, period, block and bucket."""

    workload: str
    period: int
    block: int
    bucket: int
    demand: float
    tokens_per_unit: float


def _option_rows(frame: pd.DataFrame) -> list[_OptionRow]:
    """The options table's rows as named tuples (:func:`row_tuples`)."""
    # row_tuples builds its named tuple at run time from the frame's columns
    return cast(list[_OptionRow], row_tuples(frame))


def _pool_rows(frame: pd.DataFrame) -> list[_PoolRow]:
    """The pools table's rows as named tuples (:func:`row_tuples`)."""
    # row_tuples builds its named tuple at run time from the frame's columns
    return cast(list[_PoolRow], row_tuples(frame))


class _Builder:
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
        if not coefs:
            return
        self.rows.append(new_row(family, key, dict(coefs), sense, rhs))


def _bounds(periods: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(start month, end month) of each period as arrays."""
    return (
        periods["start_month"].to_numpy(dtype=float),
        periods["end_month"].to_numpy(dtype=float),
    )


def _active_commitment_periods(
    bounds: tuple[np.ndarray, np.ndarray], start: int, term_months: float
) -> list[int]:
    """Periods fully covered by a commitment starting at the start of period ``start``
    (``bounds``: :func:`_bounds` of the periods)."""
    s, e = bounds
    t = np.arange(start, len(s))
    return t[e[start:] <= s[start] + term_months + 1e-9].tolist()


def _delivered_periods(
    bounds: tuple[np.ndarray, np.ndarray],
    start: int,
    lead_months: float,
    lifetime_months: float = 0.0,
) -> list[int]:
    """Periods in which a server ordered at the start of ``start`` is in service all along:
    delivered after the lead time, not yet at the end of its life (0 = no end)
    (``bounds``: :func:`_bounds` of the periods)."""
    s, e = bounds
    t = np.arange(start, len(s))
    arrival = s[start] + lead_months
    ok = s[start:] >= arrival - 1e-9
    if lifetime_months:
        ok &= e[start:] <= arrival + lifetime_months + 1e-9
    return t[ok].tolist()


def add_n_plus_1(
    B: _Builder,
    compiled: Compiled,
    unit_capacity: dict[tuple, dict[int, float]],
    shortfall_tps: dict[tuple, dict[int, float]] | None = None,
    deploy_of: dict[int, int] | None = None,
) -> None:
    """N+1: serving capacity with its largest unit lost still meets the peak (exact MILP).

    For an online workload with ``redundancy: n_plus_1``, in every period t and load
    block b, with c_k the tokens/s of one unit of option k, x_k its units and D the
    block's demand in output tokens/s (already x (1 + demand_headroom) /
    max_utilisation, from :func:`solver.compile.build_demand`):

        sum_k c_k x_k - max{c_k : x_k >= 1} >= D.

    Options are grouped into capacity classes g (options whose units have the same
    c_g; one class per accelerator shape, however many providers sell it). A binary
    top_g per (workload, t, b, class) says which class is taken as the largest unit:

    - ``largest_unit``: sum_g top_g = 1;
    - ``unit_class``: sum_{k in g} x_k <= M_g sum_{h: c_h >= c_g} top_h (units of a
      class only if the class taken as largest is at least as large), M_g the units of
      the class that alone meet N+1 in the period's busiest block (at least the
      workload's minimum serving units): a plan with more units of a class can drop the
      excess at no more cost, CO2e or use of any cap, and still meets N+1 (the class
      alone does, whichever unit is lost). Under provider shares (dropping units changes
      the shares) or a traffic mix (bucket rows the aggregate does not bound), M_g is at
      least the class's availability caps plus existing units, a bound no plan exceeds;
    - ``n_plus_1``: sum_k c_k x_k - sum_g c_g top_g >= D.

    Capacities count for at most D in these rows: sum_k min(c_k, D) x_k - min(c_top, D)
    >= D holds for exactly the whole plans that meet the row with c_k (with one unit of
    c >= D and any other units, both hold iff the others hold D; with two or more such
    units both hold), as in :func:`_capped`; units larger than the demand fall into one
    class, and the relaxation is tighter (on the seed, with the bound M_g above: the root
    LP gap falls from 16.7% to 11.5% and the MIP solves about 5x faster).

    This is exact: a plan meets the rows with some top class iff it meets them with its
    real largest class (a larger one only asks more). Choosing one class among few,
    rather than one indicator per option, gives a tighter relaxation and a model
    that grows with the options, not their square. Only options that can serve the
    workload in that period appear. For a traffic mix (requests/s per bucket, split
    by time shares y) the rows use each option's mix-weighted ``tokens_per_s_per_unit``
    against the demand's total output tokens/s (requests/s x output tokens, summed
    over buckets): losing a unit loses its share of every bucket.

    When shortfall is allowed (max_served), ``shortfall_tps`` maps each block's shortfall
    variables to their output tokens/s, and N+1 covers what is served: capacity less the
    largest unit >= D - shortfall. Then ``largest_unit`` is ``<= 1`` (a block served by
    no unit takes no class; ``unit_class`` still makes any unit in use take one) and
    ``n_plus_1_units`` is left out (one unit alone serves nothing: the row gives
    shortfall >= D).
    """
    workloads = {
        w.name: w
        for w in compiled.problem.workloads
        if isinstance(w, InferenceWorkload) and w.n_plus_1
    }
    if not workloads:
        return
    need_tps = block_need_tps(compiled, workloads)
    peak_tps = need_tps.groupby(level=[0, 1]).max()
    fleet_tops: dict[tuple[str, int], dict[int, _BlockTops]] = defaultdict(dict)
    pools = compiled.pools
    hard_bound = (pools["availability_cap"] + pools["existing_units"]).to_numpy(dtype=float)
    for (wname, t, b), caps in unit_capacity.items():
        if wname not in workloads or (wname, t, b) not in need_tps.index:
            continue
        need = float(need_tps[(wname, t, b)])
        real = {v: cap for v, cap in caps.items() if cap > 0}
        coefs = {v: min(cap, need) if need > 0 else cap for v, cap in real.items()}
        classes: dict[float, list[int]] = defaultdict(list)
        for v, cap in coefs.items():
            classes[float(f"{cap:.12g}")].append(v)
        w = workloads[wname]
        exact_alone = not compiled.problem.provider_share_max and not w.traffic_mix
        tops: list[int] = []
        day: _BlockTops = (need, [])
        fleet_tops[(wname, t)][b] = day
        for g, (cap, members) in enumerate(sorted(classes.items(), reverse=True)):
            top = B.var(
                f"top[{wname},{t},{b},{g}]",
                VarKind.TOP,
                integer=True,
                ub=1.0,
                workload=wname,
                period=t,
                block=b,
            )
            tops.append(top)
            coefs[top] = -cap
            smallest = min(real[v] for v in members)
            alone = np.ceil(peak_tps[(wname, t)] / smallest - 1e-9) + 1
            bound = max(alone, w.min_serving_units)
            if not exact_alone:
                bound = max(bound, sum(hard_bound[B.vars[v]["pool"]] for v in members))
            row = {v: 1.0 for v in members}
            for h in tops:
                row[h] = -float(bound)
            B.row("unit_class", (wname, t, b, g), row, "<=", 0.0)
            _add_fleet_class(B, deploy_of or {}, members, tops, (t, b))
            day[1].append((cap, top, members))
        if shortfall_tps is not None:
            coefs.update(shortfall_tps.get((wname, t, b), {}))
        B.row(
            "largest_unit",
            (wname, t, b),
            dict.fromkeys(tops, 1.0),
            "<=" if shortfall_tps is not None else "==",
            1.0,
        )
        B.row("n_plus_1", (wname, t, b), coefs, ">=", need)
        if need > 0 and shortfall_tps is None:
            # implied, and exact: with one unit, capacity less the largest unit is 0. It
            # keeps a demand far below a unit's capacity from passing the N+1 row inside
            # the solver's feasibility tolerance with a single unit.
            B.row("n_plus_1_units", (wname, t, b), {v: 1.0 for v in real}, ">=", 2.0)
    for (wname, t), days in fleet_tops.items():
        _add_fleet_tops(B, deploy_of or {}, workloads[wname], t, days, shortfall_tps is None)


def _add_fleet_class(
    B: _Builder, deploy_of: dict[int, int], members: list[int], tops: list[int], tb: tuple
) -> None:
    """``fleet_class``: deploy[k,t] <= sum of top_h over the classes h at least as large as
    k's class in block b (``tops``, largest first, up to k's own), for every option k of an
    autoscaled fleet in the class.

    Exact (a cut): a deployed offering runs at least one unit in every block
    (``fleet_base``), so its class is in use in every block and ``unit_class`` needs a top
    class at least as large (binary tops: the sum is 1). ``unit_class`` alone implies
    only deploy <= M_g x that sum; this row drops the M_g, so a fractional deployment
    also takes its share of the largest unit lost.
    """
    row_tops = dict.fromkeys(tops, -1.0)
    for v in members:
        deploy = deploy_of.get(v)
        if deploy is not None:
            B.row(
                "fleet_class", (B.vars[v]["option_id"], *tb), {deploy: 1.0, **row_tops}, "<=", 0.0
            )


#: up to this many load blocks ``fleet_same_top`` links every ordered pair of blocks;
#: beyond, each block to the peak block and back (the same cut, implied through the peak,
#: in fewer rows: 2 (blocks - 1) x classes instead of blocks (blocks - 1) x classes).
PAIRWISE_BLOCKS = 4


def _add_fleet_tops(
    B: _Builder,
    deploy_of: dict[int, int],
    w: InferenceWorkload,
    t: int,
    day: dict[int, _BlockTops],
    full_need: bool = True,
) -> None:
    """Two cuts for an autoscaled workload ``w`` under N+1, for period t (``day``: block ->
    (D_b, [(class capacity, top var, the class's x vars)]), classes largest first); none
    for another fleet, or a period with no demand (it may run no unit: no class in use).

    A plan can always take as ``top`` the class of its largest unit in use (a larger class
    only asks more of ``unit_class`` and ``n_plus_1``; :func:`solver.solve.carried` sets
    the tops so), and under autoscale the units in use are the same offerings in every
    block (a deployment runs a unit in each, ``fleet_base``; a flat unit is held all day).
    These rows cut off no such plan, so the optimum is unchanged (bench/RESULTS.md,
    "Autoscaled fleets: the relaxation"):

    - ``fleet_top_used``: top_g <= sum over g's offerings of deploy (of x, for a flat
      unit): the LP may no longer take as the unit lost a class it does not deploy (on the
      seed it took 0.85 of the smallest class, a 41 tokens/s card). The seed's root LP
      bound goes from $305,741 to $316,491 (optimum $329,762.54).
    - ``fleet_same_top``: the largest unit has the same capacity c* in every block. A class
      of block b has capacity min(c, D_b) (classes are capped at the block's demand), so
      "c* >= cap" in b implies "c* >= min(cap, D_b')" in b': for each class of b, the tops
      of b's classes at least cap sum to at most those of b''s classes at least
      min(cap, D_b'). Rows for every ordered pair of blocks, or, beyond
      :data:`PAIRWISE_BLOCKS` blocks, from each block to the peak block and back (every
      other pair follows through the peak, whose D is the largest).
    """
    busy = max(need for need, _classes in day.values()) > 0
    if not busy or getattr(w, "fleet", "per_block") != "autoscale":
        return
    wname = w.name
    for b, (_need, classes) in day.items():
        for g, (_cap, top, members) in enumerate(classes):
            row = {top: 1.0}
            for v in members:
                k = deploy_of.get(v, v)
                row[k] = row.get(k, 0.0) - 1.0
            B.row("fleet_top_used", (wname, t, b, g), row, "<=", 0.0)
    if full_need:  # with shortfall allowed N+1 covers only what is served
        _add_fleet_small_cover(B, wname, t, day)
    peak = max(day, key=lambda b: day[b][0])
    pairs = [(b, c) for b in day for c in day if b != c]
    if len(day) > PAIRWISE_BLOCKS:
        pairs = [pair for b in day if b != peak for pair in ((b, peak), (peak, b))]
    for src, dst in pairs:
        limit = day[dst][0] if day[dst][0] > 0 else np.inf
        for g, (cap, _top, _members) in enumerate(day[src][1]):
            row = {top: 1.0 for c, top, _m in day[src][1] if c >= cap * (1 - 1e-9)}
            floor = min(cap, limit) * (1 - 1e-9)
            for c, top, _m in day[dst][1]:
                if c >= floor:
                    row[top] = row.get(top, 0.0) - 1.0
            B.row("fleet_same_top", (wname, t, src, dst, g), row, "<=", 0.0)


def _add_fleet_small_cover(B: _Builder, wname: str, t: int, day: dict[int, tuple]) -> None:
    """``fleet_small_cover``: for each block b with demand D_b and each class g but the
    largest (classes largest first, capacities c_h already capped at D_b as in the
    ``n_plus_1`` row), the units of classes no larger than g carry the block with the unit
    lost whenever one of those classes is taken as the lost unit:

        sum over classes h no larger than g of c_h (its units)
            >= sum over those h of (D_b + c_h) top_h.

    Exact (a cut): with binary tops one class h* is taken. If h* is no larger than g,
    ``unit_class`` leaves no unit of a larger class, so the left side is the whole
    capacity, and ``n_plus_1`` gives it >= D_b + c_h*, the right side; otherwise the right
    side is 0. For the largest class it is the ``n_plus_1`` row itself (left out). It cuts
    the LP's "small unit lost": a fraction of a deployment of a small card taken as the
    lost unit (``fleet_top_used`` and ``fleet_class`` at equality) while larger units
    carry the demand; with this row that fraction must carry D_b + c_h from small units.
    Blocks with no demand get none (the row is 0 >= 0 there).
    """
    for b, (need, classes) in day.items():
        if need <= 0 or len(classes) < 2:
            continue
        row: dict[int, float] = {}
        for g in range(len(classes) - 1, 0, -1):  # smallest class first
            cap, top, members = classes[g]
            for v in members:
                row[v] = row.get(v, 0.0) + cap
            row[top] = row.get(top, 0.0) - (need + cap)
            B.row("fleet_small_cover", (wname, t, b, g), dict(row), ">=", 0.0)


def block_need_tps(compiled: Compiled, workloads: Iterable[str]) -> pd.Series:
    """Output tokens/s each (workload, period, block) must serve (the N+1 rows' D)."""
    d = compiled.demand[compiled.demand["workload"].isin(list(workloads))]
    return (
        (d["demand"] * d["tokens_per_unit"]).groupby([d["workload"], d["period"], d["block"]]).sum()
    )


def add_failure_domains(m: _State) -> None:
    """Failure domains and capacity shares of online workloads (``survive_loss_of``,
    ``max_region_share``, ``max_provider_share``), in every period t and load block b,
    with c_k a unit's output tokens/s (mix-weighted, as the N+1 rows count it) and D the
    block's demand (x (1 + headroom) / max_utilisation):

    - ``domain_loss``: for each region (provider) r with units that can serve,
      sum_{k not in r} min(c_k, D) x_k >= D (less any shortfall under max_served): the
      service still meets its peak with r lost. Linear and exact: the largest domain
      lost is the row that binds. Counting a unit for at most D keeps the same whole
      plans (as in :func:`add_n_plus_1`). A workload that can serve from one domain
      only gets a row with nothing in it, which no plan meets (the problem is
      infeasible and says so).
    - ``domain_share``: sum_{k in r} c_k x_k <= s x sum_k c_k x_k.

    Owned servers count in the region of their site, at provider ``owned``.
    """
    pools = m.pools
    rules = {
        w.name: w for w in m.problem.workloads if isinstance(w, InferenceWorkload) and w.domains
    }
    if not rules:
        return
    need_tps = block_need_tps(m.compiled, rules)
    B = m.B
    where = {"region": pools["region"].to_numpy(), "provider": pools["provider"].to_numpy()}
    for (wname, t, b), caps in m.unit_capacity.items():
        w = rules.get(wname)
        if w is None or (wname, t, b) not in need_tps.index:
            continue
        need = float(need_tps[(wname, t, b)])
        units = {v: c for v, c in caps.items() if c > 0}
        shortfall = m.shortfall_tps.get((wname, t, b), {}) if m.allow_shortfall else {}
        for kind in ("region", "provider"):
            domain_of = {v: str(where[kind][B.vars[v]["pool"]]) for v in units}
            domains = sorted(set(domain_of.values()))
            if kind in w.survive_loss_of and need > 0:
                if len(domains) < 2 and not shortfall:
                    i = next(j for j, x in enumerate(m.problem.workloads) if x.name == wname)
                    raise InfeasibleError(
                        f"workload {wname!r} can be served from one {kind} only "
                        f"({', '.join(domains) or 'none'}), so it cannot survive losing it",
                        field=f"workloads[{i}].survive_loss_of",
                        fix=f"allow a second {kind} (the problem's or the workload's "
                        f"{kind}s:, modes or tiers) or drop {kind!r} from survive_loss_of",
                    )
                for r in domains:
                    coefs = {v: min(c, need) for v, c in units.items() if domain_of[v] != r}
                    coefs.update(shortfall)
                    B.rows.append(new_row("domain_loss", (wname, t, b, kind, r), coefs, ">=", need))
            share = w.max_region_share if kind == "region" else w.max_provider_share
            if share is not None and share < 1:
                for r in domains:
                    coefs = {
                        v: c * ((1.0 if domain_of[v] == r else 0.0) - share)
                        for v, c in units.items()
                    }
                    B.row("domain_share", (wname, t, b, kind, r), coefs, "<=", 0.0)


class _State:
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
        self.B = _Builder()
        self.cost = Expression()
        self.co2_kg = Expression()
        self.capex = Expression()
        self.cost_by_provider: dict[str, Expression] = defaultdict(Expression)
        self.cost_by_period = [Expression() for _ in range(self.n_t)]
        self.shortfall_penalty = Expression()
        # the switching cost's starts (_add_starts), in the objective only
        self.switching = Expression()
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
        # x var (rented, one block) -> deploy var of its offering (autoscaled fleets)
        self.deploy_of: dict[int, int] = {}
        # (site, t) -> {buy var: kW}; kW of servers owned at the start
        self.fleet_by_site: dict[tuple[str, int], dict[int, float]] = defaultdict(
            lambda: defaultdict(float)
        )
        self.fleet_const_kw: dict[tuple[str, int], float] = defaultdict(float)

    def add_cost(self, i: int, usd: float, provider: str, by_period: dict[int, float]) -> None:
        """Charge ``usd`` per unit of variable ``i`` to the provider and the periods."""
        self.cost.add(i, usd)
        self.cost_by_provider[provider].add(i, usd)
        for t, share in by_period.items():
            self.cost_by_period[t].add(i, share)

    def add_const(self, usd: float, provider: str, by_period: dict[int, float]) -> None:
        """A fixed charge (the fleet held at the start)."""
        self.cost.constant += usd
        self.cost_by_provider[provider].constant += usd
        for t, share in by_period.items():
            self.cost_by_period[t].constant += share


def build_model(compiled: Compiled, *, cap_demand_rows: bool = False) -> LinearModel:
    """Build every variable and constraint family of DESIGN.md section 5.

    The families are added in a fixed order, one function each (a new family is one
    more function here, and one entry in :data:`FAMILIES`: meaning, dual unit, key,
    whether it binds).

    Parameters
    ----------
    compiled
        The options table and its context from :func:`solver.compile.compile_problem`.
    cap_demand_rows
        Count a whole unit for at most the demand in the demand rows (:func:`_capped`):
        the same integer plans, a tighter LP relaxation. Column generation's masters use
        it (their LP is the bound); the full model does not, since HiGHS's presolve
        tightens those rows itself and its branch and bound took 70% longer on the seed's
        carbon frontier with them capped (bench/RESULTS.md).

    Returns
    -------
    LinearModel
        Minimisation model with the problem's (first-stage) objective.
    """
    m = _State(compiled, cap_demand_rows)
    add_inference_capacity(m)
    add_demand(m)
    add_n_plus_1(
        m.B,
        compiled,
        m.unit_capacity,
        m.shortfall_tps if m.allow_shortfall else None,
        deploy_of=m.deploy_of,
    )
    add_failure_domains(m)
    add_training(m)
    add_fleet(m)
    add_savings_plans(m)
    add_quotas(m)
    add_power_caps(m)
    add_staff_scale(m)
    add_budgets(m)
    add_carbon_cap(m)
    add_provider_shares(m)
    return _assemble(m)


def add_inference_capacity(m: _State) -> None:
    """x[k,t,b] (rented: per load block) or x[k,t] (owned, reserved: flat over the day)
    for every serving option and period of its workload, their rent or energy cost and
    CO2e; for a traffic mix, y (time share per bucket) and ``mix_capacity`` rows."""
    B, demand = m.B, m.compiled.demand
    bucket_cap = m.compiled.bucket_capacity.groupby("option_id")
    inference = m.options[m.options["workload_kind"] != "training"]
    periods_of = demand.groupby("workload")["period"].unique().to_dict()
    for k in _option_rows(inference):
        w = m.workloads[k.workload]
        p = m.pool_idx[k.pool_id]
        rented = k.mode in RENTED_MODES
        mix = isinstance(w, InferenceWorkload) and bool(w.traffic_mix)
        rps = {}
        if mix and k.option_id in bucket_cap.groups:
            group = bucket_cap.get_group(k.option_id)
            rps = dict(zip(group["bucket"], group["requests_per_s_per_unit"], strict=True))
        for t in sorted(int(v) for v in periods_of.get(k.workload, [])):
            shared_var: int | None = None
            block_vars: list[int] = []
            if not rented:
                shared_var = B.var(
                    f"x[{k.option_id},{t}]",
                    VarKind.X,
                    integer=True,
                    option_id=k.option_id,
                    pool=p,
                    period=t,
                    block=-1,
                    workload=k.workload,
                )
                usd = k.energy_usd_per_unit_hour * m.p_hours[t]
                m.add_cost(shared_var, usd, k.provider, {t: usd})
                m.co2_kg.add(shared_var, k.kgco2e_per_unit_hour * m.p_hours[t])
            for b in range(m.n_b):
                if rented:
                    v = B.var(
                        f"x[{k.option_id},{t},{b}]",
                        VarKind.X,
                        integer=True,
                        option_id=k.option_id,
                        pool=p,
                        period=t,
                        block=b,
                        workload=k.workload,
                    )
                    hours = m.p_hours[t] * m.b_frac[b]
                    usd = ledger.rent_usd(k.price_usd_per_hour, 1.0, hours)
                    m.add_cost(v, usd, k.provider, {t: usd})
                    m.co2_kg.add(v, k.kgco2e_per_unit_hour * hours)
                else:
                    assert shared_var is not None  # made above for an owned or reserved option
                    v = shared_var
                if rented:
                    block_vars.append(v)
                m.usage[p][(t, b)][v] += 1.0
                m.redundancy_rows[(k.workload, t, b)][v] += 1.0
                m.unit_capacity[(k.workload, t, b)][v] = float(k.tokens_per_s_per_unit)
                if mix:
                    _add_mix_shares(m, k, p, t, b, v, rps)
                else:
                    m.demand_rows[(k.workload, t, b, -1)][v] += k.tokens_per_s_per_unit
            _add_fleet_rule(m, k, p, t, w, block_vars)


def _add_fleet_rule(
    m: _State, k: _OptionRow, p: int, t: int, w: Workload, block_vars: list[int]
) -> None:
    """How a rented offering's units may change over the day (an online workload's
    ``fleet``): ``per_block`` (opt-in) freely; ``flat`` not at all (``fleet_flat``:
    every block as the first); ``autoscale`` (the default) by adding and removing units of the
    offerings deployed for the period: deploy[k,t] in {0, 1}, at least one unit in every
    block when deployed (``fleet_base``) and none when not (``fleet_deploy``: units <= M
    deploy, M the pool's availability plus units held, which no plan exceeds). So a
    workload runs the same offerings all day, from the same providers and regions.
    Under N+1, ``fleet_class`` rows (:func:`_add_fleet_class`) tie each deployment to the
    class taken as the largest unit lost."""
    if not isinstance(w, InferenceWorkload):  # only an online workload has a fleet
        return
    fleet = getattr(w, "fleet", "per_block")
    if fleet != "flat" and getattr(w, "switching_cost_usd", 0.0) > 0 and len(block_vars) > 1:
        _add_starts(m, k, p, t, w, block_vars)
    if fleet == "per_block" or len(block_vars) < 2:
        return
    B = m.B
    if fleet == "flat":
        for b, v in enumerate(block_vars[1:], start=1):
            B.row("fleet_flat", (k.option_id, t, b), {v: 1.0, block_vars[0]: -1.0}, "==", 0.0)
        return
    deploy = B.var(
        f"deploy[{k.option_id},{t}]",
        VarKind.DEPLOY,
        integer=True,
        ub=1.0,
        option_id=k.option_id,
        pool=p,
        period=t,
        block=-1,
        workload=k.workload,
    )
    pool = m.pools.iloc[p]
    most = float(pool["availability_cap"]) + float(pool["existing_units"])
    plain = not w.traffic_mix and not m.problem.provider_share_max
    for b, v in enumerate(block_vars):
        bound = most
        need = m.block_demand.get((k.workload, t, b), 0.0)
        if plain and k.tokens_per_s_per_unit > 0:
            # units that alone meet the block (dominance rule 1): a plan can cut back to
            # them and keep the offering deployed
            alone = np.ceil(need / k.tokens_per_s_per_unit - 1e-9) + (1 if w.n_plus_1 else 0)
            bound = min(most, max(alone, w.min_serving_units, 1.0))
        m.deploy_of[v] = deploy
        B.row("fleet_base", (k.option_id, t, b), {v: 1.0, deploy: -1.0}, ">=", 0.0)
        B.row("fleet_deploy", (k.option_id, t, b), {v: 1.0, deploy: -bound}, "<=", 0.0)


def _add_starts(
    m: _State, k: _OptionRow, p: int, t: int, w: InferenceWorkload, block_vars: list[int]
) -> None:
    """A switching cost (the workload's ``switching_cost_usd``): start[k,t,b,c] >= x[k,t,c]
    - x[k,t,b] for each pair of load blocks b -> c the day passes from one to the other
    (``fleet_start``), each start charged switching_cost_usd x the times a day the day
    passes from b to c (:func:`solver.inputs.load.block_changes`) x the period's days, in
    the objective only (``switching_penalty_usd``). Exact: the units started a day are the
    sum over the day's hour-to-hour changes of max(0, units after - units before), and the
    objective keeps each start at its max."""
    days = float(m.p_hours[t]) / 24.0
    for (b, c), per_day in m.block_starts.items():
        start = m.B.var(
            f"start[{k.option_id},{t},{b},{c}]",
            VarKind.START,
            integer=False,
            option_id=k.option_id,
            pool=p,
            period=t,
            block=c,
            workload=k.workload,
        )
        row = {start: 1.0, block_vars[c]: -1.0, block_vars[b]: 1.0}
        m.B.row("fleet_start", (k.option_id, t, b, c), row, ">=", 0.0)
        m.switching.add(start, w.switching_cost_usd * per_day * days)


def _add_mix_shares(
    m: _State, k: _OptionRow, p: int, t: int, b: int, v: int, rps: dict[int, float]
) -> None:
    """y[k,j,t,b]: the time share of option k's units on bucket j; sum_j y / rps_j <= x."""
    share_row: dict[int, float] = {}
    for j, r in rps.items():
        y = m.B.var(
            f"y[{k.option_id},{j},{t},{b}]",
            VarKind.Y,
            integer=False,
            option_id=k.option_id,
            pool=p,
            period=t,
            block=b,
            bucket=j,
            workload=k.workload,
        )
        share_row[y] = 1.0 / r
        m.demand_rows[(k.workload, t, b, j)][y] += 1.0
    share_row[v] = -1.0
    m.B.row("mix_capacity", (k.option_id, t, b), share_row, "<=", 0.0)


def add_demand(m: _State) -> None:
    """``demand`` (tokens/s) and ``demand_bucket`` (requests/s) rows per workload, period
    and block, with a priced shortfall under max_served; ``redundancy`` (minimum serving
    units)."""
    B, problem = m.B, m.problem
    # pandas-stubs type itertuples' rows as plain tuples; these are named by the columns
    for d in cast(Iterable[_DemandRow], m.compiled.demand.itertuples(index=False)):
        key = (d.workload, int(d.period), int(d.block), int(d.bucket))
        coefs = m.demand_rows.get(key, {})
        if m.allow_shortfall:
            s = B.var(
                f"shortfall[{d.workload},{d.period},{d.block},{d.bucket}]",
                VarKind.SHORTFALL,
                integer=False,
                ub=d.demand,
                workload=d.workload,
                period=int(d.period),
                block=int(d.block),
                bucket=int(d.bucket),
            )
            coefs = dict(coefs)
            coefs[s] = 1.0
            m.shortfall_tps[key[:3]][s] = float(d.tokens_per_unit)
            hours = m.p_hours[int(d.period)] * m.b_frac[int(d.block)]
            tokens = d.tokens_per_unit * hours * 3600.0
            m.shortfall_penalty.add(s, problem.shortfall_penalty_usd_per_mtoken * tokens / 1e6)
        family = "demand" if d.bucket < 0 else "demand_bucket"
        rkey = key[:3] if d.bucket < 0 else key
        if m.cap_demand_rows and d.bucket < 0 and d.demand > 0:
            coefs = {j: _capped(a, d.demand, B.vars[j]["integer"]) for j, a in coefs.items()}
        if not coefs:
            # nothing can serve it: an empty >= row with positive rhs is infeasible
            B.rows.append(new_row(family, rkey, {}, ">=", d.demand))
            continue
        B.row(family, rkey, coefs, ">=", float(d.demand))
    for (wname, t, b), coefs in m.redundancy_rows.items():
        w = m.workloads[wname]
        need = w.min_serving_units if isinstance(w, InferenceWorkload) else 1
        if need > 1 and not m.allow_shortfall:
            B.row("redundancy", (wname, t, b), coefs, ">=", float(need))


def _capped(a: float, demand: float, integer: bool) -> float:
    """A whole unit's coefficient in a demand row, at most the demand: capacity beyond the
    demand serves nothing, so ``sum min(a, D) x >= D`` holds for exactly the same whole
    plans as ``sum a x >= D`` (one unit of ``a >= D`` meets both), and its LP relaxation
    is tighter (no plan buys a third of a unit larger than the demand). The rule of
    :func:`solver.dominance.served_capacity`, per coefficient."""
    return min(a, demand) if integer else a


def add_training(m: _State) -> None:
    """z[k] (binary): training workload runs on cluster option k; its cost split over the
    periods it runs in, its units in use; ``train_once`` per training workload."""
    B = m.B
    training = m.options[m.options["workload_kind"] == "training"]
    train_rows: dict[str, dict[int, float]] = defaultdict(dict)
    runs = m.compiled.training_runs()
    for k in _option_rows(training):
        p = m.pool_idx[k.pool_id]
        z = B.var(
            f"z[{k.option_id}]",
            VarKind.Z,
            integer=True,
            ub=1.0,
            option_id=k.option_id,
            pool=p,
            period=int(k.start_period),
            block=-1,
            workload=k.workload,
        )
        train_rows[k.workload][z] = 1.0
        usd = k.rent_usd + k.energy_usd
        run = runs[int(k.option_id)]
        m.add_cost(z, usd, k.provider, {t: usd * h / k.job_hours for t, h in run})
        m.co2_kg.add(z, k.kgco2e)
        for t, _h in run:
            for b in range(m.n_b):
                m.usage[p][(t, b)][z] += float(k.n_units)
    for wname, coefs in train_rows.items():
        B.row("train_once", (wname,), coefs, "==", 1.0)
    for w in m.problem.workloads:
        if w.kind == "training" and w.name not in train_rows:
            B.rows.append(new_row("train_once", (w.name,), {}, "==", 1.0))


def add_fleet(m: _State) -> None:
    """Per capacity pool, in pool order: owned servers (:func:`add_owned_fleet`),
    reservations (:func:`add_reservations`) or rented availability caps."""
    existing = m.pools["existing_units"].to_numpy() > 0
    relevant = sorted(set(m.usage) | set(np.flatnonzero(existing).tolist()))
    pools = m.pools.iloc[relevant]  # a pool no option uses and holding nothing adds nothing
    for p, pool in zip(relevant, _pool_rows(pools), strict=True):
        used = m.usage.get(p)
        if pool.kind == "owned":
            add_owned_fleet(m, p, pool, used)
        elif pool.mode in (Mode.RESERVED_1Y, Mode.RESERVED_3Y):
            add_reservations(m, p, pool, used)
        elif used is not None:  # rented on-demand / spot
            for (t, b), units in used.items():
                m.B.row(
                    "availability", (pool.pool_id, t, b), units, "<=", float(pool.availability_cap)
                )


def add_owned_fleet(
    m: _State, p: int, pool: _PoolRow, used: dict[tuple[int, int], dict[int, float]] | None
) -> None:
    """buy[pool,tau]: servers bought in period tau (cost from the ledger), in service from
    delivery to the end of their life; servers owned at the start; ``owned_capacity``:
    units in use <= existing + delivered, per period and block."""
    B, problem, periods = m.B, m.problem, m.periods
    delivered: dict[int, list[int]] = defaultdict(list)  # period -> buy vars serving it
    if "owned" in problem.modes and used is not None:
        for tau in range(m.n_t):
            serves = _delivered_periods(
                m.period_bounds, tau, pool.lead_months, pool.lifetime_months
            )
            if not serves:
                continue
            v = B.var(
                f"buy[{pool.pool_id},{tau}]",
                VarKind.BUY,
                integer=True,
                pool=p,
                period=tau,
                block=-1,
            )
            charge = ledger.pool_purchase(pool, tau, periods, m.horizon_months, problem)
            m.add_cost(v, charge.total_usd, "owned", charge.by_period_usd)
            m.capex.add(v, charge.capex_usd)
            m.co2_kg.add(
                v,
                pool.embodied_kgco2e_unit * charge.capex_fraction
                + pool.idle_kgco2e_per_month * charge.in_service_months,
            )
            for t in serves:
                delivered[t].append(v)
                m.fleet_by_site[(pool.site_id, t)][v] += pool.power_kw_max
    if pool.existing_units:
        units = pool.existing_units
        charge = ledger.existing_server(
            hosting_usd_per_month=pool.hosting_usd_per_month, periods=periods
        )
        by_period = {t: usd * units for t, usd in charge.by_period_usd.items()}
        m.add_const(charge.total_usd * units, "owned", by_period)
        m.co2_kg.constant += pool.idle_kgco2e_per_month * m.horizon_months * units
        for t in range(m.n_t):
            m.fleet_const_kw[(pool.site_id, t)] += pool.power_kw_max * units
    if used is None:
        return
    for t in range(m.n_t):
        for b in range(m.n_b):
            units_in_use = used.get((t, b))
            if not units_in_use:
                continue
            coefs = dict(units_in_use)
            for v in delivered.get(t, []):
                coefs[v] = coefs.get(v, 0.0) - 1.0
            B.row("owned_capacity", (pool.pool_id, t, b), coefs, "<=", float(pool.existing_units))


def add_reservations(
    m: _State, p: int, pool: _PoolRow, used: dict[tuple[int, int], dict[int, float]] | None
) -> None:
    """commit[pool,tau]: instances reserved from period tau for the term (cost from the
    ledger); reservations held at the start; ``availability`` of commitments and
    ``reserved_capacity``: units in use <= active commitments, per period and block."""
    B, periods = m.B, m.periods
    active: dict[int, list[int]] = defaultdict(list)
    if used is not None:
        for tau in range(m.n_t):
            covers = _active_commitment_periods(m.period_bounds, tau, pool.term_months)
            if not covers:
                continue
            v = B.var(
                f"commit[{pool.pool_id},{tau}]",
                VarKind.COMMIT,
                integer=True,
                pool=p,
                period=tau,
                block=-1,
            )
            key = (float(pool.term_months), tau)
            if key not in m.reservation_per_usd:  # a charge is linear in the price
                m.reservation_per_usd[key] = ledger.reservation(
                    price_usd_per_hour=1.0,
                    term_months=pool.term_months,
                    begins_in=tau,
                    periods=periods,
                    clock=m.compiled.clock,
                    policy=m.problem.owned_cost_policy,
                )
            per_usd, price = m.reservation_per_usd[key], float(pool.price_usd_per_hour)
            by_period = {t: usd * price for t, usd in per_usd.by_period_usd.items()}
            m.add_cost(v, per_usd.total_usd * price, pool.provider, by_period)
            for t in covers:
                active[t].append(v)
    existing_active: dict[int, int] = {}
    if pool.existing_units:
        for r in m.problem.existing_reservations:
            if r.offering != pool.offering_id or r.mode != pool.mode:
                continue
            charge = ledger.existing_reservation(
                price_usd_per_hour=pool.price_usd_per_hour,
                months_remaining=r.months_remaining,
                periods=periods,
                clock=m.compiled.clock,
            )
            by_period = {t: usd * r.units for t, usd in charge.by_period_usd.items()}
            m.add_const(charge.total_usd * r.units, pool.provider, by_period)
            for t in range(m.n_t):
                # pandas-stubs type .iat as any scalar; end_month is a float column
                if float(periods["end_month"].iat[t]) <= r.months_remaining + 1e-9:  # type: ignore[arg-type]
                    existing_active[t] = existing_active.get(t, 0) + r.units
    if used is None:
        return
    for t in range(m.n_t):
        if active.get(t):
            B.row(
                "availability",
                (pool.pool_id, t),
                {v: 1.0 for v in active[t]},
                "<=",
                float(pool.availability_cap) - existing_active.get(t, 0),
            )
        for b in range(m.n_b):
            units = used.get((t, b))
            if not units:
                continue
            coefs = dict(units)
            for v in active.get(t, []):
                coefs[v] = coefs.get(v, 0.0) - 1.0
            B.row(
                "reserved_capacity",
                (pool.pool_id, t, b),
                coefs,
                "<=",
                float(existing_active.get(t, 0)),
            )


def add_savings_plans(m: _State) -> None:
    """Savings plans (``savings_plans``): spend-based commitments, a decision of their own.

    For plan s and each period tau its term fits from: c[s,tau] >= 0, USD per hour
    committed from the start of tau for the term, charged by the ledger as a reservation
    of c instances at $1/h (every hour of the term, used or not). For each on-demand pool
    p the plan has a rate r_p for and each (t, b) where serving units of p run:
    u[s,p,t,b] >= 0, units the plan pays for, credited at their on-demand price
    (-price_p x hours of the block). Rows:

    - ``savings_plan_cover[s,t,b]``: sum_p r_p u[s,p,t,b] <= sum of c[s,tau] active in t
      (in each hour the plan covers usage at its rates up to the commitment);
    - ``savings_plan_use[p,t,b]``: sum_s u[s,p,t,b] <= serving units of p in use;
    - ``savings_plan_limit[s,t]``: the commitment active in t <= ``max_usd_per_hour``.

    So an hour's usage costs the commitment plus on-demand for what it does not cover,
    as the providers bill it. Training clusters on demand are not covered (their charge
    is by job hours, not by block): the plan is bought for steady serving.
    """
    problem = m.problem
    if not problem.savings_plans:
        return
    kinds = [v["kind"] for v in m.B.vars]
    # (pool, t, b) -> (its serving units in use, the cover variables of every plan)
    uses: dict[tuple[int, int, int], tuple[dict[int, float], list[int]]] = {}
    for s, sp in enumerate(problem.savings_plans):
        active = _savings_plan_commitments(m, s, sp)
        cover: dict[tuple[int, int], dict[int, float]] = defaultdict(dict)
        for p, pool in enumerate(_pool_rows(m.pools)):
            rate = sp.rates.get(pool.offering_id)
            if rate is None or pool.mode != Mode.ON_DEMAND or p not in m.usage:
                continue
            for (t, b), used in sorted(m.usage[p].items()):
                serving = {v: n for v, n in used.items() if kinds[v] == VarKind.X.value}
                if not serving or not active.get(t):
                    continue
                u = m.B.var(
                    f"sp_cover[{sp.provider},{sp.term},{pool.pool_id},{t},{b}]",
                    VarKind.SP_COVER,
                    integer=False,
                    pool=p,
                    period=t,
                    block=b,
                    plan=s,
                )
                hours = m.p_hours[t] * m.b_frac[b]
                credit = -ledger.rent_usd(float(pool.price_usd_per_hour), 1.0, hours)
                m.add_cost(u, credit, pool.provider, {t: credit})
                cover[(t, b)][u] = float(rate)
                uses.setdefault((p, t, b), (serving, []))[1].append(u)
        for (t, b), coefs in sorted(cover.items()):
            m.B.row(
                "savings_plan_cover",
                (f"{sp.provider} {sp.term}", t, b),
                {**coefs, **{c: -1.0 for c in active[t]}},
                "<=",
                0.0,
            )
        if sp.max_usd_per_hour is not None:
            for t, commits in sorted(active.items()):
                m.B.row(
                    "savings_plan_limit",
                    (f"{sp.provider} {sp.term}", t),
                    {c: 1.0 for c in commits},
                    "<=",
                    float(sp.max_usd_per_hour),
                )
    for (p, t, b), (serving, covers) in sorted(uses.items()):
        coefs = {u: 1.0 for u in covers}
        coefs.update({v: -n for v, n in serving.items()})
        m.B.row("savings_plan_use", (m.pools["pool_id"].iat[p], t, b), coefs, "<=", 0.0)


def _savings_plan_commitments(m: _State, s: int, sp: SavingsPlan) -> dict[int, list[int]]:
    """c[s,tau] for each period tau a term fits from (its ledger charge: a reservation of
    c instances at $1/h); period t -> the commitments active in it."""
    active: dict[int, list[int]] = defaultdict(list)
    for tau in range(m.n_t):
        covers = _active_commitment_periods(m.period_bounds, tau, sp.term_months)
        if not covers:
            continue
        c = m.B.var(
            f"savings_plan[{sp.provider},{sp.term},{tau}]",
            VarKind.SAVINGS_PLAN,
            integer=False,
            period=tau,
            block=-1,
            plan=s,
        )
        charge = ledger.reservation(
            price_usd_per_hour=1.0,
            term_months=sp.term_months,
            begins_in=tau,
            periods=m.periods,
            clock=m.compiled.clock,
            policy=m.problem.owned_cost_policy,
        )
        m.add_cost(c, charge.total_usd, sp.provider, dict(charge.by_period_usd))
        for t in covers:
            active[t].append(c)
    return active


def add_quotas(m: _State) -> None:
    """``quota``: cloud accelerators of a provider (region, type) in use <= the quota."""
    pools = m.pools
    for qi, q in enumerate(m.problem.quotas):
        match = (pools["kind"] == "cloud") & (pools["provider"] == q.provider)
        if q.region:
            match &= pools["region"] == q.region
        if m.compiled.quota_accelerators[qi]:
            match &= pools["accelerator_id"] == m.compiled.quota_accelerators[qi]
        for t in range(m.n_t):
            for b in range(m.n_b):
                coefs: dict[int, float] = defaultdict(float)
                for p in np.flatnonzero(match.to_numpy()).tolist():
                    for v, n in m.usage.get(p, {}).get((t, b), {}).items():
                        # pandas-stubs type .iat as any scalar; the column is numeric
                        coefs[v] += n * float(pools["accels_per_unit"].iat[p])  # type: ignore[arg-type]
                m.B.row("quota", (qi, t, b), coefs, "<=", float(q.max_accelerators))


def add_power_caps(m: _State) -> None:
    """``power_cap``: kW of owned servers in service at a site <= its power cap."""
    owned = m.pools[m.pools["kind"] == "owned"]
    site_cap_kw = owned.groupby("site_id")["site_power_cap_kw"].first()
    for site_id, t in sorted(set(m.fleet_by_site) | set(m.fleet_const_kw)):
        m.B.row(
            "power_cap",
            (site_id, t),
            m.fleet_by_site.get((site_id, t), {}),
            "<=",
            float(site_cap_kw[site_id]) - m.fleet_const_kw.get((site_id, t), 0.0),
        )


def add_budgets(m: _State) -> None:
    """``budget`` (total cost), ``capex_budget`` (purchases), ``period_budget``."""
    problem, cost = m.problem, m.cost
    if problem.budget_usd is not None:
        # the categories beside compute (problem.costs) are charged after the solve; the
        # row holds them at a linear bound (ledger.extras_bound), scaled so its
        # coefficients stay the compute cost's (column pricing and dominance read them)
        bound = budget_bound(m.compiled)
        rhs = (problem.budget_usd - bound.constant_usd) / bound.multiplier - cost.constant
        m.B.row("budget", (), cost.coefs, "<=", rhs)
    if problem.capex_budget_usd is not None:
        m.B.row("capex_budget", (), m.capex.coefs, "<=", problem.capex_budget_usd)
    names = list(m.periods["name"])
    for pname, cap in problem.period_budget_usd.items():
        e = m.cost_by_period[names.index(pname)]
        m.B.row("period_budget", (pname,), e.coefs, "<=", cap - e.constant)


def budget_bound(compiled: Compiled) -> ledger.ExtrasBound:
    """The budget row's bound of the costs beside compute (1 x compute + 0 without any)."""
    resolved = resolve_problem_costs(compiled.problem)
    if not resolved.any:
        return ledger.ExtrasBound(1.0, 0.0, "")
    pools = compiled.pools
    cloud = pools[(pools["mode"] != "owned") & (pools["price_usd_per_hour"] > 0)]
    cheapest = float(cloud["price_usd_per_hour"].min()) if len(cloud) else None
    return ledger.extras_bound(resolved, compiled.problem, compiled.periods, cheapest)


def add_carbon_cap(m: _State) -> None:
    """``carbon_cap``: total tCO2e (operational and embodied) <= the cap."""
    cap = m.problem.carbon_cap_tco2e
    if cap is not None:
        coefs = {i: c / 1000.0 for i, c in m.co2_kg.coefs.items()}
        m.B.row("carbon_cap", (), coefs, "<=", cap - m.co2_kg.constant / 1000.0)


def add_provider_shares(m: _State) -> None:
    """``provider_share``: cost on a provider <= share x total cost."""
    for provider, share in m.problem.provider_share_max.items():
        e = m.cost_by_provider.get(provider, Expression())
        coefs: dict[int, float] = defaultdict(float)
        for i, c in e.coefs.items():
            coefs[i] += c
        for i, c in m.cost.coefs.items():
            coefs[i] -= share * c
        m.B.row(
            "provider_share",
            (provider,),
            {i: c for i, c in coefs.items() if c},
            "<=",
            share * m.cost.constant - e.constant,
        )


def _assemble(m: _State) -> LinearModel:
    """The variables table, rows, named expressions and the first-stage objective."""
    co2_t = Expression(
        {i: c / 1000.0 for i, c in m.co2_kg.coefs.items()}, m.co2_kg.constant / 1000.0
    )
    discount = ledger.discount_factors(m.periods, m.problem.discount_rate)
    npv = combine(*((float(discount[t]), m.cost_by_period[t]) for t in range(m.n_t)))
    names = list(m.periods["name"])
    expressions = {
        "total_cost_usd": m.cost,
        "npv_usd": npv,
        "total_co2e_t": co2_t,
        "capex_usd": m.capex,
        "shortfall_penalty_usd": m.shortfall_penalty,
        "switching_penalty_usd": m.switching,
        **{f"cost_usd[provider={p}]": e for p, e in m.cost_by_provider.items()},
        **{f"cost_usd[period={names[t]}]": e for t, e in enumerate(m.cost_by_period)},
    }
    variables = pd.DataFrame(m.B.vars)
    for column in ("option_id", "pool", "period", "block", "bucket"):
        if column not in variables:
            variables[column] = -1
        variables[column] = variables[column].fillna(-1).astype(int)
    if "plan" in variables:  # savings plans: which of problem.savings_plans
        variables["plan"] = variables["plan"].fillna(-1).astype(int)
    if "workload" not in variables:
        variables["workload"] = ""
    variables["workload"] = variables["workload"].fillna("")
    model = LinearModel(variables, m.B.rows, Expression(), expressions)
    model.objective = stage_objective(model, m.problem, first=True)
    return model


def combine(*terms: tuple[float, Expression]) -> Expression:
    """sum(weight * expression)."""
    out = Expression()
    for weight, e in terms:
        for i, c in e.coefs.items():
            out.coefs[i] += weight * c
        out.constant += weight * e.constant
    return out


def stage_objective(model: LinearModel, problem: Problem, *, first: bool) -> Expression:
    """The objective of the first (or second) stage for the problem's objective kind."""
    e = model.expressions
    cost, co2, penalty = e["total_cost_usd"], e["total_co2e_t"], e["shortfall_penalty_usd"]
    # a switching cost (_add_starts) goes with money in every objective that counts it
    switching = (1.0, e.get("switching_penalty_usd", Expression()))
    kind = problem.objective
    if kind == "min_cost":
        return combine((1.0, cost), switching)
    if kind == "min_npv":
        return combine((1.0, e["npv_usd"]), switching)
    if kind == "max_served":
        return combine((1.0, cost), (1.0, penalty), switching)
    if kind == "cost_plus_carbon":
        return combine((1.0, cost), (problem.carbon_price_usd_per_tco2e, co2), switching)
    if kind == "min_carbon":
        return combine((1.0, co2)) if first else combine((1.0, cost), switching)
    if kind == "lexicographic":
        return combine((1.0, cost), switching) if first else combine((1.0, co2))
    raise ValueError(f"unknown objective {kind!r}")


def has_second_stage(problem: Problem) -> bool:
    return problem.objective in {"min_carbon", "lexicographic"}


def second_stage(model: LinearModel, problem: Problem, first_value: float) -> LinearModel:
    """Keep the first stage's optimum (within tolerance) and optimise the second criterion."""
    first = stage_objective(model, problem, first=True)
    tol = problem.lexicographic_cost_tolerance if problem.objective == "lexicographic" else 0.0
    slack = abs(first_value) * max(tol, 1e-7) + 1e-6
    keep = new_row(
        "objective_stage",
        ("first",),
        dict(first.coefs),
        "<=",
        first_value + slack - first.constant,
    )
    return model.with_stage(stage_objective(model, problem, first=False), keep, "second")
