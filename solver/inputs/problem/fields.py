"""Field types, limits and help texts the problem's models share: finite numbers, the
purchase modes and precisions, durations with units, and the checks of a training margin
and a KV-cache precision."""

from __future__ import annotations

import math
import re
from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from solver.physics.constants import WEIGHT_ONLY_PRECISIONS

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
# Online serving limits are checked at this percentile of requests unless a workload says
# otherwise (slo_percentile; 'mean' keeps the mean): MLPerf Inference's server scenario
# states its serving limits at p99 (Llama 2 70B: TTFT p99 <= 2 s, TPOT p99 <= 200 ms;
# https://github.com/mlcommons/inference_policies/blob/master/inference_rules.adoc), and
# the fleet sizing tools of the field size to a P99 TTFT (issue 47).
DEFAULT_SLO_PERCENTILE = 0.99
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


class StrictModel(BaseModel):
    """A problem model: unknown keys refused, frozen, finite numbers only (.inf or .nan
    anywhere is refused with the field's name)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


#: how a ValueError raised by a validator separates what is wrong from its fix
FIX_SEPARATOR = "\nfix: "


Runtime = Literal["vllm-cuda", "tensorrt-llm", "vllm-rocm", "neuron", "gaudi", "tpu", "jetstream"]
RUNTIME_HELP = (
    "Serving runtime (efficiencies and batch limit per runtime, solver/physics/constants.py); "
    "it runs on its own vendor's hardware only, so the others are left out: vllm-cuda and "
    "tensorrt-llm NVIDIA, vllm-rocm AMD, neuron AWS Trainium/Inferentia, gaudi Intel Gaudi, "
    "tpu Google TPU. Default: vLLM on each vendor's stack, every vendor allowed"
)

# Accelerator and vendor lists: names as the catalog writes them, checked
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
#: marketplace hosts, which carry no SLA (a production service is not run on individual
#: hosts' consumer cards unless the problem says so).
DEFAULT_SERVING_TIER = "neocloud"
#: Price confidence levels, weakest first (solver/inputs/provenance.py).
PriceConfidence = Literal["unverified", "third_party", "list", "quote"]
# The MFU a training cluster is sized at: the low end of the published
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
