"""GCP Cloud Billing Catalog SKUs: resource-based committed-use prices.

The Cloud Billing Catalog API (https://cloud.google.com/billing/docs/reference/rest/v1/
services.skus/list; Compute Engine is ``services/6F81-5844-456A``) returns
``{"skus": [...], "nextPageToken": ...}``. Each SKU has ``skuId``, ``description``
("Commitment v1: A2 Cpu in APAC for 1 Year"), ``category`` (``resourceFamily``
Compute, ``resourceGroup`` CPU / RAM / GPU / ..., ``usageType`` OnDemand,
Preemptible, Commit1Yr, Commit3Yr), ``serviceRegions`` and ``pricingInfo``: a
``pricingExpression`` with ``usageUnit`` (``h`` per vCPU or GPU, ``GiBy.h`` per GiB of
memory) and ``tieredRates`` whose ``unitPrice`` is ``units`` + ``nanos`` / 1e9 in
``currencyCode``, from ``effectiveTime``.

Committed use on Compute Engine is bought per resource (vCPUs, GiB of memory, GPUs of
a machine series in a region), not per machine: a row here is one resource's price
per unit-hour (``instance_type`` ''), and :func:`machine_usd_per_hour` adds up a
machine's resources (its vCPUs, GiB and GPUs from the machine type's published shape).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from solver.errors import ProcureError
from solver.inputs.importers.committed import frame, price_field, read_json, records

USAGE_TYPES = {"OnDemand": ("on_demand", 0.0), "Commit1Yr": ("committed_use", 1.0)}
USAGE_TYPES["Commit3Yr"] = ("committed_use", 3.0)
#: "Commitment v1: A2 Cpu in APAC for 1 Year" -> series A2, resource Cpu
_COMMITMENT = re.compile(r"^Commitment(?: v\d+)?: (?P<what>.+?) (?:in|running in) ")
#: on-demand resource SKUs, named as the committed ones are: "A2 Instance Core running in
#: Americas" -> "A2 Cpu", "A2 Instance Ram ..." -> "A2 Ram", "Nvidia Tesla A100 GPU
#: running in Americas" -> "Nvidia Tesla A100 GPU" (descriptions as the API spells them:
#: tests/data/prices/gcp-billing/, from opencost/opencost pkg/cloud/gcp/test/skus.json)
_ON_DEMAND = re.compile(
    r"^(?:(?P<series>[A-Z]\w*) Instance (?P<part>Core|Ram)|(?P<gpu>Nvidia .+? GPU)) running in "
)
_ON_DEMAND_PART = {"Core": "Cpu", "Ram": "Ram"}
_FIX = "give a Cloud Billing Catalog skus.list response as Google serves it"


def _unit_price(expression: dict, path: Path | str, where: str) -> float:
    """USD per usage unit of the first tier (startUsageAmount 0): units + nanos / 1e9
    (the API leaves out a part that is 0; a tier with neither has no price)."""
    tiers = sorted(expression.get("tieredRates") or [], key=lambda t: t.get("startUsageAmount", 0))
    price = tiers[0].get("unitPrice") if tiers else None
    field = f"{where}.pricingExpression.tieredRates[0].unitPrice"
    if not isinstance(price, dict) or ("units" not in price and "nanos" not in price):
        return price_field(None, path, field, _FIX)  # raises: the price is missing
    units = price_field(price.get("units", 0), path, f"{field}.units", _FIX)
    nanos = price_field(price.get("nanos", 0), path, f"{field}.nanos", _FIX)
    return units + nanos / 1e9


def _resource(description: str, kind: str, category: dict) -> str:
    """The series and resource a SKU prices ("A2 Cpu", "Nvidia Tesla A100 GPU"), as the
    committed-use descriptions name them; else the SKU's resource group."""
    match = _COMMITMENT.match(description)
    if match:
        return match["what"]
    on_demand = _ON_DEMAND.match(description) if kind == "on_demand" else None
    if on_demand and on_demand["gpu"]:
        return on_demand["gpu"]
    if on_demand:
        return f"{on_demand['series']} {_ON_DEMAND_PART[on_demand['part']]}"
    return str(category.get("resourceGroup", ""))


def read_gcp_billing_skus(path: Path | str) -> pd.DataFrame:
    """Compute SKUs of a Cloud Billing Catalog response as :data:`COMMITTED_COLUMNS`
    rows, one per SKU and region: kind ``committed_use`` (Commit1Yr, Commit3Yr) or
    ``on_demand``; ``resource`` the series and resource from the description ("A2
    Cpu"), ``unit`` the usage unit, ``usd_per_hour`` the price per unit-hour."""
    rows = []
    for i, sku in enumerate(
        records(read_json(path, "a Cloud Billing Catalog response"), "skus", path, _FIX)
    ):
        category = sku.get("category") or {}
        if category.get("resourceFamily") != "Compute":
            continue
        kind = USAGE_TYPES.get(str(category.get("usageType", "")))
        pricing = (sku.get("pricingInfo") or [{}])[-1]
        expression = pricing.get("pricingExpression") or {}
        if kind is None or not expression:
            continue
        currency = {
            (t.get("unitPrice") or {}).get("currencyCode", "USD")
            for t in expression.get("tieredRates") or []
        }
        if currency - {"USD"}:
            raise ProcureError(
                f"prices in {sorted(currency)}, not USD",
                file=str(path),
                field=f"skus[{i}].pricingInfo",
                fix="ask the API for USD (currencyCode=USD, its default)",
            )
        resource = _resource(str(sku.get("description", "")), kind[0], category)
        price = _unit_price(expression, path, f"skus[{i}].pricingInfo[-1]")
        for region in sku.get("serviceRegions") or [""]:
            rows.append(
                {
                    "provider": "gcp",
                    "region": region,
                    "instance_type": "",
                    "kind": kind[0],
                    "term_years": kind[1],
                    "usd_per_hour": price,
                    "hourly_usd": price,
                    "resource": resource,
                    "unit": expression.get("usageUnit", ""),
                    "sku": sku.get("skuId", ""),
                    "price_date": str(pricing.get("effectiveTime", ""))[:10],
                    "source": str(path),
                }
            )
    return frame(rows)


def machine_usd_per_hour(
    rates: pd.DataFrame,
    *,
    region: str,
    term_years: float,
    parts: dict[str, float],
    kind: str = "committed_use",
) -> float | None:
    """A machine's committed (or, with ``kind="on_demand"`` and ``term_years`` 0,
    on-demand) price per hour: sum over its resources of the count times the resource's
    price per unit-hour in the region (``parts``: resource as the SKU names it, e.g.
    ``{"A2 Cpu": 12, "A2 Ram": 85, "Nvidia Tesla A100 GPU": 1}`` with RAM in GiB). None
    when a part has no price in the rows."""
    pick = rates[
        (rates["kind"] == kind)
        & (rates["region"] == region)
        & ((rates["term_years"] - term_years).abs() < 1e-9)
    ]
    price = pick.groupby("resource")["usd_per_hour"].min()
    if any(name not in price.index for name in parts):
        return None
    return float(sum(count * float(price[name]) for name, count in parts.items()))
