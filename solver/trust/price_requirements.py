"""A plan resting on prices the problem does not accept is refused, its lines named.

A problem may require ``min_price_confidence`` (unverified < third_party < list = quote)
and ``max_price_age_days`` (days from a price's date to the plan's first day; an unknown
date counts as too old). Under ``weak_price_policy: refuse`` (the default) the plan is
solved over every price and then checked here; under ``exclude`` compile has left those
prices out (:func:`solver.core.compile.weak_price_pools`) and this check only catches what
was kept because it is already held.

Lines that commit money at a catalog price are checked: rent, reservations, purchases and
rented training. ``use`` lines run units bought or reserved in another line, and
``existing`` lines hold what was paid before the plan: neither is a new price.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

from solver.errors import ProcureError
from solver.inputs.problem import Problem
from solver.inputs.provenance import meets_confidence, price_age_days, too_old
from solver.plan import LineItem, Plan
from solver.units import Item, Mode

#: Line items that commit money at a catalog price.
PRICED_ITEMS = (Item.RENT, Item.RESERVATION, Item.PURCHASE, Item.TRAINING)


@dataclass(frozen=True)
class WeakPrice:
    """One price (an offering in a mode, or a server) a plan rests on that the problem does
    not accept, with the line items resting on it."""

    offering: str
    mode: str
    price_confidence: str
    price_date: str
    age_days: float | None
    why: str
    lines: int
    cost_usd: float


def _why(item: LineItem, problem: Problem, start: date) -> str:
    """What the line's price lacks ('' when it meets the problem's requirements)."""
    reasons = []
    if not meets_confidence(item.price_confidence, problem.min_price_confidence):
        reasons.append(
            f"confidence {item.price_confidence or 'not stated'} is below "
            f"{problem.min_price_confidence}"
        )
    if too_old(item.price_date, start, problem.max_price_age_days):
        age = price_age_days(item.price_date, start)
        reasons.append(
            "its date is unknown"
            if age is None
            else f"it is {age:,.0f} days old at the start, over {problem.max_price_age_days:g}"
        )
    return " and ".join(reasons)


def weak_prices(plan: Plan, problem: Problem) -> list[WeakPrice]:
    """The prices ``plan`` rests on below ``problem``'s requirements, one per offering and
    mode, dearest first; empty when the problem sets none."""
    start = date.fromisoformat(plan.start_date) if plan.start_date else date.today()
    return weak_prices_in(plan.line_items, problem, start)


def weak_prices_in(items: list[LineItem], problem: Problem, start: date) -> list[WeakPrice]:
    """:func:`weak_prices` of any line items (a two-stage plan's commitments), their ages
    counted to ``start``."""
    if problem.min_price_confidence is None and problem.max_price_age_days is None:
        return []
    found: dict[tuple[str, str], list] = {}
    for i in items:
        if i.item in PRICED_ITEMS and not (i.item == Item.TRAINING and i.mode == Mode.OWNED):
            why = _why(i, problem, start)
            if why:
                found.setdefault((i.offering, i.mode), []).append((i, why))
    out = [
        WeakPrice(
            offering=offering,
            mode=mode,
            price_confidence=rows[0][0].price_confidence,
            price_date=rows[0][0].price_date,
            age_days=price_age_days(rows[0][0].price_date, start),
            why=rows[0][1],
            lines=len(rows),
            cost_usd=sum(i.cost_usd for i, _ in rows),
        )
        for (offering, mode), rows in found.items()
    ]
    return sorted(out, key=lambda w: (-w.cost_usd, w.offering, w.mode))


def refuse_weak_prices(weak: list[WeakPrice], total_usd: float, catalog_dir: str) -> None:
    """Refuse a plan of ``total_usd`` that rests on the ``weak`` prices
    (:func:`weak_prices`); nothing when there are none.

    Raises
    ------
    ProcureError
        Naming each such price (offering, mode, what it lacks, its line items and their
        cost), the catalog file that states it and the fix.
    """
    if not weak:
        return
    owned = all(w.mode == Mode.OWNED for w in weak)
    file = Path(catalog_dir) / ("servers.csv" if owned else "offerings.csv")
    named = "; ".join(
        f"{w.offering} {w.mode}: {w.why} ({w.lines} line item(s), ${w.cost_usd:,.0f})"
        for w in weak[:8]
    )
    more = f"; and {len(weak) - 8} more" if len(weak) > 8 else ""
    total = sum(w.cost_usd for w in weak)
    raise ProcureError(
        f"the plan rests on {len(weak)} price(s) the problem does not accept "
        f"(${total:,.0f} of ${total_usd:,.0f}): {named}{more}",
        file=str(file),
        field="price_confidence, price_date of those rows",
        fix="confirm those prices (the provider's own page or a quote: update price_date and "
        "price_confidence in the catalog), relax min_price_confidence or max_price_age_days, "
        "or set weak_price_policy: exclude to plan without them",
    )
