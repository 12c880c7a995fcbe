"""PuLP adapter driving HiGHS (through highspy, the default) or CBC."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

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
    import pulp

_SENSE = {"<=": -1, ">=": 1, "==": 0}


class PulpBackend:
    """Solve through PuLP with HiGHS (``highs``) or CBC (``cbc``).

    Parameters
    ----------
    engine
        ``"highs"`` (highspy API, pinned to 1.12.0 beside OR-Tools) or ``"cbc"``
        (the CBC binary bundled with PuLP).
    """

    def __init__(self, engine: str = "highs") -> None:
        if engine not in {"highs", "cbc"}:
            raise ValueError(f"unknown PuLP engine {engine!r}; use highs or cbc")
        self.engine = engine
        self.name = f"pulp-{engine}"
        self.features = frozenset({"integer", "time_limit", "gap", "duals"})

    def available(self) -> bool:
        import pulp

        solver = pulp.HiGHS(msg=False) if self.engine == "highs" else pulp.PULP_CBC_CMD(msg=False)
        return bool(solver.available())

    def _solver(self, options: SolveOptions) -> pulp.LpSolver:
        import pulp

        kwargs: dict[str, object] = {
            "msg": False,
            "gapRel": options.relative_gap,
            "timeLimit": options.time_limit_s,
        }
        if options.threads:
            kwargs["threads"] = options.threads
        if self.engine == "highs":
            if options.seed:
                kwargs["random_seed"] = options.seed
            interrupt = deadline_interrupt(options.time_limit_s)
            kwargs["callbackTuple"] = (interrupt[0], None)
            kwargs["callbacksToActivate"] = interrupt[1]
            kwargs.update(options.backend_options)
            return pulp.HiGHS(**kwargs)
        extra = [f"randomS {options.seed}"] if options.seed else []
        kwargs.update(options.backend_options)
        return pulp.PULP_CBC_CMD(options=extra, **kwargs)

    def build(self, model: LinearModel) -> tuple[pulp.LpProblem, list[pulp.LpVariable]]:
        """Translate the neutral model into a ``pulp.LpProblem`` (variables in order)."""
        import pulp

        prob = pulp.LpProblem(model.stage, pulp.LpMinimize)
        v = model.variables
        xs = [
            pulp.LpVariable(
                f"v{i}",
                lowBound=lb if np.isfinite(lb) else None,
                upBound=None if not np.isfinite(ub) else ub,
                cat=pulp.LpInteger if integer else pulp.LpContinuous,
            )
            for i, (lb, ub, integer) in enumerate(
                zip(v["lb"].to_numpy(), v["ub"].to_numpy(), v["integer"].to_numpy(), strict=True)
            )
        ]
        prob.setObjective(
            pulp.LpAffineExpression(
                [(xs[i], c) for i, c in model.objective.coefs.items()],
                constant=model.objective.constant,
            )
        )
        for r, row in enumerate(model.rows):
            expr = pulp.LpAffineExpression([(xs[i], c) for i, c in row.coefs.items()])
            prob.addConstraint(pulp.LpConstraint(expr, _SENSE[row.sense], f"r{r}", row.rhs))
        return prob, xs

    def _limit_result(
        self,
        model: LinearModel,
        highs: highspy.Highs,
        xs: list[pulp.LpVariable],
        seconds: float,
    ) -> SolveResult:
        """A HiGHS stop PuLP does not map: the incumbent (if any) and its gap."""
        info = highs.getInfo()
        if info.primal_solution_status != 2:
            return SolveResult(
                Termination.NO_SOLUTION,
                self.name,
                None,
                None,
                None,
                None,
                seconds,
                message=str(highs.getModelStatus()),
            )
        col = highs.getSolution().col_value
        values = np.array([col[x.index] for x in xs])
        integer = model.variables["integer"].to_numpy()
        values[integer] = np.round(values[integer])
        objective = model.objective.value(values)
        bound = _bound_with_constant(info, objective)
        return SolveResult(
            Termination.FEASIBLE,
            self.name,
            values,
            objective,
            bound,
            relative_gap(objective, bound),
            seconds,
            message=str(highs.getModelStatus()),
        )

    def solve(self, model: LinearModel, options: SolveOptions) -> SolveResult:
        import pulp

        empty = empty_row_infeasible(model)
        if empty is not None:  # PuLP would drop a row with no variables silently
            return SolveResult(
                Termination.INFEASIBLE, self.name, None, None, None, None, 0.0, message=empty
            )
        began = time.perf_counter()
        prob, xs = self.build(model)
        if options.time_limit_s is not None:  # building the PuLP model counts against it
            left = max(0.1, options.time_limit_s - (time.perf_counter() - began))
            options = replace(options, time_limit_s=left)
        solver = self._solver(options)
        started = time.perf_counter()
        try:
            with native_output_to_stderr():
                prob.solve(solver)
        except KeyError:
            # PuLP 3.3 maps only some HiGHS stops (not a solution or node limit): read the
            # best plan found from HiGHS itself; it is feasible, not proven optimal.
            highs = getattr(prob, "solverModel", None)
            if self.engine != "highs" or highs is None:
                raise
            return self._limit_result(model, highs, xs, time.perf_counter() - started)
        except pulp.PulpSolverError as exc:
            return SolveResult(
                Termination.ERROR,
                self.name,
                None,
                None,
                None,
                None,
                time.perf_counter() - started,
                message=str(exc),
            )
        seconds = time.perf_counter() - started
        status, sol_status = prob.status, prob.sol_status
        if status == pulp.LpStatusInfeasible or sol_status == pulp.LpSolutionInfeasible:
            if (
                model.n_integer
                and self.engine == "highs"
                and feasible_without_objective(model, lambda m: self.solve(m, options))
            ):  # HiGHS's MIP presolve says "infeasible" for "unbounded or infeasible"
                return SolveResult(
                    Termination.UNBOUNDED, self.name, None, None, None, None, seconds
                )
            return SolveResult(Termination.INFEASIBLE, self.name, None, None, None, None, seconds)
        if status == pulp.LpStatusUnbounded or sol_status == pulp.LpSolutionUnbounded:
            return SolveResult(Termination.UNBOUNDED, self.name, None, None, None, None, seconds)
        highs = getattr(prob, "solverModel", None) if self.engine == "highs" else None
        if highs is not None and highs.getInfo().primal_solution_status != 2:
            sol_status = pulp.LpSolutionNoSolutionFound  # stopped by a limit without a plan
        if sol_status not in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
            return SolveResult(
                Termination.NO_SOLUTION,
                self.name,
                None,
                None,
                None,
                None,
                seconds,
                message=pulp.LpStatus.get(status, str(status)),
            )
        return self._plan(model, options, (prob, xs, sol_status), highs, seconds)

    def _plan(
        self,
        model: LinearModel,
        options: SolveOptions,
        solved: tuple[pulp.LpProblem, list[pulp.LpVariable], int],
        highs: highspy.Highs | None,
        seconds: float,
    ) -> SolveResult:
        """The plan PuLP solved (``solved``: the problem, its variables and its solution
        status, optimal or integer feasible): its values, objective, bound and gap, and for
        an LP solved to optimality its duals and reduced costs."""
        import pulp

        prob, xs, sol_status = solved
        values = np.array([x.varValue if x.varValue is not None else 0.0 for x in xs])
        integer = model.variables["integer"].to_numpy()
        values[integer] = np.round(values[integer])
        objective = model.objective.value(values)
        bound = None
        if highs is not None:
            info = highs.getInfo()
            if model.n_integer:
                bound = _bound_with_constant(info, objective)
            else:
                bound = objective
        elif sol_status == pulp.LpSolutionOptimal:
            bound = objective  # CBC reached its gap tolerance; the bound is within it
        gap = relative_gap(objective, bound)
        if sol_status == pulp.LpSolutionOptimal:
            term = Termination.OPTIMAL
            if gap is None:
                gap = 0.0
            gap = min(gap, options.relative_gap) if gap <= options.relative_gap * 1.0001 else gap
        else:
            term = Termination.FEASIBLE
        duals = reduced = None
        if not model.n_integer and term == Termination.OPTIMAL:
            # Minimisation only (the model is always built as one): PuLP's signs are then
            # right for both HiGHS and CBC (../shared/SOLVERS.md). Rows PuLP dropped
            # (no variables) have no dual and are left out rather than shown as zero.
            duals = {
                row.name: float(prob.constraints[f"r{r}"].pi)
                for r, row in enumerate(model.rows)
                if f"r{r}" in prob.constraints and prob.constraints[f"r{r}"].pi is not None
            }
            reduced = np.array([x.dj if x.dj is not None else np.nan for x in xs])
        return SolveResult(
            term,
            self.name,
            values,
            objective,
            bound,
            gap,
            seconds,
            duals=duals,
            reduced_costs=reduced,
        )


def _bound_with_constant(info: highspy.HighsInfo, objective: float) -> float:
    """HiGHS's dual bound on the same footing as ``objective`` (constant included).

    PuLP does not hand the objective's constant to HiGHS, so HiGHS's objective and
    bound both lack it (an existing fleet's fixed cost made an optimal plan read a
    46.7% gap). The constant is the difference between our objective at the incumbent
    and HiGHS's objective value at the same point.
    """
    offset = objective - float(info.objective_function_value)
    return float(info.mip_dual_bound) + offset
