#!/usr/bin/env python
"""Regenerate catalogs/offerings.csv and catalogs/regions.csv, deterministically.

Usage::

    python scripts/build_offerings.py [SNAPSHOT_DIR] [--out catalogs]

SNAPSHOT_DIR defaults to ``../shared/data/external/skypilot-catalog`` relative to
the repository root. The output is sorted and printed with fixed float
formatting, so running the script twice gives byte-identical files.

Where the rows come from
------------------------
1. SkyPilot-format price snapshots, read with
   :func:`solver.inputs.importers.skypilot.read_skypilot_vms` (see ``SNAPSHOTS``):
   GCP and Azure and Lambda and Vast (anycloud-sh/catalog HEAD, 2026-05-20),
   Nebius (skypilot-catalog v8), RunPod (skypilot-catalog v6, newer than the
   2023 runpod/pod-catalog file, which is therefore not used) and AWS
   p4de/p5 (the skypilot-catalog v8 excerpt); Hyperstack, Verda, JarvisLabs,
   Seeweb, Hyperbolic (v8), FluidStack, Paperspace, DigitalOcean (v6) whole; and
   the Shadeform and Prime Intellect aggregator files, whose rows are attributed to
   the cloud that runs the machine (``AGGREGATOR_UPSTREAM``). Each snapshot is cut
   to the regions with grid and price data (``REGIONS``, ``SMALL_CLOUD_REGIONS``).
2. ``LIST_PRICES`` below: hand-entered published list prices for what the
   snapshots lack (AWS g4dn/g5/g6/g6e/p3/p4d/inf2/trn1, OCI, CoreWeave). Each
   row cites its page in ``source``.
3. ``RESERVED_RULES``: 1-year and 3-year committed prices as a fraction of
   on-demand, by provider and instance family, each with its published source and
   read date ("discount only, upper bound" where only "up to X%" is published;
   empty where nothing is published).

Provenance (issue 29)
---------------------
Every row carries its prices' ``currency``, ``price_date`` (a day, or ``unknown``: a read
date is not a price date; the words go to ``price_note``) and ``price_confidence`` (quote,
list, third_party, unverified: solver/inputs/provenance.py): per snapshot in
``SNAPSHOTS``, per hand-entered source in ``LIST_PROVENANCE`` /
:func:`list_price_provenance`; reserved prices their own (``reserved_price_date``,
``reserved_price_confidence``, ``reserved_source``), from the rule or the published table
that set them. catalogs/SOURCES.md, "Price provenance and currency", gives the reasons.

Cleaning
--------
* GCP snapshot prices: some regions carry a GPU price far below the list price
  of the same machine type elsewhere (e.g. a3-highgpu-8g at $43/h in us-central1
  against $88/h in us-east4; Google's list price in us-central1 is about $88).
  A GCP row whose on-demand price is below 0.7 x the 75th percentile of its
  machine type across regions is dropped as implausible (counted on stdout).
* Lambda lists every instance type in every region; RunPod v6 every type in
  every country: only the regions in ``REGIONS`` are kept.
* Vast regions (``"Michigan, US, NA"``) are cut to the country code (``us``);
  offers of one instance type in one country keep the lowest price.
* TPU slices are limited to v5e and v6e 1-256 chips and v5p-8 to v5p-128.
* Spot quotes equal to on-demand, or more than 80% off on 8-accelerator instances,
  are dropped (:func:`clean_spot`).

Assumptions (no public figure exists)
-------------------------------------
``availability_cap_instances`` (instances one buyer can obtain in one region):
hyperscalers (aws, gcp, azure, oci) 16 of an 8-accelerator size and 64 of smaller
sizes; neoclouds (lambda, coreweave, nebius) 8 and 32; marketplaces (runpod,
vast) 4 and 16 (:func:`solver.inputs.importers.skypilot.default_availability_cap`). Vast
rows instead take the number of listings of the type in the country (one listing is
one host offering the configuration once).

regions.csv: grid intensity is the location-based average for the region's grid
(EPA eGRID2022 subregion for US regions, Ember 2023 country averages elsewhere),
rounded to 5 g; PUE is the provider-reported fleet average where one is published
(Google 1.10, AWS 1.15, Microsoft 1.18) and an assumption otherwise (Oracle 1.40,
neoclouds 1.30-1.35, marketplaces 1.40); electricity is the EIA 2023 average
industrial price by state (US) or the Eurostat 2023 non-household price by
country (EU, converted at 1.08 USD/EUR), other countries approximate.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from solver.inputs.importers.skypilot import (  # noqa: E402
    OFFERING_COLUMNS,
    default_availability_cap,
    read_skypilot_vms,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from price_provenance import (  # noqa: E402
    TSAOL_DAY,
    TSAOL_FILES,
    anycloud_url,
    check_currencies,
    check_dated,
    drop_unstated_currencies,
    seeweb_from_page,
    skypilot_note,
    skypilot_read_day,
    skypilot_url,
    tsaol_source,
    with_currencies,
)
from provider_pages import lambda_from_page, scaleway_from_page  # noqa: E402

DEFAULT_SNAPSHOTS = ROOT.parent / "shared" / "data" / "external" / "skypilot-catalog"
ANYCLOUD_HEAD = "anycloud-sh-catalog/62ff0a987e0c257a89235415d2877812fb1aaf29"

# (provider, path under the snapshot folder, price date (YYYY-MM-DD), price date in words,
# price confidence, source: an openable address). Confidence (solver/inputs/provenance.py): a
# SkyPilot-format catalog is a third party's (third_party). The anycloud-sh files are dated by
# their commit (published); the skypilot-catalog files by the day they were read
# (scripts/price_provenance.py says why). Seeweb's currency and page prices:
# price_provenance.seeweb_from_page.
_ANYCLOUD_NOTE = "anycloud-sh/catalog HEAD commit of 2026-05-20 (read 2026-11)"


def _sky(provider: str, rel: str, key: str, what: str = "") -> tuple[str, str, str, str, str, str]:
    """A SNAPSHOTS entry for one skypilot-org/skypilot-catalog file."""
    label = skypilot_url(key) + (f" ({what})" if what else "")
    return (provider, rel, skypilot_read_day(key), skypilot_note(key), "third_party", label)


def _any(cloud: str, name: str) -> tuple[str, str, str, str, str, str]:
    """A SNAPSHOTS entry for one anycloud-sh/catalog file (HEAD of 2026-05-20)."""
    label = f"{anycloud_url(cloud)} (SkyPilot-format {name} catalog, commit of 2026-05-20)"
    return (
        cloud,
        f"{ANYCLOUD_HEAD}/{cloud}/vms.csv",
        "2026-05-20",
        _ANYCLOUD_NOTE,
        "third_party",
        label,
    )


_SC = "skypilot-catalog/catalogs"
SNAPSHOTS: list[tuple[str, str, str, str, str, str]] = [
    _any("gcp", "GCP"),
    _any("azure", "Azure"),
    _any("lambda", "Lambda"),
    _any("vast", "Vast"),
    _sky("nebius", f"{_SC}/v8/nebius/vms.csv", "nebius"),
    _sky("runpod", f"{_SC}/v6/runpod/vms.csv", "runpod"),
    _sky("aws", f"{_SC}/v8/aws_EXCERPT/vms.csv", "aws", "p4de/p5 excerpt"),
    _sky("hyperstack", f"{_SC}/v8/hyperstack/vms.csv", "hyperstack"),
    _sky("verda", f"{_SC}/v8/verda/vms.csv", "verda", "Verda = DataCrunch"),
    _sky("jarvislabs", f"{_SC}/v8/jarvislabs/vms.csv", "jarvislabs"),
    _sky("seeweb", f"{_SC}/v8/seeweb/vms.csv", "seeweb", "prices in EUR, as on Seeweb's page"),
    _sky("hyperbolic", f"{_SC}/v8/hyperbolic/vms.csv", "hyperbolic"),
    _sky("fluidstack", f"{_SC}/v6/fluidstack/vms.csv", "fluidstack"),
    _sky("paperspace", f"{_SC}/v6/paperspace/vms.csv", "paperspace"),
    _sky("digitalocean", f"{_SC}/v6/do/vms.csv", "digitalocean"),
    # Aggregators: rows are re-attributed to the cloud that runs the machine (the prefix of
    # the instance type), see AGGREGATOR_UPSTREAM; a reseller's listing is third_party.
    _sky("shadeform", f"{_SC}/v8/shadeform/vms.csv", "shadeform", "listed via Shadeform"),
    _sky(
        "primeintellect",
        f"{_SC}/v8/primeintellect/vms.csv",
        "primeintellect",
        "listed via Prime Intellect",
    ),
]
# Not imported: skypilot-catalog v8 mithril/vms.csv (4 rows) quotes 1.00 USD per GPU-hour as both
# on-demand and spot for H100/H200, the auction's floor rather than a price one pays.

#: aggregator upstream prefix -> our provider, or None to leave the row out (the cloud is
#: imported directly from its own snapshot, or the upstream is not identifiable).
AGGREGATOR_UPSTREAM: dict[str, str | None] = {
    "crusoe": "crusoe",
    "crusoecloud": "crusoe",
    "massedcompute": "massedcompute",
    "scaleway": "scaleway",
    "denvr": "denvr",
    "oblivus": "oblivus",
    "latitude": "latitude",
    "lambdalabs": None,
    "hyperstack": None,
    "paperspace": None,
    "datacrunch": None,
    "nebius": None,
    "excesssupply": None,
    "dc": None,
    "primecompute": None,
}

# ---------------------------------------------------------------------------
# Regions: provider -> region -> (country, residency zone, grid key, electricity key)
# ---------------------------------------------------------------------------
REGIONS: dict[str, dict[str, tuple[str, str, str, str]]] = {
    "aws": {
        "us-east-1": ("US", "us", "SRVC", "VA"),
        "us-east-2": ("US", "us", "RFCW", "OH"),
        "us-west-1": ("US", "us", "CAMX", "CA"),
        "us-west-2": ("US", "us", "NWPP", "OR"),
        "ca-central-1": ("CA", "ca", "CA-QC", "CA-QC"),
        "eu-central-1": ("DE", "eu", "DE", "DE"),
        "eu-north-1": ("SE", "eu", "SE", "SE"),
        "eu-west-1": ("IE", "eu", "IE", "IE"),
        "eu-west-2": ("GB", "uk", "GB", "GB"),
        "ap-northeast-1": ("JP", "apac", "JP", "JP"),
        "ap-south-1": ("IN", "apac", "IN", "IN"),
        "ap-southeast-1": ("SG", "apac", "SG", "SG"),
        "ap-southeast-2": ("AU", "apac", "AU", "AU"),
    },
    "gcp": {
        "us-central1": ("US", "us", "MROW", "IA"),
        "us-east1": ("US", "us", "SRVC", "SC"),
        "us-east4": ("US", "us", "SRVC", "VA"),
        "us-east5": ("US", "us", "RFCW", "OH"),
        "us-south1": ("US", "us", "ERCT", "TX"),
        "us-west1": ("US", "us", "NWPP", "OR"),
        "us-west4": ("US", "us", "AZNM", "NV"),
        "europe-west1": ("BE", "eu", "BE", "BE"),
        "europe-west2": ("GB", "uk", "GB", "GB"),
        "europe-west3": ("DE", "eu", "DE", "DE"),
        "europe-west4": ("NL", "eu", "NL", "NL"),
        "europe-west9": ("FR", "eu", "FR", "FR"),
        "europe-north1": ("FI", "eu", "FI", "FI"),
        "northamerica-northeast1": ("CA", "ca", "CA-QC", "CA-QC"),
        "asia-east1": ("TW", "apac", "TW", "TW"),
        "asia-northeast3": ("KR", "apac", "KR", "KR"),
        "asia-northeast1": ("JP", "apac", "JP", "JP"),
        "asia-southeast1": ("SG", "apac", "SG", "SG"),
        "asia-south1": ("IN", "apac", "IN", "IN"),
        "australia-southeast1": ("AU", "apac", "AU", "AU"),
    },
    "azure": {
        "eastus": ("US", "us", "SRVC", "VA"),
        "eastus2": ("US", "us", "SRVC", "VA"),
        "southcentralus": ("US", "us", "ERCT", "TX"),
        "westus2": ("US", "us", "NWPP", "WA"),
        "westus3": ("US", "us", "AZNM", "AZ"),
        "westeurope": ("NL", "eu", "NL", "NL"),
        "northeurope": ("IE", "eu", "IE", "IE"),
        "swedencentral": ("SE", "eu", "SE", "SE"),
        "francecentral": ("FR", "eu", "FR", "FR"),
        "germanywestcentral": ("DE", "eu", "DE", "DE"),
        "polandcentral": ("PL", "eu", "PL", "PL"),
        "uksouth": ("GB", "uk", "GB", "GB"),
        "canadacentral": ("CA", "ca", "CA-ON", "CA-ON"),
        "japaneast": ("JP", "apac", "JP", "JP"),
        "southeastasia": ("SG", "apac", "SG", "SG"),
        "australiaeast": ("AU", "apac", "AU", "AU"),
        "centralindia": ("IN", "apac", "IN", "IN"),
        "koreacentral": ("KR", "apac", "KR", "KR"),
        "centralus": ("US", "us", "MROW", "IA"),
        "westus": ("US", "us", "CAMX", "CA"),
        "northcentralus": ("US", "us", "RFCW", "IL"),
        "spaincentral": ("ES", "eu", "ES", "ES"),
        "italynorth": ("IT", "eu", "IT", "IT"),
        "japanwest": ("JP", "apac", "JP", "JP"),
        "koreasouth": ("KR", "apac", "KR", "KR"),
        "southindia": ("IN", "apac", "IN", "IN"),
        "australiacentral": ("AU", "apac", "AU", "AU"),
    },
    "lambda": {
        "us-east-1": ("US", "us", "SRVC", "VA"),
        "us-west-1": ("US", "us", "CAMX", "CA"),
        "us-south-1": ("US", "us", "ERCT", "TX"),
        "us-midwest-1": ("US", "us", "RFCW", "IL"),
        "europe-central-1": ("DE", "eu", "DE", "DE"),
        "asia-northeast-1": ("JP", "apac", "JP", "JP"),
        "asia-northeast-2": ("KR", "apac", "KR", "KR"),
        "asia-south-1": ("IN", "apac", "IN", "IN"),
        "australia-east-1": ("AU", "apac", "AU", "AU"),
        "europe-south-1": ("IT", "eu", "IT", "IT"),
        "us-east-2": ("US", "us", "US", "US"),
        "us-east-3": ("US", "us", "US", "US"),
        "us-south-2": ("US", "us", "ERCT", "TX"),
        "us-south-3": ("US", "us", "ERCT", "TX"),
        "us-west-2": ("US", "us", "US", "US"),
        "us-west-3": ("US", "us", "US", "US"),
    },
    "nebius": {
        "eu-north1": ("FI", "eu", "FI", "FI"),
        "eu-west1": ("FR", "eu", "FR", "FR"),
        "us-central1": ("US", "us", "SPNO", "MO"),
    },
    "runpod": {
        "US": ("US", "us", "US", "US"),
        "CA": ("CA", "ca", "CA", "CA"),
        "SE": ("SE", "eu", "SE", "SE"),
        "NL": ("NL", "eu", "NL", "NL"),
        "CZ": ("CZ", "eu", "CZ", "CZ"),
        "NO": ("NO", "eu", "NO", "NO"),
        "RO": ("RO", "eu", "RO", "RO"),
    },
    "vast": {
        "us": ("US", "us", "US", "US"),
        "ca": ("CA", "ca", "CA", "CA"),
        "fr": ("FR", "eu", "FR", "FR"),
        "de": ("DE", "eu", "DE", "DE"),
        "se": ("SE", "eu", "SE", "SE"),
        "nl": ("NL", "eu", "NL", "NL"),
        "no": ("NO", "eu", "NO", "NO"),
        "cz": ("CZ", "eu", "CZ", "CZ"),
        "pl": ("PL", "eu", "PL", "PL"),
        "ro": ("RO", "eu", "RO", "RO"),
        "jp": ("JP", "apac", "JP", "JP"),
        "kr": ("KR", "apac", "KR", "KR"),
        "tw": ("TW", "apac", "TW", "TW"),
    },
    "oci": {
        "us-ashburn-1": ("US", "us", "SRVC", "VA"),
        "us-chicago-1": ("US", "us", "RFCW", "IL"),
        "us-phoenix-1": ("US", "us", "AZNM", "AZ"),
        "eu-frankfurt-1": ("DE", "eu", "DE", "DE"),
        "uk-london-1": ("GB", "uk", "GB", "GB"),
        "ap-tokyo-1": ("JP", "apac", "JP", "JP"),
    },
    # CoreWeave region labels follow its public naming; list prices are uniform.
    "coreweave": {
        "US-EAST-04": ("US", "us", "SRVC", "VA"),
        "US-CENTRAL-07": ("US", "us", "RFCW", "IL"),
        "US-WEST-09": ("US", "us", "NWPP", "OR"),
        "EU-NORTH-01": ("SE", "eu", "SE", "SE"),
        "EU-SOUTH-03": ("ES", "eu", "ES", "ES"),
        "UK-SOUTH-01": ("GB", "uk", "GB", "GB"),
    },
}

#: country -> (residency zone, grid key, electricity key), for the smaller clouds whose regions
#: are named by city or country; US sites use the US averages.
COUNTRY: dict[str, tuple[str, str, str]] = {
    "US": ("us", "US", "US"),
    "CA": ("ca", "CA", "CA"),
    "FI": ("eu", "FI", "FI"),
    "FR": ("eu", "FR", "FR"),
    "DE": ("eu", "DE", "DE"),
    "PL": ("eu", "PL", "PL"),
    "IT": ("eu", "IT", "IT"),
    "NL": ("eu", "NL", "NL"),
    "SE": ("eu", "SE", "SE"),
    "NO": ("eu", "NO", "NO"),
    "JP": ("apac", "JP", "JP"),
    "IN": ("apac", "IN", "IN"),
    "AU": ("apac", "AU", "AU"),
}
#: provider -> region -> country, for the providers imported in 2026-11 (issue 11).
SMALL_CLOUD_REGIONS: dict[str, dict[str, str]] = {
    "hyperstack": {"CANADA-1": "CA", "US-1": "US"},
    "verda": {"FIN-01": "FI", "FIN-02": "FI", "FIN-03": "FI"},
    "jarvislabs": {"IN2": "IN"},
    "seeweb": {"it-fr2": "IT"},
    "hyperbolic": {"default": "US"},  # assumption: Hyperbolic lists no region; hosts mostly US
    "fluidstack": {
        "ARIZONA_USA": "US",
        "CANADA": "CA",
        "FINLAND": "FI",
        "NORTH_DAKOTA_USA": "US",
        "UTAH_USA": "US",
    },
    "paperspace": {"East Coast (NY2)": "US"},
    "digitalocean": {"tor1": "CA"},
    "tensorwave": {"US": "US"},  # TensorWave's datacenters are in the US (Las Vegas)
}
_SHADEFORM_COUNTRY = {"usa": "US", "canada": "CA", "france": "FR", "japan": "JP", "poland": "PL"}


def _small_region(provider: str, region: str) -> str | None:
    """Country of a small cloud's region (direct table, Shadeform city names, or a code)."""
    if region in SMALL_CLOUD_REGIONS.get(provider, {}):
        return SMALL_CLOUD_REGIONS[provider][region]
    parts = region.split("-")
    if len(parts) == 3 and parts[1] in _SHADEFORM_COUNTRY:  # e.g. dallas-usa-3
        return _SHADEFORM_COUNTRY[parts[1]]
    if region in COUNTRY:  # Prime Intellect lists a country code
        return region
    return None


EGRID = (
    "EPA eGRID2022 subregion total output CO2e rate (epa.gov/egrid); unverified (from "
    "published list as recalled; EPA tables not found in the 2026-11 search)"
)
EMBER = (
    "Ember 2023 country carbon intensity (ember-energy.org data explorer); unverified "
    "(from published list as recalled; not re-read 2026-11)"
)
EEA = (
    "EEA/Ember 2023 country average (eea.europa.eu greenhouse-gas intensity); unverified "
    "(from published list as recalled; not re-read 2026-11)"
)

#: grid key -> (gCO2e/kWh, year, source)
GRID: dict[str, tuple[float, str, str]] = {
    "SRVC": (295, "2022", EGRID + "; SRVC Virginia/Carolinas"),
    "RFCW": (480, "2022", EGRID + "; RFCW Ohio/Illinois/Michigan"),
    "NWPP": (285, "2022", EGRID + "; NWPP Northwest"),
    "MROW": (430, "2022", EGRID + "; MROW Midwest (Iowa)"),
    "ERCT": (370, "2022", EGRID + "; ERCT Texas"),
    "AZNM": (350, "2022", EGRID + "; AZNM Arizona/New Mexico/S. Nevada"),
    "CAMX": (225, "2022", EGRID + "; CAMX California"),
    "SPNO": (430, "2022", EGRID + "; SPNO Kansas/Missouri"),
    "US": (370, "2022", EGRID + "; US average"),
    "CA": (130, "2023", EMBER + "; Canada average"),
    "CA-QC": (5, "2023", "Canada NIR 2023, Quebec grid intensity (approx.)"),
    "CA-ON": (35, "2023", "Canada NIR 2023, Ontario grid intensity (approx.)"),
    "SE": (40, "2023", EEA),
    "FR": (55, "2023", EEA),
    "DE": (
        380,
        "2023",
        "Ember 2023 via ourworldindata.org/grapher/carbon-intensity-electricity, "
        "Germany 381 gCO2e/kWh (read 2026-11; see EMBER_OWID_2023 in SOURCES.md)",
    ),
    "NL": (270, "2023", EEA),
    "IE": (280, "2023", EEA),
    "FI": (
        80,
        "2023",
        "Ember 2023 via ourworldindata.org/grapher/carbon-intensity-electricity, "
        "Finland 79 gCO2e/kWh (read 2026-11; see EMBER_OWID_2023 in SOURCES.md)",
    ),
    "BE": (140, "2023", EEA),
    "PL": (660, "2023", EEA),
    "ES": (150, "2023", EEA),
    "IT": (260, "2023", EEA),
    "CZ": (410, "2023", EEA),
    "RO": (250, "2023", EEA),
    "NO": (30, "2023", EMBER),
    "GB": (210, "2023", EMBER + "; Great Britain"),
    "JP": (480, "2023", EMBER),
    "SG": (470, "2023", EMBER),
    "IN": (710, "2023", EMBER),
    "AU": (550, "2023", EMBER),
    "KR": (430, "2023", EMBER),
    "TW": (560, "2023", EMBER),
}

EIA = "EIA Electric Power Monthly 2023 average industrial price by state (read 2026-11)"
EUROSTAT = "Eurostat nrg_pc_205 2023 non-household price excl. VAT, 1.08 USD/EUR (read 2026-11)"
APPROX = "approximate 2023 industrial tariff (assumption)"

#: electricity key -> (USD/kWh, source)
ELECTRICITY: dict[str, tuple[float, str]] = {
    "VA": (0.088, EIA),
    "OH": (0.082, EIA),
    "OR": (0.078, EIA),
    "IA": (0.075, EIA),
    "TX": (0.073, EIA),
    "AZ": (0.082, EIA),
    "CA": (0.213, EIA),
    "IL": (0.087, EIA),
    "WA": (0.065, EIA),
    "SC": (0.073, EIA),
    "NV": (0.095, EIA),
    "MO": (0.085, EIA),
    "US": (0.080, EIA + "; US average"),
    "SE": (0.090, EUROSTAT),
    "FR": (0.150, EUROSTAT),
    "DE": (0.220, EUROSTAT),
    "NL": (0.190, EUROSTAT),
    "IE": (0.270, EUROSTAT),
    "FI": (0.100, EUROSTAT),
    "BE": (0.200, EUROSTAT),
    "PL": (0.200, EUROSTAT),
    "ES": (0.140, EUROSTAT),
    "IT": (0.220, EUROSTAT),
    "CZ": (0.210, EUROSTAT),
    "RO": (0.200, EUROSTAT),
    "NO": (0.080, APPROX),
    "GB": (0.280, "UK DESNZ 2023 non-domestic price, large users (approx.)"),
    "CA-QC": (0.060, APPROX),
    "CA-ON": (0.100, APPROX),
    "JP": (0.200, APPROX),
    "SG": (0.220, APPROX),
    "IN": (0.100, APPROX),
    "AU": (0.150, APPROX),
    "KR": (0.110, APPROX),
    "TW": (0.110, APPROX),
}

#: provider -> (PUE, source)
PUE: dict[str, tuple[float, str]] = {
    "gcp": (
        1.10,
        "Google fleet PUE ~1.10 as reported by datacenterdynamics.com/en/news/"
        "aws-global-data-centers-achieved-pue-of-115-in-2023 (Dec 2024; read 2026-11); "
        "Google's own environmental report not re-read",
    ),
    "aws": (
        1.15,
        "AWS-reported global PUE 1.15 for 2023 (datacenterdynamics.com, re:Invent 2024) "
        "and 2024 (aws.amazon.com/sustainability/data-centers); read 2026-11",
    ),
    "azure": (
        1.18,
        "Microsoft global fleet average PUE 1.18 (newest designs 1.12) as reported by "
        "datacenterdynamics.com (Dec 2024; read 2026-11); Microsoft's own report not "
        "re-read",
    ),
    "oci": (1.40, "assumption (Oracle publishes no fleet PUE)"),
    "lambda": (1.35, "assumption (neocloud colocation)"),
    "coreweave": (1.35, "assumption (neocloud colocation)"),
    "nebius": (1.30, "assumption (neocloud; Nebius reports ~1.1 for Finland, not fleet-wide)"),
    "runpod": (1.40, "assumption (marketplace, mixed colocation)"),
    "vast": (1.40, "assumption (marketplace, mixed hosts)"),
    **dict.fromkeys(
        (
            "hyperstack",
            "verda",
            "jarvislabs",
            "seeweb",
            "fluidstack",
            "paperspace",
            "digitalocean",
            "crusoe",
            "massedcompute",
            "scaleway",
            "denvr",
            "oblivus",
            "latitude",
            "tensorwave",
        ),
        (1.35, "assumption (neocloud colocation)"),
    ),
    "hyperbolic": (1.40, "assumption (marketplace, mixed hosts)"),
}

# ---------------------------------------------------------------------------
# Hand-entered list prices (USD per instance-hour, on-demand unless stated).
# ---------------------------------------------------------------------------
SKY_AWS = skypilot_url("aws") + " (AWS Price List data, Linux on-demand)"
AWS_SRC = (
    "AWS on-demand list price as in " + SKY_AWS + " (read 2026-11; aws.amazon.com/ec2/pricing/"
    "on-demand); verified for us-east-1, us-east-2 and us-west-2"
)
AWS_SRC_PART = (
    "AWS on-demand list price as in " + SKY_AWS + " (read 2026-11); only the us-west-2 row was "
    "read, the other regions assume the same price"
)
AWS_SRC_CUT = (
    "AWS on-demand list price after the June 2025 P4/P5 price cut as in "
    + SKY_AWS
    + " (us-east-1 21.957642, us-east-2/us-west-2 21.95764; read 2026-11; was 21.96)"
)
AWS_UNVERIFIED = (
    "unverified (from published list as recalled): aws.amazon.com/ec2/pricing/on-demand, not "
    "re-read; not found in the catalog rows read 2026-11"
)
OCI_SRC = (
    "OCI list price as in "
    + skypilot_url("oci")
    + " (same price in every region; read 2026-11; oracle.com/cloud/compute/pricing)"
)
CW_SRC = (
    "https://www.coreweave.com/pricing North America and Europe on-demand list, as scraped on "
    "2026-10-10 in https://github.com/PrashantSedhain/coreweave-pricing-tracker/blob/"
    "b936d50a5ecd3644b5eca6a657cd4c7f4f1e8e69/data/2026-10-10.json (read 2026-11)"
)
CW_UNVERIFIED = (
    "unverified (from published list as recalled): coreweave.com/pricing; not on the page as "
    "scraped 2026-10-10 (PrashantSedhain/coreweave-pricing-tracker data/2026-10-10.json)"
)
AWS_VANTAGE = (
    "unverified: us-east-1 Linux on-demand as quoted from instances.vantage.sh (AWS Price List "
    "data) in a public test fixture read 2026-11 (p5en 63.296, p6-b200 113.9328), matching a "
    "second public table (7.91 and 14.24 USD per GPU-hour, last verified 2026-04); us-east-2 and "
    "us-west-2 assume the us-east-1 price (AWS prices these US regions alike, as for p5); "
    "aws.amazon.com/ec2/pricing/on-demand not re-read"
)
TENSORWAVE_SRC = (
    "unverified: TensorWave MI325X at 1.95 USD per GPU-hour as quoted in cliffcenter.com/research/"
    "amd-inference-economics (2026-05-18, read 2026-11); tensorwave.com/pricing not re-read; "
    "vCPUs, memory and network are assumptions for an 8 x MI325X node"
)
AWS_US = ("us-east-1", "us-east-2", "us-west-2")
AWS_CAPACITY_BLOCK = (
    "unverified: EC2 Capacity Blocks for ML rate (blocks of 1-182 days, paid up front), the "
    "only published per-hour price of this instance (no on-demand or RI rate published), "
    "used as its pay-per-use price (one block per month); monthly scrape of "
    "aws.amazon.com/ec2/capacityblocks/pricing in koyakimu/ec2-capacity-blocks-for-ml-"
    "pricing-json data/pricing.json@b3a54aee (metadata.last_updated 2026-07-22), read "
    "2026-11-24 (p5e 47.76, trn2 35.7608 USD per instance-hour)"
)

# provider, regions, instance_type, accelerator_id, n, vcpus, memory_gib,
# on_demand, network_gbps, nvlink, source
LIST_PRICES: list[tuple] = [
    # AWS: A10G (g5)
    ("aws", AWS_US, "g5.xlarge", "a10g", 1, 4, 16, 1.006, 10, False, AWS_SRC),
    ("aws", AWS_US, "g5.2xlarge", "a10g", 1, 8, 32, 1.212, 10, False, AWS_SRC),
    ("aws", AWS_US, "g5.4xlarge", "a10g", 1, 16, 64, 1.624, 25, False, AWS_SRC_PART),
    ("aws", AWS_US, "g5.12xlarge", "a10g", 4, 48, 192, 5.672, 40, False, AWS_SRC),
    ("aws", AWS_US, "g5.48xlarge", "a10g", 8, 192, 768, 16.288, 100, False, AWS_SRC),
    # AWS: L4 (g6)
    ("aws", AWS_US, "g6.xlarge", "l4", 1, 4, 16, 0.8048, 10, False, AWS_SRC),
    ("aws", AWS_US, "g6.2xlarge", "l4", 1, 8, 32, 0.9776, 10, False, AWS_SRC_PART),
    ("aws", AWS_US, "g6.12xlarge", "l4", 4, 48, 192, 4.6016, 40, False, AWS_SRC),
    ("aws", AWS_US, "g6.48xlarge", "l4", 8, 192, 768, 13.3504, 100, False, AWS_SRC),
    # AWS: L40S (g6e)
    ("aws", AWS_US, "g6e.xlarge", "l40s", 1, 4, 32, 1.861, 20, False, AWS_SRC),
    ("aws", AWS_US, "g6e.12xlarge", "l40s", 4, 48, 384, 10.49264, 100, False, AWS_SRC),
    ("aws", AWS_US, "g6e.48xlarge", "l40s", 8, 192, 1536, 30.13118, 400, False, AWS_SRC),
    # AWS: T4 (g4dn), V100 (p3)
    ("aws", AWS_US, "g4dn.xlarge", "t4", 1, 4, 16, 0.526, 25, False, AWS_SRC),
    ("aws", AWS_US, "g4dn.12xlarge", "t4", 4, 48, 192, 3.912, 50, False, AWS_UNVERIFIED),
    ("aws", ("us-east-1", "us-west-2"), "p3.2xlarge", "v100", 1, 8, 61, 3.06, 10, False, AWS_SRC),
    (
        "aws",
        ("us-east-1", "us-west-2"),
        "p3.16xlarge",
        "v100",
        8,
        64,
        488,
        24.48,
        25,
        True,
        AWS_SRC,
    ),
    # AWS: A100 (p4d) in regions the excerpt lacks
    ("aws", AWS_US, "p4d.24xlarge", "a100-40gb", 8, 96, 1152, 21.95764, 400, True, AWS_SRC_CUT),
    # AWS: H200 (p5en) and B200 (p6-b200) in the US regions that offer them
    ("aws", AWS_US, "p5en.48xlarge", "h200", 8, 192, 2048, 63.296, 3200, True, AWS_VANTAGE),
    ("aws", AWS_US, "p6-b200.48xlarge", "b200", 8, 192, 2048, 113.9328, 3200, True, AWS_VANTAGE),
    # AWS: H200 (p5e) and Trainium2 (trn2), sold by Capacity Block only at a published rate
    (
        "aws",
        ("us-east-2", "us-west-2"),
        "p5e.48xlarge",
        "h200",
        8,
        192,
        2048,
        47.76,
        3200,
        True,
        AWS_CAPACITY_BLOCK,
    ),
    (
        "aws",
        ("us-east-2",),
        "trn2.48xlarge",
        "trainium2",
        16,
        192,
        2048,
        35.7608,
        3200,
        True,
        AWS_CAPACITY_BLOCK,
    ),
    # TensorWave: AMD MI325X, 8-GPU nodes at the per-GPU list price x 8
    (
        "tensorwave",
        ("US",),
        "mi325x-8x",
        "mi325x",
        8,
        128,
        2048,
        8 * 1.95,
        3200,
        True,
        TENSORWAVE_SRC,
    ),
    # AWS silicon
    (
        "aws",
        ("us-east-1", "us-east-2", "us-west-2"),
        "inf2.xlarge",
        "inferentia2",
        1,
        4,
        16,
        0.7582,
        15,
        False,
        AWS_UNVERIFIED,
    ),
    (
        "aws",
        ("us-east-1", "us-east-2", "us-west-2"),
        "inf2.48xlarge",
        "inferentia2",
        12,
        192,
        768,
        12.98127,
        100,
        False,
        AWS_UNVERIFIED,
    ),
    (
        "aws",
        ("us-east-1", "us-east-2", "us-west-2"),
        "trn1.2xlarge",
        "trainium",
        1,
        8,
        32,
        1.34375,
        12.5,
        False,
        AWS_UNVERIFIED,
    ),
    (
        "aws",
        ("us-east-1", "us-east-2", "us-west-2"),
        "trn1.32xlarge",
        "trainium",
        16,
        128,
        512,
        21.50,
        800,
        True,
        AWS_UNVERIFIED,
    ),
    # OCI: list prices are the same in every commercial region. vCPUs are 2 x OCPUs, as the
    # SkyPilot catalog lists them (the table used to carry OCPU counts).
    (
        "oci",
        ("us-ashburn-1", "us-chicago-1", "eu-frankfurt-1", "uk-london-1", "ap-tokyo-1"),
        "BM.GPU.H100.8",
        "h100-sxm",
        8,
        224,
        2048,
        80.00,
        3200,
        True,
        OCI_SRC,
    ),
    (
        "oci",
        ("us-ashburn-1", "us-phoenix-1", "eu-frankfurt-1", "uk-london-1", "ap-tokyo-1"),
        "BM.GPU.A100-v2.8",
        "a100-80gb",
        8,
        256,
        2048,
        32.00,
        1600,
        True,
        OCI_SRC,
    ),
    (
        "oci",
        ("us-ashburn-1", "us-chicago-1", "eu-frankfurt-1", "uk-london-1"),
        "BM.GPU.L40S.4",
        "l40s",
        4,
        224,
        1024,
        14.00,
        800,
        False,
        OCI_SRC,
    ),
    (
        "oci",
        ("us-chicago-1", "us-ashburn-1"),
        "BM.GPU.MI300X.8",
        "mi300x",
        8,
        224,
        2048,
        48.00,
        3200,
        True,
        OCI_SRC,
    ),
    (
        "oci",
        (
            "us-ashburn-1",
            "us-phoenix-1",
            "us-chicago-1",
            "eu-frankfurt-1",
            "uk-london-1",
            "ap-tokyo-1",
        ),
        "VM.GPU.A10.1",
        "a10",
        1,
        30,
        240,
        2.00,
        24,
        False,
        OCI_SRC,
    ),
    (
        "oci",
        ("us-ashburn-1", "us-chicago-1", "eu-frankfurt-1", "uk-london-1"),
        "BM.GPU.H200.8",
        "h200",
        8,
        224,
        3072,
        80.00,
        3200,
        True,
        OCI_SRC + "; was 98.00 from a third-party page (oraclelicensingexperts.com)",
    ),
    # CoreWeave: per-instance list prices (8-GPU HGX nodes; L40S/A40/A6000 per GPU x count)
    (
        "coreweave",
        ("US-EAST-04", "US-CENTRAL-07", "US-WEST-09", "EU-NORTH-01", "EU-SOUTH-03", "UK-SOUTH-01"),
        "gd-8xh100ib-i128",
        "h100-sxm",
        8,
        128,
        2048,
        49.24,
        3200,
        True,
        CW_SRC,
    ),
    (
        "coreweave",
        ("US-EAST-04", "US-CENTRAL-07", "EU-NORTH-01", "EU-SOUTH-03"),
        "gd-8xh200ib-i128",
        "h200",
        8,
        128,
        2048,
        50.44,
        3200,
        True,
        CW_SRC,
    ),
    (
        "coreweave",
        ("US-EAST-04", "US-CENTRAL-07", "US-WEST-09", "EU-NORTH-01"),
        "gd-8xa100ib-i128",
        "a100-80gb",
        8,
        128,
        2048,
        21.60,
        1600,
        True,
        CW_SRC,
    ),
    (
        "coreweave",
        ("US-EAST-04", "US-CENTRAL-07", "US-WEST-09", "EU-NORTH-01", "EU-SOUTH-03", "UK-SOUTH-01"),
        "gd-8xl40s-i128",
        "l40s",
        8,
        128,
        1024,
        18.00,
        200,
        False,
        CW_SRC,
    ),
    # CoreWeave A40 and RTX A6000 (1 GPU) are not on coreweave.com/pricing as captured
    # 2026-10-10; the figures once here (1.28) were recalled, with no source to read or date,
    # and are left out (CW_UNVERIFIED).
]

# Commitments as sold (SOURCES.md, "Commitments"): (provider, instance-type regex, 1-year
# price as a fraction of on-demand, 3-year fraction, source with the page and its read date).
# None = nothing published for that term: the column stays empty (no invented factor).
# Where a provider publishes only "up to X% off", X is used and the source says "discount
# only, upper bound": such a rate is the best case the provider advertises, not a quote.
# All pages below were read 2026-11-24 from stored copies (search tool), not live.
#: The day the RESERVED_RULES sources were read (each rule's text says so): the date of a
#: commitment price worked from a rule's percentage.
RULES_READ_DAY = "2026-11-24"
RESERVED_RULES: list[tuple[str, str, float | None, float | None, str]] = [
    (
        "aws",
        r"^(?:p4d|p4de|p5|g5|g6|g6e)\.",
        None,
        None,
        "none per instance published: EC2 Instance Savings Plans advertise 'savings up to 72%' "
        "(term and payment option not stated), https://aws.amazon.com/savingsplans/faqs read "
        "2026-11-24; an upper bound is not a price, so 1y and 3y are left empty",
    ),
    (
        "gcp",
        r"^(?:a2|a3|a4|g2)-",
        0.63,
        0.45,
        "resource-based CUD 37% (1y) / 55% (3y), third-party table "
        "https://lillytechsystems.com/ai-school/gcp-ai-cost/cuds.html read 2026-11-24, within "
        "Google's 'up to 57% for most resources like machine types or GPUs', "
        "https://cloud.google.com/compute/docs/instances/signing-up-committed-use-discounts "
        "read 2026-11-24; Google's per-GPU commitment price table not found",
    ),
    (
        "azure",
        r"^Standard_(?:ND96isr_H100_v5|ND96isr_H200_v5|NC\d+ads_A100_v4|ND96amsr_A100_v4)$",
        None,
        None,
        "none per SKU published: Azure Reserved VM Instances advertise 'up to 72 percent' "
        "(footnote: a 3-year reservation of one M32ts VM), "
        "https://azure.microsoft.com/en-us/pricing/reserved-vm-instances/ read 2026-11-24; an "
        "upper bound is not a price, so 1y and 3y are left empty",
    ),
    (
        "lambda",
        r".",
        None,
        None,
        "none published: 1-Click Cluster reservations are priced per GPU-hour by the terms of "
        "each reservation (https://docs.lambda.ai/public-cloud/billing read 2026-11-24); the "
        "1CC price table was not found",
    ),
    (
        "coreweave",
        r".",
        None,
        None,
        "none published: Reserved Instances and Flex Reservations are term contracts through "
        "an account executive, https://docs.coreweave.com/platform/capacity-plans read "
        "2026-11-24",
    ),
    (
        "nebius",
        r".",
        None,
        None,
        "none published: commitment discounts are agreed with Nebius sales (companies only), "
        "https://docs.nebius.com/signup-billing/billing-models/committed-usage read 2026-11-24",
    ),
    (
        "oci",
        r".",
        None,
        None,
        "none published: Annual Universal Credits discounts follow a discount schedule that was "
        "not found, https://docs.oracle.com/en/cloud/get-started/subscriptions-cloud/ocpib/"
        "frequently-asked-questions.html read 2026-11-24",
    ),
]

#: Published per-SKU commitment prices (read 2026-11-24 from stored copies; one row per
#: provider, instance type, region and term, with the payment option, source and its date):
#: GCP resource-based CUDs from Google's billing catalog (Cyclenerd/google-cloud-pricing-
#: cost-calculator pricing.yml), AWS 1-year Standard RIs, no upfront, from the AWS Price
#: List through ec2instances.info (tsaol/aws-gpu). They win over RESERVED_RULES for the
#: rows they name; see catalogs/SOURCES.md, "Commitments".
COMMITMENT_PRICES = ROOT / "scripts" / "commitment_prices.csv"
#: A published commitment price is used only when the source's own on-demand price for the
#: row agrees with the catalog's within this fraction (else the two sources price different
#: things, e.g. another host shape or another date).
COMMITMENT_ON_DEMAND_TOLERANCE = 0.10


def apply_commitment_prices(off: pd.DataFrame, path: Path = COMMITMENT_PRICES) -> pd.DataFrame:
    """Set 1y/3y prices from :data:`COMMITMENT_PRICES` where a row names the offering.

    The row's price replaces the rule's (or fills an empty column) and its source is
    appended to the offering's ``reserved_source``, with its confidence (third_party: a
    compiled table) and the file's date; a row whose source on-demand price disagrees with the
    catalog's by more than :data:`COMMITMENT_ON_DEMAND_TOLERANCE` is skipped and counted.
    """
    table = pd.read_csv(path)
    off = _with_reserved_provenance(off)
    key = off["provider"] + "|" + off["instance_type"] + "|" + off["region"]
    where = pd.Series(off.index, index=key)
    used = skipped = 0
    for r in table.itertuples(index=False):
        k = f"{r.provider}|{r.instance_type}|{r.region}"
        if k not in where.index:
            continue
        i = where[k]
        od = float(off.at[i, "on_demand_usd_per_hour"])
        if abs(float(r.source_on_demand_usd_per_hour) - od) > COMMITMENT_ON_DEMAND_TOLERANCE * od:
            skipped += 1
            continue
        column = f"reserved_{r.term}_usd_per_hour"
        off.at[i, column] = float(r.price_usd_per_hour)
        note = f"{r.term} price: {r.payment_option}, {r.source_url} ({r.source_date})"
        before = off.at[i, "reserved_source"]
        off.at[i, "reserved_source"] = f"{before}; {note}" if before else note
        # a compiled table of the provider's API (Cyclenerd's, tsaol's): third_party, dated by
        # the file's own stamp; a term still priced by a rule keeps the weaker of the two
        dated = str(r.source_date)[:10]
        weaker = off.at[i, "reserved_price_confidence"] == "unverified" and not _both_terms(
            table, r
        )
        off.at[i, "reserved_price_confidence"] = "unverified" if weaker else "third_party"
        off.at[i, "reserved_price_date"] = RULES_READ_DAY if weaker else dated
        used += 1
    print(
        f"commitments: {used} published prices applied, {skipped} skipped (on-demand differs "
        f"by more than {COMMITMENT_ON_DEMAND_TOLERANCE:.0%})"
    )
    return off


def _with_reserved_provenance(off: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``off`` with the reserved provenance columns ("" where not yet set)."""
    out = off.copy()
    for column in ("reserved_price_date", "reserved_price_confidence", "reserved_source"):
        out[column] = out[column].fillna("") if column in out else ""
    return out


def _both_terms(table: pd.DataFrame, r) -> bool:
    """Whether the commitment table prices both terms of ``r``'s offering (so no term of it
    is left to a rule of thumb)."""
    same = (
        (table["provider"] == r.provider)
        & (table["instance_type"] == r.instance_type)
        & (table["region"] == r.region)
    )
    return set(table.loc[same, "term"]) >= {"1y", "3y"}


#: TPU slices kept: v5e and v6e up to a full 256-chip pod, v5p up to v5p-128 (64 chips).
GCP_TPU_KEEP = {
    *(f"tpu-v5litepod-{n}" for n in (1, 4, 8, 16, 32, 64, 128, 256)),
    *(f"tpu-v6e-{n}" for n in (1, 4, 8, 16, 32, 64, 128, 256)),
    *(f"tpu-v5p-{n}" for n in (8, 16, 32, 64, 128)),
}


def _gcp_plausible(frame: pd.DataFrame) -> pd.DataFrame:
    """Drop GCP rows priced below 0.7 x the 75th percentile of their machine type."""
    ref = frame.groupby("instance_type")["on_demand_usd_per_hour"].transform(
        lambda s: s.quantile(0.75)
    )
    keep = frame["on_demand_usd_per_hour"] >= 0.7 * ref
    dropped = frame.loc[~keep, "offering_id"].tolist()
    if dropped:
        print(
            f"gcp: dropped {len(dropped)} rows priced implausibly low: "
            + ", ".join(dropped[:8])
            + (" ..." if len(dropped) > 8 else "")
        )
    return frame[keep]


def load_snapshots(snapshot_dir: Path) -> pd.DataFrame:
    """Import every snapshot in :data:`SNAPSHOTS` and apply the cuts described above."""
    frames = []
    for provider, rel, price_date, note, confidence, label in SNAPSHOTS:
        path = snapshot_dir / rel
        if not path.is_file():
            print(f"warning: {path} missing, skipping {provider}")
            continue
        basis = "published" if rel.startswith(ANYCLOUD_HEAD) else "read"
        result = read_skypilot_vms(
            path, provider, price_date=price_date, source=label, price_date_basis=basis
        )
        off = result.offerings.assign(price_note=note, price_confidence=confidence)
        print(
            f"{provider}: {len(off)} offerings from {rel}; unmapped "
            f"{sum(result.unmapped.values())} rows; skipped {result.skipped}"
        )
        if provider == "vast":
            off = off.assign(region=off["region"].str.split(",").str[1].str.strip().str.lower())
            # Marketplace availability: each listing (one line of the raw file) is one host
            # offering this configuration once, so one buyer can get at most as many
            # instances as there are listings of the type in the country (not a flat default).
            # Both Vast snapshots hold one listing per type and region (SkyPilot's fetcher
            # keeps one offer each), so today every cap is the 1 listing seen.
            raw = pd.read_csv(path, dtype=str, keep_default_na=False)
            country = raw["Region"].str.split(",").str[1].str.strip().str.lower()
            listings = raw.groupby([raw["InstanceType"], country]).size()
            off = off.assign(
                availability_cap_instances=[
                    int(listings.get((t, r), 1))
                    for t, r in zip(off["instance_type"], off["region"], strict=True)
                ]
            )
            off = off.sort_values(
                ["instance_type", "region", "on_demand_usd_per_hour"]
            ).drop_duplicates(["instance_type", "region"], keep="first")
            off["offering_id"] = "vast/" + off["region"] + "/" + off["instance_type"]
        if provider in {"shadeform", "primeintellect"}:
            upstream = off["instance_type"].str.split("_").str[0].map(AGGREGATOR_UPSTREAM)
            off = off.assign(provider=upstream)[upstream.notna()].copy()
            off["offering_id"] = off["provider"] + "/" + off["region"] + "/" + off["instance_type"]
            off["availability_cap_instances"] = [
                default_availability_cap(p, int(n))
                for p, n in zip(off["provider"], off["accelerators_per_instance"], strict=True)
            ]
            # One upstream type listed twice (e.g. by both aggregators) keeps the lower price.
            off = off.sort_values(["offering_id", "on_demand_usd_per_hour"]).drop_duplicates(
                "offering_id", keep="first"
            )
        if provider == "gcp":
            tpu = off["instance_type"].str.startswith("tpu-")
            off = off[~tpu | off["instance_type"].isin(GCP_TPU_KEEP)]
            off = _gcp_plausible(off)
        known = [
            _region_info(p, r) is not None
            for p, r in zip(off["provider"], off["region"], strict=True)
        ]
        off = off[np.array(known, dtype=bool)]
        frames.append(off)
    return pd.concat(frames, ignore_index=True)


def _region_info(provider: str, region: str) -> tuple[str, str, str, str] | None:
    """(country, residency zone, grid key, electricity key) of a kept region, else None."""
    if provider in REGIONS:
        return REGIONS[provider].get(region)
    country = _small_region(provider, region)
    if country is None or country not in COUNTRY:
        return None
    return (country, *COUNTRY[country])


#: Spot quotes dropped as not being spot prices. (1) A spot price equal to on-demand (within
#: 1%) is the feed repeating on-demand (e.g. all 12 Azure ND H200 v5 rows, AWS p5 in
#: ap-southeast-2 and ca-central-1), not a quoted discount. (2) On 8-accelerator instances a
#: discount above 80% sits outside the range the other snapshot rows of the same class show
#: (AWS p4de/p5, GCP a2/a3/a4, Nebius: 20% to 79% off in these files); Azure's uniform
#: 0.1848 x on-demand on ND H100 v5 / ND MI300X v5 / ND40rs v2 in every region (81.5% off)
#: is one constant ratio, not a market quote. Assumption documented in SOURCES.md.
SPOT_EQUAL_RATIO = 0.99
SPOT_MAX_DISCOUNT_8X = 0.80


def clean_spot(off: pd.DataFrame) -> pd.DataFrame:
    """Drop spot prices that equal on-demand or sit outside the published spot range."""
    off = off.copy()
    ratio = off["spot_usd_per_hour"] / off["on_demand_usd_per_hour"]
    equal = ratio >= SPOT_EQUAL_RATIO
    deep = (ratio < 1.0 - SPOT_MAX_DISCOUNT_8X) & (off["accelerators_per_instance"] >= 8)
    print(
        f"spot: dropped {int(equal.sum())} quotes equal to on-demand and {int(deep.sum())} "
        f"8-accelerator quotes more than {SPOT_MAX_DISCOUNT_8X:.0%} off"
    )
    off.loc[equal | deep, "spot_usd_per_hour"] = np.nan
    return off


_READ = "read 2026-11"
_SKY_AWS_READ = skypilot_read_day("aws")
#: LIST_PRICES source -> (price confidence, price date, the date in words, date basis); sources
#: whose provenance depends on the region or instance type are in :func:`list_price_provenance`.
LIST_PROVENANCE: dict[str, tuple[str, str, str, str]] = {
    AWS_SRC: ("third_party", _SKY_AWS_READ, skypilot_note("aws"), "read"),
    AWS_SRC_CUT: (
        "third_party",
        _SKY_AWS_READ,
        "after the June 2025 P4/P5 price cut; " + skypilot_note("aws"),
        "read",
    ),
    OCI_SRC: ("third_party", skypilot_read_day("oci"), skypilot_note("oci"), "read"),
    CW_SRC: (
        "list",
        "2026-10-10",
        f"coreweave.com/pricing as captured by a daily scrape on 2026-10-10 ({_READ})",
        "published",
    ),
    AWS_CAPACITY_BLOCK: (
        "unverified",
        "2026-07-22",
        "Capacity Block page as scraped 2026-07-22 (metadata.last_updated); a "
        "block rate used as a pay-per-use price",
        "published",
    ),
    TENSORWAVE_SRC: ("unverified", "2026-05-18", "the blog's date, 2026-05-18", "published"),
}


def list_price_provenance(src: str, region: str, itype: str) -> tuple[str, str, str, str, str]:
    """(price confidence, price date, note, date basis, source) of a hand-entered list price
    in a region.

    AWS rows once recalled, or read in one region only, are read in tsaol/aws-gpu's AWS Price
    List tables for all three US regions (``TSAOL_FILES``); the two Vantage-quoted AWS prices
    date from the second table's last check (p5en 2026-04-27, p6-b200 2026-04-29,
    SOURCES.md)."""
    if src in (AWS_SRC_PART, AWS_UNVERIFIED):
        if itype not in TSAOL_FILES:
            raise ValueError(f"{itype}: no read source for its price ({src})")
        note = f"the table file's own date, {TSAOL_DAY}"
        return "third_party", TSAOL_DAY, note, "published", tsaol_source(itype)
    if src == AWS_VANTAGE:
        day = {"p5en.48xlarge": "2026-04-27", "p6-b200.48xlarge": "2026-04-29"}[itype]
        return "unverified", day, f"a second public table's last check, {day}", "published", src
    if src.startswith(OCI_SRC):  # OCI H200 adds a note on its old price
        return (*LIST_PROVENANCE[OCI_SRC], src)
    return (*LIST_PROVENANCE[src], src)


def list_price_rows() -> pd.DataFrame:
    """Expand :data:`LIST_PRICES` to one row per region."""
    rows = []
    for provider, regions, itype, acc, n, vcpus, mem, price, net, nvlink, src in LIST_PRICES:
        for region in regions:
            rows.append(
                {
                    "offering_id": f"{provider}/{region}/{itype}",
                    "provider": provider,
                    "region": region,
                    "instance_type": itype,
                    "accelerator_id": acc,
                    "accelerators_per_instance": n,
                    "vcpus": float(vcpus),
                    "memory_gib": float(mem),
                    "on_demand_usd_per_hour": float(price),
                    "spot_usd_per_hour": np.nan,
                    "reserved_1y_usd_per_hour": np.nan,
                    "reserved_3y_usd_per_hour": np.nan,
                    "nvlink": bool(nvlink),
                    "network_gbps": float(net),
                    "availability_cap_instances": default_availability_cap(provider, n),
                    "currency": "USD",
                    **dict(
                        zip(
                            (
                                "price_confidence",
                                "price_date",
                                "price_note",
                                "price_date_basis",
                                "source",
                            ),
                            list_price_provenance(src, region, itype),
                            strict=True,
                        )
                    ),
                    "reserved_price_date": "",
                    "reserved_price_confidence": "",
                    "reserved_source": "",
                    "currency_basis": "assumed",
                }
            )
    return pd.DataFrame(rows, columns=OFFERING_COLUMNS)


def apply_reserved(off: pd.DataFrame) -> pd.DataFrame:
    """Fill 1y/3y committed prices from :data:`RESERVED_RULES`.

    A rule's fraction multiplies the row's on-demand price; a None fraction leaves the
    column empty. A matched row's ``reserved_source`` is the rule's source after "reserved: "
    (a rule with no rate at all points to SOURCES.md, to keep the catalog small); a rate from
    a published percentage is ``unverified`` and undated (no one published the price).
    A fraction outside (0, 1] is a table error (a commitment is never dearer than
    on-demand) and stops the build.
    """
    off = _with_reserved_provenance(off)
    for provider, pattern, f1, f3, src in RESERVED_RULES:
        for f in (f1, f3):
            if f is not None and not 0.0 < f <= 1.0:
                raise ValueError(f"RESERVED_RULES {provider} {pattern}: fraction {f} not in (0, 1]")
        hit = (off["provider"] == provider) & off["instance_type"].str.contains(pattern)
        for col, f in (("reserved_1y_usd_per_hour", f1), ("reserved_3y_usd_per_hour", f3)):
            off.loc[hit, col] = off.loc[hit, "on_demand_usd_per_hour"] * f if f else np.nan
        note = src if (f1 or f3) else "none published (catalogs/SOURCES.md, Commitments)"
        off.loc[hit, "reserved_source"] = "reserved: " + note
        # A published discount percentage applied to our on-demand figure is no price anyone
        # published for the row: unverified, dated by the day the percentage was read.
        off.loc[hit, "reserved_price_confidence"] = "unverified" if (f1 or f3) else ""
        off.loc[hit, "reserved_price_date"] = RULES_READ_DAY if (f1 or f3) else ""
    return off


def build_regions(off: pd.DataFrame) -> pd.DataFrame:
    """One regions.csv row per (provider, region) used in ``off``."""
    rows = []
    for provider, region in sorted(set(zip(off["provider"], off["region"], strict=True))):
        country, zone, grid_key, elec_key = _region_info(provider, region)
        grid, year, grid_src = GRID[grid_key]
        elec, elec_src = ELECTRICITY[elec_key]
        pue, pue_src = PUE[provider]
        rows.append(
            {
                "provider": provider,
                "region": region,
                "country": country,
                "residency_zone": zone,
                "grid_gco2_per_kwh": grid,
                "grid_year": year,
                "grid_source": grid_src,
                "pue": pue,
                "electricity_usd_per_kwh": elec,
                "source": f"PUE: {pue_src}; electricity: {elec_src}",
            }
        )
    return pd.DataFrame(rows)


def _fmt(value: object) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, float):
        if value != value:
            return ""
        text = f"{value:.5f}".rstrip("0").rstrip(".")
        return text if text not in {"-0", ""} else "0"
    return str(value)


def write_csv(frame: pd.DataFrame, path: Path) -> None:
    """Write ``frame`` with fixed formatting (LF endings, 5-decimal floats)."""
    text = frame.astype(object).map(_fmt)
    text.to_csv(path, index=False, lineterminator="\n")


# Scale-out network per instance, Gbit/s, where the vendor documents the fabric between
# instances (the training model's scaling efficiency depends on it; rows left empty are
# read as 100 Gbit/s Ethernet). (provider, instance-type regex, Gbit/s, source)
NETWORK_GBPS = [
    ("aws", r"^p5e?n?\.48xlarge$", 3200, "AWS EC2 P5 instances page: 3,200 Gbps EFAv2"),
    ("aws", r"^p4de?\.24xlarge$", 400, "AWS EC2 P4 instances page: 400 Gbps EFA"),
    ("aws", r"^trn1n\.32xlarge$", 1600, "AWS Trn1 page: trn1n 1,600 Gbps EFA"),
    ("aws", r"^trn1\.32xlarge$", 800, "AWS Trn1 page: 800 Gbps EFA"),
    ("aws", r"^g6e\.48xlarge$", 400, "AWS G6e page: 400 Gbps"),
    ("gcp", r"^a3-highgpu-8g", 1000, "GCP A3 machine series docs: 1,000 Gbps"),
    ("gcp", r"^a3-megagpu-8g", 1800, "GCP A3 Mega docs: 1,800 Gbps (GPUDirect-TCPXO)"),
    ("gcp", r"^a3-ultragpu-8g", 3200, "GCP A3 Ultra docs: 3,200 Gbps RDMA"),
    ("gcp", r"^a4-highgpu-8g", 3200, "GCP A4 docs: 3,200 Gbps RDMA"),
    ("azure", r"^Standard_ND96isr_H[12]00_v5$", 3200, "Azure ND H100/H200 v5 docs: 8x400 Gb/s IB"),
    ("azure", r"^Standard_ND96am?sr_A100_v4$", 1600, "Azure ND A100 v4 docs: 8x200 Gb/s IB"),
    ("azure", r"^Standard_ND96asr_v4$", 1600, "Azure ND A100 v4 docs: 8x200 Gb/s IB"),
    ("oci", r"^BM\.GPU\.(H100|H200)\.8$", 3200, "OCI GPU shapes docs: 3,200 Gbps RDMA"),
    ("oci", r"^BM\.GPU\.MI300X\.8$", 3200, "OCI GPU shapes docs: 3,200 Gbps RDMA"),
    ("oci", r"^BM\.GPU\.A100-v2\.8$", 1600, "OCI GPU shapes docs: 1,600 Gbps RDMA"),
    ("coreweave", r"^gd-8x(h100|h200)", 3200, "CoreWeave HGX docs: 8x400 Gb/s NDR IB"),
    ("coreweave", r"^gd-8xa100", 1600, "CoreWeave HGX A100 docs: 8x200 Gb/s HDR IB"),
    ("nebius", r"^gpu-(h100|h200|b200)-sxm_8gpu", 3200, "Nebius docs: 3.2 Tbit/s InfiniBand"),
]


def apply_network(off: pd.DataFrame) -> pd.DataFrame:
    """Fill ``network_gbps`` from :data:`NETWORK_GBPS` where the row has none."""
    off = off.copy()
    net = off["network_gbps"].astype(float)
    for provider, pattern, gbps, _source in NETWORK_GBPS:
        match = (off["provider"] == provider) & off["instance_type"].str.contains(pattern)
        net = net.where(~(match & net.isna()), float(gbps))
    off["network_gbps"] = net
    return off


def build(snapshot_dir: Path, out_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Build both tables and write them to ``out_dir``."""
    snap = load_snapshots(snapshot_dir)
    hand = list_price_rows()
    # Hand-entered rows win over a snapshot row with the same id.
    snap = snap[~snap["offering_id"].isin(hand["offering_id"])]
    off = pd.concat([snap, hand], ignore_index=True)
    off = apply_reserved(off)
    off = apply_commitment_prices(off)
    off = apply_network(off)
    off = clean_spot(off)
    off = drop_unstated_currencies(off)
    off = with_currencies(lambda_from_page(scaleway_from_page(seeweb_from_page(off))))
    check_dated(off)
    check_currencies(off)
    for column in (
        "on_demand_usd_per_hour",
        "spot_usd_per_hour",
        "reserved_1y_usd_per_hour",
        "reserved_3y_usd_per_hour",
        "vcpus",
        "memory_gib",
        "network_gbps",
    ):
        off[column] = off[column].astype(float).round(5)
    off["accelerators_per_instance"] = off["accelerators_per_instance"].astype(int)
    off["availability_cap_instances"] = off["availability_cap_instances"].astype(int)
    off["nvlink"] = off["nvlink"].astype(bool)
    off = off[OFFERING_COLUMNS].sort_values("offering_id", kind="stable").reset_index(drop=True)
    assert off["offering_id"].is_unique
    assert (off["spot_usd_per_hour"].fillna(0) <= off["on_demand_usd_per_hour"]).all()
    assert (off["reserved_1y_usd_per_hour"].fillna(0) <= off["on_demand_usd_per_hour"]).all()
    regions = build_regions(off)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_csv(off, out_dir / "offerings.csv")
    write_csv(regions, out_dir / "regions.csv")
    return off, regions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("snapshots", nargs="?", type=Path, default=DEFAULT_SNAPSHOTS)
    parser.add_argument("--out", type=Path, default=ROOT / "catalogs")
    args = parser.parse_args(argv)
    off, regions = build(args.snapshots, args.out)
    per = off.groupby("provider").size().to_dict()
    print(
        f"wrote {len(off)} offerings ({off['provider'].nunique()} providers: {per}), "
        f"{len(regions)} regions ({regions['residency_zone'].value_counts().to_dict()}) "
        f"to {args.out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
