"""Units in use of each capacity pool against what it holds: owned servers bought
(``owned_capacity``), reservations (``reserved_capacity``, ``availability``), rented
availability caps and savings plans (``savings_plan_cover``, ``savings_plan_use``,
``savings_plan_limit``), each commitment charged by the ledger.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Protocol, cast

import numpy as np
import pandas as pd

from solver.core import ledger
from solver.core.compile.guard import band_of, guard_bands
from solver.core.formulation.state import State, guard_band
from solver.core.matrix import VarKind
from solver.inputs.problem import SavingsPlan
from solver.inputs.tables import row_tuples
from solver.units import Mode


class _PoolRow(Protocol):
    """A row of the compiled pools table (:func:`row_tuples`): the columns read here."""

    pool_id: str
    offering_id: str
    kind: str
    mode: str
    provider: str
    site_id: str
    availability_cap: float
    existing_units: float
    price_usd_per_hour: float
    term_months: float
    lead_months: float
    lifetime_months: float
    hosting_usd_per_month: float
    power_kw_max: float
    embodied_kgco2e_unit: float
    idle_kgco2e_per_month: float


def _pool_rows(frame: pd.DataFrame) -> list[_PoolRow]:
    """The pools table's rows as named tuples (:func:`row_tuples`)."""
    # row_tuples builds its named tuple at run time from the frame's columns
    return cast(list[_PoolRow], row_tuples(frame))


def _active_commitment_periods(
    bounds: tuple[np.ndarray, np.ndarray], start: int, term_months: float
) -> list[int]:
    """Periods fully covered by a commitment starting at the start of period ``start``
    (``bounds``: the periods' start and end months, :attr:`State.period_bounds`)."""
    s, e = bounds
    t = np.arange(start, len(s))
    return t[e[start:] <= s[start] + term_months + 1e-9].tolist()


def _delivered_periods(
    bounds: tuple[np.ndarray, np.ndarray],
    start: int,
    lead_months: float,
    lifetime_months: float = 0.0,
) -> list[int]:
    """Periods in which a server ordered at the start of ``start`` is in service all along:
    delivered after the lead time, not yet at the end of its life (0 = no end)
    (``bounds``: the periods' start and end months, :attr:`State.period_bounds`)."""
    s, e = bounds
    t = np.arange(start, len(s))
    arrival = s[start] + lead_months
    ok = s[start:] >= arrival - 1e-9
    if lifetime_months:
        ok &= e[start:] <= arrival + lifetime_months + 1e-9
    return t[ok].tolist()


def add_fleet(m: State) -> None:
    """Per capacity pool, in pool order: owned servers (:func:`add_owned_fleet`),
    reservations (:func:`add_reservations`) or rented availability caps."""
    existing = m.pools["existing_units"].to_numpy() > 0
    relevant = sorted(set(m.usage) | set(np.flatnonzero(existing).tolist()))
    pools = m.pools.iloc[relevant]  # a pool no option uses and holding nothing adds nothing
    for p, pool in zip(relevant, _pool_rows(pools), strict=True):
        used = m.usage.get(p)
        if pool.kind == "owned":
            add_owned_fleet(m, p, pool, used)
        elif pool.mode in (Mode.RESERVED_1Y, Mode.RESERVED_3Y):
            add_reservations(m, p, pool, used)
        elif used is not None:  # rented on-demand / spot
            for (t, b), units in used.items():
                m.B.row(
                    "availability", (pool.pool_id, t, b), units, "<=", float(pool.availability_cap)
                )


def add_owned_fleet(
    m: State, p: int, pool: _PoolRow, used: dict[tuple[int, int], dict[int, float]] | None
) -> None:
    """buy[pool,tau]: servers bought in period tau (cost from the ledger), in service from
    delivery to the end of their life; servers owned at the start; ``owned_capacity``:
    units in use <= existing + delivered, per period and block."""
    B, problem, periods = m.B, m.problem, m.periods
    delivered: dict[int, list[int]] = defaultdict(list)  # period -> buy vars serving it
    if "owned" in problem.modes and used is not None:
        for tau in range(m.n_t):
            serves = _delivered_periods(
                m.period_bounds, tau, pool.lead_months, pool.lifetime_months
            )
            if not serves:
                continue
            v = B.var(
                f"buy[{pool.pool_id},{tau}]",
                VarKind.BUY,
                integer=True,
                pool=p,
                period=tau,
                block=-1,
            )
            charge = ledger.pool_purchase(pool, tau, periods, m.horizon_months, problem)
            m.add_cost(v, charge.total_usd, "owned", charge.by_period_usd, guard_band(pool))
            m.capex.add(v, charge.capex_usd)
            m.co2_kg.add(
                v,
                pool.embodied_kgco2e_unit * charge.capex_fraction
                + pool.idle_kgco2e_per_month * charge.in_service_months,
            )
            for t in serves:
                delivered[t].append(v)
                m.fleet_by_site[(pool.site_id, t)][v] += pool.power_kw_max
    if pool.existing_units:
        units = pool.existing_units
        charge = ledger.existing_server(
            hosting_usd_per_month=pool.hosting_usd_per_month, periods=periods
        )
        by_period = {t: usd * units for t, usd in charge.by_period_usd.items()}
        m.add_const(charge.total_usd * units, "owned", by_period)
        m.co2_kg.constant += pool.idle_kgco2e_per_month * m.horizon_months * units
        for t in range(m.n_t):
            m.fleet_const_kw[(pool.site_id, t)] += pool.power_kw_max * units
    if used is None:
        return
    for t in range(m.n_t):
        for b in range(m.n_b):
            units_in_use = used.get((t, b))
            if not units_in_use:
                continue
            coefs = dict(units_in_use)
            for v in delivered.get(t, []):
                coefs[v] = coefs.get(v, 0.0) - 1.0
            B.row("owned_capacity", (pool.pool_id, t, b), coefs, "<=", float(pool.existing_units))


def add_reservations(
    m: State, p: int, pool: _PoolRow, used: dict[tuple[int, int], dict[int, float]] | None
) -> None:
    """commit[pool,tau]: instances reserved from period tau for the term (cost from the
    ledger); reservations held at the start; ``availability`` of commitments and
    ``reserved_capacity``: units in use <= active commitments, per period and block."""
    B, periods = m.B, m.periods
    active: dict[int, list[int]] = defaultdict(list)
    if used is not None:
        for tau in range(m.n_t):
            covers = _active_commitment_periods(m.period_bounds, tau, pool.term_months)
            if not covers:
                continue
            v = B.var(
                f"commit[{pool.pool_id},{tau}]",
                VarKind.COMMIT,
                integer=True,
                pool=p,
                period=tau,
                block=-1,
            )
            key = (float(pool.term_months), tau)
            if key not in m.reservation_per_usd:  # a charge is linear in the price
                m.reservation_per_usd[key] = ledger.reservation(
                    price_usd_per_hour=1.0,
                    term_months=pool.term_months,
                    begins_in=tau,
                    periods=periods,
                    clock=m.compiled.clock,
                    policy=m.problem.owned_cost_policy,
                )
            per_usd, price = m.reservation_per_usd[key], float(pool.price_usd_per_hour)
            by_period = {t: usd * price for t, usd in per_usd.by_period_usd.items()}
            m.add_cost(v, per_usd.total_usd * price, pool.provider, by_period, guard_band(pool))
            for t in covers:
                active[t].append(v)
    existing_active: dict[int, int] = {}
    if pool.existing_units:
        for r in m.problem.existing_reservations:
            if r.offering != pool.offering_id or r.mode != pool.mode:
                continue
            charge = ledger.existing_reservation(
                price_usd_per_hour=pool.price_usd_per_hour,
                months_remaining=r.months_remaining,
                periods=periods,
                clock=m.compiled.clock,
            )
            by_period = {t: usd * r.units for t, usd in charge.by_period_usd.items()}
            m.add_const(charge.total_usd * r.units, pool.provider, by_period)
            for t in range(m.n_t):
                # pandas-stubs type .iat as any scalar; end_month is a float column
                if float(periods["end_month"].iat[t]) <= r.months_remaining + 1e-9:  # type: ignore[arg-type]
                    existing_active[t] = existing_active.get(t, 0) + r.units
    if used is None:
        return
    for t in range(m.n_t):
        if active.get(t):
            B.row(
                "availability",
                (pool.pool_id, t),
                {v: 1.0 for v in active[t]},
                "<=",
                float(pool.availability_cap) - existing_active.get(t, 0),
            )
        for b in range(m.n_b):
            units = used.get((t, b))
            if not units:
                continue
            coefs = dict(units)
            for v in active.get(t, []):
                coefs[v] = coefs.get(v, 0.0) - 1.0
            B.row(
                "reserved_capacity",
                (pool.pool_id, t, b),
                coefs,
                "<=",
                float(existing_active.get(t, 0)),
            )


def add_savings_plans(m: State) -> None:
    """Savings plans (``savings_plans``): for each plan, the USD per hour committed from each
    period its term fits from (charged by the ledger as a reservation at $1/h), the on-demand
    units it pays for at its rates (credited at their on-demand price), and the
    ``savings_plan_cover``, ``savings_plan_use`` and ``savings_plan_limit`` rows
    (docs/formulation/savings_plan_cover.md). Training clusters on demand are not covered.
    """
    problem = m.problem
    if not problem.savings_plans:
        return
    kinds = [v["kind"] for v in m.B.vars]
    # (pool, t, b) -> (its serving units in use, the cover variables of every plan)
    uses: dict[tuple[int, int, int], tuple[dict[int, float], list[int]]] = {}
    for s, sp in enumerate(problem.savings_plans):
        active = _savings_plan_commitments(m, s, sp)
        cover: dict[tuple[int, int], dict[int, float]] = defaultdict(dict)
        for p, pool in enumerate(_pool_rows(m.pools)):
            rate = sp.rates.get(pool.offering_id)
            if rate is None or pool.mode != Mode.ON_DEMAND or p not in m.usage:
                continue
            for (t, b), used in sorted(m.usage[p].items()):
                serving = {v: n for v, n in used.items() if kinds[v] == VarKind.X.value}
                if not serving or not active.get(t):
                    continue
                u = m.B.var(
                    f"sp_cover[{sp.provider},{sp.term},{pool.pool_id},{t},{b}]",
                    VarKind.SP_COVER,
                    integer=False,
                    pool=p,
                    period=t,
                    block=b,
                    plan=s,
                )
                hours = m.p_hours[t] * m.b_frac[b]
                credit = -ledger.rent_usd(float(pool.price_usd_per_hour), 1.0, hours)
                m.add_cost(u, credit, pool.provider, {t: credit}, guard_band(pool))
                cover[(t, b)][u] = float(rate)
                uses.setdefault((p, t, b), (serving, []))[1].append(u)
        for (t, b), coefs in sorted(cover.items()):
            m.B.row(
                "savings_plan_cover",
                (f"{sp.provider} {sp.term}", t, b),
                {**coefs, **{c: -1.0 for c in active[t]}},
                "<=",
                0.0,
            )
        if sp.max_usd_per_hour is not None:
            for t, commits in sorted(active.items()):
                m.B.row(
                    "savings_plan_limit",
                    (f"{sp.provider} {sp.term}", t),
                    {c: 1.0 for c in commits},
                    "<=",
                    float(sp.max_usd_per_hour),
                )
    for (p, t, b), (serving, covers) in sorted(uses.items()):
        coefs = {u: 1.0 for u in covers}
        coefs.update({v: -n for v, n in serving.items()})
        m.B.row("savings_plan_use", (m.pools["pool_id"].iat[p], t, b), coefs, "<=", 0.0)


def _savings_plan_commitments(m: State, s: int, sp: SavingsPlan) -> dict[int, list[int]]:
    """c[s,tau] for each period tau a term fits from (its ledger charge: a reservation of
    c instances at $1/h); period t -> the commitments active in it."""
    active: dict[int, list[int]] = defaultdict(list)
    for tau in range(m.n_t):
        covers = _active_commitment_periods(m.period_bounds, tau, sp.term_months)
        if not covers:
            continue
        c = m.B.var(
            f"savings_plan[{sp.provider},{sp.term},{tau}]",
            VarKind.SAVINGS_PLAN,
            integer=False,
            period=tau,
            block=-1,
            plan=s,
        )
        charge = ledger.reservation(
            price_usd_per_hour=1.0,
            term_months=sp.term_months,
            begins_in=tau,
            periods=m.periods,
            clock=m.compiled.clock,
            policy=m.problem.owned_cost_policy,
        )
        band = band_of(sp.confidence, guard_bands(m.problem, m.compiled.inputs.catalog))
        m.add_cost(c, charge.total_usd, sp.provider, dict(charge.by_period_usd), band)
        for t in covers:
            active[t].append(c)
    return active
