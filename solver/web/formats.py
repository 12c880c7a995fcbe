"""How the workspace's pages write numbers, money, durations and column names: one place,
registered on the templates' environment (:func:`register`) and used by the tables the
views build (:func:`frame_table`), so no page shows ``-$0``, ``None``, a raw float or a
snake_case column name (issue 51, Build 5).

- money: :func:`money` (``$1,235``; ``$2.49`` with cents; a missing amount as an en dash,
  never ``None``; an amount that rounds to zero never negative: :func:`solver.money.usd`);
- a plain number: :func:`number` (thousands separated, at most ``digits`` decimals, no
  float noise such as ``0.30000000000000004``);
- a column name in words with its unit: :func:`header` (``old_cost_usd`` → ``old cost
  (USD)``, ``usd_per_hour`` → ``price (USD per hour)``);
- a job's duration: :func:`duration` (``2.4 s``, ``3 min 05 s``; running: so far).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime

import pandas as pd

from solver.money import usd

#: shown for a value that is not there (None, NaN)
MISSING = "–"
#: the words of a job's kind on the jobs pages
JOB_KINDS: dict[str, str] = {
    "solve": "solve",
    "sensitivity": "what moves it (sensitivity)",
    "frontier": "carbon frontier",
    "two_stage": "two-stage plan",
    "alternatives": "near-optimal alternatives",
    "preferences": "price of each preference",
    "watch": "price watch",
    "prices_pull": "price snapshot upload",
}
#: column names whose words are not their parts' words
HEADERS: dict[str, str] = {
    "delta_usd": "change (USD)",
    "usd_per_hour": "price (USD per hour)",
    "usd_per_unit_hour": "price (USD per unit-hour)",
    "co2e_t": "CO2e (t)",
    "total_co2e_t": "CO2e (t)",
    "tco2e": "CO2e (t)",
    "opex_usd": "operating cost (USD)",
    "owned_opex_usd": "owned, operating (USD)",
    "capex_usd": "purchases (USD)",
    "cost_usd": "cost (USD)",
    "sla": "SLA",
    "mfu": "MFU",
    "mfu_low": "MFU, low end",
    "mfu_high": "MFU, high end",
    "slack_fraction": "schedule slack",
    "price_date": "price dated",
    "instance_type": "instance type",
    "id": "id",
}
#: a name's last parts and the unit they stand for, longest first
UNITS: tuple[tuple[str, str], ...] = (
    ("usd_per_tco2e", "USD per t CO2e"),
    ("usd_per_1m", "USD per 1M tokens"),
    ("usd_per_gpu_hour", "USD per GPU-hour"),
    ("usd_per_hour", "USD per hour"),
    ("usd_per_gb", "USD per GB"),
    ("usd_per_kwh", "USD per kWh"),
    ("per_hour", "per hour"),
    ("tco2e", "t CO2e"),
    ("co2e_t", "t CO2e"),
    ("usd", "USD"),
    ("eur", "EUR"),
    ("gb", "GB"),
    ("gib", "GiB"),
    ("kw", "kW"),
    ("kwh", "kWh"),
    ("mw", "MW"),
    ("hours", "hours"),
    ("h", "hours"),
    ("s", "s"),
    ("pct", "%"),
    ("tflops", "TFLOPS"),
)


def money(amount_usd: float | None, cents: bool = False) -> str:
    """An amount in USD as the pages show it: whole dollars (``cents``: to the cent);
    :data:`MISSING` when there is none; never ``-$0``.

    Parameters
    ----------
    amount_usd
        The amount, USD (None or NaN: missing).
    cents
        Two decimals instead of whole dollars (prices per hour).
    """
    return usd(amount_usd, cents=cents, missing=MISSING)


def price(value_usd: float | None) -> str:
    """A price per unit (per hour, per GPU-hour) as its source gives it: at least the
    cents, up to 4 decimals where the source has them (``$2.49``, ``$0.347``, ``$68.80``),
    never float noise; :data:`MISSING` when there is none."""
    if value_usd is None or value_usd != value_usd:
        return MISSING
    text = f"{abs(value_usd):,.4f}".rstrip("0")
    whole, _, decimals = text.partition(".")
    text = f"{whole}.{decimals.ljust(2, '0')}"
    return ("-$" if value_usd < 0 and float(text.replace(",", "")) > 0 else "$") + text


def number(value: float | int | None, digits: int = 2) -> str:
    """A number with thousands separated and at most ``digits`` decimals, trailing zeros
    dropped (``1,464``, ``0.3``, ``2.47``); :data:`MISSING` when there is none."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    rounded = round(float(value), digits)
    if rounded == 0:
        rounded = 0.0  # no "-0"
    text = f"{rounded:,.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def header(name: str) -> str:
    """A column name in words with its unit in brackets: ``rented_usd`` → ``rented
    (USD)``, ``base_units`` → ``base units``, ``usd_per_hour`` → ``price (USD per
    hour)``."""
    if name in HEADERS:
        return HEADERS[name]
    for suffix, unit in UNITS:
        if name == suffix:
            return unit
        if name.endswith("_" + suffix):
            words = name[: -len(suffix) - 1].replace("_", " ")
            return f"{words} ({unit})"
    return name.replace("_", " ")


def duration(job) -> str:
    """How long a job ran (started to finished), or has run so far; :data:`MISSING`
    before it starts. Seconds to one decimal under a minute, else minutes and seconds."""
    start: datetime | None = getattr(job, "started_at", None)
    if start is None:
        return MISSING
    end = getattr(job, "finished_at", None) or datetime.now(tz=start.tzinfo)
    seconds = max((end - start).total_seconds(), 0.0)
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def frame_table(
    frame: pd.DataFrame,
    money_columns: Sequence[str] = (),
    percent: Sequence[str] = (),
    cents: Sequence[str] = (),
    total: str | None = None,
    words: Mapping[str, str] | None = None,
    prices: Sequence[str] = (),
) -> str:
    """A frame as the pages' HTML table: headers in words with units (:func:`header`, or
    ``words``), money in whole dollars (``cents``: to the cent), percents, other numbers
    by :func:`number`, missing cells empty; ``total``: a last row with that label summing
    the money columns.

    Parameters
    ----------
    frame
        The rows, columns named in snake_case with units (``cost_usd``).
    money_columns, cents
        Columns of USD amounts: whole dollars, or to the cent.
    percent
        Columns of fractions shown in percent.
    prices
        Columns of prices per unit (USD per hour): :func:`price`.
    total
        The label of a totals row (in the first column), or None for none.
    words
        Headers to use instead of :func:`header`'s, by column name.
    """
    if frame.empty:
        return "<p><em>none</em></p>"
    shown = frame.copy()
    sums = {c: float(shown[c].sum()) for c in [*money_columns, *cents] if c in shown}
    for col in shown.columns:
        if col in money_columns:
            shown[col] = shown[col].map(lambda v: "" if pd.isna(v) else money(v))
        elif col in cents:
            shown[col] = shown[col].map(lambda v: "" if pd.isna(v) else money(v, cents=True))
        elif col in prices:
            shown[col] = shown[col].map(lambda v: "" if pd.isna(v) else price(v))
        elif col in percent:
            shown[col] = shown[col].map(lambda v: "" if pd.isna(v) else f"{v:.1%}")
        elif pd.api.types.is_bool_dtype(shown[col]):
            shown[col] = shown[col].map(lambda v: "yes" if v else "no")
        elif pd.api.types.is_numeric_dtype(shown[col]):
            shown[col] = shown[col].map(lambda v: "" if pd.isna(v) else number(v))
        else:
            shown[col] = shown[col].map(lambda v: "" if v is None or v is pd.NA else v)
    if total is not None and sums:
        row = {c: "" for c in shown.columns}
        row[shown.columns[0]] = total
        for col, value in sums.items():
            row[col] = money(value, cents=col in cents)
        shown = pd.concat([shown, pd.DataFrame([row])], ignore_index=True)
    shown.columns = [(words or {}).get(c, header(c)) for c in frame.columns]
    html = shown.to_html(index=False, escape=True, border=0, classes="t", na_rep="")
    if total is not None and sums:
        # the totals row in bold: the last <tr> of the body
        head, _, tail = html.rpartition("<tr>")
        html = head + '<tr class="total">' + tail
    return html


def register(env) -> None:
    """Add the filters (``money``, ``number``, ``header``) and globals (``usd``,
    ``duration``, ``job_kinds``) to a Jinja2 environment."""
    env.filters["money"] = money
    env.filters["number"] = number
    env.filters["header"] = header
    env.globals["usd"] = money
    env.globals["duration"] = duration
    env.globals["job_kinds"] = JOB_KINDS
