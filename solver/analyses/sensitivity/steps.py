"""How one Newton step of a break-even search is solved: to a plan below the target
within :data:`STEP_GAP` of the best, with HiGHS's sub-MIP heuristics off.
"""

from __future__ import annotations

from dataclasses import replace

from solver.core.backends import HighsSession, SolveOptions, Termination

#: a Newton step needs a plan below the target, not the best one: 1% of the best (only the
#: last step's proof that no plan is below the target decides the answer, and it is exact
#: whatever this gap; docs/concepts/sensitivity.md, bench/archive/RESULTS-2026.md)
STEP_GAP = 1e-2
#: HiGHS's sub-MIP heuristics and feasibility jump, off in the steps (options for those
#: solves only: HighsSession.solve sets them back); the root reduced-cost heuristic stays
#: on (docs/concepts/sensitivity.md)
STEP_OPTIONS = {
    "mip_heuristic_run_rins": False,
    "mip_heuristic_run_rens": False,
    "mip_heuristic_run_feasibility_jump": False,
}


def below_with_row(session: HighsSession, row: int, cutoff: float, options: SolveOptions):
    """Solve ``session`` with ``row`` (a sum of units) at least 1 for plans below ``cutoff``:
    the result of one (within :data:`STEP_GAP` of the best), None when the solver proved
    there is none, False when it stopped without knowing."""
    import highspy

    h = session.h
    h.changeRowBounds(row, 1.0, highspy.kHighsInf)
    h.setOptionValue("objective_bound", float(cutoff))
    try:
        r = session.solve(
            replace(
                options,
                relative_gap=STEP_GAP,
                start_heuristic=False,
                backend_options={**options.backend_options, **STEP_OPTIONS},
            )
        )
    finally:
        h.setOptionValue("objective_bound", highspy.kHighsInf)
        h.changeRowBounds(row, -highspy.kHighsInf, highspy.kHighsInf)
    if r.has_solution and r.objective is not None and r.objective < cutoff:
        return r
    return None if r.termination in (Termination.OPTIMAL, Termination.INFEASIBLE) else False
