"""Hostile bills for ``procure actuals``: bills that would mislead if read naively.

The plan, worked by hand: two workloads at one provider (acme, us-east), 4 calendar months
from 2027-01. "chat" needs 20 requests/s on H100s (10 each): 2 h1 at $4/h; "embed" 4 on
L4s (2 each): 2 l4 at $1/h. Each month, with its calendar hours:

    month    hours  h1 (2 x h x $4)  l4 (2 x h x $1)  total
    2027-01  744    $5,952           $1,488           $7,440
    2027-02  672    $5,376           $1,344           $6,720
    2027-03  744    $5,952           $1,488           $7,440
    2027-04  720    $5,760           $1,440           $7,200   ($28,800 in all)

A bill "as planned" bills each line's planned hours at the planned price.
"""

from __future__ import annotations

import csv
import gzip
import io
import json

import pytest
from typer.testing import CliRunner

from conftest import offering, write_catalog
from solver.cli import app
from solver.errors import ProcureError
from solver.inputs.importers.focus_billing import read_focus_billing

runner = CliRunner()

PROBLEM = """\
name: two-lines
costs: none  # compute only: the bills and variances below are compute worked by hand
horizon_months: 4
start: 2027-01
periods: [{name: m1, months: 1}, {name: m2, months: 1}, {name: m3, months: 1},
          {name: m4, months: 1}]
modes: [on_demand]
workloads:
  - kind: inference
    name: chat
    model: llama-3-8b
    demand: {requests_per_s: 20}
    prompt_tokens: 100
    output_tokens: 100
    ttft_slo: 1 s
    tpot_slo: 50 ms
    traffic_mix: [{prompt_tokens: 100, output_tokens: 100, share: 1.0}]
    measured_throughput_rps: {h100-sxm: [10.0]}
    max_utilisation: 1
  - kind: inference
    name: embed
    model: llama-3-8b
    demand: {requests_per_s: 4}
    prompt_tokens: 100
    output_tokens: 100
    ttft_slo: 1 s
    tpot_slo: 50 ms
    traffic_mix: [{prompt_tokens: 100, output_tokens: 100, share: 1.0}]
    measured_throughput_rps: {l4: [2.0]}
    max_utilisation: 1
"""
HOURS = {"2027-01": 744, "2027-02": 672, "2027-03": 744, "2027-04": 720}
PRICE = {"h1": 4.0, "l4": 1.0}
COLUMNS = [
    "ProviderName",
    "BillingAccountId",
    "BillingCurrency",
    "BillingPeriodStart",
    "BillingPeriodEnd",
    "ChargePeriodStart",
    "ChargePeriodEnd",
    "ChargeCategory",
    "ChargeDescription",
    "EffectiveCost",
    "PricingQuantity",
    "PricingUnit",
    "RegionId",
    "SkuId",
    "PricingCategory",
    "SkuPriceDetails",
]


def _end(month: str) -> str:
    year, mon = (int(x) for x in month.split("-"))
    return f"{year + mon // 12:04d}-{mon % 12 + 1:02d}-01T00:00:00Z"


def row(month: str, instance: str, usd: float | None = None, hours: float | None = None):
    """One FOCUS usage row: 2 instances of ``instance`` for the month, as planned unless
    ``usd`` or ``hours`` say otherwise."""
    hours = 2 * HOURS[month] if hours is None else hours
    usd = hours * PRICE[instance] if usd is None else usd
    return {
        "ProviderName": "acme",
        "BillingAccountId": "acct-1",
        "BillingCurrency": "USD",
        "BillingPeriodStart": f"{month}-01T00:00:00Z",
        "BillingPeriodEnd": _end(month),
        "ChargePeriodStart": f"{month}-01T00:00:00Z",
        "ChargePeriodEnd": _end(month),
        "ChargeCategory": "Usage",
        "ChargeDescription": f"{instance} instance-hours",
        "EffectiveCost": f"{usd:.2f}",
        "PricingQuantity": f"{hours:g}",
        "PricingUnit": "Hours",
        "RegionId": "us-east",
        "SkuId": f"acme/us-east/{instance}",
        "PricingCategory": "Standard",
        "SkuPriceDetails": json.dumps({"InstanceType": instance}),
    }


def as_planned(*months: str) -> list[dict]:
    return [row(m, i) for m in months for i in ("h1", "l4")]


def bill_text(rows: list[dict], columns: list[str] = COLUMNS) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


@pytest.fixture(scope="module")
def plan(tmp_path_factory):
    """The plan of the module docstring, solved once; tests write bills beside it."""
    tmp = tmp_path_factory.mktemp("bills")
    cat = write_catalog(
        tmp / "cat",
        [offering("h1", "h100-sxm", 1, 4.0), offering("l4", "l4", 1, 1.0, nvlink=False)],
    )
    problem = tmp / "p.yaml"
    problem.write_text(PROBLEM)
    out = tmp / "plan.json"
    args = ["solve", str(problem), "--catalog", str(cat), "--format", "json", "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["total_cost_usd"] == pytest.approx(28_800)
    return out


def actuals_json(plan, *bills, extra=()) -> dict:
    args = ["actuals", str(plan), *map(str, bills), "--format", "json", *extra]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def refused(plan, *bills, extra=()) -> str:
    result = runner.invoke(app, ["actuals", str(plan), *map(str, bills), *extra])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "fix:" in result.output
    return result.output


# --------------------------------------------------------------------------- passed twice


def test_the_same_bill_twice_is_counted_once(plan, tmp_path):
    # January and February billed as planned: $7,440 + $6,720 = $14,160 and no variance.
    # Passed twice (the same path twice, and a copy under another name with its rows and
    # columns in another order) it is still $14,160, not $28,320 (the plan 100% overspent):
    # the copy's 4 rows and the repeat's 4 rows are dropped, and the output says so.
    bill = tmp_path / "bill.csv"
    bill.write_text(bill_text(as_planned("2027-01", "2027-02")))
    copy = tmp_path / "copy.csv"
    copy.write_text(bill_text(as_planned("2027-01", "2027-02")[::-1], COLUMNS[::-1]))
    doc = actuals_json(plan, bill, copy, bill)
    assert doc["totals"]["actual_usd"] == pytest.approx(14_160.00)
    assert doc["totals"]["planned_usd"] == pytest.approx(14_160.00)
    assert doc["totals"]["variance_usd"] == pytest.approx(0.0, abs=1e-9)
    assert doc["duplicate_rows"] == 8
    dropped = {d["file"]: d for d in doc["duplicates"]}
    assert dropped[str(copy)]["rows"] == 4
    assert dropped[str(copy)]["same_bill_as"] == str(bill)
    assert dropped[str(bill)]["rows"] == 4  # its second pass
    table = runner.invoke(app, ["actuals", str(plan), str(bill), str(copy)])
    assert table.exit_code == 0, table.output
    assert "4 duplicate rows dropped" in table.stdout and "copy.csv 4 rows" in table.stdout


def test_overlapping_exports_count_the_shared_month_once(plan, tmp_path):
    # An export of January-February and one of February-March: February's 2 rows are in
    # both. Counted once: $7,440 + $6,720 + $7,440 = $21,600 (not $28,320).
    early = tmp_path / "jan-feb.csv"
    early.write_text(bill_text(as_planned("2027-01", "2027-02")))
    late = tmp_path / "feb-mar.csv"
    late.write_text(bill_text(as_planned("2027-02", "2027-03")))
    doc = actuals_json(plan, early, late)
    assert doc["totals"]["actual_usd"] == pytest.approx(21_600.00)
    assert doc["duplicates"] == [
        {"file": str(late), "rows": 2, "duplicate_of": [str(early)], "same_bill_as": ""}
    ]


def test_one_charge_billed_differently_in_two_exports_is_refused(plan, tmp_path):
    # February's h1 row in an early export at $5,000 (the month still filling) and in the
    # final one at $5,376: the same charge (same account, period, SKU ...) with two
    # amounts. Neither sum ($10,376) nor a pick would be honest: refused, naming both.
    early = tmp_path / "early.csv"
    early.write_text(bill_text([row("2027-02", "h1", usd=5000.0)]))
    final = tmp_path / "final.csv"
    final.write_text(bill_text(as_planned("2027-02")))
    out = refused(plan, early, final)
    assert "final.csv: row 1" in out and "early.csv row 1" in out
    assert "pass only the newer export" in out


# --------------------------------------------------------------------------- blank costs


@pytest.mark.parametrize(
    ("cost", "words"), [("", "EffectiveCost is blank"), ("n/a", "'n/a', not a number")]
)
def test_a_blank_or_non_numeric_cost_is_refused_by_line(plan, tmp_path, cost, words):
    # Row 3 (line 4: the header is line 1) is February's h1 with its cost cell blank or
    # "n/a": read as $0 it would show $5,376 of h1 "saved". Refused, naming the row.
    rows = as_planned("2027-01", "2027-02")
    rows[2]["EffectiveCost"] = cost
    bill = tmp_path / "blank.csv"
    bill.write_text(bill_text(rows))
    out = refused(plan, bill)
    assert "blank.csv: row 3, EffectiveCost" in out and words in out and "line 4" in out


def test_a_blank_quantity_is_refused_on_usage_and_allowed_on_tax(tmp_path):
    # FOCUS 1.2 (pricingquantity.md): PricingQuantity MUST NOT be null on a Usage row that
    # is not a Correction, and MUST be null on a Tax row.
    usage = row("2027-01", "h1")
    usage["PricingQuantity"] = ""
    bill = tmp_path / "usage.csv"
    bill.write_text(bill_text([usage]))
    with pytest.raises(ProcureError) as err:
        read_focus_billing(bill)
    assert "row 1, PricingQuantity" in str(err.value) and "blank" in str(err.value)
    tax = row("2027-01", "h1", usd=12.5) | {"ChargeCategory": "Tax", "PricingQuantity": ""}
    bill.write_text(bill_text([tax]))
    frame = read_focus_billing(bill)
    assert (frame.loc[0, "cost"], frame.loc[0, "quantity"]) == (12.5, 0.0)


# --------------------------------------------------------------------------- outside


def test_a_bill_wholly_outside_the_plan_is_refused(plan, tmp_path):
    # A bill of May 2026 (before the plan's 2027-01 start) compares with nothing: exit 2
    # naming its months and the plan's, not a table of "unplanned" charges.
    bill = tmp_path / "old.csv"
    old = [r | {"ChargePeriodStart": "2026-05-03T00:00:00Z"} for r in as_planned("2027-01")]
    bill.write_text(bill_text(old))
    out = refused(plan, bill)
    assert "old.csv" in out and "2026-05 to 2026-05" in out and "2027-01 to 2027-04" in out


def test_rows_partly_outside_are_reported_and_not_compared(plan, tmp_path):
    # January as planned, and a $99.50 row of 2027-06 (after the plan's April): the
    # variance is January's alone (actual $7,440 = planned), the June row reported apart.
    bill = tmp_path / "mixed.csv"
    late = row("2027-01", "h1", usd=99.5, hours=10) | {"ChargePeriodStart": "2027-06-02T00:00:00Z"}
    bill.write_text(bill_text([*as_planned("2027-01"), late]))
    doc = actuals_json(plan, bill)
    assert doc["totals"]["actual_usd"] == pytest.approx(7_440.00)
    assert doc["outside_plan"] == [
        {"file": str(bill), "rows": 1, "months": ["2027-06"], "cost_usd": 99.5}
    ]
    table = runner.invoke(app, ["actuals", str(plan), str(bill)]).stdout
    assert "1 rows billed outside the plan's months 2027-01 to 2027-04 (2027-06, $99.50)" in (table)


# --------------------------------------------------------------------------- every line


def test_a_line_missing_in_the_last_billed_month_is_flagged(plan, tmp_path):
    # January to March billed, the l4 missing in March, the last month billed: flagged
    # unbilled in 2027-03 (-$1,488), and marked not billed yet (March bills fewer lines
    # than planned). Variance -$1,488 = unbilled.
    bill = tmp_path / "bill.csv"
    bill.write_text(bill_text([*as_planned("2027-01", "2027-02"), row("2027-03", "h1")]))
    doc = actuals_json(plan, bill)
    assert [(r["month"], r["instance_type"], r["not_billed_yet"]) for r in doc["unbilled"]] == [
        ("2027-03", "l4", True)
    ]
    assert doc["totals"]["unbilled_usd"] == pytest.approx(-1_488.00)
    assert doc["totals"]["variance_usd"] == pytest.approx(-1_488.00)
    assert doc["partial_months"] == ["2027-03"]
    table = runner.invoke(app, ["actuals", str(plan), str(bill)]).stdout
    assert "2027-03 acme/us-east/l4 $1,488.00 (not billed yet" in table


def test_a_billed_month_with_no_row_at_all_is_still_compared(plan, tmp_path):
    # Bills of January and February only, stated complete to March (--billed-through):
    # March's two lines have no row at all and are flagged unbilled, not left out
    # (the comparison does not stop at the last month with a row): -$5,952 - $1,488.
    bill = tmp_path / "bill.csv"
    bill.write_text(bill_text(as_planned("2027-01", "2027-02")))
    doc = actuals_json(plan, bill, extra=["--billed-through", "2027-03"])
    assert doc["last_month"] == "2027-03"
    assert sorted((r["month"], r["instance_type"]) for r in doc["unbilled"]) == [
        ("2027-03", "h1"),
        ("2027-03", "l4"),
    ]
    assert doc["totals"]["unbilled_usd"] == pytest.approx(-7_440.00)
    # a March invoice (its billing period) that holds only a correction row of February
    # says the same without the option
    correction = row("2027-02", "h1", usd=-10.0, hours=0) | {
        "BillingPeriodStart": "2027-03-01T00:00:00Z",
        "BillingPeriodEnd": "2027-04-01T00:00:00Z",
        "ChargeDescription": "refund",
        "ChargeCategory": "Credit",
    }
    bill.write_text(bill_text([*as_planned("2027-01", "2027-02"), correction]))
    doc = actuals_json(plan, bill)
    assert doc["last_month"] == "2027-03"
    assert {r["instance_type"] for r in doc["unbilled"] if r["month"] == "2027-03"} == {
        "h1",
        "l4",
    }


# --------------------------------------------------------------------------- re-forecast


def test_the_reforecast_does_not_read_a_late_invoice_as_a_drop(plan, tmp_path):
    # January and February as planned; March's h1 $5,952 billed, the l4's $1,488 invoice
    # late. Read as "used less", the l4's run-rate would be (1,488 + 1,344) / (1,488 +
    # 1,344 + 1,488) = 2,832 / 4,320 = 0.656, a 34% drop, and April at the run-rate
    # $5,760 + 0.656 x $1,440 = $6,704: $496 "saved", $1,984 with March's missing $1,488.
    # March is partial, so it is left out: both factors are (billed / planned to February)
    # 1, April at the run-rate is the plan's $7,200, March's $1,488 is pending, and the
    # horizon at the run-rate is $7,440 + $6,720 + ($5,952 + $1,488) + $7,200 = $28,800,
    # the plan's total.
    bill = tmp_path / "bill.csv"
    bill.write_text(bill_text([*as_planned("2027-01", "2027-02"), row("2027-03", "h1")]))
    doc = actuals_json(plan, bill, extra=["--reforecast"])["reforecast"]
    flow = {r["month"]: r for r in doc["cash_flow"]}
    factors = {r["instance_type"]: r["factor"] for r in doc["run_rates"]}
    assert factors == pytest.approx({"h1": 1.0, "l4": 1.0})
    assert flow["2027-04"]["at_run_rate_usd"] == pytest.approx(7_200.00)
    assert flow["2027-03"]["actual_usd"] == pytest.approx(5_952.00)
    assert flow["2027-03"]["pending_usd"] == pytest.approx(1_488.00)
    assert doc["totals"]["at_run_rate_usd"] == pytest.approx(28_800.00)
    assert doc["totals"]["at_plan_usd"] == pytest.approx(28_800.00)


def test_a_month_stated_complete_reads_a_missing_line_as_used_less(plan, tmp_path):
    # The same bill with --billed-through 2027-03: March is complete, so the l4's missing
    # March was use that stopped. Its factor is 2,832 / 4,320 (h1 1), April at the
    # run-rate $5,760 + 1,440 x 2,832 / 4,320 = $6,704.00, nothing pending.
    bill = tmp_path / "bill.csv"
    bill.write_text(bill_text([*as_planned("2027-01", "2027-02"), row("2027-03", "h1")]))
    extra = ["--reforecast", "--billed-through", "2027-03"]
    doc = actuals_json(plan, bill, extra=extra)["reforecast"]
    flow = {r["month"]: r for r in doc["cash_flow"]}
    factors = {r["instance_type"]: r["factor"] for r in doc["run_rates"]}
    assert factors == pytest.approx({"h1": 1.0, "l4": 2_832 / 4_320})
    assert flow["2027-04"]["at_run_rate_usd"] == pytest.approx(6_704.00)
    assert doc["totals"]["pending_usd"] == 0.0


def test_a_month_without_any_invoice_is_not_a_drop(plan, tmp_path):
    # January and March billed as planned, February's invoice missing (no row of acme in
    # February, no billing period covering it): February's $6,720 is not billed yet, not
    # use that stopped: both factors stay 1 (a drop would give h1 (5,952 + 5,952) /
    # (5,952 + 5,376 + 5,952) = 0.689), April at the run-rate is the plan's $7,200.
    bill = tmp_path / "bill.csv"
    bill.write_text(bill_text(as_planned("2027-01", "2027-03")))
    doc = actuals_json(plan, bill, extra=["--reforecast"])
    assert {r["not_billed_yet"] for r in doc["unbilled"]} == {True}
    flow = {r["month"]: r for r in doc["reforecast"]["cash_flow"]}
    assert flow["2027-02"]["pending_usd"] == pytest.approx(6_720.00)
    assert flow["2027-04"]["at_run_rate_usd"] == pytest.approx(7_200.00)


def test_billed_through_outside_the_plan_is_refused(plan, tmp_path):
    bill = tmp_path / "bill.csv"
    bill.write_text(bill_text(as_planned("2027-01")))
    out = refused(plan, bill, extra=["--billed-through", "2028-01"])
    assert "--billed-through" in out and "2027-01 to 2027-04" in out
    out = refused(plan, bill, extra=["--billed-through", "March"])
    assert "--billed-through" in out and "YYYY-MM" in out


# --------------------------------------------------------------------------- encodings


def test_a_latin1_bill_is_refused_with_the_line_and_the_fix(plan, tmp_path):
    # "Café" written in Latin-1 is the byte 0xE9, which UTF-8 cannot decode: refused with
    # the file, the line (2: the first row) and the command that converts it.
    rows = as_planned("2027-01")
    rows[0]["ChargeDescription"] = "Café GPU hours"
    bill = tmp_path / "latin1.csv"
    bill.write_bytes(bill_text(rows).encode("latin-1"))
    out = refused(plan, bill)
    assert "latin1.csv: line 2" in out and "0xE9" in out and "not UTF-8" in out
    assert "iconv" in out
    # the same bill in UTF-8 is read
    bill.write_text(bill_text(rows), encoding="utf-8")
    assert actuals_json(plan, bill)["totals"]["actual_usd"] == pytest.approx(7_440.00)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (bytes(range(256)) * 4, "binary file"),
        (gzip.compress(b"ProviderName,EffectiveCost\n", mtime=0), "gzip archive"),
        (b"PK\x03\x04" + b"\x00" * 40, "zip archive"),
        ("ProviderName\n".encode("utf-16"), "UTF-16"),
    ],
    ids=["nul-bytes", "gzip", "zip", "utf-16"],
)
def test_a_binary_file_is_refused_cleanly(plan, tmp_path, content, words):
    bill = tmp_path / "bill.bin"
    bill.write_bytes(content)
    out = refused(plan, bill)
    assert "bill.bin" in out and words in out


def test_a_month_exported_before_it_closed_is_not_a_drop(plan, tmp_path):
    # January and February as planned; March exported on the 16th: both lines billed to
    # 2027-03-16T00:00:00 (15 days, 2 x 360 h each: h1 $2,880, l4 $720). Read as a month,
    # h1's run-rate would be (5,952 + 5,376 + 2,880) / (5,952 + 5,376 + 5,952) = 0.822 and
    # April at the run-rate 0.822 x $7,200 = $5,920. March's rows end before March does,
    # so it is partial and left out: both factors 1, April at the run-rate $7,200.
    cut = {"ChargePeriodEnd": "2027-03-16T00:00:00Z"}
    march = [row("2027-03", i, hours=720) | cut for i in ("h1", "l4")]
    bill = tmp_path / "bill.csv"
    bill.write_text(bill_text([*as_planned("2027-01", "2027-02"), *march]))
    doc = actuals_json(plan, bill, extra=["--reforecast"])
    assert doc["partial_months"] == ["2027-03"]
    assert doc["billed_to"] == "2027-03-16T00:00:00"
    flow = {r["month"]: r for r in doc["reforecast"]["cash_flow"]}
    assert flow["2027-03"]["actual_usd"] == pytest.approx(3_600.00)
    assert flow["2027-04"]["at_run_rate_usd"] == pytest.approx(7_200.00)
    table = runner.invoke(app, ["actuals", str(plan), str(bill)]).stdout
    assert "2027-03 is not billed in full yet (its rows end at 2027-03-16T00:00:00)" in table


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "the file is empty"),
        (",".join(COLUMNS) + "\nacme,acct-1,USD\n", "row 1: the row has 3 fields, the header 16"),
    ],
    ids=["empty", "cut-row"],
)
def test_an_empty_or_cut_bill_is_refused(plan, tmp_path, text, words):
    # a row cut after 3 of its 16 fields would read its cost as blank and its month as
    # no date: it is refused as cut, with the row and the counts
    bill = tmp_path / "cut.csv"
    bill.write_text(text)
    assert words in refused(plan, bill)
