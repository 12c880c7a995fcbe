"""The guard against the optimiser's curse (``price_guard``): each pool's band, the
fraction its price may lie below the price billed, by its price confidence
(catalogs/price_bands.csv; docs/concepts/price-guard.md).

Under ``price_guard: band_top`` the objective prices a charge at ``usd x (1 + band)``;
budgets and ``total_cost_usd`` keep catalog prices. Under ``none`` every band is 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from solver.inputs.catalog import Catalog
from solver.inputs.problem import Problem

#: The pools-table (and options-table) column holding each pool's band, a fraction.
GUARD_COLUMN = "guard_band_fraction"


def guard_bands(problem: Problem, catalog: Catalog) -> dict[str, float]:
    """Confidence level -> band fraction the objective adds; empty when the guard is off
    (or the catalog carries no bands)."""
    if problem.price_guard == "none" or not catalog.price_bands:
        return {}
    return dict(catalog.price_bands)


def band_of(confidence: str, bands: Mapping[str, float]) -> float:
    """The band of one price confidence; an empty confidence (not stated) is
    ``unverified``; 0 without bands."""
    if not bands:
        return 0.0
    return float(bands.get(str(confidence or "unverified"), bands.get("unverified", 0.0)))


def band_column(confidence: Iterable[str], bands: Mapping[str, float]) -> np.ndarray:
    """:func:`band_of` for each confidence (a pools table's ``price_confidence``)."""
    return np.array([band_of(str(c), bands) for c in confidence], dtype=float)


def with_guard(pools: pd.DataFrame, bands: Mapping[str, float]) -> pd.DataFrame:
    """``pools`` with :data:`GUARD_COLUMN` from its ``price_confidence``."""
    return pools.assign(**{GUARD_COLUMN: band_column(pools["price_confidence"], bands)})


__all__ = ["GUARD_COLUMN", "band_column", "band_of", "guard_bands", "with_guard"]
