"""Training: memory per device (ZeRO-3), FLOPs, time on a cluster, spot restarts.

References
----------
- 18 bytes/param for mixed-precision AdamW (bf16 weights 2 + fp32 master 4 +
  fp32 grads 4 + Adam m 4 + v 4): Rajbhandari et al., "ZeRO", SC'20, section 3.1
  (they count 16 with fp16 grads; with fp32 grads it is 18).
- Activations per layer per sequence, bf16, no tensor parallelism:
  s*b*h*(34 + 5*a*s/h) bytes without recomputation, 34*s*b*h with selective
  recomputation, 2*s*b*h with full recomputation: Korthikanti et al.,
  "Reducing Activation Recomputation in Large Transformer Models", 2022, eq. 1-2.
- FLOPs = 6*N*D + 12*L*d*s*D (weights plus attention): Narayanan et al., "Efficient
  Large-Scale Language Model Training on GPU Clusters Using Megatron-LM", SC'21, eq. 3
  (derived in :func:`training_flops`); the same attention term is PaLM's 12*L*H*Q*T
  (Chowdhery et al. 2022, appendix B).
- MFU defaults from published runs with the cluster size they were measured at and the
  band of the runs they come from: ``constants.TRAINING_MFU``; the figure a plan is sized
  at for a ``training_margin``: :func:`planning_mfu`.
- Spot restarts: Young, "A first order approximation to the optimum checkpoint
  interval", CACM 17(9), 1974; Daly, "A higher order estimate of the optimum
  checkpoint interval for restart dumps", FGCS 22(3), 2006.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

import numpy as np

from solver.physics.constants import (
    ACTIVATION_FALLBACK_X_WEIGHTS,
    LORA_TRAINABLE_FRACTION,
    MOE_A2A_EFFECTIVE_GB_PER_S,
    MOE_EFFICIENCY_MAX,
    SPOT_CHECKPOINT_INTERVAL_H,
    SPOT_PREEMPTIONS_PER_INSTANCE_HOUR,
    SPOT_PREEMPTIONS_PER_INSTANCE_HOUR_DEFAULT,
    SPOT_RESTART_H,
    TRAINING_FAST_FABRIC_GBPS_PER_NODE,
    TRAINING_MFU,
    TRAINING_MFU_FAMILY_BY_VENDOR,
    TRAINING_MFU_FAMILY_OF,
    TRAINING_SCALEUP_JOINS_UNITS,
    TRAINING_SCALING_PER_DOUBLING_400G,
    TRAINING_SCALING_PER_DOUBLING_FAST,
    TRAINING_SCALING_PER_DOUBLING_SLOW,
    MfuMeasurement,
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
    """ZeRO-3 memory per device: sharded states plus one micro-batch's activations.

    ``params`` are all the parameters: a mixture of experts keeps weights, gradients and
    optimizer states of every expert (sharded with the rest, as expert parallelism also
    spreads them), though each token trains only its k.
    """
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


def training_flops(
    params: float,
    tokens: float,
    optimizer: str,
    recompute: str,
    layers: float | None = None,
    hidden_size: float | None = None,
    seq_len: float | None = None,
    routed_expert_params: float = 0.0,
    capacity_factor: float = 1.0,
) -> float:
    """Training FLOPs: weight matrix multiplies (6ND) plus attention (12 L d s D).

    Per token, every weight is used in one multiply-add forward (2N FLOPs) and two
    backward (activation and weight gradients, 4N): 6N. Attention has no weights but
    two matrix multiplies per layer: the scores Q K^T (each query against ``s`` keys of
    width ``d``: 2 s d FLOPs per token) and scores x V (2 s d), so 4 L s d per token
    forward; the backward pass costs twice the forward, giving 12 L d s per token and
    12 L d s D in all. This is Narayanan et al. 2021, eq. 3, whose attention part
    96 B s l h^2 x s / (6h) = 16 B s^2 l h counts four passes (with full recomputation)
    of 4 l h s per token, and PaLM's 12 L H Q T (Chowdhery et al. 2022, appendix B). The
    full s x s score matrix is counted, as both papers do. For dense-13b (L = 40,
    d = 5120) at s = 4096: 12 x 40 x 5120 x 4096 = 1.007e10 per token against
    6 x 13e9 = 7.8e10, i.e. +12.9%.

    Full recomputation runs one more forward pass of both terms (+2ND + 4 L d s D);
    selective recomputation (Korthikanti et al.) recomputes only cheap element-wise
    work and adds nothing here. LoRA/QLoRA skip the weight gradients of the frozen base
    (4ND for the weights; the adapter's ~1% is ignored) but still back-propagate through
    attention (12 L d s D).

    When the shape (``layers``, ``hidden_size``, ``seq_len``) is unknown the attention
    term is left out: 6ND (8ND with full recomputation), as before.

    Parameters
    ----------
    params
        Parameters N one token uses, embeddings included: all of a dense model's, the
        active ones of a mixture of experts (a token runs through the k experts it is
        routed to, so 6 N_active per token: Mixtral 8x7B 6 x 12.9e9, not 6 x 46.7e9;
        Jiang et al. 2024, arXiv:2401.04088). Memory still holds every expert
        (:func:`training_memory_per_device_gb` takes all the parameters).
    tokens
        Training tokens D.
    optimizer
        ``adamw``, ``sgd``, ``lora`` or ``qlora``.
    recompute
        ``none``, ``selective`` or ``full``.
    layers, hidden_size, seq_len
        Transformer layers L, hidden size d and sequence length s, tokens.
    routed_expert_params
        Of ``params``, the routed experts' weights one token uses (k experts' worth,
        :func:`routed_expert_active_params`; 0 for a dense model).
    capacity_factor
        Expert capacity factor of a token-dropping mixture of experts: each expert runs a
        buffer of ``capacity_factor`` x its even share of the routed tokens, padded where
        fewer arrive, so its matrix multiplies cost ``capacity_factor`` x the routed
        tokens' (the routed experts' term is ``capacity_factor`` x ``routed_expert_params``
        per token). 1.0: dropless, every routed token computed once and nothing padded
        (MaxText's and Megatron Core's defaults). Derivation: docs/concepts/runtime-figures.md,
        "Expert capacity factor".

    Returns
    -------
    float
        FLOPs for the whole run.
    """
    weight_passes = 4.0 if optimizer in {"lora", "qlora"} else 6.0  # 2N per pass
    params = params + (capacity_factor - 1.0) * routed_expert_params
    attention_passes = 12.0  # forward 4 L d s, backward 8 L d s
    if recompute == "full":
        weight_passes += 2.0  # one more forward pass
        attention_passes += 4.0
    per_token = weight_passes * params
    if layers and hidden_size and seq_len:
        per_token += attention_passes * float(layers) * float(hidden_size) * float(seq_len)
    return per_token * tokens


def routed_expert_active_params(
    params: float, active_params: float, experts: float, experts_active: float
) -> float:
    """Routed-expert weights one token uses, parameters (0 for a dense model).

    With S the weights every token uses (attention, embeddings, router, shared experts) and
    e one routed expert's, ``params`` = S + E e and ``active_params`` = S + k e, so
    e = (params - active_params) / (E - k) and a token's routed share is k e. Mixtral 8x7B
    (46.7B, 12.9B active, 8 experts, 2 per token): 2 x 33.8 / 6 = 11.27B (3 x 4096 x 14336
    x 32 layers x 2 = 11.27B from its config, the same).

    Parameters
    ----------
    params, active_params
        All the parameters and those one token uses, counts.
    experts, experts_active
        Routed experts per layer E and per token k.

    Returns
    -------
    float
        k e, parameters.
    """
    if experts <= experts_active or params <= active_params:
        return 0.0
    return (
        float(experts_active)
        * (float(params) - float(active_params))
        / (float(experts) - float(experts_active))
    )


def mfu_family(accelerator_id: str, vendor: str, device_class: str, scaleup_gbps: float) -> str:
    """Family whose published MFU an accelerator takes (``constants.TRAINING_MFU``).

    Consumer cards are ``consumer``; listed ids take their family
    (``TRAINING_MFU_FAMILY_OF``); other devices without a scale-up link are ``pcie``,
    and the rest take their vendor's family.
    """
    if device_class == "consumer":
        return "consumer"
    if accelerator_id in TRAINING_MFU_FAMILY_OF:
        return TRAINING_MFU_FAMILY_OF[accelerator_id]
    if scaleup_gbps <= 0:
        return "pcie"
    return TRAINING_MFU_FAMILY_BY_VENDOR.get(vendor, "pcie")


def default_mfu(
    accelerator_id: str,
    vendor: str,
    device_class: str,
    scaleup_gbps: float,
    precision: str = "bf16",
    bf16_tflops: float | None = None,
    peak_tflops: float | None = None,
) -> MfuMeasurement:
    """Published MFU for an accelerator at a training precision, and where it was measured.

    The figure is a fraction of the dense peak the run uses (``peak_tflops``, e.g. the
    FP8 peak for an ``fp8`` run). A family with a published FP8 run uses it; without
    one, an FP8 run is assumed to reach the BF16 run's TFLOP/s (no speed-up without
    evidence): MFU = bf16 MFU x bf16 peak / peak. ``fp16`` is treated as ``bf16``.

    Returns
    -------
    MfuMeasurement
        ``mfu``, ``measured_at_accelerators`` (scaling loss applies only beyond it),
        ``source``, the band ``low``-``high`` with its ``band`` source, and the
        ``peak_tflops`` the fractions are of (``peak_tflops``, else ``bf16_tflops``).
    """
    family = mfu_family(accelerator_id, vendor, device_class, scaleup_gbps)
    table = TRAINING_MFU[family]
    peak = peak_tflops or bf16_tflops
    if precision == "fp8" and "fp8" in table:
        return replace(table["fp8"], peak_tflops=peak)
    base = table["bf16"]
    if precision == "fp8" and bf16_tflops and peak_tflops and peak_tflops != bf16_tflops:
        scale = bf16_tflops / peak_tflops  # the same TFLOP/s against the FP8 peak
        return MfuMeasurement(
            base.mfu * scale,
            base.measured_at_accelerators,
            base.source + "; FP8 assumed at the BF16 TFLOP/s",
            low=base.low * scale,
            high=base.high * scale,
            band=base.band + "; FP8 assumed at the BF16 TFLOP/s",
            peak_tflops=peak,
        )
    return replace(base, peak_tflops=peak)


#: ``training_margin`` values that name a point of the band (a number is a fraction of the
#: point figure): ``low`` the band's low end (the default), ``point`` the published figure
TRAINING_MARGINS = ("low", "point")


def planning_mfu(measurement: MfuMeasurement, margin: str | float) -> float:
    """The MFU a training cluster is sized at, for a ``training_margin``.

    Parameters
    ----------
    measurement
        The family's published figure and band (:func:`default_mfu`), or a workload's own
        MFU with a band of that one figure.
    margin
        ``"low"``: the band's low end (a cluster that meets its deadline even if the job
        runs as slowly as the slowest published run of its family); ``"point"``: the
        published point figure; a number x in (0, 1]: x times the point figure.

    Returns
    -------
    float
        Model FLOPs utilisation, a fraction of the dense peak at the run's precision.

    Raises
    ------
    ValueError
        A margin that is none of these.
    """
    if margin == "low":
        return measurement.low
    if margin == "point":
        return measurement.mfu
    if isinstance(margin, bool) or not isinstance(margin, int | float) or not 0 < margin <= 1:
        raise ValueError(
            f"training_margin {margin!r} is not one of {TRAINING_MARGINS} or a number in (0, 1]"
        )
    return measurement.mfu * float(margin)


def own_mfu(mfu: float) -> MfuMeasurement:
    """A workload's own MFU as a measurement: taken at the job's scale (no scaling loss),
    its band that one figure (``low`` and ``point`` margins both give it)."""
    return MfuMeasurement(
        mfu, np.inf, "the workload's mfu", low=mfu, high=mfu, band="the workload's own figure"
    )


def scaleup_joins_units(
    accelerator_id: str, vendor: str, device_class: str, scaleup_gbps: float
) -> bool:
    """Whether units of this accelerator join one cluster over its scale-up fabric (TPU ICI)."""
    return mfu_family(accelerator_id, vendor, device_class, scaleup_gbps) in (
        TRAINING_SCALEUP_JOINS_UNITS
    )


def training_nodes(
    n_accelerators: np.ndarray | float, accelerators_per_node: np.ndarray | float
) -> np.ndarray:
    """Nodes (instances, servers) a cluster occupies: ceil(n / accelerators per node).

    Compile passes the offering's accelerators per unit (so nodes = units); the
    estimator does the same for an offering and ``TRAINING_ACCELERATORS_PER_BARE_NODE``
    (8) for a bare accelerator.
    """
    n = np.asarray(n_accelerators, dtype=float)
    per = np.asarray(accelerators_per_node, dtype=float)
    return np.maximum(np.ceil(n / per - 1e-9), 1.0)


def scaling_efficiency(
    n_accelerators: np.ndarray | float,
    measured_at_accelerators: np.ndarray | float,
    network_gbps: np.ndarray | float,
    accelerators_per_node: np.ndarray | float,
    joins_by_scaleup: np.ndarray | bool = False,
) -> np.ndarray:
    """Efficiency beyond the cluster size at which the MFU was measured.

    ``f ** log2(n / reference)`` for ``n`` above the reference, 1.0 at or below it. The
    reference is the measured cluster when the nodes have a fabric like the measured
    runs' (>= ``TRAINING_FAST_FABRIC_GBPS_PER_NODE`` per node, or units joined by TPU
    ICI); on slower networks it is one node (the published runs say nothing about
    them). f per doubling: 0.95 on a fast fabric, 0.90 from 400 Gbit/s, 0.80 below
    (``constants``). A user-given MFU is passed with ``measured_at_accelerators = inf``:
    taken at the job's own scale, no loss.

    Parameters
    ----------
    n_accelerators
        Accelerators in the cluster.
    measured_at_accelerators
        Cluster size of the published MFU (``MfuMeasurement``), or ``inf``.
    network_gbps
        Scale-out network per node, Gbit/s.
    accelerators_per_node
        Accelerators per node (per unit).
    joins_by_scaleup
        Units join one slice over the scale-up fabric (TPU).
    """
    n = np.asarray(n_accelerators, dtype=float)
    measured = np.asarray(measured_at_accelerators, dtype=float)
    net = np.asarray(network_gbps, dtype=float)
    node = np.asarray(accelerators_per_node, dtype=float)
    fast = (net >= TRAINING_FAST_FABRIC_GBPS_PER_NODE) | np.asarray(joins_by_scaleup)
    per_doubling = np.where(
        fast,
        TRAINING_SCALING_PER_DOUBLING_FAST,
        np.where(
            net >= 400, TRAINING_SCALING_PER_DOUBLING_400G, TRAINING_SCALING_PER_DOUBLING_SLOW
        ),
    )
    reference = np.where(fast | np.isinf(measured), measured, np.minimum(node, measured))
    doublings = np.log2(np.maximum(n / reference, 1.0))
    return np.power(per_doubling, doublings)


def spot_preemptions_per_instance_hour(provider: str) -> float:
    """Published (or assumed) spot preemptions per instance-hour for a provider."""
    return SPOT_PREEMPTIONS_PER_INSTANCE_HOUR.get(
        provider, SPOT_PREEMPTIONS_PER_INSTANCE_HOUR_DEFAULT
    )


def spot_lost_fraction(
    n_instances: np.ndarray | float,
    preemptions_per_instance_hour: np.ndarray | float,
    checkpoint_interval_h: float = SPOT_CHECKPOINT_INTERVAL_H,
    restart_h: float = SPOT_RESTART_H,
) -> np.ndarray:
    """Fraction of a spot job's wall-clock hours lost to preemptions (Young 1974; Daly 2006).

    A synchronous job stops when any of its ``n`` instances is preempted, so the job
    sees ``n x rate`` preemptions per hour; each loses on average half a checkpoint
    interval of work plus the restart: lost = n x rate x (interval / 2 + restart).
    Checkpoint writes are taken as asynchronous (not counted). Zero for ``rate = 0``
    (on-demand, reserved, owned).
    """
    rate = np.asarray(n_instances, dtype=float) * np.asarray(
        preemptions_per_instance_hour, dtype=float
    )
    return rate * (checkpoint_interval_h / 2.0 + restart_h)


def training_hours(
    flops: float,
    n_devices: np.ndarray | float,
    peak_tflops: np.ndarray | float,
    mfu: np.ndarray | float,
    scaling: np.ndarray | float = 1.0,
    lost_fraction: np.ndarray | float = 0.0,
) -> np.ndarray:
    """Wall-clock hours: FLOPs / (n x peak x 1e12 x MFU x scaling x 3600) / (1 - lost).

    ``lost_fraction`` is the share of wall-clock time lost to spot preemptions
    (:func:`spot_lost_fraction`): useful hours are (1 - lost) of the wall clock. A
    job that loses all of it never finishes (``inf``).
    """
    rate = (
        np.asarray(n_devices, dtype=float)
        * np.asarray(peak_tflops, dtype=float)
        * 1e12
        * np.asarray(mfu, dtype=float)
        * np.asarray(scaling, dtype=float)
    )
    useful = 1.0 - np.asarray(lost_fraction, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        hours = flops / (rate * 3600.0)
        return np.where(useful > 0, hours / np.where(useful > 0, useful, 1.0), np.inf)


def cluster_training_hours(
    flops: float,
    n_accelerators: np.ndarray | float,
    accelerators_per_node: np.ndarray | float,
    peak_tflops: np.ndarray | float,
    mfu: np.ndarray | float,
    measured_at_accelerators: np.ndarray | float,
    network_gbps: np.ndarray | float,
    joins_by_scaleup: np.ndarray | bool = False,
    preemptions_per_instance_hour: np.ndarray | float = 0.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hours of a training job on a cluster, the one function compile, estimate and verify call.

    Nodes = ceil(n / accelerators per node) (:func:`training_nodes`); scaling loss beyond
    the MFU's measured cluster (:func:`scaling_efficiency`); spot preemptions across the
    nodes (:func:`spot_lost_fraction`, rate 0 off spot); hours (:func:`training_hours`).

    Returns
    -------
    tuple of arrays
        ``(hours, scaling_efficiency, lost_fraction)``.
    """
    nodes = training_nodes(n_accelerators, accelerators_per_node)
    eff = scaling_efficiency(
        n_accelerators,
        measured_at_accelerators,
        network_gbps,
        accelerators_per_node,
        joins_by_scaleup,
    )
    lost = spot_lost_fraction(nodes, preemptions_per_instance_hour)
    hours = training_hours(flops, n_accelerators, peak_tflops, mfu, eff, lost)
    return hours, eff, lost


def moe_all_to_all_bytes_per_flop(
    active_params: float,
    experts: float,
    experts_active: float,
    hidden_size: float | None,
    layers: float | None,
) -> float:
    """Expert-parallel all-to-all bytes per training FLOP of a mixture of experts (0 dense).

    Per token and layer, the token's hidden vector (``hidden_size`` values, 2 bytes in bf16)
    goes to each of its ``experts_active`` experts and comes back (dispatch and combine),
    forward and backward: 4 k d x 2 bytes; over ``layers`` layers against 6 N_active FLOPs
    a token. DeepSeek-V3 (k 8, d 7,168, 61 layers, 37e9 active):
    4 x 8 x 7,168 x 2 x 61 / (6 x 37e9) = 1.2605e-4; Mixtral 8x7B (k 2, d 4,096, 32 layers,
    12.9e9): 2.7095e-5. Every layer is counted as a MoE layer and every byte as leaving the
    device (stated upper bounds: DeepSeek-V3's first 3 layers are dense, and a token's
    expert may sit on its own device).
    """
    if experts <= experts_active or not hidden_size or not layers or active_params <= 0:
        return 0.0
    return 4.0 * experts_active * float(hidden_size) * 2.0 * float(layers) / (6.0 * active_params)


def moe_training_efficiency(bytes_per_flop: float, dense_tflops: float) -> float:
    """Share of a dense model's MFU a mixture of experts reaches on a device whose dense
    model runs at ``dense_tflops`` achieved TFLOP/s (1 for a dense model, x = 0).

    A token's expert-parallel work outside the matrix multiplies (all-to-all dispatch and
    combine, token permutation, routing, the launches of their kernels) takes x bytes per
    FLOP at an effective MOE_A2A_EFFECTIVE_GB_PER_S; the multiplies run at the dense rate
    R. Per FLOP the step takes 1/R + x / B, so the share is
    MOE_EFFICIENCY_MAX / (1 + x R / B): a faster tensor core shortens the multiplies, not
    the rest (derivation and basis: docs/concepts/runtime-figures.md, "Mixture-of-experts
    training"). DeepSeek-V3 (x 1.2605e-4) on the Hopper FP8 point (0.35 x 1,978.9 =
    692.6 TFLOP/s): x R = 87.31 GB/s, 0.8960 / (1 + 87.31 / 178.0) = 0.6011; on B200 FP8
    (0.35 x 4,500 = 1,575 TFLOP/s) 0.4236.

    Parameters
    ----------
    bytes_per_flop
        All-to-all bytes per training FLOP (:func:`moe_all_to_all_bytes_per_flop`).
    dense_tflops
        Achieved TFLOP/s of a dense model on the device: the family's point MFU x the dense
        peak at the run's precision.
    """
    if bytes_per_flop <= 0:
        return 1.0
    overhead = bytes_per_flop * dense_tflops * 1e12 / (MOE_A2A_EFFECTIVE_GB_PER_S * 1e9)
    return MOE_EFFICIENCY_MAX / (1.0 + overhead)


class MoeShape(Protocol):
    """What :func:`moe_mfu` reads of a resolved model (parameter counts, not billions)."""

    @property
    def active_params(self) -> float: ...
    @property
    def experts(self) -> float: ...
    @property
    def experts_active(self) -> float: ...
    @property
    def hidden_size(self) -> float | None: ...
    @property
    def layers(self) -> float | None: ...


def moe_mfu(published: MfuMeasurement, spec: MoeShape) -> MfuMeasurement:
    """A family's published (dense) MFU and band taken to a mixture of experts: each figure
    x :func:`moe_training_efficiency` of the model's all-to-all bytes per FLOP at the dense
    rate ``published.mfu x published.peak_tflops``; a dense model's unchanged. ``spec`` is
    a resolved model (``active_params``, ``experts``, ``experts_active``, ``hidden_size``,
    ``layers``).

    Raises
    ------
    ValueError
        A mixture of experts with a measurement that names no peak (``peak_tflops``).
    """
    x = moe_all_to_all_bytes_per_flop(
        float(spec.active_params),
        float(spec.experts),
        float(spec.experts_active),
        spec.hidden_size,
        spec.layers,
    )
    if x <= 0:
        return published
    if not published.peak_tflops:
        raise ValueError(
            f"a mixture of experts needs the MFU's peak TFLOP/s ({published.source}): take "
            "the measurement from physics.default_mfu with the accelerator's peak"
        )
    dense_tflops = published.mfu * published.peak_tflops
    eff = moe_training_efficiency(x, dense_tflops)
    return replace(
        published,
        mfu=published.mfu * eff,
        low=published.low * eff,
        high=published.high * eff,
        source=f"{published.source}; x {eff:.4f} for a mixture of experts (all-to-all "
        f"{x:.4g} bytes/FLOP at {dense_tflops:.0f} dense TFLOP/s; constants."
        "MOE_EFFICIENCY_MAX, MOE_A2A_EFFECTIVE_GB_PER_S)",
    )
