"""Backends: same answers, termination kept apart from numbers, the HiGHS library guard."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import knapsack_cover
from solver.core.backends import SolveOptions, Termination, get_backend
from solver.core.model import Row
from solver.errors import ProcureError


@pytest.mark.parametrize("name", ["highs", "cbc", "highspy"])
def test_backends_agree_on_a_hand_worked_mip(name):
    result = get_backend(name).solve(knapsack_cover(), SolveOptions())
    assert result.termination == Termination.OPTIMAL
    assert result.objective == pytest.approx(10.0)
    assert list(result.values) == [0.0, 2.0]


@pytest.mark.parametrize("name", ["highs", "cbc", "highspy"])
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


@pytest.mark.parametrize("name", ["highs", "cbc", "highspy"])
def test_lp_duals_and_reduced_costs_by_hand(name):
    # The LP relaxation: min 3a + 5b s.t. 2a + 4b >= 7 -> b = 1.75, cost 8.75. The cover row's
    # dual is 5/4 = 1.25 (b's cost per unit of cover); a's reduced cost 3 - 2 x 1.25 = 0.5.
    model = knapsack_cover()
    model.variables["integer"] = False
    result = get_backend(name).solve(model, SolveOptions())
    assert result.objective == pytest.approx(8.75)
    assert result.duals == {"cover[]": pytest.approx(1.25)}
    assert list(result.reduced_costs) == pytest.approx([0.5, 0.0])


def test_a_mip_has_no_duals():
    # duals of a MIP do not exist: None, never zeros
    result = get_backend("highspy").solve(knapsack_cover(), SolveOptions())
    assert result.duals is None and result.reduced_costs is None


def test_warm_session_changes_costs_and_starts_from_a_plan():
    from solver.core.backends import HighsSession

    session = HighsSession(knapsack_cover())
    first = session.solve(SolveOptions())
    assert first.objective == pytest.approx(10.0)
    # b dearer (5 -> 7): a=4,b=0 -> 12; a=2,b=1 -> 13; a=0,b=2 -> 14. Optimum 12.
    session.set_costs(np.array([1]), np.array([7.0]))
    second = session.solve(SolveOptions(), start=first.values)
    assert second.objective == pytest.approx(12.0) and list(second.values) == [4.0, 0.0]
    # force b >= 1 with an extra row, then drop it again
    row = session.add_row({1: 1.0}, 1.0, np.inf)
    assert session.solve(SolveOptions()).objective == pytest.approx(13.0)
    session.delete_row(row)
    assert session.solve(SolveOptions()).objective == pytest.approx(12.0)
