"""The plain-text tables (solver/outputs/grid.py) give rich's text, without rich.

The plan table used rich (``Console(width=170, color_system=None)``); grid.py draws the
same tables and wrapped lines in a few milliseconds (issue 27). Two kinds of check:
small cases written out by hand, and generated tables and lines, compared character for
character with what rich prints for them (rich stays installed: typer uses it).
"""

from __future__ import annotations

import io
import random

import pytest
from rich.console import Console
from rich.markup import escape as rich_escape
from rich.table import Table as RichTable

from solver.outputs.grid import Page, Table, escape, plain, wrap


def test_a_small_table_by_hand():
    # widths: "name"/"a"/"bb" -> 4 + 2 spaces of padding = 6; "$"/"1"/"22" -> 2 + 2 = 4;
    # the table is 1 + 6 + 1 + 4 + 1 = 13 columns wide, and its title padded to 13
    t = Table(title="t")
    t.add_column("name")
    t.add_column("$", justify="right")
    t.add_row("a", "1")
    t.add_row("bb", "22")
    assert t.lines(170) == [
        "t" + " " * 12,
        "┏━━━━━━┳━━━━┓",
        "┃ name ┃  $ ┃",
        "┡━━━━━━╇━━━━┩",
        "│ a    │  1 │",
        "│ bb   │ 22 │",
        "└──────┴────┘",
    ]


def test_a_table_wider_than_the_page_wraps_its_widest_column():
    # natural widths 2 + 20 = 22 and 2 + 3 = 5, borders 3: 30 > 20 columns, so the widest
    # column gives up 10 (20 - 3 borders - 5 = 12 for it, 10 for its text)
    t = Table()
    t.add_column("x")
    t.add_column("y")
    t.add_row("aaaa bbbb cccc dddd", "abc")
    assert t.lines(20) == [
        "┏━━━━━━━━━━━━┳━━━━━┓",
        "┃ x          ┃ y   ┃",
        "┡━━━━━━━━━━━━╇━━━━━┩",
        "│ aaaa bbbb  │ abc │",
        "│ cccc dddd  │     │",
        "└────────────┴─────┘",
    ]


def test_lines_wrap_at_spaces_and_markup_is_dropped():
    page = Page(width=10)
    page.print("[bold]one[/bold] two three four")
    page.print("[h100] stays", markup=False)
    assert page.text() == "one two \nthree four\n[h100] \nstays\n"
    assert plain(escape("[h100-sxm] x")) == "[h100-sxm] x"
    assert wrap("abcdefghijkl", 5) == ["abcde", "fghij", "kl"]  # a long word folds
    assert wrap("abcdefgh", 5, "left", "ellipsis") == ["abcd…"]


WORDS = ["a", "bb", "ccc", "dddd", "eeeeeeee", "ffffffffffffffff", "1,234", "$5", "x y", "é"]


def _random_text(rng: random.Random) -> str:
    n = rng.choice([0, 1, 1, 2, 3, 5, 9])
    text = " ".join(rng.choice(WORDS) for _ in range(n))
    if rng.random() < 0.15:
        text += "\n" + rng.choice(WORDS)
    if rng.random() < 0.1:
        text = f"[bold]{text}[/bold]"
    if rng.random() < 0.1:
        text = rich_escape(f"[h100-{text}]")
    return text


def _rich_lines(render, width: int) -> str:
    buffer = io.StringIO()
    console = Console(
        file=buffer, width=width, force_terminal=False, color_system=None, highlight=False
    )
    console.print(render)
    return buffer.getvalue()


@pytest.mark.parametrize("seed", range(150))
def test_generated_tables_print_as_rich_prints_them(seed):
    rng = random.Random(seed)
    width = rng.choice([20, 40, 60, 90, 170])
    # at least 10 columns of page per column (procure prints 14 columns on 170)
    n_columns, n_rows = rng.randint(1, min(9, width // 10)), rng.randint(0, 6)
    ours, theirs = Table(title=_random_text(rng)), RichTable(title=None, title_justify="left")
    theirs.title = ours.title or None
    for _ in range(n_columns):
        header = _random_text(rng)
        justify = rng.choice(["left", "right"])
        overflow = rng.choice(["ellipsis", "fold"])
        ours.add_column(header, justify=justify, overflow=overflow)
        theirs.add_column(header, justify=justify, overflow=overflow)
    for _ in range(n_rows):
        cells = [_random_text(rng) for _ in range(n_columns)]
        ours.add_row(*cells)
        theirs.add_row(*cells)
    page = Page(width=width)
    page.print(ours)
    assert page.text() == _rich_lines(theirs, width)


@pytest.mark.parametrize("seed", range(60))
def test_generated_lines_print_as_rich_prints_them(seed):
    rng = random.Random(1000 + seed)
    width = rng.choice([8, 20, 50, 170])
    text = " ".join(_random_text(rng) for _ in range(rng.randint(1, 12)))
    if rng.random() < 0.3:
        text = "  - " + text
    page = Page(width=width)
    page.print(text)
    assert page.text() == _rich_lines(text, width)
