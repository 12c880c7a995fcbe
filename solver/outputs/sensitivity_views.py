"""The sensitivity as a reader of the plan needs it: the shadow prices of what the plan
uses, and the pools it does not use only as what would have to change for them to enter.

A fleet or availability row of a pool the plan does not use has a dual (the LP of the
fixed plan prices its zero units), but it answers no question about the plan: it is left
out of the report, the CLI table and the workbook. An unused pool appears only as its
break-even price (the exact re-solve: "enters below $X/h, -Y%"), ranked by the smallest
move, a handful; where no break-even was worked out for it, its LP price cut.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from solver.analyses.sensitivity.results import BreakEven, Dual, ReducedCost, SensitivityReport
from solver.plan import Plan

#: unused pools shown as what would have to change for them to enter
ENTERING_TOP = 5


def plan_pools(plan: Plan) -> set[str]:
    """The pools (``offering#mode``) the plan's line items use."""
    return {f"{i.offering}#{i.mode}" for i in plan.line_items}


def about_the_plan(duals: Iterable[Dual], used: set[str] | None) -> list[Dual]:
    """The duals that are not of a pool outside ``used`` (all of them when None)."""
    return [d for d in duals if used is None or not d.pool or d.pool in used]


def shown_duals(report: SensitivityReport, used: set[str] | None) -> list[Dual]:
    """Non-zero shadow prices of what the plan uses, the largest worth first."""
    nonzero = (d for d in report.duals if abs(d.d_objective_d_rhs) > 1e-9)
    return sorted(about_the_plan(nonzero, used), key=lambda d: -abs(d.worth))


def _moves(b: BreakEven) -> bool:
    """A break-even row that is a price move (not a tie, see report.is_tie)."""
    if b.break_even_price is None or b.change_pct is None:
        return False
    return abs(b.change_pct) >= 0.05 and abs(b.break_even_price - b.current_price) >= 0.005


def entering(rows: Sequence[BreakEven], top: int = ENTERING_TOP) -> list[BreakEven]:
    """Unused pools' break-even rows that are a price move, the smallest move first."""
    out = sorted(
        (b for b in rows if not b.in_plan and _moves(b)), key=lambda b: abs(b.change_pct or 0.0)
    )
    return out[:top]


def leaving(rows: Sequence[BreakEven]) -> list[BreakEven]:
    """The plan's pools' break-even rows (what would push each out), smallest move first,
    then those no price moves."""
    mine = [b for b in rows if b.in_plan]
    return sorted(mine, key=lambda b: (not _moves(b), abs(b.change_pct or 0.0)))


def lp_cuts(report: SensitivityReport, top: int = ENTERING_TOP) -> list[ReducedCost]:
    """Unused options with an LP price cut to enter and no exact break-even row for their
    pool (one number per question), the smallest cut first."""
    exact = {b.pool_id for b in report.break_even} | {
        p for b in report.break_even for p in b.same_as
    }
    rows = [
        r
        for r in report.reduced_costs
        if r.pool_id not in exact and (r.price_cut_usd_per_hour or 0.0) > 0.0005
    ]
    return sorted(rows, key=lambda r: r.price_cut_usd_per_hour or 0.0)[:top]


__all__ = [
    "ENTERING_TOP",
    "about_the_plan",
    "entering",
    "leaving",
    "lp_cuts",
    "plan_pools",
    "shown_duals",
]
