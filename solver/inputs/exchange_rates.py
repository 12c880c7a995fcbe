"""A user's exchange-rate file, read and applied over the catalog's rates.

The file has the columns of ``catalogs/exchange_rates.csv`` (``date``, ``currency``,
``usd_per_unit``, ``source``). Each currency it names replaces the catalog's rates of that
currency entirely (so an older rate the user chose is not outranked by a newer shipped
one); currencies it does not name keep the catalog's. Every money column the catalog
converted on load (:data:`solver.inputs.catalog.checks.MONEY_COLUMNS`) is converted again
at the new rate, so the offerings and servers priced in that currency change by
``new usd_per_unit / old usd_per_unit``. Pure: text in, data out (the CLI reads the file).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math

import pandas as pd

from solver.errors import ProcureError
from solver.inputs.catalog import Catalog
from solver.inputs.catalog.checks import MONEY_COLUMNS
from solver.inputs.provenance import BASE_CURRENCY, is_currency_code, parse_price_date

#: The columns of an exchange-rate file, in the order of catalogs/exchange_rates.csv.
COLUMNS: tuple[str, ...] = ("date", "currency", "usd_per_unit", "source")

_HEADER_FIX = (
    "write the header line date,currency,usd_per_unit,source (as catalogs/exchange_rates.csv)"
)


def _fail(file: str, line: int, column: str, message: str, fix: str) -> ProcureError:
    return ProcureError(message, file=file, field=f"line {line}, {column}", fix=fix)


def _row(file: str, line: int, v: dict[str, str]) -> dict[str, object]:
    """One checked row of the file: a real day, an ISO code other than USD, a finite
    positive rate and a source."""
    currency = v.get("currency", "")
    if not currency:
        raise _fail(
            file, line, "currency", "the currency is missing",
            "write the three-letter ISO 4217 code the rate is for, e.g. EUR",
        )  # fmt: skip
    if not is_currency_code(currency):
        raise _fail(
            file, line, "currency", f"currency {currency!r} is not an ISO 4217 code",
            "write the three-letter code in capitals, e.g. EUR",
        )  # fmt: skip
    if currency == BASE_CURRENCY:
        raise _fail(
            file, line, "currency", "USD is the plan's unit (1 USD = 1 USD); it takes no rate",
            "remove the USD line",
        )  # fmt: skip
    day = v.get("date", "")
    if parse_price_date(day) is None:
        raise _fail(
            file, line, "date", f"date {day!r} is not a day",
            "write the day the rate was published as YYYY-MM-DD, e.g. 2026-05-08",
        )  # fmt: skip
    text = v.get("usd_per_unit", "")
    try:
        rate = float(text)
    except ValueError:
        rate = math.nan
    if not math.isfinite(rate) or rate <= 0:
        raise _fail(
            file, line, "usd_per_unit", f"usd_per_unit must be a positive number, not {text!r}",
            f"write the US dollars one {currency} buys, e.g. 1.1761 for the ECB's "
            "EUR rate of 2026-05-08",
        )  # fmt: skip
    if not v.get("source"):
        raise _fail(
            file, line, "source", "the rate states no source",
            "write where the rate comes from (e.g. the ECB reference rate's page and its date)",
        )  # fmt: skip
    return {"date": day, "currency": currency, "usd_per_unit": rate, "source": v["source"]}


def parse_exchange_rates(text: str, file: str) -> pd.DataFrame:
    """The rates of an exchange-rate file's text, each line checked.

    Parameters
    ----------
    text
        The CSV text (header line first; blank lines and lines starting with ``#`` skipped).
    file
        The file's name, for messages.

    Returns
    -------
    pandas.DataFrame
        ``date``, ``currency``, ``usd_per_unit`` (US dollars per unit), ``source``, sorted
        by currency and date.

    Raises
    ------
    ProcureError
        The first bad value, naming the file, its line and column, and the fix.
    """
    kept = [
        (n, line)
        for n, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not kept:
        raise ProcureError("the exchange-rate file is empty", file=file, fix=_HEADER_FIX)
    header_line, header = kept[0]
    names = [c.strip() for c in next(csv.reader([header]))]
    for column in names:
        if column not in COLUMNS:
            raise _fail(file, header_line, column, f"unknown column {column!r}", _HEADER_FIX)
    for column in COLUMNS:
        if column not in names:
            raise _fail(
                file, header_line, column, f"the header has no {column} column", _HEADER_FIX
            )
    if len(kept) == 1:
        raise ProcureError(
            "the exchange-rate file has no rate", file=file, fix="add one line per rate"
        )
    body = csv.reader(io.StringIO("\n".join(line for _, line in kept[1:])))
    rows, seen = [], set()
    for (line, _), cells in zip(kept[1:], body, strict=True):
        if len(cells) > len(names):
            raise _fail(
                file, line, "cells", f"{len(cells)} cells for the header's {len(names)} columns",
                "quote a value that holds a comma (\"...\"), or remove the extra cells",
            )  # fmt: skip
        values = {c: (cells[i].strip() if i < len(cells) else "") for i, c in enumerate(names)}
        row = _row(file, line, values)
        key = (row["currency"], row["date"])
        if key in seen:
            raise _fail(
                file, line, "date", f"a second rate for {key[0]} on {key[1]}",
                "keep one rate per currency and date",
            )  # fmt: skip
        seen.add(key)
        rows.append(row)
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    return table.sort_values(["currency", "date"], kind="stable").reset_index(drop=True)


def _reconverted(
    table: pd.DataFrame, file: str, latest: dict[str, tuple[float, str]]
) -> pd.DataFrame:
    """``table`` (offerings or servers, already in USD) with the rows in a currency of
    ``latest`` converted again: each money column times new rate / applied rate."""
    out = table.copy()
    for currency, (usd_per_unit, day) in latest.items():
        rows = out["currency"] == currency
        if not rows.any():
            continue
        factor = usd_per_unit / out.loc[rows, "usd_per_unit"].astype(float)
        for column in MONEY_COLUMNS[file]:
            out.loc[rows, column] = out.loc[rows, column] * factor
        out.loc[rows, "usd_per_unit"] = usd_per_unit
        out.loc[rows, "exchange_rate_date"] = day
    return out


def with_exchange_rates(catalog: Catalog, rates: pd.DataFrame) -> Catalog:
    """The catalog with ``rates`` (:func:`parse_exchange_rates`) in place of its own rates
    of the currencies they name, and its prices in those currencies converted again at
    each currency's latest rate in ``rates``."""
    named = set(rates["currency"])
    kept = catalog.exchange_rates
    kept = None if kept is None else kept[~kept["currency"].isin(named)]
    merged = pd.concat([t for t in (kept, rates) if t is not None and not t.empty])
    merged = merged.sort_values(["currency", "date"], kind="stable").reset_index(drop=True)
    latest = {
        str(c): (float(g["usd_per_unit"].iloc[-1]), str(g["date"].iloc[-1]))
        for c, g in rates.groupby("currency", sort=True)
    }
    return dataclasses.replace(
        catalog,
        offerings=_reconverted(catalog.offerings, "offerings.csv", latest),
        servers=_reconverted(catalog.servers, "servers.csv", latest),
        exchange_rates=merged,
    )
