"""Serving that survives a loss: N+1 (``largest_unit``, ``unit_class``, ``n_plus_1``,
``n_plus_1_units``) and failure domains (``domain_loss``, ``domain_share``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import numpy as np
import pandas as pd

from solver.core.compile import Compiled
from solver.core.formulation import domains as domain_rows
from solver.core.formulation.domains import (
    add_domain_count,
    add_domain_cover,
    add_domain_loss,
    add_domain_round,
    block_total,
    place_in_zones,
    unit_zones,
    zone_held,
)
from solver.core.formulation.fleet_rules import BlockTops, add_fleet_class, add_fleet_tops
from solver.core.formulation.state import Builder, State
from solver.core.matrix import VarKind
from solver.errors import InfeasibleError
from solver.inputs.problem import InferenceWorkload


def add_n_plus_1(
    B: Builder,
    compiled: Compiled,
    unit_capacity: dict[tuple, dict[int, float]],
    shortfall_tps: dict[tuple, dict[int, float]] | None = None,
    deploy_of: dict[int, int] | None = None,
    disagg_served: dict[tuple, dict[int, float]] | None = None,
) -> None:
    """N+1: serving capacity with its largest unit lost still meets the peak, exactly.

    One binary ``top`` per (workload, period, block, capacity class) says which class is taken
    as the largest unit lost (``largest_unit``, ``unit_class``, ``n_plus_1`` and
    ``n_plus_1_units`` rows); the derivation, the bound M_g and why the rows are exact are in
    docs/formulation/n_plus_1.md and docs/formulation/unit_class.md.

    Parameters
    ----------
    B
        The model's variables and rows.
    compiled
        The compiled problem (its workloads, demand and pools).
    unit_capacity
        (workload, period, block) -> {x variable: output tokens/s of one unit}.
    shortfall_tps
        Under ``max_served``: (workload, period, block) -> {shortfall variable: output
        tokens/s of one unit of it}; N+1 then covers what is served (``largest_unit`` is
        ``<= 1`` and ``n_plus_1_units`` is left out). None when the whole demand is served.
    deploy_of
        x variable (rented, one block) -> the deploy variable of its offering (autoscaled
        fleets), for the cuts of :mod:`solver.core.formulation.fleet_rules`.
    disagg_served
        (workload, period, block) -> {s variable: 1}: output tokens/s its disaggregated
        groups serve with their own largest unit lost (:mod:`.disagg`). Such a workload's
        ``n_plus_1`` row counts them, its ``largest_unit`` row is ``<= 1`` (a plan without
        aggregated units loses none of them; ``unit_class`` still makes a plan that has
        some take the largest class it uses as lost), and the ``n_plus_1_units`` row and
        ``fleet_small_cover`` cuts, which count aggregated units only, are left out.
    """
    disagg_served = disagg_served or {}
    mixed_names = {
        w.name
        for w in compiled.problem.workloads
        if isinstance(w, InferenceWorkload) and w.architecture != "aggregated"
    }
    workloads = {
        w.name: w
        for w in compiled.problem.workloads
        if isinstance(w, InferenceWorkload) and w.n_plus_1
    }
    if not workloads:
        return
    need_tps = block_need_tps(compiled, workloads)
    peak_tps = need_tps.groupby(level=[0, 1]).max()
    fleet_tops: dict[tuple[str, int], dict[int, BlockTops]] = defaultdict(dict)
    pools = compiled.pools
    hard_bound = (pools["availability_cap"] + pools["existing_units"]).to_numpy(dtype=float)
    for (wname, t, b), caps in unit_capacity.items():
        if wname not in workloads or (wname, t, b) not in need_tps.index:
            continue
        need = float(need_tps[(wname, t, b)])
        real = {v: cap for v, cap in caps.items() if cap > 0}
        coefs = {v: min(cap, need) if need > 0 else cap for v, cap in real.items()}
        classes: dict[float, list[int]] = defaultdict(list)
        for v, cap in coefs.items():
            classes[float(f"{cap:.12g}")].append(v)
        w = workloads[wname]
        exact_alone = not compiled.problem.provider_share_max and not w.traffic_mix
        tops: list[int] = []
        day: BlockTops = (need, [])
        fleet_tops[(wname, t)][b] = day
        for g, (cap, members) in enumerate(sorted(classes.items(), reverse=True)):
            top = B.var(
                f"top[{wname},{t},{b},{g}]",
                VarKind.TOP,
                integer=True,
                ub=1.0,
                workload=wname,
                period=t,
                block=b,
            )
            tops.append(top)
            coefs[top] = -cap
            smallest = min(real[v] for v in members)
            alone = np.ceil(peak_tps[(wname, t)] / smallest - 1e-9) + 1
            bound = max(alone, w.min_serving_units)
            if not exact_alone:
                bound = max(bound, sum(hard_bound[B.vars[v]["pool"]] for v in members))
            row = {v: 1.0 for v in members}
            for h in tops:
                row[h] = -float(bound)
            B.row("unit_class", (wname, t, b, g), row, "<=", 0.0)
            add_fleet_class(B, deploy_of or {}, members, tops, (t, b))
            day[1].append((cap, top, members))
        if shortfall_tps is not None:
            coefs.update(shortfall_tps.get((wname, t, b), {}))
        mixed = wname in mixed_names
        coefs.update(disagg_served.get((wname, t, b), {}))
        B.row(
            "largest_unit",
            (wname, t, b),
            dict.fromkeys(tops, 1.0),
            "<=" if shortfall_tps is not None or mixed else "==",
            1.0,
        )
        B.row("n_plus_1", (wname, t, b), coefs, ">=", need)
        if need > 0 and shortfall_tps is None and not mixed:
            # implied, and exact: with one unit, capacity less the largest unit is 0. It
            # keeps a demand far below a unit's capacity from passing the N+1 row inside
            # the solver's feasibility tolerance with a single unit.
            B.row("n_plus_1_units", (wname, t, b), {v: 1.0 for v in real}, ">=", 2.0)
    for (wname, t), days in fleet_tops.items():
        full_need = shortfall_tps is None and wname not in mixed_names
        add_fleet_tops(B, deploy_of or {}, workloads[wname], t, days, full_need)


def block_need_tps(compiled: Compiled, workloads: Iterable[str]) -> pd.Series:
    """Output tokens/s each (workload, period, block) must serve (the N+1 rows' D)."""
    d = compiled.demand[compiled.demand["workload"].isin(list(workloads))]
    return (
        (d["demand"] * d["tokens_per_unit"]).groupby([d["workload"], d["period"], d["block"]]).sum()
    )


def add_failure_domains(m: State) -> None:
    """Failure domains and capacity shares of online workloads (``survive_loss_of``,
    ``max_region_share``, ``max_provider_share``): ``domain_loss`` and ``domain_share`` rows
    in every period and load block (docs/formulation/domain_loss.md). Owned servers count in
    the region of their site, at provider ``owned``, and their site is one zone. Units of an
    offering listed in several zones are placed in them (:mod:`.domains`).

    Raises
    ------
    InfeasibleError
        A workload that must survive losing a zone (region, provider) can be served from one
        only.
    """
    pools = m.pools
    rules = {
        w.name: w for w in m.problem.workloads if isinstance(w, InferenceWorkload) and w.domains
    }
    if not rules:
        return
    need_tps = block_need_tps(m.compiled, rules)
    B = m.B
    where = {"region": pools["region"].to_numpy(), "provider": pools["provider"].to_numpy()}
    zones_of = unit_zones(m)
    placed = place_in_zones(m, zones_of)
    owner = {y: v for v, here in placed.items() for y in here.values()}
    for (wname, t, b), caps in m.unit_capacity.items():
        w = rules.get(wname)
        if w is None or (wname, t, b) not in need_tps.index:
            continue
        need = float(need_tps[(wname, t, b)])
        units = {v: c for v, c in caps.items() if c > 0}
        shortfall = m.shortfall_tps.get((wname, t, b), {}) if m.allow_shortfall else {}
        capped = {v: min(c, need) for v, c in units.items()}
        kinds = [k for k in ("zone", "region", "provider") if k in w.survive_loss_of]
        total = block_total(m, (wname, t, b), capped, shortfall) if kinds and need > 0 else -1
        for kind in kinds if need > 0 else []:
            if kind == "zone":
                held = zone_held(capped, zones_of, placed)
            else:
                held = defaultdict(dict)
                for v, c in capped.items():
                    held[str(where[kind][B.vars[v]["pool"]])][v] = c
            if len(held) < 2 and not shortfall:
                _one_domain(m, wname, kind, sorted(held))
            covered = None
            if domain_rows.COVER_DOMAINS and not shortfall:
                covered = add_domain_cover(m, (wname, t, b), kind, held, need, owner)
            else:
                add_domain_loss(m, total, (wname, t, b), kind, held, need)
            if not shortfall:
                add_domain_count(m, total, (wname, t, b), kind, held, need, covered)
                add_domain_round(m, (wname, t, b), kind, held, need)
        for kind in ("region", "provider"):
            share = w.max_region_share if kind == "region" else w.max_provider_share
            if share is None or share >= 1:
                continue
            domain_of = {v: str(where[kind][B.vars[v]["pool"]]) for v in units}
            for r in sorted(set(domain_of.values())):
                coefs = {
                    v: c * ((1.0 if domain_of[v] == r else 0.0) - share) for v, c in units.items()
                }
                B.row("domain_share", (wname, t, b, kind, r), coefs, "<=", 0.0)


def _one_domain(m: State, wname: str, kind: str, domains: list[str]) -> None:
    """Refuse a workload that must survive losing a ``kind`` but can be served from one."""
    i = next(j for j, x in enumerate(m.problem.workloads) if x.name == wname)
    more = {
        "zone": "allow an offering listed in two zones (catalogs/zones.csv) or a second region",
        "region": "allow a second region (the problem's or the workload's regions:, modes or "
        "tiers)",
        "provider": "allow a second provider (the problem's or the workload's providers:, "
        "modes or tiers)",
    }[kind]
    raise InfeasibleError(
        f"workload {wname!r} can be served from one {kind} only "
        f"({', '.join(domains) or 'none'}), so it cannot survive losing it",
        field=f"workloads[{i}].survive_loss_of",
        fix=f"{more}, or drop {kind!r} from survive_loss_of",
    )
