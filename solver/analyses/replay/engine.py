"""Discrete-event replay of requests on continuously batched serving replicas.

Each replica is an engine of the vLLM kind (iteration-level scheduling, chunked prefill,
a paged KV cache); a router sends each arriving request to one replica. The loop is a
plain heap of events (arrivals and the ends of engine steps), not a simulation library:
measured faster than SimPy on the same model (docs/guides/replay.md, "Speed").

One engine step of a replica, at its start:

1. admit waiting requests, first come first served, while the running set is below the
   runtime's ``max_num_seqs`` and the KV cache holds the new prompt beside what is held;
2. every running request past its prefill decodes one token; the rest of the step's token
   budget (``max_num_batched_tokens``) prefills waiting prompts in chunks, oldest first;
3. the step lasts the estimator's step time at those tokens (:class:`StepCost`); at its
   end every decoding request has one more token, and a prompt whose last chunk ran
   emits its first token (its time to first token ends there);
4. where the cache would overflow (each decoding request grows by one token a step), the
   most recently admitted request is preempted: it frees its cache, returns to the head
   of the queue and prefills its prompt and the tokens it had made again (vLLM V1's
   default, ``RECOMPUTE``: vllm-project/vllm docs/configuration/optimization.md,
   "Preemption").

A request may arrive with ``cached_tokens`` of its prompt in the replica's prefix cache (vLLM
V1 caches prompts by default, in whole blocks): their prefill is skipped, all but the last
token, which is recomputed to produce the first output; their KV memory is held as any.

Step 2 is vLLM V1's chunked-prefill policy (the same page, "Chunked Prefill": every
pending decode is batched before any prefill, and a prompt that does not fit the
``max_num_batched_tokens`` budget is chunked). A prompt's first token comes out of the
step that runs its last chunk, as vLLM's benchmark counts TTFT.

Times are seconds; token counts whole numbers.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from solver import physics


@dataclass(frozen=True)
class StepCost:
    """The estimator's step time as a function of the tokens a step runs, one replica.

    With b decoding requests holding C context tokens in all, and prefill chunks of n
    tokens in all (chunk compute ``chunk_s`` from :func:`solver.physics.prefill_compute_s`),

        t = combine(W + R u(b + n) + k C, a b + g C + chunk_s) + F + e (b + n)

    the form of :class:`solver.physics.StepModel` (combine is max where the runtime
    overlaps memory and compute, else the sum), with its per-sequence terms split into a
    part per token of context (k, g) and a part per sequence (a), read from two step
    models of pure decode at contexts 1 and 2 tokens.
    """

    weights_s: float  # W: one read of the shared weights
    routed_s: float  # R: one read of every routed expert (0: dense)
    kv_s_per_token: float  # k: KV read per context token
    compute_s_per_seq: float  # a: linear layers of one decoded token
    compute_s_per_token: float  # g: attention of one decoded token per context token
    fixed_s: float  # F: all-reduce latencies and the runtime's step overhead
    comm_s_per_token: float  # e: all-reduce bytes per token in the step
    overlap: bool
    experts: float = 1.0
    experts_active: float = 1.0
    # attention's KV read runs after the linear layers and adds to them (the estimator's
    # StepModel.attention_apart, solver/physics/inference.py "Attention apart"):
    # t = max(W + R u, a b + chunk_s) + max(k C, g C) + F + e (b + n)
    attention_apart: bool = False
    # a dense KV cache of a fixed length (RuntimeEfficiency.static_kv_tokens: JetStream,
    # Neuron) is read whole for every slot, whatever its context: k is 0 and each slot
    # reads kv_s_per_slot
    kv_s_per_slot: float = 0.0
    # a decode graph compiled for a fixed batch (RuntimeEfficiency.static_batch: Neuron)
    # runs every compiled slot, padded: b decoding requests cost max(b, compiled_batch)
    compiled_batch: int = 0
    # prompts run as their own graph between decode steps (RuntimeEfficiency.
    # prefill_serial): each prompt's prefill adds its compute plus this fixed part (one
    # weight read and the all-reduces, as physics.prefill_s) after the decode step, which
    # carries decode tokens only
    prefill_graph_s: float | None = None

    def slots(self, decoding: int) -> int:
        """Sequences a step computes for ``decoding`` running ones (padded to a compiled
        batch)."""
        return max(decoding, self.compiled_batch) if self.compiled_batch else decoding

    def step_s(
        self,
        decoding: int,
        context_tokens: float,
        chunk_tokens: int,
        chunk_s: float,
        prompts: int = 0,
    ) -> float:
        """Seconds of one step (class doc); ``prompts``: the prompts whose chunks it runs
        (each its own graph where prefill is serial)."""
        slots = self.slots(decoding) if decoding else 0
        if self.prefill_graph_s is None:
            return self._graph_s(slots, context_tokens, chunk_tokens, chunk_s)
        # serial prefill: each prompt's own graph, then the decode graph, which gives an
        # admitted prompt its first token (the estimator's TTFT: prefill_s + t(b))
        running = self.slots(max(decoding, 1 if prompts else 0))
        decode = self._graph_s(running, context_tokens, 0, 0.0) if running else 0.0
        return chunk_s + prompts * self.prefill_graph_s + decode

    def _graph_s(
        self, decoding: int, context_tokens: float, chunk_tokens: int, chunk_s: float
    ) -> float:
        """Seconds of one graph running ``decoding`` sequences and ``chunk_tokens`` prompt
        tokens together (class doc)."""
        tokens = decoding + chunk_tokens
        kv = self.kv_s_per_token * context_tokens + self.kv_s_per_slot * decoding
        attention = self.compute_s_per_token * context_tokens
        apart = self.attention_apart and self.overlap
        memory = self.weights_s + (0.0 if apart else kv)
        if self.routed_s:
            miss = 1.0 - self.experts_active / self.experts
            memory += self.routed_s * (1.0 - miss**tokens)
        compute = self.compute_s_per_seq * decoding + (0.0 if apart else attention) + chunk_s
        both = max(memory, compute) if self.overlap else memory + compute
        if apart:
            both += max(kv, attention)
        return both + self.fixed_s + self.comm_s_per_token * tokens


def step_cost(
    model: physics.ServedModel,
    d: int,
    dev: physics.Device,
    row: int = 0,
    compiled_batch: int = 0,
) -> StepCost:
    """The :class:`StepCost` of one replica of ``d`` devices (row ``row`` of ``dev``);
    ``compiled_batch``: the batch a static-batch runtime's decode graph is compiled for
    (0: none)."""
    devices = np.array([float(d)])
    one = physics.step_model(model, 0.0, 2.0, devices, dev)  # pure decode, context 1
    two = physics.step_model(model, 0.0, 4.0, devices, dev)  # pure decode, context 2

    def at(value: np.ndarray | float) -> float:
        arr = np.asarray(value, dtype=float)
        return float(arr.reshape(-1)[row if arr.size > 1 else 0])

    g = at(two.compute_s_per_seq) - at(one.compute_s_per_seq)
    dense_kv = at(np.asarray(getattr(dev, "static_kv_tokens", 0.0), dtype=float)) > 0
    serial = bool(at(np.asarray(getattr(dev, "prefill_serial", False), dtype=float)))
    graph = None
    if serial:  # a prompt's own graph beyond its FLOPs: one weight read, the all-reduces
        graph = at(physics.prefill_s(model, 1.0, devices, dev)) - at(
            physics.prefill_compute_s(model, 1.0, devices, dev)
        )
    return StepCost(
        weights_s=at(one.weights_s),
        routed_s=at(one.routed_s) if one.is_moe else 0.0,
        kv_s_per_token=0.0 if dense_kv else at(one.kv_s_per_seq),
        kv_s_per_slot=at(one.kv_s_per_seq) if dense_kv else 0.0,
        compiled_batch=compiled_batch,
        prefill_graph_s=graph,
        compute_s_per_seq=at(one.compute_s_per_seq) - g,
        compute_s_per_token=g,
        fixed_s=at(one.fixed_s),
        comm_s_per_token=at(one.comm_s_per_seq),
        overlap=bool(np.asarray(one.overlap).reshape(-1)[0]),
        experts=model.experts,
        experts_active=model.experts_active,
        attention_apart=bool(at(np.asarray(one.attention_apart, dtype=float))),
    )


@dataclass(frozen=True)
class ReplicaSpec:
    """One replica as the replay runs it.

    ``kv_tokens``: tokens its KV cache holds beside the weights; ``max_seqs``: the
    runtime's ``max_num_seqs``; ``token_budget``: tokens one step runs at most
    (``max_num_batched_tokens``, decode tokens first); ``prefill_flops_s``: seconds of a
    prompt prefix's prefill compute as a function of its length (the chunk of tokens s to
    s + n costs prefill(s + n) - prefill(s)); ``group``: the deployment it belongs to;
    ``weight``: what the router divides its outstanding requests by (the plan's capacity of
    one replica, so a replica planned to carry twice the load gets twice the requests).
    """

    cost: StepCost
    kv_tokens: int
    max_seqs: int
    token_budget: int
    prefill_s_per_token: float  # 2 N at the runtime's compute rate
    prefill_s_per_token_sq: float  # 2 L h at the same rate (causal attention of a prompt)
    group: int = 0
    weight: float = 0.0  # the router's share (the plan's capacity); 0: ``max_seqs``

    def chunk_s(self, start: int, end: int) -> float:
        """Prefill compute of prompt tokens ``start`` to ``end``, seconds."""
        return self.prefill_s_per_token * (end - start) + self.prefill_s_per_token_sq * (
            end * end - start * start
        )


@dataclass
class Request:
    """One request's sizes, arrival and, once replayed, its times (seconds)."""

    arrival_s: float
    prompt_tokens: int
    output_tokens: int
    cached_tokens: int = 0  # prompt tokens whose KV a prefix cache already holds (not prefilled)
    first_token_s: float = float("nan")
    done_s: float = float("nan")
    replica: int = -1
    decode_replica: int = -1  # disaggregated: the decode replica that made its other tokens
    # replay state
    prefilled: int = 0  # tokens of the (re)prefill done so far
    to_prefill: int = 0  # tokens the current prefill covers (prompt, or prompt + made)
    made: int = 0  # output tokens emitted (while decoding: as of ``joined_step``)
    joined_step: int = 0  # the replica's step count when it last joined the decoding set
    admitted_step: int = -1
    order: int = 0
    generation: int = 0  # bumped on preemption: older entries of the finish heap are stale


@dataclass
class _Replica:
    spec: ReplicaSpec
    waiting: list[Request] = field(default_factory=list)  # FIFO (index 0 first)
    head: int = 0  # index of the first waiting request
    prefilling: list[Request] = field(default_factory=list)
    decoding: dict[int, Request] = field(default_factory=dict)  # by id()
    finishing: list[tuple[int, int, int, Request]] = field(default_factory=list)
    # (step count at which it emits its last token, order, generation, request)
    held_tokens: int = 0  # KV tokens held by admitted requests
    context_tokens: int = 0  # context of the decoding requests
    busy: bool = False
    busy_s: float = 0.0
    steps: int = 0
    batch_time: float = 0.0  # integral of the decoding batch over time (for its mean)
    admitted: int = 0

    def queued(self) -> int:
        return len(self.waiting) - self.head + len(self.prefilling) + len(self.decoding)


def _admit(r: _Replica) -> None:
    spec = r.spec
    while r.head < len(r.waiting):
        req = r.waiting[r.head]
        need = req.prompt_tokens + req.made
        running = len(r.prefilling) + len(r.decoding)
        if running >= spec.max_seqs or r.held_tokens + need > spec.kv_tokens:
            if running == 0 and need > spec.kv_tokens:
                r.head += 1  # can never fit: dropped (counted as never served)
                continue
            break
        r.head += 1
        req.to_prefill = need
        # a prefix-cache hit skips the prefill of the cached tokens but the last (vLLM
        # recomputes at least one token to produce the first output); a preempted request
        # lost its cache and prefills all again
        req.prefilled = min(req.cached_tokens, need - 1) if req.made == 0 else 0
        r.admitted += 1
        req.order = r.admitted
        r.held_tokens += need
        r.prefilling.append(req)
    if r.head > 1024 and r.head * 2 > len(r.waiting):
        del r.waiting[: r.head]
        r.head = 0


def _made(r: _Replica, req: Request) -> int:
    """Output tokens a decoding request has emitted by now (one a step since it joined)."""
    return req.made + r.steps - req.joined_step


def _join(r: _Replica, req: Request) -> None:
    """Add a request that has emitted ``req.made`` tokens to the decoding set."""
    req.joined_step = r.steps
    r.decoding[id(req)] = req
    r.context_tokens += req.prompt_tokens + req.made
    end = r.steps + req.output_tokens - req.made
    heapq.heappush(r.finishing, (end, req.order, req.generation, req))


def _preempt(r: _Replica) -> None:
    """Free the cache of the latest admitted requests until the next step's growth fits."""
    while r.decoding and r.held_tokens + len(r.decoding) > r.spec.kv_tokens:
        last = max(r.decoding.values(), key=lambda q: q.order)
        del r.decoding[id(last)]
        last.made = _made(r, last)
        last.generation += 1
        r.context_tokens -= last.prompt_tokens + last.made
        r.held_tokens -= last.prompt_tokens + last.made
        r.waiting.insert(r.head, last)


def _plan_step(r: _Replica) -> tuple[float, list[tuple[Request, int]]]:
    """Start a step: (its seconds, the prefill chunks it runs as (request, tokens))."""
    spec = r.spec
    _preempt(r)
    _admit(r)
    b = len(r.decoding)
    budget = max(spec.token_budget - b, 0)
    chunks: list[tuple[Request, int]] = []
    chunk_tokens = 0
    chunk_s = 0.0
    for req in r.prefilling:
        if budget <= 0:
            break
        n = min(req.to_prefill - req.prefilled, budget)
        chunks.append((req, n))
        chunk_s += spec.chunk_s(req.prefilled, req.prefilled + n)
        chunk_tokens += n
        budget -= n
    seconds = spec.cost.step_s(b, r.context_tokens, chunk_tokens, chunk_s, len(chunks))
    return seconds, chunks


def _end_step(r: _Replica, now: float, chunks: list[tuple[Request, int]]) -> None:
    """Apply a finished step: a token for every decoding request, chunks prefilled."""
    grown = len(r.decoding)  # every decoding request holds one more token
    r.steps += 1
    r.context_tokens += grown
    r.held_tokens += grown
    while r.finishing and r.finishing[0][0] <= r.steps:
        _, _, generation, req = heapq.heappop(r.finishing)
        if generation != req.generation or id(req) not in r.decoding:
            continue  # preempted since: a stale entry
        del r.decoding[id(req)]
        req.made = req.output_tokens
        req.done_s = now
        r.held_tokens -= req.prompt_tokens + req.made
        r.context_tokens -= req.prompt_tokens + req.made
    for req, n in chunks:
        req.prefilled += n
        if req.prefilled < req.to_prefill:
            continue
        r.prefilling.remove(req)
        if req.made == 0:
            req.first_token_s = now
            req.made = 1
            r.held_tokens += 1
        if req.made >= req.output_tokens:
            req.done_s = now
            r.held_tokens -= req.prompt_tokens + req.made
            continue
        _join(r, req)


def _route(replicas: list[_Replica]) -> int:
    """Least outstanding requests per unit of weight (weighted least connections, as a
    load balancer in front of unlike replicas runs it); the first of equals."""
    best, best_load = 0, float("inf")
    for i, r in enumerate(replicas):
        load = r.queued() / (r.spec.weight or r.spec.max_seqs)
        if load < best_load:
            best, best_load = i, load
    return best


@dataclass(frozen=True)
class ReplicaStats:
    """What one replica did over the replay: busy seconds, steps, mean decoding batch."""

    busy_s: float
    steps: int
    mean_batch: float
    group: int


def simulate(
    specs: list[ReplicaSpec],
    requests: list[Request],
    window: tuple[float, float] = (0.0, math.inf),
) -> tuple[list[Request], list[ReplicaStats], float]:
    """Replay ``requests`` (sorted by arrival) on replicas ``specs``.

    Returns the requests with their times filled in (a request never served keeps NaN),
    per-replica statistics over ``window`` (start and end, seconds: the busy time and the
    mean decoding batch are counted within it), and the time the last request finished.
    """
    replicas = [_Replica(s) for s in specs]
    events: list[tuple[float, int, int]] = []  # (time, tie-break, replica)
    pending: dict[int, tuple[float, list[tuple[Request, int]], int]] = {}
    tie = 0

    def start(i: int, now: float) -> None:
        nonlocal tie
        r = replicas[i]
        if r.head >= len(r.waiting) and not r.prefilling and not r.decoding:
            r.busy = False
            return
        seconds, chunks = _plan_step(r)
        if not chunks and not r.decoding:
            r.busy = False  # nothing admissible (cache full of prefills cannot happen)
            return
        r.busy = True
        tie += 1
        pending[i] = (now, chunks, len(r.decoding))
        heapq.heappush(events, (now + seconds, tie, i))

    k, n, now = 0, len(requests), 0.0
    while k < n or events:
        if k < n and (not events or requests[k].arrival_s <= events[0][0]):
            req = requests[k]
            k += 1
            now = req.arrival_s
            i = _route(replicas)
            req.replica = i
            replicas[i].waiting.append(req)
            if not replicas[i].busy:
                start(i, now)
            continue
        now, _, i = heapq.heappop(events)
        began, chunks, batch = pending.pop(i)
        r = replicas[i]
        inside = max(0.0, min(now, window[1]) - max(began, window[0]))
        r.busy_s += inside
        r.batch_time += batch * inside
        _end_step(r, now, chunks)
        start(i, now)
    span = max(0.0, min(now, window[1]) - window[0])
    stats = [
        ReplicaStats(r.busy_s, r.steps, r.batch_time / span if span > 0 else 0.0, r.spec.group)
        for r in replicas
    ]
    return requests, stats, now
