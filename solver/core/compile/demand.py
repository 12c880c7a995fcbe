"""Demand: the capacity each serving workload needs per period, load block and
traffic-mix bucket, headroom and utilisation target applied."""

from __future__ import annotations

import pandas as pd

from solver import physics
from solver.inputs.load import LoadBlocks
from solver.inputs.problem import (
    BatchInferenceWorkload,
    InferenceWorkload,
    Problem,
    TrainingWorkload,
)


def _average_requests_per_s(w: InferenceWorkload) -> float:
    """Average requests/s of an online workload, from whichever demand form it gives."""
    dem = w.demand
    if dem.requests_per_s is not None:
        return dem.requests_per_s
    if dem.tokens_per_s is not None:
        return dem.tokens_per_s / w.output_tokens
    # the problem's schema holds one of the three demand forms: here users x rate
    assert dem.users is not None and dem.requests_per_user_per_day is not None
    return dem.users * dem.requests_per_user_per_day / 86_400.0


def average_tokens_per_s(w: InferenceWorkload) -> float:
    """Average output tokens/s of an online workload."""
    d = w.demand
    return physics.demand_tokens_per_s(
        users=d.users,
        requests_per_user_per_day=d.requests_per_user_per_day,
        tokens_per_s=d.tokens_per_s,
        requests_per_s=d.requests_per_s,
        output_tokens=w.output_tokens,
    )


def _workload_periods(
    w: InferenceWorkload | BatchInferenceWorkload, periods: pd.DataFrame
) -> list[int]:
    """Indices of the periods a serving workload runs in (all when it names none)."""
    names = list(periods["name"])
    if w.periods is None:
        return list(range(len(names)))
    return [names.index(p) for p in w.periods]


def build_demand(
    problem: Problem, periods: pd.DataFrame, blocks: pd.DataFrame, load: LoadBlocks
) -> pd.DataFrame:
    """Capacity to provide per (workload, period, block[, bucket]), headroom applied.

    Online: tokens/s (or requests/s per bucket) = average x the workload's factor in the
    block (from ``load``) x its ``demand_by_period`` factor in the period x
    (1 + demand_headroom) / max_utilisation. Batch: output tokens spread evenly over the
    hours of its periods (no utilisation target: a batch job may run flat out). The
    derivation is in docs/formulation/demand.md.
    """
    load_factors = load.factors
    rows = []
    for w in problem.workloads:
        if isinstance(w, TrainingWorkload):
            continue
        tps = _workload_periods(w, periods)
        for t in tps:
            for b in range(len(blocks)):
                if isinstance(w, InferenceWorkload):
                    factor = load_factors[w.name][b]
                    factor *= w.demand_by_period.get(str(periods.at[t, "name"]), 1.0)
                    scale = factor * (1.0 + problem.demand_headroom) / w.max_utilisation
                    if w.traffic_mix:
                        total_rps = _average_requests_per_s(w) * scale
                        for j, bucket in enumerate(w.traffic_mix):
                            rows.append(
                                (
                                    w.name,
                                    t,
                                    b,
                                    j,
                                    total_rps * bucket.share,
                                    "requests_per_s",
                                    float(bucket.output_tokens),
                                )
                            )
                    else:
                        rows.append(
                            (w.name, t, b, -1, average_tokens_per_s(w) * scale, "tokens_per_s", 1.0)
                        )
                else:
                    hours = float(periods.loc[tps, "hours"].sum())
                    rows.append(
                        (
                            w.name,
                            t,
                            b,
                            -1,
                            w.output_tokens_total / (hours * 3600.0),
                            "tokens_per_s",
                            1.0,
                        )
                    )
    return pd.DataFrame(
        rows, columns=["workload", "period", "block", "bucket", "demand", "unit", "tokens_per_unit"]
    )
