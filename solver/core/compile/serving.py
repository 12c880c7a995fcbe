"""Serving options: the replica shape (tensor-parallel degree, batch) that gives a pool's
unit the most output tokens/s under a workload's SLOs, per traffic-mix bucket too, and
the share of that estimate the plan counts on."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, cast

import numpy as np
import pandas as pd

from solver import physics
from solver.core.compile.calibration import calibrate_to_measured
from solver.core.compile.compiled import CompileReport
from solver.core.compile.training import DEVICE_KEY, distinct_rows
from solver.errors import ProcureError
from solver.inputs.catalog import Catalog
from solver.inputs.presets import ModelSpec
from solver.inputs.problem import (
    BatchInferenceWorkload,
    InferenceWorkload,
    Problem,
)
from solver.physics.bands import model_class

TP_DEGREES = (1, 2, 4, 8)


#: The pool columns a serving capacity depends on (:func:`physics.device_figures`, the unit's
#: shape): pools equal in them get the same figures, computed once (:func:`inference_capacity`).
CAPACITY_COLUMNS = (
    "vendor",
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


def inference_capacity(
    w: InferenceWorkload | BatchInferenceWorkload,
    spec: ModelSpec,
    pools: pd.DataFrame,
    memory_headroom: float,
    prompt_tokens: float,
    output_tokens: float,
    degrees: tuple[int, ...] = TP_DEGREES,
) -> pd.DataFrame:
    """Best tensor-parallel degree per pool (among ``degrees``) and its output tokens/s
    per unit.

    Computed once per distinct device and unit shape (:data:`CAPACITY_COLUMNS`; a large
    catalog repeats a few dozen across thousands of pools) and spread back to the pools,
    row for row what :func:`pool_capacity` gives on all of them.

    Returns columns tp_degree, batch, replicas_per_unit, tokens_per_s_per_unit,
    step_s, ttft_s, reason ('' when feasible).
    """
    keys = [c for c in CAPACITY_COLUMNS if c in pools.columns]
    where, distinct = distinct_rows(pools[keys], pools.get(DEVICE_KEY))
    if len(distinct) == len(pools):
        return pool_capacity(w, spec, pools, memory_headroom, prompt_tokens, output_tokens, degrees)
    _, first = np.unique(where, return_index=True)
    once = pool_capacity(
        w, spec, pools[keys].iloc[first], memory_headroom, prompt_tokens, output_tokens, degrees
    )
    return once.iloc[where].reset_index(drop=True)


def pool_capacity(
    w: InferenceWorkload | BatchInferenceWorkload,
    spec: ModelSpec,
    pools: pd.DataFrame,
    memory_headroom: float,
    prompt_tokens: float,
    output_tokens: float,
    degrees: tuple[int, ...] = TP_DEGREES,
) -> pd.DataFrame:
    """:func:`inference_capacity` computed on every row of ``pools`` (the columns of
    :data:`CAPACITY_COLUMNS`)."""
    if spec.layers is None or spec.kv_heads is None or spec.head_dim is None:
        raise ProcureError(
            f"workload {w.name!r}: inference needs the model's layers, kv_heads and head_dim",
            field=f"{w.name}.model",
            fix="use a preset (procure catalog list --models) or give the full shape",
        )
    n = len(pools)
    best_cap = np.zeros(n)
    best = {
        "tp_degree": np.zeros(n, dtype=int),
        "batch": np.zeros(n, dtype=int),
        "replicas_per_unit": np.zeros(n, dtype=int),
        "step_s": np.full(n, np.nan),
        "ttft_s": np.full(n, np.nan),
    }
    reason = np.full(n, "weights do not fit any replica shape", dtype=object)
    best_tpot_s = np.full(n, np.inf)  # fastest decode step reachable where the weights fit
    best_ttft_s = np.full(n, np.inf)
    apu = pools["accels_per_unit"].to_numpy()
    nvlink = pools["nvlink"].to_numpy(dtype=bool)
    model = physics.served_model(spec, w.weight_precision, w.kv_precision)
    dev = physics.device_figures(
        cast(Mapping[str, Any], pools), w.weight_precision, nvlink, w.runtime
    )
    allow_pcie = w.allow_tensor_parallel_over_pcie
    for d in degrees:
        shape_ok = (apu >= d) & (apu % d == 0)
        if d > 1 and not allow_pcie:
            pcie_block = shape_ok & ~nvlink
            reason = np.where(
                pcie_block & (best_cap == 0),
                "tensor parallelism needs NVLink (allow_tensor_parallel_over_pcie)",
                reason,
            )
            shape_ok &= nvlink
        if not shape_ok.any():
            continue
        res = physics.best_decode(
            model,
            prompt_tokens=prompt_tokens,
            output_tokens=output_tokens,
            tpot_slo_s=w.tpot_slo_s if isinstance(w, InferenceWorkload) else None,
            ttft_slo_s=w.ttft_slo_s if isinstance(w, InferenceWorkload) else None,
            d=np.full(n, float(d)),
            dev=dev,
            memory_headroom=memory_headroom,
            load=w.load_percentile if isinstance(w, InferenceWorkload) else None,
        )
        replicas = np.where(shape_ok, apu // d, 0)
        cap = replicas * res.tokens_per_s
        better = shape_ok & (cap > best_cap + 1e-9)
        best_cap = np.where(better, cap, best_cap)
        best["tp_degree"] = np.where(better, d, best["tp_degree"])
        best["batch"] = np.where(better, res.batch, best["batch"])
        best["replicas_per_unit"] = np.where(better, replicas, best["replicas_per_unit"])
        best["step_s"] = np.where(better, res.step_s, best["step_s"])
        best["ttft_s"] = np.where(better, res.ttft_s, best["ttft_s"])
        # keep the most informative reason for pools still without a shape
        reason = np.where((best_cap == 0) & shape_ok & (res.reason != ""), res.reason, reason)
        fits = shape_ok & (res.b_max_memory >= 1)
        best_tpot_s = np.where(fits, np.minimum(best_tpot_s, res.step_s), best_tpot_s)
        best_ttft_s = np.where(fits, np.minimum(best_ttft_s, res.ttft_s), best_ttft_s)
    reason = np.where(best_cap > 0, "", reason)
    return pd.DataFrame(
        {
            **best,
            "tokens_per_s_per_unit": best_cap,
            "reason": reason,
            "best_tpot_s": best_tpot_s,
            "best_ttft_s": best_ttft_s,
        }
    )


def inference_options(
    w: InferenceWorkload | BatchInferenceWorkload,
    spec: ModelSpec,
    sub: pd.DataFrame,
    problem: Problem,
    catalog: Catalog,
    inf_coef: dict[str, np.ndarray],
    report: CompileReport,
    local_reasons: Counter,
) -> pd.DataFrame:
    """Inference options for one workload over the allowed pools (vectorised per pool)."""
    mix = list(w.traffic_mix or []) if isinstance(w, InferenceWorkload) else []
    headroom = problem.memory_headroom
    if mix:
        mean_p = sum(b.share * b.prompt_tokens for b in mix)
        mean_o = sum(b.share * b.output_tokens for b in mix)
        main = inference_capacity(w, spec, sub, headroom, mean_p, mean_o)
    else:
        main = inference_capacity(w, spec, sub, headroom, w.prompt_tokens, w.output_tokens)
    apu = sub["accels_per_unit"].to_numpy()
    acc_ids = sub["accelerator_id"].to_numpy()
    measured = _measured_rps(w, catalog)
    is_measured = np.isin(acc_ids, list(measured))
    reason = main["reason"].to_numpy().astype(object)
    tp = main["tp_degree"].to_numpy()
    if mix:
        shares = np.array([b.share for b in mix])
        outs = np.array([b.output_tokens for b in mix], dtype=float)
        rps, tp = _best_mix_degree(w, spec, sub, headroom, mix)
        tail: dict[str, list[float]] = {}
        if measured and isinstance(w, InferenceWorkload):  # only a serving one measures
            fit = calibrate_to_measured(w, spec, catalog, headroom, measured)
            report.calibration[w.name] = fit
            rps = np.where(is_measured[:, None], rps, rps * fit["factor"])
            tail = fit.get("tail_share", {})
        for acc, values in measured.items():
            rows = acc_ids == acc
            # a measurement holds at the mean; at a percentile, its share the physics keeps
            kept = np.asarray(values, dtype=float) * np.asarray(tail.get(acc, 1.0), dtype=float)
            rps[rows] = kept[None, :] * apu[rows, None]
        fits = (rps > 0).any(axis=1)
        reason = np.where(fits, "", np.where(reason == "", "no request-size bucket fits", reason))
        reason = np.where(is_measured & ~fits, "measured throughput is zero", reason)
        cap_tokens = _mix_tokens_per_s(rps, shares, outs)
        tp = np.where(is_measured, 1, tp)
    else:
        rps = np.zeros((len(sub), 0))
        cap_tokens = main["tokens_per_s_per_unit"].to_numpy()
    # the share of each estimate the plan counts on (capacity_confidence, capacity_optimism)
    # the band is the (accelerator family, runtime, model class)'s, the widest outside the
    # validated set (solver/physics/bands.py)
    source = np.where(is_measured, "measured", "calibrated" if measured else "physics")
    klass = model_class(spec.params, spec.experts, spec.experts_active)
    # per (device, source): once per distinct pair, spread back to the pools
    device = sub[DEVICE_KEY].to_numpy() if DEVICE_KEY in sub else np.arange(len(sub))
    pair, _ = pd.factorize(np.asarray(device, dtype=np.int64) * 2 + is_measured)
    _, first = np.unique(pair, return_index=True)
    vendor = sub["vendor"].to_numpy()[first]
    runtime = getattr(w, "runtime", None)
    share = physics.planned_capacity_share(
        problem.capacity_confidence,
        problem.capacity_optimism,
        vendor,
        source[first],
        runtime,
        acc_ids[first],
        klass,
    )[pair]
    # one throughput scenario (capacity_scenario): x factor, or each estimate at
    # a quantile of its own band (the band capacity_confidence reads)
    band = physics.capacity_band_log(vendor, source[first], runtime, acc_ids[first], klass)[pair]
    if problem.capacity_scenario is not None:
        share = share * problem.capacity_scenario.share(band)
    rps, cap_tokens = rps * share[:, None], cap_tokens * share
    report.generated += len(sub)
    ok = reason == ""
    if isinstance(w, InferenceWorkload) and not ok.any() and len(sub):
        reason = _with_best_reachable(reason, w, main)
    for why, n in Counter(reason[~ok]).items():
        report.infeasible[f"inference: {why}"] += n
        local_reasons[why] += n
    idx = sub.index.to_numpy()[ok]
    physics_rows = ~is_measured[ok]
    tp_ok = np.maximum(tp[ok], 1)
    frame = pd.DataFrame(
        {
            "workload": w.name,
            "workload_kind": w.kind,
            "pool_id": sub["pool_id"].to_numpy()[ok],
            "tp_degree": tp_ok,
            "batch": np.where(physics_rows, main["batch"].to_numpy()[ok], 0),
            "replicas_per_unit": apu[ok] // tp_ok,
            "tokens_per_s_per_unit": cap_tokens[ok],
            "step_s": np.where(physics_rows, main["step_s"].to_numpy()[ok], np.nan),
            "ttft_s": np.where(physics_rows, main["ttft_s"].to_numpy()[ok], np.nan),
            "capacity_source": source[ok],
            "capacity_band_log": band[ok],
            "kwh_per_unit_hour": inf_coef["kwh"][idx],
            "energy_usd_per_unit_hour": inf_coef["energy_usd"][idx],
            "kgco2e_per_unit_hour": inf_coef["kgco2e"][idx],
        }
    )
    # traffic-mix capacities per bucket (None without a mix: a million empty lists cost
    # a second at fleet scale)
    frame["_rps"] = [list(r) for r in rps[ok]] if mix else None
    return frame


def _with_best_reachable(
    reason: np.ndarray, w: InferenceWorkload, main: pd.DataFrame
) -> np.ndarray:
    """Each refusal reason of a workload no pool can serve, followed by how close the
    best accelerator comes to the SLO it misses (ms for TPOT, s for TTFT)."""
    tpot, ttft = main["best_tpot_s"].min(), main["best_ttft_s"].min()
    # a reason checked at a percentile ends "at p99 under load": matched by its start
    reachable = {
        "time per output token above the SLO at batch 1": (
            f" (best reachable {tpot * 1e3:,.1f} ms against {w.tpot_slo_s * 1e3:,.1f} ms)"
        ),
        "time to first token above the SLO": (
            f" (best reachable {ttft:,.2f} s against {w.ttft_slo_s:,.2f} s)"
        ),
    }
    return np.array(
        [r + next((v for k, v in reachable.items() if str(r).startswith(k)), "") for r in reason],
        dtype=object,
    )


def _measured_rps(
    w: InferenceWorkload | BatchInferenceWorkload, catalog: Catalog
) -> dict[str, list[float]]:
    """The workload's measured requests/s per accelerator id (per bucket)."""
    measured: dict[str, list[float]] = {}
    if isinstance(w, InferenceWorkload) and w.measured_throughput_rps:
        for name, values in w.measured_throughput_rps.items():
            try:
                measured[catalog.resolve_accelerator(name)] = values
            except ProcureError as exc:
                raise ProcureError(
                    exc.message,
                    field=f"workloads ({w.name}).measured_throughput_rps",
                    fix=exc.fix,
                ) from None
    return measured


def _mix_tokens_per_s(rps: np.ndarray, shares: np.ndarray, outs: np.ndarray) -> np.ndarray:
    """Output tokens/s of one unit time-shared over the buckets it can serve, in their
    shares: sum(share x output tokens) / sum(share / requests/s), both sums over the buckets
    with requests/s > 0 (a bucket the unit cannot serve adds neither tokens nor time); 0
    where it serves none.

    Parameters
    ----------
    rps : requests/s per unit, one row per pool, one column per bucket
    shares : each bucket's share of the requests
    outs : each bucket's output tokens per request
    """
    serves = rps > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        seconds = np.where(serves, shares[None, :] / rps, 0.0).sum(axis=1)
        tokens = np.where(serves, (shares * outs)[None, :], 0.0).sum(axis=1)
        return np.where(serves.any(axis=1), tokens / seconds, 0.0)


def _best_mix_degree(
    w: InferenceWorkload | BatchInferenceWorkload,
    spec: ModelSpec,
    sub: pd.DataFrame,
    headroom: float,
    mix: list,
) -> tuple[np.ndarray, np.ndarray]:
    """(requests/s per unit per bucket, tensor-parallel degree) per pool for a traffic mix.

    Every bucket is served at one degree per unit (a unit is set up once): per pool, the
    degree whose time-shared capacity over the mix is best."""
    shares = np.array([b.share for b in mix])
    outs = np.array([b.output_tokens for b in mix], dtype=float)
    best_mix = np.zeros(len(sub))
    rps = np.zeros((len(sub), len(mix)))
    tp = np.zeros(len(sub), dtype=int)
    for d in TP_DEGREES:
        rps_d = np.column_stack(
            [
                inference_capacity(w, spec, sub, headroom, b.prompt_tokens, b.output_tokens, (d,))[
                    "tokens_per_s_per_unit"
                ].to_numpy()
                / b.output_tokens
                for b in mix
            ]
        )
        mixed = _mix_tokens_per_s(rps_d, shares, outs)
        better = mixed > best_mix + 1e-12
        best_mix = np.where(better, mixed, best_mix)
        rps = np.where(better[:, None], rps_d, rps)
        tp = np.where(better, d, tp)
    return rps, tp
