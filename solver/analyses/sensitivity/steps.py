"""How one Newton step of a break-even search is solved: to a plan below the target
within :data:`STEP_GAP` of the best, with HiGHS's sub-MIP heuristics off.
"""

from __future__ import annotations

from dataclasses import replace

from solver.core.backends import HighsSession, SolveOptions, Termination

# A Newton step needs a plan below the target, not the best one (its line then lies a
# little above the tangent, and the step is a little short): 1% of the best, measured on
# the seed's 16 break-even classes (bench/RESULTS.md, issue 27), cut the search's CPU time
# by a quarter against solving each step to 1e-6. Only the last step's proof (no plan
# below the target) decides the answer, and it is exact whatever the gap.
STEP_GAP = 1e-2
# HiGHS's sub-MIP heuristics (RINS, RENS) and feasibility jump, off in the steps (options
# for those solves only, HighsSession.solve sets them back): the
# break-even models are small (about 600 columns after presolve on the seed) and their
# B&B finds plans within STEP_GAP by itself, while the last step, the proof that no plan
# beats the target, can use no plan at all. Measured on the seed's 16 classes (one
# process, CPU): 19.9 s with them, 12.8 s without (with no restricted start after the
# first step), the proofs 9.3 s to 4.1 s, the same break-evens (bench/RESULTS.md, issue
# 27). The root reduced-cost heuristic stays on: without it the steps' plans are
# poorer and the searches take three times as many steps.
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
    if r.has_solution and r.objective < cutoff:
        return r
    return None if r.termination in (Termination.OPTIMAL, Termination.INFEASIBLE) else False
