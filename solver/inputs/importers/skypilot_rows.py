"""The rows of a SkyPilot ``vms.csv`` checked one by one before they are priced.

A row that **lost a field** is refused with the file, its line and the column: fewer
fields than the header (every value after the lost one moved a column left), or a cell
a row of its kind always has left empty. What a row always has, from SkyPilot's own
catalogs (every ``vms.csv`` under ``../shared/data/external/skypilot-catalog``, 22 files
and 180,000 rows, has none of these empty; an empty ``Region`` is real, Seeweb lists GPU
sizes offered in no region, and such a row is skipped and counted as before):

- an ``InstanceType`` or an ``AcceleratorName`` (GCP lists a GPU without its host VM,
  a CPU VM has no accelerator; a row with neither names nothing);
- on a row with an accelerator: its ``AcceleratorCount`` and a price, ``Price`` or
  ``SpotPrice`` (Verda lists spot-only instances with ``Price`` empty);
- numbers in the numeric columns (``AcceleratorCount``, ``vCPUs``, ``MemoryGiB``,
  ``Price``, ``SpotPrice``): text there is refused, not read as "no value".

A price that is a number but not a price (zero, negative, NaN, inf, above
:data:`MAX_PRICE_USD`) on a row with an accelerator is **held**: the row is left out
and listed with its line (:func:`held_prices`) for the caller to report. A ``SpotPrice``
of ``0`` is SkyPilot's "no spot market" (Vast's catalog writes ``0.00`` on every row):
the offering's spot price is left empty, as before.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol, cast

import pandas as pd

from solver.errors import ProcureError

#: a price above this (USD per instance-hour) is no price: held (the importer's bound
#: for "absurd magnitudes"; the market ceiling is applied when a feed is pulled)
MAX_PRICE_USD = 1e12
#: what the module docstring says each row has: (column, rows it applies to)
NUMERIC = ("AcceleratorCount", "vCPUs", "MemoryGiB", "Price", "SpotPrice")
HELD_COLUMNS = ["line", "instance_type", "accelerator", "region", "column", "text"]
_FIX = "restore the value from the source catalog, or drop the row"


class _VmRow(Protocol):
    """A vms.csv row as the checks read it: its cells as stripped text, its line number."""

    row_line: int
    InstanceType: str
    AcceleratorName: str
    AcceleratorCount: str
    Region: str
    Price: str
    SpotPrice: str


def _rows(frame: pd.DataFrame) -> Iterator[_VmRow]:
    """The rows of ``frame`` (text cells and ``row_line``) as named tuples."""
    # the stubs type a row's fields as any scalar; these columns are text (and row_line)
    return cast("Iterator[_VmRow]", frame.itertuples(index=False))


def check_row_widths(
    rows: list[list[str]], lines: list[int], header: list[str], path: Path | str
) -> None:
    """Every row has at least as many fields as the header.

    Raises
    ------
    ProcureError
        The first short row: its line, and the first column it has no field for.
    """
    width = len(header)
    for row, line in zip(rows, lines, strict=True):
        if len(row) < width:
            raise ProcureError(
                f"line {line} has {len(row)} fields where the header has {width}: a field "
                f"was lost (column {header[len(row)]!r} onwards has no value, and the values "
                "after the lost one moved a column left)",
                file=str(path),
                field=f"line {line}, {header[len(row)]}",
                fix=f"restore the missing field (an empty one is written ,,); {_FIX}",
            )


def _lost(path: Path | str, line: int, column: str, why: str) -> ProcureError:
    return ProcureError(
        f"line {line}: {column} is empty on {why}: the row lost a field",
        file=str(path),
        field=f"line {line}, {column}",
        fix=_FIX,
    )


def check_row_values(frame: pd.DataFrame, path: Path | str) -> None:
    """The cells each row always has (module docstring) are filled, and the numeric
    columns hold numbers. ``frame``: the rows as text (stripped), with ``_line``.

    Raises
    ------
    ProcureError
        The first row that lost a value or holds text in a numeric column.
    """
    for column in NUMERIC:
        if column not in frame.columns:
            continue
        for text, line in zip(frame[column], frame["row_line"], strict=True):
            if text and not _is_number(text):
                raise ProcureError(
                    f"line {line}: {column} is {text!r}, not a number",
                    file=str(path),
                    field=f"line {line}, {column}",
                    fix="write the number as SkyPilot does (e.g. 2.49), or leave it empty",
                )
    for r in _rows(frame):
        line = int(r.row_line)
        if not r.InstanceType and not r.AcceleratorName:
            raise _lost(path, line, "InstanceType", "a row without an AcceleratorName")
        if not r.AcceleratorName:
            continue
        if not r.AcceleratorCount:
            raise _lost(path, line, "AcceleratorCount", f"a row with accelerator "
                        f"{r.AcceleratorName!r}")  # fmt: skip
        if not r.Price and not r.SpotPrice:
            raise _lost(path, line, "Price", f"a row with accelerator {r.AcceleratorName!r} "
                        "and no SpotPrice either")  # fmt: skip


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _bad(text: str, column: str) -> bool:
    """A price cell that is a number but not a price (module docstring)."""
    if not text:
        return False
    value = float(text)
    if column == "SpotPrice" and value == 0:
        return False  # "no spot market"
    return not (math.isfinite(value) and 0 < value <= MAX_PRICE_USD)


def held_prices(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows with an accelerator whose ``Price`` or ``SpotPrice`` is held
    (:data:`HELD_COLUMNS`, one per cell), ``text`` the cell as written."""
    rows = []
    for r in _rows(frame[frame["AcceleratorName"] != ""]):
        for column in ("Price", "SpotPrice"):
            text = getattr(r, column)
            if _bad(text, column):
                rows.append(
                    {
                        "line": int(r.row_line),
                        "instance_type": r.InstanceType,
                        "accelerator": r.AcceleratorName,
                        "region": r.Region,
                        "column": column,
                        "text": text,
                    }
                )
    return pd.DataFrame(rows, columns=HELD_COLUMNS)


__all__ = ["HELD_COLUMNS", "check_row_values", "check_row_widths", "held_prices"]
