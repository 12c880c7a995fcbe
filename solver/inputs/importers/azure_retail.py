"""Azure Retail Prices API records: pay-as-you-go, reservation and savings plan prices.

The API (https://learn.microsoft.com/en-us/rest/api/cost-management/retail-prices/
azure-retail-prices, unauthenticated: ``https://prices.azure.com/api/retail/prices``)
returns ``{"Items": [...], "NextPageLink": ..., "Count": ...}``; savings plan rates
only with ``api-version=2023-01-01-preview``. Each item has ``armSkuName`` (the VM
size, the catalog's ``instance_type``), ``armRegionName``, ``type``
(``Consumption``, ``DevTestConsumption`` or ``Reservation``), ``retailPrice``,
``unitOfMeasure``, ``productName``, ``meterName``, ``effectiveStartDate`` and:

- on a ``Consumption`` item, an optional ``savingsPlan`` array of ``{"term": "1 Year"
  | "3 Years", "retailPrice", "unitPrice"}``: the plan's rate per hour of this usage;
- on a ``Reservation`` item, ``reservationTerm`` (``1 Year`` / ``3 Years``): its
  ``retailPrice`` is the whole term's price although ``unitOfMeasure`` says ``1 Hour``,
  so the hourly rate is the price / the term's hours (8,760 a year).

Read as Linux VM prices: items of ``serviceName`` Virtual Machines whose
``productName`` does not end in ``Windows`` and ``meterName`` is not ``Spot`` or ``Low
Priority`` (other meters of the same size); ``DevTestConsumption`` is left out (Dev/Test
subscriptions only), as is the older Cloud Services product of the same sizes.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from solver.errors import ProcureError
from solver.inputs.importers.committed import (
    HOURS_PER_TERM_YEAR,
    frame,
    get_field,
    price_field,
    read_json,
    records,
)

_TERMS = {"1 Year": 1.0, "3 Years": 3.0, "3 Year": 3.0, "5 Years": 5.0}
_FIX = "give a Retail Prices API response (api-version=2023-01-01-preview) as Azure serves it"


def _linux_vm(item: dict) -> bool:
    meter = str(item.get("meterName", ""))
    product = str(item.get("productName", ""))
    return (
        item.get("serviceName") == "Virtual Machines"
        and product.startswith("Virtual Machines")
        and not product.endswith("Windows")
        and not meter.endswith(("Spot", "Low Priority"))
        and item.get("type") in ("Consumption", "Reservation")
        and bool(item.get("armSkuName"))
    )


def read_azure_retail_prices(path: Path | str) -> pd.DataFrame:
    """Linux VM prices of a Retail Prices API response as :data:`COMMITTED_COLUMNS`
    rows: ``on_demand`` (a Consumption item), ``savings_plan`` (each entry of its
    ``savingsPlan`` array) and ``reserved`` (a Reservation item: the term's price over
    its hours, paid up front; Azure bills it up front or monthly at the same total)."""
    rows = []
    for i, item in enumerate(
        records(read_json(path, "a Retail Prices API response"), "Items", path, _FIX)
    ):
        if not _linux_vm(item):
            continue
        base = {
            "provider": "azure",
            "region": item.get("armRegionName", ""),
            "instance_type": item["armSkuName"],
            "operating_system": "linux",
            "unit": "h",
            "sku": item.get("skuId", ""),
            "price_date": str(item.get("effectiveStartDate", ""))[:10],
            "source": str(path),
        }
        if item.get("currencyCode", "USD") != "USD":
            raise ProcureError(
                f"price in {item.get('currencyCode')}, not USD",
                file=str(path),
                field=f"Items[{i}].currencyCode",
                fix="ask the API for USD (currencyCode='USD', its default)",
            )
        price = price_field(get_field(item, "retailPrice"), path, f"Items[{i}].retailPrice", _FIX)
        if item["type"] == "Reservation":
            years = _TERMS.get(str(item.get("reservationTerm", "")), 0.0)
            if not years:
                raise ProcureError(
                    f"unknown reservationTerm {item.get('reservationTerm')!r}",
                    file=str(path),
                    field=f"Items[{i}].reservationTerm",
                    fix="the API states 1 Year, 3 Years or 5 Years",
                )
            rows.append(
                base
                | {
                    "kind": "reserved",
                    "term_years": years,
                    "payment_option": "all_upfront",
                    "usd_per_hour": price / (years * HOURS_PER_TERM_YEAR),
                    "upfront_usd": price,
                }
            )
            continue
        rows.append(base | {"kind": "on_demand", "usd_per_hour": price, "hourly_usd": price})
        for k, plan in enumerate(item.get("savingsPlan") or []):
            plan = plan if isinstance(plan, dict) else {}
            years = _TERMS.get(str(plan.get("term", "")), 0.0)
            given = plan.get("retailPrice", plan.get("unitPrice"))
            rate = price_field(given, path, f"Items[{i}].savingsPlan[{k}].retailPrice", _FIX)
            rows.append(
                base
                | {
                    "kind": "savings_plan",
                    "term_years": years,
                    "usd_per_hour": rate,
                    "hourly_usd": rate,
                    "plan_type": "compute",
                }
            )
    return frame(rows)
