"""Parameter counts from a transformer's shape: whether a stated parameter count agrees
with the layers and widths it is given with.

Memory, FLOPs and so the whole plan scale with the parameter count; a dropped digit in it
(7.055 for 70.55 billion) plans a 70B model as a 7B one, about 8x too cheap, while the
layers and widths still describe the 70B model. The count a shape implies (decoder-only,
the layout of every shipped preset; norms, biases and routers are left out, under 0.1%):

    N = L x (A + E x M) + c x V x h
    A = h x d x (2 x H + 2 x H_kv)     attention: query and output h x H.d each,
                                        key and value h x H_kv.d each
    M = 3 x h x I                       a gated MLP (SwiGLU, GeGLU): gate, up and down
    N_active = L x (A + k x M) + c x V x h

with L layers, h = hidden_size, H attention heads of d = head_dim (default h / H), H_kv
kv heads, E routed experts of which k are active per token (1 and 1 when dense), I the
MLP width (intermediate_size; per expert for a mixture of experts), V the vocabulary and
c from 1 (input and output embeddings tied) to 2 (untied). Each shipped preset's count
lies within 1% of N with its own intermediate_size (Llama 3 8B: 32 x (41.9M + 176.2M)
+ 2 x 525M = 8.03B); DeepSeek-V3 (compressed MLA attention, a shared expert and three
dense layers) is the exception the ranges below leave room for.
"""

from __future__ import annotations

from dataclasses import dataclass

GATED_MLP_MATRICES = 3
#: MLP width over hidden_size assumed when a shape does not give intermediate_size: dense
#: models run from 2.67 (an ungated 4h MLP, GPT-3, counts as 2.67h gated; Llama 2 2.69)
#: to 8.0 (Gemma 2 27B); experts of a mixture are narrower (DeepSeek-V3 0.29, Qwen3-235B
#: 0.375; Mixtral 3.5)
DENSE_MLP_RATIO = (2.0, 9.0)
EXPERT_MLP_RATIO = (0.125, 9.0)
#: vocabulary assumed when a shape does not give vocab_size: from none to the largest of a
#: shipped preset (Gemma 3, 262,208)
MAX_VOCAB = 262_208
#: how far a stated count may lie outside the range the shape gives: norms, biases,
#: routers and shared experts (DeepSeek-V3's active count is 37B against 19B-54B)
PARAMS_TOLERANCE = 0.10


@dataclass(frozen=True)
class ShapeCount:
    """The parameter counts a shape allows (counts, not billions) and the MLP widths that
    agree with the stated total (``width_low`` > ``width_high``: none does)."""

    total_low: float
    total_high: float
    active_low: float
    active_high: float
    width_low: float
    width_high: float

    @property
    def total_agrees(self) -> bool:
        return self.width_low <= self.width_high


def shape_count(
    *,
    params: float,
    layers: float,
    hidden_size: float,
    attention_heads: float,
    kv_heads: float | None = None,
    head_dim: float | None = None,
    vocab_size: float | None = None,
    intermediate_size: float | None = None,
    experts: float = 1.0,
    experts_active: float = 1.0,
    compressed_kv: bool = False,
) -> ShapeCount:
    """The totals (and active counts) a shape allows, and the MLP widths that give the
    stated total ``params`` within :data:`PARAMS_TOLERANCE`.

    Unknown figures are ranges: the MLP width from :data:`DENSE_MLP_RATIO` (or
    :data:`EXPERT_MLP_RATIO` for a mixture of experts) x hidden_size, the vocabulary from 0
    to :data:`MAX_VOCAB`, embeddings tied or not, and a compressed (MLA) attention from
    nothing to the standard count. The active range is taken over the widths that agree
    with the total, so a total and an active count that need two different widths
    disagree.
    """
    h, n_layers = float(hidden_size), float(layers)
    d = float(head_dim) if head_dim else h / float(attention_heads)
    kv = float(kv_heads) if kv_heads else float(attention_heads)
    attention_high = h * d * (2.0 * float(attention_heads) + 2.0 * kv)
    attention_low = 0.0 if compressed_kv else attention_high
    embed_low = float(vocab_size) * h if vocab_size else 0.0
    embed_high = 2.0 * float(vocab_size if vocab_size else MAX_VOCAB) * h
    if intermediate_size:
        width_low = width_high = float(intermediate_size)
    else:
        low, high = EXPERT_MLP_RATIO if experts > experts_active else DENSE_MLP_RATIO
        width_low, width_high = low * h, high * h
    per_width = GATED_MLP_MATRICES * h * n_layers  # parameters per unit of MLP width, per expert
    fixed_low = n_layers * attention_low + embed_low
    fixed_high = n_layers * attention_high + embed_high
    total_low = fixed_low + experts * per_width * width_low
    total_high = fixed_high + experts * per_width * width_high
    t = PARAMS_TOLERANCE
    agree_low = max(width_low, (params / (1 + t) - fixed_high) / (experts * per_width))
    agree_high = min(width_high, (params * (1 + t) - fixed_low) / (experts * per_width))
    active_low = fixed_low + experts_active * per_width * max(agree_low, 0.0)
    active_high = fixed_high + experts_active * per_width * max(agree_high, 0.0)
    return ShapeCount(total_low, total_high, active_low, active_high, agree_low, agree_high)


def active_agrees(count: ShapeCount, active_params: float) -> bool:
    """Whether a stated active count lies within :data:`PARAMS_TOLERANCE` of the range."""
    t = PARAMS_TOLERANCE
    return count.active_low / (1 + t) <= active_params <= count.active_high * (1 + t)
