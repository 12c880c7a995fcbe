"""Outputs that cannot be abused: spreadsheet cells neutralised, output paths checked,
files replaced whole or not at all.

Plain functions used by the export and report stages (cells) and by the CLI (paths
and writes). Nothing here decides what a plan says; it only makes sure that what is
written is what was meant, and is written where the user meant.
"""

from __future__ import annotations

import io
import os
import re
import secrets
import signal
import stat
import tempfile
import zipfile
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from solver.errors import ProcureError

# OWASP, "CSV Injection" (https://owasp.org/www-community/attacks/CSV_Injection): a
# cell that begins with one of these is read as a formula by Excel, LibreOffice or
# Google Sheets; prefix it with a single quote so it is shown as text. Full-width
# forms are included because some spreadsheets normalise them.
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r", "\n", "＝", "＋", "－", "＠")


def neutralise_cell(value: object) -> object:
    """A cell value a spreadsheet will show, never execute.

    Strings that begin with a formula trigger (``= + - @``, tab, carriage return,
    line feed, or their full-width forms) get a leading ``'``; numbers, booleans,
    dates and None pass through unchanged, so numeric columns stay numeric (a
    negative number is a number, not the text ``-5``).
    """
    if isinstance(value, str) and value.startswith(FORMULA_TRIGGERS):
        return "'" + value
    return value


def neutralise_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` with every text cell and column name neutralised."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]):
            out[column] = out[column].map(neutralise_cell)
    out.columns = [neutralise_cell(c) if isinstance(c, str) else c for c in out.columns]
    return out


def money_rounded(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with its money to the cent and its unit prices to the millionth of a
    dollar (columns named as :func:`_number_format` reads them), so that a CSV carries
    11858.4, not 11858.400000000001; other columns as they are."""
    out = frame.copy()
    for column in out.columns:
        fmt = _number_format(str(column))
        if fmt not in MONEY_FORMATS or not pd.api.types.is_numeric_dtype(out[column]):
            continue
        if pd.api.types.is_bool_dtype(out[column]):
            continue
        out[column] = out[column].round(2 if fmt == USD_FORMAT else 6)
    return out


def csv_text(frame: pd.DataFrame, **options) -> str:
    """CSV text of a frame with its text cells neutralised (``\\n`` line ends)."""
    return neutralise_frame(frame).to_csv(index=False, lineterminator="\n", **options)


# --------------------------------------------------------------------------- paths


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_output_file(path: Path, *, force: bool = False, option: str = "--out") -> None:
    """Refuse an output path that is anything but a regular file or absent.

    A symlink is refused unless ``force`` (then the link itself is replaced by a
    regular file; what it points to is never touched). A directory, FIFO, device
    or socket is refused even with ``force``: writing there would block, destroy
    something that is not ours, or write where nobody asked.
    """
    path = Path(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        parent = path.parent
        if parent.exists() and not parent.is_dir():
            raise ProcureError(
                f"the folder {str(parent)!r} is not a directory",
                file=str(path),
                field=option,
                fix="choose a path in an existing folder",
            ) from None
        return
    if stat.S_ISLNK(info.st_mode):
        if force:
            return
        raise ProcureError(
            "the output path is a symbolic link; procure does not write through links",
            file=str(path),
            field=option,
            fix="choose another path, or add --force to replace the link (not its target)",
        )
    if not stat.S_ISREG(info.st_mode):
        raise ProcureError(
            f"the output path is {_kind(info.st_mode)}, not a file",
            file=str(path),
            field=option,
            fix="choose a path to a regular file (or one that does not exist yet)",
        )


def check_output_dir(
    folder: Path, names: list[str] | None = None, *, force: bool = False, option: str = "--out"
) -> None:
    """Refuse an output folder that is not a directory (or absent), and any file in it
    that would be replaced but is not a regular file (see :func:`check_output_file`)."""
    folder = Path(folder)
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode) and not force:
        raise ProcureError(
            "the output folder is a symbolic link; procure does not write through links",
            file=str(folder),
            field=option,
            fix="choose another folder, or add --force to write into the folder it points to",
        )
    if not folder.is_dir():
        raise ProcureError(
            f"the output folder is {_kind(os.stat(folder).st_mode)}",
            file=str(folder),
            field=option,
            fix="choose a folder (or a path that does not exist yet)",
        )
    for name in names or []:
        check_output_file(folder / name, force=force, option=option)


# --------------------------------------------------------------------------- inputs


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file: the same inode when both exist (a hard link or a
    symbolic link to it counts), else the same resolved path."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_not_inputs(
    outputs: list[tuple[str, Path]], inputs: list[tuple[str, Path | None]]
) -> None:
    """Refuse an output path that names one of the command's own inputs (the problem file,
    a plan, a price file, a catalog table): writing it would replace what the command was
    given, and a rerun would read the output back as its input.

    Parameters
    ----------
    outputs
        (option, path) of every file the command would write or remove.
    inputs
        (what, path) of every file it reads; None entries are skipped.
    """
    for option, out in outputs:
        for what, path in inputs:
            if path is not None and same_file(out, path):
                raise ProcureError(
                    f"the output path is the {what} this command reads: writing it would "
                    "replace its own input",
                    file=str(out),
                    field=option,
                    fix=f"choose another path for {option}",
                )


# --------------------------------------------------------------------------- writes

_UMASK = os.umask(0)
os.umask(_UMASK)
#: the signals during which a publication completes before they are acted on (the CLI
#: turns each into :class:`solver.errors.Interrupted`; SIGHUP is absent on Windows)
DEFERRED_SIGNALS = tuple(
    getattr(signal, name)
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGALRM")  # SIGALRM: the CLI's deadline
    if hasattr(signal, name)
)
#: every file this process has published (written whole or removed) since
#: :func:`reset_published`: what an interrupted command says it wrote
_PUBLISHED: list[Path] = []


def reset_published() -> None:
    """Forget what was published (a command's start)."""
    _PUBLISHED.clear()


def published() -> list[Path]:
    """The files published (written or removed as one set) since :func:`reset_published`."""
    return list(_PUBLISHED)


def swap_handlers(handlers: dict[int, object]) -> dict[int, object]:
    """Set each signal's handler, with every signal of :data:`DEFERRED_SIGNALS` blocked
    while they are set, and return the handlers they replace.

    A signal that comes in the middle is held until every handler is set and then acted
    on by the new ones: without the block, a SIGALRM (the CLI's ``--time-limit``, repeated
    every 0.1 s) or a SIGINT arriving between two ``signal.signal`` calls raised there and
    left the handlers half swapped (Ctrl-C then ignored for the rest of the process, and
    the staged temporary files of a write left behind). Raises ValueError outside the main
    thread, having set nothing.
    """
    block = getattr(signal, "pthread_sigmask", None)  # absent on Windows
    if block is not None:
        mask = block(signal.SIG_BLOCK, DEFERRED_SIGNALS)
    previous: dict[int, object] = {}
    try:
        for sig, handler in handlers.items():
            previous[sig] = signal.signal(sig, handler)
    except ValueError:  # not the main thread: the first call refuses, nothing is set
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        raise
    finally:
        if block is not None:
            block(signal.SIG_SETMASK, mask)
    return previous


@contextmanager
def signals_deferred():
    """Hold SIGINT, SIGTERM and SIGHUP until the block ends, then act on the first that came
    (with the handler that was in place: a KeyboardInterrupt, the CLI's
    :class:`~solver.errors.Interrupted`, or the default action). Only the main thread can
    set handlers; elsewhere the block runs as it is. The handlers are swapped in and out
    whole (:func:`swap_handlers`), whatever signal comes meanwhile."""
    caught: list[int] = []
    try:
        previous = swap_handlers(
            {sig: lambda signum, frame: caught.append(signum) for sig in DEFERRED_SIGNALS}
        )
    except ValueError:  # not the main thread: nothing to defer
        previous = {}
    try:
        yield
    finally:
        if previous:
            swap_handlers(previous)
    if caught:
        signal.raise_signal(caught[0])


def _write(handle_fd: int, content: str | bytes) -> None:
    if isinstance(content, bytes):
        with os.fdopen(handle_fd, "wb") as handle:
            handle.write(content)
    else:
        with os.fdopen(handle_fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(content)


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write a file so that it is either whole or absent (temp file + rename)."""
    write_paths_together({Path(path): text})


def _stage(files: dict[Path, str | bytes]) -> list[tuple[str, Path]]:
    """Each file written whole to a temporary file beside its target: (temp, target)."""
    staged: list[tuple[str, Path]] = []
    try:
        for path, content in files.items():
            path = Path(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
            staged.append((tmp, path))
            _write(fd, content)
            os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; give the usual mode
    except BaseException:
        with signals_deferred():
            for tmp, _ in staged:
                Path(tmp).unlink(missing_ok=True)
        raise
    return staged


def _set_aside(path: Path) -> tuple[str | None, bool]:
    """Keep the file at ``path`` (if any) under a temporary name beside it: a hard link
    where the file system has them (``path`` itself stays in place: True), else a rename
    (False). Returns (the kept copy or None, whether ``path`` is still there)."""
    if not os.path.lexists(path):
        return None, False
    backup = str(path.parent / f".{path.name}.{secrets.token_hex(8)}.old")
    try:
        os.link(path, backup, follow_symlinks=False)
        return backup, True
    except FileExistsError:
        raise
    except OSError:  # no hard links here (some network and FAT file systems)
        os.rename(path, backup)
        return backup, False


def _publish(staged: list[tuple[str, Path]], remove: list[Path]) -> None:
    """Move the staged files into place and remove ``remove``, as one set: on any error
    every target is put back as it was (old files from their kept copies)."""
    # per target: (target, kept copy of the old file or None, whether target is changed)
    done: list[list] = []
    try:
        for tmp, target in [*staged, *[(None, path) for path in remove]]:
            backup, still_there = _set_aside(target)
            step = [target, backup, not still_there]
            done.append(step)
            if tmp is not None:
                os.replace(tmp, target)
            elif still_there:
                os.unlink(target)
            step[2] = True
    except BaseException:
        for target, backup, changed in reversed(done):
            if changed and backup is not None:
                os.replace(backup, target)
            elif changed:
                Path(target).unlink(missing_ok=True)
            elif backup is not None:
                Path(backup).unlink(missing_ok=True)
        raise
    for _, backup, _ in done:
        if backup is not None:
            Path(backup).unlink(missing_ok=True)


def write_paths_together(files: dict[Path, str | bytes], remove: list[Path] = ()) -> None:
    """Write several files (and remove ``remove``) as one set: all of it, or none.

    Every file is first written whole to a temporary file beside its target (staging): an
    error, Ctrl-C, SIGTERM or SIGHUP then removes what was staged and leaves every target
    as it was. Then each target is replaced by a rename (publishing), with SIGINT, SIGTERM
    and SIGHUP held until the set is complete and an error putting the old files back: the
    targets hold the complete old set or the complete new set, never a mix (only a power
    cut or SIGKILL during the renames, microseconds, could leave one; the old files are
    then beside them as ``.NAME.*.old``). What was published is recorded
    (:func:`published`) before a held signal is acted on.
    """
    staged = _stage(files)
    with signals_deferred():
        try:
            _publish(staged, [Path(p) for p in remove])
            _PUBLISHED.extend([Path(p) for p in files] + [Path(p) for p in remove])
        finally:
            for tmp, _ in staged:
                Path(tmp).unlink(missing_ok=True)


def write_files_together(
    folder: Path, files: dict[str, str | bytes], remove: list[str] = ()
) -> None:
    """Write ``files`` (name -> content) into ``folder`` and remove the files named
    ``remove`` there, as one set (see :func:`write_paths_together`)."""
    folder = Path(folder)
    write_paths_together(
        {folder / name: content for name, content in files.items()},
        [folder / name for name in remove],
    )


# --------------------------------------------------------------------------- workbooks

USD_FORMAT = '"$"#,##0.00;[Red]-"$"#,##0.00'
#: unit prices and $ per 1M tokens: cents and up to two more decimals, never rounded
PRICE_FORMAT = '"$"#,##0.00##;[Red]-"$"#,##0.00##'
PERCENT_FORMAT = "0.0%"
HOURS_FORMAT = "#,##0.0"
TONNES_FORMAT = "#,##0.00"
NUMBER_FORMAT = "#,##0.00##"
#: the formats whose cells hold money
MONEY_FORMATS = (USD_FORMAT, PRICE_FORMAT)


def _number_format(column: str) -> str | None:
    """The format a column's name calls for: money (``*_usd``, ``usd_*``, ``*_usd_per_*``;
    unit prices and ``usd_per_mtoken`` to the hundredth of a cent), a fraction under a
    percent format (``*_share``, ``*_fraction``, ``share``, ``gap``, ``*probability``),
    hours to a tenth (``hours``, ``*_hours``, ``hours_*``), tonnes of CO2e (``*_t``,
    ``*_tco2e``); None for the rest (plain numbers get :data:`NUMBER_FORMAT` when they are
    not whole). A ``*_pct`` column (percent points) gets no percent format: store its
    fraction under another name instead."""
    name = column.lower()
    if "usd_per_1m" in name:  # $ per 1M tokens (unit costs, all in or compute)
        return PRICE_FORMAT
    if "price" in name or name == "usd_per_mtoken":
        return PRICE_FORMAT if "usd" in name or name.endswith("price") else None
    if name.endswith(("_usd", "usd_per_hour", "_usd_per_server")) or name.startswith("usd_"):
        return USD_FORMAT
    if name.endswith(("_share", "_fraction", "probability")) or name in ("share", "gap"):
        return PERCENT_FORMAT
    if name == "hours" or name.endswith("_hours") or name.startswith("hours_"):
        return HOURS_FORMAT
    if name.endswith(("_t", "_tco2e")):
        return TONNES_FORMAT
    return None


def _is_whole(value: object) -> bool:
    return isinstance(value, int | bool) or (isinstance(value, float) and value.is_integer())


def workbook(
    sheets: dict[str, pd.DataFrame],
    totals: dict[str, list[str]] | None = None,
    formats: dict[str, dict[str, str | list[str | None]]] | None = None,
    formulas: dict[str, dict[str, list[str | None]]] | None = None,
) -> bytes:
    """An XLSX finance can use: one sheet per frame, in order.

    Headers bold and frozen, a filter on every sheet, widths from the content,
    currency format on USD columns (``*_usd``, ``usd_*``, ``*_usd_per_hour``; unit prices
    to the hundredth of a cent), percent on shares (stored as fractions), hours to a
    tenth, plain numbers that are not whole to two to four decimals
    (:func:`_number_format`); money in :data:`USD_FORMAT` rounded to the cent.
    ``formats`` overrides, per sheet, a column's format (one format, or one per data
    row: a summary of mixed figures). ``totals`` names, per sheet, the columns to
    total: a "total" row below the data after one blank row, never inside it, each a
    formula over the rows above it (money: ``=ROUND(SUM(...),2)``), so that a figure
    changed in a row moves the total. ``formulas`` gives, per sheet and column, a formula
    per data row (None: the value) that replaces the value: a line's cost worked from an
    inputs sheet (:mod:`solver.outputs.live_workbook`). Cells a spreadsheet would execute
    are neutralised (:func:`neutralise_frame`); the formulas given are ours, not data.
    Timestamps are fixed so that equal input gives equal bytes.
    """
    from openpyxl import Workbook
    from openpyxl.styles import Font
    from openpyxl.utils import get_column_letter

    book = Workbook()
    book.remove(book.active)
    for name, frame in sheets.items():
        sheet = book.create_sheet(title=name[:31])
        frame = neutralise_frame(frame)
        columns = [str(c) for c in frame.columns]
        sheet.append(columns)
        given = (formats or {}).get(name, {})
        formats_by_row = [
            [
                (given[c] if isinstance(given[c], str) else given[c][i])
                if c in given
                else _number_format(c)
                for c in columns
            ]
            for i in range(len(frame))
        ]
        live = (formulas or {}).get(name, {})
        rows = zip(frame.itertuples(index=False), formats_by_row, strict=True)
        for r, (row, row_formats) in enumerate(rows, start=2):  # row 1 holds the names
            values = []
            for k, (value, fmt) in enumerate(zip(row, row_formats, strict=True)):
                formula = live[columns[k]][r - 2] if columns[k] in live else None
                if formula is not None:
                    value = formula
                elif isinstance(value, float) and pd.isna(value):
                    value = None
                elif (
                    fmt == USD_FORMAT
                    and isinstance(value, int | float)
                    and not isinstance(value, bool)
                ):
                    value = round(float(value), 2)
                elif hasattr(value, "item"):  # numpy scalars
                    value = value.item()
                elif isinstance(value, list | dict):
                    value = str(value)
                values.append(value)
            sheet.append(values)
            # the row's cells by their addresses: sheet[sheet.max_row] scanned every cell of
            # the sheet for each row (a 1,000-row sheet took two minutes)
            cells = (sheet.cell(row=r, column=j) for j in range(1, len(values) + 1))
            for cell, value, fmt in zip(cells, values, row_formats, strict=True):
                if fmt is not None:
                    cell.number_format = fmt
                elif isinstance(value, float) and not _is_whole(value):
                    cell.number_format = NUMBER_FORMAT
        n_rows = len(frame) + 1
        wanted = (totals or {}).get(name, [])
        if wanted and len(frame):
            sheet.append([])
            sums: list[str | None] = []
            for k, c in enumerate(columns):
                if k == 0:
                    sums.append("total")
                    continue
                if c not in wanted:
                    sums.append(None)
                    continue
                span = f"{get_column_letter(k + 1)}2:{get_column_letter(k + 1)}{n_rows}"
                fmt = given.get(c) if isinstance(given.get(c), str) else _number_format(c)
                money = fmt == USD_FORMAT
                sums.append(f"=ROUND(SUM({span}),2)" if money else f"=SUM({span})")
            sheet.append(sums)
            for cell, c in zip(sheet[sheet.max_row], columns, strict=True):
                cell.font = Font(bold=True)
                if c in wanted:
                    fmt = given.get(c) if isinstance(given.get(c), str) else _number_format(c)
                    cell.number_format = fmt or NUMBER_FORMAT
        for k, column in enumerate(columns, start=1):
            letter = get_column_letter(k)
            longest = max([len(column)] + [len(str(v)) for v in frame.iloc[:, k - 1].head(500)])
            sheet.column_dimensions[letter].width = min(60, max(8, longest + 2))
        for cell in sheet[1]:
            cell.font = Font(bold=True)
        sheet.freeze_panes = "A2"
        if columns:
            sheet.auto_filter.ref = f"A1:{get_column_letter(len(columns))}{max(n_rows, 1)}"
    out = io.BytesIO()
    book.save(out)
    return stable_zip(out.getvalue())  # dated 2000-01-01, whenever it is saved


def stable_zip(data: bytes) -> bytes:
    """The same archive with its members and an Office file's created and modified dates
    at 2000-01-01: equal input, equal bytes (openpyxl dates both when it saves)."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=(2000, 1, 1, 0, 0, 0))
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = info.external_attr
            body = src.read(info.filename)
            if info.filename == "docProps/core.xml":
                # openpyxl stamps the save time into dcterms:modified whatever we set
                body = re.sub(
                    rb"(<dcterms:(created|modified)[^>]*>)[^<]*(</dcterms:)",
                    rb"\g<1>2000-01-01T00:00:00Z\g<3>",
                    body,
                )
            dst.writestr(fixed, body)
    return out.getvalue()
