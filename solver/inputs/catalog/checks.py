"""Checks across a catalog's rows and tables: memory units, price provenance, exchange
rates and prices converted to USD, references between files, and model presets whose
parameters agree with their shapes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import pandas as pd

from solver.errors import ProcureError, suggestion
from solver.inputs.catalog.dating import check_bases
from solver.inputs.catalog.tables import exchange_rate
from solver.inputs.provenance import (
    BASE_CURRENCY,
    CONFIDENCE_LEVELS,
    is_currency_code,
    is_price_date,
    parse_price_date,
)
from solver.physics.shapes import PARAMS_TOLERANCE, active_agrees, shape_count

# Bytes per unit of the vendor's memory figure. HBM parts quote GiB under the name "GB"
# (an "80 GB" H100 or A100 reports 81,920 MiB in nvidia-smi; AWS Neuron and Google TPU
# documents say GiB), GDDR datacenter cards with ECC on report about the decimal figure
# (an L4 "24 GB" reports 23,034 MiB = 24.15e9 bytes): DESIGN.md section 3.
MEMORY_UNIT_BYTES: dict[str, float] = {"GB": 1e9, "GiB": 2.0**30}


def memory_in_decimal_gb(acc: pd.DataFrame, path: Path) -> pd.DataFrame:
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


def check_provenance(table: pd.DataFrame, path: Path, prefixes: tuple[str, ...]) -> None:
    """Every price's date, confidence and currency are valid words (``prefixes``: the
    column families, "" for ``price_date`` and "reserved_" for ``reserved_price_date``), and
    the dates' and currencies' bases where the table has them (offerings.csv:
    :func:`~solver.inputs.catalog.dating.check_bases`)."""
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
    if "currency_basis" in table:
        check_bases(table, path)


def read_exchange_rates(directory: Path, table: pd.DataFrame | None) -> pd.DataFrame | None:
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


def in_usd(
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


def reserved_as_on_demand(off: pd.DataFrame) -> pd.DataFrame:
    """Reserved prices without a provenance of their own have the row's."""
    out = off.copy()
    for own, row in (
        ("reserved_price_date", "price_date"),
        ("reserved_price_confidence", "price_confidence"),
        ("reserved_source", "source"),
    ):
        out[own] = out[own].where(out[own] != "", out[row])
    return out


def check_reference(
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


def check_models(models: pd.DataFrame, path: Path) -> None:
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
