"""Price lines that were not applied, and the plan lines they may have been meant for.

A price update is matched to the catalog by :func:`solver.inputs.prices.apply_prices`
(the one matching ``resolve`` and ``watch`` share). What it does not apply is a line to
review: ``unknown`` (names no catalog offering: a typo, or an offering the catalog lacks),
``suspicious`` (moves by more than ``--max-factor``), ``inconsistent`` (a discounted mode
would cost more than on-demand), and a snapshot's ``held`` prices (zero, negative, not
finite, implausible: :mod:`solver.inputs.price_holds`).

Such a line concerns the plan when it names the offering of a plan line, or, for an
``unknown`` line, could be a mistyping of one (:func:`meant_offering`): the same
offering id with one of its three parts (provider, region, instance type) mistyped: it
reads the same once case and look-alike letters are folded, or it is one or two edits
away (:data:`MAX_EDITS`: a dropped, added, swapped or changed character, twice; one for
a part of three characters or fewer), and no catalog offering outside the plan is
nearer.
"""

from __future__ import annotations

import pandas as pd

from solver.errors import skeleton
from solver.inputs.catalog import Catalog
from solver.plan import Plan
from solver.units import Item, Mode

#: statuses of a price report row that were not applied and are reviewed
REVIEWED_STATUSES = ("unknown", "suspicious", "inconsistent")
REVIEW_COLUMNS = ["offering_id", "mode", "price_usd", "status", "note", "line", "plan_line"]
REVIEW_COLUMNS += ["plan_offering"]
#: at most this many single-character edits make a part of an id a mistyping
MAX_EDITS = 2


def _edits(a: str, b: str) -> int:
    """Optimal string alignment distance (insert, delete, substitute, swap neighbours)."""
    if abs(len(a) - len(b)) > MAX_EDITS:
        return MAX_EDITS + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], prev2[j - 2] + 1)
        prev2, prev = prev, row
    return prev[-1]


def _distance(offering_id: str, candidate: str) -> int | None:
    """Edits between two ids that differ in one part only (None: more parts differ, or
    the part is not a near mistyping; 0: equal). A part of 3 characters or fewer may
    differ by one edit (``h1`` and ``l4`` are two edits apart but not one name)."""
    parts, theirs = str(offering_id).split("/"), str(candidate).split("/")
    if len(theirs) != len(parts):
        return None
    differ = [(p, q) for p, q in zip(parts, theirs, strict=True) if p != q]
    if not differ:
        return 0
    if len(differ) != 1:
        return None
    p, q = differ[0]
    if skeleton(p) == skeleton(q):
        return 1
    limit = 1 if min(len(p), len(q)) <= 3 else MAX_EDITS
    edits = _edits(p.lower(), q.lower())
    return edits if edits <= limit else None


def meant_offering(offering_id: str, candidates: list[str], known: list[str]) -> str | None:
    """The candidate (a plan line's offering) ``offering_id`` names, or could be a
    mistyping of: the nearest of ``known`` (the catalog's offerings and the candidates),
    one part mistyped (module docstring). None when none is that close, or when the
    nearest is an offering of the catalog no plan line holds (a tie goes to the plan)."""
    if offering_id in candidates:
        return offering_id
    ranked = []
    for name in dict.fromkeys([*candidates, *known]):
        distance = _distance(offering_id, name)
        if distance is not None:
            ranked.append((distance, name not in candidates, name))
    if not ranked:
        return None
    best = min(ranked)
    return best[2] if not best[1] else None


def known_ids(catalog: Catalog) -> list[str]:
    """The ids a price line can name in ``catalog``: its offerings and its servers."""
    return [str(i) for i in catalog.offerings.index] + [str(i) for i in catalog.servers.index]


def _plan_offerings(plan: Plan) -> dict[str, int]:
    """offering id (server id for owned lines) -> the first plan line holding it."""
    out: dict[str, int] = {}
    for n, item in enumerate(plan.line_items):
        if item.item == Item.EXISTING:
            continue
        key = item.instance_type if item.mode == Mode.OWNED else item.offering
        out.setdefault(str(key), n)
    return out


def prices_to_review(
    report_rows: pd.DataFrame, held: pd.DataFrame | None, plan: Plan, known: list[str]
) -> pd.DataFrame:
    """Every price line not applied (:data:`REVIEW_COLUMNS`), with the plan line it
    concerns (``plan_line`` -1 and ``plan_offering`` '' when none).

    Parameters
    ----------
    report_rows
        A :class:`~solver.inputs.prices.PriceReport`'s rows.
    held
        A snapshot's held prices (``offering_id, mode, price, reason``), or None.
    plan
        The plan the prices are for.
    known
        The catalog's offering ids and server ids (what a price line could name).
    """
    lines = _plan_offerings(plan)
    names = list(lines)
    rows = []
    todo = report_rows[report_rows["status"].isin(REVIEWED_STATUSES)]
    for r in todo.itertuples(index=False):
        rows.append((r.offering_id, r.mode, r.new_usd, r.status, r.note, int(r.line)))
    if held is not None:
        for r in held.itertuples(index=False):
            rows.append((r.offering_id, r.mode, float(r.price), "held", r.reason, 0))
    out = []
    for offering_id, mode, price, status, note, line in rows:
        if status == "unknown":
            meant = meant_offering(str(offering_id), names, known)
        else:
            meant = str(offering_id) if str(offering_id) in lines else None
        out.append(
            {
                "offering_id": offering_id,
                "mode": mode,
                "price_usd": float(price),
                "status": status,
                "note": note,
                "line": line,
                "plan_line": lines[meant] if meant is not None else -1,
                "plan_offering": meant or "",
            }
        )
    return pd.DataFrame(out, columns=REVIEW_COLUMNS)


__all__ = ["MAX_EDITS", "REVIEW_COLUMNS", "known_ids", "meant_offering", "prices_to_review"]
