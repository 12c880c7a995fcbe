"""What a plan is made of, by one measure: the providers, accelerators, regions, purchase
modes (commitments) or region groups (residency zones) it uses, read from the model's
unit variables and from a plan's line items, and the binary indicator of each group's
use that near-optimal alternatives minimise over (``group_used_link``,
``group_used_units``; docs/formulation/group_used_link.md).

Plain data in (the compiled problem, a model, a plan), plain data out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import numpy as np
import pandas as pd

from solver.analyses.resolve.decisions import useful_units
from solver.core.compile import Compiled
from solver.core.families import new_row
from solver.core.matrix import LinearModel, Row, VarKind
from solver.plan import Plan
from solver.units import Item

#: The measures a plan is told apart by (``--differ-by``), and what one group of each is.
MEASURES: dict[str, str] = {
    "providers": "provider",
    "accelerators": "accelerator",
    "regions": "provider/region",
    "commitments": "purchase mode",
}
#: The kinds of preference priced by :func:`solver.analyses.alternatives.preferences`:
#: the measures less regions, plus region groups (residency zones: us, eu, apac, ...).
PREFERENCE_KINDS: dict[str, str] = {
    "providers": "provider",
    "accelerators": "accelerator",
    "commitments": "purchase mode",
    "region_groups": "region group",
}

#: Model variables that are units of a pool (serving units, training clusters, purchases,
#: reservations, capacity blocks): each is integer, so one in use is at least 1.
UNIT_KINDS = frozenset(
    {VarKind.X.value, VarKind.Z.value, VarKind.BUY.value, VarKind.COMMIT.value, VarKind.BLOCK.value}
)
#: Line items that put a provider, accelerator, region and mode into a plan.
_PLAN_ITEMS = frozenset(
    {
        Item.RENT,
        Item.USE,
        Item.TRAINING,
        Item.PURCHASE,
        Item.RESERVATION,
        Item.EXISTING,
        Item.CAPACITY_BLOCK,
    }
)


def pool_groups(compiled: Compiled, measure: str) -> np.ndarray:
    """The group of each pool (by pool index) under ``measure``: its provider, accelerator,
    ``provider/region``, mode (``owned`` for servers bought) or residency zone."""
    pools = compiled.pools
    if measure == "providers":
        return pools["provider"].astype(str).to_numpy()
    if measure == "accelerators":
        return pools["accelerator_id"].astype(str).to_numpy()
    if measure == "regions":
        return (pools["provider"].astype(str) + "/" + pools["region"].astype(str)).to_numpy()
    if measure == "commitments":
        return pools["mode"].astype(str).to_numpy()
    if measure == "region_groups":
        return pools["residency_zone"].fillna("").astype(str).to_numpy()
    raise ValueError(f"unknown measure {measure!r}")


def group_vars(compiled: Compiled, model: LinearModel, measure: str) -> dict[str, list[int]]:
    """Group -> the indices of the model's unit variables (:data:`UNIT_KINDS`) on its pools."""
    groups = pool_groups(compiled, measure)
    v = model.variables
    kinds = v["kind"].to_numpy()
    pools = v["pool"].to_numpy(dtype=int)
    out: dict[str, list[int]] = defaultdict(list)
    for i in np.flatnonzero(np.isin(kinds, list(UNIT_KINDS)) & (pools >= 0)):
        group = str(groups[pools[i]])
        if group:
            out[group].append(int(i))
    return dict(out)


def plan_groups(plan: Plan, compiled: Compiled, measure: str) -> frozenset[str]:
    """The groups a plan uses, read from its line items (units > 0)."""
    zone_of: dict[tuple[str, str], str] = {}
    if measure == "region_groups":
        pools = compiled.pools
        zone_of = {
            (str(p), str(r)): str(z)
            for p, r, z in zip(
                pools["provider"], pools["region"], pools["residency_zone"].fillna(""), strict=True
            )
        }
    out: set[str] = set()
    for item in plan.line_items:
        if item.item not in _PLAN_ITEMS or item.units <= 0:
            continue
        if measure == "providers":
            out.add(item.provider)
        elif measure == "accelerators":
            out.add(item.accelerator)
        elif measure == "regions":
            out.add(f"{item.provider}/{item.region}")
        elif measure == "commitments":
            out.add(item.mode)
        elif measure == "region_groups":
            zone = zone_of.get((item.provider, item.region), "")
            if zone:
                out.add(zone)
        else:
            raise ValueError(f"unknown measure {measure!r}")
    return frozenset(out)


def with_indicators(
    compiled: Compiled, model: LinearModel, measure: str
) -> tuple[LinearModel, dict[str, int]]:
    """The model with a binary ``used[group]`` per group of ``measure`` that is 1 exactly
    when some unit variable of the group is in use.

    Rows: ``group_used_link`` ``v <= M_v used[g]`` for each unit variable ``v`` of ``g``
    (``M_v`` the most units any plan that is not wasteful needs,
    :func:`~solver.analyses.resolve.decisions.useful_units`: more units of one variable
    only add cost) and ``group_used_units`` ``used[g] <= sum of g's unit variables``
    (integer, so 1 as soon as one unit is used).

    Returns
    -------
    tuple
        The extended model and group -> indicator variable index.
    """
    members = group_vars(compiled, model, measure)
    upper = useful_units(compiled, model)
    ub = model.variables["ub"].to_numpy(dtype=float)
    n = len(model.variables)
    new_vars: list[dict] = []
    rows: list[Row] = list(model.rows)
    used: dict[str, int] = {}
    for group in sorted(members):
        u = n + len(new_vars)
        new_vars.append(_indicator_var(f"used[{measure},{group}]"))
        used[group] = u
        for v in members[group]:
            big_m = min(float(upper[v]), float(ub[v]))
            if not np.isfinite(big_m):
                big_m = 1e6  # no bound known: a large one (the row stays valid)
            rows.append(new_row("group_used_link", (group, v), {v: 1.0, u: -big_m}, "<=", 0.0))
        units = {u: 1.0, **{v: -1.0 for v in members[group]}}
        rows.append(new_row("group_used_units", (group,), units, "<=", 0.0))
    return LinearModel(
        with_variables(model.variables, new_vars),
        rows,
        model.objective,
        model.expressions,
        model.stage,
    ), used


def _indicator_var(name: str) -> dict[str, object]:
    """A binary of the variables table that means nothing to the plan's extraction."""
    return {
        "name": name,
        "kind": VarKind.USED.value,
        "integer": True,
        "lb": 0.0,
        "ub": 1.0,
    }  # the table's other columns are given their empty values by with_variables


def with_variables(variables: pd.DataFrame, new_vars: list[dict]) -> pd.DataFrame:
    """The variables table with ``new_vars`` appended, each column the table has but a new
    variable does not given its empty value (-1 for a number, '' for text), so the
    columns keep their types."""
    if not new_vars:
        return variables
    extra = pd.DataFrame(new_vars)
    for column in variables.columns:
        if column not in extra:
            numeric = pd.api.types.is_numeric_dtype(variables[column])
            extra[column] = -1 if numeric else ""
    extra = extra[list(variables.columns)].astype(variables.dtypes.to_dict())
    return pd.concat([variables, extra], ignore_index=True)


def with_rows(model: LinearModel, rows: Iterable[Row]) -> LinearModel:
    """The model with more rows (the same variables, objective and expressions)."""
    return LinearModel(
        model.variables, [*model.rows, *rows], model.objective, model.expressions, model.stage
    )


def pruned_within_groups(compiled: Compiled, measure: str) -> Compiled:
    """``compiled`` (every option) with the options pruned that a cheaper option of the
    *same group* replaces (:func:`~solver.core.compile.repruned` on each group's options
    alone, ids unchanged).

    Exact for the analyses here: each reduction of the pruning moves a unit of a dropped
    option onto units of a kept option of its own group (a pool belongs to one group, so
    its room is counted within the group too), so any plan has one of no more cost and
    CO2e over the kept options that uses the same set of groups; a row on the groups used
    (``near_optimal``, ``differs_from``, ``exclude_group``, ``require_group``) holds for
    both.
    """
    from solver.core.compile import repruned, with_options

    options = compiled.options
    if options.empty:
        return compiled
    groups = pool_groups(compiled, measure)
    group_of = dict(zip(compiled.pools["pool_id"], groups, strict=True))
    of_option = options["pool_id"].map(group_of).fillna("")
    kept = [
        repruned(with_options(compiled, options[of_option == g])).options
        for g in sorted(set(of_option))
    ]
    frame = pd.concat(kept, ignore_index=True).sort_values("option_id").reset_index(drop=True)
    return with_options(compiled, frame)
