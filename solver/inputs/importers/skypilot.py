"""Read a SkyPilot-format ``vms.csv`` price catalog into our offerings schema.

SkyPilot (https://github.com/skypilot-org/skypilot-catalog) publishes one
``vms.csv`` per cloud. The files share column *names* but not column *order*,
and each cloud has its quirks, all handled here:

* column order differs between clouds (AWS, GCP, Azure, Lambda, RunPod, ...):
  columns are looked up by name; missing optional columns are treated as empty;
* AWS-style files have one row per availability zone (``AvailabilityZone``);
  rows are aggregated to one per (instance type, region): the on-demand price is
  the **minimum** across zones (it is normally identical in every zone) and the
  spot price the **median** across the zones that quote one;
* GCP splits a GPU VM into a host-VM row (``InstanceType`` set, no accelerator)
  and a GPU row (empty ``InstanceType``); the importer attaches each GPU row to a
  host VM in the same zone (see :data:`GCP_HOSTS`) and prices the pair as
  host + GPU. TPU rows are priced as they stand (a TPU VM includes its host);
* Azure's ``Generation`` value ``V1,V2`` is unquoted, giving 11 fields on a
  10-column header: surplus fields are folded back into the last column;
* fractional accelerator counts (Azure's partial A10 ``0.333``) are skipped;
* ``GpuInfo`` is a Python-repr dict, JSON, or a bare name: it is parsed only as
  a hint (per-GPU memory) for ambiguous names such as ``A100`` or ``V100``;
* missing or zero prices, CRLF line endings, stray whitespace.

All prices are USD per instance-hour. Memory is GiB as SkyPilot reports it.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from solver.errors import ProcureError
from solver.inputs.importers.skypilot_rows import (
    HELD_COLUMNS,
    check_row_values,
    check_row_widths,
    held_prices,
)
from solver.inputs.price_traps import check_zone_conflicts, read_price_text
from solver.inputs.provenance import UNKNOWN_DATE

#: Output columns, in order (the offerings.csv schema plus vcpus and memory_gib).
OFFERING_COLUMNS: list[str] = [
    "offering_id",
    "provider",
    "region",
    "instance_type",
    "accelerator_id",
    "accelerators_per_instance",
    "vcpus",
    "memory_gib",
    "on_demand_usd_per_hour",
    "spot_usd_per_hour",
    "reserved_1y_usd_per_hour",
    "reserved_3y_usd_per_hour",
    "nvlink",
    "network_gbps",
    "availability_cap_instances",
    "currency",
    "price_date",
    "price_confidence",
    "price_note",
    "source",
    "reserved_price_date",
    "reserved_price_confidence",
    "reserved_source",
    "price_date_basis",
    "currency_basis",
]

#: SkyPilot accelerator name -> our accelerator id. Keys are normalised with
#: :func:`_norm` (upper case, separators dropped). Ambiguous names are refined by
#: :func:`map_accelerator` from the instance type and GpuInfo (e.g. ``H100`` on a
#: PCIe instance, ``A100`` with 80 GB).
NAME_TABLE: dict[str, str] = {
    # Hopper / Blackwell
    "H100": "h100-sxm",  # SkyPilot's H100 is the SXM part (GCP a3, AWS p5) unless refined
    "H100SXM": "h100-sxm",
    "H100SXM5": "h100-sxm",
    "H10080GBHBM3": "h100-sxm",  # RunPod 2023 name of the SXM part
    "H10080GSXM5": "h100-sxm",  # Hyperstack
    "H100MEGA": "h100-sxm",  # GCP a3-megagpu
    "H100PCIE": "h100-pcie",
    "H10080GPCIE": "h100-pcie",
    "H10080GPCIENVLINK": "h100-pcie",
    "H100NVL": "h100-nvl",
    "H200": "h200",
    "H200SXM": "h200",
    "B200": "b200",
    "GH200": "gh200",
    # Ampere datacenter
    "A100": "a100-40gb",  # SkyPilot's A100 is the 40 GB part
    "A10040GB": "a100-40gb",
    "A10080GB": "a100-80gb",
    "A10080GBSXM": "a100-80gb",
    "A10080GBSXM4": "a100-80gb",
    "A10080GPCIE": "a100-80gb-pcie",
    "A10080GPCIENVLINK": "a100-80gb-pcie",
    "A10080GBPCIE": "a100-80gb-pcie",
    "A10G": "a10g",
    "A10": "a10",
    "A40": "a40",
    # Ada / Turing / Volta
    "L4": "l4",
    "L40": "l40",
    "L40S": "l40s",
    "T4": "t4",
    "V100": "v100",
    "V10032GB": "v100-32gb",
    # workstation / consumer
    "RTX4090": "rtx-4090",
    "RTX5090": "rtx-5090",
    "RTX3090": "rtx-3090",
    "RTX6000ADA": "rtx-6000-ada",
    "RTXA6000": "rtx-a6000",
    "A6000": "rtx-a6000",
    # AMD
    "MI300X": "mi300x",
    "MI325X": "mi325x",
    "MI250X": "mi250x",
    # AWS silicon
    "TRAINIUM": "trainium",
    "TRAINIUM1": "trainium",
    "TRAINIUM2": "trainium2",
    "INFERENTIA2": "inferentia2",
    # Intel
    "GAUDI2": "gaudi2",
    "GAUDI3": "gaudi3",
}

#: GCP host VM for a split GPU row: accelerator name -> {count: machine type}.
#: Families a2/a3/a4/g2 carry their GPUs (the machine type fixes the count);
#: other GPUs (T4, V100, P100, P4) attach to an N1 host, see :func:`gcp_host`.
GCP_HOSTS: dict[str, dict[int, str]] = {
    "A100": {
        1: "a2-highgpu-1g",
        2: "a2-highgpu-2g",
        4: "a2-highgpu-4g",
        8: "a2-highgpu-8g",
        16: "a2-megagpu-16g",
    },
    "A100-80GB": {
        1: "a2-ultragpu-1g",
        2: "a2-ultragpu-2g",
        4: "a2-ultragpu-4g",
        8: "a2-ultragpu-8g",
    },
    "H100": {1: "a3-highgpu-1g", 2: "a3-highgpu-2g", 4: "a3-highgpu-4g", 8: "a3-highgpu-8g"},
    "H100-MEGA": {8: "a3-megagpu-8g"},
    "H200": {8: "a3-ultragpu-8g"},
    "B200": {8: "a4-highgpu-8g"},
    # g2-standard-4..32 carry 1 L4; pick 8 vCPU / 32 GB for one GPU.
    "L4": {1: "g2-standard-8", 2: "g2-standard-24", 4: "g2-standard-48", 8: "g2-standard-96"},
}

#: Accelerators that sit on an NVLink/ICI/OAM fabric when several share a host.
_FABRIC_IDS = {
    "h100-sxm",
    "h200",
    "b200",
    "a100-80gb",
    "a100-40gb",
    "v100",
    "v100-32gb",
    "mi300x",
    "mi325x",
    "mi250x",
    "gaudi2",
    "gaudi3",
    "trainium",
    "trainium2",
    "tpu-v5e",
    "tpu-v5p",
    "tpu-v6e",
}

_HYPERSCALERS = {"aws", "gcp", "azure", "oci"}
_NEOCLOUDS = {
    "lambda",
    "coreweave",
    "nebius",
    "crusoe",
    "together",
    "mithril",
    "hyperstack",
    "verda",
    "fluidstack",
    "paperspace",
    "digitalocean",
    "jarvislabs",
    "seeweb",
    "scaleway",
    "denvr",
    "massedcompute",
    "oblivus",
    "latitude",
    "tensorwave",
}

_NUMERIC = ["AcceleratorCount", "vCPUs", "MemoryGiB", "Price", "SpotPrice"]
_TEXT = ["InstanceType", "AcceleratorName", "GpuInfo", "Region", "AvailabilityZone"]
_REQUIRED = ["InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region"]

SKIP_CPU = "no accelerator (CPU-only or host VM row)"
SKIP_FRACTION = "fractional accelerator count"
SKIP_COUNT = "missing accelerator count"
SKIP_PRICE = "missing on-demand price"
SKIP_REGION = "missing region"
SKIP_NO_HOST = "GCP GPU row with no host VM in its zone"
SKIP_SPOT = "spot above on-demand (spot dropped, offering kept)"
SKIP_HELD = "price zero, negative or not a number (held for review, listed)"


@dataclass(frozen=True)
class SkyPilotImport:
    """Result of :func:`read_skypilot_vms`.

    Attributes
    ----------
    offerings
        One row per (instance type, region) in the offerings.csv schema
        (:data:`OFFERING_COLUMNS`); prices in USD per instance-hour.
    unmapped
        SkyPilot accelerator name -> number of input rows whose name has no
        entry in :data:`NAME_TABLE` (those rows are left out).
    skipped
        Reason -> number of rows left out (or, for spot, prices dropped).
    held
        The rows left out for a price that is not one (zero, negative, not finite),
        :data:`~solver.inputs.importers.skypilot_rows.HELD_COLUMNS`, with their line.
    """

    offerings: pd.DataFrame
    unmapped: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    held: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=HELD_COLUMNS))


def _norm(name: str) -> str:
    return re.sub(r"[^A-Z0-9]", "", str(name).upper())


def default_availability_cap(provider: str, accelerators_per_instance: int) -> int:
    """Assumed instances one buyer can get in one region (no public figure exists).

    Hyperscalers (aws, gcp, azure, oci): 16 instances of an 8-accelerator size, 64
    of smaller sizes. Neoclouds (lambda, coreweave, nebius, ...): 8 and 32.
    Marketplaces and everyone else (runpod, vast, ...): 4 and 16.
    """
    big = accelerators_per_instance >= 8
    if provider in _HYPERSCALERS:
        return 16 if big else 64
    if provider in _NEOCLOUDS:
        return 8 if big else 32
    return 4 if big else 16


def _gpu_mem_gib(gpu_info: str, count: float) -> float | None:
    """Per-accelerator memory (GiB) from a GpuInfo blob, or None.

    GpuInfo is a Python-repr dict, JSON, or a bare name. Its ``SizeInMiB`` is
    per GPU in most files, but some hold the total (PrimeIntellect, Vast) and
    Shadeform holds GB: values under 1024 are read as GB, values above 100 GiB
    (no single GPU in the table has more... except H200/B200, which are never
    ambiguous) as a total over ``count``.
    """
    text = str(gpu_info).strip()
    if not text.startswith("{"):
        return None
    try:
        blob = json.loads(text)
    except ValueError:
        try:
            blob = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return None
    try:
        size = float(blob["Gpus"][0]["MemoryInfo"]["SizeInMiB"])
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    if size <= 0:
        return None
    gib = size if size < 1024 else size / 1024.0
    try:
        total = float(blob.get("TotalGpuMemoryInMiB") or 0.0)
    except (TypeError, ValueError):
        total = 0.0
    if count and count > 1 and total > 0:
        # AWS-style: Size is per GPU and Total = Count x Size. Vast/PrimeIntellect: Size is
        # already the total (Size == Total), e.g. 2x V100 with 32,768 MiB = 16 GiB each.
        if abs(total - size) < 1e-6:
            return gib / count
        return gib
    if gib > 100 and count and count > 1:
        gib /= count
    return gib


def map_accelerator(
    name: str, instance_type: str, provider: str, gpu_info: str = "", count: float = 1.0
) -> tuple[str | None, int | None]:
    """Map a SkyPilot accelerator name to (our id, accelerators per instance).

    Parameters
    ----------
    name
        SkyPilot ``AcceleratorName`` (``H100``, ``A100-80GB``, ``tpu-v5p-8``, ...).
    instance_type
        The instance type, used as a hint (``..._pcie``, Azure ``Standard_NC``).
    provider
        Our provider name (``azure``, ``runpod``, ...), used as a hint.
    gpu_info
        SkyPilot ``GpuInfo`` (hint for per-GPU memory).
    count
        SkyPilot ``AcceleratorCount``.

    Returns
    -------
    tuple
        ``(accelerator_id, accelerators_per_instance)``; ``(None, None)`` when the
        name is not in :data:`NAME_TABLE`. TPU slices return the chip count:
        ``tpu-v5litepod-N`` is N v5e chips and ``tpu-v6e-N`` N v6e chips (one
        TensorCore per chip); ``tpu-v5p-N`` counts TensorCores (2 per chip), so
        N/2 chips (cloud.google.com/tpu/docs/v5p, /v5e, /v6e).
    """
    raw = str(name).strip()
    m = re.fullmatch(r"tpu-(v5litepod|v5p|v6e)-(\d+)", raw.lower())
    if m:
        n = int(m.group(2))
        if m.group(1) == "v5litepod":
            return "tpu-v5e", n
        if m.group(1) == "v6e":
            return "tpu-v6e", n
        return "tpu-v5p", max(n // 2, 1)
    acc = NAME_TABLE.get(_norm(raw))
    if acc is None:
        return None, None
    hint = f"{instance_type} {raw}".lower()
    n_int = int(round(count)) if count == count else None
    if acc == "h100-sxm" and _norm(raw) == "H100":
        if "pcie" in hint:
            acc = "h100-pcie"
        elif re.search(r"nvl(?!ink)", hint) or (
            provider == "azure" and str(instance_type).startswith("Standard_NC")
        ):
            acc = "h100-nvl"  # Azure NCads H100 v5 carries H100 NVL 94 GB
        elif provider == "runpod" and "sxm" not in hint:
            acc = "h100-pcie"  # RunPod's plain "H100" is the PCIe card; SXM says "H100-SXM"
    elif acc in {"a100-40gb", "v100"}:
        mem = _gpu_mem_gib(gpu_info, count)
        if acc == "a100-40gb" and ("80gb" in hint or (mem is not None and mem >= 60)):
            acc = "a100-80gb"
            if ("pcie" in hint and "sxm" not in hint) or (
                provider == "runpod" and "sxm" not in hint
            ):
                acc = "a100-80gb-pcie"  # RunPod's plain "A100-80GB" is the PCIe card
        elif acc == "v100" and ("32gb" in hint or (mem is not None and mem >= 30)):
            acc = "v100-32gb"
    elif (
        acc == "a100-80gb"
        and "sxm" not in hint
        and (
            "pcie" in hint
            or provider == "runpod"
            or (provider == "azure" and str(instance_type).startswith("Standard_NC"))
        )
    ):
        # RunPod's plain "A100-80GB" and Azure's NC A100 v4 are the PCIe card.
        acc = "a100-80gb-pcie"
    return acc, n_int


def _nvlink(acc: str, count: int, instance_type: str, name: str, provider: str) -> bool:
    """True when several accelerators of an SXM/OAM/TPU/Trainium part share a fabric."""
    if acc not in _FABRIC_IDS or count < 2:
        return False
    hint = f"{instance_type} {name}".lower()
    if "pcie" in hint and "nvlink" not in hint:
        return False
    if provider == "azure" and str(instance_type).startswith("Standard_NC"):
        return False  # NC-series (A100 v4, V100 v3) are PCIe cards
    if provider == "runpod" and acc == "a100-80gb" and "sxm" not in hint:
        return False  # RunPod's plain A100-80GB is the PCIe card
    if provider == "vast" and "sxm" not in hint:
        return False  # a marketplace box says nothing of its links unless the card is SXM
    return True


def gcp_host(name: str, count: int) -> tuple[str | None, bool]:
    """Host VM for a GCP GPU row: ``(machine type, machine carries the GPUs)``.

    a2/a3/a4/g2 machine types come with their GPUs (:data:`GCP_HOSTS`); other
    GPUs attach to ``n1-standard-(8 x count)`` (at most 96 vCPUs). Returns
    ``(None, False)`` when no machine type fits (e.g. 3 x H100).
    """
    table = GCP_HOSTS.get(name)
    if table is not None:
        return table.get(count), True
    if count < 1:
        return None, False
    return f"n1-standard-{min(8 * count, 96)}", False


def _read_rows(path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read the CSV as text, folding surplus unquoted fields into the last column; every
    row checked (:mod:`.skypilot_rows`). Returns the rows and those held for their price."""
    text = read_price_text(path, what="a SkyPilot vms.csv", fix="pass a SkyPilot vms.csv")
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise ProcureError("empty file", file=str(path), fix="pass a SkyPilot vms.csv") from None
    width = len(header)
    rows, lines = [], []
    for row in reader:
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) > width:  # Azure: Generation V1,V2 unquoted
            row = row[: width - 1] + [",".join(row[width - 1 :])]
        rows.append(row)
        lines.append(reader.line_num)
    check_row_widths(rows, lines, header, path)
    frame = pd.DataFrame(rows, columns=header, dtype=str)
    missing = [c for c in _REQUIRED if c not in frame.columns]
    if missing:
        raise ProcureError(
            f"not a SkyPilot vms.csv: missing column(s) {missing}",
            file=str(path),
            field="line 1 (header)",
            fix="pass a SkyPilot-format vms.csv (InstanceType, AcceleratorName, Price, ...)",
        )
    for column in _TEXT + _NUMERIC:
        if column not in frame.columns:
            frame[column] = ""
        frame[column] = frame[column].fillna("").str.strip()
    frame["row_line"] = lines
    check_row_values(frame, path)
    held = held_prices(frame)
    frame = frame[~frame["row_line"].isin(held["line"])].copy()
    for column in _NUMERIC:
        numbers = pd.to_numeric(frame[column].replace("", np.nan), errors="coerce")
        # inf, nan and absurd magnitudes count as missing: the row is skipped and reported
        frame[column] = numbers.where(np.isfinite(numbers) & (numbers.abs() <= 1e12))
    return frame.drop(columns="row_line"), held


def _bump(counter: dict[str, int], key: str, n: int) -> None:
    if n:
        counter[key] = counter.get(key, 0) + int(n)


def _with_gcp_hosts(
    df: pd.DataFrame, split: pd.Series, hosts: pd.DataFrame, skipped: dict[str, int]
) -> pd.DataFrame:
    """GCP lists GPUs apart from their host VM: give each GPU row without an instance type
    the host SkyPilot would start (price, vCPUs, memory added; rows without one skipped)."""
    gpu = df[split].copy()
    host_info = [
        gcp_host(n, int(c))
        for n, c in zip(gpu["AcceleratorName"], gpu["AcceleratorCount"], strict=True)
    ]
    gpu["host"] = [h for h, _ in host_info]
    carries = np.array([c for _, c in host_info], dtype=bool)
    gpu["new_type"] = np.where(
        carries,
        gpu["host"].fillna(""),
        gpu["host"].fillna("")
        + "+"
        + gpu["AcceleratorCount"].round().astype(int).astype(str)
        + "x"
        + gpu["AcceleratorName"],
    )
    host_prices = (
        hosts.groupby(["InstanceType", "Region", "AvailabilityZone"], sort=False)
        .agg(
            host_price=("Price", "min"),
            host_spot=("SpotPrice", "min"),
            host_vcpus=("vCPUs", "first"),
            host_mem=("MemoryGiB", "first"),
        )
        .reset_index()
        .rename(columns={"InstanceType": "host"})
    )
    gpu = gpu.merge(host_prices, on=["host", "Region", "AvailabilityZone"], how="left")
    no_host = gpu["host_price"].isna()
    _bump(skipped, SKIP_NO_HOST, int(no_host.sum()))
    gpu = gpu[~no_host]
    gpu["Price"] = gpu["Price"] + gpu["host_price"]
    gpu["SpotPrice"] = gpu["SpotPrice"] + gpu["host_spot"]
    gpu["InstanceType"] = gpu["new_type"]
    gpu["vCPUs"] = gpu["host_vcpus"]
    gpu["MemoryGiB"] = gpu["host_mem"]
    df = pd.concat([df[~split], gpu[df.columns]], ignore_index=True)
    return df


def _as_offerings(
    out: pd.DataFrame, provider: str, price_date: str, source: str, price_date_basis: str
) -> pd.DataFrame:
    """Per (instance type, region) prices as catalog offerings rows: ids, NVLink, default
    availability caps, no reserved prices (SkyPilot has none), date, its basis and source;
    USD, assumed (a vms.csv names no currency), and confidence ``third_party`` (a SkyPilot
    catalog is a third party's)."""
    out["provider"] = provider
    out["offering_id"] = provider + "/" + out["region"] + "/" + out["instance_type"]
    out["accelerators_per_instance"] = out["accelerators_per_instance"].astype(int)
    out["reserved_1y_usd_per_hour"] = np.nan
    out["reserved_3y_usd_per_hour"] = np.nan
    out["nvlink"] = [
        _nvlink(a, int(c), t, n, provider)
        for a, c, t, n in zip(
            out["accelerator_id"],
            out["accelerators_per_instance"],
            out["instance_type"],
            out["name"],
            strict=True,
        )
    ]
    out["network_gbps"] = np.nan
    out["availability_cap_instances"] = [
        default_availability_cap(provider, int(c)) for c in out["accelerators_per_instance"]
    ]
    out["currency"] = "USD"  # SkyPilot's catalogs are in US dollars
    # ... by the project's convention: a vms.csv names no currency, so it is assumed
    out["currency_basis"] = "assumed"
    out["price_date"] = price_date
    out["price_date_basis"] = "" if price_date == UNKNOWN_DATE else price_date_basis
    out["price_confidence"] = "third_party"
    out["price_note"] = ""
    out["source"] = source
    out["reserved_price_date"] = ""
    out["reserved_price_confidence"] = ""
    out["reserved_source"] = ""
    out = out[OFFERING_COLUMNS].sort_values("offering_id", kind="stable").reset_index(drop=True)
    return out


def read_skypilot_vms(
    path: str | Path,
    provider: str,
    *,
    price_date: str = "unknown",
    source: str | None = None,
    price_date_basis: str = "published",
) -> SkyPilotImport:
    """Read a SkyPilot ``vms.csv`` into offerings (one row per instance type and region).

    Parameters
    ----------
    path
        The ``vms.csv`` file (any SkyPilot schema version, LF or CRLF).
    provider
        Our provider name written into every row (``aws``, ``gcp``, ``azure``, ...).
    price_date, price_date_basis
        When the prices were observed: ``YYYY-MM-DD`` or ``unknown`` (other text is kept for
        the caller to move to ``price_note``); ``published`` (the snapshot's own date) or
        ``read`` (the day it was read), left empty with an unknown date.
    source
        Text for the ``source`` column; default ``"skypilot vms.csv: <path>"``.

    Returns
    -------
    SkyPilotImport
        ``offerings`` sorted by ``offering_id``; prices in USD per instance-hour
        (on-demand = minimum over availability zones, spot = median over zones
        that quote a spot price; a spot above on-demand is dropped); reserved
        prices empty (SkyPilot has none); ``network_gbps`` empty;
        ``availability_cap_instances`` from :func:`default_availability_cap`;
        ``unmapped`` / ``skipped`` count rows left out per unknown name / per reason.

    Raises
    ------
    ProcureError
        If the file is not UTF-8 text, lacks the SkyPilot columns, or a row lost a field
        (:mod:`.skypilot_rows`: the line and the column).
    """
    path = Path(path)
    provider = str(provider).strip().lower()
    source = source if source is not None else f"skypilot vms.csv: {path}"
    df, held = _read_rows(path)
    skipped: dict[str, int] = {}
    unmapped: dict[str, int] = {}
    _bump(skipped, SKIP_HELD, len(held))

    has_type = df["InstanceType"] != ""
    has_acc = df["AcceleratorName"] != ""
    _bump(skipped, SKIP_CPU, int((~has_acc).sum()))
    hosts = df[has_type & ~has_acc]
    df = df[has_acc].copy()

    # Fractional and missing accelerator counts.
    count = df["AcceleratorCount"]
    missing_count = count.isna() | (count <= 0)
    fractional = ~missing_count & (count != count.round())
    _bump(skipped, SKIP_COUNT, int(missing_count.sum()))
    _bump(skipped, SKIP_FRACTION, int(fractional.sum()))
    df = df[~missing_count & ~fractional]

    # Map accelerator names (once per distinct combination).
    keys = ["AcceleratorName", "InstanceType", "GpuInfo", "AcceleratorCount"]
    combos = df[keys].drop_duplicates()
    mapped = [
        map_accelerator(n, t, provider, g, c)
        for n, t, g, c in combos.itertuples(index=False, name=None)
    ]
    accelerator_ids: list[str | None] = [m[0] for m in mapped]
    counts: list[int | None] = [m[1] for m in mapped]
    # the stubs take a list of scalars without None; pandas reads None as missing
    combos = combos.assign(
        accelerator_id=accelerator_ids,  # type: ignore[arg-type]
        accelerators_per_instance=counts,  # type: ignore[arg-type]
    )
    df = df.merge(combos, on=keys, how="left")
    bad = df["accelerator_id"].isna()
    for name, n in df.loc[bad, "AcceleratorName"].value_counts().sort_index().items():
        unmapped[str(name)] = int(n)
    df = df[~bad].copy()

    # GCP split rows: GPU rows without an instance type get a host VM.
    split = (df["InstanceType"] == "") & ~df["AcceleratorName"].str.lower().str.startswith("tpu-")
    tpu = (df["InstanceType"] == "") & ~split
    df.loc[tpu, "InstanceType"] = df.loc[tpu, "AcceleratorName"]
    if split.any():
        df = _with_gcp_hosts(df, split, hosts, skipped)

    no_region = df["Region"] == ""
    _bump(skipped, SKIP_REGION, int(no_region.sum()))
    df = df[~no_region]
    check_zone_conflicts(df, path)  # one zone priced twice differently: which one?
    no_price = df["Price"].isna() | (df["Price"] <= 0)
    _bump(skipped, SKIP_PRICE, int(no_price.sum()))
    df = df[~no_price].copy()
    df.loc[df["SpotPrice"] <= 0, "SpotPrice"] = np.nan

    # One row per (instance type, region): min on-demand, median spot over AZs.
    out = (
        df.groupby(["InstanceType", "Region"], sort=True)
        .agg(
            accelerator_id=("accelerator_id", "first"),
            accelerators_per_instance=("accelerators_per_instance", "first"),
            name=("AcceleratorName", "first"),
            vcpus=("vCPUs", "first"),
            memory_gib=("MemoryGiB", "first"),
            on_demand_usd_per_hour=("Price", "min"),
            spot_usd_per_hour=("SpotPrice", "median"),
        )
        .reset_index()
        .rename(columns={"InstanceType": "instance_type", "Region": "region"})
    )
    dearer = out["spot_usd_per_hour"] > out["on_demand_usd_per_hour"]
    _bump(skipped, SKIP_SPOT, int(dearer.sum()))
    out.loc[dearer, "spot_usd_per_hour"] = np.nan

    out = _as_offerings(out, provider, price_date, source, price_date_basis)
    return SkyPilotImport(
        offerings=out, unmapped=dict(sorted(unmapped.items())), skipped=skipped, held=held
    )
