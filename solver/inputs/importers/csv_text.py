"""An exported CSV file's text (a bill), read through the one reader of text files procure
is handed (:func:`solver.inputs.price_traps.read_price_text`), or one clear message naming
the file and the fix.

Billing exports are read as **UTF-8** (a byte-order mark allowed): AWS Data Exports, Azure
Cost Management exports and BigQuery's CSV extracts write UTF-8. Anything else is refused,
never guessed: an archive, a workbook, a Parquet file or UTF-16 text (told by their first
bytes), a binary file (NUL bytes), text that does not decode as UTF-8 (Latin-1 cannot be
detected reliably, so such a file is refused with the line and the byte, and the command
that converts it), and an empty file.
"""

from __future__ import annotations

from pathlib import Path

from solver.errors import ProcureError
from solver.inputs.price_traps import read_price_text


def read_csv_text(path: str | Path, *, what: str, export_fix: str) -> str:
    """The text of a CSV export: UTF-8, a leading byte-order mark dropped.

    Parameters
    ----------
    path
        The file.
    what
        What the file should be, for the messages ("FOCUS billing export").
    export_fix
        How to get a good file from its source, appended to the fix.

    Raises
    ------
    ProcureError
        Missing, empty or not a regular file; another format or not UTF-8
        (:func:`~solver.inputs.price_traps.read_price_text`).
    """
    path = Path(path)
    text = read_price_text(path, what=f"a CSV {what}", fix=f"pass the CSV file; {export_fix}")
    if not text.strip():
        raise ProcureError(
            f"the file is empty, not a {what}", file=str(path), fix=f"pass the file; {export_fix}"
        )
    return text


__all__ = ["read_csv_text"]
