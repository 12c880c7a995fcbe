"""Surviving the loss of an availability zone (``survive_loss_of: [zone]``): each serving
unit placed in one of its offering's zones (``zone`` variables, ``zone_place`` rows) and,
for every zone, the capacity outside it covering the block's peak (``domain_loss`` rows of
kind ``zone``). docs/formulation/domain_loss.md gives the rows and why they are exact.
"""

from __future__ import annotations

from collections import defaultdict

import pandas as pd

from solver.core.compile import Compiled
from solver.core.families import new_row
from solver.core.formulation.state import State
from solver.core.matrix import VarKind
from solver.inputs.catalog.zones import ZonesByType, offering_zones, zones_by_type


def unit_zones(m: State) -> dict[int, tuple[str, ...]]:
    """x variable -> the zones its units may be placed in (``provider/region/zone``), for
    every serving x variable of a workload that must survive losing a zone."""
    listed = zones_by_type(m.compiled.inputs.catalog.zones)
    pools = m.pools
    out: dict[int, tuple[str, ...]] = {}
    for (wname, _t, _b), caps in m.unit_capacity.items():
        w = m.workloads.get(wname)
        if w is None or "zone" not in getattr(w, "survive_loss_of", ()):
            continue
        for v in caps:
            if v not in out:
                out[v] = pool_zones(listed, pools, int(m.B.vars[v]["pool"]))
    return out


def pool_zones(listed: ZonesByType, pools: pd.DataFrame, p: int) -> tuple[str, ...]:
    """The zones of pool ``p``'s units: its offering's listed zones, else its region as one
    zone; an owned pool's site is one zone (``owned/<site>``)."""
    provider = str(pools["provider"].iat[p])
    region = str(pools["region"].iat[p])
    return offering_zones(listed, provider, region, str(pools["instance_type"].iat[p]))


def place_in_zones(m: State, zones_of: dict[int, tuple[str, ...]]) -> dict[int, dict[str, int]]:
    """One integer ``zone`` variable per (x variable with more than one zone, zone) and a
    ``zone_place`` row: its units placed = its units. Returns x -> {zone: its variable};
    an x variable of one zone has none (all its units are in that zone)."""
    B = m.B
    placed: dict[int, dict[str, int]] = {}
    for v, zones in zones_of.items():
        if len(zones) < 2:
            continue
        meta = B.vars[v]
        here = {
            z: B.var(
                f"zone[{meta['name']},{z}]",
                VarKind.ZONE,
                integer=True,
                option_id=meta.get("option_id"),
                pool=meta.get("pool"),
                period=meta.get("period"),
                block=meta.get("block"),
                workload=meta.get("workload"),
                zone=z,
                of_x=meta["name"],
            )
            for z in zones
        }
        row = {y: 1.0 for y in here.values()}
        row[v] = -1.0
        key = (meta.get("workload"), meta.get("option_id"), meta.get("period"), meta.get("block"))
        B.row("zone_place", key, row, "==", 0.0)
        placed[v] = here
    return placed


def zone_loss_rows(
    m: State,
    key: tuple[str, int, int],
    units: dict[int, float],
    need_tps: float,
    shortfall: dict[int, float],
    zones_of: dict[int, tuple[str, ...]],
    placed: dict[int, dict[str, int]],
) -> list[str]:
    """``domain_loss`` rows of kind ``zone`` for one (workload, period, block): for each zone
    z, the capacity of every unit (each counted for at most ``need_tps``) less that placed
    in z, plus any shortfall, >= ``need_tps``. Returns the zones, sorted."""
    coef = {v: min(c, need_tps) for v, c in units.items()}
    inside: dict[str, dict[int, float]] = defaultdict(dict)
    for v, c in coef.items():
        zones = zones_of[v]
        if len(zones) == 1:
            inside[zones[0]][v] = c
        else:
            for z, y in placed[v].items():
                inside[z][y] = c
    for z in sorted(inside):
        row = dict(coef)
        for j, c in inside[z].items():
            row[j] = row.get(j, 0.0) - c
        row = {j: c for j, c in row.items() if c != 0.0}
        row.update(shortfall)
        m.B.rows.append(new_row("domain_loss", (*key, "zone", z), row, ">=", need_tps))
    return sorted(inside)


def zone_units_of(compiled: Compiled, variables: pd.DataFrame) -> dict[str, dict[str, float]]:
    """x variable name -> {zone: units placed there} for the serving x variables of a
    solution (``variables``: the model's variables with a ``value`` column) whose workload
    must survive losing a zone; an x variable of one zone has all its units there."""
    rules = {
        w.name for w in compiled.problem.workloads if "zone" in getattr(w, "survive_loss_of", ())
    }
    if not rules or variables.empty:
        return {}
    out: dict[str, dict[str, float]] = defaultdict(dict)
    if "zone" in variables.columns:
        ys = variables[variables["kind"] == VarKind.ZONE.value]
        for x_name, zone, value in zip(ys["of_x"], ys["zone"], ys["value"], strict=True):
            if round(float(value)) > 0:
                out[str(x_name)][str(zone)] = float(round(float(value)))
    listed = zones_by_type(compiled.inputs.catalog.zones)
    xs = variables[(variables["kind"] == VarKind.X.value) & variables["workload"].isin(rules)]
    for name, p, value in zip(xs["name"], xs["pool"], xs["value"], strict=True):
        zones = pool_zones(listed, compiled.pools, int(p))
        if len(zones) == 1 and float(value) > 0.5:
            out[str(name)] = {zones[0]: float(value)}
    return dict(out)
