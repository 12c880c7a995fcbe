"""The guard's figures re-derived (``price_guard: band_top``): each line's band from its
price confidence and the catalog's bands, its guarded cost and the plan's guarded total
(docs/concepts/price-guard.md). Independent of the solver's code: the bands are the
catalog's (``Catalog.price_bands``), the rule is written out here again.
"""

from __future__ import annotations

from solver.trust.verify.context import _close
from solver.trust.verify.run import _Run
from solver.units import Item

#: Lines whose cost rests on a price the plan chooses: the guard scales them; the fleet
#: held at the start and the staff saving carry no band.
_GUARDED = {
    Item.RENT,
    Item.RESERVATION,
    Item.PURCHASE,
    Item.USE,
    Item.TRAINING,
    Item.SAVINGS_PLAN,
    Item.SAVINGS_PLAN_COVER,
    Item.CAPACITY_BLOCK,
}
CHECK = "guarded prices recomputed"


def _check_guard(run: _Run) -> None:
    """Per line: ``guard_band_fraction`` is its confidence's band (0 for lines without a
    price of their own) and ``guarded_cost_usd`` is ``cost_usd x (1 + band)``; the plan's
    ``guarded_total_usd`` is their sum. Under ``price_guard: none`` none of them is set."""
    plan, c = run.plan, run.c
    bands = run.catalog.price_bands or {}
    if run.p.price_guard == "none":
        stray = plan.guarded_total_usd is not None or any(
            i.guarded_cost_usd is not None or i.guard_band_fraction is not None
            for i in plan.line_items
        )
        if stray:
            c.check(CHECK, False, "the problem's price_guard is none, the plan has guarded figures")
        return
    total = 0.0
    for i in plan.line_items:
        level = i.price_confidence or "unverified"
        band = bands.get(level, bands.get("unverified", 0.0)) if i.item in _GUARDED else 0.0
        guarded = i.cost_usd * (1.0 + band)
        total += guarded
        c.check(
            CHECK,
            i.guard_band_fraction is not None
            and abs(i.guard_band_fraction - band) <= 1e-12
            and i.guarded_cost_usd is not None
            and _close(i.guarded_cost_usd, guarded, 1e-6),
            f"{i.item} {i.offering} {i.period}: band {i.guard_band_fraction} (expected "
            f"{band:g} for {level}), guarded {i.guarded_cost_usd} (expected {guarded:.2f})",
        )
    c.check(
        CHECK,
        plan.guarded_total_usd is not None and _close(plan.guarded_total_usd, total, 1e-6),
        f"guarded_total_usd {plan.guarded_total_usd} vs recomputed {total:.2f}",
    )
