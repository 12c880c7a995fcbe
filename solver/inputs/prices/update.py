"""What a price update is (:class:`PriceUpdate`, new prices before they meet a catalog)
and what applying it reports (:class:`PriceReport`, one row per price considered)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from solver.inputs.catalog import Catalog
from solver.inputs.provenance import UNKNOWN_DATE, parse_price_date
from solver.units import PRICE_COLUMN

#: Cloud price modes and their catalog column (USD per instance-hour).
PRICE_COLUMNS: dict[str, str] = PRICE_COLUMN
#: The mode of an owned server's price (USD of capex per server).
OWNED = "owned"
#: A price moving by more than this factor either way is held as suspicious.
DEFAULT_MAX_FACTOR = 2.0
RESERVED_MODES = ("reserved_1y", "reserved_3y")

#: Status values of :class:`PriceReport` rows that change the catalog.
APPLIED_STATUSES = ("changed", "new_mode", "derived", "added")

REPORT_COLUMNS = [
    "offering_id",
    "provider",
    "region",
    "mode",
    "old_usd",
    "new_usd",
    "ratio",
    "status",
    "applied",
    "note",
    "line",
]


@dataclass(frozen=True)
class PriceUpdate:
    """New prices as read from a file, before they are checked against a catalog.

    Attributes
    ----------
    prices
        One row per price: ``offering_id, provider, region, mode, price_usd,
        price_date, line`` (USD per instance-hour; per server for ``owned``;
        ``line`` is the source line, 0 when not from our CSV).
    kind
        ``csv``, ``catalog`` or ``skypilot``.
    source
        The file or folder read.
    offerings
        Whole offering rows (catalog and SkyPilot sources), for ``add_new``.
    covers
        Providers the update speaks for in full (catalog and SkyPilot), for the
        ``missing`` report; empty for our CSV (a partial update by design).
    skipped
        SkyPilot rows left out by the importer, by reason.
    """

    prices: pd.DataFrame
    kind: str
    source: str
    offerings: pd.DataFrame | None = None
    covers: frozenset[str] = frozenset()
    skipped: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class PriceReport:
    """What an update did to the catalog: one row per price considered.

    ``rows`` columns: ``offering_id, provider, region, mode, old_usd, new_usd,
    ratio (new/old), status, applied, note, line``. Prices in USD per
    instance-hour (per server for ``mode == "owned"``).
    """

    rows: pd.DataFrame
    source: str
    kind: str
    max_factor: float
    skipped: dict[str, int] = field(default_factory=dict)

    def with_status(self, *statuses: str) -> pd.DataFrame:
        """The rows with one of ``statuses``."""
        return self.rows[self.rows["status"].isin(statuses)]

    @property
    def applied(self) -> pd.DataFrame:
        return self.rows[self.rows["applied"]]

    def counts(self) -> dict[str, int]:
        """Rows per status (every status present)."""
        return {str(k): int(v) for k, v in self.rows["status"].value_counts().sort_index().items()}

    def as_dict(self) -> dict:
        """JSON-able: counts and every row that is not ``unchanged``."""
        rows = self.rows[self.rows["status"] != "unchanged"]
        return {
            "source": self.source,
            "kind": self.kind,
            "max_factor": self.max_factor,
            "counts": self.counts(),
            "skipped": dict(self.skipped),
            "rows": [
                {k: (None if isnan(v) else v) for k, v in r.items()}
                for r in rows.to_dict("records")
            ],
        }


@dataclass(frozen=True)
class Repriced:
    """A catalog with an update applied, and the report of what was (not) taken."""

    catalog: Catalog
    report: PriceReport


def isnan(value: object) -> bool:
    """Whether a report cell is a float NaN (no price in that column)."""
    return isinstance(value, float) and value != value


def price_day(text: str | None) -> str:
    """A price date as the catalog keeps it: ``YYYY-MM-DD``, else ``unknown``."""
    return text if text and parse_price_date(text) is not None else UNKNOWN_DATE


#: The columns of :attr:`PriceUpdate.prices`.
PRICE_FRAME_COLUMNS = [
    "offering_id",
    "provider",
    "region",
    "mode",
    "price_usd",
    "price_date",
    "line",
    "price_confidence",
    "price_source",
]


def price_frame(rows: list[dict]) -> pd.DataFrame:
    """A :attr:`PriceUpdate.prices` frame of ``rows`` (:data:`PRICE_FRAME_COLUMNS`)."""
    return pd.DataFrame(rows, columns=PRICE_FRAME_COLUMNS)
