"""What must be confirmed before signing: the prices a plan rests on, ranked by the money
they put at risk.

A plan's rented lines (``rent``, ``reservation``, ``training`` on a cloud offering) each
rest on one catalog price: an offering's price in one purchase mode. Every such price is
checked once, over all the lines that use it:

``carried_usd``
    the plan's cost on that price: the sum of its lines' ``cost_usd``.
``band_fraction``
    the half-width of the band of the price's confidence level
    (:mod:`solver.inputs.price_bands`): the price billed may lie up to that fraction above
    the catalog's.
``at_risk_usd``
    ``carried_usd x band_fraction``: what the plan costs more if the price is at the top of
    its band.
``raised_total_usd``
    the plan's total with that one price at the top of its band and every other price as it
    is: ``total_cost_usd + at_risk_usd``.

A savings plan's cover lines (credits of the on-demand usage its commitment pays for) net
against the offering's on-demand price: that usage does not pay the price, so neither its
money nor its hours count.

This is a **fixed-plan re-pricing**: the plan's units and hours are kept and only the
price changes; nothing is re-solved. Every line's cost is the price times its units and
hours, so raising the price by a fraction raises the cost of its lines by the same
fraction. A re-solve at the raised price could only find a plan that costs the same or
less (the fixed plan stays a candidate), so the figure is an upper bound on the re-solved
cost (when the raised plan still meets the problem's budget; ``over_budget`` says when it
does not).

Prices are ranked by ``at_risk_usd`` (largest first), then by confidence (weakest first),
then by ``carried_usd``. A price of confidence ``quote`` has a band of 0: nothing to
confirm. Lines of other kinds (purchases, owned use, the existing fleet, savings plans)
rest on other prices (servers, power, a commitment) and are counted in ``not_checked``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, timedelta
from typing import cast

from solver.inputs.catalog import Catalog
from solver.inputs.price_bands import PriceBands, price_band_fraction
from solver.inputs.problem import Problem
from solver.inputs.provenance import confidence_rank
from solver.inputs.quotes import TERM_MODES
from solver.plan import LineItem, Plan
from solver.plan.charges import PlanCalendar, plan_calendar
from solver.units import PRICE_COLUMN, RESERVED_TERM_MONTHS, Item, Mode

#: line items that rest on a cloud offering's price
CHECKED_ITEMS: tuple[str, ...] = (Item.RENT, Item.RESERVATION, Item.TRAINING)
#: purchase mode -> the quotes file's term that prices it (spot has none: not quoted)
QUOTE_TERMS: dict[str, str] = {mode: term for term, mode in TERM_MODES.items()}
#: how the raised totals are computed (module docstring)
REPRICING = "fixed-plan"


@dataclass(frozen=True)
class PricedLine:
    """One plan line resting on a checked price.

    ``from_day``/``until_day``: its first and last day (``YYYY-MM-DD``; ``""`` when the plan
    has no dates); ``hours`` the hours each unit runs (the term, for a reservation).
    """

    item: str
    period: str
    block: str
    workload: str
    units: float
    hours: float
    cost_usd: float
    from_day: str
    until_day: str


@dataclass(frozen=True)
class CheckedPrice:
    """One catalog price a plan rests on, with the money it carries (module docstring).

    ``price_usd_per_hour`` is per instance-hour in USD; ``price_per_hour_in_currency`` the
    same in ``currency``, the currency the source states it in. ``term`` is the quotes
    file's term for the mode (``""``: no quote term, e.g. spot). ``peak_units`` is the most
    instances of the lines at once, ``instance_hours`` their units x hours summed.
    """

    provider: str
    region: str
    offering: str
    instance_type: str
    accelerator: str
    mode: str
    term: str
    confidence: str
    price_date: str
    source: str
    currency: str
    price_usd_per_hour: float
    price_per_hour_in_currency: float
    band_fraction: float
    carried_usd: float
    at_risk_usd: float
    raised_total_usd: float
    over_budget: bool
    peak_units: float
    instance_hours: float
    from_day: str
    until_day: str
    lines: tuple[PricedLine, ...]

    @property
    def raised_price_usd_per_hour(self) -> float:
        """The price at the top of its band, USD per instance-hour."""
        return self.price_usd_per_hour * (1.0 + self.band_fraction)

    @property
    def to_confirm(self) -> bool:
        """Whether a quote can confirm it: a quote term exists and it is not a quote yet."""
        return bool(self.term) and self.band_fraction > 0.0 and self.carried_usd > 0.0


@dataclass(frozen=True)
class NotChecked:
    """Plan lines of one kind that rest on no cloud offering's price: how many, and their
    cost (USD)."""

    item: str
    lines: int
    cost_usd: float


@dataclass(frozen=True)
class PriceCheck:
    """The prices of a plan ranked by money at risk (module docstring).

    ``total_cost_usd`` is the plan's; ``budget_usd`` the problem's (None: none).
    """

    problem: str
    total_cost_usd: float
    budget_usd: float | None
    repricing: str
    prices: tuple[CheckedPrice, ...]
    not_checked: tuple[NotChecked, ...]

    @property
    def all_raised_total_usd(self) -> float:
        """The plan's total with every checked price at the top of its band at once (USD)."""
        return self.total_cost_usd + math.fsum(p.at_risk_usd for p in self.prices)


def check_prices(plan: Plan, problem: Problem, catalog: Catalog, bands: PriceBands) -> PriceCheck:
    """The prices ``plan`` rests on, ranked by money at risk.

    Parameters
    ----------
    plan
        A verified plan of ``problem`` solved with ``catalog``.
    problem, catalog
        What the plan was solved for (its dates, its budget; the prices and currencies).
    bands
        Confidence level -> band (:func:`solver.inputs.price_bands.load_price_bands`).

    Returns
    -------
    PriceCheck
        Every checked price, ranked; the lines not checked by kind.
    """
    groups: dict[tuple[str, str], list[LineItem]] = {}
    skipped: dict[str, list[LineItem]] = {}
    for line in plan.line_items:
        key = _price_key(line, catalog)
        if key is not None:
            groups.setdefault(key, []).append(line)
        elif line.cost_usd:
            skipped.setdefault(str(line.item), []).append(line)
    for key, lines in list(groups.items()):
        if all(i.item == Item.SAVINGS_PLAN_COVER for i in lines):  # no line to price
            del groups[key]
            skipped.setdefault(Item.SAVINGS_PLAN_COVER.value, []).extend(lines)
    calendar = plan_calendar(problem)
    start = _start_day(plan, problem)
    prices = [
        _checked(lines, plan, problem, catalog, bands, calendar, start) for lines in groups.values()
    ]
    prices.sort(
        key=lambda p: (
            -p.at_risk_usd,
            confidence_rank(p.confidence),
            -p.carried_usd,
            p.offering,
            p.mode,
        )
    )
    not_checked = tuple(
        NotChecked(item, len(lines), math.fsum(i.cost_usd for i in lines))
        for item, lines in sorted(skipped.items())
    )
    return PriceCheck(
        problem=plan.problem,
        total_cost_usd=plan.total_cost_usd,
        budget_usd=problem.budget_usd,
        repricing=REPRICING,
        prices=tuple(prices),
        not_checked=not_checked,
    )


def _price_key(line: LineItem, catalog: Catalog) -> tuple[str, str] | None:
    """The (offering, mode) price a line rests on, None for a line on no cloud price. A
    savings plan's cover (a credit of on-demand usage it pays for) nets against the
    on-demand price: that part of the usage does not pay it."""
    if line.offering not in catalog.offerings.index:
        return None
    if line.item == Item.SAVINGS_PLAN_COVER:
        return line.offering, Mode.ON_DEMAND.value
    if line.item in CHECKED_ITEMS and line.mode in PRICE_COLUMN:
        return line.offering, line.mode
    return None


def _start_day(plan: Plan, problem: Problem) -> date | None:
    """The plan's first day: the problem's start, else the day the plan was dated from."""
    if problem.start is not None:
        return problem.start
    try:
        return date.fromisoformat(plan.start_date or "")
    except ValueError:
        return None


def _checked(
    lines: list[LineItem],
    plan: Plan,
    problem: Problem,
    catalog: Catalog,
    bands: PriceBands,
    calendar: PlanCalendar,
    start: date | None,
) -> CheckedPrice:
    """One price over the plan lines that rest on it."""
    priced_by = [i for i in lines if i.item != Item.SAVINGS_PLAN_COVER]
    first = priced_by[0]
    off = catalog.offerings
    # numeric columns: pandas-stubs type .at as any scalar (dates, strings, ...)
    price_usd = float(cast(float, off.at[first.offering, PRICE_COLUMN[first.mode]]))
    usd_per_unit = 1.0
    if "usd_per_unit" in off.columns:
        usd_per_unit = float(cast(float, off.at[first.offering, "usd_per_unit"]))
    currency = str(off.at[first.offering, "currency"]) if "currency" in off.columns else ""
    if not math.isfinite(usd_per_unit) or usd_per_unit <= 0:
        usd_per_unit = 1.0
    band = price_band_fraction(first.price_confidence, bands)
    carried = math.fsum(i.cost_usd for i in lines)
    priced = tuple(_priced_line(i, calendar, start) for i in lines)
    days = [(p.from_day, p.until_day) for p in priced if p.from_day]
    raised = plan.total_cost_usd + carried * band
    return CheckedPrice(
        provider=first.provider,
        region=first.region,
        offering=first.offering,
        instance_type=first.instance_type,
        accelerator=first.accelerator,
        mode=first.mode,
        term=QUOTE_TERMS.get(first.mode, ""),
        confidence=first.price_confidence,
        price_date=first.price_date,
        source=first.price_source,
        currency=currency or first.price_currency or "USD",
        price_usd_per_hour=price_usd,
        price_per_hour_in_currency=price_usd / usd_per_unit,
        band_fraction=band,
        carried_usd=carried,
        at_risk_usd=carried * band,
        raised_total_usd=raised,
        over_budget=problem.budget_usd is not None and raised > problem.budget_usd,
        peak_units=max(i.units for i in priced_by),
        instance_hours=math.fsum(_sign(i) * i.units * i.hours for i in lines),
        from_day=min((d[0] for d in days), default=""),
        until_day=max((d[1] for d in days), default=""),
        lines=priced,
    )


def _sign(line: LineItem) -> float:
    """-1 for a savings plan's cover (usage the on-demand price does not bill), else 1."""
    return -1.0 if line.item == Item.SAVINGS_PLAN_COVER else 1.0


def _priced_line(line: LineItem, calendar: PlanCalendar, start: date | None) -> PricedLine:
    """A plan line with its first and last day."""
    begin, end = _months(line, calendar)
    from_day = until_day = ""
    if start is not None and line.period in calendar.start_month:
        clock = calendar.dates
        from_day = clock.timestamp(begin, start).date().isoformat()
        last = clock.timestamp(end, start) - timedelta(seconds=1)
        until_day = max(last.date().isoformat(), from_day)
    return PricedLine(
        item=str(line.item),
        period=line.period,
        block=line.block,
        workload=line.workload,
        units=line.units,
        hours=line.hours,
        cost_usd=line.cost_usd,
        from_day=from_day,
        until_day=until_day,
    )


def _months(line: LineItem, calendar: PlanCalendar) -> tuple[float, float]:
    """[begin, end) of a line in months from the plan's start: its period (or the part of
    it the line serves); a reservation's whole term; a training job's hours from its
    period's start."""
    if line.period not in calendar.start_month:
        return 0.0, 0.0
    if line.served_months:
        begin, end = float(line.served_months[0]), float(line.served_months[1])
    else:
        begin = calendar.start_month[line.period]
        end = begin + calendar.months[line.period]
    if line.mode in RESERVED_TERM_MONTHS:
        end = begin + RESERVED_TERM_MONTHS[line.mode]
    elif line.item == Item.TRAINING and line.hours > 0:
        end = calendar.clock.month_after(begin, line.hours)
    return begin, end
