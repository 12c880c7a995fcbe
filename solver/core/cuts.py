"""Mixed-integer rounding (MIR) cuts on the demand rows of a column-generation master: rows
that hold for every plan in whole units and make the LP pay for whole units, lifting its
bound toward the MIP's (the ``demand_rounding`` family)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from solver.core.families import new_row
from solver.core.matrix import LinearModel, Row


def mir_coefficients(
    a: npt.ArrayLike, demand: npt.ArrayLike, divisor: np.ndarray | float
) -> np.ndarray:
    """Coefficients of the mixed-integer rounding (MIR) cut of the demand row
    ``sum a_k x_k >= D`` (whole units x_k >= 0) with divisor ``d``: with ``f`` the
    fractional part of ``D / d`` and ``f_k`` that of ``a_k / d``, every integer plan has
    ``sum (floor(a_k / d) + min(f_k, f) / f) x_k >= ceil(D / d)`` (Nemhauser and Wolsey,
    Integer and Combinatorial Optimization, 1988, II.1.7, turned from <= to >=). Each
    coefficient is at most ``ceil(a_k / d)``, the Chvatal-Gomory rounding's, so the cut is
    at least as strong. Where ``D / d`` is whole, the rounding cut (no MIR exists).
    Arrays broadcast (one coefficient per column, each with its row's D and d)."""
    q = np.asarray(a, dtype=float) / divisor
    whole = np.floor(q + 1e-9)
    frac_q = np.maximum(q - whole, 0.0)
    ratio = np.asarray(demand, dtype=float) / divisor
    f = ratio - np.floor(ratio)
    mir = (f >= 1e-6) & (f <= 1.0 - 1e-6)
    return np.where(mir, whole + np.minimum(frac_q, f) / np.where(mir, f, 1.0), np.ceil(q - 1e-9))


#: The divisors of the MIR cuts: a unit's capacity (or the demand) over 1, 2, 3 and 4.
#: Halves to quarters find what whole units miss (10k x 50 x 12: bound $411,282 with the
#: units and the demand alone, $412,805 with their halves to quarters;
#: bench/archive/RESULTS-2026.md).
DIVIDED_BY = (1, 2, 3, 4)


def divisors(bought: np.ndarray, demand: float) -> set[float]:
    """The MIR divisors tried on a demand row: the capacity of each unit the LP buys and
    the demand, each over :data:`DIVIDED_BY`."""
    return {float(v) / k for v in {*bought.tolist(), float(demand)} for k in DIVIDED_BY}


class Cuts:
    """Mixed-integer rounding cuts on the demand rows, kept across masters.

    A demand row sum_k a_k x_k >= D over whole units x_k (a_k tokens/s per unit) implies,
    for any divisor d > 0, the MIR cut of :func:`mir_coefficients`. With d the capacity of
    a unit the LP buys (or D), the LP must pay for whole units of that size (or larger
    ones) where the plain LP buys fractions: this is what lifts the bound toward the MIP's
    (on 10k x 50 x 12, LP $381,484: to $411,282 with MIR cuts, $400,056 with the
    Chvatal-Gomory rounding ceil(a_k / d), optimum $413,555;
    bench/archive/RESULTS-2026.md). The cuts
    hold for every integer plan, so the bound stays valid; a column left out enters cut
    (w, t, b, d) with its MIR coefficient, which the pricing charges with the cut's dual.
    """

    FAMILY = "demand_rounding"

    def __init__(self) -> None:
        self.pool: dict[tuple, set[float]] = {}  # (workload, period, block) -> {d}

    def __len__(self) -> int:
        return sum(len(v) for v in self.pool.values())

    @classmethod
    def row(cls, demand: Row, divisor: float) -> Row:
        """The MIR cut of the demand row ``demand`` with ``divisor``, as a row."""
        idx = list(demand.coefs)
        a = np.fromiter(demand.coefs.values(), dtype=float, count=len(idx))
        coefs = dict(zip(idx, mir_coefficients(a, demand.rhs, divisor).tolist(), strict=True))
        rhs = float(np.ceil(demand.rhs / divisor - 1e-9))
        return new_row(cls.FAMILY, (*demand.key, divisor), coefs, ">=", rhs)

    def add_to(self, model: LinearModel) -> LinearModel:
        """The model with a row per cut of the pool (coefficients from its demand rows)."""
        rows = list(model.rows)
        for row in model.rows:
            if row.family == "demand" and row.key in self.pool:
                rows.extend(self.row(row, d) for d in sorted(self.pool[row.key]))
        return LinearModel(model.variables, rows, model.objective, model.expressions)

    def separate(self, model: LinearModel, values: np.ndarray) -> list[Row]:
        """Add the cuts the LP values violate (divisors: :func:`divisors`) to the pool;
        returns them as rows."""
        integer = model.variables["integer"].to_numpy(bool)
        added = []
        for row in model.rows:
            if row.family != "demand" or row.rhs <= 0 or not row.coefs:
                continue
            idx = np.fromiter(row.coefs, dtype=int, count=len(row.coefs))
            if not integer[idx].all():
                continue
            a = np.fromiter(row.coefs.values(), dtype=float, count=len(idx))
            x = values[idx]
            if np.all(np.abs(x - np.round(x)) <= 1e-6):
                continue
            have = self.pool.setdefault(row.key, set())
            for d in sorted(divisors(a[x > 1e-7], row.rhs)):
                if d in have or d <= 0:
                    continue
                lhs = float(mir_coefficients(a, row.rhs, d) @ x)
                if lhs < np.ceil(row.rhs / d - 1e-9) - 1e-6:
                    have.add(d)
                    added.append(self.row(row, d))
        return added

    def frame(self, duals: dict) -> pd.DataFrame:
        """The cuts with their duals: workload, period, block, cap (the divisor), dual."""
        by_key = duals.get(self.FAMILY, {})
        rows = [(*k, y) for k, y in by_key.items() if y]
        return pd.DataFrame(rows, columns=["workload", "period", "block", "cap", "dual"])
