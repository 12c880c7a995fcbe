"""FOCUS rows in the currency the provider bills: a cloud line priced in another currency
than USD is billed in it (FOCUS 1.2 ``BillingCurrency``, "the currency that a charge was
billed in"), its money columns converted back from USD at the rate the plan line states;
``PricingCurrency`` (FOCUS 1.2, "the national or virtual currency denomination that a
resource or service was priced in") is the same code. The USD figures stay beside them in
``x_`` custom columns. Column text: ``FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec``,
``specification/datasets/cost_and_usage/columns/billingcurrency.md`` and
``pricingcurrency.md``.
"""

from __future__ import annotations

from solver.plan import LineItem
from solver.units import CLOUD_MODES, Item

#: The money columns of a row, in its BillingCurrency.
FOCUS_MONEY: tuple[str, ...] = (
    "BilledCost",
    "EffectiveCost",
    "ListCost",
    "ContractedCost",
    "ListUnitPrice",
    "ContractedUnitPrice",
)


def billed_in(item: LineItem) -> tuple[str, float, str | None]:
    """The currency a line's rows are billed in, US dollars per unit of it and the rate's
    date: its ``price_currency`` for a cloud line priced in another currency than USD that
    states its rate (the provider bills rent, reservations and cloud training in it);
    USD otherwise (owned lines: their power and hosting are in USD; savings plans)."""
    rate = item.exchange_rate_usd_per_unit
    cloud = item.mode in CLOUD_MODES and item.item not in (
        Item.SAVINGS_PLAN,
        Item.SAVINGS_PLAN_COVER,
    )
    if not cloud or rate is None or item.price_currency in ("", "USD"):
        return "USD", 1.0, None
    return item.price_currency, rate, item.exchange_rate_date


def in_billing_currency(row: dict, item: LineItem | None) -> dict:
    """``row`` (its money in USD) in the currency ``item`` is billed in (:func:`billed_in`):
    each money column divided by the rate; the USD figures kept in ``x_BilledCostUsd`` and
    ``x_EffectiveCostUsd`` and the rate in ``x_ExchangeRateUsdPerUnit`` and
    ``x_ExchangeRateDate`` (FOCUS 1.2 has no column for a conversion to another currency
    than the billing one; its custom columns start with ``x_``). ``PricingCurrency`` is the
    billing currency: the provider prices in the currency it bills."""
    currency, per, day = ("USD", 1.0, None) if item is None else billed_in(item)
    out = dict(row)
    out["x_BilledCostUsd"] = row.get("BilledCost")
    out["x_EffectiveCostUsd"] = row.get("EffectiveCost")
    out["x_ExchangeRateUsdPerUnit"] = per
    out["x_ExchangeRateDate"] = day
    out["BillingCurrency"] = out["PricingCurrency"] = currency
    if per != 1.0:
        for column in FOCUS_MONEY:
            if out.get(column) is not None:
                out[column] = out[column] / per
    return out
