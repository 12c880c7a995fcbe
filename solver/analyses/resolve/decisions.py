"""Which model variables make a line item's units: the index by line item key
(item, period, block, workload, offering, mode) and the most units any optimum needs.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd

from solver.analyses.diff import Key, item_key
from solver.core.compile import Compiled
from solver.core.model import (
    LinearModel,
)
from solver.inputs.problem import (
    InferenceWorkload,
)
from solver.plan import LineItem
from solver.plan.lines import FrameRow
from solver.units import Item

DECISION_ITEMS = ("rent", "use", "training", "purchase", "reservation")


@dataclass(frozen=True)
class Decision:
    """One model variable behind a line item key: ``units = coef x value``."""

    var: int
    coef: float
    upper: float  # an upper bound on the variable's value in any feasible solution
    option_id: int = -1


def decision_index(compiled: Compiled, model: LinearModel) -> dict[Key, list[Decision]]:
    """Line item key -> the variables whose values are that line item's units.

    Rented units (``x`` per block) give ``rent`` keys; owned and reserved units
    (``x`` per period) give one ``use`` key per block; training clusters (``z``)
    give a ``training`` key per period they run in (units = cluster size);
    ``buy`` and ``commit`` give ``purchase`` and ``reservation`` keys.
    Each variable carries an upper bound (:func:`useful_units`).
    """
    periods = list(compiled.periods["name"])
    blocks = list(compiled.blocks["name"])
    pools = compiled.pools
    offerings, modes = pools["offering_id"].to_numpy(), pools["mode"].to_numpy()
    options = compiled.options.set_index("option_id")
    runs = compiled.training_runs()
    upper = useful_units(compiled, model)
    v = model.variables
    out: dict[Key, list[Decision]] = defaultdict(list)
    r: FrameRow
    for i, r in enumerate(v.itertuples(index=False)):
        if r.kind not in ("x", "z", "buy", "commit"):
            continue
        offering, mode = offerings[int(r.pool)], modes[int(r.pool)]
        if r.kind == "x":
            if r.block >= 0:
                key = ("rent", periods[r.period], blocks[r.block], r.workload, offering, mode)
                out[key].append(Decision(i, 1.0, upper[i], int(r.option_id)))
            else:
                for b in blocks:
                    key = ("use", periods[r.period], b, r.workload, offering, mode)
                    out[key].append(Decision(i, 1.0, upper[i], int(r.option_id)))
        elif r.kind == "z":
            n_units = float(cast(float, options.loc[int(r.option_id), "n_units"]))
            for t, _h in runs[int(r.option_id)]:
                key = ("training", periods[int(t)], "", r.workload, offering, mode)
                out[key].append(Decision(i, n_units, 1.0, int(r.option_id)))
        else:
            item = "purchase" if r.kind == "buy" else "reservation"
            key = (item, periods[r.period], "", "", offering, mode)
            out[key].append(Decision(i, 1.0, upper[i]))
    return dict(out)


def useful_units(compiled: Compiled, model: LinearModel) -> np.ndarray:
    """Per variable, the most units any optimal plan needs (inf where unknown).

    For units of an inference option: enough to serve its workload's demand in
    the period and block alone (plus one under N+1; at least its minimum serving
    units), and never above the pool's availability cap plus existing units. More
    units only add cost, so an optimum exists within these bounds; they make the
    stability rows' big-M tight. For ``buy`` and ``commit``: the pool's useful units in its busiest
    period (capped likewise); for ``z``: 1.
    """
    v = model.variables
    pools = compiled.pools
    cap = (
        pools["availability_cap"].astype(float) + pools["existing_units"].astype(float)
    ).to_numpy()
    demand_rows: Iterable[FrameRow] = compiled.demand.itertuples(index=False)
    demand = {
        (d.workload, int(d.period), int(d.block), int(d.bucket)): float(d.demand)
        for d in demand_rows
    }
    n_blocks = len(compiled.blocks)
    options = compiled.options.set_index("option_id")
    # a problem of training jobs only has no serving capacity column
    per_unit = options.get("tokens_per_s_per_unit", pd.Series(dtype=float)).to_dict()
    rps: dict[int, dict[int, float]] = defaultdict(dict)
    r: FrameRow
    for r in compiled.bucket_capacity.itertuples(index=False):
        rps[int(r.option_id)][int(r.bucket)] = float(r.requests_per_s_per_unit)
    online = [w for w in compiled.problem.workloads if isinstance(w, InferenceWorkload)]
    fewest = {w.name: float(w.min_serving_units) for w in online}
    spare = {w.name: 1.0 for w in online if w.n_plus_1}  # N+1: one unit over the peak's need
    upper = np.full(len(v), np.inf)
    pool_need: dict[tuple[int, int], float] = defaultdict(float)
    training_units: dict[int, float] = defaultdict(float)
    options = compiled.options.set_index("option_id")
    for i, r in enumerate(v.itertuples(index=False)):
        if r.kind == "z":
            upper[i] = 1.0
            n = float(cast(float, options.loc[int(r.option_id), "n_units"]))
            training_units[int(r.pool)] = max(training_units[int(r.pool)], n)
            continue
        if r.kind != "x":
            continue
        k = int(r.option_id)
        need = 0.0
        for b in [r.block] if r.block >= 0 else range(n_blocks):
            if k in rps:
                units = sum(
                    demand.get((r.workload, r.period, b, j), 0.0) / x
                    for j, x in rps[k].items()
                    if x > 0
                )
            else:
                d = demand.get((r.workload, r.period, b, -1), 0.0)
                units = d / per_unit[k] if per_unit.get(k, 0.0) > 0 else np.inf
            need = max(need, math.ceil(units - 1e-9) if np.isfinite(units) else np.inf)
        need = max(need + spare.get(r.workload, 0.0), fewest.get(r.workload, 1.0))
        upper[i] = min(max(cap[int(r.pool)], 0.0), need)
        pool_need[(int(r.pool), int(r.period))] += upper[i]
    busiest: dict[int, float] = defaultdict(float)
    for (p, _t), n in pool_need.items():
        busiest[p] = max(busiest[p], n)
    for i, r in enumerate(v.itertuples(index=False)):
        if r.kind in ("buy", "commit"):
            p = int(r.pool)
            upper[i] = min(max(cap[p], 0.0), busiest.get(p, 0.0) + training_units.get(p, 0.0))
    return upper


def baseline_units(items: list[LineItem]) -> dict[Key, float]:
    """Units per key of the decision line items (``existing`` left out)."""
    units: dict[Key, float] = defaultdict(float)
    for i in items:
        if i.item in DECISION_ITEMS:
            key = item_key(i)
            if i.item == Item.TRAINING:
                units[key] = max(units[key], i.units)  # one cluster per workload and period
            else:
                units[key] += i.units
    return dict(units)


def baseline_pools(compiled: Compiled, items: list[LineItem]) -> frozenset[str]:
    """The pools (offering and mode) of the decision line items in ``items``."""
    wanted = {(i.offering, i.mode) for i in items if i.item in DECISION_ITEMS}
    pools = compiled.pools
    used = [(o, m) in wanted for o, m in zip(pools["offering_id"], pools["mode"], strict=True)]
    return frozenset(pools["pool_id"][used])
