"""Price scenarios as a distribution of the total: percentiles and a histogram."""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
import pandas as pd

from solver.analyses.sensitivity.results import SweepPoint

#: the percentiles of the total a CFO asks for
PERCENTILES = (10, 50, 90)


def scenario_totals_usd(points: Sequence[SweepPoint]) -> list[float]:
    """The totals of the feasible scenarios, USD, in the order drawn."""
    return [float(p.total_cost_usd) for p in points if p.total_cost_usd is not None]


def total_percentiles(points: Sequence[SweepPoint]) -> dict[str, float]:
    """'p10', 'p50', 'p90' of the scenarios' totals, USD (linear interpolation between
    order statistics, numpy's default); empty without a feasible scenario."""
    totals = scenario_totals_usd(points)
    if not totals:
        return {}
    values = np.percentile(np.asarray(totals), PERCENTILES)
    return {f"p{q}": float(v) for q, v in zip(PERCENTILES, values, strict=True)}


def scenario_frame(points: Sequence[SweepPoint]) -> pd.DataFrame:
    """One row per scenario: its number, status, total (USD) and proven relative gap (a
    fraction: the plan is within it of the scenario's optimum; ``--sweep-gap``)."""
    return pd.DataFrame(
        {
            "scenario": [int(p.value) for p in points],
            "status": [p.status for p in points],
            "total_cost_usd": [p.total_cost_usd for p in points],
            "gap": [p.gap for p in points],
        }
    )


def histogram_png(points: Sequence[SweepPoint], bins: int = 10) -> bytes:
    """A histogram of the scenarios' totals with p10, p50 and p90 marked (PNG; empty bytes
    without a feasible scenario)."""
    totals = scenario_totals_usd(points)
    if not totals:
        return b""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3))
    ax.hist(totals, bins=min(bins, max(1, len(totals))), color="#4c72b0")
    for name, value in total_percentiles(points).items():
        ax.axvline(value, color="#c44e52", linestyle="--", linewidth=1)
        ax.annotate(name, (value, ax.get_ylim()[1] * 0.9), rotation=90, fontsize=8)
    ax.set_xlabel("total cost under the scenario's prices, USD")
    ax.set_ylabel("scenarios")
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=90, metadata={"Software": None})
    plt.close(fig)
    return out.getvalue()


__all__ = [
    "PERCENTILES",
    "histogram_png",
    "scenario_frame",
    "scenario_totals_usd",
    "total_percentiles",
]
