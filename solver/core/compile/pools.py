"""Capacity pools: one per cloud offering and purchase mode the problem allows, one per
server type and site for owned hardware, each with its price, caps and economics."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd

from solver.core import ledger
from solver.core.compile.checks import check_existing_reservations, check_names, check_savings_plans
from solver.inputs.catalog import Catalog, availability_cap_basis, tier_rank
from solver.inputs.problem import (
    Problem,
)
from solver.inputs.sites import with_problem_sites
from solver.inputs.staff import staff_rule
from solver.physics.constants import (
    IDLE_POWER_FRACTION,
)
from solver.units import (
    CLOUD_MODES,
    DAYS_PER_MONTH,
    HOURS_PER_MONTH,
    RESERVED_TERM_MONTHS,
    owned_offering_id,
)


def _priced_offerings(problem: Problem, catalog: Catalog) -> pd.DataFrame:
    """One row per (offering, mode) among the problem's cloud modes that the catalog
    prices, with its region's figures and the price's own provenance."""
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
    return (
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


def _cloud_pools(problem: Problem, catalog: Catalog) -> pd.DataFrame:
    """One pool per (offering, mode) the problem allows: providers, regions, residency,
    tier; its price, caps and reservations already held."""
    acc = catalog.accelerators
    cloud = _priced_offerings(problem, catalog)
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
    check_existing_reservations(problem, catalog, cloud)
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
    the sites the problem describes itself join the catalog's (:mod:`solver.inputs.sites`),
    and the problem's names are checked first (:func:`pools_table` once they are)."""
    catalog = with_problem_sites(problem, catalog)
    check_names(problem, catalog)
    check_savings_plans(problem, catalog)
    return pools_table(problem, catalog)


def pools_table(problem: Problem, catalog: Catalog) -> pd.DataFrame:
    """The pools of :func:`build_pools` from a catalog already joined with the problem's
    sites and checked against its names (:class:`~solver.core.compile.resolved.ResolvedInputs`):
    one row per pool, sorted by pool id, with its accelerator's figures."""
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
