"""Pools and their prices in a compiled problem: a pool's price, copies of the problem at
other prices, the pools a plan uses, how the model's coefficients move with each pool's price,
and the guard that price analyses start from every option.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import cast

import numpy as np
import pandas as pd

from solver.analyses.runner import run_tasks
from solver.core.compile import Compiled
from solver.core.model import (
    LinearModel,
    build_model,
)

USE_KINDS = ("x", "z", "buy", "commit")


def pool_price(compiled: Compiled, pool_id: str) -> tuple[float, str]:
    """Current price of a pool and its unit (hourly per instance, or capex per server)."""
    pool = cast(pd.Series, compiled.pools.set_index("pool_id").loc[pool_id])  # one row
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
    used = v["kind"].isin(USE_KINDS).to_numpy() & (values > 1e-7)
    return {str(pools["pool_id"].iat[int(p)]) for p in v.loc[used, "pool"] if p >= 0}


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


def pool_vars(model: LinearModel, pool_index: int, kinds=USE_KINDS) -> np.ndarray:
    v = model.variables
    return np.flatnonzero((v["pool"] == pool_index).to_numpy() & v["kind"].isin(kinds).to_numpy())


def require_unpruned(compiled: Compiled) -> None:
    if compiled.pruned_dominated:
        raise ValueError(
            "price, demand and limit analyses need every option: compile with "
            "compile_problem(..., prune_dominated=False)"
        )


def run_unpruned_tasks(fn: Callable, tasks: list, *, shared: object = None, **run) -> list:
    """:func:`solver.analyses.runner.run_tasks`, refusing a compiled problem pruned of
    its dominated options (price, demand and limit analyses need every option)."""
    if isinstance(shared, Compiled):
        require_unpruned(shared)
    return run_tasks(fn, tasks, shared=shared, **run)
