"""One solve, end to end: compile -> build -> solve (one or two stages) -> plan -> verify.

Pure data in, data out: no printing, no files. The CLI calls :func:`solve_problem`.
"""

from __future__ import annotations

import time
from dataclasses import replace

from solver.backends import SolveOptions, Termination, get_backend
from solver.catalog import Catalog
from solver.compile import Compiled, compile_problem
from solver.errors import InfeasibleError, ProcureError
from solver.model import LinearModel, build_model, has_second_stage, second_stage
from solver.plan import Plan, extract_plan
from solver.problem import Problem
from solver.verify import verify_plan


class VerificationError(ProcureError):
    """The verifier rejected a plan: it is never shown as a plan."""


def solve_problem(
    problem: Problem,
    catalog: Catalog,
    *,
    solver: str = "highs",
    options: SolveOptions | None = None,
) -> Plan:
    """Compile, model, solve, extract and verify; return a verified plan.

    Raises
    ------
    InfeasibleError
        The problem has no feasible plan.
    VerificationError
        The solver's plan failed the independent verifier.
    ProcureError
        Bad input, or the solver stopped without a plan.
    """
    options = options or SolveOptions()
    started = time.perf_counter()
    compiled = compile_problem(problem, catalog)
    model = build_model(compiled)
    compile_seconds = time.perf_counter() - started
    plan, _ = solve_compiled(compiled, model, solver=solver, options=options)
    plan = plan.model_copy(update={"compile_seconds": compile_seconds})
    checks = verify_plan(plan, problem, catalog)
    plan = plan.model_copy(update={"checks": checks, "verified": all(c.ok for c in checks)})
    if not plan.verified:
        failed = "; ".join(f"{c.name}: {c.detail}" for c in checks if not c.ok)
        raise VerificationError(
            f"the solver's plan failed independent verification ({failed})",
            fix="this is a bug in procure: report it with the problem file",
        )
    return plan


def solve_compiled(
    compiled: Compiled, model: LinearModel, *, solver: str, options: SolveOptions
) -> tuple[Plan, LinearModel]:
    """Solve a built model (with the second stage when the objective has one)."""
    backend = get_backend(solver)
    result = backend.solve(model, options)
    seconds = result.solve_seconds
    final_model = model
    if result.has_solution and has_second_stage(compiled.problem):
        stage2 = second_stage(model, compiled.problem, result.objective)
        second = backend.solve(stage2, options)
        seconds += second.solve_seconds
        if second.has_solution:
            result = replace(second, solve_seconds=seconds)
            final_model = stage2
    if result.termination == Termination.INFEASIBLE:
        raise InfeasibleError(
            f"problem {compiled.problem.name!r} has no feasible plan"
            + (f" ({result.message})" if result.message else ""),
            fix="relax the budget, carbon cap, quotas or deadlines (see the problem's constraints)",
        )
    if result.termination == Termination.UNBOUNDED:
        raise ProcureError(
            f"problem {compiled.problem.name!r} is unbounded",
            fix="this is a modelling bug; report it with the problem file",
        )
    if not result.has_solution:
        raise ProcureError(
            f"the solver stopped without a plan ({result.termination.value}"
            + (f": {result.message}" if result.message else "")
            + ")",
            field="--time-limit",
            fix="give the solver more time (--time-limit S)",
        )
    plan = extract_plan(
        compiled,
        final_model,
        result.values,
        status=result.termination.value,
        objective=result.objective,
        gap=result.gap,
        solver=result.solver,
        solve_seconds=seconds,
    )
    return plan, final_model
