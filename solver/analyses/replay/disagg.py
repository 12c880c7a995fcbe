"""Replay of a disaggregated fleet: a prefill pool, the KV transfer, a decode pool.

A request of a disaggregated deployment (issue 52; the physics: solver/physics/disagg.py)
runs in three stages, each replayed as the plan sized it:

1. **Prefill pool.** Every prefill replica serves whole prompts one at a time, each for
   the physics' service time s(P) (:func:`solver.physics.prefill_s`: its FLOPs, one weight
   read, the all-reduces); a prompt waits in one first-come-first-served queue and goes to
   the replica that frees first (c deterministic servers; the sizing's M/D/1 queue per
   replica is its one-server case). Its first token comes out of the prefill.
2. **KV transfer.** The prompt's KV cache then crosses the plan's link: x(P) = the prefill
   line's ``kv_transfer_s`` x P / P_plan (the bytes are KV bytes per token x P). The first
   token reaches the client when the KV is sent: TTFT = wait + s(P) + x(P), as the
   physics counts it.
3. **Decode pool.** The request joins the decode replicas (the continuously batched
   engine of :mod:`.engine`) holding P + 1 tokens of cache, of which none is prefilled
   again but the last (the engine's prefix-cache rule, ``cached_tokens``), and makes its
   O - 1 other tokens there. TPOT = (last token - first token) / (O - 1), vLLM's benchmark
   definition, so a wait for a decode slot counts in it.

Where a block has aggregated deployments beside the disaggregated ones (architecture
``auto``), each request goes to one side at random (seeded) in proportion to the plan's
capacity of each side (tokens/s; the disaggregated side's is the smaller of its pools').
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from solver.analyses.replay.engine import ReplicaSpec, ReplicaStats, Request, simulate


@dataclass(frozen=True)
class PrefillSpec:
    """One prefill replica as the replay runs it: the service time of a prompt of P tokens
    (seconds, the physics' :func:`solver.physics.prefill_s`), the KV transfer of the plan's
    prompt (``kv_transfer_s`` for ``plan_prompt_tokens``) and its deployment (``group``)."""

    service_s: Callable[[int], float]
    kv_transfer_s: float
    plan_prompt_tokens: int
    group: int

    def transfer_s(self, prompt_tokens: int) -> float:
        """KV transfer of a prompt of ``prompt_tokens`` tokens: linear in its bytes."""
        return self.kv_transfer_s * prompt_tokens / max(self.plan_prompt_tokens, 1)


def prefill_queue(
    specs: list[PrefillSpec], requests: list[Request], window: tuple[float, float]
) -> tuple[list[float], list[int], list[ReplicaStats]]:
    """Serve ``requests`` (sorted by arrival) on the prefill replicas ``specs``: one FIFO
    queue, each prompt to the replica that frees first (the lowest index of equals).

    Returns each request's prefill end (s), the replica that served it, and per-replica
    statistics over ``window`` (busy seconds inside it; the batch of a prefill replica is
    the one prompt it runs, so ``mean_batch`` is its busy share).
    """
    free = [(0.0, i) for i in range(len(specs))]
    heapq.heapify(free)
    busy = [0.0] * len(specs)
    served = [0] * len(specs)
    ends: list[float] = []
    who: list[int] = []
    for req in requests:
        at, i = heapq.heappop(free)
        begin = max(at, req.arrival_s)
        end = begin + specs[i].service_s(req.prompt_tokens)
        heapq.heappush(free, (end, i))
        busy[i] += max(0.0, min(end, window[1]) - max(begin, window[0]))
        served[i] += 1
        ends.append(end)
        who.append(i)
    last = max(ends, default=0.0)
    span = max(0.0, min(last, window[1]) - window[0])
    stats = [
        ReplicaStats(busy[i], served[i], busy[i] / span if span > 0 else 0.0, specs[i].group)
        for i in range(len(specs))
    ]
    return ends, who, stats


def simulate_disaggregated(
    prefill: list[PrefillSpec],
    decode: list[ReplicaSpec],
    requests: list[Request],
    window: tuple[float, float],
) -> tuple[list[Request], list[ReplicaStats], list[ReplicaStats], float]:
    """Replay ``requests`` through the prefill pool, the KV transfer and the decode pool
    (module doc). Fills each request's ``first_token_s`` and ``done_s`` (NaN: never
    served) and ``replica`` (its prefill replica); returns the requests, the prefill and
    the decode replicas' statistics, and the time the last request finished."""
    if not prefill or not decode:  # a pool without replicas serves nothing
        return requests, [], [], 0.0
    ends, who, pre_stats = prefill_queue(prefill, requests, window)
    follow: list[tuple[Request, Request]] = []
    for req, end, i in zip(requests, ends, who, strict=True):
        req.replica = i
        req.first_token_s = end + prefill[i].transfer_s(req.prompt_tokens)
        if req.output_tokens <= 1:
            req.done_s = req.first_token_s
            continue
        held = req.prompt_tokens + 1  # the prompt and the first token, sent with the KV
        follow.append(
            (req, Request(req.first_token_s, held, req.output_tokens - 1, cached_tokens=held))
        )
    follow.sort(key=lambda pair: pair[1].arrival_s)
    _, dec_stats, last = simulate(decode, [d for _, d in follow], window)
    for req, dreq in follow:
        req.done_s = dreq.done_s  # NaN where the decode pool never served it
        req.decode_replica = dreq.replica
    last = max(last, max((r.first_token_s for r in requests), default=0.0))
    return requests, pre_stats, dec_stats, last


def split_by_capacity(
    requests: list[Request], share_disaggregated: float, seed: int
) -> tuple[list[Request], list[Request]]:
    """(aggregated, disaggregated) requests: each to the disaggregated side with
    probability ``share_disaggregated`` (its share of the plan's capacity), seeded."""
    if share_disaggregated >= 1.0:
        return [], list(requests)
    if share_disaggregated <= 0.0 or math.isnan(share_disaggregated):
        return list(requests), []
    pick = np.random.default_rng(seed).random(len(requests)) < share_disaggregated
    agg = [r for r, p in zip(requests, pick, strict=True) if not p]
    dis = [r for r, p in zip(requests, pick, strict=True) if p]
    return agg, dis
