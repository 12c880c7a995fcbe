"""Back-of-envelope answers from the physics, with the assumptions they used.

``procure estimate inference`` calls these (``procure estimate training``: its own
module, :mod:`solver.analyses.training_estimate`, sharing the lookups here);
each returns a plain dict of figures (units in the keys) and an ``assumptions``
list that the CLI prints beside them.
"""

from __future__ import annotations

import math

import numpy as np

from solver import physics
from solver.errors import ProcureError
from solver.inputs.catalog import Catalog
from solver.inputs.presets import ModelSpec, resolve_model
from solver.inputs.staff import staff_rule
from solver.physics import bands
from solver.physics.constants import (
    IDLE_POWER_FRACTION,
    INFERENCE_UTILISATION,
    RUNTIME_EFFICIENCY,
)
from solver.units import DAYS_PER_MONTH, HOURS_PER_MONTH


def _spec(model: str, catalog: Catalog, params_b: float | None) -> ModelSpec:
    if params_b is not None:
        from solver.inputs.problem import ModelShape

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


def _sustained_share(acc, weight_precision: str) -> float:
    """The device's vendor-measured sustained GEMM rate as a fraction of its dense peak at
    this precision (``physics.sustained_compute_share``; 1.0 where it has none)."""
    return float(
        physics.sustained_compute_share(
            np.array([acc["accelerator_id"]], dtype=object),
            np.array([acc["vendor"]], dtype=object),
            weight_precision,
        )[0]
    )


def _what_would_fit(
    catalog: Catalog,
    spec: ModelSpec,
    acc,
    weight_precision: str,
    kv_precision: str,
    context_tokens: float,
    batch: int,
    memory_headroom: float,
) -> list[str]:
    """Ways to make a model that does not fit fit: more devices, fewer bytes, shorter context.

    ``context_tokens`` is what one sequence holds (the mean context when a batch is
    asked for, the full one otherwise) and ``batch`` how many must fit together.
    """
    memory_gb = float(acc["memory_gb"]) * (1 - memory_headroom)
    ideas = []
    for precision in ("bf16", "fp8", "int4"):
        if physics.bytes_per_value(precision) > physics.bytes_per_value(weight_precision):
            continue
        served = physics.served_model(spec, precision, kv_precision)
        kv_gb = served.kv_gb_per_token * context_tokens * batch
        devices = math.ceil((served.weights_gb + kv_gb) / memory_gb)
        if devices <= 8:
            ideas.append(
                f"{precision} weights {served.weights_gb:.1f} GB + KV of {batch} sequence(s) "
                f"{kv_gb:.2f} GB fit on {devices} x {acc['accelerator_id']} "
                f"(--tp {2 ** math.ceil(math.log2(devices))})"
            )
    served = physics.served_model(spec, weight_precision, kv_precision)
    if served.is_moe:
        devices = math.ceil(
            (served.weights_gb + served.kv_gb_per_token * context_tokens * batch) / memory_gb
        )
        ideas.append(
            f"the replica holds all {served.experts:g} experts of every layer: "
            f"{served.weights_gb:.1f} GB of {weight_precision} weights need {devices} x "
            f"{acc['accelerator_id']}"
            + (
                " (more than one 8-device node: expert or pipeline parallelism across nodes "
                "is not modelled)"
                if devices > 8
                else f" (--tp {2 ** math.ceil(math.log2(devices))})"
            )
        )
    room_gb = memory_gb - served.weights_gb
    if room_gb > 0:
        ideas.append(
            f"one device holds the weights; the KV cache fits "
            f"{int(room_gb / served.kv_gb_per_token):,} tokens of context"
        )
    bigger = catalog.accelerators[
        catalog.accelerators["memory_gb"] * (1 - memory_headroom)
        >= served.weights_gb + served.kv_gb_per_token * context_tokens * batch
    ]
    if len(bigger):
        ideas.append("fits on one: " + ", ".join(sorted(bigger.index)[:6]))
    return ideas


def _kv_tokens_held(dev, prompt_tokens: int, output_tokens: int) -> tuple[float, float]:
    """KV tokens one sequence holds at its full context and in a running batch: the full
    and the mean context (paged), or a dense cache's fixed length whatever the context
    (JetStream, ``RuntimeEfficiency.static_kv_tokens``)."""
    static = float(np.asarray(dev.static_kv_tokens).ravel()[0])
    full = max(prompt_tokens + output_tokens, static)
    return full, max(prompt_tokens + output_tokens / 2, static)


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
    runtime: str | None = None,
    slo_percentile: float | None = None,
    utilisation: float = 0.8,
) -> dict:
    """Inference memory, latency and throughput at a batch; replicas; $/1M tokens.
    ``runtime`` picks the serving runtime's efficiencies and batch limit (default the
    vendor's vLLM stack); ``slo_percentile`` checks the SLOs under load (:func:`_load`).
    """
    spec = resolve_model(model, catalog, "--model")
    where = _offering(catalog, offering, accelerator)
    acc = where["acc"]
    d = tp_degree
    served = physics.served_model(spec, weight_precision, kv_precision)
    table = physics.one_row_table(acc)
    dev = physics.device_figures(table, weight_precision, np.array([where["nvlink"]]), runtime)
    slo = dict(tpot_slo_s=_seconds(tpot_slo_ms), ttft_slo_s=_seconds(ttft_slo_ms))
    common = dict(
        prompt_tokens=prompt_tokens,
        output_tokens=output_tokens,
        d=np.array([float(d)]),
        dev=dev,
        memory_headroom=memory_headroom,
        load=_load(slo_percentile, utilisation),
    )
    best = physics.best_decode(served, **slo, **common)
    b_mem = int(best.b_max_memory[0])
    # A batch beyond memory is not run by the engine: the KV cache holds b_mem sequences
    # and the rest wait in the queue, so the replica works at b_mem (flagged below).
    running = batch if batch is None or batch <= b_mem or b_mem < 1 else b_mem
    res = best if batch is None else physics.best_decode(served, **slo, **common, batch=running)
    b = int(res.batch[0]) if batch is None else batch
    replica_tps = float(res.tokens_per_s[0])
    context, held = _kv_tokens_held(dev, prompt_tokens, output_tokens)
    kv_gb_tok = served.kv_gb_per_token
    usable_gb = d * float(acc["memory_gb"]) * (1 - memory_headroom)
    out: dict = {
        "model": spec.model_id,
        "accelerator": acc["accelerator_id"],
        "tp_degree": d,
        "runtime": str(dev.runtime[0]),
        "link": str(dev.link[0]) if d > 1 else None,
        "memory": {
            "device_memory_gb": float(acc["memory_gb"]),
            "device_memory_as_labelled": f"{float(acc['memory_label_gb']):g} {acc['memory_unit']}"
            if "memory_label_gb" in acc.index
            else None,
            "weights_gb": served.weights_gb,
            "kv_bytes_per_token": kv_gb_tok * 1e9,
            "kv_gb_per_sequence": kv_gb_tok * context,
            "kv_gb_at_batch": kv_gb_tok * held * max(b, 0),
            "usable_gb": usable_gb,
            "max_batch_by_memory": b_mem,
        },
        **(_moe_reads(served, max(b, 1), prompt_tokens, output_tokens) if served.is_moe else {}),
        "batch": b,
        "batch_running": int(res.batch[0]) if batch is None else running,
        "fits": b_mem >= max(b, 1),
        "decode_step_ms_roofline": float(res.roofline_step_s[0]) * 1000.0,
        "decode_step_ms_derated": float(res.step_s[0]) * 1000.0,
        "tokens_per_s_per_sequence_roofline": 1.0 / float(res.roofline_step_s[0]),
        "tokens_per_s_per_sequence_derated": 1.0 / float(res.step_s[0]),
        "ttft_ms": float(res.ttft_s[0]) * 1000.0,
        "replica_output_tokens_per_s": replica_tps,
        "best_batch_within_slo": int(best.batch[0]),
        "slo_limit": res.reason[0]
        or (
            f"the KV cache holds {b_mem} of the {batch} sequences; the rest queue"
            if batch is not None and running != batch
            else None
        ),
        "capacity_source": "physics",
        "error_band": _error_band(acc["accelerator_id"], str(dev.runtime[0]), spec),
    }
    out.update(_at_percentile(res, slo_percentile, utilisation, replica_tps))
    if not out["fits"]:
        tokens_held, sequences = (held if batch else context), max(batch or 1, 1)
        out["what_would_fit"] = _what_would_fit(
            catalog, spec, acc, weight_precision, kv_precision, tokens_held, sequences,
            memory_headroom,
        )  # fmt: skip
    out.update(_what_would_meet(served, slo, common, d) if meets_none(out, res, slo) else {})
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
    out["assumptions"] = _inference_assumptions(
        weight_precision, kv_precision, prompt_tokens, output_tokens, memory_headroom, acc, dev, d
    ) + (_moe_assumptions(served, spec, d) if served.is_moe or served.kv_latent_dim else [])
    return out


def _error_band(accelerator_id: str, runtime: str, spec: ModelSpec) -> dict:
    """The measured capacity error band of the configuration's (accelerator family, runtime,
    model class) (solver/physics/bands.py; one outside the validated set is flagged and
    carries the widest band), with the
    90% one-sided share of the estimate it keeps, exp(-1.2816 x band)."""
    band = bands.error_band(
        str(accelerator_id),
        runtime,
        bands.model_class(spec.params, spec.experts, spec.experts_active),
    )
    out = band.as_dict()
    out["capacity_share_at_90pct"] = float(physics.capacity_derate(0.9, band.band_log))
    if not band.validated:
        out["note"] = (
            f"outside the validated set: the accuracy table has {band.rows} fitted rows for "
            f"{band.family}, {band.runtime}, {band.model_class} (fewer than {bands.MIN_ROWS}); "
            "the widest band is used"
        )
    return out


def meets_none(out: dict, res: physics.DecodeResult, slo: dict) -> bool:
    """Whether the model fits but no batch meets a latency limit given."""
    return bool(out["fits"] and res.reason[0] and any(v is not None for v in slo.values()))


def _what_would_meet(
    served: physics.ServedModel, slo: dict, common: dict, d: int
) -> dict[str, dict[str, float | int | None]]:
    """What would meet the limits no batch meets here (the operating-point rule,
    docs/guides/operating-point.md): the tightest TPOT and TTFT limits one sequence meets
    on this replica (at the percentile under load where one is asked, else at the mean),
    and the fewest devices per replica (2, 4 or 8, tensor parallel) at which some batch
    meets the limits given (None where none up to 8 does); at a percentile, the highest
    utilisation (``max_utilisation``, to 0.01) at which some batch on this replica meets
    them (None where none from 0.01 does: the queue is not what misses)."""
    one = physics.best_decode(served, **common, tpot_slo_s=None, ttft_slo_s=None, batch=1)
    assert one.tpot_p_s is not None and one.ttft_p_s is not None  # best_decode sets both
    tpot_s = max(float(one.step_s[0]), float(one.tpot_p_s[0]))
    ttft_s = float(one.ttft_p_s[0])
    devices = None
    for wider in (2, 4, 8):
        if wider <= d:
            continue
        trial = physics.best_decode(served, **slo, **{**common, "d": np.array([float(wider)])})
        if int(trial.batch[0]) >= 1:
            devices = wider
            break
    meet: dict[str, float | int | None] = {
        "tpot_slo_ms": tpot_s * 1000.0,
        "ttft_slo_ms": ttft_s * 1000.0,
        "tp_degree": devices,
    }
    load = common.get("load")
    if load is not None:
        meet["utilisation"] = _highest_utilisation(served, slo, common, load)
    return {"what_would_meet": meet}


def _highest_utilisation(
    served: physics.ServedModel, slo: dict, common: dict, load: physics.LoadPercentile
) -> float | None:
    """The highest utilisation, in hundredths below ``load.rho``, at which some batch meets
    the limits at ``load.p`` (bisection: the latencies at a percentile rise with the load);
    None where even 0.01 misses."""

    def meets(hundredths: int) -> bool:
        at = physics.LoadPercentile(p=load.p, rho=hundredths / 100.0)
        return int(physics.best_decode(served, **slo, **{**common, "load": at}).batch[0]) >= 1

    lo, hi = 0, int(math.floor(load.rho * 100.0))
    if hi < 1 or not meets(1):
        return None
    lo = 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if meets(mid) else (lo, mid)
    return (hi if meets(hi) else lo) / 100.0


def _seconds(ms: float | None) -> float | None:
    """Milliseconds to seconds; None (or 0: no SLO) stays None."""
    return ms / 1000.0 if ms else None


def _load(slo_percentile: float | None, utilisation: float):
    """The SLOs at ``slo_percentile`` under Poisson arrivals at ``utilisation`` of the
    replica's throughput (a problem's ``slo_percentile`` and ``max_utilisation``;
    physics.LoadPercentile), or None: at the mean."""
    if slo_percentile is None:
        return None
    return physics.LoadPercentile(p=float(slo_percentile), rho=float(utilisation))


def _at_percentile(res, slo_percentile: float | None, utilisation: float, replica_tps: float):
    """Where the SLOs were checked (``slo_checked_at``: ``p99``, ``mean``), and at a
    percentile the latencies there and the tokens/s served on average at that load
    (``utilisation`` x the replica's throughput)."""
    if slo_percentile is None:
        return {"slo_checked_at": "mean"}
    return {
        "slo_checked_at": f"p{float(slo_percentile) * 100:g}",
        "slo_percentile": float(slo_percentile),
        "utilisation": float(utilisation),
        "tpot_ms_at_percentile": float(res.tpot_p_s[0]) * 1000.0,
        "ttft_ms_at_percentile": float(res.ttft_p_s[0]) * 1000.0,
        "served_output_tokens_per_s": replica_tps * float(utilisation),
    }


def _moe_reads(served, batch: int, prompt_tokens: int, output_tokens: int) -> dict:
    """Weights a decode step reads at ``batch`` for a mixture of experts (GB, experts)."""
    share = float(
        physics.routed_share_per_step(
            served.experts, served.experts_active, batch, prompt_tokens, output_tokens
        )
    )
    decode_only = float(physics.experts_hit_share(served.experts, served.experts_active, batch))
    return {
        "mixture_of_experts": {
            "experts": served.experts,
            "experts_per_token": served.experts_active,
            "active_weights_gb": served.active_params * served.weight_bytes / 1e9,
            "shared_weights_gb": served.shared_weights_gb,
            "routed_weights_gb": served.routed_weights_gb,
            "experts_hit_per_layer": served.experts * decode_only,
            "routed_share_read_per_step": share,
            "weights_read_gb_per_step": served.shared_weights_gb + served.routed_weights_gb * share,
        }
    }


def _moe_assumptions(served, spec, d: int) -> list[str]:
    """What an estimate assumed about experts and a latent KV cache, in words."""
    notes = []
    if served.is_moe:
        notes.append(
            f"mixture of experts: all {spec.params / 1e9:.4g}B parameters in memory, the "
            f"{spec.active_params / 1e9:.4g}B active ones in the FLOPs; a decode step reads "
            f"the shared weights and the experts its b tokens hit, E(1-(1-k/E)^b) of "
            f"E = {served.experts:g} per layer (k = {served.experts_active:g}; uniform "
            "routing: an upper bound), plus b/O of the steps a prompt's prefill chunk "
            "(Oncescu et al. 2025, arXiv:2511.02237)"
        )
        notes.append(
            f"experts sharded over the replica's {d} device(s) with the other weights "
            "(vLLM's default tensor-parallel MoE): the replica needs the memory of every "
            "expert"
        )
    if served.kv_latent_dim:
        notes.append(
            f"latent (MLA) KV cache: {served.kv_latent_dim:g} values per token per layer "
            "(kv_lora_rank + qk_rope_head_dim), not 2 x kv_heads x head_dim "
            "(DeepSeek-V3, arXiv:2412.19437)"
        )
    return notes


def _inference_assumptions(
    weight_precision, kv_precision, prompt_tokens, output_tokens, memory_headroom, acc, dev, d
) -> list[str]:
    """What an inference estimate assumed, in words."""
    context = prompt_tokens + output_tokens
    labelled = (
        f"{float(acc['memory_label_gb']):g} {acc['memory_unit']}"
        if "memory_label_gb" in acc.index
        else None
    )
    eff = RUNTIME_EFFICIENCY[str(dev.runtime[0])]
    share = _sustained_share(acc, weight_precision)
    compute_share = (
        f"{eff.eta_compute:.0%} of dense peak"
        if share == 1.0
        else f"{eff.eta_compute:.0%} of the sustained GEMM rate ({share:.1%} of dense peak, "
        f"the vendor's measured max-achievable FLOPs: AMD_MAF) = "
        f"{eff.eta_compute * share:.0%} of dense peak"
    )
    kv_read = (
        f"a dense cache of {eff.static_kv_tokens} tokens per sequence, held and read whole "
        "every step"
        if eff.static_kv_tokens
        else f"read at the mean context {prompt_tokens + output_tokens / 2:g} tokens (prompt + "
        "half the output)"
    )
    return [
        f"weights {weight_precision} ({physics.bytes_per_value(weight_precision):g} B/param), "
        f"KV cache {kv_precision}, {kv_read}; one sequence of "
        f"{max(context, eff.static_kv_tokens)} tokens must fit",
        f"{memory_headroom:.0%} of device memory kept free (vLLM gpu_memory_utilization "
        f"{1 - memory_headroom:.2f}); memory as the vendor means it "
        f"({labelled} = {float(acc['memory_gb']):.1f} GB)",
        (
            "a decode graph compiled for the batch, every slot run padded; each prompt "
            "its own graph between decode steps; a request waits for a free slot (Erlang C "
            "at the percentile: solver/physics/latency.py, Slot wait)"
            if eff.static_batch
            else "continuous batching with chunked prefill: each step also prefills "
            f"{prompt_tokens / output_tokens:.2f} prompt tokens per output token"
        ),
        f"runtime {dev.runtime[0]}: {eff.eta_bandwidth:.0%} of bandwidth, "
        + compute_share
        + f", {eff.step_overhead_s * 1e3:g} ms per step, "
        f"memory and compute time {'overlapping (the longer counts)' if eff.overlap else 'added'} "
        f"({eff.source})",
    ] + (
        [
            f"tensor parallel over {dev.link[0]}: {dev.allreduce_latency_s[0] * 1e6:g} us per "
            f"all-reduce, 2 per layer"
        ]
        if d > 1
        else []
    )


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
    staff = staff_rule(site_row).small_fleet_usd_per_server_year
    hosting_usd_per_h = (
        float(site_row["colocation_usd_per_kw_month"]) * float(srv["power_kw"])
        + float(srv["maintenance_usd_per_year"]) / 12.0
        + float(staff) / 12.0
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
        # Months of round-the-clock use after which buying beats renting (cash policy, no
        # residual value, the way solve counts it): rent the lead time, then
        # capex + owning x (T - lead) = rent x T  ->  T* = lead + capex / (rent - owning),
        # owning = hosting + electricity per month.
        saving_usd_per_month = (
            rent_usd_per_h - energy_usd_per_h - hosting_usd_per_h
        ) * HOURS_PER_MONTH
        lead_months = float(srv["lead_time_days"]) / DAYS_PER_MONTH
        out["buy_vs_rent_break_even_months"] = (
            lead_months + float(srv["capex_usd"]) / saving_usd_per_month
            if saving_usd_per_month > 0
            else None
        )
    return out
