"""The fleets a plan serves with, per workload, period and load block, as the replay runs
them: each serving line item a deployment of units, each unit ``accelerators per unit /
tp_degree`` replicas, and the demand the block must carry (requests/s at its worst hour).

Read from the plan's line items, the problem (its load curve: :func:`solver.inputs.load.
resolve_load`) and the catalog, with the physics the estimator uses.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, cast

import numpy as np
import pandas as pd

from solver import physics
from solver.analyses.replay.disagg import PrefillSpec
from solver.analyses.replay.engine import ReplicaSpec, step_cost
from solver.inputs.catalog import Catalog
from solver.inputs.load import resolve_load
from solver.inputs.presets import resolve_model
from solver.inputs.problem import InferenceWorkload, Problem
from solver.plan import Plan
from solver.units import Mode, server_and_site

#: tokens one engine step runs at most (vLLM's ``max_num_batched_tokens``), decode tokens
#: first and prompt chunks in what is left: vLLM V1's chunked-prefill policy
#: (vllm-project/vllm docs/configuration/optimization.md, "Chunked Prefill", which names
#: 2048 as the value for better inter-token latency and > 8192 for throughput);
#: ``procure replay --max-batched-tokens`` sets another
TOKEN_BUDGET = 2048


@dataclass(frozen=True)
class Deployment:
    """One serving line item of a block: ``units`` units of ``replicas_per_unit`` replicas."""

    offering: str
    mode: str
    accelerator: str
    units: int
    replicas_per_unit: int
    tp_degree: int
    planned_batch: int
    planned_tokens_per_s: float  # the plan's capacity of the line (all units)
    replica: ReplicaSpec
    pool_role: str = ""  # "prefill" or "decode" in a disaggregated deployment, else ""
    prefill: PrefillSpec | None = None  # a prefill line's replica (pool_role "prefill")


@dataclass(frozen=True)
class Scenario:
    """A workload's fleet in one period and load block, and the demand it must carry."""

    workload: str
    period: str
    block: str
    requests_per_s: float  # the block's worst hour
    prompt_tokens: int
    output_tokens: int
    mix: tuple[tuple[float, int, int], ...]  # (share, prompt, output) per bucket; () = one size
    ttft_slo_s: float
    tpot_slo_s: float
    slo_percentile: float | None  # the percentile the plan sized at (None: the mean)
    max_utilisation: float
    n_plus_1: bool  # the plan keeps its limits with the largest unit lost
    deployments: tuple[Deployment, ...]


def _unit_row(item: Any, catalog: Catalog) -> tuple[pd.Series, int, bool]:
    """(accelerator row, accelerators per unit, NVLink) of a line item's offering."""
    if item.mode == Mode.OWNED:
        server_id, _ = server_and_site(item.offering)
        srv = cast(pd.Series, catalog.servers.loc[server_id])
        acc = cast(pd.Series, catalog.accelerators.loc[srv["accelerator_id"]])
        return acc, int(srv["accelerators_per_server"]), bool(srv["nvlink"])
    off = cast(pd.Series, catalog.offerings.loc[item.offering])
    acc = cast(pd.Series, catalog.accelerators.loc[off["accelerator_id"]])
    return acc, int(off["accelerators_per_instance"]), bool(off["nvlink"])


def replica_spec(
    model: physics.ServedModel,
    d: int,
    dev: physics.Device,
    memory_headroom: float,
    group: int = 0,
    token_budget: int = TOKEN_BUDGET,
    planned_batch: int = 0,
) -> ReplicaSpec:
    """A replica of ``d`` devices as the replay runs it: the estimator's step time, its KV
    cache in tokens (the memory left after the weights, as
    :func:`solver.physics.best_decode` counts it) and the runtime's batch limit.

    A static-batch runtime (Neuron) runs a decode graph compiled for the batch its runtime
    spec names, else ``planned_batch`` (the plan's), padded, and at most that many
    sequences; a dense KV cache (JetStream, Neuron) holds its fixed length for every
    sequence, which bounds the batch; where prompts run as their own graph, each runs whole
    (no token budget splits it).
    """
    devices = np.array([float(d)])
    free_gb = float(d * dev.memory_gb[0] * (1.0 - memory_headroom) - model.weights_gb)
    kv_tokens = int(max(free_gb, 0.0) / model.kv_gb_per_token)
    max_seqs = int(dev.max_batch[0])
    compiled = 0
    if bool(np.asarray(getattr(dev, "static_batch", False)).reshape(-1)[0]):
        named = int(np.asarray(getattr(dev, "compiled_batch", 0.0)).reshape(-1)[0])
        compiled = named or planned_batch
        max_seqs = min(max_seqs, compiled) if compiled else max_seqs
    dense = float(np.asarray(getattr(dev, "static_kv_tokens", 0.0)).reshape(-1)[0])
    if dense > 0:
        max_seqs = max(min(max_seqs, int(kv_tokens // dense)), 1)
    if bool(np.asarray(getattr(dev, "prefill_serial", False)).reshape(-1)[0]):
        token_budget = 1 << 30
    one = float(physics.prefill_compute_s(model, 1.0, devices, dev)[0])
    two = float(physics.prefill_compute_s(model, 2.0, devices, dev)[0])
    # prefill(P) = a P + q P^2: a + q = one, 2a + 4q = two
    quad = (two - 2.0 * one) / 2.0
    return ReplicaSpec(
        cost=step_cost(model, d, dev, compiled_batch=compiled),
        kv_tokens=kv_tokens,
        max_seqs=max_seqs,
        token_budget=token_budget,
        prefill_s_per_token=one - quad,
        prefill_s_per_token_sq=quad,
        group=group,
    )


def _deployment(
    item: Any,
    w: InferenceWorkload,
    problem: Problem,
    catalog: Catalog,
    group: int,
    token_budget: int,
) -> Deployment:
    acc, apu, nvlink = _unit_row(item, catalog)
    spec = resolve_model(w.model, catalog, w.name)
    model = physics.served_model(spec, w.weight_precision, w.kv_precision)
    table = physics.one_row_table(acc.to_dict())
    dev = physics.device_figures(table, w.weight_precision, np.array([nvlink]), w.runtime)
    tp = max(int(item.tp_degree), 1)
    units = int(round(item.units))
    per_unit = max(apu // tp, 1)
    spec_ = replica_spec(
        model, tp, dev, problem.memory_headroom, group, token_budget, int(item.batch)
    )
    if units and item.capacity_tokens_per_s > 0:  # route by the plan's capacity per replica
        spec_ = replace(spec_, weight=float(item.capacity_tokens_per_s) / (units * per_unit))
    role = str(getattr(item, "pool_role", None) or "")
    pre = None
    if role == "prefill":  # whole prompts at the physics' service time (replay/disagg.py)
        devices = np.array([float(tp)])

        def service_s(prompt: int) -> float:
            return float(physics.prefill_s(model, float(prompt), devices, dev)[0])

        pre = PrefillSpec(
            service_s=service_s,
            kv_transfer_s=float(item.kv_transfer_s or 0.0),
            plan_prompt_tokens=int(w.prompt_tokens),
            group=group,
        )
    return Deployment(
        offering=item.offering,
        mode=str(item.mode),
        accelerator=str(item.accelerator),
        units=units,
        replicas_per_unit=per_unit,
        tp_degree=tp,
        planned_batch=int(item.batch),
        planned_tokens_per_s=float(item.capacity_tokens_per_s),
        replica=spec_,
        pool_role=role,
        prefill=pre,
    )


def _requests_per_s(w: InferenceWorkload) -> float:
    """Average requests/s of an online workload."""
    dem = w.demand
    if dem.requests_per_s is not None:
        return float(dem.requests_per_s)
    mix_output = (
        sum(b.share * b.output_tokens for b in w.traffic_mix) if w.traffic_mix else w.output_tokens
    )
    if dem.tokens_per_s is not None:
        return float(dem.tokens_per_s) / mix_output
    users = float(cast(float, dem.users))
    return users * float(cast(float, dem.requests_per_user_per_day)) / 86_400.0


def scenarios(
    plan: Plan, problem: Problem, catalog: Catalog, token_budget: int = TOKEN_BUDGET
) -> list[Scenario]:
    """Every (online workload, period, load block) the plan serves, with its fleet
    (``token_budget``: tokens one engine step runs at most, :data:`TOKEN_BUDGET`)."""
    load = resolve_load(problem)
    blocks = list(load.names)
    online = {w.name: w for w in problem.workloads if isinstance(w, InferenceWorkload)}
    items: dict[tuple[str, str, str], list[Any]] = {}
    for item in plan.line_items:
        if item.workload in online and item.units > 0 and item.tp_degree >= 1:
            for block in [item.block] if item.block else blocks:
                items.setdefault((item.workload, item.period, block), []).append(item)
    out = []
    for (name, period, block), lines in items.items():
        w = online[name]
        factor = load.factors[name][blocks.index(block)] if block in blocks else 1.0
        rate = _requests_per_s(w) * factor * w.demand_by_period.get(period, 1.0)
        mix = tuple((b.share, b.prompt_tokens, b.output_tokens) for b in w.traffic_mix or [])
        deps = tuple(
            _deployment(item, w, problem, catalog, g, token_budget) for g, item in enumerate(lines)
        )
        out.append(
            Scenario(
                workload=name,
                period=period,
                block=block,
                requests_per_s=rate,
                prompt_tokens=int(w.prompt_tokens),
                output_tokens=int(w.output_tokens),
                mix=mix,
                ttft_slo_s=w.ttft_slo_s,
                tpot_slo_s=w.tpot_slo_s,
                slo_percentile=w.slo_percentile,
                max_utilisation=float(w.max_utilisation),
                n_plus_1=w.n_plus_1,
                deployments=deps,
            )
        )
    order = {p.name: i for i, p in enumerate(problem.resolved_periods)}
    out.sort(
        key=lambda s: (
            s.workload,
            order.get(s.period, 0),
            blocks.index(s.block) if s.block in blocks else 0,
        )
    )
    return out


def without_largest_unit(deployments: tuple[Deployment, ...]) -> tuple[Deployment, ...]:
    """The fleet with one unit of the deployment whose unit carries the most (N+1 lost)."""
    if not deployments:
        return deployments

    def per_unit(d: Deployment) -> float:
        return d.planned_tokens_per_s / d.units if d.units else 0.0

    k = max(range(len(deployments)), key=lambda i: (per_unit(deployments[i]), deployments[i].units))
    out = list(deployments)
    lost = out[k]
    out[k] = replace(lost, units=max(lost.units - 1, 0))
    return tuple(out)


def replicas(deployments: tuple[Deployment, ...], role: str = "") -> list[ReplicaSpec]:
    """Every engine replica of a fleet's deployments of ``role`` ("" aggregated, or
    "decode"), in deployment order."""
    return [
        d.replica
        for d in deployments
        if d.pool_role == role
        for _ in range(d.units * d.replicas_per_unit)
    ]


def prefill_replicas(deployments: tuple[Deployment, ...]) -> list[PrefillSpec]:
    """Every prefill replica of a fleet's disaggregated deployments, in deployment order."""
    return [
        d.prefill
        for d in deployments
        if d.prefill is not None
        for _ in range(d.units * d.replicas_per_unit)
    ]


def capacities(deployments: tuple[Deployment, ...]) -> tuple[float, float]:
    """(aggregated, disaggregated) capacity of a fleet, output tokens/s: the plan's lines
    summed; a disaggregated side serves the smaller of its prefill and decode pools'."""
    agg = sum(d.planned_tokens_per_s for d in deployments if d.units and not d.pool_role)
    pre = sum(d.planned_tokens_per_s for d in deployments if d.units and d.pool_role == "prefill")
    dec = sum(d.planned_tokens_per_s for d in deployments if d.units and d.pool_role == "decode")
    return agg, min(pre, dec)
