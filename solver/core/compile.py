"""Compile: workloads x capacity pools -> the table of feasible options.

A *pool* is where units come from: a cloud offering in one purchase mode
(on-demand, spot, 1-/3-year reserved), or a server type bought and hosted at a
site (owned). An *option* is one feasible way to run one workload on one pool:

- inference: the replica shape (tensor-parallel degree d, batch) that gives the
  most output tokens/s per unit, and that capacity (per traffic-mix bucket too);
- training: a cluster of ``n_units`` units starting in a period, its hours and
  the periods it occupies.

Options that break a hard requirement are never generated; dominated ones are
pruned. :class:`Compiled` carries every coefficient the MIP and the report need,
and :class:`CompileReport` says how many were generated and pruned, and why.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from solver import physics
from solver.core import dominance, ledger
from solver.core.clock import Clock, first_day
from solver.errors import InfeasibleError, ProcureError, suggestion
from solver.inputs.catalog import Catalog, availability_cap_basis, tier_allowed, tier_rank
from solver.inputs.costs import resolve_problem_costs
from solver.inputs.hardware import LISTS, VENDOR_HARDWARE, HardwareRule, hardware_rules
from solver.inputs.load import resolve_load
from solver.inputs.presets import ModelSpec, resolve_model
from solver.inputs.problem import (
    BatchInferenceWorkload,
    InferenceWorkload,
    Problem,
    TrainingWorkload,
    Workload,
)
from solver.inputs.provenance import meets_confidence, too_old
from solver.inputs.sites import with_problem_sites
from solver.inputs.staff import staff_rule
from solver.physics.constants import (
    HOST_POWER_FRACTION,
    IDLE_POWER_FRACTION,
    INFERENCE_UTILISATION,
    TRAINING_UTILISATION,
)
from solver.units import (
    CLOUD_MODES,
    DAYS_PER_MONTH,
    HOURS_PER_MONTH,
    RENTED_MODES,
    RESERVED_TERM_MONTHS,
    Mode,
    owned_offering_id,
)

TP_DEGREES = (1, 2, 4, 8)
MAX_TRAINING_UNITS = 512


@dataclass
class CompileReport:
    """Counts of options generated and pruned, with reasons."""

    pools: int = 0
    generated: int = 0
    kept: int = 0
    infeasible: Counter = field(default_factory=Counter)  # reason -> pool-workload pairs
    pruned: Counter = field(default_factory=Counter)  # reason -> options
    per_workload: dict[str, int] = field(default_factory=dict)
    why_not: dict[str, dict[str, str]] = field(default_factory=dict)  # workload -> best reason
    # workload -> {factor, points, spread, measured_on}: physics scaled to measurements
    calibration: dict[str, dict] = field(default_factory=dict)
    # the daily load curve's blocks and per-workload factors (solver.load.LoadBlocks.as_dict)
    load_curve: dict = field(default_factory=dict)
    # how a column-generation solve went (solver.columns.ColumnReport.as_dict), if one ran
    columns: dict = field(default_factory=dict)
    # how a root solve went (solver.root.RootReport.as_dict), if one ran
    root: dict = field(default_factory=dict)
    # workload -> [{list, values, vendor, options_left_out}]: what its accelerator and
    # vendor lists and its runtime left out (the plan says so under it)
    hardware: dict[str, list[dict]] = field(default_factory=dict)

    def as_dict(self) -> dict:
        extra = {"columns": self.columns} if self.columns else {}
        extra |= {"root": self.root} if self.root else {}
        extra |= {"hardware": self.hardware} if self.hardware else {}
        return {
            **extra,
            "calibration": self.calibration,
            "load_curve": self.load_curve,
            "pools": self.pools,
            "options_generated": self.generated,
            "options_kept": self.kept,
            "excluded_by_requirement": dict(sorted(self.infeasible.items())),
            "pruned_as_dominated": dict(sorted(self.pruned.items())),
            "options_per_workload": self.per_workload,
        }


@dataclass(frozen=True)
class Compiled:
    """Everything the MIP needs, as plain tables (every column with its unit and meaning
    in :mod:`solver.tables`).

    Attributes
    ----------
    periods
        name, months, hours, start_month, end_month (index = period number).
    blocks
        name, hours_per_day, fraction (of each period's hours), demand_factor.
    pools
        one row per capacity pool (cloud offering x mode, or server x site).
    options
        one row per option (see module docstring).
    bucket_capacity
        option_id, bucket, requests_per_s_per_unit (traffic-mix workloads).
    demand
        workload, period, block, bucket (-1 = whole), demand (tokens/s or requests/s).
    training_hours
        option_id, period, hours: the periods each training option runs in.
    """

    problem: Problem
    periods: pd.DataFrame
    blocks: pd.DataFrame
    pools: pd.DataFrame
    options: pd.DataFrame
    bucket_capacity: pd.DataFrame
    demand: pd.DataFrame
    models: dict[str, ModelSpec]
    report: CompileReport
    quota_accelerators: tuple[str | None, ...] = ()  # resolved accelerator id per quota
    training_hours: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=["option_id", "period", "hours"])
    )  # option_id, period, hours: the periods a training option runs in
    pruned_dominated: bool = False  # options valid only at these prices and demands

    def training_runs(self) -> dict[int, list[tuple[int, float]]]:
        """Training option id -> [(period index, hours run in it)], in period order."""
        runs: dict[int, list[tuple[int, float]]] = defaultdict(list)
        for k, t, h in self.training_hours.itertuples(index=False):
            runs[int(k)].append((int(t), float(h)))
        return runs

    @property
    def clock(self) -> Clock:
        """Months -> hours for this problem (:mod:`solver.clock`)."""
        return Clock(self.problem.start)


# --------------------------------------------------------------------------- periods


def build_periods(problem: Problem) -> pd.DataFrame:
    """Periods with their start/end month and their hours on the problem's clock
    (:mod:`solver.clock`: calendar hours when the problem states its start)."""
    months = np.array([p.months for p in problem.resolved_periods], dtype=float)
    start = np.concatenate([[0.0], np.cumsum(months)[:-1]])
    clock = Clock(problem.start)
    return pd.DataFrame(
        {
            "name": [p.name for p in problem.resolved_periods],
            "months": months,
            "hours": [clock.hours(a, a + m) for a, m in zip(start, months, strict=True)],
            "start_month": start,
            "end_month": start + months,
        }
    )


def build_blocks(problem: Problem) -> pd.DataFrame:
    """The model's load blocks (:func:`solver.load.resolve_load`): common to all workloads.

    Columns name, hours_per_day, fraction (of each period's hours) and demand_factor:
    the block's factor when it is common to every online workload (explicit
    ``load_blocks``), NaN otherwise; :func:`build_demand` applies each workload's own.
    """
    load = resolve_load(problem)
    explicit = problem.load_blocks
    return pd.DataFrame(
        {
            "name": list(load.names),
            "hours_per_day": list(load.hours_per_day),
            "fraction": [h / 24.0 for h in load.hours_per_day],
            "demand_factor": [
                np.nan if b.demand_factor is None else b.demand_factor for b in explicit
            ]
            if explicit is not None
            else [np.nan] * len(load.names),
        }
    )


# --------------------------------------------------------------------------- pools


def _check_names(problem: Problem, catalog: Catalog) -> None:
    """Refuse names in the problem that the catalog does not know."""
    providers = set(catalog.offerings["provider"].tolist()) | {"owned"}
    regions = set(catalog.regions["region"].tolist())
    zones = set(catalog.regions["residency_zone"].tolist()) | set(
        catalog.sites["residency_zone"].tolist()
    )

    def check(values: list[str] | None, known: set[str], field_path: str, what: str) -> None:
        for value in values or []:
            if value not in known:
                raise ProcureError(
                    f"unknown {what} {value!r}",
                    field=field_path,
                    fix=suggestion(value, known),
                )

    check(problem.providers, providers, "providers", "provider")
    check(problem.regions, regions, "regions", "region")
    check(problem.residency, zones, "residency", "residency zone")

    def check_site(values: list[str] | None, field_path: str) -> None:
        for value in values or []:
            if value not in catalog.sites.index:
                raise ProcureError(
                    f"unknown site {value!r}",
                    field=field_path,
                    fix=f"{suggestion(value, catalog.sites.index)} Or describe a site of your "
                    f"own under sites: {{name: {value}, region: aws/us-east-1, pue: 1.5, "
                    "power_cap_kw: 40} (procure schema shows every field of a site)",
                )

    check_site(problem.site_ids, "sites")
    for i, w in enumerate(problem.workloads):
        check(w.providers, providers, f"workloads[{i}].providers", "provider")
        check(w.regions, regions, f"workloads[{i}].regions", "region")
        check(w.residency, zones, f"workloads[{i}].residency", "residency zone")
    for i, q in enumerate(problem.quotas):
        check([q.provider], providers, f"quotas[{i}].provider", "provider")
        if q.region is not None:  # a quota in a region the provider lacks would cap nothing
            own = set(catalog.offerings.loc[catalog.offerings["provider"] == q.provider, "region"])
            own |= {r for p, r in catalog.regions.index if p == q.provider}
            check([q.region], own, f"quotas[{i}].region", f"{q.provider} region")
        if q.accelerator:
            try:
                catalog.resolve_accelerator(q.accelerator)
            except ProcureError as exc:
                raise ProcureError(
                    exc.message, field=f"quotas[{i}].accelerator", fix=exc.fix
                ) from None
    for i, s in enumerate(problem.existing_fleet):
        check([s.server], set(catalog.servers.index), f"existing_fleet[{i}].server", "server")
        check_site([s.site], f"existing_fleet[{i}].site")
    for i, r in enumerate(problem.existing_reservations):
        check(
            [r.offering],
            set(catalog.offerings.index),
            f"existing_reservations[{i}].offering",
            "offering",
        )
    for key in problem.availability_caps:
        check([key], set(catalog.offerings.index), "availability_caps", "offering")
    for key in problem.provider_share_max:
        check([key], providers, "provider_share_max", "provider")
    resolve_problem_costs(problem, providers - {"owned"})  # names and prices, or refused


def check_savings_plans(problem: Problem, catalog: Catalog) -> None:
    """Refuse a savings plan the model could not price: its provider unknown, a rate for
    an offering the catalog lacks or another provider sells, or a rate not below the
    offering's on-demand price (a plan that saves nothing is a typo, not a discount);
    and on-demand must be among the modes (the plan covers on-demand usage)."""
    off = catalog.offerings
    providers = set(off["provider"].tolist())
    for i, sp in enumerate(problem.savings_plans):
        field = f"savings_plans[{i}]"
        if sp.provider not in providers:
            raise ProcureError(
                f"unknown provider {sp.provider!r}",
                field=f"{field}.provider",
                fix=suggestion(sp.provider, providers),
            )
        if Mode.ON_DEMAND not in problem.modes:
            raise ProcureError(
                "a savings plan covers on-demand usage, but modes leaves out on_demand",
                field="modes",
                fix="add on_demand to modes, or remove savings_plans",
            )
        for offering_id, rate in sp.rates.items():
            where = f"{field}.rates.{offering_id}"
            if offering_id not in off.index:
                raise ProcureError(
                    f"unknown offering {offering_id!r}",
                    field=where,
                    fix=suggestion(offering_id, set(off.index[off["provider"] == sp.provider])),
                )
            if off.at[offering_id, "provider"] != sp.provider:
                raise ProcureError(
                    f"{offering_id} is sold by {off.at[offering_id, 'provider']}, not by "
                    f"{sp.provider} whose savings plan this is",
                    field=where,
                    fix=f"move the rate to a savings plan of {off.at[offering_id, 'provider']}",
                )
            od = off.at[offering_id, "on_demand_usd_per_hour"]
            if pd.isna(od) or rate >= float(od):
                raise ProcureError(
                    f"the plan's rate ${rate:g}/h is not below {offering_id}'s on-demand "
                    f"price ({'none' if pd.isna(od) else f'${float(od):g}/h'})",
                    field=where,
                    fix="give the plan's discounted rate per instance-hour from the provider's "
                    "savings plan price file (solver/inputs/importers), or drop the offering",
                )


def _check_existing_reservations(problem: Problem, catalog: Catalog, cloud: pd.DataFrame) -> None:
    """Refuse an existing reservation the model could neither charge nor use.

    Its pool must survive the problem's filters: never silently dropped (it is paid
    for, so dropping it would understate the cost and waste the capacity).
    """
    kept = set(zip(cloud["offering_id"].tolist(), cloud["mode"].tolist(), strict=True))
    for i, r in enumerate(problem.existing_reservations):
        if (r.offering, r.mode) in kept:
            continue
        field = f"existing_reservations[{i}]"
        if pd.isna(catalog.offerings.at[r.offering, ledger.PRICE_COLUMN[r.mode]]):
            raise ProcureError(
                f"the catalog sells {r.offering} with no {r.mode} price, so the reservation "
                "can be neither charged nor used",
                field=f"{field}.mode",
                fix=f"add the rate you pay as {ledger.PRICE_COLUMN[r.mode]} for {r.offering} "
                "in the catalog's offerings.csv, or correct the mode",
            )
        if r.mode not in problem.modes:
            raise ProcureError(
                f"modes leaves out {r.mode}, which this reservation is",
                field=f"{field}.mode",
                fix=f"add {r.mode} to modes (a reservation already held is used whatever the "
                "plan buys)",
            )
        raise ProcureError(
            f"{r.offering} is excluded by the problem's providers, regions, residency or "
            "min_tier, but a reservation of it is already held",
            field=f"{field}.offering",
            fix="allow its provider and region, or remove the reservation",
        )


def _cloud_pools(problem: Problem, catalog: Catalog) -> pd.DataFrame:
    """One pool per (offering, mode) the problem allows: providers, regions, residency,
    tier; its price, caps and reservations already held."""
    acc = catalog.accelerators
    off = catalog.offerings.reset_index(drop=True)
    reg = catalog.regions.reset_index(drop=True)
    off = off.merge(
        reg[["provider", "region", "residency_zone", "grid_gco2_per_kwh", "pue", "country"]],
        on=["provider", "region"],
        how="left",
    )
    frames = []
    for mode in CLOUD_MODES:
        if mode not in problem.modes:
            continue
        price = off[ledger.PRICE_COLUMN[mode]]
        sub = off[price.notna()].copy()
        sub["mode"] = mode
        sub["price_usd_per_hour"] = sub[ledger.PRICE_COLUMN[mode]]
        # a reserved price has its own provenance (catalogs/offerings.csv, reserved_*)
        own = "reserved_" if mode in RESERVED_TERM_MONTHS else ""
        sub["pool_price_date"] = sub[f"{own}price_date"]
        sub["pool_price_confidence"] = sub[f"{own}price_confidence"]
        sub["pool_price_source"] = sub["reserved_source" if own else "source"]
        frames.append(sub)
    cloud = (
        pd.concat(frames, ignore_index=True)
        if frames
        else off.iloc[0:0].assign(  # owned servers only
            mode="",
            price_usd_per_hour=0.0,
            pool_price_date="",
            pool_price_confidence="",
            pool_price_source="",
        )
    )
    if problem.providers is not None:
        cloud = cloud[cloud["provider"].isin(problem.providers)]
    if problem.regions is not None:
        cloud = cloud[cloud["region"].isin(problem.regions)]
    if problem.residency is not None:
        cloud = cloud[cloud["residency_zone"].isin(problem.residency)]
    providers = cloud["provider"].unique()  # look each provider up once, not per row
    cloud = cloud.assign(
        tier=cloud["provider"].map({p: catalog.tier_of(p) for p in providers}),
        sla=cloud["provider"].map({p: catalog.sla_of(p) for p in providers}),
        availability_cap_basis=[
            availability_cap_basis(p, o, problem.availability_caps)
            for p, o in zip(cloud["provider"].tolist(), cloud["offering_id"].tolist(), strict=True)
        ],
    )
    if problem.min_tier is not None:
        cloud = cloud[cloud["tier"].map(tier_rank) >= tier_rank(problem.min_tier)]
    _check_existing_reservations(problem, catalog, cloud)
    existing_res: Counter[tuple[str, str]] = Counter()
    for r in problem.existing_reservations:
        existing_res[(r.offering, r.mode)] += r.units
    a = acc.loc[cloud["accelerator_id"]]
    cloud = pd.DataFrame(
        {
            "pool_id": cloud["offering_id"] + "#" + cloud["mode"],
            "kind": "cloud",
            "offering_id": cloud["offering_id"].to_numpy(),
            "server_id": "",
            "site_id": "",
            "provider": cloud["provider"].to_numpy(),
            "region": cloud["region"].to_numpy(),
            "instance_type": cloud["instance_type"].to_numpy(),
            "mode": cloud["mode"].to_numpy(),
            "accelerator_id": cloud["accelerator_id"].to_numpy(),
            "accels_per_unit": cloud["accelerators_per_instance"].astype(int).to_numpy(),
            "nvlink": cloud["nvlink"].astype(bool).to_numpy(),
            "network_gbps": cloud["network_gbps"].fillna(100.0).to_numpy(),
            "price_usd_per_hour": cloud["price_usd_per_hour"].to_numpy(),
            "price_date": cloud["pool_price_date"].to_numpy(),
            "price_source": cloud["pool_price_source"].to_numpy(),
            "price_confidence": cloud["pool_price_confidence"].to_numpy(),
            "price_currency": cloud["currency"].to_numpy(),
            "term_months": cloud["mode"].map(RESERVED_TERM_MONTHS).fillna(0.0).to_numpy(),
            "capex_usd": 0.0,
            "lead_months": 0.0,
            "lifetime_months": 0.0,
            "hosting_usd_per_month": 0.0,
            "idle_kgco2e_per_month": 0.0,
            "power_kw_max": 0.0,
            "embodied_kgco2e_unit": a["embodied_kgco2e"].to_numpy()
            * cloud["accelerators_per_instance"].astype(int).to_numpy(),
            "electricity_usd_per_kwh": 0.0,
            "site_power_cap_kw": np.nan,
            "staff_by_size": False,
            "staff_usd_per_admin_year": 0.0,
            "staff_usd_per_server_year": 0.0,
            "staff_basis": "",
            "availability_cap": [
                problem.availability_caps.get(o, int(c))
                for o, c in zip(
                    cloud["offering_id"].tolist(),
                    cloud["availability_cap_instances"].tolist(),
                    strict=True,
                )
            ],
            "residency_zone": cloud["residency_zone"].to_numpy(),
            "tier": cloud["tier"].to_numpy(),
            "sla": cloud["sla"].to_numpy(),
            "availability_cap_basis": cloud["availability_cap_basis"].to_numpy(),
            "grid_gco2_per_kwh": cloud["grid_gco2_per_kwh"].to_numpy(),
            "pue": cloud["pue"].to_numpy(),
            "existing_units": [
                existing_res.get((o, m), 0)
                for o, m in zip(cloud["offering_id"].tolist(), cloud["mode"].tolist(), strict=True)
            ],
        }
    )
    return cloud


def _owned_pools(problem: Problem, catalog: Catalog) -> list[dict]:
    """One pool per (server, site) the problem allows (or holds at the start): capex,
    lead time, life, hosting per month, idle CO2e, power cap."""
    owned_frames = []
    if "owned" in problem.modes or problem.existing_fleet:
        existing: Counter[tuple[str, str]] = Counter()
        for s in problem.existing_fleet:
            existing[(s.server, s.site)] += s.units
        sites = catalog.sites
        if problem.site_ids is not None:
            sites = sites[sites["site_id"].isin(problem.site_ids)]
        if problem.residency is not None:
            sites = sites[sites["residency_zone"].isin(problem.residency)]
        if "owned" not in problem.modes:
            keys = set(existing)
        else:
            keys = None
        for server_id, server in catalog.servers.iterrows():
            for site_id, site in sites.iterrows():
                if keys is not None and (server_id, site_id) not in keys:
                    continue
                apu = int(server["accelerators_per_server"])
                owned_frames.append(
                    {
                        "pool_id": owned_offering_id(str(server_id), str(site_id)) + "#owned",
                        "kind": "owned",
                        "offering_id": owned_offering_id(str(server_id), str(site_id)),
                        "server_id": server_id,
                        "site_id": site_id,
                        "provider": "owned",
                        "region": site_id,
                        "instance_type": server_id,
                        "mode": "owned",
                        "accelerator_id": server["accelerator_id"],
                        "accels_per_unit": apu,
                        "nvlink": bool(server["nvlink"]),
                        "network_gbps": float(server["network_gbps"])
                        if pd.notna(server["network_gbps"])
                        else 100.0,
                        "price_usd_per_hour": 0.0,
                        # an owned line rests on its server's price (catalogs/servers.csv)
                        "price_date": str(server["price_date"]),
                        "price_source": str(server["source"]),
                        "price_confidence": str(server["price_confidence"]),
                        "price_currency": str(server["currency"]),
                        "term_months": 0.0,
                        "capex_usd": float(server["capex_usd"]),
                        "lead_months": float(server["lead_time_days"]) / DAYS_PER_MONTH,
                        "lifetime_months": float(server["lifetime_years"]) * 12.0,
                        "hosting_usd_per_month": owned_hosting_usd_per_month(server, site),
                        "idle_kgco2e_per_month": owned_idle_kwh_per_month(server, site)
                        * float(site["grid_gco2_per_kwh"])
                        / 1000.0,
                        "power_kw_max": float(server["power_kw"]),
                        "embodied_kgco2e_unit": float(server["embodied_kgco2e"]),
                        "electricity_usd_per_kwh": float(site["electricity_usd_per_kwh"]),
                        "availability_cap": int(
                            math.floor(float(site["power_cap_kw"]) / float(server["power_kw"]))
                        ),
                        "site_power_cap_kw": float(site["power_cap_kw"]),
                        "residency_zone": site["residency_zone"],
                        "tier": "owned",
                        "sla": "",
                        "availability_cap_basis": "site",
                        "grid_gco2_per_kwh": float(site["grid_gco2_per_kwh"]),
                        "pue": float(site["pue"]),
                        "existing_units": existing.get((str(server_id), str(site_id)), 0),
                        **_staff_columns(site),
                    }
                )
    return owned_frames


def build_pools(problem: Problem, catalog: Catalog) -> pd.DataFrame:
    """Every (offering, mode) and (server, site) the problem allows, with its economics;
    the sites the problem describes itself join the catalog's (:mod:`solver.inputs.sites`)."""
    catalog = with_problem_sites(problem, catalog)
    _check_names(problem, catalog)
    check_savings_plans(problem, catalog)
    acc = catalog.accelerators
    cloud = _cloud_pools(problem, catalog)
    owned_frames = _owned_pools(problem, catalog)
    pools = (
        pd.concat([cloud, pd.DataFrame(owned_frames)], ignore_index=True) if owned_frames else cloud
    )
    pools = pools.merge(
        acc[
            [
                "accelerator_id",
                "vendor",
                "device_class",
                "bf16_dense_tflops",
                "fp8_dense_tflops",
                "int8_dense_tops",
                "fp4_dense_tflops",
                "memory_gb",
                "mem_bandwidth_gbps",
                "scaleup_gbps",
                "tdp_w",
                "ecc",
                "frameworks",
            ]
        ].reset_index(drop=True),
        on="accelerator_id",
        how="left",
    )
    return pools.sort_values("pool_id", kind="stable").reset_index(drop=True)


def _staff_columns(site: pd.Series) -> dict[str, object]:
    """An owned pool's staff rule (solver/inputs/staff.py): whether its site charges staff
    by fleet size (the saving past 1,000 servers is :mod:`solver.core.staff`'s), and what
    one administrator costs a year."""
    rule = staff_rule(site)
    return {
        "staff_by_size": rule.by_fleet_size,
        "staff_usd_per_admin_year": rule.usd_per_admin_year,
        "staff_usd_per_server_year": rule.small_fleet_usd_per_server_year,
        "staff_basis": rule.basis,
    }


def owned_idle_kwh_per_month(server: pd.Series, site: pd.Series) -> float:
    """Energy an owned server draws idle for a month in service (kWh, PUE included)."""
    return IDLE_POWER_FRACTION * float(server["power_kw"]) * float(site["pue"]) * HOURS_PER_MONTH


def owned_hosting_usd_per_month(server: pd.Series, site: pd.Series) -> float:
    """Everything an owned server costs per month in service, used or not: colocation
    (USD per kW-month of its maximum power), maintenance, staff and its idle power.

    Staff is the site's rate while it holds at most 1,000 servers
    (:attr:`solver.inputs.staff.StaffRule.small_fleet_usd_per_server_year`); the saving of
    a larger fleet is charged by :mod:`solver.core.staff`."""
    return (
        float(site["colocation_usd_per_kw_month"]) * float(server["power_kw"])
        + float(server["maintenance_usd_per_year"]) / 12.0
        + staff_rule(site).small_fleet_usd_per_server_year / 12.0
        + owned_idle_kwh_per_month(server, site) * float(site["electricity_usd_per_kwh"])
    )


def unit_power_kw(pools: pd.DataFrame, utilisation: float) -> np.ndarray:
    """Power of one unit in use at a utilisation, kW.

    Cloud: GPUs + host, all of it (the price covers idle time). Owned: only the power
    above idle, as the idle draw is charged with the hosting for every month in service.
    """
    frac = IDLE_POWER_FRACTION + (1.0 - IDLE_POWER_FRACTION) * utilisation
    cloud_kw = (
        pools["tdp_w"].to_numpy()
        * pools["accels_per_unit"].to_numpy()
        * frac
        * (1.0 + HOST_POWER_FRACTION)
        / 1000.0
    )
    owned_kw = pools["power_kw_max"].to_numpy() * (1.0 - IDLE_POWER_FRACTION) * utilisation
    return np.where(pools["kind"].to_numpy() == "owned", owned_kw, cloud_kw)


def unit_hour_coefficients(pools: pd.DataFrame, utilisation: float) -> dict[str, np.ndarray]:
    """Per unit-hour in use: energy (kWh), energy cost (USD, owned only), CO2e (kg).

    Cloud units also carry amortised embodied CO2e per hour; owned units carry
    theirs at purchase (or amortised by policy) on the purchase variable.
    """
    kwh = unit_power_kw(pools, utilisation) * pools["pue"].to_numpy()
    co2 = kwh * pools["grid_gco2_per_kwh"].to_numpy() / 1000.0
    cloud = pools["kind"].to_numpy() == "cloud"
    co2 = co2 + np.where(
        cloud, physics.embodied_kgco2e_per_hour(pools["embodied_kgco2e_unit"].to_numpy()), 0.0
    )
    energy_cost = np.where(cloud, 0.0, kwh * pools["electricity_usd_per_kwh"].to_numpy())
    return {"kwh": kwh, "energy_usd": energy_cost, "kgco2e": co2}


# --------------------------------------------------------------------------- filters


def hardware_reason(rule: HardwareRule, name: str) -> str:
    """Why a pool is left out by one of a workload's hardware lists (:data:`LISTS`)."""
    if name == "runtime":
        vendor = str(rule.runtime_vendor)
        return f"runtime {rule.runtime} runs on {VENDOR_HARDWARE.get(vendor, vendor)} hardware only"
    return {
        "accelerators": "accelerator not in accelerators",
        "vendors": "vendor not in vendors",
        "exclude_accelerators": "accelerator in exclude_accelerators",
        "exclude_vendors": "vendor in exclude_vendors",
    }[name]


def _requirement_mask(
    w: TrainingWorkload | InferenceWorkload | BatchInferenceWorkload,
    pools: pd.DataFrame,
    rule: HardwareRule | None = None,
    problem_min_tier: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Pools a workload may use, and for the others the first requirement broken: its
    hardware lists and runtime first (``rule``), then providers, regions, residency, tier,
    framework, ECC, precision and spot."""
    ok = np.ones(len(pools), dtype=bool)
    reason = np.full(len(pools), "", dtype=object)

    def drop(mask: np.ndarray, why: str) -> None:
        nonlocal ok
        newly = ok & ~mask
        reason[newly] = why
        ok &= mask

    if rule is not None:
        ids, vendors = pools["accelerator_id"].to_numpy(), pools["vendor"].to_numpy()
        for name, allowed in rule.allowed(ids, vendors):
            drop(allowed, hardware_reason(rule, name))
    if w.providers is not None:  # cloud providers; owned servers are governed by modes
        drop(
            pools["provider"].isin(w.providers).to_numpy() | (pools["kind"] == "owned").to_numpy(),
            "provider not allowed",
        )
    if w.regions is not None:
        drop(
            pools["region"].isin(w.regions).to_numpy() | (pools["kind"] == "owned").to_numpy(),
            "region not allowed",
        )
    if w.residency is not None:
        drop(pools["residency_zone"].isin(w.residency).to_numpy(), "residency")
    floor = w.tier_floor(problem_min_tier)
    if floor is not None:  # owned servers sit in the buyer's own datacenter: they qualify
        tiers = pools.get("tier", pd.Series("unknown", index=pools.index)).astype(str)
        default = w.min_tier is None
        drop(
            tiers.map(lambda t: tier_allowed(t, floor, default=default)).to_numpy(dtype=bool),
            "marketplace host (online serving needs datacenter hosts: min_tier opts in)"
            if default
            else f"provider tier below {floor}",
        )
    frameworks = ";" + pools["frameworks"].astype(str) + ";"
    drop(
        frameworks.str.contains(f";{w.framework};", regex=False).to_numpy(dtype=bool),
        f"framework ({w.framework})",
    )
    if w.require_ecc:
        drop(pools["ecc"].astype(bool).to_numpy(), "no ECC memory")
    for precision in _hardware_precisions(w):
        drop(supports_precision(pools, precision), f"no {precision.upper()} support")
    if not w.interruptible:
        drop((pools["mode"] != Mode.SPOT).to_numpy(), "spot not allowed (job not interruptible)")
    return ok, reason


def _hardware_notes(rule: HardwareRule, reasons: Counter) -> list[dict]:
    """What each of a workload's hardware lists left out: the list, its values, the
    runtime's vendor and the options (pools) it removed (none already removed before it)."""
    notes = []
    for name in LISTS:
        values = rule.values(name)
        if values:
            notes.append(
                {
                    "list": name,
                    "values": values,
                    "vendor": rule.runtime_vendor if name == "runtime" else None,
                    "options_left_out": int(reasons.get(hardware_reason(rule, name), 0)),
                }
            )
    return notes


def weak_price_pools(problem: Problem, pools: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Pools left out under ``weak_price_policy: exclude``: their price is below
    ``min_price_confidence`` or older than ``max_price_age_days`` at the plan's start (an
    unknown date counts as too old). Pools holding existing units stay (what is held is
    used). Returns the mask and, for each pool left out, why."""
    out = np.zeros(len(pools), dtype=bool)
    why = np.full(len(pools), "", dtype=object)
    if problem.weak_price_policy != "exclude" or len(pools) == 0:
        return out, why
    held = pools["existing_units"].to_numpy() > 0
    minimum, max_age = problem.min_price_confidence, problem.max_price_age_days
    if max_age is not None:
        on = first_day(problem.start)
        old = pools["price_date"].map(lambda d: too_old(d, on, max_age)).to_numpy(dtype=bool)
        why[old & ~held] = f"price older than max_price_age_days {max_age:g} (or undated)"
        out |= old & ~held
    if minimum is not None:
        below = ~pools["price_confidence"].map(lambda c: meets_confidence(c, minimum))
        weak = below.to_numpy(dtype=bool) & ~held
        why[weak & ~out] = f"price confidence below {minimum}"
        out |= weak
    return out, why


def _hardware_precisions(w: Workload) -> list[str]:
    """8-bit formats a workload computes or stores in, which the hardware must support.

    FP8 needs FP8 tensor cores (Hopper, Ada, Blackwell, MI300, Gaudi...); INT8 needs INT8
    ones. 4-bit weight-only formats dequantise in kernels that run on any recent GPU.
    """
    used = {
        getattr(w, "precision", None),
        getattr(w, "weight_precision", None),
        getattr(w, "kv_precision", None),
    }
    return sorted(p for p in used if p in ("fp8", "int8"))


def supports_precision(table: pd.DataFrame, precision: str) -> np.ndarray:
    """Rows (pools or accelerators) whose accelerator has tensor throughput in ``precision``."""
    column = {"fp8": "fp8_dense_tflops", "int8": "int8_dense_tops"}[precision]
    return table[column].to_numpy(dtype=float) > 0


def _peak_tflops(pools: pd.DataFrame, precision: str) -> np.ndarray:
    return physics.compute_peak_tflops(pools, precision)


# --------------------------------------------------------------------------- inference


def inference_capacity(
    w: InferenceWorkload | BatchInferenceWorkload,
    spec: ModelSpec,
    pools: pd.DataFrame,
    memory_headroom: float,
    prompt_tokens: float,
    output_tokens: float,
    degrees: tuple[int, ...] = TP_DEGREES,
) -> pd.DataFrame:
    """Best tensor-parallel degree per pool (among ``degrees``) and its output tokens/s
    per unit.

    Returns columns tp_degree, batch, replicas_per_unit, tokens_per_s_per_unit,
    step_s, ttft_s, reason ('' when feasible).
    """
    if spec.layers is None or spec.kv_heads is None or spec.head_dim is None:
        raise ProcureError(
            f"workload {w.name!r}: inference needs the model's layers, kv_heads and head_dim",
            field=f"{w.name}.model",
            fix="use a preset (procure catalog list --models) or give the full shape",
        )
    n = len(pools)
    best_cap = np.zeros(n)
    best = {
        "tp_degree": np.zeros(n, dtype=int),
        "batch": np.zeros(n, dtype=int),
        "replicas_per_unit": np.zeros(n, dtype=int),
        "step_s": np.full(n, np.nan),
        "ttft_s": np.full(n, np.nan),
    }
    reason = np.full(n, "weights do not fit any replica shape", dtype=object)
    best_tpot_s = np.full(n, np.inf)  # fastest decode step reachable where the weights fit
    best_ttft_s = np.full(n, np.inf)
    apu = pools["accels_per_unit"].to_numpy()
    nvlink = pools["nvlink"].to_numpy(dtype=bool)
    model = physics.served_model(spec, w.weight_precision, w.kv_precision)
    dev = physics.device_figures(pools, w.weight_precision, nvlink, w.runtime)
    allow_pcie = w.allow_tensor_parallel_over_pcie
    for d in degrees:
        shape_ok = (apu >= d) & (apu % d == 0)
        if d > 1 and not allow_pcie:
            pcie_block = shape_ok & ~nvlink
            reason = np.where(
                pcie_block & (best_cap == 0),
                "tensor parallelism needs NVLink (allow_tensor_parallel_over_pcie)",
                reason,
            )
            shape_ok &= nvlink
        if not shape_ok.any():
            continue
        res = physics.best_decode(
            model,
            prompt_tokens=prompt_tokens,
            output_tokens=output_tokens,
            tpot_slo_s=w.tpot_slo_s if isinstance(w, InferenceWorkload) else None,
            ttft_slo_s=w.ttft_slo_s if isinstance(w, InferenceWorkload) else None,
            d=np.full(n, float(d)),
            dev=dev,
            memory_headroom=memory_headroom,
            load=w.load_percentile if isinstance(w, InferenceWorkload) else None,
        )
        replicas = np.where(shape_ok, apu // d, 0)
        cap = replicas * res.tokens_per_s
        better = shape_ok & (cap > best_cap + 1e-9)
        best_cap = np.where(better, cap, best_cap)
        best["tp_degree"] = np.where(better, d, best["tp_degree"])
        best["batch"] = np.where(better, res.batch, best["batch"])
        best["replicas_per_unit"] = np.where(better, replicas, best["replicas_per_unit"])
        best["step_s"] = np.where(better, res.step_s, best["step_s"])
        best["ttft_s"] = np.where(better, res.ttft_s, best["ttft_s"])
        # keep the most informative reason for pools still without a shape
        reason = np.where((best_cap == 0) & shape_ok & (res.reason != ""), res.reason, reason)
        fits = shape_ok & (res.b_max_memory >= 1)
        best_tpot_s = np.where(fits, np.minimum(best_tpot_s, res.step_s), best_tpot_s)
        best_ttft_s = np.where(fits, np.minimum(best_ttft_s, res.ttft_s), best_ttft_s)
    reason = np.where(best_cap > 0, "", reason)
    return pd.DataFrame(
        {
            **best,
            "tokens_per_s_per_unit": best_cap,
            "reason": reason,
            "best_tpot_s": best_tpot_s,
            "best_ttft_s": best_ttft_s,
        }
    )


def _average_requests_per_s(w: InferenceWorkload) -> float:
    dem = w.demand
    if dem.requests_per_s is not None:
        return dem.requests_per_s
    if dem.tokens_per_s is not None:
        return dem.tokens_per_s / w.output_tokens
    return dem.users * dem.requests_per_user_per_day / 86_400.0


def average_tokens_per_s(w: InferenceWorkload) -> float:
    """Average output tokens/s of an online workload."""
    d = w.demand
    return physics.demand_tokens_per_s(
        users=d.users,
        requests_per_user_per_day=d.requests_per_user_per_day,
        tokens_per_s=d.tokens_per_s,
        requests_per_s=d.requests_per_s,
        output_tokens=w.output_tokens,
    )


def _workload_periods(
    w: InferenceWorkload | BatchInferenceWorkload, periods: pd.DataFrame
) -> list[int]:
    names = list(periods["name"])
    if w.periods is None:
        return list(range(len(names)))
    return [names.index(p) for p in w.periods]


def build_demand(problem: Problem, periods: pd.DataFrame, blocks: pd.DataFrame) -> pd.DataFrame:
    """Capacity to provide per (workload, period, block[, bucket]), headroom applied.

    Online: tokens/s (or requests/s per bucket) = average x the workload's factor in
    the block (:func:`solver.load.resolve_load`: the max of its hourly factors over the
    block's hours; with explicit load_blocks the block's demand_factor, or the
    workload's peak_to_average when the block gives none) x (1 + demand_headroom)
    / max_utilisation: the capacity at which the block's demand keeps the units at
    the workload's utilisation target, x its ``demand_by_period`` factor in the period.
    Batch: output tokens spread evenly over the
    hours of its periods (no utilisation target: a batch job may run flat out).
    """
    load_factors = resolve_load(problem).factors
    rows = []
    for w in problem.workloads:
        if isinstance(w, TrainingWorkload):
            continue
        tps = _workload_periods(w, periods)
        for t in tps:
            for b in range(len(blocks)):
                if isinstance(w, InferenceWorkload):
                    factor = load_factors[w.name][b]
                    factor *= w.demand_by_period.get(str(periods.at[t, "name"]), 1.0)
                    scale = factor * (1.0 + problem.demand_headroom) / w.max_utilisation
                    if w.traffic_mix:
                        total_rps = _average_requests_per_s(w) * scale
                        for j, bucket in enumerate(w.traffic_mix):
                            rows.append(
                                (
                                    w.name,
                                    t,
                                    b,
                                    j,
                                    total_rps * bucket.share,
                                    "requests_per_s",
                                    float(bucket.output_tokens),
                                )
                            )
                    else:
                        rows.append(
                            (w.name, t, b, -1, average_tokens_per_s(w) * scale, "tokens_per_s", 1.0)
                        )
                else:
                    hours = float(periods.loc[tps, "hours"].sum())
                    rows.append(
                        (
                            w.name,
                            t,
                            b,
                            -1,
                            w.output_tokens_total / (hours * 3600.0),
                            "tokens_per_s",
                            1.0,
                        )
                    )
    return pd.DataFrame(
        rows, columns=["workload", "period", "block", "bucket", "demand", "unit", "tokens_per_unit"]
    )


# --------------------------------------------------------------------------- training


def training_window(w: TrainingWorkload, periods: pd.DataFrame) -> tuple[int, int]:
    names = list(periods["name"])
    first = names.index(w.start_period) if w.start_period else 0
    last = names.index(w.end_period) if w.end_period else len(names) - 1
    if last < first:
        raise ProcureError(
            f"training workload {w.name!r} ends (end_period {w.end_period!r}) before it starts "
            f"(start_period {w.start_period!r})",
            field=f"{w.name}.end_period",
            fix="put end_period at or after start_period",
        )
    return first, last


def training_setup(
    w: TrainingWorkload,
    spec: ModelSpec,
    pools: pd.DataFrame,
    memory_headroom: float,
    margin: str | float = "low",
) -> dict[str, np.ndarray | float | str]:
    """Memory-minimum cluster, FLOPs, per-device rate and spot preemptions for every pool.

    FLOPs include attention when the model's shape is known (``physics.training_flops``)
    and count the parameters a token uses (a mixture of experts' active ones); memory
    holds all of them.
    The MFU is the family's published figure and band at the run's precision, against the
    same dense peak (``physics.default_mfu``), with the cluster size it was measured at;
    the cluster is sized at the MFU the ``margin`` picks from the band
    (``physics.planning_mfu``: the low end by default). A workload's own ``mfu`` is taken
    at the job's scale (``mfu_measured_at`` = inf: no scaling loss) with no band. Spot
    pools carry their provider's preemptions per instance-hour.
    """
    recompute = w.recompute
    act_sel = physics.activation_gb_per_device(
        seq_len=w.seq_len,
        micro_batch=w.micro_batch,
        hidden_size=spec.hidden_size,
        layers=spec.layers,
        attention_heads=spec.attention_heads,
        recompute=recompute,
        params=spec.params,
    )
    mem = pools["memory_gb"].to_numpy(dtype=float)
    n_min = physics.training_min_devices(spec.params, w.optimizer, act_sel, mem, memory_headroom)
    flops = physics.training_flops(
        spec.active_params,
        w.tokens,
        w.optimizer,
        recompute,
        layers=spec.layers,
        hidden_size=spec.hidden_size,
        seq_len=w.seq_len,
    )
    peak = _peak_tflops(pools, w.precision)
    # the MFU and the fabric depend on the accelerator alone: once per distinct one
    accel = pools[["accelerator_id", "vendor", "device_class", "scaleup_gbps"]].assign(
        bf16=pools["bf16_dense_tflops"].to_numpy(float), peak=peak
    )
    where, distinct = pd.factorize(pd.MultiIndex.from_frame(accel))
    measured = (
        [physics.own_mfu(float(w.mfu))] * len(distinct)
        if w.mfu is not None
        else [
            physics.default_mfu(a, v, c, float(s), w.precision, float(b), float(p))
            for a, v, c, s, b, p in distinct
        ]
    )

    def per_pool(values: list, dtype: type = float) -> np.ndarray:
        return np.array(values, dtype=dtype)[where]

    mfu = per_pool([physics.planning_mfu(m, margin) for m in measured])
    measured_at = per_pool([m.measured_at_accelerators for m in measured])
    joins = np.array(
        [physics.scaleup_joins_units(a, v, c, float(s)) for a, v, c, s, _, _ in distinct],
        dtype=bool,
    )[where]
    rate = {p: physics.spot_preemptions_per_instance_hour(p) for p in pools["provider"].unique()}
    preemptions = np.where(
        pools["mode"].to_numpy() == Mode.SPOT, pools["provider"].map(rate).to_numpy(float), 0.0
    )
    return {
        "n_min_devices": n_min,
        "flops": flops,
        "activation_gb": act_sel,
        "mfu": mfu,
        "mfu_point": per_pool([m.mfu for m in measured]),
        "mfu_low": per_pool([m.low for m in measured]),
        "mfu_high": per_pool([m.high for m in measured]),
        "mfu_source": per_pool([m.source for m in measured], object),
        "mfu_band": per_pool([m.band for m in measured], object),
        "mfu_measured_at": measured_at,
        "joins_by_scaleup": joins,
        "preemptions_per_unit_hour": preemptions,
        "peak_tflops": peak,
    }


def _smallest_cluster(
    hours_at: Callable[[np.ndarray], np.ndarray], lo: np.ndarray, hi: np.ndarray, limit_h: float
) -> np.ndarray:
    """Per pool, the fewest units in [lo, hi] whose job finishes within ``limit_h`` (0: none).

    Hours fall as units grow up to ``hi`` (scaling efficiency f ** log2(n) with
    f >= 0.8 keeps n x efficiency increasing; spot pools have ``hi`` capped at their
    fastest cluster, beyond which preemptions of more instances cost more than they
    add), so a vectorised bisection over all pools finds it.
    """
    fits_hi = (hi >= lo) & (hours_at(np.maximum(hi, 1)) <= limit_h + 1e-9)
    lo, hi = lo.copy(), np.where(fits_hi, hi, lo)
    while np.any(lo < hi):
        mid = (lo + hi) // 2
        ok = hours_at(np.maximum(mid, 1)) <= limit_h + 1e-9
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid + 1)
    return np.where(fits_hi, lo, 0)


def _fastest_spot_cluster(
    setup: dict, apu: np.ndarray, network: np.ndarray, spot: np.ndarray, hi: np.ndarray
) -> np.ndarray:
    """Per pool, the units (1 to ``hi.max()``) at which a spot job finishes soonest (0
    off spot). Hours are FLOPs / (units x peak x MFU x scaling x (1 - lost)): the FLOPs,
    peak and MFU only scale them, so the fastest size depends on the units' shape,
    network, the MFU's measured scale and the preemption rate alone, computed once per
    distinct pool of those."""
    out = np.zeros(len(apu), dtype=int)
    idx = np.flatnonzero(spot)
    shape = np.stack(
        [
            apu[idx].astype(float),
            network[idx],
            setup["mfu_measured_at"][idx],
            setup["joins_by_scaleup"][idx].astype(float),
            setup["preemptions_per_unit_hour"][idx],
        ],
        axis=1,
    )
    distinct, where = np.unique(shape, axis=0, return_inverse=True)
    units = np.arange(1, int(hi.max()) + 1)[:, None]
    hours = physics.cluster_training_hours(
        setup["flops"],
        units * distinct[:, 0],
        distinct[:, 0],
        1.0,
        1.0,
        distinct[:, 2],
        distinct[:, 1],
        distinct[:, 3].astype(bool),
        distinct[:, 4],
    )[0]
    out[idx] = (np.argmin(hours, axis=0) + 1)[where.ravel()]
    return out


def _training_options(
    w: TrainingWorkload,
    spec: ModelSpec,
    pools: pd.DataFrame,
    periods: pd.DataFrame,
    problem: Problem,
    report: CompileReport,
) -> list[dict]:
    first, last = training_window(w, periods)
    setup = training_setup(w, spec, pools, problem.memory_headroom, problem.training_margin_of(w))
    apu = pools["accels_per_unit"].to_numpy()
    u_min = np.where(setup["n_min_devices"] > 0, np.ceil(setup["n_min_devices"] / apu), 0).astype(
        int
    )
    network = pools["network_gbps"].to_numpy(dtype=float)
    spot = pools["mode"].to_numpy() == Mode.SPOT
    rented = np.isin(pools["mode"].to_numpy(), RENTED_MODES)
    price = pools["price_usd_per_hour"].to_numpy(dtype=float)

    def cluster(units: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # one node per unit (instance or server); the same function the estimator uses
        return physics.cluster_training_hours(
            setup["flops"],
            units * apu,
            apu,
            setup["peak_tflops"],
            setup["mfu"],
            setup["mfu_measured_at"],
            network,
            setup["joins_by_scaleup"],
            setup["preemptions_per_unit_hour"],
        )

    def hours_at(units: np.ndarray) -> np.ndarray:
        return cluster(units)[0]

    def hours_at_point(units: np.ndarray) -> np.ndarray:
        # hours are FLOPs / (... x MFU ...): at the point MFU they scale by mfu / point
        return cluster(units)[0] * setup["mfu"] / setup["mfu_point"]

    cap_units = pools["availability_cap"].to_numpy().astype(int)
    if w.max_accelerators is not None:
        cap_units = np.minimum(cap_units, w.max_accelerators // apu)
    cap_units = np.minimum(cap_units, MAX_TRAINING_UNITS)
    lo = np.maximum(u_min, 1)
    hi = np.where(u_min > 0, cap_units, 0)
    if spot.any() and hi.max() > 1:
        # spot: hours stop falling once more instances add more preemptions than speed
        hi = np.where(
            spot, np.minimum(hi, _fastest_spot_cluster(setup, apu, network, spot, hi)), hi
        )
    p_hours = periods["hours"].to_numpy()
    deadline_h = w.deadline_days * 24.0 if w.deadline_days else np.inf
    options: list[dict] = []
    unit_coef = unit_hour_coefficients(pools, TRAINING_UTILISATION)
    for s in range(first, last + 1):
        chosen_prev = np.zeros(len(pools), dtype=int)
        # the hours a job starting in s may take (the verifier's window), and what the
        # point MFU would need of each pool in it: why a margin moved the plan
        window_h = min(float(p_hours[s : last + 1].sum()), deadline_h)
        at_point = _smallest_cluster(hours_at_point, lo, hi, window_h)
        for e in range(s, last + 1):
            limit = min(float(p_hours[s : e + 1].sum()), deadline_h)
            units = _smallest_cluster(hours_at, lo, hi, limit)
            new = (units > 0) & (units != chosen_prev)
            chosen_prev = np.where(units > 0, units, chosen_prev)
            if not new.any():
                continue
            job_h, eff, lost = cluster(np.maximum(units, 1))
            for i in np.flatnonzero(new):
                u, h = int(units[i]), float(job_h[i])
                # periods actually spanned and the hours run in each
                run = []
                left = h
                for t in range(s, e + 1):
                    take = min(left, float(p_hours[t]))
                    if take > 1e-9:
                        run.append((t, take))
                    left -= take
                run = run or [(s, h)]  # a job of (almost) no hours still starts in s
                options.append(
                    {
                        "pool_index": int(i),
                        "n_units": u,
                        "n_accelerators": u * int(apu[i]),
                        "job_hours": h,
                        "start_period": s,
                        "end_period": run[-1][0],
                        "hours_by_period": tuple(run),
                        "mfu": float(setup["mfu"][i]),
                        "mfu_measured_at_accelerators": float(setup["mfu_measured_at"][i])
                        if np.isfinite(setup["mfu_measured_at"][i])
                        else np.nan,
                        "mfu_point": float(setup["mfu_point"][i]),
                        "mfu_low": float(setup["mfu_low"][i]),
                        "mfu_high": float(setup["mfu_high"][i]),
                        "mfu_source": str(setup["mfu_source"][i]),
                        "mfu_band": str(setup["mfu_band"][i]),
                        "window_hours": window_h,
                        "units_at_point_mfu": int(at_point[i]),
                        "scaling_efficiency": float(eff[i]),
                        "spot_lost_fraction": float(lost[i]),
                        "energy_kwh": float(unit_coef["kwh"][i]) * u * h,
                        "energy_usd": float(unit_coef["energy_usd"][i]) * u * h,
                        "kgco2e": float(unit_coef["kgco2e"][i]) * u * h,
                        "rent_usd": ledger.rent_usd(float(price[i]), u, h) if rented[i] else 0.0,
                    }
                )
    report.generated += len(options)
    return options


# --------------------------------------------------------------------------- compile


def compile_problem(
    problem: Problem, catalog: Catalog, *, prune_dominated: bool = True
) -> Compiled:
    """Score every workload against every pool; return the options table.

    ``prune_dominated`` drops cloud pools that cheaper pools of the same capacity make
    useless at *these* prices and demands (:func:`prune_dominated_pools`), and rented
    options that cheaper, larger options with room replace
    (:func:`solver.dominance.prune_dominated_options`); analyses that
    change prices, demand or limits (break-even prices, sweeps, re-pricing a plan)
    compile with False.

    Raises
    ------
    ProcureError
        When the problem names something the catalog does not know.
    """
    periods = build_periods(problem)
    blocks = build_blocks(problem)
    pools = build_pools(problem, catalog)
    rules = hardware_rules(problem, catalog)
    report = CompileReport(pools=len(pools), load_curve=resolve_load(problem).as_dict())
    models: dict[str, ModelSpec] = {}
    frames: list[pd.DataFrame] = []
    bucket_rows: list[tuple[int, int, float]] = []
    inf_coef = unit_hour_coefficients(pools, INFERENCE_UTILISATION)
    weak, weak_why = weak_price_pools(problem, pools)
    for wi, w in enumerate(problem.workloads):
        spec = resolve_model(w.model, catalog, f"workloads[{wi}] ({w.name})")
        models[w.name] = spec
        allowed, why = _requirement_mask(w, pools, rules[w.name], problem.min_tier)
        why = np.where(allowed & weak, weak_why, why)
        allowed = allowed & ~weak
        local_reasons = Counter(why[~allowed])
        notes = _hardware_notes(rules[w.name], local_reasons)
        if notes:
            report.hardware[w.name] = notes
        report.infeasible.update(local_reasons)
        sub = pools[allowed]
        if isinstance(w, TrainingWorkload):
            opts = _training_options(w, spec, sub, periods, problem, report)
            no_fit = training_setup(w, spec, sub, problem.memory_headroom)["n_min_devices"] == 0
            report.infeasible["training: activations alone exceed device memory"] += int(
                no_fit.sum()
            )
            local_reasons["activations alone exceed device memory"] += int(no_fit.sum())
            if not opts:
                local_reasons[_no_cluster_reason(w, problem)] += int((~no_fit).sum())
            kept = pd.DataFrame(_prune_training(opts, sub, report))
            if not kept.empty:
                kept.insert(0, "pool_id", sub["pool_id"].to_numpy()[kept.pop("pool_index")])
                kept.insert(0, "workload_kind", "training")
                kept.insert(0, "workload", w.name)
            frame = kept
        else:
            frame = _inference_rows(w, spec, sub, problem, catalog, inf_coef, report, local_reasons)
        report.per_workload[w.name] = len(frame)
        if len(frame) == 0:
            raise_for_no_option(w, local_reasons)
        frames.append(frame)
    options = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    demand = build_demand(problem, periods, blocks)
    # ids before pruning: an option has the same id (and its variables the same names)
    # in the pruned and the unpruned model of a problem, so a plan carries over by name
    options.insert(0, "option_id", np.arange(len(options)))
    if prune_dominated:
        options = prune_dominated_pools(options, pools, demand, problem, report)
        options, dropped = dominance.prune_dominated_options(options, pools, demand, problem)
        report.pruned.update(dropped)
        options = options.reset_index(drop=True)
    rps_of = options.get("_rps", pd.Series([None] * len(options), dtype=object))
    for k, rps in zip(options["option_id"], rps_of, strict=True):
        if isinstance(rps, list):
            for j, v in enumerate(rps):
                if v > 0:
                    bucket_rows.append((k, j, float(v)))
    training_hours = _training_hours(options)
    options = options.drop(columns=["_rps", "hours_by_period"], errors="ignore")
    options = options.merge(
        pools[
            [
                "pool_id",
                "kind",
                "mode",
                "provider",
                "region",
                "offering_id",
                "accelerator_id",
                "accels_per_unit",
                "price_usd_per_hour",
            ]
        ],
        on="pool_id",
        how="left",
    )
    report.kept = len(options)
    bucket_capacity = pd.DataFrame(
        bucket_rows, columns=["option_id", "bucket", "requests_per_s_per_unit"]
    )
    return Compiled(
        problem=problem,
        periods=periods,
        blocks=blocks,
        pools=pools,
        options=options,
        bucket_capacity=bucket_capacity,
        demand=demand,
        models=models,
        report=report,
        training_hours=training_hours,
        pruned_dominated=prune_dominated,
        quota_accelerators=tuple(
            catalog.resolve_accelerator(q.accelerator) if q.accelerator else None
            for q in problem.quotas
        ),
    )


def repruned(compiled: Compiled, keep: frozenset[str] = frozenset()) -> Compiled:
    """``compiled`` with the cloud pools and rented options pruned that its own problem,
    prices and demand make useless (:func:`prune_dominated_pools`,
    :func:`solver.core.dominance.prune_dominated_options`), option ids unchanged.

    Exact for that problem alone: an analysis that changes a price, a limit or the demand
    compiles every option once, then prunes each variant it solves for itself. Pools in
    ``keep`` are never pruned and never count as room (their price is about to move).
    """
    options = prune_dominated_pools(
        compiled.options,
        compiled.pools,
        compiled.demand,
        compiled.problem,
        CompileReport(),
        keep=keep,
        bucket_capacity=compiled.bucket_capacity,
    ).drop(columns=["_rps"], errors="ignore")
    runs = compiled.training_runs()
    hours = options["option_id"].map(lambda k: tuple(runs[k]) if k in runs else None)
    options, _ = dominance.prune_dominated_options(
        options.assign(hours_by_period=hours).reset_index(drop=True),
        compiled.pools,
        compiled.demand,
        compiled.problem,
        keep=keep,
    )
    return with_options(compiled, options.drop(columns=["hours_by_period"]).reset_index(drop=True))


def with_options(compiled: Compiled, options: pd.DataFrame) -> Compiled:
    """``compiled`` with only ``options`` (a subset of its options table, ids unchanged),
    and the training hours and traffic-mix capacities of those options."""
    ids = options["option_id"]
    th, bc = compiled.training_hours, compiled.bucket_capacity
    return replace(
        compiled,
        options=options,
        training_hours=th[th["option_id"].isin(ids)],
        bucket_capacity=bc[bc["option_id"].isin(ids)],
    )


def _training_hours(options: pd.DataFrame) -> pd.DataFrame:
    """One row per (training option, period it runs in): option_id, period, hours."""
    rows = [
        (int(k), int(t), float(h))
        for k, run in zip(
            options["option_id"], options.get("hours_by_period", [None] * len(options)), strict=True
        )
        if isinstance(run, tuple | list)
        for t, h in run
    ]
    return pd.DataFrame(rows, columns=["option_id", "period", "hours"])


def _signature_parts(
    opt: pd.DataFrame, demand: pd.DataFrame, problem: Problem
) -> tuple[np.ndarray, list[pd.Series]]:
    """Per option: the units its workload needs from its pool alone (peak demand over a
    unit's capacity, + 1 under N+1, at least the minimum serving units; a training job's
    largest cluster), and its workload's part of the pool's signature (the capacities or
    clusters a unit gives that workload)."""
    peak = demand.groupby(["workload", "bucket"])["demand"].max()
    need = np.zeros(len(opt))
    signature_parts: list[pd.Series] = []
    workloads = {w.name: w for w in problem.workloads}
    for key, rows in opt.groupby("workload").groups.items():
        w_name = str(key)
        w = workloads[w_name]
        sub = opt.loc[rows]
        if isinstance(w, TrainingWorkload):
            need[opt.index.get_indexer(rows)] = sub["pool_id"].map(
                sub.groupby("pool_id")["n_units"].max()
            )
            shape = (
                sub["start_period"].astype(str)
                + "-"
                + sub["end_period"].astype(str)
                + "x"
                + sub["n_units"].astype(str)
                + "/"
                + sub["job_hours"].round(6).astype(str)
            )
            shapes: dict[str, list[str]] = {}
            for pool_id, one in sorted(zip(sub["pool_id"].tolist(), shape.tolist(), strict=True)):
                shapes.setdefault(pool_id, []).append(one)
            per_pool = {pool_id: ";".join(v) for pool_id, v in shapes.items()}
            sig = "T" + w_name + ":" + sub["pool_id"].map(per_pool)
        else:
            mix = isinstance(w, InferenceWorkload) and bool(w.traffic_mix)
            if mix:
                rps = np.array([r if isinstance(r, list) else [] for r in sub["_rps"]], dtype=float)
                d = np.array([peak.get((w_name, j), 0.0) for j in range(rps.shape[1])])
                with np.errstate(divide="ignore", invalid="ignore"):
                    units = np.where(rps > 0, d[None, :] / rps, 0.0).sum(axis=1)
                cap_text = pd.Series(
                    [",".join(f"{v:.6g}" for v in r) for r in rps], index=sub.index
                )
            else:
                d = peak.get((w_name, -1), 0.0)
                cap = sub["tokens_per_s_per_unit"].to_numpy(dtype=float)
                units = np.where(cap > 0, d / np.where(cap > 0, cap, 1.0), 0.0)
                cap_text = sub["tokens_per_s_per_unit"].map(lambda v: f"{v:.6g}")
            # N+1: one more unit than the peak needs (that many alone meet every N+1 row)
            spare = 1.0 if isinstance(w, InferenceWorkload) and w.n_plus_1 else 0.0
            fewest = w.min_serving_units if isinstance(w, InferenceWorkload) else 1
            need[opt.index.get_indexer(rows)] = np.maximum(np.ceil(units - 1e-9) + spare, fewest)
            sig = "I" + w_name + ":" + cap_text
        signature_parts.append(sig)
    return need, signature_parts


def prune_dominated_pools(
    options: pd.DataFrame,
    pools: pd.DataFrame,
    demand: pd.DataFrame,
    problem: Problem,
    report: CompileReport,
    *,
    keep: frozenset[str] = frozenset(),
    bucket_capacity: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Drop cloud pools that a cheaper pool of the same kind makes useless.

    Pools in ``keep`` are never pruned and never count as room for others: pruning stays
    exact while their prices move (a break-even search varies one pool's price).
    ``bucket_capacity`` gives traffic-mix capacities when ``options`` is a compiled table
    (without the ``_rps`` column).

    Two cloud pools of one purchase mode have the same *signature* when every workload
    gets the same capacity from a unit of either (tokens/s, requests/s per bucket, the
    same training clusters), emits the same or less per unit-hour when carbon counts,
    and they fall under the same quotas. Within a signature, units
    are interchangeable, so an optimal plan never needs more of them in all than
    ``L`` = the sum over workloads of the units each would need to be served by this
    signature alone (its peak demand over a unit's capacity, plus one under N+1, at
    least its minimum serving units; plus, per training job, its largest cluster).
    Take the pools of a signature by price (then CO2e): once the cheaper pools kept
    hold ``L`` units of availability between them, a dearer pool is never needed (any
    plan using it can move those units to a cheaper pool with room, at no more cost,
    CO2e or anything else; under N+1 the largest unit keeps its capacity), so it is
    pruned with its options. Where a workload keeps its fleet all day (``fleet:
    autoscale`` or ``flat``), one cheaper pool must hold the ``L`` units alone: all of a
    dearer pool's units then move to that one pool in every block (filled to ``L``, it
    serves alone), so it runs all day wherever the dearer one did. Owned pools are kept
    (site power caps and purchases).
    Nothing is pruned under provider shares (:func:`solver.dominance.prunable`).
    """
    if options.empty or not dominance.prunable(problem):
        return options
    carbon = dominance.carbon_counts(problem)
    p = pools.set_index("pool_id")
    opt = options.drop(columns=["kind", "mode"], errors="ignore").join(
        p[["kind", "mode", "availability_cap"]], on="pool_id"
    )
    if "_rps" not in opt and bucket_capacity is not None and "option_id" in opt:
        n_buckets = int(bucket_capacity["bucket"].max()) + 1 if len(bucket_capacity) else 0
        by_option = {
            k: dict(zip(g["bucket"], g["requests_per_s_per_unit"], strict=True))
            for k, g in bucket_capacity.groupby("option_id")
        }
        opt["_rps"] = [
            [by_option.get(k, {}).get(j, 0.0) for j in range(n_buckets)] if k in by_option else []
            for k in opt["option_id"]
        ]
    cloud = opt["kind"] == "cloud"
    need, signature_parts = _signature_parts(opt, demand, problem)
    opt["need"] = need
    opt["sig_part"] = pd.concat(signature_parts).reindex(opt.index)
    cl = opt[cloud]
    if cl.empty:
        return options
    # each pool's signature: its workloads' parts in workload order (plain Python: a
    # groupby with a Python join took most of this function's time)
    parts: dict[str, list[str]] = {}
    ordered = cl.sort_values(["pool_id", "workload"], kind="stable")
    for pool_id, part in zip(
        ordered["pool_id"].tolist(), ordered["sig_part"].tolist(), strict=True
    ):
        parts.setdefault(pool_id, []).append(part)
    pool_sig = pd.Series(
        ["|".join(v) for v in parts.values()], index=pd.Index(list(parts), name="pool_id")
    )
    pool_need = cl.groupby("pool_id")["need"].sum()
    info = p.loc[pool_sig.index]
    key = info["mode"] + "|" + pool_sig
    # a pool holding existing reservations, or one the caller keeps, is its own group
    own = (info["existing_units"] > 0) | info.index.isin(list(keep))
    key = key.where(~own, "own|" + info.index.to_series())
    if dominance.by_domain(problem):
        key = key + "|" + info["provider"] + "|" + info["region"]
    if problem.quotas:
        key = key + "|" + info["accelerator_id"] + "|" + info["accels_per_unit"].astype(str)
    unit_co2 = info["tdp_w"].to_numpy(float) * info["accels_per_unit"].to_numpy(float) * info[
        "pue"
    ].to_numpy(float) * info["grid_gco2_per_kwh"].to_numpy(float) + info[
        "embodied_kgco2e_unit"
    ].to_numpy(float)
    frame = pd.DataFrame(
        {
            "key": key.to_numpy(),
            "price": info["price_usd_per_hour"].to_numpy(float),
            "co2": unit_co2 if carbon else 0.0,
            "cap": info["availability_cap"].to_numpy(float),
            "load": pool_need.reindex(pool_sig.index).to_numpy(float),
        },
        index=pool_sig.index,
    ).sort_values(["key", "price", "co2"], kind="stable")
    # a fleet kept all day moves whole: one cheaper pool must hold all the units
    one_pool = any(dominance.steady_fleet(w) for w in problem.workloads)
    pruned = _pruned_by_key(frame, one_pool)
    if pruned:
        drop = options["pool_id"].isin(pruned)
        report.pruned["cloud pool: cheaper pools of the same capacity have room for all"] += int(
            drop.sum()
        )
        options = options[~drop].reset_index(drop=True)
    return options


def _pruned_by_key(frame: pd.DataFrame, one_pool: bool) -> list[str]:
    """The pools of ``frame`` (index pool ids; ``key``, ``cap``, ``co2``, ``load``; sorted
    by key, price and CO2e) that cheaper pools of their key have room for
    (:func:`prune_dominated_pools`); ``one_pool``: a single cheaper pool must hold them."""
    pruned: list[str] = []
    keys, ids = frame["key"].tolist(), frame.index.tolist()
    caps, co2s, loads = frame["cap"].tolist(), frame["co2"].tolist(), frame["load"].tolist()
    start = 0
    for end in range(1, len(keys) + 1):  # the groups of one key are contiguous (sorted)
        if end < len(keys) and keys[end] == keys[start]:
            continue
        load = float(loads[start])
        kept_cap: list[float] = []
        kept_co2: list[float] = []
        for i in range(start, end) if end - start >= 2 else ():
            fits = [c for c, e in zip(kept_cap, kept_co2, strict=True) if e <= co2s[i]]
            room = max(fits, default=0.0) if one_pool else sum(fits)
            if room >= load:
                pruned.append(ids[i])
            else:
                kept_cap.append(caps[i])
                kept_co2.append(co2s[i])
        start = end
    return pruned


def _inference_rows(
    w: InferenceWorkload | BatchInferenceWorkload,
    spec: ModelSpec,
    sub: pd.DataFrame,
    problem: Problem,
    catalog: Catalog,
    inf_coef: dict[str, np.ndarray],
    report: CompileReport,
    local_reasons: Counter,
) -> pd.DataFrame:
    """Inference options for one workload over the allowed pools (vectorised per pool)."""
    mix = list(w.traffic_mix or []) if isinstance(w, InferenceWorkload) else []
    headroom = problem.memory_headroom
    if mix:
        mean_p = sum(b.share * b.prompt_tokens for b in mix)
        mean_o = sum(b.share * b.output_tokens for b in mix)
        main = inference_capacity(w, spec, sub, headroom, mean_p, mean_o)
    else:
        main = inference_capacity(w, spec, sub, headroom, w.prompt_tokens, w.output_tokens)
    apu = sub["accels_per_unit"].to_numpy()
    acc_ids = sub["accelerator_id"].to_numpy()
    measured = _measured_rps(w, catalog)
    is_measured = np.isin(acc_ids, list(measured))
    reason = main["reason"].to_numpy().astype(object)
    tp = main["tp_degree"].to_numpy()
    if mix:
        shares = np.array([b.share for b in mix])
        outs = np.array([b.output_tokens for b in mix], dtype=float)
        rps, tp = _best_mix_degree(w, spec, sub, headroom, mix)
        if measured:
            fit = calibrate_to_measured(w, spec, catalog, headroom, measured)
            report.calibration[w.name] = fit
            rps = np.where(is_measured[:, None], rps, rps * fit["factor"])
        for acc, values in measured.items():
            rows = acc_ids == acc
            rps[rows] = np.asarray(values, dtype=float)[None, :] * apu[rows, None]
        fits = (rps > 0).any(axis=1)
        reason = np.where(fits, "", np.where(reason == "", "no request-size bucket fits", reason))
        reason = np.where(is_measured & ~fits, "measured throughput is zero", reason)
        with np.errstate(divide="ignore", invalid="ignore"):
            time_per_request = np.where(rps > 0, shares[None, :] / rps, 0.0).sum(axis=1)
            cap_tokens = np.where(fits, float((shares * outs).sum()) / time_per_request, 0.0)
        tp = np.where(is_measured, 1, tp)
    else:
        rps = np.zeros((len(sub), 0))
        cap_tokens = main["tokens_per_s_per_unit"].to_numpy()
    # the share of each estimate the plan counts on (capacity_confidence, capacity_optimism)
    source = np.where(is_measured, "measured", "calibrated" if measured else "physics")
    share = physics.planned_capacity_share(
        problem.capacity_confidence,
        problem.capacity_optimism,
        sub["vendor"].to_numpy(),
        source,
        getattr(w, "runtime", None),
    )
    # one throughput scenario (capacity_scenario, issue 33): x factor, or each estimate at
    # a quantile of its own band (the band capacity_confidence reads)
    band = physics.capacity_band_log(sub["vendor"].to_numpy(), source, getattr(w, "runtime", None))
    if problem.capacity_scenario is not None:
        share = share * problem.capacity_scenario.share(band)
    rps, cap_tokens = rps * share[:, None], cap_tokens * share
    report.generated += len(sub)
    ok = reason == ""
    if isinstance(w, InferenceWorkload) and not ok.any() and len(sub):
        # say how close the best accelerator comes to an SLO that nothing meets
        tpot, ttft = main["best_tpot_s"].min(), main["best_ttft_s"].min()
        slo_words = {
            "time per output token above the SLO at batch 1": (
                f"time per output token above the SLO at batch 1 (best reachable "
                f"{tpot * 1e3:,.1f} ms against {w.tpot_slo_s * 1e3:,.1f} ms)"
            ),
            "time to first token above the SLO": (
                f"time to first token above the SLO (best reachable {ttft:,.2f} s "
                f"against {w.ttft_slo_s:,.2f} s)"
            ),
        }
        reason = np.array([slo_words.get(r, r) for r in reason], dtype=object)
    for why, n in Counter(reason[~ok]).items():
        report.infeasible[f"inference: {why}"] += n
        local_reasons[why] += n
    idx = sub.index.to_numpy()[ok]
    physics_rows = ~is_measured[ok]
    tp_ok = np.maximum(tp[ok], 1)
    frame = pd.DataFrame(
        {
            "workload": w.name,
            "workload_kind": w.kind,
            "pool_id": sub["pool_id"].to_numpy()[ok],
            "tp_degree": tp_ok,
            "batch": np.where(physics_rows, main["batch"].to_numpy()[ok], 0),
            "replicas_per_unit": apu[ok] // tp_ok,
            "tokens_per_s_per_unit": cap_tokens[ok],
            "step_s": np.where(physics_rows, main["step_s"].to_numpy()[ok], np.nan),
            "ttft_s": np.where(physics_rows, main["ttft_s"].to_numpy()[ok], np.nan),
            "capacity_source": source[ok],
            "capacity_band_log": band[ok],
            "kwh_per_unit_hour": inf_coef["kwh"][idx],
            "energy_usd_per_unit_hour": inf_coef["energy_usd"][idx],
            "kgco2e_per_unit_hour": inf_coef["kgco2e"][idx],
        }
    )
    frame["_rps"] = [list(r) for r in rps[ok]] if mix else [[] for _ in range(int(ok.sum()))]
    return frame


def _measured_rps(
    w: InferenceWorkload | BatchInferenceWorkload, catalog: Catalog
) -> dict[str, list[float]]:
    """The workload's measured requests/s per accelerator id (per bucket)."""
    measured: dict[str, list[float]] = {}
    if isinstance(w, InferenceWorkload) and w.measured_throughput_rps:
        for name, values in w.measured_throughput_rps.items():
            try:
                measured[catalog.resolve_accelerator(name)] = values
            except ProcureError as exc:
                raise ProcureError(
                    exc.message,
                    field=f"workloads ({w.name}).measured_throughput_rps",
                    fix=exc.fix,
                ) from None
    return measured


def _best_mix_degree(
    w: InferenceWorkload | BatchInferenceWorkload,
    spec: ModelSpec,
    sub: pd.DataFrame,
    headroom: float,
    mix: list,
) -> tuple[np.ndarray, np.ndarray]:
    """(requests/s per unit per bucket, tensor-parallel degree) per pool for a traffic mix.

    Every bucket is served at one degree per unit (a unit is set up once): per pool, the
    degree whose time-shared capacity over the mix is best."""
    shares = np.array([b.share for b in mix])
    outs = np.array([b.output_tokens for b in mix], dtype=float)
    best_mix = np.zeros(len(sub))
    rps = np.zeros((len(sub), len(mix)))
    tp = np.zeros(len(sub), dtype=int)
    for d in TP_DEGREES:
        rps_d = np.column_stack(
            [
                inference_capacity(w, spec, sub, headroom, b.prompt_tokens, b.output_tokens, (d,))[
                    "tokens_per_s_per_unit"
                ].to_numpy()
                / b.output_tokens
                for b in mix
            ]
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            per_request = np.where(rps_d > 0, shares[None, :] / rps_d, 0.0).sum(axis=1)
            mixed = np.where(
                (rps_d > 0).any(axis=1), float((shares * outs).sum()) / per_request, 0.0
            )
        better = mixed > best_mix + 1e-12
        best_mix = np.where(better, mixed, best_mix)
        rps = np.where(better[:, None], rps_d, rps)
        tp = np.where(better, d, tp)
    return rps, tp


def calibrate_to_measured(
    w: InferenceWorkload,
    spec: ModelSpec,
    catalog: Catalog,
    memory_headroom: float,
    measured: dict[str, list[float]],
) -> dict:
    """Factor that scales the physics to a workload's measured per-bucket throughput.

    For every measured accelerator (one device per replica, as the profiles are taken)
    and bucket, the physics requests/s under the workload's SLOs is set beside the
    measured figure; the factor is the geometric mean of measured / physics over the
    points where both are positive (:func:`solver.physics.calibration_factor`). Cards
    without a profile then compete on physics x factor, not on physics alone.
    """
    accs = catalog.accelerators.loc[list(measured)]
    model = physics.served_model(spec, w.weight_precision, w.kv_precision)
    dev = physics.device_figures(accs, w.weight_precision, False, w.runtime)
    measured_rps, physics_rps = [], []
    for j, bucket in enumerate(w.traffic_mix or []):
        res = physics.best_decode(
            model,
            prompt_tokens=bucket.prompt_tokens,
            output_tokens=bucket.output_tokens,
            tpot_slo_s=w.tpot_slo_s,
            ttft_slo_s=w.ttft_slo_s,
            d=np.ones(len(accs)),
            dev=dev,
            memory_headroom=memory_headroom,
            load=w.load_percentile,
        )
        measured_rps += [float(measured[a][j]) for a in accs.index]
        physics_rps += list(res.tokens_per_s / bucket.output_tokens)
    factor, points, spread = physics.calibration_factor(
        np.array(measured_rps), np.array(physics_rps)
    )
    return {
        "factor": factor,
        "points": points,
        "spread_log_ratio": spread,
        "measured_on": sorted(measured),
    }


def _no_cluster_reason(w: TrainingWorkload, problem: Problem) -> str:
    """Why a training workload has no option, with the MFU margin it was sized at."""
    margin = problem.training_margin_of(w)
    at = (
        "at the low end of the MFU band (training_margin: low; point sizes it at the "
        "published figure)"
        if margin == "low" and w.mfu is None
        else f"at training_margin {margin}"
    )
    return f"no cluster finishes inside the window/deadline within caps {at}"


def _prune_training(options: list[dict], pools: pd.DataFrame, report: CompileReport) -> list[dict]:
    """Drop training options dominated within their pool.

    For one pool and start period, an option is dominated when another ends no
    later with no more units (fewer units cost less, hold less capacity and use
    less energy): the generator already keeps only the smallest cluster per end
    period, so what remains here are clusters that differ in span.
    """
    kept = []
    by_key: dict[tuple[int, int], list[dict]] = {}
    for o in options:
        by_key.setdefault((o["pool_index"], o["start_period"]), []).append(o)
    for group in by_key.values():
        group.sort(key=lambda o: (o["n_units"], o["end_period"]))
        best_end = None
        for o in group:
            if best_end is not None and o["end_period"] >= best_end:
                report.pruned["training: larger cluster that finishes no sooner"] += 1
                continue
            best_end = o["end_period"]
            kept.append(o)
    return kept


def raise_for_no_option(w: Workload, reasons: Counter[str]) -> None:
    """A workload that can run nowhere: say why, with the most common reasons."""
    parts = [f"{why} ({n} offerings)" for why, n in reasons.most_common(4) if n]
    detail = "; ".join(parts) or "no offering in the allowed providers, regions and modes"
    raise InfeasibleError(
        f"workload {w.name!r} cannot run on any offering: {detail}",
        field=f"workloads ({w.name})",
        fix="relax its SLOs, residency or regions, use a smaller precision, or allow more modes",
    )
