"""Sensitivity of a solved plan: shadow prices, break-even prices, sweeps and frontiers.

Everything here takes a solved problem as plain data and returns plain data; the
reasoning behind each analysis is in docs/concepts/sensitivity.md. The modules:
:mod:`~solver.analyses.sensitivity.results` (the result types),
:mod:`~solver.analyses.sensitivity.duals` (shadow prices and reduced costs),
:mod:`~solver.analyses.sensitivity.pricing` (pools and their prices),
:mod:`~solver.analyses.sensitivity.search` (one pool's exact break-even price, with the
engines in :mod:`~solver.analyses.sensitivity.warm`,
:mod:`~solver.analyses.sensitivity.period_split`, :mod:`~solver.analyses.sensitivity.steps`
and :mod:`~solver.analyses.sensitivity.cold`),
:mod:`~solver.analyses.sensitivity.classes` (interchangeable pools),
:mod:`~solver.analyses.sensitivity.break_even` (many pools, in parallel),
:mod:`~solver.analyses.sensitivity.sweeps` (frontier, sweeps, scenarios) and
:mod:`~solver.analyses.sensitivity.driver` (the whole analysis in one call).
"""

from __future__ import annotations

from solver.analyses.sensitivity.break_even import break_even_candidates, break_even_prices
from solver.analyses.sensitivity.driver import sensitivity_report
from solver.analyses.sensitivity.duals import shadow_prices
from solver.analyses.sensitivity.pricing import with_pool_price
from solver.analyses.sensitivity.results import BreakEven, Dual, SensitivityReport, SweepPoint
from solver.analyses.sensitivity.search import break_even_for_pool
from solver.analyses.sensitivity.sweeps import (
    REPORT_SWEEPS,
    budget_sweep,
    carbon_frontier,
    demand_sweep,
    price_scenarios,
    report_sweeps,
)

__all__ = [
    "REPORT_SWEEPS",
    "BreakEven",
    "Dual",
    "SensitivityReport",
    "SweepPoint",
    "break_even_candidates",
    "break_even_for_pool",
    "break_even_prices",
    "budget_sweep",
    "carbon_frontier",
    "demand_sweep",
    "price_scenarios",
    "report_sweeps",
    "sensitivity_report",
    "shadow_prices",
    "with_pool_price",
]
