"""Latency under load: the percentile batch, the prefill queue and the operating batches
they allow (split from solver/physics/inference.py at its seam; the derivations are that
module's doc, "Latency under load").

Requests arrive as a Poisson stream at the planned utilisation rho; the number decoding
together is the busy-server count of an M/G/infinity queue (Poisson, mean rho b) and the
prompts queue for prefill at an M/D/1 server.

Slot wait: an engine that runs at most its compiled batch b (a static batch, Neuron) is an
M/G/b queue of requests, each holding its slot for its prefill and O steps; where b is small
the M/G/infinity count exceeds b often (Poisson mean 3.2 exceeds 4 with probability 0.22),
and a request waits for a slot before its prefill: TTFT adds the Erlang C wait quantile
(:func:`slot_wait_quantile_s`). Continuous-batching engines admit up to their memory limit,
far above the planned batch's percentile, and are not charged it. `procure replay` runs the
slots one by one and checks it (docs/guides/replay.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist
from typing import Protocol

import numpy as np


class StepModel(Protocol):
    """What the latency checks read of :class:`solver.physics.inference.StepModel` (a
    protocol, so this module does not import that one back)."""

    @property
    def is_static(self) -> bool: ...

    @property
    def prefill_serial_s(self) -> np.ndarray | float: ...

    def step_s(
        self, batch: np.ndarray | float, compiled: np.ndarray | float | None = None
    ) -> np.ndarray: ...


def poisson_quantile(mean: np.ndarray | float, p: float) -> np.ndarray:
    """p-quantile of a Poisson count of ``mean`` (normal approximation with continuity,
    module doc): ceil(m + z_p sqrt(m) - 0.5), never below 0.

    Mean 64 at p = 0.9: z = 1.2816, 64 + 1.2816 x 8 - 0.5 = 73.75 -> 74 (the exact Poisson
    90th percentile is 74).
    """
    m = np.maximum(np.asarray(mean, dtype=float), 0.0)
    z = NormalDist().inv_cdf(float(p))
    return np.maximum(np.ceil(m + z * np.sqrt(m) - 0.5 - 1e-9), 0.0)


def md1_wait_quantile_s(
    service_s: np.ndarray | float, arrivals_per_s: np.ndarray | float, p: float
) -> np.ndarray:
    """p-quantile of the wait for a deterministic server under Poisson arrivals (module doc).

    u = lambda s; W = u s / (2 (1 - u)); W_p = (W / u) ln(u / (1 - p)) where u > 1 - p,
    else 0; infinite where u >= 1 (the queue grows without bound).
    """
    s = np.asarray(service_s, dtype=float)
    u = np.asarray(arrivals_per_s, dtype=float) * s
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_wait = u * s / (2.0 * (1.0 - u))
        tail = (mean_wait / u) * np.log(u / (1.0 - float(p)))
    wait = np.where(u > 1.0 - float(p), tail, 0.0)
    return np.where(u >= 1.0, np.inf, np.maximum(wait, 0.0))


def slot_wait_quantile_s(
    slots: np.ndarray | float,
    arrivals_per_s: np.ndarray | float,
    service_s: np.ndarray | float,
    p: float,
) -> np.ndarray:
    """p-quantile of the wait for one of ``slots`` sequence slots (module doc, "Slot wait").

    M/G/c with c = ``slots``, offered load a = lambda S (S: a request's time in its slot):
    the Erlang C probability of waiting C(c, a) (from the Erlang B recursion
    B_k = a B_{k-1} / (k + a B_{k-1}), C = B_c / (1 - (a / c)(1 - B_c))), the M/M/c tail
    P(W > t) = C exp(-(c - a) t / S), so W_p = S ln(C / (1 - p)) / (c - a) where C > 1 - p,
    else 0, halved for service times of fixed length (the Allen-Cunneen factor
    (1 + c_s^2) / 2 at c_s = 0: A. O. Allen, "Probability, Statistics, and Queueing Theory",
    2nd ed., 1990, section 6.4); infinite where a >= c.

    c = 4, a = 2.72, S = 11.8 s, p = 0.99: B_4 = 0.1747, C = 0.1747 / (1 - 0.68 x 0.8253)
    = 0.398, W_p = 11.8 x ln(39.8) / 1.28 / 2 = 17.0 s.
    """
    c = np.maximum(np.floor(np.asarray(slots, dtype=float)), 1.0)
    service = np.asarray(service_s, dtype=float)
    a = np.asarray(arrivals_per_s, dtype=float) * service
    c, a, service = np.broadcast_arrays(c, a, service)
    erlang_b = np.ones(c.shape)
    for k in range(1, int(c.max(initial=1.0)) + 1):
        step = a * erlang_b / (k + a * erlang_b)
        erlang_b = np.where(k <= c, step, erlang_b)
    with np.errstate(divide="ignore", invalid="ignore"):
        busy = np.where(a < c, erlang_b / (1.0 - (a / c) * (1.0 - erlang_b)), 1.0)
        tail = service * np.log(busy / (1.0 - float(p))) / (c - a) / 2.0
    wait = np.where(busy > 1.0 - float(p), tail, 0.0)
    return np.where(a >= c, np.inf, np.maximum(wait, 0.0))


@dataclass(frozen=True)
class LoadPercentile:
    """Latencies are checked at percentile ``p`` of Poisson arrivals at utilisation ``rho``."""

    p: float
    rho: float


def largest_batch_at_percentile(
    sm: StepModel, slo_s: float, upper: np.ndarray, load: LoadPercentile
) -> np.ndarray:
    """Largest planned batch b in [0, upper] whose p-quantile batch b_p (Poisson, mean
    rho b, capped at ``upper``) steps within ``slo_s`` (bisection: t(b_p) rises with b)."""
    upper = np.asarray(upper, dtype=float)

    def ok(b: np.ndarray) -> np.ndarray:
        b_p = np.minimum(np.maximum(poisson_quantile(load.rho * b, load.p), 1.0), upper)
        if sm.is_static:  # the compiled batch is the planned one: b_p never exceeds it
            b_p = np.minimum(b_p, np.maximum(b, 1.0))
        return sm.step_s(b_p, np.maximum(b, 1.0)) <= slo_s + 1e-12

    lo = np.zeros(upper.shape)
    hi = upper.copy()
    top = ok(hi)
    lo = np.where(top, hi, lo)
    while np.any(hi - lo > 1):
        mid = np.floor((lo + hi) / 2.0)
        good = ok(mid)
        lo = np.where(good, mid, lo)
        hi = np.where(good, hi, mid)
    return lo


def largest_batch_within_ttft(
    sm: StepModel,
    prefill: np.ndarray,
    ttft_slo_s: float,
    upper: np.ndarray,
    output_tokens: float,
    cap: np.ndarray,
    load: LoadPercentile | None,
    service: np.ndarray,
) -> np.ndarray:
    """Largest planned batch b in [0, upper] whose TTFT at ``load``'s percentile (the
    mean, prefill + t(b), where ``load`` is None) is within ``ttft_slo_s`` (bisection).
    TTFT_p rises with b: the arrival rate rho b / t(b) / O
    that loads the prefill queue rises with b (b / t(b) rises, module doc), and so do the
    quantile batch and its step. A smaller batch at the same utilisation is fewer arrivals,
    so where the TPOT-limited batch queues prompts beyond the TTFT limit the replica still
    serves, at the batch whose prompts wait little enough (0 only where even b = 1 is late).
    """
    upper = np.asarray(upper, dtype=float)

    def ok(b: np.ndarray) -> np.ndarray:
        b1 = np.maximum(b, 1.0)
        _, ttft_p = latency_at_percentile(
            sm, b1, sm.step_s(b1), prefill, output_tokens, cap, load, service
        )
        return ttft_p <= ttft_slo_s + 1e-12

    lo = np.zeros(upper.shape)
    hi = upper.copy()
    lo = np.where(ok(hi), hi, lo)
    while np.any(hi - lo > 1):
        mid = np.floor((lo + hi) / 2.0)
        good = ok(mid)
        lo = np.where(good, mid, lo)
        hi = np.where(good, hi, mid)
    return np.where((lo < 1) & ok(np.ones(upper.shape)), 1.0, lo)


def latency_at_percentile(
    sm: StepModel,
    chosen: np.ndarray,
    step: np.ndarray,
    prefill: np.ndarray,
    output_tokens: float,
    cap: np.ndarray,
    load: LoadPercentile | None,
    service: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(TPOT_p, TTFT_p) at ``load``'s percentile (module doc); the mean step and TTFT
    without one. ``service`` is the prefill queue's service time per prompt (the prompt's
    compute, :func:`prefill_compute_s`; ``prefill`` when None)."""
    service = prefill if service is None else service
    if load is None:
        return step, prefill + step
    b = np.maximum(chosen, 1).astype(float)
    b_p = np.minimum(np.maximum(poisson_quantile(load.rho * b, load.p), 1.0), cap)
    if sm.is_static:  # a static engine runs at most its compiled (planned) batch
        b_p = np.minimum(b_p, b)
    tpot_p = sm.step_s(b_p, b)
    # the replica's throughput b / cycle (the step, plus its own prompt where prompts run
    # apart) at utilisation rho, in requests/s
    own = np.asarray(sm.prefill_serial_s, dtype=float) / float(output_tokens)
    arrivals = load.rho * b / (step + own) / float(output_tokens)
    wait = md1_wait_quantile_s(service, arrivals, load.p)
    if sm.is_static:  # at most b running: a request may wait for a slot (Slot wait)
        in_slot = prefill + float(output_tokens) * (step + own)
        wait = wait + slot_wait_quantile_s(b, arrivals, in_slot, load.p)
    return tpot_p, prefill + wait + tpot_p
