"""Committed prices read from the providers' price files, in one table, and matched to
the catalog's offerings.

The three format readers (:mod:`.aws_prices`, :mod:`.azure_retail`,
:mod:`.gcp_billing`) each return a frame of :data:`COMMITTED_COLUMNS`, one row per
price the file states:

- ``provider``, ``region`` (the provider's region code), ``instance_type`` (the
  catalog's ``instance_type``: an EC2 instance type, an Azure ``armSkuName``; '' for
  a GCP resource price, which is per vCPU, GiB or GPU, not per machine);
- ``kind``: ``on_demand``, ``reserved`` (an instance reservation: AWS Reserved
  Instance, Azure reservation), ``savings_plan`` (a spend-based commitment's rate for
  this usage: AWS Savings Plans, Azure savings plan) or ``committed_use`` (GCP
  resource-based committed use);
- ``term_years`` (0 for on demand), ``payment_option`` (``no_upfront``,
  ``partial_upfront``, ``all_upfront``; '' where the file states none);
- ``usd_per_hour``: the effective rate per unit-hour, a term's upfront fee spread over
  its hours (8,760 a year, as AWS and Azure state terms) plus the hourly fee;
  ``upfront_usd`` and ``hourly_usd`` its two parts as the file states them;
- ``plan_type`` (``compute`` or ``ec2_instance`` Savings Plans, ``standard`` or
  ``convertible`` RIs; '' otherwise), ``operating_system`` (``linux``, ``windows`` or
  ''), ``resource`` and ``unit`` (GCP: ``CPU``, ``RAM``, ``GPU``... per ``h`` or
  ``GiBy.h``), ``sku``, ``price_date`` (YYYY-MM-DD, the file's effective date) and
  ``source`` (the file it came from).

:func:`offering_rates` matches rows to the catalog's offerings by provider, region and
instance type: the rates a problem's ``savings_plans`` takes, or the reserved prices of
an offering. Nothing is matched by similarity: a row whose instance type or region the
catalog lacks is left out (and counted).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol, cast

import pandas as pd

from solver.errors import ProcureError

COMMITTED_COLUMNS = [
    "provider",
    "region",
    "instance_type",
    "kind",
    "term_years",
    "payment_option",
    "usd_per_hour",
    "upfront_usd",
    "hourly_usd",
    "plan_type",
    "operating_system",
    "resource",
    "unit",
    "sku",
    "price_date",
    "source",
]
#: hours of a year of a term, as AWS (365 days) and Azure state reservation terms
HOURS_PER_TERM_YEAR = 8760.0
#: the payment options as the files spell them -> ours
PAYMENT_OPTIONS = {
    "no upfront": "no_upfront",
    "partial upfront": "partial_upfront",
    "all upfront": "all_upfront",
}


def read_json(path: Path | str, what: str) -> object:
    """The JSON of a price file, or one clear error naming the file."""
    from solver.inputs.price_traps import read_price_text

    path = Path(path)
    if not path.exists():
        raise ProcureError("no such file", file=str(path), fix=f"give the path of {what}")
    text = read_price_text(path, what=what, fix=f"give {what} as the provider serves it")
    if not text.strip():
        raise ProcureError(
            f"the file is empty, not {what}",
            file=str(path),
            fix=f"give {what} as the provider serves it (save the whole response)",
        )
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProcureError(
            f"not JSON ({exc})", file=str(path), fix=f"give {what} as the provider serves it"
        ) from None


_MISSING = object()


def price_field(value: object, path: Path | str, field: str, fix: str) -> float:
    """A record's price as a float (USD): a JSON number, or a number written as text as
    AWS writes them (``"32.7726000000"``). NaN and inf are returned as they are, for the
    caller to hold (:mod:`solver.inputs.price_holds`).

    Raises
    ------
    ProcureError
        The field is missing or empty, or is text that is not a number: naming the file
        and the record's field.
    """
    if value is _MISSING or value is None or (isinstance(value, str) and not value.strip()):
        raise ProcureError(
            "the price is missing", file=str(path), field=field, fix=f"{fix}; no record is "
            "read without its price"
        )  # fmt: skip
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ProcureError(
            f"the price is {value!r}, not a number", file=str(path), field=field, fix=fix
        )
    try:
        return float(value)
    except ValueError:
        raise ProcureError(
            f"the price is {value!r}, not a number", file=str(path), field=field, fix=fix
        ) from None


def get_field(record: dict, key: str) -> object:
    """``record[key]``, or a marker :func:`price_field` reads as missing."""
    return record.get(key, _MISSING) if isinstance(record, dict) else _MISSING


def records(data: object, key: str, path: Path | str, fix: str) -> list[dict]:
    """The records of an API response: the list under ``key`` (a whole response), a
    single record (a mapping without ``key``), or a bare list of records."""
    if isinstance(data, dict):
        data = data[key] if key in data else [data]
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise ProcureError(f"no {key} list", file=str(path), field=key, fix=fix)
    return data


def frame(rows: list[dict]) -> pd.DataFrame:
    """Rows as a frame of :data:`COMMITTED_COLUMNS` (missing values empty)."""
    out = pd.DataFrame(rows, columns=COMMITTED_COLUMNS)
    for column in ("term_years", "usd_per_hour", "upfront_usd", "hourly_usd"):
        out[column] = pd.to_numeric(out[column]).fillna(0.0).astype(float)
    text = [c for c in COMMITTED_COLUMNS if c not in ("term_years", "usd_per_hour")]
    text = [c for c in text if c not in ("upfront_usd", "hourly_usd")]
    for column in text:
        out[column] = out[column].astype(object).where(out[column].notna(), "").astype(str)
    return out


def effective_usd_per_hour(upfront_usd: float, hourly_usd: float, term_years: float) -> float:
    """A term's upfront fee spread over its hours plus its hourly fee (USD per hour)."""
    if term_years <= 0:
        return hourly_usd
    return upfront_usd / (term_years * HOURS_PER_TERM_YEAR) + hourly_usd


def offering_rates(
    rates: pd.DataFrame,
    offerings: pd.DataFrame,
    *,
    kind: str,
    term_years: float,
    payment_option: str | None = None,
    plan_type: str | None = None,
    operating_system: str = "linux",
) -> dict[str, float]:
    """offering_id -> USD per instance-hour of the rows of one kind, term and payment
    option that name a catalog offering (same provider, region and instance type).

    ``offerings`` is the catalog's offerings table (indexed by ``offering_id``). Where
    several rows match one offering (a file listing a rate twice), the lowest is kept.
    """
    pick = rates[
        (rates["kind"] == kind)
        & ((rates["term_years"] - term_years).abs() < 1e-9)
        & (rates["instance_type"] != "")
    ]
    if payment_option is not None:
        pick = pick[pick["payment_option"] == payment_option]
    if plan_type is not None:
        pick = pick[pick["plan_type"] == plan_type]
    if operating_system:
        pick = pick[pick["operating_system"].isin([operating_system, ""])]
    off = offerings if "offering_id" in offerings.columns else offerings.reset_index()
    merged = pick.merge(
        off[["offering_id", "provider", "region", "instance_type"]],
        on=["provider", "region", "instance_type"],
    )
    best = merged.groupby("offering_id")["usd_per_hour"].min()
    return {str(k): float(v) for k, v in sorted(best.items())}


#: scripts/commitment_prices.csv's columns (scripts/build_offerings.py reads them)
COMMITMENT_PRICE_COLUMNS = [
    "provider",
    "instance_type",
    "region",
    "term",
    "price_usd_per_hour",
    "source_on_demand_usd_per_hour",
    "payment_option",
    "source_url",
    "source_date",
]
#: which of an offering's reserved prices the catalog's 1y/3y column takes: no upfront
#: first (the catalog's convention), standard before convertible
_PAYMENT_ORDER = {"no_upfront": 0, "partial_upfront": 1, "all_upfront": 2, "": 3}
_CLASS_ORDER = {"standard": 0, "": 1, "convertible": 2}


class _ReservedRate(Protocol):
    """A reserved rate row as :func:`commitment_price_rows` reads it (USD per hour)."""

    provider: str
    region: str
    instance_type: str
    plan_type: str
    payment_option: str
    term_years: float
    usd_per_hour: float
    price_date: str


def commitment_price_rows(rates: pd.DataFrame, source_url: str) -> pd.DataFrame:
    """Reserved prices as rows of scripts/commitment_prices.csv (1- and 3-year terms,
    Linux instances whose file also states their on-demand price): one per provider,
    instance type, region and term, no upfront before partial and all upfront, standard
    before convertible. ``scripts/build_offerings.py`` applies them to the catalog's
    ``reserved_1y``/``reserved_3y`` columns where the on-demand prices agree."""
    key = ["provider", "region", "instance_type"]
    od = rates[rates["kind"] == "on_demand"].groupby(key)["usd_per_hour"].min()
    res = rates[
        (rates["kind"] == "reserved")
        & rates["term_years"].isin([1.0, 3.0])
        & (rates["operating_system"] == "linux")
    ].copy()
    res["_order"] = res["payment_option"].map(_PAYMENT_ORDER).fillna(3) * 10 + res["plan_type"].map(
        _CLASS_ORDER
    ).fillna(1)
    res = res.sort_values([*key, "term_years", "_order"], kind="stable")
    res = res.drop_duplicates([*key, "term_years"])
    rows = []
    # the stubs type a row's fields as any scalar; these columns are the rates table's
    for r in cast("Iterator[_ReservedRate]", res.itertuples(index=False)):
        on_demand = od.get((r.provider, r.region, r.instance_type))
        if on_demand is None:
            continue
        what = " ".join(p for p in (r.plan_type, r.payment_option.replace("_", " ")) if p)
        rows.append(
            {
                "provider": r.provider,
                "instance_type": r.instance_type,
                "region": r.region,
                "term": f"{r.term_years:g}y",
                "price_usd_per_hour": round(r.usd_per_hour, 6),
                "source_on_demand_usd_per_hour": on_demand,
                "payment_option": f"reserved {what} (Linux, shared tenancy), upfront spread "
                "over the term's hours",
                "source_url": source_url,
                "source_date": r.price_date or "unknown",
            }
        )
    return pd.DataFrame(rows, columns=COMMITMENT_PRICE_COLUMNS)
