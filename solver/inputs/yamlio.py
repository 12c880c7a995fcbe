"""Reading YAML strictly: YAML 1.2 scalars, no duplicate keys, bounded nesting.

PyYAML implements YAML 1.1, whose implicit types surprise people who write
configuration by hand: ``0500`` is octal (320), ``1:30`` is sexagesimal (90),
``yes``/``no``/``on``/``off`` are booleans, and ``1e12`` (no dot) is a string. A
duplicate key silently keeps the last value. The loader here resolves plain
scalars by the YAML 1.2 core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution):
only ``true``/``false`` are booleans, integers are decimal (``0o`` octal, ``0x``
hex), floats take an exponent without a dot, and ``.inf``/``.nan`` are floats (the
problem model then refuses them); it refuses duplicate keys, nesting deeper than
:data:`MAX_DEPTH`, and a document that holds more than :data:`MAX_NODES` values once its
aliases are expanded (an "alias bomb": nine nested lists of nine aliases each are 500
bytes of text and 9**9 = 387,420,489 values). The expansion is counted while the
document is composed, before any object is built: an alias adds the size of the node its
anchor names, so a bomb is refused after a few dozen events.

A leading UTF-8 byte-order mark is dropped and CR and CRLF line ends read as LF
(:func:`unix_lines`), so a file saved by an editor that adds them reads exactly as
the same file without them: the same values, the same line numbers in messages.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Hashable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, cast

import yaml

from solver.errors import ProcureError

if TYPE_CHECKING:
    from yaml._yaml import Mark as _CMark  # LibYAML's marks, when it is installed
    from yaml.error import Mark

    _Mark: TypeAlias = Mark | _CMark

MAX_DEPTH = 64  # a procure problem nests about 5 deep; 64 leaves room and stops abuse
#: the most values (scalars, lists and mappings, each key and value counted) a document may
#: hold once its aliases are expanded: the largest shipped problem
#: (problems/traffic-mix-measured.yaml) holds 391, so 20,000 leaves room for 50 times as
#: much; it stops an alias bomb after a few dozen events, and bounds what a document
#: without aliases costs to read (PyYAML composes some 15,000 values a second on one
#: loaded core, and the server's other requests wait for the interpreter meanwhile)
MAX_NODES = 20_000


def _line(mark: _Mark | None) -> int:
    """The 1-based line a parser mark points at.

    The parser sets every event's ``start_mark``; the stubs allow ``None`` only for events
    built by hand, so the cast narrows to what the parser hands over.
    """
    return cast("_Mark", mark).line + 1


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema scalars and the checks above."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.depth = 0
        #: values composed so far, every alias counted as the whole node it repeats
        self.nodes = 0
        #: anchor -> the expanded size of the node it names (set once that node is composed)
        self.anchor_sizes: dict[str, int] = {}

    def _count(self, size: int, mark: _Mark | None) -> None:
        self.nodes += size
        if self.nodes > MAX_NODES:
            raise ExpansionError(_too_many(), _line(mark))

    def compose_node(  # noqa: D102 - PyYAML's hook
        self, parent: yaml.Node | None, index: int
    ) -> yaml.Node | None:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            size = self.anchor_sizes.get(cast(str, event.anchor))  # an alias names one
            if size is None and event.anchor in self.anchors:  # still being composed
                raise ExpansionError(
                    f"the alias *{event.anchor} is inside the node its anchor names (a "
                    "structure that contains itself)",
                    _line(event.start_mark),
                    fix="write the value out instead of the alias",
                )
            self._count(size or 1, event.start_mark)  # an undefined one: PyYAML's message
            return super().compose_node(parent, index)
        self.depth += 1
        if self.depth > MAX_DEPTH:
            line = _line(event.start_mark)
            raise yaml.YAMLError(f"nested deeper than {MAX_DEPTH} levels (line {line})")
        before = self.nodes
        self._count(1, event.start_mark)
        try:
            node = super().compose_node(parent, index)
        finally:
            self.depth -= 1
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            self.anchor_sizes[anchor] = self.nodes - before
        return node

    def construct_mapping(  # noqa: D102 - PyYAML's hook
        self, node: yaml.MappingNode, deep: bool = False
    ) -> dict[Hashable, Any]:
        seen: dict[object, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if not isinstance(key, str | int | float | bool | None):
                raise DuplicateKeyError(f"a key must be a plain value (line {line})", line)
            if key in seen:
                raise DuplicateKeyError(
                    f"key {key!r} appears twice (lines {seen[key]} and {line}); YAML would keep "
                    "only the last",
                    line,
                )
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


class DuplicateKeyError(yaml.YAMLError):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


class ExpansionError(yaml.YAMLError):
    """Aliases that expand the document past :data:`MAX_NODES` values, or one inside the
    node it repeats; ``line``: where the alias that crossed the bound is."""

    def __init__(self, message: str, line: int, fix: str = "") -> None:
        super().__init__(message)
        self.line = line
        self.fix = fix or (
            "write the repeated values out, or repeat them with fewer nested aliases "
            f"(at most {MAX_NODES:,} values in all)"
        )


def unix_lines(text: str) -> str:
    """``text`` without a leading byte-order mark, its CR and CRLF line ends as LF."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


# YAML 1.2 core schema: replace PyYAML's 1.1 implicit resolvers for bool, int and float
_Loader.yaml_implicit_resolvers = {
    first: [
        (tag, rx) for tag, rx in resolvers if tag.rsplit(":", 1)[-1] not in ("bool", "int", "float")
    ]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
    list("-+0123456789"),
)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+.0123456789"),
)


def _construct_int(loader: _Loader, node: yaml.ScalarNode) -> int:
    text = loader.construct_scalar(node)
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)  # "0500" is 500, as YAML 1.2 reads it


def _construct_float(loader: _Loader, node: yaml.ScalarNode) -> float:
    text = loader.construct_scalar(node).lower()
    if text.endswith(".inf"):
        return float("-inf") if text.startswith("-") else float("inf")
    if text == ".nan":
        return float("nan")
    return float(text)


def _construct_bool(loader: _Loader, node: yaml.ScalarNode) -> bool:
    return loader.construct_scalar(node).lower() == "true"


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_Loader.add_constructor("tag:yaml.org,2002:float", _construct_float)
_Loader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)


def read_text_file(path: Path, *, what: str, fix: str) -> str:
    """The UTF-8 text of a regular file, or one clear error (never blocks on a FIFO)."""
    path = Path(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise ProcureError(f"{what} not found", file=str(path), fix=fix) from None
    except OSError as exc:
        raise ProcureError(f"cannot read it ({exc.strerror})", file=str(path), fix=fix) from None
    if stat.S_ISDIR(info.st_mode):
        raise ProcureError(f"this is a folder, not a {what}", file=str(path), fix=fix)
    if not stat.S_ISREG(info.st_mode):
        raise ProcureError(
            f"this is not a regular file (a pipe, device or socket), not a {what}",
            file=str(path),
            fix=fix,
        )
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ProcureError(
            f"not UTF-8 text (byte {exc.start} cannot be decoded); is it a {what}?",
            file=str(path),
            fix="save the file as UTF-8",
        ) from None
    except OSError as exc:
        raise ProcureError(f"cannot read it ({exc.strerror})", file=str(path), fix=fix) from None


def _precount(text: str) -> None:
    """Count the expanded values of ``text`` from LibYAML's events (C, some twenty times
    faster than composing in Python) and raise :class:`ExpansionError` where
    :class:`_Loader` would, so that a document too large is refused before the slow
    composition starts. Anything else (a syntax error, deep nesting, an undefined alias,
    a second document) is left to :class:`_Loader` and its messages; without LibYAML
    this does nothing."""
    if not getattr(yaml, "__with_libyaml__", False):
        return
    nodes = 0
    sizes: dict[str, int] = {}
    open_: list[tuple[str | None, int]] = []  # (anchor, values before it) per collection
    starts = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
    ends = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
    documents = 0
    try:
        for event in yaml.parse(text, Loader=yaml.CSafeLoader):  # noqa: S506 - events only
            if isinstance(event, yaml.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    return
            if isinstance(event, yaml.AliasEvent):
                if any(anchor == event.anchor for anchor, _ in open_):
                    raise ExpansionError(
                        f"the alias *{event.anchor} is inside the node its anchor names (a "
                        "structure that contains itself)",
                        _line(event.start_mark),
                        fix="write the value out instead of the alias",
                    )
                if event.anchor not in sizes:
                    return
                nodes += sizes[event.anchor]
            elif isinstance(event, (yaml.ScalarEvent, *starts)):
                nodes += 1
                if isinstance(event, starts):
                    open_.append((event.anchor, nodes - 1))
                    if len(open_) > MAX_DEPTH:
                        return
                elif event.anchor is not None:
                    sizes[event.anchor] = 1
            elif isinstance(event, ends):
                anchor, before = open_.pop()
                if anchor is not None:
                    sizes[anchor] = nodes - before
            if nodes > MAX_NODES:
                raise ExpansionError(_too_many(), _line(event.start_mark))
    except ExpansionError:
        raise
    except yaml.YAMLError:
        return


def _too_many() -> str:
    return (
        f"the YAML holds more than {MAX_NODES:,} values once its aliases (*name) are "
        "expanded: a few nested aliases can repeat a part of it millions of times"
    )


def load_yaml(text: str, *, file: str) -> object:
    """Parse YAML text strictly (see the module docstring).

    Raises
    ------
    ProcureError
        Syntax errors, duplicate keys, too deep nesting, aliases that expand past
        :data:`MAX_NODES` values: with the line and a fix. The file's content is not
        echoed beyond the position of the fault.
    """
    try:
        text = unix_lines(text)
        _precount(text)
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader
    except DuplicateKeyError as exc:
        raise ProcureError(
            str(exc), file=file, field=f"line {exc.line}", fix="keep one of the two entries"
        ) from None
    except ExpansionError as exc:
        raise ProcureError(
            str(exc),
            file=file,
            field=f"line {exc.line}",
            fix=exc.fix,
        ) from None
    except RecursionError:
        raise ProcureError(
            f"nested deeper than {MAX_DEPTH} levels", file=file, fix="flatten the structure"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f"line {mark.line + 1}, column {mark.column + 1}" if mark else None
        problem = getattr(exc, "problem", None) or str(exc) or "YAML syntax error"
        if mark is None:  # raised by the checks above, with their own line
            raise ProcureError(problem, file=file, fix="flatten the structure") from None
        raise ProcureError(
            f"YAML syntax error: {problem}",
            file=file,
            field=line,
            fix="check indentation and quoting on that line (YAML uses spaces, not tabs)",
        ) from None


class DuplicateJSONKeyError(ValueError):
    """A JSON object names one key twice (``json.loads`` keeps the last, other readers the
    first: the file means two things)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} appears twice in one object")
        self.key = key


def unique_json_keys(pairs: list[tuple[str, object]]) -> dict:
    """``object_pairs_hook`` for :func:`json.loads` that refuses a key given twice in one
    object (:class:`DuplicateJSONKeyError`)."""
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateJSONKeyError(key)
        out[key] = value
    return out
