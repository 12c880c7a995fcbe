"""Vendor quotes: negotiated prices that enter the catalog as prices of confidence
``quote``.

A quotes file is a CSV, one quote per line (a header line first; ``#`` lines are
comments). Columns (``*``: required):

``provider`` *
    the provider quoting, as the catalog names it (``offerings.csv``/``regions.csv``).
``region`` *
    the region the capacity is in; the catalog must know it (``regions.csv``: its grid
    intensity and PUE give the plan's energy and carbon).
``offering``
    an instance type of that provider and region (``gpu-h100-sxm-8x``) or a whole
    offering id (``seeweb/it-fr-2/...``). Or, instead of it:
``accelerator`` and ``accelerators_per_instance``
    any name the catalog knows for an accelerator (``H100``) and the count per instance:
    the provider's offering of that accelerator and count in the region, or, when it has
    none, a new offering whose specs (memory, network, NVLink, vCPUs) are copied from the
    catalog's offering of that accelerator and count, that provider's first (by id), else
    any provider's first. The new offering's ``price_note`` names the one copied.
``term`` *
    ``monthly`` (pay per use at the quoted rate: the offering's on-demand price),
    ``1y`` or ``3y`` (a reservation for the term: the offering's 1-year or 3-year
    reserved price, every hour of the term owed, used or not). Capacity blocks
    (``block:14d``) are refused: not modelled yet.
``price_per_instance_hour`` *
    the quoted price per instance-hour, in ``currency``.
``currency``
    ISO 4217 code of the price (default ``USD``), converted to USD at the catalog's
    latest rate (``catalogs/exchange_rates.csv``), as the catalog's own prices are.
``upfront_share``
    the part (0 to 1) of a reservation's whole-term cost paid at its start (default 0:
    monthly fees). The total is unchanged; the cash flow's ``billed_usd`` shows the
    upfront payment in the reservation's first month and the rest spread over its months.
``min_units``
    the least instances a reservation from the quote must hold (default 1). Above 1 is
    refused: not modelled yet.
``valid_until`` *
    the quote's last day (``YYYY-MM-DD``). A quote that expires before the plan's start
    (before today when the problem states no start) is refused.
``quoted_on``
    the day the vendor quoted (``YYYY-MM-DD``): the price's date (default ``unknown``).
``reference`` *
    the quote's reference (``ACME-2026-114``): the price's source, cited by the plan's
    lines (``price_source``) and the orders.
``requested_units``, ``requested_instance_hours``, ``requested_from``, ``requested_until``
    what a quote request (``procure prices check --out``) asked for: the most instances at
    once, their instance-hours, and the first and last day. Read for their form only (a
    number, a day); they do not change the quote's price.

A quote request leaves the cells the provider fills in as :data:`UNFILLED`
(``FILL-IN``); a quote with such a cell is refused, naming it, never read as a number. A
line repeating the header line is skipped, so that filled requests can be joined into one
file (``cat quote-request-*.csv > quotes.csv``); a byte-order mark starting a line (a
spreadsheet's "CSV UTF-8") is ignored.

:func:`parse_quotes` reads the text (pure; the CLI reads the file) and
:func:`apply_quotes` returns a new :class:`~solver.inputs.catalog.Catalog` with the
quotes in it. A quote whose term's price shares its provenance columns with another
price of the offering (on-demand with spot, 1-year with 3-year) that is not the same
quote goes to a copy of the offering, ``<offering_id>~<reference>``, holding only the
quoted prices, so that no price shows another's source. Every error names the file, the
line and the field, and the fix.
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass, replace
from datetime import date

import numpy as np
import pandas as pd

from solver.errors import ProcureError, suggestion
from solver.inputs.catalog import Catalog
from solver.inputs.provenance import (
    BASE_CURRENCY,
    UNKNOWN_DATE,
    is_currency_code,
    parse_price_date,
)
from solver.units import PRICE_COLUMN, RESERVED_TERM_MONTHS

#: A quote's term -> the catalog mode its price is.
TERM_MODES: dict[str, str] = {"monthly": "on_demand", "1y": "reserved_1y", "3y": "reserved_3y"}

#: The columns of a quotes file (README, "Vendor quotes").
COLUMNS: tuple[str, ...] = (
    "provider",
    "region",
    "offering",
    "accelerator",
    "accelerators_per_instance",
    "term",
    "price_per_instance_hour",
    "currency",
    "upfront_share",
    "min_units",
    "valid_until",
    "quoted_on",
    "reference",
    "requested_units",
    "requested_instance_hours",
    "requested_from",
    "requested_until",
)
#: The columns a quote request asks about and the provider need not fill in (their form is
#: checked, their values do not price anything).
REQUESTED: tuple[str, ...] = (
    "requested_units",
    "requested_instance_hours",
    "requested_from",
    "requested_until",
)
#: The cell a quote request leaves for the provider to fill in.
UNFILLED = "FILL-IN"
REQUIRED: tuple[str, ...] = (
    "provider",
    "region",
    "term",
    "price_per_instance_hour",
    "valid_until",
    "reference",
)

#: Offering columns a quote adds: the upfront share of each reserved term's cost, and the
#: modes whose price is a quote (``;``-joined; sensitivity analyses their pools).
UPFRONT_COLUMN: dict[str, str] = {m: f"{m}_upfront_share" for m in RESERVED_TERM_MONTHS}
QUOTED_MODES_COLUMN = "quoted_modes"

# Prices that share their provenance columns (price_date/price_confidence/source, or the
# reserved_* ones): a quote for one of a group must not relabel the other.
_GROUPS: dict[str, tuple[str, ...]] = {
    "on_demand": ("on_demand", "spot"),
    "spot": ("on_demand", "spot"),
    "reserved_1y": ("reserved_1y", "reserved_3y"),
    "reserved_3y": ("reserved_1y", "reserved_3y"),
}
_BLOCK = re.compile(r"^(block|capacity[_ ]?block)", re.IGNORECASE)
# No quote comes near this per instance-hour; a larger one is a typo (a monthly or yearly
# price in the hourly column).
MAX_USD_PER_INSTANCE_HOUR = 10_000.0


@dataclass(frozen=True)
class Quote:
    """One vendor quote as read (see the module docstring for each field)."""

    file: str
    line: int
    provider: str
    region: str
    offering: str
    accelerator: str
    accelerators_per_instance: int | None
    term: str
    price_per_instance_hour: float
    currency: str
    upfront_share: float
    min_units: int
    valid_until: date
    quoted_on: str
    reference: str

    @property
    def mode(self) -> str:
        """The catalog mode whose price the quote is."""
        return TERM_MODES[self.term]

    def error(self, message: str, column: str, fix: str) -> ProcureError:
        """A :class:`ProcureError` naming this quote's file, line and ``column``."""
        return ProcureError(message, file=self.file, field=f"line {self.line}, {column}", fix=fix)


def _fail(file: str, line: int, column: str, message: str, fix: str) -> ProcureError:
    return ProcureError(message, file=file, field=f"line {line}, {column}", fix=fix)


def _number(file: str, line: int, column: str, text: str, fix: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise _fail(file, line, column, f"{column} is not a number: {text!r}", fix) from None
    if not math.isfinite(value):
        raise _fail(file, line, column, f"{column} is {text}, not a finite number", fix)
    return value


def _day(file: str, line: int, column: str, text: str) -> date:
    day = parse_price_date(text)
    if day is None:
        raise _fail(file, line, column, f"{column} {text!r} is not a day", "write it as YYYY-MM-DD")
    return day


def parse_quotes(text: str, file: str) -> list[Quote]:
    """The quotes of a quotes file's text, each checked on its own.

    Parameters
    ----------
    text
        The CSV text (header line first; lines starting with ``#`` are comments).
    file
        The file's name, for messages.

    Raises
    ------
    ProcureError
        The first bad value, naming the file, its line and column, and the fix.
    """
    # a byte-order mark (a spreadsheet's "CSV UTF-8") at the start of the file, or of each
    # file joined with cat, is not part of the first column's name
    lines = [line.removeprefix("\ufeff") for line in text.splitlines()]
    kept = [(n, line) for n, line in enumerate(lines, start=1) if not line.lstrip().startswith("#")]
    kept = [(n, line) for n, line in kept if line.strip()]
    if not kept:
        raise ProcureError(
            "the quotes file is empty",
            file=file,
            fix="write a header line (" + ",".join(COLUMNS) + ") and one line per quote",
        )
    header_line, header = kept[0]
    names = [c.strip() for c in next(csv.reader([header]))]
    unknown = [c for c in names if c not in COLUMNS]
    if unknown:
        raise _fail(
            file, header_line, unknown[0], f"unknown column {unknown[0]!r}",
            f"{suggestion(unknown[0], COLUMNS)} The columns are: {', '.join(COLUMNS)}",
        )  # fmt: skip
    missing = [c for c in REQUIRED if c not in names]
    if missing:
        raise _fail(
            file, header_line, missing[0], f"the header has no {missing[0]} column",
            f"add it: the required columns are {', '.join(REQUIRED)}",
        )  # fmt: skip
    body = io.StringIO("\n".join(line for _, line in kept[1:]))
    quotes = []
    for (line, _), row in zip(kept[1:], csv.reader(body), strict=False):
        cells = [c.strip() for c in row]
        if cells == names:
            continue  # the header again: files joined with cat
        if "provider" in cells and "reference" in cells and set(cells) <= set(COLUMNS):
            raise _fail(
                file, line, "provider", "a header line in another column order than the first",
                f"join only files with the same header ({','.join(names)}), or write the "
                "lines in the first header's order",
            )  # fmt: skip
        values = {c: (row[i].strip() if i < len(row) else "") for i, c in enumerate(names)}
        quotes.append(_quote(file, line, values))
    return quotes


def _check_filled(file: str, line: int, v: dict[str, str]) -> None:
    """Refuse a quote with a cell its request left for the provider (:data:`UNFILLED`)."""
    for column in COLUMNS:
        if v.get(column, "").upper() == UNFILLED:
            raise _fail(
                file, line, column,
                f"{column} is not filled in ({UNFILLED}): the line is a quote request "
                "(procure prices check) awaiting the provider's answer",
                f"write the provider's {_FILL_HINT.get(column, column)}, or remove the line "
                "to plan at the catalog's price",
            )  # fmt: skip


_FILL_HINT: dict[str, str] = {
    "price_per_instance_hour": "quoted price per instance-hour in the line's currency",
    "valid_until": "last day of the quote (valid_until, YYYY-MM-DD)",
    "quoted_on": "day of the quote (quoted_on, YYYY-MM-DD; empty: unknown)",
    "reference": "reference of the quote (e.g. ACME-2026-114)",
}


def _check_requested(file: str, line: int, v: dict[str, str]) -> None:
    """The requested_* cells: a number of 0 or more, or a day (or empty)."""
    for column in ("requested_units", "requested_instance_hours"):
        text = v.get(column, "")
        fix = "write the number the request asked for, or leave it empty"
        if text and _number(file, line, column, text, fix) < 0:
            raise _fail(file, line, column, f"{column} is {text}; it must be 0 or more", fix)
    for column in ("requested_from", "requested_until"):
        if v.get(column, ""):
            _day(file, line, column, v[column])


def _quote(file: str, line: int, v: dict[str, str]) -> Quote:
    _check_filled(file, line, v)
    _check_requested(file, line, v)
    for column in REQUIRED:
        if not v.get(column):
            raise _fail(file, line, column, f"{column} is missing", f"fill in {column}")
    offering, accelerator = v.get("offering", ""), v.get("accelerator", "")
    count_text = v.get("accelerators_per_instance", "")
    if not offering and not (accelerator and count_text):
        raise _fail(
            file, line, "offering", "the quote names no offering, nor an accelerator and count",
            "write the offering (instance type or offering id), or accelerator and "
            "accelerators_per_instance",
        )  # fmt: skip
    if offering and accelerator:
        raise _fail(
            file, line, "accelerator", "the quote names both an offering and an accelerator",
            "keep one: the offering, or accelerator and accelerators_per_instance",
        )  # fmt: skip
    count = None
    if count_text and not offering:
        number = _number(file, line, "accelerators_per_instance", count_text, "e.g. 8")
        if number < 1 or number != int(number):
            raise _fail(
                file, line, "accelerators_per_instance",
                f"accelerators_per_instance is {count_text}; it must be a whole number, 1 or more",
                "write the accelerators per instance, e.g. 8",
            )  # fmt: skip
        count = int(number)
    term = v["term"].lower()
    if _BLOCK.match(term):
        raise _fail(
            file, line, "term", f"capacity blocks ({v['term']!r}) are not modelled yet",
            "quote the block as monthly (pay per use at its rate) for now, or leave it out",
        )  # fmt: skip
    if term not in TERM_MODES:
        raise _fail(
            file, line, "term", f"unknown term {v['term']!r}",
            f"write one of: {', '.join(TERM_MODES)}",
        )  # fmt: skip
    price_fix = "write the quoted price per instance-hour, above 0 (a monthly fee / 730)"
    price = _number(file, line, "price_per_instance_hour", v["price_per_instance_hour"], price_fix)
    if not 0 < price <= MAX_USD_PER_INSTANCE_HOUR:
        raise _fail(
            file, line, "price_per_instance_hour",
            f"price_per_instance_hour is {v['price_per_instance_hour']}; it must be above 0 "
            f"and at most {MAX_USD_PER_INSTANCE_HOUR:,.0f}",
            price_fix,
        )  # fmt: skip
    currency = v.get("currency", "") or BASE_CURRENCY
    if not is_currency_code(currency):
        raise _fail(
            file, line, "currency", f"currency {currency!r} is not an ISO 4217 code",
            "write the three-letter code, e.g. USD or EUR",
        )  # fmt: skip
    share_fix = "write the part of the term's cost paid at its start, from 0 to 1 (e.g. 0.5)"
    share_text = v.get("upfront_share", "") or "0"
    share = _number(file, line, "upfront_share", share_text, share_fix)
    if not 0 <= share <= 1:
        raise _fail(
            file, line, "upfront_share", f"upfront_share is {share_text}; it must be 0 to 1",
            share_fix,
        )  # fmt: skip
    if share and term == "monthly":
        raise _fail(
            file, line, "upfront_share", "a monthly term has no upfront payment",
            "write 0 (or leave it empty), or quote a 1y or 3y term",
        )  # fmt: skip
    min_text = v.get("min_units", "") or "1"
    minimum = _number(file, line, "min_units", min_text, "write a whole number, 1 or more")
    if minimum < 1 or minimum != int(minimum):
        raise _fail(
            file, line, "min_units", f"min_units is {min_text}; it must be a whole number >= 1",
            "write the least instances the quote holds, e.g. 1",
        )  # fmt: skip
    if minimum > 1:
        raise _fail(
            file, line, "min_units",
            f"min_units {int(minimum)} (a reservation of at least that many) is not modelled yet",
            "write 1 and check that the plan reserves at least that many, or ask the vendor "
            "for the price without a minimum",
        )  # fmt: skip
    valid_until = _day(file, line, "valid_until", v["valid_until"])
    quoted_on = v.get("quoted_on", "") or UNKNOWN_DATE
    if quoted_on != UNKNOWN_DATE:
        _day(file, line, "quoted_on", quoted_on)
    return Quote(
        file=file,
        line=line,
        provider=v["provider"],
        region=v["region"],
        offering=offering,
        accelerator=accelerator,
        accelerators_per_instance=count,
        term=term,
        price_per_instance_hour=price,
        currency=currency,
        upfront_share=share,
        min_units=int(minimum),
        valid_until=valid_until,
        quoted_on=quoted_on,
        reference=v["reference"],
    )


def quote_source(quote: Quote) -> str:
    """A quote's ``source`` in the catalog (a plan line's ``price_source``)."""
    return f"quote {quote.reference}"


def apply_quotes(catalog: Catalog, quotes: list[Quote], *, on: date) -> Catalog:
    """The catalog with ``quotes`` as prices of confidence ``quote``.

    Parameters
    ----------
    catalog
        The catalog (prices in USD).
    quotes
        From :func:`parse_quotes`.
    on
        The plan's first day (today when the problem states no start): a quote valid
        until before it is refused.

    Raises
    ------
    ProcureError
        An expired quote, an unknown provider, region, offering or accelerator, a
        currency without a rate, or two quotes for one price: naming the file, line,
        field and fix.
    """
    if not quotes:
        return catalog
    off = catalog.offerings.copy()
    for column in UPFRONT_COLUMN.values():
        if column not in off.columns:
            off[column] = 0.0
    if QUOTED_MODES_COLUMN not in off.columns:
        off[QUOTED_MODES_COLUMN] = ""
    quoted: dict[tuple[str, str], Quote] = {}  # (offering id, mode) -> its quote
    for q in quotes:
        if q.valid_until < on:
            raise q.error(
                f"quote {q.reference} expired on {q.valid_until.isoformat()}, before the "
                f"plan's start {on.isoformat()}",
                "valid_until",
                "ask the vendor for a renewed quote and write its date, or remove the line "
                "(or set the problem's start before it)",
            )
        _check_place(catalog, q)
        target = _target(catalog, off, q)
        if target not in off.index:
            off = _new_offering(catalog, off, q, target)
        shared = _clashes(off, target, q, quoted)
        if (target, q.mode) in quoted or shared:
            if (target, q.mode) in quoted and not shared:
                first = quoted[(target, q.mode)]
                raise q.error(
                    f"a second quote for {target} {q.term} (line {first.line} has one)",
                    "term",
                    "keep one quote per offering and term (the one to plan with)",
                )
            copy = f"{target}~{_slug(q.reference)}"
            if (copy, q.mode) in quoted:
                raise q.error(
                    f"a second quote {q.reference} for {target} {q.term}",
                    "reference",
                    "keep one quote per offering, term and reference",
                )
            if copy not in off.index:
                off = _copy_offering(off, target, copy)
            target = copy
        off = _set_price(catalog, off, target, q)
        quoted[(target, q.mode)] = q
    return replace(catalog, offerings=off)


def _clashes(off: pd.DataFrame, target: str, q: Quote, quoted: dict) -> bool:
    """Whether the quote's price on ``target`` would relabel another of its prices: one
    sharing its provenance columns (not from the same quote), or any price when the
    quote's currency is not the row's."""
    # the stubs type a cell from .at more widely than the scalars notna takes
    others = [
        m
        for m in PRICE_COLUMN
        if m != q.mode and pd.notna(off.at[target, PRICE_COLUMN[m]])  # type: ignore[arg-type]
    ]
    if others and str(off.at[target, "currency"]) != q.currency:
        return True
    return any(
        m in _GROUPS[q.mode] and _provenance_of(quoted.get((target, m))) != _provenance_of(q)
        for m in others
    )


def _provenance_of(quote: Quote | None) -> tuple[str, str] | None:
    return None if quote is None else (quote.reference, quote.quoted_on)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "quote"


def _check_place(catalog: Catalog, q: Quote) -> None:
    providers = set(catalog.regions["provider"]) | set(catalog.offerings["provider"])
    if q.provider not in providers:
        raise q.error(
            f"unknown provider {q.provider!r}",
            "provider",
            f"{suggestion(q.provider, providers)} A new provider needs its regions in "
            "regions.csv (grid intensity, PUE) and a row in providers.csv",
        )
    if (q.provider, q.region) not in catalog.regions.index:
        known = sorted(catalog.regions[catalog.regions["provider"] == q.provider]["region"])
        raise q.error(
            f"the catalog has no region {q.region!r} of {q.provider} (its grid intensity and "
            "PUE give the plan's energy and carbon)",
            "region",
            f"{suggestion(q.region, known)} Or add {q.provider},{q.region} to regions.csv "
            "with its grid data",
        )


def _target(catalog: Catalog, off: pd.DataFrame, q: Quote) -> str:
    """The offering id a quote prices (a new id when the provider has no such offering)."""
    here = off[(off["provider"] == q.provider) & (off["region"] == q.region)]
    if q.offering:
        wanted = q.offering if "/" in q.offering else f"{q.provider}/{q.region}/{q.offering}"
        if wanted in off.index:
            row = off.loc[wanted]
            if (row["provider"], row["region"]) != (q.provider, q.region):
                raise q.error(
                    f"offering {wanted} is {row['provider']}'s in {row['region']}, not "
                    f"{q.provider}'s in {q.region}",
                    "offering",
                    "correct the provider and region, or the offering",
                )
            return str(wanted)
        raise q.error(
            f"{q.provider} has no offering {q.offering!r} in {q.region}",
            "offering",
            f"{suggestion(q.offering, list(here['instance_type']) + list(here.index))} Or "
            "quote by accelerator and accelerators_per_instance",
        )
    accelerator = _accelerator(catalog, q)
    same = here[
        (here["accelerator_id"] == accelerator)
        & (here["accelerators_per_instance"] == q.accelerators_per_instance)
    ]
    if len(same):
        return str(sorted(same.index)[0])
    return f"{q.provider}/{q.region}/quote-{q.accelerators_per_instance}x{accelerator}"


def _accelerator(catalog: Catalog, q: Quote) -> str:
    try:
        return catalog.resolve_accelerator(q.accelerator)
    except ProcureError as exc:
        raise q.error(exc.message, "accelerator", exc.fix) from None


def _new_offering(catalog: Catalog, off: pd.DataFrame, q: Quote, new_id: str) -> pd.DataFrame:
    """``off`` with a new offering for a quote by accelerator: specs copied from the
    catalog's offering of that accelerator and count (the provider's first by id, else
    any provider's first), no price yet."""
    accelerator = _accelerator(catalog, q)
    base = catalog.offerings
    like = base[
        (base["accelerator_id"] == accelerator)
        & (base["accelerators_per_instance"] == q.accelerators_per_instance)
    ]
    if like.empty:
        raise q.error(
            f"the catalog has no offering of {q.accelerators_per_instance} x {accelerator} to "
            "copy the instance's specs from",
            "accelerators_per_instance",
            "quote a count the catalog sells (procure catalog list --accelerator "
            f"{accelerator}), or add the instance to offerings.csv",
        )
    own = like[like["provider"] == q.provider]
    template = str(sorted((own if len(own) else like).index)[0])
    row = off.loc[[template]].copy()
    row.index = pd.Index([new_id], name=off.index.name)
    for column in PRICE_COLUMN.values():
        row[column] = np.nan
    row["offering_id"] = new_id
    row["provider"], row["region"] = q.provider, q.region
    row["instance_type"] = new_id.rsplit("/", 1)[-1]
    row["price_note"] = f"a quoted instance; specs copied from {template}"
    for column in UPFRONT_COLUMN.values():
        row[column] = 0.0
    row[QUOTED_MODES_COLUMN] = ""
    return pd.concat([off, row])


def _copy_offering(off: pd.DataFrame, source: str, copy: str) -> pd.DataFrame:
    """``off`` with ``copy``: ``source``'s specs and no price (a quote's own offering)."""
    row = off.loc[[source]].copy()
    row.index = pd.Index([copy], name=off.index.name)
    for column in PRICE_COLUMN.values():
        row[column] = np.nan
    row["offering_id"] = copy
    row["instance_type"] = copy.rsplit("/", 1)[-1]
    row["price_note"] = f"a quoted price of {source}"
    for column in UPFRONT_COLUMN.values():
        row[column] = 0.0
    row[QUOTED_MODES_COLUMN] = ""
    return pd.concat([off, row])


def _set_price(catalog: Catalog, off: pd.DataFrame, target: str, q: Quote) -> pd.DataFrame:
    """``off`` with the quote's price (in USD) and provenance on ``target``."""
    rate = catalog.rate(
        q.currency,
        file=q.file,
        field=f"line {q.line}, currency",
        instead="state the quote in USD",
    )
    out = off.copy()
    out.at[target, PRICE_COLUMN[q.mode]] = q.price_per_instance_hour * rate.usd_per_unit
    own = "reserved_" if q.mode in RESERVED_TERM_MONTHS else ""
    out.at[target, f"{own}price_date"] = q.quoted_on
    out.at[target, f"{own}price_confidence"] = "quote"
    out.at[target, f"{own}source" if own else "source"] = quote_source(q)
    if q.mode in UPFRONT_COLUMN:
        out.at[target, UPFRONT_COLUMN[q.mode]] = q.upfront_share
    out.at[target, "currency"] = q.currency
    out.at[target, "usd_per_unit"] = rate.usd_per_unit
    out.at[target, "exchange_rate_date"] = rate.date
    modes = [m for m in str(out.at[target, QUOTED_MODES_COLUMN]).split(";") if m]
    out.at[target, QUOTED_MODES_COLUMN] = ";".join(sorted({*modes, q.mode}))
    return out


def quoted_pools(catalog: Catalog) -> list[str]:
    """Pool ids (``offering#mode``) whose price is a quote."""
    off = catalog.offerings
    if QUOTED_MODES_COLUMN not in off.columns:
        return []
    return sorted(
        f"{offering}#{mode}"
        for offering, modes in off[QUOTED_MODES_COLUMN].items()
        for mode in str(modes).split(";")
        if mode
    )
