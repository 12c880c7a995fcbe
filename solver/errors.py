"""One error type for everything a user can cause.

A :class:`ProcureError` names the file, the field (or line) and the fix. The CLI
prints it as one message and exits non-zero; it never shows a traceback unless
``--debug`` is given.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class ProcureError(Exception):
    """A user-facing error with its location and fix.

    Parameters
    ----------
    message
        What is wrong, in one sentence.
    file
        The file the error is in, if any.
    field
        The field path (``workloads[1].tokens``) or ``line N``.
    fix
        How to fix it.
    """

    def __init__(
        self, message: str, *, file: str | None = None, field: str | None = None, fix: str = ""
    ) -> None:
        self.message = message
        self.file = file
        self.field = field
        self.fix = fix
        super().__init__(self.render())

    def render(self) -> str:
        where = ": ".join(part for part in (self.file, self.field) if part)
        text = f"{where}: {self.message}" if where else self.message
        return f"{text}\n  fix: {self.fix}" if self.fix else text


class InfeasibleError(ProcureError):
    """The problem has no feasible plan."""


class NoPlanError(ProcureError):
    """A limit (time) stopped the work before any plan was found: not a proof of anything."""


def closest(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Return up to ``n`` candidates closest to ``name`` (case-insensitive)."""
    pool = {c.lower(): c for c in candidates}
    return [pool[m] for m in difflib.get_close_matches(name.lower(), list(pool), n=n, cutoff=0.4)]


def suggestion(name: str, candidates: Iterable[str]) -> str:
    """A 'did you mean' phrase for an unknown name, or a hint to list names."""
    matches = closest(name, candidates)
    if matches:
        return "did you mean " + " or ".join(repr(m) for m in matches) + "?"
    return "run `procure catalog list` to see the known names"
