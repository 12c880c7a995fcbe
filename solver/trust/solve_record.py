"""A plan file's record of its solve (``status``, ``gap``, ``objective``,
``stopped_at_time_limit``), checked for consistency: these cannot be re-derived without
solving again, but they can be held to what a solve writes.

- ``status`` is ``optimal`` or ``feasible`` (the reader refuses anything else);
- ``gap`` is empty or a number >= 0; an ``optimal`` plan's gap is within the gap a solve
  was asked to prove (``gap_asked``, else the default :data:`OPTIMAL_GAP_MAX`), since a
  solve reports its gap clipped to that
  gap;
- a plan the time limit stopped (``stopped_at_time_limit``) is ``feasible``, never
  ``optimal``;
- ``objective`` is the value of the problem's objective at the plan's own totals (cost,
  NPV or cost plus carbon at its price, with the switching penalty, and the guard's
  premium, guarded_total_usd - total_cost_usd, under price_guard band_top, and the egress
  it priced, egress_in_objective_usd) where the objective
  is one of those; the others (min_carbon, lexicographic, max_served) are checked to be
  a finite number.
"""

from __future__ import annotations

import math

from solver.core.backends.base import SolveOptions
from solver.inputs.problem import Problem
from solver.plan import Plan
from solver.trust.verify import FieldError

#: what to do about a solve record that does not hold
RECORD_FIX = (
    "restore the file as procure solve --format json wrote it, or re-solve: procure solve "
    "PROBLEM --format json --out PLAN.json"
)
#: the largest gap an optimal plan may state: the gap a solve proves by default, and the
#: slack the backends allow when they clip the gap they report to it
OPTIMAL_GAP_MAX = SolveOptions().relative_gap * 1.0001
#: relative tolerance of the objective against the totals (the solver's own rounding)
OBJECTIVE_REL_TOL = 1e-6
#: absolute tolerance of the objective, USD
OBJECTIVE_ABS_TOL = 0.01


def solve_record_errors(plan: Plan, problem: Problem) -> list[FieldError]:
    """The solve record of ``plan`` against itself and its totals; empty when it holds."""
    out: list[FieldError] = []
    gap = plan.gap
    if gap is not None and not (math.isfinite(gap) and gap >= 0.0):
        out.append(FieldError("gap", f"a gap of {gap!r}: a gap is a number >= 0", RECORD_FIX))
    elif plan.status == "optimal" and gap is not None and gap > _gap_proven(plan):
        out.append(
            FieldError(
                "gap",
                f"status 'optimal' with a gap of {gap:.4%}: an optimal plan is proven within "
                f"{_gap_proven(plan):.4%} (expected a gap of at most that, or status 'feasible')",
                RECORD_FIX,
            )
        )
    if plan.stopped_at_time_limit and plan.status != "feasible":
        out.append(
            FieldError(
                "status",
                f"status {plan.status!r} for a plan the time limit stopped "
                "(stopped_at_time_limit: true); expected 'feasible'",
                RECORD_FIX,
            )
        )
    out += _objective_errors(plan, problem)
    return out


def _gap_proven(plan: Plan) -> float:
    """The largest gap an optimal ``plan`` may state: the gap its solve was asked to prove
    (``gap_asked``, else the default), with the backends' clipping slack."""
    asked = plan.gap_asked if plan.gap_asked is not None else SolveOptions().relative_gap
    return max(OPTIMAL_GAP_MAX, asked * 1.0001)


def _objective_errors(plan: Plan, problem: Problem) -> list[FieldError]:
    """The objective against its value at the plan's totals, where that is known."""
    if plan.objective is None or not math.isfinite(plan.objective):
        return [
            FieldError(
                "objective",
                f"{plan.objective!r}: a plan solved to optimal or feasible has an objective",
                RECORD_FIX,
            )
        ]
    expected = expected_objective(plan, problem)
    if expected is None:
        return []
    tol = OBJECTIVE_ABS_TOL + OBJECTIVE_REL_TOL * max(abs(expected), abs(plan.objective))
    if abs(plan.objective - expected) <= tol:
        return []
    return [
        FieldError(
            "objective",
            f"{plan.objective:,.2f} in the file, expected {expected:,.2f} "
            f"({problem.objective} at the plan's totals)",
            RECORD_FIX,
        )
    ]


def expected_objective(plan: Plan, problem: Problem) -> float | None:
    """The objective a solve reports for ``plan``, from its totals: cost (min_cost), NPV
    (min_npv) or cost plus carbon at its price (cost_plus_carbon), each with the
    switching penalty; None for the other objectives (their value needs the model)."""
    # the moves between periods are charged in the objective too (migration_penalty_usd)
    switching = plan.switching_penalty_usd + (plan.migration_penalty_usd or 0.0)
    # the guard (price_guard band_top) counts the lines at guarded prices
    guard = 0.0 if plan.guarded_total_usd is None else plan.guarded_total_usd - plan.total_cost_usd
    # egress by default in the objective (egress_in_objective_usd)
    egress = plan.egress_in_objective_usd or 0.0
    # support plans in the objective (support_in_objective_usd), beside egress
    egress += plan.support_in_objective_usd or 0.0
    if problem.objective == "min_cost":
        return plan.total_cost_usd + guard + switching + egress
    if problem.objective == "min_npv" and plan.npv_usd is not None:
        # the guard's premium and the egress discounted per period are not on the plan:
        # unchecked then
        plain = (
            abs(guard) < OBJECTIVE_ABS_TOL
            and plan.egress_in_objective_usd is None
            and plan.support_in_objective_usd is None
        )
        return plan.npv_usd + switching if plain else None
    if problem.objective == "cost_plus_carbon":
        carbon = problem.carbon_price_usd_per_tco2e * plan.total_co2e_t
        return plan.total_cost_usd + guard + carbon + switching + egress
    return None
