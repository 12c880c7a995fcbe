"""Price updates: read new prices and apply them over a catalog, reporting what was not taken.

Three sources are understood (:func:`read_price_update` tells them apart):

``price CSV`` (ours)
    one row per price: ``provider, region, offering, mode, price, date``.
    ``offering`` is an instance type (with ``provider`` and ``region``) or a
    whole offering id (``aws/us-east-1/p5.48xlarge``). ``mode`` is
    ``on_demand | spot | reserved_1y | reserved_3y`` (price in USD per
    instance-hour) or ``owned`` (``offering`` is a server id, price in USD of
    capex per server). ``date`` is when the price was read (optional).
``a whole catalog``
    a folder with the six catalog CSVs (validated by
    :func:`solver.catalog.load_catalog`), or just an ``offerings.csv``: its four
    price columns, and for a folder the servers' ``capex_usd``.
``SkyPilot vms.csv``
    read by :func:`solver.importers.skypilot.read_skypilot_vms` (on-demand and
    spot prices; SkyPilot has no reserved prices).

:func:`apply_prices` returns a new :class:`~solver.catalog.Catalog` and a
:class:`PriceReport`, one row per price considered, with a ``status``:

``changed`` / ``new_mode``
    applied (``new_mode``: the catalog had no price in that mode).
``derived``
    a reserved price the update does not give, moved by the same factor as
    the offering's on-demand price (the catalog's discount is kept: its
    reserved prices are stated discounts off on-demand, catalogs/SOURCES.md).
``unchanged``
    the same price (within 1e-9, relative).
``suspicious``
    the price moves by more than ``max_factor`` either way (new/old above
    ``max_factor`` or below ``1/max_factor``): **not applied** unless
    ``accept_suspicious``; a typo (an hourly price given per month, a missing
    decimal point) should not move a plan silently.
``unknown``
    the offering (or server) is not in the catalog: not applied (a whole
    catalog or a SkyPilot file may add it with ``add_new``: status ``added``).
``inconsistent``
    after the update a discounted mode (spot, reserved) would cost more than
    on-demand: **none** of that offering's prices are applied.
``missing``
    (catalog and SkyPilot sources only) an offering of a provider the update
    covers that the update does not mention: kept at its old price.

A price the update leaves empty means "no information": the old price is kept.
Withdrawing a mode or an offering is an edit to ``catalogs/``, not a price update.

An applied price brings its provenance (issue 29): its date (``YYYY-MM-DD``, else
``unknown``), its source (the file and line) and its confidence: our CSV's optional
``confidence`` column (``unverified`` when absent: nothing says more), a catalog's own
``price_confidence``, or ``third_party`` for a SkyPilot file. Every update is in USD.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol, cast

import numpy as np
import pandas as pd

from solver.errors import ProcureError
from solver.inputs.catalog import SCHEMAS, Catalog, load_catalog
from solver.inputs.price_holds import ceiling_usd
from solver.inputs.price_traps import (
    PriceRow,
    check_csv_currency,
    check_duplicate_offerings,
    check_field_counts,
    check_price_dates,
    price_rows,
    read_price_text,
)
from solver.inputs.provenance import (
    BASE_CURRENCY,
    CONFIDENCE_LEVELS,
    UNKNOWN_DATE,
    confidence_rank,
    parse_price_date,
)
from solver.units import PRICE_COLUMN

#: Cloud price modes and their catalog column (USD per instance-hour).
PRICE_COLUMNS: dict[str, str] = PRICE_COLUMN
OWNED = "owned"
DEFAULT_MAX_FACTOR = 2.0
_RESERVED = ("reserved_1y", "reserved_3y")
_DISCOUNTED = ("spot", "reserved_1y", "reserved_3y")
_SAME = 1e-9

#: Status values of :class:`PriceReport` rows that change the catalog.
APPLIED_STATUSES = ("changed", "new_mode", "derived", "added")

_REPORT_COLUMNS = [
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
                {k: (None if _isnan(v) else v) for k, v in r.items()}
                for r in rows.to_dict("records")
            ],
        }


@dataclass(frozen=True)
class Repriced:
    """A catalog with an update applied, and the report of what was (not) taken."""

    catalog: Catalog
    report: PriceReport


def _isnan(value: object) -> bool:
    return isinstance(value, float) and value != value


# --------------------------------------------------------------------------- reading


def _normalise_mode(text: object) -> str:
    mode = re.sub(r"[\s\-]+", "_", str(text).strip().lower())
    return {
        "ondemand": "on_demand",
        "od": "on_demand",
        "1y": "reserved_1y",
        "3y": "reserved_3y",
    }.get(mode, mode)


def read_price_csv(path: str | Path, *, price_date: str | None = None) -> PriceUpdate:
    """Read our price CSV (``provider, region, offering, mode, price, date``).

    Raises
    ------
    ProcureError
        Missing columns, an unknown mode, a price that is not a positive number,
        or the same (offering, mode) priced twice; naming the line.
    """
    path = Path(path)
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise ProcureError(
            f"not a readable CSV: {exc}", file=str(path), fix="write one price per row"
        ) from None
    check_field_counts(path, what="price CSV")
    frame.columns = [c.strip().lower() for c in frame.columns]
    check_csv_currency(frame, path)
    missing = [c for c in ("offering", "mode", "price") if c not in frame.columns]
    if missing:
        raise ProcureError(
            f"missing column(s) {missing}",
            file=str(path),
            field="line 1 (header)",
            fix="the header must be: provider,region,offering,mode,price,date",
        )
    for column in ("provider", "region", "date"):
        if column not in frame.columns:
            frame[column] = ""
    rows = []
    seen: dict[tuple[str, str], int] = {}
    valid = (*PRICE_COLUMNS, OWNED)
    for i, r in enumerate(frame.itertuples(index=False), start=2):
        offering, mode = str(r.offering).strip(), _normalise_mode(r.mode)
        provider, region = str(r.provider).strip(), str(r.region).strip()
        if not offering:
            raise ProcureError(
                "offering is empty", file=str(path), field=f"line {i}, offering", fix="fill it in"
            )
        if mode not in valid:
            raise ProcureError(
                f"unknown mode {r.mode!r}",
                file=str(path),
                field=f"line {i}, mode",
                fix=f"use one of: {', '.join(valid)}",
            )
        try:
            price = float(str(r.price).replace("$", "").replace(",", "").strip())
        except ValueError:
            price = float("nan")
        if not price > 0 or not np.isfinite(price):
            raise ProcureError(
                f"price {r.price!r} is not a positive number",
                file=str(path),
                field=f"line {i}, price",
                fix="write the price in USD per instance-hour (per server for mode owned)",
            )
        if mode == OWNED or "/" in offering:
            offering_id = offering
            if "/" in offering and not provider:
                provider = offering.split("/")[0]
            if "/" in offering and not region and offering.count("/") >= 2:
                region = offering.split("/")[1]
        else:
            if not provider or not region:
                raise ProcureError(
                    f"offering {offering!r} needs its provider and region",
                    file=str(path),
                    field=f"line {i}, provider/region",
                    fix="fill in provider and region, or give the offering id "
                    "(provider/region/instance_type)",
                )
            offering_id = f"{provider}/{region}/{offering}"
        key = (offering_id, mode)
        if key in seen:
            raise ProcureError(
                f"{offering_id} {mode} is priced twice (lines {seen[key]} and {i})",
                file=str(path),
                field=f"line {i}",
                fix="keep one price per offering and mode",
            )
        seen[key] = i
        rows.append(
            {
                "offering_id": offering_id,
                "provider": provider,
                "region": region,
                "mode": mode,
                "price_usd": price,
                "price_date": _day(str(r.date).strip() or price_date),
                "line": i,
                "price_confidence": _csv_confidence(r, path, i),
                "price_source": f"price update {path}, line {i}",
            }
        )
    return PriceUpdate(prices=_price_frame(rows), kind="csv", source=str(path))


def _day(text: str | None) -> str:
    """A price date as the catalog keeps it: ``YYYY-MM-DD``, else ``unknown``."""
    return text if text and parse_price_date(text) is not None else UNKNOWN_DATE


def _csv_confidence(row: object, path: Path, line: int) -> str:
    """The optional ``confidence`` cell of a price CSV row (default ``unverified``)."""
    level = str(getattr(row, "confidence", "") or "").strip() or "unverified"
    if level not in CONFIDENCE_LEVELS:
        raise ProcureError(
            f"unknown price confidence {level!r}",
            file=str(path),
            field=f"line {line}, confidence",
            fix=f"write one of: {', '.join(CONFIDENCE_LEVELS)}, or leave it empty (unverified)",
        )
    return level


_PRICE_FRAME_COLUMNS = [
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


def _price_frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=_PRICE_FRAME_COLUMNS)


def _prices_from_offerings(
    offerings: pd.DataFrame, price_date: str | None, source: str
) -> pd.DataFrame:
    """Long format (one row per offering and mode with a price) from offering rows, each
    with its row's provenance (a reserved price its ``reserved_*``; ``unverified`` and the
    file where a row states none)."""
    rows = []
    for r in offerings.to_dict("records"):
        for mode, column in PRICE_COLUMNS.items():
            # the stubs leave out None, which pandas coerces to NaN like any empty cell
            value = pd.to_numeric(r.get(column), errors="coerce")  # type: ignore[call-overload]
            if pd.notna(value) and value > 0:
                own = "reserved_" if mode in _RESERVED else ""
                level = _cell(r.get(f"{own}price_confidence")) or _cell(r.get("price_confidence"))
                cited = _cell(r.get("reserved_source" if own else "source")) or _cell(
                    r.get("source")
                )
                rows.append(
                    {
                        "offering_id": r["offering_id"],
                        "provider": r["provider"],
                        "region": r["region"],
                        "mode": mode,
                        "price_usd": float(value),
                        "price_date": _day(
                            price_date
                            or _cell(r.get(f"{own}price_date"))
                            or _cell(r.get("price_date"))
                        ),
                        "line": 0,
                        "price_confidence": level or "unverified",
                        "price_source": f"price update {source}: {cited}" if cited else source,
                    }
                )
    return _price_frame(rows)


def _cell(value: object) -> str:
    """A cell as text, '' for an empty or missing one."""
    return "" if value is None or (isinstance(value, float) and value != value) else str(value)


def read_catalog_prices(path: str | Path, *, price_date: str | None = None) -> PriceUpdate:
    """Prices from a whole catalog folder (validated) or a bare ``offerings.csv``."""
    path = Path(path)
    if path.is_dir():
        new = load_catalog(path)
        offerings = new.offerings.reset_index(drop=True)
        prices = _prices_from_offerings(offerings, price_date, str(path))
        servers = [
            {
                "offering_id": sid,
                "provider": OWNED,
                "region": "",
                "mode": OWNED,
                "price_usd": float(row["capex_usd"]),
                "price_date": _day(price_date or str(row["price_date"])),
                "line": 0,
                "price_confidence": str(row["price_confidence"]),
                "price_source": f"price update {path}: {row['source']}",
            }
            for sid, row in new.servers.iterrows()
        ]
        prices = pd.concat([prices, _price_frame(servers)], ignore_index=True)
    else:
        offerings = pd.read_csv(path, dtype={"offering_id": str})
        check_field_counts(path, what="offerings.csv")
        missing = [c for c in ("offering_id", "provider", "region", *PRICE_COLUMNS.values())]
        missing = [c for c in missing if c not in offerings.columns]
        if missing:
            raise ProcureError(
                f"missing column(s) {missing}",
                file=str(path),
                field="line 1 (header)",
                fix="pass an offerings.csv in the catalog schema (catalogs/offerings.csv)",
            )
        foreign = offerings.get("currency", pd.Series(dtype=str)).fillna(BASE_CURRENCY)
        if (foreign != BASE_CURRENCY).any():
            raise ProcureError(
                f"prices in {sorted(set(foreign) - {BASE_CURRENCY})} (currency column)",
                file=str(path),
                field="currency",
                fix="pass the whole catalog folder, whose exchange_rates.csv converts them, or "
                "state the prices in USD",
            )
        check_duplicate_offerings(offerings, path, list(PRICE_COLUMNS.values()))
        prices = _prices_from_offerings(offerings, price_date, str(path))
    return PriceUpdate(
        prices=prices,
        kind="catalog",
        source=str(path),
        offerings=offerings,
        covers=frozenset(offerings["provider"].astype(str)),
    )


def read_skypilot_prices(
    path: str | Path, provider: str, *, price_date: str | None = None
) -> PriceUpdate:
    """On-demand and spot prices from a SkyPilot ``vms.csv`` (see the importer)."""
    from solver.inputs.importers.skypilot import read_skypilot_vms

    path = Path(path)
    result = read_skypilot_vms(
        path, provider, price_date=price_date or "unknown", source=f"skypilot:{path}"
    )
    offerings = result.offerings
    skipped = dict(result.skipped)
    if result.unmapped:
        names = sorted(result.unmapped)
        shown = ", ".join(names[:4]) + (f", ... {len(names)} names" if len(names) > 4 else "")
        skipped[f"accelerator name not mapped ({shown})"] = int(sum(result.unmapped.values()))
    return PriceUpdate(
        prices=_prices_from_offerings(offerings, price_date, str(path)),
        kind="skypilot",
        source=str(path),
        offerings=offerings,
        covers=frozenset([str(provider).strip().lower()]),
        skipped=skipped,
    )


def detect_format(path: str | Path) -> str:
    """``catalog`` (a folder or an offerings.csv), ``skypilot`` or ``csv`` (ours), by header."""
    path = Path(path)
    if path.is_dir():
        return "catalog"
    if not path.is_file():
        raise ProcureError("price file not found", file=str(path), fix="check the path")
    with path.open(encoding="utf-8-sig", errors="replace") as handle:
        header = next(csv.reader(io.StringIO(handle.readline())), [])
    names = {h.strip().lower() for h in header}
    if {"instancetype", "price"} <= names:
        return "skypilot"
    if "offering_id" in names and PRICE_COLUMNS["on_demand"] in names:
        return "catalog"
    if {"offering", "mode", "price"} <= names:
        return "csv"
    raise ProcureError(
        "not a price file procure knows",
        file=str(path),
        field="line 1 (header)",
        fix="give a price CSV (provider,region,offering,mode,price,date), a catalog folder or "
        "offerings.csv, or a SkyPilot vms.csv",
    )


def read_price_update(
    path: str | Path,
    *,
    format: str = "auto",
    provider: str | None = None,
    price_date: str | None = None,
    known_providers: set[str] | None = None,
    check_dates: bool = False,
) -> PriceUpdate:
    """Read any supported price source (``format``: auto | csv | catalog | skypilot).

    ``check_dates`` (the CLI's price updates, resolve and diff): refuse a price dated
    before the first cloud price or more than a quarter ahead
    (:func:`~solver.inputs.price_traps.check_price_dates`). Off for a caller that plays
    out future months on purpose (a notebook simulating next year's price sheets).

    For SkyPilot files ``provider`` names the cloud; by default it is the name of
    the folder holding the file (``.../gcp/vms.csv``) when that is a provider in
    ``known_providers``.
    """
    path = Path(path)
    if path.is_file():  # a folder is a catalog, read table by table
        read_price_text(path, what="a price file", fix="give a price CSV, offerings.csv or vms.csv")
    kind = detect_format(path) if format == "auto" else format
    if kind in ("csv", "catalog"):
        read = read_price_csv if kind == "csv" else read_catalog_prices
        update = read(path, price_date=price_date)
        if check_dates:
            check_price_dates(update.prices, str(path))
        return update
    if kind == "skypilot":
        name = provider or path.parent.name.lower()
        if not provider and known_providers is not None and name not in known_providers:
            raise ProcureError(
                "which cloud is this SkyPilot file for?",
                file=str(path),
                field="--provider",
                fix="pass --provider NAME (aws, gcp, azure, lambda, ...)",
            )
        check_field_counts(path, what="SkyPilot vms.csv")
        update = read_skypilot_prices(path, name, price_date=price_date)
        if check_dates:
            check_price_dates(update.prices, str(path))
        return update
    raise ProcureError(
        f"unknown price format {format!r}",
        field="--prices-format",
        fix="use auto, csv, catalog or skypilot",
    )


# --------------------------------------------------------------------------- applying


def apply_prices(
    catalog: Catalog,
    update: PriceUpdate,
    *,
    max_factor: float = DEFAULT_MAX_FACTOR,
    accept_suspicious: bool = False,
    add_new: bool = False,
) -> Repriced:
    """Apply ``update`` over ``catalog``; return the new catalog and the report.

    Parameters
    ----------
    max_factor
        A price moving by more than this factor (either way) is ``suspicious``
        and not applied unless ``accept_suspicious``. Must be > 1.
    add_new
        Add offerings the catalog does not have (catalog and SkyPilot sources;
        only those whose provider/region and accelerator the catalog knows).
    """
    if not max_factor > 1.0:
        raise ProcureError(
            f"max factor {max_factor:g} must be above 1",
            field="--max-factor",
            fix="e.g. --max-factor 2 (a price may halve or double)",
        )
    off = catalog.offerings.copy()
    srv = catalog.servers.copy()
    prices = update.prices
    rows: list[dict] = []
    new_values: dict[tuple[Hashable, str], float] = {}  # (offering, column) -> price
    new_provenance: dict[Hashable, dict[str, tuple[str, str, str]]] = {}

    record = _recorder(rows)

    def judge(old: float, new: float) -> tuple[str, str]:
        if old != old:
            return "new_mode", ""
        ratio = new / old
        if abs(ratio - 1.0) <= _SAME:
            return "unchanged", ""
        if ratio > max_factor or ratio < 1.0 / max_factor:
            if accept_suspicious:
                return "changed", f"moved by more than x{max_factor:g}; accepted"
            return "suspicious", ""
        return "changed", ""

    _decide_servers(prices[prices["mode"] == OWNED], srv, judge, record)

    # --- cloud offerings
    cloud = prices[prices["mode"] != OWNED]
    known_regions = set(zip(catalog.regions["provider"], catalog.regions["region"], strict=True))
    unknown_ids: list[str] = []
    offering_id: Hashable
    for offering_id, group in cloud.groupby("offering_id", sort=True):
        if offering_id not in off.index:
            unknown_ids.append(str(offering_id))
            first = group.iloc[0]
            where = (
                "region not in regions.csv"
                if (first["provider"], first["region"]) not in known_regions
                else "offering not in offerings.csv"
            )
            for r in price_rows(group):
                record(offering_id, r.provider, r.region, r.mode, None, r.price_usd, "unknown",
                       False, where, r.line)  # fmt: skip
            continue
        # offering ids are unique in a catalog, so .loc gives the offering's row
        base = cast(pd.Series, off.loc[offering_id])
        values, provenance = _decide_offering(offering_id, base, group, judge, record)
        new_values.update(values)
        if provenance:
            new_provenance[offering_id] = provenance
    for (offering_id, column), value in new_values.items():
        off.at[offering_id, column] = value
    _set_provenance(off, new_provenance)

    # --- offerings the update adds, or does not mention
    if add_new and update.offerings is not None and unknown_ids:
        off = _add_offerings(off, update.offerings, unknown_ids, catalog, rows)
    if update.covers:
        mentioned = set(cloud["offering_id"])
        for offering_id, row in catalog.offerings.iterrows():
            if row["provider"] in update.covers and offering_id not in mentioned:
                record(offering_id, row["provider"], row["region"], "", None, None, "missing",
                       False, "not in the update; old prices kept")  # fmt: skip

    if rows and all(r["status"] in ("unknown", "missing") for r in rows):
        raise ProcureError(
            f"the price update names nothing in the catalog ({len(update.prices)} prices, "
            "every offering unknown)",
            file=str(update.source),
            fix="check the provider and region names, or pass --add-new to add its offerings",
        )
    report = PriceReport(
        rows=pd.DataFrame(rows, columns=_REPORT_COLUMNS),
        source=update.source,
        kind=update.kind,
        max_factor=max_factor,
        skipped=dict(update.skipped),
    )
    new_catalog = replace(catalog, offerings=off, servers=srv)
    return Repriced(catalog=new_catalog, report=report)


#: Judges a price move: (old USD, new USD) -> (status, note); old NaN for a new mode.
Judge = Callable[[float, float], tuple[str, str]]


class Record(Protocol):
    """Records one price decision as a report row (prices in USD; ``None`` when none)."""

    def __call__(
        self,
        key: Hashable,
        provider: str,
        region: str,
        mode: str,
        old: float | None,
        new: float | None,
        status: str,
        applied: bool,
        note: str = "",
        line: int = 0,
    ) -> None: ...


def _recorder(rows: list[dict]) -> Record:
    """A :class:`Record` that appends each decision to ``rows`` (:data:`_REPORT_COLUMNS`)."""

    def record(
        key: Hashable,
        provider: str,
        region: str,
        mode: str,
        old: float | None,
        new: float | None,
        status: str,
        applied: bool,
        note: str = "",
        line: int = 0,
    ) -> None:
        ratio = new / old if old and old == old and new is not None and new == new else float("nan")
        rows.append(
            {
                "offering_id": key,
                "provider": provider,
                "region": region,
                "mode": mode,
                "old_usd": float(old) if old is not None else float("nan"),
                "new_usd": float(new) if new is not None else float("nan"),
                "ratio": ratio,
                "status": status,
                "applied": applied,
                "note": note,
                "line": int(line),
            }
        )

    return record


#: Columns of an offering's provenance per price group: (date, confidence, source).
_PROVENANCE_COLUMNS = {
    "price": ("price_date", "price_confidence", "source"),
    "reserved": ("reserved_price_date", "reserved_price_confidence", "reserved_source"),
}


def _set_provenance(
    off: pd.DataFrame, provenance: dict[Hashable, dict[str, tuple[str, str, str]]]
) -> None:
    """Write the provenance of applied prices into ``off`` in place: per offering and price
    group (``price``: on-demand and spot, ``reserved``) its date, confidence and source;
    new on-demand or spot prices are in USD."""
    for offering_id, groups in provenance.items():
        for group, values in groups.items():
            for column, value in zip(_PROVENANCE_COLUMNS[group], values, strict=True):
                off.at[offering_id, column] = value
        if "price" in groups and "currency" in off.columns:
            off.at[offering_id, "currency"] = BASE_CURRENCY


def _decide_servers(prices: pd.DataFrame, srv: pd.DataFrame, judge: Judge, record: Record) -> None:
    """Owned servers' capex: each price judged, applied to ``srv`` in place (with its
    provenance), recorded."""
    for r in price_rows(prices):
        if r.offering_id not in srv.index:
            record(r.offering_id, OWNED, "", OWNED, None, r.price_usd, "unknown", False,
                   "server not in servers.csv", r.line)  # fmt: skip
            continue
        # the stubs type a cell as any scalar; capex_usd is a number
        old = float(srv.at[r.offering_id, "capex_usd"])  # type: ignore[arg-type]
        status, note = judge(old, r.price_usd)
        applied = status in APPLIED_STATUSES
        if applied:
            srv.at[r.offering_id, "capex_usd"] = float(r.price_usd)
            srv.at[r.offering_id, "price_date"] = r.price_date
            srv.at[r.offering_id, "price_confidence"] = r.price_confidence
            srv.at[r.offering_id, "currency"] = BASE_CURRENCY
            srv.at[r.offering_id, "source"] = f"capex from {r.price_source}; " + cast(
                str, srv.at[r.offering_id, "source"]
            )
        record(r.offering_id, OWNED, "", OWNED, old, r.price_usd, status, applied, note, r.line)


def _decide_offering(
    offering_id: Hashable, base: pd.Series, group: pd.DataFrame, judge: Judge, record: Record
) -> tuple[dict[tuple[Hashable, str], float], dict[str, tuple[str, str, str]]]:
    """The prices of one catalog offering the update moves: each given mode judged;
    reserved prices not given move with on-demand; nothing applied that would put a
    discounted mode above on-demand. Returns ((offering, column) -> new price, the
    provenance of what was applied: price group -> (date, confidence, source)); every
    decision is ``record``-ed."""
    values: dict[tuple[Hashable, str], float] = {}
    given = {r.mode: r for r in price_rows(group)}
    decided: dict[str, tuple[float, float, str, str, int]] = {}
    ceiling = ceiling_usd(_count(base.get("accelerators_per_instance")))
    for mode, r in given.items():
        old = float(base[PRICE_COLUMNS[mode]]) if pd.notna(base[PRICE_COLUMNS[mode]]) else None
        status, note = judge(old if old is not None else float("nan"), r.price_usd)
        if r.price_usd > ceiling:  # not even --accept-suspicious takes it (price_holds)
            status = "suspicious"
            note = f"above the market ceiling ${ceiling:,.0f} per instance-hour; not applied"
        decided[mode] = (
            old if old is not None else float("nan"),
            r.price_usd,
            status,
            note,
            r.line,
        )
    # reserved prices not in the update move with on-demand
    od = decided.get("on_demand")
    if od is not None and od[2] == "changed":
        factor = od[1] / od[0]
        for mode in _RESERVED:
            old = base[PRICE_COLUMNS[mode]]
            if mode not in decided and pd.notna(old):
                decided[mode] = (
                    float(old),
                    float(old) * factor,
                    "derived",
                    "moved with on-demand (discount kept)",
                    0,
                )
    # consistency: discounted modes never above on-demand
    final = {m: float(base[c]) if pd.notna(base[c]) else None for m, c in PRICE_COLUMNS.items()}
    for mode, (_, new, status, _, _) in decided.items():
        if status in APPLIED_STATUSES:
            final[mode] = new
    # on_demand_usd_per_hour is a required, non-null catalog column: final["on_demand"] is set
    dearer = [
        m
        for m in _DISCOUNTED
        if final[m] is not None and final[m] > final["on_demand"] * 1.0001  # type: ignore[operator]
    ]
    inconsistent = bool(dearer) and any(
        decided.get(m, (0, 0, "unchanged"))[2] in APPLIED_STATUSES for m in ("on_demand", *dearer)
    )
    provenance: dict[str, tuple[str, str, str]] = {}
    for mode, (old, new, status, note, line) in sorted(decided.items()):
        applied = status in APPLIED_STATUSES
        if inconsistent and applied:
            status, applied = "inconsistent", False
            note = (
                f"{dearer[0]} ${final[dearer[0]]:,.4g}/h would exceed on-demand "
                f"${final['on_demand']:,.4g}/h"
            )
        if applied:
            values[(offering_id, PRICE_COLUMNS[mode])] = new
            provenance[_group(mode)] = _applied_provenance(mode, given, base)
        record(offering_id, base["provider"], base["region"], mode, old, new, status,
               applied, note, line)  # fmt: skip
    return values, provenance


def _count(value: object) -> int:
    """An accelerator count cell as an int (0 when empty)."""
    # the stubs take scalars only; pandas coerces None or any other object to NaN
    number = pd.to_numeric(value, errors="coerce")  # type: ignore[call-overload]
    return int(number) if pd.notna(number) else 0


def _group(mode: str) -> str:
    return "reserved" if mode in _RESERVED else "price"


def _applied_provenance(
    mode: str, given: dict[str, PriceRow], base: pd.Series
) -> tuple[str, str, str]:
    """(date, confidence, source) of an applied price: the update row's; a reserved price
    moved with on-demand keeps the catalog's discount, so it is no stronger than the
    catalog's reserved price and cites both."""
    if mode in given:
        r = given[mode]
        return r.price_date, r.price_confidence, r.price_source
    r = given["on_demand"]
    old = str(base.get("reserved_price_confidence", "") or "unverified")
    level = min((r.price_confidence, old), key=confidence_rank)
    return (
        r.price_date,
        level,
        f"{r.price_source}, with the catalog's discount ({base.get('reserved_source', '')})",
    )


def _add_offerings(
    off: pd.DataFrame,
    offerings: pd.DataFrame,
    ids: list[str],
    catalog: Catalog,
    rows: list[dict],
) -> pd.DataFrame:
    """Append unknown offerings whose region and accelerator the catalog knows."""
    known_regions = set(zip(catalog.regions["provider"], catalog.regions["region"], strict=True))
    new = offerings[offerings["offering_id"].isin(ids)].copy()
    ok = np.array(
        [
            (p, r) in known_regions and a in catalog.accelerators.index
            for p, r, a in zip(new["provider"], new["region"], new["accelerator_id"], strict=True)
        ],
        dtype=bool,
    )
    new = new[ok]
    if new.empty:
        return off
    for column in off.columns:
        if column not in new.columns:
            new[column] = np.nan
    defaults: dict[str, str | float] = {
        "currency": BASE_CURRENCY,
        "price_date": UNKNOWN_DATE,
        "price_confidence": "unverified",
        "price_note": "",
        "usd_per_unit": 1.0,
        "exchange_rate_date": "",
    }
    for column, value in defaults.items():
        if column in new.columns:
            new[column] = new[column].fillna(value).replace("", value)
    new["price_date"] = new["price_date"].map(_day)
    for own, row in (
        ("reserved_price_date", "price_date"),
        ("reserved_price_confidence", "price_confidence"),
        ("reserved_source", "source"),
    ):
        if own in new.columns:
            new[own] = new[own].fillna("").where(new[own].fillna("") != "", new[row])
    new = new[list(off.columns)]
    for column, declared in SCHEMAS["offerings.csv"].items():
        if declared.dtype == "bool":
            new[column] = new[column].astype(bool)
        elif declared.dtype == "int":
            new[column] = pd.to_numeric(new[column], errors="coerce").astype("Int64")
        elif declared.dtype == "float":
            new[column] = pd.to_numeric(new[column], errors="coerce").astype(float)
    added = set(new["offering_id"])
    for r in rows:
        if r["status"] == "unknown" and r["offering_id"] in added:
            r["status"], r["applied"], r["note"] = "added", True, "new offering added"
    new.index = pd.Index(new["offering_id"], name=off.index.name)
    return pd.concat([off, new]).sort_index(kind="stable")
