"""The diff of two plans: line items added, removed and changed (units, mode, region),
totals before and after, and the cost change split into a price effect and a plan effect.

The split has one definition (README, "Commands"; :func:`split_change`), the same in
``procure diff`` and ``procure resolve``:

- **price effect** = the old plan's decisions at the new prices - the old plan at the old
  prices;
- **plan effect** = the new plan at the new prices - the old plan's decisions at the new
  prices;

so the two sum to the total change exactly. "The old plan's decisions at the new prices"
is always the model's pricing of those decisions in a catalog holding the new prices
(:func:`solver.analyses.resolve.evaluate_decisions`, through
:func:`solver.analyses.resolve.priced_at` when no model is at hand): the same cost ledger
as a solve, existing fleet and commitments included. Without stability rows the plan
effect of a re-solve is never positive (the old plan is feasible in the new problem, so
the optimum costs no more).

:func:`diff_plans` given only two plans (no such pricing) falls back to re-pricing the
old plan line by line and says so (``price_exact`` false, ``price_basis``): that split is
an approximation, never the exact one.

A line item's *key* is (item, period, block, workload, offering, mode): the
units of one key are what the stability rows (:mod:`solver.analyses.resolve`) and the
diff compare.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Literal

from pydantic import BaseModel, Field, computed_field

from solver.inputs.catalog import Catalog
from solver.money import usd
from solver.plan import LineItem, Plan, totals_of
from solver.units import RENTED_MODES, Item, Mode

Key = tuple[str, str, str, str, str, str]  # item, period, block, workload, offering, mode
_UNITS_TOL = 1e-6


def item_key(item: LineItem) -> Key:
    """The key of a line item: what stability rows and the diff compare by."""
    return (item.item, item.period, item.block, item.workload, item.offering, item.mode)


def _with_items(plan: Plan, items: list[LineItem], period_names: list[str]) -> Plan:
    return plan.model_copy(
        update={
            "line_items": items,
            "total_cost_usd": float(sum(i.cost_usd for i in items)),
            "total_co2e_t": float(sum(i.co2e_t for i in items)),
            "totals": totals_of(items, period_names),
        }
    )


# --------------------------------------------------------------------------- diff


class ItemChange(BaseModel):
    """One line item added, removed or changed between two plans."""

    change: Literal["added", "removed", "changed", "repriced"]
    fields: list[str] = Field(default_factory=list, description="units, mode, region, offering")
    item: str
    period: str
    block: str = ""
    workload: str = ""
    provider: str
    instance_type: str = ""
    accelerator: str = ""
    old_offering: str = ""
    new_offering: str = ""
    old_region: str = ""
    new_region: str = ""
    old_mode: str = ""
    new_mode: str = ""
    old_units: float = 0.0
    new_units: float = 0.0
    old_cost_usd: float = 0.0
    new_cost_usd: float = 0.0
    old_unit_price_usd_per_hour: float | None = Field(
        None, description="USD per instance-hour (cloud rent, reservations, rented training)"
    )
    new_unit_price_usd_per_hour: float | None = None

    @computed_field
    @property
    def delta_usd(self) -> float:
        """New cost minus old cost."""
        return self.new_cost_usd - self.old_cost_usd

    @property
    def offering(self) -> str:
        return self.new_offering or self.old_offering


class PlanDiff(BaseModel):
    """Two plans compared: line items, totals, and the cost change split in two.

    ``price_effect_usd`` = old plan's decisions at new prices - old plan at old prices;
    ``plan_effect_usd`` = new plan at new prices - old plan's decisions at new prices;
    they sum to ``total_change_usd`` = new total - old total (:func:`split_change`).
    """

    old_problem: str
    new_problem: str
    old_total_usd: float
    new_total_usd: float
    total_change_usd: float
    old_at_new_prices_usd: float
    price_effect_usd: float
    plan_effect_usd: float
    price_basis: str
    price_exact: bool = Field(
        True,
        description="True: the old plan's decisions priced by the model at the new prices "
        "(docs/reference/commands.md, 'The price effect and the plan effect'); False: "
        "re-priced line by line from the prices at hand, "
        "an approximation (price_basis says what was assumed)",
    )
    added: list[ItemChange] = Field(default_factory=list)
    removed: list[ItemChange] = Field(default_factory=list)
    changed: list[ItemChange] = Field(default_factory=list)
    repriced: list[ItemChange] = Field(
        default_factory=list,
        description="Same line item, same units, another unit price: the price effect line by "
        "line (counted in unchanged, not in n_changes)",
    )
    unchanged: int = 0
    old_by_period: dict[str, float] = Field(default_factory=dict)
    new_by_period: dict[str, float] = Field(default_factory=dict)
    old_by_provider: dict[str, float] = Field(default_factory=dict)
    new_by_provider: dict[str, float] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    problem_warning: str = Field(
        "",
        description="Set when the two plans are not of one problem (their problem digests "
        "differ and neither is re-solved from the other, or that is not known): what the "
        "diff compares, with both digests; shown first",
    )
    old_problem_sha256: str = Field("", description="The old plan's problem digest")
    new_problem_sha256: str = Field("", description="The new plan's problem digest")

    @computed_field
    @property
    def n_changes(self) -> int:
        """Line items added, removed or changed."""
        return len(self.added) + len(self.removed) + len(self.changed)


def split_change(
    old_usd: float, old_at_new_prices_usd: float, new_usd: float
) -> tuple[float, float]:
    """The price effect and the plan effect of a change: the one definition.

    ``old_usd``: the old plan at the old prices; ``old_at_new_prices_usd``: the old plan's
    decisions at the new prices; ``new_usd``: the new plan at the new prices. The price
    effect is the second minus the first, the plan effect the third minus the second
    (computed as the total change minus the price effect, so the two sum to it exactly).
    """
    price_effect = old_at_new_prices_usd - old_usd
    return price_effect, (new_usd - old_usd) - price_effect


def _role(item: LineItem) -> str:
    return "run" if item.item in (Item.RENT, Item.USE, Item.TRAINING) else item.item


def unit_price(item: LineItem) -> float | None:
    """USD per instance-hour behind a cloud line item, when its cost is price x units x hours."""
    priced = item.item in (Item.RENT, Item.RESERVATION) or (
        item.item == Item.TRAINING and item.mode in RENTED_MODES
    )
    if not priced or item.units <= 0 or item.hours <= 0:
        return None
    return item.unit_price_usd_per_hour


def reprice(
    plan: Plan,
    new_price: dict[tuple[str, str], float],
    *,
    period_names: list[str] | None = None,
) -> tuple[Plan, int]:
    """The plan with cloud items re-priced: cost x new/old unit price per (offering, mode).

    ``new_price`` maps (offering, mode) to USD per instance-hour. The old unit
    price of an (offering, mode) is read from the plan's own priced items (rent,
    reservation, rented training); ``existing`` commitments follow the same
    factor. Owned items and pairs without both prices keep their cost.
    Returns the plan and the number of (offering, mode) pairs re-priced.
    """
    old_price: dict[tuple[str, str], float] = {}
    for i in plan.line_items:
        p = unit_price(i)
        if p is not None:
            old_price.setdefault((i.offering, i.mode), p)
    factor = {k: new_price[k] / p for k, p in old_price.items() if k in new_price and p > 0}
    items = []
    for i in plan.line_items:
        f = factor.get((i.offering, i.mode))
        cloud = i.mode != Mode.OWNED and (i.cost_usd > 0)
        if f is None or not cloud or i.item == Item.USE:
            items.append(i)
            continue
        items.append(
            i.model_copy(
                update={
                    "cost_usd": i.cost_usd * f,
                    "cost_by_period_usd": {p: v * f for p, v in i.cost_by_period_usd.items()},
                }
            )
        )
    names = period_names or list(plan.totals.by_period)
    return _with_items(plan, items, names), len(factor)


def prices_of_plan(plan: Plan) -> dict[tuple[str, str], float]:
    """(offering, mode) -> USD per instance-hour, as the plan's priced items show them."""
    out: dict[tuple[str, str], float] = {}
    for i in plan.line_items:
        p = unit_price(i)
        if p is not None:
            out.setdefault((i.offering, i.mode), p)
    return out


def prices_of_catalog(catalog: Catalog) -> dict[tuple[str, str], float]:
    """(offering, mode) -> USD per instance-hour from a catalog's offerings."""
    from solver.inputs.prices import PRICE_COLUMNS

    out: dict[tuple[str, str], float] = {}
    off = catalog.offerings
    for mode, column in PRICE_COLUMNS.items():
        for offering, price in off[column].dropna().items():
            out[(str(offering), mode)] = float(price)
    return out


def diff_plans(
    old: Plan,
    new: Plan,
    *,
    old_at_new_prices: Plan | None = None,
    new_prices: dict[tuple[str, str], float] | None = None,
    price_source: str | None = None,
    notes: list[str] | None = None,
) -> PlanDiff:
    """Compare two plans line by line and split the cost change (:func:`split_change`).

    Parameters
    ----------
    old_at_new_prices
        The old plan's decisions priced by the model at the new prices
        (:func:`solver.analyses.resolve.evaluate_decisions` or
        :func:`solver.analyses.resolve.priced_at`): the exact split, as ``procure
        diff`` and ``procure resolve`` give it. ``price_source`` names where the new
        prices came from (shown in ``price_basis``).
    new_prices
        Without ``old_at_new_prices`` only: (offering, mode) -> USD per instance-hour
        (e.g. :func:`prices_of_catalog` of the new catalog) to re-price the old plan
        line by line (:func:`reprice`); else the unit prices are inferred from the new
        plan's own line items. Either way an approximation, marked ``price_exact``
        false: old line items priced by neither keep their old cost, owned servers are
        not re-priced, and a line's cost is scaled by new price / its own unit price.
    """
    notes = list(notes or []) + _cost_line_notes(old, new)
    exact = old_at_new_prices is not None
    if old_at_new_prices is not None:
        at_new = old_at_new_prices.total_cost_usd
        basis = "exact: the old plan's decisions priced by the model at the new prices"
        if price_source:
            basis += f": {price_source}"
    else:
        table = dict(prices_of_plan(new))
        source = "inferred from the new plan's line items"
        if new_prices is not None:
            table.update(new_prices)
            source = "from the new catalog's prices"
        repriced, _ = reprice(old, table)
        at_new = repriced.total_cost_usd
        priced = [i for i in old.line_items if unit_price(i) is not None]
        covered = sum((i.offering, i.mode) in table for i in priced)
        basis = (
            f"approximate: new prices {source} for {covered} of {len(priced)} priced "
            "line items of the old plan; the rest and owned servers at their old prices: "
            "procure diff prices the old plan by the model at the new plan's catalog "
            "(or --prices) for the exact split"
        )
    old_items = [i for i in old.line_items if i.units > _UNITS_TOL]
    new_items = [i for i in new.line_items if i.units > _UNITS_TOL]
    old_by_key = _by_key(old_items)
    new_by_key = _by_key(new_items)
    added, removed, changed, repriced = [], [], [], []
    unchanged = 0
    left_old, left_new = [], []
    for key in sorted(set(old_by_key) | set(new_by_key)):
        a, b = old_by_key.get(key), new_by_key.get(key)
        if a is not None and b is not None:
            if abs(a.units - b.units) > _UNITS_TOL:
                changed.append(_change("changed", a, b, ["units"]))
            else:
                unchanged += 1
                if abs(a.cost_usd - b.cost_usd) > 0.005:  # more than half a cent
                    repriced.append(_change("repriced", a, b, ["unit price"]))
        elif a is not None:
            left_old.append(a)
        else:
            left_new.append(b)
    # pair what is left: same role, period, block, workload, provider, instance type
    pool: dict[tuple, list[LineItem]] = defaultdict(list)
    for b in left_new:
        pool[_pair_key(b)].append(b)
    for a in left_old:
        candidates = pool.get(_pair_key(a))
        if candidates:
            b = candidates.pop(0)
            fields = [
                f
                for f, x, y in (
                    ("units", a.units, b.units),
                    ("mode", a.mode, b.mode),
                    ("region", a.region, b.region),
                )
                if (abs(x - y) > _UNITS_TOL if f == "units" else x != y)
            ]
            changed.append(_change("changed", a, b, fields))
        else:
            removed.append(_change("removed", a, None, []))
    for rest in pool.values():
        added.extend(_change("added", None, b, []) for b in rest)
    total_change = new.total_cost_usd - old.total_cost_usd
    price_effect, plan_effect = split_change(old.total_cost_usd, at_new, new.total_cost_usd)
    return PlanDiff(
        old_problem=old.problem,
        new_problem=new.problem,
        old_total_usd=old.total_cost_usd,
        new_total_usd=new.total_cost_usd,
        total_change_usd=total_change,
        old_at_new_prices_usd=at_new,
        price_effect_usd=price_effect,
        plan_effect_usd=plan_effect,
        price_basis=basis,
        price_exact=exact,
        added=sorted(added, key=_order),
        removed=sorted(removed, key=_order),
        changed=sorted(changed, key=_order),
        repriced=sorted(repriced, key=_order),
        unchanged=unchanged,
        old_by_period=dict(old.totals.by_period),
        new_by_period=dict(new.totals.by_period),
        old_by_provider=dict(old.totals.by_provider),
        new_by_provider=dict(new.totals.by_provider),
        notes=notes,
    )


def _all_in(plan: Plan) -> float:
    """A plan's all-in total (compute and its cost lines; older plan files lack the field)."""
    return plan.total_cost_usd + sum(c.cost_usd for c in plan.cost_lines)


def _cost_line_notes(old: Plan, new: Plan) -> list[str]:
    """The costs beside compute by category, old -> new, when either
    plan has any: the diff's totals and lines are compute."""
    if not old.cost_lines and not new.cost_lines:
        return []
    sums: list[dict[str, float]] = []
    for plan in (old, new):
        by: dict[str, float] = defaultdict(float)
        for c in plan.cost_lines:
            by[c.category] += c.cost_usd
        sums.append(by)
    a, b = sums
    parts = [f"{k} {usd(a.get(k, 0.0))} -> {usd(b.get(k, 0.0))}" for k in sorted(set(a) | set(b))]
    return [
        f"the totals above are compute; all in {usd(_all_in(old))} -> {usd(_all_in(new))}, "
        "with the costs beside compute: " + "; ".join(parts)
    ]


def _by_key(items: list[LineItem]) -> dict[Key, LineItem]:
    out: dict[Key, LineItem] = {}
    for i in items:
        key = item_key(i)
        if key in out:  # merge duplicates (should not happen in a plan)
            prev = out[key]
            out[key] = prev.model_copy(
                update={"units": prev.units + i.units, "cost_usd": prev.cost_usd + i.cost_usd}
            )
        else:
            out[key] = i
    return out


def _pair_key(i: LineItem) -> tuple:
    return (_role(i), i.period, i.block, i.workload, i.provider, i.instance_type)


def _order(c: ItemChange) -> tuple:
    return (c.period, c.provider, c.offering, c.item, c.workload, c.block)


def _change(kind: str, a: LineItem | None, b: LineItem | None, fields: list[str]) -> ItemChange:
    ref = b if b is not None else a
    return ItemChange(
        change=kind,
        fields=fields,
        item=ref.item if b is None or a is None or a.item == b.item else f"{a.item}->{b.item}",
        period=ref.period,
        block=ref.block,
        workload=ref.workload,
        provider=ref.provider,
        instance_type=ref.instance_type,
        accelerator=ref.accelerator,
        old_offering=a.offering if a else "",
        new_offering=b.offering if b else "",
        old_region=a.region if a else "",
        new_region=b.region if b else "",
        old_mode=a.mode if a else "",
        new_mode=b.mode if b else "",
        old_units=a.units if a else 0.0,
        new_units=b.units if b else 0.0,
        old_cost_usd=a.cost_usd if a else 0.0,
        new_cost_usd=b.cost_usd if b else 0.0,
        old_unit_price_usd_per_hour=unit_price(a) if a else None,
        new_unit_price_usd_per_hour=unit_price(b) if b else None,
    )
