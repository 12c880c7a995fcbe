"""The plan's reservations reconciled against the commitment rows of a bill: burn-down,
unused commitment, over-commitment (solver/analyses/commitment_burn.py), worked by hand."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import write_catalog
from solver.analyses.actuals import actuals
from solver.analyses.commitment_burn import commitment_burn
from solver.inputs.catalog import load_catalog
from solver.inputs.importers.focus_billing import read_focus_billing
from solver.outputs.actuals import actuals_json, commitments_table
from solver.outputs.focus import focus_csv, focus_frame
from solver.solve import solve_problem
from tests.outputs.test_orders_and_focus import H1, START, yearly_problem


@pytest.fixture(scope="module")
def yearly(tmp_path_factory):
    """The yearly plan (one H100 reserved a year at a time at $3/h, 730-hour months: a
    $2,190 fee a month, all of it used; a $200,000 box bought) and its FOCUS 1.3 rows of
    January to June 2027."""
    folder = tmp_path_factory.mktemp("burn")
    cat = load_catalog(write_catalog(folder / "catalog", [H1]))
    p = yearly_problem()
    plan = solve_problem(p, cat)
    frame = focus_frame(plan, p, cat, START)
    frame = frame[frame["ChargePeriodStart"] < "2027-07"].reset_index(drop=True)
    return plan, p, cat, frame, folder


def _burn(yearly, frame, name, billed_through=None):
    plan, p, cat, _, folder = yearly
    path = folder / name
    path.write_text(focus_csv(frame))
    result = actuals(plan, p, cat, read_focus_billing(path), START, billed_through)
    return result, commitment_burn(result)


def test_a_month_unused_is_burned_down_short_worked_by_hand(yearly):
    # The bill is the plan's own rows, with March's reservation hours billed Unused (the
    # H100 idle in March). Months compared: January to June 2027.
    # committed: 6 x $2,190 = $13,140; used: 5 x $2,190 = $10,950 (burn-down 10,950 / 13,140
    # = 83.33%); unused as billed: $2,190; over-commitment: 13,140 - 10,950 = $2,190.
    frame = yearly[3].copy()
    march = (frame["ChargePeriodStart"].str[:7] == "2027-03") & (
        frame["CommitmentDiscountStatus"] == "Used"
    )
    assert march.sum() == 1
    frame.loc[march, "CommitmentDiscountStatus"] = "Unused"
    frame.loc[march, "ConsumedQuantity"] = None
    result, burn = _burn(yearly, frame, "march-unused.csv")
    assert (result.first_month, result.last_month) == ("2027-01", "2027-06")
    (row,) = burn.itertuples(index=False)
    assert (row.provider, row.region, row.instance_type, row.status) == (
        "acme",
        "us-east",
        "h1",
        "planned",
    )
    assert row.committed_usd == pytest.approx(13_140.0)
    assert row.used_usd == pytest.approx(10_950.0)
    assert row.unused_usd == pytest.approx(2_190.0)
    assert row.burn_down_pct == pytest.approx(100 * 10_950 / 13_140)
    assert row.over_commitment_usd == pytest.approx(2_190.0)
    # in procure actuals' JSON and table
    doc = json.loads(actuals_json(result, commitments=burn))
    assert doc["commitments"][0]["over_commitment_usd"] == pytest.approx(2_190.0)
    text = commitments_table(burn)
    assert "acme/us-east/h1" in text and "83.3%" in text


def test_the_plan_billed_as_planned_burns_down_in_full(yearly):
    # The plan's own rows unchanged: used = committed = $13,140, 100%, nothing unused.
    _, burn = _burn(yearly, yearly[3], "as-planned.csv")
    (row,) = burn.itertuples(index=False)
    assert (row.committed_usd, row.used_usd) == pytest.approx((13_140.0, 13_140.0))
    assert (row.burn_down_pct, row.unused_usd, row.over_commitment_usd) == pytest.approx(
        (100.0, 0.0, 0.0)
    )


def test_a_commitment_the_plan_lacks_is_flagged(yearly):
    # A Committed row of another instance (an H100 reservation at "beta", $500 in April):
    # an unplanned commitment, $500 used, nothing committed by the plan.
    frame = yearly[3]
    extra = frame[frame["CommitmentDiscountStatus"] == "Used"].iloc[[3]].copy()
    extra["ProviderName"] = extra["ServiceProviderName"] = "beta"
    extra["EffectiveCost"] = 500.0
    _, burn = _burn(yearly, pd.concat([frame, extra], ignore_index=True), "extra.csv")
    other = burn[burn["provider"] == "beta"].iloc[0]
    assert other["status"] == "unplanned commitment"
    assert (other["committed_usd"], other["used_usd"]) == pytest.approx((0.0, 500.0))
    assert other["burn_down_pct"] is None or pd.isna(other["burn_down_pct"])


def test_no_commitment_no_section(yearly):
    # A bill without the reservation's rows, stated complete to June: the plan still
    # commits 6 x $2,190 = $13,140, none of it used (over-commitment $13,140); with neither
    # plan nor bill committing, the section is empty and left out of the JSON.
    frame = yearly[3]
    bare = frame[frame["CommitmentDiscountId"].isna()]
    result, burn = _burn(yearly, bare, "bare.csv", billed_through="2027-06")
    assert result.last_month == "2027-06"
    (row,) = burn.itertuples(index=False)
    assert (row.used_usd, row.over_commitment_usd) == pytest.approx((0.0, 13_140.0))
    empty = burn.iloc[0:0]
    assert "commitments" not in json.loads(actuals_json(result, commitments=empty))
    assert commitments_table(empty) == ""
