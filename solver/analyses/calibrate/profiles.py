"""Per model and runtime, the requests/s one accelerator sustains in every request-size
bucket, in the ``measured_throughput_rps`` layout of a problem's inference workload.
"""

from __future__ import annotations

import math
from typing import cast

import pandas as pd

from solver.analyses.calibrate.buckets import (
    BUCKET_EDGES_TOKENS,
    bucket_midpoints,
    bucket_order,
)
from solver.analyses.calibrate.fit import physics_runtime
from solver.inputs.catalog import Catalog


def build_profiles(
    points: pd.DataFrame,
    factors: pd.DataFrame,
    catalog: Catalog,
    *,
    tpot_slo_ms: float | None = None,
) -> list[dict]:
    """Per model and runtime: requests/s one accelerator sustains in every bucket.

    A bucket's figure is the highest measured requests/s among the points that lie wholly
    in it (and meet ``tpot_slo_ms`` where they report a TPOT): ``measured``. A bucket
    without one gets the physics at its midpoint sizes and best batch, scaled by the
    accelerator's fitted factor (``calibrated``), or unscaled when no factor was fitted
    (``physics``). Buckets follow :func:`bucket_order`.
    """
    from solver.analyses.estimate import estimate_inference

    order = bucket_order()
    mids = bucket_midpoints()
    profiles: list[dict] = []
    if points.empty:
        return profiles
    factor_of = {
        (r["accelerator"], r["runtime"]): r["factor"]
        for _, r in factors.iterrows()
        if "accelerator" in factors and "runtime" in factors
    }
    for (model_id, run), group in points.groupby(["model", "runtime"], sort=True):
        usable = group[group["per_bucket"].astype(bool) & (group["prompt_bucket"] >= 0)]
        usable = usable[usable["output_bucket"] >= 0]
        if tpot_slo_ms is not None:
            tpot = usable["tpot_ms"].astype(float)
            usable = usable[tpot.isna() | (tpot <= tpot_slo_ms)]
        best = usable.groupby(["accelerator", "prompt_bucket", "output_bucket"])[
            "measured_rps"
        ].max()
        rps: dict[str, list[float]] = {}
        basis: dict[str, str | list[str]] = {}
        for acc in sorted(group["accelerator"].unique()):
            values, kinds = [], []
            for i, j in order:
                if (acc, i, j) in best.index:
                    values.append(float(best[(acc, i, j)]))
                    kinds.append("measured")
                    continue
                tps = float(
                    estimate_inference(
                        catalog,
                        model=cast(str, model_id),
                        accelerator=acc,
                        prompt_tokens=mids[i],
                        output_tokens=mids[j],
                        batch=None,
                        runtime=physics_runtime(cast(str, run)),
                    )["replica_output_tokens_per_s"]
                )
                factor = factor_of.get((acc, run), math.nan)
                scaled = not (factor is None or pd.isna(factor))
                values.append(round(tps / mids[j] * (factor if scaled else 1.0), 6))
                kinds.append("calibrated" if scaled else "physics")
            rps[acc] = values
            basis[acc] = "measured" if set(kinds) == {"measured"} else kinds
        profiles.append(
            {
                "model": model_id,
                "runtime": run,
                "bucket_edges_tokens": list(BUCKET_EDGES_TOKENS),
                "buckets": [{"prompt_tokens": mids[i], "output_tokens": mids[j]} for i, j in order],
                "measured_throughput_rps": rps,
                "basis": basis,
            }
        )
    return profiles
