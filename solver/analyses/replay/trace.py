"""Request traces: read from text (a CSV of arrival time, prompt and output tokens, or the
public Azure LLM inference trace), or made from a rate (Poisson arrivals).

Formats (the header line says which):

- ``arrival_s,prompt_tokens,output_tokens``: seconds from the trace's start, token counts;
- ``TIMESTAMP,ContextTokens,GeneratedTokens``: the Azure LLM inference traces 2023 and
  2024 (github.com/Azure/AzurePublicDataset, AzureLLMInferenceDataset2023.md, "Schema":
  TIMESTAMP the invocation time, ContextTokens the context tokens, GeneratedTokens the
  generated tokens), TIMESTAMP a date and time such as ``2023-11-16 18:15:46.6805900``;
  arrivals are taken relative to the first row.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from solver.errors import ProcureError

CSV_COLUMNS = ("arrival_s", "prompt_tokens", "output_tokens")
AZURE_COLUMNS = ("TIMESTAMP", "ContextTokens", "GeneratedTokens")
TRACE_FIX = (
    "give a CSV with the header arrival_s,prompt_tokens,output_tokens (seconds, whole tokens) "
    "or an Azure LLM inference trace (TIMESTAMP,ContextTokens,GeneratedTokens)"
)
#: most tokens a prompt or an answer may have in a trace (beyond any served context)
MAX_TOKENS = 10_000_000


@dataclass(frozen=True)
class TraceRow:
    """One request of a trace: arrival (s from the start), prompt and output tokens."""

    arrival_s: float
    prompt_tokens: int
    output_tokens: int


_FRACTION = re.compile(r"(\.\d{6})\d+")


def _timestamp_s(text: str) -> float:
    """Seconds since the epoch of an Azure TIMESTAMP (fractions past microseconds cut)."""
    return datetime.fromisoformat(_FRACTION.sub(r"\1", text.strip())).timestamp()


def _tokens(text: str, where: str, line: int, field: str, least: int) -> int:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value == int(value) and least <= value <= MAX_TOKENS):
        raise ProcureError(
            f"{text.strip()!r} is not a whole number of tokens from {least} to {MAX_TOKENS:,}",
            file=where,
            field=f"line {line}, {field}",
            fix=f"write {field} as a whole number of tokens (at least {least})",
        )
    return int(value)


def _arrival(text: str, where: str, line: int, field: str, azure: bool) -> float:
    try:
        value = _timestamp_s(text) if azure else float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or (not azure and value < 0):
        what = "a date and time (2023-11-16 18:15:46.68)" if azure else "seconds, 0 or more"
        raise ProcureError(
            f"{text.strip()!r} is not an arrival time",
            file=where,
            field=f"line {line}, {field}",
            fix=f"write {field} as {what}",
        )
    return value


def parse_trace(text: str, where: str) -> list[TraceRow]:
    """The requests of a trace file's text, sorted by arrival (arrivals from 0).

    Raises
    ------
    ProcureError
        Naming the file, the line and the field: an unknown header, a row of the wrong
        number of fields, a time or token count that is not one, or no request at all.
    """
    lines = text.splitlines()
    header = [h.strip() for h in lines[0].lstrip("\ufeff").split(",")] if lines else []
    if tuple(header) == CSV_COLUMNS:
        azure = False
    elif tuple(header) == AZURE_COLUMNS:
        azure = True
    else:
        raise ProcureError(
            f"unknown trace header {','.join(header) or '(empty file)'!r}",
            file=where,
            field="line 1",
            fix=TRACE_FIX,
        )
    names = AZURE_COLUMNS if azure else CSV_COLUMNS
    rows: list[TraceRow] = []
    for n, raw in enumerate(lines[1:], start=2):
        if not raw.strip():
            continue
        parts = raw.split(",")
        if len(parts) != 3:
            raise ProcureError(
                f"{len(parts)} fields where the header names 3",
                file=where,
                field=f"line {n}",
                fix=f"write each row as {','.join(names)}",
            )
        rows.append(
            TraceRow(
                _arrival(parts[0], where, n, names[0], azure),
                _tokens(parts[1], where, n, names[1], 1),
                _tokens(parts[2], where, n, names[2], 1),
            )
        )
    if not rows:
        raise ProcureError("the trace has no request", file=where, field="line 2", fix=TRACE_FIX)
    start = min(r.arrival_s for r in rows)
    return sorted(
        (TraceRow(r.arrival_s - start, r.prompt_tokens, r.output_tokens) for r in rows),
        key=lambda r: r.arrival_s,
    )


def poisson_trace(
    requests_per_s: float,
    duration_s: float,
    sizes: tuple[tuple[float, int, int], ...],
    seed: int,
) -> list[TraceRow]:
    """Poisson arrivals at ``requests_per_s`` for ``duration_s`` seconds, each request's
    (prompt, output) tokens drawn from ``sizes`` (share, prompt, output) by share."""
    rng = np.random.default_rng(seed)
    if requests_per_s <= 0 or duration_s <= 0:
        return []
    expected = requests_per_s * duration_s
    gaps = rng.exponential(1.0 / requests_per_s, size=int(expected + 10 * math.sqrt(expected) + 10))
    times = np.cumsum(gaps)
    times = times[times < duration_s]
    shares = np.array([s for s, _, _ in sizes], dtype=float)
    pick = rng.choice(len(sizes), size=len(times), p=shares / shares.sum())
    return [
        TraceRow(float(t), int(sizes[j][1]), int(sizes[j][2]))
        for t, j in zip(times, pick, strict=True)
    ]


def scaled(rows: list[TraceRow], requests_per_s: float) -> list[TraceRow]:
    """The trace with its arrival times stretched so its mean rate is ``requests_per_s``
    (its pattern of bursts and its sizes kept)."""
    if len(rows) < 2 or requests_per_s <= 0:
        return rows
    span = rows[-1].arrival_s - rows[0].arrival_s
    own = (len(rows) - 1) / span if span > 0 else math.inf
    if not math.isfinite(own):
        return rows
    k = own / requests_per_s
    return [TraceRow(r.arrival_s * k, r.prompt_tokens, r.output_tokens) for r in rows]
