"""Staff by fleet size in the MIP (issue 28): the saving of a site past 1,000 servers.

Every owned server's hosting carries staff at its site's rate for a fleet of at most
1,000 servers (140 servers per administrator by default; solver/inputs/staff.py). A site
whose staff goes by fleet size needs fewer administrators per server past 1,000, so its
staff cost is ``salary x admins(N)``, below ``salary x N / 140``. This module adds that
saving, exactly, as a piecewise-linear function of the site's fleet in each period:

- ``N[s,t]`` = servers owned at the start + each purchase x the share of the period's
  months it is in service (the period's average fleet at the site);
- the incremental formulation: ``N = sum_j delta_j``, ``0 <= delta_j <= L_j`` (the
  segment lengths between :data:`solver.inputs.staff.BREAKPOINTS_SERVERS`), binaries
  ``y_j`` with ``delta_j >= L_j y_j`` and ``delta_{j+1} <= L_{j+1} y_j`` so segments fill
  in order (the headcount is concave up to 50,000 servers, so a minimiser would fill the
  later, cheaper segments first without them);
- cost ``salary x months / 12 x sum_j slope_j delta_j`` in the period, with ``slope_j``
  the slope of ``admins(N) - N / 140`` on segment j (0 on the first).

Nothing is added for a site that cannot hold more than 1,000 servers (its power cap over
its smallest server's maximum power), nor for a site with a flat staff figure or ratio:
the hosting is then exact. Rows: ``staff_fleet[site,period]`` and
``staff_tier[site,period,segment,fill|open]``; variables of kind ``staff`` (the deltas; their
cost is the plan's ``staff_scale`` line) and ``staff_tier`` (the binaries).
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from solver.core import ledger
from solver.inputs.staff import (
    BREAKPOINTS_SERVERS,
    SERVERS_PER_ADMIN_MEDIUM,
    admins,
)

#: Fleet size up to which the hosting's staff is exact (no rows are added below it).
SMALL_FLEET_SERVERS = BREAKPOINTS_SERVERS[0]


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


def site_fleet_bounds(m) -> dict[str, tuple[float, list[int]]]:
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
        smallest_kw = min(float(pools["power_kw_max"].iat[p]) for p in ps)
        cap_kw = float(pools["site_power_cap_kw"].iat[ps[0]])
        n_max = math.floor(cap_kw / smallest_kw + 1e-9) if smallest_kw > 0 else math.inf
        if SMALL_FLEET_SERVERS < n_max < math.inf:
            out[site] = (float(n_max), ps)
    return out


def _fleet_coefs(m, pools: list[int], t: int) -> tuple[dict[int, float], float]:
    """(buy var -> share of period t's months it serves, servers owned at the start)."""
    start = float(m.periods["start_month"].iat[t])
    months = float(m.periods["months"].iat[t])
    coefs: dict[int, float] = {}
    existing = 0.0
    for p in pools:
        pool = m.pools.iloc[p]
        existing += float(pool["existing_units"])
    for i, v in enumerate(m.B.vars):
        if v["kind"] != "buy" or v.get("pool") not in pools:
            continue
        pool = m.pools.iloc[v["pool"]]
        arrival = float(m.periods["start_month"].iat[v["period"]]) + float(pool["lead_months"])
        life = float(pool["lifetime_months"])
        end = min(m.horizon_months, arrival + life if life else math.inf)
        served = ledger.overlap_months(m.periods.iloc[[t]], arrival, end)[0]
        if served > 0 and start < end:
            coefs[i] = float(served) / months
    return coefs, existing


def add_staff_scale(m) -> None:
    """The staff saving of large owned fleets (module docstring); nothing for a problem
    whose sites cannot hold more than 1,000 servers."""
    for site, (n_max, pools) in sorted(site_fleet_bounds(m).items()):
        salary = float(m.pools["staff_usd_per_admin_year"].iat[pools[0]])
        for t in range(m.n_t):
            coefs, existing = _fleet_coefs(m, pools, t)
            if not coefs and existing <= SMALL_FLEET_SERVERS:
                continue
            years = float(m.periods["months"].iat[t]) / 12.0
            deltas = []
            for j, (length, slope) in enumerate(segments(n_max)):
                d = m.B.var(
                    f"staff[{site},{t},{j}]",
                    "staff",  # VarKind.STAFF
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
                    "staff_tier",  # VarKind.STAFF_TIER (the model imports this module)
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
