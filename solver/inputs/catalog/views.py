"""The catalog's offerings and accelerators as people browse them (``procure catalog
list``, the workspace's catalog page): filtered, sorted, priced per GPU-hour."""

from __future__ import annotations

from typing import cast

import pandas as pd

from solver.errors import ProcureError
from solver.inputs.catalog.tables import Catalog
from solver.units import Mode


def offerings_view(
    catalog: Catalog,
    *,
    provider: str | None = None,
    accelerator: str | None = None,
    region: str | None = None,
    mode: str | None = None,
    sort: str | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """Offerings filtered for people: by provider, accelerator (any name the catalog
    knows), region prefix or residency zone, and mode; with USD per GPU-hour.

    Returns the frame and the columns to show.
    """
    from solver.units import PRICE_COLUMN

    off = catalog.offerings.reset_index(drop="offering_id" in catalog.offerings.columns)
    if provider is not None:
        off = off[off["provider"].str.lower() == provider.lower()]
    if accelerator is not None:
        off = off[off["accelerator_id"] == catalog.resolve_accelerator(accelerator)]
    if region is not None:
        regions = catalog.regions
        zones = regions.reset_index(drop="region" in regions.columns)
        zones = zones[["provider", "region", "residency_zone"]]
        off = off.merge(zones, on=["provider", "region"], how="left")
        key = region.lower()
        off = off[
            off["region"].str.lower().str.startswith(key)
            | (off["residency_zone"].fillna("").str.lower() == key)
        ]
    shown = "on_demand" if mode is None else mode
    if shown not in PRICE_COLUMN or shown == Mode.OWNED:
        raise ProcureError(
            f"unknown mode {mode!r}",
            field="--mode",
            fix="use on_demand, spot, reserved_1y or reserved_3y",
        )
    column = PRICE_COLUMN[shown]
    off = off[off[column].notna()].copy()
    gpu_price = f"{shown}_usd_per_gpu_hour"
    off[gpu_price] = off[column] / off["accelerators_per_instance"]
    orders = {"price": [gpu_price, "offering_id"], "provider": ["provider", gpu_price]}
    orders["region"] = ["region", gpu_price]
    if sort is not None:
        if sort not in orders:
            raise ProcureError(
                f"unknown sort {sort!r}", field="--sort", fix="use price, provider or region"
            )
        off = off.sort_values(orders[sort], kind="stable")
    columns = ["offering_id", "accelerator_id", "accelerators_per_instance", column, gpu_price]
    return off, columns


def accelerator_summary(catalog: Catalog) -> pd.DataFrame:
    """Per accelerator: the cheapest USD per GPU-hour on demand, spot and reserved, each
    with the provider that sells it (like ``sky show-gpus``)."""
    from solver.units import PRICE_COLUMN

    off = catalog.offerings.reset_index(drop="offering_id" in catalog.offerings.columns)
    rows = []
    for acc, group in off.groupby("accelerator_id", sort=True):
        row: dict[str, object] = {"accelerator": acc, "offerings": len(group)}
        for mode in (Mode.ON_DEMAND, Mode.SPOT, Mode.RESERVED_1Y, Mode.RESERVED_3Y):
            per_gpu = group[PRICE_COLUMN[mode]] / group["accelerators_per_instance"]
            if per_gpu.notna().any():
                best = cast(int, per_gpu.idxmin())  # reset_index above: labels are row numbers
                provider = str(group.at[best, "provider"])
                row[f"{mode} $/GPU-h"] = f"{per_gpu[best]:.2f} ({provider})"
            else:
                row[f"{mode} $/GPU-h"] = "-"
        rows.append(row)
    return pd.DataFrame(rows)
