"""Purchase orders per provider and the hardware order.

Pure functions from a plan (plus the catalog and the problem where dates or
server data are needed) to DataFrames, CSV text or XLSX bytes; the CLI writes
the files (``procure export``).

**Orders** (:func:`provider_orders`, :func:`hardware_order`): one order per
cloud provider (instances, regions, modes, terms, quantities, unit prices,
totals per period) and one for servers to buy (SKU, quantity, site, lead time,
delivery period).
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict

import numpy as np
import pandas as pd

from solver.inputs.catalog import Catalog
from solver.inputs.problem import Problem
from solver.inputs.sites import with_problem_sites
from solver.outputs.files import csv_text, money_rounded, workbook
from solver.plan import LineItem, Plan
from solver.plan.charges import delivery_month, plan_calendar
from solver.units import RENTED_MODES, RESERVED_TERM_MONTHS, Item

# --------------------------------------------------------------------------- orders

ORDER_ITEMS = (Item.RENT, Item.RESERVATION, Item.TRAINING, Item.SAVINGS_PLAN, Item.CAPACITY_BLOCK)
_TERM = {"on_demand": "pay as you go", "spot": "pay as you go (interruptible)"}
#: the report's purchase plan (:func:`purchase_orders`): its columns from the order lines
_PURCHASE_PLAN = {
    "provider": "provider",
    "region": "region",
    "item": "item",
    "offering": "offering",
    "instance_type": "instance_type",
    "accelerator": "accelerator",
    "mode": "mode",
    "period": "period",
    "block": "block",
    "workload": "workload",
    "quantity": "units",
    "accelerators": "accelerators",
    "hours_per_unit": "hours",
    "unit_price_usd": "unit_price_usd",
    "unit_price_basis": "unit_price_basis",
    "total_usd": "cost_usd",
    "price_confidence": "price_confidence",
    "price_date": "price_date",
    "price_source": "price_source",
}


def _term(item: LineItem) -> str:
    if item.item == Item.SAVINGS_PLAN:  # mode savings_plan_1y / _3y
        years = int(item.mode.removeprefix("savings_plan_").removesuffix("y"))
        return (
            f"savings plan: ${item.units:g}/h for {years} year{'s' if years > 1 else ''} "
            f"from the start of {item.period}"
        )
    if item.mode in RESERVED_TERM_MONTHS:
        years = int(RESERVED_TERM_MONTHS[item.mode] / 12)
        return f"{years} year{'s' if years > 1 else ''} from the start of {item.period}"
    return _TERM.get(item.mode, item.mode)


def order_lines(plan: Plan) -> pd.DataFrame:
    """The one orders table: every line item that is ordered (rent, reservation, training,
    purchase), in the plan's order, with what to order, where, how many, at what price.

    ``unit_price_usd_per_hour`` is the line item's (:attr:`LineItem.unit_price_usd_per_hour`);
    ``unit_price_usd`` the same per instance-hour, or per server for a purchase (its plan
    cost, capex and hosting, over the servers bought); ``price_date``, ``price_confidence``,
    ``price_source`` and ``price_currency`` where that price comes from;
    ``usd_<period>`` the cost per plan period. :func:`provider_orders` and
    :func:`purchase_orders` are views of it.
    """
    periods = list(plan.totals.by_period)
    rows = []
    for i in plan.line_items:
        if i.item not in (*ORDER_ITEMS, "purchase"):
            continue
        by_period = i.cost_by_period_usd or {i.period: i.cost_usd}
        bought = i.item == Item.PURCHASE
        per_unit = i.cost_usd / i.units if i.units else 0.0  # a server's capex and hosting
        rows.append(
            {
                "provider": i.provider,
                "item": i.item,
                "region": i.region,
                "instance_type": i.instance_type,
                "offering": i.offering,
                "accelerator": i.accelerator,
                "accelerators_per_unit": i.accelerators / i.units if i.units else 0.0,
                "accelerators": i.accelerators,
                "mode": i.mode,
                "term": _term(i),
                "period": i.period,
                "block": i.block,
                "workload": i.workload,
                "quantity": i.units,
                "hours_per_unit": i.hours,
                "unit_price_usd_per_hour": i.unit_price_usd_per_hour,
                "unit_price_usd": per_unit if bought else i.unit_price_usd_per_hour,
                "unit_price_basis": "per server (capex + hosting)"
                if bought
                else "per USD/h committed, per hour"
                if i.item == Item.SAVINGS_PLAN
                else "per instance-hour",
                "total_usd": i.cost_usd,
                "price_date": i.price_date,
                "price_confidence": i.price_confidence,
                "price_currency": i.price_currency,
                "price_source": i.price_source,
                **{f"usd_{p}": float(by_period.get(p, 0.0)) for p in periods},
            }
        )
    rows += [_cost_line_order(c, periods) for c in plan.cost_lines if c.category in ORDER_COSTS]
    return pd.DataFrame(rows)


#: cost lines a provider bills, ordered from it with the instances (solver/plan/costs.py)
ORDER_COSTS = ("storage", "egress", "support")


def _cost_line_order(c, periods: list[str]) -> dict:
    """A storage, egress or support cost line as an order row: what to set up with the
    provider, its quantity and unit price (per GB-month, per GB, or the support plan's
    effective rate on the spend), its cost per period."""
    return {
        "provider": c.provider,
        "item": c.category,
        "region": "",
        "instance_type": "",
        "offering": c.basis,
        "accelerator": "",
        "accelerators_per_unit": 0.0,
        "accelerators": 0.0,
        "mode": "",
        "term": "monthly, for the horizon",
        "period": "",
        "block": "",
        "workload": "",
        "quantity": c.quantity,
        "hours_per_unit": 0.0,
        "unit_price_usd_per_hour": 0.0,
        "unit_price_usd": c.unit_price_usd,
        "unit_price_basis": f"per {c.quantity_unit}"
        if c.category != "support"
        else "support fee per USD of spend, over the plan",
        "total_usd": c.cost_usd,
        "price_date": "",
        "price_confidence": "",
        "price_currency": "USD",
        "price_source": c.source,
        **{f"usd_{p}": float(c.cost_by_period_usd.get(p, 0.0)) for p in periods},
    }


def purchase_orders(plan: Plan) -> pd.DataFrame:
    """The report's purchase plan: one row per thing to order from a provider (what,
    where, mode, quantity, unit price), the rows of :func:`order_lines` by provider.

    Rented units are summarised at their peak count per period (what to have
    running); reservations and purchases are orders as they stand.
    """
    lines = order_lines(plan)
    if lines.empty:
        return lines
    frame = lines[list(_PURCHASE_PLAN)].rename(columns=_PURCHASE_PLAN)
    return frame.sort_values(["provider", "period", "region", "offering", "mode"], kind="stable")


def provider_orders(plan: Plan) -> dict[str, pd.DataFrame]:
    """One order per cloud provider: what to run or reserve, where, how many, at what price.

    Rows are the plan's rented units (per period and load block), reservations
    and rented training clusters (the rows of :func:`order_lines`), then the storage,
    egress and support the plan's cost lines buy from the provider; columns
    ``usd_<period>`` give each row's cost per plan period (data only: totals go below
    the data in the workbook). Owned servers are in :func:`hardware_order`; existing
    fleet and commitments need no order; training on reserved capacity is ordered by
    its reservation.
    """
    lines = order_lines(plan)
    if lines.empty:
        return {}
    keep = (lines["mode"] != "owned") & lines["item"].isin((*ORDER_ITEMS, *ORDER_COSTS))
    keep &= (lines["item"] != "training") | lines["mode"].isin(RENTED_MODES)
    columns = [
        c
        for c in lines.columns
        if c not in ("provider", "accelerators", "unit_price_usd", "unit_price_basis")
    ]
    out = {}
    for provider, frame in lines[keep].groupby("provider", sort=True):
        ordered = frame[columns].sort_values(
            ["period", "region", "instance_type", "mode", "item", "block", "workload"],
            kind="stable",
        )
        costs = ordered["item"].isin(ORDER_COSTS)  # storage, egress, support after compute
        out[str(provider)] = pd.concat([ordered[~costs], ordered[costs]]).reset_index(drop=True)
    return out


def hardware_order(plan: Plan, catalog: Catalog, problem: Problem | None = None) -> pd.DataFrame:
    """Servers to buy: SKU, quantity, site, order period, lead time, delivery.

    With the problem, ``delivery_month`` (months from the start of the plan) and
    ``in_service_from`` (the first period the servers serve in full) are given;
    without it only the lead time after the start of the order period.
    """
    rows = []
    cal = plan_calendar(problem) if problem is not None else None
    if problem is not None:  # its own sites, by the names it gives them
        catalog = with_problem_sites(problem, catalog)
    for i in plan.line_items:
        if i.item != Item.PURCHASE:
            continue
        server = (
            catalog.servers.loc[i.instance_type]
            if i.instance_type in catalog.servers.index
            else None
        )
        site = catalog.sites.loc[i.region] if i.region in catalog.sites.index else None
        lead_days = float(server["lead_time_days"]) if server is not None else float("nan")
        row = {
            "server": i.instance_type,
            "server_name": server["name"] if server is not None else "",
            "accelerator": i.accelerator,
            "accelerators_per_server": i.accelerators / i.units if i.units else 0.0,
            "quantity": i.units,
            "site": i.region,
            "site_name": site["name"] if site is not None else "",
            "order_period": i.period,
            "lead_time_days": lead_days,
            "capex_usd_per_server": float(server["capex_usd"]) if server is not None else np.nan,
            "capex_usd": i.units * float(server["capex_usd"]) if server is not None else np.nan,
            "plan_cost_usd": i.cost_usd,
            "price_date": i.price_date,
            "price_confidence": i.price_confidence,
            "price_currency": i.price_currency,
            "price_source": i.price_source,
            "delivery": f"{lead_days:g} days after the start of {i.period}"
            if lead_days == lead_days
            else "",
        }
        if i.served_months and lead_days == lead_days:  # bought within a split period
            row["delivery"] = (
                f"{lead_days:g} days after month {i.served_months[0]:g} of the plan (in {i.period})"
            )
        if cal is not None and lead_days == lead_days:
            arrival = delivery_month(i, cal, catalog)
            row["delivery_month"] = round(arrival, 2)
            after = [p for p, s in cal.start_month.items() if s >= arrival - 1e-9]
            row["in_service_from"] = after[0] if after else "after the horizon"
            if i.served_months:  # within its split period: in service from its arrival
                row["in_service_from"] = f"{i.period} (month {arrival:g})"
        rows.append(row)
    return pd.DataFrame(rows)


def orders_csv(plan: Plan, catalog: Catalog, problem: Problem | None = None) -> dict[str, str]:
    """File name -> CSV text: ``orders-<provider>.csv`` each, and ``hardware.csv``."""
    orders = provider_orders(plan)
    names = _file_names(list(orders))
    files = {
        f"orders-{names[p]}.csv": csv_text(money_rounded(frame)) for p, frame in orders.items()
    }
    hw = hardware_order(plan, catalog, problem)
    if not hw.empty:
        files["hardware.csv"] = csv_text(money_rounded(hw))
    return files


def orders_combined(plan: Plan) -> pd.DataFrame:
    """All providers' orders in one table (a ``provider`` column first)."""
    frames = []
    for provider, frame in provider_orders(plan).items():
        body = frame.copy()
        body.insert(0, "provider", provider)
        frames.append(body)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame({"provider": []})


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-") or "provider"


def _file_names(
    providers: list[str], limit: int = 200, reserved: tuple[str, ...] = ()
) -> dict[str, str]:
    """A file (or sheet) name per provider, unique even where case does not count.

    Names that collide once punctuation is replaced and case folded (``Acme`` and
    ``acme.``), or with a ``reserved`` name (the workbook's ``summary`` sheet), each get a
    short hash of the full provider name, so no order overwrites another anywhere.
    """
    slugs = {p: _safe(p)[:limit] for p in providers}
    counts = defaultdict(int, {name.lower(): 1 for name in reserved})
    for slug in slugs.values():
        counts[slug.lower()] += 1
    return {
        p: s if counts[s.lower()] == 1 else f"{s[: limit - 9]}-{_digest(p)}"
        for p, s in slugs.items()
    }


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def orders_xlsx(plan: Plan, catalog: Catalog, problem: Problem | None = None) -> bytes:
    """One workbook: a summary sheet first, one sheet per provider, and ``hardware``;
    totals below each order's data."""
    orders = provider_orders(plan)
    hw = hardware_order(plan, catalog, problem)
    summary_rows = [
        {"order": p, "lines": len(f), "total_usd": float(f["total_usd"].sum())}
        for p, f in orders.items()
    ]
    if not hw.empty:
        summary_rows.append(
            {"order": "hardware", "lines": len(hw), "total_usd": float(hw["plan_cost_usd"].sum())}
        )
    summary = pd.DataFrame(summary_rows, columns=["order", "lines", "total_usd"])
    names = _file_names(list(orders), limit=31, reserved=("summary", "hardware"))
    sheets = {"summary": summary, **{names[p]: f for p, f in orders.items()}}
    totals = {
        "summary": ["lines", "total_usd"],
        **{
            names[p]: [c for c in f.columns if c.startswith("usd_") or c == "total_usd"]
            for p, f in orders.items()
        },
    }
    if not hw.empty:
        sheets["hardware"] = hw
        totals["hardware"] = ["quantity", "capex_usd", "plan_cost_usd"]
    return workbook(sheets, totals)
