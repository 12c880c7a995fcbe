"""Pruning: cloud pools that cheaper pools of the same capacity make useless at these
prices and demands, dropped with their options (exact for one problem)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from solver.core import dominance
from solver.core.compile.compiled import Compiled, CompileReport, with_options
from solver.inputs.problem import (
    InferenceWorkload,
    Problem,
    TrainingWorkload,
)


def repruned(compiled: Compiled, keep: frozenset[str] = frozenset()) -> Compiled:
    """``compiled`` with the cloud pools and rented options pruned that its own problem,
    prices and demand make useless (:func:`prune_dominated_pools`,
    :func:`solver.core.dominance.prune_dominated_options`), option ids unchanged.

    Exact for that problem alone: an analysis that changes a price, a limit or the demand
    compiles every option once, then prunes each variant it solves for itself. Pools in
    ``keep`` are never pruned and never count as room (their price is about to move).
    """
    # a disaggregated group's prefill and decode units serve through their group's rows,
    # not the demand row: never pruned, their pools never pruned nor counted as room for
    # others (as compile_problem prunes them)
    every = compiled.options
    roles = (
        every["pool_role"].isin(["prefill", "decode"])
        if "pool_role" in every
        else pd.Series(False, index=every.index)
    )
    if roles.any():
        keep = keep | frozenset(every.loc[roles, "pool_id"])
    options = prune_dominated_pools(
        every[~roles].reset_index(drop=True) if roles.any() else every,
        compiled.pools,
        compiled.demand,
        compiled.problem,
        CompileReport(),
        keep=keep,
        bucket_capacity=compiled.bucket_capacity,
    ).drop(columns=["_rps"], errors="ignore")
    runs = compiled.training_runs()
    hours = options["option_id"].map(lambda k: tuple(runs[k]) if k in runs else None)
    options, _ = dominance.prune_dominated_options(
        options.assign(hours_by_period=hours).reset_index(drop=True),
        compiled.pools,
        compiled.demand,
        compiled.problem,
        keep=keep,
    )
    options = options.drop(columns=["hours_by_period"])
    if roles.any():
        options = pd.concat([options, every[roles]]).sort_values("option_id")
    return with_options(compiled, options.reset_index(drop=True))


def _signature_parts(
    opt: pd.DataFrame, demand: pd.DataFrame, problem: Problem
) -> tuple[np.ndarray, np.ndarray]:
    """Per option: the units its workload needs from its pool alone (peak demand over a
    unit's capacity, + 1 under N+1, at least the minimum serving units; a training job's
    largest cluster), and its workload's part of the pool's signature (the capacities or
    clusters a unit gives that workload), numbered: equal numbers for equal parts (the
    same workload, the same text), distinct otherwise."""
    peak = demand.groupby(["workload", "bucket"])["demand"].max()
    need = np.zeros(len(opt))
    part_id = np.zeros(len(opt), dtype=np.int64)
    numbered = 0  # the parts numbered so far (each workload's get their own numbers)
    workloads = {w.name: w for w in problem.workloads}
    for key, rows in opt.groupby("workload").groups.items():
        w_name = str(key)
        w = workloads[w_name]
        at = opt.index.get_indexer(rows)
        sub = opt.iloc[at]
        if isinstance(w, TrainingWorkload):
            need[at] = sub["pool_id"].map(sub.groupby("pool_id")["n_units"].max())
            shape = (
                sub["start_period"].astype(str)
                + "-"
                + sub["end_period"].astype(str)
                + "x"
                + sub["n_units"].astype(str)
                + "/"
                + sub["job_hours"].round(6).astype(str)
            )
            shapes: dict[str, list[str]] = {}
            for pool_id, one in sorted(zip(sub["pool_id"].tolist(), shape.tolist(), strict=True)):
                shapes.setdefault(pool_id, []).append(one)
            per_pool = {pool_id: ";".join(v) for pool_id, v in shapes.items()}
            text = sub["pool_id"].map(per_pool).to_numpy(object)
        else:
            mix = isinstance(w, InferenceWorkload) and bool(w.traffic_mix)
            if mix:
                rps = np.array([r if isinstance(r, list) else [] for r in sub["_rps"]], dtype=float)
                d = np.array([peak.get((w_name, j), 0.0) for j in range(rps.shape[1])])
                with np.errstate(divide="ignore", invalid="ignore"):
                    units = np.where(rps > 0, d[None, :] / rps, 0.0).sum(axis=1)
                text = np.array([",".join(f"{v:.6g}" for v in r) for r in rps], dtype=object)
            else:
                d = peak.get((w_name, -1), 0.0)
                cap = sub["tokens_per_s_per_unit"].to_numpy(dtype=float)
                units = np.where(cap > 0, d / np.where(cap > 0, cap, 1.0), 0.0)
                # formatted once per distinct capacity (a large catalog repeats a few)
                codes, values = pd.factorize(sub["tokens_per_s_per_unit"], use_na_sentinel=False)
                texts = np.array([f"{v:.6g}" for v in values], dtype=object)
                text = texts[codes]
            # N+1: one more unit than the peak needs (that many alone meet every N+1 row)
            spare = 1.0 if isinstance(w, InferenceWorkload) and w.n_plus_1 else 0.0
            fewest = w.min_serving_units if isinstance(w, InferenceWorkload) else 1
            need[at] = np.maximum(np.ceil(units - 1e-9) + spare, fewest)
        codes, uniques = pd.factorize(pd.Series(text, dtype=object), use_na_sentinel=False)
        part_id[at] = numbered + codes
        numbered += len(uniques)
    return need, part_id


def prune_dominated_pools(
    options: pd.DataFrame,
    pools: pd.DataFrame,
    demand: pd.DataFrame,
    problem: Problem,
    report: CompileReport,
    *,
    keep: frozenset[str] = frozenset(),
    bucket_capacity: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Drop cloud pools that a cheaper pool of the same kind makes useless.

    Pools in ``keep`` are never pruned and never count as room for others: pruning stays
    exact while their prices move (a break-even search varies one pool's price).
    ``bucket_capacity`` gives traffic-mix capacities when ``options`` is a compiled table
    (without the ``_rps`` column).

    Pools of one purchase mode whose units give every workload the same capacity form a
    *signature*; a dearer pool of a signature goes once cheaper ones hold all the units
    an optimal plan could need of it (the argument is in docs/guides/large-problems.md,
    "Why a dearer pool can go"). Owned pools are kept (site power caps and purchases).
    Nothing is pruned under provider shares (:func:`solver.core.dominance.prunable`).
    Where egress by default is in the objective, only pools of one egress price are
    compared (:func:`solver.core.dominance.egress_key`).
    """
    if options.empty or not dominance.prunable(problem):
        return options
    carbon = dominance.carbon_counts(problem)
    p = pools.set_index("pool_id")
    # only the columns read here: a copy of every option's every column costs seconds at
    # fleet scale (1.1 million options)
    read = [
        c
        for c in (
            "option_id",
            "workload",
            "pool_id",
            "tokens_per_s_per_unit",
            "n_units",
            "start_period",
            "end_period",
            "job_hours",
            "_rps",
        )
        if c in options
    ]
    opt = options[read].join(p[["kind", "mode", "availability_cap"]], on="pool_id")
    if "_rps" not in opt and bucket_capacity is not None and "option_id" in opt:
        n_buckets = int(bucket_capacity["bucket"].max()) + 1 if len(bucket_capacity) else 0
        by_option = {
            k: dict(zip(g["bucket"], g["requests_per_s_per_unit"], strict=True))
            for k, g in bucket_capacity.groupby("option_id")
        }
        opt["_rps"] = [
            [by_option.get(k, {}).get(j, 0.0) for j in range(n_buckets)] if k in by_option else []
            for k in opt["option_id"]
        ]
    cloud = opt["kind"] == "cloud"
    need, part_id = _signature_parts(opt, demand, problem)
    opt["need"] = need
    opt["sig_part"] = part_id
    cl = opt[cloud]
    if cl.empty:
        return options
    # each pool's signature: its workloads' parts in workload order, as a tuple of the
    # parts' numbers (plain Python: a groupby with a Python join is the slow way here),
    # numbered in turn
    parts: dict[str, list[int]] = {}
    ordered = cl.sort_values(["pool_id", "workload"], kind="stable")
    for pool_id, part in zip(
        ordered["pool_id"].tolist(), ordered["sig_part"].tolist(), strict=True
    ):
        parts.setdefault(pool_id, []).append(part)
    numbers: dict[tuple[int, ...], int] = {}
    pool_sig = pd.Series(
        [str(numbers.setdefault(tuple(v), len(numbers))) for v in parts.values()],
        index=pd.Index(list(parts), name="pool_id"),
        dtype=object,
    )
    pool_need = cl.groupby("pool_id")["need"].sum()
    info = p.loc[pool_sig.index]
    key = info["mode"] + "|" + pool_sig
    # a pool holding existing reservations, or one the caller keeps, is its own group
    own = (info["existing_units"] > 0) | info.index.isin(list(keep))
    key = key.where(~own, "own|" + info.index.to_series())
    if dominance.by_domain(problem):
        key = key + "|" + info["provider"] + "|" + info["region"]
    if problem.quotas:
        key = key + "|" + info["accelerator_id"] + "|" + info["accels_per_unit"].astype(str)
    key = key + dominance.guard_key(info.index.to_series(), p).to_numpy()
    key = key + dominance.egress_key(info["provider"], problem)  # egress in the objective
    unit_co2 = info["tdp_w"].to_numpy(float) * info["accels_per_unit"].to_numpy(float) * info[
        "pue"
    ].to_numpy(float) * info["grid_gco2_per_kwh"].to_numpy(float) + info[
        "embodied_kgco2e_unit"
    ].to_numpy(float)
    frame = pd.DataFrame(
        {
            "key": key.to_numpy(),
            "price": info["price_usd_per_hour"].to_numpy(float),
            "co2": unit_co2 if carbon else 0.0,
            "cap": info["availability_cap"].to_numpy(float),
            "load": pool_need.reindex(pool_sig.index).to_numpy(float),
        },
        index=pool_sig.index,
    ).sort_values(["key", "price", "co2"], kind="stable")
    # a fleet kept all day moves whole: one cheaper pool must hold all the units
    one_pool = any(dominance.steady_fleet(w) for w in problem.workloads)
    pruned = _pruned_by_key(frame, one_pool)
    if pruned:
        drop = options["pool_id"].isin(pruned)
        report.pruned["cloud pool: cheaper pools of the same capacity have room for all"] += int(
            drop.sum()
        )
        options = options[~drop].reset_index(drop=True)
    return options


def _pruned_by_key(frame: pd.DataFrame, one_pool: bool) -> list[str]:
    """The pools of ``frame`` (index pool ids; ``key``, ``cap``, ``co2``, ``load``; sorted
    by key, price and CO2e) that cheaper pools of their key have room for
    (:func:`prune_dominated_pools`); ``one_pool``: a single cheaper pool must hold them."""
    pruned: list[str] = []
    keys, ids = frame["key"].tolist(), frame.index.tolist()
    caps, co2s, loads = frame["cap"].tolist(), frame["co2"].tolist(), frame["load"].tolist()
    start = 0
    for end in range(1, len(keys) + 1):  # the groups of one key are contiguous (sorted)
        if end < len(keys) and keys[end] == keys[start]:
            continue
        load = float(loads[start])
        kept_cap: list[float] = []
        kept_co2: list[float] = []
        for i in range(start, end) if end - start >= 2 else ():
            fits = [c for c, e in zip(kept_cap, kept_co2, strict=True) if e <= co2s[i]]
            room = max(fits, default=0.0) if one_pool else sum(fits)
            if room >= load:
                pruned.append(ids[i])
            else:
                kept_cap.append(caps[i])
                kept_co2.append(co2s[i])
        start = end
    return pruned
