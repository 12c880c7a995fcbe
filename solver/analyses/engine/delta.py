"""A variant's model as changes to a live HiGHS model: matched by variable and row name,
applied in place (docs/concepts/warm-engine.md, "Changes in place").

The engine keeps one :class:`~solver.core.backends.HighsSession` per structure (a set of
columns and rows). A variant's model, built from the same options, is laid over it by
name: its costs, column bounds, row bounds and coefficients replace the live ones; a
column the variant lacks is fixed at 0 and a row it lacks is freed. A variant with a
column or row the structure lacks, or an integer column where the structure has a
continuous one, cannot be laid over it (:func:`target_of` returns None): the engine
then builds a new structure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from solver.core.backends import HighsSession
from solver.core.matrix import LinearModel

#: HiGHS's infinity (``highspy.kHighsInf``), as a bound
INF = float("inf")


@dataclass
class Target:
    """A model as values of a structure's columns and rows (every array in its order).

    Attributes
    ----------
    cost
        Objective coefficient per column (USD of the objective per unit of the column).
    offset
        The objective's constant (USD).
    lower, upper
        Column bounds (a column the variant lacks: 0 and 0).
    row_lower, row_upper
        Row bounds (-inf / inf where open; a row the variant lacks: both open).
    coefs
        Per row, its coefficients by structure column.
    columns
        Per variant column, its structure column (the map :func:`carried_back` uses).
    flat
        ``coefs`` as (row, column, value) arrays, for row activities in one pass (taken at
        the first :func:`activities`, and kept by copies that share ``coefs``).
    """

    cost: np.ndarray
    offset: float
    lower: np.ndarray
    upper: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray
    coefs: list[dict[int, float]]
    columns: np.ndarray
    flat: tuple[np.ndarray, np.ndarray, np.ndarray] | None = field(default=None, repr=False)


def activities(target: Target, x: np.ndarray) -> np.ndarray:
    """Each row's activity (sum of coefficient x value) at ``x``."""
    if target.flat is None:
        at = [r for r, coefs in enumerate(target.coefs) for _ in coefs]
        js = [j for coefs in target.coefs for j in coefs]
        cs = [c for coefs in target.coefs for c in coefs.values()]
        target.flat = (np.asarray(at, np.int64), np.asarray(js, np.int64), np.asarray(cs))
    rows, cols, vals = target.flat
    return np.bincount(rows, weights=vals * x[cols], minlength=len(target.coefs))


def _row_bounds(sense: str, rhs: float) -> tuple[float, float]:
    lower = rhs if sense in (">=", "==") else -INF
    upper = rhs if sense in ("<=", "==") else INF
    return lower, upper


def target_of(structure: LinearModel, variant: LinearModel, index: StructureIndex) -> Target | None:
    """``variant`` laid over ``structure`` by name; None where it cannot be (a column or
    row the structure lacks, or a column integer in one and not the other)."""
    names = variant.variables["name"].tolist()
    columns = np.fromiter(
        (index.column.get(n, -1) for n in names), dtype=np.int64, count=len(names)
    )
    if (columns < 0).any():
        return None
    v_integer = variant.variables["integer"].to_numpy(bool)
    if (index.integer[columns] != v_integer).any():
        return None
    n = len(structure.variables)
    cost = np.zeros(n)
    for j, c in variant.objective.coefs.items():
        cost[columns[j]] += c
    lower, upper = np.zeros(n), np.zeros(n)
    lower[columns] = variant.variables["lb"].to_numpy(float)
    upper[columns] = variant.variables["ub"].to_numpy(float)
    upper[~np.isfinite(upper)] = INF
    m = len(structure.rows)
    row_lower, row_upper = np.full(m, -INF), np.full(m, INF)
    coefs: list[dict[int, float]] = [{} for _ in range(m)]
    for row in variant.rows:
        r = index.row.get(row.name, -1)
        if r < 0:
            if row.coefs:
                return None
            continue  # an empty row the structure lacks: HighsSession checks those itself
        row_lower[r], row_upper[r] = _row_bounds(row.sense, row.rhs)
        coefs[r] = {int(columns[j]): c for j, c in row.coefs.items()}
    return Target(
        cost, float(variant.objective.constant), lower, upper, row_lower, row_upper, coefs, columns
    )


class StructureIndex:
    """Names to positions in a structure's model (built once per structure)."""

    def __init__(self, model: LinearModel) -> None:
        self.column = {n: j for j, n in enumerate(model.variables["name"])}
        self.row = {row.name: r for r, row in enumerate(model.rows)}
        self.integer = model.variables["integer"].to_numpy(bool)


def target_of_structure(model: LinearModel, index: StructureIndex) -> Target:
    """The structure's own model as a :class:`Target` (the session as first built)."""
    target = target_of(model, model, index)
    assert target is not None  # a model always lies over itself
    return target


def apply(session: HighsSession, now: Target, target: Target) -> int:
    """Change ``session`` (holding ``now``) in place to hold ``target``; returns how many
    costs, bounds and coefficients changed."""
    changed = 0
    cols = np.flatnonzero(now.cost != target.cost)
    if len(cols):
        session.set_costs(cols, target.cost[cols])
        changed += len(cols)
    if now.offset != target.offset:
        session.h.changeObjectiveOffset(float(target.offset))
        changed += 1
    cols = np.flatnonzero((now.lower != target.lower) | (now.upper != target.upper))
    if len(cols):
        session.set_bounds(cols, target.lower[cols], target.upper[cols])
        changed += len(cols)
    rows = np.flatnonzero((now.row_lower != target.row_lower) | (now.row_upper != target.row_upper))
    for r in rows.tolist():
        session.h.changeRowBounds(int(r), float(target.row_lower[r]), float(target.row_upper[r]))
    changed += len(rows)
    for r, (old, new) in enumerate(zip(now.coefs, target.coefs, strict=True)):
        if old == new:
            continue
        for j in set(old) | set(new):
            if old.get(j, 0.0) != new.get(j, 0.0):
                session.set_coefficient(r, j, new.get(j, 0.0))
                changed += 1
    return changed


def carried_back(target: Target, values: np.ndarray) -> np.ndarray:
    """A structure solution's values as the variant model's variables (by the map of
    :func:`target_of`)."""
    return np.asarray(values, dtype=float)[target.columns]
