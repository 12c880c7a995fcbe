"""Short-term capacity reservations sold by the block (catalogs/capacity_blocks.csv): read,
checked and converted to USD (:func:`read_capacity_blocks`), and the booking rules every
stage applies the same way (:func:`allowed_lengths_days`, :func:`shortest_length_days`,
:func:`instances_to_buy`).

A row is one offering a provider sells in blocks (AWS EC2 Capacity Blocks for ML): a
whole number of instances of an offering of offerings.csv (the hardware), for a whole
number of days, paid upfront at ``usd_per_instance_hour`` x instances x days x 24. The
lengths sold are every day from ``min_days`` to ``daily_until_days``, then multiples of
``long_step_days`` up to ``max_days`` (AWS: 1-14 days, then 7-day steps to 182). A block
holds one of ``instance_counts`` instances; several blocks may be held at once, at most
``max_instances_total`` instances together. It may start no sooner than
``min_lead_days`` after it is booked and is booked at most ``max_advance_days`` ahead.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from solver.errors import ProcureError
from solver.inputs.catalog.tables import exchange_rate
from solver.inputs.provenance import CONFIDENCE_LEVELS, parse_price_date

FILE = "capacity_blocks.csv"
MODE = "capacity_block"  # the mode of a plan line run on or buying a block

_TEXT = ("block_id", "provider", "region", "offering_id", "currency", "instance_counts")
_PROVENANCE = ("price_date_basis", "price_confidence", "source", "rules_source")
_WHOLE = (
    "min_days",
    "daily_until_days",
    "long_step_days",
    "max_days",
    "max_instances_total",
    "min_lead_days",
    "max_advance_days",
)
COLUMNS: tuple[str, ...] = (
    *_TEXT,
    "usd_per_instance_hour",
    *_WHOLE,
    "price_date",
    *_PROVENANCE,
    "read_date",
)


def _refuse(path: Path, line: int, column: str, message: str, fix: str) -> ProcureError:
    return ProcureError(message, file=str(path), field=f"line {line}, {column}", fix=fix)


def read_capacity_blocks(
    directory: Path, offerings: pd.DataFrame, rates: pd.DataFrame | None
) -> pd.DataFrame | None:
    """capacity_blocks.csv of ``directory`` checked, its price in USD (None: no file).

    Every row names an offering of ``offerings`` (same provider and region), states whole
    positive day rules in order, instance counts as whole numbers separated by ``;``, a
    positive price in a currency the catalog has a rate for, a real price date and read
    date and a known confidence. The price is converted at the currency's latest rate
    (``usd_per_unit`` and ``exchange_rate_date`` say which).

    Raises
    ------
    ProcureError
        Naming the file, the line and the column of the first row that breaks a rule.
    """
    path = directory / FILE
    if not path.is_file():
        return None
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise ProcureError(
            f"missing column {missing[0]!r}",
            file=str(path),
            field=missing[0],
            fix=f"give every column: {', '.join(COLUMNS)}",
        )
    records = table.to_dict("records")
    rows = [_checked_row(path, i + 2, row, offerings, rates) for i, row in enumerate(records)]
    out = pd.DataFrame(rows, columns=[*COLUMNS, "usd_per_unit", "exchange_rate_date"])
    dup = out["block_id"].duplicated()
    if dup.any():
        line = int(np.flatnonzero(dup.to_numpy())[0]) + 2
        raise _refuse(path, line, "block_id", "duplicate block_id", "give each row its own id")
    return out.set_index("block_id", drop=False)


def _checked_row(
    path: Path,
    line: int,
    row: Mapping[Hashable, Any],
    offerings: pd.DataFrame,
    rates: pd.DataFrame | None,
) -> dict[str, object]:
    """One row of capacity_blocks.csv checked and typed (see :func:`read_capacity_blocks`)."""
    out: dict[str, object] = {c: str(row[c]).strip() for c in COLUMNS}
    for c in (*_TEXT, *_PROVENANCE):
        if not out[c]:
            raise _refuse(path, line, c, f"{c} is empty", f"write the block's {c}")
    offering = str(out["offering_id"])
    if offering not in offerings.index:
        raise _refuse(
            path, line, "offering_id", f"offering {offering!r} is not in offerings.csv",
            "name the offerings.csv row whose instances the block holds",
        )  # fmt: skip
    off = offerings.loc[offering]
    for c in ("provider", "region"):
        if str(off[c]) != out[c]:
            raise _refuse(
                path, line, c, f"{c} {out[c]!r} is not the offering's ({off[c]!r})",
                f"write the {c} of {offering}",
            )  # fmt: skip
    for c in _WHOLE:
        out[c] = _whole(path, line, c, str(out[c]), minimum=0 if c.startswith("min_lead") else 1)
    if not (
        int(out["min_days"])  # type: ignore[call-overload]
        <= int(out["daily_until_days"])  # type: ignore[call-overload]
        <= int(out["max_days"])  # type: ignore[call-overload]
    ):
        raise _refuse(
            path, line, "daily_until_days", "the day rules are out of order",
            "write min_days <= daily_until_days <= max_days",
        )  # fmt: skip
    out["instance_counts"] = _counts(path, line, str(out["instance_counts"]))
    price = _number(path, line, "usd_per_instance_hour", str(out["usd_per_instance_hour"]))
    for c in ("price_date", "read_date"):
        if parse_price_date(out[c]) is None:
            raise _refuse(path, line, c, f"{c} {out[c]!r} is not a day", "write it as YYYY-MM-DD")
    if out["price_confidence"] not in CONFIDENCE_LEVELS:
        raise _refuse(
            path, line, "price_confidence", f"unknown confidence {out['price_confidence']!r}",
            f"write one of: {', '.join(CONFIDENCE_LEVELS)}",
        )  # fmt: skip
    rate = exchange_rate(
        rates, str(out["currency"]), str(path.parent), str(path), f"line {line}, currency"
    )
    out["usd_per_unit"] = rate.usd_per_unit
    out["exchange_rate_date"] = rate.date
    out["usd_per_instance_hour"] = price * rate.usd_per_unit
    return out


def _whole(path: Path, line: int, column: str, text: str, minimum: int) -> int:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value != int(value) or value < minimum:
        raise _refuse(
            path, line, column, f"{column} {text!r} is not a whole number >= {minimum}",
            f"write a whole number of days or instances, at least {minimum}",
        )  # fmt: skip
    return int(value)


def _number(path: Path, line: int, column: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise _refuse(
            path, line, column, f"{column} {text!r} is not a positive number",
            "write the price per instance-hour the provider states (its effective rate)",
        )  # fmt: skip
    return value


def _counts(path: Path, line: int, text: str) -> tuple[int, ...]:
    parts = [p.strip() for p in text.split(";")]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = [math.nan]
    if not values or any(not math.isfinite(v) or v != int(v) or v < 1 for v in values):
        raise _refuse(
            path, line, "instance_counts", f"instance_counts {text!r} is not a list of counts",
            "write the instances a block may hold, whole numbers separated by ';' (1;2;4)",
        )  # fmt: skip
    return tuple(sorted({int(v) for v in values}))


def allowed_lengths_days(
    min_days: int, daily_until_days: int, long_step_days: int, max_days: int
) -> list[int]:
    """The block lengths sold, in days: every day from ``min_days`` to
    ``daily_until_days``, then every multiple of ``long_step_days`` up to ``max_days``."""
    short = list(range(min_days, daily_until_days + 1))
    first_long = (daily_until_days // long_step_days + 1) * long_step_days
    return short + list(range(first_long, max_days + 1, long_step_days))


def shortest_length_days(block: Mapping[str, Any], hours: float) -> int | None:
    """The shortest block length sold (days) that holds ``hours`` of running; None when
    even the longest is too short."""
    need = hours / 24.0
    for days in allowed_lengths_days(
        int(block["min_days"]),
        int(block["daily_until_days"]),
        int(block["long_step_days"]),
        int(block["max_days"]),
    ):
        if days + 1e-9 >= need:
            return days
    return None


def instances_to_buy(counts: tuple[int, ...], units: int, most: int) -> tuple[int, ...] | None:
    """The blocks (instances in each, largest first) holding at least ``units`` instances
    at the fewest instances, then the fewest blocks, from block sizes ``counts`` and at
    most ``most`` instances in all; None when no such set exists."""
    best = _fewest(tuple(sorted(counts)), units, most)
    return None if best is None else tuple(sorted(best, reverse=True))


@lru_cache(maxsize=4096)
def _fewest(counts: tuple[int, ...], units: int, most: int) -> tuple[int, ...] | None:
    # exact sums reachable with the fewest blocks, by dynamic programming up to ``most``
    reach: list[tuple[int, ...] | None] = [None] * (most + 1)
    reach[0] = ()
    for total in range(1, most + 1):
        for size in counts:
            prev = reach[total - size] if size <= total else None
            if prev is not None and (
                reach[total] is None or len(prev) + 1 < len(reach[total])  # type: ignore[arg-type]
            ):
                reach[total] = (*prev, size)
    for total in range(max(units, 1), most + 1):
        if reach[total] is not None:
            return reach[total]
    return None
