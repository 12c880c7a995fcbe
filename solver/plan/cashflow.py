"""The plan's money by calendar month: opex, capex, commitments, cumulative spend
against the budget.

Summed from the plan's charges table (:func:`solver.plan.charges.charges`), the same
rows the FOCUS export (:mod:`solver.outputs.focus`) is made of, so the monthly cash
flow and the FOCUS rows are one set of numbers; the months' ``total_usd`` sum to the
plan's ``total_cost_usd``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from typing import cast

import pandas as pd

from solver.core.clock import add_months
from solver.inputs.catalog import Catalog
from solver.inputs.problem import Problem
from solver.plan.charges import EXTRA_CATEGORIES, by_month, charges, plan_calendar
from solver.plan.lines import CashFlowMonth, Plan
from solver.units import RESERVED_TERM_MONTHS, Item


def first_of_next_month(today: date) -> date:
    """The default plan start: the first day of the month after ``today``."""
    return date(today.year + today.month // 12, today.month % 12 + 1, 1)


def cash_flow(plan: Plan, problem: Problem, catalog: Catalog, start: date) -> list[CashFlowMonth]:
    """The plan's cash flow by calendar month from ``start`` (see the module docstring).

    Each month is labelled with the plan period it falls in (the last period for months
    after the horizon, where a reservation's term runs on).
    """
    table = charges(plan, problem, catalog, start)
    if table.empty:
        return []
    cal = plan_calendar(problem, start)
    last_period = list(cal.start_month)[-1]
    sums = by_month(table)
    commitments = _new_commitments(plan, table)
    out: list[CashFlowMonth] = []
    cumulative = 0.0
    for key, row in sums.iterrows():
        all_in = float(row["usd"])
        extras = {f"{c}_usd": float(row[c]) for c in EXTRA_CATEGORIES}
        cumulative += all_in
        out.append(
            CashFlowMonth(
                month=str(key),
                period=cal.period_at(float(row["plan_month"])) or last_period,
                rented_usd=float(row["rented"]),
                owned_opex_usd=float(row["owned_opex"]),
                commitments_usd=float(row["commitments"]),
                capex_usd=float(row["capex"] + row["residual_credit"]),
                total_usd=all_in - sum(extras.values()),
                **extras,
                all_in_usd=all_in,
                billed_usd=float(row["billed_usd"]),
                cumulative_usd=cumulative,
                budget_headroom_usd=None
                if problem.budget_usd is None
                else problem.budget_usd - cumulative,
                new_commitments=commitments.get(str(key), []),
            )
        )
    return out


def _new_commitments(plan: Plan, table: pd.DataFrame) -> dict[str, list[str]]:
    """Month -> the reservations and purchases that start then, in words with their end
    (a reservation's first fee and a purchase's capex are charged in that month)."""
    lines = table[table["line"] >= 0]
    first = lines.groupby("line", sort=True)["month_start"].first()
    out: dict[str, list[str]] = {}
    # grouped by the integer "line" column, so each key is a line item's index
    for line, begin in cast("Iterable[tuple[int, pd.Timestamp]]", first.items()):
        i = plan.line_items[int(line)]
        if i.item == Item.RESERVATION:
            end = add_months(begin.date(), int(RESERVED_TERM_MONTHS.get(i.mode, 0)))
            text = f"reserve {i.units:g} x {i.offering} ({i.mode}) to {end:%Y-%m}"
        elif i.item == Item.PURCHASE:
            text = f"buy {i.units:g} x {i.instance_type} at {i.region}"
        else:
            continue
        out.setdefault(f"{begin:%Y-%m}", []).append(text)
    return out
