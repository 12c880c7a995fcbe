"""Tests for solver.inputs.importers.skypilot (SkyPilot vms.csv -> offerings)."""
# ruff: noqa: E501  (the hand-written CSV fixtures keep their real line lengths)

from __future__ import annotations

import csv
import math
from pathlib import Path

import pandas as pd
import pytest

from solver.errors import ProcureError
from solver.inputs.catalog import SCHEMAS
from solver.inputs.importers.skypilot import (
    OFFERING_COLUMNS,
    SKIP_CPU,
    SKIP_FRACTION,
    SKIP_NO_HOST,
    SKIP_PRICE,
    SKIP_SPOT,
    map_accelerator,
    read_skypilot_vms,
)

SNAPSHOTS = Path(__file__).resolve().parents[2].parent / "shared/data/external/skypilot-catalog"


def _write(tmp_path: Path, name: str, text: str, crlf: bool = False) -> Path:
    path = tmp_path / name
    body = text.strip("\n") + "\n"
    path.write_bytes(body.replace("\n", "\r\n" if crlf else "\n").encode())
    return path


def _row(result, offering_id: str) -> pd.Series:
    off = result.offerings.set_index("offering_id")
    return off.loc[offering_id]


AWS = """
InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone,Arch
p5.48xlarge,H100,8.0,192.0,2048.0,"{'Gpus': [{'Name': 'H100', 'Count': 8, 'MemoryInfo': {'SizeInMiB': 81920}}]}",55.04,20.0,us-east-1,use1-az1,x86_64
p5.48xlarge,H100,8.0,192.0,2048.0,"{'Gpus': [{'Name': 'H100', 'Count': 8, 'MemoryInfo': {'SizeInMiB': 81920}}]}",55.04,30.0,us-east-1,use1-az2,x86_64
p5.48xlarge,H100,8.0,192.0,2048.0,"{'Gpus': [{'Name': 'H100', 'Count': 8, 'MemoryInfo': {'SizeInMiB': 81920}}]}",55.04,40.0,us-east-1,use1-az4,x86_64
g5.xlarge,A10G,1.0,4.0,16.0,,1.006,,us-east-1,use1-az1,x86_64
p4d.24xlarge,A100,8.0,96.0,1152.0,,21.96,25.0,us-west-2,usw2-az1,x86_64
m5.large,,,2.0,8.0,,0.096,0.03,us-east-1,use1-az1,x86_64
p2.xlarge,K80,1.0,4.0,61.0,,0.9,0.3,us-east-1,use1-az1,x86_64
g4dn.xlarge,T4,1.0,4.0,16.0,,,0.2,us-east-1,use1-az1,x86_64
"""


def test_aws_like_availability_zones_are_aggregated(tmp_path: Path) -> None:
    result = read_skypilot_vms(_write(tmp_path, "aws.csv", AWS), "aws", price_date="2026-11")
    off = result.offerings
    assert list(off.columns) == OFFERING_COLUMNS
    assert off["offering_id"].is_unique
    # p5: three AZ rows, on-demand 55.04 in each -> 55.04; spot median(20, 30, 40) = 30.
    p5 = _row(result, "aws/us-east-1/p5.48xlarge")
    assert p5["accelerator_id"] == "h100-sxm"
    assert p5["accelerators_per_instance"] == 8
    assert p5["on_demand_usd_per_hour"] == pytest.approx(55.04)
    assert p5["spot_usd_per_hour"] == pytest.approx(30.0)
    assert bool(p5["nvlink"]) is True
    assert math.isnan(p5["reserved_1y_usd_per_hour"])
    assert p5["price_date"] == "2026-11"
    # g5: one AZ, no spot quoted -> spot empty; a single PCIe card -> no NVLink.
    g5 = _row(result, "aws/us-east-1/g5.xlarge")
    assert g5["accelerator_id"] == "a10g" and math.isnan(g5["spot_usd_per_hour"])
    assert bool(g5["nvlink"]) is False
    # p4d: spot 25.0 above on-demand 21.96 -> spot dropped, row kept.
    p4d = _row(result, "aws/us-west-2/p4d.24xlarge")
    assert p4d["accelerator_id"] == "a100-40gb" and math.isnan(p4d["spot_usd_per_hour"])
    assert result.skipped[SKIP_SPOT] == 1
    # m5 (CPU only) skipped, K80 unmapped, g4dn without a price skipped.
    assert result.skipped[SKIP_CPU] == 1
    assert result.unmapped == {"K80": 1}
    assert result.skipped[SKIP_PRICE] == 1
    assert len(off) == 3


GCP = """
InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,Price,SpotPrice
a3-highgpu-8g,208.0,1872.0,,,,us-east4,us-east4-a,9.46006,3.86318
a3-highgpu-8g,208.0,1872.0,,,,us-east4,us-east4-b,9.46006,3.86318
n1-standard-8,8.0,30.0,,,,us-central1,us-central1-a,0.38,0.08
,,,H100,8,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 81920}}]},us-east4,us-east4-a,78.37241,23.9136
,,,H100,8,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 81920}}]},us-east4,us-east4-b,78.37241,25.9136
,,,H100,8,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 81920}}]},us-east4,us-east4-c,78.37241,23.9136
,,,T4,1,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 16384}}]},us-central1,us-central1-a,0.35,0.15
,,,tpu-v5p-8,1,tpu-v5p-8,us-east5,us-east5-a,16.8,6.72
,,,tpu-v5litepod-4,1,tpu-v5litepod-4,us-west4,us-west4-a,4.8,2.4
,,,tpu-v4-8,1,tpu-v4-8,us-central2,us-central2-b,12.88,3.86
"""


def test_gcp_host_plus_gpu_split(tmp_path: Path) -> None:
    result = read_skypilot_vms(_write(tmp_path, "gcp.csv", GCP, crlf=True), "gcp")
    # a3-highgpu-8g: host 9.46006 + GPU 78.37241 = 87.83247 in zones a and b;
    # zone c has no host row -> skipped. Spot: (3.86318+23.9136, 3.86318+25.9136)
    # -> median = 3.86318 + 24.9136 = 28.77678.
    a3 = _row(result, "gcp/us-east4/a3-highgpu-8g")
    assert a3["accelerator_id"] == "h100-sxm" and a3["accelerators_per_instance"] == 8
    assert a3["on_demand_usd_per_hour"] == pytest.approx(87.83247)
    assert a3["spot_usd_per_hour"] == pytest.approx(28.77678)
    assert a3["vcpus"] == 208 and bool(a3["nvlink"]) is True
    assert result.skipped[SKIP_NO_HOST] == 1
    # T4 x1 on an n1-standard-8: 0.38 + 0.35 = 0.73 on-demand, 0.08 + 0.15 = 0.23 spot.
    t4 = _row(result, "gcp/us-central1/n1-standard-8+1xT4")
    assert t4["accelerator_id"] == "t4"
    assert t4["on_demand_usd_per_hour"] == pytest.approx(0.73)
    assert t4["spot_usd_per_hour"] == pytest.approx(0.23)
    # TPU rows priced as they stand; v5p-8 counts 8 TensorCores = 4 chips.
    v5p = _row(result, "gcp/us-east5/tpu-v5p-8")
    assert (v5p["accelerator_id"], v5p["accelerators_per_instance"]) == ("tpu-v5p", 4)
    assert v5p["on_demand_usd_per_hour"] == pytest.approx(16.8)
    v5e = _row(result, "gcp/us-west4/tpu-v5litepod-4")
    assert (v5e["accelerator_id"], v5e["accelerators_per_instance"]) == ("tpu-v5e", 4)
    assert result.unmapped == {"tpu-v4-8": 1}


AZURE = """
InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,Generation
Standard_NC24ads_A100_v4,A100-80GB,1,24,220,A100-80GB,3.673,0.9,eastus,V1,V2
Standard_ND96isr_H100_v5,H100,8,96,1900,H100,98.32,18.169536,eastus,V2
Standard_NC40ads_H100_v5,H100,1,40,320,H100,6.98,1.3,eastus,V2
Standard_NV6ads_A10_v5,A10,0.167,6,55,A10,0.454,0.09,eastus,V1,V2
Standard_D2s_v5,,,2,8,,0.096,0.02,eastus,V1,V2
"""


def test_azure_unquoted_generation_and_fractional_counts(tmp_path: Path) -> None:
    result = read_skypilot_vms(_write(tmp_path, "azure.csv", AZURE, crlf=True), "azure")
    # The V1,V2 row has 11 fields: prices must still come from the right columns.
    a100 = _row(result, "azure/eastus/Standard_NC24ads_A100_v4")
    # NC A100 v4 carries the A100 80GB PCIe card (Azure NC A100 v4-series docs), not SXM4.
    assert a100["accelerator_id"] == "a100-80gb-pcie"
    assert a100["on_demand_usd_per_hour"] == pytest.approx(3.673)
    assert a100["spot_usd_per_hour"] == pytest.approx(0.9)
    assert bool(a100["nvlink"]) is False
    nd = _row(result, "azure/eastus/Standard_ND96isr_H100_v5")
    assert nd["accelerator_id"] == "h100-sxm" and bool(nd["nvlink"]) is True
    # NCads H100 v5 carries the H100 NVL card.
    assert _row(result, "azure/eastus/Standard_NC40ads_H100_v5")["accelerator_id"] == "h100-nvl"
    # 1/6 of an A10 cannot be an offering.
    assert result.skipped[SKIP_FRACTION] == 1
    assert result.skipped[SKIP_CPU] == 1
    assert len(result.offerings) == 3


LAMBDA = """
InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice
gpu_8x_a100_80gb_sxm4,A100-80GB,8.0,240.0,1800.0,14.32,us-east-1,"{""Gpus"": [{""Name"": ""A100"", ""Count"": 8, ""MemoryInfo"": {""SizeInMiB"": 81920}}]}",
gpu_1x_a100,A100,1.0,30.0,200.0,1.29,us-east-1,"{'Gpus': [{'Name': 'A100', 'MemoryInfo': {'SizeInMiB': 40960}}]}",
gpu_1x_h100_pcie,H100,1.0,26.0,200.0,2.49,us-east-1,,
gpu_1x_a100_big,A100,1.0,30.0,200.0,1.79,us-west-1,"{""Gpus"": [{""Name"": ""A100"", ""Count"": 1, ""MemoryInfo"": {""SizeInMiB"": 81920}}]}",
gpu_1x_h100_sxm5,H100,1.0,26.0,225.0,,us-east-1,,1.10
"""


def test_json_gpuinfo_hints_and_missing_price(tmp_path: Path) -> None:
    result = read_skypilot_vms(_write(tmp_path, "lambda.csv", LAMBDA), "lambda")
    off = result.offerings.set_index("offering_id")["accelerator_id"].to_dict()
    assert off == {
        "lambda/us-east-1/gpu_1x_a100": "a100-40gb",
        "lambda/us-east-1/gpu_1x_h100_pcie": "h100-pcie",
        "lambda/us-east-1/gpu_8x_a100_80gb_sxm4": "a100-80gb",
        "lambda/us-west-1/gpu_1x_a100_big": "a100-80gb",  # 80 GB from JSON GpuInfo
    }
    assert result.skipped[SKIP_PRICE] == 1


def test_output_fits_the_offerings_schema(tmp_path: Path) -> None:
    result = read_skypilot_vms(_write(tmp_path, "aws.csv", AWS), "aws")
    for column in SCHEMAS["offerings.csv"]:
        assert column in result.offerings.columns
    assert (result.offerings["availability_cap_instances"] >= 0).all()


def test_name_table_examples() -> None:
    assert map_accelerator("H100-MEGA", "a3-megagpu-8g", "gcp") == ("h100-sxm", 1)
    assert map_accelerator("tpu-v5litepod-8", "", "gcp", count=1) == ("tpu-v5e", 8)
    assert map_accelerator("tpu-v5p-16", "", "gcp", count=1) == ("tpu-v5p", 8)
    assert map_accelerator("RTX6000-Ada", "", "runpod")[0] == "rtx-6000-ada"
    assert map_accelerator("Inferentia2", "inf2.xlarge", "aws")[0] == "inferentia2"
    assert map_accelerator("RTX6000", "gpu_1x_rtx6000", "lambda") == (None, None)


# RunPod v6 rows as in skypilot-catalog v6 runpod/vms.csv@098741e7 (prices shortened): the
# plain "H100" and "A100-80GB" pods are the PCIe cards; the SXM parts are named "-SXM".
RUNPOD = """
InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Region,SpotPrice,Price
1x_H100_SECURE,H100,1,16,80,H100,US,,4.49
2x_H100_SECURE,H100,2,32,160,H100,US,,8.98
1x_H100-SXM_SECURE,H100-SXM,1,16,80,H100-SXM,US,,4.69
1x_A100-80GB_SECURE,A100-80GB,1,8,80,A100-80GB,US,,1.99
2x_A100-80GB-SXM_SECURE,A100-80GB-SXM,2,16,160,A100-80GB-SXM,US,,4.58
"""


def test_runpod_pcie_cards_are_not_sxm(tmp_path: Path) -> None:
    result = read_skypilot_vms(_write(tmp_path, "runpod.csv", RUNPOD), "runpod")
    expect = {
        "runpod/US/1x_H100_SECURE": ("h100-pcie", False),
        "runpod/US/2x_H100_SECURE": ("h100-pcie", False),  # PCIe pair: no NVLink fabric
        "runpod/US/1x_H100-SXM_SECURE": ("h100-sxm", False),
        "runpod/US/1x_A100-80GB_SECURE": ("a100-80gb-pcie", False),
        "runpod/US/2x_A100-80GB-SXM_SECURE": ("a100-80gb", True),
    }
    for offering_id, (acc, nvlink) in expect.items():
        row = _row(result, offering_id)
        assert (row["accelerator_id"], bool(row["nvlink"])) == (acc, nvlink), offering_id
    # The same name on another provider keeps SkyPilot's meaning (SXM, e.g. GCP a3).
    assert map_accelerator("H100", "a3-highgpu-8g", "gcp")[0] == "h100-sxm"
    assert map_accelerator("A100-80G-PCIe", "n3-A100x1", "hyperstack")[0] == "a100-80gb-pcie"


def test_tpu_v6e_slices_count_chips() -> None:
    # cloud.google.com/tpu/docs/v6e: one TensorCore per v6e chip, so tpu-v6e-N is N chips
    # (v5p counts 2 TensorCores per chip: tpu-v5p-128 is 64 chips).
    assert map_accelerator("tpu-v6e-8", "", "gcp", count=1) == ("tpu-v6e", 8)
    assert map_accelerator("tpu-v5p-128", "", "gcp", count=1) == ("tpu-v5p", 64)


def test_not_a_skypilot_file(tmp_path: Path) -> None:
    with pytest.raises(ProcureError):
        read_skypilot_vms(_write(tmp_path, "x.csv", "a,b\n1,2"), "aws")


def _provider_for(path: Path) -> str:
    parts = path.parts
    if "runpod-pod-catalog" in parts:
        return "runpod"
    return parts[-2].replace("_EXCERPT", "")


def test_every_snapshot_file_reads(capsys: pytest.CaptureFixture[str]) -> None:
    if not SNAPSHOTS.is_dir():
        pytest.skip(f"SkyPilot snapshots not present at {SNAPSHOTS}")
    files = sorted(SNAPSHOTS.rglob("vms.csv"))
    if not files:
        pytest.skip("no vms.csv under the snapshot folder")
    report = []
    for path in files:
        result = read_skypilot_vms(path, _provider_for(path))
        with path.open(newline="") as fh:
            reader = csv.reader(fh)
            col = next(reader).index("AcceleratorName")
            has_gpu = any(len(r) > col and r[col].strip() for r in reader)
        if has_gpu:
            assert len(result.offerings) > 0, f"no offering mapped from {path}"
        assert result.offerings["offering_id"].is_unique, path
        off = result.offerings
        assert (off["on_demand_usd_per_hour"] > 0).all(), path
        assert (off["spot_usd_per_hour"].fillna(0) <= off["on_demand_usd_per_hour"]).all(), path
        report.append(
            f"{path.relative_to(SNAPSHOTS)}: {len(off)} offerings; unmapped {result.unmapped}"
        )
    with capsys.disabled():
        print("\n" + "\n".join(report))
