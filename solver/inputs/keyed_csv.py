"""Small keyed CSV tables of a catalog folder (the price bands, the market index): one row
per key, and every problem with the file named with its line, column and fix."""

from __future__ import annotations

import csv
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

from solver.errors import ProcureError

T = TypeVar("T")


def bad_cell(path: Path, line: int, column: str, message: str, fix: str) -> ProcureError:
    """The error for one cell of a table: its file, line and column, and the fix."""
    return ProcureError(message, file=str(path), field=f"line {line}, {column}", fix=fix)


def read_keyed(
    path: Path,
    columns: tuple[str, ...],
    parse: Callable[[int, Mapping[str, str | None]], T],
    key_of: Callable[[T], str],
    key_column: str,
    twice_fix: str,
    what: str,
    unreadable_fix: str,
) -> dict[str, T]:
    """The rows of a UTF-8 CSV table, each parsed by ``parse(line, row)``, by their key.

    Parameters
    ----------
    path
        The table's file.
    columns
        The columns its header must have.
    parse
        Reads one row (its line number counts the header as line 1); raises
        :class:`ProcureError` on a bad value.
    key_of, key_column
        A parsed row's key, and the column it comes from.
    twice_fix, what, unreadable_fix
        The fix when a key is given twice; the table in words and the fix when the file
        cannot be read.

    Raises
    ------
    ProcureError
        A missing column, a key twice, a bad value, or an unreadable file.
    """
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            missing = [c for c in columns if c not in (reader.fieldnames or [])]
            if missing:
                raise ProcureError(
                    f"missing column(s) {missing}",
                    file=str(path),
                    field="line 1",
                    fix=f"the header is: {','.join(columns)}",
                )
            rows: dict[str, T] = {}
            for line, row in enumerate(reader, start=2):
                parsed = parse(line, row)
                key = key_of(parsed)
                if key in rows:
                    raise bad_cell(path, line, key_column, f"{key} is given twice", twice_fix)
                rows[key] = parsed
    except (OSError, UnicodeDecodeError) as exc:
        raise ProcureError(
            f"cannot read {what} ({exc.__class__.__name__})", file=str(path), fix=unreadable_fix
        ) from None
    return rows
