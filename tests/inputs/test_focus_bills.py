"""Several FOCUS exports read as one set of charges (solver/inputs/importers/focus_bills.py).

The samples are tests/data/focus/ (their README cites the FOCUS 1.2 sample data)."""

from __future__ import annotations

from pathlib import Path

import pytest

from solver.errors import ProcureError
from solver.inputs.importers.focus_bills import read_focus_bills

DATA = Path(__file__).resolve().parents[1] / "data" / "focus"
AWS = DATA / "aws_focus_1_2_excerpt.csv"
AZURE = DATA / "azure_focus_1_2_excerpt.csv"
GCP = DATA / "gcp_focus_1_2_excerpt.csv"


def test_three_clouds_samples_have_no_duplicates():
    # tests/inputs/test_focus_billing.py: EffectiveCost 49.418038 (AWS) + 162.607333
    # (Azure) + 434.844511 (GCP) = 646.869882 over 18 rows, none alike
    bills = read_focus_bills([AWS, AZURE, GCP])
    assert len(bills.rows) == 18 and bills.dropped == 0 and bills.duplicates == []
    assert bills.rows["cost"].sum() == pytest.approx(646.869882, abs=1e-9)
    assert len(set(bills.digests.values())) == 3


def test_a_sample_passed_twice_and_renamed_is_counted_once(tmp_path):
    # The AWS sample, a copy under another name with its rows reversed, and the sample
    # again: the copy's and the repeat's 6 rows are dropped (the same bill digest). Still
    # 6 rows, $49.418038. Then an export of the same charges in another flavour (dates as
    # "2026-05-01 00:00:00+00:00", an x_ column added): the same identity (dates as
    # instants, x_ columns left out) and amounts, so dropped too.
    lines = AWS.read_text().splitlines()
    header, rows = lines[0], lines[1:]
    copy = tmp_path / "renamed.csv"
    copy.write_text("\n".join([header, *rows[::-1]]) + "\n")
    bills = read_focus_bills([AWS, copy, AWS])
    assert len(bills.rows) == 6
    assert bills.rows["cost"].sum() == pytest.approx(49.418038, abs=1e-9)
    assert bills.duplicates == [
        {"file": str(copy), "rows": 6, "duplicate_of": [str(AWS)], "same_bill_as": str(AWS)},
        {"file": str(AWS), "rows": 6, "duplicate_of": [str(AWS)], "same_bill_as": str(AWS)},
    ]
    other = tmp_path / "other-flavour.csv"
    text = AWS.read_text().replace("2026-05-01T00:00:00Z", "2026-05-01 00:00:00+00:00")
    head, *rows = text.splitlines()
    other.write_text("\n".join([head + ",x_Operation", *(r + ",RunInstances" for r in rows)]))
    bills = read_focus_bills([AWS, other])
    assert len(bills.rows) == 6 and bills.dropped == 6


def test_a_revised_export_of_the_same_charges_is_refused(tmp_path):
    # The GCP sample's BigQuery row (row 3, $268.835688) at $270.00 in a later export:
    # the same charge with two amounts, refused with both rows named.
    revised = tmp_path / "revised.csv"
    revised.write_text(GCP.read_text().replace("268.835688,268.835688", "268.835688,270.00"))
    with pytest.raises(ProcureError) as err:
        read_focus_bills([GCP, revised])
    text = str(err.value)
    assert "revised.csv: row 3" in text and "gcp_focus_1_2_excerpt.csv row 3" in text
    assert "EffectiveCost 270 here, 268.836 there" in text


def test_one_file_may_split_a_charge(tmp_path):
    # Within one file two rows of one FOCUS identity and other amounts are both counted
    # (the provider splits the charge finer than its columns show): 2 rows, $3.
    bill = tmp_path / "split.csv"
    head = "ProviderName,BillingCurrency,ChargePeriodStart,ChargeCategory,EffectiveCost,"
    head += "PricingQuantity,PricingUnit,RegionId\n"
    bill.write_text(
        head + "AWS,USD,2027-01-01,Usage,1,1,Hours,us-east-1\n"
        "AWS,USD,2027-01-01,Usage,2,2,Hours,us-east-1\n"
    )
    bills = read_focus_bills([bill])
    assert len(bills.rows) == 2 and bills.rows["cost"].sum() == 3.0
