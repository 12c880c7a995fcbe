"""Exact pruning of rented serving options that cheaper, larger options with room replace.

Pool pruning (:func:`solver.compile.prune_dominated_pools`) drops pools whose units are
interchangeable with cheaper ones. Most of a large catalog's options are not like that:
a workload can rent hundreds of instance types, of different sizes, from pools whose
availability caps could bind. This module drops the ones no optimal plan needs, column
by column (option, period, load block), with two reductions that each keep some optimal
plan:

1. **Bound.** A plan never needs more units of one rented column than ``ceil(D / a)``
   (``D`` the block's demand, ``a`` the tokens/s of a unit), or the workload's minimum
   serving units: those alone meet its demand and redundancy rows, and every unit costs
   money, so any plan can be cut back to these bounds at no more cost. A rented pool's
   availability row at (period, block) therefore cannot bind when the bounds of the
   columns in it (plus, per training job, its largest cluster in the pool) add up to no
   more than the pool's availability: the pool has *room* there.
2. **Dominance.** In one demand row, a column ``k`` is useless next to a column ``j``
   whose pool has room, with ``price_j <= price_k`` and ``a_j >= a_k`` (in the same
   quota groups and provider when the problem has quotas): move ``k``'s units to ``j``
   and cut ``j`` back to its bound. Demand, redundancy, availability, quotas and budgets
   still hold and the cost does not rise.

Dropping columns only lowers the sums, so both repeat until nothing changes; an option
whose every column drops is pruned from the options table. Workloads under N+1 or a
traffic mix (their rows count units differently) are left alone, and their rented
columns give their pools no room. Under a carbon cap or a carbon objective nothing is
pruned here (a second order, CO2e per unit-hour, would have to hold as well), nor under
provider shares (:func:`prunable`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from solver.problem import InferenceWorkload, Problem
from solver.units import RENTED_MODES

#: Why an option was pruned (the compile report's key).
REASON = "rented option: cheaper, larger options with room serve every period and block"


def carbon_counts(problem: Problem) -> bool:
    """Whether CO2e is a cost or a limit (then pruning must keep CO2e no higher too)."""
    return problem.carbon_cap_tco2e is not None or problem.objective in {
        "min_carbon",
        "lexicographic",
        "cost_plus_carbon",
    }


def prunable(problem: Problem) -> bool:
    """Whether a cheaper unit can always stand in for a dearer one. Not under provider
    shares (cost on a provider <= share x total cost): a cheaper unit lowers the total,
    so another provider's share can rise past its cap, and an optimal plan may need the
    dearer unit to keep it down (tests/test_dominance.py works a case by hand)."""
    return not problem.provider_share_max


def _plain(problem: Problem) -> tuple[set[str], dict[str, int]]:
    """Serving workloads with plain demand rows, and each one's minimum serving units
    where a redundancy row holds it (0 where none does)."""
    plain: set[str] = set()
    fewest: dict[str, int] = {}
    for w in problem.workloads:
        if w.kind == "training":
            continue
        online = isinstance(w, InferenceWorkload)
        if online and (w.n_plus_1 or w.traffic_mix):
            continue
        plain.add(w.name)
        need = w.min_serving_units if online else 1
        fewest[w.name] = need if need > 1 and problem.objective != "max_served" else 0
    return plain, fewest


def _columns(options: pd.DataFrame, pools: pd.DataFrame, demand: pd.DataFrame, problem):
    """One row per rented column (option, period, block) of a plain workload, sorted by
    demand row, comparison key, price, then capacity (largest first): ``opt`` (the
    option's position), ``pool_id``, ``period``, ``block``, ``cap``, ``ub`` (its unit
    bound) and ``group`` (its demand row and key)."""
    plain, fewest = _plain(problem)
    p = pools.set_index("pool_id")
    rented = (options["pool_id"].map(p["kind"]) == "cloud") & options["pool_id"].map(
        p["mode"]
    ).isin(RENTED_MODES)
    serving = options["workload_kind"] != "training"
    is_plain = options["workload"].isin(plain)
    others = rented & serving & ~is_plain
    mine = options[rented & serving & is_plain]
    if mine.empty:
        return pd.DataFrame(), others
    key = pd.Series("", index=mine.index)
    if problem.quotas:
        key = mine["pool_id"].map(p["provider"])
        for col in ("region", "accelerator_id", "accels_per_unit"):
            key = key + "|" + mine["pool_id"].map(p[col]).astype(str)
    frame = pd.DataFrame(
        {
            "opt": mine.index.to_numpy(),
            "workload": mine["workload"].to_numpy(),
            "pool_id": mine["pool_id"].to_numpy(),
            "key": key.to_numpy(),
            "cap": mine["tokens_per_s_per_unit"].to_numpy(float),
            "price": mine["pool_id"].map(p["price_usd_per_hour"]).to_numpy(float),
        }
    )
    d = demand[demand["bucket"] < 0][["workload", "period", "block", "demand"]]
    cols = frame.merge(d, on="workload", how="inner")
    with np.errstate(divide="ignore", invalid="ignore"):
        units = np.ceil(cols["demand"].to_numpy(float) / cols["cap"].to_numpy(float) - 1e-9)
    units = np.where(cols["cap"].to_numpy(float) > 0, units, np.inf)
    cols["ub"] = np.maximum(units, cols["workload"].map(fewest).to_numpy(float))
    cols = cols.sort_values(
        ["workload", "period", "block", "key", "price", "cap", "opt"],
        ascending=[True, True, True, True, True, False, True],
        kind="stable",
    ).reset_index(drop=True)
    cols["group"] = cols.groupby(["workload", "period", "block", "key"], sort=False).ngroup()
    return cols, others


def _fixed_load(options: pd.DataFrame, others: pd.Series) -> tuple[pd.Series, set]:
    """Units in rented pools' availability rows that this module does not bound per
    column: per (pool, period), each training job's largest cluster there; and the pools
    that unbounded columns (N+1, traffic mix) use, which never have room."""
    training = options[options["workload_kind"] == "training"]
    never = set(options.loc[others, "pool_id"])
    if training.empty:
        return pd.Series(dtype=float), never
    rows = [
        (pool, w, int(t), float(n))
        for pool, w, n, run in zip(
            training["pool_id"],
            training["workload"],
            training["n_units"],
            training.get("hours_by_period", pd.Series([None] * len(training))),
            strict=True,
        )
        if isinstance(run, tuple | list)
        for t, _h in run
    ]
    jobs = pd.DataFrame(rows, columns=["pool_id", "workload", "period", "units"])
    load = (
        jobs.groupby(["pool_id", "workload", "period"])["units"]
        .max()
        .groupby(level=["pool_id", "period"])
        .sum()
    )
    return load, never


def prune_dominated_options(
    options: pd.DataFrame, pools: pd.DataFrame, demand: pd.DataFrame, problem: Problem
) -> tuple[pd.DataFrame, int]:
    """The options without the rented ones no optimal plan needs (module docstring), and
    how many were dropped. ``options`` is compile's table before option ids are given
    (its index is the option's position)."""
    if options.empty or carbon_counts(problem) or not prunable(problem):
        return options, 0
    cols, others = _columns(options, pools, demand, problem)
    if cols.empty:
        return options, 0
    fixed, never = _fixed_load(options, others)
    cap = pools.set_index("pool_id")["availability_cap"]
    avail = cols["pool_id"].map(cap).to_numpy(float)
    blocked = cols["pool_id"].isin(never).to_numpy()
    fixed_at = pd.MultiIndex.from_arrays([cols["pool_id"], cols["period"]])
    base = fixed.reindex(fixed_at).fillna(0.0).to_numpy(float) if len(fixed) else 0.0
    row = cols.groupby(["pool_id", "period", "block"], sort=False).ngroup().to_numpy()
    group, size, ub = cols["group"].to_numpy(), cols["cap"].to_numpy(float), cols["ub"].to_numpy()
    alive = np.ones(len(cols), dtype=bool)
    while True:
        load = np.bincount(row, weights=np.where(alive, ub, 0.0))
        room = ~blocked & (load[row] + base <= avail + 1e-9)
        offer = pd.Series(np.where(alive & room, size, -np.inf))
        best_before = offer.groupby(group).shift(1, fill_value=-np.inf).groupby(group).cummax()
        dominated = alive & (best_before.to_numpy() >= size)
        if not dominated.any():
            break
        alive &= ~dominated
    survives = pd.Series(alive).groupby(cols["opt"].to_numpy()).any()
    drop = survives.index[~survives.to_numpy()]
    if len(drop) == 0:
        return options, 0
    return options.drop(index=drop), len(drop)
