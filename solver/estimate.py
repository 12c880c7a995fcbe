"""Back-of-envelope answers from the physics, with the assumptions they used.

``procure estimate training`` and ``procure estimate inference`` call these;
each returns a plain dict of figures (units in the keys) and an ``assumptions``
list that the CLI prints beside them.
"""

from __future__ import annotations

import math

import numpy as np

from solver import physics
from solver.catalog import Catalog
from solver.compile import DAYS_PER_MONTH, ModelSpec, resolve_model
from solver.errors import ProcureError
from solver.physics.constants import (
    ETA_BANDWIDTH,
    ETA_COMPUTE,
    IDLE_POWER_FRACTION,
    INFERENCE_UTILISATION,
    SPOT_TRAINING_OVERHEAD,
)
from solver.problem import HOURS_PER_MONTH


def _spec(model: str, catalog: Catalog, params_b: float | None) -> ModelSpec:
    if params_b is not None:
        from solver.problem import ModelShape

        return resolve_model(ModelShape(params_b=params_b), catalog, "--params-b")
    return resolve_model(model, catalog, "--model")


def _offering(catalog: Catalog, offering: str | None, accelerator: str | None) -> dict:
    """The offering row (or a bare accelerator) the estimate runs on."""
    if offering:
        if offering not in catalog.offerings.index:
            from solver.errors import suggestion

            raise ProcureError(
                f"unknown offering {offering!r}",
                field="--offering",
                fix=suggestion(offering, catalog.offerings.index),
            )
        off = catalog.offerings.loc[offering]
        acc = catalog.accelerators.loc[off["accelerator_id"]]
        return {
            "acc": acc,
            "apu": int(off["accelerators_per_instance"]),
            "offering": off,
            "nvlink": bool(off["nvlink"]),
            "network_gbps": float(off["network_gbps"])
            if off["network_gbps"] == off["network_gbps"]
            else 100.0,
        }
    acc_id = catalog.resolve_accelerator(accelerator or "h100-sxm")
    acc = catalog.accelerators.loc[acc_id]
    return {
        "acc": acc,
        "apu": 1,
        "offering": None,
        "nvlink": float(acc["scaleup_gbps"]) > 0,
        "network_gbps": 400.0,
    }


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
) -> dict:
    """Training memory per component, FLOPs, accelerator-hours, wall-clock and cost."""
    spec = _spec(model, catalog, params_b)
    where = _offering(catalog, offering, accelerator)
    acc = where["acc"]
    state_bytes = physics.training_state_bytes_per_param(optimizer)
    act_gb = physics.activation_gb_per_device(
        seq_len=seq_len,
        micro_batch=micro_batch,
        hidden_size=spec.hidden_size,
        layers=spec.layers,
        attention_heads=spec.attention_heads,
        recompute=recompute,
        params=spec.params,
    )
    n_min = int(
        physics.training_min_devices(
            spec.params, optimizer, act_gb, float(acc["memory_gb"]), memory_headroom
        )
    )
    n = n_accelerators or max(n_min, where["apu"])
    if where["offering"] is not None:
        n = int(math.ceil(n / where["apu"]) * where["apu"])
    nodes = max(1, math.ceil(n / max(where["apu"], 8)))
    flops = physics.training_flops(spec.params, tokens, optimizer, recompute)
    peak = (
        float(acc["fp8_dense_tflops"])
        if precision == "fp8" and float(acc["fp8_dense_tflops"]) > 0
        else float(acc["bf16_dense_tflops"])
    )
    mfu_used = (
        mfu
        if mfu is not None
        else physics.default_mfu(acc["vendor"], acc["device_class"], float(acc["scaleup_gbps"]))
    )
    eff = float(physics.scaling_efficiency(nodes, where["network_gbps"]))
    acc_hours_ideal = flops / (peak * 1e12 * mfu_used * 3600.0)
    hours = float(physics.training_hours(flops, n, peak, mfu_used, eff, spot))
    out = {
        "model": spec.model_id,
        "params": spec.params,
        "tokens": tokens,
        "memory": {
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
        },
        "flops": flops,
        "accelerator": acc["accelerator_id"],
        "peak_dense_tflops": peak,
        "mfu": mfu_used,
        "accelerator_hours_at_mfu": acc_hours_ideal,
        "n_accelerators": n,
        "scaling_efficiency": eff,
        "wall_clock_hours": hours,
        "wall_clock_days": hours / 24.0,
    }
    if where["offering"] is not None:
        off = where["offering"]
        price = float(off["spot_usd_per_hour"] if spot else off["on_demand_usd_per_hour"])
        instances = n // where["apu"]
        out["offering"] = off["offering_id"]
        out["cost_usd"] = price * instances * hours
        out["price_usd_per_instance_hour"] = price
    out["assumptions"] = [
        f"FLOPs = {flops / (spec.params * tokens):g} x N x D ({optimizer}, recompute={recompute})",
        f"{state_bytes:g} bytes/param of weights, gradients and optimizer states ({optimizer})",
        "activations per Korthikanti et al. 2022 (bf16, no tensor parallelism)",
        f"ZeRO-3: states sharded over n devices, {memory_headroom:.0%} memory headroom",
        f"dense {precision} peak {peak:g} TFLOPS (never the 2:4 sparse figure), MFU {mfu_used:.2f}",
        f"scaling efficiency {eff:.3f} over {nodes} node(s)",
    ] + ([f"spot: +{SPOT_TRAINING_OVERHEAD:.0%} checkpoint/restart overhead"] if spot else [])
    return out


def estimate_inference(
    catalog: Catalog,
    *,
    model: str = "llama-3-8b",
    weight_precision: str = "bf16",
    kv_precision: str = "bf16",
    accelerator: str | None = None,
    offering: str | None = None,
    tp_degree: int = 1,
    batch: int | None = None,
    prompt_tokens: int = 1000,
    output_tokens: int = 400,
    tpot_slo_ms: float | None = None,
    ttft_slo_ms: float | None = None,
    demand_tokens_per_s: float | None = None,
    server: str | None = None,
    site: str | None = None,
    memory_headroom: float = 0.10,
) -> dict:
    """Inference memory, latency and throughput at a batch; replicas; $/1M tokens."""
    spec = resolve_model(model, catalog, "--model")
    where = _offering(catalog, offering, accelerator)
    acc = where["acc"]
    d = tp_degree
    weights_gb = spec.params * physics.bytes_per_value(weight_precision) / 1e9
    kv_gb_tok = (
        physics.kv_bytes_per_token(
            spec.layers, spec.kv_heads, spec.head_dim, physics.bytes_per_value(kv_precision)
        )
        / 1e9
    )
    context = prompt_tokens + output_tokens
    b_mem = int(
        physics.max_batch(
            weights_gb, kv_gb_tok, context, d, float(acc["memory_gb"]), memory_headroom
        )
    )
    peak = float(acc["bf16_dense_tflops"])
    if weight_precision == "fp8" and float(acc["fp8_dense_tflops"]) > 0:
        peak = float(acc["fp8_dense_tflops"])
    res = physics.best_decode(
        params=spec.params,
        active_params=spec.active_params,
        layers=spec.layers,
        kv_heads=spec.kv_heads,
        head_dim=spec.head_dim,
        hidden_size=spec.hidden_size,
        weight_bytes=physics.bytes_per_value(weight_precision),
        kv_bytes=physics.bytes_per_value(kv_precision),
        prompt_tokens=prompt_tokens,
        output_tokens=output_tokens,
        tpot_slo_s=tpot_slo_ms / 1000.0 if tpot_slo_ms else None,
        ttft_slo_s=ttft_slo_ms / 1000.0 if ttft_slo_ms else None,
        d=np.array([float(d)]),
        memory_gb=np.array([float(acc["memory_gb"])]),
        bandwidth_gbps=np.array([float(acc["mem_bandwidth_gbps"])]),
        peak_tflops=np.array([peak]),
        scaleup_gbps=np.array([float(acc["scaleup_gbps"])]),
        nvlink=np.array([where["nvlink"]]),
        memory_headroom=memory_headroom,
    )
    b = batch if batch is not None else int(res.batch[0])
    kw = dict(
        weights_gb=weights_gb,
        kv_gb_per_token=kv_gb_tok,
        context_tokens=context,
        active_params=spec.active_params,
        d=d,
        bandwidth_gbps=float(acc["mem_bandwidth_gbps"]),
        peak_tflops=peak,
    )
    bound_s = float(physics.decode_step_s(max(b, 1), eta_bw=1.0, eta_c=1.0, **kw))
    derated_s = float(physics.decode_step_s(max(b, 1), **kw))
    ttft = float(
        physics.prefill_s(
            prompt_tokens,
            active_params=spec.active_params,
            weights_gb=weights_gb,
            d=d,
            bandwidth_gbps=float(acc["mem_bandwidth_gbps"]),
            peak_tflops=peak,
        )
    )
    per_request_s = ttft + output_tokens * derated_s / max(b, 1)
    replica_tps = output_tokens / per_request_s if b >= 1 and b <= b_mem else 0.0
    out: dict = {
        "model": spec.model_id,
        "accelerator": acc["accelerator_id"],
        "tp_degree": d,
        "memory": {
            "weights_gb": weights_gb,
            "kv_bytes_per_token": kv_gb_tok * 1e9,
            "kv_gb_per_sequence": kv_gb_tok * context,
            "kv_gb_at_batch": kv_gb_tok * context * b,
            "usable_gb": d * float(acc["memory_gb"]) * (1 - memory_headroom),
            "max_batch_by_memory": b_mem,
        },
        "batch": b,
        "fits": 1 <= b <= b_mem,
        "decode_step_ms_roofline": bound_s * 1000.0,
        "decode_step_ms_derated": derated_s * 1000.0,
        "tokens_per_s_per_sequence_roofline": 1.0 / bound_s,
        "tokens_per_s_per_sequence_derated": 1.0 / derated_s,
        "ttft_ms": ttft * 1000.0,
        "replica_output_tokens_per_s": replica_tps,
        "best_batch_within_slo": int(res.batch[0]),
        "slo_limit": res.reason[0] or None,
    }
    if demand_tokens_per_s and replica_tps > 0:
        out["replicas_needed"] = math.ceil(demand_tokens_per_s / replica_tps)
    if where["offering"] is not None and replica_tps > 0:
        off = where["offering"]
        per_instance_tps = replica_tps * (where["apu"] // d)
        out["offering"] = off["offering_id"]
        out["rented_usd_per_mtoken"] = (
            float(off["on_demand_usd_per_hour"]) / (per_instance_tps * 3600) * 1e6
        )
        if demand_tokens_per_s:
            out["instances_needed"] = math.ceil(demand_tokens_per_s / per_instance_tps)
    if server and replica_tps > 0:
        out.update(_owned_economics(catalog, server, site, replica_tps, d, where))
    out["assumptions"] = [
        f"weights {weight_precision} ({physics.bytes_per_value(weight_precision):g} B/param), "
        f"KV cache {kv_precision}, context {context} tokens (prompt + output)",
        f"{memory_headroom:.0%} of device memory kept free",
        f"roofline step = max(bytes / bandwidth, FLOPs / peak); derated figure uses "
        f"{ETA_BANDWIDTH:.0%} of bandwidth and {ETA_COMPUTE:.0%} of dense peak",
        "throughput counts each request's prefill time against the replica",
    ]
    return out


def _owned_economics(
    catalog: Catalog, server: str, site: str | None, replica_tps: float, d: int, where: dict
) -> dict:
    """Cost per 1M tokens on an owned server, and the buy-versus-rent break-even utilisation."""
    if server not in catalog.servers.index:
        from solver.errors import suggestion

        raise ProcureError(
            f"unknown server {server!r}",
            field="--server",
            fix=suggestion(server, catalog.servers.index),
        )
    srv = catalog.servers.loc[server]
    site_row = catalog.sites.loc[site] if site else catalog.sites.iloc[0]
    life_h = float(srv["lifetime_years"]) * 8760.0
    hosting_usd_per_h = (
        float(site_row["colocation_usd_per_kw_month"]) * float(srv["power_kw"])
        + float(srv["maintenance_usd_per_year"]) / 12.0
    ) / HOURS_PER_MONTH
    fixed_usd_per_h = float(srv["capex_usd"]) / life_h + hosting_usd_per_h
    frac = IDLE_POWER_FRACTION + (1 - IDLE_POWER_FRACTION) * INFERENCE_UTILISATION
    energy_usd_per_h = (
        float(srv["power_kw"])
        * frac
        * float(site_row["pue"])
        * float(site_row["electricity_usd_per_kwh"])
    )
    server_tps = replica_tps * (int(srv["accelerators_per_server"]) // d)
    out = {
        "server": server,
        "site": site_row["site_id"],
        "owned_usd_per_hour_at_full_use": fixed_usd_per_h + energy_usd_per_h,
        "owned_usd_per_mtoken_at_full_use": (fixed_usd_per_h + energy_usd_per_h)
        / (server_tps * 3600)
        * 1e6,
        "owned_assumptions": f"capex over {srv['lifetime_years']:g} years, hosting, maintenance, "
        f"electricity at {frac:.0%} of max power; lead time "
        f"{float(srv['lead_time_days']) / DAYS_PER_MONTH:.1f} months",
    }
    off = where["offering"]
    if off is not None:
        # rent the same number of accelerators as the server holds
        rent_usd_per_h = (
            float(off["on_demand_usd_per_hour"])
            * int(srv["accelerators_per_server"])
            / int(off["accelerators_per_instance"])
        )
        margin = rent_usd_per_h - energy_usd_per_h
        out["rent_usd_per_hour_same_accelerators"] = rent_usd_per_h
        out["buy_vs_rent_break_even_utilisation"] = (
            (fixed_usd_per_h / margin) if margin > 0 else None
        )
    return out
