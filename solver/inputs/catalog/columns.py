"""One catalog CSV read into a table: parsed once as text, each column checked against its
declaration (:mod:`solver.inputs.tables`) and converted to its type, every bad cell
refused with its file, line and column."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pandas as pd

from solver.errors import ProcureError
from solver.inputs.provenance import BASE_CURRENCY, UNKNOWN_DATE, parse_price_date
from solver.inputs.tables import CATALOG_TABLES, Column
from solver.inputs.yamlio import read_text_file

# No catalog figure (TFLOPS, USD, kW, instances) comes near this; a larger one is a typo
# or an attack, and would overflow the model's arithmetic.
MAX_VALUE = 1e12

#: Every catalog file's columns (:mod:`solver.inputs.tables`): the loader checks and
#: coerces each by its declaration.
SCHEMAS: dict[str, dict[str, Column]] = CATALOG_TABLES

#: Catalog files a folder may leave out (then every provider's tier is "unknown", every
#: price must be in USD, and every offering is in one zone, its region).
OPTIONAL_FILES = {"providers.csv", "exchange_rates.csv", "zones.csv"}

_TRUE = {"true", "yes", "1", "y", "t"}
_FALSE = {"false", "no", "0", "n", "f", ""}


# Columns added after the first catalogs: a catalog without them still loads, with
# these values (no FP4 tensor path; memory in decimal GB as written).
# A catalog from before prices carried their provenance loads with every price
# in USD, of confidence unverified (nothing says more) and its date as written, in words,
# in price_note (:func:`_legacy_price_dates`).
DEFAULTED_COLUMNS: dict[str, dict[str, str]] = {
    "accelerators.csv": {"fp4_dense_tflops": "0", "memory_unit": "GB"},
    "sites.csv": {"staff_usd_per_server_year": "0"},
    # dense models: one expert, always used; standard (not latent) KV cache
    "models.csv": {"experts": "1", "experts_active": "1", "kv_latent_dim": "0"},
    "offerings.csv": {
        "currency": BASE_CURRENCY,
        "price_confidence": "unverified",
        "reserved_price_date": "",
        "reserved_price_confidence": "",
        "reserved_source": "",
        # a catalog from before the bases: its dates are what the source observed (the
        # column's old meaning), and nothing says its currency
        "price_date_basis": "published",
        "currency_basis": "assumed",
    },
    "servers.csv": {
        "currency": BASE_CURRENCY,
        "price_date": UNKNOWN_DATE,
        "price_confidence": "unverified",
    },
}


def _parse_bool(value: object) -> bool | None:
    text = str(value).strip().lower() if value is not None and value == value else ""
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return None


def _number_problem(
    column: Column, values: pd.Series, numbers: pd.Series
) -> tuple[int, str, str] | None:
    """The first bad cell of a numeric column: (row index, message, fix), or None."""
    name = column.name
    unparsable = numbers.isna() & (values != "")
    empty = values == ""
    problem = None
    if unparsable.any():
        idx = int(np.flatnonzero(unparsable.to_numpy())[0])
        problem = (
            idx,
            f"{name} is not a number: {values.iloc[idx]!r}",
            "write a plain number",
        )
    elif empty.any() and not column.nullable:
        idx = int(np.flatnonzero(empty.to_numpy())[0])
        problem = (idx, f"{name} is missing", f"fill in {name}")
    elif not np.isfinite(numbers.fillna(0.0)).all() or (numbers.abs() > MAX_VALUE).any():
        idx = int(np.flatnonzero(~(numbers.fillna(0.0).abs() <= MAX_VALUE))[0])
        problem = (
            idx,
            f"{name} is {values.iloc[idx]}, beyond any real figure",
            f"write the vendor's figure for {name} (a finite number)",
        )
    else:
        if column.positive:
            bad = numbers <= 0
            need = "positive"
        else:
            bad = numbers < 0
            need = "zero or more"
        if bad.any():
            idx = int(np.flatnonzero(bad.fillna(False).to_numpy())[0])
            problem = (
                idx,
                f"{name} is {values.iloc[idx]}; it must be {need}",
                f"correct {name} (a price or quantity cannot be negative)",
            )
        elif column.dtype == "int":
            frac = numbers.notna() & (numbers != numbers.round())
            if frac.any():
                idx = int(np.flatnonzero(frac.to_numpy())[0])
                problem = (
                    idx,
                    f"{name} must be a whole number, got {values.iloc[idx]}",
                    "write a whole number",
                )
    return problem


def header_names(header: list[str]) -> list[str]:
    """Column names as pandas read_csv names them: ``Unnamed: i`` for a blank one, ``x.1``
    for the second ``x`` (of two columns of one name, the first is the one read)."""
    names = [cell if cell != "" else f"Unnamed: {i}" for i, cell in enumerate(header)]
    counts: dict[str, int] = {}
    for i, name in enumerate(names):
        base, count = name, counts.get(name, 0)
        while count > 0:
            counts[base] = count + 1
            name = f"{base}.{count}"
            count = count + 1 if name in names else counts.get(name, 0)
        names[i] = name
        counts[name] = count + 1
    return names


def _parse_csv(path: Path, file: str) -> pd.DataFrame:
    """Parse one catalog CSV once, every cell as text; refused when it has no header, a
    row of another width or a quote left open."""
    text = read_text_file(path, what="catalog CSV", fix=f"{file} must be a CSV file")
    # A closing line holding only "" reads as one empty field, unless a quote is still
    # open at the end of the file: then it is swallowed into that field.
    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff") + '\n""\n'))
    rows: list[list[str]] = []
    first_line = 1  # where the record being read starts
    try:
        for row in reader:
            rows.append(row)
            last_start, first_line = first_line, reader.line_num + 1
    except csv.Error as exc:
        raise ProcureError(
            f"not a readable CSV: {exc}", file=str(path), fix="fix the quoting on that line"
        ) from None
    open_quote = rows[-1] != [""]
    if not open_quote:
        rows.pop()
    if not rows or not any(cell.strip() for cell in rows[0]):
        raise ProcureError(
            "the file is empty (no header line)",
            file=str(path),
            fix=f"start with the header: {', '.join(SCHEMAS[file])}",
        )
    width = len(rows[0])
    for number, row in enumerate(rows[1:], start=2):
        if row and len(row) != width:
            raise ProcureError(
                f"the row has {len(row)} fields but the header has {width}",
                file=str(path),
                field=f"line {number}",
                fix="remove the extra (or add the missing) commas; quote text that has commas",
            )
    if open_quote:
        raise ProcureError(
            "not a readable CSV: a quoted field is never closed",
            file=str(path),
            field=f"line {last_start}",
            fix="fix the quoting on that line",
        )
    body = [row for row in rows[1:] if any(cell.strip() for cell in row) or len(row) > 1]
    return pd.DataFrame(body, columns=header_names(rows[0]), dtype=str)


def _coerced(column: Column, raw: pd.Series, path: Path) -> pd.Series:
    """One column's cells checked against its declaration and converted to its type."""
    name = column.name
    values: pd.Series = raw.str.strip()
    if column.dtype == "str":
        empty = values == ""
        if empty.any() and not column.nullable:
            line = int(np.flatnonzero(empty.to_numpy())[0]) + 2
            raise ProcureError(
                f"{name} is empty",
                file=str(path),
                field=f"line {line}, {name}",
                fix=f"fill in {name}",
            )
        if column.unique:
            dup = values[values.duplicated()]
            if not dup.empty:
                line = int(dup.index[0]) + 2
                raise ProcureError(
                    f"duplicate {name} {dup.iloc[0]!r}",
                    file=str(path),
                    field=f"line {line}, {name}",
                    fix=f"each {name} must appear once; remove or rename the duplicate",
                )
        return values
    if column.dtype == "bool":
        parsed = values.map(_parse_bool)
        bad = parsed.isna()
        if bad.any():
            line = int(np.flatnonzero(bad.to_numpy())[0]) + 2
            raise ProcureError(
                f"{name} must be true or false, got {values[bad].iloc[0]!r}",
                file=str(path),
                field=f"line {line}, {name}",
                fix="write true or false",
            )
        return parsed.astype(bool)
    numbers = pd.to_numeric(values.replace("", np.nan), errors="coerce")
    problem = _number_problem(column, values, numbers)
    if problem:
        idx, message, fix = problem
        raise ProcureError(message, file=str(path), field=f"line {idx + 2}, {name}", fix=fix)
    return numbers.astype("Int64") if column.dtype == "int" else numbers.astype(float)


def read_table(directory: Path, file: str) -> pd.DataFrame:
    """Read one CSV (one parse) and coerce each column to its declared type."""
    path = directory / file
    if not path.is_file():
        raise ProcureError(
            "catalog file missing", file=str(path), fix=f"add {file} (see catalogs/ in the repo)"
        )
    raw = _parse_csv(path, file)
    schema = SCHEMAS[file]
    if file == "offerings.csv" and "price_note" not in raw.columns and "price_date" in raw:
        raw = _legacy_price_dates(raw)
    for added, default in DEFAULTED_COLUMNS.get(file, {}).items():
        if added not in raw.columns:
            raw[added] = default
    missing = [c for c in schema if c not in raw.columns]
    if missing:
        raise ProcureError(
            f"missing column(s) {missing}",
            file=str(path),
            field="line 1 (header)",
            fix=f"the header must contain: {', '.join(schema)}",
        )
    out = raw.copy()
    for name, column in schema.items():
        out[name] = _coerced(column, raw[name], path)
    return out


def _legacy_price_dates(raw: pd.DataFrame) -> pd.DataFrame:
    """An offerings table written before ``price_note`` existed: its ``price_date`` was free
    text ("after 2025-06 (v8, read 2026-11)"). The text moves to ``price_note``; the date is
    kept where it is a ``YYYY-MM-DD`` day, else it is unknown."""
    out = raw.copy()
    text = out["price_date"].astype(str).str.strip()
    out["price_note"] = text
    out["price_date"] = [t if parse_price_date(t) is not None else UNKNOWN_DATE for t in text]
    return out
