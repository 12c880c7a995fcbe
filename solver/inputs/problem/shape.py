"""A transformer's shape given in a problem file (a model without a preset), checked for
heads that divide and a parameter count its layers and widths can hold."""

from __future__ import annotations

from pydantic import Field, model_validator

from solver.inputs.problem.fields import FIX_SEPARATOR, StrictModel
from solver.physics.shapes import (
    DENSE_MLP_RATIO,
    EXPERT_MLP_RATIO,
    PARAMS_TOLERANCE,
    active_agrees,
    shape_count,
)


class ModelShape(StrictModel):
    """A transformer's shape, for models without a preset."""

    params_b: float = Field(gt=0, description="Total parameters, billions")
    active_params_b: float | None = Field(
        None, gt=0, description="Parameters active per token (MoE), billions; default = params_b"
    )
    layers: int | None = Field(None, gt=0)
    hidden_size: int | None = Field(None, gt=0)
    attention_heads: int | None = Field(None, gt=0)
    kv_heads: int | None = Field(None, gt=0)
    head_dim: int | None = Field(None, gt=0)
    vocab_size: int | None = Field(None, gt=0)
    intermediate_size: int | None = Field(
        None,
        gt=0,
        description="MLP width (config.json intermediate_size; per expert for a mixture of "
        "experts, moe_intermediate_size): when given, params_b is checked against it to 10%",
    )
    experts: int = Field(
        1, gt=0, description="Routed experts per mixture-of-experts layer; 1 = dense"
    )
    experts_active: int = Field(1, gt=0, description="Routed experts each token uses; 1 = dense")
    kv_latent_dim: int = Field(
        0,
        ge=0,
        description="Values per token per layer of a compressed (MLA) KV cache "
        "(kv_lora_rank + qk_rope_head_dim); 0 = 2 x kv_heads x head_dim",
    )

    @model_validator(mode="after")
    def _experts_agree(self) -> ModelShape:
        if self.experts_active > self.experts:
            raise ValueError(
                f"experts_active {self.experts_active} is above experts {self.experts}; "
                "set experts_active to the experts each token uses (num_experts_per_tok), "
                "at most experts"
            )
        active = self.active_params_b if self.active_params_b is not None else self.params_b
        if active > self.params_b:
            raise ValueError(
                f"active_params_b {active:g} is above params_b {self.params_b:g}; set "
                "active_params_b to the parameters one token uses, at most params_b"
            )
        if self.experts > self.experts_active and active >= self.params_b:
            raise ValueError(
                f"a mixture of experts ({self.experts_active} of {self.experts} experts per "
                "token) needs active_params_b below params_b; add active_params_b from the "
                "model card"
            )
        _check_heads(self)
        _check_params_against_shape(self, active)
        return self


def _check_heads(shape: ModelShape) -> None:
    """Attention heads split evenly into kv-head groups, and into hidden_size when head_dim
    is not given (a shape that does not divide is no transformer: its KV cache and
    activations, sized from these figures, would be wrong)."""
    heads, kv = shape.attention_heads, shape.kv_heads
    if heads is not None and kv is not None and heads % kv:
        divisors = [k for k in range(1, heads + 1) if heads % k == 0]
        raise ValueError(
            f"attention_heads {heads} do not divide evenly by kv_heads {kv}: grouped-query "
            f"attention shares each kv head among attention_heads / kv_heads query heads"
            f"{FIX_SEPARATOR}set kv_heads to a divisor of attention_heads ({divisors}; "
            "num_key_value_heads in config.json) or correct attention_heads"
        )
    hidden = shape.hidden_size
    if shape.head_dim is None and heads is not None and hidden is not None and hidden % heads:
        raise ValueError(
            f"hidden_size {hidden} does not divide evenly by attention_heads {heads}, and no "
            f"head_dim is given{FIX_SEPARATOR}add head_dim (config.json head_dim) or correct "
            "hidden_size / attention_heads"
        )


def _check_params_against_shape(shape: ModelShape, active_b: float) -> None:
    """params_b (and a mixture's active_params_b) within 10% of what the layers and widths
    hold (:func:`solver.physics.shapes.shape_count`, formula there); a shape without layers,
    hidden_size and attention_heads states nothing to compare."""
    if shape.layers is None or shape.hidden_size is None or shape.attention_heads is None:
        return
    if shape.experts <= shape.experts_active and active_b < shape.params_b:
        return  # fewer active parameters but no experts given: the experts are unknown
    count = shape_count(
        params=shape.params_b * 1e9,
        layers=shape.layers,
        hidden_size=shape.hidden_size,
        attention_heads=shape.attention_heads,
        kv_heads=shape.kv_heads,
        head_dim=shape.head_dim,
        vocab_size=shape.vocab_size,
        intermediate_size=shape.intermediate_size,
        experts=shape.experts,
        experts_active=shape.experts_active,
        compressed_kv=shape.kv_latent_dim > 0,
    )
    if shape.intermediate_size:
        width = f"intermediate_size {shape.intermediate_size}"
        sizes = "the layer sizes or intermediate_size"
    else:
        low, high = EXPERT_MLP_RATIO if shape.experts > shape.experts_active else DENSE_MLP_RATIO
        width = f"an MLP {low:g}-{high:g}x hidden_size wide"
        sizes = "the layer sizes (add intermediate_size to have it checked exactly)"
    held = (
        f"{shape.layers} layers of hidden_size {shape.hidden_size} with {width} hold "
        f"{count.total_low / 1e9:.3g}B to {count.total_high / 1e9:.3g}B parameters"
    )
    fix = (
        f"{FIX_SEPARATOR}correct params_b (a dropped or added digit?) or {sizes}, from the "
        "model's config.json"
    )
    if not count.total_agrees:
        raise ValueError(
            f"params_b {shape.params_b:g} disagrees with the shape by more than "
            f"{PARAMS_TOLERANCE:.0%}: {held}{fix}"
        )
    if shape.experts > shape.experts_active and not active_agrees(count, active_b * 1e9):
        raise ValueError(
            f"active_params_b {active_b:g} disagrees with the shape by more than "
            f"{PARAMS_TOLERANCE:.0%}: with params_b {shape.params_b:g}, "
            f"{shape.experts_active} of {shape.experts} experts per token use "
            f"{count.active_low / 1e9:.3g}B to {count.active_high / 1e9:.3g}B"
            f"{fix.replace('params_b (', 'active_params_b (')}"
        )
