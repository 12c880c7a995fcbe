"""Plans that stay put: after the solve, a plan whose serving moves between periods is
searched for one that moves less at no more cost (the tie-break among tied plans).

A move between periods is charged in the objective (``move`` rows,
:mod:`solver.core.formulation.moves`), so of two plans that cost the same but for their
moves the optimum is the one that moves least. A solve stopped within its gap need not
have found it: the seed asked to survive a region's loss serves from GH200 in any of
Lambda's tied regions, and a plan 0.1% above the best (one move costs about $525 of a
$430,000 plan) is as good as any to a 1% gap.

So, when the plan found moves (its ``migration_penalty_usd`` is above zero), the same
model is solved again over small neighbourhoods of it, each with every serving workload's
places (provider and region) limited to

1. the places one of its periods serves from, in every period (one neighbourhood per
   distinct set: the plan that stays where that period is), then
2. the places the plan serves from in any period (the plan itself is feasible there and
   is the start: the solver keeps its places and only trades moves against cost).

Each is an exact restriction of the model (``serve_at`` of the other places at 0, which
its ``serve_at_link`` rows carry to their units), so every plan found is a plan of the
full model; the best of them is kept only when its objective (cost plus moves) is below
the plan's by more than a cent. The proven bound is the first solve's and stays valid:
the gap can only shrink. Equal-cost choices are thus broken towards the places already
served: a plan moves only when the move saves more than it costs, as far as these
neighbourhoods find. docs/formulation/moves.md states it.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace

import numpy as np

from solver.core.backends import SolveOptions, SolveResult, Termination
from solver.core.backends.base import relative_gap
from solver.core.backends.highs_backend import HighsSession
from solver.core.matrix import LinearModel

log = logging.getLogger(__name__)

#: Share of the solve's time limit the neighbourhoods may use at most, together
STAY_PUT_SHARE = 0.1
#: Relative gap each neighbourhood is solved to: well under one move's share of a plan
#: (0.1% on the seed), so that a plan one move dearer is told apart
NEIGHBOURHOOD_GAP = 1e-5
#: A neighbourhood's plan replaces the plan when its objective is lower by more than this
MIN_SAVING_USD = 0.01

Place = tuple[str, str, str]  # workload, provider, region


def _serve_at(model: LinearModel) -> dict[int, tuple[Place, int]]:
    """Column -> ((workload, provider, region), period) of every ``serve_at`` variable."""
    v = model.variables
    out: dict[int, tuple[Place, int]] = {}
    names = v["name"].to_numpy()
    for j in np.flatnonzero((v["kind"] == "serve_at").to_numpy()):
        name = str(names[j])
        if not name.startswith("serve_at[") or not name.endswith("]"):
            continue
        workload, period, provider, region = name[len("serve_at[") : -1].rsplit(",", 3)
        out[int(j)] = ((workload, provider, region), int(period))
    return out


def moves_of(model: LinearModel, values: np.ndarray) -> float:
    """USD of the moves in a plan of ``model`` (its ``migration_penalty_usd``)."""
    e = model.expressions.get("migration_penalty_usd")
    return 0.0 if e is None or not e.coefs else float(e.value(values))


def neighbourhoods(model: LinearModel, values: np.ndarray) -> list[frozenset[Place]]:
    """The places each neighbourhood allows (module docstring): each period's set, then
    their union; the same set once."""
    by_period: dict[int, set[Place]] = {}
    for j, (place, period) in _serve_at(model).items():
        if values[j] > 0.5:
            by_period.setdefault(period, set()).add(place)
    out: list[frozenset[Place]] = []
    for period in sorted(by_period):
        s = frozenset(by_period[period])
        if s not in out:
            out.append(s)
    union = frozenset().union(*by_period.values()) if by_period else frozenset()
    if union and union not in out:
        out.append(union)
    return out


def restricted(model: LinearModel, allowed: frozenset[Place]) -> LinearModel:
    """The model with every ``serve_at`` of a place outside ``allowed`` (of a workload that
    has any place in ``allowed``) fixed at 0."""
    workloads = {w for w, _, _ in allowed}
    v = model.variables.copy()
    ub = v["ub"].to_numpy(dtype=float).copy()
    for j, (place, _) in _serve_at(model).items():
        if place[0] in workloads and place not in allowed:
            ub[j] = 0.0
    v["ub"] = ub
    return LinearModel(v, model.rows, model.objective, model.expressions)


def settled(model: LinearModel, result: SolveResult) -> SolveResult:
    """``result`` with every arrival at its least value its ``move`` row allows,
    max(0, served now - served before): a solve stopped within its gap may leave an arrival
    at 1 where nothing arrives (a move charged for no move; the verifier, counting moves
    from the lines, would refuse the plan). Lowering it keeps every row (it appears in its
    ``move`` row alone) and lowers the objective by its cost."""
    if result.values is None or result.objective is None or moves_of(model, result.values) <= 0:
        return result
    values = result.values.copy()
    cost = model.objective.coefs
    kind = model.variables["kind"].to_numpy()
    saved = 0.0
    for row in model.rows:
        if row.family != "move" or row.sense != ">=":
            continue
        arrive = next((j for j in row.coefs if kind[j] == "move"), None)
        if arrive is None:
            continue
        least = max(0.0, row.rhs - sum(c * values[j] for j, c in row.coefs.items() if j != arrive))
        if values[arrive] > least + 1e-9:
            saved += cost.get(arrive, 0.0) * (values[arrive] - least)
            values[arrive] = least
    if saved <= 0:
        return result
    objective = float(result.objective) - saved
    gap = None if result.bound is None else relative_gap(objective, result.bound)
    return replace(result, values=values, objective=objective, gap=gap)


def stay_put(
    model: LinearModel, result: SolveResult, options: SolveOptions, limit_s: float | None
) -> SolveResult:
    """``result`` or, when its plan moves, a plan of ``model`` that moves less at a lower
    objective (module docstring), with the first solve's bound and its gap against it;
    its arrivals :func:`settled` first. ``limit_s``: seconds the neighbourhoods may use
    together (None, a solve without a time limit: as long as the solve took, at least 1 s,
    so that the search never outlasts what it polishes by much)."""
    result = settled(model, result)
    if result.values is None or result.objective is None or moves_of(model, result.values) <= 0:
        return result
    if limit_s is None:
        limit_s = max(1.0, result.solve_seconds)
    t0 = time.perf_counter()
    best_obj, best = float(result.objective), result.values
    found = neighbourhoods(model, result.values)
    for k, allowed in enumerate(found):
        left = limit_s - (time.perf_counter() - t0)
        if left <= 0.05:
            break
        share = left / (len(found) - k)
        union = k == len(found) - 1 and len(found) > 1
        session = HighsSession(restricted(model, allowed))
        if session.infeasible_row:
            continue
        sub = session.solve(
            replace(options, time_limit_s=share, relative_gap=NEIGHBOURHOOD_GAP),
            result.values if union else None,
        )
        if sub.has_solution and sub.objective is not None and sub.values is not None:
            if sub.objective < best_obj - MIN_SAVING_USD:
                best_obj, best = float(sub.objective), sub.values
        log.info("stay put: %d places, %s", len(allowed), sub.termination.value)
    if best is result.values:
        return result
    gap = None if result.bound is None else relative_gap(best_obj, result.bound)
    proven = gap is not None and gap <= options.relative_gap * 1.0001
    return replace(
        result,
        values=best,
        objective=best_obj,
        gap=gap,
        termination=Termination.OPTIMAL if proven else result.termination,
        solve_seconds=result.solve_seconds + time.perf_counter() - t0,
    )
