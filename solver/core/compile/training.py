"""Training options: per pool and start period, the smallest cluster that finishes a job
inside its window and deadline at the planning MFU, and its hours, energy and rent."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypedDict, cast

import numpy as np
import pandas as pd

from solver import physics
from solver.core.compile.compiled import CompileReport
from solver.core.compile.energy import unit_hour_coefficients
from solver.errors import ProcureError
from solver.inputs.presets import ModelSpec
from solver.inputs.problem import (
    Problem,
    TrainingWorkload,
)
from solver.physics.constants import (
    TRAINING_UTILISATION,
)
from solver.units import (
    RENTED_MODES,
    Mode,
)

MAX_TRAINING_UNITS = 512


class TrainingSetup(TypedDict):
    """A training workload's figures on every pool (:func:`training_setup`): one entry per
    pool in the arrays, the job's totals as numbers."""

    n_min_devices: np.ndarray  # fewest devices whose memory holds the job, 0 if none
    flops: float  # the job's total FLOPs
    activation_gb: float  # activations per device, GB
    mfu: np.ndarray  # the MFU the cluster is sized at (the margin's pick from the band)
    mfu_point: np.ndarray  # the published figure
    mfu_low: np.ndarray
    mfu_high: np.ndarray
    mfu_source: np.ndarray  # where the figure comes from (text)
    mfu_band: np.ndarray  # how its band was set (text)
    mfu_measured_at: np.ndarray  # accelerators the MFU was measured at (inf: no loss)
    joins_by_scaleup: np.ndarray  # whether the scale-up fabric joins units
    preemptions_per_unit_hour: np.ndarray  # spot preemptions per instance-hour, 0 off spot
    peak_tflops: np.ndarray  # the dense peak at the run's precision


def training_window(w: TrainingWorkload, periods: pd.DataFrame) -> tuple[int, int]:
    """First and last period index a training job may run in (its start_period and
    end_period, else the whole horizon); refused when it would end before it starts."""
    names = list(periods["name"])
    first = names.index(w.start_period) if w.start_period else 0
    last = names.index(w.end_period) if w.end_period else len(names) - 1
    if last < first:
        raise ProcureError(
            f"training workload {w.name!r} ends (end_period {w.end_period!r}) before it starts "
            f"(start_period {w.start_period!r})",
            field=f"{w.name}.end_period",
            fix="put end_period at or after start_period",
        )
    return first, last


#: A pool table's column numbering its distinct devices and unit shapes (the columns of
#: :data:`DEVICE_COLUMNS`), set once per compile (:func:`with_device_key`): what is computed
#: per device is then computed once per number, not once per pool.
DEVICE_KEY = "_device_key"
DEVICE_COLUMNS = (
    "accelerator_id",
    "vendor",
    "device_class",
    "memory_gb",
    "mem_bandwidth_gbps",
    "bf16_dense_tflops",
    "fp8_dense_tflops",
    "int8_dense_tops",
    "fp4_dense_tflops",
    "scaleup_gbps",
    "accels_per_unit",
    "nvlink",
)


def with_device_key(pools: pd.DataFrame) -> pd.DataFrame:
    """``pools`` with :data:`DEVICE_KEY`: rows equal in every :data:`DEVICE_COLUMNS` column
    they have share a number."""
    keys = [c for c in DEVICE_COLUMNS if c in pools.columns]
    return pools.assign(**{DEVICE_KEY: distinct_rows(pools[keys])[0]})


def distinct_rows(
    frame: pd.DataFrame, key: pd.Series | np.ndarray | None = None
) -> tuple[np.ndarray, list[tuple]]:
    """The distinct rows of ``frame`` in order of first appearance, and each row's index
    among them: what ``pd.factorize(pd.MultiIndex.from_frame(frame))`` gives, from one
    integer code per column (a MultiIndex of strings hashes every tuple). A missing value
    is one value of its own column. With ``key`` (one number per row, equal only where
    the rows are equal: :data:`DEVICE_KEY`), rows are told apart by it alone, which is
    cheaper; rows equal in ``frame`` but not in ``key`` then count apart (the same values
    twice in the list)."""
    n = len(frame)
    if n == 0:
        return np.zeros(0, dtype=np.int64), []
    if key is None:
        key = np.zeros(n, dtype=np.int64)
        for col in frame.columns:
            codes, uniques = pd.factorize(frame[col], use_na_sentinel=False)
            key = key * max(len(uniques), 1) + codes
            key, _ = pd.factorize(key)  # renumbered 0..k-1: the next product stays small
    where, _ = pd.factorize(np.asarray(key))
    _, first = np.unique(where, return_index=True)
    columns = [frame[col].to_numpy()[first] for col in frame.columns]
    return where.astype(np.int64), list(zip(*columns, strict=True))


def min_devices(
    w: TrainingWorkload, spec: ModelSpec, pools: pd.DataFrame, memory_headroom: float
) -> tuple[float, np.ndarray]:
    """Activation GB per device and the fewest devices whose memory holds the job, per
    pool (0 where the activations alone exceed a device's memory): the memory part of
    :func:`training_setup`, alone."""
    act_sel = physics.activation_gb_per_device(
        seq_len=w.seq_len,
        micro_batch=w.micro_batch,
        hidden_size=spec.hidden_size,
        layers=spec.layers,
        attention_heads=spec.attention_heads,
        recompute=w.recompute,
        params=spec.params,
    )
    mem = pools["memory_gb"].to_numpy(dtype=float)
    n_min = physics.training_min_devices(spec.params, w.optimizer, act_sel, mem, memory_headroom)
    return act_sel, n_min


def training_setup(
    w: TrainingWorkload,
    spec: ModelSpec,
    pools: pd.DataFrame,
    memory_headroom: float,
    margin: str | float = "low",
) -> TrainingSetup:
    """Memory-minimum cluster, FLOPs, per-device rate and spot preemptions for every pool.

    FLOPs include attention when the model's shape is known (``physics.training_flops``)
    and count the parameters a token uses (a mixture of experts' active ones); memory
    holds all of them.
    The MFU is the family's published figure and band at the run's precision, against the
    same dense peak (``physics.default_mfu``), with the cluster size it was measured at;
    the cluster is sized at the MFU the ``margin`` picks from the band
    (``physics.planning_mfu``: the low end by default). A workload's own ``mfu`` is taken
    at the job's scale (``mfu_measured_at`` = inf: no scaling loss) with no band. Spot
    pools carry their provider's preemptions per instance-hour.
    """
    recompute = w.recompute
    act_sel, n_min = min_devices(w, spec, pools, memory_headroom)
    flops = physics.training_flops(
        spec.active_params,
        w.tokens,
        w.optimizer,
        recompute,
        layers=spec.layers,
        hidden_size=spec.hidden_size,
        seq_len=w.seq_len,
    )
    peak = _peak_tflops(pools, w.precision)
    # the MFU and the fabric depend on the accelerator alone: once per distinct one
    accel = pools[["accelerator_id", "vendor", "device_class", "scaleup_gbps"]].assign(
        bf16=pools["bf16_dense_tflops"].to_numpy(float), peak=peak
    )
    where, distinct = distinct_rows(accel, pools.get(DEVICE_KEY))
    measured = (
        [physics.own_mfu(float(w.mfu))] * len(distinct)
        if w.mfu is not None
        else [
            physics.moe_mfu(
                physics.default_mfu(a, v, c, float(s), w.precision, float(b), float(p)), spec
            )
            for a, v, c, s, b, p in distinct
        ]
    )

    def per_pool(values: list, dtype: type = float) -> np.ndarray:
        return np.array(values, dtype=dtype)[where]

    mfu = per_pool([physics.planning_mfu(m, margin) for m in measured])
    measured_at = per_pool([m.measured_at_accelerators for m in measured])
    joins = np.array(
        [physics.scaleup_joins_units(a, v, c, float(s)) for a, v, c, s, _, _ in distinct],
        dtype=bool,
    )[where]
    rate = {p: physics.spot_preemptions_per_instance_hour(p) for p in pools["provider"].unique()}
    preemptions = np.where(
        pools["mode"].to_numpy() == Mode.SPOT, pools["provider"].map(rate).to_numpy(float), 0.0
    )
    return {
        "n_min_devices": n_min,
        "flops": flops,
        "activation_gb": act_sel,
        "mfu": mfu,
        "mfu_point": per_pool([m.mfu for m in measured]),
        "mfu_low": per_pool([m.low for m in measured]),
        "mfu_high": per_pool([m.high for m in measured]),
        "mfu_source": per_pool([m.source for m in measured], object),
        "mfu_band": per_pool([m.band for m in measured], object),
        "mfu_measured_at": measured_at,
        "joins_by_scaleup": joins,
        "preemptions_per_unit_hour": preemptions,
        "peak_tflops": peak,
    }


def _peak_tflops(pools: pd.DataFrame, precision: str) -> np.ndarray:
    """Per pool, the dense peak (TFLOP/s per accelerator) at ``precision``."""
    # a DataFrame is read by column, as the mapping physics takes (the stubs do not say so)
    return physics.compute_peak_tflops(cast(Mapping[str, Any], pools), precision)


def _smallest_cluster(
    hours_at: Callable[[np.ndarray], np.ndarray], lo: np.ndarray, hi: np.ndarray, limit_h: float
) -> np.ndarray:
    """Per pool, the fewest units in [lo, hi] whose job finishes within ``limit_h`` (0: none).

    Hours fall as units grow up to ``hi`` (scaling efficiency f ** log2(n) with
    f >= 0.8 keeps n x efficiency increasing; spot pools have ``hi`` capped at their
    fastest cluster, beyond which preemptions of more instances cost more than they
    add), so a vectorised bisection over all pools finds it.
    """
    fits_hi = (hi >= lo) & (hours_at(np.maximum(hi, 1)) <= limit_h + 1e-9)
    lo, hi = lo.copy(), np.where(fits_hi, hi, lo)
    while np.any(lo < hi):
        mid = (lo + hi) // 2
        ok = hours_at(np.maximum(mid, 1)) <= limit_h + 1e-9
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid + 1)
    return np.where(fits_hi, lo, 0)


def _fastest_spot_cluster(
    setup: TrainingSetup, apu: np.ndarray, network: np.ndarray, spot: np.ndarray, hi: np.ndarray
) -> np.ndarray:
    """Per pool, the units (1 to ``hi.max()``) at which a spot job finishes soonest (0
    off spot). Hours are FLOPs / (units x peak x MFU x scaling x (1 - lost)): the FLOPs,
    peak and MFU only scale them, so the fastest size depends on the units' shape,
    network, the MFU's measured scale and the preemption rate alone, computed once per
    distinct pool of those."""
    out = np.zeros(len(apu), dtype=int)
    idx = np.flatnonzero(spot)
    shape = np.stack(
        [
            apu[idx].astype(float),
            network[idx],
            setup["mfu_measured_at"][idx],
            setup["joins_by_scaleup"][idx].astype(float),
            setup["preemptions_per_unit_hour"][idx],
        ],
        axis=1,
    )
    distinct, where = np.unique(shape, axis=0, return_inverse=True)
    units = np.arange(1, int(hi.max()) + 1)[:, None]
    hours = physics.cluster_training_hours(
        setup["flops"],
        units * distinct[:, 0],
        distinct[:, 0],
        1.0,
        1.0,
        distinct[:, 2],
        distinct[:, 1],
        distinct[:, 3].astype(bool),
        distinct[:, 4],
    )[0]
    out[idx] = (np.argmin(hours, axis=0) + 1)[where.ravel()]
    return out


def _periods_run_all(
    job_h: np.ndarray, start: int, end: int, period_hours: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The periods each job of ``job_h`` hours starting in period ``start`` actually spans
    (up to ``end``) and the hours it runs in each, one period at a time over every job:
    each job's ((period, hours), ...) as a tuple (a job of (almost) no hours still starts
    in ``start``), and its last period."""
    left = job_h.astype(float).copy()
    runs: list[list[tuple[int, float]]] = [[] for _ in range(len(job_h))]
    for t in range(start, end + 1):
        take = np.minimum(left, float(period_hours[t]))
        for k in np.flatnonzero(take > 1e-9).tolist():
            runs[k].append((t, float(take[k])))
        left = left - take
    out = np.empty(len(job_h), dtype=object)
    last = np.empty(len(job_h), dtype=np.int64)
    for k, run in enumerate(runs):
        run = run or [(start, float(job_h[k]))]
        out[k] = tuple(run)
        last[k] = run[-1][0]
    return out, last


def _mfu_arrays(setup: TrainingSetup, i: np.ndarray) -> dict[str, np.ndarray]:
    """The MFU columns of training options on the pools ``i``: the MFU each is sized at,
    where and at what scale that figure was measured, and its band."""
    measured_at = np.asarray(setup["mfu_measured_at"], dtype=float)[i]
    return {
        "mfu": np.asarray(setup["mfu"], dtype=float)[i],
        "mfu_measured_at_accelerators": np.where(np.isfinite(measured_at), measured_at, np.nan),
        "mfu_point": np.asarray(setup["mfu_point"], dtype=float)[i],
        "mfu_low": np.asarray(setup["mfu_low"], dtype=float)[i],
        "mfu_high": np.asarray(setup["mfu_high"], dtype=float)[i],
        "mfu_source": np.array([str(x) for x in np.asarray(setup["mfu_source"])[i]], dtype=object),
        "mfu_band": np.array([str(x) for x in np.asarray(setup["mfu_band"])[i]], dtype=object),
    }


def training_options(
    w: TrainingWorkload,
    spec: ModelSpec,
    pools: pd.DataFrame,
    periods: pd.DataFrame,
    problem: Problem,
    report: CompileReport,
) -> pd.DataFrame:
    """Training options of ``w`` over the pools it may use: for every start period and
    every end period of its window, the smallest cluster per pool that finishes in time
    (a new size only), with its hours by period, MFU, energy, CO2e and rent (one row
    each, built column-wise: a grown catalog gives hundreds of thousands)."""
    first, last = training_window(w, periods)
    setup = training_setup(w, spec, pools, problem.memory_headroom, problem.training_margin_of(w))
    apu = pools["accels_per_unit"].to_numpy()
    u_min = np.where(setup["n_min_devices"] > 0, np.ceil(setup["n_min_devices"] / apu), 0).astype(
        int
    )
    network = pools["network_gbps"].to_numpy(dtype=float)
    spot = pools["mode"].to_numpy() == Mode.SPOT
    rented = np.isin(pools["mode"].to_numpy(), RENTED_MODES)
    price = pools["price_usd_per_hour"].to_numpy(dtype=float)

    def cluster(units: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # one node per unit (instance or server); the same function the estimator uses
        return physics.cluster_training_hours(
            setup["flops"],
            units * apu,
            apu,
            setup["peak_tflops"],
            setup["mfu"],
            setup["mfu_measured_at"],
            network,
            setup["joins_by_scaleup"],
            setup["preemptions_per_unit_hour"],
        )

    def hours_at(units: np.ndarray) -> np.ndarray:
        return cluster(units)[0]

    def hours_at_point(units: np.ndarray) -> np.ndarray:
        # hours are FLOPs / (... x MFU ...): at the point MFU they scale by mfu / point
        return cluster(units)[0] * setup["mfu"] / setup["mfu_point"]

    cap_units = pools["availability_cap"].to_numpy().astype(int)
    if w.max_accelerators is not None:
        cap_units = np.minimum(cap_units, w.max_accelerators // apu)
    cap_units = np.minimum(cap_units, MAX_TRAINING_UNITS)
    lo = np.maximum(u_min, 1)
    hi = np.where(u_min > 0, cap_units, 0)
    if spot.any() and hi.max() > 1:
        # spot: hours stop falling once more instances add more preemptions than speed
        hi = np.where(
            spot, np.minimum(hi, _fastest_spot_cluster(setup, apu, network, spot, hi)), hi
        )
    p_hours = periods["hours"].to_numpy()
    deadline_h = w.deadline_days * 24.0 if w.deadline_days else np.inf
    batches: list[dict[str, np.ndarray]] = []
    unit_coef = unit_hour_coefficients(pools, TRAINING_UTILISATION)
    for s in range(first, last + 1):
        chosen_prev = np.zeros(len(pools), dtype=int)
        # the hours a job starting in s may take (the verifier's window), and what the
        # point MFU would need of each pool in it: why a margin moved the plan
        window_h = min(float(p_hours[s : last + 1].sum()), deadline_h)
        at_point = _smallest_cluster(hours_at_point, lo, hi, window_h)
        for e in range(s, last + 1):
            limit = min(float(p_hours[s : e + 1].sum()), deadline_h)
            units = _smallest_cluster(hours_at, lo, hi, limit)
            new = (units > 0) & (units != chosen_prev)
            chosen_prev = np.where(units > 0, units, chosen_prev)
            if not new.any():
                continue
            job_h, eff, lost = cluster(np.maximum(units, 1))
            i = np.flatnonzero(new)
            u, h = units[i].astype(np.int64), job_h[i].astype(float)
            run, end = _periods_run_all(h, s, e, p_hours)
            batches.append(
                {
                    "pool_index": i.astype(np.int64),
                    "n_units": u,
                    "n_accelerators": u * apu[i].astype(np.int64),
                    "job_hours": h,
                    "start_period": np.full(len(i), s, dtype=np.int64),
                    "end_period": end,
                    "hours_by_period": run,
                    **_mfu_arrays(setup, i),
                    "window_hours": np.full(len(i), window_h, dtype=float),
                    "units_at_point_mfu": at_point[i].astype(np.int64),
                    "scaling_efficiency": eff[i].astype(float),
                    "spot_lost_fraction": lost[i].astype(float),
                    "energy_kwh": unit_coef["kwh"][i].astype(float) * u * h,
                    "energy_usd": unit_coef["energy_usd"][i].astype(float) * u * h,
                    "kgco2e": unit_coef["kgco2e"][i].astype(float) * u * h,
                    "rent_usd": np.where(rented[i], price[i] * u * h, 0.0),  # ledger.rent_usd
                }
            )
    if not batches:
        return pd.DataFrame()
    options = pd.DataFrame({k: np.concatenate([b[k] for b in batches]) for k in batches[0]})
    report.generated += len(options)
    return options


def no_cluster_reason(w: TrainingWorkload, problem: Problem) -> str:
    """Why a training workload has no option, with the MFU margin it was sized at."""
    margin = problem.training_margin_of(w)
    at = (
        "at the low end of the MFU band (training_margin: low; point sizes it at the "
        "published figure)"
        if margin == "low" and w.mfu is None
        else f"at training_margin {margin}"
    )
    return f"no cluster finishes inside the window/deadline within caps {at}"


def prune_training_options(
    options: pd.DataFrame, pools: pd.DataFrame, report: CompileReport
) -> pd.DataFrame:
    """Drop training options dominated within their pool.

    For one pool and start period, an option is dominated when another ends no
    later with no more units (fewer units cost less, hold less capacity and use
    less energy): the generator already keeps only the smallest cluster per end
    period, so what remains here are clusters that differ in span. The options kept come
    group by group ((pool, start) in the order first met), each by units then end
    period (then as generated).
    """
    if options.empty:
        return options
    pool = options["pool_index"].to_numpy(np.int64)
    start = options["start_period"].to_numpy(np.int64)
    group, _ = pd.factorize(pool * (int(start.max()) + 1) + start)
    n_units = options["n_units"].to_numpy(np.int64)
    end = options["end_period"].to_numpy(np.int64)
    order = np.lexsort((np.arange(len(options)), end, n_units, group))
    g, e = group[order], end[order]
    # kept: the first of its group, or ending before every option of its group before it
    # (a kept option's end is below every earlier one's, so the last kept end is their
    # minimum)
    first = np.r_[True, g[1:] != g[:-1]]
    prev_min = pd.Series(e).groupby(g).cummin().shift(1).to_numpy()
    keep = first | (e < np.where(first, np.inf, prev_min))
    dropped = int((~keep).sum())
    if dropped:
        report.pruned["training: larger cluster that finishes no sooner"] += dropped
    return options.iloc[order[keep]].reset_index(drop=True)
