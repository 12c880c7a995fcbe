"""The fleet as a whole: steady fleets and switching, owned and reserved units against use,
availability, quotas, site power and staff at scale.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import cast

import pandas as pd

from solver.inputs import staff as staff_figures
from solver.inputs.load import block_changes, resolve_load
from solver.inputs.problem import InferenceWorkload
from solver.trust.verify.context import REL_TOL, _le
from solver.trust.verify.run import _Run
from solver.trust.verify.unit_facts import _staff_by_size, _staff_salary
from solver.units import DAYS_PER_MONTH, RESERVED_TERM_MONTHS, Item, Mode, server_and_site


def _check_steady_fleets(run: _Run) -> None:
    """``fleet: autoscale``: every rented offering a workload runs in a period runs at
    least one unit in every load block; ``flat``: the same units in every block."""
    steady = {
        w.name: w.fleet
        for w in run.p.workloads
        if isinstance(w, InferenceWorkload) and w.fleet != "per_block"
    }
    if not steady:
        return
    blocks = list(run.ctx.blocks)
    units: dict[tuple, dict[str, float]] = defaultdict(dict)
    for item in run.plan.line_items:
        if item.item == "rent" and item.workload in steady and item.units > 0:
            key = (item.workload, item.period, item.provider, item.region, item.offering)
            units[key][item.block] = units[key].get(item.block, 0.0) + item.units
    for (wname, period, provider, region, offering), by_block in sorted(units.items()):
        counts = [by_block.get(b, 0.0) for b in blocks]
        where = f"{wname} {period} {provider}/{region}/{offering}: units by block {counts}"
        if steady[wname] == "flat":
            c_ok = max(counts) - min(counts) <= 1e-9
            run.c.check("flat fleet: the same units in every block", c_ok, where)
        else:
            c_ok = min(counts) >= 1 - 1e-9
            run.c.check("autoscaled fleet: a deployed offering runs all day", c_ok, where)


def _check_switching(run: _Run) -> None:
    """``switching_cost_usd``: the plan's ``switching_penalty_usd`` is the units started
    within the day, from its rented serving lines by load block: for each offering and
    period, sum over the pairs of blocks the day passes between (b -> c, n times a day) of
    n x max(0, units in c - units in b), x the workload's cost x the period's days (a
    line's hours / its block's hours a day)."""
    cost = {
        w.name: w.switching_cost_usd
        for w in run.p.workloads
        if isinstance(w, InferenceWorkload) and w.switching_cost_usd > 0
    }
    expected = 0.0
    if cost:
        load = resolve_load(run.p)
        index = {name: b for b, name in enumerate(load.names)}
        units: dict[tuple, dict[int, float]] = defaultdict(dict)
        days: dict[str, float] = {}
        for item in run.plan.line_items:
            if item.item == "rent" and item.workload in cost and item.block in index:
                b = index[item.block]
                key = (item.workload, item.period, item.provider, item.region, item.offering)
                units[key][b] = units[key].get(b, 0.0) + item.units
                days[item.period] = item.hours / load.hours_per_day[b]
        changes = block_changes(load)
        for key, by_block in units.items():
            started = sum(
                n * max(0.0, by_block.get(c, 0.0) - by_block.get(b, 0.0))
                for (b, c), n in changes.items()
            )
            expected += cost[key[0]] * started * days[key[1]]
    claimed = run.plan.switching_penalty_usd
    run.c.check(
        "switching penalty recomputed from the units by block",
        abs(claimed - expected) <= REL_TOL * max(1.0, expected) + 0.005,
        f"${claimed:,.2f} vs recomputed ${expected:,.2f}",
    )


def _check_fleet(run: _Run) -> None:
    """Owned and reserved units cover what is in use; availability caps."""
    c = run.c
    ctx = run.ctx
    p = run.p
    catalog = run.catalog
    units_in_use = run.units_in_use
    bought = run.bought
    committed = run.committed
    for (offering, mode, period, bname), units in units_in_use.items():
        if mode == Mode.OWNED:
            server_id, site_id = server_and_site(offering)
            srv = cast(pd.Series, catalog.servers.loc[server_id])  # one row of a unique index
            lead = float(srv["lead_time_days"]) / DAYS_PER_MONTH
            life = float(srv["lifetime_years"]) * 12
            have: float = sum(
                e.units for e in p.existing_fleet if e.server == server_id and e.site == site_id
            )
            end = ctx.start_month[period] + ctx.months[period]
            have += sum(
                n
                for t, n in bought.get(offering, [])
                if ctx.start_month[t] + lead <= ctx.start_month[period] + 1e-9
                and end <= ctx.start_month[t] + lead + life + 1e-9
            )
            c.check(
                "owned units cover use",
                units <= have + 1e-9,
                f"{offering} {period}: {units:g} in use, {have:g} delivered",
            )
        elif mode in RESERVED_TERM_MONTHS:
            term = RESERVED_TERM_MONTHS[mode]
            end = ctx.start_month[period] + ctx.months[period]
            have = sum(
                n
                for t, n in committed.get((offering, mode), [])
                if ctx.start_month[t] <= ctx.start_month[period]
                and end <= ctx.start_month[t] + term + 1e-9
            )
            have += sum(
                r.units
                for r in p.existing_reservations
                if r.offering == offering and r.mode == mode and end <= r.months_remaining + 1e-9
            )
            c.check(
                "reserved units cover use",
                units <= have + 1e-9,
                f"{offering} {mode} {period}: {units:g} in use, {have:g} reserved",
            )
            cap = p.availability_caps.get(
                offering, int(catalog.offerings.loc[offering, "availability_cap_instances"])
            )
            c.check("availability", have <= cap + 1e-9, f"{offering} {mode}: {have:g} > {cap}")
        else:
            cap = p.availability_caps.get(
                offering, int(catalog.offerings.loc[offering, "availability_cap_instances"])
            )
            c.check(
                "availability",
                units <= cap + 1e-9,
                f"{offering} {mode} {period}/{bname}: {units:g} > {cap}",
            )


def _check_quotas(run: _Run) -> None:
    """Cloud accelerators in use within each quota."""
    c = run.c
    p = run.p
    catalog = run.catalog
    units_in_use = run.units_in_use
    for q in p.quotas:
        per_slot: dict[tuple, float] = defaultdict(float)
        for (offering, mode, period, bname), units in units_in_use.items():
            if mode == Mode.OWNED:
                continue
            off = catalog.offerings.loc[offering]
            if off["provider"] != q.provider or (q.region and off["region"] != q.region):
                continue
            if q.accelerator and off["accelerator_id"] != catalog.resolve_accelerator(
                q.accelerator
            ):
                continue
            per_slot[(period, bname)] += units * int(off["accelerators_per_instance"])
        for slot, n in per_slot.items():
            c.check(
                "quota",
                n <= q.max_accelerators + 1e-9,
                f"{q.provider}/{q.region or '*'}/{q.accelerator or '*'} {slot}: {n:g} > "
                f"{q.max_accelerators}",
            )


def _check_power(run: _Run) -> None:
    """Owned servers in service at a site within its power cap."""
    c = run.c
    ctx = run.ctx
    p = run.p
    catalog = run.catalog
    bought = run.bought
    fleet_kw: dict[tuple[str, str], float] = defaultdict(float)
    for name in ctx.period_names:
        for e in p.existing_fleet:
            kw_cell = cast(float, catalog.servers.loc[e.server, "power_kw"])  # a number cell
            fleet_kw[(e.site, name)] += e.units * float(kw_cell)
        for offering, buys in bought.items():
            server_id, site_id = server_and_site(offering)
            srv = cast(pd.Series, catalog.servers.loc[server_id])  # one row of a unique index
            lead = float(srv["lead_time_days"]) / DAYS_PER_MONTH
            life = float(srv["lifetime_years"]) * 12
            end = ctx.start_month[name] + ctx.months[name]
            fleet_kw[(site_id, name)] += sum(
                n * float(srv["power_kw"])
                for t, n in buys
                if ctx.start_month[t] + lead <= ctx.start_month[name] + 1e-9
                and ctx.start_month[t] <= ctx.start_month[name]
                and end <= ctx.start_month[t] + lead + life + 1e-9
            )
    for (site_id, name), kw in fleet_kw.items():
        cap = float(cast(float, catalog.sites.loc[site_id, "power_cap_kw"]))  # a number cell
        c.check("site power cap", _le(kw, cap), f"{site_id} {name}: {kw:.0f} kW > {cap:.0f}")


def _admins_by_size(n: float) -> float:
    """Administrators a site of ``n`` servers needs by default, from the two published
    points (140 per admin at 1,000 servers, 1,000 at 50,000): the ratio log-linear in
    size at the fleet sizes solver/inputs/staff.py names, the headcount linear between
    them, flat ratios outside."""
    n0, r0 = staff_figures.MEDIUM_SITE_SERVERS, staff_figures.SERVERS_PER_ADMIN_MEDIUM
    n1, r1 = staff_figures.LARGE_SITE_SERVERS, staff_figures.SERVERS_PER_ADMIN_LARGE
    if n <= n0:
        return n / r0
    if n >= n1:
        return n / r1
    sizes = list(staff_figures.BREAKPOINTS_SERVERS)
    heads = [
        a / (r0 * math.exp(math.log(a / n0) * math.log(r1 / r0) / math.log(n1 / n0))) for a in sizes
    ]
    for a, b, ha, hb in zip(sizes, sizes[1:], heads, heads[1:], strict=False):
        if n <= b:
            return ha + (hb - ha) * (n - a) / (b - a)
    return n / r1  # pragma: no cover


def _check_staff_scale(run: _Run) -> None:
    """Each site's staff saving past 1,000 servers (``staff_scale`` lines) recomputed from
    the servers the plan holds there: existing, and each purchase for its months in
    service, averaged over the period; salary x years x (admins(N) - N / 140)."""
    ctx, p, catalog = run.ctx, run.p, run.catalog
    server_months: dict[tuple[str, str], float] = defaultdict(float)
    for e in p.existing_fleet:
        for name in ctx.period_names:
            server_months[(e.site, name)] += e.units * ctx.months[name]
    for offering, buys in run.bought.items():
        server_id, site_id = server_and_site(offering)
        srv = cast(pd.Series, catalog.servers.loc[server_id])  # one row of a unique index
        lead = float(srv["lead_time_days"]) / DAYS_PER_MONTH
        life = float(srv["lifetime_years"]) * 12
        for t, n in buys:
            arrival = ctx.start_month[t] + lead
            for name in ctx.period_names:
                served = ctx.overlap_months(name, arrival, min(ctx.horizon, arrival + life))
                server_months[(site_id, name)] += n * served
    expected: dict[tuple[str, str], float] = {}
    for (site_id, name), months in server_months.items():
        site = cast(pd.Series, catalog.sites.loc[site_id])  # a unique index: one row
        n = months / ctx.months[name]
        if n > staff_figures.MEDIUM_SITE_SERVERS and _staff_by_size(site):
            heads = _admins_by_size(n) - n / staff_figures.SERVERS_PER_ADMIN_MEDIUM
            expected[(site_id, name)] = _staff_salary(site) * ctx.months[name] / 12.0 * heads
    stated = {
        (i.region, i.period): i.cost_usd for i in run.plan.line_items if i.item == Item.STAFF_SCALE
    }
    for key in sorted(set(expected) | set(stated)):
        want, got = expected.get(key, 0.0), stated.get(key, 0.0)
        run.c.check(
            "staff saving past 1,000 servers recomputed",
            abs(want - got) <= 0.01 + 1e-6 * abs(want),
            f"{key[0]} {key[1]}: {got:,.2f} vs recomputed {want:,.2f}",
        )
        run.total_cost += want
        run.period_cost[key[1]] += want
        run.provider_cost["owned"] += want
