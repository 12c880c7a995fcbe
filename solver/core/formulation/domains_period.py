"""Proofs in a meeting's time for workloads that must survive a domain's loss: each period
solved alone for a bound on its cost (``domain_period`` rows), and a first plan that
serves every period from the places one period's own optimum chose.

A model with ``domain_loss`` rows is hard for its LP relaxation: it holds a share of the
need in many domains on fractions of units, and no row on one domain alone cuts that off
(docs/formulation/domain_cover.md, "Why a per-domain convex hull adds almost nothing").
Each period of a serving workload is small, though, and HiGHS proves it in seconds. So,
for each (workload, period) with ``domain_loss`` rows, the model restricted to that
workload's variables of that period (and the commitments and purchases its
``reserved_capacity`` and ``owned_capacity`` rows draw on), with every row over them alone,
is solved; its proven bound ``L`` gives the row ``sum c_i x_i >= L`` over the same
variables (docs/formulation/domain_period.md says why it holds for every plan). A variable
in several restrictions counts its cost shared equally among them, so the rows add up to
at most the objective. Then each period's optimal places (``serve_at``), held in every
period, restrict the whole model (:func:`solver.core.stay_put.restricted`) for a first
plan, and the whole model is solved from the best of them with the rows.
"""

from __future__ import annotations

import logging
import math
import time
from collections import defaultdict
from dataclasses import dataclass, replace

import numpy as np

from solver.core.backends import SolveOptions, SolveResult, Termination
from solver.core.backends.base import relative_gap
from solver.core.backends.highs_backend import HighsSession
from solver.core.families import new_row
from solver.core.matrix import Expression, LinearModel, Row
from solver.core.stay_put import Place, _serve_at, restricted

log = logging.getLogger(__name__)

#: Share of the time limit the periods' own solves may take together (the rest is the
#: first plans' and the whole model's)
PERIOD_SHARE = 0.7
#: Share of the time limit the first plans (one per period's places) may take together
START_SHARE = 0.1
#: Relative gap each period is solved to: its bound is used, so a looser gap only loses
#: that much of the bound
PERIOD_GAP = 2e-3
#: A first plan's gap, as a share of the solve's: the restricted model is small, and a
#: first plan within the solve's gap of the bound ends the solve at its root
START_GAP_SHARE = 0.1
#: Families whose rows tie a period's units to commitments and purchases of any period:
#: those variables join the period's restriction (without them its reserved units are free)
SHARED_FAMILIES = ("reserved_capacity", "owned_capacity")
SHARED_KINDS = ("commit", "buy")


def domain_periods(model: LinearModel) -> list[tuple[str, int]]:
    """(workload, period) of every ``domain_loss`` row's block, sorted."""
    return sorted({(str(r.key[0]), int(r.key[1])) for r in model.rows if r.family == "domain_loss"})


def restrictions(model: LinearModel) -> dict[tuple[str, int], list[int]]:
    """(workload, period) -> the model's columns of its restriction (module docstring)."""
    v = model.variables
    workload = v["workload"].astype(str).to_numpy()
    period = v["period"].to_numpy(dtype=float)
    kind = v["kind"].to_numpy()
    out: dict[tuple[str, int], list[int]] = {}
    for w, t in domain_periods(model):
        own = set(np.flatnonzero((workload == w) & (period == t)).tolist())
        shared: set[int] = set()
        for r in model.rows:
            if r.family in SHARED_FAMILIES and not own.isdisjoint(r.coefs):
                shared.update(j for j in r.coefs if j not in own and kind[j] in SHARED_KINDS)
        out[(w, t)] = sorted(own | shared)
    return out


def sub_model(model: LinearModel, columns: list[int], cost: dict[int, float]) -> LinearModel:
    """The model over ``columns`` alone: its rows over them only, objective ``cost``
    (column -> USD per unit), columns renumbered in order."""
    index = {j: i for i, j in enumerate(columns)}
    rows = [
        replace(r, coefs={index[j]: a for j, a in r.coefs.items()})
        for r in model.rows
        if r.coefs and all(j in index for j in r.coefs)
    ]
    v = model.variables.iloc[columns].reset_index(drop=True)
    objective = Expression(defaultdict(float, {index[j]: c for j, c in cost.items()}), 0.0)
    return LinearModel(v, rows, objective, {})


@dataclass
class Period:
    """One (workload, period)'s restriction and what its solve found."""

    workload: str
    period: int
    columns: list[int]  # the model's columns of the restriction
    cost: dict[int, float]  # column -> USD per unit, shared costs divided
    own: set[int]  # the columns of the workload in the period (not shared)
    places: frozenset[Place]  # where its plan serves from
    values: np.ndarray | None  # its plan, over ``columns``


def period_bounds(
    model: LinearModel, options: SolveOptions, limit_s: float | None
) -> tuple[list[Row], list[Period]]:
    """The ``domain_period`` rows of ``model`` and each period solved; the periods' solves
    take ``limit_s`` seconds together (None: no limit)."""
    parts = restrictions(model)
    shares: dict[int, int] = defaultdict(int)
    for columns in parts.values():
        for j in columns:
            shares[j] += 1
    objective = model.objective.coefs
    workload = model.variables["workload"].astype(str).to_numpy()
    period = model.variables["period"].to_numpy(dtype=float)
    rows: list[Row] = []
    solved: list[Period] = []
    began = time.perf_counter()
    for k, ((w, t), columns) in enumerate(parts.items()):
        cost = {j: objective[j] / shares[j] for j in columns if objective.get(j, 0.0)}
        if not cost:
            continue
        left = None
        if limit_s is not None:
            left = (limit_s - (time.perf_counter() - began)) / (len(parts) - k)
            if left <= 0.05:
                break
        sub = sub_model(model, columns, cost)
        session = HighsSession(sub)
        if session.infeasible_row:
            continue
        result = session.solve(
            replace(options, time_limit_s=left, relative_gap=PERIOD_GAP, start_heuristic=True)
        )
        bound = result.bound
        log.info("domain period %s %d: bound %s, %s", w, t, bound, result.termination.value)
        if bound is not None and math.isfinite(bound) and bound > 0:
            rows.append(new_row("domain_period", (w, t), cost, ">=", float(bound)))
        own = {j for j in columns if workload[j] == w and period[j] == t}
        solved.append(Period(w, t, columns, cost, own, _places(sub, result.values), result.values))
    return rows, solved


def _places(sub: LinearModel, values: np.ndarray | None) -> frozenset[Place]:
    """The places a plan of ``sub`` serves from (its ``serve_at`` at 1)."""
    if values is None:
        return frozenset()
    return frozenset(p for i, (p, _) in _serve_at(sub).items() if values[i] > 0.5)


def staying_start(
    model: LinearModel, periods: list[Period], options: SolveOptions, limit_s: float | None
) -> np.ndarray | None:
    """A first plan of ``model`` that serves each workload from the places its first
    solved period chose, in every period: each period's plan there (its own, or its
    restriction solved again over those places), its workload's integer columns fixed
    at it, and the rest of the model solved; within ``limit_s`` seconds. None when no
    plan is found."""
    began = time.perf_counter()
    stay: dict[str, frozenset[Place]] = {}
    for p in periods:
        if p.places and p.workload not in stay:
            stay[p.workload] = p.places
    if not stay:
        return None
    allowed = frozenset().union(*stay.values())
    gap = START_GAP_SHARE * options.relative_gap
    v = model.variables.copy()
    integer = v["integer"].to_numpy(dtype=bool)
    lb = v["lb"].to_numpy(dtype=float).copy()
    ub = v["ub"].to_numpy(dtype=float).copy()
    for p in periods:
        here = stay.get(p.workload)
        values = p.values
        if here is None:
            continue
        if p.places != here:
            left = None if limit_s is None else (limit_s - (time.perf_counter() - began)) / 2
            sub = HighsSession(restricted(sub_model(model, p.columns, p.cost), here))
            if sub.infeasible_row or (left is not None and left <= 0.05):
                continue
            values = sub.solve(replace(options, time_limit_s=left, relative_gap=gap)).values
        if values is None:
            continue
        for i, j in enumerate(p.columns):
            if j in p.own and integer[j]:
                lb[j] = ub[j] = float(np.round(values[i]))
    v["lb"], v["ub"] = lb, ub
    fixed = LinearModel(v, model.rows, model.objective, model.expressions)
    for candidate in (fixed, model):  # the periods' plans fixed, else the places alone
        left = None if limit_s is None else limit_s - (time.perf_counter() - began)
        if left is not None and left <= 0.05:
            return None
        session = HighsSession(restricted(candidate, allowed))
        if session.infeasible_row:
            continue
        result = session.solve(replace(options, time_limit_s=left, relative_gap=gap))
        log.info("domain start: %s %s", result.termination.value, result.objective)
        if result.values is not None:
            return result.values
    return None


def relaxation_bound(model: LinearModel, limit_s: float | None) -> float | None:
    """USD: the LP relaxation of ``model`` (a bound on every plan), or None when it is not
    solved within ``limit_s`` seconds."""
    v = model.variables.copy()
    v["integer"] = False
    relaxed = LinearModel(v, model.rows, model.objective, model.expressions)
    result = HighsSession(relaxed).solve(SolveOptions(time_limit_s=limit_s))
    if result.termination != Termination.OPTIMAL or result.objective is None:
        return None
    return float(result.objective)


def solve_by_periods(model: LinearModel, options: SolveOptions) -> SolveResult:
    """Solve ``model`` (with ``domain_loss`` rows) with its ``domain_period`` rows and from
    the first plan of :func:`staying_start` (module docstring), within
    ``options.time_limit_s`` in all. The result's values are ``model``'s columns.

    The LP relaxation with the rows is solved before the whole model: when the first plan
    is within the solve's gap of it the plan is returned as proven, without the whole
    model's search; else the search runs and its bound is the better of its own and the
    LP's (a search stopped before its root reports less than the LP)."""
    began = time.perf_counter()
    limit = options.time_limit_s
    rows, periods = period_bounds(model, options, None if limit is None else PERIOD_SHARE * limit)
    bounded = LinearModel(model.variables, [*model.rows, *rows], model.objective, model.expressions)
    start = staying_start(bounded, periods, options, None if limit is None else START_SHARE * limit)
    left = None if limit is None else max(0.1, limit - (time.perf_counter() - began))
    lp = relaxation_bound(bounded, left)
    if start is not None and lp is not None:
        objective = float(model.objective.value(start))
        gap = relative_gap(objective, lp)
        if gap is not None and gap <= options.relative_gap:
            log.info("domain periods: the first plan is within %.4f of the LP", gap)
            seconds = time.perf_counter() - began
            return SolveResult(Termination.OPTIMAL, "highspy", start, objective, lp, gap, seconds)
    left = None if limit is None else max(0.1, limit - (time.perf_counter() - began))
    result = HighsSession(bounded).solve(replace(options, time_limit_s=left), start)
    result = replace(result, solve_seconds=time.perf_counter() - began)
    if lp is None or result.objective is None or (result.bound is not None and result.bound >= lp):
        return result
    gap = relative_gap(result.objective, lp)
    proven = gap is not None and gap <= options.relative_gap
    return replace(
        result,
        bound=lp,
        gap=gap,
        termination=Termination.OPTIMAL if proven else result.termination,
    )
