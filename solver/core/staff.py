"""Staff by fleet size in the MIP: the saving of a site past 1,000 servers, as a
piecewise-linear function of the site's fleet in each period (the ``staff_fleet`` and
``staff_tier`` rows; the derivation is in docs/formulation/staff_fleet.md).

Nothing is added for a site that cannot hold more than 1,000 servers, nor for a site with a
flat staff figure or ratio: the hosting is then exact.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from solver.core import ledger
from solver.core.matrix import VarKind
from solver.inputs.staff import (
    BREAKPOINTS_SERVERS,
    SERVERS_PER_ADMIN_MEDIUM,
    admins,
)

if TYPE_CHECKING:  # the build state (solver.core.model imports this module at run time)
    from solver.core.formulation.state import State

#: Fleet size up to which the hosting's staff is exact (no rows are added below it).
SMALL_FLEET_SERVERS = BREAKPOINTS_SERVERS[0]


def _cell(frame: pd.DataFrame, column: str, row: int) -> float:
    """A numeric cell of ``frame`` by position (pandas-stubs type ``.iat`` as any scalar)."""
    value: Any = frame[column].iat[row]
    return float(value)


def saving_admins(n_servers: float) -> float:
    """Administrators fewer than ``n_servers / 140`` a site of that size needs (<= 0)."""
    return admins(n_servers) - n_servers / SERVERS_PER_ADMIN_MEDIUM


def segments(n_max: float) -> list[tuple[float, float]]:
    """(length, slope of :func:`saving_admins`) of each segment from 0 to ``n_max``."""
    points = [0.0] + [a for a in BREAKPOINTS_SERVERS if a < n_max] + [n_max]
    return [
        (b - a, (saving_admins(b) - saving_admins(a)) / (b - a))
        for a, b in zip(points, points[1:], strict=False)
        if b > a
    ]


def site_fleet_bounds(m: State) -> dict[str, tuple[float, list[int]]]:
    """Sites whose staff goes by fleet size and which could hold more than 1,000 servers:
    site -> (most servers it holds, the owned pools there)."""
    pools = m.pools
    by_site: dict[str, list[int]] = defaultdict(list)
    owned = (pools["kind"] == "owned").to_numpy() & pools["staff_by_size"].fillna(False).astype(
        bool
    ).to_numpy()
    existing = pools["existing_units"].to_numpy()
    sites = pools["site_id"].to_numpy()
    for p in np.flatnonzero(owned).tolist():  # the owned pools only (a few of thousands)
        if p in m.usage or existing[p]:
            by_site[sites[p]].append(p)
    out = {}
    for site, ps in by_site.items():
        smallest_kw = min(_cell(pools, "power_kw_max", p) for p in ps)
        cap_kw = _cell(pools, "site_power_cap_kw", ps[0])
        n_max = math.floor(cap_kw / smallest_kw + 1e-9) if smallest_kw > 0 else math.inf
        if SMALL_FLEET_SERVERS < n_max < math.inf:
            out[site] = (float(n_max), ps)
    return out


def _buy_vars(m: State, pools: list[int]) -> list[tuple[int, float, np.ndarray]]:
    """The model's buy variables of ``pools``: (index, month its servers stop serving
    within the horizon, months they serve in each period)."""
    wanted = set(pools)
    out = []
    for i, v in enumerate(m.B.vars):
        if v["kind"] != "buy" or v.get("pool") not in wanted:
            continue
        lead = _cell(m.pools, "lead_months", v["pool"])
        life = _cell(m.pools, "lifetime_months", v["pool"])
        arrival = _cell(m.periods, "start_month", v["period"]) + lead
        end = min(m.horizon_months, arrival + life if life else math.inf)
        out.append((i, end, ledger.overlap_months(m.periods, arrival, end)))
    return out


def _fleet_coefs(
    m: State,
    pools: list[int],
    t: int,
    buys: list[tuple[int, float, np.ndarray]] | None = None,
) -> tuple[dict[int, float], float]:
    """(buy var -> share of period t's months it serves, servers owned at the start);
    ``buys``: the pools' buy variables (:func:`_buy_vars`), found here when not given
    (a model build asks for every period: 10k x 200 x 12 spent 2.3 s of CPU a build
    finding them again)."""
    start = _cell(m.periods, "start_month", t)
    months = _cell(m.periods, "months", t)
    coefs: dict[int, float] = {}
    existing = sum(_cell(m.pools, "existing_units", p) for p in pools)
    for i, end, served in _buy_vars(m, pools) if buys is None else buys:
        if served[t] > 0 and start < end:
            coefs[i] = float(served[t]) / months
    return coefs, existing


def add_staff_scale(m: State) -> None:
    """The staff saving of large owned fleets (module docstring); nothing for a problem
    whose sites cannot hold more than 1,000 servers."""
    for site, (n_max, pools) in sorted(site_fleet_bounds(m).items()):
        salary = _cell(m.pools, "staff_usd_per_admin_year", pools[0])
        buys = _buy_vars(m, pools)  # once per site: the model has ~10^5 variables at scale
        for t in range(m.n_t):
            coefs, existing = _fleet_coefs(m, pools, t, buys)
            if not coefs and existing <= SMALL_FLEET_SERVERS:
                continue
            years = _cell(m.periods, "months", t) / 12.0
            deltas = []
            for j, (length, slope) in enumerate(segments(n_max)):
                d = m.B.var(
                    f"staff[{site},{t},{j}]",
                    VarKind.STAFF,
                    integer=False,
                    ub=length,
                    pool=pools[0],
                    period=t,
                    block=j,
                )
                m.add_cost(d, salary * years * slope, "owned", {t: salary * years * slope})
                deltas.append((d, length))
            row = {d: 1.0 for d, _ in deltas}
            for i, share in coefs.items():
                row[i] = row.get(i, 0.0) - share
            m.B.row("staff_fleet", (site, t), row, "==", existing)
            for j in range(len(deltas) - 1):
                y = m.B.var(
                    f"staff_tier[{site},{t},{j}]",
                    VarKind.STAFF_TIER,
                    integer=True,
                    ub=1.0,
                    pool=pools[0],
                    period=t,
                    block=j,
                )
                (d0, l0), (d1, l1) = deltas[j], deltas[j + 1]
                m.B.row("staff_tier", (site, t, j, "fill"), {d0: 1.0, y: -l0}, ">=", 0.0)
                m.B.row("staff_tier", (site, t, j, "open"), {d1: 1.0, y: -l1}, "<=", 0.0)


__all__ = ["add_staff_scale", "saving_admins", "segments", "site_fleet_bounds"]
