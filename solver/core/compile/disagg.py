"""Disaggregated serving options: per pool, its best prefill replica shape and its best
decode replica shape (:mod:`solver.physics.disagg`), grouped by provider and region, the
KV cache sent over the nodes' network (docs/formulation/disagg_prefill.md)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, cast

import numpy as np
import pandas as pd

from solver import physics
from solver.core.compile.compiled import CompileReport
from solver.core.compile.serving import TP_DEGREES
from solver.inputs.presets import ModelSpec
from solver.inputs.problem import InferenceWorkload, Problem
from solver.physics.bands import model_class
from solver.physics.constants import ETA_LINK
from solver.physics.disagg import decode_pool, kv_gb_per_request, kv_transfer_s, prefill_pool

#: The link a disaggregated group's KV cache crosses: the nodes' scale-out network
#: (InfiniBand or Ethernet, the offering's ``network_gbps``) within one provider and region.
KV_LINK = "network"
#: A group's pools share a NIC class, Gbit/s per unit (the lowest bound a unit's NIC
#: reaches): a decode pool on a 10 Gbit/s NIC must not slow the KV of a 3,200 Gbit/s
#: prefill pool. The bounds are the catalog's common NIC totals (400 Gbit/s: p4d; 1,600 and
#: 3,200: H100 and B200 nodes with EFA or InfiniBand NDR; catalogs/SOURCES.md).
NIC_CLASSES_GBPS = (3200.0, 1600.0, 400.0, 100.0, 25.0, 0.0)


def kv_link_label(network_gbps: float) -> str:
    """The link a unit's KV cache crosses, by its NIC class: ``network/nic3200`` for a
    unit whose NIC totals at least 3,200 Gbit/s (:data:`NIC_CLASSES_GBPS`)."""
    top = next(c for c in NIC_CLASSES_GBPS if network_gbps >= c)
    return f"{KV_LINK}/nic{top:g}"


def _shapes_ok(apu: np.ndarray, nvlink: np.ndarray, d: int, allow_pcie: bool) -> np.ndarray:
    """Pools whose unit holds whole replicas of ``d`` devices (over NVLink when d > 1)."""
    ok = (apu >= d) & (apu % d == 0)
    return ok if d == 1 or allow_pcie else ok & nvlink


def _best_decode(
    w: InferenceWorkload,
    model: Any,
    dev: Any,
    apu: np.ndarray,
    nvlink: np.ndarray,
    nic: np.ndarray,
    kv_gb: float,
    memory_headroom: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per pool, the decode side's best tensor-parallel degree: (output tokens/s per unit,
    degree, batch, step seconds, why none where none), the node's NIC receiving every
    request's KV cache (``kv_gb`` per request) as a limit."""
    n = len(apu)
    p, o = float(w.prompt_tokens), float(w.output_tokens)
    allow = w.allow_tensor_parallel_over_pcie
    dec_cap, dec_tp = np.zeros(n), np.zeros(n, dtype=int)
    dec_batch, dec_step = np.zeros(n), np.full(n, np.nan)
    dec_why = np.full(n, "weights do not fit any replica shape", dtype=object)
    for d in TP_DEGREES:
        ok = _shapes_ok(apu, nvlink, d, allow)
        if not ok.any():
            continue
        res = decode_pool(model, prompt_tokens=p, output_tokens=o, tpot_slo_s=w.tpot_slo_s,
                          d=np.full(n, float(d)), dev=dev,
                          memory_headroom=memory_headroom, load=w.load_percentile)  # fmt: skip
        reps = np.where(ok, apu // d, 0)
        # the node's NIC receives every request's KV: requests/s x KV GB <= NIC x eta / 8
        nic_rps = nic * ETA_LINK / 8.0 / max(kv_gb, 1e-30)
        cap = np.minimum(reps * res.tokens_per_s, nic_rps * o)
        better = ok & (cap > dec_cap + 1e-9)
        dec_cap = np.where(better, cap, dec_cap)
        dec_tp = np.where(better, d, dec_tp)
        dec_batch = np.where(better, res.batch, dec_batch)
        dec_step = np.where(better, res.step_s, dec_step)
        dec_why = np.where((dec_cap == 0) & ok & (res.reason != ""), res.reason, dec_why)
    return dec_cap, dec_tp, dec_batch, dec_step, np.where(dec_cap > 0, "", dec_why)


def _capacity_share(
    w: InferenceWorkload, spec: ModelSpec, sub: pd.DataFrame, problem: Problem
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(capacity source, planned share of each estimate, error band in log units) per pool:
    the same share of each estimate as aggregated serving (serving.inference_options)."""
    n = len(sub)
    acc_ids = sub["accelerator_id"].to_numpy()
    klass = model_class(spec.params, spec.experts, spec.experts_active)
    source = np.full(n, "physics", dtype=object)
    share = physics.planned_capacity_share(problem.capacity_confidence, problem.capacity_optimism,
                                           sub["vendor"].to_numpy(), source, w.runtime, acc_ids,
                                           klass)  # fmt: skip
    band = physics.capacity_band_log(sub["vendor"].to_numpy(), source, w.runtime, acc_ids, klass)
    if problem.capacity_scenario is not None:
        share = share * problem.capacity_scenario.share(band)
    return source, share, band


def disagg_options(
    w: InferenceWorkload,
    spec: ModelSpec,
    sub: pd.DataFrame,
    problem: Problem,
    inf_coef: dict[str, np.ndarray],
    report: CompileReport,
    local_reasons: Counter,
) -> pd.DataFrame:
    """Prefill and decode options of one online workload over the pools ``sub`` it may use.

    A group is the workload's (provider, region): its prefill units send each request's KV
    cache (KV bytes per token x prompt tokens) to its decode units over the network, at
    the slowest per-replica NIC share of the group's decode pools and of the prefill pool
    itself (:func:`solver.physics.disagg.kv_transfer_s`); the TTFT limit includes it. A
    prefill option's ``tokens_per_s_per_unit`` is its requests/s per unit x the output
    tokens per request (the output the decode side can then serve); a decode option's is
    its output tokens/s per unit. Both are counted at the plan's capacity share
    (``capacity_confidence``), as aggregated options are.
    """
    n = len(sub)
    if n == 0:
        return pd.DataFrame()
    model = physics.served_model(spec, w.weight_precision, w.kv_precision)
    apu = sub["accels_per_unit"].to_numpy(dtype=int)
    nvlink = sub["nvlink"].to_numpy(dtype=bool)
    nic = sub["network_gbps"].to_numpy(dtype=float)
    dev = physics.device_figures(
        cast(Mapping[str, Any], sub), w.weight_precision, nvlink, w.runtime
    )
    p, o = float(w.prompt_tokens), float(w.output_tokens)
    load = w.load_percentile
    allow = w.allow_tensor_parallel_over_pcie
    kv_gb = kv_gb_per_request(model, p)
    dec_cap, dec_tp, dec_batch, dec_step, dec_why = _best_decode(
        w, model, dev, apu, nvlink, nic, kv_gb, problem.memory_headroom
    )
    # a group: provider, region and NIC class; its link: the slowest per-replica NIC
    # share of its decode pools
    link_label = np.array([kv_link_label(v) for v in nic], dtype=object)
    region = (
        sub["provider"].astype(str) + "/" + sub["region"].astype(str) + "/" + link_label
    ).to_numpy()
    dec_share = np.where(dec_cap > 0, nic / np.maximum(apu // np.maximum(dec_tp, 1), 1), np.inf)
    group_min = pd.Series(dec_share).groupby(region).transform("min").to_numpy()
    # prefill: the best degree per pool (requests/s per unit)
    pre_cap, pre_tp = np.zeros(n), np.zeros(n, dtype=int)
    pre_ttft, pre_x = np.full(n, np.nan), np.full(n, np.nan)
    pre_why = np.full(n, "weights do not fit any replica shape", dtype=object)
    for d in TP_DEGREES:
        ok = _shapes_ok(apu, nvlink, d, allow)
        if not ok.any():
            continue
        reps = np.where(ok, apu // d, 0)
        link = np.minimum(nic / np.maximum(reps, 1), group_min)
        x = kv_transfer_s(kv_gb, link)
        pre = prefill_pool(model, prompt_tokens=p, ttft_slo_s=w.ttft_slo_s,
                           d=np.full(n, float(d)), dev=dev, transfer_s=x,
                           replicas_per_unit=np.maximum(reps, 1), nic_gbit_per_s=nic,
                           memory_headroom=problem.memory_headroom, load=load)  # fmt: skip
        cap = reps * pre.requests_per_s
        better = ok & (cap > pre_cap + 1e-12)
        pre_cap = np.where(better, cap, pre_cap)
        pre_tp = np.where(better, d, pre_tp)
        pre_ttft = np.where(better, pre.ttft_s, pre_ttft)
        pre_x = np.where(better, x, pre_x)
        pre_why = np.where((pre_cap == 0) & ok & (pre.reason != ""), pre.reason, pre_why)
    pre_why = np.where(pre_cap > 0, "", pre_why)
    # a group needs both roles
    has_pre = pd.Series(pre_cap > 0).groupby(region).transform("any").to_numpy()
    has_dec = pd.Series(dec_cap > 0).groupby(region).transform("any").to_numpy()
    both = has_pre & has_dec
    for why, count in Counter(np.where(both, pre_why, "no prefill or no decode pool in its "
                                       "provider and region")[pre_cap == 0]).items():  # fmt: skip
        report.infeasible[f"disaggregated prefill: {why}"] += count
        local_reasons[f"disaggregated prefill: {why}"] += count
    source, share, band = _capacity_share(w, spec, sub, problem)
    report.generated += 2 * n
    frames = []
    idx = sub.index.to_numpy()
    for role, cap, tp, ok in (
        ("prefill", pre_cap * o, pre_tp, both & (pre_cap > 0)),
        ("decode", dec_cap, dec_tp, both & (dec_cap > 0)),
    ):
        if not ok.any():
            continue
        tp_ok = np.maximum(tp[ok], 1)
        frames.append(
            pd.DataFrame(
                {
                    "workload": w.name,
                    "workload_kind": w.kind,
                    "pool_id": sub["pool_id"].to_numpy()[ok],
                    "tp_degree": tp_ok,
                    "batch": (dec_batch if role == "decode" else np.ones(n))[ok].astype(int),
                    "replicas_per_unit": apu[ok] // tp_ok,
                    "tokens_per_s_per_unit": (cap * share)[ok],
                    "step_s": (dec_step if role == "decode" else np.full(n, np.nan))[ok],
                    "ttft_s": (pre_ttft if role == "prefill" else np.full(n, np.nan))[ok],
                    "capacity_source": source[ok],
                    "capacity_band_log": band[ok],
                    "kwh_per_unit_hour": inf_coef["kwh"][idx[ok]],
                    "energy_usd_per_unit_hour": inf_coef["energy_usd"][idx[ok]],
                    "kgco2e_per_unit_hour": inf_coef["kgco2e"][idx[ok]],
                    "architecture": "disaggregated",
                    "pool_role": role,
                    "disagg_group": [f"{w.name}|{r}" for r in region[ok]],
                    "kv_gb_per_request": kv_gb,
                    "kv_link": link_label[ok],
                    "kv_transfer_s": (pre_x if role == "prefill" else np.full(n, np.nan))[ok],
                }
            )
        )
    if not frames:
        return pd.DataFrame()
    frame = pd.concat(frames, ignore_index=True)
    frame["_rps"] = [[] for _ in range(len(frame))]
    return frame
