"""An exported CSV file's bytes as text, or one clear message naming the file and the fix.

Billing exports are read as **UTF-8** (a byte-order mark allowed): AWS Data Exports, Azure
Cost Management exports and BigQuery's CSV extracts write UTF-8. Anything else is refused,
never guessed:

- **binary**: a file holding a NUL byte (no CSV text does) or starting with the magic
  bytes of gzip, zip (also XLSX), Parquet or UTF-16 is refused, saying which it looks
  like;
- **not UTF-8**: Latin-1 (ISO 8859-1) cannot be detected reliably (every byte string is
  valid Latin-1, and Windows-1252 reads the bytes 0x80-0x9F otherwise), so a file that
  does not decode as UTF-8 is refused with the line and the byte that do not decode and
  the command that converts it, rather than read under a guessed encoding.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from solver.errors import ProcureError

#: Leading bytes of formats a CSV export is not -> what they are and what to do.
_MAGIC: tuple[tuple[bytes, str, str], ...] = (
    (b"\x1f\x8b", "a gzip archive", "decompress it first (gunzip FILE)"),
    (b"PK\x03\x04", "a zip archive (or an XLSX workbook)", "unzip it, or save the sheet as CSV"),
    (b"PAR1", "a Parquet file", "export the bill as CSV, or convert the Parquet file to CSV"),
    (b"\xff\xfe", "UTF-16 text", "save it as UTF-8 (iconv -f UTF-16 -t UTF-8 FILE > NEW.csv)"),
    (b"\xfe\xff", "UTF-16 text", "save it as UTF-8 (iconv -f UTF-16 -t UTF-8 FILE > NEW.csv)"),
)


def _bytes(path: Path, what: str) -> bytes:
    fix = f"pass the {what} as a CSV file"
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise ProcureError(f"{what} not found", file=str(path), fix=fix) from None
    except OSError as exc:
        raise ProcureError(f"cannot read it ({exc.strerror})", file=str(path), fix=fix) from None
    if not stat.S_ISREG(info.st_mode):
        raise ProcureError(f"not a regular file, not a {what}", file=str(path), fix=fix)
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ProcureError(f"cannot read it ({exc.strerror})", file=str(path), fix=fix) from None


def read_csv_text(path: str | Path, *, what: str, export_fix: str) -> str:
    """The text of a CSV export: UTF-8, a leading byte-order mark dropped.

    Parameters
    ----------
    path
        The file.
    what
        What the file should be, for the messages ("FOCUS billing export").
    export_fix
        How to get a good file from its source, appended to the encoding fix.

    Raises
    ------
    ProcureError
        Missing, empty or not a regular file; binary (a NUL byte, or the magic bytes of gzip,
        zip, Parquet or UTF-16); not UTF-8 (naming the line and the byte).
    """
    path = Path(path)
    data = _bytes(path, what)
    for magic, kind, fix in _MAGIC:
        if data.startswith(magic):
            raise ProcureError(f"this is {kind}, not a CSV {what}", file=str(path), fix=fix)
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise ProcureError(
            f"a binary file, not a CSV {what} (a NUL byte at line {line}, byte {nul + 1})",
            file=str(path),
            field=f"line {line}",
            fix=f"pass the CSV file itself; {export_fix}",
        )
    if not data.strip():
        raise ProcureError(
            f"the file is empty, not a {what}", file=str(path), fix=f"pass the file; {export_fix}"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        byte = data[exc.start]
        raise ProcureError(
            f"not UTF-8 text: byte 0x{byte:02X} at line {line} does not decode (a Latin-1 "
            "or Windows-1252 file?); bills are read as UTF-8 only, an encoding is never "
            "guessed",
            file=str(path),
            field=f"line {line}",
            fix="save the file as UTF-8, e.g. iconv -f WINDOWS-1252 -t UTF-8 FILE > NEW.csv "
            f"(or -f LATIN1 if that is its encoding); {export_fix}",
        ) from None


__all__ = ["read_csv_text"]
