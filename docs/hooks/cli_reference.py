"""MkDocs hook: the CLI reference page, generated at build time from the typer app.

A page holding the marker ``<!-- procure-cli-reference -->`` gets, in its place, the
Markdown that typer's own documentation generator (``typer ... utils docs``) writes for
``solver.cli.app``: every command, argument and option with its help and default, read
from the program that runs, so the reference cannot drift from it.
"""

from __future__ import annotations

import typer.cli
import typer.main
import typer.models

#: The marker a page puts where the generated reference goes.
MARKER = "<!-- procure-cli-reference -->"


def cli_reference_markdown() -> str:
    """The Markdown reference of every ``procure`` command, from the typer app.

    Returns
    -------
    str
        Typer's generated documentation, its headings moved one level down so that the
        page's own title stays the only first-level heading.
    """
    from solver.cli import app

    command = typer.main.get_command(app)
    text = typer.cli.get_docs_for_click(
        obj=command, ctx=typer.models.Context(command), name="procure"
    )
    return "\n".join("#" + line if line.startswith("#") else line for line in text.splitlines())


def on_page_markdown(markdown: str, page: object, config: object, files: object) -> str:
    """Replace the marker with the generated reference (other pages unchanged)."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, cli_reference_markdown())
