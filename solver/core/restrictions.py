"""Restrictions the period structure imposes that the user did not ask for.

Owned and reserved units are fixed within a period (DESIGN.md section 5), so a unit can
serve a period only if it is in service all through it: a server whose life is shorter
than the period, or a reservation whose term is, can serve none of it. A 72-month
problem written with one period and a 60-month server life can then own nothing, and
its plan rents everything although buying and replacing (or buying, then renting the
last year) costs less. This module finds such periods and the split of the periods that
lifts the restriction; :func:`solver.solve.solve_verified` prices that split and puts
the difference on the plan as a warning.

Plain data in (the compiled tables), plain data out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from solver.core.compile import Compiled

if TYPE_CHECKING:
    from solver.inputs.problem import Problem


@dataclass(frozen=True)
class PeriodRestriction:
    """One period that a kind of unit cannot serve because it outlives the unit.

    Attributes
    ----------
    period
        The period's name.
    period_months
        Its length, months.
    mode
        ``owned``, ``reserved_1y`` or ``reserved_3y``.
    span_months
        The longest a unit of that mode serves: the shortest server life or reservation
        term among the pools the problem could use.
    pools
        The pool ids (offering#mode, server@site#owned) that cannot serve the period.
    """

    period: str
    period_months: float
    mode: str
    span_months: float
    pools: tuple[str, ...]


def _unit_span_months(pools: pd.DataFrame) -> pd.Series:
    """Months one unit of each pool serves: a server's life, a reservation's term
    (0 = no end: rented by the hour, or a server without a stated life)."""
    owned = pools["kind"].to_numpy() == "owned"
    life = pools["lifetime_months"].fillna(0.0).to_numpy(dtype=float)
    term = pools["term_months"].fillna(0.0).to_numpy(dtype=float)
    return pd.Series(
        [lf if o else tm for o, lf, tm in zip(owned, life, term, strict=True)],
        index=pools.index,
    )


def period_restrictions(compiled: Compiled) -> list[PeriodRestriction]:
    """The periods longer than the life or term of units the problem could use.

    Only pools that some option runs on count (a pool no workload fits is not a
    restriction of the period structure), and only modes the problem allows.
    """
    pools = compiled.pools
    if pools.empty or compiled.options.empty:
        return []
    used = set(compiled.options["pool_id"]) if "pool_id" in compiled.options else set()
    span = _unit_span_months(pools).to_numpy(dtype=float)
    modes = np.where(pools["kind"] == "owned", "owned", pools["mode"].astype(str))
    ids = pools["pool_id"].astype(str).to_numpy()
    allowed = set(compiled.problem.modes)
    # the pools that bound a period: some option runs on them, in an allowed mode, with a span
    live = (span > 0) & pools["pool_id"].isin(used).to_numpy() & np.isin(modes, list(allowed))
    out: list[PeriodRestriction] = []
    for row in compiled.periods.itertuples(index=False):
        hit = live & (float(row.months) > span + 1e-9)  # type: ignore[arg-type]  # stubs type a row field as any Scalar
        for mode in sorted(set(modes[hit])):
            mine = hit & (modes == mode)
            out.append(
                PeriodRestriction(
                    period=str(row.name),
                    period_months=float(row.months),  # type: ignore[arg-type]  # stubs type a row field as any Scalar
                    mode=str(mode),
                    span_months=float(span[mine].min()),
                    pools=tuple(sorted(str(i) for i in ids[mine])),
                )
            )
    return out


def described(r: PeriodRestriction, what: str = "the plan") -> str:
    """One restriction in words: "period 'all' (72 months) is longer than the 60-month
    server life of 1 pool(s) (box@colo#owned), so the plan could not use owned in it"."""
    unit = "server life" if r.mode == "owned" else f"{r.mode} term"
    more = ", ..." if len(r.pools) > 3 else ""
    return (
        f"period {r.period!r} ({r.period_months:g} months) is longer than the "
        f"{r.span_months:g}-month {unit} of {len(r.pools)} pool(s) ({', '.join(r.pools[:3])}"
        f"{more}), so {what} could not use {r.mode} in it"
    )


def split_months(months: float, span_months: float) -> list[float]:
    """A period of ``months`` cut into pieces no longer than ``span_months``: whole spans
    first, then what is left (72 months at a 60-month span: [60, 12])."""
    whole = math.floor(months / span_months + 1e-9)
    pieces = [span_months] * whole
    rest = months - span_months * whole
    if rest > 1e-9:
        pieces.append(rest)
    return pieces


def lifted_periods(
    periods: pd.DataFrame, restrictions: list[PeriodRestriction]
) -> dict[str, list[tuple[str, float]]]:
    """For each restricted period, the (name, months) of the pieces it splits into: at
    the shortest span restricted in it, named ``<period>-1``, ``<period>-2``, ...
    Unrestricted periods map to themselves."""
    shortest: dict[str, float] = {}
    for r in restrictions:
        shortest[r.period] = min(shortest.get(r.period, math.inf), r.span_months)
    out: dict[str, list[tuple[str, float]]] = {}
    for row in periods.itertuples(index=False):
        name, months = str(row.name), float(row.months)  # type: ignore[arg-type]  # stubs type a row field as any Scalar
        if name not in shortest:
            out[name] = [(name, months)]
            continue
        pieces = split_months(months, shortest[name])
        out[name] = [(f"{name}-{i + 1}", m) for i, m in enumerate(pieces)]
    return out


def lifted_problem(problem: Problem, pieces: dict[str, list[tuple[str, float]]]) -> Problem | None:
    """The problem with its periods split as ``pieces`` (:func:`lifted_periods`): what
    names a split period names each of its pieces (a workload's ``periods`` and
    ``demand_by_period``), its first (``start_period``) or its last (``end_period``).

    Returns None when the problem cannot be split faithfully: a ``period_budget_usd`` on
    a split period (a budget over the whole period is not a budget over each piece), a
    scenario that scales a split period, or a problem the split makes invalid.
    """
    from solver.inputs.problem import Problem

    split = {name for name, p in pieces.items() if len(p) > 1 or p[0][0] != name}
    if any(name in split for name in problem.period_budget_usd):
        return None
    data = problem.model_dump(exclude_unset=True)

    def every(name: str) -> list[str]:
        return [n for n, _ in pieces.get(name, [(name, 0.0)])]

    data["periods"] = [
        {"name": n, "months": m} for p in problem.resolved_periods for n, m in pieces[p.name]
    ]
    for w in data.get("workloads", []):
        if w.get("start_period") in split:
            w["start_period"] = every(w["start_period"])[0]
        if w.get("end_period") in split:
            w["end_period"] = every(w["end_period"])[-1]
        if w.get("periods") is not None:
            w["periods"] = [n for name in w["periods"] for n in every(name)]
        if w.get("demand_by_period"):
            w["demand_by_period"] = {
                n: v for name, v in w["demand_by_period"].items() for n in every(name)
            }
    scenarios = problem.uncertainty.scenarios if problem.uncertainty is not None else None
    for scenario in scenarios or []:
        if any(d.period in split for d in scenario.demand):
            return None  # a scenario that scales one period: not split faithfully
    try:
        return Problem.model_validate(data)
    except ValueError:  # pydantic's ValidationError: a field the split does not carry
        return None
