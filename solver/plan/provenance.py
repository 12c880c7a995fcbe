"""What a plan's money rests on: spend by price confidence and by price age, the
exchange rates its prices were converted at, and its totals in the problem's currency.

Every line item carries the provenance of the price it rests on (``price_date``,
``price_source``, ``price_confidence``, ``price_currency``: :class:`~solver.plan.LineItem`);
these functions sum a plan's cost over them. Pure data in, data out; the report and the
plan table show them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import date

from solver.inputs.catalog import Catalog, ExchangeRate
from solver.inputs.problem import Problem
from solver.inputs.provenance import (
    AGE_CLASSES,
    CONFIDENCE_LEVELS,
    UNKNOWN_AGE,
    age_class,
    price_age_days,
)
from solver.plan.lines import CurrencyView, LineItem, Plan
from solver.plan.lines.schema import RateUsed
from solver.units import CLOUD_MODES

#: The label of a line item whose price states no confidence (a plan read from an old file).
NOT_STATED = "not stated"


def _start(plan: Plan) -> date | None:
    return date.fromisoformat(plan.start_date) if plan.start_date else None


def spend_by_confidence(items: Iterable[LineItem]) -> dict[str, float]:
    """USD per price confidence, strongest first (``quote``, ``list``, ``third_party``,
    ``unverified``); levels with no spend left out."""
    spend: dict[str, float] = {}
    for i in items:
        key = i.price_confidence or NOT_STATED
        spend[key] = spend.get(key, 0.0) + i.cost_usd
    order = [*reversed(CONFIDENCE_LEVELS), NOT_STATED]
    return {k: spend[k] for k in sorted(spend, key=lambda k: (order.index(k), k)) if spend[k]}


def line_age_days(item: LineItem, start: date | None) -> float | None:
    """Days from a line's price date to the plan's first day; None when unknown."""
    return None if start is None else price_age_days(item.price_date, start)


def spend_by_price_age(plan: Plan) -> dict[str, float]:
    """USD per price-age class at the plan's start (:data:`AGE_CLASSES`, youngest first,
    then ``date unknown``); classes with no spend left out."""
    start = _start(plan)
    spend = {label: 0.0 for label, _ in AGE_CLASSES} | {UNKNOWN_AGE: 0.0}
    for i in plan.line_items:
        spend[age_class(line_age_days(i, start))] += i.cost_usd
    return {k: v for k, v in spend.items() if v}


def in_currency(plan: Plan, problem: Problem, rate: ExchangeRate) -> CurrencyView:
    """The plan's totals (and the problem's budget) in ``rate``'s currency: each USD figure
    divided by US dollars per unit of it."""
    per = rate.usd_per_unit
    return CurrencyView(
        currency=rate.currency,
        usd_per_unit=per,
        rate_date=rate.date,
        rate_source=rate.source,
        total_cost=plan.total_cost_usd / per,
        all_in_cost=None if plan.all_in_cost_usd is None else plan.all_in_cost_usd / per,
        budget=None if problem.budget_usd is None else problem.budget_usd / per,
        by_period={k: v / per for k, v in plan.totals.by_period.items()},
        by_provider={k: v / per for k, v in plan.totals.by_provider.items()},
    )


def line_in_its_currency(item: LineItem, rate: ExchangeRate) -> LineItem:
    """The line with the rate its price was converted at (``exchange_rate_usd_per_unit``,
    ``exchange_rate_date``) and, for a cloud line (its whole cost is the provider's bill),
    its cost and unit price in ``price_currency``: the USD figures divided by the rate.
    A line priced in USD comes back without them."""
    if item.price_currency in ("", "USD"):
        update: dict[str, object] = dict.fromkeys(RATE_FIELDS)
    else:
        per = rate.usd_per_unit
        billed = item.mode in CLOUD_MODES
        update = {
            "exchange_rate_usd_per_unit": per,
            "exchange_rate_date": rate.date,
            "cost_in_price_currency": item.cost_usd / per if billed else None,
            "unit_price_in_price_currency_per_hour": (
                item.unit_price_usd_per_hour / per if billed else None
            ),
        }
    return item.model_copy(update=update)


#: The line-item fields :func:`line_in_its_currency` sets.
RATE_FIELDS: tuple[str, ...] = (
    "exchange_rate_usd_per_unit",
    "exchange_rate_date",
    "cost_in_price_currency",
    "unit_price_in_price_currency_per_hour",
)


def rates_used(items: Iterable[LineItem], rate_of: Callable[[str], ExchangeRate]) -> list[RateUsed]:
    """One :class:`RateUsed` per currency other than USD the lines are priced in (by code),
    with the USD cost of those lines and that cost in the currency."""
    spend: dict[str, float] = {}
    for i in items:
        if i.price_currency not in ("", "USD"):
            spend[i.price_currency] = spend.get(i.price_currency, 0.0) + i.cost_usd
    out = []
    for currency in sorted(spend):
        rate = rate_of(currency)
        out.append(
            RateUsed(
                currency=currency,
                usd_per_unit=rate.usd_per_unit,
                rate_date=rate.date,
                rate_source=rate.source,
                cost_usd=spend[currency],
                cost=spend[currency] / rate.usd_per_unit,
            )
        )
    return out


def with_line_rates(plan: Plan, rate_of: Callable[[str], ExchangeRate]) -> Plan:
    """The plan with each line's exchange rate (:func:`line_in_its_currency`) and the rates
    used (``exchange_rates``); ``rate_of`` gives a currency's rate (the catalog's latest,
    the one its prices were converted at on load)."""
    codes = {i.price_currency for i in plan.line_items} - {"", "USD"}
    rates = {c: rate_of(c) for c in sorted(codes)}
    usd = ExchangeRate("USD", 1.0, "", "")
    items = [line_in_its_currency(i, rates.get(i.price_currency, usd)) for i in plan.line_items]
    return plan.model_copy(
        update={"line_items": items, "exchange_rates": rates_used(items, rates.__getitem__)}
    )


def catalog_rates(catalog: Catalog) -> Callable[[str], ExchangeRate]:
    """A currency's rate in ``catalog`` (:meth:`~solver.inputs.catalog.Catalog.rate`)."""
    return lambda currency: catalog.rate(currency, field="currency")


def with_currency(
    plan: Plan, problem: Problem, rate: ExchangeRate, catalog: Catalog | None = None
) -> Plan:
    """The plan labelled with the problem's currency; its totals converted (``in_currency``)
    when that is not USD (the plan's own figures stay in USD); with ``catalog``, each line
    priced in another currency than USD states its rate (:func:`with_line_rates`)."""
    if catalog is not None:
        plan = with_line_rates(plan, catalog_rates(catalog))
    view = None if rate.currency == "USD" else in_currency(plan, problem, rate)
    return plan.model_copy(update={"currency": rate.currency, "in_currency": view})
