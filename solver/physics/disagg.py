"""Disaggregated serving: a prefill pool and a decode pool, and the KV cache between them.

DistServe (Zhong et al., OSDI 2024, arXiv:2401.09670) and Splitwise (Patel et al., ISCA
2024, arXiv:2311.18677) run a request's prefill on one replica and its decode on another,
so neither phase slows the other: the prefill replica is an M/D/1 queue of whole prompts
(DistServe section 3.1), the decode replica a continuously batched engine whose steps carry
no prefill chunks. The KV cache of the prompt moves between them once per request.

Per replica of d devices (the derivation: docs/formulation/disagg.md):

- **Prefill.** Service time s = :func:`solver.physics.inference.prefill_s` (the prompt's
  FLOPs at eta_c, one weight read, the all-reduces). Arrivals at the planned utilisation
  rho of the rate lambda planned: TTFT = s + x + W(rho lambda), x the KV transfer, W the
  M/D/1 wait (at the SLO percentile, :func:`md1_wait_quantile_s`; no wait checked at the
  mean, as aggregated serving). The planned rate is the largest lambda <= 1 / s meeting
  the TTFT limit, and the node's NIC carries its replicas' KV: lambda x replicas x KV
  bytes <= NIC bytes/s x eta_link.
- **Decode.** The step of :func:`solver.physics.inference.step_model` without the prompt
  chunks: FLOPs 2 N + 4 L h c per sequence (c = P + O / 2, the mean context), the
  all-reduces of one token per sequence. The batch is the largest that fits memory
  (every sequence at the mean context, one at its full P + O), the runtime's limit and
  the TPOT limit (its own step, and at the percentile the Poisson quantile batch of
  mean rho b, as aggregated serving). Rate b / t(b) output tokens/s.
- **KV transfer.** Bytes per request = KV bytes per token x P; over the link between the
  two replicas' nodes at eta_link of its rate: x = bytes / (link GB/s x eta_link).

Everything is arrays, one entry per candidate, like the rest of the physics.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from solver.physics.constants import ETA_LINK
from solver.physics.hardware import Device
from solver.physics.inference import (
    LoadPercentile,
    ServedModel,
    StepModel,
    max_batch,
    md1_wait_quantile_s,
    poisson_quantile,
    prefill_compute_s,
    prefill_s,
    step_model,
)


def kv_gb_per_request(model: ServedModel, prompt_tokens: float) -> float:
    """KV cache of one prompt, GB (1e9 bytes): KV bytes per token x prompt tokens."""
    return float(model.kv_gb_per_token) * float(prompt_tokens)


def kv_transfer_s(kv_gb: float, link_gbit_per_s: np.ndarray | float) -> np.ndarray:
    """Seconds to move ``kv_gb`` GB over a link of ``link_gbit_per_s`` Gbit/s at
    :data:`ETA_LINK` of its rate: kv_gb x 8 / (link x eta_link)."""
    link = np.asarray(link_gbit_per_s, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(link > 0, float(kv_gb) * 8.0 / (link * ETA_LINK), np.inf)


@dataclass(frozen=True)
class PrefillResult:
    """Prefill replicas (arrays, one entry per candidate)."""

    service_s: np.ndarray  # one prompt's prefill alone, s
    requests_per_s: np.ndarray  # planned rate per replica (0 = infeasible)
    ttft_s: np.ndarray  # TTFT at the planned rate (percentile where asked), transfer included
    nic_requests_per_s: np.ndarray  # the node NIC's limit per replica, requests/s
    reason: np.ndarray  # "" when feasible


def prefill_pool(
    model: ServedModel,
    *,
    prompt_tokens: float,
    ttft_slo_s: float,
    d: np.ndarray,
    dev: Device,
    transfer_s: np.ndarray | float,
    replicas_per_unit: np.ndarray,
    nic_gbit_per_s: np.ndarray,
    memory_headroom: float = 0.10,
    load: LoadPercentile | None = None,
) -> PrefillResult:
    """Largest request rate per prefill replica meeting the TTFT limit with the KV transfer
    (module doc).

    The rate solves s + x + W_p(s, rho lambda) <= TTFT by bisection (W rises with lambda),
    capped at 1 / s (flat out) and at the NIC's share per replica: nic x eta_link / 8 /
    replicas / kv GB per request.
    """
    d = np.asarray(d, dtype=float)
    n = d.shape
    s = np.broadcast_to(prefill_s(model, prompt_tokens, d, dev), n).astype(float)
    x = np.broadcast_to(np.asarray(transfer_s, dtype=float), n)
    kv_gb = kv_gb_per_request(model, prompt_tokens)
    reps = np.maximum(np.asarray(replicas_per_unit, dtype=float), 1.0)
    nic = np.asarray(nic_gbit_per_s, dtype=float) * ETA_LINK / 8.0 / reps / max(kv_gb, 1e-30)
    fits = d * dev.memory_gb * (1.0 - memory_headroom) - model.weights_gb >= (
        model.kv_gb_per_token * float(prompt_tokens)
    )
    top = np.minimum(1.0 / s, nic)
    rho = 1.0 if load is None else load.rho

    def ttft(lam: np.ndarray) -> np.ndarray:
        if load is None:
            return s + x
        return s + x + md1_wait_quantile_s(s, rho * lam, load.p)

    lo = np.zeros(n)
    hi = top.copy()
    ok_top = ttft(hi) <= ttft_slo_s + 1e-12
    for _ in range(60):  # relative precision 2^-60 of the top rate
        mid = (lo + hi) / 2.0
        good = ttft(mid) <= ttft_slo_s + 1e-12
        lo = np.where(good, mid, lo)
        hi = np.where(good, hi, mid)
    lam = np.where(ok_top, top, lo)
    reason = np.full(n, "", dtype=object)
    reason = np.where(
        s + x > ttft_slo_s, "prefill and KV transfer alone exceed the TTFT SLO", reason
    )
    reason = np.where(~fits, "weights and one prompt's KV cache do not fit memory", reason)
    lam = np.where(reason == "", lam, 0.0)
    return PrefillResult(
        service_s=s,
        requests_per_s=lam,
        ttft_s=np.where(lam > 0, ttft(lam), s + x),
        nic_requests_per_s=nic,
        reason=reason,
    )


def prefill_batch_s(
    model: ServedModel, prompt_tokens: float, prompts: float, d: np.ndarray, dev: Device
) -> np.ndarray:
    """One forward pass over ``prompts`` whole prompts of ``prompt_tokens`` tokens each on
    a replica of d devices, seconds: each prompt's FLOPs at eta_c (attention within its
    own prompt), one read of the weights the k P tokens hit, the all-reduces.

    :func:`prefill_s` is this with one prompt. The sizing plans one prompt per pass (the
    M/D/1 queue of whole prompts, module doc), so it never counts on a batch forming; this
    is for a deployment that states its batch (a prefill server run with a token budget
    per pass, bench/accuracy/disagg_accuracy.py).
    """
    d = np.asarray(d, dtype=float)
    k = float(prompts)
    compute_s = k * prefill_compute_s(model, prompt_tokens, d, dev)
    tokens = k * float(prompt_tokens)
    read_gb = model.weights_read_gb(tokens) if model.is_moe else model.weights_gb
    read_s = read_gb * 1e9 / (d * dev.bandwidth_gbps * 1e9 * dev.eta_bandwidth)
    comm_s = np.where(d > 1, 2.0 * model.layers * dev.allreduce_latency_s, 0.0)
    return compute_s + read_s + comm_s


def decode_step_model(
    model: ServedModel, prompt_tokens: float, output_tokens: float, d: np.ndarray, dev: Device
) -> StepModel:
    """The decode-only step (module doc): :func:`step_model` with the prompt chunks taken
    out of the FLOPs (2 N + 4 L h c per sequence), of the all-reduces (one token per
    sequence, not 1 + P / O) and of the experts a step hits (no chunk of P tokens)."""
    d = np.asarray(d, dtype=float)
    p, o = float(prompt_tokens), float(output_tokens)
    sm = step_model(model, p, o, d, dev)
    flops = 2.0 * model.active_params + 4.0 * model.layers * model.attention_width * (p + o / 2.0)
    pk = d * dev.peak_tflops * 1e12
    return replace(
        sm,
        compute_s_per_seq=flops / (pk * dev.eta_compute),
        compute_s_per_seq_bound=flops / pk,
        comm_s_per_seq=sm.comm_s_per_seq / (1.0 + p / o),
        prompt_tokens=0.0,
    )


@dataclass(frozen=True)
class DecodePoolResult:
    """Decode replicas (arrays, one entry per candidate)."""

    batch: np.ndarray  # planned batch (0 = infeasible)
    step_s: np.ndarray  # its step, s (the time per output token)
    tpot_p_s: np.ndarray  # the step at the percentile batch (the mean step without one)
    tokens_per_s: np.ndarray  # output tokens/s per replica
    reason: np.ndarray


def decode_pool(
    model: ServedModel,
    *,
    prompt_tokens: float,
    output_tokens: float,
    tpot_slo_s: float,
    d: np.ndarray,
    dev: Device,
    memory_headroom: float = 0.10,
    load: LoadPercentile | None = None,
) -> DecodePoolResult:
    """Largest batch per decode replica within memory, the runtime's limit and the TPOT
    limit (its own step and, under ``load``, the Poisson quantile batch's), and its rate."""
    d = np.asarray(d, dtype=float)
    p, o = float(prompt_tokens), float(output_tokens)
    sm = decode_step_model(model, p, o, d, dev)
    free_gb = d * dev.memory_gb * (1.0 - memory_headroom) - model.weights_gb
    one_fits = free_gb >= model.kv_gb_per_token * (p + o)
    held = max_batch(model.weights_gb, model.kv_gb_per_token, p + o / 2.0, d, dev.memory_gb,
                     memory_headroom)  # fmt: skip
    limit = np.where(one_fits, np.minimum(held, dev.max_batch), 0).astype(float)
    upper = int(max(float(np.max(limit)) if limit.size else 1.0, 1.0))
    b = np.minimum(sm.largest_batch_within(tpot_slo_s, upper), limit)

    def tail(batch: np.ndarray) -> np.ndarray:
        if load is None:
            return sm.step_s(np.maximum(batch, 1.0))
        b_p = np.minimum(np.maximum(poisson_quantile(load.rho * batch, load.p), 1.0),
                         np.maximum(limit, 1.0))  # fmt: skip
        return sm.step_s(b_p)

    if load is not None:  # the quantile batch rises with b: bisection on whole batches
        lo = np.zeros(b.shape)
        hi = b.copy()
        top_ok = tail(hi) <= tpot_slo_s + 1e-12
        lo = np.where(top_ok, hi, lo)
        while np.any(hi - lo > 1):
            mid = np.floor((lo + hi) / 2.0)
            good = tail(mid) <= tpot_slo_s + 1e-12
            lo = np.where(good, mid, lo)
            hi = np.where(good, hi, mid)
        b = lo
    step = sm.step_s(np.maximum(b, 1.0))
    reason = np.full(d.shape, "", dtype=object)
    reason = np.where(b < 1, "time per output token above the SLO at batch 1", reason)
    reason = np.where(~one_fits, "weights and one sequence's KV cache do not fit memory", reason)
    ok = reason == ""
    return DecodePoolResult(
        batch=np.where(ok, b, 0.0),
        step_s=step,
        tpot_p_s=tail(np.maximum(b, 1.0)),
        tokens_per_s=np.where(ok, np.maximum(b, 1.0) / step, 0.0),
        reason=reason,
    )
