"""Forgiving names: an accelerator or model preset as a person writes it (``H100``,
``Llama 3 70B``) resolved to its catalog id, or refused with the likeliest ids."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable

import pandas as pd

from solver.errors import ProcureError, closest, suggestion


def normalise_name(name: str) -> str:
    """Lowercase and drop separators: 'H100 SXM5 80GB' -> 'h100sxm580gb'."""
    return re.sub(r"[^a-z0-9]", "", str(name).lower())


#: a "did you mean" ranking: (what was typed, alias -> id, alias -> as written) -> ids
Ranker = Callable[[str, dict[str, str], dict[str, str]], list[str]]


def _alias_names(table: pd.DataFrame) -> dict[str, str]:
    """Separator-free alias -> the alias as written (the first row to claim it)."""
    names: dict[str, str] = {}
    for key, row in table.iterrows():
        aliases = row.get("aliases")
        written = [str(key), str(row.get("name", ""))]
        written += aliases.split(";") if isinstance(aliases, str) and aliases else []
        for alias in written:
            names.setdefault(normalise_name(alias), alias)
    return names


def _alias_table(table: pd.DataFrame) -> dict[str, str]:
    lookup: dict[str, str] = {}
    for key, row in table.iterrows():
        names = [str(key), str(row.get("name", ""))]
        aliases = row.get("aliases")
        if isinstance(aliases, str) and aliases:
            names += aliases.split(";")
        for alias in names:
            norm = normalise_name(alias)
            if norm:
                lookup.setdefault(norm, str(key))
    return lookup


# A model name's size: "70b", "8x7b", "7.6b" (the first one: "235b" in "235b-a22b").
_MODEL_SIZE_RE = re.compile(r"(?:\d+x)?\d+(?:\.\d+)?b(?![a-z0-9])")


def _model_family_and_size(name: str) -> tuple[str, str]:
    """The family (leading letters after any ``org/``) and size of a model name:
    ``meta-llama/Llama-3.3-70B-Instruct`` -> (``llama``, ``70b``); ``mixtral-8x7b`` ->
    (``mixtral``, ``8x7b``); ``deepseek-v3`` -> (``deepseek``, ``""``)."""
    base = str(name).lower().rsplit("/", 1)[-1]
    family = re.match(r"[a-z]+", base)
    size = _MODEL_SIZE_RE.search(base)
    return (family.group(0) if family else "", size.group(0) if size else "")


def rank_model_presets(name: str, lookup: dict[str, str], names: dict[str, str]) -> list[str]:
    """Preset ids for a "did you mean", most likely first.

    A preset of the same family (``llama``, ``qwen``, ``mixtral``: the leading letters of
    the name after any ``org/``) comes before any other, then one of the same size
    (``70b``), then the closer spelling (difflib's ratio of the separator-free names, best
    over the preset's id, name and aliases). Spelling alone ranked ``mistral-7b`` first for
    ``llama-3.3-70b-instruct`` (the shared "instruct"); a family is what a person means.
    Presets neither of the family nor spelled within difflib's 0.4 are left out.

    Parameters
    ----------
    name
        What was typed.
    lookup
        Separator-free alias -> preset id (every name a preset answers to).
    names
        Separator-free alias -> the alias as written (its family and size are read from it).
    """
    family, size = _model_family_and_size(name)
    norm = normalise_name(name)
    best: dict[str, tuple[bool, bool, float]] = {}
    for alias, preset in lookup.items():
        alias_family, alias_size = _model_family_and_size(names[alias])
        score = (
            bool(family) and alias_family == family,
            bool(size) and alias_size == size,
            difflib.SequenceMatcher(None, norm, alias).ratio(),
        )
        best[preset] = max(best.get(preset, score), score)
    kept = [(score, preset) for preset, score in best.items() if score[0] or score[2] >= 0.4]
    return [preset for _, preset in sorted(kept, key=lambda x: (x[0], x[1]), reverse=True)]


def resolve_name(
    name: str, table: pd.DataFrame, what: str, file: str, rank: Ranker | None = None
) -> str:
    """The id of ``table``'s row that ``name`` means (its id, name or an alias, separators
    and case ignored).

    Raises
    ------
    ProcureError
        No row answers to it: naming ``file`` and the likeliest ids (``rank`` first).
    """
    if name in table.index:
        return name
    lookup = _alias_table(table)
    norm = normalise_name(name)
    if norm in lookup:
        return lookup[norm]
    matches: list[str] = []
    if rank is not None:
        matches = rank(name, lookup, _alias_names(table))
    for alias in closest(norm, lookup, n=6):
        if lookup[alias] not in matches:
            matches.append(lookup[alias])
    fix = (
        ("did you mean " + " or ".join(repr(m) for m in matches[:3]) + "?")
        if matches
        else (suggestion(name, table.index))
    )
    raise ProcureError(f"unknown {what} {name!r}", file=file, fix=fix)
