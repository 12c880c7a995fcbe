"""Monotone repair of the sweeps whose points are proven only to a gap.

A sweep point proven to a relative gap (``procure report --sweep-gap``) is a plan within
that gap of its optimum, not the optimum: two neighbouring points may then show what no
pair of optima can, a looser carbon cap costing more than a tighter cap's plan, or more
budget serving less. Each such fact is a plan of one point that is also a plan of its
neighbour (a plan under a tighter cap meets the looser cap; a plan within a smaller
budget fits a larger one; the rest of the problem is the same, so it has the same
objective, cost, CO2e and served demand there). The repair gives the looser point that
plan whenever it is the better one, and keeps the looser point's own proven bound, so its
stated gap stays true (docs/concepts/sensitivity.md, "Sweeps").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from solver.analyses.sensitivity.results import SweepPoint
from solver.core.backends.base import relative_gap

#: objectives equal to this relative tolerance count as equal (HiGHS's own feasibility
#: and rounding noise is far below a sweep's gap)
_SAME = 1e-9


def _has_plan(p: SweepPoint | None) -> bool:
    return p is not None and p.objective is not None and p.total_cost_usd is not None


def _taken(point: SweepPoint, plan: SweepPoint) -> SweepPoint:
    """``point`` (a looser limit) given ``plan``'s plan (a tighter limit's): the plan's
    figures, the point's own value, status and proven bound, and the gap of the plan's
    objective against that bound."""
    gap = relative_gap(plan.objective, point.bound)
    if gap is not None and point.bound is not None and plan.objective is not None:
        gap = gap if plan.objective >= point.bound else 0.0  # below the bound: rounding only
    return plan.model_copy(
        update={
            "sweep": point.sweep,
            "value": point.value,
            "status": point.status,
            "bound": point.bound,
            "gap": gap if gap is not None else point.gap,
            "plan_of": plan.plan_of if plan.plan_of is not None else plan.value,
        }
    )


def repaired(
    points: Sequence[SweepPoint],
    shown_better: Callable[[SweepPoint, SweepPoint], bool],
    gap: float = 0.0,
) -> list[SweepPoint]:
    """``points``, ordered from the tightest limit to the loosest, each given the best plan
    of the tighter points when that plan is better for it.

    A tighter point's plan replaces a looser point's when its objective (what every point
    minimises) is lower, or when the charted figure is better by ``shown_better(plan,
    point)`` and the plan is within ``gap`` (the gap the sweep was asked for, a fraction)
    or the point's own proven gap of the point's bound, whichever is larger: the point
    then states the plan's gap against its bound, still within what the sweep promises.
    Points without a plan are left as they are.
    """
    out: list[SweepPoint] = []
    best: SweepPoint | None = None  # the lowest objective among the tighter points
    for p in points:
        if not _has_plan(p):
            out.append(p)
            continue
        if best is not None:
            assert best.objective is not None and p.objective is not None
            lower = best.objective < p.objective - _SAME * max(1.0, abs(p.objective))
            limit = max(gap, p.gap or 0.0) * (1.0 + 1e-9)
            within = (relative_gap(best.objective, p.bound) or 0.0) <= limit
            if lower or (shown_better(best, p) and p.bound is not None and within):
                p = _taken(p, best)
        out.append(p)
        if best is None or (p.objective or 0.0) <= (best.objective or 0.0):
            best = p
    return out


def monotone_frontier(points: Sequence[SweepPoint], gap: float = 0.0) -> list[SweepPoint]:
    """The carbon frontier's points (any order), in the caps' order, repaired so that no
    cap shows a higher cost than a tighter cap's plan (:func:`repaired`, ``gap`` the
    sweep's)."""

    def cheaper(plan: SweepPoint, point: SweepPoint) -> bool:
        assert plan.total_cost_usd is not None and point.total_cost_usd is not None
        return plan.total_cost_usd < point.total_cost_usd

    ordered = sorted(points, key=lambda p: p.value)
    return repaired(ordered, cheaper, gap)


def monotone_budget(points: Sequence[SweepPoint], gap: float = 0.0) -> list[SweepPoint]:
    """The budget sweep's points (any order), in the budgets' order, repaired so that no
    budget serves less than a smaller budget's plan (:func:`repaired`, ``gap`` the
    sweep's)."""

    def serves_more(plan: SweepPoint, point: SweepPoint) -> bool:
        return (plan.served_fraction or 0.0) > (point.served_fraction or 0.0)

    ordered = sorted(points, key=lambda p: p.value)
    return repaired(ordered, serves_more, gap)
