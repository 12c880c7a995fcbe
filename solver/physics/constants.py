"""Constants and stated assumptions used by the physics.

Every default that is an assumption rather than a law is named here with its
reason, so the estimate command can print it and a user can see what was assumed.
"""

from __future__ import annotations

BYTES_PER_VALUE: dict[str, float] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
    "fp4": 0.5,
}

# Efficiency of a real kernel against the datasheet roofline. Decode kernels
# (vLLM/TensorRT-LLM) reach roughly 70-85% of HBM bandwidth on large batches
# and prefill GEMMs roughly 50-70% of dense peak; we take the low-middle.
ETA_BANDWIDTH = 0.80
ETA_COMPUTE = 0.50

# Tensor-parallel all-reduce: per direction link bandwidth when the scale-up
# figure is not available (PCIe Gen4 x16 = 32 GB/s per direction), achieved
# fraction of the link, and per-collective latency.
PCIE_GEN4_GBPS_PER_DIRECTION = 32.0
ETA_LINK = 0.70
ALLREDUCE_LATENCY_S_NVLINK = 5e-6
ALLREDUCE_LATENCY_S_PCIE = 20e-6

# Training: LoRA trains a small adapter; its size as a fraction of the base
# parameters (rank 16-64 on all projections is 0.5-2%).
LORA_TRAINABLE_FRACTION = 0.01
# Fallback activation memory when the model shape is unknown, as a multiple of
# the bf16 weight bytes (a 7B model at 4k context with selective recompute has
# about 1.3x; see training.activation_gb_per_device).
ACTIVATION_FALLBACK_X_WEIGHTS = 1.0
# Spot training: checkpoint/restart overhead on the job's hours.
SPOT_TRAINING_OVERHEAD = 0.10

# Power: fraction of TDP drawn at a utilisation u is IDLE + (1 - IDLE) * u.
IDLE_POWER_FRACTION = 0.30
TRAINING_UTILISATION = 0.90
INFERENCE_UTILISATION = 0.60
# Host (CPU, memory, NICs, fans) power as a fraction of accelerator power for
# cloud instances (a DGX H100 draws 10.2 kW max for 5.6 kW of GPUs; typical
# draw is lower).
HOST_POWER_FRACTION = 0.50
# Embodied carbon of cloud accelerators is amortised over this service life.
CLOUD_ACCELERATOR_LIFETIME_YEARS = 5.0


def bytes_per_value(precision: str) -> float:
    """Bytes per stored value for a precision name (bf16 -> 2)."""
    try:
        return BYTES_PER_VALUE[precision]
    except KeyError:
        raise ValueError(
            f"unknown precision {precision!r}; use one of {sorted(BYTES_PER_VALUE)}"
        ) from None
