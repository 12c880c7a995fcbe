#!/usr/bin/env python
"""Regenerate catalogs/zones.csv, deterministically: the availability zones in which the
price snapshots list each catalog offering's instance type.

Usage::

    python scripts/build_zones.py [SNAPSHOT_DIR] [--out catalogs]

SNAPSHOT_DIR defaults to ``../shared/data/external/skypilot-catalog`` relative to the
repository root (the folder scripts/build_offerings.py reads). The sources are the two
snapshots the catalog's GCP and AWS rows come from, which keep one row per availability
zone (``AvailabilityZone``):

* GCP: anycloud-sh/catalog@62ff0a98 ``gcp/vms.csv`` (2026-05-20). A GPU listed apart
  from its host VM counts in a zone when both the GPU and the host VM SkyPilot would start
  (:func:`solver.inputs.importers.skypilot.gcp_host`) are listed there, the rule the
  importer prices them by; a TPU slice counts where it is listed.
* AWS: skypilot-org/skypilot-catalog v8 ``aws/vms.csv``@00148f2a, the p4de/p5 excerpt.
  AWS names zones by zone ID (``use1-az4``): the same physical zone for every account.

Only (provider, region, instance type) triples that catalogs/offerings.csv holds are kept.
An offering of a region without a row here is in one zone as far as the catalog knows
(solver.inputs.catalog.zones). Every other provider's snapshot lists regions only.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import pandas as pd

from solver.inputs.importers.skypilot import gcp_host

ROOT = Path(__file__).resolve().parents[1]
GCP_FILE = "anycloud-sh-catalog/62ff0a987e0c257a89235415d2877812fb1aaf29/gcp/vms.csv"
AWS_FILE = "skypilot-catalog/catalogs/v8/aws_EXCERPT/vms.csv"
SOURCES = {
    "gcp": "anycloud-sh/catalog@62ff0a98 gcp/vms.csv (2026-05-20), AvailabilityZone column",
    "aws": "skypilot-org/skypilot-catalog v8 aws/vms.csv@00148f2a (p4de/p5 excerpt), "
    "AvailabilityZone column (zone IDs)",
}


def _gcp_zones(path: Path) -> pd.DataFrame:
    """(region, zone, instance_type) of every GCP accelerator row, with the catalog's
    instance-type names (host VM + GPUs as ``n1-standard-8+1xT4``)."""
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    df = df[(df["Region"] != "") & (df["AvailabilityZone"] != "")]
    hosts = set(
        zip(
            df.loc[df["AcceleratorName"] == "", "InstanceType"],
            df.loc[df["AcceleratorName"] == "", "AvailabilityZone"],
            strict=True,
        )
    )
    rows = []
    for itype, name, count, region, zone in zip(
        df["InstanceType"],
        df["AcceleratorName"],
        df["AcceleratorCount"],
        df["Region"],
        df["AvailabilityZone"],
        strict=True,
    ):
        if name == "":
            continue
        if itype == "" and name.lower().startswith("tpu-"):
            itype = name
        elif itype == "":
            n = float(count or 0)
            if n != round(n) or n < 1:
                continue
            host, carries = gcp_host(name, int(n))
            if host is None or (host, zone) not in hosts:
                continue
            itype = host if carries else f"{host}+{int(n)}x{name}"
        rows.append(("gcp", region, zone, itype))
    return pd.DataFrame(rows, columns=["provider", "region", "zone", "instance_type"])


def _aws_zones(path: Path) -> pd.DataFrame:
    """(region, zone ID, instance_type) of every row of the AWS excerpt."""
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    df = df[(df["Region"] != "") & (df["AvailabilityZone"] != "")]
    out = df[["Region", "AvailabilityZone", "InstanceType"]].copy()
    out.columns = ["region", "zone", "instance_type"]
    out.insert(0, "provider", "aws")
    return out


def build(snapshots: Path, offerings_csv: Path) -> pd.DataFrame:
    """The zones table: one row per (provider, region, zone) with the catalog's instance
    types listed there (space-separated, sorted) and the source."""
    listed = pd.concat(
        [_gcp_zones(snapshots / GCP_FILE), _aws_zones(snapshots / AWS_FILE)], ignore_index=True
    )
    offerings = pd.read_csv(offerings_csv, dtype=str, keep_default_na=False)
    known = set(
        zip(offerings["provider"], offerings["region"], offerings["instance_type"], strict=True)
    )
    keep = [
        (p, r, t) in known
        for p, r, t in zip(
            listed["provider"], listed["region"], listed["instance_type"], strict=True
        )
    ]
    listed = listed[keep].drop_duplicates()
    table = (
        listed.groupby(["provider", "region", "zone"], sort=True)["instance_type"]
        .agg(lambda s: " ".join(sorted(set(s))))
        .reset_index()
        .rename(columns={"instance_type": "instance_types"})
    )
    table["source"] = table["provider"].map(SOURCES)
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "snapshots", nargs="?", default=str(ROOT.parent / "shared/data/external/skypilot-catalog")
    )
    parser.add_argument("--out", default=str(ROOT / "catalogs"))
    args = parser.parse_args()
    out = Path(args.out)
    table = build(Path(args.snapshots), out / "offerings.csv")
    table.to_csv(out / "zones.csv", index=False, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    print(f"wrote {out / 'zones.csv'}: {len(table)} zones")


if __name__ == "__main__":
    main()
