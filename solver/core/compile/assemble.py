"""Compile a problem: score every workload against every pool and assemble the options
table and its context (:func:`compile_problem`)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from solver.core import dominance
from solver.core.compile import pruning
from solver.core.compile.blocks import block_options
from solver.core.compile.compiled import Compiled, CompileReport
from solver.core.compile.demand import build_demand
from solver.core.compile.disagg import disagg_options
from solver.core.compile.energy import unit_hour_coefficients
from solver.core.compile.guard import GUARD_COLUMN, guard_bands, with_guard
from solver.core.compile.periods import blocks_table
from solver.core.compile.pools import pools_table
from solver.core.compile.requirements import hardware_notes, requirement_mask, weak_price_pools
from solver.core.compile.resolved import ResolvedInputs, resolve_inputs
from solver.core.compile.serving import inference_options
from solver.core.compile.training import (
    min_devices,
    no_cluster_reason,
    prune_training_options,
    training_options,
    with_device_key,
)
from solver.errors import InfeasibleError
from solver.inputs.catalog import Catalog
from solver.inputs.hardware import hardware_rules
from solver.inputs.presets import ModelSpec, resolve_model
from solver.inputs.problem import (
    InferenceWorkload,
    Problem,
    TrainingWorkload,
    Workload,
)
from solver.physics.constants import (
    INFERENCE_UTILISATION,
)


def compile_problem(
    problem: Problem, catalog: Catalog, *, prune_dominated: bool = True
) -> Compiled:
    """Score every workload against every pool; return the options table.

    The inputs are resolved once (:func:`~solver.core.compile.resolved.resolve_inputs`)
    and every stage reads them. ``prune_dominated`` drops cloud pools that cheaper pools
    of the same capacity make useless at *these* prices and demands
    (:func:`~solver.core.compile.pruning.prune_dominated_pools`), and rented options that
    cheaper, larger options with room replace
    (:func:`solver.core.dominance.prune_dominated_options`); analyses that change
    prices, demand or limits (break-even prices, sweeps, re-pricing a plan) compile
    with False.

    Raises
    ------
    ProcureError
        When the problem names something the catalog does not know.
    InfeasibleError
        When a workload can run on no pool.
    """
    inputs = resolve_inputs(problem, catalog)
    periods = inputs.calendar.periods
    blocks = blocks_table(problem, inputs.load)
    pools = with_guard(pools_table(problem, inputs.catalog), guard_bands(problem, inputs.catalog))
    rules = hardware_rules(problem, inputs.catalog)
    report = CompileReport(pools=len(pools), load_curve=inputs.load.as_dict())
    models: dict[str, ModelSpec] = {}
    frames: list[pd.DataFrame] = []
    inf_coef = unit_hour_coefficients(pools, INFERENCE_UTILISATION)
    weak, weak_why = weak_price_pools(problem, pools)
    keyed = with_device_key(pools)  # per device, not per pool (training, serving)
    for wi, w in enumerate(problem.workloads):
        spec = resolve_model(w.model, inputs.catalog, f"workloads[{wi}] ({w.name})")
        models[w.name] = spec
        allowed, why = requirement_mask(w, pools, rules[w.name], problem.min_tier)
        why = np.where(allowed & weak, weak_why, why)
        allowed = allowed & ~weak
        local_reasons: Counter[str] = Counter(why[~allowed])
        notes = hardware_notes(rules[w.name], local_reasons)
        if notes:
            report.hardware[w.name] = notes
        report.infeasible.update(local_reasons)
        frame = _workload_options(w, spec, keyed[allowed], inputs, inf_coef, report, local_reasons)
        report.per_workload[w.name] = len(frame)
        if len(frame) == 0:
            raise_for_no_option(w, local_reasons)
        frames.append(frame)
    options = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    demand = build_demand(problem, periods, blocks, inputs.load)
    # ids before pruning: an option has the same id (and its variables the same names)
    # in the pruned and the unpruned model of a problem, so a plan carries over by name
    options.insert(0, "option_id", np.arange(len(options)))
    if prune_dominated:
        # prefill and decode units serve through their group's rows, not the demand row:
        # they are never pruned, and their pools never pruned nor counted as room for others
        roles = _roles(options)
        if roles.any():
            held = frozenset(options.loc[roles, "pool_id"])
            rest = options[~roles].reset_index(drop=True)
            rest = pruning.prune_dominated_pools(rest, pools, demand, problem, report, keep=held)
            rest, dropped = dominance.prune_dominated_options(
                rest.reset_index(drop=True), pools, demand, problem, keep=held
            )
            options = pd.concat([rest, options[roles]]).sort_values("option_id")
        else:
            options = pruning.prune_dominated_pools(options, pools, demand, problem, report)
            options, dropped = dominance.prune_dominated_options(options, pools, demand, problem)
        report.pruned.update(dropped)
        options = options.reset_index(drop=True)
    options, bucket_capacity, training_hours = _options_tables(options, pools)
    report.kept = len(options)
    return Compiled(
        problem=problem,
        periods=periods,
        blocks=blocks,
        pools=pools,
        options=options,
        bucket_capacity=bucket_capacity,
        demand=demand,
        models=models,
        report=report,
        training_hours=training_hours,
        pruned_dominated=prune_dominated,
        quota_accelerators=tuple(
            inputs.catalog.resolve_accelerator(q.accelerator) if q.accelerator else None
            for q in problem.quotas
        ),
        inputs=inputs,
        capacity_blocks=block_options(inputs, pools, models, rules),
    )


def _workload_options(
    w: Workload,
    spec: ModelSpec,
    sub: pd.DataFrame,
    inputs: ResolvedInputs,
    inf_coef: dict[str, np.ndarray],
    report: CompileReport,
    local_reasons: Counter[str],
) -> pd.DataFrame:
    """One workload's options over the pools ``sub`` it may use: training clusters or
    serving shapes; what leaves a pool without an option is counted in ``local_reasons``."""
    problem = inputs.problem
    if isinstance(w, InferenceWorkload) and w.architecture != "aggregated":
        return serving_architectures(w, spec, sub, inputs, inf_coef, report, local_reasons)
    if not isinstance(w, TrainingWorkload):
        return inference_options(
            w, spec, sub, problem, inputs.catalog, inf_coef, report, local_reasons
        )
    opts = training_options(w, spec, sub, inputs.calendar.periods, problem, report)
    no_fit = min_devices(w, spec, sub, problem.memory_headroom)[1] == 0
    report.infeasible["training: activations alone exceed device memory"] += int(no_fit.sum())
    local_reasons["activations alone exceed device memory"] += int(no_fit.sum())
    if opts.empty:
        local_reasons[no_cluster_reason(w, problem)] += int((~no_fit).sum())
    kept = prune_training_options(opts, sub, report)
    if not kept.empty:
        kept.insert(0, "pool_id", sub["pool_id"].to_numpy()[kept.pop("pool_index")])
        kept.insert(0, "workload_kind", "training")
        kept.insert(0, "workload", w.name)
    return kept


def _roles(options: pd.DataFrame) -> pd.Series:
    """Options that are a disaggregated group's prefill or decode units."""
    if "pool_role" not in options:
        return pd.Series(False, index=options.index)
    return options["pool_role"].isin(["prefill", "decode"])


def serving_architectures(
    w: InferenceWorkload,
    spec: ModelSpec,
    sub: pd.DataFrame,
    inputs: ResolvedInputs,
    inf_coef: dict[str, np.ndarray],
    report: CompileReport,
    local_reasons: Counter[str],
) -> pd.DataFrame:
    """An online workload's options under ``architecture: disaggregated`` (prefill and
    decode options, :func:`~solver.core.compile.disagg.disagg_options`) or ``auto`` (those
    and the aggregated ones, marked ``architecture: aggregated``)."""
    problem = inputs.problem
    frames = [disagg_options(w, spec, sub, problem, inf_coef, report, local_reasons)]
    if w.architecture == "auto":
        agg = inference_options(w, spec, sub, problem, inputs.catalog, inf_coef, report,
                                local_reasons)  # fmt: skip
        agg["architecture"] = "aggregated"
        frames.insert(0, agg)
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _options_tables(
    options: pd.DataFrame, pools: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The options table as compiled (its pool's columns joined, the working columns
    dropped), the traffic-mix capacity of each option per bucket, and the periods each
    training option runs in."""
    bucket_rows: list[tuple[int, int, float]] = []
    rps_of = options.get("_rps", pd.Series([None] * len(options), dtype=object))
    for k, rps in zip(options["option_id"], rps_of, strict=True):
        if isinstance(rps, list):
            for j, v in enumerate(rps):
                if v > 0:
                    bucket_rows.append((k, j, float(v)))
    training_hours = _training_hours(options)
    options = options.drop(columns=["_rps", "hours_by_period"], errors="ignore")
    options = options.merge(
        pools[
            [
                "pool_id",
                "kind",
                "mode",
                "provider",
                "region",
                "offering_id",
                "accelerator_id",
                "accels_per_unit",
                "price_usd_per_hour",
                GUARD_COLUMN,
            ]
        ],
        on="pool_id",
        how="left",
    )
    bucket_capacity = pd.DataFrame(
        bucket_rows, columns=["option_id", "bucket", "requests_per_s_per_unit"]
    )
    return options, bucket_capacity, training_hours


def _training_hours(options: pd.DataFrame) -> pd.DataFrame:
    """One row per (training option, period it runs in): option_id, period, hours."""
    rows = [
        (int(k), int(t), float(h))
        for k, run in zip(
            options["option_id"], options.get("hours_by_period", [None] * len(options)), strict=True
        )
        if isinstance(run, tuple | list)
        for t, h in run
    ]
    return pd.DataFrame(rows, columns=["option_id", "period", "hours"])


def raise_for_no_option(w: Workload, reasons: Counter[str]) -> None:
    """A workload that can run nowhere: say why, with the most common reasons."""
    parts = [f"{why} ({n} offerings)" for why, n in reasons.most_common(4) if n]
    detail = "; ".join(parts) or "no offering in the allowed providers, regions and modes"
    raise InfeasibleError(
        f"workload {w.name!r} cannot run on any offering: {detail}",
        field=f"workloads ({w.name})",
        fix="relax its SLOs, residency or regions, use a smaller precision, or allow more modes",
    )
