"""The warm break-even engine: one HiGHS model changed in place as the pool's price moves,
other pools pruned by dominance, and Newton's method on plans that beat the target
(docs/concepts/sensitivity.md, "Break-even prices").
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from solver.analyses.sensitivity.period_split import (
    SPANNING_KINDS,
    PeriodSplit,
    spanning_rows,
)
from solver.analyses.sensitivity.pricing import (
    PriceSlopes,
    pool_vars,
    price_slopes,
)
from solver.analyses.sensitivity.steps import STEP_GAP, STEP_OPTIONS
from solver.core.backends import HighsSession, Termination
from solver.core.backends.base import native_output_to_stderr
from solver.core.compile import Compiled, repruned
from solver.core.model import (
    LinearModel,
    build_model,
)
from solver.solve import carried

#: how far above the target the LP bound at price 0 must be to answer "does not enter at
#: any positive price" without a MIP (relative; far above HiGHS's LP tolerances, 1e-7)
LP_MARGIN = 1e-6


class _PoolPricer:
    """A warm HiGHS session of the model in which one pool's price can be set."""

    def __init__(self, model: LinearModel, slopes: PriceSlopes, pool_index: int) -> None:
        self.session = HighsSession(model)
        self.model = model
        self.cols = pool_vars(model, pool_index)
        self.slope = slopes.objective
        self.cost0 = self.session.cost[self.cols].copy()
        self.p0 = float(slopes.base_price[pool_index])
        members = set(self.cols.tolist())
        self.row_changes = [
            (r, j, model.rows[r].coefs[j], d)
            for r, changes in slopes.rows.items()
            for j, d in changes.items()
            if j in members
        ]

    def set_price(self, price: float) -> None:
        delta = price - self.p0
        self.session.set_costs(self.cols, self.cost0 + delta * self.slope[self.cols])
        for r, j, a0, d in self.row_changes:
            self.session.set_coefficient(r, j, a0 + delta * d)


def _pruned_keeping(compiled: Compiled, pool_id: str) -> Compiled:
    """``compiled`` with other pools pruned by dominance, ``pool_id`` kept apart."""
    return repruned(compiled, keep=frozenset({pool_id}))


def _slopes_by_name(model: LinearModel, slopes: PriceSlopes, other: LinearModel) -> PriceSlopes:
    """``slopes`` of ``model`` carried over to ``other`` (same names, fewer options)."""
    names = model.variables["name"].to_numpy()
    position = {n: j for j, n in enumerate(other.variables["name"])}
    objective = np.zeros(len(other.variables))
    for j, n in enumerate(names):
        k = position.get(n)
        if k is not None:
            objective[k] = slopes.objective[j]
    row_index = {row.name: r for r, row in enumerate(other.rows)}
    rows: dict[int, dict[int, float]] = {}
    for r, changes in slopes.rows.items():
        target = row_index.get(model.rows[r].name)
        if target is None:
            continue
        mapped = {position[names[j]]: d for j, d in changes.items() if names[j] in position}
        if mapped:
            rows[target] = mapped
    return PriceSlopes(objective, rows, slopes.base_price)


def _all_carried(model: LinearModel, values: np.ndarray, other: LinearModel) -> bool:
    """Whether every variable the plan sets (the N+1 class aside: :func:`carried` sets it
    again) exists in ``other``: then the plan carried over is the same plan."""
    v = model.variables
    set_ = (np.abs(values) > 1e-9) & (v["kind"] != "top").to_numpy()
    return bool(v["name"][set_].isin(other.variables["name"]).all())


class Warm:
    """Break-even re-solves of one HiGHS model changed in place, each starting from the
    last plan. The other pools are pruned by dominance (this one kept and not counted as
    room for others): exact while only its price moves, and a much smaller MIP."""

    def __init__(self, compiled, pool_id, pi, model, slopes, start, options) -> None:
        full_model = model if model is not None else build_model(compiled)
        full_slopes = slopes if slopes is not None else price_slopes(compiled, full_model)
        self.model = build_model(_pruned_keeping(compiled, pool_id))
        self.slopes = _slopes_by_name(full_model, full_slopes, self.model)
        self.start = None if start is None else carried(full_model, start, self.model)
        self.holds_plan = start is not None and _all_carried(full_model, start, self.model)
        self.pi, self.options = pi, options
        self.provider = str(compiled.pools.iloc[pi]["provider"])
        self.pricer = _PoolPricer(self.model, self.slopes, pi)
        self.session = self.pricer.session
        self.split: PeriodSplit | None | bool = None  # built at the first step

    def _split(self) -> bool:
        """Whether the steps go period by period (:class:`PeriodSplit`, built at the first
        step): where the model has two periods or more and N+1 classes (``top``), where the
        relaxation is weak; elsewhere the whole model's steps close at its root, faster
        than the split's subproblems. Not where a row over several periods binds at the
        plan (a carbon cap, a budget): the split leaves that row out and cannot tell
        (docs/concepts/sensitivity.md, "Proofs period by period")."""
        if self.split is None:
            v = self.model.variables
            own = ~v["kind"].isin(SPANNING_KINDS).to_numpy() & (v["period"].to_numpy() >= 0)
            force = pool_vars(self.model, self.pi, ("x", "z"))
            # (A) or (B) covers every plan, and "used" is "used in some period", only where
            # those counts are whole units (a savings plan's USD per hour is not)
            whole = v["integer"].to_numpy(bool) & (v["lb"].to_numpy(float) >= 0)
            n_plus_1 = bool((v["kind"] == "top").any())
            if (
                not n_plus_1
                or len(np.unique(v["period"].to_numpy()[own])) < 2
                or not (whole[~own].all() and whole[force].all())
                or self._spanning_row_binds()
            ):
                self.split = False
            else:
                self.split = PeriodSplit(
                    self.model, self.session, force, self.pricer.cols, self.provider
                )
        return self.split is not False

    def _changed(self, price: float) -> dict[tuple[int, int], float]:
        """The coefficients that move with the pool's price (a budget row), at ``price``."""
        return {
            (r, j): a0 + (price - self.pricer.p0) * d for r, j, a0, d in self.pricer.row_changes
        }

    def objective_without_pool(self) -> float | None:
        """The optimum with the pool's variables fixed at 0 (bounds restored after)."""
        cols, session = self.pricer.cols, self.session
        session.set_bounds(cols, np.zeros(len(cols)), np.zeros(len(cols)))
        r = session.solve(self.options)
        lower = self.model.variables["lb"].to_numpy(float)[cols]
        upper = self.model.variables["ub"].to_numpy(float)[cols]
        session.set_bounds(cols, lower, np.where(np.isfinite(upper), upper, 1e30))
        return r.objective if r.has_solution else None

    def require_pool(self) -> None:
        """From now on every plan uses at least one unit of the pool."""
        units = pool_vars(self.model, self.pi, ("x", "z")).tolist()
        self.session.add_row(dict.fromkeys(units, 1.0), 1.0, 1e30)

    def _relaxation(self, price: float | None) -> tuple[str, float, np.ndarray]:
        """The LP relaxation of the model as it stands, at ``price`` (None: the price it
        has): HiGHS's model status name, its optimum and its rows' duals (the model's
        integrality restored after)."""
        import highspy

        h, integer = self.session.h, self.session.integer
        n = len(integer)
        columns = np.arange(n, dtype=np.int32)
        kinds = np.where(integer, highspy.HighsVarType.kInteger, highspy.HighsVarType.kContinuous)
        if price is not None:
            self.pricer.set_price(price)
        h.changeColsIntegrality(n, columns, np.full(n, highspy.HighsVarType.kContinuous))
        try:
            with native_output_to_stderr():
                h.run()
            status = h.getModelStatus().name
            bound = float(h.getInfo().objective_function_value)
            duals = np.asarray(h.getSolution().row_dual, dtype=float)
        finally:
            h.changeColsIntegrality(n, columns, kinds)
        return status, bound, duals

    def lp_bound(self, price: float) -> float | None:
        """At ``price``, the optimum of the LP relaxation (the pool required, as after
        :meth:`require_pool`): a lower bound of every plan using the pool; None when the
        relaxation has no plan (then no plan uses the pool); -inf when HiGHS stopped
        without an answer."""
        status, bound, _ = self._relaxation(price)
        if status == "kInfeasible":
            return None
        return bound if status == "kOptimal" else -np.inf

    def _spanning_row_binds(self) -> bool:
        """Whether a row over several periods (:func:`spanning_rows`: a carbon cap, a
        budget) has a dual in the LP relaxation at the step's price, the pool required: it
        binds, and the split, which leaves it out, cannot tell (on the seed under a 40 t
        cap it answered "cannot tell" at every step, bench/RESULTS.md)."""
        rows = spanning_rows(self.model)
        if not rows:
            return False
        status, _, duals = self._relaxation(None)
        if status != "kOptimal":
            return False
        return bool(np.any(np.abs(duals[rows]) > 1e-9))

    def shrinks_with_price(self) -> bool:
        """Whether every row that moves with the pool's price (a budget it is charged to)
        only tightens as the price rises: then a plan feasible at a price is feasible at
        every lower one, and price 0 has the most plans."""
        for r, _j, _a0, d in self.pricer.row_changes:
            sense = self.model.rows[r].sense
            if sense == "==" or (sense == "<=" and d < 0) or (sense == ">=" and d > 0):
                return False
        return True

    def screened(self, target: float) -> str:
        """For a pool outside the plan, the answer its LP relaxation at price 0 already
        gives, before any MIP (docs/concepts/sensitivity.md, "Answers from the LP"): "no
        feasible plan can use it at this price" when it has no plan, "does not enter at
        any positive price" when its bound is above ``target`` by :data:`LP_MARGIN`;
        "" otherwise (and where rows move with the price other than tightening)."""
        if not self.shrinks_with_price():
            return ""
        bound = self.lp_bound(0.0)
        if bound is None:
            return "no feasible plan can use it at this price"
        if bound > target + LP_MARGIN * max(1.0, abs(target)):
            return "does not enter at any positive price"
        return ""

    def solve_at(self, price: float, x_start):
        self.pricer.set_price(price)
        r = self.session.solve(self.options, start=x_start)
        return (r.objective, r.values) if r.has_solution else (None, None)

    def feasible_at(self, x: np.ndarray, price: float) -> bool:
        """Whether plan ``x`` (feasible at some price) keeps the rows that move with the
        pool's price (a budget it is charged to) at ``price``."""
        rows = self.model.rows
        moved: dict[int, float] = {}
        for r, j, _a0, d in self.pricer.row_changes:
            moved[r] = moved.get(r, 0.0) + (price - self.pricer.p0) * d * x[j]
        for r, delta in moved.items():
            row = rows[r]
            terms = [c * x[j] for j, c in row.coefs.items()]
            activity = sum(terms) + delta
            # relative to the row's terms too: a settled spend row's sides are 1e5-1e6 USD
            slack = 1e-9 * max(1.0, abs(row.rhs), sum(abs(t) for t in terms))
            if (row.sense != ">=" and activity > row.rhs + slack) or (
                row.sense != "<=" and activity < row.rhs - slack
            ):
                return False
        return True

    def trial_price(
        self, x: np.ndarray, price: float, value: float, u: float, target: float
    ) -> float | None:
        """The next Newton price from plan ``x`` (cost ``value`` at ``price``, ``u`` units of
        the pool's price): where ``x``'s cost meets ``target``, at 0 at the least, with
        ``x`` a plan there (its cost then bounds f from above); None where it is not.

        ``x``'s cost is the line ``value + u (p - price)`` while the rows that move with the
        price hold. Where they are a provider's support spend rows (equalities: its fees
        follow its spend), the plan is taken with its fees settled from the spend at each
        price (:func:`~solver.core.formulation.support.settle`), a cost that rises with the
        price at least as fast as the line, and the price where it meets ``target`` is
        found on the bracket the line gives (docs/concepts/sensitivity.md, "Newton with
        support fees")."""
        line = max(0.0, price + (target - value) / u)
        if self.feasible_at(x, line):
            return line
        if not self._support_moves():
            return None

        at_price = float(self._costs_at(price) @ x)

        def cost(p: float) -> tuple[float, np.ndarray | None]:
            settled = self._settled_at(x, p)
            if settled is None:
                return np.inf, None
            return value + float(self._costs_at(p) @ settled) - at_price, settled

        tol = 1e-3 * self.options.relative_gap * max(1.0, abs(target))
        if value > target:  # down from price: the line's root is at or below the cost's
            lo, hi = line, price
            g_lo, plan = cost(lo)
            if plan is None:
                return None
            if g_lo > target:  # above the target even at 0: the step is taken at 0
                return 0.0 if line <= 0.0 else None
            g_hi = value
        else:  # up from price: the cost rises at least as fast as the line
            lo, hi = price, line
            g_lo, g_hi = value, cost(line)[0]
        side = 0
        for _ in range(100):  # regula falsi, Illinois: the cost is piecewise linear
            if target - g_lo <= tol or hi - lo <= 1e-12 * max(1.0, hi):
                break
            t = lo + (target - g_lo) * (hi - lo) / (g_hi - g_lo) if np.isfinite(g_hi) else hi
            t = min(max(t, lo), hi)
            g = cost(t)[0]
            if g <= target:
                lo, g_lo = t, g
                if side == -1:
                    g_hi = target + 0.5 * (g_hi - target)
                side = -1
            else:
                hi, g_hi = t, g
                if side == 1:
                    g_lo = target - 0.5 * (target - g_lo)
                side = 1
        settled = self._settled_at(x, lo)
        if settled is None or not self.feasible_at(settled, lo):
            return None
        return lo

    def _support_moves(self) -> bool:
        rows = self.model.rows
        return any(rows[r].family == "support_spend" for r, *_ in self.pricer.row_changes)

    def _costs_at(self, price: float) -> np.ndarray:
        """The objective's costs with the pool at ``price`` (the session's others)."""
        c = np.asarray(self.session.cost, dtype=float).copy()
        pr = self.pricer
        c[pr.cols] = pr.cost0 + (price - pr.p0) * pr.slope[pr.cols]
        return c

    def _rows_at(self, price: float) -> list:
        """The model's rows with the coefficients that move with the pool's price at
        ``price``."""
        rows = list(self.model.rows)
        moved: dict[int, dict[int, float]] = {}
        for r, j, a0, d in self.pricer.row_changes:
            moved.setdefault(r, {})[j] = a0 + (price - self.pricer.p0) * d
        for r, coefs in moved.items():
            rows[r] = replace(rows[r], coefs={**rows[r].coefs, **coefs})
        return rows

    def _settled_at(self, x: np.ndarray, price: float) -> np.ndarray | None:
        """Plan ``x`` with its support variables settled from its spend at ``price``."""
        from solver.core.formulation.support import settle

        if price < 0.0:
            return None
        return settle(replace(self.model, rows=self._rows_at(price)), x)

    def plan_below(self, price: float, bound: float):
        """At ``price``, a plan using the pool with a cost below ``bound`` (any cost when
        ``bound`` is inf), proved within :data:`STEP_GAP` of the best such plan, not
        closer: ``(cost, plan)``; ``None`` when the solver proves there is none; ``False``
        when it stopped without knowing (a time limit)."""
        import highspy

        h = self.session.h
        self.pricer.set_price(price)
        if self._split():
            assert isinstance(self.split, PeriodSplit)  # built by _split
            got = self.split.below(self.session.cost, self._changed(price), bound, self.options)
            if got is not False:
                return got
        h.setOptionValue("objective_bound", float(bound))
        # a step after the first starts from the branch and bound, not a restricted MIP:
        # the last plan was within STEP_GAP, and the last step finds nothing to start from
        first = not np.isfinite(bound)
        try:
            r = self.session.solve(
                replace(
                    self.options,
                    relative_gap=STEP_GAP,
                    start_heuristic=first,
                    backend_options={**self.options.backend_options, **STEP_OPTIONS},
                )
            )
        finally:
            h.setOptionValue("objective_bound", highspy.kHighsInf)
        if r.has_solution and r.objective is not None and r.objective < bound:
            return r.objective, r.values
        proved = r.termination in (Termination.OPTIMAL, Termination.INFEASIBLE)
        return None if proved else False


def newton_any_plan(
    way: Warm, slope: np.ndarray, target: float, price: float, known, max_steps: int = 40
):
    """Newton on ``f`` with plans that beat ``target``, not necessarily the best ones: each
    step a plan below ``target`` within :data:`STEP_GAP` of the best
    (:meth:`Warm.plan_below`), the last a proof that none is (docs/concepts/sensitivity.md,
    "Newton with any plan below the target").

    ``known`` is ``(cost, plan)`` of a plan using the pool at ``price``, or None (one is
    found first). Returns ``(price, solves, note, last)``: the break-even, or None with a
    ``note`` that says why, or with ``last`` = ``(price, cost, plan)`` from which the
    exact search goes on (the solver stopped without an answer, or the steps ran out).
    """
    solves = 0
    tol = way.options.relative_gap * max(1.0, abs(target))
    if known is None:
        known = way.plan_below(price, np.inf)
        solves += 1
        if known is None and not way.pricer.row_changes:  # none at any price
            return None, solves, "no feasible plan can use it at this price", None
        if not known:  # the exact search looks at other prices (or had no time)
            return None, solves, "", None
    value, x = known
    for _ in range(max_steps):
        u = float(slope @ x)
        if u <= 1e-12:
            return None, solves, "its price does not enter the cost", None
        trial = way.trial_price(x, price, value, u, target)
        if trial is None:  # x is no plan where its cost meets the target
            break
        found = way.plan_below(trial, target - tol)
        solves += 1
        if found is None:  # no plan beats the target at the trial price
            if trial <= 0.0:
                return None, solves, "does not enter at any positive price", None
            return trial, solves, "", None
        if found is False:
            break
        price, (value, x) = trial, found
    return None, solves, "", (price, value, x)
