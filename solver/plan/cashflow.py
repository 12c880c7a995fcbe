"""The plan's money by calendar month: opex, capex, commitments, cumulative spend
against the budget.

Built from the plan's FOCUS charge rows (:func:`solver.export.focus_frame`), so the
monthly cash flow, the FOCUS export and the plan total are one set of numbers: the
months' ``total_usd`` sum to the plan's ``total_cost_usd`` and each month equals the
``EffectiveCost`` of that month's FOCUS rows.
"""

from __future__ import annotations

from datetime import date

import pandas as pd

from solver.inputs.catalog import Catalog
from solver.inputs.problem import Problem
from solver.plan import CashFlowMonth, Plan
from solver.units import Item, Mode

RENTED = ("on_demand", "spot")
RESERVED = ("reserved_1y", "reserved_3y")


def first_of_next_month(today: date) -> date:
    """The default plan start: the first day of the month after ``today``."""
    return date(today.year + today.month // 12, today.month % 12 + 1, 1)


def cash_flow(plan: Plan, problem: Problem, catalog: Catalog, start: date) -> list[CashFlowMonth]:
    """The plan's cash flow by calendar month from ``start`` (see the module docstring)."""
    from solver.outputs.focus import focus_frame

    frame = focus_frame(plan, problem, catalog, start)
    if frame.empty:
        return []
    month = frame["BillingPeriodStart"].str.slice(0, 7)
    mode = frame["x_Mode"]
    usage = frame["ChargeCategory"] == "Usage"
    cost = frame["EffectiveCost"].astype(float)
    parts = pd.DataFrame(
        {
            "month": month,
            "period": frame["x_PlanPeriod"],
            "rented_usd": cost.where(mode.isin(RENTED), 0.0),
            "owned_opex_usd": cost.where((mode == Mode.OWNED) & usage, 0.0),
            "commitments_usd": cost.where(mode.isin(RESERVED), 0.0),
            "capex_usd": cost.where((mode == Mode.OWNED) & ~usage, 0.0),
            "total_usd": cost,
            "billed_usd": frame["BilledCost"].astype(float),
        }
    )
    money = ["rented_usd", "owned_opex_usd", "commitments_usd", "capex_usd", "total_usd"]
    by_month = parts.groupby("month", sort=True)
    sums = by_month[[*money, "billed_usd"]].sum()
    period_of = by_month["period"].first()
    commitments = _new_commitments(plan, problem, start)
    out: list[CashFlowMonth] = []
    cumulative = 0.0
    for key, row in sums.iterrows():
        cumulative += float(row["total_usd"])
        out.append(
            CashFlowMonth(
                month=str(key),
                period=str(period_of[key]),
                **{c: float(row[c]) for c in [*money, "billed_usd"]},
                cumulative_usd=cumulative,
                budget_headroom_usd=None
                if problem.budget_usd is None
                else problem.budget_usd - cumulative,
                new_commitments=commitments.get(str(key), []),
            )
        )
    return out


def _new_commitments(plan: Plan, problem: Problem, start: date) -> dict[str, list[str]]:
    """Month -> the reservations and purchases that start then, in words with their end."""
    from solver.units import RESERVED_TERM_MONTHS

    first_month: dict[str, float] = {}
    running = 0.0
    for p in problem.resolved_periods:
        first_month[p.name] = running
        running += p.months
    base = pd.Timestamp(start)
    out: dict[str, list[str]] = {}
    for i in plan.line_items:
        if i.item not in (Item.RESERVATION, Item.PURCHASE):
            continue
        begin = base + pd.DateOffset(months=int(first_month.get(i.period, 0.0)))
        if i.item == Item.RESERVATION:
            end = begin + pd.DateOffset(months=int(RESERVED_TERM_MONTHS.get(i.mode, 0)))
            text = f"reserve {i.units:g} x {i.offering} ({i.mode}) to {end:%Y-%m}"
        else:
            text = f"buy {i.units:g} x {i.instance_type} at {i.region}"
        out.setdefault(f"{begin:%Y-%m}", []).append(text)
    return out
