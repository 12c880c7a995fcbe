"""FOCUS 1.3 out: one test per requirement of the specification that the columns and the
Contract Commitment dataset procure writes must meet, each citing its requirement; the
contract commitments of hand-worked plans.

Requirements are cited by their section of FOCUS 1.3 (https://focus.finops.org/
focus-specification/v1-3/): "Columns > <Column>" for Cost and Usage, "Contract
Commitment > <Column>" for the 1.3 dataset, "Attributes > <Attribute>" for the rules
every column follows. The checks here read the exported CSV back as a consumer would and
test the rule directly (not through :func:`solver.outputs.focus.validate_focus`).
"""

from __future__ import annotations

import io
import json
from datetime import date

import pandas as pd
import pytest
from typer.testing import CliRunner

from conftest import ROOT, write_catalog
from solver.cli import app
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import load_problem
from solver.outputs.focus import focus_csv, focus_frame
from solver.outputs.focus_contracts import contract_commitment_frame
from solver.outputs.focus_schema import (
    CONTRACT_COMMITMENT_COLUMNS,
    FOCUS_1_2_COLUMNS,
    FOCUS_1_3_ABSENT,
    SKU_PRICE_DETAILS_KEYS,
)
from solver.outputs.focus_validate import validate_contract_commitments, validate_focus
from solver.solve import solve_problem
from tests.outputs.test_orders_and_focus import H1, START, yearly_problem

DATE = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$"


def _read(text: str) -> pd.DataFrame:
    """A FOCUS CSV read back as a consumer reads it: nulls as empty cells."""
    return pd.read_csv(io.StringIO(text), keep_default_na=False, na_values=[""], dtype=str)


@pytest.fixture(scope="module")
def seed_rows(seed_plan):
    p = load_problem(ROOT / "problems" / "seed-2m-13b.yaml")
    return _read(focus_csv(focus_frame(seed_plan, p, load_catalog(), START)))


@pytest.fixture(scope="module")
def yearly_rows(tmp_path_factory):
    """The yearly plan of test_orders_and_focus (one $200,000 box bought in y1, one H100
    reserved for a year at a time, $3/h) as FOCUS 1.3 cost rows and contract commitments."""
    cat = load_catalog(write_catalog(tmp_path_factory.mktemp("tiny") / "catalog", [H1]))
    p = yearly_problem()
    plan = solve_problem(p, cat)
    assert plan.total_cost_usd == pytest.approx(278_840)
    frame = focus_frame(plan, p, cat, START)
    return _read(focus_csv(frame)), _read(focus_csv(contract_commitment_frame(frame)))


# --------------------------------------------------------------------------- presence

#: (column, section): every column FOCUS 1.3 says MUST be present in Cost and Usage.
MANDATORY = [
    (c, f"Columns > {c}: the column MUST be present in a FOCUS dataset")
    for c in (
        "BilledCost",
        "BillingAccountId",
        "BillingAccountName",
        "BillingCurrency",
        "BillingPeriodEnd",
        "BillingPeriodStart",
        "ChargeCategory",
        "ChargeClass",
        "ChargeDescription",
        "ChargePeriodEnd",
        "ChargePeriodStart",
        "ContractedCost",
        "EffectiveCost",
        "HostProviderName",
        "InvoiceIssuerName",
        "ListCost",
        "PricingQuantity",
        "PricingUnit",
        "ServiceCategory",
        "ServiceName",
        "ServiceProviderName",
    )
]


@pytest.mark.parametrize(("column", "requirement"), MANDATORY, ids=[m[0] for m in MANDATORY])
def test_mandatory_column_is_present(seed_rows, column, requirement):
    assert column in seed_rows.columns, requirement


def test_every_absent_1_3_column_is_conditional_on_a_feature_a_plan_lacks(seed_rows):
    # The 1.3 Cost and Usage set is 65 columns (the FinOps data model as focus-data-toolkit
    # ships it); the export writes 46 of them, ProviderName and PublisherName among them
    # ("Columns > ProviderName: deprecated in 1.3", kept until 1.4). Each of the 19 absent
    # is Conditional or Recommended and its condition is not met by a plan ("Attributes >
    # Column Handling: conditional columns MUST be present when the provider supports the
    # feature").
    from focus_data_toolkit.schema.registry import mandatory_columns, version_columns

    focus_columns = version_columns("Cost and Usage", "1.3")
    assert len(focus_columns) == 65
    absent = focus_columns - set(seed_rows.columns)
    assert absent == set(FOCUS_1_3_ABSENT) and len(absent) == 19
    assert not absent & mandatory_columns("Cost and Usage", "1.3")


# --------------------------------------------------------------------------- nulls

NOT_NULL = [
    (c, f"Columns > {c}: MUST NOT be null")
    for c in (
        "BilledCost",
        "BillingAccountId",
        "BillingCurrency",
        "BillingPeriodEnd",
        "BillingPeriodStart",
        "ChargeCategory",
        "ChargeDescription",
        "ChargeFrequency",
        "ChargePeriodEnd",
        "ChargePeriodStart",
        "ContractedCost",
        "EffectiveCost",
        "InvoiceIssuerName",
        "ListCost",
        "ServiceCategory",
        "ServiceName",
        "ServiceProviderName",
    )
]


@pytest.mark.parametrize(("column", "requirement"), NOT_NULL, ids=[m[0] for m in NOT_NULL])
def test_column_is_never_null(seed_rows, yearly_rows, column, requirement):
    for rows in (seed_rows, yearly_rows[0]):
        assert rows[column].notna().all(), requirement


# --------------------------------------------------------------------------- types

DECIMALS = [
    "BilledCost",
    "EffectiveCost",
    "ListCost",
    "ContractedCost",
    "ListUnitPrice",
    "ContractedUnitPrice",
    "PricingQuantity",
    "ConsumedQuantity",
    "CommitmentDiscountQuantity",
]


@pytest.mark.parametrize("column", DECIMALS)
def test_decimal_columns_hold_numbers(seed_rows, yearly_rows, column):
    # "Columns > <column>: MUST be of type Decimal" and "Attributes > Numeric Format:
    # numbers in a numeric format, no thousands separators or currency symbols".
    for rows in (seed_rows, yearly_rows[0]):
        values = rows[column].dropna()
        assert values.str.fullmatch(r"-?\d+(\.\d+)?(e-?\d+)?").all(), column


@pytest.mark.parametrize(
    "column", ["BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd"]
)
def test_date_columns_are_iso_8601_utc(seed_rows, column):
    # "Attributes > Date/Time Format: MUST be ISO 8601 in UTC, YYYY-MM-DDTHH:mm:ssZ".
    assert seed_rows[column].str.fullmatch(DATE[1:-1]).all()


def test_currency_columns_are_iso_4217(seed_rows, yearly_rows):
    # "Attributes > Currency Format: MUST be a three-letter ISO 4217 code": BillingCurrency
    # and PricingCurrency; the seed bills USD and EUR (its European providers' own currency).
    for rows in (seed_rows, yearly_rows[0]):
        for column in ("BillingCurrency", "PricingCurrency"):
            assert rows[column].dropna().str.fullmatch(r"[A-Z]{3}").all(), column


@pytest.mark.parametrize("column", ["SkuPriceDetails", "ContractApplied"])
def test_json_columns_are_objects_with_x_prefixed_custom_keys(yearly_rows, seed_rows, column):
    # "Attributes > JSON Object Format" and "Attributes > Key-Value Format": a JSON object;
    # "Columns > SkuPriceDetails: custom properties MUST be prefixed x_" (FOCUS-defined:
    # InstanceType, GpuCount, ...); "Columns > ContractApplied: an Elements array, custom
    # keys prefixed x_".
    element_keys = {
        "ContractId",
        "ContractCommitmentId",
        "ContractCommitmentAppliedCost",
        "ContractCommitmentAppliedQuantity",
        "ContractCommitmentAppliedUnit",
    }
    seen = 0
    for rows in (seed_rows, yearly_rows[0]):
        for text in rows[column].dropna():
            value = json.loads(text)
            assert isinstance(value, dict)
            if column == "SkuPriceDetails":
                keys = set(value) - set(SKU_PRICE_DETAILS_KEYS)
            else:
                assert set(value) == {"Elements"} and value["Elements"]
                keys = {k for e in value["Elements"] for k in e} - element_keys
            assert all(k.startswith("x_") for k in keys), text
            seen += 1
    assert seen > 0  # the rule was exercised


def test_custom_columns_are_x_prefixed(seed_rows):
    # "Attributes > Column Naming and Ordering: custom columns MUST be prefixed x_".
    from focus_data_toolkit.schema.registry import all_dataset_columns

    focus = all_dataset_columns("Cost and Usage")
    assert [c for c in seed_rows.columns if c not in focus and not c.startswith("x_")] == []


# --------------------------------------------------------------------------- allowed values

ALLOWED = [
    ("ChargeCategory", {"Adjustment", "Credit", "Purchase", "Tax", "Usage"}),
    ("ChargeClass", {"Correction"}),
    ("ChargeFrequency", {"One-Time", "Recurring", "Usage-Based"}),
    ("PricingCategory", {"Standard", "Dynamic", "Committed", "Other"}),
    ("CommitmentDiscountStatus", {"Used", "Unused"}),
    ("CommitmentDiscountCategory", {"Spend", "Usage"}),
]


@pytest.mark.parametrize(("column", "values"), ALLOWED, ids=[a[0] for a in ALLOWED])
def test_values_are_in_the_allowed_list(seed_rows, yearly_rows, column, values):
    # "Columns > <column>: MUST be one of the allowed values".
    for rows in (seed_rows, yearly_rows[0]):
        assert set(rows[column].dropna()) <= values


# --------------------------------------------------------------------------- conditional rules


def test_a_purchase_is_never_usage_based(yearly_rows):
    # "Columns > ChargeFrequency: MUST NOT be Usage-Based when ChargeCategory is Purchase".
    rows = yearly_rows[0]
    purchase = rows[rows["ChargeCategory"] == "Purchase"]
    assert len(purchase) == 37  # the box once, 12 monthly fees for each of 3 reservations
    assert (purchase["ChargeFrequency"] != "Usage-Based").all()


def test_a_commitment_purchase_has_effective_cost_0(yearly_rows):
    # "Columns > EffectiveCost: MUST be 0 when ChargeCategory is Purchase and the purchase
    # is intended to cover future eligible charges": the 36 reservation fees.
    rows = yearly_rows[0]
    fees = rows[(rows["ChargeCategory"] == "Purchase") & rows["CommitmentDiscountId"].notna()]
    assert len(fees) == 36
    assert (fees["EffectiveCost"].astype(float) == 0).all()


def test_commitment_status_goes_with_commitment_usage(yearly_rows):
    # "Columns > CommitmentDiscountStatus: MUST NOT be null when CommitmentDiscountId is not
    # null and ChargeCategory is Usage; MUST be null when CommitmentDiscountId is null".
    rows = yearly_rows[0]
    has = rows["CommitmentDiscountId"].notna()
    usage = rows["ChargeCategory"] == "Usage"
    assert rows.loc[has & usage, "CommitmentDiscountStatus"].notna().all()
    assert rows.loc[~has, "CommitmentDiscountStatus"].isna().all()
    assert (has & usage).sum() == 36  # the H100 is in use every month of every term


def test_costs_are_unit_price_times_quantity(seed_rows):
    # "Columns > ListCost: MUST be the product of ListUnitPrice and PricingQuantity" (and
    # ContractedCost of ContractedUnitPrice) where the unit price is not null.
    for cost, price in (("ListCost", "ListUnitPrice"), ("ContractedCost", "ContractedUnitPrice")):
        rows = seed_rows[seed_rows[price].notna()]
        product = rows[price].astype(float) * rows["PricingQuantity"].astype(float)
        assert product.to_numpy() == pytest.approx(rows[cost].astype(float).to_numpy(), rel=1e-9)


def test_charge_period_lies_in_its_billing_period(seed_rows):
    # "Columns > ChargePeriodStart / ChargePeriodEnd: within the billing period; end
    # exclusive, after the start".
    assert (seed_rows["ChargePeriodStart"] >= seed_rows["BillingPeriodStart"]).all()
    assert (seed_rows["ChargePeriodEnd"] <= seed_rows["BillingPeriodEnd"]).all()
    assert (seed_rows["ChargePeriodEnd"] > seed_rows["ChargePeriodStart"]).all()


def test_consumed_quantity_only_on_used_usage(yearly_rows):
    # "Columns > ConsumedQuantity: MUST be null when ChargeCategory is not Usage, or
    # CommitmentDiscountStatus is Unused".
    rows = yearly_rows[0]
    off = (rows["ChargeCategory"] != "Usage") | (rows["CommitmentDiscountStatus"] == "Unused")
    assert rows.loc[off, "ConsumedQuantity"].isna().all()


def test_contract_applied_only_where_a_commitment_applies(seed_rows, yearly_rows):
    # "Columns > ContractApplied: MUST be null when the charge is not related to a contract
    # commitment". The seed rents on demand and trains: no commitment, every cell null.
    # The yearly plan: the 36 reservation fees, their 36 Used rows and the box's purchase
    # row (73 rows, all of them: the H100 is used all the time, so no Unused rows).
    assert seed_rows["ContractApplied"].isna().all()
    rows = yearly_rows[0]
    applied = rows[rows["ContractApplied"].notna()]
    assert len(applied) == 73
    assert applied["x_PlanItem"].value_counts().to_dict() == {"reservation": 72, "purchase": 1}


def test_invoice_id_is_present_and_null_on_forecast_charges(seed_rows, yearly_rows):
    # "InvoiceId SHOULD be present in a Cost and Usage FOCUS dataset" (1.3; "RECOMMENDED to
    # be present" in 1.2), and "InvoiceId MUST be null when the charge is not associated
    # either with an invoice or with a pre-generated provisional invoice" (FOCUS_Spec
    # specification/datasets/cost_and_usage/columns/invoiceid.md). A plan's charges are a
    # forecast: no invoice, issued or provisional, exists for any of them, so the column is
    # written and every cell of it is empty, on the seed's 1.3 rows, the yearly plan's
    # (reservation fees, purchase) and the 1.2 export alike.
    rows = yearly_rows[0]
    assert len(seed_rows) > 0 and len(rows) > 0
    for frame in (seed_rows, rows):
        assert "InvoiceId" in frame.columns
        assert frame["InvoiceId"].isna().all()
    assert "InvoiceId" in FOCUS_1_2_COLUMNS and "InvoiceId" not in FOCUS_1_3_ABSENT


# --------------------------------------------------------------------------- Contract Commitment


def test_contract_commitments_of_the_yearly_plan_worked_by_hand(yearly_rows):
    # Three 1-year reservations of one H100 at $3/h: 8,760 h (12 x 730 h, the problem has
    # no start date) and $26,280 each; the box bought in y1: 1 unit, $200,000. All four
    # Proposed (the plan is not approved). Two contracts, one per invoice issuer: acme's
    # reservations, 2027-01-01 to 2030-01-01, and the server seller's box, January 2027.
    rows, contracts = yearly_rows
    assert list(contracts.columns[:13]) == list(CONTRACT_COMMITMENT_COLUMNS)
    got = contracts.set_index("ContractCommitmentId")
    reservations = got[got["x_PlanItem"] == "reservation"]
    assert len(reservations) == 3
    assert reservations["ContractCommitmentCost"].astype(float).tolist() == pytest.approx(
        [26_280.0] * 3
    )
    assert reservations["ContractCommitmentQuantity"].astype(float).tolist() == pytest.approx(
        [8_760.0] * 3
    )
    assert set(reservations["ContractCommitmentUnit"]) == {"Hours"}
    assert set(reservations["ContractCommitmentCategory"]) == {"Usage"}
    (box,) = got[got["x_PlanItem"] == "purchase"].itertuples()
    assert float(box.ContractCommitmentCost) == pytest.approx(200_000.0)
    assert (float(box.ContractCommitmentQuantity), box.ContractCommitmentUnit) == (1.0, "Units")
    assert set(got["x_ContractCommitmentLifecycleStatus"]) == {"Proposed"}
    assert set(reservations["ContractId"]) == {"planned:acme"}
    assert set(reservations["ContractPeriodStart"]) == {"2027-01-01T00:00:00Z"}
    assert set(reservations["ContractPeriodEnd"]) == {"2030-01-01T00:00:00Z"}
    assert box.ContractId == "planned:server seller"
    assert (box.ContractPeriodStart, box.ContractPeriodEnd) == (
        "2027-01-01T00:00:00Z",
        "2027-02-01T00:00:00Z",
    )
    # the Used rows burn the reservations down in full: the applied costs of the Usage rows
    # of each commitment sum to its cost ($2,190 x 12 = $26,280)
    usage = rows[(rows["ChargeCategory"] == "Usage") & rows["ContractApplied"].notna()]
    burned: dict[str, float] = {}
    for text in usage["ContractApplied"]:
        (e,) = json.loads(text)["Elements"]
        cid = e["ContractCommitmentId"]
        burned[cid] = burned.get(cid, 0.0) + e["ContractCommitmentAppliedCost"]
    assert burned == pytest.approx(dict.fromkeys(reservations.index, 26_280.0))


CC_NOT_NULL = [
    "ContractCommitmentId",
    "ContractCommitmentType",
    "ContractCommitmentCategory",
    "ContractCommitmentPeriodStart",
    "ContractCommitmentPeriodEnd",
    "ContractId",
    "ContractPeriodStart",
    "ContractPeriodEnd",
]


@pytest.mark.parametrize("column", CC_NOT_NULL)
def test_contract_commitment_column_is_never_null(yearly_rows, column):
    # "Contract Commitment > <column>: MUST be present; MUST NOT be null".
    assert yearly_rows[1][column].notna().all()


def test_contract_commitment_rules(yearly_rows):
    # "Contract Commitment > ContractCommitmentCategory: Spend or Usage";
    # "> ContractCommitmentQuantity / ContractCommitmentUnit: null for a Spend commitment";
    # "> ContractCommitmentId: unique"; "> ...PeriodStart/End: Date/Time Format, the
    # commitment's period within its contract's".
    cc = yearly_rows[1]
    assert set(cc["ContractCommitmentCategory"]) <= {"Spend", "Usage"}
    assert cc["ContractCommitmentId"].is_unique
    spend = cc["ContractCommitmentCategory"] == "Spend"
    assert cc.loc[spend, "ContractCommitmentQuantity"].isna().all()
    for c in ("ContractCommitmentPeriodStart", "ContractCommitmentPeriodEnd"):
        assert cc[c].str.fullmatch(DATE[1:-1]).all()
    assert (cc["ContractCommitmentPeriodStart"] >= cc["ContractPeriodStart"]).all()
    assert (cc["ContractCommitmentPeriodEnd"] <= cc["ContractPeriodEnd"]).all()
    assert cc["BillingCurrency"].str.fullmatch(r"[A-Z]{3}").all()


def test_every_contract_applied_names_a_commitment_of_the_dataset(yearly_rows):
    # "Columns > ContractApplied: ContractId and ContractCommitmentId MUST match a row of
    # the Contract Commitment dataset".
    rows, cc = yearly_rows
    pairs = set(zip(cc["ContractId"], cc["ContractCommitmentId"], strict=True))
    named = {
        (e["ContractId"], e["ContractCommitmentId"])
        for t in rows["ContractApplied"].dropna()
        for e in json.loads(t)["Elements"]
    }
    assert named == pairs


def test_the_checks_catch_a_broken_commitment(yearly_rows):
    # The export's own checks (run before every export) refuse what the tests above
    # forbid: a commitment missing from the dataset, a Spend commitment with a quantity,
    # an unknown lifecycle state, a custom SkuPriceDetails key without x_.
    rows, cc = yearly_rows
    numeric = ["ContractCommitmentCost", "ContractCommitmentQuantity"]
    cc = cc.astype({c: float for c in numeric})
    assert validate_contract_commitments(cc, rows) == []
    broken = cc.iloc[1:].copy()
    assert "not in the Contract Commitment dataset" in " ".join(
        validate_contract_commitments(broken, rows)
    )
    spend = cc.copy()
    spend.loc[0, "ContractCommitmentCategory"] = "Spend"
    assert "ContractCommitmentQuantity is set on a Spend commitment" in (
        validate_contract_commitments(spend)
    )
    state = cc.copy()
    state.loc[0, "x_ContractCommitmentLifecycleStatus"] = "Signed"
    assert any("outside the allowed list" in p for p in validate_contract_commitments(state))
    typed = rows.astype({c: float for c in DECIMALS})
    assert validate_focus(typed) == []
    typed.loc[0, "SkuPriceDetails"] = '{"InstanceType": "h1", "Accelerator": "h100"}'
    assert any("not prefixed x_" in p for p in validate_focus(typed))


def test_lifecycle_is_active_once_approved(yearly_rows):
    # The working draft's lifecycle (1.4 ContractCommitmentLifecycleStatus): Proposed,
    # "being negotiated or modeled", until the workspace approves the plan; then Active.
    rows = yearly_rows[0].astype({c: float for c in DECIMALS})
    active = contract_commitment_frame(rows, lifecycle="Active")
    assert set(active["x_ContractCommitmentLifecycleStatus"]) == {"Active"}
    assert len(active) == 4


def test_export_writes_the_contract_commitments_of_a_capacity_block(tmp_path):
    # The block case of tests/test_capacity_blocks.py: one p5.48xlarge block of 144 h at
    # $39.33 an instance-hour, $5,663.52, bought whole. The export writes it as a Usage
    # commitment of 144 hours costing $5,663.52, Proposed; --focus-version 1.2 writes the
    # 1.2 rows only (no ServiceProviderName, no contract file).
    from tests.test_capacity_blocks import solved_block_plan

    runner = CliRunner()
    problem, plan = solved_block_plan(tmp_path)
    out = tmp_path / "focus"
    args = ["export", str(plan), "--format", "focus", "--problem", str(problem), "--out"]
    made = runner.invoke(app, [*args, str(out)])
    assert made.exit_code == 0, made.output
    cc = pd.read_csv(out / "focus-contract-commitment.csv")
    assert len(cc) == 1
    (block,) = cc.itertuples()
    assert (block.ContractCommitmentType, block.ContractCommitmentCategory) == (
        "Capacity Block",
        "Usage",
    )
    assert block.ContractCommitmentCost == pytest.approx(5663.52)
    assert (block.ContractCommitmentQuantity, block.ContractCommitmentUnit) == (144.0, "Hours")
    assert block.x_ContractCommitmentLifecycleStatus == "Proposed"
    old = tmp_path / "focus-1.2"
    made = runner.invoke(app, [*args, str(old), "--focus-version", "1.2"])
    assert made.exit_code == 0, made.output
    rows = pd.read_csv(old / "focus.csv")
    assert "ServiceProviderName" not in rows and "ContractApplied" not in rows
    assert not (old / "focus-contract-commitment.csv").exists()
    # the same plan re-exported as 1.2 into the 1.3 folder: the contract file it no longer
    # writes goes, and the message says it was this plan's (not another plan's)
    again = runner.invoke(app, [*args, str(out), "--focus-version", "1.2"])
    assert again.exit_code == 0, again.output
    assert "this plan's earlier export" in again.output and "another plan" not in again.output
    assert not (out / "focus-contract-commitment.csv").exists()
    wrong = runner.invoke(app, [*args, str(tmp_path / "x"), "--focus-version", "1.1"])
    assert wrong.exit_code == 2 and "--focus-version" in wrong.output
    assert "Traceback" not in wrong.output


def test_contract_commitment_of_a_plan_without_commitments_is_empty(seed_plan):
    # The seed rents and trains on demand: no commitment, no rows.
    p = load_problem(ROOT / "problems" / "seed-2m-13b.yaml")
    frame = focus_frame(seed_plan, p, load_catalog(), date(2027, 1, 1))
    assert contract_commitment_frame(frame).empty
