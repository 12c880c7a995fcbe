"""The plan's costs beside compute: storage, egress, support, operations
staff, taxes and contingency, worked out month by month from the problem's ``costs:``
(:mod:`solver.inputs.costs`) and the plan's compute charges
(:func:`solver.plan.charges.line_charges`).

Months are the plan's months cut at its periods (a month a period boundary cuts counts
once, its parts summed); months past the horizon (a reservation's term running on) carry
compute, its taxes and contingency, but no storage, egress, support or staff (held for
the horizon only). In this order, each on what comes before it:

1. storage: GB x USD per GB-month x the month's share of a month;
2. egress: GB per month x the share, or GB per million tokens x the workload's served
   tokens in the month's hours (its average output tokens/s x its demand factor);
3. support, per provider: each month the greater of the minimum and the tiered
   percentage of the month's spend with it (compute, storage and egress), pro rata in a
   part month (:func:`solver.inputs.costs.support_fee_usd`);
4. staff: USD per instance-hour x instance-hours of rented and reserved units in use
   (rent, use and training lines not owned);
5. tax, per provider: its rate x everything the provider bills in the month (compute,
   storage, egress, support);
6. contingency: its rate x everything above, each month.

Support is priced in the model month by month as step 3 charges it
(:mod:`solver.core.formulation.support`, the plan's ``support_in_objective_usd``), in the
objective and the budget row; the others are charged on the plan the solver chose, the
budget row holding them at a linear bound (:func:`solver.core.ledger.extras_bound`, the
plan's ``budget_basis``), so the all-in total is within the budget.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import replace
from datetime import date
from typing import Literal, TypedDict, Unpack

import pandas as pd

from solver import money
from solver.core.clock import month_slices
from solver.inputs.catalog import Catalog
from solver.inputs.cost_defaults import CONTINGENCY_NONE, TAX_NONE, support_default
from solver.inputs.costs import (
    CATEGORY_WORDS,
    NOT_MODELLED,
    SUPPORT_PLANS,
    Resolved,
    SupportPlan,
    egress_gb,
    resolve_problem_costs,
    support_fee_usd,
)
from solver.inputs.problem import Problem
from solver.plan.charges import PlanCalendar, line_charges, plan_calendar
from solver.plan.default_costs import DefaultCharge, default_egress, default_storage
from solver.plan.lines import CostLine, Plan
from solver.units import Item, Mode

#: month -> USD
ByMonth = dict[int, float]
#: A :class:`CostLine`'s category.
CostCategory = Literal["storage", "egress", "support", "staff", "tax", "contingency"]


def horizon_slices(cal: PlanCalendar) -> list[tuple[str, float, float]]:
    """(period, begin month, end month) of every month of the horizon, cut at periods."""
    return [
        (p, a, b) for p, s in cal.start_month.items() for a, b in month_slices(s, s + cal.months[p])
    ]


def _month(m0: float) -> int:
    return math.floor(m0 + 1e-9)


class _LineFields(TypedDict, total=False):
    """The :class:`CostLine` fields a cost line's caller names beside its figures."""

    provider: str
    entry: int
    basis: str
    source: str


def _line(
    category: CostCategory,
    by_month: ByMonth,
    quantity: float,
    unit: str,
    *,
    unit_price_usd: float | None = None,
    **fields: Unpack[_LineFields],
) -> CostLine:
    cost = sum(by_month.values())
    price = unit_price_usd if unit_price_usd is not None else (cost / quantity if quantity else 0.0)
    return CostLine(
        category=category,
        quantity=quantity,
        quantity_unit=unit,
        unit_price_usd=price,
        cost_usd=cost,
        cost_by_month_usd={k: v for k, v in sorted(by_month.items()) if v},
        **fields,
    )


def _storage_and_egress(
    resolved: Resolved,
    problem: Problem,
    cal: PlanCalendar,
    slices: list[tuple[str, float, float]],
) -> list[CostLine]:
    out = []
    horizon = cal.horizon_months
    for i, s, price, source in resolved.storage:
        by_month: ByMonth = defaultdict(float)
        for _, a, b in slices:
            by_month[_month(a)] += s.gb * price * (b - a)
        out.append(
            _line(
                "storage",
                by_month,
                s.gb * horizon,
                "GB-months",
                unit_price_usd=price,
                provider=s.provider,
                entry=i,
                basis=f"{s.gb:,.6g} GB of {s.storage_class} x {horizon:g} months x "
                f"${price:g}/GB-month",
                source=source,
            )
        )
    for i, e, price, source in resolved.egress:
        by_month, gb = defaultdict(float), 0.0
        for p, a, b in slices:
            sent = egress_gb(e, problem, p, b - a, cal.clock.hours(a, b))
            gb += sent
            by_month[_month(a)] += sent * price
        what = (
            f"{e.gb_per_month:,.6g} GB/month x {horizon:g} months"
            if e.gb_per_month is not None
            else f"{e.gb_per_million_tokens:g} GB per million output tokens of {e.workload}"
        )
        out.append(
            _line(
                "egress",
                by_month,
                gb,
                "GB",
                unit_price_usd=price,
                provider=e.provider,
                entry=i,
                basis=f"{what}: {gb:,.6g} GB x ${price:g}/GB",
                source=source,
            )
        )
    return out


def _staff(resolved: Resolved, plan: Plan, cal: PlanCalendar) -> list[CostLine]:
    rate = resolved.staff_usd_per_instance_hour
    if not rate:
        return []
    hours: ByMonth = defaultdict(float)
    for item in plan.line_items:
        if item.item not in ("rent", "use", "training") or item.mode == Mode.OWNED:
            continue
        unit_hours = item.units * item.hours
        if item.item == Item.TRAINING:
            begin = cal.start_month[item.period]
            pieces = cal.clock.spread(unit_hours, begin, cal.clock.month_after(begin, item.hours))
        else:
            pieces = cal.period_slices(item.period, unit_hours)
        for m0, _, h in pieces:
            hours[_month(m0)] += h
    total = sum(hours.values())
    if not total:
        return []
    return [
        _line(
            "staff",
            {k: h * rate for k, h in hours.items()},
            total,
            "instance-hours",
            unit_price_usd=rate,
            basis=f"{total:,.6g} instance-hours rented or reserved in use x "
            f"{money.usd(rate * 8760)} per instance-year / 8,760 h",
            source=resolved.staff_source,
        )
    ]


def _zero(category: CostCategory, source: str, provider: str = "") -> CostLine:
    """A category at 0 by default, its source saying why (no tax, no contingency, a
    provider that bills no support plan)."""
    return _line(category, {}, 0.0, "USD", unit_price_usd=0.0, provider=provider,
                 basis=f"0 by default: {source}", source=source)  # fmt: skip


def _support_plans(
    resolved: Resolved, compute: dict[str, ByMonth]
) -> dict[str, SupportPlan | None]:
    """The support plan of each provider charged: the problem's, else (support by
    default) each provider the plan spends with at its default plan (None: it bills
    none)."""
    if "support" not in resolved.defaults:
        return dict(resolved.support)
    out: dict[str, SupportPlan | None] = {}
    for provider in sorted(p for p, by in compute.items() if any(by.values()) and p != "owned"):
        name, source = support_default(provider)
        plan = SUPPORT_PLANS[(provider, name)] if name else None
        out[provider] = None if plan is None else replace(plan, source=source)
    return out


def _default_storage_and_egress(
    resolved: Resolved,
    plan: Plan,
    problem: Problem,
    catalog: Catalog,
    cal: PlanCalendar,
    slices: list[tuple[str, float, float]],
) -> list[CostLine]:
    """Storage and egress by default (:mod:`solver.plan.default_costs`) for the
    categories the problem did not give."""
    charges: list[tuple[CostCategory, DefaultCharge]] = []
    if "storage" in resolved.defaults:
        charges += [("storage", c) for c in default_storage(plan, problem, catalog, slices)]
    if "egress" in resolved.defaults:
        charges += [("egress", c) for c in default_egress(plan, problem, cal)]
    out = []
    for category, c in charges:
        storage = category == "storage"
        quantity = c.gb * cal.horizon_months if storage else c.gb
        out.append(
            _line(
                category,
                {k: gb * c.usd_per_gb for k, gb in c.gb_by_month.items()},
                quantity,
                "GB-months" if storage else "GB",
                unit_price_usd=c.usd_per_gb,
                provider=c.provider,
                basis=f"{c.what}: {quantity:,.6g} "
                + ("GB-months" if storage else "GB")
                + f" x ${c.usd_per_gb:.4g}/GB"
                + ("-month" if storage else ""),
                source=c.source,
            )
        )
    return out


def cost_lines(plan: Plan, problem: Problem, catalog: Catalog, start: date) -> list[CostLine]:
    """The plan's costs beside compute, one line per category and provider (storage and
    egress per entry), in the order of the module docstring; [] without ``costs:``."""
    resolved = resolve_problem_costs(problem)
    if not resolved.any:
        return []
    cal = plan_calendar(problem, start)
    slices = horizon_slices(cal)
    table = line_charges(plan, problem, catalog, start)
    providers = [plan.line_items[int(n)].provider for n in table["line"]]
    compute: dict[str, ByMonth] = defaultdict(lambda: defaultdict(float))
    in_horizon: dict[str, ByMonth] = defaultdict(lambda: defaultdict(float))
    for provider, month, m0, usd in zip(
        providers, table["month"], table["begin_month"], table["usd"], strict=True
    ):
        compute[provider][int(month)] += float(usd)
        if m0 < cal.horizon_months - 1e-9:
            in_horizon[provider][int(month)] += float(usd)
    lines = _storage_and_egress(resolved, problem, cal, slices)
    lines += _default_storage_and_egress(resolved, plan, problem, catalog, cal, slices)
    billed = {p: dict(v) for p, v in compute.items()}  # provider -> month -> USD billed
    for line in lines:
        for k, usd in line.cost_by_month_usd.items():
            in_horizon[line.provider][k] += usd
            billed.setdefault(line.provider, {})
            billed[line.provider][k] = billed[line.provider].get(k, 0.0) + usd
    share: ByMonth = defaultdict(float)  # month -> its fraction inside the horizon
    for _, a, b in slices:
        share[_month(a)] += b - a
    for provider, plan_of in _support_plans(resolved, compute).items():
        if plan_of is None:  # a provider that bills no support plan (default): 0, sourced
            lines.append(_zero("support", support_default(provider)[1], provider))
            continue
        spend = in_horizon.get(provider, {})
        fees = {k: support_fee_usd(plan_of, spend.get(k, 0.0), f) for k, f in share.items()}
        on = sum(spend.get(k, 0.0) for k in share)
        line = _line(
            "support",
            fees,
            on,
            "USD",
            provider=provider,
            basis="each month the greater of "
            f"{money.usd(plan_of.minimum_usd_per_month)} and "
            + ", ".join(
                f"{pc:g}% " + (f"to {money.usd(up, cents=False)}" if up is not None else "above")
                for up, pc in plan_of.bands
            )
            + f" of the month's {provider} spend ({money.usd(on)} over the horizon)",
            source=plan_of.source,
        )
        lines.append(line)
        for k, usd in line.cost_by_month_usd.items():
            billed[provider][k] = billed[provider].get(k, 0.0) + usd
    lines += _staff(resolved, plan, cal)
    for provider, rate in resolved.tax_rate.items():
        lines.append(
            _tax_line(provider, billed.get(provider, {}), rate, "the problem's costs.taxes")
        )
    if "tax" in resolved.defaults and resolved.tax_default_rate:
        lines += _jurisdiction_tax(resolved, billed)
    elif "tax" in resolved.defaults:
        lines.append(_zero("tax", TAX_NONE))
    if "contingency" in resolved.defaults:
        lines.append(_zero("contingency", CONTINGENCY_NONE))
    if resolved.contingency_rate:
        total: ByMonth = defaultdict(float)
        for by in compute.values():
            for k, usd in by.items():
                total[k] += usd
        for line in lines:
            for k, usd in line.cost_by_month_usd.items():
                total[k] += usd
        rate = resolved.contingency_rate
        lines.append(
            _line(
                "contingency",
                {k: usd * rate for k, usd in total.items()},
                sum(total.values()),
                "USD",
                unit_price_usd=rate,
                basis=f"{rate * 100:.4g}% of everything above",
                source="the problem's costs.contingency_percent",
            )
        )
    return [_with_periods(line, cal) for line in lines]


def _tax_line(provider: str, base: ByMonth, rate: float, source: str) -> CostLine:
    """Tax at ``rate`` (a fraction) on what ``provider`` bills each month (``base``, USD)."""
    return _line(
        "tax",
        {k: usd * rate for k, usd in base.items()},
        sum(base.values()),
        "USD",
        unit_price_usd=rate,
        provider=provider,
        basis=f"{rate * 100:.4g}% of everything {provider} bills (compute, storage, "
        "egress, support)",
        source=source,
    )


def _jurisdiction_tax(resolved: Resolved, billed: dict[str, ByMonth]) -> list[CostLine]:
    """Tax by default where the problem names a jurisdiction: its rate on everything each
    cloud provider bills (compute, storage, egress, support), one line per provider (owned
    servers are not a cloud bill)."""
    rate = resolved.tax_default_rate
    out = []
    for provider in sorted(p for p in billed if p != "owned"):
        base = billed[provider]
        if not any(base.values()):
            continue
        out.append(_tax_line(provider, base, rate, resolved.tax_default_source))
    return out


def _with_periods(line: CostLine, cal: PlanCalendar) -> CostLine:
    """The line with its cost by period: each month in the period it starts in."""
    last = list(cal.start_month)[-1]
    by_period: dict[str, float] = {}
    for k, usd in line.cost_by_month_usd.items():
        period = cal.period_at(float(k)) or last
        by_period[period] = by_period.get(period, 0.0) + usd
    return line.model_copy(update={"cost_by_period_usd": by_period})


def not_included(problem: Problem) -> list[str]:
    """What a plan of ``problem`` does not hold: the categories it did not ask for, then
    what no plan models yet (:data:`solver.inputs.costs.NOT_MODELLED`)."""
    resolved = resolve_problem_costs(problem)
    given = {
        "storage": bool(resolved.storage),
        "egress": bool(resolved.egress),
        "support": bool(resolved.support),
        "staff": bool(resolved.staff_usd_per_instance_hour),
        "tax": bool(resolved.tax_rate),
        "contingency": bool(resolved.contingency_rate),
    }
    partial = []
    if resolved.any and (problem.period_budget_usd or problem.provider_share_max):
        partial.append(
            "the costs beside compute in period budgets and provider shares: those hold "
            "compute only (the total budget holds everything)"
        )
    off = [c for c, on in given.items() if not on and c not in resolved.defaults]
    return [CATEGORY_WORDS[c] for c in off] + partial + list(NOT_MODELLED)


def with_cost_lines(plan: Plan, problem: Problem, catalog: Catalog, start: date) -> Plan:
    """The plan with its cost lines, all-in total, what it leaves out and the budget's
    basis."""
    lines = cost_lines(plan, problem, catalog, start)
    return plan.model_copy(
        update={
            "cost_lines": lines,
            "all_in_cost_usd": plan.total_cost_usd + sum(c.cost_usd for c in lines),
            "not_included": not_included(problem),
        }
    )


def cost_line_rows(plan: Plan) -> pd.DataFrame:
    """month, category, provider, usd of every cost line (for tests and summaries)."""
    rows = [
        {"month": k, "category": c.category, "provider": c.provider, "usd": usd}
        for c in plan.cost_lines
        for k, usd in c.cost_by_month_usd.items()
    ]
    return pd.DataFrame(rows, columns=["month", "category", "provider", "usd"])


__all__ = ["cost_line_rows", "cost_lines", "horizon_slices", "not_included", "with_cost_lines"]
