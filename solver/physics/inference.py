"""Inference: KV cache, batch limit, decode roofline, prefill, demand.

Per replica of d accelerators (tensor parallel within one node):

- weights = N * bytes(weight precision)
- KV per token = 2 * layers * kv_heads * head_dim * bytes(kv precision)
- b_max = floor((d * memory * (1 - headroom) - weights) / (KV per token * context))
- decode step t(b) = max((weights + b * context * KV) / (d * bw * eta_bw),
                         2 * N_active * b / (d * peak * eta_c)) + TP all-reduce time
- prefill (TTFT) = 2 * N_active * prompt / (d * peak * eta_c) + one weight read

t(b) is piecewise linear in b, so the largest batch meeting the time-per-token
SLO has a closed form; throughput b / t(b) rises with b, so that batch is the best.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solver.physics.constants import (
    ALLREDUCE_LATENCY_S_NVLINK,
    ALLREDUCE_LATENCY_S_PCIE,
    ETA_BANDWIDTH,
    ETA_COMPUTE,
    ETA_LINK,
    PCIE_GEN4_GBPS_PER_DIRECTION,
)
from solver.problem import SECONDS_PER_DAY


def kv_bytes_per_token(layers: float, kv_heads: float, head_dim: float, kv_bytes: float) -> float:
    """KV-cache bytes per token: 2 (K and V) x layers x kv_heads x head_dim x bytes."""
    return 2.0 * layers * kv_heads * head_dim * kv_bytes


def max_batch(
    weights_gb: float,
    kv_gb_per_token: float,
    context_tokens: float,
    d: np.ndarray | int,
    memory_gb: np.ndarray | float,
    memory_headroom: float = 0.10,
) -> np.ndarray:
    """Largest number of concurrent sequences whose KV cache fits beside the weights."""
    free_gb = (
        np.asarray(d, dtype=float) * np.asarray(memory_gb, dtype=float) * (1.0 - memory_headroom)
        - weights_gb
    )
    return np.floor(np.maximum(free_gb, 0.0) / (kv_gb_per_token * context_tokens)).astype(int)


def _allreduce_terms(
    d: np.ndarray,
    hidden_size: float,
    layers: float,
    act_bytes: float,
    link_gbps_per_dir: np.ndarray,
    nvlink: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """TP communication per decode step as (fixed_s, per_sequence_s).

    Two all-reduces per layer of b x hidden x bytes each; ring all-reduce moves
    2(d-1)/d of the message over each link.
    """
    d = np.asarray(d, dtype=float)
    ring = np.where(d > 1, 2.0 * (d - 1.0) / d, 0.0)
    per_seq_s = 2.0 * layers * ring * hidden_size * act_bytes / (link_gbps_per_dir * 1e9 * ETA_LINK)
    latency = np.where(np.asarray(nvlink), ALLREDUCE_LATENCY_S_NVLINK, ALLREDUCE_LATENCY_S_PCIE)
    fixed_s = np.where(d > 1, 2.0 * layers * latency, 0.0)
    return fixed_s, per_seq_s


def decode_step_s(
    batch: np.ndarray | float,
    *,
    weights_gb: float,
    kv_gb_per_token: float,
    context_tokens: float,
    active_params: float,
    d: np.ndarray | int,
    bandwidth_gbps: np.ndarray | float,
    peak_tflops: np.ndarray | float,
    eta_bw: float = ETA_BANDWIDTH,
    eta_c: float = ETA_COMPUTE,
    comm_fixed_s: np.ndarray | float = 0.0,
    comm_per_seq_s: np.ndarray | float = 0.0,
) -> np.ndarray:
    """Time of one decode step at a batch, seconds (roofline; eta=1 gives the bound)."""
    d = np.asarray(d, dtype=float)
    b = np.asarray(batch, dtype=float)
    memory_s = (weights_gb + b * context_tokens * kv_gb_per_token) / (
        d * np.asarray(bandwidth_gbps, dtype=float) * eta_bw
    )
    compute_s = 2.0 * active_params * b / (d * np.asarray(peak_tflops, dtype=float) * 1e12 * eta_c)
    return np.maximum(memory_s, compute_s) + comm_fixed_s + b * np.asarray(comm_per_seq_s)


def prefill_s(
    prompt_tokens: float,
    *,
    active_params: float,
    weights_gb: float,
    d: np.ndarray | int,
    bandwidth_gbps: np.ndarray | float,
    peak_tflops: np.ndarray | float,
    eta_bw: float = ETA_BANDWIDTH,
    eta_c: float = ETA_COMPUTE,
) -> np.ndarray:
    """Prefill time of one prompt, seconds: compute-bound pass plus one weight read."""
    d = np.asarray(d, dtype=float)
    compute_s = (
        2.0
        * active_params
        * prompt_tokens
        / (d * np.asarray(peak_tflops, dtype=float) * 1e12 * eta_c)
    )
    read_s = weights_gb / (d * np.asarray(bandwidth_gbps, dtype=float) * eta_bw)
    return compute_s + read_s


@dataclass(frozen=True)
class DecodeResult:
    """Best operating point per replica shape (arrays, one entry per candidate)."""

    batch: np.ndarray  # sequences decoded together (0 = infeasible)
    step_s: np.ndarray  # time per output token at that batch
    ttft_s: np.ndarray  # prefill time of one prompt
    tokens_per_s: np.ndarray  # output tokens/s per replica, prefill time included
    b_max_memory: np.ndarray  # the memory limit on the batch
    reason: np.ndarray  # "" when feasible, else why not (memory, tpot, ttft)


def best_decode(
    *,
    params: float,
    active_params: float,
    layers: float,
    kv_heads: float,
    head_dim: float,
    hidden_size: float,
    weight_bytes: float,
    kv_bytes: float,
    prompt_tokens: float,
    output_tokens: float,
    tpot_slo_s: float | None,
    ttft_slo_s: float | None,
    d: np.ndarray,
    memory_gb: np.ndarray,
    bandwidth_gbps: np.ndarray,
    peak_tflops: np.ndarray,
    scaleup_gbps: np.ndarray,
    nvlink: np.ndarray,
    memory_headroom: float = 0.10,
    max_batch_cap: int = 1024,
) -> DecodeResult:
    """Largest batch per replica that fits memory and meets the SLOs, and its throughput.

    ``tpot_slo_s``/``ttft_slo_s`` None means no SLO (batch inference).
    """
    d = np.asarray(d, dtype=float)
    weights_gb = params * weight_bytes / 1e9
    kv_gb = kv_bytes_per_token(layers, kv_heads, head_dim, kv_bytes) / 1e9
    context = prompt_tokens + output_tokens
    b_mem = np.minimum(
        max_batch(weights_gb, kv_gb, context, d, memory_gb, memory_headroom), max_batch_cap
    )
    link = np.where(
        np.asarray(nvlink),
        np.asarray(scaleup_gbps, dtype=float) / 2.0,
        PCIE_GEN4_GBPS_PER_DIRECTION,
    )
    link = np.where(link > 0, link, PCIE_GEN4_GBPS_PER_DIRECTION)
    comm_fixed, comm_per_seq = _allreduce_terms(d, hidden_size, layers, 2.0, link, nvlink)
    bw = np.asarray(bandwidth_gbps, dtype=float) * ETA_BANDWIDTH * d
    pk = np.asarray(peak_tflops, dtype=float) * 1e12 * ETA_COMPUTE * d
    # t(b) = max(A + B b, C b) + F + E b  <= slo  <=>  b <= both bounds below
    a_s = weights_gb / bw
    b_s = context * kv_gb / bw
    c_s = 2.0 * active_params / pk
    if tpot_slo_s is None:
        b_slo = np.full(d.shape, float(max_batch_cap))
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            b1 = (tpot_slo_s - a_s - comm_fixed) / (b_s + comm_per_seq)
            b2 = (tpot_slo_s - comm_fixed) / (c_s + comm_per_seq)
        b_slo = np.floor(np.minimum(b1, b2) + 1e-9)
    batch = np.maximum(np.minimum(b_mem, b_slo), 0).astype(int)
    ttft = prefill_s(
        prompt_tokens,
        active_params=active_params,
        weights_gb=weights_gb,
        d=d,
        bandwidth_gbps=bandwidth_gbps,
        peak_tflops=peak_tflops,
    )
    step = decode_step_s(
        batch,
        weights_gb=weights_gb,
        kv_gb_per_token=kv_gb,
        context_tokens=context,
        active_params=active_params,
        d=d,
        bandwidth_gbps=bandwidth_gbps,
        peak_tflops=peak_tflops,
        comm_fixed_s=comm_fixed,
        comm_per_seq_s=comm_per_seq,
    )
    reason = np.full(d.shape, "", dtype=object)
    reason = np.where(batch < 1, "time per output token above the SLO at batch 1", reason)
    reason = np.where(b_mem < 1, "weights and one sequence's KV cache do not fit memory", reason)
    if ttft_slo_s is not None:
        reason = np.where(
            (reason == "") & (ttft > ttft_slo_s), "time to first token above the SLO", reason
        )
    ok = reason == ""
    with np.errstate(divide="ignore", invalid="ignore"):
        per_request_s = ttft + output_tokens * step / np.maximum(batch, 1)
        tokens_per_s = np.where(ok, output_tokens / per_request_s, 0.0)
    return DecodeResult(
        batch=np.where(ok, batch, 0),
        step_s=step,
        ttft_s=ttft,
        tokens_per_s=tokens_per_s,
        b_max_memory=b_mem,
        reason=reason,
    )


def demand_tokens_per_s(
    *,
    users: float | None = None,
    requests_per_user_per_day: float | None = None,
    tokens_per_s: float | None = None,
    requests_per_s: float | None = None,
    output_tokens: float,
) -> float:
    """Average output tokens/s from users x requests, requests/s, or tokens/s."""
    if tokens_per_s is not None:
        return float(tokens_per_s)
    if requests_per_s is not None:
        return float(requests_per_s) * output_tokens
    if users is None or requests_per_user_per_day is None:
        raise ValueError("demand needs users and requests_per_user_per_day")
    return users * requests_per_user_per_day * output_tokens / SECONDS_PER_DAY
