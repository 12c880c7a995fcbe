"""The daily load curve: hourly demand factors and the model's load blocks.

Every online (inference) workload has 24 hourly demand factors relative to its daily
average (mean 1). They come, first match wins, from

1. the workload's ``load_profile``;
2. the problem's ``load_profile``;
3. a default diurnal shape built from the workload's ``peak_to_average`` r
   (:func:`diurnal_factors`): maximum r, mean 1; r = 1 is a flat day.

A profile's factors are normalised so that their (hour-weighted) mean is 1: they say
how the day is shaped, the workload's ``demand`` says how much is served on average.

The model's load blocks are common to all workloads (rented units are chosen per
period and block; reserved and owned units are flat over the day). They are derived
from the hours (:func:`resolve_load`): the 24 hours are ranked by the aggregate factor
(each workload's factors weighted by its average output tokens/s) and cut into
``peak`` (top 4 h), ``shoulder`` (next 8 h) and ``base`` (last 12 h). A workload's
factor in a block is the MAX of its hourly factors over the block's hours: capacity
must hold the block's worst hour. When every workload is flat the day is one block
``day`` of 24 h. A problem-level ``load_profile`` given as blocks, with no workload
overriding it, is used as the model's blocks directly (its named hours are exact).

A problem's explicit ``load_blocks`` (the older form) win: they are used as given,
each block's ``demand_factor`` applied to every workload (omitted = the workload's
``peak_to_average``).

Pure functions over the problem; compile and verify both call them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

import numpy as np

from solver.errors import ProcureError
from solver.inputs.problem import (
    HOURS_PER_DAY,
    BatchInferenceWorkload,
    InferenceWorkload,
    LoadProfile,
    Problem,
)

N_HOURS = 24
# Default hour of the daily peak (local time, 0-23): 14:00. Stated assumption: chat
# traffic follows the working day. BurstGPT (Wang et al. 2024, arXiv:2401.17644, Azure
# OpenAI GPT-3.5/4 service trace) reports a periodic daily request-rate pattern peaking
# in the daytime and falling at night; it publishes no hourly table to cite for the
# exact hour or shape, so the raised-cosine shape below is a stated assumption too.
DEFAULT_PEAK_HOUR = 14
# Derived block sizes (hours): peak 4 h, shoulder 8 h, base 12 h.
DERIVED_BLOCK_HOURS: tuple[tuple[str, int], ...] = (("peak", 4), ("shoulder", 8), ("base", 12))
FLAT_TOL = 1e-9
# peak_to_average above 24 cannot be shaped from hourly factors with mean 1: all of the
# day's demand in one hour gives 24 (the shape's mean tends to 1/24 as k grows).
MAX_PEAK_TO_AVERAGE = float(N_HOURS)
_MAX_K = 1 << 22


def _cosine_power(k: int, peak_hour: int) -> np.ndarray:
    hours = np.arange(N_HOURS, dtype=float)
    return ((1.0 + np.cos(2.0 * np.pi * (hours - peak_hour) / N_HOURS)) / 2.0) ** k


def diurnal_factors(peak_to_average: float, peak_hour: int = DEFAULT_PEAK_HOUR) -> np.ndarray:
    """Default 24 hourly factors with maximum ``peak_to_average`` and mean 1.

    f(h) = m + (r - m) s(h), s(h) = ((1 + cos(2 pi (h - h_peak) / 24)) / 2)^k, with the
    smallest whole k for which mean(s) <= 1/r (so the trough m >= 0), and m set so that
    mean(f) = 1: m = (1 - r mean(s)) / (1 - mean(s)). s(h_peak) = 1, so max(f) = r.
    Example: r = 3 gives k = 3 (mean(s) = 20/64 = 0.3125), m = 0.0625 / 0.6875 = 1/11.

    Parameters
    ----------
    peak_to_average
        r, 1 <= r <= 24; r = 1 gives a flat day.
    peak_hour
        Hour of the peak, 0-23.

    Raises
    ------
    ValueError
        r above 24 (no hourly shape with mean 1 reaches it).
    """
    r = float(peak_to_average)
    if r <= 1.0 + FLAT_TOL:
        return np.ones(N_HOURS)
    if r > MAX_PEAK_TO_AVERAGE + FLAT_TOL:
        raise ValueError(f"peak_to_average {r:g} is above {MAX_PEAK_TO_AVERAGE:g}")
    target = 1.0 / r

    def mean_s(k: int) -> float:
        return float(_cosine_power(k, peak_hour).mean())

    lo, hi = 1, 1
    while mean_s(hi) > target + 1e-12:  # mean(s) decreases with k: bracket, then bisect
        lo, hi = hi + 1, hi * 2
        if hi > _MAX_K:
            raise ValueError(f"peak_to_average {r:g} is too close to {MAX_PEAK_TO_AVERAGE:g}")
    while lo < hi:
        mid = (lo + hi) // 2
        if mean_s(mid) > target + 1e-12:
            lo = mid + 1
        else:
            hi = mid
    s = _cosine_power(hi, peak_hour)
    ms = float(s.mean())
    m = max(0.0, (1.0 - r * ms) / (1.0 - ms))
    return m + (r - m) * s


def profile_factors(profile: LoadProfile) -> tuple[np.ndarray, list[tuple[str, float, float]]]:
    """A profile's normalised factors (mean 1).

    Returns the 24 hourly factors (empty for a blocks profile) and, for a blocks
    profile, (name, hours_per_day, factor) per block with the hour-weighted mean 1.
    """
    if profile.hourly is not None:
        f = np.asarray(profile.hourly, dtype=float)
        return f / f.mean(), []
    total = sum(b.hours_per_day * b.factor for b in profile.blocks or [])
    scale = HOURS_PER_DAY / total
    return np.empty(0), [(b.name, b.hours_per_day, b.factor * scale) for b in profile.blocks or []]


def _source(w: InferenceWorkload, problem: Problem) -> LoadProfile | None:
    return w.load_profile if w.load_profile is not None else problem.load_profile


def workload_hourly(
    w: InferenceWorkload, problem: Problem, order: np.ndarray | None = None
) -> np.ndarray:
    """A workload's 24 hourly factors (mean 1), from its profile or the default shape.

    A blocks profile names no clock hours: its blocks are laid on the hours in
    ``order`` (highest factor on the first hours), i.e. its peak is assumed to
    coincide with the other workloads' peak, the conservative choice for capacity.
    """
    profile = _source(w, problem)
    if profile is None:
        return diurnal_factors(w.peak_to_average)
    hourly, blocks = profile_factors(profile)
    if blocks:
        hours_order = np.arange(N_HOURS) if order is None else order
        out = np.empty(N_HOURS)
        start = 0
        for _, hours, factor in sorted(blocks, key=lambda b: -b[2]):
            n = int(round(hours))
            out[hours_order[start : start + n]] = factor
            start += n
        return out
    return hourly


@dataclass(frozen=True)
class LoadBlocks:
    """The model's load blocks and each online workload's factor in each.

    Attributes
    ----------
    names, hours_per_day
        One entry per block; hours add up to 24.
    hours
        Clock hours (0-23) of each block; empty when the blocks name no clock hours
        (explicit ``load_blocks`` or a problem-level blocks profile).
    factors
        workload name -> factor per block (demand as a multiple of the average).
    hourly
        online workload name -> its 24 hourly factors (mean 1), as laid on the clock;
        empty when the blocks name no clock hours.
    source
        How the blocks were made (for the report).
    """

    names: tuple[str, ...]
    hours_per_day: tuple[float, ...]
    hours: tuple[tuple[int, ...], ...]
    factors: dict[str, tuple[float, ...]]
    source: str
    hourly: dict[str, tuple[float, ...]] = field(default_factory=dict)

    def as_dict(self) -> dict:
        """Plain data for the report: source, blocks (name, hours_per_day), factors."""
        return {
            "source": self.source,
            "blocks": [
                {"name": n, "hours_per_day": h}
                for n, h in zip(self.names, self.hours_per_day, strict=True)
            ],
            "factors": {w: list(f) for w, f in self.factors.items()},
        }


def _weight_tokens_per_s(w: InferenceWorkload) -> float:
    d = w.demand
    if d.tokens_per_s is not None:
        return float(d.tokens_per_s)
    if d.requests_per_s is not None:
        return float(d.requests_per_s) * w.output_tokens
    users = cast(float, d.users)  # Demand._one_way: the third way, users with a rate
    per_user = cast(float, d.requests_per_user_per_day)
    return float(users) * float(per_user) * w.output_tokens / 86_400.0


def _check_peak(problem: Problem) -> None:
    """Refuse a peak_to_average the default shape cannot make, or one a profile contradicts."""
    for i, w in enumerate(problem.workloads):
        if not isinstance(w, InferenceWorkload):
            continue  # only a serving workload has a peak_to_average
        profile = _source(w, problem)
        # the default (1, a flat day) is no contradiction: a plan carries its problem with
        # every default written out, and re-reading it must not refuse the profile
        set_ = "peak_to_average" in w.model_fields_set and w.peak_to_average != 1.0
        if profile is not None and set_:
            hourly, blocks = profile_factors(profile)
            peak = float(hourly.max()) if hourly.size else max(f for _, _, f in blocks)
            if abs(peak - w.peak_to_average) > 1e-6 * peak:
                raise ProcureError(
                    f"peak_to_average {w.peak_to_average:g} contradicts the load_profile, "
                    f"whose peak is {peak:.4g} x its average",
                    field=f"workloads[{i}] ({w.name}).peak_to_average",
                    fix="remove peak_to_average (the load_profile shapes the day) or the profile",
                )
        if (
            isinstance(w, InferenceWorkload)
            and _source(w, problem) is None
            and w.peak_to_average > MAX_PEAK_TO_AVERAGE
        ):
            raise ProcureError(
                f"peak_to_average {w.peak_to_average:g} is above {MAX_PEAK_TO_AVERAGE:g}: "
                "a day of 24 hourly factors with mean 1 cannot peak higher",
                field=f"workloads[{i}] ({w.name}).peak_to_average",
                fix="give a value of at most 24, or a load_profile with the measured hours",
            )


def resolve_load(problem: Problem) -> LoadBlocks:
    """The model's load blocks and per-workload factors (see the module docstring).

    Batch and training workloads get factor 1 (batch demand is spread evenly).

    Raises
    ------
    ProcureError
        A peak_to_average above 24 with no load_profile to replace the default shape.
    """
    online = [w for w in problem.workloads if isinstance(w, InferenceWorkload)]
    others = [w for w in problem.workloads if isinstance(w, BatchInferenceWorkload)]
    if problem.load_blocks is not None:
        blocks = problem.load_blocks
        factors = {
            w.name: tuple(
                w.peak_to_average if b.demand_factor is None else b.demand_factor for b in blocks
            )
            for w in online
        }
        factors |= {w.name: tuple(1.0 for _ in blocks) for w in others}
        return LoadBlocks(
            tuple(b.name for b in blocks),
            tuple(b.hours_per_day for b in blocks),
            (),
            factors,
            "load_blocks as given",
        )
    _check_peak(problem)
    prof = problem.load_profile
    if prof is not None and prof.blocks is not None and all(w.load_profile is None for w in online):
        _, blocks3 = profile_factors(prof)
        factors = {w.name: tuple(f for _, _, f in blocks3) for w in online}
        factors |= {w.name: tuple(1.0 for _ in blocks3) for w in others}
        return LoadBlocks(
            tuple(n for n, _, _ in blocks3),
            tuple(h for _, h, _ in blocks3),
            (),
            factors,
            "problem load_profile blocks (factors normalised to a mean of 1)",
        )
    # rank hours by the clock-hour workloads first, then lay blocks profiles on that order
    weights = {w.name: _weight_tokens_per_s(w) for w in online}
    timed = [w for w in online if (p := _source(w, problem)) is None or p.hourly is not None]
    agg = sum((weights[w.name] * workload_hourly(w, problem) for w in timed), np.zeros(N_HOURS))
    if not np.any(agg > 0):
        agg = diurnal_factors(2.0)  # no clock hours given: rank hours by the default shape
    order = np.argsort(-agg, kind="stable")
    hourly = {w.name: workload_hourly(w, problem, order) for w in online}
    agg = sum((weights[n] * f for n, f in hourly.items()), np.zeros(N_HOURS))
    order = np.argsort(-agg, kind="stable")
    flat = all(np.ptp(f) <= FLAT_TOL * max(1.0, float(f.max())) for f in hourly.values())
    names: tuple[str, ...]
    hours_sets: tuple[tuple[int, ...], ...]
    if flat:
        names, hours_sets = ("day",), (tuple(range(N_HOURS)),)
    else:
        names_l, sets_l, start = [], [], 0
        for name, n in DERIVED_BLOCK_HOURS:
            names_l.append(name)
            sets_l.append(tuple(sorted(int(h) for h in order[start : start + n])))
            start += n
        names, hours_sets = tuple(names_l), tuple(sets_l)
    factors = {n: tuple(float(f[list(hs)].max()) for hs in hours_sets) for n, f in hourly.items()}
    factors |= {w.name: tuple(1.0 for _ in hours_sets) for w in others}
    return LoadBlocks(
        names,
        tuple(float(len(hs)) for hs in hours_sets),
        hours_sets,
        factors,
        "flat day" if flat else "derived from the hourly factors (block factor = its worst hour)",
        {n: tuple(float(x) for x in f) for n, f in hourly.items()},
    )


def block_changes(load: LoadBlocks) -> dict[tuple[int, int], int]:
    """How many times a day the load passes from block b to block c (b != c, indices of
    ``load.names``): from the clock hours of each block (hour h to h + 1, and 23:00 to
    midnight), or, when the blocks name no clock hours (explicit ``load_blocks``, a blocks
    profile), once from each block to the next in the order listed and from the last to
    the first (each block taken as one stretch a day). A unit started from b to c is
    started this many times a day (a switching cost, ``switching_cost_usd``)."""
    n = len(load.names)
    if n < 2:
        return {}
    if not load.hours:
        return {(b, (b + 1) % n): 1 for b in range(n)}
    block_of = {h: b for b, hours in enumerate(load.hours) for h in hours}
    out: dict[tuple[int, int], int] = {}
    for h in range(N_HOURS):
        b, c = block_of[h], block_of[(h + 1) % N_HOURS]
        if b != c:
            out[(b, c)] = out.get((b, c), 0) + 1
    return out
