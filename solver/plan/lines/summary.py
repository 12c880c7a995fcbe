"""What a plan reports beside its line items: totals by period, provider, mode and workload,
the owned fleet's utilisation, the rows that bind and the share of demand served.
"""

from __future__ import annotations

from collections import defaultdict
from typing import cast

import numpy as np
import pandas as pd

from solver.core.compile import Compiled
from solver.core.model import LinearModel
from solver.plan.lines.items import LineItem
from solver.plan.lines.schema import Binding, Totals
from solver.units import Item, Mode


def totals_of(items: list[LineItem], period_names: list[str]) -> Totals:
    """Sums of line-item costs by period, provider, mode and workload."""
    by: dict[str, defaultdict[str, float]] = {
        key: defaultdict(float) for key in ("period", "provider", "mode", "workload")
    }
    co2_w: dict[str, float] = defaultdict(float)
    for i in items:
        for period, usd in (i.cost_by_period_usd or {i.period: i.cost_usd}).items():
            by["period"][period] += usd
        by["provider"][i.provider] += i.cost_usd
        by["mode"][i.mode] += i.cost_usd
        by["workload"][i.workload or "(fleet)"] += i.cost_usd
        co2_w[i.workload or "(fleet)"] += i.co2e_t
    return Totals(
        by_period={p: by["period"].get(p, 0.0) for p in period_names},
        by_provider=dict(sorted(by["provider"].items())),
        by_mode=dict(sorted(by["mode"].items())),
        by_workload=dict(sorted(by["workload"].items())),
        co2e_t_by_workload=dict(sorted(co2_w.items())),
    )


def owned_utilisation(items: list[LineItem], compiled: Compiled) -> dict[str, float]:
    """Per owned server type and site: unit-hours in use / unit-hours owned."""
    p_hours = dict(zip(compiled.periods["name"], compiled.periods["hours"], strict=True))
    horizon_h = float(compiled.periods["hours"].sum())
    owned: dict[str, float] = defaultdict(float)
    used: dict[str, float] = defaultdict(float)
    for i in items:
        if i.mode != Mode.OWNED:
            continue
        if i.item in {Item.PURCHASE, Item.EXISTING}:
            owned[i.offering] += i.units * (i.hours if i.item == Item.PURCHASE else horizon_h)
        elif i.item == Item.USE:
            used[i.offering] += i.units * i.hours
        elif i.item == Item.TRAINING:
            used[i.offering] += i.units * p_hours[i.period]
    # a server in use in several blocks is counted once per block's hours: that is its use
    return {o: min(1.0, used[o] / owned[o]) for o in sorted(owned) if owned[o] > 0}


def binding_rows(
    model: LinearModel,
    values: np.ndarray,
    pools: pd.DataFrame | None = None,
    tol: float = 1e-6,
) -> list[Binding]:
    """Rows that hold with equality, of the families reported as binding (what binds:
    ``FAMILIES[family].binds``; demand, capacity links and cuts are not).

    Each carries its key by name (the family's ``keys``, never parsed from the row's name);
    with ``pools`` (the compiled pools), an availability row also names the offering and
    mode it caps, the cap and where the cap comes from.
    """
    from solver.core.model import FAMILIES

    by_pool = pools.set_index("pool_id") if pools is not None else None
    out = []
    for row in model.rows:
        family = FAMILIES[row.family]
        if not family.binds:
            continue
        lhs = sum(c * values[i] for i, c in row.coefs.items())
        slack = row.rhs - lhs if row.sense == "<=" else lhs - row.rhs
        if abs(slack) > tol * max(1.0, abs(row.rhs)):
            continue
        names = [k.rstrip("?") for k in family.keys]
        key = {
            n: v if isinstance(v, str | float) else int(v)
            for n, v in zip(names, row.key, strict=False)
        }
        extra: dict = {}
        pool_id = key.get("pool")
        if row.family == "availability" and by_pool is not None and pool_id in by_pool.index:
            # pool_id is unique in the pools table, so .loc gives one row (a Series); the
            # stubs cannot know the index is unique.
            pool = cast(pd.Series, by_pool.loc[pool_id])
            extra = {
                "offering": str(pool["offering_id"]),
                "mode": str(pool["mode"]),
                "limit": float(pool["availability_cap"]),
                "limit_basis": str(pool["availability_cap_basis"]),
            }
        out.append(
            Binding(
                name=row.name,
                family=row.family,
                description=family.description,
                slack=slack,
                key=key,
                **extra,
            )
        )
    return out


def _block_hours(compiled: Compiled, rows: pd.DataFrame) -> np.ndarray:
    """Hours of each row's (period, block): the period's hours x the block's fraction."""
    return (
        compiled.periods["hours"].to_numpy()[rows["period"].to_numpy()]
        * compiled.blocks["fraction"].to_numpy()[rows["block"].to_numpy()]
    )


def served_fraction(compiled: Compiled, model: LinearModel, values: np.ndarray) -> dict[str, float]:
    """Per online workload: served / demanded (1.0 unless shortfall is allowed).

    What is unserved is what the plan's units leave of the demand (:func:`_unserved`), not
    the shortfall variables' values: a solver may leave those within its feasibility
    tolerance of their rows, which on a demand of 1e-6 tokens/s is all of it (a plan of
    no units that "served a third")."""
    var = model.variables.assign(value=_unserved(model, values))
    short = var[var["kind"] == "shortfall"]
    out: dict[str, float] = {}
    dem = compiled.demand.copy()
    if dem.empty:
        return out
    dem["tokens"] = dem["demand"] * dem["tokens_per_unit"] * _block_hours(compiled, dem)
    for w, group in dem.groupby("workload"):
        total = float(group["tokens"].sum())
        s = short[short["workload"] == w]
        if s.empty:
            out[str(w)] = 1.0
            continue
        h = _block_hours(compiled, s)
        tok = compiled.demand.set_index(["workload", "period", "block", "bucket"])
        per = [
            float(tok.loc[(w, p, b, j), "tokens_per_unit"])
            for p, b, j in zip(s["period"], s["block"], s["bucket"], strict=True)
        ]
        missing = float((s["value"].to_numpy() * np.array(per) * h).sum())
        out[str(w)] = max(0.0, 1.0 - missing / total) if total > 0 else 1.0
    return out


def _unserved(model: LinearModel, values: np.ndarray) -> np.ndarray:
    """``values`` with each shortfall variable set to the least its rows allow with the
    plan's units (its demand row; under N+1 its row without the largest unit too): the
    most any of them leaves unserved, within 0 and the demand."""
    out = np.asarray(values, dtype=float).copy()
    v = model.variables
    short = set(np.flatnonzero((v["kind"] == "shortfall").to_numpy()).tolist())
    if not short:
        return out
    least = dict.fromkeys(short, 0.0)
    for row in model.rows:
        mine = [j for j in row.coefs if j in short]
        if row.sense != ">=" or len(mine) != 1 or row.coefs[mine[0]] <= 0:
            continue
        j = mine[0]
        served = sum(a * out[i] for i, a in row.coefs.items() if i != j)
        least[j] = max(least[j], (row.rhs - served) / row.coefs[j])
    upper = v["ub"].to_numpy(float)
    for j, need in least.items():
        out[j] = min(need, upper[j])
    return out
