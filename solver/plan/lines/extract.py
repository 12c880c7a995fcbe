"""A solved model read into a plan: one reader per variable kind (serving, training,
purchase, reservation, savings plan), the fleet held at the start and the staff saving;
costs come from the ledger.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, cast

import numpy as np
import pandas as pd

from solver.core import ledger
from solver.core.compile import Compiled
from solver.core.compile.guard import guard_bands
from solver.core.formulation.domains import zone_units_of
from solver.core.model import LinearModel
from solver.inputs.problem import Problem, TrainingWorkload
from solver.inputs.tables import row_tuples
from solver.plan.assumptions import assumptions_of
from solver.plan.exposure import points_of_failure
from solver.plan.guard import with_guard
from solver.plan.lines.blocks import block_items
from solver.plan.lines.items import LineItem
from solver.plan.lines.schema import Plan
from solver.plan.lines.summary import binding_rows, owned_utilisation, served_fraction, totals_of
from solver.plan.market import with_market
from solver.units import RENTED_MODES, Mode

#: A row of a compiled table as :func:`solver.inputs.tables.row_tuples` gives it: a named
#: tuple whose fields are the frame's columns, built at run time, so not typed statically.
FrameRow = Any


def _pool_fields(pool: FrameRow) -> dict[str, object]:
    return {
        "provider": pool.provider,
        "region": pool.region,
        "offering": pool.offering_id,
        "instance_type": pool.instance_type,
        "accelerator": pool.accelerator_id,
        "mode": pool.mode,
        "price_date": pool.price_date,
        "price_source": pool.price_source,
        "price_confidence": pool.price_confidence,
        "price_currency": pool.price_currency,
        "tier": pool.tier,
        "sla": pool.sla,
    }


class _Reading:
    """The compiled tables a solution is read against, looked up once."""

    def __init__(self, compiled: Compiled) -> None:
        self.compiled = compiled
        self.periods, self.blocks = compiled.periods, compiled.blocks
        self.options = compiled.options.set_index("option_id")
        self.p_names = list(self.periods["name"])
        self.b_names = list(self.blocks["name"])
        self.p_hours = self.periods["hours"].to_numpy()
        self.b_frac = self.blocks["fraction"].to_numpy()
        self.horizon = float(self.periods["end_month"].to_numpy()[-1])
        self.clock = compiled.clock
        self.pool_rows: list[FrameRow] = row_tuples(compiled.pools)
        self.training_runs = compiled.training_runs()


def extract_plan(
    compiled: Compiled,
    model: LinearModel,
    values: np.ndarray,
    *,
    status: str,
    objective: float | None,
    gap: float | None,
    solver: str,
    solve_seconds: float,
) -> Plan:
    """Read line items from a solution; totals are sums of the line items.

    One reader per variable kind (x: serving, z: training, buy: purchase, commit:
    reservation) and one for the fleet held at the start; costs come from the ledger.
    """
    rd = _Reading(compiled)
    var = model.variables.assign(value=values)
    var = var[var["value"] > 1e-7]
    mix_alloc: dict[tuple[int, int, int], dict[int, float]] = defaultdict(dict)
    mix_rows: list[FrameRow] = row_tuples(var[var["kind"] == "y"])
    for r in mix_rows:
        mix_alloc[(r.option_id, r.period, r.block)][int(r.bucket)] = float(r.value)
    items: list[LineItem] = []
    var_rows: list[FrameRow] = row_tuples(var)
    zones = zone_units_of(compiled, var)
    for r in var_rows:
        if r.kind == "x":
            items += _serving_items(rd, r, mix_alloc, zones.get(r.name))
        elif r.kind == "z":
            items += _training_items(rd, r)
        elif r.kind == "buy":
            items.append(_purchase_item(rd, r))
        elif r.kind == "commit":
            items.append(_reservation_item(rd, r))
        elif r.kind == "savings_plan":
            items.append(_savings_plan_item(rd, r))
        elif r.kind == "sp_cover":
            items.append(_savings_plan_cover_item(rd, r))
        elif r.kind == "block":
            items += _block_items(rd, r)
    items += _existing_items(rd)
    items += _staff_scale_items(rd, model, var)
    order = {name: i for i, name in enumerate(rd.p_names)}
    items.sort(
        key=lambda i: (
            order[i.period],
            i.provider,
            i.region,
            i.offering,
            i.mode,
            i.item,
            i.workload,
            i.block,
        )
    )
    totals = totals_of(items, rd.p_names)
    binding = binding_rows(model, values, compiled.pools)
    binding_pools = {str(b.key.get("pool")) for b in binding if b.family == "availability"}
    npv = None
    if compiled.problem.discount_rate is not None:
        factors = ledger.discount_factors(rd.periods, compiled.problem.discount_rate)
        npv = float(
            sum(f * totals.by_period.get(n, 0.0) for f, n in zip(factors, rd.p_names, strict=True))
        )
    switching = model.expressions.get("switching_penalty_usd")
    migration = model.expressions.get("migration_penalty_usd")
    egress = model.expressions.get("egress_usd")
    support = model.expressions.get("support_usd")
    plan = Plan(
        problem=compiled.problem.name,
        status=status,
        objective=objective,
        switching_penalty_usd=switching.value(values) if switching is not None else 0.0,
        migration_penalty_usd=migration.value(values) if migration and migration.coefs else None,
        egress_in_objective_usd=egress.value(values)
        if egress is not None and (egress.coefs or egress.constant)
        else None,
        support_in_objective_usd=support.value(values)
        if support is not None and (support.coefs or support.constant)
        else None,
        points_of_failure=points_of_failure(items, compiled.problem),
        objective_kind=compiled.problem.objective,
        total_cost_usd=sum(i.cost_usd for i in items),
        total_co2e_t=sum(i.co2e_t for i in items),
        npv_usd=npv,
        gap=gap,
        solver=solver,
        solve_seconds=solve_seconds,
        line_items=items,
        totals=totals,
        owned_utilisation=owned_utilisation(items, compiled),
        binding=binding,
        assumptions=assumptions_of(compiled, items, binding_pools),
        served_fraction=served_fraction(compiled, model, values),
        compile_report=compiled.report.as_dict(),
    )
    problem = compiled.problem
    plan = with_guard(plan, problem.price_guard, guard_bands(problem, compiled.inputs.catalog))
    return with_market(plan, compiled.inputs.catalog.market_index)


def _serving_items(
    rd: _Reading,
    r: FrameRow,
    mix_alloc: dict[tuple[int, int, int], dict[int, float]],
    zone_units: dict[str, float] | None = None,
) -> list[LineItem]:
    """x: serving units of an option in a period, one line per load block it covers
    (rented: its own block; owned and reserved: every block of the day), with its units
    by zone when its workload must survive losing one."""
    k = rd.options.loc[r.option_id]
    pool = rd.pool_rows[r.pool]
    units = float(r.value)
    rented = k["mode"] in RENTED_MODES
    out = []
    for b in [r.block] if r.block >= 0 else list(range(len(rd.b_names))):
        hours = rd.p_hours[r.period] * rd.b_frac[b]
        if rented:
            cost = ledger.rent_usd(k["price_usd_per_hour"], units, hours)
        else:
            cost = k["energy_usd_per_unit_hour"] * units * hours
        out.append(
            LineItem(
                item="rent" if rented else "use",
                period=rd.p_names[r.period],
                block=rd.b_names[b],
                **_pool_fields(pool),
                units=units,
                accelerators=units * pool.accels_per_unit,
                workload=r.workload,
                hours=hours,
                cost_usd=cost,
                co2e_t=k["kgco2e_per_unit_hour"] * units * hours / 1000.0,
                tp_degree=int(k["tp_degree"]),
                batch=int(k["batch"]),
                capacity_tokens_per_s=float(k["tokens_per_s_per_unit"]) * units,
                capacity_source=str(k["capacity_source"]),
                bucket_requests_per_s=mix_alloc.get((r.option_id, r.period, b), {}),
                zone_units=zone_units,
                **_architecture_fields(k),
            )
        )
    return out


def _architecture_fields(k: pd.Series) -> dict:
    """A serving option's architecture, and a disaggregated one's role and KV transfer
    (none for a workload left at the default architecture)."""
    arch = k.get("architecture")
    if not isinstance(arch, str):
        return {}
    out: dict = {"architecture": arch}
    role = k.get("pool_role")
    if isinstance(role, str) and role:
        out.update(
            pool_role=role,
            kv_link=str(k["kv_link"]),
            kv_gb_per_request=float(k["kv_gb_per_request"]),
        )
        if role == "prefill":
            out["kv_transfer_s"] = float(k["kv_transfer_s"])
    return out


def _training_items(rd: _Reading, r: FrameRow) -> list[LineItem]:
    """z: a training cluster, one line per period the job runs in."""
    k = rd.options.loc[r.option_id]
    pool = rd.pool_rows[r.pool]
    out = []
    for t, h in rd.training_runs[int(r.option_id)]:
        share = h / k["job_hours"]
        out.append(
            LineItem(
                item="training",
                period=rd.p_names[t],
                **_pool_fields(pool),
                units=float(k["n_units"]),
                accelerators=float(k["n_accelerators"]),
                workload=r.workload,
                hours=h,
                cost_usd=(k["rent_usd"] + k["energy_usd"]) * share,
                co2e_t=k["kgco2e"] * share / 1000.0,
                start_period=rd.p_names[int(k["start_period"])],
                job_hours=float(k["job_hours"]),
                **_mfu_fields(k, rd.compiled.problem),
            )
        )
    return out


def _block_items(rd: _Reading, r: FrameRow) -> list[LineItem]:
    """block: a capacity block bought and the training run on it (:mod:`.blocks`)."""
    opts = rd.compiled.capacity_blocks.set_index("block_option_id")
    k = cast(pd.Series, opts.loc[int(r.block_option)])  # one row of a unique index
    pool = _pool_fields(rd.pool_rows[r.pool])
    return block_items(rd.compiled, r, pool, rd.p_names, _mfu_fields(k, rd.compiled.problem))


def _mfu_fields(k: pd.Series, problem: Problem) -> dict:
    """A training option's MFU, its band and source, and the schedule's slack."""
    window_h = float(k["window_hours"])
    workload = problem.workload(k["workload"])
    assert isinstance(workload, TrainingWorkload), "a training option's workload trains"
    margin = problem.training_margin_of(workload)
    return {
        "mfu": float(k["mfu"]),
        "mfu_low": float(k["mfu_low"]),
        "mfu_high": float(k["mfu_high"]),
        "mfu_point": float(k["mfu_point"]),
        "mfu_source": str(k["mfu_source"]),
        "mfu_band_source": str(k["mfu_band"]),
        "training_margin": str(margin),
        "window_hours": window_h,
        "slack_fraction": 1.0 - float(k["job_hours"]) / window_h if window_h > 0 else None,
        "units_at_point_mfu": int(k["units_at_point_mfu"]),
    }


def _purchase_item(rd: _Reading, r: FrameRow) -> LineItem:
    """buy: servers bought in a period; hours in service from delivery."""
    pool = rd.pool_rows[r.pool]
    units = float(r.value)
    charge = ledger.pool_purchase(pool, r.period, rd.periods, rd.horizon, rd.compiled.problem)
    arrival = float(rd.periods["start_month"].to_numpy()[r.period]) + pool.lead_months
    return LineItem(
        item="purchase",
        period=rd.p_names[r.period],
        **_pool_fields(pool),
        units=units,
        accelerators=units * pool.accels_per_unit,
        hours=rd.clock.hours(arrival, arrival + charge.in_service_months),
        cost_usd=units * charge.total_usd,
        co2e_t=units
        * (
            pool.embodied_kgco2e_unit * charge.capex_fraction
            + pool.idle_kgco2e_per_month * charge.in_service_months
        )
        / 1000.0,
        start_period=rd.p_names[r.period],
        cost_by_period_usd=_by_name(rd.p_names, charge, units),
        residual_value_usd=units * charge.residual_usd,
    )


def _reservation_item(rd: _Reading, r: FrameRow) -> LineItem:
    """commit: instances reserved from a period for the term; what runs past the horizon."""
    pool = rd.pool_rows[r.pool]
    units = float(r.value)
    charge = ledger.reservation(
        price_usd_per_hour=pool.price_usd_per_hour,
        term_months=pool.term_months,
        begins_in=r.period,
        periods=rd.periods,
        clock=rd.clock,
        policy=rd.compiled.problem.owned_cost_policy,
    )
    begin = float(rd.periods["start_month"].to_numpy()[r.period])
    term_end = begin + float(pool.term_months)
    return LineItem(
        item="reservation",
        period=rd.p_names[r.period],
        **_pool_fields(pool),
        units=units,
        accelerators=units * pool.accels_per_unit,
        hours=rd.clock.hours(begin, term_end),
        cost_usd=units * charge.total_usd,
        co2e_t=0.0,
        start_period=rd.p_names[r.period],
        cost_by_period_usd=_by_name(rd.p_names, charge, units),
        term_end_month=term_end,
        months_after_horizon=max(0.0, term_end - rd.horizon),
        liability_after_horizon_usd=units * charge.beyond_horizon_usd,
    )


def savings_plan_offering(provider: str, term: str) -> str:
    """The ``offering`` of a savings plan's lines: ``savings_plan/<provider>/<term>``."""
    return f"savings_plan/{provider}/{term}"


def _savings_plan_item(rd: _Reading, r: FrameRow) -> LineItem:
    """savings_plan: USD per hour committed from a period for the term (``units`` is the
    commitment in USD/h, at $1 per unit-hour), charged every hour of it, used or not."""
    sp = rd.compiled.problem.savings_plans[int(r.plan)]
    usd_per_hour = float(r.value)
    charge = ledger.reservation(
        price_usd_per_hour=1.0,
        term_months=sp.term_months,
        begins_in=r.period,
        periods=rd.periods,
        clock=rd.clock,
        policy=rd.compiled.problem.owned_cost_policy,
    )
    begin = float(rd.periods["start_month"].to_numpy()[r.period])
    term_end = begin + sp.term_months
    return LineItem(
        item="savings_plan",
        period=rd.p_names[r.period],
        provider=sp.provider,
        region="",
        offering=savings_plan_offering(sp.provider, sp.term),
        accelerator="",
        mode=f"savings_plan_{sp.term}",
        units=usd_per_hour,
        accelerators=0.0,
        hours=rd.clock.hours(begin, term_end),
        cost_usd=usd_per_hour * charge.total_usd,
        co2e_t=0.0,
        start_period=rd.p_names[r.period],
        cost_by_period_usd=_by_name(rd.p_names, charge, usd_per_hour),
        term_end_month=term_end,
        months_after_horizon=max(0.0, term_end - rd.horizon),
        liability_after_horizon_usd=usd_per_hour * charge.beyond_horizon_usd,
        price_source=sp.source,
        price_date=sp.price_date,
        price_confidence=sp.confidence,
        price_currency="USD",
        **_provider_terms(rd, sp.provider),
    )


def _provider_terms(rd: _Reading, provider: str) -> dict:
    """The provider's tier and SLA as its pools carry them ('' when it has none)."""
    pools = rd.compiled.pools
    rows = pools[pools["provider"] == provider]
    if rows.empty:
        return {}
    return {"tier": str(rows["tier"].iat[0]), "sla": str(rows["sla"].iat[0])}


def _savings_plan_cover_item(rd: _Reading, r: FrameRow) -> LineItem:
    """sp_cover: on-demand units of an offering a savings plan pays for in a load block;
    a credit of their on-demand charge (the plan's commitment pays for them)."""
    sp = rd.compiled.problem.savings_plans[int(r.plan)]
    pool = rd.pool_rows[r.pool]
    units = float(r.value)
    hours = rd.p_hours[r.period] * rd.b_frac[r.block]
    return LineItem(
        item="savings_plan_cover",
        period=rd.p_names[r.period],
        block=rd.b_names[r.block],
        **{**_pool_fields(pool), "mode": f"savings_plan_{sp.term}"},
        units=units,
        accelerators=units * pool.accels_per_unit,
        hours=hours,
        cost_usd=-ledger.rent_usd(pool.price_usd_per_hour, units, hours),
        co2e_t=0.0,
        start_period=rd.p_names[r.period],
    )


def _existing_items(rd: _Reading) -> list[LineItem]:
    """The fleet held at the start: servers' hosting over the horizon, the rest of each
    reservation's term inside it."""
    out = []
    clock, horizon, p_names = rd.clock, rd.horizon, rd.p_names
    for pool in rd.pool_rows:
        if not pool.existing_units:
            continue
        if pool.kind == "owned":
            charge = ledger.existing_server(
                hosting_usd_per_month=pool.hosting_usd_per_month, periods=rd.periods
            )
            by_period = _by_name(p_names, charge, float(pool.existing_units))
            hours = clock.hours(0.0, horizon)
            idle_t = pool.idle_kgco2e_per_month * horizon * pool.existing_units / 1000.0
        else:
            by_period, hours, idle_t = {}, 0.0, 0.0
            for res in rd.compiled.problem.existing_reservations:
                if res.offering == pool.offering_id and res.mode == pool.mode:
                    charge = ledger.existing_reservation(
                        price_usd_per_hour=pool.price_usd_per_hour,
                        months_remaining=res.months_remaining,
                        periods=rd.periods,
                        clock=clock,
                    )
                    for name, usd in _by_name(p_names, charge, float(res.units)).items():
                        by_period[name] = by_period.get(name, 0.0) + usd
                    hours = max(hours, clock.hours(0.0, min(res.months_remaining, horizon)))
        out.append(
            LineItem(
                item="existing",
                period=p_names[0],
                **_pool_fields(pool),
                units=float(pool.existing_units),
                accelerators=float(pool.existing_units * pool.accels_per_unit),
                hours=hours,
                cost_usd=float(sum(by_period.values())),
                co2e_t=idle_t,
                cost_by_period_usd=by_period,
            )
        )
    return out


def _staff_scale_items(rd: _Reading, model: LinearModel, var: pd.DataFrame) -> list[LineItem]:
    """The staff saving of a site past 1,000 servers in a period (solver/core/staff.py):
    one ``staff_scale`` line per site and period where it is not zero; ``units`` is the
    site's average owned fleet in the period, ``cost_usd`` the saving (negative)."""
    staff = var[var["kind"] == "staff"]
    if staff.empty:
        return []
    cost = model.expressions["total_cost_usd"].coefs
    fleet: dict[tuple[int, int], float] = defaultdict(float)
    usd: dict[tuple[int, int], float] = defaultdict(float)
    r: FrameRow
    for i, r in zip(staff.index, staff.itertuples(index=False), strict=True):
        fleet[(int(r.pool), int(r.period))] += float(r.value)
        usd[(int(r.pool), int(r.period))] += cost.get(int(i), 0.0) * float(r.value)
    out = []
    for (p, t), saving in sorted(usd.items()):
        if abs(saving) < 1e-6:
            continue
        pool = rd.pool_rows[p]
        name = rd.p_names[t]
        out.append(
            LineItem(
                item="staff_scale",
                period=name,
                provider="owned",
                region=pool.site_id,
                offering=f"staff@{pool.site_id}",
                accelerator="",
                mode=Mode.OWNED,
                units=fleet[(p, t)],
                accelerators=0.0,
                hours=0.0,
                cost_usd=saving,
                co2e_t=0.0,
                cost_by_period_usd={name: saving},
                tier="owned",
            )
        )
    return out


def _by_name(names: list[str], charge: ledger.Charge, units: float) -> dict[str, float]:
    """A ledger charge for ``units`` units as cost per period name (zero periods left out)."""
    return {names[t]: usd * units for t, usd in sorted(charge.by_period_usd.items()) if usd}
