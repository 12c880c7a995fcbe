"""Each rented line's market premium re-derived: its accelerator's level in the catalog's
published rental index (``Catalog.market_index``), its date, and ``cost_usd /
(accelerators x hours) / level - 1`` (docs/concepts/price-guard.md, The market
reference). Independent of the solver's code: the rule is written out here again.
"""

from __future__ import annotations

from solver.trust.verify.run import _Run
from solver.units import Item

#: Lines priced at a rental price of the accelerator.
_RENTED = {Item.RENT, Item.RESERVATION, Item.TRAINING, Item.CAPACITY_BLOCK}
CHECK = "market premium recomputed"


def _check_market(run: _Run) -> None:
    """Per line: a rented line whose accelerator has an index level carries that level,
    its date and its premium (to 1e-9); every other line carries none of them."""
    index = run.catalog.market_index or {}
    if not any(i.market_index_date is not None for i in run.plan.line_items):
        # a plan made without a market index (an older plan file, or a catalog without
        # market_index.csv): nothing to re-derive; the figures are optional on a plan
        return
    for i in run.plan.line_items:
        level = index.get(i.accelerator) if i.item in _RENTED else None
        gpu_hours = i.accelerators * i.hours
        if level is None or gpu_hours <= 0 or i.cost_usd <= 0:
            run.c.check(
                CHECK,
                i.market_index_usd_per_gpu_hour is None
                and i.market_index_date is None
                and i.market_premium_fraction is None,
                f"{i.item} {i.offering} {i.period}: has market figures, no index applies",
            )
            continue
        premium = i.cost_usd / gpu_hours / level.usd_per_gpu_hour - 1.0
        run.c.check(
            CHECK,
            i.market_index_usd_per_gpu_hour == level.usd_per_gpu_hour
            and i.market_index_date == level.as_of
            and i.market_premium_fraction is not None
            and abs(i.market_premium_fraction - premium) <= 1e-9,
            f"{i.item} {i.offering} {i.period}: index {i.market_index_usd_per_gpu_hour} "
            f"({i.market_index_date}), premium {i.market_premium_fraction} (expected "
            f"{level.usd_per_gpu_hour} ({level.as_of}), {premium:.6f})",
        )
