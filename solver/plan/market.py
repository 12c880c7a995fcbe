"""Each rented line's price against the published rental index of its accelerator
(catalogs/market_index.csv; docs/concepts/price-guard.md, The market reference).

A line's price per GPU-hour is ``cost_usd / (accelerators x hours)``; its premium is that
over the index, less 1. A price more than 2x away from its index is a
``market_index`` warning naming the line.
"""

from __future__ import annotations

from collections.abc import Mapping

from solver.inputs.market_index import MarketLevel, far_from_index, premium_fraction
from solver.plan.lines.items import LineItem
from solver.plan.lines.schema import Plan
from solver.plan.warnings import PlanWarning
from solver.units import Item

#: Lines whose price is a rental price of the accelerator (owned use, purchases, the
#: fleet held, savings plans and the staff saving have none to compare).
MARKET_ITEMS: frozenset[str] = frozenset(
    {Item.RENT, Item.RESERVATION, Item.TRAINING, Item.CAPACITY_BLOCK}
)


def usd_per_gpu_hour(item: LineItem) -> float | None:
    """The line's price per GPU-hour, ``cost_usd / (accelerators x hours)``; None
    without GPU-hours."""
    gpu_hours = item.accelerators * item.hours
    return item.cost_usd / gpu_hours if gpu_hours > 0 else None


def with_market(plan: Plan, index: Mapping[str, MarketLevel] | None) -> Plan:
    """``plan`` with each rented line's index level, its date and its premium; unchanged
    without an index."""
    if not index:
        return plan
    items = []
    for i in plan.line_items:
        level = index.get(i.accelerator) if i.item in MARKET_ITEMS else None
        price = usd_per_gpu_hour(i)
        if level is None or price is None or i.cost_usd <= 0:
            items.append(i)
            continue
        items.append(
            i.model_copy(
                update={
                    "market_index_usd_per_gpu_hour": level.usd_per_gpu_hour,
                    "market_index_date": level.as_of,
                    "market_premium_fraction": premium_fraction(price, level.usd_per_gpu_hour),
                }
            )
        )
    return plan.model_copy(update={"line_items": items})


def market_warnings(plan: Plan) -> list[PlanWarning]:
    """One ``market_index`` warning per line whose price is more than 2x away from its
    index (:func:`solver.inputs.market_index.far_from_index`); a line split into load
    blocks is named once."""
    out: list[PlanWarning] = []
    seen: set[tuple[str, str]] = set()
    for i in plan.line_items:
        premium = i.market_premium_fraction
        if premium is None or i.market_index_usd_per_gpu_hour is None:
            continue
        if not far_from_index(premium):
            continue
        side = "above" if premium > 0 else "below"
        warning = PlanWarning(
            kind="market_index",
            field=f"line_items: {i.item} {i.offering} {i.mode} {i.period}",
            detail=(
                f"${(1 + premium) * i.market_index_usd_per_gpu_hour:.2f} per GPU-hour is "
                f"{1 + premium:.3f}x the {i.accelerator} rental index "
                f"(${i.market_index_usd_per_gpu_hour:.2f}, {i.market_index_date}), more than "
                f"2x {side} it: confirm the price with the provider (a quote) before "
                "signing, or correct it in the catalog"
            ),
        )
        if (warning.field, warning.detail) not in seen:  # one per line, not per load block
            seen.add((warning.field, warning.detail))
            out.append(warning)
    return out


__all__ = ["MARKET_ITEMS", "market_warnings", "usd_per_gpu_hour", "with_market"]
