"""MkDocs hook: Sphinx cross-reference roles in docstrings, shown as plain code.

The docstrings name other objects the Sphinx way (``:func:`solve_problem```,
``:class:`~solver.plan.Plan```); mkdocstrings renders the backquoted part as code and leaves
the role in front of it. This drops the role (and, after ``~``, all but the last part of the
path, as Sphinx shows it), so the API pages read ``solve_problem`` and ``Plan``.
"""

from __future__ import annotations

import re

#: a role before a code span, as mkdocstrings renders it
ROLE = re.compile(
    r":(?:py:)?(?:class|func|meth|mod|data|attr|exc|obj|const):<code>(~?)([\w.]+)</code>"
)


def _plain(match: re.Match[str]) -> str:
    """The code span without its role; ``~a.b.C`` shows as ``C``."""
    path = match.group(2)
    return f"<code>{path.rsplit('.', 1)[-1] if match.group(1) else path}</code>"


def on_page_content(html: str, page: object, config: object, files: object) -> str:
    """Drop Sphinx roles in front of code spans on every page."""
    return ROLE.sub(_plain, html)
