"""Surviving the loss of an availability zone (``survive_loss_of: [zone]``): each serving
unit placed in one of its offering's zones (``zone`` variables, ``zone_place`` rows) and,
for every zone, the capacity outside it covering the block's peak (``domain_loss`` rows of
kind ``zone``). docs/formulation/domain_loss.md gives the rows and why they are exact.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pandas as pd

from solver.core.compile import Compiled
from solver.core.cuts import mir_coefficients
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


def zone_held(
    units: dict[int, float],
    zones_of: dict[int, tuple[str, ...]],
    placed: dict[int, dict[str, int]],
) -> dict[str, dict[int, float]]:
    """Zone -> {variable: tokens/s per unit} of the capacity placed in it: an x variable of
    one zone, or the ``zone`` variables of one placed in several (``units``: x -> tokens/s
    per unit, already counted for at most the block's need)."""
    held: dict[str, dict[int, float]] = defaultdict(dict)
    for v, c in units.items():
        zones = zones_of[v]
        if len(zones) == 1:
            held[zones[0]][v] = c
        else:
            for z, y in placed[v].items():
                held[z][y] = c
    return dict(held)


def add_domain_loss(
    m: State,
    total: int,
    key: tuple[str, int, int],
    kind: str,
    held: dict[str, dict[int, float]],
    need_tps: float,
) -> None:
    """For one (workload, period, block) and kind of domain: each domain's capacity
    aggregated once (a ``domain_tps`` variable, ``domain_held`` row) and, for each, the
    capacity of all (``total``, :func:`block_total`) less it >= ``need_tps``
    (``domain_loss``). The rows hold the same plans as one row per domain over every
    unit outside it, with one entry per unit instead of one per unit and domain."""
    B = m.B
    for r in sorted(held):
        inside = B.var(
            f"held[{key[0]},{key[1]},{key[2]},{kind},{r}]",
            VarKind.DOMAIN_TPS,
            integer=False,
            period=key[1],
            block=key[2],
            workload=key[0],
        )
        row = {inside: 1.0, **{j: -c for j, c in held[r].items()}}
        B.row("domain_held", (*key, kind, r), row, "==", 0.0)
        B.rows.append(
            new_row("domain_loss", (*key, kind, r), {total: 1.0, inside: -1.0}, ">=", need_tps)
        )


#: Whether :func:`add_domain_cover` replaces :func:`add_domain_loss` (each domain's
#: capacity covered at most the need x its deployments). On: on the seed the root LP rises
#: ([provider] $491,860.88 -> $494,513.45) and the gap at 60 s falls ([region] 6.76% ->
#: 6.55%, [provider] 8.02% -> 7.66%; bench/RESULTS.md, 2026-12-02, load 12-17).
COVER_DOMAINS = True


def add_domain_cover(
    m: State,
    key: tuple[str, int, int],
    kind: str,
    held: dict[str, dict[int, float]],
    need_tps: float,
    owner: dict[int, int],
) -> int:
    """``domain_loss`` over covered capacity: for one (workload, period, block) and kind of
    domain, each domain's capacity counted for at most the need while it is deployed.

    For each domain r a ``domain_tps`` variable ``H_r`` <= the capacity held in r
    (``domain_held``) and <= D x the deployments of its offerings (``domain_cover``: the
    ``deploy`` variables of its units, a unit variable itself where it has none); ``C`` =
    the sum of the ``H_r`` (``domain_covered``) and, for each r, ``C - H_r >= D``
    (``domain_loss``). Every plan meets them (``H_r`` = min(held, D) when deployed, 0
    when not) and they imply the rows of :func:`add_domain_loss`; the LP relaxation can no
    longer hold a whole need's capacity in a domain on a fraction of a deployment
    (docs/formulation/domain_cover.md). Returns ``C``'s index.

    Parameters
    ----------
    m
        The model being built.
    key
        (workload, period, block).
    kind
        ``zone``, ``region`` or ``provider``.
    held
        Domain -> {unit variable: output tokens/s per unit, at most the need}.
    need_tps
        ``D``: the block's need in output tokens/s.
    owner
        A zone placement variable -> its unit (x) variable.
    """
    B = m.B
    inside: dict[str, int] = {}
    for r in sorted(held):
        h = B.var(
            f"held[{key[0]},{key[1]},{key[2]},{kind},{r}]",
            VarKind.DOMAIN_TPS,
            integer=False,
            period=key[1],
            block=key[2],
            workload=key[0],
        )
        row = {h: 1.0, **{j: -c for j, c in held[r].items()}}
        B.row("domain_held", (*key, kind, r), row, "<=", 0.0)
        deployed: dict[int, float] = {}
        for j in held[r]:
            deployed[m.deploy_of.get(owner.get(j, j), j)] = -need_tps
        if any(j not in held[r] for j in deployed):  # else implied: each unit <= D
            B.row("domain_cover", (*key, kind, r), {h: 1.0, **deployed}, "<=", 0.0)
        inside[r] = h
    covered = B.var(
        f"covered[{key[0]},{key[1]},{key[2]},{kind}]",
        VarKind.DOMAIN_TPS,
        integer=False,
        period=key[1],
        block=key[2],
        workload=key[0],
    )
    row = {covered: 1.0, **{h: -1.0 for h in inside.values()}}
    B.row("domain_covered", (*key, kind), row, "==", 0.0)
    for r, h in inside.items():
        B.rows.append(
            new_row("domain_loss", (*key, kind, r), {covered: 1.0, h: -1.0}, ">=", need_tps)
        )
    return covered


#: The most domains used that a ``domain_count`` row is written for (R = 2 .. this): the
#: rows beyond add nothing on the seed (bound $389,722.78 at the root with R up to 8 and
#: with R up to 172; docs/formulation/domain_count.md).
DOMAIN_COUNT_MAX = 8

#: The smallest unit capacity, as a share of the block's need, that a weighted
#: ``domain_count`` row takes as the threshold of a "large" unit: classes from D/8 up give
#: the seed's [region] root bound ($405,262.52), the same as every class ($405,262.52);
#: from D/4 up give $389,722.78 (the unweighted rows alone).
DOMAIN_COUNT_SHARE = 1 / 8


def add_domain_count(
    m: State,
    total: int,
    key: tuple[str, int, int],
    kind: str,
    held: dict[str, dict[int, float]],
    need_tps: float,
    covered: int | None = None,
) -> None:
    """``domain_count`` rows for one (workload, period, block) and kind of domain.

    For a threshold ``theta`` (the smallest unit capacity, and each capacity of at least
    :data:`DOMAIN_COUNT_SHARE` x the need), ``P`` counts the deployments of units of at
    least ``theta`` (each one's ``deploy`` variable, else its units) and ``S`` is the
    capacity of the smaller units, each one variable (``domain_sum`` rows), so that a row
    has three entries. For R = 2 .. :data:`DOMAIN_COUNT_MAX`:
    ``T + D/(R(R-1)) P + 2/(R-1) S >= D (R+1)/(R-1)``, the secant at whole R of
    ``T >= D R/(R-1)`` for R domains used (S = 0 at the smallest threshold), up to R one
    less than the domains that hold units (the sum of the ``domain_loss`` rows gives the
    last point). Valid for every plan (docs/formulation/domain_count.md); left out under
    a shortfall.

    Parameters
    ----------
    m
        The model being built.
    total
        The block's capacity variable ``T`` (output tokens/s, :func:`block_total`).
    key
        (workload, period, block).
    kind
        ``zone``, ``region`` or ``provider``.
    held
        Domain -> {unit variable: output tokens/s per unit, at most the need}.
    need_tps
        ``D``: the block's need in output tokens/s.
    """
    cap = {v: c for vs in held.values() for v, c in vs.items()}
    if not cap:
        return
    classes = sorted(set(cap.values()))
    thresholds = [classes[0]] + [c for c in classes[1:] if c >= DOMAIN_COUNT_SHARE * need_tps]
    for theta in thresholds:
        count = sorted({m.deploy_of.get(v, v) for v, c in cap.items() if c >= theta})
        small = {v: c for v, c in cap.items() if c < theta}
        top = min(len(count), len(held), DOMAIN_COUNT_MAX + 1)
        if top <= 2:
            continue
        p = _sum_var(m, key, kind, ("deployments", theta), dict.fromkeys(count, 1.0))
        s = _sum_var(m, key, kind, ("small", theta), small) if small else None
        lhs = covered if covered is not None and theta == thresholds[0] else total
        for r in range(2, top):
            row = {lhs: 1.0, p: need_tps / (r * (r - 1))}
            if s is not None:
                row[s] = 2.0 / (r - 1)
            rhs = need_tps * (r + 1) / (r - 1)
            m.B.row("domain_count", (*key, kind, theta, r), row, ">=", rhs)


#: The divisors of the ``domain_round`` rows: the block's need, and each unit capacity of
#: at least :data:`DOMAIN_COUNT_SHARE` of it over each of these. On the seed with
#: ``[region]`` the root LP is $460,365.45 without the rows, $463,743.12 with the
#: capacities alone (the rows over every threshold: the same), $468,792.15 with their
#: halves too, $468,864.03 with halves to quarters (2026-12-02, docs/formulation/domain_round.md).
DOMAIN_ROUND_PARTS = (1, 2)

#: Whether :func:`add_domain_round` writes its rows. Off: on the seed they lift the root
#: LP ([region] $460,365.45 -> $468,792.15) but the larger model leaves HiGHS less done in
#: 60 s on a loaded machine (paired runs at load 13-15, bench/RESULTS.md: [region] bound
#: $469,516 against $465,550 but plan $507,354 against $496,187, gap 7.46% against
#: 6.17%; [provider] bound $498,899 against $501,829, gap 4.26% against 3.70%).
ROUND_DOMAINS = False


def add_domain_round(
    m: State,
    key: tuple[str, int, int],
    kind: str,
    held: dict[str, dict[int, float]],
    need_tps: float,
) -> None:
    """``domain_round`` rows: the ``domain_count`` secants of each domain's loss in whole
    units, rounded.

    For each domain r, ``sum_{k not in r} a_k u_k >= D`` over whole units u_k; for a
    divisor d its mixed-integer rounding (:func:`solver.core.cuts.mir_coefficients`) is
    ``sum_{k not in r} g_k u_k >= K = ceil(D / d)``, the loss row of units counted by g_k.
    So with ``G`` the block's units so counted (one ``domain_sum`` variable) and ``P`` the
    deployments (:func:`add_domain_count`'s), for R = 2 .. :data:`DOMAIN_COUNT_MAX`:
    ``G + K/(R(R-1)) P >= K (R+1)/(R-1)``. The divisors: the need and each capacity of at
    least :data:`DOMAIN_COUNT_SHARE` of it over :data:`DOMAIN_ROUND_PARTS`. Valid for
    every plan (docs/formulation/domain_round.md); left out under a shortfall, and unless
    :data:`ROUND_DOMAINS` is set.

    Parameters
    ----------
    m
        The model being built.
    key
        (workload, period, block).
    kind
        ``zone``, ``region`` or ``provider``.
    held
        Domain -> {unit variable (whole units): output tokens/s per unit, at most the need}.
    need_tps
        ``D``: the block's need in output tokens/s.
    """
    if not ROUND_DOMAINS:
        return
    cap = {v: c for vs in held.values() for v, c in vs.items()}
    count = sorted({m.deploy_of.get(v, v) for v in cap})
    top = min(len(count), len(held), DOMAIN_COUNT_MAX + 1)
    if top <= 2 or need_tps <= 0:
        return
    p = _sum_var(m, key, kind, ("deployments", min(cap.values())), dict.fromkeys(count, 1.0))
    large = sorted({c for c in cap.values() if c >= DOMAIN_COUNT_SHARE * need_tps})
    divisors = sorted({need_tps, *(c / j for c in large for j in DOMAIN_ROUND_PARTS)})
    units = list(cap)
    a = np.fromiter(cap.values(), dtype=float, count=len(units))
    for d in divisors:
        k = float(np.ceil(need_tps / d - 1e-9))
        g = mir_coefficients(a, need_tps, d)
        tag = float(f"{d:.6g}")
        total = _sum_var(m, key, kind, ("rounded", tag), dict(zip(units, g.tolist(), strict=True)))
        for r in range(2, top):
            row = {total: 1.0}
            row[p] = row.get(p, 0.0) + k / (r * (r - 1))  # G is P when every g_k is 1
            m.B.row("domain_round", (*key, kind, tag, r), row, ">=", k * (r + 1) / (r - 1))


def _sum_var(
    m: State, key: tuple[str, int, int], kind: str, what: tuple, coefs: dict[int, float]
) -> int:
    """A ``domain_units`` variable = sum(coefs[v] x v) (a ``domain_sum`` row); its index.
    One variable per sum: a sum already made (for another kind, threshold or divisor) is
    reused."""
    same = frozenset(coefs.items())
    if same in m.domain_sums:
        return m.domain_sums[same]
    y = m.B.var(
        f"dsum[{','.join(str(part) for part in (*key, kind, *what))}]",
        VarKind.DOMAIN_UNITS,
        integer=False,
        period=key[1],
        block=key[2],
        workload=key[0],
    )
    row = {y: 1.0, **{v: -c for v, c in coefs.items()}}
    m.B.row("domain_sum", (*key, kind, *what), row, "==", 0.0)
    m.domain_sums[same] = y
    return y


def block_total(
    m: State, key: tuple[str, int, int], units: dict[int, float], shortfall: dict[int, float]
) -> int:
    """A ``domain_tps`` variable = the block's serving capacity (each unit counted for at
    most the need) plus any shortfall (``domain_total`` row); its index."""
    total = m.B.var(
        f"total[{key[0]},{key[1]},{key[2]}]",
        VarKind.DOMAIN_TPS,
        integer=False,
        period=key[1],
        block=key[2],
        workload=key[0],
    )
    row = {total: 1.0, **{v: -c for v, c in units.items()}}
    for j, c in shortfall.items():
        row[j] = row.get(j, 0.0) - c
    m.B.row("domain_total", key, row, "==", 0.0)
    return total


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
