"""The physics' prediction for each measured point and the factor fitted per accelerator and
runtime: measured = factor x physics, the geometric mean of the ratios.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from solver.inputs.catalog import Catalog
from solver.physics import calibration_factor


def physics_runtime(runtime: str | None) -> str | None:
    """The physics' runtime for a measured one: TensorRT-LLM has its own batch limit;
    every other engine runs on its vendor's default stack (solver/physics/constants.py)."""
    return "tensorrt-llm" if runtime == "tensorrt-llm" else None


def predict(points: pd.DataFrame, catalog: Catalog) -> pd.DataFrame:
    """Add the physics' ``predicted`` output tokens/s of one replica and ``predicted_rps``.

    At the point's concurrency when it has one (a run capped beyond what the memory holds
    is predicted at the physics' best batch, as the runtime would queue the rest), else
    at the best batch.
    """
    from solver.analyses.estimate import estimate_inference

    cache: dict[tuple, float] = {}

    def one(row: pd.Series) -> float:
        prompt = max(1, int(round(float(row["prompt_tokens"]))))
        output = max(1, int(round(float(row["output_tokens"]))))
        conc = row["concurrency"]
        batch = None if conc is None or pd.isna(conc) else max(1, int(round(float(conc))))
        runtime = physics_runtime(row.get("runtime"))
        key = (row["model"], row["accelerator"], prompt, output, batch, runtime)
        if key not in cache:
            tps = float(
                estimate_inference(
                    catalog,
                    model=row["model"],
                    accelerator=row["accelerator"],
                    prompt_tokens=prompt,
                    output_tokens=output,
                    batch=batch,
                    runtime=runtime,
                )["replica_output_tokens_per_s"]
            )
            cache[key] = tps
        return cache[key]

    out = points.copy()
    out["predicted"] = [one(row) for _, row in points.iterrows()] if len(points) else []
    out["predicted_rps"] = out["predicted"] / out["output_tokens"].astype(float)
    return out


FACTOR_COLUMNS: tuple[str, ...] = (
    "model",
    "n_points",
    "n_excluded",
    "factor",
    "median_abs_log_ratio",
    "max_abs_log_ratio",
)


def fit_factors(
    points: pd.DataFrame, by: Sequence[str] = ("accelerator", "runtime")
) -> pd.DataFrame:
    """Fit measured = factor x predicted, one factor per group.

    Parameters
    ----------
    points
        Columns ``measured`` and ``predicted`` (any one unit, the same for both: output
        tokens/s or requests/s), the ``by`` columns and optionally ``model``.
    by
        Columns that define a group; empty for one factor over all points.

    Returns
    -------
    One row per group: the ``by`` columns, ``model`` (the models fitted, ``;``-joined),
    ``n_points`` (points used), ``n_excluded`` (points with a zero, negative or missing
    measured or predicted figure, which have no ratio), ``factor`` (geometric mean of
    measured / predicted; NaN without points), and the fit's error as the median and
    largest ``|ln(measured / (factor x predicted))|`` (0.1 is about 10% off).
    """
    by = list(by)
    groups = [((), points)] if not by else list(points.groupby(by, sort=True, dropna=False))
    rows = []
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        measured = group["measured"].astype(float).to_numpy()
        predicted = group["predicted"].astype(float).to_numpy()
        # the same fit compile uses for a workload's unprofiled cards
        factor, n, max_residual = calibration_factor(measured, predicted)
        with np.errstate(divide="ignore", invalid="ignore"):
            residual = np.abs(np.log(measured / (factor * predicted)))
        residual = residual[np.isfinite(residual) & (measured > 0) & (predicted > 0)]
        row = dict(zip(by, key, strict=True))
        row["model"] = (
            ";".join(sorted({str(m) for m in group["model"]})) if "model" in group else ""
        )
        row["n_points"] = n
        row["n_excluded"] = int(len(group) - n)
        row["factor"] = factor if n else math.nan
        row["median_abs_log_ratio"] = float(np.median(residual)) if n else math.nan
        row["max_abs_log_ratio"] = max_residual if n else math.nan
        rows.append(row)
    return pd.DataFrame(rows, columns=[*by, *FACTOR_COLUMNS])
