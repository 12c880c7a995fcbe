"""The plan: line items and totals read from a solved model (:mod:`solver.plan.lines`)
and its cash flow by month (:mod:`solver.plan.cashflow`).

``from solver.plan import Plan, extract_plan`` keeps working: the public names of
:mod:`solver.plan.lines` are re-exported here.
"""

from solver.plan.assumptions import Assumption, assumptions_of
from solver.plan.lines import (
    Binding,
    CashFlowMonth,
    Check,
    CurrencyView,
    LineItem,
    Plan,
    PlanInputs,
    Totals,
    binding_rows,
    extract_plan,
    input_digests,
    owned_utilisation,
    problem_json,
    served_fraction,
    totals_of,
)

__all__ = [
    "Assumption",
    "Binding",
    "CashFlowMonth",
    "Check",
    "CurrencyView",
    "LineItem",
    "Plan",
    "PlanInputs",
    "Totals",
    "assumptions_of",
    "binding_rows",
    "extract_plan",
    "input_digests",
    "owned_utilisation",
    "problem_json",
    "served_fraction",
    "totals_of",
]
