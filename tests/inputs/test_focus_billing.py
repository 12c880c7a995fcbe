"""FOCUS billing exports read into one table (solver/inputs/importers/focus_billing.py).

The three samples under tests/data/focus/ are the first rows of the FOCUS 1.2 cost and
usage samples of AWS, Azure and Google Cloud (tests/data/focus/README.md cites them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from solver.errors import ProcureError
from solver.inputs.importers.focus_billing import (
    BILLING_COLUMNS,
    instance_type_of,
    provider_id,
    read_focus_billing,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "focus"


@pytest.mark.parametrize(
    ("name", "provider", "rows", "effective_usd", "types"),
    [
        # AWS: RI purchase 0 + committed m6i.large 0.064032 + CloudWatch 38.556572 + Savings
        # Plan purchase 0 + committed m6i.large 0.064032 + NAT gateway 10.733402 = 49.418038
        ("aws_focus_1_2_excerpt.csv", "aws", 6, 49.418038, {"m6i.large"}),
        # Azure: 0 + 0.128064 + Log Analytics 161.842418 + D4s_v5 on demand 0.172859 + SQL
        # 0.463992 + 0 = 162.607333 (the SQL row names GP_Gen5_4 as its instance type)
        ("azure_focus_1_2_excerpt.csv", "azure", 6, 162.607333, {"Standard_D4s_v5", "GP_Gen5_4"}),
        # GCP: 0 + 0.089378 + BigQuery 268.835688 + storage 109.327974 + Cloud Run 56.470509
        # + GKE e2-standard-4 0.120962 = 434.844511
        ("gcp_focus_1_2_excerpt.csv", "gcp", 6, 434.844511, {"e2-standard-4"}),
    ],
)
def test_each_clouds_sample_reads_without_loss_of_rows(name, provider, rows, effective_usd, types):
    frame = read_focus_billing(DATA / name)
    assert list(frame.columns) == list(BILLING_COLUMNS)
    assert len(frame) == rows  # every data row of the file, none summed or dropped
    assert list(frame["row"]) == list(range(1, rows + 1))
    assert set(frame["provider"]) == {provider}
    assert set(frame["month"]) == {"2026-05"}  # every ChargePeriodStart is in May 2026
    assert frame["cost"].sum() == pytest.approx(effective_usd, abs=1e-9)
    assert set(frame["instance_type"]) - {""} == types
    # Committed rows are reserved usage; purchases and storage rows carry no hours
    committed = frame[frame["pricing"] == "reserved"]
    assert len(committed) == (2 if provider == "aws" else 1)
    assert (committed["hours"] == 1.0).all()  # each covers one instance-hour
    assert (frame.loc[frame["charge_category"] == "Purchase", "hours"] == 0).all()


def test_provider_names_and_quirks():
    # FOCUS ProviderName is a display name: Azure's exports say "Microsoft", sample data
    # "Microsoft Azure"; our own export writes "Seeweb", "Lambda"
    assert provider_id("AWS") == "aws"
    assert provider_id("Amazon Web Services") == "aws"
    assert provider_id("Microsoft") == "azure" and provider_id("Microsoft Azure") == "azure"
    assert provider_id("Google Cloud") == "gcp"
    assert provider_id("Massed Compute") == "massedcompute"
    # the instance type, where each provider puts it
    assert instance_type_of({"x_UsageType": "USE1-BoxUsage:p5.48xlarge"}) == "p5.48xlarge"
    assert instance_type_of({"x_UsageType": "USW2-SpotUsage:g6.xlarge"}) == "g6.xlarge"
    assert instance_type_of({"x_UsageType": "USE1-DataTransfer-Out-Bytes"}) == ""
    azure = {"x_SkuDetails": '{"ServiceType": "Standard_ND96isr_H100_v5", "VCPUs": 96}'}
    assert instance_type_of(azure) == "Standard_ND96isr_H100_v5"
    assert instance_type_of({"SkuPriceDetails": '{"InstanceType": "a3-highgpu-8g"}'}) == (
        "a3-highgpu-8g"
    )
    assert instance_type_of({"SkuPriceDetails": "not json", "x_InstanceType": "a2"}) == "a2"


# An AWS "FOCUS 1.0 with AWS columns" row built from the AWS table dictionary (no public
# sample of that export holds a GPU instance): the instance type only in x_UsageType
AWS_ROW = (
    "ProviderName,BillingCurrency,ChargePeriodStart,ChargeCategory,EffectiveCost,"
    "PricingQuantity,PricingUnit,RegionId,SkuId,PricingCategory,x_UsageType\n"
    "AWS,USD,2027-01-03T00:00:00Z,Usage,98.32,1,Hrs,us-east-1,ABCD,Standard,"
    "USE1-BoxUsage:p5.48xlarge\n"
)


def test_an_aws_export_with_the_instance_type_in_its_usage_type(tmp_path):
    path = tmp_path / "cur.csv"
    path.write_text(AWS_ROW)
    frame = read_focus_billing(path)
    row = frame.iloc[0]
    assert (row.provider, row.region, row.instance_type) == ("aws", "us-east-1", "p5.48xlarge")
    assert (row.month, row.pricing, row.hours, row.cost) == ("2027-01", "on_demand", 1.0, 98.32)


def test_bad_billing_files_name_the_file_the_field_and_the_fix(tmp_path):
    missing = tmp_path / "no_cost.csv"
    missing.write_text(AWS_ROW.replace("EffectiveCost", "Cost"))
    with pytest.raises(ProcureError) as err:
        read_focus_billing(missing)
    text = str(err.value)
    assert "no_cost.csv: EffectiveCost" in text and "fix:" in text
    bad_number = tmp_path / "bad_number.csv"
    bad_number.write_text(AWS_ROW.replace("98.32", "98.32 USD"))
    with pytest.raises(ProcureError) as err:
        read_focus_billing(bad_number)
    assert "bad_number.csv: row 1, EffectiveCost" in str(err.value)
    bad_currency = tmp_path / "bad_currency.csv"
    bad_currency.write_text(AWS_ROW.replace("AWS,USD", "AWS,dollars"))
    with pytest.raises(ProcureError) as err:
        read_focus_billing(bad_currency)
    assert "row 1, BillingCurrency" in str(err.value)
    bad_date = tmp_path / "bad_date.csv"
    bad_date.write_text(AWS_ROW.replace("2027-01-03T00:00:00Z", "soon"))
    with pytest.raises(ProcureError) as err:
        read_focus_billing(bad_date)
    assert "row 1, ChargePeriodStart" in str(err.value)
