"""The plan read from a solved model: its line items, totals and the figures beside them.

``from solver.plan.lines import Plan, LineItem`` keeps working: the public names of the
modules of this package are re-exported here.
"""

from solver.plan.lines.digests import LATER_FIELDS, PlanInputs, input_digests, problem_json
from solver.plan.lines.extract import FrameRow, extract_plan, savings_plan_offering
from solver.plan.lines.items import CostLine, Deployment, LineItem, deployments_of
from solver.plan.lines.schema import Binding, CashFlowMonth, Check, CurrencyView, Plan, Totals
from solver.plan.lines.summary import binding_rows, owned_utilisation, served_fraction, totals_of

__all__ = [
    "LATER_FIELDS",
    "Binding",
    "CashFlowMonth",
    "Check",
    "CostLine",
    "CurrencyView",
    "Deployment",
    "FrameRow",
    "LineItem",
    "Plan",
    "PlanInputs",
    "Totals",
    "binding_rows",
    "deployments_of",
    "extract_plan",
    "input_digests",
    "owned_utilisation",
    "problem_json",
    "savings_plan_offering",
    "served_fraction",
    "totals_of",
]
