"""Training: memory per device (ZeRO-3), FLOPs, time on a cluster.

References
----------
- 18 bytes/param for mixed-precision AdamW (bf16 weights 2 + fp32 master 4 +
  fp32 grads 4 + Adam m 4 + v 4): Rajbhandari et al., "ZeRO", SC'20, section 3.1
  (they count 16 with fp16 grads; with fp32 grads it is 18).
- Activations per layer per sequence, bf16, no tensor parallelism:
  s*b*h*(34 + 5*a*s/h) bytes without recomputation, 34*s*b*h with selective
  recomputation, 2*s*b*h with full recomputation: Korthikanti et al.,
  "Reducing Activation Recomputation in Large Transformer Models", 2022, eq. 1-2.
- FLOPs = 6*N*D (8*N*D with full recomputation): Kaplan et al. 2020;
  Narayanan et al. 2021. LoRA skips weight gradients of the frozen base: 4*N*D.
"""

from __future__ import annotations

import numpy as np

from solver.physics.constants import (
    ACTIVATION_FALLBACK_X_WEIGHTS,
    LORA_TRAINABLE_FRACTION,
    SPOT_TRAINING_OVERHEAD,
)

_ADAMW_STATE_BYTES = 2 + 4 + 4 + 4 + 4  # bf16 weights, fp32 master, grads, m, v
_SGD_STATE_BYTES = 2 + 4 + 4 + 4  # bf16 weights, fp32 master, grads, momentum


def training_state_bytes_per_param(optimizer: str) -> float:
    """Bytes per (total) parameter of weights, gradients and optimizer states.

    AdamW 18; SGD with momentum 14; LoRA: frozen bf16 base (2) plus AdamW on the
    adapter (18 x 1% of params); QLoRA: 4-bit base (0.5) plus the same adapter.
    """
    if optimizer == "adamw":
        return float(_ADAMW_STATE_BYTES)
    if optimizer == "sgd":
        return float(_SGD_STATE_BYTES)
    if optimizer == "lora":
        return 2.0 + _ADAMW_STATE_BYTES * LORA_TRAINABLE_FRACTION
    if optimizer == "qlora":
        return 0.5 + _ADAMW_STATE_BYTES * LORA_TRAINABLE_FRACTION
    raise ValueError(f"unknown optimizer {optimizer!r}; use adamw, sgd, lora or qlora")


def activation_gb_per_device(
    *,
    seq_len: int,
    micro_batch: int,
    hidden_size: float | None,
    layers: float | None,
    attention_heads: float | None,
    recompute: str,
    params: float,
) -> float:
    """Activation memory per device for one micro-batch, GB (Korthikanti et al.).

    When the shape is unknown, ``ACTIVATION_FALLBACK_X_WEIGHTS`` x bf16 weight bytes.
    """
    if not hidden_size or not layers or not attention_heads:
        return ACTIVATION_FALLBACK_X_WEIGHTS * params * 2 / 1e9
    sbh = seq_len * micro_batch * hidden_size
    if recompute == "full":
        per_layer = 2.0 * sbh
    elif recompute == "selective":
        per_layer = 34.0 * sbh
    elif recompute == "none":
        per_layer = sbh * (34.0 + 5.0 * attention_heads * seq_len / hidden_size)
    else:
        raise ValueError(f"unknown recompute {recompute!r}")
    return per_layer * layers / 1e9


def training_memory_per_device_gb(
    params: float, optimizer: str, n_devices: np.ndarray | int, activation_gb: float
) -> np.ndarray:
    """ZeRO-3 memory per device: sharded states plus one micro-batch's activations."""
    states_gb = params * training_state_bytes_per_param(optimizer) / 1e9
    return states_gb / np.asarray(n_devices, dtype=float) + activation_gb


def training_min_devices(
    params: float,
    optimizer: str,
    activation_gb: float,
    memory_gb: np.ndarray | float,
    memory_headroom: float = 0.10,
) -> np.ndarray:
    """Smallest ZeRO-3 data-parallel group whose devices hold states + activations.

    Returns 0 where no group size fits (activations alone exceed a device).
    """
    usable_gb = np.asarray(memory_gb, dtype=float) * (1.0 - memory_headroom)
    room_gb = usable_gb - activation_gb
    states_gb = params * training_state_bytes_per_param(optimizer) / 1e9
    with np.errstate(divide="ignore", invalid="ignore"):
        n = np.ceil(states_gb / room_gb - 1e-9)
    return np.where(room_gb > 0, np.maximum(n, 1), 0).astype(int)


def training_flops(params: float, tokens: float, optimizer: str, recompute: str) -> float:
    """Training FLOPs: 6ND (8ND with full recomputation); 4ND (6ND) for LoRA/QLoRA."""
    per_token_param = 4.0 if optimizer in {"lora", "qlora"} else 6.0
    if recompute == "full":
        per_token_param += 2.0  # one more forward pass
    return per_token_param * params * tokens


def default_mfu(vendor: str, device_class: str, scaleup_gbps: float) -> float:
    """Stated default model-FLOPs utilisation by accelerator class.

    Datacenter NVIDIA with NVLink 0.40 (Megatron-LM and MosaicML report 0.38-0.55
    on H100/A100 for 7B-70B models); TPU 0.45 (MaxText reports 0.5-0.6 on v5p);
    AMD, Gaudi and Trainium 0.35 (less mature software stacks); PCIe-only
    datacenter cards 0.35; consumer cards 0.30.
    """
    if device_class == "consumer":
        return 0.30
    if vendor == "google":
        return 0.45
    if vendor in {"amd", "intel", "aws"}:
        return 0.35
    return 0.40 if scaleup_gbps > 0 else 0.35


def scaling_efficiency(n_nodes: np.ndarray | int, network_gbps: np.ndarray | float) -> np.ndarray:
    """Efficiency of data parallelism across nodes: f ** log2(nodes).

    f = 0.95 with >= 1,600 Gbit/s per node (InfiniBand/EFA class), 0.90 with
    >= 400 Gbit/s, 0.80 below (stated assumption; one node is 1.0).
    """
    n_nodes = np.asarray(n_nodes, dtype=float)
    net = np.asarray(network_gbps, dtype=float)
    factor = np.where(net >= 1600, 0.95, np.where(net >= 400, 0.90, 0.80))
    return np.power(factor, np.log2(np.maximum(n_nodes, 1.0)))


def training_hours(
    flops: float,
    n_devices: np.ndarray | int,
    peak_tflops: np.ndarray | float,
    mfu: np.ndarray | float,
    scaling: np.ndarray | float = 1.0,
    spot: np.ndarray | bool = False,
) -> np.ndarray:
    """Wall-clock hours: FLOPs / (n * peak * 1e12 * MFU * scaling * 3600), +10% on spot."""
    rate = (
        np.asarray(n_devices, dtype=float)
        * np.asarray(peak_tflops, dtype=float)
        * 1e12
        * np.asarray(mfu, dtype=float)
        * np.asarray(scaling, dtype=float)
    )
    with np.errstate(divide="ignore"):
        hours = flops / (rate * 3600.0)
    return hours * np.where(np.asarray(spot), 1.0 + SPOT_TRAINING_OVERHEAD, 1.0)
