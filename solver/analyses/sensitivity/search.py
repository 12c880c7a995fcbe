"""The exact break-even price of one pool (or class of pools): Newton's method on the
optimal cost as a function of the pool's price, and bisection where the feasible set moves
with the price (docs/concepts/sensitivity.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from solver.analyses.sensitivity.classes import merged_class
from solver.analyses.sensitivity.cold import Cold
from solver.analyses.sensitivity.pricing import (
    PriceSlopes,
    pool_price,
    pool_vars,
)
from solver.analyses.sensitivity.results import BreakEven
from solver.analyses.sensitivity.warm import Warm, newton_any_plan
from solver.core.backends import SolveOptions
from solver.core.compile import Compiled
from solver.core.model import LinearModel


def break_even_for_pool(
    compiled: Compiled,
    base_objective: float,
    pool_id: str,
    in_plan: bool,
    *,
    solver: str = "highspy",
    options: SolveOptions | None = None,
    warm: bool = True,
    model: LinearModel | None = None,
    slopes: PriceSlopes | None = None,
    start: np.ndarray | None = None,
    max_steps: int = 8,
    twins: Sequence[str] = (),
) -> BreakEven:
    """Exact break-even price of one pool (Newton on f(p): docs/concepts/sensitivity.md), or
    of its class with ``twins`` (:func:`pool_classes`: their prices move with it).

    Parameters
    ----------
    compiled
        The compiled problem at current prices.
    base_objective
        The optimal objective at current prices.
    pool_id
        The pool (offering and mode, or server at a site).
    in_plan
        Whether the optimal plan uses the pool (then the price where it leaves is sought).
    warm
        Re-solve one HiGHS model changed in place, each solve starting from the last plan
        (default); False rebuilds the model and solves it afresh each time with ``solver``.
    model, slopes, start
        The built model, its :func:`price_slopes` and the optimal plan, when the caller
        has them (they are computed otherwise).
    """
    options = options or SolveOptions(relative_gap=1e-6)
    if twins:
        compiled = merged_class(compiled, pool_id, twins)
        if not warm:
            model = slopes = None  # rebuilt from the merged class
    out, pi = _unsearched(compiled, pool_id, in_plan, twins)
    p0 = out.current_price
    way = (
        Warm(compiled, pool_id, pi, model, slopes, start, options)
        if warm
        else Cold(compiled, pool_id, pi, model, slopes, start, options, solver, p0)
    )
    members = pool_vars(way.model, pi)
    slope = np.zeros(len(way.model.variables))
    slope[members] = way.slopes.objective[members]  # d(objective)/d(this pool's price)
    solves = 0
    if in_plan:
        target = way.objective_without_pool()
        solves += 1
        if target is None:
            return out.model_copy(
                update={"solves": solves, "note": "the plan is infeasible without it"}
            )
    else:
        target = base_objective
    way.require_pool()
    if warm and not in_plan:  # an answer from the LP at price 0, before any MIP
        assert isinstance(way, Warm)
        note = way.screened(target)
        if note:
            return out.model_copy(update={"solves": solves, "note": note})
    price, x = p0, (way.start if in_plan else None)
    # a pool in the plan: the plan is the best one using it at today's price (no solve)
    known = (base_objective, x) if in_plan and way.holds_plan else None
    if warm:
        assert isinstance(way, Warm)
        found, n, note, last = newton_any_plan(way, slope, target, p0, known)
        solves += n
        if found is not None:
            return _at_break_even(out, found, p0, solves, in_plan)
        if note:
            return out.model_copy(update={"solves": solves, "note": note})
        if last is not None:  # the exact search goes on from the last plan found
            price, known = last[0], (last[1], last[2])
    below: tuple[float, float, np.ndarray] | None = None  # last price where it is in
    for _ in range(max_steps):
        if known is not None:
            (value, x), known = known, None
        else:
            value, x = way.solve_at(price, x)
            solves += 1
        if value is None:  # the feasible set moved with the price (e.g. a binding budget)
            found, n = _bisect_feasible(way, slope, target, below, price, x)
            solves += n
            if found is None:
                return out.model_copy(
                    update={"solves": solves, "note": "no feasible plan can use it at this price"}
                )
            price = found
            break
        assert x is not None  # a plan comes with its cost
        if value <= target + 1e-9 * max(1.0, abs(target)):
            below = (price, value, x)
        u = float(slope @ x)
        if u <= 1e-12:
            return out.model_copy(
                update={"solves": solves, "note": "its price does not enter the cost"}
            )
        a = value - u * price
        new_price = (target - a) / u
        if not in_plan and new_price < 0.0:
            # f never falls as the price falls (every plan's cost is nondecreasing in it),
            # so a step below 0 is taken at 0, never solved at a negative price (a MIP
            # paid to use the pool, many times harder: minutes on traffic-mix-measured);
            # already at 0 with f(0) above the target, it enters at no positive price
            if price <= 0.0:
                return out.model_copy(
                    update={"solves": solves, "note": "does not enter at any positive price"}
                )
            new_price = 0.0
        converged = abs(new_price - price) <= 1e-6 * max(1.0, abs(price))
        price = new_price
        if converged:
            break
    return _at_break_even(out, price, p0, solves, in_plan)


def _unsearched(
    compiled: Compiled, pool_id: str, in_plan: bool, twins: Sequence[str]
) -> tuple[BreakEven, int]:
    """The pool's row before its search (where it is, its mode, its price in
    :func:`pool_price` units, which way it moves the plan) and its index among the pools."""
    pools = compiled.pools
    pi = int(np.flatnonzero((pools["pool_id"] == pool_id).to_numpy())[0])
    pool = pools.iloc[pi]
    p0, unit = pool_price(compiled, pool_id)
    out = BreakEven(
        pool_id=pool_id,
        provider=pool["provider"],
        region=pool["region"],
        offering=pool["offering_id"],
        accelerator=pool["accelerator_id"],
        mode=pool["mode"],
        in_plan=in_plan,
        price_unit=unit,
        current_price=p0,
        direction="leaves above" if in_plan else "enters below",
        same_as=sorted(twins),
    )
    return out, pi


def _at_break_even(out: BreakEven, price: float, p0: float, solves: int, in_plan: bool):
    if price <= 0 and not in_plan:
        return out.model_copy(
            update={"solves": solves, "note": "does not enter at any positive price"}
        )
    return out.model_copy(
        update={
            "break_even_price": price,
            "change_pct": 100.0 * (price - p0) / p0,
            "solves": solves,
        }
    )


def _bisect_feasible(
    way, slope: np.ndarray, target: float, below, above: float, x_start, tol: float = 1e-7
) -> tuple[float | None, int]:
    """The break-even price where a Newton step left the feasible set: bisection on the
    bracket, each round first trying the Newton step from its lower end, until it is
    ``tol`` of the price wide (docs/concepts/sensitivity.md, "When the feasible set moves
    with the price"). ``below`` is the last (price, objective, plan) where the pool was in
    (None: the search starts at price 0); ``above`` a price where no plan using it was
    feasible.

    Returns the upper end of the final bracket (the first price, to ``tol``, at which it
    is out) and the number of solves; None when it is in at no price of the bracket.
    """
    solves = 0
    if below is None:
        value, x = way.solve_at(0.0, x_start)
        solves += 1
        if value is None or value > target + 1e-9 * max(1.0, abs(target)):
            return None, solves
        below = (0.0, value, x)
    lo, hi = below[0], above
    lo_value, lo_x = below[1], below[2]
    newton = True
    while hi - lo > tol * max(1.0, abs(hi)) and solves < 200:
        u = float(slope @ lo_x)
        step = lo + (target - lo_value) / u if u > 1e-12 else hi
        mid = step if newton and lo < step < hi else 0.5 * (lo + hi)
        newton = not newton  # alternate: the bracket at least halves every other solve
        value, x = way.solve_at(mid, lo_x)
        solves += 1
        if value is not None and value <= target + 1e-9 * max(1.0, abs(target)):
            lo, lo_value, lo_x = mid, value, x
            if abs(value - target) <= 1e-9 * max(1.0, abs(target)):
                return mid, solves  # on the fixed set: Newton's exact answer
        else:
            hi = mid
    return hi, solves
