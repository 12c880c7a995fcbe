"""Stability rows that keep a re-solve close to its baseline: at most N changed line items
(``max_changes``, ``change_link``) or a cost per changed unit (``switching``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import pandas as pd

from solver.analyses.diff import _UNITS_TOL, Key
from solver.analyses.resolve.decisions import (
    baseline_units,
    decision_index,
)
from solver.core.compile import Compiled
from solver.core.model import (
    Expression,
    LinearModel,
    VarKind,
    has_second_stage,
    new_row,
)
from solver.errors import ProcureError
from solver.plan import LineItem


@dataclass(frozen=True)
class StabilityInfo:
    """What :func:`add_stability` added."""

    max_changes: int | None
    switching_cost_usd: float | None
    keys: int  # line item keys compared with the baseline
    indicators: int  # binary change indicators (keys with the same variables share one)
    unavoidable: list[Key]  # baseline keys the new model cannot reproduce
    unconstrained_cost_usd: float | None = None  # the re-solve without stability rows
    unconstrained_changes: int | None = None  # its changed line items (keys)
    rows_needed: bool = True  # False: the unconstrained optimum already kept the limit


def _check_stability_options(
    compiled: Compiled, max_changes: int | None, switching_cost_usd: float | None
) -> None:
    """Refuse limits a re-solve cannot keep (negative, or a switching cost on a two-stage
    objective)."""
    if max_changes is None and switching_cost_usd is None:
        raise ValueError("add_stability needs max_changes or switching_cost_usd")
    if max_changes is not None and max_changes < 0:
        raise ProcureError(
            "--max-changes must be 0 or more", field="--max-changes", fix="e.g. --max-changes 2"
        )
    if switching_cost_usd is not None:
        if switching_cost_usd < 0:
            raise ProcureError(
                "--switching-cost-usd must be 0 or more",
                field="--switching-cost-usd",
                fix="e.g. --switching-cost-usd 5000",
            )
        if has_second_stage(compiled.problem):
            raise ProcureError(
                f"a switching cost needs a one-stage objective, not {compiled.problem.objective}",
                field="--switching-cost-usd",
                fix="use --max-changes, or objective min_cost / cost_plus_carbon / max_served",
            )


def _room_for_changes(max_changes: int, unavoidable: list) -> int:
    """Changes left to choose after the baseline items the model cannot reproduce."""
    room = max_changes - len(unavoidable)
    if room < 0:
        shown = ", ".join(f"{k[0]} {k[4]} {k[5]} in {k[1]}" for k in unavoidable[:3])
        raise ProcureError(
            f"{len(unavoidable)} baseline line items cannot be kept ({shown}...): "
            f"more than --max-changes {max_changes}",
            field="--max-changes",
            fix=f"allow at least {len(unavoidable)} changes",
        )
    return room


def add_stability(
    compiled: Compiled,
    model: LinearModel,
    baseline_items: list[LineItem],
    *,
    max_changes: int | None = None,
    switching_cost_usd: float | None = None,
) -> tuple[LinearModel, StabilityInfo]:
    """The model with stability rows: few changed line items, or a cost per changed unit.

    For every line item key k with baseline units B_k and model units U_k
    (:func:`decision_index`; M_k = max(B_k, an upper bound of U_k)):

    - ``max_changes = N``: binary d_k with ``U_k - B_k <= M_k d_k`` and
      ``B_k - U_k <= M_k d_k`` (rows ``change_link``), and
      ``sum_k d_k <= N - (baseline keys the model cannot reproduce)`` (row
      ``max_changes``). Keys whose units come from the same variables share one
      indicator, weighted by their number (an owned server in use counts once
      per load block, as the plan lists it).
    - ``switching_cost_usd = X``: continuous s_k >= |U_k - B_k| (rows
      ``switching``) and ``X * sum_k s_k`` added to the objective (not to the
      plan's cost or budget).

    Raises
    ------
    ProcureError
        Bad limits; a switching cost with a two-stage objective; more
        unavoidable changes than ``max_changes``.
    """
    _check_stability_options(compiled, max_changes, switching_cost_usd)
    index = decision_index(compiled, model)
    base = baseline_units(baseline_items)
    keys = sorted(set(index) | {k for k, u in base.items() if u > _UNITS_TOL})
    unavoidable = [k for k in keys if k not in index]
    groups: dict[tuple, int] = defaultdict(int)  # (entries, baseline) -> number of keys
    for k in keys:
        if k in index:
            entries = tuple((d.var, d.coef, d.upper) for d in index[k])
            groups[(entries, round(base.get(k, 0.0), 6))] += 1

    variables = [model.variables]
    rows = list(model.rows)
    objective = Expression(defaultdict(float, model.objective.coefs), model.objective.constant)
    n = len(model.variables)
    new_vars: list[dict] = []
    count: dict[int, float] = {}

    def var(name: str, kind: VarKind, integer: bool, ub: float) -> int:
        new_vars.append(
            {
                "name": name,
                "kind": VarKind(kind).value,
                "integer": integer,
                "lb": 0.0,
                "ub": ub,
                "option_id": -1,
                "pool": -1,
                "period": -1,
                "block": -1,
                "workload": "",
                "bucket": -1,
            }
        )
        return n + len(new_vars) - 1

    for g, ((entries, b), weight) in enumerate(sorted(groups.items())):
        units = {v: c for v, c, _ in entries}
        bounds = [c * u for _, c, u in entries]
        upper = (
            max(bounds) if len(bounds) > 1 and all(u == 1.0 for *_, u in entries) else sum(bounds)
        )
        big_m = max(b, upper, 1.0)
        if max_changes is not None:
            d = var(f"changed[{g}]", VarKind.CHANGE, True, 1.0)
            count[d] = float(weight)
            up = dict(units)
            up[d] = -big_m
            rows.append(new_row("change_link", (g, "up"), up, "<=", b))
            if b > 0:
                down = {v: -c for v, c in units.items()}
                down[d] = -big_m
                rows.append(new_row("change_link", (g, "down"), down, "<=", -b))
        if switching_cost_usd:
            if b > 0:
                s = var(f"switched[{g}]", VarKind.SWITCH, False, np.inf)
                up = dict(units)
                up[s] = -1.0
                down = {v: -c for v, c in units.items()}
                down[s] = -1.0
                rows.append(new_row("switching", (g, "up"), up, "<=", b))
                rows.append(new_row("switching", (g, "down"), down, "<=", -b))
                objective.coefs[s] += switching_cost_usd * weight
            else:
                for v, c in units.items():
                    objective.coefs[v] += switching_cost_usd * weight * c
    if max_changes is not None:
        room = _room_for_changes(max_changes, unavoidable)
        if count:
            rows.append(new_row("max_changes", (), count, "<=", room))
    if new_vars:
        variables.append(pd.DataFrame(new_vars))
    frame = pd.concat(variables, ignore_index=True)
    extended = LinearModel(frame, rows, objective, model.expressions, model.stage)
    info = StabilityInfo(
        max_changes=max_changes,
        switching_cost_usd=switching_cost_usd,
        keys=len(keys),
        indicators=len(count),
        unavoidable=unavoidable,
    )
    return extended, info


def count_changes(
    compiled: Compiled, model: LinearModel, values: np.ndarray, baseline_items: list[LineItem]
) -> int:
    """Line item keys whose units in ``values`` differ from the baseline (as the rows count)."""
    index = decision_index(compiled, model)
    base = baseline_units(baseline_items)
    changed = 0
    for k in set(index) | {k for k, u in base.items() if u > _UNITS_TOL}:
        units = sum(d.coef * values[d.var] for d in index.get(k, []))
        if k not in index or abs(units - base.get(k, 0.0)) > 1e-6:
            changed += 1
    return changed
