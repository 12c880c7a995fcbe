"""Training on capacity blocks: per training workload, block offer and start period, the
cheapest whole block (instances x days, as sold) a cluster of the offering finishes the
job in, inside its window and deadline, where the booking rules allow it
(:func:`block_options`; the rules in :mod:`solver.inputs.catalog.capacity_blocks`).

A block option is bought whole: its instances are a set of the block sizes sold holding
at least the cluster's units, its length the shortest length sold holding the job's
hours, its price ``usd_per_instance_hour`` x instances x days x 24, upfront. It starts at
the start of the option's period, which must be at least ``min_lead_days`` after the
plan's start (the earliest day it can be booked). Blocks are eligible wherever the
problem allows the offering on demand (the same instances, booked ahead): its
providers, regions, residency, tier, hardware lists and price rules apply to them.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from solver import physics
from solver.core.compile.energy import unit_hour_coefficients
from solver.core.compile.guard import GUARD_COLUMN, band_column, guard_bands
from solver.core.compile.requirements import requirement_mask, weak_price_pools
from solver.core.compile.resolved import ResolvedInputs
from solver.core.compile.training import (
    MAX_TRAINING_UNITS,
    TrainingSetup,
    training_setup,
    training_window,
)
from solver.inputs.catalog.capacity_blocks import MODE, instances_to_buy, shortest_length_days
from solver.inputs.hardware import HardwareRule
from solver.inputs.presets import ModelSpec
from solver.inputs.problem import TrainingWorkload
from solver.physics.constants import TRAINING_UTILISATION
from solver.units import Mode

#: The block columns a block pool carries beside its offering's pool columns.
BLOCK_COLUMNS: tuple[str, ...] = (
    "block_id",
    "usd_per_instance_hour",
    "min_days",
    "daily_until_days",
    "long_step_days",
    "max_days",
    "instance_counts",
    "max_instances_total",
    "min_lead_days",
    "max_advance_days",
)


def block_pools(
    pools: pd.DataFrame, blocks: pd.DataFrame | None, bands: Mapping[str, float] | None = None
) -> pd.DataFrame:
    """The on-demand pools of offerings sold in blocks, one per block offer, as block pools:
    mode ``capacity_block``, the block's price (USD per instance-hour) and provenance (its
    guard band from its own confidence, ``bands``), its id as pool id and at most
    ``max_instances_total`` instances."""
    if blocks is None or blocks.empty:
        return pools.iloc[0:0]
    od = pools[pools["mode"] == Mode.ON_DEMAND].drop(columns=["price_usd_per_hour"])
    offers = blocks.reset_index(drop=True)[
        [
            *BLOCK_COLUMNS,
            "offering_id",
            "price_date",
            "source",
            "price_confidence",
            "currency",
        ]
    ]
    out = od.drop(
        columns=["price_date", "price_source", "price_confidence", "price_currency"]
    ).merge(offers, on="offering_id", how="inner")
    return out.assign(
        **{GUARD_COLUMN: band_column(out["price_confidence"], bands or {})},
        pool_id=out["block_id"],
        mode=MODE,
        price_usd_per_hour=out["usd_per_instance_hour"].astype(float),
        price_source=out.pop("source"),
        price_currency=out.pop("currency"),
        availability_cap=out["max_instances_total"].astype(int),
        existing_units=0,
    ).reset_index(drop=True)


def block_options(
    inputs: ResolvedInputs,
    pools: pd.DataFrame,
    models: Mapping[str, ModelSpec],
    rules: Mapping[str, HardwareRule],
) -> pd.DataFrame:
    """Every training workload's block options (one row each; columns in
    :func:`_option`), numbered ``block_option_id`` from 0; empty without blocks."""
    problem, catalog = inputs.problem, inputs.catalog
    bp = block_pools(pools, catalog.capacity_blocks, guard_bands(problem, catalog))
    rows: list[dict] = []
    if not bp.empty:
        weak = weak_price_pools(problem, bp)[0]
        for w in problem.workloads:
            if not isinstance(w, TrainingWorkload):
                continue
            allowed = requirement_mask(w, bp, rules.get(w.name), problem.min_tier)[0] & ~weak
            if allowed.any():
                rows += _workload_options(w, models[w.name], bp[allowed], inputs)
    frame = pd.DataFrame(rows)
    frame.insert(0, "block_option_id", np.arange(len(frame), dtype=int))
    return frame


def _workload_options(
    w: TrainingWorkload, spec: ModelSpec, sub: pd.DataFrame, inputs: ResolvedInputs
) -> list[dict]:
    """One workload's options over the block pools ``sub``: per pool and start period the
    cheapest block a cluster finishes in."""
    problem = inputs.problem
    periods, clock = inputs.calendar.periods, inputs.calendar.clock
    first, last = training_window(w, periods)
    setup = training_setup(w, spec, sub, problem.memory_headroom, problem.training_margin_of(w))
    co2 = unit_hour_coefficients(sub, TRAINING_UTILISATION)["kgco2e"]
    p_hours = periods["hours"].to_numpy(dtype=float)
    start_months = periods["start_month"].to_numpy(dtype=float)
    bounds_h = np.concatenate([[0.0], np.cumsum(p_hours)])
    deadline_h = w.deadline_days * 24.0 if w.deadline_days else np.inf
    out = []
    for i, pool in enumerate(sub.to_dict("records")):
        apu = int(pool["accels_per_unit"])
        if setup["n_min_devices"][i] <= 0:
            continue
        hi = min(int(pool["max_instances_total"]), MAX_TRAINING_UNITS)
        if w.max_accelerators is not None:
            hi = min(hi, w.max_accelerators // apu)
        lo = max(1, int(np.ceil(setup["n_min_devices"][i] / apu)))
        if hi < lo:
            continue
        units = np.arange(lo, hi + 1)
        hours, eff, _lost = physics.cluster_training_hours(
            setup["flops"],
            units * apu,
            apu,
            setup["peak_tflops"][i],
            setup["mfu"][i],
            setup["mfu_measured_at"][i],
            float(pool["network_gbps"]),
            bool(setup["joins_by_scaleup"][i]),
            0.0,
        )
        at_point = hours * setup["mfu"][i] / setup["mfu_point"][i]
        for s in range(first, last + 1):
            start_h = clock.hours(0.0, float(start_months[s]))
            if start_h / 24.0 + 1e-9 < int(pool["min_lead_days"]):
                continue
            window_h = min(float(p_hours[s : last + 1].sum()), deadline_h)
            best = _cheapest(pool, units, hours, window_h)
            if best is None:
                continue
            j, days, sizes = best
            fits_point = np.flatnonzero(at_point <= window_h + 1e-9)
            out.append(
                _option(w, pool, setup, i, s, int(units[j]), float(hours[j]), days, sizes)
                | {
                    "window_hours": window_h,
                    "units_at_point_mfu": int(units[fits_point[0]]) if len(fits_point) else 0,
                    "scaling_efficiency": float(eff[j]),
                    "kgco2e": float(co2[i]) * int(units[j]) * float(hours[j]),
                    "hours_by_period": _run(float(hours[j]), s, last, p_hours),
                    "block_periods": _overlapping(start_h, start_h + days * 24.0, bounds_h),
                    "start_day": start_h / 24.0,
                }
            )
    return out


def _cheapest(
    pool: dict, units: np.ndarray, hours: np.ndarray, window_h: float
) -> tuple[int, int, tuple[int, ...]] | None:
    """The cluster (index into ``units``) whose block costs least among those finishing
    within ``window_h``, with the block's days and sizes; fewer units on a tie."""
    best: tuple[float, int, int, tuple[int, ...]] | None = None
    for j in np.flatnonzero(hours <= window_h + 1e-9):
        days = shortest_length_days(pool, float(hours[j]))
        sizes = instances_to_buy(
            tuple(pool["instance_counts"]), int(units[j]), int(pool["max_instances_total"])
        )
        if days is None or sizes is None:
            continue
        usd = sum(sizes) * days * 24.0 * float(pool["usd_per_instance_hour"])
        if best is None or usd < best[0] - 1e-9:
            best = (usd, int(j), days, sizes)
    return None if best is None else best[1:]


def _option(
    w: TrainingWorkload,
    pool: dict,
    setup: TrainingSetup,
    i: int,
    s: int,
    n: int,
    hours: float,
    days: int,
    sizes: tuple[int, ...],
) -> dict:
    """A block option's identity, cluster, block and price columns."""
    rate = float(pool["usd_per_instance_hour"])

    def at(name: str) -> np.ndarray:
        return np.asarray(setup[name])  # type: ignore[literal-required]

    measured_at = float(at("mfu_measured_at")[i])
    return {
        "workload": w.name,
        "block_id": pool["block_id"],
        "pool_id": f"{pool['offering_id']}#{Mode.ON_DEMAND.value}",  # the model's pool
        "offering_id": pool["offering_id"],
        "start_period": s,
        "n_units": n,
        "n_accelerators": n * int(pool["accels_per_unit"]),
        "job_hours": hours,
        "block_days": days,
        "block_sizes": sizes,
        "block_instances": sum(sizes),
        "usd_per_instance_hour": rate,
        "block_usd": sum(sizes) * days * 24.0 * rate,
        GUARD_COLUMN: float(pool.get(GUARD_COLUMN, 0.0)),
        "min_lead_days": int(pool["min_lead_days"]),
        "max_advance_days": int(pool["max_advance_days"]),
        "max_instances_total": int(pool["max_instances_total"]),
        "mfu": float(at("mfu")[i]),
        "mfu_measured_at_accelerators": measured_at if np.isfinite(measured_at) else np.nan,
        "mfu_point": float(at("mfu_point")[i]),
        "mfu_low": float(at("mfu_low")[i]),
        "mfu_high": float(at("mfu_high")[i]),
        "mfu_source": str(at("mfu_source")[i]),
        "mfu_band": str(at("mfu_band")[i]),
    }


def _run(job_h: float, start: int, end: int, period_hours: np.ndarray) -> tuple:
    """The periods a job of ``job_h`` hours from the start of period ``start`` runs in
    (up to ``end``), with its hours in each."""
    run, left = [], job_h
    for t in range(start, end + 1):
        take = min(left, float(period_hours[t]))
        if take > 1e-9:
            run.append((t, take))
        left -= take
    return tuple(run) or ((start, job_h),)


def _overlapping(begin_h: float, end_h: float, bounds_h: np.ndarray) -> tuple[int, ...]:
    """Periods (by index) that [begin_h, end_h) hours from the plan's start overlaps, up to
    the last period (a block may run past the horizon)."""
    n = len(bounds_h) - 1
    return tuple(t for t in range(n) if bounds_h[t] < end_h - 1e-9 and bounds_h[t + 1] > begin_h)
