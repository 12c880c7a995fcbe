"""Price feeds: one source's prices as a dated snapshot in our price
CSV format (``provider, region, offering, mode, price, date``; what ``procure resolve
--prices`` reads, :func:`solver.inputs.prices.read_price_csv`), each row matched to the
catalog's offerings where it can be.

The four sources and the importer each goes through (nothing is parsed twice):

``skypilot``
    a SkyPilot ``vms.csv`` (:func:`~solver.inputs.importers.skypilot.read_skypilot_vms`):
    on-demand and spot prices per instance type and region.
``aws-offer``
    an AWS Price List EC2 offer file or GetProducts record
    (:func:`~solver.inputs.importers.aws_prices.read_aws_ec2_offer`): on-demand, and
    Standard Reserved Instances with no upfront as ``reserved_1y``/``reserved_3y`` (the
    catalog's convention for its reserved columns, catalogs/SOURCES.md).
``azure-retail``
    an Azure Retail Prices API response
    (:func:`~solver.inputs.importers.azure_retail.read_azure_retail_prices`): pay-as-you-go
    as on-demand, 1- and 3-year reservations (the term's price over its hours) as
    reserved.
``gcp-billing``
    a Cloud Billing Catalog ``skus.list`` response
    (:func:`~solver.inputs.importers.gcp_billing.read_gcp_billing_skus`): on demand and
    committed use are both sold per vCPU, GiB and GPU, so a catalog machine is priced
    (``on_demand``, ``reserved_1y``, ``reserved_3y``) only when the response prices all its
    parts (:func:`~solver.inputs.importers.gcp_billing.machine_usd_per_hour`,
    its shape from the catalog's ``vcpus``, ``memory_gib`` and accelerators).

A row maps to an offering when the catalog has its provider, region and instance type
(the offering id ``provider/region/instance_type``); it then carries the catalog's
accelerator and count. Every priced row is kept in the snapshot (a history of an
instance type the catalog does not hold yet is still a history), but only mapped rows go
to the price CSV a re-solve reads; rows that name no catalog offering, and rows the
importer could not read as an instance price, are listed in :attr:`PricePull.unmapped`
with the reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from pathlib import Path
from typing import Protocol, cast

import pandas as pd

from solver.errors import ProcureError
from solver.inputs.price_holds import HELD_COLUMNS, HELD_PREFIX, split_held

SOURCES = ("skypilot", "azure-retail", "aws-offer", "gcp-billing")

#: a snapshot's rows: our price CSV's columns, then what the catalog says of the offering
SNAPSHOT_COLUMNS = [
    "provider",
    "region",
    "offering",
    "mode",
    "price",
    "date",
    "offering_id",
    "in_catalog",
    "accelerator_id",
    "accelerators_per_instance",
]
UNMAPPED_COLUMNS = ["provider", "region", "what", "rows", "reason"]
#: the price CSV's own columns (read by :func:`solver.inputs.prices.read_price_csv`)
PRICE_CSV_COLUMNS = ["provider", "region", "offering", "mode", "price", "date"]

NOT_IN_CATALOG = "no catalog offering of this instance type in this region"
#: GCP committed-use GPU resource names per catalog accelerator, as Cloud Billing Catalog
#: SKU descriptions spell them ("Commitment v1: <name> running in <region> for 1 Year"),
#: quoted from the API in public code (code index, find_string hits 4353159252: Tesla
#: A100; 55513368414: H100 80GB; 62805704974: L4; 70979535744: Tesla T4). An accelerator
#: not listed has no committed GPU price read here.
GCP_GPU_RESOURCES = {
    "a100-40gb": "Nvidia Tesla A100 GPU",
    "h100-sxm": "Nvidia H100 80GB GPU",
    "l4": "Nvidia L4 GPU",
    "t4": "Nvidia Tesla T4 GPU",
}
_RESERVED_MODE = {1.0: "reserved_1y", 3.0: "reserved_3y"}


@dataclass(frozen=True)
class PricePull:
    """One source's prices, dated, as a snapshot.

    Attributes
    ----------
    source
        One of :data:`SOURCES`.
    price_date
        The snapshot's day (``YYYY-MM-DD``).
    rows
        :data:`SNAPSHOT_COLUMNS`, one per offering and mode (USD per instance-hour),
        the lowest where the source states one twice.
    unmapped
        :data:`UNMAPPED_COLUMNS`: what could not be priced as a catalog offering, why;
        the held prices too (:meth:`held_as_unmapped`: their reason starts with
        :data:`~solver.inputs.price_holds.HELD_PREFIX`), so a stored snapshot lists them.
    held
        :data:`~solver.inputs.price_holds.HELD_COLUMNS`: prices held for review (zero,
        negative, not finite, implausible; :mod:`solver.inputs.price_holds`), not in
        ``rows``.
    origin
        The file (or URL) read.
    """

    source: str
    price_date: str
    rows: pd.DataFrame
    unmapped: pd.DataFrame
    origin: str = ""
    skipped: dict[str, int] = field(default_factory=dict)
    held: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=HELD_COLUMNS))

    def held_as_unmapped(self) -> pd.DataFrame:
        """The held prices as :data:`UNMAPPED_COLUMNS` rows (their reason starting with
        :data:`~solver.inputs.price_holds.HELD_PREFIX`), with ``offering_id``, ``mode``
        and ``price`` (as text: NaN and inf are kept as written), for the snapshot's
        list of what it did not store."""
        held = self.held
        return pd.DataFrame(
            {
                "provider": held["provider"],
                "region": held["region"],
                "what": [f"{o} {m}" for o, m in zip(held["offering"], held["mode"], strict=True)],
                "rows": 1,
                "reason": [f"{HELD_PREFIX}: {r}" for r in held["reason"]],
                "offering_id": held["offering_id"],
                "mode": held["mode"],
                "price": [repr(float(p)) for p in held["price"]],
            }
        )

    def price_csv(self) -> pd.DataFrame:
        """The rows that name a catalog offering, as our price CSV (what ``--prices``
        reads: a price update naming nothing in the catalog is refused as a likely slip)."""
        return price_csv_of(self.rows)


def price_csv_of(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows of a pull or a stored snapshot (:data:`SNAPSHOT_COLUMNS`) that name a catalog
    offering, as our price CSV (:data:`PRICE_CSV_COLUMNS`): what ``--prices`` and a
    workspace watch apply."""
    return rows.loc[rows["in_catalog"], PRICE_CSV_COLUMNS].reset_index(drop=True)


def check_source(source: str) -> str:
    """``source`` if it is one of :data:`SOURCES`, else one clear error."""
    if source not in SOURCES:
        raise ProcureError(
            f"unknown price source {source!r}",
            field="--source",
            fix=f"use one of: {', '.join(SOURCES)}",
        )
    return source


def pull_prices(
    source: str,
    path: Path | str,
    offerings: pd.DataFrame,
    *,
    price_date: str,
    provider: str | None = None,
    references: dict[tuple[str, str], tuple[float, str]] | None = None,
) -> PricePull:
    """Read a saved response of ``source`` into a snapshot dated ``price_date``; prices
    that are not prices (zero, negative, not finite, above the market ceiling, more than
    x10 either way from their reference) are held (:mod:`solver.inputs.price_holds`).

    Parameters
    ----------
    source
        One of :data:`SOURCES`.
    path
        The saved response (a ``vms.csv`` or the JSON the API serves).
    offerings
        The catalog's offerings table (``offering_id`` as index or column), to map rows.
    price_date
        The snapshot's day, ``YYYY-MM-DD``; every row is dated with it.
    provider
        SkyPilot only: the cloud the file is for (default: the file's folder name).
    references
        (offering_id, mode) -> (USD per instance-hour, what it is): each offering's
        latest stored price, the reference a pulled price is held against; the catalog's
        price where it has none.

    Raises
    ------
    ProcureError
        An unknown source, a file the source's importer cannot read, an empty feed or
        one of another schema, or one whose every price is held (naming the file).
    """
    check_source(source)
    path = Path(path)
    if not path.is_file():
        raise ProcureError("no such file", file=str(path), fix=f"give a saved {source} response")
    off = offerings.reset_index() if "offering_id" not in offerings.columns else offerings
    skipped: dict[str, int] = {}
    if source == "skypilot":
        cloud = provider or path.resolve().parent.name.lower()
        priced, unmapped, held = _skypilot(path, cloud, skipped)
    elif source == "gcp-billing":
        priced, unmapped = _gcp(path, off)
        held = _no_held()
    else:
        priced, unmapped = _instance_rates(source, path)
        held = _no_held()
    refs = dict(references or {})
    for key, value in catalog_references(off).items():
        refs.setdefault(key, value)
    rows, missing, more_held = _map(priced, off, price_date, refs)
    held = pd.concat([held, more_held], ignore_index=True) if len(held) else more_held
    unmapped = pd.concat([unmapped, missing], ignore_index=True)[UNMAPPED_COLUMNS]
    pull = PricePull(source, price_date, rows, unmapped, str(path), skipped, held)
    check_not_empty(pull)
    listed = pd.concat([unmapped, pull.held_as_unmapped()], ignore_index=True)
    return replace(pull, unmapped=listed.fillna("") if len(held) else unmapped)


#: what each source's file is, for the message refusing one that holds no price
EXPECTED = {
    "skypilot": "a SkyPilot vms.csv (header InstanceType,AcceleratorName,AcceleratorCount,"
    "...,Price,Region,...; one row per instance type and zone)",
    "aws-offer": "an AWS Price List EC2 offer file (offers/v1.0/aws/AmazonEC2/current/"
    "REGION/index.json: products and terms.OnDemand/terms.Reserved) or a GetProducts record",
    "azure-retail": 'an Azure Retail Prices API response ({"Items": [...]} with armSkuName, '
    "armRegionName, type and retailPrice on each item)",
    "gcp-billing": "a Cloud Billing Catalog services.skus.list response for Compute Engine "
    '({"skus": [...]} with category, serviceRegions and pricingInfo on each SKU)',
}


def check_not_empty(pull: PricePull) -> None:
    """Refuse a pull that has no price to store: an empty feed, a file of another schema
    (its records name none of the fields the source's prices are in), or a feed whose
    every price is held.

    Raises
    ------
    ProcureError
        Naming the file, the format expected and the fix; nothing is stored.
    """
    if len(pull.rows):
        return
    if len(pull.held):
        shown = "; ".join(
            f"{r.offering_id} {r.mode}: {r.reason}" for r in pull.held.head(5).itertuples()
        )
        raise ProcureError(
            f"every price in it is held for review ({len(pull.held)}): {shown}",
            file=pull.origin,
            fix="check the file against the source (a price of 0, below 0, not a number or "
            "out of all proportion is not stored); pull a corrected response",
        )
    if len(pull.unmapped):
        shown = "; ".join(f"{r.what}: {r.reason}" for r in pull.unmapped.head(3).itertuples())
        raise ProcureError(
            f"none of its {int(pull.unmapped['rows'].sum())} prices is an instance's price "
            f"({shown}); nothing was stored",
            file=pull.origin,
            fix="pull a response that prices whole instances (GCP: every part of a machine, "
            "its vCPUs, memory and GPUs, in the same region and term)",
        )
    expected = EXPECTED[pull.source]
    raise ProcureError(
        f"no price could be read from it: it is empty or not {expected.split(' (')[0]}; "
        "nothing was stored",
        file=pull.origin,
        fix=f"give {expected}, with --source naming what the file is",
    )


def catalog_references(off: pd.DataFrame) -> dict[tuple[str, str], tuple[float, str]]:
    """(offering_id, mode) -> (the catalog's price, USD per instance-hour, "the catalog"):
    the reference of a pulled price when no earlier snapshot has the offering."""
    from solver.units import PRICE_COLUMN

    out: dict[tuple[str, str], tuple[float, str]] = {}
    for mode, column in PRICE_COLUMN.items():
        if column not in off.columns:
            continue
        values = pd.to_numeric(off[column], errors="coerce")
        for offering_id, value in zip(off["offering_id"], values, strict=True):
            if pd.notna(value) and value > 0:
                out[(str(offering_id), mode)] = (float(value), "the catalog")
    return out


def _no_held() -> pd.DataFrame:
    return pd.DataFrame(columns=HELD_COLUMNS)


def _skypilot(
    path: Path, provider: str, skipped: dict[str, int]
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    from solver.inputs.importers.skypilot import read_skypilot_vms

    result = read_skypilot_vms(path, provider, source=f"skypilot:{path.name}")
    skipped.update(result.skipped)
    parts = []
    for mode, column in (("on_demand", "on_demand_usd_per_hour"), ("spot", "spot_usd_per_hour")):
        part = result.offerings[["provider", "region", "instance_type", column]]
        part = part.assign(accelerators=result.offerings["accelerators_per_instance"])
        part = part.rename(columns={column: "price"}).dropna(subset=["price"])
        parts.append(part.assign(mode=mode))
    unmapped = pd.DataFrame(
        [
            {
                "provider": provider,
                "region": "",
                "what": f"accelerator {name}",
                "rows": n,
                "reason": "accelerator name not in the importer's name table",
            }
            for name, n in result.unmapped.items()
        ],
        columns=UNMAPPED_COLUMNS,
    )
    held = pd.DataFrame(
        {
            "provider": provider,
            "region": result.held["region"],
            "offering": result.held["instance_type"].where(
                result.held["instance_type"] != "", result.held["accelerator"]
            ),
            "mode": result.held["column"].map({"Price": "on_demand", "SpotPrice": "spot"}),
            "price": [float(t) for t in result.held["text"]],
        }
    )
    held["offering_id"] = provider + "/" + held["region"] + "/" + held["offering"]
    held["reference_usd"] = float("nan")
    held["reason"] = [
        f"line {n}: {c} {t!r} is not a price (zero, negative or not a number)"
        for n, c, t in zip(result.held["line"], result.held["column"], result.held["text"],
                           strict=True)
    ]  # fmt: skip
    return pd.concat(parts, ignore_index=True), unmapped, held[HELD_COLUMNS]


def _instance_rates(source: str, path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """AWS and Azure: per-instance rates -> on_demand, reserved_1y, reserved_3y."""
    if source == "aws-offer":
        from solver.inputs.importers.aws_prices import read_aws_ec2_offer

        rates = read_aws_ec2_offer(path)
        reserved = (rates["payment_option"] == "no_upfront") & (rates["plan_type"] == "standard")
    else:
        from solver.inputs.importers.azure_retail import read_azure_retail_prices

        rates = read_azure_retail_prices(path)
        reserved = rates["kind"] == "reserved"
    rates = rates[rates["operating_system"] == "linux"]
    on_demand = rates[rates["kind"] == "on_demand"].assign(mode="on_demand")
    res = rates[reserved & (rates["kind"] == "reserved")]
    res = res.assign(mode=res["term_years"].map(_RESERVED_MODE)).dropna(subset=["mode"])
    both = pd.concat([on_demand, res], ignore_index=True)
    priced = both.rename(columns={"usd_per_hour": "price"})
    return priced[["provider", "region", "instance_type", "price", "mode"]], _no_rows()


#: GCP modes priced from resource SKUs: the mode, the SKUs' kind and term in years
_GCP_MODES = (
    ("on_demand", "on_demand", 0.0),
    ("reserved_1y", "committed_use", 1.0),
    ("reserved_3y", "committed_use", 3.0),
)


class _GcpMachine(Protocol):
    """A GCP catalog offering row as :func:`_gcp` reads it (counts numeric, sizes in GiB)."""

    instance_type: str
    region: str
    accelerator_id: str
    vcpus: float
    memory_gib: float
    accelerators_per_instance: float


def _gcp(path: Path, off: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """GCP: a catalog machine's on-demand and committed prices, where the response
    prices all its parts (vCPUs, GiB of memory, GPUs) in its region."""
    from solver.inputs.importers.gcp_billing import machine_usd_per_hour, read_gcp_billing_skus

    rates = read_gcp_billing_skus(path)
    rates = rates[rates["kind"].isin(["on_demand", "committed_use"])]
    rows, used = [], set()
    machines = off[off["provider"] == "gcp"].copy()
    for column in ("vcpus", "memory_gib", "accelerators_per_instance"):
        machines[column] = pd.to_numeric(machines[column], errors="coerce")
    priced_machines = machines.dropna(subset=["vcpus", "memory_gib"]).itertuples(index=False)
    # the stubs type a row's fields as any scalar; these columns are the catalog's
    for r in cast("Iterator[_GcpMachine]", priced_machines):
        series = str(r.instance_type).split("-")[0].upper()
        parts = {f"{series} Cpu": float(r.vcpus), f"{series} Ram": float(r.memory_gib)}
        gpu = GCP_GPU_RESOURCES.get(str(r.accelerator_id))
        if gpu and r.instance_type.split("-")[0] in ("a2", "a3", "g2"):
            parts[gpu] = float(r.accelerators_per_instance)
        for mode, kind, years in _GCP_MODES:
            price = machine_usd_per_hour(
                rates, region=r.region, term_years=years, parts=parts, kind=kind
            )
            if price is not None:
                used |= {(kind, r.region, name) for name in parts}
                rows.append(
                    {
                        "provider": "gcp",
                        "region": r.region,
                        "instance_type": r.instance_type,
                        "price": price,
                        "mode": mode,
                    }
                )
    keys = zip(rates["kind"], rates["region"], rates["resource"], strict=True)
    left = rates[[key not in used for key in keys]]
    unmapped = (
        left.groupby(["region", "resource"]).size().reset_index(name="rows")
        if len(left)
        else pd.DataFrame(columns=["region", "resource", "rows"])
    )
    unmapped = unmapped.assign(
        provider="gcp",
        what=unmapped["resource"].map(lambda s: f"resource {s}"),
        reason="a resource price (on demand or committed use): no catalog machine in this "
        "region has all its parts (vCPUs, memory, GPUs) priced in the response",
    )
    priced = pd.DataFrame(rows, columns=["provider", "region", "instance_type", "price", "mode"])
    return priced, unmapped[UNMAPPED_COLUMNS]


def _no_rows() -> pd.DataFrame:
    return pd.DataFrame(columns=UNMAPPED_COLUMNS)


def _map(
    priced: pd.DataFrame,
    off: pd.DataFrame,
    price_date: str,
    references: dict[tuple[str, str], tuple[float, str]],
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Snapshot rows (one per offering and mode, the lowest price), the rows that name
    no catalog offering, counted per instance type and region, and the prices held
    (:func:`~solver.inputs.price_holds.split_held` against ``references``)."""
    priced = priced.assign(price=pd.to_numeric(priced["price"], errors="coerce"))
    priced["offering_id"] = (
        priced["provider"] + "/" + priced["region"] + "/" + priced["instance_type"]
    )
    known_n = pd.to_numeric(
        off.set_index("offering_id")["accelerators_per_instance"], errors="coerce"
    )
    count = priced["offering_id"].map(known_n)
    if "accelerators" in priced.columns:  # the feed's own count (SkyPilot)
        count = count.fillna(pd.to_numeric(priced["accelerators"], errors="coerce"))
    priced = priced.assign(offering=priced["instance_type"], accelerators=count.fillna(0))
    priced, held = split_held(priced, references)
    priced = priced.drop(columns=["offering", "accelerators"]).copy()
    priced = priced.sort_values(["offering_id", "mode", "price"], kind="stable")
    priced = priced.drop_duplicates(["offering_id", "mode"])
    known = off.set_index("offering_id")[["accelerator_id", "accelerators_per_instance"]]
    rows = priced.join(known, on="offering_id")
    rows["in_catalog"] = rows["offering_id"].isin(known.index)
    rows = rows.rename(columns={"instance_type": "offering"}).assign(date=price_date)
    rows["accelerator_id"] = rows["accelerator_id"].fillna("")
    count = pd.to_numeric(rows["accelerators_per_instance"], errors="coerce")
    rows["accelerators_per_instance"] = count.fillna(0).astype(int)
    rows = rows[SNAPSHOT_COLUMNS].reset_index(drop=True)
    out = rows[~rows["in_catalog"]]
    missing = (
        out.groupby(["provider", "region", "offering"]).size().reset_index(name="rows")
        if len(out)
        else pd.DataFrame(columns=["provider", "region", "offering", "rows"])
    )
    missing = missing.assign(what=missing["offering"], reason=NOT_IN_CATALOG)
    return rows, missing[UNMAPPED_COLUMNS], held


def check_snapshot_date(text: str, today: date) -> str:
    """A snapshot's day: ``YYYY-MM-DD`` on or after the first cloud price and at most
    :data:`~solver.inputs.price_traps.AHEAD_DAYS` after ``today`` (a price announced
    ahead of the day it takes effect); else one clear error naming ``--date``."""
    from solver.inputs.price_traps import AHEAD_DAYS, FIRST_CLOUD_PRICE_DAY

    try:
        day = date.fromisoformat(str(text))
    except ValueError:
        day = None
    if day is None or len(str(text)) != 10:
        raise ProcureError(
            f"{text!r} is not a day", field="--date", fix="write the prices' day as YYYY-MM-DD"
        )
    if not FIRST_CLOUD_PRICE_DAY <= day <= today + timedelta(days=AHEAD_DAYS):
        when = "in the future" if day > today else "before any cloud sold compute by the hour"
        raise ProcureError(
            f"snapshot day {day} is {when} (today is {today})",
            field="--date",
            fix=f"write the day the prices were read (YYYY-MM-DD), at most {AHEAD_DAYS} days ahead",
        )
    return day.isoformat()


#: sources whose API serves a response in pages, and the list each page's records are in:
#: Azure's ``Items`` with ``NextPageLink`` (the next page's URL; https://learn.microsoft.com/
#: en-us/rest/api/cost-management/retail-prices/azure-retail-prices#api-response-pagination)
#: and the Cloud Billing Catalog's ``skus`` with ``nextPageToken`` (passed back as
#: ``pageToken``; https://cloud.google.com/billing/docs/reference/rest/v1/services.skus/list)
PAGED_RECORDS = {"azure-retail": "Items", "gcp-billing": "skus"}


def next_page_url(source: str, url: str, page: dict) -> str | None:
    """The URL of the page after ``page`` (read from ``url``), or None on the last page:
    Azure's ``NextPageLink`` as given; GCP's ``url`` with ``pageToken`` set to the page's
    ``nextPageToken`` (the other query parameters, such as ``key``, kept)."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    if source == "azure-retail":
        link = page.get("NextPageLink")
        return str(link) if link else None
    if source == "gcp-billing":
        token = page.get("nextPageToken")
        if not token:
            return None
        parts = urlsplit(url)
        query = parse_qsl(parts.query, keep_blank_values=True)
        query = [(k, v) for k, v in query if k != "pageToken"] + [("pageToken", str(token))]
        return urlunsplit(parts._replace(query=urlencode(query)))
    return None


def merge_pages(source: str, pages: list[dict]) -> dict:
    """One response of ``source`` holding every page's records in order, as if the API
    had served them at once (the first page's other fields kept, the paging links
    dropped; Azure's ``Count`` is the records')."""
    key = PAGED_RECORDS[source]
    merged = {k: v for k, v in pages[0].items() if k not in ("NextPageLink", "nextPageToken")}
    merged[key] = [record for page in pages for record in (page.get(key) or [])]
    if source == "azure-retail":
        merged["Count"] = len(merged[key])
    return merged
