"""Which pools a workload may use: its hardware lists and runtime, providers, regions,
residency, tier, framework, ECC, precision, spot, and the price policy; for every pool
left out, the first requirement it breaks."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from solver.core.clock import first_day
from solver.inputs.catalog import tier_allowed
from solver.inputs.hardware import LISTS, VENDOR_HARDWARE, HardwareRule
from solver.inputs.problem import (
    BatchInferenceWorkload,
    InferenceWorkload,
    Problem,
    TrainingWorkload,
    Workload,
)
from solver.inputs.provenance import meets_confidence, too_old
from solver.units import (
    Mode,
)


def hardware_reason(rule: HardwareRule, name: str) -> str:
    """Why a pool is left out by one of a workload's hardware lists (:data:`LISTS`)."""
    if name == "runtime":
        vendor = str(rule.runtime_vendor)
        return f"runtime {rule.runtime} runs on {VENDOR_HARDWARE.get(vendor, vendor)} hardware only"
    return {
        "accelerators": "accelerator not in accelerators",
        "vendors": "vendor not in vendors",
        "exclude_accelerators": "accelerator in exclude_accelerators",
        "exclude_vendors": "vendor in exclude_vendors",
    }[name]


def requirement_mask(
    w: TrainingWorkload | InferenceWorkload | BatchInferenceWorkload,
    pools: pd.DataFrame,
    rule: HardwareRule | None = None,
    problem_min_tier: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Pools a workload may use, and for the others the first requirement broken: its
    hardware lists and runtime first (``rule``), then providers, regions, residency, tier,
    framework, ECC, precision and spot."""
    ok = np.ones(len(pools), dtype=bool)
    reason = np.full(len(pools), "", dtype=object)

    def drop(mask: np.ndarray, why: str) -> None:
        nonlocal ok
        newly = ok & ~mask
        reason[newly] = why
        ok &= mask

    if rule is not None:
        ids, vendors = pools["accelerator_id"].to_numpy(), pools["vendor"].to_numpy()
        for name, allowed in rule.allowed(ids, vendors):
            drop(allowed, hardware_reason(rule, name))
    if w.providers is not None:  # cloud providers; owned servers are governed by modes
        drop(
            pools["provider"].isin(w.providers).to_numpy() | (pools["kind"] == "owned").to_numpy(),
            "provider not allowed",
        )
    if w.regions is not None:
        drop(
            pools["region"].isin(w.regions).to_numpy() | (pools["kind"] == "owned").to_numpy(),
            "region not allowed",
        )
    if w.residency is not None:
        drop(pools["residency_zone"].isin(w.residency).to_numpy(), "residency")
    floor = w.tier_floor(problem_min_tier)
    if floor is not None:  # owned servers sit in the buyer's own datacenter: they qualify
        default = w.min_tier is None
        names, where = _distinct(pools, "tier", "unknown")
        passes = np.array([tier_allowed(str(t), floor, default=default) for t in names], bool)
        drop(
            passes[where] if len(names) else np.ones(len(pools), dtype=bool),
            "marketplace host (online serving needs datacenter hosts: min_tier opts in)"
            if default
            else f"provider tier below {floor}",
        )
    # once per distinct frameworks list (a few), not per pool
    lists, at = _distinct(pools, "frameworks", "")
    runs = np.array([f";{w.framework};" in f";{fw};" for fw in lists], dtype=bool)
    drop(runs[at] if len(lists) else np.ones(len(pools), dtype=bool), f"framework ({w.framework})")
    if w.require_ecc:
        drop(pools["ecc"].astype(bool).to_numpy(), "no ECC memory")
    for precision in _hardware_precisions(w):
        drop(supports_precision(pools, precision), f"no {precision.upper()} support")
    if not w.interruptible:
        drop((pools["mode"] != Mode.SPOT).to_numpy(), "spot not allowed (job not interruptible)")
    return ok, reason


#: (id of a pools table, column) -> (the table, its distinct texts, each pool's position
#: among them): one compile asks per workload of the same table (200 x 16,101 pools)
_DISTINCT: dict[tuple[int, str], tuple[pd.DataFrame, np.ndarray, np.ndarray]] = {}


def _distinct(pools: pd.DataFrame, column: str, missing: str) -> tuple[np.ndarray, np.ndarray]:
    """The distinct texts of ``pools[column]`` (``missing`` where the column is absent)
    and each pool's position among them, as ``np.unique`` gives them; kept for the last
    few tables asked about."""
    key = (id(pools), column)
    hit = _DISTINCT.get(key)
    if hit is not None and hit[0] is pools and len(hit[2]) == len(pools):
        return hit[1], hit[2]
    values = pools.get(column, pd.Series(missing, index=pools.index)).astype(str)
    names, where = np.unique(values.to_numpy(dtype=str), return_inverse=True)
    if len(_DISTINCT) >= 4:
        _DISTINCT.clear()
    _DISTINCT[key] = (pools, names, where)
    return names, where


def hardware_notes(rule: HardwareRule, reasons: Counter) -> list[dict]:
    """What each of a workload's hardware lists left out: the list, its values, the
    runtime's vendor and the options (pools) it removed (none already removed before it)."""
    notes = []
    for name in LISTS:
        values = rule.values(name)
        if values:
            notes.append(
                {
                    "list": name,
                    "values": values,
                    "vendor": rule.runtime_vendor if name == "runtime" else None,
                    "options_left_out": int(reasons.get(hardware_reason(rule, name), 0)),
                }
            )
    return notes


def weak_price_pools(problem: Problem, pools: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Pools left out under ``weak_price_policy: exclude``: their price is below
    ``min_price_confidence`` or older than ``max_price_age_days`` at the plan's start (an
    unknown date counts as too old). Pools holding existing units stay (what is held is
    used). Returns the mask and, for each pool left out, why."""
    out = np.zeros(len(pools), dtype=bool)
    why = np.full(len(pools), "", dtype=object)
    if problem.weak_price_policy != "exclude" or len(pools) == 0:
        return out, why
    held = pools["existing_units"].to_numpy() > 0
    minimum, max_age = problem.min_price_confidence, problem.max_price_age_days
    if max_age is not None:
        on = first_day(problem.start)
        old = pools["price_date"].map(lambda d: too_old(d, on, max_age)).to_numpy(dtype=bool)
        why[old & ~held] = f"price older than max_price_age_days {max_age:g} (or undated)"
        out |= old & ~held
    if minimum is not None:
        below = ~pools["price_confidence"].map(lambda c: meets_confidence(c, minimum))
        weak = below.to_numpy(dtype=bool) & ~held
        why[weak & ~out] = f"price confidence below {minimum}"
        out |= weak
    return out, why


def _hardware_precisions(w: Workload) -> list[str]:
    """8-bit formats a workload computes or stores in, which the hardware must support.

    FP8 needs FP8 tensor cores (Hopper, Ada, Blackwell, MI300, Gaudi...); INT8 needs INT8
    ones. 4-bit weight-only formats dequantise in kernels that run on any recent GPU.
    """
    used = {
        getattr(w, "precision", None),
        getattr(w, "weight_precision", None),
        getattr(w, "kv_precision", None),
    }
    return sorted(p for p in used if p in ("fp8", "int8"))


def supports_precision(table: pd.DataFrame, precision: str) -> np.ndarray:
    """Rows (pools or accelerators) whose accelerator has tensor throughput in ``precision``."""
    column = {"fp8": "fp8_dense_tflops", "int8": "int8_dense_tops"}[precision]
    return table[column].to_numpy(dtype=float) > 0
