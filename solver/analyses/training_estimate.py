"""``procure estimate training``: memory per component, FLOPs, accelerator-hours,
wall-clock and cost of a training run from the physics, with the assumptions they used
(split from :mod:`solver.analyses.estimate` at its seam: the two share the model and
offering lookups there)."""

from __future__ import annotations

import math

from solver import physics
from solver.analyses.estimate import _offering, _spec
from solver.errors import ProcureError
from solver.inputs.catalog import Catalog
from solver.inputs.presets import ModelSpec
from solver.physics.constants import (
    SPOT_CHECKPOINT_INTERVAL_H,
    SPOT_RESTART_H,
    TRAINING_ACCELERATORS_PER_BARE_NODE,
    TRAINING_FAST_FABRIC_GBPS_PER_NODE,
)

# Training precisions (problem.TrainingWorkload.precision); FP4 is not one.
TRAINING_PRECISIONS = ("bf16", "fp16", "fp8")


def estimate_training(
    catalog: Catalog,
    *,
    model: str = "dense-13b",
    params_b: float | None = None,
    tokens: float,
    optimizer: str = "adamw",
    precision: str = "bf16",
    seq_len: int = 4096,
    micro_batch: int = 1,
    recompute: str = "selective",
    accelerator: str | None = None,
    offering: str | None = None,
    n_accelerators: int | None = None,
    mfu: float | None = None,
    spot: bool = False,
    memory_headroom: float = 0.10,
    training_margin: str | float = "low",
    capacity_factor: float = 1.0,
) -> dict:
    """Training memory per component, FLOPs, accelerator-hours, wall-clock and cost.

    Hours come from ``physics.cluster_training_hours``, the function compile uses, with
    nodes counted the same way (instances of the offering; 8 accelerators per node for a
    bare accelerator) and the MFU picked from the published band the same way
    (``physics.planning_mfu`` at ``training_margin``: the band's low end by default), so
    the same pool and cluster give the same hours.

    Raises
    ------
    ProcureError
        An unknown model, accelerator, offering or choice; a ``training_margin`` other than
        low, point or a number in (0, 1]; a ``capacity_factor`` not above 0, or not 1.0 for
        a dense model. That is a token-dropping mixture of experts' expert capacity factor
        (1.0: dropless, MaxText's and Megatron Core's default): the routed experts' FLOPs
        are that multiple of the routed tokens' (``physics.training_flops``).
    """
    _check_training_choices(precision, optimizer, recompute)
    spec = _spec(model, catalog, params_b)
    routed = _routed_expert_params(spec, capacity_factor)
    where = _offering(catalog, offering, accelerator)
    acc = where["acc"]
    state_bytes = physics.training_state_bytes_per_param(optimizer)
    act_gb, n_min = _zero3_devices(
        spec, optimizer, seq_len, micro_batch, recompute, acc, memory_headroom
    )
    off = where["offering"]
    n, per_node, network_gbps, nodes = _training_cluster(where, n_accelerators, n_min)
    flops = physics.training_flops(
        spec.active_params,
        tokens,
        optimizer,
        recompute,
        layers=spec.layers,
        hidden_size=spec.hidden_size,
        seq_len=seq_len,
        routed_expert_params=routed,
        capacity_factor=capacity_factor,
    )
    table = physics.one_row_table(acc)
    peak = float(physics.compute_peak_tflops(table, precision)[0])
    family = (acc["accelerator_id"], acc["vendor"], acc["device_class"])
    scaleup = float(acc["scaleup_gbps"])
    published, mfu_used = _training_mfu(acc, precision, peak, mfu, training_margin, spec)
    measured_at = published.measured_at_accelerators
    provider = off["provider"] if off is not None else None
    rate = physics.spot_preemptions_per_instance_hour(provider) if spot else 0.0
    hours_a, eff_a, lost_a = physics.cluster_training_hours(
        flops,
        n,
        per_node,
        peak,
        mfu_used,
        measured_at,
        network_gbps,
        physics.scaleup_joins_units(*family, scaleup),
        rate,
    )
    hours, eff, lost = float(hours_a), float(eff_a), float(lost_a)
    acc_hours_ideal = flops / (peak * 1e12 * mfu_used * 3600.0)
    out = {
        "model": spec.model_id,
        "params": spec.params,
        **({"active_params": spec.active_params} if spec.is_moe else {}),
        **({"capacity_factor": capacity_factor} if spec.is_moe else {}),
        "tokens": tokens,
        "memory": _training_memory(spec, optimizer, act_gb, n, n_min, acc),
        "flops": flops,
        "accelerator": acc["accelerator_id"],
        "peak_dense_tflops": peak,
        "mfu": mfu_used,
        **_band_fields(published, training_margin),
        "mfu_measured_at_accelerators": None if mfu is not None else measured_at,
        "accelerator_hours_at_mfu": acc_hours_ideal,
        "n_accelerators": n,
        "nodes": nodes,
        "scaling_efficiency": eff,
        "spot_lost_fraction": lost,
        "wall_clock_hours": hours,
        "wall_clock_days": hours / 24.0,
    }
    if off is not None:
        out.update(_training_cost(off, spot, nodes, hours))
    out["assumptions"] = _training_assumptions(
        out,
        spec,
        published,
        mfu,
        optimizer,
        recompute,
        state_bytes,
        memory_headroom,
        precision,
        seq_len,
        network_gbps,
        rate,
        spot,
        off,
    )
    return out


def _training_cluster(
    where: dict, n_accelerators: int | None, n_min: int
) -> tuple[int, int, float, int]:
    """Accelerators, accelerators per node, network Gbit/s per node and nodes of a
    training cluster: ``n_accelerators`` if given, else the memory's ``n_min`` and at least
    one instance, counted as compile counts them.

    An offering rounds up to whole instances (a node each) and brings its own network
    figure; a bare accelerator is taken 8 per node on a fabric like the published runs'
    (InfiniBand class).
    """
    off = where["offering"]
    n = n_accelerators or max(n_min, where["apu"])
    if off is not None:
        n = int(math.ceil(n / where["apu"]) * where["apu"])
    per_node = where["apu"] if off is not None else TRAINING_ACCELERATORS_PER_BARE_NODE
    network_gbps = where["network_gbps"] if off is not None else TRAINING_FAST_FABRIC_GBPS_PER_NODE
    return n, per_node, float(network_gbps), int(physics.training_nodes(n, per_node))


def _training_mfu(
    acc, precision: str, peak: float, mfu: float | None, margin, spec: ModelSpec
) -> tuple:
    """(the family's published MFU and band, taken to a mixture of experts by
    ``physics.moe_mfu``, or the user's own; the MFU at ``margin``).

    Raises
    ------
    ProcureError
        A margin other than low, point or a number in (0, 1].
    """
    family = (acc["accelerator_id"], acc["vendor"], acc["device_class"])
    published = (
        physics.own_mfu(mfu)
        if mfu is not None
        else physics.moe_mfu(
            physics.default_mfu(
                *family,
                float(acc["scaleup_gbps"]),
                precision,
                float(acc["bf16_dense_tflops"]),
                peak,
            ),
            spec,
        )
    )
    try:
        return published, physics.planning_mfu(published, margin)
    except ValueError:
        raise ProcureError(
            f"--training-margin {margin!r} is not a training margin",
            field="--training-margin",
            fix="use low (the default: the low end of the published MFU band), point, or a "
            "number in (0, 1], a fraction of the published figure",
        ) from None


def _band_fields(published, margin) -> dict:
    """The published point, band and sources, and the margin the run is sized at."""
    return {
        "mfu_point": published.mfu,
        "mfu_low": published.low,
        "mfu_high": published.high,
        "mfu_source": published.source,
        "mfu_band": published.band,
        "training_margin": margin,
    }


def _zero3_devices(
    spec, optimizer, seq_len, micro_batch, recompute, acc, memory_headroom
) -> tuple[float, int]:
    """(activation GB per device, fewest devices whose memory holds the sharded states)."""
    act_gb = physics.activation_gb_per_device(
        seq_len=seq_len,
        micro_batch=micro_batch,
        hidden_size=spec.hidden_size,
        layers=spec.layers,
        attention_heads=spec.attention_heads,
        recompute=recompute,
        params=spec.params,
    )
    n_min = physics.training_min_devices(
        spec.params, optimizer, act_gb, float(acc["memory_gb"]), memory_headroom
    )
    return act_gb, int(n_min)


def _training_memory(spec, optimizer: str, act_gb: float, n: int, n_min: int, acc) -> dict:
    """Training memory by component (GB) and the fewest devices ZeRO-3 needs."""
    state_bytes = physics.training_state_bytes_per_param(optimizer)
    return {
        "weights_gb": spec.params * 2 / 1e9,
        "states_bytes_per_param": state_bytes,
        "weights_grads_optimizer_gb": spec.params * state_bytes / 1e9,
        "activations_gb_per_device": act_gb,
        "per_device_gb_at_n": float(
            physics.training_memory_per_device_gb(spec.params, optimizer, n, act_gb)
        )
        if n_min
        else None,
        "device_memory_gb": float(acc["memory_gb"]),
        "min_devices_zero3": n_min,
    }


def _training_cost(off, spot: bool, nodes: int, hours: float) -> dict:
    """The run's cost on an offering: price x instances x wall-clock hours."""
    price = float(off["spot_usd_per_hour"] if spot else off["on_demand_usd_per_hour"])
    if price != price:
        raise ProcureError(
            f"offering {off['offering_id']!r} has no spot price",
            field="--spot",
            fix="drop --spot or pick an offering with a spot price",
        )
    return {
        "offering": off["offering_id"],
        "cost_usd": price * nodes * hours,
        "price_usd_per_instance_hour": price,
    }


def _routed_expert_params(spec: ModelSpec, capacity_factor: float) -> float:
    """A token's routed-expert parameters (``physics.routed_expert_active_params``), after
    refusing a capacity factor that is not above 0, or not 1.0 for a dense model."""
    if not (math.isfinite(capacity_factor) and capacity_factor > 0):
        raise ProcureError(
            f"--capacity-factor {capacity_factor:g} is not above 0",
            field="--capacity-factor",
            fix="give the run's expert capacity factor, e.g. --capacity-factor 1.25 "
            "(1.0: dropless, the default)",
        )
    if not spec.is_moe:
        if capacity_factor != 1.0:
            raise ProcureError(
                f"--capacity-factor {capacity_factor:g} is for a mixture of experts; "
                f"{spec.model_id} is dense",
                field="--capacity-factor",
                fix="leave --capacity-factor out (1.0) for a dense model",
            )
        return 0.0
    return physics.routed_expert_active_params(
        spec.params, spec.active_params, spec.experts, spec.experts_active
    )


def _check_training_choices(precision: str, optimizer: str, recompute: str) -> None:
    """Refuse a precision, optimizer or recomputation the estimate does not know."""
    for name, value, allowed in (
        ("--precision", precision, TRAINING_PRECISIONS),
        ("--optimizer", optimizer, ("adamw", "sgd", "lora", "qlora")),
        ("--recompute", recompute, ("none", "selective", "full")),
    ):
        if value not in allowed:
            raise ProcureError(
                f"{name} {value!r} is not a training choice",
                field=name,
                fix="use one of " + ", ".join(allowed),
            )


def _training_assumptions(
    out: dict,
    spec,
    published,
    mfu,
    optimizer,
    recompute,
    state_bytes,
    memory_headroom,
    precision,
    seq_len,
    network_gbps,
    rate,
    spot,
    off,
) -> list[str]:
    """What a training estimate assumed, in words (figures from ``out``)."""
    flops, tokens, peak = out["flops"], out["tokens"], out["peak_dense_tflops"]
    mfu_used, eff, nodes = out["mfu"], out["scaling_efficiency"], out["nodes"]
    lost = out["spot_lost_fraction"]
    measured_at = published.measured_at_accelerators
    attention = (
        f"12 x {spec.layers:g} layers x {spec.hidden_size:g} x {seq_len} attention"
        if spec.layers and spec.hidden_size
        else "no attention term (model shape unknown)"
    )
    margin = out["training_margin"]
    mfu_basis = (
        "your --mfu, taken at this cluster size (no scaling loss)"
        if mfu is not None
        else f"training margin {margin}: "
        + (
            "the low end"
            if margin == "low"
            else "the point figure"
            if margin == "point"
            else f"{margin} x the point figure"
        )
        + f" of the published band {published.low:.3g}-{published.high:.3g} ({published.band}); "
        f"point {published.mfu:.3g}: {published.source}; measured at {measured_at:,.0f} "
        "accelerators"
    )
    moe = (
        [
            f"mixture of experts: {spec.experts_active:g} of {spec.experts:g} experts per token, "
            f"so N = the {spec.active_params / 1e9:.4g}B active parameters in the FLOPs"
            + (
                f" (its {out['capacity_factor']:g} expert capacity factor adds "
                f"{out['capacity_factor'] - 1.0:+g} x the routed experts' share: tokens "
                "padded to an expert's capacity are computed)"
                if out.get("capacity_factor", 1.0) != 1.0
                else " (dropless: capacity factor 1.0)"
            )
            + "; "
            f"memory holds all {spec.params / 1e9:.4g}B with their gradients and optimizer "
            "states (ZeRO-3 shards them over the devices as expert parallelism would); the "
            "MFU defaults come from dense runs (DeepSeek-V3's 2.788M H800-hours for 14.8T "
            "tokens of 37B active is about 0.17 of the FP8 dense peak, arXiv:2412.19437)"
        ]
        if spec.is_moe
        else []
    )
    notes = moe + [
        f"FLOPs = {flops / (spec.active_params * tokens):.4g} x N x D ({optimizer}, "
        f"recompute={recompute}; 6ND-style weight term plus {attention})",
        f"{state_bytes:g} bytes/param of weights, gradients and optimizer states ({optimizer})",
        "activations per Korthikanti et al. 2022 (bf16, no tensor parallelism)",
        f"ZeRO-3: states sharded over n devices, {memory_headroom:.0%} memory headroom",
        f"dense {precision} peak {peak:g} TFLOPS (never the 2:4 sparse figure), "
        f"MFU {mfu_used:.3g} ({mfu_basis})",
        f"scaling efficiency {eff:.3f}: loss only beyond the MFU's measured cluster "
        f"({nodes} node(s), {network_gbps:g} Gbit/s per node"
        + ("" if off is not None else ", assumed for a bare accelerator; --offering for a real one")
        + ")",
    ]
    if spot:
        notes.append(
            f"spot: {rate:.3g} preemptions per instance-hour x {nodes} instance(s) x "
            f"(checkpoint interval {SPOT_CHECKPOINT_INTERVAL_H:g} h / 2 + restart "
            f"{SPOT_RESTART_H:.3g} h) = {lost:.1%} of wall-clock lost (Young 1974)"
        )
    return notes
