"""Reading a price update from any source procure knows: our price CSV, a whole catalog
(a folder or an offerings.csv) or a SkyPilot ``vms.csv`` (:func:`read_price_update`)."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd

from solver.errors import ProcureError
from solver.inputs.catalog import load_catalog
from solver.inputs.price_traps import (
    check_csv_currency,
    check_duplicate_offerings,
    check_field_counts,
    check_price_dates,
    read_price_text,
)
from solver.inputs.prices.update import (
    OWNED,
    PRICE_COLUMNS,
    RESERVED_MODES,
    PriceUpdate,
    price_day,
    price_frame,
)
from solver.inputs.provenance import BASE_CURRENCY, CONFIDENCE_LEVELS


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
                "price_date": price_day(str(r.date).strip() or price_date),
                "line": i,
                "price_confidence": _csv_confidence(r, path, i),
                "price_source": f"price update {path}, line {i}",
            }
        )
    return PriceUpdate(prices=price_frame(rows), kind="csv", source=str(path))


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
                own = "reserved_" if mode in RESERVED_MODES else ""
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
                        "price_date": price_day(
                            price_date
                            or _cell(r.get(f"{own}price_date"))
                            or _cell(r.get("price_date"))
                        ),
                        "line": 0,
                        "price_confidence": level or "unverified",
                        "price_source": f"price update {source}: {cited}" if cited else source,
                    }
                )
    return price_frame(rows)


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
                "price_date": price_day(price_date or str(row["price_date"])),
                "line": 0,
                "price_confidence": str(row["price_confidence"]),
                "price_source": f"price update {path}: {row['source']}",
            }
            for sid, row in new.servers.iterrows()
        ]
        prices = pd.concat([prices, price_frame(servers)], ignore_index=True)
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
