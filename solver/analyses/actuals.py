"""Actuals: what was billed against what was planned, the variance split, and a re-forecast.

A signed plan runs; the clouds bill it. :func:`actuals` matches billed rows (FOCUS exports
read by :func:`solver.inputs.importers.focus_billing.read_focus_billing`) to the plan's
charges (:func:`solver.plan.charges.charges`, the table the cash flow and the plan's own
FOCUS forecast read) and splits the difference.

**Matching.** A charge's *key* is (provider, region, instance type, pricing), pricing being
``on_demand``, ``spot`` or ``reserved`` (a plan line's ``reserved_1y``/``reserved_3y``;
FOCUS's ``PricingCategory`` Committed); a billed row without an instance type names its
plan offering by ``SkuId`` (our own FOCUS rows do). Plan lines of one key (the same
instance bought the same way for two load blocks, say) are compared together: ``lines``
lists them. Keys are compared month by month (``YYYY-MM``, the charge's start) from the
plan's first month to the last month billed (below, "Months compared"). Only cloud lines
are billed: owned servers (purchases, their hosting and power) are not in a cloud's export
and are left out (listed in ``not_billed_by_cloud``).

**Variance** per key and month, in USD, with P and A the planned and actual cost, h_p and
h_a their instance-hours and p_p = P / h_p the planned price (0 without planned hours):

- *unplanned* = A, for a key billed but not planned that month;
- *unbilled* = -P, for a key planned but not billed that month;
- for a key both planned and billed, the hours effect (h_a - h_p) x p_p is split into
  *volume* and *mix* within its **mix group**, the matched keys of the same accelerator
  in the same month (the same class of hardware, where the work can move between clouds,
  regions and modes): with H_p, H_a the group's planned and actual hours and s = h_p /
  H_p the key's planned share,

      volume = s x (H_a - H_p) x p_p       (the group ran more or fewer hours)
      mix    = (h_a - s x H_a) x p_p       (its hours moved between keys)

  and *price* = A - P - volume - mix = (A / h_a - p_p) x h_a, the price moved.

Each row's categories sum to A - P by construction, so every total does too. A group of one
key has no mix (s = 1). Over a group, volume sums to (H_a - H_p) x P_g / H_p and mix to
sum(h_a x p_p) - H_a x P_g / H_p: the textbook price-volume-mix split, at planned prices.

**Bills.** Rows passed twice (the same file twice, overlapping exports) are counted once
(:mod:`solver.inputs.importers.focus_bills`; ``duplicates`` says how many, from which
file). Rows billed outside the plan's months (its first to its last month of charges) are
set apart (``outside``), not compared; a file all of whose rows are outside is refused.

**Months compared**: from the plan's first month to the *last month billed*, the latest
of: a month with a row, a month within a row's billing period (``BillingPeriodStart`` to
``BillingPeriodEnd``: an invoice for March says March is billed even if a line has no row
in it), and ``billed_through`` (the user's word that the bills are complete to it). Every
planned key of every month compared is accounted for: a key with no row in a month is
``unbilled``, with the month.

**Not billed yet** (``not_billed_yet``, :func:`_not_billed_yet`). An unbilled key in a
month after ``billed_through`` is *not billed yet*, a late or missing invoice rather than
use that stopped, when

- its provider has no invoice for the month (no row of it in the month, and no billing
  period of it covering the month), or
- the month is the last compared and fewer keys are billed in it than planned, or its
  rows all end before the month does (their latest ``ChargePeriodEnd``, ``billed_to``:
  an export taken mid-month): that month is *partial* (``partial_months``), its invoice
  still coming in (a month's export fills day by day, and a provider's invoice can come
  days after another's). A partial month is left out of the run-rate whole.

Any other unbilled key was *used less*: billed nothing in a month whose invoices are in.

**Re-forecast** (:func:`reforecast`): the months billed are *actual*; the rest of the
horizon is *forecast* twice: at the plan (its charges) and at the run-rate observed (each
key's planned charges scaled by its factor, A / P over its *settled* months: the partial
month and the lines not billed yet are left out of both A and P, so a late invoice never
reads as a drop in use; 1 for a key with nothing planned in them; a key billed but not
planned continues at its mean monthly cost over the months compared). A line not billed
yet is expected still: the actual months' ``at_plan_usd`` and ``at_resolve_usd`` add it at
the plan, ``at_run_rate_usd`` at its key's factor, and ``pending_usd`` says how much.

Worked by hand (tests/hostile/test_bills.py): two keys planned at $7,440 in January
($5,952 + $1,488), $6,720 in February, $7,440 in March and $7,200 in April; billed as
planned to February and March's $5,952, the $1,488 key's March invoice late. Read as used
less, that key's factor would be $2,832 / $4,320 = 0.656 (a 34% drop) and April at the
run-rate $6,704; March is partial, so both factors are 1, April at the run-rate is the
plan's $7,200, March's $1,488 is pending, and the horizon at the run-rate is the plan's
$28,800.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

import numpy as np
import pandas as pd

from solver.errors import ProcureError
from solver.inputs.catalog import Catalog
from solver.inputs.importers.focus_bills import Bills, dedupe
from solver.inputs.problem import Problem
from solver.plan import Plan
from solver.plan.charges import charges
from solver.units import RESERVED_TERM_MONTHS

KEY = ["provider", "region", "instance_type", "pricing"]
CATEGORIES = ("price_usd", "volume_usd", "mix_usd", "unplanned_usd", "unbilled_usd")
LINE_COLUMNS = (
    *KEY,
    "accelerator",
    "month",
    "lines",
    "status",
    "planned_usd",
    "actual_usd",
    "planned_hours",
    "actual_hours",
    "planned_usd_per_hour",
    "actual_usd_per_hour",
    *CATEGORIES,
    "variance_usd",
    "not_billed_yet",
)
#: How a plan line's mode is billed (FOCUS PricingCategory, read as ``pricing``).
_PRICING_OF_MODE = {"on_demand": "on_demand", "spot": "spot"} | dict.fromkeys(
    RESERVED_TERM_MONTHS, "reserved"
)


@dataclass(frozen=True)
class Actuals:
    """Planned against billed, by key and month (see the module docstring).

    Attributes
    ----------
    lines
        One row per key and month: :data:`LINE_COLUMNS` (USD, instance-hours).
    planned
        The plan's cloud charges by key and month (every month of the plan), with
        ``planned_usd`` and ``planned_hours``: what the re-forecast continues.
    billed
        The billed rows, in USD (``cost_usd``), with their key.
    first_month, last_month
        The months compared (the plan's first, the last billed).
    first_billed_month
        The first month billed (before ``first_month`` when a bill predates the plan).
    not_billed_by_cloud
        Plan lines no cloud bills (owned servers): their indices in ``plan.line_items``.
    files
        Billing file -> rows compared (read, less duplicates and rows outside the plan).
    duplicates
        Files that had rows dropped as passed twice: ``file``, ``rows``,
        ``duplicate_of``, ``same_bill_as``
        (:class:`~solver.inputs.importers.focus_bills.Bills`).
    outside
        Per file, rows billed outside the plan's months (``file``, ``rows``, ``months``,
        ``cost_usd``): set apart, not compared.
    partial_months
        The last month compared when it is billed for fewer keys than planned: not billed
        in full yet, so left out of the run-rate.
    billed_through
        The last month the bills were stated complete (``--billed-through``), else ''.
    read
        Billing file -> rows read.
    plan_last_month
        The plan's last month (``YYYY-MM``).
    billed_to
        When the partial month's rows end before it does, their latest
        ``ChargePeriodEnd`` (ISO 8601 UTC), else ''.
    """

    lines: pd.DataFrame
    planned: pd.DataFrame
    billed: pd.DataFrame
    first_month: str
    last_month: str
    not_billed_by_cloud: list[int] = field(default_factory=list)
    files: dict[str, int] = field(default_factory=dict)
    first_billed_month: str = ""
    duplicates: list[dict] = field(default_factory=list)
    outside: list[dict] = field(default_factory=list)
    partial_months: list[str] = field(default_factory=list)
    billed_through: str = ""
    read: dict[str, int] = field(default_factory=dict)
    plan_last_month: str = ""
    billed_to: str = ""

    def totals(self) -> dict[str, float]:
        """Planned, actual, each category and the variance, summed over every row."""
        cols = ["planned_usd", "actual_usd", *CATEGORIES, "variance_usd"]
        return {c: float(self.lines[c].sum()) for c in cols}

    def flagged(self, status: str) -> pd.DataFrame:
        """Rows of one ``status``: ``unplanned`` (billed, not planned) or ``unbilled``."""
        return self.lines[self.lines["status"] == status]

    @property
    def duplicate_rows(self) -> int:
        """How many billed rows were dropped as passed twice."""
        return sum(int(d["rows"]) for d in self.duplicates)


def _month_of(moment: pd.Timestamp) -> str:
    return f"{moment.year:04d}-{moment.month:02d}"


def planned_charges(plan: Plan, problem: Problem, catalog: Catalog, start: date) -> pd.DataFrame:
    """The plan's cloud charges by key, month and line: ``provider, region, instance_type,
    pricing, accelerator, offering, month, line, planned_usd, planned_hours``."""
    return _cloud_charges(plan, charges(plan, problem, catalog, start))


def _cloud_charges(plan: Plan, table: pd.DataFrame) -> pd.DataFrame:
    """:func:`planned_charges` of the plan's charges ``table``."""
    rows = []
    for charge in table.itertuples(index=False):
        item = plan.line_items[charge.line]
        if item.mode not in _PRICING_OF_MODE:
            continue
        rows.append(
            {
                "provider": item.provider,
                "region": item.region,
                "instance_type": item.instance_type,
                "pricing": _PRICING_OF_MODE[item.mode],
                "accelerator": item.accelerator,
                "offering": item.offering,
                "month": _month_of(charge.month_start),
                "line": int(charge.line),
                "planned_usd": float(charge.usd),
                "planned_hours": float(charge.hours),
            }
        )
    columns = [*KEY, "accelerator", "offering", "month", "line", "planned_usd", "planned_hours"]
    return pd.DataFrame(rows, columns=columns)


def billed_in_usd(billed: pd.DataFrame, catalog: Catalog) -> pd.DataFrame:
    """Billed rows with ``cost_usd``: each row's cost at the catalog's rate of its
    currency (USD is 1).

    Raises
    ------
    ProcureError
        A currency the catalog has no rate for (naming the file and row).
    """
    out = billed.copy()
    rates: dict[str, float] = {}
    for currency, group in out.groupby("currency", sort=True):
        first = group.iloc[0]
        rates[str(currency)] = catalog.rate(
            str(currency),
            file=str(first["file"]),
            field=f"row {int(first['row'])}, BillingCurrency",
            instead="export the bill in USD, or add the rate to the catalog",
        ).usd_per_unit
    out["cost_usd"] = out["cost"] * out["currency"].map(rates).astype(float)
    return out


def key_billed(billed: pd.DataFrame, planned: pd.DataFrame) -> pd.DataFrame:
    """Billed rows keyed as plan lines are: the instance type their own, else that of the
    plan offering whose id is their ``SkuId`` (``planned``: :func:`planned_charges`
    rows); hours only on usage rows (a purchase row's quantity is the term it buys)."""
    by_offering = planned.drop_duplicates("offering").set_index("offering")["instance_type"]
    out = billed.copy()
    named = out["instance_type"] != ""
    from_sku = out["sku_id"].map(by_offering)
    out.loc[~named, "instance_type"] = from_sku[~named].fillna("")
    out.loc[out["charge_category"] != "Usage", "hours"] = 0.0
    return out


def _month_arg(month: str | None, first: str, last: str) -> str:
    """``--billed-through`` checked: a ``YYYY-MM`` within the plan's months, or ''."""
    if month is None or month == "":
        return ""
    text = str(month).strip()
    ok = len(text) == 7 and text[4] == "-" and text[:4].isdigit() and text[5:].isdigit()
    if not ok or not 1 <= int(text[5:]) <= 12:
        raise ProcureError(
            f"{month!r} is not a month",
            field="--billed-through",
            fix="give the last month the bills cover in full as YYYY-MM, e.g. 2027-03",
        )
    if not first <= text <= last:
        raise ProcureError(
            f"{text} is outside the plan's months {first} to {last}",
            field="--billed-through",
            fix=f"give a month from {first} to {last}",
        )
    return text


def _outside(billed: pd.DataFrame, first: str, last: str) -> list[dict]:
    """Per file, the rows billed outside the plan's months ``first`` to ``last``.

    Raises
    ------
    ProcureError
        A file all of whose rows are outside (naming its months and the plan's).
    """
    out = []
    inside = (billed["month"] >= first) & (billed["month"] <= last)
    for file, rows in billed.groupby("file", sort=False):
        within = inside[rows.index]
        months = f"{rows['month'].min()} to {rows['month'].max()}"
        if not within.any():
            raise ProcureError(
                f"the bill is of {months}, wholly outside the plan's months {first} to {last}",
                file=str(file),
                field="ChargePeriodStart",
                fix=f"pass the bills of the months the plan has run (from {first}), or the "
                "plan these bills belong to",
            )
        away = rows[~within]
        if len(away):
            out.append(
                {
                    "file": str(file),
                    "rows": int(len(away)),
                    "months": sorted(set(away["month"])),
                    "cost_usd": float(away["cost_usd"].sum()),
                }
            )
    return out


def _months(first: str, last: str) -> list[str]:
    """The months from ``first`` to ``last`` (``YYYY-MM``), both included."""
    out = []
    month = first
    while month <= last:
        out.append(month)
        month = next_month(month)
    return out


def _invoiced(billed: pd.DataFrame, first: str, last: str) -> dict[str, set[str]]:
    """Provider -> the months in ``first`` to ``last`` its bills cover: a month with a row,
    or within a row's billing period (an invoice for a month may have no row of it)."""
    out: dict[str, set[str]] = {}
    for provider, rows in billed.groupby("provider", sort=True):
        months = set(rows["month"])
        periods = rows[rows["period_first_month"] != ""]
        spans = periods[["period_first_month", "period_last_month"]].drop_duplicates()
        for lo, hi in spans.itertuples(index=False):
            months |= set(_months(max(lo, first), min(hi, last)))
        out[str(provider)] = {m for m in months if first <= m <= last}
    return out


def billed_to(billed: pd.DataFrame, month: str) -> str:
    """The latest ``ChargePeriodEnd`` of ``month``'s rows when it falls before the month's
    end (a month's export taken before it closed, e.g. ``2027-03-16T00:00:00``), else ''
    (the rows run to the month's end, or carry no ``ChargePeriodEnd``)."""
    ends = billed.loc[billed["month"] == month, "charge_end"]
    ends = ends[ends != ""]
    if ends.empty:
        return ""
    latest = str(ends.max())
    return latest if latest < f"{next_month(month)}-01T00:00:00" else ""


def _not_billed_yet(
    lines: pd.DataFrame, invoiced: dict[str, set[str]], through: str, cut_short: bool = False
) -> tuple[pd.DataFrame, list[str]]:
    """``lines`` with ``not_billed_yet`` set, and the partial months (see the module
    docstring, "Not billed yet"): after ``through`` (the last month stated complete, or
    ''), an unbilled key is not billed yet when its provider has no invoice for the month,
    or when the month is the last compared and is partial: fewer keys billed than planned,
    or its rows end before the month does (``cut_short``)."""
    lines = lines.copy()
    unbilled = lines["status"] == "unbilled"
    last = lines["month"].max() if len(lines) else ""
    short = cut_short or unbilled[lines["month"] == last].any()
    partial = [last] if last and last > through and short else []
    no_invoice = [
        month not in invoiced.get(provider, set())
        for provider, month in zip(lines["provider"], lines["month"], strict=True)
    ]
    open_month = lines["month"] > through
    pending = unbilled & open_month & (lines["month"].isin(partial) | np.array(no_invoice, bool))
    lines["not_billed_yet"] = pending.to_numpy()
    return lines, partial


def actuals(
    plan: Plan,
    problem: Problem,
    catalog: Catalog,
    billed: pd.DataFrame | Bills,
    start: date,
    billed_through: str | None = None,
) -> Actuals:
    """Compare ``billed`` (rows of one or more FOCUS exports) with ``plan``.

    Parameters
    ----------
    plan, problem, catalog
        The signed plan, re-verified, with the problem and catalog it was solved for.
    billed
        :func:`~solver.inputs.importers.focus_bills.read_focus_bills` (duplicates
        dropped), or :func:`~solver.inputs.importers.focus_billing.read_focus_billing`
        rows, one or more files concatenated (their duplicates are dropped here).
    start
        The plan's first day (its ``start_date``).
    billed_through
        ``YYYY-MM``: the bills are complete to the end of this month (every planned key
        missing in a month up to it is used less, not billed yet); None: not stated.

    Raises
    ------
    ProcureError
        Nothing billed, a bill wholly outside the plan's months, a currency without a
        rate, or ``billed_through`` not a month of the plan.
    """
    bills = billed if isinstance(billed, Bills) else _as_bills(billed)
    if bills.rows.empty:
        raise ProcureError(
            "the billing exports hold no rows",
            field="BILLING",
            fix="pass the FOCUS cost and usage exports of the months the plan has run",
        )
    table = charges(plan, problem, catalog, start)
    planned = _cloud_charges(plan, table)
    first = _month_of(pd.Timestamp(start))
    plan_last = max([first, *map(_month_of, table["month_start"])])
    through = _month_arg(billed_through, first, plan_last)
    every = key_billed(billed_in_usd(bills.rows, catalog), planned)
    outside = _outside(every, first, plan_last)
    billed = every[(every["month"] >= first) & (every["month"] <= plan_last)]
    invoiced = _invoiced(billed, first, plan_last)
    last = max([max(billed["month"]), through, *(max(m) for m in invoiced.values() if m)])
    in_range = planned[(planned["month"] >= first) & (planned["month"] <= last)]
    lines = compare(in_range, billed[(billed["cost_usd"] != 0) | (billed["hours"] != 0)])
    cut_short = billed_to(billed, last)
    lines, partial = _not_billed_yet(lines, invoiced, through, bool(cut_short))
    owned = [i for i, item in enumerate(plan.line_items) if item.mode not in _PRICING_OF_MODE]
    files = {str(f): int(n) for f, n in billed.groupby("file", sort=True).size().items()}
    return Actuals(
        lines,
        planned,
        billed,
        first,
        last,
        owned,
        files,
        min(billed["month"]),
        duplicates=bills.duplicates,
        outside=outside,
        partial_months=partial,
        billed_through=through,
        read=dict(bills.read),
        plan_last_month=plan_last,
        billed_to=cut_short if partial else "",
    )


def _as_bills(billed: pd.DataFrame) -> Bills:
    """Rows of one or more files as :class:`Bills`, duplicates dropped when the rows
    carry their digests."""
    if "digest" not in billed.columns:
        read = {str(f): int(n) for f, n in billed.groupby("file", sort=False).size().items()}
        return Bills(billed, read)
    return dedupe([rows for _, rows in billed.groupby("file", sort=False)])


def compare(planned: pd.DataFrame, billed: pd.DataFrame) -> pd.DataFrame:
    """Planned and billed by key and month, with the variance split (:data:`LINE_COLUMNS`).

    Parameters
    ----------
    planned
        Rows with the key columns, ``month``, ``accelerator``, ``line``, ``planned_usd``
        and ``planned_hours`` (:func:`planned_charges`).
    billed
        Rows with the key columns, ``month``, ``cost_usd`` and ``hours``.
    """
    by = [*KEY, "month"]
    plan_sum = planned.groupby(by, sort=True).agg(
        planned_usd=("planned_usd", "sum"),
        planned_hours=("planned_hours", "sum"),
        accelerator=("accelerator", "first"),
        lines=("line", lambda s: ",".join(str(i) for i in sorted(set(s)))),
    )
    bill_sum = billed.groupby(by, sort=True).agg(
        actual_usd=("cost_usd", "sum"), actual_hours=("hours", "sum")
    )
    both = plan_sum.join(bill_sum, how="outer").reset_index()
    has_plan = both["planned_usd"].notna()
    has_bill = both["actual_usd"].notna()
    both["status"] = np.where(
        has_plan & has_bill, "matched", np.where(has_plan, "unbilled", "unplanned")
    )
    for column in ("planned_usd", "planned_hours", "actual_usd", "actual_hours"):
        both[column] = both[column].fillna(0.0).astype(float)
    both["lines"] = both["lines"].fillna("")
    both["accelerator"] = both["accelerator"].fillna("")
    return _split(both)


def _split(both: pd.DataFrame) -> pd.DataFrame:
    """The variance categories of each row (the module docstring's formulas)."""
    matched = both["status"] == "matched"
    hp, ha = both["planned_hours"], both["actual_hours"]
    price_p = np.where(hp > 0, both["planned_usd"] / hp.where(hp > 0, 1.0), 0.0)
    both["planned_usd_per_hour"] = np.where(hp > 0, price_p, np.nan)
    price_a = both["actual_usd"] / ha.where(ha > 0, 1.0)
    both["actual_usd_per_hour"] = np.where(ha > 0, price_a, np.nan)
    hours_effect = (ha - hp) * price_p
    # the mix group: matched keys of the same accelerator in the same month
    group = both["accelerator"].where(both["accelerator"] != "", both["instance_type"])
    group_of = [group, both["month"]]
    group_hp = hp.where(matched, 0.0).groupby(group_of).transform("sum")
    group_ha = ha.where(matched, 0.0).groupby(group_of).transform("sum")
    share = np.where(group_hp > 0, hp / group_hp.where(group_hp > 0, 1.0), 1.0)
    volume = np.where(group_hp > 0, share * (group_ha - group_hp) * price_p, hours_effect)
    both["volume_usd"] = np.where(matched, volume, 0.0)
    both["mix_usd"] = np.where(matched, hours_effect - both["volume_usd"], 0.0)
    difference = both["actual_usd"] - both["planned_usd"]
    both["price_usd"] = np.where(matched, difference - both["volume_usd"] - both["mix_usd"], 0.0)
    both["unplanned_usd"] = np.where(both["status"] == "unplanned", both["actual_usd"], 0.0)
    both["unbilled_usd"] = np.where(both["status"] == "unbilled", -both["planned_usd"], 0.0)
    both["variance_usd"] = difference
    both["not_billed_yet"] = False
    order = {"matched": 0, "unplanned": 1, "unbilled": 2}
    both = both.sort_values(
        ["month", "status", *KEY], key=lambda s: s.map(order) if s.name == "status" else s
    )
    return both[list(LINE_COLUMNS)].reset_index(drop=True)


# --------------------------------------------------------------------------- re-forecast

CASH_FLOW_COLUMNS = (
    "month",
    "kind",
    "plan_usd",
    "actual_usd",
    "at_plan_usd",
    "at_run_rate_usd",
    "at_resolve_usd",
    "pending_usd",
)


@dataclass(frozen=True)
class Reforecast:
    """The cash flow with actual months and forecast months apart.

    Attributes
    ----------
    cash_flow
        One row per month of the plan's cloud charges (and any month billed):
        :data:`CASH_FLOW_COLUMNS`; ``kind`` is ``actual`` up to ``last_actual_month``,
        ``forecast`` after. ``actual_usd`` is empty (NaN) in forecast months;
        ``at_plan_usd``, ``at_run_rate_usd`` and ``at_resolve_usd`` are the actuals in
        actual months plus ``pending_usd``, the lines not billed yet (at the plan; at
        the run-rate, each times its key's factor); ``at_resolve_usd`` is the re-solved
        plan's cloud charges in forecast months (NaN until :func:`with_resolve` adds
        them).
    run_rates
        Each key's run-rate factor (A / P over the months billed) and how it was found.
    resolve_owned_usd
        What the re-solved plan spends on owned servers in the forecast months (no cloud
        bills it, so ``at_resolve_usd`` leaves it out, as every column does).
    last_actual_month, as_of_month
        The last month billed and the first month forecast (``YYYY-MM``).
    """

    cash_flow: pd.DataFrame
    run_rates: pd.DataFrame
    last_actual_month: str
    as_of_month: str
    resolve_owned_usd: float = 0.0

    def totals(self) -> dict[str, float]:
        """Horizon totals: the plan, the actuals so far, at the plan and at the run-rate."""
        flow = self.cash_flow
        columns = ("plan_usd", "actual_usd", "at_plan_usd", "at_run_rate_usd")
        out = {c: float(flow[c].sum()) for c in columns}
        resolved = flow["at_resolve_usd"]
        out["at_resolve_usd"] = float(resolved.sum()) if resolved.notna().all() else None
        out["pending_usd"] = float(flow["pending_usd"].sum())
        return out


_NOTHING_PLANNED = "nothing planned in the months billed: the plan"
_NOT_BILLED_YET = "planned only in months not billed in full yet: the plan"


def next_month(month: str) -> str:
    """The month after ``YYYY-MM``."""
    year, mon = (int(x) for x in month.split("-"))
    return f"{year + mon // 12:04d}-{mon % 12 + 1:02d}"


def run_rates(result: Actuals) -> pd.DataFrame:
    """Each planned key's run-rate factor, A / P over its *settled* months billed (the
    module docstring, "Re-forecast"): rows of the partial month and lines not billed yet
    are left out of both sums; 1 for a key with nothing planned in its settled months."""
    lines = result.lines
    settled = lines[~lines["month"].isin(result.partial_months) & ~lines["not_billed_yet"]]
    key_plan = settled.groupby(KEY, sort=True)["planned_usd"].sum()
    key_actual = settled.groupby(KEY, sort=True)["actual_usd"].sum()
    all_plan = lines.groupby(KEY, sort=True)["planned_usd"].sum()
    rates = []
    for key in sorted(set(map(tuple, result.planned[KEY].itertuples(index=False)))):
        p = float(key_plan.get(key, 0.0))
        a = float(key_actual.get(key, 0.0))
        waiting = p <= 0 and float(all_plan.get(key, 0.0)) > 0
        basis = _NOT_BILLED_YET if waiting else _NOTHING_PLANNED
        factor, basis = (a / p, "billed / planned") if p > 0 else (1.0, basis)
        rates.append(dict(zip(KEY, key, strict=True)) | {"factor": factor, "basis": basis})
    return pd.DataFrame(rates, columns=[*KEY, "factor", "basis"])


def reforecast(result: Actuals) -> Reforecast:
    """The rest of the horizon at the plan and at the observed run-rate (module docstring,
    "Re-forecast"): a line not billed yet is a late invoice, not a drop in use."""
    last = result.last_month
    planned = result.planned
    lines = result.lines
    rates = run_rates(result)
    factor_of = {tuple(r[k] for k in KEY): r["factor"] for r in rates.to_dict("records")}

    def factors(frame: pd.DataFrame) -> list[float]:
        return [factor_of.get(k, 1.0) for k in map(tuple, frame[KEY].itertuples(index=False))]

    months_billed = sorted(set(lines["month"]))
    unplanned = lines[lines["status"] == "unplanned"]
    extra_per_month = float(unplanned["actual_usd"].sum()) / max(len(months_billed), 1)
    plan_by_month = planned.groupby("month", sort=True)["planned_usd"].sum()
    scaled = planned.assign(usd=planned["planned_usd"] * factors(planned))
    rate_by_month = scaled.groupby("month", sort=True)["usd"].sum()
    actual_by_month = result.billed.groupby("month", sort=True)["cost_usd"].sum()
    late = lines[lines["not_billed_yet"]]
    late = late.assign(usd=late["planned_usd"] * factors(late))
    late_plan = late.groupby("month", sort=True)["planned_usd"].sum()
    late_rate = late.groupby("month", sort=True)["usd"].sum()
    months = sorted(set(plan_by_month.index) | set(actual_by_month.index))
    horizon_end = max(plan_by_month.index) if len(plan_by_month) else last
    rows = []
    for month in months:
        plan_usd = float(plan_by_month.get(month, 0.0))
        if month <= last:
            actual = float(actual_by_month.get(month, 0.0))
            pending = float(late_plan.get(month, 0.0))
            at_rate = actual + float(late_rate.get(month, 0.0))
            at_plan = actual + pending
            rows.append([month, "actual", plan_usd, actual, at_plan, at_rate, at_plan, pending])
        else:
            extra = extra_per_month if month <= horizon_end else 0.0
            run = float(rate_by_month.get(month, 0.0)) + extra
            rows.append([month, "forecast", plan_usd, np.nan, plan_usd, run, np.nan, 0.0])
    flow = pd.DataFrame(rows, columns=list(CASH_FLOW_COLUMNS))
    return Reforecast(flow, rates, last, next_month(last))


def with_resolve(
    forecast: Reforecast, plan: Plan, problem: Problem, catalog: Catalog, start: date
) -> Reforecast:
    """``forecast`` with ``at_resolve_usd`` in its forecast months: the cloud charges of a
    re-solved ``plan`` (of the re-based ``problem``, from its own ``start``) by month.

    The re-solve re-decides from the start of the period holding ``as_of_month``; its
    charges in months before ``as_of_month`` (billed already) are not used."""
    table = charges(plan, problem, catalog, start)
    month = table["month_start"].map(_month_of)
    cloud = table["line"].map(lambda n: plan.line_items[n].mode in _PRICING_OF_MODE)
    later = month >= forecast.as_of_month
    by_month = table[cloud & later].groupby(month[cloud & later])["usd"].sum()
    owned = float(table.loc[~cloud & later, "usd"].sum())
    flow = forecast.cash_flow.copy()
    is_forecast = flow["kind"] == "forecast"
    flow.loc[is_forecast, "at_resolve_usd"] = (
        flow.loc[is_forecast, "month"].map(by_month).fillna(0.0).astype(float)
    )
    return Reforecast(
        flow, forecast.run_rates, forecast.last_actual_month, forecast.as_of_month, owned
    )


__all__ = [
    "CASH_FLOW_COLUMNS",
    "CATEGORIES",
    "KEY",
    "LINE_COLUMNS",
    "Actuals",
    "Reforecast",
    "actuals",
    "billed_in_usd",
    "compare",
    "key_billed",
    "next_month",
    "planned_charges",
    "reforecast",
    "run_rates",
    "with_resolve",
]
