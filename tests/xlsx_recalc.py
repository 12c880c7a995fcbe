"""A workbook's formulas recomputed outside openpyxl (which stores formulas and computes
none), with the ``formulas`` package (PyPI, a pure-Python spreadsheet engine): what a
spreadsheet shows when it opens the file."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import formulas
import numpy as np

_CELL = re.compile(r"^'\[[^\]]+\](?P<sheet>.+)'!(?P<cell>[A-Z]+[0-9]+)$")


def recalculated(data: bytes) -> dict[tuple[str, str], object]:
    """(SHEET in capitals, cell such as 'N22') -> the value the workbook computes there,
    for every cell the engine reads (values and formulas)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "book.xlsx"
        path.write_bytes(data)
        solution = formulas.ExcelModel().loads(str(path)).finish().calculate()
    out: dict[tuple[str, str], object] = {}
    for key, ranges in solution.items():
        match = _CELL.match(str(key))
        if match is None:
            continue
        value = np.asarray(ranges.value).ravel()[0]
        if isinstance(value, np.generic):
            value = value.item()
        out[(match["sheet"].upper(), match["cell"])] = value
    return out


def cell(values: dict[tuple[str, str], object], sheet: str, ref: str) -> object:
    """The computed value of ``sheet!ref`` (sheet names as written)."""
    return values[(sheet.upper(), ref)]
