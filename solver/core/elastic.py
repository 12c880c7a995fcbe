"""Elastic copies of the model, and the feasibility probes an infeasible problem is explained by.

An elastic copy gives each row of some constraint families a non-negative slack, penalised
in the objective, and keeps everything else hard: when the copy is feasible, its slack
values are the smallest relaxation of those limits (to the solver's gap) that makes the
problem feasible. The probes compile and solve a problem and answer plain data (a bool, a
number of days); the words for people are made in :mod:`solver.trust.infeasibility`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from solver.core.backends import SolveOptions, get_backend
from solver.core.compile import Compiled, compile_problem
from solver.core.model import Expression, LinearModel, Row, budget_bound, build_model
from solver.errors import ProcureError
from solver.inputs.catalog import Catalog
from solver.inputs.problem import Problem, TrainingWorkload

#: the relative gap the elastic copies and the feasibility probes are solved to
ELASTIC_GAP = 1e-6
#: a deadline is searched up to this many times the problem's own before giving up
DEADLINE_SEARCH_FACTOR = 16


@dataclass(frozen=True)
class Slack:
    """How far one row of the model had to give in a feasible elastic copy.

    Attributes
    ----------
    family, name, key
        The row's constraint family, its name and its key (as in :class:`Row`).
    rhs
        The row's right-hand side, in the row's own units.
    amount
        The slack, in the limit's own units: USD of the problem's ``budget_usd`` for a
        budget row (the row's compute dollars scaled by the bound of the costs beside
        compute), else the row's units (USD, tCO2e, instances, accelerators, kW, demand).
    """

    family: str
    name: str
    key: tuple
    rhs: float
    amount: float


def elastic(model: LinearModel, families: set[str]) -> tuple[LinearModel, list[tuple[int, Row]]]:
    """A copy of ``model`` with a penalised slack on every row of ``families``.

    The objective is the sum of slacks, each divided by its row's scale (so that a
    budget in dollars and a quota in units weigh alike); the original objective is gone.
    Returns the copy and (slack variable index, row) for every row given a slack.
    """
    variables = model.variables.copy()
    rows: list[Row] = []
    slacks: list[tuple[int, Row]] = []
    objective = Expression()
    extra: list[dict[str, object]] = []
    n = len(variables)
    for row in model.rows:
        if row.family not in families:
            rows.append(row)
            continue
        i = n + len(extra)
        extra.append(
            {
                "name": f"slack[{row.name}]",
                "kind": "slack",
                "integer": False,
                "lb": 0.0,
                "ub": np.inf,
            }
        )
        coefs = dict(row.coefs)
        coefs[i] = -1.0 if row.sense == "<=" else 1.0
        rows.append(replace(row, coefs=coefs))  # the same row, with its slack
        objective.add(i, 1.0 / max(1.0, abs(row.rhs)))
        slacks.append((i, row))
    if extra:
        variables = pd.concat([variables, pd.DataFrame(extra)], ignore_index=True)
        for column in ("option_id", "pool", "period", "block", "bucket"):
            variables[column] = variables[column].fillna(-1).astype(int)
        variables["workload"] = variables["workload"].fillna("")
    return LinearModel(variables, rows, objective, model.expressions, "elastic"), slacks


def _solve(model: LinearModel) -> np.ndarray | None:
    """The values of a solution of ``model`` (HiGHS through PuLP), or None without one."""
    result = get_backend("highs").solve(model, SolveOptions(relative_gap=ELASTIC_GAP))
    return result.values if result.has_solution else None


def _group_slacks(compiled: Compiled, model: LinearModel, families: set[str]) -> list[Slack] | None:
    """The positive slacks of ``model``'s elastic copy over ``families``; None when no row
    of those families exists, the copy is infeasible too, or no slack is needed."""
    if not any(r.family in families for r in model.rows):
        return None
    m, slacks = elastic(model, families)
    values = _solve(m)
    if values is None:
        return None
    out: list[Slack] = []
    for i, row in slacks:
        amount = float(values[i])
        if amount > 1e-6 * max(1.0, abs(row.rhs)):
            if row.family == "budget":
                # the row is in compute dollars, scaled by the bound of the costs beside
                # compute (budget_bound): a dollar of it is `multiplier` of the budget
                amount *= budget_bound(compiled).multiplier
            out.append(Slack(row.family, row.name, row.key, float(row.rhs), amount))
    return out or None


def elastic_slacks(
    compiled: Compiled, groups: dict[str, tuple[str, ...]]
) -> dict[str, list[Slack]]:
    """For each group of constraint families, the smallest slacks on its rows alone that
    make the compiled problem feasible (everything else hard).

    Parameters
    ----------
    compiled
        The compiled problem (its model is built once here).
    groups
        Group name -> the constraint families relaxed together.

    Returns
    -------
    dict
        Group name -> its slacks, in the groups' order, for the groups whose elastic copy
        is feasible and needs some slack.
    """
    model = build_model(compiled)
    out: dict[str, list[Slack]] = {}
    for group, families in groups.items():
        found = _group_slacks(compiled, model, set(families))
        if found:
            out[group] = found
    return out


def is_feasible(problem: Problem, catalog: Catalog) -> bool:
    """Whether ``problem`` compiles and its model has a feasible point."""
    try:
        compiled = compile_problem(problem, catalog)
    except ProcureError:
        return False
    return _solve(build_model(compiled)) is not None


def shortest_deadline_days(problem: Problem, catalog: Catalog, index: int) -> int | None:
    """The fewest whole days the training workload ``problem.workloads[index]`` needs as
    its deadline for the problem to be feasible, everything else unchanged.

    Feasibility is monotone in the deadline, so a doubling search (up to
    :data:`DEADLINE_SEARCH_FACTOR` times the problem's deadline) then bisection on whole
    days finds it. None when even the longest deadline searched is not enough.
    """
    w = problem.workloads[index]
    assert isinstance(w, TrainingWorkload) and w.deadline_days  # the caller's precondition

    def with_days(days: float) -> Problem:
        workloads = list(problem.workloads)
        workloads[index] = w.model_copy(update={"deadline_days": float(days)})
        return problem.model_copy(update={"workloads": workloads})

    low, high = w.deadline_days, w.deadline_days * 2
    while not is_feasible(with_days(high), catalog):
        if high > w.deadline_days * DEADLINE_SEARCH_FACTOR:
            return None
        low, high = high, high * 2
    low, high = math.floor(low), math.ceil(high)
    while high - low > 1:
        mid = (low + high) // 2
        if is_feasible(with_days(mid), catalog):
            high = mid
        else:
            low = mid
    return int(high)
