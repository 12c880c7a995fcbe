"""The cold break-even engine: the model rebuilt at each price and solved afresh, the pool
forced in by a ``force_use`` row.
"""

from __future__ import annotations

from solver.analyses.sensitivity.pricing import (
    pool_vars,
    price_slopes,
    with_pool_price,
)
from solver.core.backends import SolveOptions, get_backend
from solver.core.model import (
    LinearModel,
    build_model,
    new_row,
)


def solve_cold(model: LinearModel, solver: str, options: SolveOptions):
    r = get_backend(solver).solve(model, options)
    return (r.objective, r.values) if r.has_solution else (None, None)


def with_pool_forced(model: LinearModel, pool_index: int) -> LinearModel:
    idx = pool_vars(model, pool_index, ("x", "z"))
    row = new_row("force_use", (pool_index,), dict.fromkeys(idx, 1.0), ">=", 1)
    return LinearModel(model.variables, [*model.rows, row], model.objective, model.expressions)


def without_pool(model: LinearModel, pool_index: int) -> LinearModel:
    v = model.variables.copy()
    v.loc[pool_vars(model, pool_index), "ub"] = 0.0
    return LinearModel(v, model.rows, model.objective, model.expressions)


class Cold:
    """Break-even re-solves that rebuild the model at each price and solve it afresh."""

    def __init__(self, compiled, pool_id, pi, model, slopes, start, options, solver, p0) -> None:
        self.compiled, self.pool_id, self.pi, self.p0 = compiled, pool_id, pi, p0
        self.model = model if model is not None else build_model(compiled)
        self.slopes = slopes if slopes is not None else price_slopes(compiled, self.model)
        self.start, self.options, self.solver = start, options, solver
        # the caller's model (a class merged into one pool is rebuilt with fewer variables)
        self.holds_plan = start is not None and len(start) == len(self.model.variables)

    def objective_without_pool(self) -> float | None:
        target, _ = solve_cold(without_pool(self.model, self.pi), self.solver, self.options)
        return target

    def require_pool(self) -> None:
        """Each solve forces the pool in (:func:`with_pool_forced`)."""

    def solve_at(self, price: float, x_start):
        m = (
            self.model
            if price == self.p0
            else build_model(with_pool_price(self.compiled, self.pool_id, price))
        )
        return solve_cold(with_pool_forced(m, self.pi), self.solver, self.options)
