"""Names and commitments in the problem that the catalog must know before any pool is
built: providers, regions, residency zones, sites, quotas, offerings, savings plans and
reservations already held; each refused with the field and a fix."""

from __future__ import annotations

from typing import cast

import pandas as pd

from solver.core import ledger
from solver.errors import ProcureError, suggestion
from solver.inputs.catalog import Catalog
from solver.inputs.costs import Resolved, resolve_problem_costs
from solver.inputs.problem import (
    Problem,
)
from solver.units import (
    Mode,
)


def check_names(problem: Problem, catalog: Catalog) -> Resolved:
    """Refuse names in the problem that the catalog does not know; return the problem's
    costs priced, their providers checked against the catalog's."""
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
    return resolve_problem_costs(problem, providers - {"owned"})  # names and prices, or refused


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
            seller = str(off.at[offering_id, "provider"])
            if seller != sp.provider:
                raise ProcureError(
                    f"{offering_id} is sold by {seller}, not by "
                    f"{sp.provider} whose savings plan this is",
                    field=where,
                    fix=f"move the rate to a savings plan of {seller}",
                )
            # a price column: the stubs type .at as any scalar (dates, strings, ...)
            od = cast(float, off.at[offering_id, "on_demand_usd_per_hour"])
            if pd.isna(od) or rate >= float(od):
                raise ProcureError(
                    f"the plan's rate ${rate:g}/h is not below {offering_id}'s on-demand "
                    f"price ({'none' if pd.isna(od) else f'${float(od):g}/h'})",
                    field=where,
                    fix="give the plan's discounted rate per instance-hour from the provider's "
                    "savings plan price file (solver/inputs/importers), or drop the offering",
                )


def check_existing_reservations(problem: Problem, catalog: Catalog, cloud: pd.DataFrame) -> None:
    """Refuse an existing reservation the model could neither charge nor use.

    Its pool must survive the problem's filters: never silently dropped (it is paid
    for, so dropping it would understate the cost and waste the capacity).
    """
    kept = set(zip(cloud["offering_id"].tolist(), cloud["mode"].tolist(), strict=True))
    for i, r in enumerate(problem.existing_reservations):
        if (r.offering, r.mode) in kept:
            continue
        field = f"existing_reservations[{i}]"
        if pd.isna(cast(float, catalog.offerings.at[r.offering, ledger.PRICE_COLUMN[r.mode]])):
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
