"""Load and validate the catalog (catalogs/*.csv) into typed tables.

The catalog is six CSV files, one row per thing, units in the column names:

``accelerators.csv``
    one row per accelerator type (dense TFLOPS, memory, bandwidth, power, ...).
``offerings.csv``
    one row per cloud instance type in a region, prices per instance-hour.
``regions.csv``
    one row per (provider, region): residency zone, grid intensity, PUE.
``servers.csv`` and ``sites.csv``
    servers one can buy, and the sites that can host them.
``models.csv``
    model presets (shape of common open models).
``providers.csv`` (optional)
    one row per provider: tier (marketplace < neocloud < hyperscaler), SLA, data
    terms, hosts, source. When present, every offering's provider must be in it.
``exchange_rates.csv`` (optional)
    dated rates, US dollars per unit of a currency, each with its source. A price in
    another currency than USD (offerings' and servers' ``currency``) is converted to USD
    on load at its currency's latest rate; without a rate it is refused.

Every price carries its date, confidence and currency (:mod:`solver.inputs.provenance`).

:func:`load_catalog` refuses a broken catalog with one :class:`ProcureError` that
names the file, the line and the field.
"""

from __future__ import annotations

import csv
import difflib
import hashlib
import io
import os
import pickle
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, cast

import numpy as np
import pandas as pd

from solver.errors import ProcureError, closest, suggestion
from solver.inputs import provenance as provenance_module
from solver.inputs import tables as tables_module
from solver.inputs.provenance import (
    BASE_CURRENCY,
    CONFIDENCE_LEVELS,
    UNKNOWN_DATE,
    is_currency_code,
    is_price_date,
    parse_price_date,
)
from solver.inputs.tables import CATALOG_TABLES, Column
from solver.inputs.yamlio import read_text_file
from solver.physics import shapes
from solver.physics.shapes import PARAMS_TOLERANCE, active_agrees, shape_count
from solver.units import Mode


def _shipped_catalog_dir() -> Path:
    """The shipped catalog: ``catalogs/`` beside the package in a source checkout (or an
    editable install), else where a wheel installs it (``<prefix>/share/procure/catalogs``,
    pyproject's data-files)."""
    source = Path(__file__).resolve().parents[2] / "catalogs"
    if (source / "offerings.csv").is_file():
        return source
    for prefix in (sys.prefix, sys.base_prefix):
        installed = Path(prefix) / "share" / "procure" / "catalogs"
        if (installed / "offerings.csv").is_file():
            return installed
    return source  # absent: load_catalog says which file is missing


DEFAULT_CATALOG_DIR = _shipped_catalog_dir()

# No catalog figure (TFLOPS, USD, kW, instances) comes near this; a larger one is a typo
# or an attack, and would overflow the model's arithmetic.
MAX_VALUE = 1e12

#: Every catalog file's columns (:mod:`solver.inputs.tables`): the loader checks and
#: coerces each by its declaration.
SCHEMAS: dict[str, dict[str, Column]] = CATALOG_TABLES

#: Catalog files a folder may leave out (then every provider's tier is "unknown", and
#: every price must be in USD).
OPTIONAL_FILES = {"providers.csv", "exchange_rates.csv"}

#: Provider tiers, lowest first (issue 11): a marketplace of third-party hosts, a neocloud
#: running its own datacenters, a hyperscaler. ``min_tier`` admits its tier and those above.
TIERS: tuple[str, ...] = ("marketplace", "neocloud", "hyperscaler")
UNKNOWN_TIER = "unknown"

# Availability caps (offerings.csv ``availability_cap_instances``) are assumptions: no
# provider publishes how many instances one buyer can get, so the importer takes 16 (64)
# instances of an 8-accelerator (smaller) size at a hyperscaler, 8 (32) at a neocloud and
# 4 (16) elsewhere (solver.inputs.importers.skypilot.default_availability_cap). Where the
# catalog counts listings (Vast: one per host offering the type, catalogs/SOURCES.md) the
# cap is a listed figure. A cap the problem gives (availability_caps) is the problem's.
LISTED_CAP_PROVIDERS = frozenset({"vast"})
CAP_BASES = ("problem", "listed", "assumed")


def availability_cap_basis(provider: str, offering_id: str, problem_caps: Mapping) -> str:
    """Where a rented offering's availability cap comes from: ``problem`` (the problem's
    ``availability_caps``), ``listed`` (the catalog counts listings) or ``assumed``."""
    if offering_id in problem_caps:
        return "problem"
    return "listed" if provider in LISTED_CAP_PROVIDERS else "assumed"


def tier_rank(tier: str) -> int:
    """Rank of a tier: 0 for unknown, 1 marketplace, 2 neocloud, 3 hyperscaler."""
    return TIERS.index(tier) + 1 if tier in TIERS else 0


def tier_allowed(tier: str, floor: str, *, default: bool = False) -> bool:
    """Whether a provider of ``tier`` passes a tier floor: owned servers always do; an
    explicit floor admits its tier and those above; the online-serving default (``default``)
    leaves out marketplace hosts only (a provider of unknown tier is not known to be one)."""
    if tier == "owned":
        return True
    if default:
        return tier != "marketplace"
    return tier_rank(tier) >= tier_rank(floor)


_TRUE = {"true", "yes", "1", "y", "t"}
_FALSE = {"false", "no", "0", "n", "f", ""}


@dataclass(frozen=True)
class ExchangeRate:
    """US dollars per unit of a currency on a date, with its source."""

    currency: str
    usd_per_unit: float
    date: str
    source: str


@dataclass(frozen=True)
class Catalog:
    """The validated catalog: one DataFrame per file, indexed by its key."""

    accelerators: pd.DataFrame  # index accelerator_id
    offerings: pd.DataFrame  # index offering_id
    regions: pd.DataFrame  # index (provider, region)
    servers: pd.DataFrame  # index server_id
    sites: pd.DataFrame  # index site_id
    models: pd.DataFrame  # index model_id
    directory: str
    providers: pd.DataFrame | None = None  # index provider; None without providers.csv
    # ids of the sites a problem added to ``sites`` (solver.inputs.sites.with_problem_sites)
    problem_sites: tuple[str, ...] = ()
    exchange_rates: pd.DataFrame | None = None  # date, currency, usd_per_unit, source

    def rate(
        self,
        currency: str,
        *,
        file: str | None = None,
        field: str | None = None,
        instead: str = "state the price in USD",
    ) -> ExchangeRate:
        """The latest :class:`ExchangeRate` of ``currency`` (USD is 1 by definition).

        Raises
        ------
        ProcureError
            The catalog has no rate for it (naming ``file`` and ``field``; the fix offers
            a rate or ``instead``).
        """
        return exchange_rate(
            self.exchange_rates, currency, self.directory, file, field, instead=instead
        )

    def tier_of(self, provider: str) -> str:
        """A provider's tier from providers.csv; ``"owned"`` for owned servers, else unknown."""
        if provider == "owned":
            return "owned"
        if self.providers is None or provider not in self.providers.index:
            return UNKNOWN_TIER
        return str(self.providers.at[provider, "tier"])

    def sla_of(self, provider: str) -> str:
        """A provider's service-level agreement in words (providers.csv ``sla``); ``""`` for
        owned servers (your own site) and for a provider the file does not list."""
        if provider == "owned" or self.providers is None or provider not in self.providers.index:
            return ""
        value = self.providers.at[provider, "sla"]
        # the stubs' .at result lists more kinds than isna's scalar overload; it is a cell
        return "" if pd.isna(value) else str(value)  # type: ignore[arg-type]

    def counts(self) -> dict[str, int]:
        """Row counts and the number of providers and regions offered."""
        return {
            "accelerators": len(self.accelerators),
            "offerings": len(self.offerings),
            "providers": self.offerings["provider"].nunique(),
            "regions": len(self.regions),
            "servers": len(self.servers),
            "sites": len(self.sites),
            "models": len(self.models),
        }

    def resolve_accelerator(self, name: str) -> str:
        """Map a forgiving accelerator name (``H100``, ``h100_sxm``, ...) to its id."""
        return _resolve(name, self.accelerators, "accelerator", "catalogs/accelerators.csv")

    def resolve_model(self, name: str) -> str:
        """Map a model preset name (``Llama 3 70B``, ``llama3-70b``,
        ``meta-llama/Llama-3.3-70B-Instruct``) to its id; an unknown one is refused with the
        presets of its family and size first (:func:`rank_model_presets`)."""
        return _resolve(
            name, self.models, "model preset", "catalogs/models.csv", rank=rank_model_presets
        )


def normalise_name(name: str) -> str:
    """Lowercase and drop separators: 'H100 SXM5 80GB' -> 'h100sxm580gb'."""
    return re.sub(r"[^a-z0-9]", "", str(name).lower())


#: a "did you mean" ranking: (what was typed, alias -> id, alias -> as written) -> ids
Ranker = Callable[[str, dict[str, str], dict[str, str]], list[str]]


def _alias_names(table: pd.DataFrame) -> dict[str, str]:
    """Separator-free alias -> the alias as written (the first row to claim it)."""
    names: dict[str, str] = {}
    for key, row in table.iterrows():
        aliases = row.get("aliases")
        written = [str(key), str(row.get("name", ""))]
        written += aliases.split(";") if isinstance(aliases, str) and aliases else []
        for alias in written:
            names.setdefault(normalise_name(alias), alias)
    return names


def _alias_table(table: pd.DataFrame) -> dict[str, str]:
    lookup: dict[str, str] = {}
    for key, row in table.iterrows():
        names = [str(key), str(row.get("name", ""))]
        aliases = row.get("aliases")
        if isinstance(aliases, str) and aliases:
            names += aliases.split(";")
        for alias in names:
            norm = normalise_name(alias)
            if norm:
                lookup.setdefault(norm, str(key))
    return lookup


# A model name's size: "70b", "8x7b", "7.6b" (the first one: "235b" in "235b-a22b").
_MODEL_SIZE_RE = re.compile(r"(?:\d+x)?\d+(?:\.\d+)?b(?![a-z0-9])")


def _model_family_and_size(name: str) -> tuple[str, str]:
    """The family (leading letters after any ``org/``) and size of a model name:
    ``meta-llama/Llama-3.3-70B-Instruct`` -> (``llama``, ``70b``); ``mixtral-8x7b`` ->
    (``mixtral``, ``8x7b``); ``deepseek-v3`` -> (``deepseek``, ``""``)."""
    base = str(name).lower().rsplit("/", 1)[-1]
    family = re.match(r"[a-z]+", base)
    size = _MODEL_SIZE_RE.search(base)
    return (family.group(0) if family else "", size.group(0) if size else "")


def rank_model_presets(name: str, lookup: dict[str, str], names: dict[str, str]) -> list[str]:
    """Preset ids for a "did you mean", most likely first.

    A preset of the same family (``llama``, ``qwen``, ``mixtral``: the leading letters of
    the name after any ``org/``) comes before any other, then one of the same size
    (``70b``), then the closer spelling (difflib's ratio of the separator-free names, best
    over the preset's id, name and aliases). Spelling alone ranked ``mistral-7b`` first for
    ``llama-3.3-70b-instruct`` (the shared "instruct"); a family is what a person means.
    Presets neither of the family nor spelled within difflib's 0.4 are left out.

    Parameters
    ----------
    name
        What was typed.
    lookup
        Separator-free alias -> preset id (every name a preset answers to).
    names
        Separator-free alias -> the alias as written (its family and size are read from it).
    """
    family, size = _model_family_and_size(name)
    norm = normalise_name(name)
    best: dict[str, tuple[bool, bool, float]] = {}
    for alias, preset in lookup.items():
        alias_family, alias_size = _model_family_and_size(names[alias])
        score = (
            bool(family) and alias_family == family,
            bool(size) and alias_size == size,
            difflib.SequenceMatcher(None, norm, alias).ratio(),
        )
        best[preset] = max(best.get(preset, score), score)
    kept = [(score, preset) for preset, score in best.items() if score[0] or score[2] >= 0.4]
    return [preset for _, preset in sorted(kept, key=lambda x: (x[0], x[1]), reverse=True)]


def _resolve(
    name: str, table: pd.DataFrame, what: str, file: str, rank: Ranker | None = None
) -> str:
    if name in table.index:
        return name
    lookup = _alias_table(table)
    norm = normalise_name(name)
    if norm in lookup:
        return lookup[norm]
    matches: list[str] = []
    if rank is not None:
        matches = rank(name, lookup, _alias_names(table))
    for alias in closest(norm, lookup, n=6):
        if lookup[alias] not in matches:
            matches.append(lookup[alias])
    fix = (
        ("did you mean " + " or ".join(repr(m) for m in matches[:3]) + "?")
        if matches
        else (suggestion(name, table.index))
    )
    raise ProcureError(f"unknown {what} {name!r}", file=file, fix=fix)


# Columns added after the first catalogs: a catalog without them still loads, with
# these values (no FP4 tensor path; memory in decimal GB as written).
# A catalog from before prices carried their provenance (issue 29) loads with every price
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
    },
    "servers.csv": {
        "currency": BASE_CURRENCY,
        "price_date": UNKNOWN_DATE,
        "price_confidence": "unverified",
    },
}

# Bytes per unit of the vendor's memory figure. HBM parts quote GiB under the name "GB"
# (an "80 GB" H100 or A100 reports 81,920 MiB in nvidia-smi; AWS Neuron and Google TPU
# documents say GiB), GDDR datacenter cards with ECC on report about the decimal figure
# (an L4 "24 GB" reports 23,034 MiB = 24.15e9 bytes): DESIGN.md section 3.
MEMORY_UNIT_BYTES: dict[str, float] = {"GB": 1e9, "GiB": 2.0**30}


def _memory_in_decimal_gb(acc: pd.DataFrame, path: Path) -> pd.DataFrame:
    """Replace the vendor's memory figure by the real capacity in 1e9 bytes.

    The figure as the vendor writes it stays in ``memory_label_gb``; ``memory_gb`` is what
    every consumer (training memory, KV cache) reads.
    """
    unit = acc["memory_unit"].replace("", "GB")
    bad = ~unit.isin(list(MEMORY_UNIT_BYTES))
    if bad.any():
        idx = int(np.flatnonzero(bad.to_numpy())[0])
        raise ProcureError(
            f"memory_unit must be GB or GiB, got {unit.iloc[idx]!r}",
            file=str(path),
            field=f"line {idx + 2}, memory_unit",
            fix="write GiB for HBM parts whose 'GB' is binary (nvidia-smi MiB / 1024), else GB",
        )
    out = acc.copy()
    out["memory_unit"] = unit
    out["memory_label_gb"] = acc["memory_gb"]
    out["memory_gb"] = acc["memory_gb"] * unit.map(MEMORY_UNIT_BYTES).astype(float) / 1e9
    return out


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


def _header_names(header: list[str]) -> list[str]:
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
    return pd.DataFrame(body, columns=_header_names(rows[0]), dtype=str)


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


def _read_table(directory: Path, file: str) -> pd.DataFrame:
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


def _refuse_row(
    table: pd.DataFrame,
    bad: pd.Series,
    path: Path,
    column: str,
    msg: Callable[[Any], str],
    fix: str,
) -> NoReturn:
    """Raise for the first row where ``bad`` holds: ``msg(value)`` names what is wrong."""
    idx = int(np.flatnonzero(bad.to_numpy())[0])
    raise ProcureError(
        msg(table[column].iloc[idx]), file=str(path), field=f"line {idx + 2}, {column}", fix=fix
    )


def _check_provenance(table: pd.DataFrame, path: Path, prefixes: tuple[str, ...]) -> None:
    """Every price's date, confidence and currency are valid words (``prefixes``: the
    column families, "" for ``price_date`` and "reserved_" for ``reserved_price_date``)."""
    bad = ~table["currency"].map(is_currency_code)
    if bad.any():
        _refuse_row(
            table, bad, path, "currency", lambda v: f"currency {v!r} is not an ISO 4217 code",
            "write the three-letter code the price is stated in, e.g. USD or EUR",
        )  # fmt: skip
    for prefix in prefixes:
        dates, levels = table[f"{prefix}price_date"], table[f"{prefix}price_confidence"]
        optional = prefix != ""
        bad = ~(dates.map(is_price_date) | (optional & (dates == "")))
        if bad.any():
            _refuse_row(
                table, bad, path, f"{prefix}price_date",
                lambda v: f"price date {v!r} is not a day",
                "write the date the source gives as YYYY-MM-DD, or unknown (keep the words in "
                "price_note)",
            )  # fmt: skip
        bad = ~(levels.isin(CONFIDENCE_LEVELS) | (optional & (levels == "")))
        if bad.any():
            _refuse_row(
                table, bad, path, f"{prefix}price_confidence",
                lambda v: f"unknown price confidence {v!r}",
                f"write one of: {', '.join(CONFIDENCE_LEVELS)} (catalogs/SOURCES.md says which)",
            )  # fmt: skip


def _read_exchange_rates(directory: Path, table: pd.DataFrame | None) -> pd.DataFrame | None:
    """exchange_rates.csv checked: real days, ISO codes, one rate per currency and day."""
    if table is None:
        return None
    path = directory / "exchange_rates.csv"
    bad = table["date"].map(parse_price_date).isna()
    if bad.any():
        _refuse_row(
            table, bad, path, "date", lambda v: f"date {v!r} is not a day",
            "write the rate's date as YYYY-MM-DD",
        )  # fmt: skip
    bad = ~table["currency"].map(is_currency_code)
    if bad.any():
        _refuse_row(
            table, bad, path, "currency", lambda v: f"currency {v!r} is not an ISO 4217 code",
            "write the three-letter code, e.g. EUR",
        )  # fmt: skip
    dup = table.duplicated(["currency", "date"])
    if dup.any():
        _refuse_row(
            table, dup, path, "currency", lambda v: f"two rates for {v} on one date",
            "keep one rate per currency and date",
        )  # fmt: skip
    return table.sort_values(["currency", "date"], kind="stable").reset_index(drop=True)


def exchange_rate(
    rates: pd.DataFrame | None,
    currency: str,
    directory: str,
    file: str | None = None,
    field: str | None = None,
    *,
    instead: str = "state the price in USD",
) -> ExchangeRate:
    """The latest rate of ``currency`` in ``rates`` (USD: 1).

    Raises
    ------
    ProcureError
        No rate for the currency: naming ``file`` and ``field`` and how to add one.
    """
    if currency == BASE_CURRENCY:
        return ExchangeRate(BASE_CURRENCY, 1.0, "", "US dollar (the plan's unit)")
    found = rates[rates["currency"] == currency] if rates is not None else pd.DataFrame()
    if found.empty:
        where = str(Path(directory) / "exchange_rates.csv")
        raise ProcureError(
            f"{currency} has no exchange rate in the catalog ({where})",
            file=file,
            field=field,
            fix=f"add a row 'date,currency,usd_per_unit,source' for {currency} to {where} "
            f"(e.g. the ECB euro reference rate with its date), or {instead}",
        )
    last = found.iloc[-1]
    return ExchangeRate(
        currency, float(last["usd_per_unit"]), str(last["date"]), str(last["source"])
    )


#: Money columns converted to USD on load, per file.
MONEY_COLUMNS: dict[str, tuple[str, ...]] = {
    "offerings.csv": (
        "on_demand_usd_per_hour",
        "spot_usd_per_hour",
        "reserved_1y_usd_per_hour",
        "reserved_3y_usd_per_hour",
    ),
    "servers.csv": ("capex_usd", "maintenance_usd_per_year"),
}


def _in_usd(
    table: pd.DataFrame, file: str, directory: Path, rates: pd.DataFrame | None
) -> pd.DataFrame:
    """``table`` with its money columns in USD: each row's figures times its currency's
    latest rate; ``usd_per_unit`` and ``exchange_rate_date`` say what was applied."""
    out = table.copy()
    factor = pd.Series(1.0, index=out.index)
    dated = pd.Series("", index=out.index)
    for currency in sorted(set(out["currency"]) - {BASE_CURRENCY}):
        rows = out["currency"] == currency
        line = int(np.flatnonzero(rows.to_numpy())[0]) + 2
        rate = exchange_rate(
            rates, currency, str(directory), str(directory / file), f"line {line}, currency"
        )
        factor[rows], dated[rows] = rate.usd_per_unit, rate.date
    for column in MONEY_COLUMNS[file]:
        out[column] = out[column] * factor
    out["usd_per_unit"] = factor.astype(float)
    out["exchange_rate_date"] = dated
    return out


def _reserved_as_on_demand(off: pd.DataFrame) -> pd.DataFrame:
    """Reserved prices without a provenance of their own have the row's."""
    out = off.copy()
    for own, row in (
        ("reserved_price_date", "price_date"),
        ("reserved_price_confidence", "price_confidence"),
        ("reserved_source", "source"),
    ):
        out[own] = out[own].where(out[own] != "", out[row])
    return out


def _check_reference(
    table: pd.DataFrame, column: str, known: pd.Index, file: Path, target: str
) -> None:
    bad = ~table[column].isin(known)
    if bad.any():
        idx = int(np.flatnonzero(bad.to_numpy())[0])
        value = table[column].iloc[idx]
        raise ProcureError(
            f"{column} {value!r} is not in {target}",
            file=str(file),
            field=f"line {idx + 2}, {column}",
            fix=f"add it to {target} or correct it: {suggestion(value, known)}",
        )


def _check_models(models: pd.DataFrame, path: Path) -> None:
    """A model row's parameters and experts agree: each token uses at most all experts and
    at most all parameters, and a mixture of experts (more experts than each token uses)
    fewer active than total parameters.

    The serving physics splits the weights into shared ones and ``experts`` equal routed
    experts from these figures (:class:`solver.physics.ServedModel`), so a row where they
    disagree would give negative or missing expert weights. A row with fewer active
    parameters but no experts given (a catalog from before the experts columns) stays
    valid: its FLOPs count the active parameters and a decode step reads every weight (an
    upper bound).
    """
    experts = models["experts"].astype(float)
    active_experts = models["experts_active"].astype(float)
    params = models["params_b"].astype(float)
    active = models["active_params_b"].astype(float)
    moe = experts > active_experts
    problems = [
        (
            active_experts > experts,
            "experts_active",
            lambda r: f"experts_active {r['experts_active']} is above experts {r['experts']}",
            "experts_active is how many experts each token uses (num_experts_per_tok in "
            "config.json), at most experts (num_local_experts / num_experts / "
            "n_routed_experts); 1 and 1 for a dense model",
        ),
        (
            active > params * (1 + 1e-9),
            "active_params_b",
            lambda r: (
                f"active_params_b {r['active_params_b']:g} is above params_b {r['params_b']:g}"
            ),
            "active_params_b is the parameters one token uses, at most params_b (all of them)",
        ),
        (
            moe & (active >= params * (1 - 1e-9)),
            "active_params_b",
            lambda r: (
                f"a mixture of experts ({r['experts_active']} of {r['experts']} experts "
                f"per token) needs active_params_b below params_b, got {r['active_params_b']:g}"
            ),
            "write the active parameters per token from the model card (e.g. Mixtral 8x7B: "
            "12.9 of 46.7), or experts = experts_active = 1 for a dense model",
        ),
    ]
    for bad, column, message, fix in problems:
        if bad.any():
            idx = int(np.flatnonzero(bad.to_numpy())[0])
            raise ProcureError(
                message(models.iloc[idx]),
                file=str(path),
                field=f"line {idx + 2}, {column}",
                fix=fix,
            )
    for idx, row in enumerate(models.to_dict("records")):
        _check_model_shape(row, path, idx + 2)


def _check_model_shape(row: dict, path: Path, line: int) -> None:
    """A model row's heads divide into kv-head groups, and its parameter counts agree with
    its layers and widths within 10% (:func:`solver.physics.shapes.shape_count`; every
    shipped preset does): a dropped digit in params_b would plan the model 10x too small."""

    def number(column: str) -> float | None:
        value = row.get(column)
        return float(value) if value is not None and value == value and value > 0 else None

    layers, hidden, heads = number("layers"), number("hidden_size"), number("attention_heads")
    if layers is None or hidden is None or heads is None:
        return
    kv = number("kv_heads")
    where = {"file": str(path)}
    if kv is not None and heads % kv:
        raise ProcureError(
            f"attention_heads {heads:g} do not divide evenly by kv_heads {kv:g}",
            **where,
            field=f"line {line}, kv_heads",
            fix="set kv_heads to a divisor of attention_heads (num_key_value_heads in config.json)",
        )
    experts, active_experts = number("experts") or 1.0, number("experts_active") or 1.0
    active = float(row["active_params_b"]) * 1e9
    if experts <= active_experts and active < float(row["params_b"]) * 1e9 * (1 - 1e-9):
        return  # a mixture of experts from before the experts columns: experts unknown
    count = shape_count(
        params=float(row["params_b"]) * 1e9,
        layers=layers,
        hidden_size=hidden,
        attention_heads=heads,
        kv_heads=kv,
        head_dim=number("head_dim"),
        vocab_size=number("vocab_size"),
        experts=experts,
        experts_active=active_experts,
        compressed_kv=(number("kv_latent_dim") or 0.0) > 0,
    )
    shape = f"{layers:g} layers of hidden_size {hidden:g}"
    fix = "correct it from the model's config.json (a dropped or added digit?)"
    if not count.total_agrees:
        raise ProcureError(
            f"params_b {row['params_b']:g} disagrees with the shape by more than "
            f"{PARAMS_TOLERANCE:.0%}: {shape} hold {count.total_low / 1e9:.3g}B to "
            f"{count.total_high / 1e9:.3g}B parameters",
            **where,
            field=f"line {line}, params_b",
            fix=fix,
        )
    if experts > active_experts and not active_agrees(count, active):
        raise ProcureError(
            f"active_params_b {row['active_params_b']:g} disagrees with the shape by more "
            f"than {PARAMS_TOLERANCE:.0%}: {active_experts:g} of {experts:g} experts per token "
            f"use {count.active_low / 1e9:.3g}B to {count.active_high / 1e9:.3g}B",
            **where,
            field=f"line {line}, active_params_b",
            fix=fix,
        )


def load_catalog(
    directory: str | Path | None = None, *, cache_dir: str | Path | None = None
) -> Catalog:
    """Load and validate every catalog file in ``directory``.

    Parameters
    ----------
    directory
        Folder with the six CSV files; default the catalogs/ shipped with the repo.
    cache_dir
        Where to keep the validated catalog between runs (the CLI passes the user's
        cache folder). A cached copy is used only when every CSV in ``directory`` and
        the code that reads them are byte for byte those it was made from, so it is
        the catalog this function would return; reading it takes about 3 ms against
        about 100 ms for parsing and checking the shipped catalog. None: no cache.

    Raises
    ------
    ProcureError
        Naming the file, line and column of the first problem found.
    """
    directory = Path(directory) if directory is not None else DEFAULT_CATALOG_DIR
    if not directory.is_dir():
        raise ProcureError(
            "catalog folder not found", file=str(directory), fix="pass --catalog DIR with the CSVs"
        )
    if cache_dir is None:
        return _load_catalog(directory)
    cache = Path(cache_dir) / f"catalog-{_catalog_key(directory)}.pickle"
    try:
        with cache.open("rb") as handle:
            cached = pickle.load(handle)
        if isinstance(cached, Catalog) and cached.directory == str(directory):
            return cached
    except Exception:  # noqa: BLE001 - a missing, damaged or foreign copy: parse the files
        pass
    catalog = _load_catalog(directory)
    catalog_sha256(catalog)  # kept with it: a cached catalog needs no digest either
    _store(cache, catalog)
    return catalog


def catalog_sha256(catalog: Catalog) -> str:
    """SHA-256 of the catalog's tables as CSV in a fixed order: the same figures give the
    same digest wherever the folder is (a plan's ``inputs.catalog_sha256``).

    Worked out once per catalog and kept on it (and in its cached copy): writing eight
    tables as CSV takes about 35 ms. A catalog's tables are never changed in place; a
    changed catalog is a new object (``dataclasses.replace``), which starts without it.
    """
    known = catalog.__dict__.get("_sha256")
    if known is not None:
        return known
    tables = [
        catalog.accelerators,
        catalog.offerings,
        catalog.regions,
        catalog.servers,
        catalog.sites,
        catalog.models,
        catalog.providers if catalog.providers is not None else pd.DataFrame(),
        catalog.exchange_rates if catalog.exchange_rates is not None else pd.DataFrame(),
    ]
    digest = hashlib.sha256()
    for table in tables:
        digest.update(table.to_csv(lineterminator="\n", float_format="%.12g").encode())
        digest.update(b"\x00")
    object.__setattr__(catalog, "_sha256", digest.hexdigest())  # frozen: set once, here
    return catalog.__dict__["_sha256"]


CACHED_CATALOGS = 8  # the most recent catalogs kept in a cache folder


def _catalog_key(directory: Path) -> str:
    """A digest of every CSV in ``directory`` (name and bytes), of the code that reads
    them and of the pandas that holds them: equal keys mean an equal catalog."""
    digest = hashlib.sha256(f"{sys.version}|{pd.__version__}|{directory}".encode())
    for module in (__file__, tables_module.__file__, provenance_module.__file__, shapes.__file__):
        digest.update(Path(module).read_bytes())
    for path in sorted(directory.glob("*.csv")):
        digest.update(path.name.encode() + b"\x00" + path.read_bytes() + b"\x00")
    return digest.hexdigest()[:32]


def _store(cache: Path, catalog: Catalog) -> None:
    """Write ``catalog`` to ``cache`` whole (a temporary file renamed into place) and
    keep the :data:`CACHED_CATALOGS` newest copies; a cache that cannot be written is
    skipped, never an error."""
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        temporary = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
        temporary.write_bytes(pickle.dumps(catalog, protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(temporary, cache)
        copies = sorted(
            cache.parent.glob("catalog-*.pickle"), key=lambda p: p.stat().st_mtime, reverse=True
        )
        for old in copies[CACHED_CATALOGS:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass


def _load_catalog(directory: Path) -> Catalog:
    """Parse and check the catalog files in ``directory`` (see :func:`load_catalog`)."""
    tables = {
        file: _read_table(directory, file)
        for file in SCHEMAS
        if file not in OPTIONAL_FILES or (directory / file).is_file()
    }
    acc = _memory_in_decimal_gb(tables["accelerators.csv"], directory / "accelerators.csv")
    rates = _read_exchange_rates(directory, tables.get("exchange_rates.csv"))
    off, srv = tables["offerings.csv"], tables["servers.csv"]
    _check_provenance(off, directory / "offerings.csv", ("", "reserved_"))
    _check_provenance(srv, directory / "servers.csv", ("",))
    off = _in_usd(_reserved_as_on_demand(off), "offerings.csv", directory, rates)
    srv = _in_usd(srv, "servers.csv", directory, rates)
    reg = tables["regions.csv"]
    sites = tables["sites.csv"]
    _check_reference(
        off,
        "accelerator_id",
        pd.Index(acc["accelerator_id"]),
        directory / "offerings.csv",
        "accelerators.csv",
    )
    _check_reference(
        srv,
        "accelerator_id",
        pd.Index(acc["accelerator_id"]),
        directory / "servers.csv",
        "accelerators.csv",
    )
    reg_keys = reg["provider"] + "/" + reg["region"]
    dup = reg_keys[reg_keys.duplicated()]
    if not dup.empty:
        raise ProcureError(
            f"duplicate provider/region {dup.iloc[0]!r}",
            file=str(directory / "regions.csv"),
            field=f"line {int(dup.index[0]) + 2}",
            fix="each provider/region must appear once",
        )
    off_keys = (off["provider"] + "/" + off["region"]).rename("provider_region")
    _check_reference(
        off.assign(provider_region=off_keys),
        "provider_region",
        pd.Index(reg_keys),
        directory / "offerings.csv",
        "regions.csv",
    )
    # Prices must be ordered: a discount is never dearer than on-demand.
    for column in ("spot_usd_per_hour", "reserved_1y_usd_per_hour", "reserved_3y_usd_per_hour"):
        dearer = off[column] > off["on_demand_usd_per_hour"] * 1.0001
        if dearer.any():
            idx = int(np.flatnonzero(dearer.fillna(False).to_numpy())[0])
            raise ProcureError(
                f"{column} is above the on-demand price",
                file=str(directory / "offerings.csv"),
                field=f"line {idx + 2}, {column}",
                fix="check the price; discounted modes cost less than on-demand",
            )
    _check_models(tables["models.csv"], directory / "models.csv")
    prov = tables.get("providers.csv")
    if prov is not None:
        bad_tier = ~prov["tier"].isin(TIERS)
        if bad_tier.any():
            idx = int(np.flatnonzero(bad_tier.to_numpy())[0])
            raise ProcureError(
                f"unknown tier {prov['tier'].iloc[idx]!r} for provider "
                f"{prov['provider'].iloc[idx]!r}",
                file=str(directory / "providers.csv"),
                field=f"line {idx + 2}, tier",
                fix=f"write one of: {', '.join(TIERS)}",
            )
        _check_reference(
            off,
            "provider",
            pd.Index(prov["provider"]),
            directory / "offerings.csv",
            "providers.csv",
        )
    return Catalog(
        accelerators=acc.set_index("accelerator_id", drop=False),
        offerings=off.set_index("offering_id", drop=False),
        regions=reg.set_index(["provider", "region"], drop=False),
        servers=srv.set_index("server_id", drop=False),
        sites=sites.set_index("site_id", drop=False),
        models=tables["models.csv"].set_index("model_id", drop=False),
        directory=str(directory),
        providers=prov.set_index("provider", drop=False) if prov is not None else None,
        exchange_rates=rates,
    )


def offerings_view(
    catalog: Catalog,
    *,
    provider: str | None = None,
    accelerator: str | None = None,
    region: str | None = None,
    mode: str | None = None,
    sort: str | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """Offerings filtered for people: by provider, accelerator (any name the catalog
    knows), region prefix or residency zone, and mode; with USD per GPU-hour.

    Returns the frame and the columns to show.
    """
    from solver.units import PRICE_COLUMN

    off = catalog.offerings.reset_index(drop="offering_id" in catalog.offerings.columns)
    if provider is not None:
        off = off[off["provider"].str.lower() == provider.lower()]
    if accelerator is not None:
        off = off[off["accelerator_id"] == catalog.resolve_accelerator(accelerator)]
    if region is not None:
        regions = catalog.regions
        zones = regions.reset_index(drop="region" in regions.columns)
        zones = zones[["provider", "region", "residency_zone"]]
        off = off.merge(zones, on=["provider", "region"], how="left")
        key = region.lower()
        off = off[
            off["region"].str.lower().str.startswith(key)
            | (off["residency_zone"].fillna("").str.lower() == key)
        ]
    shown = "on_demand" if mode is None else mode
    if shown not in PRICE_COLUMN or shown == Mode.OWNED:
        raise ProcureError(
            f"unknown mode {mode!r}",
            field="--mode",
            fix="use on_demand, spot, reserved_1y or reserved_3y",
        )
    column = PRICE_COLUMN[shown]
    off = off[off[column].notna()].copy()
    gpu_price = f"{shown}_usd_per_gpu_hour"
    off[gpu_price] = off[column] / off["accelerators_per_instance"]
    orders = {"price": [gpu_price, "offering_id"], "provider": ["provider", gpu_price]}
    orders["region"] = ["region", gpu_price]
    if sort is not None:
        if sort not in orders:
            raise ProcureError(
                f"unknown sort {sort!r}", field="--sort", fix="use price, provider or region"
            )
        off = off.sort_values(orders[sort], kind="stable")
    columns = ["offering_id", "accelerator_id", "accelerators_per_instance", column, gpu_price]
    return off, columns


def accelerator_summary(catalog: Catalog) -> pd.DataFrame:
    """Per accelerator: the cheapest USD per GPU-hour on demand, spot and reserved, each
    with the provider that sells it (like ``sky show-gpus``)."""
    from solver.units import PRICE_COLUMN

    off = catalog.offerings.reset_index(drop="offering_id" in catalog.offerings.columns)
    rows = []
    for acc, group in off.groupby("accelerator_id", sort=True):
        row: dict[str, object] = {"accelerator": acc, "offerings": len(group)}
        for mode in (Mode.ON_DEMAND, Mode.SPOT, Mode.RESERVED_1Y, Mode.RESERVED_3Y):
            per_gpu = group[PRICE_COLUMN[mode]] / group["accelerators_per_instance"]
            if per_gpu.notna().any():
                best = cast(int, per_gpu.idxmin())  # reset_index above: labels are row numbers
                provider = str(group.at[best, "provider"])
                row[f"{mode} $/GPU-h"] = f"{per_gpu[best]:.2f} ({provider})"
            else:
                row[f"{mode} $/GPU-h"] = "-"
        rows.append(row)
    return pd.DataFrame(rows)
