"""Reading YAML strictly: YAML 1.2 scalars, no duplicate keys, bounded nesting.

PyYAML implements YAML 1.1, whose implicit types surprise people who write
configuration by hand: ``0500`` is octal (320), ``1:30`` is sexagesimal (90),
``yes``/``no``/``on``/``off`` are booleans, and ``1e12`` (no dot) is a string. A
duplicate key silently keeps the last value. The loader here resolves plain
scalars by the YAML 1.2 core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution):
only ``true``/``false`` are booleans, integers are decimal (``0o`` octal, ``0x``
hex), floats take an exponent without a dot, and ``.inf``/``.nan`` are floats (the
problem model then refuses them); it refuses duplicate keys and nesting deeper than
:data:`MAX_DEPTH`.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import yaml

from solver.errors import ProcureError

MAX_DEPTH = 64  # a procure problem nests about 5 deep; 64 leaves room and stops abuse


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema scalars and the checks above."""

    depth = 0

    def compose_node(self, parent, index):  # noqa: D102 - PyYAML's hook
        self.depth += 1
        if self.depth > MAX_DEPTH:
            mark = self.peek_event().start_mark
            raise yaml.YAMLError(f"nested deeper than {MAX_DEPTH} levels (line {mark.line + 1})")
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def construct_mapping(self, node, deep=False):  # noqa: D102 - PyYAML's hook
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


def _construct_int(loader: _Loader, node) -> int:
    text = loader.construct_scalar(node)
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)  # "0500" is 500, as YAML 1.2 reads it


def _construct_float(loader: _Loader, node) -> float:
    text = loader.construct_scalar(node).lower()
    if text.endswith(".inf"):
        return float("-inf") if text.startswith("-") else float("inf")
    if text == ".nan":
        return float("nan")
    return float(text)


def _construct_bool(loader: _Loader, node) -> bool:
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


def load_yaml(text: str, *, file: str) -> object:
    """Parse YAML text strictly (see the module docstring).

    Raises
    ------
    ProcureError
        Syntax errors, duplicate keys, too deep nesting: with the line and a fix.
        The file's content is not echoed beyond the position of the fault.
    """
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - _Loader is a SafeLoader
    except DuplicateKeyError as exc:
        raise ProcureError(
            str(exc), file=file, field=f"line {exc.line}", fix="keep one of the two entries"
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
