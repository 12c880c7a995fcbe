"""Sensitivity: shadow prices, break-even prices, sweeps and frontiers (DESIGN.md section 6).

Everything here takes a solved problem as plain data and returns plain data.

Shadow prices
    The duals of a mixed-integer program belong to a linear program, not to the
    integer plan. We take the LP of the chosen plan: training clusters (binary
    choices) fixed as chosen, every option the plan does not use fixed at zero,
    and the unit counts of the options it does use made divisible. Its duals say
    what one more dollar of budget, tonne of CO2e of cap, token/s of demand or
    unit of quota is worth *for small changes around the chosen plan*; a row in
    which nothing can move at this plan has no dual, and none is shown.

Break-even prices
    For an offering and mode (a *pool*) outside the plan, the optimal cost as a
    function of its price is ``min(C_without, f(p))`` where ``C_without`` (the
    optimum without the pool) does not depend on ``p`` and ``f(p)`` (the best
    plan that uses the pool) is concave and piecewise linear in ``p``. The pool
    enters below the price ``p*`` where ``f(p*) = C_without``; for a pool in the
    plan, it leaves above the ``p*`` where ``f(p*)`` reaches the optimum without
    it. ``p*`` is found exactly by Newton's method on ``f`` (each step re-solves
    the MIP with the pool forced in at the trial price: ``p_next = (C_without -
    f(p) + f'(p) p) / f'(p)`` with ``f'(p)`` the pool's price-weighted usage in
    that plan), which converges in a few MIP solves; the result holds to the
    solver's relative gap. A step needs only some plan below ``C_without``, whose
    line lies above ``f`` (:func:`_newton_any_plan`); the last step's proof that
    there is none is what makes the answer exact. With several plan periods a step
    goes period by period where the periods are independent (:class:`_PeriodSplit`:
    plans that buy or reserve nothing fall apart by period, the others are one more
    MIP), and on the whole model otherwise.

Sweeps
    Budget, carbon cap, demand growth and price scenarios, each a list of
    independent solves run serially, across local processes, or on a Dask
    cluster (:func:`run_tasks`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from solver.analyses.runner import run_tasks
from solver.core.backends import HighsSession, SolveOptions, Termination, get_backend
from solver.core.compile import Compiled, repruned, with_options
from solver.core.dominance import carbon_counts
from solver.core.model import (
    FAMILIES,
    LinearModel,
    build_model,
    has_second_stage,
    new_row,
    stage_objective,
)
from solver.core.restrictions import period_restrictions
from solver.errors import InfeasibleError, ProcureError
from solver.plan.warnings import PlanWarning
from solver.solve import Solution, carried, optimise
from solver.units import RENTED_MODES, Mode

# ------------------------------------------------------------------ results


class Dual(BaseModel):
    """The shadow price of one named constraint at the chosen plan."""

    constraint: str
    family: str
    meaning: str
    d_objective_d_rhs: float = Field(
        description="Change of the objective per unit increase of the right-hand side"
    )
    unit: str
    worth: float = Field(
        description="What one more unit of the limit saves (positive: relaxing helps)"
    )
    usd_per_mtoken: float | None = Field(
        None,
        description="Rows of tokens/s (demand, N+1) or requests/s (traffic-mix demand): the "
        "dual over the tokens one more token/s of the row's capacity yields in its block, "
        "dual / (block hours x 3600 x tokens per unit of the row) x 1e6: the marginal cost "
        "of 1M more output tokens of that capacity in that block",
    )
    workload: str | None = Field(None, description="The row's workload, where it has one")
    period: str | None = Field(None, description="The row's plan period, by name")
    block: str | None = Field(None, description="The row's load block, by name")
    pool: str | None = Field(None, description="The row's pool (offering#mode), where it has one")


class ReducedCost(BaseModel):
    """An option the plan does not use: how much dearer than worth it it is."""

    option: str
    pool_id: str
    workload: str
    mode: str
    reduced_cost: float = Field(description="Objective units per unit of the option")
    price_cut_usd_per_hour: float | None = Field(
        None, description="Rented options: hourly price cut that makes it break even in the LP"
    )


class BreakEven(BaseModel):
    """The price at which a pool would enter (or leave) the optimal plan."""

    pool_id: str
    provider: str
    region: str
    offering: str
    accelerator: str
    mode: str
    in_plan: bool
    price_unit: str
    current_price: float
    break_even_price: float | None = Field(
        None, description="None: no price makes it change (see note)"
    )
    change_pct: float | None = None
    direction: str = Field(description="'enters below' or 'leaves above'")
    solves: int = 0
    note: str = ""
    same_as: list[str] = Field(
        default_factory=list,
        description="Other pools of the same class (same mode, price, capacity for every "
        "workload and, where carbon counts, CO2e): interchangeable with this one, so their "
        "prices moved with it and the row stands for the class",
    )


class SensitivityReport(BaseModel):
    """Shadow prices and reduced costs at the chosen plan, and break-even prices."""

    problem: str
    objective_kind: str
    objective: float
    caveat: str
    duals: list[Dual]
    reduced_costs: list[ReducedCost]
    break_even: list[BreakEven] = Field(default_factory=list)
    break_even_tolerance: str = ""
    break_even_left_out: list[str] = Field(
        default_factory=list,
        description="Pools whose break-even price --time-limit left out (not started "
        "before its deadline)",
    )
    warnings: list[PlanWarning] = Field(
        default_factory=list,
        description="The warnings of the plan analysed (issue 34: a period structure that "
        "forbade owning or reserving, an implausible value), as the plan carries them",
    )


class SweepPoint(BaseModel):
    """One solve of a sweep."""

    sweep: str
    value: float
    status: str
    objective: float | None = None
    total_cost_usd: float | None = None
    total_co2e_t: float | None = None
    served_fraction: float | None = None
    used: list[str] = Field(default_factory=list, description="pools in the plan")


# ------------------------------------------------------------------ shadow prices

_USE_KINDS = ("x", "z", "buy", "commit")


def support_lp(model: LinearModel, values: np.ndarray) -> LinearModel:
    """The LP of the chosen plan (module docstring): a continuous copy of ``model``."""
    v = model.variables.copy()
    used = values > 1e-7
    v["integer"] = False
    fix_zero = v["kind"].isin(_USE_KINDS).to_numpy() & ~used
    fix_value = v["kind"].isin(("z", "top")).to_numpy()  # binary choices as chosen
    v.loc[fix_zero, "ub"] = 0.0
    v.loc[fix_value, "lb"] = values[fix_value]
    v.loc[fix_value, "ub"] = values[fix_value]
    # fleet_small_cover rows (solver/core/model.py) are cuts, implied by the others at an
    # integer plan; in this LP they would only share the N+1 rows' duals among more rows
    # (a degenerate choice of duals), so shadow prices and entry estimates leave them out
    rows = [r for r in model.rows if r.family != "fleet_small_cover"]
    return LinearModel(v, rows, model.objective, model.expressions, model.stage + "-lp")


def _objective_unit(kind: str) -> str:
    return "tCO2e" if kind == "min_carbon" else "USD"


def shadow_prices(solution: Solution, *, solver: str = "highspy") -> SensitivityReport:
    """Duals of every named constraint and reduced costs of unused options.

    Parameters
    ----------
    solution
        A solved problem (:func:`solver.solve.optimise`).
    solver
        Backend for the LP (it must report duals: ``highs`` or ``cbc``).
    """
    compiled, model, values = solution.compiled, solution.model, solution.result.values
    problem = compiled.problem
    if has_second_stage(problem):  # the duals of the first criterion (cost, or carbon)
        first = [r for r in model.rows if r.family != "objective_stage"]
        model = LinearModel(
            model.variables, first, stage_objective(model, problem, first=True), model.expressions
        )
    lp = support_lp(model, values)
    result = get_backend(solver).solve(lp, SolveOptions())
    if result.duals is None or result.reduced_costs is None:
        raise RuntimeError(f"the LP of the plan did not solve to optimality ({result.message})")
    fixed = (lp.variables["lb"] == lp.variables["ub"]).to_numpy()
    kind = compiled.problem.objective
    unit = _objective_unit(kind)
    hours = _block_hours(compiled)
    d = compiled.demand
    bucket_tokens = {
        (w, int(t), int(b), int(k)): float(n)
        for w, t, b, k, n in zip(
            d["workload"], d["period"], d["block"], d["bucket"], d["tokens_per_unit"], strict=True
        )
    }
    duals: list[Dual] = []
    place_of = _row_placer(compiled)
    for row in model.rows:
        if row.family == "objective_stage" or row.name not in result.duals:
            continue
        if all(fixed[i] for i in row.coefs):
            continue  # nothing in this row can move at the chosen plan: no dual exists
        pi = float(result.duals[row.name])
        worth = -pi if row.sense == "<=" else pi
        place = place_of(row)
        per_mtoken = None
        tokens = _tokens_per_unit(bucket_tokens, row)
        if tokens is not None:
            _, t, b = row.key[:3]
            per_mtoken = pi / (hours[(int(t), int(b))] * 3600.0 * tokens) * 1e6
        duals.append(
            Dual(
                constraint=row.name,
                family=row.family,
                meaning=FAMILIES[row.family].description,
                d_objective_d_rhs=pi,
                unit=FAMILIES[row.family].dual_unit.replace("USD per", f"{unit} per", 1),
                worth=worth,
                usd_per_mtoken=per_mtoken,
                **place,
            )
        )
    duals.sort(key=lambda d: (-abs(d.d_objective_d_rhs), d.constraint))
    reduced = _reduced_costs(compiled, lp, values, result.reduced_costs, hours)
    return SensitivityReport(
        problem=compiled.problem.name,
        objective_kind=kind,
        objective=float(solution.result.objective),
        caveat=(
            "Shadow prices are duals of the LP of the chosen plan (training clusters as "
            "chosen, unused options at zero, unit counts divisible): they hold for small "
            "changes around this integer plan, not for large ones. Rows in which nothing "
            "can move at this plan have no dual and are not listed."
        ),
        duals=duals,
        reduced_costs=reduced,
    )


#: rows whose right-hand side is tokens/s of serving capacity (their dual is USD per token/s
#: over the block); ``demand_bucket`` rows are requests/s of a bucket (x its output tokens)
_TOKENS_PER_S_ROWS = ("demand", "n_plus_1")


def _tokens_per_unit(bucket_tokens: dict[tuple, float], row) -> float | None:
    """Output tokens per second that one unit of the row's right-hand side stands for (1
    for tokens/s rows, the bucket's output tokens for a requests/s row, from
    ``bucket_tokens``: (workload, period, block, bucket) -> tokens); None for rows that
    are not about serving capacity."""
    if row.family in _TOKENS_PER_S_ROWS:
        return 1.0
    if row.family != "demand_bucket":
        return None
    w, t, b, k = row.key[:4]
    tokens = bucket_tokens.get((w, int(t), int(b), int(k)), 0.0)
    return tokens if tokens > 0 else None


def _row_placer(compiled: Compiled) -> Callable[[object], dict[str, str | None]]:
    """A function giving the workload, period and block (by name) and pool a row is about,
    from the names of its family's key (:data:`solver.core.model.FAMILIES`; an option's row
    names the option's pool); None where it has none. The tables are looked up once (a
    model has a row per option and block: a scan of the options per row took most of
    ``shadow_prices`` on an autoscaled fleet)."""
    periods = compiled.periods["name"].tolist()
    blocks = compiled.blocks["name"].tolist()
    options = compiled.options
    pool_of = dict(zip(options["option_id"].tolist(), options["pool_id"].tolist(), strict=True))

    def named(value, table):
        if value is None:
            return None
        if isinstance(value, int | np.integer) and 0 <= int(value) < len(table):
            return str(table[int(value)])
        return str(value)

    def place(row) -> dict[str, str | None]:
        names = [k.rstrip("?") for k in FAMILIES[row.family].keys]
        parts = dict(zip(names, row.key, strict=False))
        pool = parts.get("pool")
        if pool is None and parts.get("option") is not None:  # a unit of an option: its pool
            pool = pool_of.get(parts["option"])
        return {
            "workload": None if parts.get("workload") is None else str(parts["workload"]),
            "period": named(parts.get("period"), periods),
            "block": named(parts.get("block"), blocks),
            "pool": None if pool is None else str(pool),
        }

    return place


def _block_hours(compiled: Compiled) -> dict[tuple[int, int], float]:
    p = compiled.periods["hours"].to_numpy()
    f = compiled.blocks["fraction"].to_numpy()
    return {(t, b): float(p[t] * f[b]) for t in range(len(p)) for b in range(len(f))}


def _reduced_costs(
    compiled: Compiled,
    lp: LinearModel,
    values: np.ndarray,
    dj: np.ndarray,
    hours: dict[tuple[int, int], float],
) -> list[ReducedCost]:
    # Only options that carry their whole cost themselves (rented units, rented training
    # clusters): a reserved or owned unit's cost sits on its commitment or purchase, which
    # is fixed at zero here, so its reduced cost alone would mislead (break-even prices
    # cover those pools).
    options = compiled.options.set_index("option_id")
    v = lp.variables.assign(dj=dj, value=values)
    rented = v["option_id"].map(options["mode"]).isin(RENTED_MODES)
    unused = v[v["kind"].isin(("x", "z")) & rented & (v["value"] <= 1e-7) & np.isfinite(v["dj"])]
    if unused.empty:
        return []
    best = unused.loc[unused.groupby("option_id")["dj"].idxmin()]
    out = []
    for r in best.itertuples(index=False):
        k = options.loc[r.option_id]
        cut = None
        if r.kind == "x" and k["mode"] in RENTED_MODES and r.block >= 0:
            cut = max(0.0, float(r.dj)) / hours[(int(r.period), int(r.block))]
        out.append(
            ReducedCost(
                option=f"{k['offering_id']} {k['mode']} -> {r.workload}",
                pool_id=k["pool_id"],
                workload=r.workload,
                mode=k["mode"],
                reduced_cost=float(r.dj),
                price_cut_usd_per_hour=cut,
            )
        )
    out.sort(key=lambda rc: (rc.reduced_cost, rc.option))
    return out


# ------------------------------------------------------------------ prices of pools


def pool_price(compiled: Compiled, pool_id: str) -> tuple[float, str]:
    """Current price of a pool and its unit (hourly per instance, or capex per server)."""
    pool = compiled.pools.set_index("pool_id").loc[pool_id]
    if pool["kind"] == "owned":
        return float(pool["capex_usd"]), "USD per server"
    return float(pool["price_usd_per_hour"]), "USD per instance-hour"


def with_pool_prices(compiled: Compiled, factors: dict[str, float]) -> Compiled:
    """A copy of ``compiled`` with each named pool's price multiplied by its factor."""
    pools = compiled.pools.copy()
    f_pool = pools["pool_id"].map(factors).fillna(1.0).to_numpy()
    owned = (pools["kind"] == "owned").to_numpy()
    pools["price_usd_per_hour"] = pools["price_usd_per_hour"] * np.where(owned, 1.0, f_pool)
    pools["capex_usd"] = pools["capex_usd"] * np.where(owned, f_pool, 1.0)
    options = compiled.options.copy()
    f_opt = options["pool_id"].map(factors).fillna(1.0).to_numpy()
    options["price_usd_per_hour"] = options["price_usd_per_hour"] * f_opt
    if "rent_usd" in options:
        options["rent_usd"] = options["rent_usd"] * f_opt
    return replace(compiled, pools=pools, options=options)


def with_pool_price(compiled: Compiled, pool_id: str, price: float) -> Compiled:
    """A copy of ``compiled`` with one pool at ``price`` (in :func:`pool_price` units)."""
    current, _ = pool_price(compiled, pool_id)
    if current <= 0:
        raise ValueError(f"pool {pool_id} has no price to scale")
    return with_pool_prices(compiled, {pool_id: price / current})


def pools_in_plan(model: LinearModel, values: np.ndarray, pools: pd.DataFrame) -> set[str]:
    """Pool ids with any unit in use, bought or committed."""
    v = model.variables
    used = v["kind"].isin(_USE_KINDS).to_numpy() & (values > 1e-7)
    return {pools["pool_id"].iat[int(p)] for p in v.loc[used, "pool"] if p >= 0}


# ------------------------------------------------------------------ break-even prices


@dataclass(frozen=True)
class PriceSlopes:
    """How the model changes with pool prices: it is affine in each pool's price.

    ``objective[j]`` is d(cost coefficient of variable j)/d(price of its pool);
    ``rows[r]`` maps variable j to d(coefficient in row r)/d(price of j's pool) for the
    rows that carry costs (budget, period budgets, provider shares).
    """

    objective: np.ndarray
    rows: dict[int, dict[int, float]]
    base_price: np.ndarray  # per pool


def price_slopes(compiled: Compiled, model: LinearModel) -> PriceSlopes:
    """Compare the model with every pool price doubled (two builds for all pools).

    Every variable belongs to one pool and its coefficients are affine in that pool's
    price alone, so one doubled build gives every slope at once.
    """
    pools = compiled.pools
    owned = (pools["kind"] == "owned").to_numpy()
    base_price = np.where(
        owned, pools["capex_usd"].to_numpy(float), pools["price_usd_per_hour"].to_numpy(float)
    )
    doubled = build_model(with_pool_prices(compiled, dict.fromkeys(pools["pool_id"], 2.0)))
    pool_of = model.variables["pool"].to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        per_var = np.where(pool_of >= 0, base_price[np.maximum(pool_of, 0)], np.nan)
    dense = np.zeros(len(model.variables))
    for j, c in doubled.objective.coefs.items():
        dense[j] += c
    for j, c in model.objective.coefs.items():
        dense[j] -= c
    objective = np.where(per_var > 0, dense / np.where(per_var > 0, per_var, 1.0), 0.0)
    rows: dict[int, dict[int, float]] = {}
    for r, (a, b) in enumerate(zip(model.rows, doubled.rows, strict=True)):
        changed = {
            j: (b.coefs.get(j, 0.0) - c) / per_var[j]
            for j, c in a.coefs.items()
            if per_var[j] > 0 and abs(b.coefs.get(j, 0.0) - c) > 1e-12 * max(1.0, abs(c))
        }
        if changed:
            rows[r] = changed
    return PriceSlopes(objective, rows, base_price)


def _pool_vars(model: LinearModel, pool_index: int, kinds=_USE_KINDS) -> np.ndarray:
    v = model.variables
    return np.flatnonzero((v["pool"] == pool_index).to_numpy() & v["kind"].isin(kinds).to_numpy())


class _PoolPricer:
    """A warm HiGHS session of the model in which one pool's price can be set."""

    def __init__(self, model: LinearModel, slopes: PriceSlopes, pool_index: int) -> None:
        self.session = HighsSession(model)
        self.model = model
        self.cols = _pool_vars(model, pool_index)
        self.slope = slopes.objective
        self.cost0 = self.session.cost[self.cols].copy()
        self.p0 = float(slopes.base_price[pool_index])
        members = set(self.cols.tolist())
        self.row_changes = [
            (r, j, model.rows[r].coefs[j], d)
            for r, changes in slopes.rows.items()
            for j, d in changes.items()
            if j in members
        ]

    def set_price(self, price: float) -> None:
        delta = price - self.p0
        self.session.set_costs(self.cols, self.cost0 + delta * self.slope[self.cols])
        for r, j, a0, d in self.row_changes:
            self.session.set_coefficient(r, j, a0 + delta * d)


def _pruned_keeping(compiled: Compiled, pool_id: str) -> Compiled:
    """``compiled`` with other pools pruned by dominance, ``pool_id`` kept apart."""
    return repruned(compiled, keep=frozenset({pool_id}))


def _slopes_by_name(model: LinearModel, slopes: PriceSlopes, other: LinearModel) -> PriceSlopes:
    """``slopes`` of ``model`` carried over to ``other`` (same names, fewer options)."""
    names = model.variables["name"].to_numpy()
    position = {n: j for j, n in enumerate(other.variables["name"])}
    objective = np.zeros(len(other.variables))
    for j, n in enumerate(names):
        k = position.get(n)
        if k is not None:
            objective[k] = slopes.objective[j]
    row_index = {row.name: r for r, row in enumerate(other.rows)}
    rows: dict[int, dict[int, float]] = {}
    for r, changes in slopes.rows.items():
        target = row_index.get(model.rows[r].name)
        if target is None:
            continue
        mapped = {position[names[j]]: d for j, d in changes.items() if names[j] in position}
        if mapped:
            rows[target] = mapped
    return PriceSlopes(objective, rows, slopes.base_price)


def _solve_cold(model: LinearModel, solver: str, options: SolveOptions):
    r = get_backend(solver).solve(model, options)
    return (r.objective, r.values) if r.has_solution else (None, None)


def _forced(model: LinearModel, pool_index: int) -> LinearModel:
    idx = _pool_vars(model, pool_index, ("x", "z"))
    row = new_row("force_use", (pool_index,), dict.fromkeys(idx, 1.0), ">=", 1)
    return LinearModel(model.variables, [*model.rows, row], model.objective, model.expressions)


def _excluded(model: LinearModel, pool_index: int) -> LinearModel:
    v = model.variables.copy()
    v.loc[_pool_vars(model, pool_index), "ub"] = 0.0
    return LinearModel(v, model.rows, model.objective, model.expressions)


def _all_carried(model: LinearModel, values: np.ndarray, other: LinearModel) -> bool:
    """Whether every variable the plan sets (the N+1 class aside: :func:`carried` sets it
    again) exists in ``other``: then the plan carried over is the same plan."""
    v = model.variables
    set_ = (np.abs(values) > 1e-9) & (v["kind"] != "top").to_numpy()
    return bool(v["name"][set_].isin(other.variables["name"]).all())


class _Warm:
    """Break-even re-solves of one HiGHS model changed in place, each starting from the
    last plan. The other pools are pruned by dominance (this one kept and not counted as
    room for others): exact while only its price moves, and a much smaller MIP."""

    def __init__(self, compiled, pool_id, pi, model, slopes, start, options) -> None:
        full_model = model if model is not None else build_model(compiled)
        full_slopes = slopes if slopes is not None else price_slopes(compiled, full_model)
        self.model = build_model(_pruned_keeping(compiled, pool_id))
        self.slopes = _slopes_by_name(full_model, full_slopes, self.model)
        self.start = None if start is None else carried(full_model, start, self.model)
        self.holds_plan = start is not None and _all_carried(full_model, start, self.model)
        self.pi, self.options = pi, options
        self.pricer = _PoolPricer(self.model, self.slopes, pi)
        self.session = self.pricer.session
        self.split: _PeriodSplit | None | bool = None  # built at the first step

    def _split(self) -> bool:
        """Whether the steps go period by period (:class:`_PeriodSplit`, built at the first
        step): where the model has two periods or more and N+1 classes (``top``). With one
        period, (A) is the whole model but its purchases; without N+1 classes the whole
        model's steps close at its root in about 10-30 ms, less than the split's several
        subproblems (on the shipped one-period problems and a generated two-period one
        the split only added solves: bench/RESULTS.md, issue 28, fifth stop). N+1 is where
        the relaxation is weak and the whole model's last steps branch hundreds of times
        (bench/RESULTS.md, "Autoscaled fleets: the relaxation")."""
        if self.split is None:
            v = self.model.variables
            own = ~v["kind"].isin(_SPANNING_KINDS).to_numpy() & (v["period"].to_numpy() >= 0)
            force = _pool_vars(self.model, self.pi, ("x", "z"))
            # (A) or (B) covers every plan, and "used" is "used in some period", only where
            # those counts are whole units (a savings plan's USD per hour is not)
            whole = v["integer"].to_numpy(bool) & (v["lb"].to_numpy(float) >= 0)
            n_plus_1 = bool((v["kind"] == "top").any())
            if (
                not n_plus_1
                or len(np.unique(v["period"].to_numpy()[own])) < 2
                or not (whole[~own].all() and whole[force].all())
            ):
                self.split = False
            else:
                self.split = _PeriodSplit(self.model, self.session, force, self.pricer.cols)
        return self.split is not False

    def _changed(self, price: float) -> dict[tuple[int, int], float]:
        """The coefficients that move with the pool's price (a budget row), at ``price``."""
        return {
            (r, j): a0 + (price - self.pricer.p0) * d for r, j, a0, d in self.pricer.row_changes
        }

    def objective_without_pool(self) -> float | None:
        """The optimum with the pool's variables fixed at 0 (bounds restored after)."""
        cols, session = self.pricer.cols, self.session
        session.set_bounds(cols, np.zeros(len(cols)), np.zeros(len(cols)))
        r = session.solve(self.options)
        lower = self.model.variables["lb"].to_numpy(float)[cols]
        upper = self.model.variables["ub"].to_numpy(float)[cols]
        session.set_bounds(cols, lower, np.where(np.isfinite(upper), upper, 1e30))
        return r.objective if r.has_solution else None

    def require_pool(self) -> None:
        """From now on every plan uses at least one unit of the pool."""
        units = _pool_vars(self.model, self.pi, ("x", "z")).tolist()
        self.session.add_row(dict.fromkeys(units, 1.0), 1.0, 1e30)

    def solve_at(self, price: float, x_start):
        self.pricer.set_price(price)
        r = self.session.solve(self.options, start=x_start)
        return (r.objective, r.values) if r.has_solution else (None, None)

    def feasible_at(self, x: np.ndarray, price: float) -> bool:
        """Whether plan ``x`` (feasible at some price) keeps the rows that move with the
        pool's price (a budget it is charged to) at ``price``."""
        rows = self.model.rows
        moved: dict[int, float] = {}
        for r, j, _a0, d in self.pricer.row_changes:
            moved[r] = moved.get(r, 0.0) + (price - self.pricer.p0) * d * x[j]
        for r, delta in moved.items():
            row = rows[r]
            activity = sum(c * x[j] for j, c in row.coefs.items()) + delta
            slack = 1e-9 * max(1.0, abs(row.rhs))
            if (row.sense != ">=" and activity > row.rhs + slack) or (
                row.sense != "<=" and activity < row.rhs - slack
            ):
                return False
        return True

    def plan_below(self, price: float, bound: float):
        """At ``price``, a plan using the pool with a cost below ``bound`` (any cost when
        ``bound`` is inf), proved within :data:`STEP_GAP` of the best such plan, not
        closer: ``(cost, plan)``; ``None`` when the solver proves there is none; ``False``
        when it stopped without knowing (a time limit)."""
        import highspy

        h = self.session.h
        self.pricer.set_price(price)
        if self._split():
            got = self.split.below(self.session.cost, self._changed(price), bound, self.options)
            if got is not False:
                return got
        h.setOptionValue("objective_bound", float(bound))
        # a step after the first starts from the branch and bound, not a restricted MIP:
        # the last plan was within STEP_GAP, and the last step finds nothing to start from
        first = not np.isfinite(bound)
        try:
            r = self.session.solve(
                replace(
                    self.options,
                    relative_gap=STEP_GAP,
                    start_heuristic=first,
                    backend_options={**self.options.backend_options, **STEP_OPTIONS},
                )
            )
        finally:
            h.setOptionValue("objective_bound", highspy.kHighsInf)
        if r.has_solution and r.objective < bound:
            return r.objective, r.values
        proved = r.termination in (Termination.OPTIMAL, Termination.INFEASIBLE)
        return None if proved else False


#: variables that decide for several periods at once (a purchase, a reservation or a
#: savings plan from a period for its term): the plans without any are split by period
#: in :class:`_PeriodSplit`
_SPANNING_KINDS = ("buy", "commit", "savings_plan")


class _PeriodSplit:
    """The last step of a break-even search (no plan using the pool beats the target)
    proved period by period where the periods are independent.

    A plan that uses the pool either (A) buys or reserves nothing
    (:data:`_SPANNING_KINDS` all zero) or (B) buys or reserves something. Without purchases
    and reservations the periods share only rows whose variables span periods (a
    budget, a carbon cap, the forced pool's row); left out, what remains of (A) is one
    subproblem per period, and every plan of (A) is a plan of each, so the sum of their
    optima bounds (A) from below (a relaxation). A plan of (A) that uses the pool uses it
    in some period t: (A) costs at least min over t of (period t with the pool forced in)
    + (the other periods' optima). (B) is the whole model with "some purchase or
    reservation" as a row: on the seed its root cuts alone close it, where the model
    without that row needs hundreds of nodes to tell the two apart. When both reach the
    target, no plan beats it: an exact proof. When (A)'s subproblems put together give a
    plan of the whole model below the target (the left-out rows hold), it is the best
    plan of (A), and (B)'s plan below the target is a plan too; otherwise the caller
    solves the whole model. Measured in bench/RESULTS.md ("Autoscaled fleets: break-even
    speed", issue 28, fifth stop).
    """

    def __init__(self, model: LinearModel, session: HighsSession, force_cols, pool_cols) -> None:
        import highspy

        v = model.variables
        period = v["period"].to_numpy(int)
        spanning = v["kind"].isin(_SPANNING_KINDS).to_numpy() | (period < 0)
        periods = sorted({int(t) for t in period[~spanning]})
        rows: dict[int, list[int]] = {t: [] for t in periods}
        for r, row in enumerate(model.rows):
            own = {int(period[j]) for j in row.coefs if not spanning[j]}
            if len(own) == 1:
                rows[own.pop()].append(r)
        self.model, self.periods, self.rows, self.session = model, periods, rows, session
        self.cols = {t: np.flatnonzero((period == t) & ~spanning) for t in periods}
        self.local = {t: {int(j): i for i, j in enumerate(self.cols[t])} for t in periods}
        self.local_row = {r: (t, i) for t in periods for i, r in enumerate(rows[t])}
        self.sessions: dict[int, HighsSession] = {}
        self.force_row: dict[int, int] = {}
        inf = highspy.kHighsInf
        for t in periods:
            local = self.local[t]
            sub_rows = [  # a purchase or reservation is 0 in (A): its terms drop out
                replace(
                    model.rows[r],
                    coefs={local[j]: c for j, c in model.rows[r].coefs.items() if j in local},
                )
                for r in rows[t]
            ]
            sub_vars = v.iloc[self.cols[t]].reset_index(drop=True)
            sub = LinearModel(sub_vars, sub_rows, type(model.objective)(), {})
            self.sessions[t] = HighsSession(sub)
            mine = {local[int(j)]: 1.0 for j in force_cols if int(j) in local}
            if mine:
                self.force_row[t] = self.sessions[t].add_row(mine, -inf, inf)
        self.shape = _shapes(self.sessions)
        pool_cols = set(np.asarray(pool_cols).tolist())
        self.moves = {t: bool(pool_cols.intersection(self.local[t])) for t in periods}
        self.fixed: dict[int, tuple] = {}  # optima of the periods the price does not move
        some = np.flatnonzero(spanning & (v["ub"].to_numpy(float) > 0))
        self.spanning = some
        self.some_row = session.add_row(dict.fromkeys(some.tolist(), 1.0), -inf, inf)

    def _set(self, cost: np.ndarray, changed: dict[tuple[int, int], float]) -> None:
        """The subproblems at the model's costs and changed coefficients (row, column)."""
        for t in self.periods:
            cols = self.cols[t]
            self.sessions[t].set_costs(np.arange(len(cols)), cost[cols])
        for (r, j), a in changed.items():
            if r in self.local_row and j in self.local[self.local_row[r][0]]:
                t, i = self.local_row[r]
                self.sessions[t].set_coefficient(i, self.local[t][j], a)

    def below(self, cost, changed, bound: float, options: SolveOptions):
        """Whether a plan using the pool costs below ``bound`` at costs ``cost`` (the
        model's, with ``changed`` coefficients): None when none does (proved), ``(cost,
        plan)`` of one, False when this split cannot tell (the caller then solves the
        whole model)."""
        self._set(cost, changed)
        # periods alike but for the scale of their costs are solved once (moved
        # coefficients in a period's rows, a period budget, would make them differ)
        memo = None if any(r in self.local_row for r, _ in changed) else {}
        free, forced = {}, {}
        for t in self.periods:
            free[t] = self.fixed.get(t) or self._optimum(t, False, cost, options, memo)
            if free[t] is False:
                return False
            if not self.moves[t]:  # the pool has no column there: it does not move
                self.fixed[t] = free[t]
        for t in self.force_row:
            forced[t] = self._optimum(t, True, cost, options, memo)
            if forced[t] is False:
                return False
        if any(f is None for f in free.values()):
            forced = {}  # a period without any plan: (A) has none
        rest = bound - float(self.model.objective.constant)
        found = []
        for t, got in forced.items():
            if got is None:  # no plan of (A) uses the pool in period t
                continue
            others = [free[s] for s in self.periods if s != t]
            if got[0] + sum(f[0] for f in others) >= rest:
                continue  # proved: no plan of (A) with the pool in period t beats it
            total = got[1] + sum(f[1] for f in others)
            if total >= rest:
                return False  # within the subproblems' gaps of the bound: undecided
            found.append((total, t, got[2]))
        if found:  # (A) has a plan below the bound, if the left-out rows hold
            _, t, values = min(found, key=lambda f: f[0])
            x = np.zeros(len(self.model.variables))
            for s in self.periods:
                x[self.cols[s]] = values if s == t else free[s][2]
            value = float(cost @ x + self.model.objective.constant)
            ok = value < bound and _holds(self.model, x, changed)
            return (value, x) if ok else False
        if not len(self.spanning):
            return None
        r = _below_with_row(self.session, self.some_row, bound, options)  # (B)
        if r is None or r is False:
            return r
        return r.objective, r.values

    def _optimum(self, t: int, forced: bool, cost: np.ndarray, options, memo):
        """Period t's optimum (the pool forced in when ``forced``): ``(lower bound, cost,
        plan)``, None when it has no plan, False when the solver stopped without knowing.
        From ``memo`` when a period of the same shape was solved at costs in proportion
        (the same plans are optimal, the optimum scaled)."""
        import highspy

        local = cost[self.cols[t]]
        key = (self.shape[t], forced)
        if memo is not None and key in memo:
            c0, got = memo[key]
            scale = _proportion(c0, local)
            if scale is not None:
                if got is None:
                    return None
                low = got[0] * scale
                return low - 1e-9 * abs(low), float(local @ got[2]), got[2]
        session = self.sessions[t]
        if forced:
            session.h.changeRowBounds(self.force_row[t], 1.0, highspy.kHighsInf)
        try:
            r = session.solve(replace(options, relative_gap=PERIOD_GAP, start_heuristic=False))
        finally:
            if forced:
                inf = highspy.kHighsInf
                session.h.changeRowBounds(self.force_row[t], -inf, inf)
        if r.termination == Termination.INFEASIBLE:
            got = None
        elif r.termination != Termination.OPTIMAL:
            return False
        else:
            got = (float(r.bound), float(r.objective), r.values)
        if memo is not None:
            memo[key] = (local, got)
        return got


def _proportion(a: np.ndarray, b: np.ndarray) -> float | None:
    """The factor f > 0 with b = f a to 1e-12 (both non-negative, zero in the same
    places), or None."""
    if a.shape != b.shape or (a < 0).any() or (b < 0).any() or not (a > 0).any():
        return None
    if not np.array_equal(a > 0, b > 0):
        return None
    ratio = b[a > 0] / a[a > 0]
    f = float(ratio.max())
    return f if float(ratio.min()) >= f * (1.0 - 1e-12) else None


def _shapes(sessions: dict[int, HighsSession]) -> dict[int, int]:
    """Per period, the first period whose subproblem is the same but for its costs (the
    same columns' bounds and types, rows and coefficients, as HiGHS holds them)."""
    seen: list[tuple[int, tuple]] = []
    out = {}
    for t, session in sessions.items():
        lp = session.h.getLp()
        m = lp.a_matrix_
        parts = (lp.col_lower_, lp.col_upper_, lp.row_lower_, lp.row_upper_, session.integer,
                 m.start_, m.index_, m.value_)  # fmt: skip
        sign = tuple(np.asarray(p).tobytes() for p in parts) + (str(m.format_),)
        out[t] = next((u for u, other in seen if other == sign), t)
        if out[t] == t:
            seen.append((t, sign))
    return out


def _below_with_row(session: HighsSession, row: int, cutoff: float, options: SolveOptions):
    """Solve ``session`` with ``row`` (a sum of units) at least 1 for plans below ``cutoff``:
    the result of one (within :data:`STEP_GAP` of the best), None when the solver proved
    there is none, False when it stopped without knowing."""
    import highspy

    h = session.h
    h.changeRowBounds(row, 1.0, highspy.kHighsInf)
    h.setOptionValue("objective_bound", float(cutoff))
    try:
        r = session.solve(
            replace(
                options,
                relative_gap=STEP_GAP,
                start_heuristic=False,
                backend_options={**options.backend_options, **STEP_OPTIONS},
            )
        )
    finally:
        h.setOptionValue("objective_bound", highspy.kHighsInf)
        h.changeRowBounds(row, -highspy.kHighsInf, highspy.kHighsInf)
    if r.has_solution and r.objective < cutoff:
        return r
    return None if r.termination in (Termination.OPTIMAL, Termination.INFEASIBLE) else False


def _holds(model: LinearModel, x: np.ndarray, changed: dict[tuple[int, int], float]) -> bool:
    """Whether plan ``x`` keeps every row of ``model`` (with ``changed`` coefficients),
    to HiGHS's feasibility tolerance scaled by the row."""
    lb = model.variables["lb"].to_numpy(float)
    ub = model.variables["ub"].to_numpy(float)
    if np.any(x < lb - 1e-9) or np.any(x > ub + 1e-9):
        return False
    for r, row in enumerate(model.rows):
        activity = sum((changed.get((r, j), c)) * x[j] for j, c in row.coefs.items())
        slack = 1e-7 * max(1.0, abs(row.rhs))
        if (row.sense != ">=" and activity > row.rhs + slack) or (
            row.sense != "<=" and activity < row.rhs - slack
        ):
            return False
    return True


#: relative gap of the period subproblems without the pool forced in: their optima's
#: bounds add up to the lower bound that must reach the target (to the searches' 1e-6),
#: so each is closed far tighter than that
PERIOD_GAP = 1e-7


# A Newton step needs a plan below the target, not the best one (its line then lies a
# little above the tangent, and the step is a little short): 1% of the best, measured on
# the seed's 16 break-even classes (bench/RESULTS.md, issue 27), cut the search's CPU time
# by a quarter against solving each step to 1e-6. Only the last step's proof (no plan
# below the target) decides the answer, and it is exact whatever the gap.
STEP_GAP = 1e-2
# HiGHS's sub-MIP heuristics (RINS, RENS) and feasibility jump, off in the steps (options
# for those solves only, HighsSession.solve sets them back): the
# break-even models are small (about 600 columns after presolve on the seed) and their
# B&B finds plans within STEP_GAP by itself, while the last step, the proof that no plan
# beats the target, can use no plan at all. Measured on the seed's 16 classes (one
# process, CPU): 19.9 s with them, 12.8 s without (with no restricted start after the
# first step), the proofs 9.3 s to 4.1 s, the same break-evens (bench/RESULTS.md, issue
# 27). The root reduced-cost heuristic stays on: without it the steps' plans are
# poorer and the searches take three times as many steps.
STEP_OPTIONS = {
    "mip_heuristic_run_rins": False,
    "mip_heuristic_run_rens": False,
    "mip_heuristic_run_feasibility_jump": False,
}


def _newton_any_plan(
    way: _Warm, slope: np.ndarray, target: float, price: float, known, max_steps: int = 40
):
    """Newton on ``f`` with plans that beat ``target``, not necessarily the best ones.

    A plan x using the pool, of cost v at price p, is a line ``v + u (q - p)`` (``u`` its
    price-weighted usage) above ``f``, as ``f`` is the least such line: at the price q
    where the line meets ``target``, ``f(q) <= target``, so q is at most the break-even.
    Each step then asks the solver only for a plan below ``target`` at q, within
    :data:`STEP_GAP` of the best (:meth:`_Warm.plan_below`); the last step proves
    that none exists, and q is the break-even to the solver's relative gap. Where rows
    move with the price (a budget), a step is taken only while x stays feasible at q
    (:meth:`_Warm.feasible_at`); otherwise the exact search goes on from x.

    ``known`` is ``(cost, plan)`` of a plan using the pool at ``price``, or None (one is
    found first). Returns ``(price, solves, note, last)``: the break-even, or None with a
    ``note`` that says why, or with ``last`` = ``(price, cost, plan)`` from which the
    exact search goes on (the solver stopped without an answer, or the steps ran out).
    """
    solves = 0
    tol = way.options.relative_gap * max(1.0, abs(target))
    if known is None:
        known = way.plan_below(price, np.inf)
        solves += 1
        if known is None and not way.pricer.row_changes:  # none at any price
            return None, solves, "no feasible plan can use it at this price", None
        if not known:  # the exact search looks at other prices (or had no time)
            return None, solves, "", None
    value, x = known
    for _ in range(max_steps):
        u = float(slope @ x)
        if u <= 1e-12:
            return None, solves, "its price does not enter the cost", None
        trial = max(0.0, price + (target - value) / u)
        if not way.feasible_at(x, trial):  # the line is not above f there
            break
        found = way.plan_below(trial, target - tol)
        solves += 1
        if found is None:  # no plan beats the target at the trial price
            if trial <= 0.0:
                return None, solves, "does not enter at any positive price", None
            return trial, solves, "", None
        if found is False:
            break
        price, (value, x) = trial, found
    return None, solves, "", (price, value, x)


class _Cold:
    """Break-even re-solves that rebuild the model at each price and solve it afresh."""

    def __init__(self, compiled, pool_id, pi, model, slopes, start, options, solver, p0) -> None:
        self.compiled, self.pool_id, self.pi, self.p0 = compiled, pool_id, pi, p0
        self.model = model if model is not None else build_model(compiled)
        self.slopes = slopes if slopes is not None else price_slopes(compiled, self.model)
        self.start, self.options, self.solver = start, options, solver
        # the caller's model (a class merged into one pool is rebuilt with fewer variables)
        self.holds_plan = start is not None and len(start) == len(self.model.variables)

    def objective_without_pool(self) -> float | None:
        target, _ = _solve_cold(_excluded(self.model, self.pi), self.solver, self.options)
        return target

    def require_pool(self) -> None:
        """Each solve forces the pool in (:func:`_forced`)."""

    def solve_at(self, price: float, x_start):
        m = (
            self.model
            if price == self.p0
            else build_model(with_pool_price(self.compiled, self.pool_id, price))
        )
        return _solve_cold(_forced(m, self.pi), self.solver, self.options)


def break_even_for_pool(
    compiled: Compiled,
    base_objective: float,
    pool_id: str,
    in_plan: bool,
    *,
    solver: str = "highspy",
    options: SolveOptions | None = None,
    warm: bool = True,
    model: LinearModel | None = None,
    slopes: PriceSlopes | None = None,
    start: np.ndarray | None = None,
    max_steps: int = 8,
    twins: Sequence[str] = (),
) -> BreakEven:
    """Exact break-even price of one pool (module docstring: Newton on f(p)), or of its
    class with ``twins`` (:func:`pool_classes`: their prices move with it).

    Parameters
    ----------
    compiled
        The compiled problem at current prices.
    base_objective
        The optimal objective at current prices.
    pool_id
        The pool (offering and mode, or server at a site).
    in_plan
        Whether the optimal plan uses the pool (then the price where it leaves is sought).
    warm
        Re-solve one HiGHS model changed in place, each solve starting from the last plan
        (default); False rebuilds the model and solves it afresh each time with ``solver``.
    model, slopes, start
        The built model, its :func:`price_slopes` and the optimal plan, when the caller
        has them (they are computed otherwise).
    """
    options = options or SolveOptions(relative_gap=1e-6)
    if twins:
        compiled = _merged(compiled, pool_id, twins)
        if not warm:
            model = slopes = None  # rebuilt from the merged class
    pools = compiled.pools
    pi = int(np.flatnonzero((pools["pool_id"] == pool_id).to_numpy())[0])
    pool = pools.iloc[pi]
    p0, unit = pool_price(compiled, pool_id)
    out = BreakEven(
        pool_id=pool_id,
        provider=pool["provider"],
        region=pool["region"],
        offering=pool["offering_id"],
        accelerator=pool["accelerator_id"],
        mode=pool["mode"],
        in_plan=in_plan,
        price_unit=unit,
        current_price=p0,
        direction="leaves above" if in_plan else "enters below",
        same_as=sorted(twins),
    )
    way = (
        _Warm(compiled, pool_id, pi, model, slopes, start, options)
        if warm
        else _Cold(compiled, pool_id, pi, model, slopes, start, options, solver, p0)
    )
    members = _pool_vars(way.model, pi)
    slope = np.zeros(len(way.model.variables))
    slope[members] = way.slopes.objective[members]  # d(objective)/d(this pool's price)
    solves = 0
    if in_plan:
        target = way.objective_without_pool()
        solves += 1
        if target is None:
            return out.model_copy(
                update={"solves": solves, "note": "the plan is infeasible without it"}
            )
    else:
        target = base_objective
    way.require_pool()
    price, x = p0, (way.start if in_plan else None)
    # a pool in the plan: the plan is the best one using it at today's price (no solve)
    known = (base_objective, x) if in_plan and way.holds_plan else None
    if warm:
        found, n, note, last = _newton_any_plan(way, slope, target, p0, known)
        solves += n
        if found is not None:
            return _at_break_even(out, found, p0, solves, in_plan)
        if note:
            return out.model_copy(update={"solves": solves, "note": note})
        if last is not None:  # the exact search goes on from the last plan found
            price, known = last[0], (last[1], last[2])
    below: tuple[float, float, np.ndarray] | None = None  # last price where it is in
    for _ in range(max_steps):
        if known is not None:
            (value, x), known = known, None
        else:
            value, x = way.solve_at(price, x)
            solves += 1
        if value is None:  # the feasible set moved with the price (e.g. a binding budget)
            found, n = _bisect_feasible(way, slope, target, below, price, x)
            solves += n
            if found is None:
                return out.model_copy(
                    update={"solves": solves, "note": "no feasible plan can use it at this price"}
                )
            price = found
            break
        if value <= target + 1e-9 * max(1.0, abs(target)):
            below = (price, value, x)
        u = float(slope @ x)
        if u <= 1e-12:
            return out.model_copy(
                update={"solves": solves, "note": "its price does not enter the cost"}
            )
        a = value - u * price
        new_price = (target - a) / u
        converged = abs(new_price - price) <= 1e-6 * max(1.0, abs(price))
        price = new_price
        if converged:
            break
    return _at_break_even(out, price, p0, solves, in_plan)


def _at_break_even(out: BreakEven, price: float, p0: float, solves: int, in_plan: bool):
    if price <= 0 and not in_plan:
        return out.model_copy(
            update={"solves": solves, "note": "does not enter at any positive price"}
        )
    return out.model_copy(
        update={
            "break_even_price": price,
            "change_pct": 100.0 * (price - p0) / p0,
            "solves": solves,
        }
    )


def _bisect_feasible(
    way, slope: np.ndarray, target: float, below, above: float, x_start, tol: float = 1e-7
) -> tuple[float | None, int]:
    """The break-even price where a Newton step left the feasible set (issue 34, item 2).

    The pool is *in* at price p when some plan using it is feasible and its objective is
    at most ``target``; that holds below the break-even and fails above it, also where
    the set of feasible plans shrinks as the price rises (a binding budget under
    ``max_served``: fewer units fit). ``below`` is the last (price, objective, plan)
    where it was in; ``above`` a price where no plan using it was feasible. Bisection on
    the bracket, each round first trying the Newton step from its lower end (a lower
    bound of the break-even on a fixed feasible set, as the optimum is concave in the
    price), until the bracket is ``tol`` of the price wide. Without ``below`` the search
    starts at price 0 (cheapest), where the pool must be in.

    Returns the upper end of the final bracket (the first price, to ``tol``, at which it
    is out) and the number of solves; None when it is in at no price of the bracket.
    """
    solves = 0
    if below is None:
        value, x = way.solve_at(0.0, x_start)
        solves += 1
        if value is None or value > target + 1e-9 * max(1.0, abs(target)):
            return None, solves
        below = (0.0, value, x)
    lo, hi = below[0], above
    lo_value, lo_x = below[1], below[2]
    newton = True
    while hi - lo > tol * max(1.0, abs(hi)) and solves < 200:
        u = float(slope @ lo_x)
        step = lo + (target - lo_value) / u if u > 1e-12 else hi
        mid = step if newton and lo < step < hi else 0.5 * (lo + hi)
        newton = not newton  # alternate: the bracket at least halves every other solve
        value, x = way.solve_at(mid, lo_x)
        solves += 1
        if value is not None and value <= target + 1e-9 * max(1.0, abs(target)):
            lo, lo_value, lo_x = mid, value, x
            if abs(value - target) <= 1e-9 * max(1.0, abs(target)):
                return mid, solves  # on the fixed set: Newton's exact answer
        else:
            hi = mid
    return hi, solves


def _unpruned(compiled: Compiled) -> None:
    if compiled.pruned_dominated:
        raise ValueError(
            "price, demand and limit analyses need every option: compile with "
            "compile_problem(..., prune_dominated=False)"
        )


_CLASS_COLUMNS = (
    "workload",
    "tokens_per_s_per_unit",
    "n_units",
    "job_hours",
    "start_period",
    "end_period",
    "rent_usd",
    "energy_usd_per_unit_hour",
)


def pool_classes(compiled: Compiled, pool_ids: Iterable[str]) -> list[list[str]]:
    """The pools grouped into classes of interchangeable ones: the same kind, mode and
    price, the same options for every workload (capacity, clusters, hours), the same
    CO2e where carbon counts, and none holding existing units. The same offering at the
    same price in several regions is one class: a break-even row for each member would
    only say that its twins replace it at any higher price (a $0 tie). No classes under
    quotas or provider shares (there the region or provider of a unit matters).
    """
    pool_ids = sorted(set(pool_ids))
    problem = compiled.problem
    if problem.quotas or problem.provider_share_max:
        return [[p] for p in pool_ids]
    opts = compiled.options[compiled.options["pool_id"].isin(pool_ids)]
    columns = [c for c in _CLASS_COLUMNS if c in opts]
    if carbon_counts(problem):
        columns += [c for c in ("kgco2e_per_unit_hour", "kgco2e") if c in opts]
    rows = pd.Series(
        ["|".join(map(str, r)) for r in opts[columns].round(9).itertuples(index=False)],
        index=opts.index,
    )
    buckets = compiled.bucket_capacity.groupby("option_id")["requests_per_s_per_unit"]
    mix = buckets.agg(lambda v: ",".join(f"{x:.9g}" for x in v)).to_dict()
    rows = rows + "|" + opts["option_id"].map(lambda k: mix.get(k, ""))
    shape = rows.groupby(opts["pool_id"]).agg(lambda v: ";".join(sorted(v)))
    pools = compiled.pools.set_index("pool_id").loc[pool_ids]
    key = (
        pools["kind"]
        + "|"
        + pools["mode"]
        + "|"
        + pools["price_usd_per_hour"].round(9).astype(str)
        + "|"
        + pools["capex_usd"].round(6).astype(str)
        + "|"
        + shape.reindex(pools.index).fillna("")
    )
    key = key.where(pools["existing_units"] <= 0, "own|" + pools.index.to_series())
    return [sorted(g.index) for _, g in key.groupby(key, sort=True)]


def _merged(compiled: Compiled, pool_id: str, twins: Iterable[str]) -> Compiled:
    """``compiled`` with a class as one pool: the twins' options gone and their
    availability added to ``pool_id``'s (its price then moves for the whole class)."""
    twins = set(twins)
    if not twins:
        return compiled
    pools = compiled.pools.copy()
    is_twin = pools["pool_id"].isin(twins)
    rep = pools["pool_id"] == pool_id
    pools.loc[rep, "availability_cap"] += pools.loc[is_twin, "availability_cap"].sum()
    options = compiled.options[~compiled.options["pool_id"].isin(twins)]
    return with_options(replace(compiled, pools=pools), options)


def break_even_candidates(solution: Solution) -> tuple[list[str], set[str]]:
    """Pools that could serve a workload (those with options), and those in the plan."""
    compiled = solution.compiled
    _unpruned(compiled)
    in_plan = pools_in_plan(solution.model, solution.result.values, compiled.pools)
    pools = compiled.pools
    price = np.where(pools["kind"] == "owned", pools["capex_usd"], pools["price_usd_per_hour"])
    priced = set(pools["pool_id"][price > 0])
    return sorted(set(compiled.options["pool_id"]) & priced), in_plan


def _break_even_task(shared: tuple, classes: list[tuple[str, list[str]]]) -> list[BreakEven]:
    compiled, model, slopes, base_objective, start, in_plan, solver, warm = shared
    options = SolveOptions(relative_gap=1e-6)
    return [
        break_even_for_pool(
            compiled,
            base_objective,
            p,
            p in in_plan,
            solver=solver,
            options=options,
            warm=warm,
            model=model,
            slopes=slopes,
            start=start,
            twins=twins,
        )
        for p, twins in classes
    ]


def break_even_prices(
    solution: Solution,
    *,
    pools: Iterable[str] | None = None,
    limit: int | None = None,
    solver: str = "highspy",
    warm: bool = True,
    workers: int = 1,
    scheduler: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    deadline: float | None = None,
    left_out: list[str] | None = None,
) -> list[BreakEven]:
    """Break-even prices for pools, sorted by how close each is to its current price.

    Parameters
    ----------
    pools
        Pool ids to analyse; default every pool that could serve a workload.
    limit
        Analyse the pools in the plan and, of the others, the ``limit`` closest to
        entering by the LP estimate (:func:`entry_estimates`); None analyses all.
    warm
        Warm re-solves (:func:`break_even_for_pool`).
    workers, scheduler
        Parallelism (:func:`run_tasks`); pools are sent in chunks.
    deadline
        A ``time.perf_counter()`` time: pools not started by then are left out (in the
        order of their closeness to entering, so the nearest are done first).
    left_out
        When given, the pools the deadline left out are appended to it (and their twins).
    """
    compiled = solution.compiled
    if has_second_stage(compiled.problem):
        return []  # prices do not enter a carbon-first objective's first stage
    candidates, in_plan = break_even_candidates(solution)
    if pools is not None:
        wanted = set(pools)
        candidates = [p for p in candidates if p in wanted]
    twins_of: dict[str, list[str]] = {}
    for members in pool_classes(compiled, candidates):
        used = [p for p in members if p in in_plan]
        rep = (used or members)[0]  # a class is in the plan when any member is
        twins_of[rep] = [p for p in members if p != rep]
    candidates = sorted(twins_of)
    if limit is not None:
        outside = [p for p in candidates if p not in in_plan]
        estimate = entry_estimates(solution)
        outside = sorted(outside, key=lambda p: (-estimate.get(p, -np.inf), p))[:limit]
        candidates = sorted(set(outside) | (in_plan & set(candidates)))
    candidates = [(p, twins_of[p]) for p in candidates]
    model = solution.model  # built from ``compiled`` (a second stage returned above)
    slopes = price_slopes(compiled, model)
    # local processes take one class at a time (the search's times differ 5x: no idle
    # worker at the end); a cluster takes a few chunks per worker
    chunks = max(1, workers) * 4 if scheduler else len(candidates)
    groups = [candidates[i::chunks] for i in range(min(chunks, len(candidates)))]
    shared = (
        compiled,
        model,
        slopes,
        float(solution.result.objective),
        solution.result.values,
        in_plan,
        solver,
        warm,
    )
    n = len(candidates)
    results = _run_tasks(
        _break_even_task,
        groups,
        shared=shared,
        workers=workers,
        scheduler=scheduler,
        # in pools (classes) done, though tasks are groups of them
        progress=(lambda done, total: progress(round(done * n / total), n)) if progress else None,
        deadline=deadline,
    )
    if left_out is not None:
        left_out += [q for g, r in zip(groups, results, strict=True) if r is None
                     for p, twins in g for q in (p, *twins)]  # fmt: skip
    return sorted(
        (b for group in results if group is not None for b in group),
        key=lambda b: (b.change_pct is None, abs(b.change_pct or 0.0), b.pool_id),
    )


def entry_estimates(solution: Solution) -> dict[str, float]:
    """Per pool outside the plan: the LP estimate of the price, as a fraction of today's,
    at which it starts to pay (value of its capacity at the plan's duals / its cost).

    Only an ordering for choosing which pools to search exactly; 1.0 or more means "about
    to enter". Reserved and owned units are charged their commitment or capex per period.
    """
    compiled, model = solution.compiled, solution.model
    lp = support_lp(model, solution.result.values)
    result = get_backend("highspy").solve(lp, SolveOptions())
    if result.reduced_costs is None:
        return {}
    v = lp.variables
    cost = np.zeros(len(v))
    for j, c in lp.objective.coefs.items():
        cost[j] += c
    # What a unit's capacity is worth at the plan's duals, counting no more capacity than
    # a demand row asks for (a big server is not worth more than the demand it can meet).
    value = np.zeros(len(v))
    duals = result.duals or {}
    for row in lp.rows:
        y = duals.get(row.name, 0.0)
        if not y:
            continue
        capped = row.sense == ">=" and row.rhs > 0
        for j, a in row.coefs.items():
            value[j] += y * (min(a, row.rhs) if capped and a > 0 else a)
    pools = compiled.pools
    months = compiled.periods["months"].to_numpy()
    hours = compiled.periods["hours"].to_numpy()
    use = np.flatnonzero(v["kind"].isin(("x", "z")).to_numpy() & (v["pool"].to_numpy() >= 0))
    p = v["pool"].to_numpy()[use].astype(int)
    t = np.maximum(v["period"].to_numpy()[use].astype(int), 0)
    owned = (pools["kind"] == "owned").to_numpy()[p]
    reserved = pools["mode"].isin([Mode.RESERVED_1Y, Mode.RESERVED_3Y]).to_numpy()[p]
    with np.errstate(divide="ignore", invalid="ignore"):
        per_month = (pools["capex_usd"] / pools["lifetime_months"]).to_numpy(float)[p] + pools[
            "hosting_usd_per_month"
        ].to_numpy(float)[p]
    full = cost[use] + np.where(
        owned,
        months[t] * np.where(owned, per_month, 0.0),
        np.where(reserved, pools["price_usd_per_hour"].to_numpy(float)[p] * hours[t], 0.0),
    )
    paid = full > 0
    ratio = pd.Series(value[use][paid] / full[paid], index=pools["pool_id"].to_numpy()[p][paid])
    return {k: float(r) for k, r in ratio.groupby(level=0).max().items()}


# ------------------------------------------------------------------ sweeps


def _run_tasks(fn: Callable, tasks: list, *, shared: object = None, **run) -> list:
    """:func:`solver.analyses.runner.run_tasks`, refusing a compiled problem pruned of
    its dominated options (price, demand and limit analyses need every option)."""
    if isinstance(shared, Compiled):
        _unpruned(shared)
    return run_tasks(fn, tasks, shared=shared, **run)


def variant(compiled: Compiled, change: tuple) -> Compiled:
    """The compiled problem with one change: ("problem", {field: value}),
    ("demand", factor) or ("prices", per-pool factors in pool order)."""
    kind, what = change
    if kind == "problem":
        return replace(compiled, problem=compiled.problem.model_copy(update=what))
    if kind == "demand":
        return with_demand_factor(compiled, what)
    if kind == "prices":
        return with_pool_prices(compiled, dict(zip(compiled.pools["pool_id"], what, strict=True)))
    raise ValueError(f"unknown change {kind!r}")


def _point(compiled: Compiled, task: tuple) -> SweepPoint:
    """Solve one variant of a compiled problem; summarise it."""
    change, sweep, value, solver = task
    compiled = repruned(variant(compiled, change))
    try:
        solution = optimise(compiled, build_model(compiled), solver=solver, options=SolveOptions())
    except ProcureError as exc:  # infeasible or stopped: a point of the sweep, not an error
        status = "infeasible" if isinstance(exc, InfeasibleError) else "no_solution"
        return SweepPoint(sweep=sweep, value=value, status=status)
    e = solution.model.expressions
    x = solution.result.values
    served = _served(solution)
    return SweepPoint(
        sweep=sweep,
        value=value,
        status=solution.result.termination.value,
        objective=float(solution.result.objective),
        total_cost_usd=e["total_cost_usd"].value(x),
        total_co2e_t=e["total_co2e_t"].value(x),
        served_fraction=served,
        used=sorted(pools_in_plan(solution.model, x, solution.compiled.pools)),
    )


def _served(solution: Solution) -> float:
    from solver.plan import served_fraction

    fractions = served_fraction(solution.compiled, solution.model, solution.result.values)
    return float(np.mean(list(fractions.values()))) if fractions else 1.0


def _frontier_ends(compiled: Compiled, solver: str, deadline: float | None = None) -> list:
    """The frontier's two ends, in this process: the min-cost plan (cap inf) and the
    min-carbon plan (cap 0); None for one not started by ``deadline``."""
    tasks = [
        (
            ("problem", {"objective": objective, "carbon_cap_tco2e": None}),
            "carbon_cap_tco2e",
            cap,
            solver,
        )
        for objective, cap in (("min_cost", np.inf), ("min_carbon", 0.0))
    ]
    return _run_tasks(_point, tasks, shared=compiled, deadline=deadline)


def _frontier_tasks(ends: list, points: int, solver: str) -> list | None:
    """The frontier's caps from the min-carbon plan's CO2e to the min-cost plan's, as tasks;
    None when an end has no CO2e (no plan): the frontier is then the ends that have one."""
    high, low = ends
    if high.total_co2e_t is None or low.total_co2e_t is None:
        return None
    caps = np.linspace(low.total_co2e_t, high.total_co2e_t, points)
    caps[0] *= 1.0 + 1e-6  # the min-carbon value itself, with room for rounding
    return [
        (
            ("problem", {"objective": "min_cost", "carbon_cap_tco2e": float(c)}),
            "carbon_cap_tco2e",
            float(c),
            solver,
        )
        for c in caps
    ]


def carbon_frontier(
    compiled: Compiled, *, points: int = 8, solver: str = "highspy", **run
) -> list[SweepPoint]:
    """Cost versus CO2e: min cost under caps from the min-carbon plan to the min-cost plan."""
    ends = _frontier_ends(compiled, solver)
    tasks = _frontier_tasks(ends, points, solver)
    if tasks is None:
        return [p for p in ends if p.total_co2e_t is not None]
    return _run_tasks(_point, tasks, shared=compiled, **run)


def _budget_tasks(budgets_usd: Iterable[float], solver: str) -> list:
    return [
        (
            ("problem", {"objective": "max_served", "budget_usd": float(b)}),
            "budget_usd",
            float(b),
            solver,
        )
        for b in budgets_usd
    ]


def budget_sweep(
    compiled: Compiled,
    budgets_usd: Iterable[float],
    *,
    solver: str = "highspy",
    **run,
) -> list[SweepPoint]:
    """Served demand and cost versus budget (objective: max served within budget)."""
    return _run_tasks(_point, _budget_tasks(budgets_usd, solver), shared=compiled, **run)


def with_demand_factor(compiled: Compiled, factor: float) -> Compiled:
    """Online and batch demand scaled by ``factor`` (training unchanged)."""
    demand = compiled.demand.copy()
    demand["demand"] = demand["demand"] * factor
    return replace(compiled, demand=demand)


def _demand_tasks(factors: Iterable[float], solver: str) -> list:
    return [(("demand", float(f)), "demand_factor", float(f), solver) for f in factors]


def demand_sweep(
    compiled: Compiled, factors: Iterable[float], *, solver: str = "highspy", **run
) -> list[SweepPoint]:
    """Cost versus demand growth (every inference demand scaled)."""
    return _run_tasks(_point, _demand_tasks(factors, solver), shared=compiled, **run)


def _scenario_tasks(compiled: Compiled, n: int, spread: float, seed: int, solver: str) -> list:
    """``n`` price scenarios: every pool's price x a factor drawn uniformly in 1 ± spread."""
    rng = np.random.default_rng(seed)
    k = len(compiled.pools)
    return [
        (("prices", rng.uniform(1.0 - spread, 1.0 + spread, size=k)), "scenario", float(s), solver)
        for s in range(n)
    ]


def _scenario_share(points: list[SweepPoint]) -> dict[str, float]:
    """Per pool used in any scenario, the share of feasible scenarios whose plan uses it."""
    ok = [p for p in points if p.total_cost_usd is not None]
    share: dict[str, float] = {}
    for p in ok:
        for pool in p.used:
            share[pool] = share.get(pool, 0.0) + 1.0 / len(ok)
    return dict(sorted(share.items(), key=lambda kv: (-kv[1], kv[0])))


def price_scenarios(
    compiled: Compiled,
    *,
    n: int = 20,
    spread: float = 0.2,
    seed: int = 0,
    solver: str = "highspy",
    **run,
) -> tuple[list[SweepPoint], dict[str, float]]:
    """Every pool's price drawn uniformly within ±``spread``; how often each pool stays.

    Returns the points and, per pool used in any scenario, the share of feasible
    scenarios whose optimal plan uses it.
    """
    tasks = _scenario_tasks(compiled, n, spread, seed, solver)
    points = _run_tasks(_point, tasks, shared=compiled, **run)
    return points, _scenario_share(points)


#: the report's sweeps, in the order it names them (and names those cut by a deadline)
REPORT_SWEEPS = ("carbon frontier", "budget sweep", "demand sweep", "price scenarios")


def report_sweeps(
    compiled: Compiled,
    *,
    frontier_points: int = 8,
    budgets_usd: Sequence[float] = (),
    demand_factors: Sequence[float] = (0.5, 1.0, 1.5, 2.0, 3.0),
    scenarios: int = 20,
    spread: float = 0.2,
    seed: int = 0,
    solver: str = "highspy",
    progress: Callable[[int, int], None] | None = None,
    deadline: float | None = None,
    **run,
) -> dict[str, object]:
    """The carbon frontier, the budget and demand sweeps and the price scenarios of
    ``procure report``, as :func:`carbon_frontier`, :func:`budget_sweep`,
    :func:`demand_sweep` and :func:`price_scenarios` give them, in one run of tasks.

    The frontier's two ends are solved first (its caps come from them); then every other
    point goes to one pool, the frontier's caps first: they are the longest (autoscaled,
    each several times a price scenario, bench/report_sweeps.py --per-point), and a pool
    that takes the longest first ends its last tasks together. One pool for the four
    sweeps, rather than one each, leaves no worker idle at a sweep's end while another
    finishes its last point (bench/RESULTS.md, "Autoscale the default: the report").

    Returns, by name (:data:`REPORT_SWEEPS`), the frontier's points, the budget sweep's,
    the demand sweep's, and the scenarios' (points, shares); None for a sweep with a point
    not started by ``deadline`` (a sweep is shown whole or not at all). ``progress(done,
    total)`` counts the points of the pool.
    """
    out: dict[str, object] = dict.fromkeys(REPORT_SWEEPS)
    parts: dict[str, list] = {}
    ends = _frontier_ends(compiled, solver, deadline)
    if all(p is not None for p in ends):  # else the frontier is cut: left None
        caps = _frontier_tasks(ends, frontier_points, solver)
        if caps is None:  # an end without a plan: the frontier is the ends that have one
            out["carbon frontier"] = [p for p in ends if p.total_co2e_t is not None]
        else:
            parts["carbon frontier"] = caps
    parts["price scenarios"] = _scenario_tasks(compiled, scenarios, spread, seed, solver)
    parts["demand sweep"] = _demand_tasks(demand_factors, solver)
    parts["budget sweep"] = _budget_tasks(budgets_usd, solver)
    tasks = [t for part in parts.values() for t in part]
    points = _run_tasks(_point, tasks, shared=compiled, progress=progress, deadline=deadline, **run)
    at = 0
    for name, part in parts.items():
        got, at = points[at : at + len(part)], at + len(part)
        if all(p is not None for p in got):
            out[name] = (got, _scenario_share(got)) if name == "price scenarios" else got
    return out


def quoted_pool_ids(pools: pd.DataFrame) -> list[str]:
    """The pools whose price is a vendor quote (``price_confidence`` quote)."""
    if "price_confidence" not in pools.columns:
        return []
    return sorted(pools.loc[pools["price_confidence"] == "quote", "pool_id"].astype(str))


def sensitivity_report(
    solution: Solution,
    *,
    break_even_limit: int | None = 12,
    solver: str = "highspy",
    workers: int = 1,
    scheduler: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    deadline: float | None = None,
) -> SensitivityReport:
    """Shadow prices, reduced costs and break-even prices of a solved problem.

    ``deadline`` (a ``time.perf_counter()`` time) bounds the break-even search: pools
    not reached by then are left out, and the note says how many were done.
    """
    report = shadow_prices(solution, solver=solver)
    left_out: list[str] = []
    rows = break_even_prices(
        solution,
        limit=break_even_limit,
        solver=solver,
        workers=workers,
        scheduler=scheduler,
        progress=progress,
        deadline=deadline,
        left_out=left_out,
    )
    # Quoted prices (confidence quote: solver/inputs/quotes.py) are always among the pools
    # searched, whatever the limit: "at what quote does the reservation pay" is the question.
    done = {b.pool_id for b in rows} | {p for b in rows for p in b.same_as}
    quoted = quoted_pool_ids(solution.compiled.pools)
    if break_even_limit is not None and set(quoted) - done:
        rows += break_even_prices(
            solution,
            pools=[p for p in quoted if p not in done],
            solver=solver,
            workers=workers,
            scheduler=scheduler,
            deadline=deadline,
            left_out=left_out,
        )
        rows.sort(key=lambda b: (b.change_pct is None, abs(b.change_pct or 0.0), b.pool_id))
    note = (
        "exact (Newton on the optimal cost as a function of the price: each step a plan "
        "using the pool below the cost to beat, the last a proof that none is, to a 1e-6 "
        "relative gap); pools in the plan and "
        + ("all others" if break_even_limit is None else f"the {break_even_limit} closest others")
    )
    if left_out:
        shown = ", ".join(sorted(left_out)[:10]) + (", ..." if len(left_out) > 10 else "")
        note += (
            f"; stopped at the time limit with {len(rows)} pools done, {len(left_out)} left "
            f"out: {shown}"
        )
    elif deadline is not None and time.perf_counter() > deadline:
        note += f"; stopped at the time limit with {len(rows)} pools done"
    if has_second_stage(solution.compiled.problem):
        note = "not computed: prices do not enter a carbon-first objective"
    rows = period_blocked(rows, solution.compiled)
    return report.model_copy(
        update={
            "break_even": rows,
            "break_even_tolerance": note,
            "break_even_left_out": sorted(left_out),
        }
    )


def period_blocked(rows: list[BreakEven], compiled: Compiled) -> list[BreakEven]:
    """Break-even rows of pools that no period lets serve (every period outlives the
    pool's server life or reservation term: :mod:`solver.core.restrictions`), with a note
    that says so instead of "no feasible plan can use it at this price": no price moves
    them, and the plan's ``period_structure`` warning prices the split that would."""
    n_periods = len(compiled.periods)
    blocked: dict[str, tuple[int, float]] = {}
    for r in period_restrictions(compiled):
        for pool in r.pools:
            count, _ = blocked.get(pool, (0, r.span_months))
            blocked[pool] = (count + 1, r.span_months)
    out = []
    for b in rows:
        count, span = blocked.get(b.pool_id, (0, 0.0))
        if b.break_even_price is None and count == n_periods:
            unit = "server life" if b.mode == "owned" else "term"
            note = (
                f"every period is longer than its {span:g}-month {unit}, so no plan can use "
                "it: see the period_structure warning"
            )
            b = b.model_copy(update={"note": note})
        out.append(b)
    return out
