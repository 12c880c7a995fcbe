"""AWS Price List offer files: Reserved Instance terms and Savings Plans rates.

Two formats, both documented by AWS and served without sign-in:

- **EC2 offer file** (https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/
  reading-an-offer.html), ``offers/v1.0/aws/AmazonEC2/current/<region>/index.json``:
  ``products`` keyed by SKU (``attributes``: ``instanceType``, ``regionCode``,
  ``operatingSystem``, ``tenancy``, ``preInstalledSw``, ``capacitystatus``) and
  ``terms.OnDemand`` / ``terms.Reserved`` keyed by SKU then offer term code, each term
  with ``termAttributes`` (``LeaseContractLength`` 1yr/3yr, ``OfferingClass``
  standard/convertible, ``PurchaseOption``) and ``priceDimensions`` (``Hrs``: the
  hourly fee; ``Quantity``: the upfront fee). The Price List Query API
  (``GetProducts``) returns the same record one product at a time
  (``{"product": ..., "terms": {"OnDemand": {code: term}, "Reserved": ...}}``); both
  are read.
- **Savings Plans offer file** (https://docs.aws.amazon.com/awsaccountbilling/latest/
  aboutv2/sp-offer-file.html and reading-service-price-list-file-for-savings-plans),
  ``savingsPlan/v1.0/aws/AWSComputeSavingsPlan/current/<region>/index.json``:
  ``products`` (a list: ``sku``, ``productFamily`` ComputeSavingsPlans or
  EC2InstanceSavingsPlans, ``attributes.purchaseOption``/``purchaseTerm``) and
  ``terms.savingsPlan`` (a list: ``sku``, ``description``, ``leaseContractLength``,
  ``rates`` with ``discountedUsageType`` (``<region prefix>-BoxUsage:<instance
  type>``), ``discountedOperation`` (``RunInstances`` is Linux), ``discountedRate``,
  ``discountedRegionCode``, ``discountedInstanceType``).

Only shared-tenancy Linux instance usage (``BoxUsage``, operation ``RunInstances``,
no pre-installed software, capacity status ``Used``) is read as an instance's price:
the other rows price licences, dedicated hosts and reserved capacity left unused.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from solver.errors import ProcureError
from solver.inputs.importers.committed import (
    PAYMENT_OPTIONS,
    effective_usd_per_hour,
    frame,
    price_field,
    read_json,
)

SAVINGS_PLAN_FAMILIES = {
    "ComputeSavingsPlans": "compute",
    "EC2InstanceSavingsPlans": "ec2_instance",
}
#: the price files' ``location`` -> region code, for records without ``regionCode``
#: (older files and GetProducts records); names as the files spell them
LOCATIONS = {
    "US East (N. Virginia)": "us-east-1",
    "US East (Ohio)": "us-east-2",
    "US West (N. California)": "us-west-1",
    "US West (Oregon)": "us-west-2",
    "Canada (Central)": "ca-central-1",
    "EU (Ireland)": "eu-west-1",
    "EU (London)": "eu-west-2",
    "EU (Paris)": "eu-west-3",
    "EU (Frankfurt)": "eu-central-1",
    "EU (Stockholm)": "eu-north-1",
    "Asia Pacific (Tokyo)": "ap-northeast-1",
    "Asia Pacific (Seoul)": "ap-northeast-2",
    "Asia Pacific (Mumbai)": "ap-south-1",
    "Asia Pacific (Singapore)": "ap-southeast-1",
    "Asia Pacific (Sydney)": "ap-southeast-2",
    "South America (Sao Paulo)": "sa-east-1",
}
_BOX_USAGE = re.compile(r"(?:^|-)BoxUsage:(?P<type>[a-z0-9-]+\.[a-z0-9-]+)$")
_OFFER_FIX = "give an AWS Price List offer file (index.json) as AWS serves it"


def _fees(term: dict, path: Path | str, where: str) -> tuple[float, float]:
    """A term's (upfront fee in USD, hourly fee in USD per hour): the sum of its price
    dimensions of unit ``Quantity`` and of unit ``Hrs``.

    Raises
    ------
    ProcureError
        A term without price dimensions, or a dimension whose ``pricePerUnit.USD`` is
        missing or text that is not a number (naming the term's place in the file).
    """
    dims = term.get("priceDimensions") if isinstance(term, dict) else None
    if not isinstance(dims, dict) or not dims:
        raise ProcureError(
            "the term has no priceDimensions", file=str(path), field=where, fix=_OFFER_FIX
        )
    upfront = hourly = 0.0
    for code, dim in dims.items():
        field = f"{where}.priceDimensions[{code}].pricePerUnit.USD"
        per_unit = dim.get("pricePerUnit") if isinstance(dim, dict) else None
        value = per_unit.get("USD") if isinstance(per_unit, dict) else None
        price = price_field(value, path, field, _OFFER_FIX)
        unit = dim.get("unit")
        if unit == "Hrs":
            hourly += price
        elif unit == "Quantity":
            upfront += price
    return upfront, hourly


def _date(text: str | None) -> str:
    return (text or "")[:10]


def read_aws_savings_plan_offer(path: Path | str) -> pd.DataFrame:
    """Rates of a Savings Plans offer file as :data:`COMMITTED_COLUMNS` rows of kind
    ``savings_plan``: one per plan and EC2 instance usage it discounts (Fargate and
    Lambda rates are left out: they are not instances).

    The plan's term comes from ``leaseContractLength.duration`` (years); its payment
    option and family from its product (``attributes.purchaseOption``,
    ``productFamily``), else from its description ("1 year All Upfront Compute Savings
    Plan"). The rate is USD per instance-hour of usage covered, whatever the payment
    option (an upfront payment pays the commitment, not the rate).
    """
    data = read_json(path, "a Savings Plans offer file")
    offer = data if isinstance(data, dict) else {}
    terms = (offer.get("terms") or {}).get("savingsPlan")
    if not isinstance(terms, list):
        raise ProcureError(
            "no terms.savingsPlan list", file=str(path), field="terms.savingsPlan", fix=_OFFER_FIX
        )
    products = {p.get("sku"): p for p in offer.get("products") or [] if isinstance(p, dict)}
    rows = []
    for term in terms:
        product = products.get(term.get("sku"), {})
        description = str(term.get("description", ""))
        family = SAVINGS_PLAN_FAMILIES.get(product.get("productFamily", ""), "")
        if not family:
            family = "ec2_instance" if "EC2 Instance" in description else "compute"
        payment = str((product.get("attributes") or {}).get("purchaseOption", ""))
        if not payment:
            payment = next((p for p in PAYMENT_OPTIONS if p in description.lower()), "")
        years = float((term.get("leaseContractLength") or {}).get("duration", 0))
        for rate in term.get("rates") or []:
            usage = str(rate.get("discountedUsageType", ""))
            match = _BOX_USAGE.search(usage)
            if rate.get("discountedServiceCode") != "AmazonEC2" or match is None:
                continue
            operation = str(rate.get("discountedOperation", ""))
            given = (rate.get("discountedRate") or {}).get("price")
            where = f"terms.savingsPlan[{term.get('sku', '')}].rates[{usage}].discountedRate"
            price = price_field(given, path, f"{where}.price", _OFFER_FIX)
            rows.append(
                {
                    "provider": "aws",
                    "region": rate.get("discountedRegionCode", ""),
                    "instance_type": rate.get("discountedInstanceType") or match["type"],
                    "kind": "savings_plan",
                    "term_years": years,
                    "payment_option": PAYMENT_OPTIONS.get(payment.lower(), ""),
                    "usd_per_hour": price,
                    "hourly_usd": price,
                    "plan_type": family,
                    "operating_system": "linux" if operation == "RunInstances" else "other",
                    "unit": "h",
                    "sku": rate.get("rateCode", ""),
                    "price_date": _date(term.get("effectiveDate") or offer.get("publicationDate")),
                    "source": str(path),
                }
            )
    return frame(rows)


def read_aws_ec2_offer(path: Path | str) -> pd.DataFrame:
    """On-demand and Reserved Instance prices of an EC2 offer file (or one
    ``GetProducts`` record) as :data:`COMMITTED_COLUMNS` rows, for shared-tenancy Linux
    instances: kind ``on_demand``, or ``reserved`` per lease length, offering class and
    payment option, its effective hourly rate = upfront fee / term hours + hourly fee.
    """
    data = read_json(path, "an EC2 offer file")
    if not isinstance(data, dict) or not isinstance(data.get("terms"), dict):
        raise ProcureError("no terms", file=str(path), field="terms", fix=_OFFER_FIX)
    if "product" in data:  # one GetProducts record: terms keyed by term code only
        sku = data["product"].get("sku", "")
        products = {sku: data["product"]}
        terms = {kind: {sku: t} for kind, t in data["terms"].items()}
    else:
        products = data.get("products") or {}
        terms = data["terms"]
    rows = []
    for sku, product in products.items():
        attrs = product.get("attributes") or {}
        if not _linux_instance(attrs):
            continue
        base = {
            "provider": "aws",
            "region": attrs.get("regionCode") or LOCATIONS.get(attrs.get("location", ""), ""),
            "instance_type": attrs.get("instanceType", ""),
            "operating_system": "linux",
            "unit": "h",
            "source": str(path),
        }
        for code, term in ((terms.get("OnDemand") or {}).get(sku) or {}).items():
            _, hourly = _fees(term, path, f"terms.OnDemand[{sku}][{code}]")
            rows.append(
                base
                | {
                    "kind": "on_demand",
                    "usd_per_hour": hourly,
                    "hourly_usd": hourly,
                    "sku": term.get("offerTermCode", ""),
                    "price_date": _date(term.get("effectiveDate")),
                }
            )
        for code, term in ((terms.get("Reserved") or {}).get(sku) or {}).items():
            rows.append(base | _reserved(term, path, f"terms.Reserved[{sku}][{code}]"))
    return frame(rows)


def _linux_instance(attrs: dict) -> bool:
    """Shared-tenancy Linux without pre-installed software, capacity in use, sold on
    demand (``operation`` RunInstances: a Capacity Block, ``RunInstances:CB`` and market
    option ``CapacityBlock``, is sold by the block and its OnDemand term says $0.00)."""
    return (
        attrs.get("operatingSystem") == "Linux"
        and attrs.get("tenancy", "Shared") == "Shared"
        and attrs.get("preInstalledSw", "NA") == "NA"
        and attrs.get("capacitystatus", "Used") == "Used"
        and attrs.get("operation", "RunInstances") == "RunInstances"
        and attrs.get("marketoption", "OnDemand") == "OnDemand"
        and bool(attrs.get("instanceType"))
    )


def _reserved(term: dict, path: Path | str, where: str) -> dict:
    """One Reserved term: its lease, class, payment option and effective hourly rate."""
    attrs = term.get("termAttributes") or {}
    years = float(str(attrs.get("LeaseContractLength", "0")).removesuffix("yr") or 0)
    upfront, hourly = _fees(term, path, where)
    return {
        "kind": "reserved",
        "term_years": years,
        "payment_option": PAYMENT_OPTIONS.get(str(attrs.get("PurchaseOption", "")).lower(), ""),
        "usd_per_hour": effective_usd_per_hour(upfront, hourly, years),
        "upfront_usd": upfront,
        "hourly_usd": hourly,
        "plan_type": str(attrs.get("OfferingClass", "")),
        "sku": term.get("offerTermCode", ""),
        "price_date": _date(term.get("effectiveDate")),
    }
