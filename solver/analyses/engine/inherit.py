"""When the last proven plan is still proven for a variant, without a solve
(docs/concepts/warm-engine.md, "A proof carried over").

Let ``x`` be a plan proven within gap ``g`` of the optimum ``z`` of a model ``R``
(every column ``>= 0``), and ``T`` a variant of ``R`` over the same columns. ``x`` is
within ``g`` of ``T``'s optimum when

1. ``x`` is feasible for ``T``;
2. ``T`` costs every column at least what ``R`` does, and ``x`` exactly the same
   (``c_T >= c_R``, ``c_T x = c_R x``, the same constant);
3. every plan of ``T`` is a plan of ``R`` (column bounds and row bounds no looser;
   a ``<=`` row's coefficients no smaller, a ``>=`` row's no larger), except that at most
   one ``<=`` row whose coefficients are unchanged may be looser when its coefficients
   are at most the objective's (``a <= c_T``) and ``R``'s bound on it is at least
   ``c_T x`` (a budget over the same costs, looser than the plan's cost):

A column ``T`` fixes at 0 (an option the variant leaves out) takes no part in 2, and a row
of ``R`` all of whose columns ``T`` fixes counts as no looser in 3 when it holds at those
values (every plan of ``T`` then keeps it);

then a plan ``y`` of ``T`` is either a plan of ``R``, and ``c_T y >= c_R y >= z``, or
breaks only that row in ``R``, and ``c_T y >= a y > b_R >= c_T x``: no plan of ``T`` beats
``x`` by more than ``x`` is within of ``z``.

The engine applies it only where ``R`` and ``T`` are exact for the same full problem
(the structure keeps every option an optimal plan of either may need), or where the
change is a tightening or a price rise of the whole problem (:mod:`solver.analyses.engine.kinds`).
"""

from __future__ import annotations

import numpy as np

from solver.analyses.engine.delta import Target, activities

#: feasibility tolerance of a row or bound, relative to max(1, |bound|)
FEASIBLE_TOL = 1e-7


def feasible(target: Target, x: np.ndarray) -> bool:
    """Whether ``x`` keeps every bound and row of ``target`` (within :data:`FEASIBLE_TOL`)."""
    scale = np.maximum(1.0, np.abs(np.where(np.isfinite(target.lower), target.lower, 0.0)))
    if (x < target.lower - FEASIBLE_TOL * scale).any():
        return False
    scale = np.maximum(1.0, np.abs(np.where(np.isfinite(target.upper), target.upper, 0.0)))
    if (x > target.upper + FEASIBLE_TOL * scale).any():
        return False
    activity = activities(target, x)
    lo, hi = target.row_lower, target.row_upper
    with np.errstate(invalid="ignore"):
        over = activity > hi + FEASIBLE_TOL * np.maximum(1.0, np.abs(hi))
        under = activity < lo - FEASIBLE_TOL * np.maximum(1.0, np.abs(lo))
    return not (over.any() or under.any())


def _row_no_looser(ref: Target, target: Target, r: int, lower_ok: np.ndarray) -> bool:
    """Whether row ``r`` of ``target`` admits no plan ``ref``'s row ``r`` refuses."""
    lo_r, hi_r, lo_t, hi_t = (
        ref.row_lower[r],
        ref.row_upper[r],
        target.row_lower[r],
        target.row_upper[r],
    )
    a_r, a_t = ref.coefs[r], target.coefs[r]
    if lo_r == -np.inf and hi_r == np.inf:
        return True  # the reference has no such row
    if all(target.lower[j] == target.upper[j] for j in a_r):
        # every column of the reference's row is fixed in the variant (an option it leaves
        # out): the row holds for every plan of the variant when it holds at those values
        activity = sum(c * target.lower[j] for j, c in a_r.items())
        if lo_r <= activity <= hi_r:
            return True
    if a_r is a_t or a_r == a_t:
        return lo_t >= lo_r and hi_t <= hi_r
    keys = set(a_r) | set(a_t)
    if not all(lower_ok[j] for j in keys):
        return False
    if lo_r == -np.inf and lo_t == -np.inf and hi_t <= hi_r:  # a <= row: coefficients may rise
        return all(a_t.get(j, 0.0) >= a_r.get(j, 0.0) for j in keys)
    if hi_r == np.inf and hi_t == np.inf and lo_t >= lo_r:  # a >= row: coefficients may fall
        return all(a_t.get(j, 0.0) <= a_r.get(j, 0.0) for j in keys)
    return False


def _others_not_negative(cost: np.ndarray, row: dict[int, float]) -> bool:
    """Whether every column outside ``row`` costs at least 0 (so ``c y >= a y``)."""
    outside = np.ones(len(cost), dtype=bool)
    outside[list(row)] = False
    return bool((cost[outside] >= 0).all())


def still_proven(ref: Target, x: np.ndarray, target: Target) -> bool:
    """Whether plan ``x``, proven for ``ref``, is proven within the same gap for
    ``target`` (the module's conditions 1-3)."""
    lower_ok = (ref.lower >= 0) & (target.lower >= 0)
    if not lower_ok.all():
        return False
    # a column the variant fixes at 0 (an option it leaves out) takes no part in its plans
    out = (target.lower == 0) & (target.upper == 0)
    if target.offset != ref.offset or ((target.cost < ref.cost) & ~out).any():
        return False
    used = np.abs(x) > 1e-9
    if (target.cost[used] != ref.cost[used]).any():
        return False
    if (target.lower < ref.lower).any() or (target.upper > ref.upper).any():
        return False
    if not feasible(target, x):
        return False
    plan_cost = float(target.cost @ x)
    looser = 0
    moved = (ref.row_lower != target.row_lower) | (ref.row_upper != target.row_upper)
    if ref.coefs is not target.coefs:
        moved |= np.array([a is not b for a, b in zip(ref.coefs, target.coefs, strict=True)])
    for r in np.flatnonzero(moved).tolist():
        if _row_no_looser(ref, target, r, lower_ok):
            continue
        looser += 1
        a = target.coefs[r]
        budget_like = (
            looser == 1
            and a == ref.coefs[r]
            and ref.row_lower[r] == -np.inf
            and target.row_lower[r] == -np.inf
            and ref.row_upper[r] >= plan_cost
            and all(c <= target.cost[j] for j, c in a.items())
            and _others_not_negative(target.cost, a)
        )
        if not budget_like:
            return False
    return True
