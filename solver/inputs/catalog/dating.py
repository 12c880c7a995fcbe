"""What a catalog says of its prices' dates and currencies: each offering's
``price_date_basis`` (is the date one the source published, or the day it was read?) and
``currency_basis`` (does a source name the currency, or is it assumed?), checked on load,
and the offerings still undated or in an assumed currency, which ``procure catalog
validate`` counts and lists by file, line and field."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from solver.errors import ProcureError
from solver.inputs.provenance import UNKNOWN_DATE

#: ``price_date_basis`` words: ``published``, a date the source itself states (a commit's
#: date, a file's "last updated", a dated capture); ``read``, the day the source was read,
#: where it states no date of its own.
DATE_BASES: tuple[str, ...] = ("published", "read")

#: ``currency_basis`` words: ``stated``, the source or the provider's own price page names
#: the currency; ``assumed``, nothing does.
CURRENCY_BASES: tuple[str, ...] = ("stated", "assumed")

#: The ``currency_basis`` that validate counts as unstated.
ASSUMED = "assumed"


def check_bases(table: pd.DataFrame, path: Path) -> None:
    """Refuse a ``price_date_basis`` or ``currency_basis`` that is not one of the words.

    ``price_date_basis`` may be empty only where ``price_date`` is ``unknown`` (nothing to
    qualify).

    Raises
    ------
    ProcureError
        Naming the file, the first bad line and the column, and the words allowed.
    """
    basis = table["price_date_basis"].fillna("")
    empty_ok = (basis == "") & (table["price_date"] == UNKNOWN_DATE)
    bad = ~(basis.isin(DATE_BASES) | empty_ok)
    if bad.any():
        idx = int(np.flatnonzero(bad.to_numpy())[0])
        raise ProcureError(
            f"price date basis {basis.iloc[idx]!r} is not one of: {', '.join(DATE_BASES)}",
            file=str(path),
            field=f"line {idx + 2}, price_date_basis",
            fix="write published (the source states the date) or read (the day you read it)",
        )
    currency = table["currency_basis"].fillna("")
    bad = ~currency.isin(CURRENCY_BASES)
    if bad.any():
        idx = int(np.flatnonzero(bad.to_numpy())[0])
        raise ProcureError(
            f"currency basis {currency.iloc[idx]!r} is not one of: {', '.join(CURRENCY_BASES)}",
            file=str(path),
            field=f"line {idx + 2}, currency_basis",
            fix="write stated (a source names the currency) or assumed (none does)",
        )


@dataclass(frozen=True)
class Unsettled:
    """One offering whose price date is unknown or whose currency is assumed.

    Attributes
    ----------
    line
        Its line in offerings.csv (the header is line 1).
    field
        The column at fault: ``price_date``, ``reserved_price_date`` or ``currency_basis``.
    offering_id
        The offering.
    value
        What the cell holds (``unknown``; or the currency taken, e.g. ``USD``).
    """

    line: int
    field: str
    offering_id: str
    value: str


@dataclass(frozen=True)
class DatingReport:
    """How a catalog's offerings are dated and in which currencies.

    Attributes
    ----------
    offerings
        Number of offerings.
    unknown_dates
        Offerings whose on-demand or 1y/3y price date is ``unknown`` (one entry per cell).
    assumed_currencies
        Offerings whose currency no source states.
    date_bases
        Offerings per ``price_date_basis`` (``published``, ``read``).
    currencies
        Offerings per currency as billed (``USD``, ``EUR``, ...).
    """

    offerings: int
    unknown_dates: tuple[Unsettled, ...]
    assumed_currencies: tuple[Unsettled, ...]
    date_bases: dict[str, int]
    currencies: dict[str, int]

    @property
    def undated_offerings(self) -> int:
        """Offerings with at least one unknown price date."""
        return len({u.offering_id for u in self.unknown_dates})


def dating_report(off: pd.DataFrame) -> DatingReport:
    """The offerings of a loaded catalog (rows in file order) still undated or in an
    assumed currency, and the counts per date basis and currency."""
    ids = (off["offering_id"] if "offering_id" in off else off.index.to_series()).astype(str)
    ids_text = ids.to_numpy()
    reserved = off["reserved_1y_usd_per_hour"].notna() | off["reserved_3y_usd_per_hour"].notna()
    cells = {
        "price_date": off["price_date"] == UNKNOWN_DATE,
        # a 1y/3y date counts where there is a 1y/3y price (else it is the row's own)
        "reserved_price_date": reserved & (off["reserved_price_date"] == UNKNOWN_DATE),
    }
    undated: list[Unsettled] = []
    for column, unknown in cells.items():
        for idx in np.flatnonzero(unknown.to_numpy()):
            undated.append(Unsettled(int(idx) + 2, column, str(ids_text[idx]), UNKNOWN_DATE))
    undated.sort(key=lambda u: (u.line, u.field))
    currency = off["currency"].astype(str).to_numpy()
    assumed = [
        Unsettled(int(idx) + 2, "currency_basis", str(ids_text[idx]), str(currency[idx]))
        for idx in np.flatnonzero((off["currency_basis"] == ASSUMED).to_numpy())
    ]
    bases = off["price_date_basis"].fillna("").replace("", "none")
    return DatingReport(
        offerings=len(off),
        unknown_dates=tuple(undated),
        assumed_currencies=tuple(assumed),
        date_bases={str(k): int(v) for k, v in bases.value_counts().sort_index().items()},
        currencies={str(k): int(v) for k, v in off["currency"].value_counts().sort_index().items()},
    )


#: Offerings listed by name under each count; the rest are counted.
LISTED = 20


def _listed(
    entries: tuple[Unsettled, ...], path: str, what: Callable[[Unsettled], str]
) -> list[str]:
    """One line per entry (file, line, field, offering), the first :data:`LISTED` of them."""
    lines = [f"  {path} line {u.line}, {u.field}: {what(u)} ({u.offering_id})" for u in entries]
    more = len(lines) - LISTED
    return lines[:LISTED] + ([f"  ... and {more} more"] if more > 0 else [])


def dating_lines(report: DatingReport, path: str) -> list[str]:
    """What ``procure catalog validate`` prints of a catalog's dates and currencies: the two
    counts (offerings with an ``unknown`` price date, offerings in an assumed currency),
    the counts per basis and currency, and each unsettled offering by file, line and field."""
    bases = ", ".join(f"{n} {basis}" for basis, n in report.date_bases.items())
    currencies = ", ".join(f"{n} {code}" for code, n in report.currencies.items())
    lines = [
        f"price dates: {report.undated_offerings} of {report.offerings} offerings with an "
        f"unknown date (bases: {bases})",
        f"currencies: {len(report.assumed_currencies)} of {report.offerings} offerings in a "
        f"currency no source states ({currencies})",
    ]
    lines += _listed(report.unknown_dates, path, lambda u: "unknown")
    lines += _listed(
        report.assumed_currencies, path, lambda u: f"{u.value} assumed, not stated by a source"
    )
    return lines


def unsettled_error(report: DatingReport, path: str) -> ProcureError:
    """The error ``validate --strict`` raises: the first unsettled offering named."""
    first = (report.unknown_dates or report.assumed_currencies)[0]
    return ProcureError(
        f"{report.undated_offerings} offering(s) with an unknown price date, "
        f"{len(report.assumed_currencies)} in an assumed currency (first: {first.offering_id})",
        file=path,
        field=f"line {first.line}, {first.field}",
        fix="date the price (the day the source published it, or the day you read it, with "
        "price_date_basis) and state the currency its provider bills (currency_basis stated, "
        "cited in catalogs/SOURCES.md)",
    )
