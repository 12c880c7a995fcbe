"""Price watch: did a signed plan's prices move, and did its optimum?

:func:`watch` compares each line of the plan with a newer catalog (the signed catalog with
a price file applied, :func:`solver.inputs.prices.apply_prices`) and re-solves with what is
committed held (:func:`solver.analyses.resolve.resolve`, ``as_of`` the first open period).
Its verdict, which ``procure watch`` turns into an exit code:

- ``holds``: no line's price moved by more than ``threshold_pct`` and the optimum did not;
- ``prices_moved``: a line's price moved by more than ``threshold_pct`` (either way), but
  the re-solve saves no more than ``threshold_pct`` of the plan at the new prices;
- ``optimum_moved``: the re-solve changes the plan and saves more than ``threshold_pct``
  of what the plan costs at the new prices (the saving: the diff's plan effect), or the
  plan no longer fits the problem at the new prices (the re-solve is infeasible);
- ``needs_review``: a price line meant for a line of the plan was not applied (it names
  no catalog offering and could be a mistyping of the line's, it moves by more than the
  price update's ``max_factor``, or it was held for review:
  :mod:`solver.analyses.price_review`): the plan's price is not known, so no verdict
  above can be given. It comes before the others.

Every price line not applied is listed in :attr:`Watch.review`, whether it concerns the
plan or not.

A line's price is the catalog's price of its offering in its mode (USD per instance-hour;
owned lines: the server's capex in USD); its cost change is its cost scaled by new / old
(the same hours at the new price).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import cast

import pandas as pd

from solver.analyses.price_review import REVIEW_COLUMNS
from solver.analyses.resolve import Resolution, resolve
from solver.core.backends import SolveOptions
from solver.inputs.catalog import Catalog
from solver.inputs.problem import Problem
from solver.plan import LineItem, Plan
from solver.units import PRICE_COLUMN

VERDICTS = ("holds", "prices_moved", "optimum_moved", "needs_review")
#: ``procure watch``'s exit code of each verdict (docs/reference/exit-codes.md): scripts
#: act on them, so they are a contract like the verdicts themselves
EXIT_WATCH_HOLDS = 0
EXIT_WATCH_PRICES_MOVED = 3
EXIT_WATCH_OPTIMUM_MOVED = 4
#: a price line meant for a plan line was not applied (no catalog offering, beyond
#: --max-factor x2, or held by the pull): the plan's price is unknown
EXIT_WATCH_NEEDS_REVIEW = 5
WATCH_EXIT: dict[str, int] = {
    "holds": EXIT_WATCH_HOLDS,
    "prices_moved": EXIT_WATCH_PRICES_MOVED,
    "optimum_moved": EXIT_WATCH_OPTIMUM_MOVED,
    "needs_review": EXIT_WATCH_NEEDS_REVIEW,
}
LINE_COLUMNS = (
    "line",
    "item",
    "period",
    "provider",
    "region",
    "instance_type",
    "mode",
    "old_usd",
    "new_usd",
    "change_pct",
    "cost_usd",
    "cost_change_usd",
    "beyond_threshold",
)


@dataclass(frozen=True)
class Watch:
    """What moved (see the module docstring).

    Attributes
    ----------
    lines
        One row per plan line whose price moved: :data:`LINE_COLUMNS` (``change_pct`` in
        percent, ``cost_change_usd`` the line's cost at the new price minus its cost).
    threshold_pct
        The threshold, in percent.
    plan_at_new_prices_usd, optimum_usd
        The plan's remaining decisions at the new prices, and the re-solve's optimum (from
        ``as_of``); None when the re-solve is infeasible.
    saving_pct
        (plan at new prices - optimum) / plan at new prices, in percent.
    changed_items
        Line items the re-solve adds, removes or changes.
    verdict
        One of :data:`VERDICTS`.
    resolution
        The re-solve (None when infeasible); ``infeasible`` says why, if it was.
    review
        Every price line not applied
        (:data:`~solver.analyses.price_review.REVIEW_COLUMNS`), ``plan_line`` the plan line
        it concerns (-1: none).
    """

    lines: pd.DataFrame
    threshold_pct: float
    plan_at_new_prices_usd: float | None
    optimum_usd: float | None
    saving_pct: float | None
    changed_items: int
    verdict: str
    resolution: Resolution | None
    infeasible: str = ""
    review: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=REVIEW_COLUMNS))


def _price(catalog: Catalog, item: LineItem) -> float | None:
    """The catalog's price of a line's offering in its mode (owned: its server's capex)."""
    if item.mode == "owned":
        servers = catalog.servers
        if item.instance_type in servers.index:
            # the stubs type a cell as any scalar; capex_usd is a number
            return float(cast(float, servers.at[item.instance_type, "capex_usd"]))
        return None
    column = PRICE_COLUMN.get(item.mode)
    off = catalog.offerings
    if column is None or item.offering not in off.index or column not in off.columns:
        return None
    value = cast(float, off.at[item.offering, column])  # a price column: a number or NaN
    return float(value) if pd.notna(value) else None


def moved_lines(plan: Plan, old: Catalog, new: Catalog, threshold_pct: float) -> pd.DataFrame:
    """The plan lines whose price differs between ``old`` and ``new`` (relative 1e-9)."""
    rows = []
    for n, item in enumerate(plan.line_items):
        if item.item == "existing":
            continue
        before, after = _price(old, item), _price(new, item)
        if before is None or after is None or before <= 0:
            continue
        if abs(after / before - 1.0) <= 1e-9:
            continue
        change_pct = (after / before - 1.0) * 100.0
        rows.append(
            {
                "line": n,
                "item": item.item,
                "period": item.period,
                "provider": item.provider,
                "region": item.region,
                "instance_type": item.instance_type,
                "mode": item.mode,
                "old_usd": before,
                "new_usd": after,
                "change_pct": change_pct,
                "cost_usd": item.cost_usd,
                "cost_change_usd": item.cost_usd * (after / before - 1.0),
                "beyond_threshold": abs(change_pct) > threshold_pct,
            }
        )
    return pd.DataFrame(rows, columns=list(LINE_COLUMNS))


def watch(
    plan: Plan,
    problem: Problem,
    old: Catalog,
    new: Catalog,
    *,
    threshold_pct: float,
    as_of: str | None = None,
    solver: str = "highs",
    options: SolveOptions | None = None,
    review: pd.DataFrame | None = None,
) -> Watch:
    """Compare ``plan`` with the prices of ``new`` and re-solve from ``as_of`` (a period
    name, None for the whole plan) with what is committed before it held. ``review``:
    the price lines not applied (:func:`~solver.analyses.price_review.prices_to_review`);
    one that concerns a plan line makes the verdict ``needs_review``.

    Raises
    ------
    ProcureError
        Bad input (see :func:`solver.analyses.resolve.resolve`).
    """
    review = review if review is not None else pd.DataFrame(columns=REVIEW_COLUMNS)
    result = _watch(
        plan,
        problem,
        old,
        new,
        threshold_pct=threshold_pct,
        as_of=as_of,
        solver=solver,
        options=options,
    )
    if len(review) and (review["plan_line"] >= 0).any():
        return replace(result, verdict="needs_review", review=review)
    return replace(result, review=review)


def _watch(
    plan: Plan,
    problem: Problem,
    old: Catalog,
    new: Catalog,
    *,
    threshold_pct: float,
    as_of: str | None,
    solver: str,
    options: SolveOptions | None,
) -> Watch:
    """:func:`watch` on the prices applied (its first three verdicts)."""
    from solver.errors import InfeasibleError

    lines = moved_lines(plan, old, new, threshold_pct)
    prices_moved = bool(lines["beyond_threshold"].any()) if len(lines) else False
    try:
        result = resolve(problem, plan, old, new, as_of=as_of, solver=solver, options=options)
    except InfeasibleError as exc:
        first = str(exc).splitlines()[0]
        return Watch(
            lines=lines,
            threshold_pct=threshold_pct,
            plan_at_new_prices_usd=None,
            optimum_usd=None,
            saving_pct=None,
            changed_items=0,
            verdict="optimum_moved",
            resolution=None,
            infeasible=first,
        )
    at_new = result.baseline_at_new_prices.total_cost_usd
    optimum = result.plan.total_cost_usd
    saving_pct = (at_new - optimum) / at_new * 100.0 if at_new > 0 else 0.0
    diff = result.diff
    changed = len(diff.added) + len(diff.removed) + len(diff.changed)
    if changed and saving_pct > threshold_pct:
        verdict = "optimum_moved"
    elif prices_moved:
        verdict = "prices_moved"
    else:
        verdict = "holds"
    return Watch(
        lines=lines,
        threshold_pct=threshold_pct,
        plan_at_new_prices_usd=at_new,
        optimum_usd=optimum,
        saving_pct=saving_pct,
        changed_items=changed,
        verdict=verdict,
        resolution=result,
    )


__all__ = [
    "EXIT_WATCH_HOLDS",
    "EXIT_WATCH_NEEDS_REVIEW",
    "EXIT_WATCH_OPTIMUM_MOVED",
    "EXIT_WATCH_PRICES_MOVED",
    "LINE_COLUMNS",
    "VERDICTS",
    "WATCH_EXIT",
    "Watch",
    "moved_lines",
    "watch",
]
