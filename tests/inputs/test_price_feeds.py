"""Price feeds (issue 32 part 1): a saved response of each source -> a dated snapshot in
our price CSV format, rows mapped to the catalog's offerings where they can be.

Samples: tests/data/prices/README.md (real records of each format). Expected figures are
read off the samples by hand, in the comments."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from solver.errors import ProcureError
from solver.inputs.catalog import load_catalog
from solver.inputs.importers.feeds import (
    NOT_IN_CATALOG,
    check_snapshot_date,
    pull_prices,
)

DATA = Path(__file__).resolve().parents[1] / "data"
LAMBDA = DATA / "prices" / "lambda" / "vms.csv"
AWS = DATA / "commitments" / "aws-ec2-getproducts-m5.large.json"
AZURE = DATA / "commitments" / "azure-retail-b16als-v2-australiacentral.json"
GCP = DATA / "commitments" / "gcp-cloud-billing-a2-commit.json"
AWS_P4D = DATA / "prices" / "aws-offer" / "pricing-us-east-1.json"
GCP_A2 = DATA / "prices" / "gcp-billing" / "skus-a2-americas.json"


@pytest.fixture(scope="module")
def offerings():
    return load_catalog(None).offerings


def _price(pull, offering_id: str, mode: str) -> float:
    rows = pull.rows[(pull.rows["offering_id"] == offering_id) & (pull.rows["mode"] == mode)]
    assert len(rows) == 1, pull.rows
    return float(rows["price"].iloc[0])


def test_skypilot_rows_map_to_catalog_offerings(offerings):
    pull = pull_prices("skypilot", LAMBDA, offerings, price_date="2026-10-15")
    # 6 rows: cpu_4x_general has no accelerator (skipped); the 5 GPU rows are 5 catalog
    # offerings (lambda/<region>/<type>), on-demand only (the file quotes no spot price)
    assert pull.skipped == {"no accelerator (CPU-only or host VM row)": 1}
    assert len(pull.rows) == 5 and pull.rows["in_catalog"].all()
    assert set(pull.rows["mode"]) == {"on_demand"}
    assert pull.unmapped.empty
    v100 = pull.rows.set_index("offering_id").loc["lambda/us-east-1/gpu_8x_v100"]
    # the file's Price 4.4 for 8 V100s; the catalog's accelerator and count come along
    assert v100["price"] == pytest.approx(4.4)
    assert (v100["accelerator_id"], v100["accelerators_per_instance"]) == ("v100", 8)
    assert set(pull.rows["date"]) == {"2026-10-15"}
    # the price CSV is ours: provider, region, offering (instance type), mode, price, date
    assert list(pull.price_csv().columns) == [
        "provider",
        "region",
        "offering",
        "mode",
        "price",
        "date",
    ]


def test_aws_offer_on_demand_and_standard_no_upfront_reserved(offerings):
    pull = pull_prices("aws-offer", AWS, offerings, price_date="2026-10-15")
    # m5.large us-east-1: OnDemand $0.096/h; of its 4 reserved terms only 1yr standard No
    # Upfront ($0.060/h, no upfront fee) is the catalog's reserved_1y convention
    assert _price(pull, "aws/us-east-1/m5.large", "on_demand") == pytest.approx(0.096)
    assert _price(pull, "aws/us-east-1/m5.large", "reserved_1y") == pytest.approx(0.060)
    assert len(pull.rows) == 2
    # the GPU catalog has no m5.large: reported, with its 2 rows
    row = pull.unmapped.iloc[0]
    assert (row["what"], row["rows"], row["reason"]) == ("m5.large", 2, NOT_IN_CATALOG)


def test_azure_pay_as_you_go_and_reservation(offerings):
    pull = pull_prices("azure-retail", AZURE, offerings, price_date="2026-10-15")
    # Standard_B16als_v2 australiacentral: the Linux Consumption item $0.673/h (the Cloud
    # Services Low Priority meter is left out); the 1 Year reservation $3,478 for the term,
    # 3,478 / 8,760 h = $0.397032/h
    offering = "azure/australiacentral/Standard_B16als_v2"
    assert _price(pull, offering, "on_demand") == pytest.approx(0.673)
    assert _price(pull, offering, "reserved_1y") == pytest.approx(3478 / 8760)
    assert list(pull.unmapped["what"]) == ["Standard_B16als_v2"]


def test_gcp_resource_prices_without_a_whole_machine_are_reported(offerings):
    # one SKU: A2 vCPUs committed for 1 year in asia-east1; an a2 machine also needs its
    # memory and GPU prices, which the response does not hold: no machine is priced, so
    # there is nothing to store (an empty snapshot would become snapshot:latest) and the
    # pull is refused, naming the resource it could not use
    with pytest.raises(ProcureError) as err:
        pull_prices("gcp-billing", GCP, offerings, price_date="2026-10-15")
    assert "none of its 1 prices is an instance's price (resource A2 Cpu:" in err.value.message
    assert "nothing was stored" in err.value.message and err.value.file == str(GCP)


def test_gcp_machine_priced_from_its_parts(offerings, tmp_path):
    # a2-highgpu-1g (catalog: 12 vCPUs, 85 GiB, 1 A100 40GB) priced from three committed
    # resource prices in us-central1: the A2 Cpu SKU of the real sample moved to that
    # region ($0.0230593 per vCPU-hour), Ram and GPU SKUs made from it with round prices
    # ($0.003 per GiB-hour, $1 per GPU-hour): 12 x 0.0230593 + 85 x 0.003 + 1 x 1.0
    # = 0.2767116 + 0.255 + 1.0 = $1.5317116/h
    import json

    doc = json.loads(GCP.read_text())
    sku = doc["skus"][0]
    sku["serviceRegions"] = ["us-central1"]

    def part(name: str, nanos: int, units: str = "0") -> dict:
        copy = json.loads(json.dumps(sku))
        copy["description"] = f"Commitment v1: {name} running in Americas for 1 Year"
        rate = copy["pricingInfo"][0]["pricingExpression"]["tieredRates"][0]["unitPrice"]
        rate.update(units=units, nanos=nanos)
        return copy

    doc["skus"] += [part("A2 Ram", 3_000_000), part("Nvidia Tesla A100 GPU", 0, "1")]
    path = tmp_path / "skus.json"
    path.write_text(json.dumps(doc))
    pull = pull_prices("gcp-billing", path, offerings, price_date="2026-10-15")
    price = _price(pull, "gcp/us-central1/a2-highgpu-1g", "reserved_1y")
    assert price == pytest.approx(1.5317116)
    # every part was used by a machine: nothing is reported unmapped
    assert pull.unmapped.empty


def test_aws_offer_file_prices_a_gpu_offering(offerings):
    pull = pull_prices("aws-offer", AWS_P4D, offerings, price_date="2026-10-15")
    # two p4d.24xlarge products in us-east-1: H7NGEAC6UEHNTKSJ (RunInstances, OnDemand
    # pricePerUnit USD "32.7726000000") and YSXJGN78QTXNVGDQ (Capacity Blocks, $0.00 on
    # this term: no price, dropped). One row, a catalog offering with its 8 A100 40GB
    assert len(pull.rows) == 1 and pull.unmapped.empty
    assert _price(pull, "aws/us-east-1/p4d.24xlarge", "on_demand") == pytest.approx(32.7726)
    row = pull.rows.iloc[0]
    assert (row["in_catalog"], row["accelerator_id"], row["accelerators_per_instance"]) == (
        True,
        "a100-40gb",
        8,
    )


def test_gcp_on_demand_machine_priced_from_real_resource_skus(offerings):
    pull = pull_prices("gcp-billing", GCP_A2, offerings, price_date="2026-10-15")
    # three OnDemand SKUs, each for us-central1, us-east1 and us-west1: A100 GPU
    # units 2 + nanos 933908000 = $2.933908/h, A2 Ram $0.004237/GiB-h, A2 Core
    # $0.031611/vCPU-h. A catalog a2 machine = vCPUs x core + GiB x ram + GPUs x gpu:
    #   a2-highgpu-1g (12, 85, 1):  0.379332 + 0.360145 + 2.933908 = $3.673385
    #   a2-highgpu-8g (96, 680, 8): 3.034656 + 2.881160 + 23.471264 = $29.387080
    assert _price(pull, "gcp/us-central1/a2-highgpu-1g", "on_demand") == pytest.approx(3.673385)
    assert _price(pull, "gcp/us-west1/a2-highgpu-8g", "on_demand") == pytest.approx(29.38708)
    # the catalog's A2 machines in those regions: 1g/2g/4g/8g in each of the three, and
    # a2-megagpu-16g in us-central1 only: 13 offerings, on demand only (no commit SKU)
    assert len(pull.rows) == 13 and set(pull.rows["mode"]) == {"on_demand"}
    assert pull.rows["in_catalog"].all() and pull.unmapped.empty


def test_bad_input_is_one_clear_error(offerings, tmp_path):
    with pytest.raises(ProcureError, match="unknown price source"):
        pull_prices("ebay", LAMBDA, offerings, price_date="2026-10-15")
    with pytest.raises(ProcureError, match="no such file"):
        pull_prices("aws-offer", tmp_path / "none.json", offerings, price_date="2026-10-15")
    broken = tmp_path / "broken.json"
    broken.write_text('{"Items": [')
    with pytest.raises(ProcureError, match="not JSON"):
        pull_prices("azure-retail", broken, offerings, price_date="2026-10-15")


def test_snapshot_dates():
    today = date(2026, 11, 26)
    assert check_snapshot_date("2026-10-15", today) == "2026-10-15"
    # a price announced ahead may be dated up to 92 days after today (price_traps)
    assert check_snapshot_date("2027-02-26", today) == "2027-02-26"
    for bad in ("2099-01-01", "2001-01-01", "next week", "2026-13-01"):
        with pytest.raises(ProcureError) as err:
            check_snapshot_date(bad, today)
        assert err.value.field == "--date"
