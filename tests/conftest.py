"""Shared fixtures: a tiny catalog with round numbers for hand-worked tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from solver.catalog import SCHEMAS, load_catalog

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"

# Two real accelerators (figures from catalogs/accelerators.csv sources), one fictional
# provider "acme" with round prices so optima can be worked out by hand.
# One online workload the tiny catalog serves (an H100 holds 1,000 tok/s of Llama 3 8B at a
# 50 ms TPOT): the body of many test problems' ``workloads:`` list.
CHAT_WORKLOAD = """\
  - kind: inference
    name: chat
    model: llama-3-8b
    demand: {tokens_per_s: 1000}
    prompt_tokens: 500
    output_tokens: 200
    ttft_slo: 1 s
    tpot_slo: 50 ms
"""

TINY_ACCELERATORS = [
    dict(
        accelerator_id="h100-sxm",
        name="NVIDIA H100 SXM",
        vendor="nvidia",
        aliases="H100;H100 SXM5 80GB",
        device_class="datacenter",
        bf16_dense_tflops=989.4,
        fp8_dense_tflops=1978.9,
        int8_dense_tops=1978.9,
        memory_gb=80,
        mem_bandwidth_gbps=3350,
        scaleup_link="NVLink 4",
        scaleup_gbps=900,
        tdp_w=700,
        ecc=True,
        frameworks="pytorch;jax",
        purchase_price_usd=30000,
        embodied_kgco2e=164,
        source="test",
    ),
    dict(
        accelerator_id="l4",
        name="NVIDIA L4",
        vendor="nvidia",
        aliases="L4",
        device_class="datacenter",
        bf16_dense_tflops=121,
        fp8_dense_tflops=242.5,
        int8_dense_tops=242.5,
        memory_gb=24,
        mem_bandwidth_gbps=300,
        scaleup_link="PCIe Gen4",
        scaleup_gbps=0,
        tdp_w=72,
        ecc=True,
        frameworks="pytorch;jax",
        purchase_price_usd=2500,
        embodied_kgco2e=30,
        source="test",
    ),
]


def offering(
    instance: str,
    acc: str,
    n: int,
    od: float,
    spot: float | None = None,
    r1: float | None = None,
    r3: float | None = None,
    region: str = "us-east",
    provider: str = "acme",
    cap: int = 100,
    nvlink: bool = True,
) -> dict:
    return dict(
        offering_id=f"{provider}/{region}/{instance}",
        provider=provider,
        region=region,
        instance_type=instance,
        accelerator_id=acc,
        accelerators_per_instance=n,
        vcpus=8,
        memory_gib=64,
        on_demand_usd_per_hour=od,
        spot_usd_per_hour=spot,
        reserved_1y_usd_per_hour=r1,
        reserved_3y_usd_per_hour=r3,
        nvlink=nvlink,
        network_gbps=3200,
        availability_cap_instances=cap,
        price_date="2026-11-22",
        source="test",
    )


TINY_REGIONS = [
    dict(
        provider="acme",
        region="us-east",
        country="US",
        residency_zone="us",
        grid_gco2_per_kwh=400,
        grid_year=2023,
        grid_source="test",
        pue=1.0,
        electricity_usd_per_kwh=0.1,
        source="test",
    ),
    dict(
        provider="acme",
        region="eu-north",
        country="SE",
        residency_zone="eu",
        grid_gco2_per_kwh=40,
        grid_year=2023,
        grid_source="test",
        pue=1.0,
        electricity_usd_per_kwh=0.1,
        source="test",
    ),
]
TINY_SERVERS = [
    dict(
        server_id="box-h100",
        name="8x H100 box",
        accelerator_id="h100-sxm",
        accelerators_per_server=8,
        capex_usd=200000,
        power_kw=10,
        lead_time_days=0,
        lifetime_years=5,
        maintenance_usd_per_year=0,
        nvlink=True,
        network_gbps=3200,
        embodied_kgco2e=2000,
        source="test",
    ),
]
TINY_SITES = [
    dict(
        site_id="colo-us",
        name="Test colo",
        kind="colocation",
        country="US",
        residency_zone="us",
        grid_gco2_per_kwh=400,
        grid_year=2023,
        grid_source="test",
        pue=1.0,
        electricity_usd_per_kwh=0.0,
        colocation_usd_per_kw_month=0.0,
        power_cap_kw=1000,
        source="test",
    ),
]


def write_catalog(
    directory: Path,
    offerings: list[dict],
    *,
    accelerators=None,
    regions=None,
    servers=None,
    sites=None,
) -> Path:
    """Write a catalog folder (models.csv copied from the shipped catalog)."""
    directory.mkdir(parents=True, exist_ok=True)
    tables = {
        "accelerators.csv": accelerators or TINY_ACCELERATORS,
        "offerings.csv": offerings,
        "regions.csv": regions or TINY_REGIONS,
        "servers.csv": TINY_SERVERS if servers is None else servers,
        "sites.csv": sites or TINY_SITES,
    }
    for file, rows in tables.items():
        frame = pd.DataFrame(rows, columns=list(rows[0]) if rows else list(SCHEMAS[file]))
        frame.to_csv(directory / file, index=False)
    shutil.copy(ROOT / "catalogs" / "models.csv", directory / "models.csv")
    return directory


@pytest.fixture
def tiny_catalog(tmp_path):
    """A loader: tiny_catalog(offerings, **tables) -> Catalog."""

    def make(offerings: list[dict], **tables):
        return load_catalog(write_catalog(tmp_path / "catalog", offerings, **tables))

    return make
