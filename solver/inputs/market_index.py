"""Published GPU rental index levels per accelerator (catalogs/market_index.csv): the
market reference a plan line's price is compared with (docs/concepts/price-guard.md,
The market reference).

A line's premium is ``price per GPU-hour / index - 1``; a price more than 2x away from
its index (premium above 1.0, or a price below half the index) is flagged.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from solver.inputs.keyed_csv import bad_cell as _bad
from solver.inputs.keyed_csv import read_keyed

#: The file beside the other catalog CSVs.
MARKET_INDEX_FILE = "market_index.csv"
COLUMNS: tuple[str, ...] = (
    "accelerator_id",
    "usd_per_gpu_hour",
    "as_of",
    "index",
    "measures",
    "source",
)
#: A price this many times above or below its index is flagged (premium > 1.0 or
#: price < index / 2).
FLAG_FACTOR = 2.0


@dataclass(frozen=True)
class MarketLevel:
    """One published index level.

    Parameters
    ----------
    accelerator_id
        The accelerator (catalogs/accelerators.csv).
    usd_per_gpu_hour
        The index level, USD per GPU-hour.
    as_of
        The date the level is published as of, YYYY-MM-DD.
    index
        The index's name (and ticker).
    measures
        What the index measures, in words.
    source
        Where the level is published, as a person can open it.
    """

    accelerator_id: str
    usd_per_gpu_hour: float
    as_of: str
    index: str
    measures: str
    source: str


def _row(path: Path, line: int, row: Mapping[str, str | None], known: set[str]) -> MarketLevel:
    acc = (row.get("accelerator_id") or "").strip()
    if acc not in known:
        raise _bad(
            path,
            line,
            "accelerator_id",
            f"unknown accelerator {acc!r}",
            "write an accelerator_id of accelerators.csv (h100-sxm, b200, ...)",
        )
    text = (row.get("usd_per_gpu_hour") or "").strip()
    try:
        level = float(text)
    except ValueError:
        level = math.nan
    if not math.isfinite(level) or level <= 0:
        raise _bad(
            path,
            line,
            "usd_per_gpu_hour",
            f"usd_per_gpu_hour {text!r} is not a positive number",
            "write the published index level in USD per GPU-hour, e.g. 2.60",
        )
    as_of = (row.get("as_of") or "").strip()
    try:
        dt.date.fromisoformat(as_of)
    except ValueError:
        raise _bad(
            path,
            line,
            "as_of",
            f"as_of {as_of!r} is not a date",
            "write the date the level is published as of, YYYY-MM-DD",
        ) from None
    texts = {c: (row.get(c) or "").strip() for c in ("index", "measures", "source")}
    for column, value in texts.items():
        if not value:
            raise _bad(
                path,
                line,
                column,
                f"the level has no {column}",
                "name the index, say what it measures and where it is published (a URL)",
            )
    return MarketLevel(acc, level, as_of, texts["index"], texts["measures"], texts["source"])


def load_market_index(directory: str | Path, accelerators: set[str]) -> dict[str, MarketLevel]:
    """Read and check ``market_index.csv`` in a catalog folder.

    Parameters
    ----------
    directory
        The catalog folder.
    accelerators
        The accelerator ids of its accelerators.csv.

    Returns
    -------
    dict
        accelerator_id -> :class:`MarketLevel`; empty when the folder has no such file.

    Raises
    ------
    ProcureError
        A missing column, an unknown accelerator, an accelerator twice, or a bad value:
        the file, line and column named with the fix.
    """
    path = Path(directory) / MARKET_INDEX_FILE
    if not path.is_file():
        return {}
    return read_keyed(
        path,
        COLUMNS,
        lambda line, row: _row(path, line, row, accelerators),
        lambda level: level.accelerator_id,
        "accelerator_id",
        "keep one row per accelerator: its latest published level",
        "the market index",
        f"write {MARKET_INDEX_FILE} as UTF-8 CSV, header {','.join(COLUMNS)}",
    )


def premium_fraction(usd_per_gpu_hour: float, index_usd_per_gpu_hour: float) -> float:
    """A price's premium over its index, ``price / index - 1`` (-0.2: 20% below)."""
    return usd_per_gpu_hour / index_usd_per_gpu_hour - 1.0


def far_from_index(premium: float) -> bool:
    """True when a price is more than :data:`FLAG_FACTOR` x away from its index: a premium
    above ``FLAG_FACTOR - 1`` or a price below ``index / FLAG_FACTOR``."""
    ratio = 1.0 + premium
    return ratio > FLAG_FACTOR or ratio < 1.0 / FLAG_FACTOR


@dataclass(frozen=True)
class FarOffering:
    """An offering whose on-demand price per GPU-hour is more than 2x away from its
    accelerator's index.

    Parameters
    ----------
    line
        Its line in offerings.csv (the header is line 1).
    offering_id
        The offering.
    usd_per_gpu_hour
        Its on-demand price per GPU-hour, USD (converted at the catalog's rate).
    level
        The index level it is compared with.
    """

    line: int
    offering_id: str
    usd_per_gpu_hour: float
    level: MarketLevel

    @property
    def ratio(self) -> float:
        """Price over index (2.5: two and a half times the market)."""
        return self.usd_per_gpu_hour / self.level.usd_per_gpu_hour


def far_offerings(offerings: pd.DataFrame, index: Mapping[str, MarketLevel]) -> list[FarOffering]:
    """The offerings whose on-demand USD per GPU-hour (``on_demand_usd_per_hour /
    accelerators_per_instance``) is more than 2x away from their accelerator's index, in
    file order (:func:`far_from_index`)."""
    out: list[FarOffering] = []
    if not index:
        return out
    ids = offerings["offering_id"].astype(str).to_numpy()
    accs = offerings["accelerator_id"].astype(str).to_numpy()
    prices = (
        offerings["on_demand_usd_per_hour"] / offerings["accelerators_per_instance"]
    ).to_numpy()
    for pos, (oid, acc, price) in enumerate(zip(ids, accs, prices, strict=True)):
        level = index.get(acc)
        if level is None or not math.isfinite(price) or price <= 0:
            continue
        if far_from_index(premium_fraction(float(price), level.usd_per_gpu_hour)):
            out.append(FarOffering(pos + 2, oid, float(price), level))
    return out


def market_lines(offerings: pd.DataFrame, index: Mapping[str, MarketLevel], path: str) -> list[str]:
    """What ``procure catalog validate`` prints of the market reference: the count of
    offerings more than 2x away from their index, then each by file, line and price.

    Flagged, never refused (``--strict`` included): hyperscaler on-demand prices run
    several times a neo-cloud index for the same GPU by design (docs/concepts/price-guard.md,
    The market reference), so a price far from the index asks for a look, not a refusal.
    """
    if not index:
        return ["market index: none (no market_index.csv in the catalog folder)"]
    far = far_offerings(offerings, index)
    priced = int(offerings["accelerator_id"].astype(str).isin(list(index)).sum())
    names = ", ".join(f"{a} ${v.usd_per_gpu_hour:.2f} ({v.as_of})" for a, v in index.items())
    lines = [
        f"market index: {len(far)} of {priced} offerings with an index priced more than "
        f"{FLAG_FACTOR:g}x away from it (on-demand per GPU-hour; {names}); flagged, not refused"
    ]
    lines += [
        f"  {path} line {f.line}, on_demand_usd_per_hour: ${f.usd_per_gpu_hour:.2f} per "
        f"GPU-hour is {f.ratio:.3f}x the {f.level.accelerator_id} index ({f.offering_id})"
        for f in far
    ]
    return lines


__all__ = [
    "COLUMNS",
    "FLAG_FACTOR",
    "FarOffering",
    "far_offerings",
    "MARKET_INDEX_FILE",
    "MarketLevel",
    "far_from_index",
    "load_market_index",
    "market_lines",
    "premium_fraction",
]
