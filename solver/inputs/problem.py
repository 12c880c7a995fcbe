"""Problem files: pydantic models of what a team asks (workloads and constraints).

A problem file is YAML. :func:`load_problem` reads one and returns a validated
:class:`Problem`; every mistake becomes one :class:`~solver.errors.ProcureError`
that names the file, the field path and the fix. ``procure schema`` prints the
JSON Schema generated from these models.
"""

from __future__ import annotations

import math
import re
from datetime import date
from pathlib import Path
from statistics import NormalDist
from typing import Annotated, Final, Literal, cast, get_args

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from solver.errors import ProcureError, closest
from solver.inputs.costs import Costs
from solver.inputs.yamlio import load_yaml, read_text_file
from solver.physics.constants import WEIGHT_ONLY_PRECISIONS
from solver.physics.inference import LoadPercentile
from solver.physics.shapes import (
    DENSE_MLP_RATIO,
    EXPERT_MLP_RATIO,
    PARAMS_TOLERANCE,
    active_agrees,
    shape_count,
)
from solver.units import HOURS_PER_MONTH  # noqa: F401  (re-exported: older imports)

MAX_HORIZON_MONTHS = 600.0  # 50 years: longer than any hardware or contract plan
# No quantity in a problem (USD, tokens, users, hours) comes near this; a larger number is
# a typo, and would overflow to inf in the model's arithmetic.
MAX_MAGNITUDE = 1e15
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Fraction = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
HOURS_PER_DAY = 24.0
SECONDS_PER_DAY = 86_400.0
# Serving capacity is planned for peak demand at this utilisation, not at 100%: Google
# Compute Engine's autoscaler keeps backends at 0.8 of their load-balancing capacity unless
# told otherwise (AutoscalingPolicyLoadBalancingUtilization.utilization_target, "If not
# defined, the default is 0.8", cloud.google.com/python/docs/reference/compute/latest/
# google.cloud.compute_v1.types.AutoscalingPolicyLoadBalancingUtilization).
DEFAULT_MAX_UTILISATION = 0.8
# Traffic-mix shares split one request stream: a sum off 1 by more than this silently drops
# or invents demand (a sum of 0.99 loses 1% of it), so it is refused, not renormalised.
MIX_SHARE_TOLERANCE = 1e-6

Mode = Literal["on_demand", "spot", "reserved_1y", "reserved_3y", "owned"]
ALL_MODES: tuple[Mode, ...] = ("on_demand", "spot", "reserved_1y", "reserved_3y", "owned")
Precision = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4", "fp4", "int8-weight-only"]
Framework = Literal["pytorch", "jax", "neuron"]

_DURATION_UNITS_S = {"s": 1.0, "sec": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "min": 60.0}
_DURATION_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([a-zµ]+)\s*$")


def parse_duration_s(text: object) -> float:
    """Parse a latency such as ``"50 ms"`` or ``"1 s"`` into seconds.

    A bare number is refused: an SLO without a unit is ambiguous (ms or s?).
    """
    if isinstance(text, bool) or not isinstance(text, str):
        raise ValueError(f"{text!r} has no unit; write it with one, e.g. '50 ms' or '1 s'")
    match = _DURATION_RE.match(text)
    if not match or match.group(2) not in _DURATION_UNITS_S:
        raise ValueError(f"{text!r} is not a duration; write e.g. '50 ms' or '1 s'")
    value_s = float(match.group(1)) * _DURATION_UNITS_S[match.group(2)]
    if value_s <= 0:
        raise ValueError(f"{text!r} must be positive")
    return value_s


class _Strict(BaseModel):
    # finite numbers only: .inf or .nan anywhere is refused with the field's name
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class ModelShape(_Strict):
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


#: how a ValueError raised by a validator separates what is wrong from its fix
FIX_SEPARATOR = "\nfix: "


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


class Period(_Strict):
    """A planning period (months)."""

    name: str
    months: float = Field(
        gt=0,
        description="Length of the period, months (calendar months from "
        "start with their real hours; 730 h each when the problem has no start)",
    )


class LoadBlock(_Strict):
    """A block of hours within each day with its own demand level."""

    name: str
    hours_per_day: float = Field(gt=0, le=24, description="Hours per day in this block")
    demand_factor: float | None = Field(
        None,
        ge=0,
        description="Demand as a multiple of the daily average; omitted = each "
        "workload's peak_to_average",
    )


class ProfileBlock(_Strict):
    """A named block of whole hours in a daily load profile."""

    name: str
    hours_per_day: int = Field(gt=0, le=24, description="Whole hours per day in this block")
    factor: float = Field(
        ge=0,
        allow_inf_nan=False,
        description="Demand relative to the daily average (the blocks are rescaled so "
        "their hour-weighted mean is 1)",
    )


class LoadProfile(_Strict):
    """A daily load curve: 24 hourly factors, or named blocks (exactly one).

    Factors are relative to the daily average and are normalised so that their
    (hour-weighted) mean is 1; the workload's demand gives the average.
    """

    hourly: list[Annotated[float, Field(ge=0, allow_inf_nan=False)]] | None = Field(
        None,
        description="24 demand factors, hour 0 to 23 (normalised so their mean is 1)",
    )
    blocks: list[ProfileBlock] | None = Field(
        None,
        description="Named blocks of whole hours covering 24 h, each with a factor "
        "(normalised so the hour-weighted mean is 1)",
    )

    @model_validator(mode="after")
    def _valid(self) -> LoadProfile:
        if (self.hourly is None) == (self.blocks is None):
            raise ValueError("load_profile needs exactly one of 'hourly' (24 factors) or 'blocks'")
        if self.hourly is not None:
            if len(self.hourly) != 24:
                raise ValueError(
                    f"load_profile.hourly has {len(self.hourly)} values; give 24, one per "
                    "hour from 0 to 23"
                )
            if not any(f > 0 for f in self.hourly):
                raise ValueError("load_profile.hourly is all zeros; give at least one factor > 0")
        if self.blocks is not None:
            hours = sum(b.hours_per_day for b in self.blocks)
            if hours != 24:
                raise ValueError(f"load_profile.blocks cover {hours} h/day; they must cover 24")
            names = [b.name for b in self.blocks]
            if len(set(names)) != len(names):
                raise ValueError(f"load_profile.blocks names must be unique: {names}")
            if not any(b.factor > 0 for b in self.blocks):
                raise ValueError("load_profile.blocks factors are all zero; give one > 0")
        return self


class Demand(_Strict):
    """Inference demand: users x requests, or tokens/s, or requests/s (exactly one)."""

    users: float | None = Field(None, gt=0, description="Daily active users")
    requests_per_user_per_day: float | None = Field(None, gt=0)
    tokens_per_s: float | None = Field(None, gt=0, description="Average output tokens/s")
    requests_per_s: float | None = Field(None, gt=0, description="Average requests/s")

    @model_validator(mode="after")
    def _one_way(self) -> Demand:
        ways = [
            self.users is not None or self.requests_per_user_per_day is not None,
            self.tokens_per_s is not None,
            self.requests_per_s is not None,
        ]
        if sum(ways) != 1:
            raise ValueError(
                "give exactly one of: users + requests_per_user_per_day, tokens_per_s, "
                "requests_per_s"
            )
        if ways[0] and (self.users is None or self.requests_per_user_per_day is None):
            raise ValueError("users and requests_per_user_per_day go together; give both")
        return self


class TrafficBucket(_Strict):
    """One request-size bucket of a traffic mix."""

    prompt_tokens: int = Field(gt=0, description="Representative prompt length, tokens")
    output_tokens: int = Field(gt=0, description="Representative output length, tokens")
    share: float = Field(ge=0, le=1, description="Fraction of requests in this bucket")


Runtime = Literal["vllm-cuda", "tensorrt-llm", "vllm-rocm", "neuron", "gaudi", "tpu", "jetstream"]
RUNTIME_HELP = (
    "Serving runtime (efficiencies and batch limit per runtime, solver/physics/constants.py); "
    "it runs on its own vendor's hardware only, so the others are left out: vllm-cuda and "
    "tensorrt-llm NVIDIA, vllm-rocm AMD, neuron AWS Trainium/Inferentia, gaudi Intel Gaudi, "
    "tpu Google TPU. Default: vLLM on each vendor's stack, every vendor allowed"
)

# Accelerator and vendor lists (issue 28): names as the catalog writes them, checked
# against it when the problem is compiled (solver.inputs.hardware).
HardwareName = Annotated[str, Field(min_length=1, max_length=64)]
AcceleratorList = Annotated[list[HardwareName], Field(min_length=1)]
VendorList = Annotated[list[HardwareName], Field(min_length=1)]
ACCELERATORS_HELP = (
    "Only these accelerator types: ids or aliases as `procure catalog list accelerators` "
    "shows them (h100 is h100-sxm, the SXM5 part; name h100-pcie or h100-nvl too for those); "
    "owned servers count by their accelerator. Default: every accelerator"
)
VENDORS_HELP = (
    "Only accelerators of these vendors (catalogs/accelerators.csv vendor: nvidia, amd, "
    "intel, aws, google). Default: every vendor"
)
EXCLUDE_ACCELERATORS_HELP = "Never these accelerator types (ids or aliases)"
EXCLUDE_VENDORS_HELP = "Never accelerators of these vendors (nvidia, amd, intel, aws, google)"


Tier = Literal["marketplace", "neocloud", "hyperscaler"]

#: The tier floor of online inference without a ``min_tier``: datacenter hosts (providers
#: running their own or Tier III partner datacenters, catalogs/providers.csv), not
#: marketplace hosts, which carry no SLA (issue 28: a production assistant was served
#: from individual hosts' RTX 4090s).
DEFAULT_SERVING_TIER = "neocloud"
#: Price confidence levels, weakest first (solver/inputs/provenance.py).
PriceConfidence = Literal["unverified", "third_party", "list", "quote"]
# The MFU a training cluster is sized at (issue 28 part 5): the low end of the published
# band by default, so a plan's training job meets its deadline even if it runs as slowly
# as the slowest published run of its accelerator family (solver/physics/constants.py
# TRAINING_MFU; solver.physics.training.planning_mfu).
TrainingMargin = Literal["low", "point"] | Annotated[float, Field(gt=0, le=1)]
DEFAULT_TRAINING_MARGIN: Final = "low"
TRAINING_MARGIN_HELP = (
    "The MFU a training cluster is sized at. 'low' (default): the low end of the band of "
    "published runs of its accelerator family (solver/physics/constants.py TRAINING_MFU), "
    "so the job meets its deadline even if it runs as slowly as the slowest of them; "
    "'point': the published point figure; or a number in (0, 1]: that fraction of the "
    "point figure (e.g. 0.9). A workload's own mfu has no band: 'low' and 'point' take it "
    "as given"
)


def check_training_margin(value: object) -> object:
    """A ``training_margin`` as given, refused with one message naming the values it takes."""
    if value is None or value in ("low", "point"):
        return value
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if number is not None and math.isfinite(number) and 0 < number <= 1:
        return float(number)
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
    raise ValueError(
        f"training_margin is {shown}; write 'low' (the default: size the cluster at the low "
        "end of the published MFU band), 'point' (at the published figure) or a number in "
        "(0, 1] (that fraction of the published figure, e.g. 0.9)"
    )


def check_kv_precision(value: object) -> object:
    """A ``kv_precision`` as given; a weight-only name (int8-weight-only) is refused with
    one message: it says how weights multiply, and a KV cache is stored, not multiplied."""
    if value in WEIGHT_ONLY_PRECISIONS:
        raise ValueError(
            f"kv_precision is {value!r}, a weight-only format (int8 weights multiplied in "
            "bf16); write the KV cache's storage format instead: 'int8' for an int8 KV "
            "cache, 'fp8' or 'bf16'"
        )
    return value


class _WorkloadBase(_Strict):
    name: str = Field(description="Unique workload name")
    model: str | ModelShape = Field(description="A preset id (see catalogs/models.csv) or a shape")
    framework: Framework = "pytorch"
    providers: list[str] | None = Field(
        None, description="Restrict to these cloud providers (owned servers: see modes)"
    )
    regions: list[str] | None = Field(None, description="Restrict to these regions")
    residency: list[str] | None = Field(None, description="Allowed residency zones (us, eu, ...)")
    min_tier: Tier | None = Field(
        None,
        description="Lowest provider tier allowed (marketplace < neocloud < hyperscaler; "
        "see catalogs/providers.csv); owned servers always qualify. Online inference without "
        "one (here or on the problem) is served from datacenter hosts, neocloud and up: "
        "write min_tier: marketplace to allow marketplace hosts (no SLA)",
    )
    require_ecc: bool = False

    def tier_floor(self, problem_min_tier: str | None) -> str | None:
        """The lowest tier this workload may use beside the problem's: its own
        ``min_tier``; for an online service with neither, ``neocloud`` (a production
        service needs datacenter hosts; marketplaces are an explicit opt-in)."""
        if self.min_tier is not None:
            return self.min_tier
        if isinstance(self, InferenceWorkload) and problem_min_tier is None:
            return DEFAULT_SERVING_TIER
        return None

    accelerators: AcceleratorList | None = Field(
        None, description=ACCELERATORS_HELP + "; narrows the problem's list (within it)"
    )
    vendors: VendorList | None = Field(
        None, description=VENDORS_HELP + "; narrows the problem's list (within it)"
    )
    exclude_accelerators: list[HardwareName] = Field(
        default_factory=list, description=EXCLUDE_ACCELERATORS_HELP + ", besides the problem's"
    )
    exclude_vendors: list[HardwareName] = Field(
        default_factory=list, description=EXCLUDE_VENDORS_HELP + ", besides the problem's"
    )


class TrainingWorkload(_WorkloadBase):
    """Train (or fine-tune) a model on a number of tokens within a window."""

    kind: Literal["training"]
    tokens: float = Field(gt=0, description="Training tokens")
    precision: Literal["bf16", "fp16", "fp8"] = "bf16"
    optimizer: Literal["adamw", "sgd", "lora", "qlora"] = "adamw"
    seq_len: int = Field(4096, gt=0, description="Sequence length, tokens")
    micro_batch: int = Field(1, gt=0, description="Sequences per device per step")
    recompute: Literal["none", "selective", "full"] = Field(
        "selective",
        description="Activation recomputation: selective (default; Korthikanti et al. 2022, "
        "no extra FLOPs), full (one more forward pass: x4/3 FLOPs, least memory) or none",
    )
    start_period: str | None = Field(None, description="First period the job may run in")
    end_period: str | None = Field(None, description="Last period the job must finish in")
    deadline_days: float | None = Field(None, gt=0, description="Wall-clock limit, days")
    mfu: float | None = Field(
        None,
        gt=0,
        le=1,
        description="Model FLOPs utilisation override (your own measurement, taken at the "
        "job's scale; it has no band, so training_margin low and point both use it)",
    )
    training_margin: TrainingMargin | None = Field(
        None, description=TRAINING_MARGIN_HELP + ". Default: the problem's training_margin"
    )
    interruptible: bool = Field(False, description="Spot capacity allowed (checkpoint/restart)")
    max_accelerators: int | None = Field(None, gt=0, description="Largest cluster to consider")

    @field_validator("training_margin", mode="before")
    @classmethod
    def _margin(cls, value: object) -> object:
        return check_training_margin(value)


class InferenceWorkload(_WorkloadBase):
    """Serve a model online to a demand within latency SLOs."""

    kind: Literal["inference"]
    weight_precision: Precision = "bf16"
    kv_precision: Precision = "bf16"

    @field_validator("kv_precision", mode="before")
    @classmethod
    def _kv_precision(cls, value: object) -> object:
        return check_kv_precision(value)

    runtime: Runtime | None = Field(None, description=RUNTIME_HELP)
    demand: Demand
    prompt_tokens: int = Field(gt=0)
    output_tokens: int = Field(gt=0)
    ttft_slo: str = Field(description="Time to first token SLO with unit, e.g. '1 s'")
    tpot_slo: str = Field(description="Time per output token SLO with unit, e.g. '50 ms'")
    slo_percentile: float | None = Field(
        None,
        ge=0.5,
        lt=1,
        description="Check ttft_slo and tpot_slo at this percentile of requests (0.9 = p90, "
        "0.99 = p99) under Poisson arrivals at max_utilisation (M/G/infinity decode slots, "
        "M/D/1 prefill queue; solver/physics/inference.py), not at the mean. Default: the mean",
    )
    peak_to_average: float = Field(
        1.0,
        ge=1,
        description="Peak demand / average demand; without a load_profile it shapes the "
        "default day (24 hourly factors, max = this, mean 1; solver/load.py)",
    )
    load_profile: LoadProfile | None = Field(
        None,
        description="This workload's daily load curve (wins over the problem's): "
        "{hourly: [24 factors]} or {blocks: [{name, hours_per_day, factor}]}",
    )
    periods: list[str] | None = Field(
        None, min_length=1, description="Periods served (at least one); default all"
    )
    demand_by_period: dict[str, Annotated[float, Field(gt=0, le=1e3)]] = Field(
        default_factory=dict,
        description="Demand in a named period as a multiple of ``demand`` (growth: "
        "{y2: 1.5, y3: 2}); periods not named keep 1",
    )
    max_utilisation: float = Field(
        DEFAULT_MAX_UTILISATION,
        gt=0,
        le=1,
        description="Highest fraction of serving capacity (tokens/s or requests/s) in use at "
        "peak: capacity >= peak demand x (1 + demand_headroom) / max_utilisation. Default 0.8, "
        "the utilisation target a capacity planner keeps (Compute Engine's load-balancing "
        "autoscaler default); 1 plans capacity to run flat out at peak",
    )
    redundancy: int | Literal["n_plus_1"] = Field(
        1,
        description="Either a whole number >= 1: at least this many serving units at all "
        "times; or 'n_plus_1': in every period and load block, serving capacity with its "
        "largest unit lost still meets peak demand / max_utilisation",
    )
    min_units: int | None = Field(
        None,
        ge=1,
        description="At least this many serving units at all times, for use with "
        "redundancy: n_plus_1 (redundancy: <n> alone means the same as min_units: <n>)",
    )
    interruptible: bool = Field(False, description="Spot capacity allowed")
    survive_loss_of: list[Literal["region", "provider"]] = Field(
        default_factory=list,
        description="Failure domains the service must survive: with any one region "
        "(an owned site counts as a region) or any one provider (all owned sites count as "
        "one, 'owned') lost, the capacity left still meets the block's peak demand / "
        "max_utilisation, in every period and load block. [] (default): no such rule "
        "(redundancy and N+1 are about units)",
    )
    max_region_share: float | None = Field(
        None,
        gt=0,
        le=1,
        description="Most of the workload's serving capacity (tokens/s) in one region, as a "
        "fraction, in every period and load block",
    )
    max_provider_share: float | None = Field(
        None,
        gt=0,
        le=1,
        description="Most of the workload's serving capacity (tokens/s) at one provider, as a "
        "fraction, in every period and load block",
    )
    fleet: Literal["per_block", "autoscale", "flat"] = Field(
        "autoscale",
        description="How rented serving units may change over the day. 'autoscale' "
        "(default): the workload deploys a set of offerings for each period and adds and "
        "removes units of those offerings between load blocks (every deployed offering "
        "runs at least one unit all day: no hardware, provider or region swapped within a "
        "day); 'flat': the same units all day; 'per_block' (opt-in): each load block "
        "chooses its own offerings (the cheapest; hardware, provider and region may change "
        "between blocks, so the fleet may be swapped twice a day)",
    )
    switching_cost_usd: float = Field(
        0.0,
        ge=0,
        description="USD per rented serving unit started within the day: each unit of an "
        "offering added from one load block to the next, every day of every period (an "
        "offering swapped in under 'per_block', a unit added for the peak under "
        "'autoscale'). Charged in the objective, not in the plan's cost or budget (as "
        "resolve's --switching-cost-usd); the plan gives it as switching_penalty_usd. "
        "Default 0: starts are free",
    )
    allow_tensor_parallel_over_pcie: bool = False
    traffic_mix: list[TrafficBucket] | None = None
    measured_throughput_rps: dict[str, list[float]] | None = Field(
        None,
        description="Per accelerator: requests/s ONE accelerator sustains per traffic-mix bucket "
        "at the SLO (e.g. vLLM measurements); replaces the physics estimate",
    )

    @field_validator("ttft_slo", "tpot_slo", mode="before")
    @classmethod
    def _has_unit(cls, value: object) -> str:
        parse_duration_s(value)
        return value  # type: ignore[return-value]

    @field_validator("redundancy", mode="before")
    @classmethod
    def _redundancy_kind(cls, value: object) -> object:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        whole = isinstance(value, int) and not isinstance(value, bool) and value >= 1
        if whole or value == "n_plus_1":
            return value
        raise ValueError(
            f"redundancy is {value!r}; give a whole number of serving units >= 1 (e.g. 2) "
            "or 'n_plus_1' (capacity with the largest unit lost still meets peak)"
        )

    @property
    def min_serving_units(self) -> int:
        """Fewest serving units in every period and block (``min_units`` or ``redundancy: n``)."""
        if self.min_units is not None:
            return self.min_units
        return self.redundancy if isinstance(self.redundancy, int) else 1

    @property
    def domains(self) -> bool:
        """Whether a failure-domain or capacity-share rule holds (:func:`add_failure_domains`)."""
        return bool(self.survive_loss_of) or (
            self.max_region_share is not None or self.max_provider_share is not None
        )

    @property
    def n_plus_1(self) -> bool:
        """Serving capacity must survive the loss of its largest unit."""
        return self.redundancy == "n_plus_1"

    @property
    def ttft_slo_s(self) -> float:
        return parse_duration_s(self.ttft_slo)

    @property
    def load_percentile(self) -> LoadPercentile | None:
        """The SLO percentile and the planned utilisation (physics.LoadPercentile), or None
        when the SLOs are checked at the mean."""
        if self.slo_percentile is None:
            return None
        return LoadPercentile(p=self.slo_percentile, rho=self.max_utilisation)

    @property
    def tpot_slo_s(self) -> float:
        return parse_duration_s(self.tpot_slo)

    @model_validator(mode="after")
    def _mix(self) -> InferenceWorkload:
        if self.min_units is not None and isinstance(self.redundancy, int) and self.redundancy > 1:
            raise ValueError(
                f"redundancy: {self.redundancy} and min_units: {self.min_units} both set the "
                "fewest serving units; keep min_units and set redundancy to 1 or 'n_plus_1'"
            )
        if self.traffic_mix is not None:
            total = sum(b.share for b in self.traffic_mix)
            if abs(total - 1.0) > MIX_SHARE_TOLERANCE:
                effect = (
                    f"{(1.0 - total) * 100:.4g}% of the demand would go unserved"
                    if total < 1.0
                    else f"{(total - 1.0) * 100:.4g}% more demand than given would be planned"
                )
                raise ValueError(
                    f"traffic_mix shares sum to {total:.9g}, not 1 (within "
                    f"{MIX_SHARE_TOLERANCE:g}): {effect}; correct the shares so they sum to 1 "
                    f"(e.g. change the largest bucket's share by {1.0 - total:+.9g})"
                )
        if self.measured_throughput_rps is not None:
            if self.traffic_mix is None:
                raise ValueError("measured_throughput_rps needs a traffic_mix to refer to")
            for acc, values in self.measured_throughput_rps.items():
                if len(values) != len(self.traffic_mix):
                    raise ValueError(
                        f"measured_throughput_rps[{acc}] has {len(values)} values; "
                        f"traffic_mix has {len(self.traffic_mix)} buckets"
                    )
                if any(v < 0 for v in values):
                    raise ValueError(f"measured_throughput_rps[{acc}] has a negative value")
        return self


class BatchInferenceWorkload(_WorkloadBase):
    """Generate a number of tokens offline before a deadline (no latency SLO)."""

    kind: Literal["batch_inference"]
    weight_precision: Precision = "bf16"
    kv_precision: Precision = "bf16"

    @field_validator("kv_precision", mode="before")
    @classmethod
    def _kv_precision(cls, value: object) -> object:
        return check_kv_precision(value)

    runtime: Runtime | None = Field(None, description=RUNTIME_HELP)
    output_tokens_total: float = Field(gt=0, description="Output tokens to generate")
    prompt_tokens: int = Field(gt=0, description="Prompt length per request, tokens")
    output_tokens: int = Field(gt=0, description="Output length per request, tokens")
    periods: list[str] | None = Field(
        None, min_length=1, description="Periods the job runs in (at least one); default all"
    )
    interruptible: bool = True
    allow_tensor_parallel_over_pcie: bool = False


Workload = Annotated[
    TrainingWorkload | InferenceWorkload | BatchInferenceWorkload, Field(discriminator="kind")
]


class ExistingServer(_Strict):
    """Servers already owned at the start of the horizon."""

    server: str
    site: str
    units: int = Field(gt=0)


SITE_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"


class Site(_Strict):
    """A site of the problem's own (a server room, a data centre, a colocation cage): it
    joins the catalog's sites for this problem, and ``existing_fleet`` may name it.

    The grid, residency zone and power price come from ``region`` (a catalog cloud region
    on the same grid) unless given; without a region all three are required.
    """

    name: str = Field(
        pattern=SITE_NAME_PATTERN,
        description="The site's id (letters, digits, '.', '_', '-'), as existing_fleet[].site "
        "names it; not the id of a catalog site",
    )
    location: str | None = Field(
        None, max_length=200, description="Where it is, for people (e.g. 'Ashburn, VA')"
    )
    region: str | None = Field(
        None,
        description="A catalog region on the same grid, 'provider/region' (aws/us-east-1) or "
        "a region name one provider uses (`procure catalog list regions`): the site takes its "
        "country, residency zone, grid intensity and electricity price unless given here",
    )
    country: str | None = Field(None, max_length=64, description="Country code, e.g. US")
    residency_zone: str | None = Field(
        None, description="Residency zone for residency: (us, eu, ...); default the region's"
    )
    grid_gco2_per_kwh: float | None = Field(
        None, ge=0, le=2000, description="Grid carbon intensity, gCO2e/kWh; default the region's"
    )
    electricity_usd_per_kwh: float | None = Field(
        None, ge=0, le=10, description="Power price, USD/kWh; default the region's tariff"
    )
    pue: float = Field(
        ge=1,
        le=3,
        description="Power usage effectiveness of the room (facility kW / IT kW), e.g. 1.4; "
        "small rooms without containment run 1.8-2.5 (catalogs/SOURCES.md, ASSUMP_PUE)",
    )
    colocation_usd_per_kw_month: float | None = Field(
        None,
        ge=0,
        le=1e5,
        description="Colocation rent, USD per kW of a server's maximum power per month. "
        "Default 0: a room of your own, whose space is a sunk cost",
    )
    colocation_usd_per_rack_month: float | None = Field(
        None,
        ge=0,
        le=1e6,
        description="Or colocation rent per rack per month, with rack_power_kw: charged as "
        "colocation_usd_per_rack_month / rack_power_kw per kW-month",
    )
    rack_power_kw: float | None = Field(
        None, gt=0, le=1e3, description="Power one rack is sold with, kW (with the rack price)"
    )
    staff_usd_per_server_year: float | None = Field(
        None,
        ge=0,
        le=1e7,
        description="Staff per owned server per year, USD, flat whatever the fleet. Default: "
        "by the site's fleet size, 140 servers per administrator up to 1,000 servers, rising "
        "log-linearly to 1,000 per administrator at 50,000 (catalogs/SOURCES.md "
        "STAFF_BY_SIZE), at $135,262 per administrator-year",
    )
    staff_servers_per_admin: float | None = Field(
        None,
        gt=0,
        le=1e5,
        description="Servers one administrator looks after at this site, flat whatever the "
        "fleet (instead of the default by fleet size; e.g. 20 for varied hand-run boxes)",
    )
    staff_usd_per_admin_year: float | None = Field(
        None,
        ge=0,
        le=1e7,
        description="What one administrator costs a year, USD, salary and benefits. Default "
        "135,262: the BLS median pay $95,360 / 70.5% wage share (catalogs/SOURCES.md "
        "STAFF_LOADING)",
    )
    power_cap_kw: float | None = Field(
        None,
        gt=0,
        le=1e6,
        description="Most kW of servers (their maximum power) the site holds. Default: the "
        "servers already there (existing_fleet), so none can be added until it is given",
    )
    source: str = Field("", max_length=500, description="Where the site's figures come from")

    @model_validator(mode="after")
    def _complete(self) -> Site:
        if self.region is None:
            missing = [
                f
                for f in ("residency_zone", "grid_gco2_per_kwh", "electricity_usd_per_kwh")
                if getattr(self, f) is None
            ]
            if missing:
                raise ValueError(
                    f"site {self.name!r} has no region, so it needs {', '.join(missing)}; give "
                    "them, or a catalog region on the same grid (e.g. region: aws/us-east-1)"
                )
        if self.colocation_usd_per_rack_month is not None:
            if self.colocation_usd_per_kw_month is not None:
                raise ValueError(
                    f"site {self.name!r} gives colocation both per kW and per rack; keep one"
                )
            if self.rack_power_kw is None:
                raise ValueError(
                    f"site {self.name!r}: colocation_usd_per_rack_month needs rack_power_kw "
                    "(the kW a rack is sold with), to charge rent per kW of each server"
                )
        elif self.rack_power_kw is not None:
            raise ValueError(
                f"site {self.name!r}: rack_power_kw goes with colocation_usd_per_rack_month; "
                "give the rack price too, or remove rack_power_kw"
            )
        if self.staff_usd_per_server_year is not None and (
            self.staff_servers_per_admin is not None or self.staff_usd_per_admin_year is not None
        ):
            raise ValueError(
                f"site {self.name!r} gives staff_usd_per_server_year (a flat figure per server) "
                "and staff_servers_per_admin or staff_usd_per_admin_year; keep "
                "staff_usd_per_server_year alone, or the ratio and the salary"
            )
        return self

    @property
    def colocation_usd_per_kw_month_charged(self) -> float:
        """Colocation rent per kW-month: as given, from the rack price, or 0 (own room)."""
        if self.colocation_usd_per_rack_month is not None and self.rack_power_kw:
            return self.colocation_usd_per_rack_month / self.rack_power_kw
        return self.colocation_usd_per_kw_month or 0.0


def _site_entry_kind(value: object) -> str:
    """A ``sites:`` entry is a catalog site's id (a string) or a site described in full."""
    return "site" if isinstance(value, dict | Site) else "site_id"


SiteEntry = Annotated[
    Annotated[str, Tag("site_id")] | Annotated[Site, Tag("site")],
    Discriminator(_site_entry_kind),
]


class ExistingReservation(_Strict):
    """A reservation already paid for, still running at the start of the horizon."""

    offering: str
    mode: Literal["reserved_1y", "reserved_3y"]
    units: int = Field(gt=0)
    months_remaining: float = Field(gt=0)


class SavingsPlan(_Strict):
    """A spend-based commitment the plan may buy (a savings plan, issue 29 part 3).

    ``usd_per_hour`` committed for the term is paid every hour of it, used or not; in each
    hour it pays for covered usage at the plan's rate of each offering (``rates``) up to
    the commitment, and the rest is billed on demand. The solver chooses the commitment
    (0 when none pays); ``max_usd_per_hour`` limits it. The rates come from the
    provider's price files (solver/inputs/importers: AWS Savings Plans offer files,
    Azure Retail Prices ``savingsPlan`` arrays, GCP Cloud Billing SKUs).
    """

    provider: str = Field(description="The provider selling the plan (catalogs/providers.csv)")
    term: Literal["1y", "3y"] = Field(description="1y (12 months) or 3y (36 months)")
    rates: dict[str, Annotated[float, Field(gt=0)]] = Field(
        min_length=1,
        description="offering_id -> USD per instance-hour under the plan (below its on-demand "
        "price); usage of other offerings is not covered",
    )
    max_usd_per_hour: float | None = Field(
        None, ge=0, description="Most USD per hour the plan may commit (default: no limit)"
    )
    source: str = Field(
        "", description="Where the rates come from (a price file, its URL and date)"
    )
    price_date: str = Field(
        "unknown", description="When the rates were read: YYYY-MM-DD, or unknown"
    )
    confidence: Literal["unverified", "third_party", "list", "quote"] = Field(
        "unverified",
        description="How far the rates can be trusted (solver/inputs/provenance.py): list "
        "when read from the provider's own price file (procure catalog commitments)",
    )

    @field_validator("price_date")
    @classmethod
    def _a_date(cls, text: str) -> str:
        if text != "unknown" and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            raise ValueError(f"price_date {text!r} is not YYYY-MM-DD or unknown")
        return text

    @property
    def term_months(self) -> float:
        """12 or 36."""
        return 12.0 if self.term == "1y" else 36.0


class Quota(_Strict):
    """A cap on cloud accelerators (rented and reserved) per provider, region, type."""

    provider: str
    region: str | None = None
    accelerator: str | None = None
    max_accelerators: int = Field(ge=0)


class PriceMultiplier(_Strict):
    """Rented prices in a scenario: on-demand and spot prices of the matching offerings
    times ``factor`` (commitments and purchases are signed now, at today's prices)."""

    provider: str | None = Field(None, description="Only this provider; default all")
    accelerator: str | None = Field(None, description="Only this accelerator; default all")
    mode: Literal["on_demand", "spot"] | None = Field(
        None, description="Only this rented mode; default both"
    )
    factor: float = Field(gt=0, le=1e3, description="Price multiplier, e.g. 1.2 for +20%")


class DemandMultiplier(_Strict):
    """Online demand in a scenario: the matching workloads' demand times ``factor``."""

    workload: str | None = Field(None, description="Only this online workload; default all")
    period: str | None = Field(None, description="Only this period; default all")
    factor: float = Field(gt=0, le=1e3, description="Demand multiplier, e.g. 0.8")


class CapacityScenario(_Strict):
    """Serving capacity in one throughput scenario (issue 33): every serving option's
    capacity per unit times ``factor``, or at the ``band_quantile`` of its own error band.

    A band quantile q scales each estimate by exp(z_q x band), band being the RMS log error
    of its source and runtime (solver/physics/constants.py CAPACITY_BAND_LOG: a measured
    profile 0.02, a physics estimate 0.18-0.31), so q = 0.1 keeps 0.975 of a measured figure
    and 0.77 of a TensorRT-LLM physics one: a measured profile is trusted more, as the
    accuracy table says it should be. Training options are not scaled.
    """

    factor: float | None = Field(
        None, gt=0, le=10, description="Capacity x factor (1/1.5: estimates 1.5x optimistic)"
    )
    band_quantile: float | None = Field(
        None, gt=0, lt=1, description="Or capacity at this quantile of each estimate's band"
    )

    @model_validator(mode="after")
    def _one_way(self) -> CapacityScenario:
        if (self.factor is None) == (self.band_quantile is None):
            raise ValueError("give either factor (e.g. 0.8) or band_quantile (e.g. 0.1)")
        return self

    def share(self, band_log: np.ndarray | float) -> np.ndarray:
        """Share of each capacity estimate that holds in this scenario, per ``band_log``."""
        band = np.asarray(band_log, dtype=float)
        if self.factor is not None:
            return np.full(band.shape, float(self.factor))
        quantile = cast(float, self.band_quantile)  # _one_way: set when factor is not
        return np.exp(NormalDist().inv_cdf(float(quantile)) * band)


class ThroughputScenario(CapacityScenario):
    """One throughput scenario of ``uncertainty.throughput_scenarios``, with its
    probability (combined with the price and demand scenarios as a product)."""

    name: str = Field(min_length=1, max_length=64)
    probability: float = Field(gt=0, le=1)


#: ``--throughput-scenarios band``: Swanson's 30-40-30 rule, the 10th, 50th and 90th
#: percentiles weighted 0.3, 0.4 and 0.3, which matches the mean and variance of a normal
#: (here ln(true / estimate); Hurst, Brown and Swanson, "Swanson's 30-40-30 rule", AAPG
#: Bulletin 84(12), 2000; derivation: G. Keith, "Swanson's Swansong", 2020,
#: https://graeme-47328.medium.com/swansons-swansong-569c932b3f68)
SWANSON_BAND_SCENARIOS: tuple[tuple[str, float, float], ...] = (
    ("band_p10", 0.1, 0.3),
    ("band_p50", 0.5, 0.4),
    ("band_p90", 0.9, 0.3),
)


def throughput_scenarios_from_text(text: str) -> list[ThroughputScenario]:
    """``--throughput-scenarios``: ``F:P,...`` (capacity factor F with probability P),
    ``qQ:P,...`` (band quantile Q), or ``band`` (SWANSON_BAND_SCENARIOS).

    Raises
    ------
    ProcureError
        A part that is not a number pair, a factor <= 0, a probability outside (0, 1], or
        probabilities that do not add up to 1.
    """
    field, fix = (
        "--throughput-scenarios",
        (
            "write factor:probability pairs, e.g. 1:0.6,0.8:0.3,0.6667:0.1 (capacity x 1, x 0.8 "
            "and x 0.6667), qQ:P for a band quantile (q0.1:0.3,q0.5:0.4,q0.9:0.3), or band"
        ),
    )
    if text.strip().lower() == "band":
        return [
            ThroughputScenario(name=n, band_quantile=q, probability=p)
            for n, q, p in SWANSON_BAND_SCENARIOS
        ]
    out = []
    for part in [x.strip() for x in text.split(",") if x.strip()]:
        value, _, prob = part.partition(":")
        quantile = value.lower().startswith("q")
        try:
            v, p = float(value[1:] if quantile else value), float(prob)
        except ValueError:
            raise ProcureError(f"{part!r} is not value:probability", field=field, fix=fix) from None
        if not (0 < p <= 1) or not math.isfinite(v) or v <= 0 or (quantile and v >= 1):
            what = "band quantile" if quantile else "factor"
            raise ProcureError(
                f"{part!r}: the {what} must be above 0"
                + (" and below 1" if quantile else "")
                + " and the probability in (0, 1]",
                field=field,
                fix=fix,
            )
        name = f"q{v:g}" if quantile else f"x{v:g}"
        kind = {"band_quantile": v} if quantile else {"factor": v}
        out.append(ThroughputScenario(name=name, probability=p, **kind))
    total = sum(s.probability for s in out)
    if not out or abs(total - 1.0) > 1e-6:
        raise ProcureError(
            f"the throughput scenarios' probabilities add up to {total:g}, not 1",
            field=field,
            fix="scale the probabilities so that they add up to 1",
        )
    if len({s.name for s in out}) != len(out):
        raise ProcureError("two throughput scenarios are the same", field=field, fix=fix)
    return out


class Scenario(_Strict):
    """One way the future may go, with its probability."""

    name: str = Field(min_length=1, max_length=64)
    probability: float = Field(gt=0, le=1)
    prices: list[PriceMultiplier] = Field(default_factory=list)
    demand: list[DemandMultiplier] = Field(default_factory=list)
    throughput: CapacityScenario | None = Field(
        None,
        description="Serving capacity in this scenario: {factor: 0.8} or {band_quantile: 0.1} "
        "(default: the estimates as they are)",
    )


class Risk(_Strict):
    """Risk aversion of a two-stage plan: minimise expected cost + weight x CVaR.

    CVaR at ``cvar_level`` (alpha) is the expected cost of the worst 1 - alpha of the
    scenarios by probability (Rockafellar and Uryasev, 2000).
    """

    cvar_level: float = Field(
        gt=0, lt=1, description="alpha in (0, 1): 0.9 averages the worst 10% of scenarios"
    )
    weight: float = Field(
        ge=0, le=1e3, description="USD of objective per USD of CVaR (0: expected cost only)"
    )


class Uncertainty(_Strict):
    """Scenarios for two-stage planning (solver/stochastic.py): given, or drawn."""

    scenarios: list[Scenario] | None = Field(
        None, min_length=1, description="Scenarios with probabilities summing to 1"
    )
    n_scenarios: int | None = Field(
        None, ge=1, le=1000, description="Or draw this many equally likely scenarios"
    )
    seed: int = Field(0, ge=0, description="Random seed of the drawn scenarios")
    price_sigma: float = Field(
        0.0,
        ge=0,
        le=2,
        description="Drawn: each provider's rented prices x exp(N(0, sigma)) (lognormal)",
    )
    demand_range: tuple[
        Annotated[float, Field(gt=0, le=1e3)], Annotated[float, Field(gt=0, le=1e3)]
    ] = Field((1.0, 1.0), description="Drawn: online demand x uniform(low, high)")
    caps: Literal["every_scenario", "expectation"] = Field(
        "every_scenario",
        description="Budget and carbon cap hold in every scenario, or in expectation",
    )
    max_scenario_cost_usd: float | None = Field(
        None, gt=0, le=MAX_MAGNITUDE, description="Cap on any one scenario's cost (worst case)"
    )
    risk: Risk | None = Field(
        None,
        description="Minimise expected cost + weight x CVaR at cvar_level instead of the "
        "expected cost (e.g. {cvar_level: 0.9, weight: 0.5})",
    )

    throughput_scenarios: list[ThroughputScenario] | None = Field(
        None,
        min_length=1,
        description="Scenarios of serving capacity (issue 33), probabilities summing to 1, "
        "e.g. [{name: as_estimated, factor: 1, probability: 0.6}, {name: optimistic_1.5, "
        "factor: 0.6667, probability: 0.1}, ...] or {band_quantile: 0.1}: combined with the "
        "price and demand scenarios as a product (independent), or alone",
    )

    @model_validator(mode="after")
    def _one_source(self) -> Uncertainty:
        if self.scenarios is not None and self.n_scenarios is not None:
            raise ValueError("give either scenarios (a list) or n_scenarios (to draw them)")
        if self.scenarios is None and self.n_scenarios is None and not self.throughput_scenarios:
            raise ValueError(
                "give scenarios (a list), n_scenarios (to draw them) or throughput_scenarios"
            )
        if self.throughput_scenarios is not None:
            total = sum(s.probability for s in self.throughput_scenarios)
            if abs(total - 1.0) > 1e-6:
                raise ValueError(
                    f"throughput_scenarios probabilities add up to {total:g}, not 1; scale "
                    "them so they do"
                )
            names = [s.name for s in self.throughput_scenarios]
            if len(set(names)) != len(names):
                raise ValueError("throughput_scenarios names must be unique")
        if self.scenarios is not None:
            total = sum(s.probability for s in self.scenarios)
            if abs(total - 1.0) > 1e-6:
                raise ValueError(
                    f"scenario probabilities add up to {total:g}, not 1; scale them so they do"
                )
            names = [s.name for s in self.scenarios]
            if len(set(names)) != len(names):
                raise ValueError("scenario names must be unique")
        low, high = self.demand_range
        if low > high:
            raise ValueError(f"demand_range low {low:g} is above high {high:g}")
        return self


class Problem(_Strict):
    """A procurement question: workloads and the constraints around them."""

    name: str
    description: str = ""
    horizon_months: float = Field(
        gt=0, le=MAX_HORIZON_MONTHS, description="Planning horizon, months (at most 50 years)"
    )
    start: date | None = Field(
        None,
        description="First day of the plan (YYYY-MM for the first of a month, or YYYY-MM-DD): "
        "dates the cash flow, orders and FOCUS rows. Default: the first of next month",
    )
    periods: list[Period] | None = Field(None, description="Default: one period of the horizon")
    load_blocks: list[LoadBlock] | None = Field(
        None,
        description="Explicit model blocks (older form; wins over the derived ones). Default: "
        "blocks derived from each workload's daily load curve (load_profile)",
    )
    load_profile: LoadProfile | None = Field(
        None,
        description="Daily load curve for every online workload without its own: "
        "{hourly: [24 factors]} or {blocks: [{name, hours_per_day, factor}]}. Default: a "
        "diurnal shape from each workload's peak_to_average (solver/load.py)",
    )
    budget_usd: float | None = Field(None, gt=0, description="Total spend cap, USD")
    capex_budget_usd: float | None = Field(None, ge=0, description="Cap on purchases, USD")
    period_budget_usd: dict[str, NonNegative] = Field(default_factory=dict)
    carbon_cap_tco2e: float | None = Field(None, gt=0, description="Total CO2e cap, tonnes")
    objective: Literal[
        "min_cost", "min_carbon", "max_served", "cost_plus_carbon", "lexicographic", "min_npv"
    ] = Field(
        "min_cost",
        description="What the plan minimises (or maximises): min_cost (default), min_carbon "
        "within the budget, max_served within the budget, cost_plus_carbon at "
        "carbon_price_usd_per_tco2e, lexicographic (cost, then carbon) or min_npv",
    )
    carbon_price_usd_per_tco2e: float = Field(0.0, ge=0, description="For cost_plus_carbon")
    shortfall_penalty_usd_per_mtoken: float = Field(
        1000.0, gt=0, description="Penalty per 1M unserved output tokens (max_served)"
    )
    lexicographic_cost_tolerance: float = Field(
        0.0, ge=0, description="Cost slack for carbon stage"
    )
    providers: list[str] | None = Field(
        None,
        description="Allowed cloud providers; default all (owned servers are allowed by modes)",
    )
    regions: list[str] | None = Field(None, description="Allowed regions; default all")
    residency: list[str] | None = Field(None, description="Allowed residency zones")
    min_tier: Tier | None = Field(
        None,
        description="Lowest provider tier for every workload (marketplace < neocloud < "
        "hyperscaler)",
    )
    accelerators: AcceleratorList | None = Field(
        None, description=ACCELERATORS_HELP + "; a workload's list narrows it"
    )
    vendors: VendorList | None = Field(
        None, description=VENDORS_HELP + "; a workload's list narrows it"
    )
    exclude_accelerators: list[HardwareName] = Field(
        default_factory=list, description=EXCLUDE_ACCELERATORS_HELP + ", for every workload"
    )
    exclude_vendors: list[HardwareName] = Field(
        default_factory=list, description=EXCLUDE_VENDORS_HELP + ", for every workload"
    )
    modes: list[Mode] = Field(
        default_factory=lambda: list(ALL_MODES),
        min_length=1,
        description="Purchase modes allowed (on_demand, spot, reserved_1y, reserved_3y, "
        "owned). Default: all five",
    )
    sites: list[SiteEntry] | None = Field(
        None,
        description="The sites owned servers may be in; default every catalog site. Each "
        "entry is a catalog site's id (colo-us-ashburn) or a site of your own described in "
        "full ({name, location, region, pue, electricity_usd_per_kwh, colocation, staff, "
        "power_cap_kw}), which existing_fleet may name. Listing only your own site keeps "
        "servers there; list catalog ids too to allow those",
    )
    currency: str = Field(
        "USD",
        description="ISO 4217 code the plan's totals are also given in (in_currency), at the "
        "catalog's latest rate (catalogs/exchange_rates.csv). Costs are computed in USD, and "
        "every *_usd figure of the problem (budget_usd, ...) is in USD",
    )
    quotes: str | None = Field(
        None,
        exclude=True,
        description="A vendor quotes file (CSV; docs/concepts/prices.md, Vendor quotes), "
        "relative to the problem file: negotiated prices of confidence quote, applied over the "
        "catalog. Not part of the problem's digest (the quoted prices are part of the catalog's)",
    )
    max_price_age_days: float | None = Field(
        None,
        gt=0,
        description="Oldest price a plan may rest on, in days from its date to the plan's "
        "start; a price of unknown date counts as too old",
    )
    min_price_confidence: PriceConfidence | None = Field(
        None,
        description="Weakest price a plan may rest on: unverified < third_party < list = "
        "quote (catalogs/SOURCES.md says which price is which)",
    )
    weak_price_policy: Literal["refuse", "exclude"] = Field(
        "refuse",
        description="What max_price_age_days and min_price_confidence do: refuse (solve over "
        "every price; a plan resting on a weaker or older one is refused, its lines named) or "
        "exclude (leave those prices out before solving; the plan says how many)",
    )
    owned_cost_policy: Literal["cash", "amortised"] = Field(
        "cash",
        description="cash: a server's capex counts when bought and a reservation's whole term "
        "is owed; amortised: straight-line over a server's life and a reservation's term, only "
        "the months before the horizon (the rest is shown as remaining liability)",
    )
    residual_value: Literal["none", "straight_line"] = Field(
        "none",
        description="Under the cash policy, credit at the horizon what a server bought inside "
        "it is still worth: none, or straight_line (capex x remaining life / life)",
    )
    discount_rate: float | None = Field(
        None,
        ge=0,
        lt=1,
        description="Annual discount rate for the plan's net present value (npv_usd) and the "
        "min_npv objective; e.g. 0.08",
    )
    costs: Costs | None = Field(
        None,
        description="Cost categories beside compute, each off until given: storage, egress, "
        "support, operations_staff, taxes, contingency_percent (solver/inputs/costs.py; "
        "docs/concepts/cost-categories.md)",
    )
    existing_fleet: list[ExistingServer] = Field(default_factory=list)
    existing_reservations: list[ExistingReservation] = Field(default_factory=list)
    provider_share_max: dict[str, Fraction] = Field(default_factory=dict)
    quotas: list[Quota] = Field(default_factory=list)
    savings_plans: list[SavingsPlan] = Field(
        default_factory=list,
        description="Spend-based commitments the plan may buy (savings plans): each a "
        "provider, a term, its rate per offering and an optional limit; none by default",
    )
    availability_caps: dict[str, Annotated[int, Field(ge=0)]] = Field(
        default_factory=dict, description="offering_id -> max instances (overrides the catalog)"
    )
    training_margin: TrainingMargin = Field(
        DEFAULT_TRAINING_MARGIN,
        description=TRAINING_MARGIN_HELP + "; a training workload's own training_margin wins",
    )
    demand_headroom: float = Field(0.0, ge=0, le=2, description="Extra capacity over demand")
    capacity_confidence: float | None = Field(
        None,
        ge=0.5,
        lt=1,
        description="Plan serving capacity that meets peak with this probability (e.g. 0.9): "
        "each capacity figure is derated by its error band's quantile, exp(-z x band), the "
        "band being the accuracy table's RMS log error for its source and runtime "
        "(solver/physics/constants.py CAPACITY_BAND_LOG). Default: the point estimate",
    )
    capacity_optimism: float = Field(
        1.0,
        ge=1,
        le=10,
        description="Plan as if every serving capacity estimate were this many times too high "
        "(1.5: capacity / 1.5), to see how the plan changes if estimates are optimistic. "
        "Default 1",
    )
    capacity_scenario: CapacityScenario | None = Field(
        None,
        description="Plan for one throughput scenario: serving capacity x factor, or at a "
        "quantile of each estimate's error band ({factor: 0.8} or {band_quantile: 0.1}). A "
        "two-stage plan sets it on each scenario's problem (uncertainty.throughput_scenarios). "
        "Default: the estimates as they are",
    )
    memory_headroom: float = Field(
        0.10,
        ge=0,
        lt=1,
        description="Fraction of each device's memory kept out of use: 1 - vLLM's "
        "gpu_memory_utilization (0.90 by default, so 0.10)",
    )
    workloads: list[Workload] = Field(min_length=1)
    uncertainty: Uncertainty | None = Field(
        None,
        description="Scenarios of prices and demand: solve plans commitments now and "
        "rentals per scenario (two-stage, solver/stochastic.py)",
    )

    @field_validator("currency", mode="before")
    @classmethod
    def _currency_code(cls, value: object) -> object:
        if isinstance(value, str) and re.fullmatch(r"[A-Za-z]{3}", value.strip()):
            return value.strip().upper()
        raise ValueError(f"currency {value!r} is not an ISO 4217 code; write e.g. USD or EUR")

    @field_validator("training_margin", mode="before")
    @classmethod
    def _margin(cls, value: object) -> object:
        if value is None:
            raise ValueError(
                "training_margin is empty; write 'low' (the default), 'point' or a number in "
                "(0, 1], or remove the key"
            )
        return check_training_margin(value)

    def workload(self, name: str) -> TrainingWorkload | InferenceWorkload | BatchInferenceWorkload:
        """The workload of that name.

        Raises
        ------
        KeyError
            No workload has it.
        """
        for w in self.workloads:
            if w.name == name:
                return w
        raise KeyError(name)

    def training_margin_of(self, workload: TrainingWorkload) -> str | float:
        """The margin a training workload is sized at: its own, else the problem's."""
        own = workload.training_margin
        return own if own is not None else self.training_margin

    @field_validator("start", mode="before")
    @classmethod
    def _month(cls, value: object) -> object:
        if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}", value.strip()):
            return value.strip() + "-01"  # a month means its first day
        return value

    @field_validator("savings_plans")
    @classmethod
    def _one_plan_per_term(cls, plans: list[SavingsPlan]) -> list[SavingsPlan]:
        seen = [(sp.provider, sp.term) for sp in plans]
        dupes = sorted({f"{p} {t}" for p, t in seen if seen.count((p, t)) > 1})
        if dupes:
            raise ValueError(
                f"savings_plans lists {', '.join(dupes)} more than once; give each provider "
                "and term once (merge their rates)"
            )
        return plans

    @field_validator("sites")
    @classmethod
    def _sites_once(cls, sites: list[str | Site] | None) -> list[str | Site] | None:
        own = [s.name for s in sites or [] if isinstance(s, Site)]
        repeated = sorted({n for n in own if own.count(n) > 1})
        if repeated:
            raise ValueError(f"sites describes {repeated} more than once; keep one of each")
        return sites

    @model_validator(mode="after")
    def _consistent(self) -> Problem:
        names = [w.name for w in self.workloads]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"workload names must be unique; repeated: {dupes}")
        if self.objective == "min_npv" and self.discount_rate is None:
            raise ValueError("objective min_npv needs a discount_rate (annual, e.g. 0.08)")
        total = sum(p.months for p in self.resolved_periods)
        if abs(total - self.horizon_months) > 1e-6:
            raise ValueError(
                f"periods add up to {total:g} months but horizon_months is {self.horizon_months:g}"
            )
        period_names = [p.name for p in self.resolved_periods]
        if len(set(period_names)) != len(period_names):
            raise ValueError("period names must be unique")
        if self.load_blocks is not None:
            hours = sum(b.hours_per_day for b in self.load_blocks)
            if abs(hours - 24.0) > 1e-6:
                raise ValueError(f"load_blocks cover {hours:g} h/day; they must cover 24")
            profiled = [w.name for w in self.workloads if getattr(w, "load_profile", None)]
            if self.load_profile is not None or profiled:
                where = "load_profile" if self.load_profile is not None else str(profiled)
                raise ValueError(
                    f"load_blocks and a load_profile ({where}) both shape the day; give one"
                )
        for key in self.period_budget_usd:
            if key not in period_names:
                raise ValueError(
                    f"period_budget_usd names period {key!r}; periods are {period_names}"
                )
        for w in self.workloads:
            refs: list[str | None] = []
            if isinstance(w, TrainingWorkload):
                refs = [w.start_period, w.end_period]
            elif w.periods is not None:
                refs = list(w.periods)
            refs += list(getattr(w, "demand_by_period", {}))
            for ref in refs:
                if ref is not None and ref not in period_names:
                    hint = closest(ref, period_names)
                    raise ValueError(
                        f"workload {w.name!r} names period {ref!r}, which is not in periods "
                        f"{period_names}" + (f" (did you mean {hint[0]!r}?)" if hint else "")
                    )
        self._check_scenario_names(period_names)
        u = self.uncertainty
        if self.capacity_scenario is not None and u is not None:
            if u.throughput_scenarios or any(x.throughput for x in u.scenarios or []):
                raise ValueError(
                    "capacity_scenario and throughput scenarios under uncertainty both set "
                    "the capacity: keep one of them"
                )
        if self.savings_plans and self.uncertainty is not None:
            raise ValueError(
                "savings_plans with uncertainty is not modelled yet (a two-stage plan "
                "commits reservations and purchases only); solve without uncertainty"
            )
        return self

    def _check_scenario_names(self, period_names: list[str]) -> None:
        """Scenario demand multipliers name online workloads and periods that exist."""
        if self.uncertainty is None or self.uncertainty.scenarios is None:
            return
        online = [w.name for w in self.workloads if isinstance(w, InferenceWorkload)]
        for s in self.uncertainty.scenarios:
            for d in s.demand:
                if d.workload is not None and d.workload not in online:
                    hint = closest(d.workload, online)
                    raise ValueError(
                        f"scenario {s.name!r} scales workload {d.workload!r}, which is not an "
                        f"online workload of the problem {online}"
                        + (f" (did you mean {hint[0]!r}?)" if hint else "")
                    )
                if d.period is not None and d.period not in period_names:
                    raise ValueError(
                        f"scenario {s.name!r} scales period {d.period!r}, which is not in "
                        f"periods {period_names}"
                    )

    @property
    def site_ids(self) -> list[str] | None:
        """Ids of the sites owned servers may be in (None: every catalog site)."""
        if self.sites is None:
            return None
        return [s if isinstance(s, str) else s.name for s in self.sites]

    @property
    def own_sites(self) -> list[Site]:
        """The sites this problem describes itself (they join the catalog's)."""
        return [s for s in self.sites or [] if isinstance(s, Site)]

    @property
    def resolved_periods(self) -> list[Period]:
        return self.periods or [Period(name="all", months=self.horizon_months)]

    @property
    def resolved_blocks(self) -> list[LoadBlock]:
        """Explicit load_blocks, else one 24 h block (the model's blocks: solver.load)."""
        return self.load_blocks or [LoadBlock(name="peak", hours_per_day=24.0)]


def _field_path(loc: tuple[object, ...], data: object) -> str:
    """Turn a pydantic location into ``workloads[1].tokens``, naming workloads by name."""
    parts: list[str] = []
    node = data
    for item in loc:
        if isinstance(item, int):
            label = f"[{item}]"
            if isinstance(node, list) and item < len(node) and isinstance(node[item], dict):
                wname = node[item].get("name")
                if wname:
                    label = f"[{item}] ({wname})"
            parts.append(label)
            node = node[item] if isinstance(node, list) and item < len(node) else None
        else:
            key = str(item)
            if key in {"training", "inference", "batch_inference"} and isinstance(node, dict):
                continue  # discriminator tag, not a field
            if key.startswith("function-") or key in {"str", "ModelShape", "site_id", "site"}:
                continue  # a union's branch, not a field
            node = node.get(item) if isinstance(node, dict) else None
            parts.append(("." if parts else "") + _shown_key(key))
    return "".join(parts) or "(top level)"


_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")


def _shown_key(key: str) -> str:
    """A key as it may be echoed: field names are, anything else (a line of some other
    file read as YAML, a secret) is not."""
    return key if _NAME_RE.match(key) else "<unrecognised key>"


def _models_in(annotation: object) -> list[type[BaseModel]]:
    """The pydantic models a field's type holds (through lists, unions, Annotated)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for arg in get_args(annotation):
        found += [m for m in _models_in(arg) if m not in found]
    return found


def _models_at(loc: tuple[object, ...]) -> list[type[BaseModel]]:
    """The models a key at ``loc`` (its last item) may belong to: a workload's kind tag
    picks its class; an unknown path gives none."""
    models: list[type[BaseModel]] = [Problem]
    for item in loc[:-1]:
        if isinstance(item, int):
            continue
        if isinstance(item, str) and item.startswith("function-") and item.endswith("]"):
            # a model with an "after" validator: "function-after[_check(), ModelShape]"
            item = item[:-1].rpartition(", ")[2]
        by_tag = [m for m in models if item in _kind_tags(m)]
        if by_tag:
            models = by_tag
            continue
        inner: list[type[BaseModel]] = []
        for model in models:
            info = model.model_fields.get(str(item))
            if info is not None:
                inner += [m for m in _models_in(info.annotation) if m not in inner]
        if inner:
            models = inner
        elif str(item) not in {"str", "site_id", "site", "ModelShape"} and not str(item).startswith(
            "function-"
        ):  # a model's after-validator wraps it: not a field
            return []
    return models


def _kind_tags(model: type[BaseModel]) -> tuple[object, ...]:
    """The values of a model's ``kind`` tag (a workload's class), or none."""
    info = model.model_fields.get("kind")
    return get_args(info.annotation) if info is not None else ()


def _fix_for(error: dict) -> str:
    kind = error.get("type", "")
    loc = error.get("loc", ())
    field = _shown_key(str(loc[-1])) if loc else ""
    if kind == "extra_forbidden":
        # a near name among the fields of the object the key is in, never the key itself
        # (a key of another object would send the user round in a loop)
        model_fields: set[str] = set()
        for cls in _models_at(tuple(loc)):
            model_fields |= set(cls.model_fields)
        hint = closest(field, model_fields - {field})
        return f"remove {field!r}" + (f" or rename it to {hint[0]!r}" if hint else "")
    if kind == "too_short" and field in ("periods", "modes", "workloads"):
        what = {
            "periods": "periods (or remove the key to mean all)",
            "modes": "modes (on_demand, spot, reserved_1y, reserved_3y, owned)",
            "workloads": "workloads",
        }
        return f"list at least one of the {what[field]}"
    if kind == "too_short" and field in ("accelerators", "vendors"):
        return f"list at least one of the {field}, or remove the key to allow every one"
    if field == "site_id":  # a sites: entry that is neither an id nor a mapping
        return (
            "write a catalog site's id (procure catalog list sites) or describe your own site "
            "as a mapping: {name: our-dc, region: aws/us-east-1, pue: 1.5}"
        )
    if kind == "string_pattern_mismatch" and field == "name":
        return "use letters, digits, '.', '_' or '-' only, no spaces (e.g. our-dc)"
    if field == "training_margin" and kind == "value_error":
        return "write training_margin: low (the default), point, or a number such as 0.9"
    if kind == "missing":
        return f"add the required field {field!r}"
    if kind == "union_tag_invalid" or kind == "union_tag_not_found":
        return "set kind to one of: training, inference, batch_inference"
    if kind == "literal_error":
        return f"write one of the values the message lists for {field!r}"
    if kind in {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}:
        if field in _FRACTION_FIXES:
            return _FRACTION_FIXES[field]
        return f"give {field!r} a value within the limit stated above"
    if "type" in kind or kind.endswith("_parsing"):
        return f"give {field!r} a value of the right type"
    return "correct the value as the message says"


#: fields that are fractions, where a percentage (99 for p99) is the likely slip
_FRACTION_FIXES = {
    "slo_percentile": "write the percentile as a fraction from 0.5 up to (not including) 1: "
    "0.9 for p90, 0.99 for p99",
    "capacity_confidence": "write the confidence as a fraction from 0.5 up to (not including) "
    "1: 0.9 for 90%",
}


def _first_huge_number(node: object, loc: tuple = ()) -> tuple[tuple, int | float] | None:
    """The location and value of the first finite number larger than MAX_MAGNITUDE."""
    if isinstance(node, bool):
        return None
    if isinstance(node, int | float):
        if abs(node) > MAX_MAGNITUDE and (isinstance(node, int) or math.isfinite(node)):
            return loc, node
        return None
    children = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, child in children:
        found = _first_huge_number(child, (*loc, key))
        if found is not None:
            return found
    return None


def _without_string_branch(errors: list, data: object) -> list:
    """Errors less the "not a string" of a ``str | Shape`` field given a mapping: for
    ``model: {params_b: 47, experts: 8}`` the mistake is in the shape, not that it is no
    preset name."""

    def given(loc: tuple) -> object:
        node = data
        for key in loc:
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and isinstance(key, int) and key < len(node):
                node = node[key]
            elif isinstance(node, dict):
                continue  # a union's tag (training, ModelShape) is not in the data
            else:
                return None
        return node

    kept = [
        e
        for e in errors
        if not (e["type"] == "string_type" and e["loc"][-1:] == ("str",))
        or not isinstance(given(e["loc"][:-1]), dict)
    ]
    return kept or errors


def parse_problem(data: object, *, file: str = "<problem>") -> Problem:
    """Validate already-parsed YAML data into a :class:`Problem`.

    Raises
    ------
    ProcureError
        On the first validation error, naming the field path and the fix.
    """
    if data is None:
        raise ProcureError(
            "the problem file is empty",
            file=file,
            fix="start from an example in problems/ (procure schema prints every field)",
        )
    if not isinstance(data, dict):
        raise ProcureError(
            "the file does not hold a mapping of fields",
            file=file,
            fix="start the file with fields such as 'name:', 'horizon_months:', 'workloads:'",
        )
    huge = _first_huge_number(data)
    if huge is not None:
        loc, value = huge
        raise ProcureError(
            f"{str(value)[:24]}{'...' if len(str(value)) > 24 else ''} is beyond any plausible "
            f"value (more than {MAX_MAGNITUDE:g})",
            file=file,
            field=_field_path(loc, data),
            fix="check the number for a typo (units: USD, tokens, months, as the schema says)",
        )
    try:
        return Problem.model_validate(data)
    except ValidationError as exc:
        errors = _without_string_branch(exc.errors(), data)
        # an unknown field is most often a typo of a missing one: report it first
        first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        msg = str(first.get("msg", "invalid value"))
        msg = msg.removeprefix("Value error, ")
        msg, _, fix = msg.partition(FIX_SEPARATOR)
        more = f" ({len(errors) - 1} more error(s) after fixing this)" if len(errors) > 1 else ""
        raise ProcureError(
            msg + more,
            file=file,
            field=_field_path(first["loc"], data),
            fix=fix or _fix_for(first),
        ) from None


def load_problem(path: str | Path) -> Problem:
    """Read and validate a problem YAML file.

    Raises
    ------
    ProcureError
        File missing, YAML syntax error (with its line), or a validation error.
    """
    path = Path(path)
    fix = "check the path; examples are in problems/"
    text = read_text_file(path, what="problem file", fix=fix)
    data = load_yaml(text, file=str(path))
    return parse_problem(data, file=str(path))
