"""A workbook finance can work in: the plan's line rows reference an inputs sheet
(prices, units, hours, the exchange rate), and the totals, subtotals and the budget
headroom are formulas over them, so a price tried in the inputs sheet moves the total.

A rented line (on-demand or spot, rent or training) costs units x hours x its price per
unit-hour in the currency billed x the rate (USD per unit of that currency); its row in
the inputs sheet holds those four, and the plan sheet's cost is their product. A line of
another kind (a reservation's term, a purchase, a savings plan, a server's hosting) is not
such a product: its cost stands in the inputs sheet as worked out by the solve
(``fixed_cost_usd``, its ``basis`` says so) and the plan sheet refers to it.

The costs beside compute (all in by default) are the ``cost lines`` sheet: a line that is
its quantity x its unit price (storage GB-months, egress GB, staff instance-hours, a tax
or contingency rate on its base) is that product as a formula, the others (support's
tiers) stand as worked out; the summary's all-in total is the plan sheet's total plus the
cost lines' total, and the budget headroom is the budget less the all-in total (the
budget holds it). A price tried in the inputs sheet moves compute and the all-in total
alike; the cost lines stand on the plan as solved (a tax or support line does not follow
the compute it was worked on).
"""

from __future__ import annotations

import pandas as pd
from openpyxl.utils import get_column_letter

from solver.outputs.files import PRICE_FORMAT
from solver.plan import LineItem, Plan
from solver.units import RENTED_MODES

#: the inputs sheet's name
INPUTS = "inputs"
#: its columns, in order
INPUT_COLUMNS = (
    "line",
    "period",
    "block",
    "provider",
    "offering",
    "mode",
    "price_currency",
    "unit_price_per_hour",
    "fx_usd_per_unit",
    "units",
    "hours",
    "fixed_cost_usd",
    "basis",
)
#: a line's product must give its cost within this, USD, to be a formula
CENT = 0.005


def _letter(columns: list[str], name: str) -> str:
    return get_column_letter(columns.index(name) + 1)


def _priced(item: LineItem) -> tuple[float, float] | None:
    """(price per unit-hour in the currency billed, USD per unit of it) of a rented line
    whose cost is units x hours x price x rate; None for the others."""
    if item.mode not in RENTED_MODES or item.item not in ("rent", "training"):
        return None
    if item.capacity_block is not None or item.units <= 0 or item.hours <= 0:
        return None
    fx = item.exchange_rate_usd_per_unit or 1.0
    price = item.unit_price_in_price_currency_per_hour
    if price is None:
        price = round(item.cost_usd / (item.units * item.hours) / fx, 6)
    if abs(price * fx * item.units * item.hours - item.cost_usd) > CENT:
        return None  # not a plain product (a minimum charge, a block price)
    return price, fx


def inputs_frame(plan: Plan) -> pd.DataFrame:
    """One row per line item, in the plan sheet's order (module docstring)."""
    rows = []
    for k, item in enumerate(plan.line_items, start=1):
        priced = _priced(item)
        rows.append(
            {
                "line": k,
                "period": item.period,
                "block": item.block,
                "provider": item.provider,
                "offering": item.offering,
                "mode": item.mode,
                "price_currency": item.price_currency or "USD",
                "unit_price_per_hour": None if priced is None else priced[0],
                "fx_usd_per_unit": None if priced is None else priced[1],
                "units": item.units,
                "hours": item.hours,
                "fixed_cost_usd": None if priced is not None else round(item.cost_usd, 2),
                "basis": "units x hours x price x rate"
                if priced is not None
                else f"{item.item} {item.mode}: the cost as solved",
            }
        )
    return pd.DataFrame(rows, columns=list(INPUT_COLUMNS))


def inputs_formats(frame: pd.DataFrame) -> dict[str, str | list[str | None]]:
    """The inputs sheet's price format row by row: dollars for a USD price, the code of the
    currency billed for another (a euro price is no dollar amount)."""
    formats: list[str | None] = [
        PRICE_FORMAT if currency == "USD" else f'#,##0.0000 "{currency}"'
        for currency in frame["price_currency"]
    ]
    return {"unit_price_per_hour": formats, "fx_usd_per_unit": '"$"#,##0.000000'}


def plan_formulas(plan: Plan, plan_columns: list[str]) -> dict[str, list[str | None]]:
    """The plan sheet's units, hours and cost_usd as references to the inputs sheet (row
    k + 1 of both sheets is line k)."""
    cols = list(INPUT_COLUMNS)
    price, fx = _letter(cols, "unit_price_per_hour"), _letter(cols, "fx_usd_per_unit")
    units, hours = _letter(cols, "units"), _letter(cols, "hours")
    fixed = _letter(cols, "fixed_cost_usd")
    out: dict[str, list[str | None]] = {"units": [], "hours": [], "cost_usd": []}
    for r, item in enumerate(plan.line_items, start=2):
        out["units"].append(f"={INPUTS}!{units}{r}")
        out["hours"].append(f"={INPUTS}!{hours}{r}")
        if _priced(item) is not None:
            out["cost_usd"].append(
                f"={INPUTS}!{units}{r}*{INPUTS}!{hours}{r}*{INPUTS}!{price}{r}*{INPUTS}!{fx}{r}"
            )
        else:
            out["cost_usd"].append(f"={INPUTS}!{fixed}{r}")
    return {c: v for c, v in out.items() if c in plan_columns}


def plan_total_cell(plan: Plan, plan_columns: list[str]) -> str:
    """The plan sheet's total cost cell (the totals row: the data, one blank row, then it)."""
    return f"plan!{_letter(plan_columns, 'cost_usd')}{len(plan.line_items) + 3}"


def subtotals(
    plan: Plan, plan_columns: list[str]
) -> tuple[pd.DataFrame, dict[str, list[str | None]]]:
    """The subtotals sheet: by period, provider, mode and workload, each a SUMIF over the
    plan sheet's cost column (and the frame of their values for the cells' types)."""
    last = len(plan.line_items) + 1
    cost = _letter(plan_columns, "cost_usd")
    rows: list[dict[str, object]] = []
    formulas: list[str | None] = []
    for by, mapping in (
        ("period", plan.totals.by_period),
        ("provider", plan.totals.by_provider),
        ("mode", plan.totals.by_mode),
        ("workload", plan.totals.by_workload),
    ):
        key = _letter(plan_columns, by)
        for name, usd in mapping.items():
            rows.append({"by": by, "key": name, "cost_usd": round(usd, 2)})
            # the key by its cell (B of this row), never as text inside the formula: a
            # name from the problem or catalog is data, not part of a formula
            here = len(rows) + 1
            formulas.append(
                f"=ROUND(SUMIF(plan!{key}2:{key}{last},B{here},plan!{cost}2:{cost}{last}),2)"
            )
    return pd.DataFrame(rows, columns=["by", "key", "cost_usd"]), {"cost_usd": formulas}


#: the cost lines sheet's name and columns
COST_LINES = "cost lines"
COST_LINE_COLUMNS = (
    "category",
    "provider",
    "quantity",
    "quantity_unit",
    "unit_price_usd",
    "cost_usd",
    "basis",
    "source",
)


def cost_lines_sheet(plan: Plan) -> tuple[pd.DataFrame, dict[str, list[str | None]]]:
    """The cost lines sheet (module docstring) and its cost formulas: quantity x unit
    price where that product is the line's cost to the cent, else none (the value)."""
    cols = list(COST_LINE_COLUMNS)
    qty, price = _letter(cols, "quantity"), _letter(cols, "unit_price_usd")
    rows, formulas = [], []
    for r, c in enumerate(plan.cost_lines, start=2):
        rows.append({k: getattr(c, k) for k in cols})
        product = abs(c.quantity * c.unit_price_usd - c.cost_usd) <= CENT
        # unrounded, as the plan sheet's lines: the sheet's total rounds once (a line rounded
        # on its own would put the total a cent off the plan's)
        formulas.append(f"={qty}{r}*{price}{r}" if product and c.cost_usd else None)
    return pd.DataFrame(rows, columns=cols), {"cost_usd": formulas}


def all_in_rows(plan: Plan) -> list[tuple[str, object]]:
    """The summary's headline row when the plan has cost lines: the all-in total (the
    compute total follows it, its own row)."""
    if not plan.cost_lines or plan.all_in_cost_usd is None:
        return []
    return [("all-in total (USD)", plan.all_in_cost_usd)]


def budget_held_usd(plan: Plan) -> float:
    """What the budget holds: the all-in total when the plan has cost lines, else compute."""
    if plan.cost_lines and plan.all_in_cost_usd is not None:
        return plan.all_in_cost_usd
    return plan.total_cost_usd


def beside_sheet(plan: Plan) -> dict[str, pd.DataFrame]:
    """The cost lines sheet, when the plan has cost lines."""
    return {COST_LINES: cost_lines_sheet(plan)[0]} if plan.cost_lines else {}


def beside_totals(plan: Plan) -> dict[str, list[str]]:
    """The cost lines sheet's totalled column, when it has one."""
    return {COST_LINES: ["cost_usd"]} if plan.cost_lines else {}


def live_formulas(
    plan: Plan,
    plan_columns: list[str],
    summary: pd.DataFrame,
    subtotal_formulas: dict[str, list[str | None]],
) -> dict[str, dict[str, list[str | None]]]:
    """Every sheet's formulas: the plan sheet's over the inputs sheet, the subtotals', the
    cost lines' and the summary's (none for a plan with no line)."""
    if not plan.line_items:
        return {}
    beside = cost_lines_total_cell(plan) if plan.cost_lines else None
    out = {
        "plan": plan_formulas(plan, plan_columns),
        "subtotals": subtotal_formulas,
        "summary": summary_formulas(summary, plan_total_cell(plan, plan_columns), beside),
    }
    if plan.cost_lines:
        out[COST_LINES] = cost_lines_sheet(plan)[1]
    return out


def cost_lines_total_cell(plan: Plan) -> str:
    """The cost lines sheet's total cost cell (its totals row, as the plan sheet's)."""
    column = _letter(list(COST_LINE_COLUMNS), "cost_usd")
    return f"'{COST_LINES}'!{column}{len(plan.cost_lines) + 3}"


def summary_formulas(
    summary: pd.DataFrame, total_cell: str, beside_cell: str | None = None
) -> dict[str, list[str | None]]:
    """The summary's total cost, all-in total, headroom and budget share as formulas: the
    total from the plan sheet's total row, the all-in total it plus the cost lines' total
    (``beside_cell``), the headroom the budget less the all-in total (the total without
    cost lines)."""
    what = list(summary["what"])
    out: list[str | None] = [None] * len(what)
    row = {w: i + 2 for i, w in enumerate(what)}
    total = row.get("total cost (USD)")
    budget = row.get("budget (USD)")
    if total is None:
        return {}
    out[total - 2] = f"={total_cell}"
    held = total  # the figure the budget holds
    all_in = row.get("all-in total (USD)")
    if all_in is not None and beside_cell is not None:
        out[all_in - 2] = f"=B{total}+{beside_cell}"
        held = all_in
    values = list(summary["value"])
    if budget is not None and values[budget - 2] is not None:
        if "budget headroom (USD)" in row:
            out[row["budget headroom (USD)"] - 2] = f"=B{budget}-B{held}"
        share = row.get("share of the budget used (share)")
        if share is not None and values[budget - 2]:
            out[share - 2] = f"=B{held}/B{budget}"
    capex = row.get("capex (USD)")
    if capex is not None and "opex and commitments (USD)" in row:
        out[row["opex and commitments (USD)"] - 2] = f"=B{total}-B{capex}"
    return {"value": out}


__all__ = [
    "COST_LINES",
    "COST_LINE_COLUMNS",
    "INPUTS",
    "INPUT_COLUMNS",
    "inputs_formats",
    "inputs_frame",
    "live_formulas",
    "plan_formulas",
    "cost_lines_sheet",
    "cost_lines_total_cell",
    "plan_total_cell",
    "subtotals",
    "summary_formulas",
]
