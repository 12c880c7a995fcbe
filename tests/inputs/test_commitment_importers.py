"""Committed prices from the providers' own price file formats (issue 29 part 3): AWS
Price List offer files (Reserved Instances, Savings Plans), Azure Retail Prices API
records (reservations, savings plans), GCP Cloud Billing Catalog SKUs (committed use).
Each test reads a stored sample of real records (tests/data/commitments/README.md says
where each comes from) and states the figures the file gives."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from solver.cli import app
from solver.errors import ProcureError
from solver.inputs.catalog import load_catalog
from solver.inputs.importers.aws_prices import read_aws_ec2_offer, read_aws_savings_plan_offer
from solver.inputs.importers.azure_retail import read_azure_retail_prices
from solver.inputs.importers.committed import COMMITTED_COLUMNS, offering_rates
from solver.inputs.importers.gcp_billing import machine_usd_per_hour, read_gcp_billing_skus

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "commitments"
AWS_EC2 = DATA / "aws-ec2-getproducts-m5.large.json"
AWS_SP = DATA / "aws-compute-savings-plan.json"
AZURE = DATA / "azure-retail-b16als-v2-australiacentral.json"
GCP = DATA / "gcp-cloud-billing-a2-commit.json"


def _offerings(*ids: str) -> pd.DataFrame:
    """A catalog-like offerings table of these provider/region/instance ids."""
    rows = [
        dict(zip(("provider", "region", "instance_type"), i.split("/"), strict=True)) for i in ids
    ]
    frame = pd.DataFrame(rows)
    frame.index = pd.Index(list(ids), name="offering_id")
    return frame


def _one(rates: pd.DataFrame, **match) -> pd.Series:
    pick = rates
    for column, value in match.items():
        pick = pick[pick[column] == value]
    assert len(pick) == 1, pick
    return pick.iloc[0]


def test_aws_reserved_instances_from_an_ec2_offer_record():
    # AWS's own GetProducts record of m5.large, Linux, us-east-1 (the location "US East
    # (N. Virginia)"): on demand $0.096/h; standard RIs 1-year no upfront $0.060/h,
    # 1-year all upfront $494 / 8,760 h = $0.0563927/h, 3-year partial upfront
    # $505 / 26,280 h + $0.019/h = $0.0382161/h; a convertible 1-year no upfront $0.071/h.
    rates = read_aws_ec2_offer(AWS_EC2)
    assert list(rates.columns) == COMMITTED_COLUMNS
    assert set(rates["region"]) == {"us-east-1"} and set(rates["instance_type"]) == {"m5.large"}
    assert _one(rates, kind="on_demand")["usd_per_hour"] == pytest.approx(0.096)
    std = rates[rates["plan_type"] == "standard"]
    assert _one(std, term_years=1.0, payment_option="no_upfront")["usd_per_hour"] == 0.06
    all_up = _one(std, term_years=1.0, payment_option="all_upfront")
    assert (all_up["upfront_usd"], all_up["usd_per_hour"]) == (494.0, pytest.approx(494 / 8760))
    partial = _one(std, term_years=3.0, payment_option="partial_upfront")
    assert partial["usd_per_hour"] == pytest.approx(505 / 26280 + 0.019)
    assert _one(rates, plan_type="convertible")["usd_per_hour"] == pytest.approx(0.071)
    # matched to an offering of the same provider, region and instance type
    found = offering_rates(
        rates,
        _offerings("aws/us-east-1/m5.large", "aws/us-west-2/m5.large"),
        kind="reserved",
        term_years=1.0,
        payment_option="no_upfront",
        plan_type="standard",
    )
    assert found == {"aws/us-east-1/m5.large": 0.06}


def test_aws_savings_plan_rates_from_a_savings_plans_offer_file():
    # The 1-year All Upfront Compute Savings Plan (sku 8GU23DFTKP2N43SD) discounts
    # c5d.2xlarge in the Denver Local Zone (us-west-2-den-1) to $1.285/h; its operation
    # RunInstances:0004 is a licensed OS, not plain Linux. The 3-year plan's rate in the
    # sample is Fargate's (per vCPU-hour), not an instance's: left out.
    rates = read_aws_savings_plan_offer(AWS_SP)
    row = _one(rates, kind="savings_plan")
    assert (row["instance_type"], row["region"]) == ("c5d.2xlarge", "us-west-2-den-1")
    assert (row["term_years"], row["payment_option"], row["plan_type"]) == (
        1.0,
        "all_upfront",
        "compute",
    )
    assert row["usd_per_hour"] == pytest.approx(1.285) and row["operating_system"] == "other"
    assert row["price_date"] == "2026-06-23"
    offerings = _offerings("aws/us-west-2-den-1/c5d.2xlarge")
    # a Linux offering takes no licensed-OS rate; asked for any OS, the rate matches
    assert offering_rates(rates, offerings, kind="savings_plan", term_years=1.0) == {}
    found = offering_rates(
        rates, offerings, kind="savings_plan", term_years=1.0, operating_system=""
    )
    assert found == {"aws/us-west-2-den-1/c5d.2xlarge": pytest.approx(1.285)}


def test_azure_savings_plan_and_reservation_from_retail_prices_records():
    # Standard_B16als_v2 in australiacentral: pay as you go $0.673/h; savings plan
    # $0.49129/h (1 year) and $0.34323/h (3 years) per hour of use; a 1-year reservation
    # $3,478 for the term (the API's retailPrice, although unitOfMeasure says 1 Hour):
    # $3,478 / 8,760 h = $0.397032/h. The Low Priority meter of the older Cloud
    # Services product is another price of the same size: left out.
    rates = read_azure_retail_prices(AZURE)
    assert len(rates) == 4
    assert _one(rates, kind="on_demand")["usd_per_hour"] == pytest.approx(0.673)
    sp = rates[rates["kind"] == "savings_plan"].set_index("term_years")["usd_per_hour"]
    assert sp.to_dict() == {3.0: pytest.approx(0.34323), 1.0: pytest.approx(0.49129)}
    reserved = _one(rates, kind="reserved")
    assert reserved["upfront_usd"] == 3478.0
    assert reserved["usd_per_hour"] == pytest.approx(3478 / 8760)
    # the savings plan's 1-year discount on this size: 1 - 0.49129 / 0.673 = 27.0%
    assert 1 - sp[1.0] / 0.673 == pytest.approx(0.270, abs=5e-4)
    offerings = _offerings("azure/australiacentral/Standard_B16als_v2")
    found = offering_rates(rates, offerings, kind="savings_plan", term_years=1.0)
    assert found == {"azure/australiacentral/Standard_B16als_v2": pytest.approx(0.49129)}


def test_gcp_committed_use_from_cloud_billing_skus():
    # "Commitment v1: A2 Cpu in APAC for 1 Year" (sku 38FA-6071-3D88) in asia-east1:
    # units 0 + nanos 23,059,300 / 1e9 = $0.0230593 per vCPU-hour. Twelve A2 vCPUs (an
    # a2-highgpu-1g's) committed: 12 x 0.0230593 = $0.2767116/h. The machine's memory
    # and GPU commitments are other SKUs the sample does not hold: no machine price.
    rates = read_gcp_billing_skus(GCP)
    row = _one(rates, kind="committed_use")
    assert (row["region"], row["resource"], row["unit"]) == ("asia-east1", "A2 Cpu", "h")
    assert row["term_years"] == 1.0 and row["usd_per_hour"] == pytest.approx(0.0230593)
    assert row["price_date"] == "2023-12-20"
    cpus = machine_usd_per_hour(rates, region="asia-east1", term_years=1.0, parts={"A2 Cpu": 12})
    assert cpus == pytest.approx(12 * 0.0230593)
    whole = {"A2 Cpu": 12, "A2 Ram": 85, "Nvidia Tesla A100 GPU": 1}
    assert machine_usd_per_hour(rates, region="asia-east1", term_years=1.0, parts=whole) is None


def test_no_sample_rate_applies_to_the_shipped_catalog():
    # The samples price m5.large, c5d.2xlarge, Standard_B16als_v2 and A2 vCPUs: no GPU
    # offering of the shipped catalog, and none of the seed's providers (TensorWave,
    # Lambda, Seeweb) sells a savings plan, so the seed's plan is unchanged.
    offerings = load_catalog(ROOT / "catalogs").offerings
    for rates in (read_aws_savings_plan_offer(AWS_SP), read_azure_retail_prices(AZURE)):
        assert offering_rates(rates, offerings, kind="savings_plan", term_years=1.0) == {}
    ec2 = read_aws_ec2_offer(AWS_EC2)
    assert offering_rates(ec2, offerings, kind="reserved", term_years=1.0) == {}


@pytest.mark.parametrize(
    ("reader", "text", "words"),
    [
        (read_aws_savings_plan_offer, "{}", "no terms.savingsPlan list"),
        (read_aws_ec2_offer, "[1, 2]", "no terms"),
        (read_azure_retail_prices, '{"Items": 3}', "no Items list"),
        (read_gcp_billing_skus, "not json", "not JSON"),
    ],
)
def test_a_file_that_is_not_the_format_is_refused_by_name(tmp_path, reader, text, words):
    path = tmp_path / "prices.json"
    path.write_text(text)
    with pytest.raises(ProcureError) as info:
        reader(path)
    assert info.value.file == str(path) and words in info.value.message


def test_an_azure_price_in_another_currency_is_refused(tmp_path):
    # The API returns other currencies on request (currencyCode='EUR'); the rates here
    # are USD per hour, so a EUR record is refused with its field, not read as dollars.
    path = tmp_path / "eur.json"
    path.write_text(AZURE.read_text().replace('"currencyCode": "USD"', '"currencyCode": "EUR"'))
    with pytest.raises(ProcureError) as info:
        read_azure_retail_prices(path)
    assert info.value.field == "Items[1].currencyCode"


def test_the_cli_lists_what_a_file_states():
    result = CliRunner().invoke(
        app, ["catalog", "commitments", str(AZURE), "--format", "azure-retail"]
    )
    assert result.exit_code == 0, result.output
    assert "savings_plan 1y Standard_B16als_v2 in australiacentral compute: $0.49129/h" in (
        result.output
    )
    assert "savings plan azure 1y: 0 catalog offerings" in result.output
    bad = CliRunner().invoke(app, ["catalog", "commitments", str(AZURE), "--format", "azure"])
    assert bad.exit_code != 0 and "--format" in bad.output


def _build_offerings():
    """scripts/build_offerings.py as a module (it is a script, not part of the package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "build_offerings", ROOT / "scripts" / "build_offerings.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_reserved_prices_reach_the_catalog_through_commitment_prices(tmp_path):
    # The AWS record's reserved prices as scripts/commitment_prices.csv rows: per term the
    # no-upfront standard RI first (the catalog's convention), so 1y $0.060/h (not the
    # convertible $0.071 nor all upfront $0.0564), 3y the only standard one, partial
    # upfront $505 / 26,280 h + $0.019 = $0.038216/h; on demand $0.096 beside them.
    from solver.inputs.importers.committed import COMMITMENT_PRICE_COLUMNS, commitment_price_rows

    rows = commitment_price_rows(read_aws_ec2_offer(AWS_EC2), "aws-ec2-getproducts-m5.large")
    assert list(rows.columns) == COMMITMENT_PRICE_COLUMNS
    got = rows.set_index("term")["price_usd_per_hour"].to_dict()
    assert got == {"1y": 0.06, "3y": pytest.approx(0.038216, abs=1e-6)}
    assert set(rows["source_on_demand_usd_per_hour"]) == {0.096}
    path = tmp_path / "commitment_prices.csv"
    rows.to_csv(path, index=False)
    # scripts/build_offerings.py applies them to an offering of the same provider, region
    # and instance type whose on-demand price agrees (0.096 within 10%)
    offering = pd.DataFrame(
        [
            {
                "provider": "aws",
                "instance_type": "m5.large",
                "region": "us-east-1",
                "on_demand_usd_per_hour": 0.096,
                "reserved_1y_usd_per_hour": None,
                "reserved_3y_usd_per_hour": None,
            }
        ]
    )
    out = _build_offerings().apply_commitment_prices(offering, path)
    assert out.at[0, "reserved_1y_usd_per_hour"] == 0.06
    assert out.at[0, "reserved_3y_usd_per_hour"] == pytest.approx(0.038216, abs=1e-6)
