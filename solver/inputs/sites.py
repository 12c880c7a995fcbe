"""Sites a problem describes itself: a team's own room or cage, with the fleet
it already has there, joins the catalog's sites for that problem only.

:func:`with_problem_sites` returns a new :class:`~solver.inputs.catalog.Catalog` whose
``sites`` table holds the catalog's rows and one row per site of the problem, in the
catalog's columns, so every stage reads an own site as it reads a catalog site. The
catalog passed in is never changed; a catalog already joined with a problem's sites is
first stripped of them, so the function may be called at every stage.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

import pandas as pd

from solver.errors import ProcureError, suggestion
from solver.inputs.catalog import Catalog
from solver.inputs.problem import Problem, Site

#: Figures a site takes from its ``region`` unless it gives them itself.
REGION_FIGURES: tuple[str, ...] = (
    "country",
    "residency_zone",
    "grid_gco2_per_kwh",
    "electricity_usd_per_kwh",
)


#: Columns only a problem's own sites have (a catalog site's staff is a flat figure or
#: by fleet size at the default salary): dropped again with those sites.
PROBLEM_SITE_COLUMNS: tuple[str, ...] = ("staff_servers_per_admin", "staff_usd_per_admin_year")


def _region_row(text: str, catalog: Catalog, field: str) -> tuple[str, pd.Series]:
    """The regions.csv row a site's ``region`` names: 'provider/region', or a region name
    whose rows (one per provider) agree on every figure the site takes from it."""
    regions = catalog.regions
    provider, _, name = text.partition("/")
    if name and (provider, name) in regions.index:
        # a full (provider, region) key: the stubs cannot tell a row from a cell
        return f"{provider}/{name}", cast("pd.Series", regions.loc[(provider, name)])
    if not name:
        rows = regions[regions["region"] == text]
        if len(rows) == 1 or (
            len(rows) > 1 and len(rows[list(REGION_FIGURES)].drop_duplicates()) == 1
        ):
            row = rows.iloc[0]
            return f"{row['provider']}/{row['region']}", row
        if len(rows) > 1:
            listed = ", ".join(f"{p}/{r}" for p, r in rows.index)
            raise ProcureError(
                f"region {text!r} is in the lists of {len(rows)} providers with different "
                f"figures ({listed})",
                field=field,
                fix=f"write it as provider/region, e.g. {listed.split(', ')[0]!r}",
            )
    known = sorted(set(regions["region"])) + [f"{p}/{r}" for p, r in regions.index]
    raise ProcureError(
        f"unknown region {text!r}",
        field=field,
        fix=suggestion(text, known).replace(
            "run `procure catalog list`", "run `procure catalog list regions`"
        ),
    )


def _fleet_kw(problem: Problem, catalog: Catalog, site: str) -> float:
    """Maximum power of the servers the problem already holds at ``site``, kW."""
    servers = catalog.servers
    return sum(
        # the stubs' .at result lists kinds float() takes no overload for; it is a number
        e.units * float(cast(float, servers.at[e.server, "power_kw"]))
        for e in problem.existing_fleet
        if e.site == site and e.server in servers.index
    )


def _or_nan(value: float | None) -> float:
    return float("nan") if value is None else float(value)


def _site_row(index: int, site: Site, problem: Problem, catalog: Catalog) -> dict[str, object]:
    """One site of the problem as a row of catalogs/sites.csv."""
    field = f"sites[{index}] ({site.name})"
    if site.name in catalog.sites.index:
        raise ProcureError(
            f"site {site.name!r} is a catalog site; a site described in the problem needs a "
            "name of its own",
            field=f"{field}.name",
            fix=f"rename it (e.g. our-{site.name}), or write {site.name!r} alone (a string) "
            "to allow the catalog's site",
        )
    # each the site's own field (str, float or None) or else its regions.csv cell
    figures: dict[str, Any] = {f: getattr(site, f) for f in REGION_FIGURES}
    grid_source = "problem file"
    if site.region is not None:
        key, row = _region_row(site.region, catalog, f"{field}.region")
        for f in REGION_FIGURES:
            if figures[f] is None:
                figures[f] = row[f]
        if site.grid_gco2_per_kwh is None:
            grid_source = f"catalog region {key} ({row.get('grid_source', '')})"
    zones = sorted(set(catalog.regions["residency_zone"]) | set(catalog.sites["residency_zone"]))
    if figures["residency_zone"] not in zones:
        raise ProcureError(
            f"unknown residency zone {figures['residency_zone']!r}",
            field=f"{field}.residency_zone",
            fix=f"{suggestion(str(figures['residency_zone']), zones)} (zones: {', '.join(zones)})",
        )
    fleet_kw = _fleet_kw(problem, catalog, site.name)
    cap_kw = site.power_cap_kw
    if cap_kw is None:
        if fleet_kw <= 0:
            raise ProcureError(
                f"site {site.name!r} has no power_cap_kw and no servers in existing_fleet: no "
                "server could be hosted there",
                field=f"{field}.power_cap_kw",
                fix="give power_cap_kw (the kW of servers the site can hold), or list the "
                f"servers it has under existing_fleet with site: {site.name}",
            )
        cap_kw = fleet_kw
    elif cap_kw < fleet_kw - 1e-9:
        raise ProcureError(
            f"power_cap_kw {cap_kw:g} is below the {fleet_kw:g} kW (maximum power) of the "
            "servers existing_fleet holds there",
            field=f"{field}.power_cap_kw",
            fix=f"raise power_cap_kw to at least {fleet_kw:g}, or correct existing_fleet",
        )
    colocation = site.colocation_usd_per_kw_month_charged
    return {
        "site_id": site.name,
        "name": site.location or site.name,
        "kind": "colocation" if colocation > 0 else "own",
        "country": figures["country"] or "",
        "residency_zone": figures["residency_zone"],
        "grid_gco2_per_kwh": float(figures["grid_gco2_per_kwh"]),
        "grid_year": "",
        "grid_source": grid_source,
        "pue": float(site.pue),
        "electricity_usd_per_kwh": float(figures["electricity_usd_per_kwh"]),
        "colocation_usd_per_kw_month": float(colocation),
        # empty (NaN): staff by the site's fleet size (solver/inputs/staff.py)
        "staff_usd_per_server_year": _or_nan(site.staff_usd_per_server_year),
        "staff_servers_per_admin": _or_nan(site.staff_servers_per_admin),
        "staff_usd_per_admin_year": _or_nan(site.staff_usd_per_admin_year),
        "power_cap_kw": float(cap_kw),
        "source": site.source or "problem file",
    }


def with_problem_sites(problem: Problem, catalog: Catalog) -> Catalog:
    """The catalog with the problem's own sites among its sites (see the module docstring).

    Raises
    ------
    ProcureError
        A site named like a catalog site, an unknown or ambiguous region, an unknown
        residency zone, or a power cap missing (no fleet there) or below the fleet there.
    """
    base = catalog
    if catalog.problem_sites:
        base = replace(
            catalog,
            sites=catalog.sites.drop(index=list(catalog.problem_sites)).drop(
                columns=list(PROBLEM_SITE_COLUMNS), errors="ignore"
            ),
            problem_sites=(),
        )
    entries = list(problem.sites or [])
    rows = [
        _site_row(i, entry, problem, base)
        for i, entry in enumerate(entries)
        if isinstance(entry, Site)
    ]
    if not rows:
        return base
    own = pd.DataFrame(rows).set_index("site_id", drop=False)
    sites = pd.concat([base.sites, own])
    return replace(base, sites=sites, problem_sites=tuple(own.index))
