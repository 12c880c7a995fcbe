"""HiGHS through highspy directly: the model passed as arrays, kept for warm re-solves.

PuLP builds one Python object per variable and per coefficient and re-creates the
HiGHS model on every solve; here the constraint matrix goes to HiGHS in one call
(``passModel`` with row-wise arrays) and a :class:`HighsSession` keeps it, so a
re-solve after a price change touches only the changed coefficients and starts
from the previous plan (a MIP start). Break-even searches and sweeps use it.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from solver.core.backends import interrupt as stop
from solver.core.backends.base import (
    SolveOptions,
    SolveResult,
    Termination,
    deadline_interrupt,
    empty_row_infeasible,
    feasible_without_objective,
    native_output_to_stderr,
    relative_gap,
)
from solver.core.matrix import LinearModel

if TYPE_CHECKING:
    import highspy

_LIMITS = {
    "kTimeLimit",
    "kIterationLimit",
    "kSolutionLimit",
    "kInterrupt",
    "kObjectiveBound",
    "kObjectiveTarget",
    "kMemoryLimit",
    "kHighsInterrupt",
}


#: relative gap of the restricted MIP of :meth:`HighsSession.restricted_start` (at least
#: the solve's own): its plan is only a start, and the whole MIP is still solved to the
#: solve's gap. At the default gap the restricted MIP spends most of its time closing its
#: last half percent, which a start does not need; at 1e-2 the plans are the same
#: (``bench/speed/seed_timing.py``; ``bench/archive/RESULTS-2026.md``, "Autoscaled fleets:
#: a start at 1%").
START_GAP = 1e-2


_JUMP = "mip_heuristic_run_feasibility_jump"


def _option_value(h: highspy.Highs, name: str) -> bool | int | float | str:
    """An option's value as HiGHS holds it (highspy returns (status, value) in some
    versions)."""
    value = h.getOptionValue(name)
    return value[1] if isinstance(value, tuple) else value


def _option(h: highspy.Highs, name: str) -> float:
    """A numeric option's value."""
    return float(_option_value(h, name))


class HighsSession:
    """One HiGHS model built from a :class:`LinearModel`, changed in place between solves.

    Row ``i`` of the HiGHS model is ``model.rows[i]`` (rows with no variables included,
    as empty rows); column ``j`` is variable ``j``.
    """

    def __init__(self, model: LinearModel) -> None:
        import highspy

        self.model = model
        self.h = highspy.Highs()
        self.h.setOptionValue("output_flag", False)
        v = model.variables
        n = len(v)
        inf = highspy.kHighsInf
        lp = highspy.HighsLp()
        lp.num_col_ = n
        lp.num_row_ = len(model.rows)
        cost = np.zeros(n)
        for i, c in model.objective.coefs.items():
            cost[i] += c
        lp.col_cost_ = cost
        lp.offset_ = float(model.objective.constant)
        lp.col_lower_ = v["lb"].to_numpy(dtype=float)
        lp.col_upper_ = np.where(np.isfinite(v["ub"].to_numpy(dtype=float)), v["ub"], inf)
        lower = np.empty(len(model.rows))
        upper = np.empty(len(model.rows))
        starts: list[int] = [0]
        index: list[int] = []
        value: list[float] = []
        for r, row in enumerate(model.rows):
            lower[r] = row.rhs if row.sense in (">=", "==") else -inf
            upper[r] = row.rhs if row.sense in ("<=", "==") else inf
            index.extend(row.coefs.keys())
            value.extend(row.coefs.values())
            starts.append(len(index))
        lp.row_lower_ = lower
        lp.row_upper_ = upper
        lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
        lp.a_matrix_.start_ = np.asarray(starts, dtype=np.int32)
        lp.a_matrix_.index_ = np.asarray(index, dtype=np.int32)
        lp.a_matrix_.value_ = np.asarray(value, dtype=float)
        lp.a_matrix_.num_col_ = n
        lp.a_matrix_.num_row_ = len(model.rows)
        self.integer = v["integer"].to_numpy(dtype=bool)
        if self.integer.any():
            lp.integrality_ = [
                highspy.HighsVarType.kInteger if k else highspy.HighsVarType.kContinuous
                for k in self.integer
            ]
        self.h.passModel(lp)
        self.cost = cost
        self.n_rows = len(model.rows)
        self.infeasible_row = empty_row_infeasible(model)

    # ---- changes in place
    def set_costs(self, columns: np.ndarray, costs: np.ndarray) -> None:
        self.h.changeColsCost(len(columns), np.asarray(columns, np.int32), np.asarray(costs, float))
        self.cost[columns] = costs

    def set_coefficient(self, row: int, column: int, value: float) -> None:
        self.h.changeCoeff(int(row), int(column), float(value))

    def set_bounds(self, columns: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> None:
        self.h.changeColsBounds(
            len(columns),
            np.asarray(columns, np.int32),
            np.asarray(lower, float),
            np.asarray(upper, float),
        )

    def add_row(self, coefs: dict[int, float], lower: float, upper: float) -> int:
        cols = np.fromiter(coefs.keys(), dtype=np.int32)
        vals = np.fromiter(coefs.values(), dtype=float)
        self.h.addRow(float(lower), float(upper), len(cols), cols, vals)
        self.n_rows += 1
        return self.n_rows - 1

    def delete_row(self, row: int) -> None:
        self.h.deleteRows(1, np.array([row], dtype=np.int32))
        self.n_rows -= 1

    # ---- a first plan
    def restricted_start(self, time_limit_s: float | None = None) -> np.ndarray | None:
        """A first plan for the MIP: the MIP restricted to the LP relaxation's support.

        Solves the LP relaxation, fixes at zero every integer column that is zero there
        (and may be zero), and solves the MIP that is left, at the same gap. Any plan of the
        restricted MIP is a plan of the whole MIP (the same rows, tighter bounds), so it
        is a valid MIP start; the model is restored afterwards. This is the relaxation-
        induced restriction of RINS (Danna, Rothberg and Le Pape, "Exploring relaxation
        induced neighborhoods to improve MIP solutions", Math. Programming 102, 2005),
        taken with the LP alone: on the seed it finds a plan well before HiGHS's own root
        heuristics do (``bench/speed/seed_timing.py``). Returns None when the
        LP or the restricted MIP has no plan. The restricted MIP stops within
        :data:`START_GAP` of its optimum (or the solve's gap, when looser).
        """
        import highspy

        h = self.h
        n = len(self.cost)
        if not self.integer.any():
            return None
        columns = np.arange(n, dtype=np.int32)
        kinds = np.where(
            self.integer, highspy.HighsVarType.kInteger, highspy.HighsVarType.kContinuous
        )
        lower = np.asarray(h.getLp().col_lower_, dtype=float)
        upper = np.asarray(h.getLp().col_upper_, dtype=float)
        h.setOptionValue("time_limit", float(time_limit_s or highspy.kHighsInf))
        gap = _option(h, "mip_rel_gap")
        h.changeColsIntegrality(n, columns, np.full(n, highspy.HighsVarType.kContinuous))
        try:
            with native_output_to_stderr(), stop.native():
                h.run()
            stop.raise_if_requested()
            if h.getModelStatus().name != "kOptimal":
                return None
            relaxed = np.asarray(h.getSolution().col_value, dtype=float)
            fix = np.flatnonzero(self.integer & (relaxed < 1e-7) & (lower <= 0)).astype(np.int32)
            h.changeColsIntegrality(n, columns, kinds)
            h.changeColsBounds(len(fix), fix, np.zeros(len(fix)), np.zeros(len(fix)))
            h.setOptionValue("mip_rel_gap", max(START_GAP, gap))
            with native_output_to_stderr(), stop.native():
                h.run()
            stop.raise_if_requested()
            if h.getInfo().primal_solution_status != 2:
                return None
            return np.asarray(h.getSolution().col_value, dtype=float)
        finally:
            h.setOptionValue("mip_rel_gap", gap)
            h.changeColsIntegrality(n, columns, kinds)
            h.changeColsBounds(n, columns, lower, upper)

    # ---- solve
    def solve(self, options: SolveOptions, start: np.ndarray | None = None) -> SolveResult:
        """Solve as the model stands; ``start`` is a plan to try first (a MIP start).

        Without one, a MIP starts from :meth:`restricted_start` unless
        ``options.start_heuristic`` is off.
        """
        import highspy

        name = "highspy"
        if self.infeasible_row:
            return SolveResult(
                Termination.INFEASIBLE,
                name,
                None,
                None,
                None,
                None,
                0.0,
                message=self.infeasible_row,
            )
        h = self.h
        h.setOptionValue("mip_rel_gap", float(options.relative_gap))
        h.setOptionValue("time_limit", float(options.time_limit_s or highspy.kHighsInf))
        h.setOptionValue("random_seed", int(options.seed))
        if options.threads:
            h.setOptionValue("threads", int(options.threads))
        # options for this solve only, set back after its run: the caller's backend_options,
        # and (below) feasibility jump off for a MIP given a plan to start from
        before = {key: _option_value(h, key) for key in {*options.backend_options, _JUMP}}
        for key, value in options.backend_options.items():
            h.setOptionValue(key, value)
        began = time.perf_counter()
        # stops at the limit, and on a signal or a caller's request (interrupt.py), the
        # first plan's search too
        callback, kinds = deadline_interrupt(options.time_limit_s, self.model.objective_unit)
        h.setCallback(callback, None)
        for kind in kinds:
            h.startCallback(kind)
        if start is None and options.start_heuristic:
            limit = options.time_limit_s
            start = self.restricted_start(None if limit is None else limit / 5)
            if limit is not None:  # the first plan's time counts against the limit
                limit = max(0.1, limit - (time.perf_counter() - began))
                options = replace(options, time_limit_s=limit)
            h.setOptionValue("time_limit", float(limit or highspy.kHighsInf))
        if start is not None:
            # feasibility jump only looks for a first plan: a MIP given one skips it
            # (the same plan, sooner: bench/archive/RESULTS-2026.md)
            h.setOptionValue(_JUMP, False)
            sol = highspy.HighsSolution()
            sol.col_value = list(np.asarray(start, dtype=float))
            sol.value_valid = True
            h.setSolution(sol)
        try:
            # HiGHS 1.12 prints a MIP-start repair line to fd 1
            with native_output_to_stderr(), stop.native():
                h.run()
        finally:
            for key, value in before.items():
                h.setOptionValue(key, value)
        stop.raise_if_requested()
        seconds = time.perf_counter() - began
        status = h.getModelStatus()
        status_name = status.name if hasattr(status, "name") else str(status).split(".")[-1]
        info = h.getInfo()
        if status_name in {"kInfeasible", "kUnboundedOrInfeasible"}:
            if status_name == "kUnboundedOrInfeasible" and feasible_without_objective(
                self.model, lambda m: HighsSession(m).solve(options)
            ):
                return SolveResult(Termination.UNBOUNDED, name, None, None, None, None, seconds)
            return SolveResult(Termination.INFEASIBLE, name, None, None, None, None, seconds)
        if status_name == "kUnbounded":
            return SolveResult(Termination.UNBOUNDED, name, None, None, None, None, seconds)
        has_plan = info.primal_solution_status == 2
        if status_name != "kOptimal" and not (status_name in _LIMITS and has_plan):
            term = Termination.NO_SOLUTION if status_name in _LIMITS else Termination.ERROR
            return SolveResult(term, name, None, None, None, None, seconds, message=status_name)
        solution = h.getSolution()
        values = np.asarray(solution.col_value, dtype=float)
        values[self.integer] = np.round(values[self.integer])
        objective = float(self.cost @ values + self.model.objective.constant)
        mip = bool(self.integer.any())
        bound = float(info.mip_dual_bound) if mip else objective
        gap = relative_gap(objective, bound) if mip else 0.0
        if status_name == "kOptimal":
            term = Termination.OPTIMAL
            gap = (
                min(gap or 0.0, options.relative_gap)
                if (gap or 0.0) <= options.relative_gap * 1.0001
                else gap
            )
        else:
            term = Termination.FEASIBLE
        duals = reduced = None
        if not mip and term == Termination.OPTIMAL:
            row_dual = np.asarray(solution.row_dual, dtype=float)
            duals = {
                row.name: float(row_dual[r]) for r, row in enumerate(self.model.rows) if row.coefs
            }
            reduced = np.asarray(solution.col_dual, dtype=float)
        return SolveResult(
            term,
            name,
            values,
            objective,
            bound,
            gap,
            seconds,
            message="" if term == Termination.OPTIMAL else status_name,
            duals=duals,
            reduced_costs=reduced,
        )


class HighsBackend:
    """Solve with HiGHS through highspy, the model passed as arrays (no PuLP)."""

    name = "highspy"
    features = frozenset({"integer", "time_limit", "gap", "duals", "warm_start"})

    def available(self) -> bool:
        try:
            import highspy  # noqa: F401
        except ImportError:
            return False
        return True

    def solve(self, model: LinearModel, options: SolveOptions) -> SolveResult:
        return HighsSession(model).solve(options)
