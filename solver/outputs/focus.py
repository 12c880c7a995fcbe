"""FOCUS rows for finance: the plan's forecast charges.

Pure functions from a plan (plus the catalog and the problem where dates or
server data are needed) to DataFrames, CSV text or XLSX bytes; the CLI writes
the files (``procure export``).

**FOCUS** (:func:`focus_frame`): the plan's forecast charges as rows of the
FinOps Open Cost and Usage Specification, FOCUS 1.3 (https://focus.finops.org/
focus-specification/v1-3/; 1.2 with ``focus_version="1.2"``; normative column text in the
FOCUS_Spec repository, ``FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec``,
``specification/columns/*.md``). Column sets: :mod:`solver.outputs.focus_schema`; checks:
:mod:`solver.outputs.focus_validate`; 1.3's ``ContractApplied`` and Contract Commitment
dataset: :mod:`solver.outputs.focus_contracts`. Every column the
specification says MUST be present is written (:data:`FOCUS_REQUIRED`), with
the conditional columns a cloud GPU bill carries (commitment discounts,
pricing category, region, SKU, consumed quantity) and ``x_``-prefixed custom
columns (the spec's rule for extensions) that tie each row to its plan line
item. Values follow the spec's allowed values:

- ``ChargeCategory``: ``Usage`` (rent, training, owned electricity and hosting,
  use of a commitment) or ``Purchase`` (a reservation's recurring fee, a
  server bought); ``ChargeFrequency``: ``Usage-Based``, ``Recurring`` or
  ``One-Time`` (never ``Usage-Based`` for a purchase); ``ChargeClass`` null.
- ``PricingCategory``: ``Standard`` (on-demand, owned), ``Dynamic`` (spot),
  ``Committed`` (usage covered by a reservation); ``ServiceCategory``
  ``Compute``.
- Reservations: the recurring fee is a ``Purchase`` row with ``BilledCost`` =
  the fee and ``EffectiveCost`` 0 ("MUST be 0 when ChargeCategory is Purchase
  and the purchase is intended to cover future eligible charges"); the fee is
  amortised onto ``Usage`` rows with ``CommitmentDiscountStatus`` ``Used``
  (the share the plan uses) and ``Unused`` (the rest, including months a term
  runs past the horizon), ``BilledCost`` 0.
- Servers bought: a ``One-Time`` ``Purchase`` row; ``BilledCost`` the capex,
  ``EffectiveCost`` the capex the plan counts (all of it, or the amortised
  share under ``owned_cost_policy: amortised``); hosting as ``Recurring`` usage.

Rows are monthly, one or more per row of the plan's charges table
(:func:`solver.plan.charges.charges`, which the cash flow sums too): calendar months from
``start``, their quantities in the hours the plan was costed in (real calendar hours when
the problem states its start, else 730-hour months). ``EffectiveCost`` (in USD:
``x_EffectiveCostUsd``) sums to the plan's ``all_in_cost_usd`` (``total_cost_usd`` when it
has no cost lines); resource ids are left out (a plan has no resources yet).

Money is in each row's ``BillingCurrency``: the currency a provider bills a cloud line
priced in another currency than USD in, converted back from USD at the rate the line states
(:mod:`solver.outputs.focus_currency`); USD otherwise. ``x_BilledCostUsd`` and
``x_EffectiveCostUsd`` keep every row's USD figures (``x_EffectiveCostUsd`` is what sums to
the plan's totals when several currencies are billed).

Cost lines (storage, egress, support, staff, tax, contingency; :mod:`solver.plan.costs`)
are one row per month each (:func:`_cost_line_row`): ``Usage`` with ``ServiceCategory``
``Storage``, ``Networking`` or ``Management and Governance`` (support) and ``Other``
(staff), ``Tax`` for a tax, ``Adjustment`` for the contingency.
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import date

import numpy as np
import pandas as pd

from solver.inputs.catalog import Catalog
from solver.inputs.problem import Problem
from solver.inputs.sites import with_problem_sites
from solver.outputs.files import csv_text
from solver.outputs.focus_contracts import with_contract_applied
from solver.outputs.focus_currency import in_billing_currency
from solver.outputs.focus_schema import (  # noqa: F401 (re-exported: the module's names)
    CHARGE_CATEGORIES,
    CHARGE_FREQUENCIES,
    COMMITMENT_CATEGORIES,
    COMMITMENT_STATUSES,
    FOCUS_1_2_COLUMNS,
    FOCUS_COLUMNS,
    FOCUS_CONDITIONAL,
    FOCUS_CUSTOM,
    FOCUS_REQUIRED,
    PRICING_CATEGORIES,
    PROVIDER_DISPLAY_NAMES,
    SERVICE_CATEGORIES,
)
from solver.outputs.focus_validate import validate_focus  # noqa: F401 (re-exported)
from solver.plan import LineItem, Plan
from solver.plan.charges import PlanCalendar, charges, plan_calendar
from solver.units import RESERVED_TERM_MONTHS, Item, Mode

#: Provider ids -> the names on their invoices (FOCUS ProviderName, PublisherName and
#: InvoiceIssuerName are display names, not ids): one table, the billing reader's.
_PROVIDER_NAMES = PROVIDER_DISPLAY_NAMES


def _names(item: LineItem, catalog: Catalog) -> tuple[str, str, str]:
    """(ProviderName, PublisherName, InvoiceIssuerName) of a line item.

    Cloud: the provider for all three. A server owned: the site that hosts it provides
    it; its publisher is the accelerator's vendor (who made it) and the invoice comes
    from whoever sells the server (unknown to a plan: "server seller").
    """
    if item.mode != Mode.OWNED:
        name = _PROVIDER_NAMES.get(item.provider, item.provider)
        return name, name, name
    site = (
        str(catalog.sites.at[item.region, "name"])
        if item.region in catalog.sites.index
        else item.region
    )
    vendor = (
        str(catalog.accelerators.at[item.accelerator, "vendor"])
        if item.accelerator in catalog.accelerators.index
        else "server vendor"
    )
    return site, vendor, "server seller" if item.item == Item.PURCHASE else site


_SERVICE_NAMES = {
    "aws": "Amazon Elastic Compute Cloud",
    "gcp": "Compute Engine",
    "azure": "Virtual Machines",
    "oci": "Compute",
}


def _text(moment: pd.Timestamp) -> str:
    return moment.round("s").strftime("%Y-%m-%dT%H:%M:%SZ")


def _focus_row(item: LineItem, charge, catalog: Catalog, account: tuple[str, str], values) -> dict:
    """One FOCUS row of a line item's charge in one month (a row of
    :func:`solver.plan.charges.charges`): the columns every row has, then ``values``
    (quantity and list_price popped, the rest as given)."""
    billing_account_id, account_name = account
    provider = item.provider
    display, publisher, issuer = _names(item, catalog)
    owned = item.mode == Mode.OWNED
    quantity = values.pop("quantity")
    list_price = values.pop("list_price")
    row = {
        "BillingAccountId": billing_account_id,
        "BillingAccountName": account_name,
        "BillingCurrency": "USD",
        "BillingPeriodStart": _text(charge.month_start),
        "BillingPeriodEnd": _text(charge.month_end),
        "ChargePeriodStart": _text(charge.charge_start),
        "ChargePeriodEnd": _text(charge.charge_end),
        "ChargeClass": None,
        "ProviderName": display,
        "PublisherName": publisher,
        "InvoiceIssuerName": issuer,
        "ServiceCategory": "Compute",
        "ServiceSubcategory": "Other (Compute)" if owned else "Virtual Machines",
        "ServiceName": "Owned servers" if owned else _SERVICE_NAMES.get(provider, "GPU instances"),
        "RegionId": item.region,
        "RegionName": item.region,
        "PricingQuantity": quantity,
        "ListUnitPrice": list_price,
        "ContractedUnitPrice": list_price,
        "ListCost": list_price * quantity,
        "ContractedCost": list_price * quantity,
        "CommitmentDiscountCategory": None,
        "CommitmentDiscountId": None,
        "CommitmentDiscountName": None,
        "CommitmentDiscountQuantity": None,
        "CommitmentDiscountStatus": None,
        "CommitmentDiscountType": None,
        "CommitmentDiscountUnit": None,
        "ConsumedQuantity": None,
        "ConsumedUnit": None,
        "SkuMeter": "Server purchase"
        if item.item == Item.PURCHASE
        else f"{item.instance_type or item.offering} instance-hours",
        # InstanceType is a FOCUS-defined property; the others are custom, so x_-prefixed
        # (SkuPriceDetails: "custom properties MUST be prefixed with x_")
        "SkuPriceDetails": json.dumps(
            {
                "InstanceType": item.instance_type,
                "x_Accelerator": item.accelerator,
                "x_AcceleratorsPerUnit": item.accelerators / item.units if item.units else 0,
                "x_PurchaseOption": item.mode,
            },
            sort_keys=True,
        ),
        "x_PlanItem": item.item,
        "x_PlanPeriod": item.period,
        "x_Workload": item.workload or None,
        "x_LoadBlock": item.block or None,
        "x_Offering": item.offering,
        "x_Mode": item.mode,
        "x_Accelerator": item.accelerator,
        "x_Units": item.units,
    }
    row.update(values)
    return in_billing_currency(row, item)


def focus_frame(
    plan: Plan,
    problem: Problem,
    catalog: Catalog,
    start: date,
    *,
    billing_account_id: str = "planned",
    focus_version: str = "1.3",
) -> pd.DataFrame:
    """The plan's forecast charges as FOCUS 1.3 rows (see the module docstring), one or
    more per row of the plan's charges table (:func:`solver.plan.charges.charges`);
    ``focus_version="1.2"`` leaves out 1.3's columns (ServiceProviderName,
    HostProviderName, ContractApplied).

    Parameters
    ----------
    problem
        The problem the plan was solved from (period lengths, owned cost policy).
    catalog
        On-demand list prices of reserved offerings, servers' capex.
    start
        The first day of the plan's first period (UTC).
    """
    cal = plan_calendar(problem, start)
    catalog = with_problem_sites(problem, catalog)  # its own sites, by the names it gives
    account = (billing_account_id, f"procure plan: {plan.problem}")
    rows: list[dict] = []

    def emit(item: LineItem, charge, **values) -> None:
        rows.append(_focus_row(item, charge, catalog, account, values))

    used = _commitment_use(plan, cal)
    sp_used = _savings_plan_use(plan, problem, cal)
    for charge in charges(plan, problem, catalog, start).itertuples(index=False):
        if charge.line < 0:
            row = _cost_line_row(plan.cost_lines[charge.cost_line], charge, account)
            rows.append(in_billing_currency(row, None))
            continue
        item = plan.line_items[charge.line]
        what = (
            f"{item.units:g} x {item.instance_type} ({item.accelerator}) {item.mode} "
            f"in {item.region}"
        )
        if item.workload:
            what += f" for {item.workload}" + (f" ({item.block})" if item.block else "")
        if item.item == Item.STAFF_SCALE:  # a credit on the site's hosting (solver/core/staff.py)
            what = (
                f"staff saving of {item.units:g} owned servers in {item.region} (past 1,000 "
                "servers, fewer administrators per server)"
            )
        if item.item == Item.PURCHASE:
            _purchase_rows(item, charge, what, emit)
        elif item.item == Item.RESERVATION or (
            item.item == Item.EXISTING and item.mode != Mode.OWNED
        ):
            _reservation_rows(item, charge, what, emit, cal, used, catalog)
        elif item.item == Item.SAVINGS_PLAN:
            _savings_plan_rows(item, charge, emit, cal, sp_used.get((item.offering, item.period)))
        elif item.item == Item.SAVINGS_PLAN_COVER:
            _savings_plan_credit_row(item, charge, what, emit)
        else:
            _usage_row(item, charge, what, emit)
    frame = pd.DataFrame(rows, columns=list(FOCUS_COLUMNS))
    # FOCUS 1.3: who sells the service and who hosts it (ProviderName's successors; a
    # plan buys from the provider that hosts, a server's hosting from its site)
    frame["ServiceProviderName"] = frame["ProviderName"]
    frame["HostProviderName"] = frame["ProviderName"]
    frame = with_contract_applied(frame)
    frame = frame.sort_values(
        ["ChargePeriodStart", "ProviderName", "x_Offering", "ChargeCategory", "x_PlanItem"],
        kind="stable",
    ).reset_index(drop=True)
    if focus_version == "1.2":
        return frame[list(FOCUS_1_2_COLUMNS)]
    return frame


#: a cost line's category -> (ChargeCategory, ChargeFrequency, ServiceCategory,
#: ServiceSubcategory, ServiceName, PricingUnit, SkuMeter)
_COST_LINE_FOCUS = {
    "storage": (
        "Usage",
        "Usage-Based",
        "Storage",
        "Object Storage",
        "Object storage",
        "GB-Months",
        "Storage GB-months",
    ),
    "egress": (
        "Usage",
        "Usage-Based",
        "Networking",
        "Other (Networking)",
        "Data transfer out",
        "GB",
        "Data transfer out GB",
    ),
    "support": (
        "Usage",
        "Recurring",
        "Management and Governance",
        "Support",
        "Support plan",
        "Months",
        "Support plan months",
    ),
    "staff": (
        "Usage",
        "Usage-Based",
        "Other",
        "Other (Other)",
        "Operations staff",
        "Instance-Hours",
        "Staff instance-hours",
    ),
    "tax": (
        "Tax",
        "Recurring",
        "Other",
        "Other (Other)",
        "Sales tax or VAT",
        "USD",
        "Tax on USD billed",
    ),
    "contingency": (
        "Adjustment",
        "Recurring",
        "Other",
        "Other (Other)",
        "Contingency",
        "USD",
        "Contingency on USD planned",
    ),
}


def _cost_line_row(line, charge, account: tuple[str, str]) -> dict:
    """One FOCUS row of a cost line (storage, egress, support, staff, tax, contingency)
    in one month: Usage rows for what a provider meters (storage, egress, support) and
    for staff, a Tax row for a tax, an Adjustment row for the contingency (a reserve the
    plan holds, billed by nobody: ProviderName says so)."""
    category, frequency, service, sub, name, unit, meter = _COST_LINE_FOCUS[line.category]
    if line.provider:
        provider = _PROVIDER_NAMES.get(line.provider, line.provider)
    else:
        provider = "Operations staff" if line.category == "staff" else "Plan contingency"
    sku = f"{line.provider or line.category}:{line.category}"
    if line.entry >= 0:
        sku += f":{line.entry}"
    price, quantity = float(charge.unit_price_usd), float(charge.quantity)
    row = {c: None for c in FOCUS_COLUMNS}
    row.update(
        {
            "BillingAccountId": account[0],
            "BillingAccountName": account[1],
            "BillingCurrency": "USD",
            "BillingPeriodStart": _text(charge.month_start),
            "BillingPeriodEnd": _text(charge.month_end),
            "ChargePeriodStart": _text(charge.charge_start),
            "ChargePeriodEnd": _text(charge.charge_end),
            "ChargeCategory": category,
            "ChargeFrequency": frequency,
            "ChargeDescription": f"{line.category}: {line.basis}",
            "ProviderName": provider,
            "PublisherName": provider,
            "InvoiceIssuerName": provider,
            "ServiceCategory": service,
            "ServiceSubcategory": sub,
            "ServiceName": name,
            "PricingQuantity": quantity,
            "PricingUnit": unit,
            "PricingCategory": "Standard",
            "ListUnitPrice": price,
            "ContractedUnitPrice": price,
            "ListCost": price * quantity,
            "ContractedCost": price * quantity,
            "BilledCost": float(charge.billed_usd),
            "EffectiveCost": float(charge.usd),
            "SkuId": sku,
            "SkuPriceId": sku,
            "SkuMeter": meter,
            "SkuPriceDetails": json.dumps({"x_Source": line.source}, sort_keys=True),
            "x_PlanItem": line.category,
            "x_PlanPeriod": charge.period,
        }
    )
    return row


def _usage_row(item: LineItem, charge, what: str, emit) -> None:
    """Rent, training, owned power and the existing fleet's hosting in one month."""
    usd = charge.usd
    emit(
        item,
        charge,
        quantity=charge.quantity,
        list_price=charge.unit_price_usd,
        ChargeCategory="Usage",
        ChargeFrequency="Recurring" if item.item == Item.EXISTING else "Usage-Based",
        ChargeDescription=("hosting of " if item.item == Item.EXISTING else "")
        + what
        + (
            ""
            if item.mode != Mode.OWNED or item.item == Item.STAFF_SCALE
            else " (electricity, hosting)"
        ),
        PricingUnit="Hours",
        PricingCategory={"spot": "Dynamic"}.get(item.mode, "Standard"),
        BilledCost=usd,
        EffectiveCost=usd,
        ConsumedQuantity=charge.quantity,
        ConsumedUnit="Hours",
        SkuId=item.offering,
        SkuPriceId=f"{item.offering}#{item.mode}",
    )


def _commitment_use(plan: Plan, cal: PlanCalendar) -> dict[tuple[str, str, str], float]:
    """(offering, mode, period) -> share of committed instance-hours the plan uses (0..1)."""
    committed: dict[tuple[str, str, str], float] = defaultdict(float)
    in_use: dict[tuple[str, str, str], float] = defaultdict(float)
    p_start, p_months = cal.start_month, cal.months
    for i in plan.line_items:
        if i.mode not in RESERVED_TERM_MONTHS:
            continue
        if i.item == Item.RESERVATION:
            begin = p_start[i.period]
            for p, s in p_start.items():
                end = min(s + p_months[p], begin + RESERVED_TERM_MONTHS[i.mode])
                if end - max(s, begin) > 1e-9:
                    hours = cal.clock.hours(max(s, begin), end)
                    committed[(i.offering, i.mode, p)] += i.units * hours
        elif i.item == Item.EXISTING:
            price = i.unit_price_usd_per_hour
            for p, usd in i.cost_by_period_usd.items():
                if price > 0:
                    committed[(i.offering, i.mode, p)] += usd / price
        elif i.item in (Item.USE, Item.TRAINING):
            in_use[(i.offering, i.mode, i.period)] += i.units * i.hours
    return {k: min(1.0, in_use.get(k, 0.0) / v) for k, v in committed.items() if v > 0}


def _reservation_rows(item, charge, what, emit, cal: PlanCalendar, used, catalog) -> None:
    """A commitment's recurring fee in one month (Purchase) amortised onto Used/Unused
    usage rows."""
    mode = item.mode
    years = int(RESERVED_TERM_MONTHS[mode] / 12)
    if item.item == Item.RESERVATION:
        cid = f"planned:{item.offering}#{mode}@{item.period}"
    else:
        cid = f"existing:{item.offering}#{mode}"
    on_demand = np.nan
    if item.offering in catalog.offerings.index:
        on_demand = float(catalog.offerings.at[item.offering, "on_demand_usd_per_hour"])
    price, fee, hours = charge.unit_price_usd, charge.usd, charge.hours
    list_price = on_demand if on_demand == on_demand else price
    commitment = {
        "CommitmentDiscountCategory": "Usage",
        "CommitmentDiscountId": cid,
        "CommitmentDiscountName": f"{item.units:g} x {item.instance_type} {years}-year reservation",
        "CommitmentDiscountType": f"Reservation ({years} year{'s' if years > 1 else ''})",
        "CommitmentDiscountUnit": "Hours",
        "SkuId": item.offering,
    }
    emit(
        item,
        charge,
        quantity=hours,
        list_price=price,
        ChargeCategory="Purchase",
        ChargeFrequency="Recurring",
        ChargeDescription=f"{years}-year reservation fee: {what}",
        PricingUnit="Hours",
        PricingCategory="Standard",
        BilledCost=charge.billed_usd,
        EffectiveCost=0.0,
        CommitmentDiscountQuantity=hours,
        SkuPriceId=f"{item.offering}#{mode}",
        **commitment,
    )
    period = cal.period_at(charge.begin_month)
    share_used = used.get((item.offering, mode, period), 0.0) if period else 0.0
    for status, share in (("Used", share_used), ("Unused", 1.0 - share_used)):
        if share <= 1e-12:
            continue
        emit(
            item,
            charge,
            quantity=hours * share,
            list_price=list_price,
            ChargeCategory="Usage",
            ChargeFrequency="Usage-Based" if status == "Used" else "Recurring",
            ChargeDescription=f"{status.lower()} reservation hours: {what}",
            PricingUnit="Hours",
            PricingCategory="Committed",
            BilledCost=0.0,
            EffectiveCost=fee * share,
            CommitmentDiscountQuantity=hours * share,
            CommitmentDiscountStatus=status,
            ConsumedQuantity=hours * share if status == "Used" else None,
            ConsumedUnit="Hours" if status == "Used" else None,
            SkuPriceId=f"{item.offering}#on_demand",
            **commitment,
        )


def _savings_plan_use(plan: Plan, problem: Problem, cal: PlanCalendar) -> dict:
    """(savings plan offering, start period) -> {period: share of its commitment the plan
    uses then} (plan-rate spend of the usage it covers / commitment x hours)."""
    rates = {f"savings_plan/{sp.provider}/{sp.term}": sp.rates for sp in problem.savings_plans}
    out: dict[tuple[str, str], dict[str, float]] = {}
    for sp in (i for i in plan.line_items if i.item == Item.SAVINGS_PLAN and i.units > 0):
        plan_rates = rates.get(sp.offering, {})
        for name in cal.start_month:
            covered = sum(
                plan_rates.get(c.offering, 0.0) * c.units * c.hours
                for c in plan.line_items
                if c.item == Item.SAVINGS_PLAN_COVER
                and c.period == name
                and f"savings_plan/{c.provider}/{c.mode.removeprefix('savings_plan_')}"
                == sp.offering
            )
            begin = cal.start_month[name]
            hours = cal.clock.hours(begin, begin + cal.months[name])
            out.setdefault((sp.offering, sp.period), {})[name] = min(
                1.0, covered / (sp.units * hours) if hours else 0.0
            )
    return out


def _savings_plan_rows(item: LineItem, charge, emit, cal: PlanCalendar, used) -> None:
    """A savings plan's commitment in one month: the fee as a Purchase (EffectiveCost 0),
    amortised onto Used and Unused rows of the spend commitment."""
    years = 1 if item.mode.endswith("1y") else 3
    commitment = {
        "CommitmentDiscountCategory": "Spend",
        "CommitmentDiscountId": f"planned:{item.offering}@{item.period}",
        "CommitmentDiscountName": f"${item.units:g}/h {years}-year savings plan",
        "CommitmentDiscountType": f"Savings Plan ({years} year{'s' if years > 1 else ''})",
        "CommitmentDiscountUnit": "USD",
        "SkuId": item.offering,
        "PricingUnit": "Hours",
        "SkuPriceId": item.offering,
    }
    fee, hours = charge.usd, charge.hours
    what = f"${item.units:g}/h {years}-year savings plan of {item.provider}"
    emit(
        item,
        charge,
        quantity=hours,
        list_price=charge.unit_price_usd,
        ChargeCategory="Purchase",
        ChargeFrequency="Recurring",
        ChargeDescription=f"savings plan commitment: {what}",
        PricingCategory="Standard",
        BilledCost=charge.billed_usd,
        EffectiveCost=0.0,
        CommitmentDiscountQuantity=fee,
        **commitment,
    )
    share_used = (used or {}).get(cal.period_at(charge.begin_month) or "", 0.0)
    for status, share in (("Used", share_used), ("Unused", 1.0 - share_used)):
        if share <= 1e-12:
            continue
        emit(
            item,
            charge,
            quantity=hours * share,
            list_price=charge.unit_price_usd,
            ChargeCategory="Usage",
            ChargeFrequency="Usage-Based" if status == "Used" else "Recurring",
            ChargeDescription=f"{status.lower()} savings plan commitment: {what}",
            PricingCategory="Committed",
            BilledCost=0.0,
            EffectiveCost=fee * share,
            CommitmentDiscountQuantity=fee * share,
            CommitmentDiscountStatus=status,
            **commitment,
        )


def _savings_plan_credit_row(item: LineItem, charge, what: str, emit) -> None:
    """On-demand usage a savings plan pays for in one month: a Credit of its on-demand
    charge (the commitment's Used rows carry its cost)."""
    price = -charge.usd / charge.hours if charge.hours else 0.0
    emit(
        item,
        charge,
        quantity=-charge.hours,
        list_price=price,
        ChargeCategory="Credit",
        ChargeFrequency="Usage-Based",
        ChargeDescription=f"on-demand usage paid by the savings plan: {what}",
        PricingUnit="Hours",
        PricingCategory="Committed",
        BilledCost=charge.billed_usd,
        EffectiveCost=charge.usd,
        CommitmentDiscountCategory="Spend",
        CommitmentDiscountId=f"planned:savings_plan/{item.provider}/"
        f"{item.mode.removeprefix('savings_plan_')}",
        CommitmentDiscountStatus="Used",
        CommitmentDiscountType="Savings Plan",
        CommitmentDiscountUnit="USD",
        CommitmentDiscountQuantity=charge.usd,
        SkuId=item.offering,
        SkuPriceId=f"{item.offering}#on_demand",
    )


def _purchase_rows(item: LineItem, charge, what: str, emit) -> None:
    """A server purchase's charge in one month: the one-time capex in the order month, the
    residual value credited at the horizon, or hosting while in service."""
    common = {
        "quantity": charge.quantity,
        "list_price": charge.unit_price_usd,
        "PricingCategory": "Standard",
        "BilledCost": charge.billed_usd,
        "EffectiveCost": charge.usd,
        "SkuId": item.instance_type,
    }
    one_time = {
        "capex": ("Purchase", "purchase", "capex"),
        "residual_credit": ("Credit", "residual value at the horizon (straight-line)", "residual"),
    }
    if charge.category in one_time:
        category, description, price_id = one_time[charge.category]
        emit(
            item,
            charge,
            **common,
            ChargeCategory=category,
            ChargeFrequency="One-Time",
            ChargeDescription=f"{description}: {what}",
            PricingUnit="Units",
            SkuPriceId=f"{item.instance_type}#{price_id}",
        )
    else:
        emit(
            item,
            charge,
            **common,
            ChargeCategory="Usage",
            ChargeFrequency="Recurring",
            ChargeDescription=f"hosting and maintenance: {what}",
            PricingUnit="Hours",
            ConsumedQuantity=charge.quantity,
            ConsumedUnit="Hours",
            SkuPriceId=f"{item.offering}#hosting",
        )


def focus_csv(frame: pd.DataFrame) -> str:
    """CSV text of a FOCUS frame (empty cells for nulls)."""
    return csv_text(frame, float_format="%.10g")
