"""The plan's charges by calendar month: one table the cash flow, the FOCUS rows, the
orders and the re-solve read their money by month from.

:func:`charges` makes one row per line item and month it is charged in (a month cut at
the plan's whole months, so a charge that starts mid-month has a shorter first slice),
from the plan's line items, the problem's periods (:class:`PlanCalendar`) and one clock
(:class:`solver.core.clock.Clock`: real calendar hours when the problem states its
start, else 730-hour months; the dates are calendar months from the start either way).

Columns:

- ``line``: index of the line item in ``plan.line_items``; ``period``: its period.
- ``month``: plan month (0 = the first) and ``month_start``/``month_end`` (its first day
  and the next month's); ``begin_month``/``end_month`` (months from the start) and
  ``charge_start``/``charge_end`` (timestamps) of the span charged, inside that month.
- ``category``: the cash flow's columns: ``rented`` (on-demand and spot, training
  included), ``owned_opex`` (owned servers' power, hosting, staff), ``commitments``
  (reservation fees, used or not), ``capex`` (servers bought) and ``residual_credit``
  (their remaining value credited at the horizon, a negative amount); then the costs
  beside compute, one per cost line of the plan (``storage``, ``egress``, ``support``,
  ``staff``, ``tax``, ``contingency``: :mod:`solver.plan.costs`), whose rows have ``line``
  -1 and ``cost_line`` their index in ``plan.cost_lines`` (-1 on line items' rows).
- ``usd``: what the plan counts in the month (accrued: a reservation's fee month by
  month, a purchase's capex share under ``owned_cost_policy``); ``billed_usd``: what is
  invoiced (a purchase's full price when bought; nothing for the residual credit).
- ``quantity`` in ``quantity_unit`` (``hours``: unit-hours; ``units``: servers) at
  ``unit_price_usd`` per quantity; ``hours``: the unit-hours (0 for ``units``).

Charges as the ledger made them (:mod:`solver.core.ledger`): rent, power and hosting
spread over their period's months by hours; a training job from its period's start for
its hours; a reservation's fee for every month of its term (past the horizon too); a
server's capex in the month it is ordered, its hosting monthly from delivery, and its
residual value in the last month.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date
from typing import cast

import pandas as pd

from solver.core import ledger
from solver.core.clock import Clock, Slice, month_slices
from solver.core.compile.periods import build_calendar
from solver.inputs.catalog import Catalog
from solver.inputs.problem import Problem
from solver.plan.lines import LineItem, Plan
from solver.plan.lines.blocks import ITEM as BLOCK_ITEM
from solver.plan.lines.blocks import block_charge_pieces
from solver.units import DAYS_PER_MONTH, RENTED_MODES, RESERVED_TERM_MONTHS, Item, Mode

COLUMNS = (
    "line",
    "period",
    "month",
    "month_start",
    "month_end",
    "begin_month",
    "end_month",
    "charge_start",
    "charge_end",
    "category",
    "usd",
    "billed_usd",
    "quantity",
    "quantity_unit",
    "unit_price_usd",
    "hours",
    "cost_line",
)
#: the compute categories, then the costs beside compute (plan.cost_lines)
COMPUTE_CATEGORIES = ("rented", "owned_opex", "commitments", "capex", "residual_credit")
EXTRA_CATEGORIES = ("storage", "egress", "support", "staff", "tax", "contingency")
CATEGORIES = COMPUTE_CATEGORIES + EXTRA_CATEGORIES


@dataclass(frozen=True)
class PlanCalendar:
    """The problem's periods in months from the plan's start, its clock and its dates.

    Attributes
    ----------
    start_month, months
        Period name -> its first month and its length (months from the plan's start).
    horizon_months
        The end of the last period.
    clock
        Months -> hours as the plan was costed (the problem's :class:`Clock`).
    dates
        Months -> dates: calendar months from the problem's start, or from ``start``.
    """

    start_month: dict[str, float]
    months: dict[str, float]
    horizon_months: float
    clock: Clock
    dates: Clock

    def period_at(self, month: float) -> str | None:
        """The period that holds ``month`` (None past the horizon)."""
        if month >= self.horizon_months - 1e-9:
            return None
        for p, s in self.start_month.items():
            if s - 1e-9 <= month < s + self.months[p] - 1e-9:
                return p
        return None

    def timestamp(self, month: float) -> pd.Timestamp:
        """The moment ``month`` months after the start, on the calendar."""
        assert self.dates.start is not None, "a plan without a start has no dates"
        return pd.Timestamp(self.dates.timestamp(month, self.dates.start))

    def period_slices(self, period: str, usd: float) -> list[Slice]:
        """A period's ``usd`` by month, in proportion to each month's hours."""
        begin = self.start_month[period]
        return self.clock.spread(usd, begin, begin + self.months[period])


def plan_calendar(problem: Problem, start: date | None = None) -> PlanCalendar:
    """The calendar of ``problem`` dated from ``start`` (its own start when it states one;
    without either it has no dates, only months and hours).

    Its periods and clock are the ones compile builds
    (:func:`solver.core.compile.periods.build_calendar`, the one place they are made).
    """
    calendar = build_calendar(problem)
    periods = calendar.periods
    names = list(periods["name"])
    clock = calendar.clock
    return PlanCalendar(
        start_month=dict(zip(names, periods["start_month"].astype(float), strict=True)),
        months=dict(zip(names, periods["months"].astype(float), strict=True)),
        horizon_months=calendar.horizon_months,
        clock=clock,
        dates=clock if clock.start is not None or start is None else Clock(start),
    )


@dataclass(frozen=True)
class PurchaseTerms:
    """When servers bought serve and what their capex counts (per :func:`purchase_terms`)."""

    delivery_month: float  # months from the plan's start
    in_service_months: float
    capex_usd_per_server: float  # NaN for a server no longer in the catalog
    capex_fraction: float  # the share of capex ``owned_cost_policy`` counts
    counted_capex_usd: float  # all units' capex x capex_fraction


def _start(item: LineItem, cal: PlanCalendar) -> float:
    """The month a line begins: its period's start, or the start of ``served_months``
    when it covers only part of its period (the solver split the period)."""
    if item.served_months:
        return float(item.served_months[0])
    return cal.start_month[item.period]


def _slices(item: LineItem, cal: PlanCalendar, period: str, usd: float) -> list[Slice]:
    """A line's ``usd`` in ``period`` by month: over its ``served_months`` when it covers
    only part of its own period, else over the period's months."""
    if item.served_months and period == item.period:
        return cal.clock.spread(usd, float(item.served_months[0]), float(item.served_months[1]))
    return cal.period_slices(period, usd)


def delivery_month(item: LineItem, cal: PlanCalendar, catalog: Catalog) -> float:
    """The month servers ordered in ``item.period`` arrive (NaN if not in the catalog)."""
    if item.instance_type not in catalog.servers.index:
        return float("nan")
    # a numeric column: pandas-stubs type .at as any scalar (dates, strings, ...)
    lead_days = float(cast(float, catalog.servers.at[item.instance_type, "lead_time_days"]))
    return _start(item, cal) + lead_days / DAYS_PER_MONTH


def purchase_terms(
    item: LineItem, cal: PlanCalendar, catalog: Catalog, policy: str
) -> PurchaseTerms:
    """A purchase line item's delivery, months in service (``item.hours`` from delivery)
    and counted capex (:func:`solver.core.ledger.capex_fraction`); a server no longer in
    the catalog serves until the horizon and counts its line item's cost."""
    begin = delivery_month(item, cal, catalog)
    if begin != begin:  # not in the catalog: in service until the horizon
        begin = cal.clock.month_after(cal.horizon_months, -item.hours)
    in_service = cal.clock.month_after(begin, item.hours) - begin
    if item.instance_type not in catalog.servers.index:
        return PurchaseTerms(begin, in_service, float("nan"), float("nan"), item.cost_usd)
    # instance_type is the servers table's unique index, so .loc gives one row (a Series);
    # the stubs cannot know the index is unique.
    srv = cast(pd.Series, catalog.servers.loc[item.instance_type])
    frac = ledger.capex_fraction(policy, in_service, float(srv["lifetime_years"]) * 12.0)
    capex = float(srv["capex_usd"])
    return PurchaseTerms(begin, in_service, capex, frac, item.units * capex * frac)


def charges(plan: Plan, problem: Problem, catalog: Catalog, start: date) -> pd.DataFrame:
    """The plan's charges by calendar month: its line items'
    (:func:`line_charges`), then its cost lines' (``line`` -1, ``cost_line`` the index in
    ``plan.cost_lines``; category storage, egress, support, staff, tax or contingency),
    one row per cost line and month, the month inside the horizon where it is (a whole
    month past it)."""
    table = line_charges(plan, problem, catalog, start)
    if not plan.cost_lines:
        return table
    cal = plan_calendar(problem, start)
    rows = []
    for n, c in enumerate(plan.cost_lines):
        for month, usd in sorted(c.cost_by_month_usd.items()):
            m0 = float(month)
            m1 = min(m0 + 1.0, cal.horizon_months) if m0 < cal.horizon_months else m0 + 1.0
            if c.category == "support" or c.unit_price_usd <= 0:
                quantity, unit, price = m1 - m0, "months", usd / (m1 - m0)
            else:
                quantity, unit, price = usd / c.unit_price_usd, c.quantity_unit, c.unit_price_usd
            values = _values(c.category, usd, usd, quantity, unit, price)
            row = {
                "line": -1,
                "period": cal.period_at(m0) or list(cal.start_month)[-1],
                "month": int(month),
                "month_start": cal.timestamp(float(month)),
                "month_end": cal.timestamp(float(month) + 1.0),
                "begin_month": m0,
                "end_month": m1,
                "charge_start": cal.timestamp(m0),
                "charge_end": cal.timestamp(m1),
                **values,
                "hours": quantity if unit == "instance-hours" else 0.0,
                "cost_line": n,
            }
            rows.append(row)
    extra = pd.DataFrame(rows, columns=list(COLUMNS))
    if not len(extra):  # cost lines of no month: concatenated, the dates would be objects
        return table
    return pd.concat([table, extra], ignore_index=True) if len(table) else extra


def line_charges(plan: Plan, problem: Problem, catalog: Catalog, start: date) -> pd.DataFrame:
    """The plan's charges by line item and calendar month (see the module docstring).

    Parameters
    ----------
    plan
        The plan whose line items are charged.
    problem
        The problem it was solved from (periods, clock, owned cost policy).
    catalog
        Servers' capex, lead time and life (purchases).
    start
        The plan's first day when the problem states no start (dates only).
    """
    cal = plan_calendar(problem, start)
    rows: list[dict] = []
    for line, item in enumerate(plan.line_items):
        if item.cost_usd == 0.0 and item.item in ("use", "training"):
            continue
        if item.item in ("rent", "use", "training", "staff_scale") or (
            item.item == Item.EXISTING and item.mode == Mode.OWNED
        ):
            pieces = _usage(item, cal)
        elif item.item in ("reservation", "existing"):
            pieces = _commitment(item, cal, upfront_share(item, catalog))
        elif item.item == Item.PURCHASE:
            pieces = _purchase(item, cal, catalog, problem.owned_cost_policy)
        elif item.item == Item.SAVINGS_PLAN:
            pieces = _savings_plan(item, cal, problem)
        elif item.item == BLOCK_ITEM:  # a capacity block: upfront, when it starts
            begin = cal.start_month[item.period]
            pieces = block_charge_pieces(item, begin, cal.clock.month_after(begin, item.hours))
        elif item.item == Item.SAVINGS_PLAN_COVER:  # the on-demand bill the plan pays: rented
            pieces = [(a, b, {**v, "category": "rented"}) for a, b, v in _usage(item, cal)]
        else:
            pieces = []
        for m0, m1, values in pieces:
            rows.append(_row(line, item, m0, m1, cal, values))
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _row(
    line: int, item: LineItem, m0: float, m1: float, cal: PlanCalendar, values: dict[str, object]
) -> dict[str, object]:
    month = math.floor(m0 + 1e-9)
    hours = values["quantity"] if values["quantity_unit"] == "hours" else 0.0
    return {
        "line": line,
        "period": item.period,
        "month": month,
        "month_start": cal.timestamp(month),
        "month_end": cal.timestamp(month + 1.0),
        "begin_month": m0,
        "end_month": m1,
        "charge_start": cal.timestamp(m0),
        "charge_end": cal.timestamp(m1),
        **values,
        "hours": hours,
        "cost_line": -1,
    }


def _values(
    category: str, usd: float, billed_usd: float, quantity: float, unit: str, price: float
) -> dict[str, object]:
    return {
        "category": category,
        "usd": usd,
        "billed_usd": billed_usd,
        "quantity": quantity,
        "quantity_unit": unit,
        "unit_price_usd": price,
    }


def _usage_category(mode: str) -> str:
    if mode in RENTED_MODES:
        return "rented"
    return "commitments" if mode in RESERVED_TERM_MONTHS else "owned_opex"


def _usage(item: LineItem, cal: PlanCalendar) -> list[tuple[float, float, dict]]:
    """Rent, owned power, training and the existing fleet's hosting by month: each
    period's cost spread by its months' hours (a training job from its period's start)."""
    if item.item == Item.TRAINING:
        begin = _start(item, cal)
        end = cal.clock.month_after(begin, item.hours)
        pieces = cal.clock.spread(item.cost_usd, begin, end) if end > begin else []
    else:
        by_period = item.cost_by_period_usd or {item.period: item.cost_usd}
        pieces = [x for p, usd in by_period.items() for x in _slices(item, cal, p, usd)]
    unit_hours = item.units * item.hours if item.hours else 0.0
    category = _usage_category(item.mode)
    out = []
    for m0, m1, usd in pieces:
        if usd == 0.0:
            continue
        if unit_hours:
            share = usd / item.cost_usd if item.cost_usd else 0.0
            values = _values(
                category, usd, usd, unit_hours * share, "hours", item.unit_price_usd_per_hour
            )
        else:
            price = usd / item.units if item.units else 0.0
            values = _values(category, usd, usd, item.units, "units", price)
        out.append((m0, m1, values))
    return out


def upfront_share(item: LineItem, catalog: Catalog) -> float:
    """The part of a new reservation's whole-term cost paid at its start: its offering's
    ``<mode>_upfront_share`` (a vendor quote's, :mod:`solver.inputs.quotes`), else 0."""
    column = f"{item.mode}_upfront_share"
    off = catalog.offerings
    if item.item != Item.RESERVATION or column not in off.columns or item.offering not in off.index:
        return 0.0
    # a numeric column: pandas-stubs type .at as any scalar (dates, strings, ...)
    share = float(cast(float, off.at[item.offering, column]))
    return share if share == share else 0.0


def _commitment(
    item: LineItem, cal: PlanCalendar, upfront: float = 0.0
) -> list[tuple[float, float, dict]]:
    """A reservation's fee for every month of its term (the fleet's: its cost per plan
    period spread by the months' hours), used or not.

    ``upfront`` (0 to 1) of the whole term's fees is billed in its first month and the
    rest month by month (``billed_usd``); the accrued ``usd`` is the fee of each month
    either way, so the total is unchanged."""
    price = item.unit_price_usd_per_hour
    if item.item == Item.RESERVATION:
        begin = _start(item, cal)
        spans = month_slices(begin, begin + RESERVED_TERM_MONTHS[item.mode])
        pieces = [(a, b, price * item.units * cal.clock.hours(a, b)) for a, b in spans]
    else:
        by_period = item.cost_by_period_usd.items()
        pieces = [x for p, usd in by_period for x in _slices(item, cal, p, usd)]
    paid_first = upfront * sum(fee for _, _, fee in pieces)
    return [
        (
            m0,
            m1,
            _values(
                "commitments",
                fee,
                (1.0 - upfront) * fee + (paid_first if n == 0 else 0.0),
                fee / price if price else 0.0,
                "hours",
                price,
            ),
        )
        for n, (m0, m1, fee) in enumerate(pieces)
    ]


def _savings_plan(
    item: LineItem, cal: PlanCalendar, problem: Problem
) -> list[tuple[float, float, dict]]:
    """A savings plan's commitment (``units`` USD per hour) for every month of its term,
    used or not, as a reservation's fee is charged (:func:`_commitment`); past the
    horizon only under the cash policy (amortised counts the months inside)."""
    begin, end = _start(item, cal), item.term_end_month
    if problem.owned_cost_policy == "amortised":
        end = min(end, problem.horizon_months)
    out = []
    for a, b in month_slices(begin, end):
        fee = item.units * cal.clock.hours(a, b)
        out.append(
            (
                a,
                b,
                _values(
                    "commitments", fee, fee, fee / item.units if item.units else 0.0, "hours", 1.0
                ),
            )
        )
    return out


def _purchase(
    item: LineItem, cal: PlanCalendar, catalog: Catalog, policy: str
) -> list[tuple[float, float, dict]]:
    """Servers bought: the capex in the order month, the residual value credited in the
    last month, hosting monthly from delivery while in service."""
    terms = purchase_terms(item, cal, catalog, policy)
    capex, counted = terms.capex_usd_per_server, terms.counted_capex_usd
    known = capex == capex
    m0, m1 = month_slices(_start(item, cal), _start(item, cal) + 1.0)[0]
    out = [
        (
            m0,
            m1,
            _values(
                "capex",
                counted,
                item.units * capex if known else counted,
                item.units,
                "units",
                capex if known else counted / item.units,
            ),
        )
    ]
    if item.residual_value_usd:
        m0, m1 = month_slices(cal.horizon_months - 1.0, cal.horizon_months)[-1]
        credit = -item.residual_value_usd
        price = credit / item.units
        out.append((m0, m1, _values("residual_credit", credit, 0.0, item.units, "units", price)))
    hosting = item.cost_usd - counted + item.residual_value_usd
    begin, in_service = terms.delivery_month, terms.in_service_months
    if abs(hosting) <= 1e-9 or in_service <= 0:
        return out
    for a, b in month_slices(begin, begin + in_service):
        usd = hosting * (b - a) / in_service  # hosting is a monthly fee
        hours = item.units * cal.clock.hours(a, b)
        price = usd / hours if hours else 0.0
        out.append((a, b, _values("owned_opex", usd, usd, hours, "hours", price)))
    return out


def by_month(table: pd.DataFrame) -> pd.DataFrame:
    """The charges summed by month (``YYYY-MM`` index, in order): one column per
    category, ``usd`` and ``billed_usd``."""
    month = table["month_start"].dt.strftime("%Y-%m")
    parts = pd.DataFrame({c: table["usd"].where(table["category"] == c, 0.0) for c in CATEGORIES})
    parts["usd"] = table["usd"]
    parts["billed_usd"] = table["billed_usd"]
    parts["month"] = month
    parts["plan_month"] = table["month"]
    sums = parts.groupby("month", sort=True)[[*CATEGORIES, "usd", "billed_usd"]].sum()
    sums["plan_month"] = parts.groupby("month", sort=True)["plan_month"].first()
    return sums


__all__ = [
    "CATEGORIES",
    "COLUMNS",
    "PlanCalendar",
    "PurchaseTerms",
    "COMPUTE_CATEGORIES",
    "EXTRA_CATEGORIES",
    "by_month",
    "charges",
    "line_charges",
    "delivery_month",
    "plan_calendar",
    "purchase_terms",
]
