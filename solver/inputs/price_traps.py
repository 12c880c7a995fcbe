"""Price updates that would take the wrong number: refused, one message each.

Each check looks at what a price file says and refuses it, naming the file, the line (or
offering) and the fix, where applying it would move a plan on a figure that is not what
the file meant:

- **A date decades old or in the future.** No cloud sold compute by the hour before
  Amazon EC2's beta, announced 2006-08-24
  (https://aws.amazon.com/about-aws/whats-new/2006/08/24/announcing-amazon-elastic-compute-cloud-amazon-ec2---beta/);
  a price dated before that is a typo (``1925`` for ``2025``). A date after today is
  taken up to :data:`AHEAD_DAYS` ahead (a price announced before the day it takes effect;
  a quarter, an assumption) and refused beyond (``2062`` for ``2026``, or a guess).
- **A currency column** in our price CSV: every price update is in USD (a catalog folder
  converts with its exchange_rates.csv); a ``EUR`` price applied as dollars is 8% off.
- **Rows that disagree**: one offering twice in a bare ``offerings.csv`` with different
  prices (which one is today's?), or one SkyPilot zone priced twice differently.
- **A row that lost a field**: fewer fields than the header, so every later value moved
  one column left (a price read as a date, a date as a confidence). pandas pads such a
  row with empty cells without a word; it is refused here with its line.
- **A file that is not UTF-8 text**: a Latin-1 export (``0xE9`` for ``é``) or a binary
  file (a spreadsheet, an archive: NUL bytes) is refused with the byte where it fails,
  instead of being read with replacement characters or crashing a parser.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Protocol, cast

import pandas as pd

from solver.errors import ProcureError
from solver.inputs.provenance import BASE_CURRENCY, parse_price_date

#: the first day a cloud sold compute by the hour (Amazon EC2 beta; module docstring)
FIRST_CLOUD_PRICE_DAY = date(2006, 8, 24)
#: how far after today a price may be dated (announced ahead of its day; an assumption)
AHEAD_DAYS = 92


#: bytes read to tell a binary file (NUL bytes, which no text price file holds)
_SNIFF_BYTES = 65536

#: Leading bytes of formats a CSV file is not -> what they are and what to do.
_MAGIC: tuple[tuple[bytes, str, str], ...] = (
    (b"\x1f\x8b", "a gzip archive (a binary file)", "decompress it first (gunzip FILE)"),
    (
        b"PK\x03\x04",
        "a zip archive or an XLSX workbook (a binary file)",
        "unzip it, or save the sheet as CSV",
    ),
    (b"PAR1", "a Parquet file (a binary file)", "export it as CSV, or convert it to CSV"),
    (b"\xff\xfe", "UTF-16 text", "save it as UTF-8 (iconv -f UTF-16 -t UTF-8 FILE > NEW.csv)"),
    (b"\xfe\xff", "UTF-16 text", "save it as UTF-8 (iconv -f UTF-16 -t UTF-8 FILE > NEW.csv)"),
)


def read_price_text(path: Path, *, what: str, fix: str) -> str:
    """The UTF-8 text of a price file or another exported CSV (a bill), a byte-order mark
    dropped: the one reader of text files procure is handed from elsewhere.

    Parameters
    ----------
    path
        The file.
    what
        What it should be ("a SkyPilot vms.csv"), for the message.
    fix
        What to give instead, for a file that is missing or not a regular file.

    Raises
    ------
    ProcureError
        Not a readable regular file; an archive, a workbook, a Parquet file or UTF-16 text
        (by its first bytes, saying which); a binary file (NUL bytes) or text not in UTF-8:
        naming the file, the line and byte, and the fix.
    """
    from solver.inputs.yamlio import read_text_file

    path = Path(path)
    try:
        text = read_text_file(path, what=what, fix=fix).removeprefix("\ufeff")
        _refuse_other_format(text[:8].encode(), path, what)
        return _no_nul(text, path, what, fix)
    except ProcureError as exc:
        if "UTF-8" not in exc.message:
            raise
    data = path.read_bytes()
    _refuse_other_format(data, path, what)
    try:
        data.decode("utf-8")
        start = len(data)
    except UnicodeDecodeError as err:
        start = err.start
    line = data.count(b"\n", 0, start) + 1
    if b"\x00" in data[:_SNIFF_BYTES]:
        message = f"a binary file (byte 0x{data[start]:02X} on line {line} is not text), not {what}"
    else:
        message = (
            f"not UTF-8 text: byte 0x{data[start]:02X} on line {line} is not UTF-8 (a Latin-1 "
            f"or Windows-1252 export?), so it cannot be read as {what}; an encoding is never "
            "guessed"
        )
    raise ProcureError(
        message,
        file=str(path),
        field=f"line {line}",
        fix="save it as UTF-8 text (iconv -f WINDOWS-1252 -t UTF-8 FILE > NEW.csv, or -f "
        f"LATIN1; a spreadsheet: Save As, CSV UTF-8), or {fix}",
    )


def _refuse_other_format(head: bytes, path: Path, what: str) -> None:
    """Refuse a file whose first bytes are those of another format (:data:`_MAGIC`)."""
    for magic, kind, fix in _MAGIC:
        if head.startswith(magic):
            raise ProcureError(f"this is {kind}, not {what}", file=str(path), fix=fix)


def _no_nul(text: str, path: Path, what: str, fix: str) -> str:
    """``text`` unless it holds a NUL character (a binary file that happens to decode)."""
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise ProcureError(
            f"a binary file (a NUL byte on line {line}), not {what}",
            file=str(path),
            field=f"line {line}",
            fix=fix,
        )
    return text


def check_field_counts(path: Path, *, what: str) -> None:
    """Every non-blank row of a CSV has as many fields as its header.

    Raises
    ------
    ProcureError
        A row with fewer fields than the header (naming the line and the count).
    """
    text = read_price_text(path, what=what, fix=f"give a {what}")
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        return
    width = len(header)
    for row in reader:
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) < width:
            raise ProcureError(
                f"line {reader.line_num} has {len(row)} fields where the header has {width}: "
                f"a field was lost and the values after it moved into the next columns "
                f"(it would be read as {header[len(row)]!r} left empty)",
                file=str(path),
                field=f"line {reader.line_num}",
                fix=f"restore the missing field (an empty one is written ,,) in this {what}",
            )


class PriceRow(Protocol):
    """One row of a price update's long-format ``prices`` frame: an offering's (or owned
    server's) price in USD (per instance-hour; capex for a server), with its provenance
    and the file line it came from (0 when none)."""

    offering_id: str
    provider: str
    region: str
    mode: str
    price_usd: float
    price_date: str
    line: int
    price_confidence: str
    price_source: str


def price_rows(prices: pd.DataFrame) -> Iterator[PriceRow]:
    """The rows of a price update's ``prices`` frame as named tuples of its columns."""
    # the stubs type a row's fields as any scalar; the frame has these columns
    return cast("Iterator[PriceRow]", prices.itertuples(index=False))


def check_price_dates(prices: pd.DataFrame, source: str, today: date | None = None) -> None:
    """Every price's date is on or after :data:`FIRST_CLOUD_PRICE_DAY` and at most
    :data:`AHEAD_DAYS` after today.

    Raises
    ------
    ProcureError
        The first price dated out of that range, named by its line or offering.
    """
    today = today or date.today()
    for row in price_rows(prices):
        day = parse_price_date(row.price_date)
        if day is None or FIRST_CLOUD_PRICE_DAY <= day <= today + timedelta(days=AHEAD_DAYS):
            continue
        where = f"line {row.line}" if row.line else f"{row.offering_id} {row.mode}"
        when = (
            f"more than {AHEAD_DAYS} days after today ({today})"
            if day > today
            else f"before any cloud sold compute by the hour ({FIRST_CLOUD_PRICE_DAY})"
        )
        raise ProcureError(
            f"{row.offering_id} {row.mode} is priced on {day} ({where}), {when}",
            file=source,
            field=f"{where}, date",
            fix="write the day the price was read (YYYY-MM-DD), or unknown",
        )


def check_csv_currency(frame: pd.DataFrame, path: Path) -> None:
    """Our price CSV is in USD: a ``currency`` column naming another is refused."""
    if "currency" not in frame.columns:
        return
    for line, value in enumerate(frame["currency"], start=2):
        code = str(value).strip().upper()
        if code and code != BASE_CURRENCY:
            raise ProcureError(
                f"line {line} is priced in {code}, and a price update is in USD",
                file=str(path),
                field=f"line {line}, currency",
                fix="convert the prices to USD (and drop the currency column), or pass a "
                "catalog folder whose exchange_rates.csv converts them",
            )


def check_duplicate_offerings(offerings: pd.DataFrame, path: Path, columns: list[str]) -> None:
    """An offering listed twice in a bare offerings.csv must not disagree on a price."""
    ids = offerings["offering_id"].astype(str)
    for offering_id, rows in offerings.groupby(ids, sort=True):
        if len(rows) < 2:
            continue
        for column in columns:
            values = pd.to_numeric(rows[column], errors="coerce")
            if values.nunique(dropna=False) > 1:
                lines = [int(i) + 2 for i in rows.index]
                raise ProcureError(
                    f"{offering_id} is listed on lines {lines} with different {column} "
                    f"({', '.join(str(v) for v in rows[column])})",
                    file=str(path),
                    field=f"line {lines[-1]}, {column}",
                    fix="keep one row per offering: the price read last, with its date",
                )


def check_zone_conflicts(df: pd.DataFrame, path: Path) -> None:
    """One SkyPilot row per instance type, accelerator and zone: two that disagree on a
    price are refused (the importer would take the lower on-demand and the median spot)."""
    keys = ["InstanceType", "AcceleratorName", "AcceleratorCount", "Region", "AvailabilityZone"]
    if "AvailabilityZone" not in df.columns:
        return
    zoned = df[df["AvailabilityZone"].astype(str) != ""]
    for column in ("Price", "SpotPrice"):
        spread = zoned.groupby(keys, sort=True, dropna=False)[column].nunique(dropna=False)
        conflicted = spread[spread > 1]
        if conflicted.empty:
            continue
        instance, acc, _, region, zone = conflicted.index[0]
        values = zoned.loc[
            (zoned["InstanceType"] == instance)
            & (zoned["AcceleratorName"] == acc)
            & (zoned["AvailabilityZone"] == zone),
            column,
        ]
        raise ProcureError(
            f"{instance or acc} in zone {zone} ({region}) has {column} "
            f"{', '.join(f'{v:g}' for v in values)} on different rows",
            file=str(path),
            field=f"{column}, zone {zone}",
            fix="keep one row per instance type and zone (the price read last)",
        )
