"""One-line entry point for notebooks and scripts: ``from solver.api import solve``
(and ``load_plan``: a saved plan file, re-verified against its problem and catalog).

The same path as ``procure solve``: load (or take) the problem and the catalog,
compile, solve, verify, and return the verified :class:`~solver.plan.Plan` (with its
``to_frame()`` and a notebook HTML view).
"""

from __future__ import annotations

from pathlib import Path

from solver.inputs.catalog import Catalog, load_catalog
from solver.inputs.problem import Problem, load_problem, parse_problem
from solver.plan import Plan
from solver.trust.planfile import load_plan
from solver.units import DEFAULT_SOLVER

__all__ = ["load_plan", "solve"]


def solve(
    problem: Problem | dict | str | Path,
    catalog: Catalog | str | Path | None = None,
    *,
    solver: str = DEFAULT_SOLVER,
    time_limit_s: float | None = None,
    gap: float = 1e-4,
) -> Plan:
    """Solve a problem and return its verified plan.

    Parameters
    ----------
    problem
        A problem YAML path, a dict with the same fields, or a parsed Problem.
    catalog
        A catalog folder or a loaded Catalog; None is the shipped catalog.
    solver, time_limit_s, gap
        As ``procure solve --solver --time-limit --gap``.

    Raises
    ------
    ProcureError
        Bad input (file, field and fix), an infeasible problem (InfeasibleError, with the
        relaxations that would make it feasible) or no plan within the limit (NoPlanError).
    """
    from solver.core.backends import SolveOptions
    from solver.solve import solve_problem

    if isinstance(problem, str | Path):
        problem = load_problem(problem)
    elif isinstance(problem, dict):
        problem = parse_problem(problem)
    if not isinstance(catalog, Catalog):
        catalog = load_catalog(catalog)
    options = SolveOptions(time_limit_s=time_limit_s, relative_gap=gap)
    return solve_problem(problem, catalog, solver=solver, options=options)
