"""Backends: same answers, termination kept apart from numbers, the HiGHS library guard."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from solver.backends import SolveOptions, Termination, get_backend
from solver.errors import ProcureError
from solver.model import Expression, LinearModel, Row


def knapsack_cover() -> LinearModel:
    # min 3a + 5b  s.t. 2a + 4b >= 7, a, b integer >= 0.
    # a=4,b=0 -> 12; a=2,b=1 -> 11; a=0,b=2 -> 10 (8 >= 7); a=1,b=2 -> 13. Optimum 10.
    variables = pd.DataFrame(
        {
            "name": ["a", "b"],
            "kind": ["x", "x"],
            "integer": [True, True],
            "lb": [0.0, 0.0],
            "ub": [np.inf, np.inf],
        }
    )
    rows = [Row("cover[]", "demand", (), {0: 2.0, 1: 4.0}, ">=", 7.0)]
    objective = Expression()
    objective.coefs.update({0: 3.0, 1: 5.0})
    return LinearModel(variables, rows, objective, {})


@pytest.mark.parametrize("name", ["highs", "cbc"])
def test_backends_agree_on_a_hand_worked_mip(name):
    result = get_backend(name).solve(knapsack_cover(), SolveOptions())
    assert result.termination == Termination.OPTIMAL
    assert result.objective == pytest.approx(10.0)
    assert list(result.values) == [0.0, 2.0]


@pytest.mark.parametrize("name", ["highs", "cbc"])
def test_infeasible_is_a_termination_not_a_number(name):
    model = knapsack_cover()
    model.rows.append(Row("cap[]", "budget", (), {0: 3.0, 1: 5.0}, "<=", 9.0))
    result = get_backend(name).solve(model, SolveOptions())
    assert result.termination == Termination.INFEASIBLE
    assert result.values is None and not result.has_solution


def test_unknown_backend_refused():
    with pytest.raises(ProcureError, match="unknown solver"):
        get_backend("gurobi")


def test_pulp_highs_and_ortools_in_one_process():
    # ../shared/SOLVERS.md: highspy 1.15 breaks OR-Tools' native import after `import pulp`;
    # highspy 1.12.0 (the HiGHS inside OR-Tools 9.15) works in either order. Guard it.
    import highspy
    import pulp  # noqa: F401
    from ortools.linear_solver import pywraplp

    assert highspy.Highs().version() == "1.12.0"
    solver = pywraplp.Solver.CreateSolver("SCIP")
    x = solver.IntVar(0, 10, "x")
    solver.Add(2 * x >= 7)
    solver.Minimize(x)
    assert solver.Solve() == pywraplp.Solver.OPTIMAL and x.solution_value() == 4
    result = get_backend("highs").solve(knapsack_cover(), SolveOptions())
    assert result.objective == pytest.approx(10.0)
