"""How far a price of each confidence level may be from the price actually billed: its
band, a fraction of the price (catalogs/price_bands.csv).

A price of confidence ``c`` with band ``b`` is read as "the price billed lies in
``[p (1 - b), p (1 + b)]``"; the guarded price is the band's top, ``p (1 + b)``
(docs/concepts/price-guard.md derives the choice and states how each band was measured).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from solver.errors import ProcureError
from solver.inputs.catalog.tables import DEFAULT_CATALOG_DIR
from solver.inputs.keyed_csv import bad_cell as _bad
from solver.inputs.keyed_csv import read_keyed
from solver.inputs.provenance import CONFIDENCE_LEVELS

#: The file beside the other catalog CSVs.
PRICE_BANDS_FILE = "price_bands.csv"
COLUMNS: tuple[str, ...] = ("confidence", "band_fraction", "basis", "source")
#: How a band's figure was obtained.
BASES: tuple[str, ...] = ("measured", "stated", "provisional")


@dataclass(frozen=True)
class PriceBand:
    """The uncertainty of one confidence level.

    Parameters
    ----------
    confidence
        One of :data:`solver.inputs.provenance.CONFIDENCE_LEVELS`.
    band_fraction
        Half-width of the band as a fraction of the price (0.10: +-10%).
    basis
        ``measured`` (two sources for the same offering compared), ``stated`` (true by
        definition, a quote's 0) or ``provisional``.
    source
        Where the figure comes from, as a person can check it.
    """

    confidence: str
    band_fraction: float
    basis: str
    source: str


PriceBands = Mapping[str, PriceBand]


def _row(path: Path, line: int, row: Mapping[str, str | None]) -> PriceBand:
    level = (row.get("confidence") or "").strip()
    if level not in CONFIDENCE_LEVELS:
        raise _bad(
            path,
            line,
            "confidence",
            f"unknown confidence {level!r}",
            f"write one of: {', '.join(CONFIDENCE_LEVELS)}",
        )
    text = (row.get("band_fraction") or "").strip()
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not 0.0 <= value < 1.0:
        raise _bad(
            path,
            line,
            "band_fraction",
            f"band_fraction {text!r} is not a fraction in [0, 1)",
            "write the band's half-width as a fraction of the price, e.g. 0.15 for +-15%",
        )
    basis = (row.get("basis") or "").strip()
    if basis not in BASES:
        raise _bad(
            path, line, "basis", f"unknown basis {basis!r}", f"write one of: {', '.join(BASES)}"
        )
    source = (row.get("source") or "").strip()
    if not source:
        raise _bad(
            path,
            line,
            "source",
            "the band has no source",
            "say where the figure comes from (a page, a file and its measurement)",
        )
    return PriceBand(level, value, basis, source)


def load_price_bands(directory: str | Path | None = None) -> dict[str, PriceBand]:
    """Read and check ``price_bands.csv`` in a catalog folder.

    Parameters
    ----------
    directory
        The catalog folder; default the shipped catalogs/.

    Returns
    -------
    dict
        Confidence level -> :class:`PriceBand`, one for every level.

    Raises
    ------
    ProcureError
        A missing file, column or level, a level twice, or a bad value: the file, line and
        column named with the fix.
    """
    path = Path(directory if directory is not None else DEFAULT_CATALOG_DIR) / PRICE_BANDS_FILE
    bands = read_keyed(
        path,
        COLUMNS,
        lambda line, row: _row(path, line, row),
        lambda band: band.confidence,
        "confidence",
        "keep one row per confidence level",
        "the price bands",
        f"ship {PRICE_BANDS_FILE} in the catalog folder, UTF-8, header {','.join(COLUMNS)}",
    )
    absent = [c for c in CONFIDENCE_LEVELS if c not in bands]
    if absent:
        raise ProcureError(
            f"no band for {absent}",
            file=str(path),
            fix="give one row per confidence level: " + ", ".join(CONFIDENCE_LEVELS),
        )
    return bands


def price_band_fraction(confidence: str, bands: PriceBands | None = None) -> float:
    """The band half-width of a confidence level, a fraction of the price.

    Parameters
    ----------
    confidence
        A confidence level; an empty one (not stated) counts as ``unverified``.
    bands
        From :func:`load_price_bands`; default the shipped file.

    Raises
    ------
    ProcureError
        An unknown confidence level.
    """
    table = bands if bands is not None else shipped_price_bands()
    level = confidence or "unverified"
    if level not in table:
        raise ProcureError(
            f"no price band for confidence {confidence!r}",
            field="price_confidence",
            fix=f"write one of: {', '.join(CONFIDENCE_LEVELS)}",
        )
    return table[level].band_fraction


def guarded_usd(price_usd: float, confidence: str, bands: PriceBands | None = None) -> float:
    """A price at the top of its band, ``price (1 + band)``, in the price's own unit."""
    return price_usd * (1.0 + price_band_fraction(confidence, bands))


_SHIPPED: dict[str, PriceBand] = {}


def shipped_price_bands() -> dict[str, PriceBand]:
    """The shipped catalogs/price_bands.csv, read once per process."""
    if not _SHIPPED:
        _SHIPPED.update(load_price_bands(DEFAULT_CATALOG_DIR))
    return dict(_SHIPPED)


__all__ = [
    "BASES",
    "PRICE_BANDS_FILE",
    "PriceBand",
    "PriceBands",
    "guarded_usd",
    "load_price_bands",
    "price_band_fraction",
    "shipped_price_bands",
]
