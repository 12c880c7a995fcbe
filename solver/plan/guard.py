"""A plan's figures at guarded prices (``price_guard: band_top``): each line's band and
its cost at the top of it, and their total (docs/concepts/price-guard.md).

The objective priced every charge that rests on a price the plan chooses at
``usd x (1 + band)``, the band of the price's confidence (catalogs/price_bands.csv);
lines with no price of their own (the fleet held at the start, the staff saving) carry
band 0. ``total_cost_usd`` stays at catalog prices.
"""

from __future__ import annotations

from collections.abc import Mapping

from solver.plan.lines.items import LineItem
from solver.plan.lines.schema import Plan
from solver.units import Item

#: Line items whose cost rests on a price the plan chooses (the guard scales them).
GUARDED_ITEMS: frozenset[str] = frozenset(
    {
        Item.RENT,
        Item.RESERVATION,
        Item.PURCHASE,
        Item.USE,
        Item.TRAINING,
        Item.SAVINGS_PLAN,
        Item.SAVINGS_PLAN_COVER,
        Item.CAPACITY_BLOCK,
    }
)


def line_band(item: LineItem, bands: Mapping[str, float]) -> float:
    """The band of one line: its price confidence's (an empty one is ``unverified``)
    for the items of :data:`GUARDED_ITEMS`, else 0."""
    if item.item not in GUARDED_ITEMS or not bands:
        return 0.0
    level = item.price_confidence or "unverified"
    return float(bands.get(level, bands.get("unverified", 0.0)))


def with_guard(plan: Plan, guard: str, bands: Mapping[str, float]) -> Plan:
    """``plan`` with its guarded figures (``guard`` is the problem's ``price_guard``;
    ``bands`` confidence level -> fraction); unchanged when the guard is ``none``."""
    if guard == "none":
        return plan
    items = []
    for i in plan.line_items:
        band = line_band(i, bands)
        items.append(
            i.model_copy(
                update={"guard_band_fraction": band, "guarded_cost_usd": i.cost_usd * (1 + band)}
            )
        )
    total = sum(float(i.guarded_cost_usd or 0.0) for i in items)
    return plan.model_copy(
        update={"line_items": items, "price_guard": guard, "guarded_total_usd": total}
    )


__all__ = ["GUARDED_ITEMS", "line_band", "resummed_guard", "with_guard"]


def resummed_guard(plan: Plan) -> Plan:
    """``plan`` with each line's guarded cost worked again from its ``cost_usd`` and
    ``guard_band_fraction``, and their total (for a plan whose lines were edited, as
    :func:`with_guard` would make it); unchanged when it has no guarded figures."""
    if plan.price_guard is None:
        return plan
    items = [
        i.model_copy(
            update={"guarded_cost_usd": i.cost_usd * (1 + float(i.guard_band_fraction or 0.0))}
        )
        for i in plan.line_items
    ]
    total = sum(float(i.guarded_cost_usd or 0.0) for i in items)
    return plan.model_copy(update={"line_items": items, "guarded_total_usd": total})
