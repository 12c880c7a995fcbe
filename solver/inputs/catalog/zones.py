"""Availability zones (catalogs/zones.csv): which zones of a region list an offering's
instance type, checked on load (:func:`check_zones`) and looked up as failure domains
(:func:`offering_zones`).

A zone is named ``provider/region/zone`` wherever it is a failure domain, so two providers'
zones of the same name never count as one. An offering whose region has no row in the
file, or whose instance type no row of its region lists, is in one zone as far as the
catalog knows: its whole region (``provider/region``). An owned server's site is one zone
(``owned/<site>``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from solver.errors import ProcureError

ZonesByType = dict[tuple[str, str, str], tuple[str, ...]]


def check_zones(zones: pd.DataFrame, regions: pd.DataFrame, path: Path) -> pd.DataFrame:
    """Check zones.csv against regions.csv; the table indexed by (provider, region, zone).

    Raises
    ------
    ProcureError
        A (provider, region, zone) listed twice, a zone of a region regions.csv does not
        hold, a zone name with a ``/`` in it, or a row that lists no instance type (naming
        the file, the line and the column).
    """
    keys = zones["provider"] + "/" + zones["region"] + "/" + zones["zone"]
    known = set(zip(regions["provider"], regions["region"], strict=True))
    checks = [
        (
            keys.duplicated().to_numpy(),
            "zone",
            "(provider, region, zone) listed twice",
            "keep one row per zone and list all its instance types in it",
        ),
        (
            np.array(
                [
                    (p, r) not in known
                    for p, r in zip(zones["provider"], zones["region"], strict=True)
                ],
                dtype=bool,
            ),
            "region",
            "a zone of a region that regions.csv does not hold",
            "add the region to regions.csv first, or correct provider/region",
        ),
        (
            zones["zone"].str.contains("/", regex=False).to_numpy(dtype=bool),
            "zone",
            "a zone name with '/' in it",
            "write the provider's zone name alone (e.g. us-central1-a or use1-az4)",
        ),
        (
            (zones["instance_types"].str.strip() == "").to_numpy(dtype=bool),
            "instance_types",
            "a zone that lists no instance type",
            "list the instance types offered in the zone, space-separated, or drop the row",
        ),
    ]
    for bad, column, what, fix in checks:
        if bad.any():
            idx = int(np.flatnonzero(bad)[0])
            raise ProcureError(
                f"{what}: {keys.iloc[idx]!r}",
                file=str(path),
                field=f"line {idx + 2}, {column}",
                fix=fix,
            )
    return zones.set_index(["provider", "region", "zone"], drop=False)


def zones_by_type(zones: pd.DataFrame | None) -> ZonesByType:
    """(provider, region, instance type) -> its zones as failure domains
    (``provider/region/zone``, sorted); empty without a zones table."""
    out: dict[tuple[str, str, str], list[str]] = {}
    if zones is None:
        return {}
    for provider, region, zone, types in zip(
        zones["provider"], zones["region"], zones["zone"], zones["instance_types"], strict=True
    ):
        for itype in str(types).split():
            out.setdefault((provider, region, itype), []).append(f"{provider}/{region}/{zone}")
    return {key: tuple(sorted(set(names))) for key, names in out.items()}


def offering_zones(
    listed: ZonesByType, provider: str, region: str, instance_type: str
) -> tuple[str, ...]:
    """The zones an offering's units can be placed in, as failure domains: those listed
    for its instance type in its region, else its whole region as one zone (owned
    servers: ``owned/<site>``, their site given as ``region``)."""
    return listed.get((provider, region, instance_type), (f"{provider}/{region}",))
