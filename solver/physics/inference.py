"""Serving: KV cache, batch limit, the step of a continuously batched engine, demand.

The engine modelled is vLLM / TensorRT-LLM with continuous batching and chunked
prefill. Per replica of d devices (tensor parallel within one node), in steady state
with b sequences decoding, each request of P prompt and O output tokens:

- every step emits b output tokens and, because each request's P prompt tokens are
  prefilled in chunks over its O steps, also processes b * P / O prompt tokens;
- a step reads the weights once for the whole batch and each sequence's KV cache at
  the mean context c = P + O / 2 (a sequence is between 0 and O tokens into its
  answer, uniformly in steady state);
- the KV cache is paged, so memory holds b sequences at the mean context, and one
  sequence at its full context must fit.

With W the weight bytes, kv the KV bytes per token, N the active parameters, L layers
and h the attention width (query heads x head dim):

- bytes(b) = W + b * c * kv
- flops(b) = b * [2 N (1 + P/O) + 4 L h c + 2 L h P^2 / O]
  (linear layers on output and prompt tokens; attention of each output token over its
  context; causal attention of the prompt, 2 L h P^2 per request, spread over O steps)
- t(b) = combine(bytes / (d bw eta_bw), flops / (d peak eta_c))
  + 2 L [latency + b (1 + P/O) H a 2(d-1)/d / link]   (two all-reduces per layer of
  H = hidden-size activations of a bytes each)
  + step overhead of the runtime, where combine is max for a runtime whose kernels
  overlap memory and compute time (vLLM, TensorRT-LLM) and the sum for one whose
  measurements show the two add (``RuntimeEfficiency.overlap``, constants.py);
- time per output token = t(b); throughput = b / t(b) output tokens/s;
- TTFT = the prompt's prefill (2 N P + 2 L h P^2 FLOPs at eta_c, one weight read,
  2 L all-reduces) plus one step.

t(b) is piecewise linear in b (linear when the times add), so the largest batch meeting
the time-per-token SLO has a closed form, and b / t(b) rises with b, so that batch is the best.

Mixture of experts (Mixtral, Qwen3-235B-A22B, DeepSeek-V3): memory holds every expert
(N_total x bytes), the FLOPs count the active parameters (2 N_active per token), and a
step reads the shared weights (attention, embeddings, shared experts) plus the routed
experts its tokens hit. With E routed experts per layer and k per token, n tokens routed
independently and uniformly hit E u(n) distinct experts per layer on average,

    u(n) = 1 - (1 - k/E)^n

(one token misses a given expert with probability 1 - k/E); at n = 1 that is k experts
(the active parameters), for large n all E. Uniform routing is what load-balancing
losses aim at; a skewed router hits fewer, so the bytes here are an upper bound. The
decode tokens of a step (b) are routed together; the prompts are prefilled in chunks of
one prompt (P tokens, within the runtime's per-step token budget), one per request, and a
request decodes for O steps, so min(1, b/O) of the steps also carry a chunk that hits
u(b + P) with them. The routed share read per step is

    f(b) = u(b) + min(1, b/O) [u(b + P) - u(b)]

and bytes(b) = W_shared + f(b) W_routed + b c kv. t(b) is then concave, not linear, in b:
the largest batch within the SLO is found by bisection (t rises with b, and b / t(b)
still rises, so the largest batch is still the best). The experts are sharded over the
replica's devices with the other weights (vLLM's default tensor-parallel MoE), so each
device reads 1/d of every expert hit. That memory-bound decode latency follows the number
of distinct experts a batch hits: Oncescu et al., "Opportunistic Expert Activation:
Batch-Aware Expert Routing for Faster Decode Without Retraining", arXiv:2511.02237 (2025),
measured on Qwen3-30B-A3B and Qwen3-235B-A22B; total and active counts: Jiang et al.,
"Mixtral of Experts", arXiv:2401.04088 (2024), 47B parameters of which 13B per token.

Latency under load. Requests arrive as a Poisson stream at the planned
utilisation rho (``max_utilisation``: the replica runs at rho of the throughput b / t(b)
of its planned batch b). Two stated approximations give the latencies at a percentile p:

- TPOT: a request occupies a decode slot for O steps whatever else runs, so the number of
  sequences decoding together is the number of busy servers of an M/G/infinity queue,
  Poisson with mean m = rho b (Little's law; Takacs 1962, "Introduction to the Theory of
  Queues", ch. 3). Its p-quantile, by the normal approximation with continuity,
  b_p = ceil(m + z_p sqrt(m) - 0.5), capped at the runtime's batch limit (requests beyond it
  wait for a slot), sets the step time at the percentile: TPOT_p = t(b_p).
- TTFT: prompts queue for prefill, a server of deterministic service time s (the prompt's
  prefill FLOPs at eta_c: its chunk rides a decode step that reads the weights for the
  batch anyway, so the weight read is no part of s) busy a fraction u = lambda s,
  lambda = rho b / t(b) / O requests/s: an M/D/1 queue. Its mean wait is the
  Pollaczek-Khinchine W = u s / (2 (1 - u)); the wait is positive with probability u
  and, given that, taken as exponential with mean W / u (the standard exponential tail
  approximation of the M/G/1 wait, Tijms 2003, "A First Course in
  Stochastic Models", section 2.5; exact in heavy traffic, Kingman 1962), so
  W_p = (W / u) ln(u / (1 - p)) where u > 1 - p, else 0. TTFT_p = prefill + W_p + TPOT_p.
  TTFT_p rises with the planned batch (more arrivals at the same utilisation), so where
  the TPOT-limited batch is late on TTFT the planned batch is the largest meeting both.

Operating point (docs/guides/operating-point.md). The planned batch b meets every limit
twice over: its own step t(b) is within the TPOT limit (the throughput reported is
b / t(b), so a step over the limit is never capacity), and at the percentile under load
TPOT_p and TTFT_p are within theirs. Both conditions rise with b, so the planned batch is
the smallest of the largest batches meeting each.

Without a percentile the SLOs are checked at the mean, as before. The queueing helpers
live in solver/physics/latency.py (split at the seam).

Prefill chunks (issue 47): the prompts run in chunks of the runtime's step token budget
on a share q of the steps, as the replay runs them; t(b) = (1 - q) max(M, D) +
q max(M, D + X) + F + comm where memory and compute overlap (StepModel.chunk_share;
derivation in docs/guides/operating-point.md, "Prefill chunks"). t(b) is then not linear.

Reserved KV (issue 47, stop 59): an engine whose scheduler admits a request only when its
whole P + O tokens of KV fit (TensorRT-LLM's default GUARANTEED_NO_EVICT:
``RuntimeEfficiency.kv_reserved_full``) holds b sequences at their full context, so its
memory-limited batch is free / ((P + O) kv), not free / ((P + O/2) kv); the step still reads
each sequence's KV at the mean context.

Attention apart (issue 47, stop 59): the linear layers and attention are separate kernels,
one after the other in each layer, so where ``RuntimeEfficiency.attention_apart`` (set for
TensorRT-LLM, the runtime of every fitted NVIDIA row) the step
is the operator-level roofline summed over them,
t(b) = max(W + r f(b), b (c - g)) + max(b kv_s, b g) + F + E b (g: attention's 4 L h c
FLOPs at eta_c), instead of max(W + b kv_s, b c): the KV read no longer hides under the
batch's FLOPs. At large batches and long outputs the KV read is a third of the step (B200
FP4 Llama 3.3 70B 128/2048: 14 of 40 ms), which is why those runs were predicted 1.5x too
fast. Derivation and the rows it moved: docs/concepts/runtime-figures.md, "Attention apart".

Static batch (issue 47, session 62): AWS Neuron compiles each graph for one batch size and
sequence length (NxD Inference's NeuronConfig batch_size / seq_len are compile-time options;
TGI-neuron's MAX_BATCH_SIZE / MAX_TOTAL_TOKENS), so a decode step runs every compiled slot,
padded, over a dense KV cache of the compiled length (``RuntimeEfficiency.static_batch``,
``static_kv_tokens``): at a running batch b the step is t(max(b, B)), B the compiled batch.
B is the planned batch, or the one a runtime spec names (``neuron@32``: a deployment
compiled for 32 measured one request at a time); at a percentile the running batch never
exceeds B. Serial prefill: a prompt runs as its own context-encoding graph between decode
steps (``RuntimeEfficiency.prefill_serial``), so the step multiplies only decode tokens and
each of the other b - 1 running requests' prefills (s_p = :func:`prefill_s`, the whole
graph: FLOPs at eta_c, one weight read, the all-reduces) pauses the batch once in a request's
O steps: t(b) = t_dec(max(b, B)) + (b - 1) s_p / O; the replica's time per output token adds
the request's own prefill, b / (t(b) + s_p / O) tokens/s; the prefill queue's server is s_p.
Checked against the published runs: docs/concepts/runtime-figures.md, "Neuron".

Multi-head latent attention (DeepSeek-V3, arXiv:2412.19437 section 2.1.1) caches one
compressed latent per token per layer, kv_lora_rank + qk_rope_head_dim = 512 + 64 values,
not 2 x kv_heads x head_dim: :func:`kv_bytes_per_token` with ``latent_dim``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from solver.physics.constants import ETA_LINK, bytes_per_value
from solver.physics.hardware import Device
from solver.physics.latency import (  # noqa: F401  (LoadPercentile and the quantiles re-exported)
    LoadPercentile,
    largest_batch_at_percentile,
    largest_batch_within_ttft,
    latency_at_percentile,
    md1_wait_quantile_s,
    poisson_quantile,
)

SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class ServedModel:
    """Shape and precisions of a served model (parameters as counts, bytes per value).

    ``experts`` routed experts per mixture-of-experts layer, ``experts_active`` per token
    (1 and 1: dense); ``kv_latent_dim`` values per token per layer of a compressed (MLA)
    KV cache (0: standard attention).
    """

    params: float
    active_params: float
    layers: float
    kv_heads: float
    head_dim: float
    hidden_size: float
    attention_heads: float
    weight_bytes: float
    kv_bytes: float
    experts: float = 1.0
    experts_active: float = 1.0
    kv_latent_dim: float = 0.0

    @property
    def is_moe(self) -> bool:
        """Whether each token uses fewer routed experts than the model has."""
        return self.experts > self.experts_active

    @property
    def params_per_expert(self) -> float:
        """Parameters of one routed expert summed over the MoE layers (0 when dense).

        From the two published counts: N_total = N_shared + E e and N_active = N_shared
        + k e, so e = (N_total - N_active) / (E - k). Mixtral 8x7B: (46.7 - 12.9)e9 / 6 =
        5.633e9 (= 3 x 4,096 x 14,336 x 32 layers = 5.637e9 from its config).
        """
        if not self.is_moe:
            return 0.0
        return (self.params - self.active_params) / (self.experts - self.experts_active)

    @property
    def weights_gb(self) -> float:
        """Weight bytes in GB (1e9): every parameter, every expert (what memory holds)."""
        return self.params * self.weight_bytes / 1e9

    @property
    def routed_weights_gb(self) -> float:
        """GB of all routed experts (0 when dense)."""
        return self.experts * self.params_per_expert * self.weight_bytes / 1e9

    @property
    def shared_weights_gb(self) -> float:
        """GB every token reads: attention, embeddings, shared experts (all of a dense model)."""
        return self.weights_gb - self.routed_weights_gb

    def weights_read_gb(self, tokens: np.ndarray | float) -> np.ndarray:
        """GB of weights one forward pass of ``tokens`` tokens reads (see module doc):
        the shared weights and the routed experts hit, E u(tokens) per layer."""
        share = experts_hit_share(self.experts, self.experts_active, tokens)
        return self.shared_weights_gb + self.routed_weights_gb * share

    @property
    def kv_gb_per_token(self) -> float:
        """KV-cache GB per token (K and V, every layer; or the MLA latent)."""
        return (
            kv_bytes_per_token(
                self.layers, self.kv_heads, self.head_dim, self.kv_bytes, self.kv_latent_dim
            )
            / 1e9
        )

    @property
    def allreduce_width(self) -> float:
        """Values per token in a tensor-parallel all-reduce: the hidden size (the output of
        the attention and MLP projections), else the attention width."""
        return self.hidden_size if self.hidden_size else self.attention_width

    @property
    def attention_width(self) -> float:
        """Query heads x head dim (the hidden size for most dense models)."""
        if self.attention_heads and self.head_dim:
            return self.attention_heads * self.head_dim
        return self.hidden_size


class ModelShape(Protocol):
    """What :func:`served_model` reads of a model: its weights (parameters) and its
    attention shape (layers, KV heads, head and hidden widths, heads; None where unknown).
    A compiled ModelSpec and a catalog row have them."""

    @property
    def params(self) -> float: ...

    @property
    def active_params(self) -> float: ...

    @property
    def layers(self) -> float | None: ...

    @property
    def kv_heads(self) -> float | None: ...

    @property
    def head_dim(self) -> float | None: ...

    @property
    def hidden_size(self) -> float | None: ...

    @property
    def attention_heads(self) -> float | None: ...


def served_model(shape: ModelShape, weight_precision: str, kv_precision: str) -> ServedModel:
    """A :class:`ServedModel` from any object with the model-shape attributes.

    ``shape`` has ``params``, ``active_params``, ``layers``, ``kv_heads``, ``head_dim``,
    ``hidden_size`` and ``attention_heads`` (a compiled ModelSpec, a catalog row).
    """
    assert shape.layers is not None, "a served model states its layers"
    assert shape.kv_heads is not None, "a served model states its KV heads"
    assert shape.head_dim is not None, "a served model states its head width"
    return ServedModel(
        params=float(shape.params),
        active_params=float(shape.active_params),
        layers=float(shape.layers),
        kv_heads=float(shape.kv_heads),
        head_dim=float(shape.head_dim),
        hidden_size=float(shape.hidden_size or 0.0),
        attention_heads=float(shape.attention_heads or 0.0),
        weight_bytes=bytes_per_value(weight_precision),
        kv_bytes=bytes_per_value(kv_precision),
        experts=float(getattr(shape, "experts", 1.0) or 1.0),
        experts_active=float(getattr(shape, "experts_active", 1.0) or 1.0),
        kv_latent_dim=float(getattr(shape, "kv_latent_dim", 0.0) or 0.0),
    )


def kv_bytes_per_token(
    layers: float, kv_heads: float, head_dim: float, kv_bytes: float, latent_dim: float = 0.0
) -> float:
    """KV-cache bytes per token: 2 (K and V) x layers x kv_heads x head_dim x bytes.

    With multi-head latent attention (``latent_dim`` > 0) each layer caches one latent of
    ``latent_dim`` values instead: layers x latent_dim x bytes (DeepSeek-V3: 61 x (512 +
    64) x 2 B = 70,272 B per token in BF16, against 2 x 61 x 128 x 128 x 2 B = 3.998 MB
    for its 128 heads uncompressed).
    """
    if latent_dim > 0:
        return layers * latent_dim * kv_bytes
    return 2.0 * layers * kv_heads * head_dim * kv_bytes


def experts_hit_share(
    experts: float, experts_active: float, tokens: np.ndarray | float
) -> np.ndarray:
    """Expected share of a layer's routed experts that ``tokens`` tokens hit, u(n).

    u(n) = 1 - (1 - k/E)^n for n tokens each routed to k of E experts independently and
    uniformly (module doc): E u(n) distinct experts per layer. 1 for a dense model (E = k,
    every token uses its one MLP), 0 for no tokens.

    Parameters
    ----------
    experts
        E, routed experts per layer.
    experts_active
        k, routed experts per token.
    tokens
        n, tokens routed together (one forward pass).
    """
    n = np.asarray(tokens, dtype=float)
    miss = 1.0 - float(experts_active) / float(experts)
    return 1.0 - np.power(miss, n)


def routed_share_per_step(
    experts: float,
    experts_active: float,
    batch: np.ndarray | float,
    prompt_tokens: float,
    output_tokens: float,
) -> np.ndarray:
    """Expected share of the routed experts a continuous-batching decode step reads, f(b).

    f(b) = u(b) + min(1, b/O) [u(b + P) - u(b)]: the b decode tokens, and in b/O of the
    steps one prompt's prefill chunk of P tokens as well (module doc). Pure decode
    (P = 0) reads u(b).
    """
    b = np.asarray(batch, dtype=float)
    decode = experts_hit_share(experts, experts_active, b)
    with_chunk = experts_hit_share(experts, experts_active, b + float(prompt_tokens))
    chunk_share = np.minimum(1.0, b / float(output_tokens))
    return decode + chunk_share * (with_chunk - decode)


def max_batch(
    weights_gb: float,
    kv_gb_per_token: float,
    context_tokens: float,
    d: np.ndarray | int,
    memory_gb: np.ndarray | float,
    memory_headroom: float = 0.10,
) -> np.ndarray:
    """Largest number of sequences of ``context_tokens`` whose KV cache fits beside the weights.

    ``memory_headroom`` is the part of each device kept out of use (1 - vLLM's
    gpu_memory_utilization).
    """
    free_gb = (
        np.asarray(d, dtype=float) * np.asarray(memory_gb, dtype=float) * (1.0 - memory_headroom)
        - weights_gb
    )
    return np.floor(np.maximum(free_gb, 0.0) / (kv_gb_per_token * context_tokens)).astype(int)


@dataclass(frozen=True)
class StepModel:
    """Step time as t(b) = combine(a + r f(b) + kv b, c b) + fixed + comm b, seconds (arrays).

    combine is max where ``overlap`` (memory and compute hide one behind the other) and
    the sum where not (the runtime's measurements show they add).

    ``r f(b)`` is the read of the routed experts a step hits (module doc; 0 for a dense
    model, whose weights are all in ``a``).
    """

    weights_s: np.ndarray  # a: one read of the shared weights (all of a dense model's)
    kv_s_per_seq: np.ndarray  # KV read per sequence at the mean context
    compute_s_per_seq: np.ndarray  # c: FLOPs per sequence-step at the runtime's peak
    fixed_s: np.ndarray  # all-reduce latencies + runtime overhead per step
    comm_s_per_seq: np.ndarray  # all-reduce bytes per sequence-step
    weights_s_bound: np.ndarray  # the same terms at the data-sheet figures
    kv_s_per_seq_bound: np.ndarray
    compute_s_per_seq_bound: np.ndarray
    routed_s: np.ndarray | float = 0.0  # r: one read of every routed expert
    routed_s_bound: np.ndarray | float = 0.0
    experts: float = 1.0  # E and k of a mixture of experts (1 and 1: dense)
    experts_active: float = 1.0
    prompt_tokens: float = 0.0  # P and O, for the prefill chunks' expert reads
    output_tokens: float = 1.0
    overlap: np.ndarray | bool = True  # memory and compute overlap (max) or add (sum)
    # one prompt's prefill compute at eta_c (s, seconds) and the step's token budget
    # (max_num_batched_tokens; 0: spread over every step), module doc "Prefill chunks"
    prefill_s_per_prompt: np.ndarray | float = 0.0
    token_budget: np.ndarray | float = 0.0
    # attention's share of compute_s_per_seq (4 L h c FLOPs at eta_c) and whether the KV
    # read runs as its own kernel, adding to the linear layers (module doc, "Attention
    # apart"; RuntimeEfficiency.attention_apart)
    attn_s_per_seq: np.ndarray | float = 0.0
    attention_apart: np.ndarray | bool = False
    # a decode graph compiled for a fixed batch: the decode terms run at the compiled batch
    # (compiled_batch where a runtime spec names it, else the planned batch), and a prompt
    # run as its own graph (seconds, 0 where prompts ride the steps) pauses the batch once
    # in each other running request's O steps (module doc, "Static batch", "Serial prefill")
    static_batch: np.ndarray | bool = False
    compiled_batch: np.ndarray | float = 0.0
    prefill_serial_s: np.ndarray | float = 0.0

    @property
    def is_moe(self) -> bool:
        """Whether the weights read depend on the batch (a mixture of experts)."""
        return self.experts > self.experts_active

    def routed_share(self, batch: np.ndarray | float) -> np.ndarray:
        """f(b), the share of the routed experts a step reads (:func:`routed_share_per_step`)."""
        return routed_share_per_step(
            self.experts, self.experts_active, batch, self.prompt_tokens, self.output_tokens
        )

    @property
    def is_static(self) -> bool:
        """Whether a step runs the compiled batch, padded (t(b) flat below it)."""
        return bool(np.any(np.asarray(self.static_batch, dtype=bool)))

    @property
    def is_serial(self) -> bool:
        """Whether prompts run as their own graph between decode steps."""
        return bool(np.any(np.asarray(self.prefill_serial_s, dtype=float) > 0))

    def decode_batch(
        self, batch: np.ndarray | float, compiled: np.ndarray | float | None = None
    ) -> np.ndarray:
        """Slots a decode step runs at a running batch: the batch itself, or on a static-batch
        engine the compiled batch (the runtime spec's, else ``compiled``, the planned batch,
        else the batch itself) when it is larger (module doc, "Static batch")."""
        b = np.asarray(batch, dtype=float)
        planned = b if compiled is None else np.asarray(compiled, dtype=float)
        fixed = np.asarray(self.compiled_batch, dtype=float)
        graph = np.where(fixed > 0, fixed, planned)
        return np.where(np.asarray(self.static_batch, dtype=bool), np.maximum(b, graph), b)

    def cycle_s(
        self, batch: np.ndarray | float, compiled: np.ndarray | float | None = None
    ) -> np.ndarray:
        """Replica seconds per output token at a running batch: the step plus, where prompts
        run apart, the request's own prefill spread over its O tokens; the replica emits
        b / cycle_s(b) tokens/s (module doc, "Serial prefill")."""
        own = np.asarray(self.prefill_serial_s, dtype=float) / float(self.output_tokens)
        return self.step_s(batch, compiled) + own

    @property
    def is_chunked(self) -> bool:
        """Whether prompts run as chunks on a share of the steps (t(b) not linear)."""
        return bool(self.prompt_tokens > 0 and np.any(np.asarray(self.token_budget) > 0))

    def chunk_share(self, batch: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
        """(q, X): the share of steps that carry a prefill chunk of the other b - 1
        sequences' prompts and the chunk's compute, seconds (module doc, "Prefill
        chunks"). q X = (b - 1) s / O; a chunk is n = min(P, budget - b) prompt tokens (at
        least 1), so q = min(1, (b - 1) P / (O n)) and X = ((b - 1) s / O) / q."""
        b = np.asarray(batch, dtype=float)
        others = np.maximum(b - 1.0, 0.0)
        p, o = float(self.prompt_tokens), float(self.output_tokens)
        budget = np.asarray(self.token_budget, dtype=float)
        per_step = others * np.asarray(self.prefill_s_per_prompt, dtype=float) / o
        if p <= 0:
            return np.zeros(np.broadcast(b, budget).shape), np.zeros(per_step.shape)
        chunk = np.maximum(np.minimum(p, budget - b), 1.0)
        q = np.where(budget > 0, np.minimum(1.0, others * p / (o * chunk)), 1.0)
        return q, per_step / np.maximum(q, 1e-300)  # per_step is 0 where q is

    def step_s(
        self, batch: np.ndarray | float, compiled: np.ndarray | float | None = None
    ) -> np.ndarray:
        """Derated step time at a running batch (the time per output token: the mean step,
        chunk steps included, module doc "Prefill chunks"; on a static-batch engine the
        compiled batch's step, ``compiled`` the planned batch where no spec names it; where
        prompts run apart, the other b - 1 requests' prefills spread over O steps)."""
        running = np.asarray(batch, dtype=float)
        b = self.decode_batch(running, compiled)
        apart = np.asarray(self.attention_apart, dtype=bool) & np.asarray(self.overlap)
        kv = b * self.kv_s_per_seq
        attention = np.maximum(kv, b * self.attn_s_per_seq)  # its own kernel's roofline
        # where attention runs apart, the linear layers' max holds only the weights and
        # their own FLOPs, and attention's time is added after (module doc)
        memory = self.weights_s + np.where(apart, 0.0, kv)
        if self.is_moe:
            memory = memory + self.routed_s * self.routed_share(b)
        compute = b * (self.compute_s_per_seq - np.where(apart, self.attn_s_per_seq, 0.0))
        combined = np.where(self.overlap, np.maximum(memory, compute), memory + compute)
        if self.is_chunked:
            q, x = self.chunk_share(b)
            decode = compute - q * x  # with the sequence's own prompt spread (module doc)
            chunked = (1.0 - q) * np.maximum(memory, decode) + q * np.maximum(memory, decode + x)
            combined = np.where(
                np.asarray(self.overlap) & (np.asarray(self.token_budget) > 0), chunked, combined
            )
        combined = combined + np.where(apart, attention, 0.0)
        others = np.maximum(running - 1.0, 0.0)
        serial = others * np.asarray(self.prefill_serial_s, dtype=float) / float(self.output_tokens)
        return combined + self.fixed_s + b * self.comm_s_per_seq + serial

    def roofline_s(self, batch: np.ndarray | float) -> np.ndarray:
        """The same step at 100% of bandwidth and peak, no overheads (a lower bound)."""
        b = np.asarray(batch, dtype=float)
        memory = self.weights_s_bound + b * self.kv_s_per_seq_bound
        if self.is_moe:
            memory = memory + self.routed_s_bound * self.routed_share(b)
        return np.maximum(memory, b * self.compute_s_per_seq_bound)

    def largest_batch_within(self, slo_s: float, upper: int) -> np.ndarray:
        """Largest whole batch b in [0, ``upper``] with step_s(b) <= ``slo_s`` (bisection;
        step_s rises with b). 0 where even one sequence is too slow; ``upper`` where the
        SLO allows more."""
        n = np.broadcast(self.weights_s, self.fixed_s).shape
        lo = np.zeros(n)
        hi = np.full(n, float(upper))
        top_ok = self.step_s(hi) <= slo_s + 1e-12
        lo = np.where(top_ok, hi, lo)
        while np.any(hi - lo > 1):
            mid = np.floor((lo + hi) / 2.0)
            ok = self.step_s(mid) <= slo_s + 1e-12
            lo = np.where(ok, mid, lo)
            hi = np.where(ok, hi, mid)
        return lo


def step_model(
    model: ServedModel, prompt_tokens: float, output_tokens: float, d: np.ndarray, dev: Device
) -> StepModel:
    """Coefficients of the continuous-batching step for each candidate (see module doc)."""
    d = np.asarray(d, dtype=float)
    p, o = float(prompt_tokens), float(output_tokens)
    mean_context = p + o / 2.0
    h = model.attention_width
    # where prompts run as their own graph (Serial prefill) a step multiplies only its
    # decode tokens; the prompts' time is prefill_serial_s, apart
    serial = np.asarray(getattr(dev, "prefill_serial", False), dtype=bool)
    prompt_share = np.where(serial, 0.0, p / o)
    flops_per_seq = (
        2.0 * model.active_params * (1.0 + prompt_share)
        + 4.0 * model.layers * h * mean_context
        + 2.0 * model.layers * h * p * prompt_share
    )
    bw = d * dev.bandwidth_gbps * 1e9
    pk = d * dev.peak_tflops * 1e12
    weights_b = model.shared_weights_gb * 1e9
    routed_b = model.routed_weights_gb * 1e9
    # a paged cache is read at the mean context; a dense cache of a fixed length (JetStream)
    # is read whole every step, whatever the context (RuntimeEfficiency.static_kv_tokens)
    kv_read_tokens = np.maximum(mean_context, getattr(dev, "static_kv_tokens", 0.0))
    kv_b = kv_read_tokens * model.kv_gb_per_token * 1e9
    ring = np.where(d > 1, 2.0 * (d - 1.0) / d, 0.0)
    act_bytes = 2.0  # all-reduced activations are bf16
    comm_per_seq = (
        2.0
        * model.layers
        * (1.0 + prompt_share)
        * ring
        * model.allreduce_width
        * act_bytes
        / (dev.link_gbps_per_direction * 1e9 * ETA_LINK)
    )
    fixed = np.where(d > 1, 2.0 * model.layers * dev.allreduce_latency_s, 0.0) + dev.step_overhead_s
    attn_flops_per_seq = 4.0 * model.layers * h * mean_context
    return StepModel(
        weights_s=weights_b / (bw * dev.eta_bandwidth),
        kv_s_per_seq=kv_b / (bw * dev.eta_bandwidth),
        compute_s_per_seq=flops_per_seq / (pk * dev.eta_compute),
        fixed_s=fixed,
        comm_s_per_seq=comm_per_seq,
        weights_s_bound=weights_b / bw,
        kv_s_per_seq_bound=kv_b / bw,
        compute_s_per_seq_bound=flops_per_seq / pk,
        routed_s=routed_b / (bw * dev.eta_bandwidth),
        routed_s_bound=routed_b / bw,
        experts=model.experts,
        experts_active=model.experts_active,
        prompt_tokens=p,
        output_tokens=o,
        overlap=np.asarray(getattr(dev, "overlap", True), dtype=bool),
        prefill_s_per_prompt=prefill_compute_s(model, p, d, dev),
        token_budget=np.where(
            serial, 0.0, np.asarray(getattr(dev, "token_budget", 0.0), dtype=float)
        ),
        attn_s_per_seq=attn_flops_per_seq / (pk * dev.eta_compute),
        attention_apart=np.asarray(getattr(dev, "attention_apart", False), dtype=bool),
        static_batch=np.asarray(getattr(dev, "static_batch", False), dtype=bool),
        compiled_batch=np.asarray(getattr(dev, "compiled_batch", 0.0), dtype=float),
        prefill_serial_s=np.where(serial, prefill_s(model, p, d, dev), 0.0),
    )


def prefill_s(model: ServedModel, prompt_tokens: float, d: np.ndarray, dev: Device) -> np.ndarray:
    """Prefill of one prompt alone, seconds: its FLOPs at eta_c, one weight read, all-reduces."""
    d = np.asarray(d, dtype=float)
    p = float(prompt_tokens)
    flops = 2.0 * model.active_params * p + 2.0 * model.layers * model.attention_width * p * p
    compute_s = flops / (d * dev.peak_tflops * 1e12 * dev.eta_compute)
    # the weights the prompt's P tokens hit: all of a dense model's, u(P) of the experts
    read_gb = model.weights_read_gb(p) if model.is_moe else model.weights_gb
    read_s = read_gb * 1e9 / (d * dev.bandwidth_gbps * 1e9 * dev.eta_bandwidth)
    comm_s = np.where(d > 1, 2.0 * model.layers * dev.allreduce_latency_s, 0.0)
    return compute_s + read_s + comm_s


def prefill_compute_s(
    model: ServedModel, prompt_tokens: float, d: np.ndarray, dev: Device
) -> np.ndarray:
    """A prompt's prefill FLOPs at eta_c, seconds: the time its chunk adds to the decode
    step that carries it. Under chunked prefill the chunk rides a step that reads the
    weights for the decoding batch anyway (module doc), so the weight read is no part of
    the prefill queue's service time; 2 N P + 2 L h P^2 FLOPs."""
    d = np.asarray(d, dtype=float)
    p = float(prompt_tokens)
    flops = 2.0 * model.active_params * p + 2.0 * model.layers * model.attention_width * p * p
    return flops / (d * dev.peak_tflops * 1e12 * dev.eta_compute)


@dataclass(frozen=True)
class DecodeResult:
    """Operating point per replica shape (arrays, one entry per candidate)."""

    batch: np.ndarray  # sequences decoded together (0 = infeasible)
    step_s: np.ndarray  # time per output token at that batch (prefill chunks included)
    roofline_step_s: np.ndarray  # the same step at data-sheet figures, no overheads
    ttft_s: np.ndarray  # time to first token: the prompt's prefill plus one step
    tokens_per_s: np.ndarray  # output tokens/s per replica (0 where infeasible)
    b_max_memory: np.ndarray  # the memory limit on the batch (at the mean context, or a
    # dense cache's fixed length)
    free_gb: np.ndarray  # replica memory left for the KV cache after the weights
    reason: np.ndarray  # "" when feasible, else why not (memory, tpot, ttft)
    # at the SLO percentile under load (module doc); the mean figures where none is asked
    tpot_p_s: np.ndarray | None = None
    ttft_p_s: np.ndarray | None = None
    # replica seconds per output token: the step plus, where prompts run as their own
    # graph, the request's own prefill over its O tokens (StepModel.cycle_s); tokens_per_s
    # is batch / cycle_s (= batch / step_s where prompts ride the steps)
    cycle_s: np.ndarray | None = None


def _slo_batch(
    sm: StepModel,
    tpot_slo_s: float | None,
    cap: np.ndarray,
    batch: int | None,
    load: LoadPercentile | None,
) -> np.ndarray:
    """Largest batch whose step meets the TPOT SLO (at the mean, or at ``load``'s
    percentile), per candidate; ``cap`` where there is no SLO."""
    if tpot_slo_s is None:
        return cap.astype(float)
    if load is not None:
        return largest_batch_at_percentile(sm, tpot_slo_s, cap.astype(float), load)
    if sm.is_moe or sm.is_chunked or sm.is_static or sm.is_serial:
        # t(b) is not linear in b (or, padded, flat below a compiled batch): bisection
        # over whole batches up to the largest asked
        upper = int(max(np.max(cap), batch or 0, 1))
        return sm.largest_batch_within(tpot_slo_s, upper)
    # t(b) = max(A + B b, C b) + F + E b <= slo  <=>  b <= both bounds below; where the
    # times add, t(b) = A + F + (B + C + E) b <= slo  <=>  b <= the third bound. With
    # attention apart, t(b) = max(A, (C - G) b) + max(B, G) b + F + E b (G: attention's
    # FLOPs), the same two bounds with B -> max(B, G) and C -> C - G + max(B, G)
    apart = np.asarray(sm.attention_apart, dtype=bool)
    attn = np.maximum(sm.kv_s_per_seq, sm.attn_s_per_seq)
    b_coef = np.where(apart, attn, sm.kv_s_per_seq)
    c_coef = np.where(apart, sm.compute_s_per_seq - sm.attn_s_per_seq + attn, sm.compute_s_per_seq)
    with np.errstate(divide="ignore", invalid="ignore"):
        b1 = (tpot_slo_s - sm.weights_s - sm.fixed_s) / (b_coef + sm.comm_s_per_seq)
        b2 = (tpot_slo_s - sm.fixed_s) / (c_coef + sm.comm_s_per_seq)
        b3 = (tpot_slo_s - sm.weights_s - sm.fixed_s) / (
            sm.kv_s_per_seq + sm.compute_s_per_seq + sm.comm_s_per_seq
        )
    return np.floor(np.where(sm.overlap, np.minimum(b1, b2), b3) + 1e-9)


def _operating_batch(
    sm: StepModel,
    tpot_slo_s: float | None,
    limit: np.ndarray,
    cap: np.ndarray,
    batch: int | None,
    load: LoadPercentile | None,
) -> np.ndarray:
    """Largest batch meeting the TPOT limit: at the percentile under load and, by the
    operating-point rule (docs/guides/operating-point.md), its own step too, so the
    throughput reported, b / t(b), is never that of a step over the limit."""
    b_slo = _slo_batch(sm, tpot_slo_s, limit if load is not None else cap, batch, load)
    if load is not None and tpot_slo_s is not None:
        b_slo = np.minimum(b_slo, _slo_batch(sm, tpot_slo_s, limit, batch, None))
    return b_slo


def best_decode(
    model: ServedModel,
    *,
    prompt_tokens: float,
    output_tokens: float,
    tpot_slo_s: float | None,
    ttft_slo_s: float | None,
    d: np.ndarray,
    dev: Device,
    memory_headroom: float = 0.10,
    max_batch_cap: int | None = None,
    batch: int | None = None,
    load: LoadPercentile | None = None,
) -> DecodeResult:
    """Largest batch per replica that fits memory and meets the SLOs, and its throughput.

    ``tpot_slo_s``/``ttft_slo_s`` None means no SLO (batch inference). ``batch`` fixes
    the batch instead of searching (the estimator's ``--batch``); it is still checked
    against memory and the SLOs. ``max_batch_cap`` None takes the runtime's
    ``max_num_seqs`` (``dev.max_batch``). ``load`` checks the SLOs at a percentile under
    Poisson arrivals at the planned utilisation (module doc) instead of at the mean.
    """
    d = np.asarray(d, dtype=float)
    cap = dev.max_batch if max_batch_cap is None else np.full(d.shape, max_batch_cap)
    # a decode graph compiled for a named batch runs at most that many sequences
    graph = np.asarray(getattr(dev, "compiled_batch", 0.0), dtype=float)
    cap = np.where(graph > 0, np.minimum(cap, graph), cap).astype(int)
    p, o = float(prompt_tokens), float(output_tokens)
    free_gb = d * dev.memory_gb * (1.0 - memory_headroom) - model.weights_gb
    kv_tok = model.kv_gb_per_token
    # a paged cache holds each sequence at its context; a dense cache of a fixed length
    # (JetStream, RuntimeEfficiency.static_kv_tokens) holds that length for every slot,
    # whatever the context: the same tokens the step reads (step_model)
    static = np.asarray(getattr(dev, "static_kv_tokens", 0.0), dtype=float)
    one_fits = free_gb >= kv_tok * np.maximum(p + o, static)
    # an engine that reserves each request's whole P + O at admission (Reserved KV) holds
    # its full context per running sequence, one that grows its pages the mean context
    reserved = np.asarray(getattr(dev, "kv_reserved_full", False), dtype=bool)
    held_tokens = np.maximum(np.where(reserved, p + o, p + o / 2.0), static)
    held = max_batch(model.weights_gb, kv_tok, held_tokens, d, dev.memory_gb, memory_headroom)
    b_mem = np.where(one_fits, held, 0)
    sm = step_model(model, p, o, d, dev)
    limit = np.maximum(np.minimum(b_mem, cap), 1).astype(float)
    b_slo = _operating_batch(sm, tpot_slo_s, limit, cap, batch, load)
    prefill = prefill_s(model, p, d, dev)
    # the prefill queue's server: a prompt's compute where it rides decode steps, the whole
    # prefill graph (weights read, all-reduces) where it runs apart (Serial prefill)
    service = np.where(
        np.asarray(getattr(dev, "prefill_serial", False), dtype=bool),
        prefill,
        prefill_compute_s(model, p, d, dev),
    )
    if batch is None:
        chosen = np.maximum(np.minimum(np.minimum(b_mem, b_slo), cap), 0).astype(int)
        if ttft_slo_s is not None:
            # the TPOT-limited batch may step (at the mean) or queue prompts (at a
            # percentile) past the TTFT limit: take the largest batch that meets both (a
            # smaller batch steps faster and is fewer arrivals). As for TPOT, the batch's
            # own TTFT (prefill + t(b)) holds too, so a tail check never finds capacity
            # the mean does not (docs/guides/operating-point.md)
            b_ttft = largest_batch_within_ttft(
                sm, prefill, ttft_slo_s, chosen.astype(float), o, limit, None, service
            )
            if load is not None:
                b_ttft = np.minimum(
                    b_ttft,
                    largest_batch_within_ttft(
                        sm, prefill, ttft_slo_s, chosen.astype(float), o, limit, load, service
                    ),
                )
            chosen = np.where(chosen >= 1, np.maximum(b_ttft, 1), chosen).astype(int)
    else:
        chosen = np.full(d.shape, int(batch))
    step = sm.step_s(np.maximum(chosen, 1))
    tpot_p, ttft_p = latency_at_percentile(sm, chosen, step, prefill, o, limit, load, service)
    at_p = "" if load is None else f" at p{load.p * 100:g} under load"
    reason = np.full(d.shape, "", dtype=object)
    if tpot_slo_s is not None:
        at = "batch 1" if batch is None else "this batch"
        too_slow = (np.maximum(chosen, 1) > b_slo) if load is None else (chosen < 1)
        if load is not None and batch is not None:
            too_slow = (tpot_p > tpot_slo_s + 1e-12) | (step > tpot_slo_s + 1e-12)
        reason = np.where(too_slow, f"time per output token above the SLO at {at}{at_p}", reason)
    if batch is not None:
        reason = np.where(
            (chosen > b_mem) & one_fits, "this batch's KV cache does not fit memory", reason
        )
        reason = np.where(
            (graph > 0) & (chosen > graph),
            "this batch is above the runtime's compiled batch",
            reason,
        )
    reason = np.where(
        (graph > b_mem) & one_fits, "the compiled batch's KV cache does not fit memory", reason
    )
    reason = np.where(~one_fits, "weights and one sequence's KV cache do not fit memory", reason)
    if ttft_slo_s is not None:
        reason = np.where(
            (reason == "") & ((ttft_p > ttft_slo_s) | (prefill + step > ttft_slo_s)),
            f"time to first token above the SLO{at_p}",
            reason,
        )
    ok = reason == ""
    with np.errstate(divide="ignore", invalid="ignore"):
        own = np.asarray(sm.prefill_serial_s, dtype=float) / o  # Serial prefill
        tokens_per_s = np.where(ok, chosen / (step + own), 0.0)
    return DecodeResult(
        batch=np.where(ok, chosen, 0),
        step_s=step,
        roofline_step_s=sm.roofline_s(np.maximum(chosen, 1)),
        ttft_s=prefill + step,
        tokens_per_s=tokens_per_s,
        b_max_memory=b_mem,
        free_gb=free_gb,
        reason=reason,
        tpot_p_s=tpot_p,
        ttft_p_s=ttft_p,
        cycle_s=step + own,
    )


# the capacity-share helpers live in solver/physics/capacity.py (split at the seam: this
# module is the step and the operating point); re-exported for their callers
from solver.physics.capacity import (  # noqa: E402, F401
    calibration_factor,
    capacity_derate,
    demand_tokens_per_s,
    measured_tail_share,
    planned_capacity_share,
)
