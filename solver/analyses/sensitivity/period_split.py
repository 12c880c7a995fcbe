"""The last step of a break-even search proved period by period where the periods are
independent (docs/concepts/sensitivity.md, "Proofs period by period").
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from solver.analyses.sensitivity.steps import below_with_row
from solver.core.backends import HighsSession, SolveOptions, Termination
from solver.core.formulation.support import settle
from solver.core.matrix import VarKind
from solver.core.model import LinearModel

#: variables that decide for several periods at once (a purchase, a reservation or a
#: savings plan from a period for its term): the plans without any are split by period
#: in :class:`PeriodSplit`
SPANNING_KINDS = ("buy", "commit", "savings_plan")


class PeriodSplit:
    """The last step of a break-even search (no plan using the pool beats the target)
    proved period by period: (A) the plans that buy or reserve nothing (:data:`SPANNING_KINDS`
    all zero) as one subproblem per period, (B) the others as the whole model with "some
    purchase or reservation" as a row (docs/concepts/sensitivity.md, "Proofs period by
    period").
    """

    def __init__(
        self,
        model: LinearModel,
        session: HighsSession,
        force_cols,
        pool_cols,
        provider: str | None = None,
    ) -> None:
        """``provider``: the searched pool's provider, whose support stays in (A) as before
        (:func:`support_columns`)."""
        import highspy

        v = model.variables
        period = v["period"].to_numpy(int)
        support = support_columns(model, provider)  # left out of (A): fees >= 0
        spanning = (v["kind"].isin(SPANNING_KINDS).to_numpy() | (period < 0)) & ~support
        periods = sorted({int(t) for t in period[~spanning & ~support]})
        rows: dict[int, list[int]] = {t: [] for t in periods}
        for r, row in enumerate(model.rows):
            if any(support[j] for j in row.coefs):
                continue
            own = {int(period[j]) for j in row.coefs if not spanning[j]}
            if len(own) == 1:
                rows[own.pop()].append(r)
        self.model, self.periods, self.rows, self.session = model, periods, rows, session
        self.support = bool(support.any())
        self.cols = {t: np.flatnonzero((period == t) & ~spanning & ~support) for t in periods}
        self.local = {t: {int(j): i for i, j in enumerate(self.cols[t])} for t in periods}
        self.local_row = {r: (t, i) for t in periods for i, r in enumerate(rows[t])}
        self.sessions: dict[int, HighsSession] = {}
        self.force_row: dict[int, int] = {}
        inf = highspy.kHighsInf
        for t in periods:
            local = self.local[t]
            sub_rows = [  # a purchase or reservation is 0 in (A): its terms drop out
                replace(
                    model.rows[r],
                    coefs={local[j]: c for j, c in model.rows[r].coefs.items() if j in local},
                )
                for r in rows[t]
            ]
            sub_vars = v.iloc[self.cols[t]].reset_index(drop=True)
            sub = LinearModel(sub_vars, sub_rows, type(model.objective)(), {})
            self.sessions[t] = HighsSession(sub)
            mine = {local[int(j)]: 1.0 for j in force_cols if int(j) in local}
            if mine:
                self.force_row[t] = self.sessions[t].add_row(mine, -inf, inf)
        self.shape = _shapes(self.sessions)
        pool_cols = set(np.asarray(pool_cols).tolist())
        self.moves = {t: bool(pool_cols.intersection(self.local[t])) for t in periods}
        self.fixed: dict[int, tuple] = {}  # optima of the periods the price does not move
        some = np.flatnonzero(spanning & (v["ub"].to_numpy(float) > 0))
        self.spanning = some
        self.some_row = session.add_row(dict.fromkeys(some.tolist(), 1.0), -inf, inf)

    def _set(self, cost: np.ndarray, changed: dict[tuple[int, int], float]) -> None:
        """The subproblems at the model's costs and changed coefficients (row, column)."""
        for t in self.periods:
            cols = self.cols[t]
            self.sessions[t].set_costs(np.arange(len(cols)), cost[cols])
        for (r, j), a in changed.items():
            if r in self.local_row and j in self.local[self.local_row[r][0]]:
                t, i = self.local_row[r]
                self.sessions[t].set_coefficient(i, self.local[t][j], a)

    def below(self, cost, changed, bound: float, options: SolveOptions):
        """Whether a plan using the pool costs below ``bound`` at costs ``cost`` (the
        model's, with ``changed`` coefficients): None when none does (proved), ``(cost,
        plan)`` of one, False when this split cannot tell (the caller then solves the
        whole model)."""
        self._set(cost, changed)
        # periods alike but for the scale of their costs are solved once (moved
        # coefficients in a period's rows, a period budget, would make them differ)
        memo: dict | None = None if any(r in self.local_row for r, _ in changed) else {}
        free, forced = {}, {}
        for t in self.periods:
            free[t] = self.fixed.get(t) or self._optimum(t, False, cost, options, memo)
            if free[t] is False:
                return False
            if not self.moves[t]:  # the pool has no column there: it does not move
                self.fixed[t] = free[t]
        for t in self.force_row:
            forced[t] = self._optimum(t, True, cost, options, memo)
            if forced[t] is False:
                return False
        if any(f is None for f in free.values()):
            forced = {}  # a period without any plan: (A) has none
        rest = bound - float(self.model.objective.constant)
        found = []
        for t, got in forced.items():
            if got is None:  # no plan of (A) uses the pool in period t
                continue
            others = [free[s] for s in self.periods if s != t]
            if got[0] + sum(f[0] for f in others) >= rest:
                continue  # proved: no plan of (A) with the pool in period t beats it
            total = got[1] + sum(f[1] for f in others)
            if total >= rest:
                return False  # within the subproblems' gaps of the bound: undecided
            found.append((total, t, got[2]))
        if found:  # (A) has a plan below the bound, if the left-out rows hold
            _, t, values = min(found, key=lambda f: f[0])
            x = np.zeros(len(self.model.variables))
            for s in self.periods:
                x[self.cols[s]] = values if s == t else free[s][2]
            if self.support:  # the fees the plan's spend makes (left out of the periods)
                x = settle(self.model, x)
            value = float(cost @ x + self.model.objective.constant)
            ok = value < bound and _holds(self.model, x, changed)
            return (value, x) if ok else False
        if not len(self.spanning):
            return None
        r = below_with_row(self.session, self.some_row, bound, options)  # (B)
        if r is None or r is False:
            return r
        return r.objective, r.values

    def _optimum(self, t: int, forced: bool, cost: np.ndarray, options, memo):
        """Period t's optimum (the pool forced in when ``forced``): ``(lower bound, cost,
        plan)``, None when it has no plan, False when the solver stopped without knowing.
        From ``memo`` when a period of the same shape was solved at costs in proportion
        (the same plans are optimal, the optimum scaled)."""
        import highspy

        local = cost[self.cols[t]]
        key = (self.shape[t], forced)
        if memo is not None and key in memo:
            c0, got = memo[key]
            scale = _proportion(c0, local)
            if scale is not None:
                if got is None:
                    return None
                low = got[0] * scale
                return low - 1e-9 * abs(low), float(local @ got[2]), got[2]
        session = self.sessions[t]
        if forced:
            session.h.changeRowBounds(self.force_row[t], 1.0, highspy.kHighsInf)
        try:
            r = session.solve(replace(options, relative_gap=PERIOD_GAP, start_heuristic=False))
        finally:
            if forced:
                inf = highspy.kHighsInf
                session.h.changeRowBounds(self.force_row[t], -inf, inf)
        if r.termination == Termination.INFEASIBLE:
            got = None
        elif r.termination != Termination.OPTIMAL:
            return False
        else:
            assert r.objective is not None and r.bound is not None  # optimal: both known
            got = (float(r.bound), float(r.objective), r.values)
        if memo is not None:
            memo[key] = (local, got)
        return got


def _proportion(a: np.ndarray, b: np.ndarray) -> float | None:
    """The factor f > 0 with b = f a to 1e-12 (both non-negative, zero in the same
    places), or None."""
    if a.shape != b.shape or (a < 0).any() or (b < 0).any() or not (a > 0).any():
        return None
    if not np.array_equal(a > 0, b > 0):
        return None
    ratio = b[a > 0] / a[a > 0]
    f = float(ratio.max())
    return f if float(ratio.min()) >= f * (1.0 - 1e-12) else None


def _shapes(sessions: dict[int, HighsSession]) -> dict[int, int]:
    """Per period, the first period whose subproblem is the same but for its costs (the
    same columns' bounds and types, rows and coefficients, as HiGHS holds them)."""
    seen: list[tuple[int, tuple]] = []
    out = {}
    for t, session in sessions.items():
        lp = session.h.getLp()
        m = lp.a_matrix_
        parts = (lp.col_lower_, lp.col_upper_, lp.row_lower_, lp.row_upper_, session.integer,
                 m.start_, m.index_, m.value_)  # fmt: skip
        sign = tuple(np.asarray(p).tobytes() for p in parts) + (str(m.format_),)
        out[t] = next((u for u, other in seen if other == sign), t)
        if out[t] == t:
            seen.append((t, sign))
    return out


def _holds(model: LinearModel, x: np.ndarray, changed: dict[tuple[int, int], float]) -> bool:
    """Whether plan ``x`` keeps every row of ``model`` (with ``changed`` coefficients),
    to HiGHS's feasibility tolerance scaled by the row."""
    lb = model.variables["lb"].to_numpy(float)
    ub = model.variables["ub"].to_numpy(float)
    if np.any(x < lb - 1e-9) or np.any(x > ub + 1e-9):
        return False
    for r, row in enumerate(model.rows):
        activity = sum((changed.get((r, j), c)) * x[j] for j, c in row.coefs.items())
        slack = 1e-7 * max(1.0, abs(row.rhs))
        if (row.sense != ">=" and activity > row.rhs + slack) or (
            row.sense != "<=" and activity < row.rhs - slack
        ):
            return False
    return True


#: relative gap of the period subproblems without the pool forced in: their optima's
#: bounds add up to the lower bound that must reach the target (to the searches' 1e-6),
#: so each is closed far tighter than that
PERIOD_GAP = 1e-7


def support_columns(model: LinearModel, keep: str | None = None) -> np.ndarray:
    """Mask of the support variables (fees, bands, tier and billed binaries:
    :mod:`solver.core.formulation.support`) but ``keep``'s (a provider), which (A)'s
    periods leave out with every row they are in: each fee is at least 0 and adds to the
    cost, so the periods' optima without them bound (A) from below
    (docs/concepts/sensitivity.md, "Proofs period by period"). ``keep``'s (the searched
    pool's provider, whose fees decide whether it enters) stay in: its billed binary, over
    the whole horizon, is a spanning variable (0 in (A), its plans go to (B)). No
    variable where one could lower the cost (a negative cost or lower bound)."""
    v = model.variables
    mask = (v["kind"] == VarKind.SUPPORT.value).to_numpy().copy()
    if keep is not None:
        names = v["name"].astype(str)
        mask &= ~(names.str.contains(f"[{keep},", regex=False)
                  | names.str.contains(f"[{keep}]", regex=False)).to_numpy()  # fmt: skip
    cost = np.zeros(len(v))
    for j, c in model.objective.coefs.items():
        cost[j] += c
    if np.any(cost[mask] < 0) or np.any(v["lb"].to_numpy(float)[mask] < 0):
        return np.zeros(len(v), dtype=bool)
    return mask


def spanning_rows(model: LinearModel) -> list[int]:
    """The inequality rows over variables of two periods or more that are not
    :data:`SPANNING_KINDS` (a carbon cap, a budget): the rows :class:`PeriodSplit` leaves
    out of (A). Where one binds, (A)'s periods' plans together break it and the split
    cannot tell (docs/concepts/sensitivity.md, "Proofs period by period")."""
    v = model.variables
    period = v["period"].to_numpy(int)
    own = ~v["kind"].isin(SPANNING_KINDS).to_numpy() & (period >= 0)
    return [
        r
        for r, row in enumerate(model.rows)
        if row.sense != "==" and len({int(period[j]) for j in row.coefs if own[j]}) >= 2
    ]
