"""Billing exports in FOCUS: the charges a cloud actually billed, read into one table.

FOCUS (the FinOps Open Cost and Usage Specification, https://focus.finops.org/; column
text in ``FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec``, ``specification/columns/*.md``)
is the one column set the three hyperscalers export their bills in:

- AWS: Data Exports, "FOCUS 1.0 with AWS columns" (the CUR 2.0 family;
  https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-focus-1-0-aws.html):
  ``ProviderName`` ``AWS``; the instance type in ``x_UsageType`` (``USE1-BoxUsage:
  p5.48xlarge``) and, in newer exports, ``SkuPriceDetails``.
- Azure: Cost Management exports, dataset "Cost and usage details (FOCUS)"
  (https://learn.microsoft.com/azure/cost-management-billing/dataset-schema/cost-usage-details-focus):
  ``ProviderName`` ``Microsoft``; the VM size in ``x_SkuDetails`` (``ServiceType``) or
  ``SkuPriceDetails``; regions as ``eastus``.
- Google Cloud: the FOCUS view of the BigQuery billing export
  (https://cloud.google.com/billing/docs/how-to/export-data-bigquery-tables/focus),
  saved as CSV: ``ProviderName`` ``Google Cloud``; the machine type in
  ``SkuPriceDetails`` or ``x_InstanceType``.

The columns are shared, so one reader does all three; a provider's quirks (its display
name, where it puts the instance type) are handled by the mappings below. Our own FOCUS
forecast (``procure export``, :mod:`solver.outputs.focus`) reads back the same way.

:func:`read_focus_billing` returns one row per billed row (nothing dropped, nothing
summed), with the columns :data:`BILLING_COLUMNS`:

- ``provider``: the catalog's provider id (``aws``, ``azure``, ``gcp``, ``lambda`` ...)
  from ``ProviderName`` (FOCUS 1.0 to 1.3; ``ServiceProviderName``, its 1.3 successor,
  where a bill has no ``ProviderName``); ``region`` from ``RegionId``; ``instance_type`` (see above;
  empty when the row is not an instance, e.g. storage); ``sku_id`` (``SkuId``).
- ``month``: ``YYYY-MM`` of ``ChargePeriodStart`` (UTC): the calendar month the charge
  was incurred in (a billing period need not be a calendar month).
- ``pricing``: ``on_demand`` (``PricingCategory`` Standard or empty), ``spot`` (Dynamic),
  ``reserved`` (Committed: usage covered by a commitment, used or unused), ``other``.
- ``charge_category``: ``ChargeCategory`` as billed.
- ``cost``: ``EffectiveCost`` (the amortised cost FOCUS defines: a commitment's fee on
  the hours it covers, 0 on its purchase row) in ``currency`` (``BillingCurrency``). A
  blank ``EffectiveCost`` is refused, never read as 0 (FOCUS 1.2: "EffectiveCost MUST NOT
  be null").
- ``hours``: ``PricingQuantity`` when ``PricingUnit`` is hours, else 0 (a row priced in
  GB or units has no instance-hours); ``quantity``/``unit`` as billed. A blank
  ``PricingQuantity`` is refused on Usage and Purchase rows that are not a Correction
  (where FOCUS 1.2 says it MUST NOT be null) and read as no quantity elsewhere (Tax rows
  MUST leave it null).
- ``file`` and ``row`` (1 = the first data row): where each row came from.
- ``period_first_month``, ``period_last_month``: the months of the row's billing period
  (``BillingPeriodStart``/``BillingPeriodEnd``), '' without them: the months an invoice
  covers even where it has no row. ``charge_end``: ``ChargePeriodEnd`` in ISO 8601 UTC
  ('' without it): how far into its month a bill runs.
- ``identity``, ``digest`` and ``amounts``: the row's FOCUS identity, content and
  amounts (:func:`row_identity`), by which a row passed twice is found.
- ``commitment_status``: ``CommitmentDiscountStatus`` as billed (``Used``, ``Unused`` or
  ''): the commitment burn-down (:mod:`solver.analyses.commitment_burn`).

Bad input is refused with the file, the row (1 = the first data row), its line in the
file, the column and the fix; the file must be UTF-8 CSV
(:mod:`solver.inputs.importers.csv_text`).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import pandas as pd

from solver.errors import ProcureError
from solver.inputs.importers.csv_text import read_csv_text

#: Provider ids -> the names on their invoices (FOCUS ProviderName is a display name).
PROVIDER_NAMES: dict[str, str] = {
    "aws": "AWS",
    "gcp": "Google Cloud",
    "azure": "Microsoft",
    "oci": "Oracle",
    "coreweave": "CoreWeave",
    "lambda": "Lambda",
    "nebius": "Nebius",
    "crusoe": "Crusoe",
    "hyperstack": "Hyperstack",
    "verda": "Verda",
    "fluidstack": "Fluidstack",
    "paperspace": "Paperspace",
    "digitalocean": "DigitalOcean",
    "jarvislabs": "JarvisLabs",
    "seeweb": "Seeweb",
    "scaleway": "Scaleway",
    "denvr": "Denvr Dataworks",
    "massedcompute": "Massed Compute",
    "oblivus": "Oblivus",
    "latitude": "Latitude.sh",
    "tensorwave": "TensorWave",
    "runpod": "RunPod",
    "vast": "Vast.ai",
    "hyperbolic": "Hyperbolic",
}
#: Other spellings of ProviderName seen in exports (lower case) -> provider id: Azure's
#: exports say "Microsoft" and sample data "Microsoft Azure"; AWS "AWS" or "Amazon Web
#: Services"; Google "Google Cloud" (older: "Google Cloud Platform").
_ALIASES: dict[str, str] = {
    "amazon web services": "aws",
    "amazon": "aws",
    "microsoft azure": "azure",
    "azure": "azure",
    "google cloud platform": "gcp",
    "google": "gcp",
    "gcp": "gcp",
    "oracle cloud infrastructure": "oci",
}
#: Columns a billing export must have for actuals (each a FOCUS 1.0+ column).
REQUIRED: tuple[str, ...] = (
    "ProviderName",
    "BillingCurrency",
    "ChargePeriodStart",
    "ChargeCategory",
    "EffectiveCost",
    "PricingQuantity",
    "PricingUnit",
    "RegionId",
)
BILLING_COLUMNS: tuple[str, ...] = (
    "provider",
    "region",
    "instance_type",
    "sku_id",
    "month",
    "pricing",
    "charge_category",
    "cost",
    "currency",
    "hours",
    "quantity",
    "unit",
    "file",
    "row",
    "period_first_month",
    "period_last_month",
    "charge_end",
    "identity",
    "digest",
    "amounts",
    "commitment_status",
)
_HOUR_UNITS = {"hours", "hour", "hrs", "hr", "h", "1 hour", "instance-hours", "instance hours"}
_PRICING = {"standard": "on_demand", "": "on_demand", "dynamic": "spot", "committed": "reserved"}
#: AWS usage types that carry an instance type after the colon (BoxUsage, SpotUsage,
#: DedicatedUsage, HostUsage, ReservedHostUsage)
_AWS_USAGE = re.compile(r"(?:Box|Spot|Dedicated|Host|ReservedHost)Usage:(?P<type>[\w.\-]+)")


def provider_id(name: str, known: set[str] | None = None) -> str:
    """The provider id of a FOCUS ``ProviderName`` (``AWS`` -> ``aws``); a name not in the
    tables is lower-cased with spaces removed (``Massed Compute`` -> ``massedcompute``)."""
    text = str(name).strip()
    for pid, display in PROVIDER_NAMES.items():
        if text.lower() == display.lower():
            return pid
    if text.lower() in _ALIASES:
        return _ALIASES[text.lower()]
    squashed = re.sub(r"[^a-z0-9]", "", text.lower())
    if known and squashed in known:
        return squashed
    return squashed


def _json(text: str) -> dict:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def instance_type_of(row: dict[str, str]) -> str:
    """The instance (VM, machine) type a billed row names, where each provider puts it:
    ``SkuPriceDetails`` (``InstanceType``), ``x_InstanceType``, AWS's ``x_UsageType``,
    Azure's ``x_SkuDetails`` (``ServiceType``); '' when the row names none."""
    details = _json(row.get("SkuPriceDetails", ""))
    for key in ("InstanceType", "instance_type", "MachineType", "VMSize"):
        if details.get(key):
            return str(details[key])
    if row.get("x_InstanceType"):
        return row["x_InstanceType"].strip()
    match = _AWS_USAGE.search(row.get("x_UsageType", "") or "")
    if match:
        return match["type"]
    azure = _json(row.get("x_SkuDetails", ""))
    if azure.get("ServiceType"):
        return str(azure["ServiceType"])
    return ""


#: FOCUS 1.2's metric columns (each column's "Column type" is Metric in
#: ``specification/columns/*.md`` at tag v1.2); every other column is a dimension.
METRIC_COLUMNS: frozenset[str] = frozenset(
    {
        "BilledCost",
        "CommitmentDiscountQuantity",
        "ConsumedQuantity",
        "ContractedCost",
        "ContractedUnitPrice",
        "EffectiveCost",
        "ListCost",
        "ListUnitPrice",
        "PricingCurrencyContractedUnitPrice",
        "PricingCurrencyEffectiveCost",
        "PricingCurrencyListUnitPrice",
        "PricingQuantity",
    }
)


def _number(text: str, path: Path, row: int, column: str, *, blank_ok: bool = False) -> float:
    """The number in a cell; a blank cell is 0 only when ``blank_ok`` (FOCUS allows a
    null there), else refused: a blank is not $0."""
    if text is None or text.strip() == "":
        if blank_ok:
            return 0.0
        raise ProcureError(
            f"{column} is blank: FOCUS 1.2 does not allow a null here, and a blank is not 0",
            file=str(path),
            field=f"row {row}, {column}",
            fix=f"export the bill again (the row lost its {column}), or write 0 in the "
            "cell if the charge really was 0",
        )
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if value != value or value in (float("inf"), float("-inf")):
        raise ProcureError(
            f"{column} is {text!r}, not a number",
            file=str(path),
            field=f"row {row}, {column}",
            fix="export the billing data again as CSV (numbers with a decimal point, "
            "no currency sign or thousands separator)",
        )
    return value


def _moment(text: str, path: Path, row: int, column: str) -> pd.Timestamp:
    """A FOCUS date-time cell as a naive UTC timestamp, or one clear error."""
    try:
        moment = pd.Timestamp(text)
    except (ValueError, TypeError, OverflowError):
        # the stubs type pd.Timestamp(text) as Timestamp, but it returns NaT for "NaT" too:
        # the variable holds NaT either way, and the check below rejects it
        moment = pd.NaT  # type: ignore[assignment]
    if moment is pd.NaT or pd.isna(moment):
        raise ProcureError(
            f"{column} is {text!r}, not a date",
            file=str(path),
            field=f"row {row}, {column}",
            fix="FOCUS dates are ISO 8601 in UTC, e.g. 2027-01-01T00:00:00Z",
        )
    if moment.tzinfo is not None:
        moment = moment.tz_convert("UTC").tz_localize(None)
    return moment


def _month(text: str, path: Path, row: int) -> str:
    moment = _moment(text, path, row, "ChargePeriodStart")
    return f"{moment.year:04d}-{moment.month:02d}"


def _billing_period(raw: dict[str, str], path: Path, row: int) -> tuple[str, str]:
    """The first and last calendar month (``YYYY-MM``) of the row's billing period
    (``BillingPeriodStart`` inclusive, ``BillingPeriodEnd`` exclusive); ('', '') when the
    export has no such columns or leaves them blank."""
    start, end = raw.get("BillingPeriodStart", ""), raw.get("BillingPeriodEnd", "")
    if not start.strip() or not end.strip():
        return "", ""
    first = _moment(start, path, row, "BillingPeriodStart")
    last = _moment(end, path, row, "BillingPeriodEnd") - pd.Timedelta(seconds=1)
    if last < first:
        return "", ""
    return f"{first.year:04d}-{first.month:02d}", f"{last.year:04d}-{last.month:02d}"


def _digest(pairs: list[tuple[str, str]]) -> str:
    return hashlib.sha256(json.dumps(pairs, separators=(",", ":")).encode()).hexdigest()


#: FOCUS date-time dimensions, compared as instants (``2027-01-01T00:00:00Z`` and
#: ``2027-01-01 00:00:00`` are one).
_DATE_COLUMNS = frozenset(
    {"BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd"}
)


@lru_cache(maxsize=65536)
def _instant(text: str) -> str:
    """A date-time cell as ISO 8601 UTC, or the text itself when it does not parse."""
    try:
        moment = pd.Timestamp(text)
    except (ValueError, TypeError, OverflowError):
        return text
    if pd.isna(moment):
        return text
    if moment.tzinfo is not None:
        moment = moment.tz_convert("UTC").tz_localize(None)
    return moment.isoformat()


def _charge_end(text: str) -> str:
    """``ChargePeriodEnd`` as ISO 8601 UTC (``2027-03-16T00:00:00``), '' when blank or
    not a date (the column is not needed to compare)."""
    text = (text or "").strip()
    instant = _instant(text) if text else ""
    return instant if instant[:4].isdigit() and "T" in instant else ""


def row_identity(raw: dict[str, str]) -> tuple[str, str, str]:
    """The row's FOCUS identity, its content digest and its amounts digest (SHA-256, hex).

    FOCUS 1.2 defines no row identifier; a charge is told apart by its **dimension**
    columns (every column whose "Column type" is Dimension, ``specification/columns/*.md``
    at tag v1.2: BillingAccountId, SubAccountId, ChargePeriodStart/End, ChargeCategory,
    ChargeClass, ChargeDescription, ResourceId, SkuId, SkuPriceId, PricingCategory,
    CommitmentDiscountId/Status, RegionId, Tags ...). The *identity* digests the non-blank
    FOCUS dimension cells by column name (so the column order does not matter; dates as
    UTC instants), leaving out the provider's ``x_`` columns (one export flavour has them,
    another not); the *amounts* digest the :data:`METRIC_COLUMNS` cells, numbers as
    numbers (``98.32`` and ``98.320`` are one amount); the *content* digests every
    non-blank cell, ``x_`` columns included."""
    dims, custom, metrics = [], [], []
    for column in sorted(raw):
        value = (raw[column] or "").strip()
        if not value:
            continue
        if column in METRIC_COLUMNS:
            try:
                value = repr(float(value))
            except ValueError:
                pass
            metrics.append((column, value))
        elif column.startswith("x_"):
            custom.append((column, value))
        else:
            dims.append((column, _instant(value) if column in _DATE_COLUMNS else value))
    return _digest(dims), _digest(dims + custom + [("", "")] + metrics), _digest(metrics)


def _header(reader: csv.DictReader, path: Path) -> Sequence[str]:
    header = reader.fieldnames or []
    twice = sorted({c for c in header if header.count(c) > 1})
    if twice:
        raise ProcureError(
            f"the header names {', '.join(twice)} more than once",
            file=str(path),
            field=twice[0],
            fix="export the bill again: each FOCUS column appears once",
        )
    # FOCUS 1.3 deprecates ProviderName for ServiceProviderName (1.4 removes it): either
    missing = [
        c
        for c in REQUIRED
        if c not in header and not (c == "ProviderName" and "ServiceProviderName" in header)
    ]
    if missing:
        raise ProcureError(
            f"not a FOCUS billing export: no column {', '.join(missing)}",
            file=str(path),
            field=missing[0],
            fix=_EXPORT_FIX,
        )
    return header


_EXPORT_FIX = (
    "export cost and usage in FOCUS (AWS Data Exports 'FOCUS 1.0', Azure "
    "'Cost and usage details (FOCUS)', GCP's FOCUS BigQuery view saved as CSV)"
)


def read_focus_billing(path: str | Path) -> pd.DataFrame:
    """One billing export in FOCUS (CSV, UTF-8) as a table of :data:`BILLING_COLUMNS`.

    Raises
    ------
    ProcureError
        The file is binary or not UTF-8 (:func:`~solver.inputs.importers.csv_text.
        read_csv_text`), not CSV, lacks a column of :data:`REQUIRED`, names a column
        twice, or holds a cost, quantity or date that is blank where FOCUS forbids a null
        or does not parse (naming the row, its line in the file and the column).
    """
    path = Path(path)
    text = read_csv_text(path, what="FOCUS billing export", export_fix=_EXPORT_FIX)
    reader = csv.DictReader(io.StringIO(text, newline=""))
    rows = []
    n = 0
    try:
        _header(reader, path)
        for n, raw in enumerate(reader, start=1):
            try:
                rows.append(_billed_row(raw, path, n))
            except ProcureError as exc:
                raise ProcureError(
                    f"{exc.message} (line {reader.line_num} of the file)",
                    file=exc.file,
                    field=exc.field,
                    fix=exc.fix,
                ) from None
    except csv.Error as exc:
        raise ProcureError(
            f"not readable as CSV after line {reader.line_num}: {exc}",
            file=str(path),
            field=f"row {n + 1}",
            fix=f"pass the CSV export as the cloud wrote it; {_EXPORT_FIX}",
        ) from None
    return pd.DataFrame(rows, columns=list(BILLING_COLUMNS))


def _billed_row(raw: dict[str, str], path: Path, n: int) -> dict:
    extra = raw.get(None) or []  # type: ignore[call-overload]
    short = [k for k, v in raw.items() if k is not None and v is None]
    if extra or short:
        width = len(raw) - (1 if None in raw else 0)
        fields = width - len(short) + len(extra)
        raise ProcureError(
            f"the row has {fields} fields, the header {width}",
            file=str(path),
            field=f"row {n}",
            fix="the row was cut short or holds an unquoted comma: export the bill again "
            "(a field with a comma must be quoted)",
        )
    raw = {k: (v or "") for k, v in raw.items() if k is not None}
    unit = raw["PricingUnit"].strip()
    category = raw["ChargeCategory"].strip()
    # FOCUS 1.2 (pricingquantity.md): not null on Usage and Purchase rows that are not a
    # Correction; null on Tax, and may be null otherwise
    priced = category in ("Usage", "Purchase") and raw.get("ChargeClass", "").strip() == ""
    quantity = _number(raw["PricingQuantity"], path, n, "PricingQuantity", blank_ok=not priced)
    currency = raw["BillingCurrency"].strip().upper()
    if not re.fullmatch(r"[A-Z]{3}", currency):
        raise ProcureError(
            f"BillingCurrency is {raw['BillingCurrency']!r}, not an ISO 4217 code",
            file=str(path),
            field=f"row {n}, BillingCurrency",
            fix="FOCUS states the billing currency as a three-letter code, e.g. USD",
        )
    pricing = raw.get("PricingCategory", "").strip().lower()
    period_first, period_last = _billing_period(raw, path, n)
    identity, digest, amounts = row_identity(raw)
    return {
        "provider": provider_id(raw.get("ProviderName") or raw.get("ServiceProviderName", "")),
        "region": raw["RegionId"].strip(),
        "instance_type": instance_type_of(raw),
        "sku_id": raw.get("SkuId", "").strip(),
        "month": _month(raw["ChargePeriodStart"], path, n),
        "pricing": _PRICING.get(pricing, "other"),
        "charge_category": category,
        "cost": _number(raw["EffectiveCost"], path, n, "EffectiveCost"),
        "currency": currency,
        "hours": quantity if unit.lower() in _HOUR_UNITS else 0.0,
        "quantity": quantity,
        "unit": unit,
        "file": str(path),
        "row": n,
        "period_first_month": period_first,
        "period_last_month": period_last,
        "charge_end": _charge_end(raw.get("ChargePeriodEnd", "")),
        "identity": identity,
        "digest": digest,
        "amounts": amounts,
        "commitment_status": raw.get("CommitmentDiscountStatus", "").strip(),
    }


__all__ = [
    "BILLING_COLUMNS",
    "PROVIDER_NAMES",
    "METRIC_COLUMNS",
    "REQUIRED",
    "instance_type_of",
    "provider_id",
    "read_focus_billing",
    "row_identity",
]
