"""One error type for everything a user can cause.

A :class:`ProcureError` names the file, the field (or line) and the fix. The CLI
prints it as one message and exits non-zero; it never shows a traceback unless
``--debug`` is given.
"""

from __future__ import annotations

import difflib
import unicodedata
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


class Interrupted(KeyboardInterrupt):
    """A signal asked the command to stop (SIGINT, SIGTERM or SIGHUP): raised like Ctrl-C's
    KeyboardInterrupt, so every ``finally`` and rollback runs, and the exit code says which
    signal (128 + its number: 130, 143, 129, as a shell reports a process it killed)."""

    def __init__(self, signum: int) -> None:
        import signal

        self.signum = int(signum)
        self.name = signal.Signals(self.signum).name
        super().__init__(self.name)

    def __reduce__(self) -> tuple:
        # rebuilt from the signal's number (its args hold the name): a pool worker's
        # Interrupted reaches the parent as itself, not as a pool broken by unpickling
        return (type(self), (self.signum,))

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class InfeasibleError(ProcureError):
    """The problem has no feasible plan."""


class NoPlanError(ProcureError):
    """A limit (time) stopped the work before any plan was found: not a proof of anything."""


#: Characters that look like a Latin letter, a hyphen or nothing at all in common fonts
#: (Unicode Technical Standard #39, confusables.txt: the Cyrillic and Greek letters drawn
#: as Latin ones, dashes drawn as a hyphen-minus, and invisible characters). A name typed
#: with one of them (``us-еast-1`` with a Cyrillic ``е``) is not the name in the catalog
#: although it reads the same; :func:`skeleton` maps them back so the real name is found.
LOOKALIKES: dict[str, str] = {
    # Cyrillic
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i",
    "ј": "j", "ѕ": "s", "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l", "ѵ": "v",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P",
    "С": "C", "Т": "T", "Х": "X", "У": "Y", "І": "I", "Ј": "J", "Ѕ": "S", "Ԁ": "D",
    # Greek
    "α": "a", "ο": "o", "ν": "v", "ι": "i", "κ": "k", "ρ": "p", "τ": "t", "υ": "u",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M",
    "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # dashes drawn as '-', and characters drawn as nothing
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-",
    "\u2212": "-", "\ufe63": "-", "\u00ad": "", "\u200b": "", "\u200c": "", "\u200d": "",
    "\u2060": "", "\ufeff": "",
}  # fmt: skip


def skeleton(name: str) -> str:
    """``name`` as it reads: compatibility forms folded (NFKC: full-width ``ｕｓ`` is
    ``us``), look-alike letters and dashes mapped to the Latin ones they look like
    (:data:`LOOKALIKES`), invisible characters dropped, lower case."""
    folded = unicodedata.normalize("NFKC", name)
    return "".join(LOOKALIKES.get(ch, ch) for ch in folded).lower()


def lookalikes(name: str) -> list[str]:
    """The characters of ``name`` that only look like plain ASCII, each as
    ``'е' (U+0435 CYRILLIC SMALL LETTER IE) at position 4`` (1-based)."""
    out = []
    for k, ch in enumerate(name, start=1):
        if ord(ch) < 128:
            continue
        plain = LOOKALIKES.get(ch, unicodedata.normalize("NFKC", ch))
        if plain != ch and all(ord(c) < 128 for c in plain):
            label = unicodedata.name(ch, "unnamed character")
            out.append(f"{ch!r} (U+{ord(ch):04X} {label}) at position {k}")
    return out


def closest(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Return up to ``n`` candidates closest to ``name`` (case-insensitive); only those
    that read the same once look-alike letters are mapped back (:func:`skeleton`), when
    there are any."""
    pool = {c.lower(): c for c in candidates}
    same = [c for c in pool.values() if skeleton(c) == skeleton(name)]
    if same:
        return same[:n]
    return [pool[m] for m in difflib.get_close_matches(skeleton(name), list(pool), n=n, cutoff=0.4)]


def suggestion(name: str, candidates: Iterable[str]) -> str:
    """A 'did you mean' phrase for an unknown name (saying which of its letters only look
    like the ones meant), or a hint to list names."""
    matches = closest(name, candidates)
    odd = lookalikes(name)
    note = (
        f" {name!r} has look-alike characters: {', '.join(odd)}; type them on a Latin keyboard"
        if odd
        else ""
    )
    if matches:
        return "did you mean " + " or ".join(repr(m) for m in matches) + "?" + note
    return "run `procure catalog list` to see the known names" + note


class TimeLimitReached(KeyboardInterrupt):
    """The command's ``--time-limit`` ran out before it could answer: raised in
    the main thread by the CLI's deadline alarm, like Ctrl-C's KeyboardInterrupt, so that
    every ``finally`` and rollback runs (staged files removed, pool workers stopped) and no
    ``except Exception`` on the way swallows it."""

    def __init__(
        self, limit_s: float, elapsed_s: float, before: str = "the command could answer"
    ) -> None:
        self.limit_s = float(limit_s)
        self.elapsed_s = float(elapsed_s)
        self.before = before  # what had not happened yet: "any plan was found", ...
        super().__init__(f"time limit {self.limit_s:g} s")
