"""Surviving the loss of an availability zone (``survive_loss_of: [zone]``), checked from
the plan's line items and the catalog's zones alone: every serving line places its units
in zones its offering is listed in (catalogs/zones.csv), and with any one zone lost the
units left (each counted for at most the demand) meet the block's peak. And the
operability limits a plan that survives a loss is usually asked to keep (max_providers,
min_units_per_deployment, max_deployments), from the serving lines.
"""

from __future__ import annotations

from collections import defaultdict

from solver.inputs.catalog.zones import offering_zones, zones_by_type
from solver.inputs.problem import InferenceWorkload
from solver.plan import LineItem
from solver.trust.verify.capacity import _average_tps, _mix_output_factor, _peak_scale
from solver.trust.verify.context import REL_TOL
from solver.trust.verify.run import _Run
from solver.trust.verify.unit_facts import _known, _unit_tokens_per_s
from solver.units import Item

# (tokens/s of one unit, units, {zone: units placed there})
ZonedUnits = tuple[float, float, dict[str, float]]


def _check_zone_loss(run: _Run) -> None:
    """``zone units placed`` (each line's units by zone add up to its units, in zones the
    catalog lists for its offering) and ``peak met with one zone lost`` (every block)."""
    p, ctx = run.p, run.ctx
    rules = {
        w.name: w
        for w in p.workloads
        if isinstance(w, InferenceWorkload) and "zone" in w.survive_loss_of
    }
    if not rules or p.objective == "max_served":
        return
    zoned = _zoned_units(run, rules)
    for w in rules.values():
        for period in w.periods or ctx.period_names:
            for bname, block in ctx.blocks.items():
                need = _average_tps(w) * _peak_scale(ctx, p, w, period, block)
                need *= _mix_output_factor(w)
                _check_block(
                    run, f"{w.name} {period}/{bname}", need, zoned[(w.name, period, bname)]
                )


def _check_block(run: _Run, where: str, need_tps: float, units: list[ZonedUnits]) -> None:
    """With each zone any line places units in lost, the units left meet ``need_tps``."""
    zones = sorted({z for _, _, placed in units for z in placed}) or ["(none)"]
    for z in zones:
        left = sum(min(cap, need_tps) * (n - placed.get(z, 0.0)) for cap, n, placed in units)
        run.c.check(
            "peak met with one zone lost",
            need_tps <= left + REL_TOL * max(1.0, need_tps),
            f"{where} without {z}: {left:.1f} < {need_tps:.1f} tokens/s",
        )


def _zoned_units(run: _Run, rules: dict[str, InferenceWorkload]) -> dict[tuple, list[ZonedUnits]]:
    """Per (workload, period, block): each serving line's unit capacity, units and units by
    zone, after checking its placement against the catalog's zones."""
    listed = zones_by_type(run.catalog.zones)
    out: dict[tuple, list[ZonedUnits]] = defaultdict(list)
    for item in run.plan.line_items:
        w = rules.get(item.workload)
        if w is None or item.item not in {Item.RENT, Item.USE} or item.units <= 0.5:
            continue
        if not _known(item, run.catalog):
            continue
        placed = _placement(run, item, offering_zones(listed, *_where(item)))
        cap = _unit_tokens_per_s(
            w,
            run.specs[w.name],
            run.ctx.unit(item),
            item,
            run.catalog,
            run.p.memory_headroom,
            calibration=run.calibration_of(w, run.specs[w.name]),
            problem=run.p,
        )
        for block in [item.block] if item.block else list(run.ctx.blocks):
            out[(w.name, item.period, block)].append((cap, item.units, placed))
    return out


def _where(item: LineItem) -> tuple[str, str, str]:
    """(provider, region, instance type) of a serving line; an owned server's type is its
    server id, the first part of its offering ``server@site``."""
    if item.provider == "owned":
        return item.provider, item.region, item.offering.split("@")[0]
    return item.provider, item.region, item.instance_type


def _placement(run: _Run, item: LineItem, allowed: tuple[str, ...]) -> dict[str, float]:
    """The line's units by zone, checked: whole units, in the offering's zones, adding up
    to its units. A line without them counts as all its units in one zone that holds them
    all (its first allowed zone), so losing that zone loses them all."""
    placed = dict(item.zone_units or {})
    label = f"{item.offering} {item.period}/{item.block or 'all blocks'}"
    if not placed:
        run.c.check(
            "zone units placed",
            len(allowed) == 1,
            f"{label}: no zone_units; its offering is listed in {', '.join(allowed)}",
        )
        return {allowed[0]: item.units}
    outside = sorted(set(placed) - set(allowed))
    run.c.check(
        "zone units placed",
        not outside,
        f"{label}: {', '.join(outside)} not among its zones ({', '.join(allowed)})",
    )
    whole = all(n >= 0 and abs(n - round(n)) <= 1e-6 for n in placed.values())
    total = sum(placed.values())
    run.c.check(
        "zone units placed",
        whole and abs(total - item.units) <= 1e-6 * max(1.0, item.units),
        f"{label}: zone_units {placed} add up to {total:g}, not its {item.units:g} units",
    )
    return placed


def _check_operability(run: _Run) -> None:
    """``operability limits``: per serving workload and period, the providers and the
    offerings it serves from (per block under ``fleet: per_block``) within max_providers and
    max_deployments, and every offering in use with at least min_units_per_deployment
    units in every block of its deployment, from the plan's serving lines alone."""
    for w in run.p.workloads:
        if not isinstance(w, InferenceWorkload) or not w.operability_limits:
            continue
        units: dict[tuple[str, str, str], float] = defaultdict(float)  # period, block, offering
        providers: dict[str, set[str]] = defaultdict(set)
        for item in run.plan.line_items:
            if item.workload != w.name or item.item not in {Item.RENT, Item.USE}:
                continue
            if item.units <= 0.5:
                continue
            providers[item.period].add(item.provider)
            for block in [item.block] if item.block else list(run.ctx.blocks):
                units[(item.period, block, item.offering)] += item.units
        for period, names in providers.items():
            if w.max_providers is not None:
                run.c.check(
                    "operability limits",
                    len(names) <= w.max_providers,
                    f"{w.name} {period}: {len(names)} providers > max_providers "
                    f"{w.max_providers} ({', '.join(sorted(names))})",
                )
        _check_deployments(run, w, units)


def _check_deployments(
    run: _Run, w: InferenceWorkload, units: dict[tuple[str, str, str], float]
) -> None:
    """max_deployments and min_units_per_deployment over (period, block, offering) units."""
    per_block = w.fleet == "per_block"
    deployments: dict[tuple[str, str], set[str]] = defaultdict(set)
    for period, block, offering in units:
        deployments[(period, block if per_block else "")].add(offering)
    for (period, block), offerings in deployments.items():
        if w.max_deployments is not None:
            run.c.check(
                "operability limits",
                len(offerings) <= w.max_deployments,
                f"{w.name} {period}{'/' + block if block else ''}: {len(offerings)} "
                f"offerings > max_deployments {w.max_deployments}",
            )
        if w.min_units_per_deployment is None:
            continue
        for offering in offerings:
            blocks = [block] if per_block else list(run.ctx.blocks)
            for b in blocks:
                n = units.get((period, b, offering), 0.0)
                run.c.check(
                    "operability limits",
                    n >= w.min_units_per_deployment - 1e-6,
                    f"{w.name} {period}/{b} {offering}: {n:g} units < "
                    f"min_units_per_deployment {w.min_units_per_deployment}",
                )
