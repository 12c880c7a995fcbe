"""A proof carried along a monotone change: a plan proven for an easier variant, still a
plan of a harder one at the same cost, is proven for it (docs/concepts/warm-engine.md,
"A proof carried along more demand or dearer prices").

Variant ``v`` is *at least as hard* as a proven variant ``p`` (:func:`at_least_as_hard`)
when it differs only in its online workloads' demand, each no smaller per period, and in
its rented prices, each no lower, with no savings plan (whose credits fall as prices
rise). Then every plan of ``v`` serves ``p``'s demand (more capacity than ``p`` asks)
and costs at ``p``'s prices no more than at ``v``'s, so ``opt(v) >= opt(p) >= bound_p``
(the problem's limits aside: below). A plan ``x_p`` proven within gap ``g`` for ``p``
that is a plan of ``v`` costing the same is within ``g`` of ``opt(v)``: ``bound_p <=
opt(v) <= c_v x_p = c_p x_p``.

The budget row is the one row a harder variant may loosen (its bound of the categories
beside compute reads the prices and pools kept: :func:`solver.core.model.budget_bound`).
A plan ``y`` of ``v`` that breaks ``p``'s budget row costs, where that row's coefficients
are at most the objective's and every other column costs at least 0, ``c_p y >= a y >
b_p``; with ``b_p >= c_p x_p`` it is no better than ``x_p`` (:func:`budget_far`, checked
on ``p``'s model, whose row is the whole problem's where its bound of the categories
beside compute is the same with every option). The carbon cap is the same row in both
(a change of cap is not a monotone change here).

The plan taken need not be ``p``'s: any plan of ``v`` costing no more than ``c_p x_p``
is as good (``bound_p <= opt(v)``); the plan of a proven variant at least as hard as
``v`` (more demand, dearer prices) often is one, when the two variants' optima are equal.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from solver.core.compile import Compiled
from solver.core.matrix import LinearModel
from solver.core.model import budget_bound
from solver.inputs.catalog import Catalog
from solver.inputs.problem import InferenceWorkload, Problem
from solver.units import PRICE_COLUMN, RENTED_MODES

#: proven variants kept for the monotone carry (newest first)
POINTS = 32
#: a plan's cost in the harder variant counts as the same when within this fraction of it
#: (USD rounding of sums taken in another order; far below the solve's gap of 1e-4)
SAME_COST = 1e-9


@dataclass
class Point:
    """A variant's plan, proven within ``gap`` of its optimum (its model's objective).

    Attributes
    ----------
    problem, catalog
        The variant.
    option_ids
        The options of the model it was proven in (the variant's own pruning).
    model, values
        That model and the plan's values in it.
    objective, bound, gap
        The plan's objective (USD), the solve's bound on the optimum (USD), their gap.
    budget_far
        Whether the budget row of ``model`` cannot cut off a plan cheaper than this one
        (:func:`budget_far`).
    """

    problem: Problem
    catalog: Catalog
    option_ids: frozenset[int]
    model: LinearModel
    values: np.ndarray
    objective: float
    bound: float | None
    gap: float | None
    budget_far: bool


def point_of(
    compiled: Compiled,
    model: LinearModel,
    values: np.ndarray,
    bound: float | None,
    gap: float | None,
    catalog: Catalog,
    whole: Compiled,
) -> Point:
    """The :class:`Point` of a plan proven for ``compiled.problem`` in ``model``; ``whole``
    is that problem compiled with every option (its budget row is the whole problem's:
    the condition of :func:`budget_far` holds for it where its bound of the categories
    beside compute is the pruned model's)."""
    objective = float(model.objective.value(values))
    return Point(
        compiled.problem,
        catalog,
        frozenset(int(k) for k in compiled.options["option_id"]),
        model,
        np.asarray(values, dtype=float),
        objective,
        bound,
        gap,
        _same_budget_row(compiled, whole) and budget_far(model, objective),
    )


def _same_budget_row(compiled: Compiled, whole: Compiled) -> bool:
    """Whether the budget row's bound of the categories beside compute
    (:func:`solver.core.model.budget_bound`: it reads the pools kept) is the same with
    every option as with those of ``compiled``."""
    a, b = budget_bound(compiled), budget_bound(replace(whole, problem=compiled.problem))
    return (a.multiplier, a.constant_usd) == (b.multiplier, b.constant_usd)


def budget_far(model: LinearModel, objective_usd: float) -> bool:
    """Whether ``model``'s budget rows (``budget``, ``period_budget``) each count every
    column at most what the objective does, every other column costs at least 0 and the
    row's bound is at least ``objective_usd``: a plan breaking one then costs more than
    ``objective_usd``. True where the model has no such row."""
    cost = np.zeros(len(model.variables))
    for j, c in model.objective.coefs.items():
        cost[j] += c
    if model.objective.constant != 0.0:
        return False
    for row in model.rows:
        if row.family not in ("budget", "period_budget") or not row.coefs:
            continue
        if row.sense != "<=" or row.rhs < objective_usd:
            return False
        js = np.fromiter(row.coefs.keys(), dtype=np.int64, count=len(row.coefs))
        a = np.fromiter(row.coefs.values(), dtype=float, count=len(row.coefs))
        if (a > cost[js]).any():
            return False
        outside = np.ones(len(cost), dtype=bool)
        outside[js] = False
        if (cost[outside] < 0).any():
            return False
    return True


def _demand(problem: Problem) -> dict[tuple[str, str], float]:
    return {
        (w.name, period): float(f)
        for w in problem.workloads
        if isinstance(w, InferenceWorkload)
        for period, f in (w.demand_by_period or {}).items()
    }


def _no_less_demand(easy: Problem, hard: Problem) -> bool:
    """Whether ``hard`` is ``easy`` with each online workload's demand per period no
    smaller (a period a workload gives no factor for counts 1), nothing else changed."""
    a, b = easy.model_dump(), hard.model_dump()
    if {k: v for k, v in a.items() if k != "workloads"} != {
        k: v for k, v in b.items() if k != "workloads"
    }:
        return False
    if len(a["workloads"]) != len(b["workloads"]):
        return False
    for x, y in zip(a["workloads"], b["workloads"], strict=True):
        if {k: x[k] for k in x if k != "demand_by_period"} != {
            k: y[k] for k in y if k != "demand_by_period"
        }:
            return False
    da, db = _demand(easy), _demand(hard)
    return all(db.get(k, 1.0) >= da.get(k, 1.0) for k in set(da) | set(db))


def _no_lower_prices(easy: Catalog, hard: Catalog) -> bool:
    """Whether ``hard`` is ``easy`` with rented prices no lower, nothing else changed."""
    if hard is easy:
        return True
    a, b = easy.offerings, hard.offerings
    if a.shape != b.shape or list(a.columns) != list(b.columns) or not a.index.equals(b.index):
        return False
    prices = [PRICE_COLUMN[m] for m in RENTED_MODES]
    if not a.drop(columns=prices).equals(b.drop(columns=prices)):
        return False
    for column in prices:
        pa, pb = a[column].to_numpy(float), b[column].to_numpy(float)
        both = ~(np.isnan(pa) | np.isnan(pb))
        if not (np.isnan(pa) == np.isnan(pb)).all() or (pb[both] < pa[both]).any():
            return False
    others = [f for f in easy.__dataclass_fields__ if f != "offerings"]
    return all(_same(getattr(easy, f), getattr(hard, f)) for f in others)


def _same(x: object, y: object) -> bool:
    if x is y:
        return True
    if isinstance(x, pd.DataFrame) and isinstance(y, pd.DataFrame):
        return x.equals(y)
    try:
        return bool(x == y)
    except (ValueError, TypeError):
        return False


def _ordered(easy: Problem, easy_catalog: Catalog, hard: Problem, hard_catalog: Catalog) -> bool:
    if easy.savings_plans or hard.savings_plans:
        return False
    return _no_less_demand(easy, hard) and _no_lower_prices(easy_catalog, hard_catalog)


def at_least_as_hard(point: Point, problem: Problem, catalog: Catalog) -> bool:
    """Whether every plan of (``problem``, ``catalog``) is one of the point's variant
    costing no less there, its budget aside (the module docstring): no less demand, no
    lower rented prices, nothing else changed, no savings plan."""
    return _ordered(point.problem, point.catalog, problem, catalog)


def no_harder(point: Point, problem: Problem, catalog: Catalog) -> bool:
    """Whether the point's variant is at least as hard as (``problem``, ``catalog``): its
    plan then serves this variant's demand, at no higher prices (checked for the plan
    itself before it is taken)."""
    return _ordered(problem, catalog, point.problem, point.catalog)
