"""Text tables and wrapped lines for a terminal, without a rendering library.

The plan table (:func:`solver.outputs.text.plan_table`) is printed at the end of every
``procure solve``; rendering it with rich, and importing rich, cost a visible part of
that command's time. :class:`Page` and :class:`Table` give the
same text as rich's ``Console(width=170, color_system=None)`` printing ``Table`` objects
with their defaults (the heavy-head box, one space of padding, cells wrapped at word
boundaries when the table is wider than the page, titles wrapped and padded to the table's
width), for the subset procure uses: left and right justified columns, ``ellipsis`` and
``fold`` overflow, markup tags dropped (``[bold]``) and escaped brackets kept
(``rich.markup.escape``). tests/outputs/test_grid.py compares both on generated tables.

The algorithm is rich's (Will McGugan, rich 15.0, MIT licence: ``rich/table.py``
``_calculate_column_widths`` and ``_collapse_widths``, ``rich/_ratio.py`` ``ratio_reduce``,
``rich/_wrap.py`` ``divide_line``), written again for plain strings.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

#: a word and the whitespace after it (rich/_wrap.py)
_WORD = re.compile(r"\s*\S+\s*")
#: a markup tag, with the backslashes before it (rich/markup.py RE_TAGS)
_TAG = re.compile(r"((\\*)\[([a-z#/@][^[]*?)])")
#: the heavy-head box: top, header row, rule under the header, body rows, bottom
_TOP, _HEAD, _RULE, _BODY, _BOTTOM = "┏━┳┓", "┃ ┃┃", "┡━╇┩", "│ ││", "└─┴┘"


def cell_width(text: str) -> int:
    """Columns ``text`` takes in a terminal: two for East Asian wide characters."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def plain(markup: str) -> str:
    """Text without its markup tags: ``[bold]x[/bold]`` is ``x``; an escaped ``\\[x]``
    (:func:`escape`) is ``[x]``."""
    out, position = [], 0
    for match in _TAG.finditer(markup):
        full, escapes, _ = match.groups()
        start, end = match.span()
        out.append(markup[position:start].replace("\\[", "["))
        backslashes, escaped = divmod(len(escapes), 2)
        out.append("\\" * backslashes)
        if escaped:
            out.append(full[len(escapes) :])
        position = end
    out.append(markup[position:].replace("\\[", "["))
    return "".join(out)


def escape(text: str) -> str:
    """``text`` with its brackets kept through :func:`plain` (as ``rich.markup.escape``)."""
    text = re.sub(r"(\\*)(\[[a-z#/@][^[]*?])", r"\1\1\\\2", text)
    return text + "\\" if text.endswith("\\") and not text.endswith("\\\\") else text


def _chop(word: str, width: int) -> list[str]:
    """``word`` cut into pieces of at most ``width`` columns."""
    pieces, piece, used = [], "", 0
    for c in word:
        w = cell_width(c)
        if piece and used + w > width:
            pieces.append(piece)
            piece, used = "", 0
        piece, used = piece + c, used + w
    return [*pieces, piece]


def _breaks(line: str, width: int, fold: bool) -> list[int]:
    """Where a line breaks to fit ``width`` (rich's ``divide_line``)."""
    out: list[int] = []
    offset = 0
    for match in _WORD.finditer(line):
        start, word = match.start(), match.group(0)
        length = cell_width(word.rstrip())
        if width - offset >= length:
            offset += cell_width(word)
        elif length > width and fold:
            pieces = _chop(word, width)
            for piece in pieces[:-1]:
                if start:
                    out.append(start)
                start += len(piece)
            if start:
                out.append(start)
            offset = cell_width(pieces[-1])
        elif length > width:
            if start:
                out.append(start)
            offset = cell_width(word)
        elif offset and start:
            out.append(start)
            offset = cell_width(word)
    return out


def _fit(text: str, width: int, overflow: str, pad: bool) -> str:
    """One line cut to ``width`` (ending in an ellipsis unless ``fold``), padded to it."""
    length = cell_width(text)
    if length > width:
        keep = width - 1 if overflow == "ellipsis" else width
        text = _chop(text, max(keep, 1))[0] if keep > 0 else ""
        text += "…" if overflow == "ellipsis" else ""
        length = cell_width(text)
    return text + " " * (width - length) if pad and length < width else text


def wrap(text: str, width: int, justify: str = "default", overflow: str = "fold") -> list[str]:
    """``text`` in lines of at most ``width`` columns (rich's ``Text.wrap``): broken at
    spaces, a word wider than a line folded (``fold``) or cut with an ellipsis;
    ``left`` and ``right`` pad each line to the width."""
    out = []
    for line in text.split("\n"):
        line = line.expandtabs(8)
        cuts = [0, *_breaks(line, width, overflow == "fold"), len(line)]
        for a, b in zip(cuts, cuts[1:], strict=False):
            piece = line[a:b]
            excess = cell_width(piece) - width
            if excess > 0:  # trailing whitespace beyond the width goes
                spaces = len(piece) - len(piece.rstrip())
                piece = piece[: len(piece) - min(spaces, excess)]
            if justify == "right":
                piece = _fit(piece.rstrip(), width, overflow, pad=False)
                piece = " " * (width - cell_width(piece)) + piece
            else:
                piece = _fit(piece, width, overflow, pad=justify == "left")
            out.append(piece)
    return out


def _ratio_reduce(total: int, ratios: list[int], maximums: list[int], values: list[int]):
    """Take ``total`` from ``values`` in proportion to ``ratios``, each at most its maximum
    (rich's ``ratio_reduce``)."""
    ratios = [r if m else 0 for r, m in zip(ratios, maximums, strict=True)]
    left_ratio, left = sum(ratios), total
    if not left_ratio:
        return list(values)
    out = []
    for ratio, maximum, value in zip(ratios, maximums, values, strict=True):
        if ratio and left_ratio > 0:
            taken = min(maximum, round(ratio * left / left_ratio))
            out.append(value - taken)
            left -= taken
            left_ratio -= ratio
        else:
            out.append(value)
    return out


def _collapse(widths: list[int], limit: int) -> list[int]:
    """Narrow the widest columns, in steps, until the table fits ``limit``."""
    excess = sum(widths) - limit
    while sum(widths) and excess > 0:
        widest = max(widths)
        second = max((w for w in widths if w != widest), default=0)
        ratios = [1 if w == widest else 0 for w in widths]
        if not widest - second:
            break
        widths = _ratio_reduce(excess, ratios, [min(excess, widest - second)] * len(widths), widths)
        excess = sum(widths) - limit
    return widths


@dataclass
class Column:
    """A column: its header, ``left`` or ``right`` justified, and what a word too long for
    it does (``ellipsis``: cut with an ellipsis; ``fold``: broken across lines)."""

    header: str
    justify: str = "left"
    overflow: str = "ellipsis"


@dataclass
class Table:
    """A table with a title and a header row, drawn in the heavy-head box."""

    title: str = ""
    title_justify: str = "left"  # or "default": not padded to the table's width
    columns: list[Column] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)

    def add_column(self, header: str, justify: str = "left", overflow: str = "ellipsis") -> None:
        self.columns.append(Column(header, justify, overflow))

    def add_row(self, *cells: str) -> None:
        self.rows.append([plain(c) for c in cells])

    def _widths(self, limit: int) -> list[int]:
        """Each column's width with its padding, the table within ``limit`` columns
        (borders not counted)."""
        table = [[plain(c.header) for c in self.columns], *self.rows]

        def measure(k: int, cap: int) -> int:
            most = 0
            for row in table:
                lines = row[k].splitlines()
                longest = max(map(cell_width, lines), default=0)
                longest = min(longest, cap - 2) if cap - 2 >= 1 else longest
                most = max(most, (longest if longest >= 1 else 0) + 2)
            return min(most, cap)

        widths = [measure(k, limit) or 1 for k in range(len(self.columns))]
        if sum(widths) > limit:
            widths = _collapse(widths, limit)
            if sum(widths) > limit:
                widths = _ratio_reduce(sum(widths) - limit, [1] * len(widths), widths, widths)
            widths = [measure(k, w) for k, w in enumerate(widths)]
        return widths

    def lines(self, width: int) -> list[str]:
        """The table in lines of at most ``width`` columns."""
        if not self.columns:
            return [""]
        widths = self._widths(width - len(self.columns) - 1)
        total = sum(widths) + len(self.columns) + 1
        out = wrap(plain(self.title), total, self.title_justify) if self.title else []

        def rule(box: str) -> str:
            return box[0] + box[2].join(box[1] * w for w in widths) + box[3]

        def row(cells: list[str], box: str) -> list[str]:
            wrapped = [
                wrap(cell, w - 2, c.justify, c.overflow)
                for cell, w, c in zip(cells, widths, self.columns, strict=True)
            ]
            height = max(map(len, wrapped))
            if box is _HEAD:  # header cells sit on the rule under them, body cells on top
                wrapped = [[""] * (height - len(cell)) + cell for cell in wrapped]
            lines = []
            for i in range(height):
                parts = [
                    f" {_fit(cell[i] if i < len(cell) else '', w - 2, 'fold', pad=True)} "
                    for cell, w in zip(wrapped, widths, strict=True)
                ]
                lines.append(box[0] + box[2].join(parts) + box[3])
            return lines

        out.append(rule(_TOP))
        out += row([plain(c.header) for c in self.columns], _HEAD)
        out.append(rule(_RULE))
        for cells in self.rows:
            out += row(cells, _BODY)
        out.append(rule(_BOTTOM))
        return out


@dataclass
class Page:
    """Lines of text for a terminal ``width`` columns wide: :meth:`print` a line (wrapped
    at spaces; markup tags dropped unless ``markup=False``) or a :class:`Table`."""

    width: int = 170
    lines: list[str] = field(default_factory=list)

    def print(self, item: str | Table, markup: bool = True) -> None:
        if isinstance(item, Table):
            self.lines += item.lines(self.width)
        else:
            self.lines += wrap(plain(item) if markup else item, self.width)

    def text(self) -> str:
        return "".join(f"{line}\n" for line in self.lines)
