"""A plan's decisions placed in a model and read back as a plan: the baseline at the old and
the new prices, and ``procure diff``'s price/plan split.
"""

from __future__ import annotations

from collections import defaultdict
from typing import cast

import numpy as np
import pandas as pd

from solver.analyses.diff import Key, PlanDiff, _with_items, diff_plans, item_key
from solver.analyses.resolve.decisions import (
    DECISION_ITEMS,
    decision_index,
)
from solver.core.compile import Compiled, compile_problem
from solver.core.model import (
    LinearModel,
    build_model,
)
from solver.core.restrictions import lifted_problem
from solver.errors import ProcureError
from solver.inputs.catalog import Catalog
from solver.inputs.problem import (
    Problem,
)
from solver.plan import LineItem, Plan, extract_plan
from solver.plan.charges import plan_calendar
from solver.plan.reporting import in_reporting_periods, pieces_of_items, split_items


def evaluate_decisions(
    compiled: Compiled, model: LinearModel, items: list[LineItem], *, label: str = "evaluated"
) -> tuple[Plan, list[LineItem]]:
    """Place the decisions of ``items`` in ``model`` and read them back as a plan.

    The plan carries this model's prices and cost accounting (existing fleet and
    commitments included). Items the model has no variable for (an offering no
    longer in the catalog or no longer allowed) are returned apart and added to
    the plan as they stand.
    """
    index = decision_index(compiled, model)
    options = compiled.options.set_index("option_id")
    values = np.zeros(len(model.variables))
    unplaced: list[LineItem] = []
    by_key: dict[Key, list[LineItem]] = defaultdict(list)
    for i in items:
        if i.item in DECISION_ITEMS:
            by_key[item_key(i)].append(i)
    for key, group in by_key.items():
        entries = index.get(key)
        units = sum(i.units for i in group)
        if not entries:
            unplaced.extend(group)
            continue
        if key[0] == "training":
            item = group[0]
            match = [
                d
                for d in entries
                if int(_cell(options, d.option_id, "n_units")) == int(round(item.units))
                and compiled.periods["name"].iat[int(_cell(options, d.option_id, "start_period"))]
                == (item.start_period or item.period)
                and abs(_cell(options, d.option_id, "job_hours") - item.job_hours)
                <= 1e-6 * max(1.0, item.job_hours)
            ]
            if not match:
                unplaced.extend(group)
                continue
            values[match[0].var] = 1.0
        else:
            values[entries[0].var] = units
    _place_savings_plans(compiled, model, items, values)
    cost = model.expressions["total_cost_usd"].value(values)
    plan = extract_plan(
        compiled,
        model,
        values,
        status=label,
        objective=cost,
        gap=None,
        solver="none",
        solve_seconds=0.0,
    )
    if unplaced:
        plan = _with_items(plan, plan.line_items + unplaced, list(compiled.periods["name"]))
    return plan, unplaced


def _place_savings_plans(
    compiled: Compiled, model: LinearModel, items: list[LineItem], values: np.ndarray
) -> None:
    """The savings plans of ``items`` in ``model``'s variables, by name: each commitment
    (USD/h from its period) and the usage it paid for (units of an on-demand pool in a
    period and block), where the model has them. The plan's rates are the problem's, so
    what it covered it still may; the credits take the model's on-demand prices."""
    if not compiled.problem.savings_plans:
        return
    index = {n: i for i, n in enumerate(model.variables["name"])}
    periods = {n: t for t, n in enumerate(compiled.periods["name"])}
    blocks = {n: b for b, n in enumerate(compiled.blocks["name"])}
    for i in items:
        term = i.mode.removeprefix("savings_plan_")
        if i.item == "savings_plan":
            name = f"savings_plan[{i.provider},{term},{periods.get(i.period)}]"
        elif i.item == "savings_plan_cover":
            at = f"{periods.get(i.period)},{blocks.get(i.block)}"
            name = f"sp_cover[{i.provider},{term},{i.offering}#on_demand,{at}]"
        else:
            continue
        if name in index:
            values[index[name]] += i.units


def priced_at(
    problem: Problem, catalog: Catalog, items: list[LineItem], *, label: str = "evaluated"
) -> tuple[Plan, list[LineItem]]:
    """The decisions of ``items`` priced by the model of ``problem`` over ``catalog``.

    :func:`evaluate_decisions` on a model compiled for the purpose (every option kept,
    so every decision has its variable): "the old plan at the new prices" of the price/
    plan split (:func:`solver.analyses.diff.split_change`) when no model is at hand.
    """
    pieces = pieces_of_items(items, [(p.name, float(p.months)) for p in problem.resolved_periods])
    split = None
    if any(len(ps) > 1 for ps in pieces.values()):  # a plan solved over split periods
        split = lifted_problem(problem, pieces)
        if split is None:
            raise ProcureError(
                "the plan was solved over periods split where a life or term ends (its "
                "line items' served_months), and this problem's periods cannot be split so",
                field="periods",
                fix="pass the problem the plan was solved from",
            )
        items = split_items(items, pieces, plan_calendar(split).clock.hours_at)
    compiled = compile_problem(split or problem, catalog, prune_dominated=False)
    plan, unplaced = evaluate_decisions(compiled, build_model(compiled), items, label=label)
    if split is None:
        return plan, unplaced
    return in_reporting_periods(plan, pieces), unplaced


def diff_at_prices(
    old: Plan,
    new: Plan,
    problem: Problem,
    new_catalog: Catalog,
    *,
    price_source: str,
    notes: list[str] | None = None,
) -> PlanDiff:
    """``procure diff``: the two plans compared, the change split exactly as
    :func:`resolve` splits it: the old plan's decisions priced by the model of its
    ``problem`` over ``new_catalog`` (:func:`priced_at`)."""
    at_new, unplaced = priced_at(problem, new_catalog, old.line_items, label="baseline")
    notes = list(notes or [])
    if unplaced:
        notes.append(
            f"{len(unplaced)} old line item(s) have no place at the new prices (offering "
            "gone or no longer allowed): kept at their old cost on both sides of the price "
            "effect"
        )
    return diff_plans(old, new, old_at_new_prices=at_new, price_source=price_source, notes=notes)


def _cell(options: pd.DataFrame, option_id: int, column: str) -> float:
    """One number of the options table (indexed by option_id), as a float."""
    return float(cast(float, options.loc[option_id, column]))
