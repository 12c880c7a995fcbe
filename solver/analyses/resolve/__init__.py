"""Re-solving from where we stand: the plan being executed (the baseline) carried into the
problem as seen from a period, re-solved at new prices, and compared with the baseline.

The four steps (rebase, price the baseline, stability rows, diff): docs/guides/after-signing.md.
"""

from solver.analyses.resolve.decisions import (
    DECISION_ITEMS,
    Decision,
    baseline_pools,
    baseline_units,
    decision_index,
    useful_units,
)
from solver.analyses.resolve.pricing import diff_at_prices, evaluate_decisions, priced_at
from solver.analyses.resolve.rebasing import Rebased, rebase
from solver.analyses.resolve.resolution import Resolution, resolve
from solver.analyses.resolve.stability import StabilityInfo, add_stability, count_changes

__all__ = [
    "DECISION_ITEMS",
    "Decision",
    "Rebased",
    "Resolution",
    "StabilityInfo",
    "add_stability",
    "baseline_pools",
    "baseline_units",
    "count_changes",
    "decision_index",
    "diff_at_prices",
    "evaluate_decisions",
    "priced_at",
    "rebase",
    "resolve",
    "useful_units",
]
