"""Purchase orders and FOCUS rows, checked against hand-worked plans and the FOCUS 1.2 rules.

Tiny catalog (tests/conftest.py): acme/us-east/h1 (one H100) $4/h on-demand, $3/h 1-year
and $2/h 3-year reserved; server box-h100 (8 x H100) $200,000, no lead time, hosting and
power free. An H100 serves 10 requests/s, the box 80 (measured throughput).
"""

from __future__ import annotations

import io
from datetime import date

import openpyxl
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner
from xlsx_recalc import cell, recalculated

from conftest import ROOT, offering, serve
from solver.cli import app
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import load_problem, parse_problem
from solver.outputs.focus import CHARGE_CATEGORIES, FOCUS_REQUIRED, focus_frame, validate_focus
from solver.outputs.orders import hardware_order, orders_xlsx, provider_orders
from solver.outputs.text import plan_json
from solver.solve import solve_problem

H1 = offering("h1", "h100-sxm", 1, 4.0, spot=2.0, r1=3.0, r3=2.0)
START = date(2027, 1, 1)


def yearly_problem():
    # 90 requests/s for three years y1..y3: one box ($200,000, 80 req/s) bought in y1 and one
    # H100 reserved for a year at a time ($3 x 8,760 h = $26,280 a year, against $35,040
    # on-demand): $200,000 + 3 x $26,280 = $278,840.
    return parse_problem(
        {
            "name": "yearly",
            "horizon_months": 36,
            "periods": [{"name": f"y{i}", "months": 12} for i in (1, 2, 3)],
            "modes": ["on_demand", "reserved_1y", "owned"],
            "workloads": [serve(90)],
            # compute only: the rows and orders below are the compute worked by hand
            "costs": "none",
        }
    )


@pytest.fixture
def yearly(tiny_catalog):
    cat = tiny_catalog([H1])
    p = yearly_problem()
    plan = solve_problem(p, cat)
    assert plan.total_cost_usd == pytest.approx(278_840)
    return plan, p, cat


def test_focus_of_the_seed_plan_conforms_and_adds_up(seed_plan):
    # The seed plan's forecast as FOCUS 1.2 rows: every required column, allowed values
    # only, and EffectiveCost summing to the plan's all-in total (all in by default: its
    # compute $370,028.54 and its cost lines, tests/plan/test_default_costs.py), in USD:
    # x_EffectiveCostUsd, since a line billed in EUR (Seeweb's H200 in the seed since
    # issue 47) states its EffectiveCost in its billing currency.
    cat = load_catalog()
    p = load_problem(ROOT / "problems" / "seed-2m-13b.yaml")
    plan = seed_plan
    frame = focus_frame(plan, p, cat, START)
    assert set(FOCUS_REQUIRED) <= set(frame.columns)
    assert validate_focus(frame) == []
    assert set(frame["ChargeCategory"]) <= set(CHARGE_CATEGORIES)
    assert frame["x_EffectiveCostUsd"].sum() == pytest.approx(plan.all_in_cost_usd, rel=1e-9)
    assert plan.all_in_cost_usd == pytest.approx(383_855.08, abs=0.01)
    # 36 monthly billing periods from January 2027, the last starting December 2029
    assert frame["BillingPeriodStart"].min() == "2027-01-01T00:00:00Z"
    assert frame["ChargePeriodEnd"].max() <= "2030-01-01T00:00:00Z"
    # USD, but Seeweb's lines in EUR, its own list prices' currency
    assert set(frame["BillingCurrency"]) == {"USD", "EUR"}
    eur = frame.loc[frame["BillingCurrency"] == "EUR", "ProviderName"]
    assert (eur.str.lower() == "seeweb").all()


def test_focus_commitments_and_purchases(yearly):
    # Rows of the yearly plan (calendar months from 2027-01-01):
    # - the box: one One-Time Purchase in January 2027, BilledCost = EffectiveCost = $200,000;
    # - each reservation: 12 monthly Purchase rows of $3 x 730 h = $2,190 (EffectiveCost 0)
    #   and 12 Usage rows "Used" carrying the $2,190 (the H100 is in use all the time),
    #   listed at the on-demand $4/h: ListCost 730 x $4 = $2,920, BilledCost 0;
    # - owned and reserved use costs nothing here (no power price, cloud energy included).
    # 1 + 36 + 36 = 73 rows; EffectiveCost and BilledCost both sum to $278,840.
    plan, p, cat = yearly
    frame = focus_frame(plan, p, cat, START)
    assert validate_focus(frame) == []
    assert len(frame) == 73
    box = frame[frame["x_PlanItem"] == "purchase"].iloc[0]
    assert (box["ChargeCategory"], box["ChargeFrequency"]) == ("Purchase", "One-Time")
    assert box["BilledCost"] == box["EffectiveCost"] == 200_000
    assert (box["ChargePeriodStart"], box["ChargePeriodEnd"]) == (
        "2027-01-01T00:00:00Z",
        "2027-02-01T00:00:00Z",
    )
    fees = frame[(frame["x_PlanItem"] == "reservation") & (frame["ChargeCategory"] == "Purchase")]
    assert len(fees) == 36
    assert fees["BilledCost"].to_numpy() == pytest.approx([2190.0] * 36)
    assert (fees["EffectiveCost"] == 0).all() and (fees["ChargeFrequency"] == "Recurring").all()
    used = frame[frame["CommitmentDiscountStatus"] == "Used"]
    assert len(used) == 36 and (used["PricingCategory"] == "Committed").all()
    first = used.iloc[0]
    assert (first["ListUnitPrice"], first["PricingQuantity"]) == (4.0, 730.0)
    assert first["ListCost"] == pytest.approx(2920) and first["EffectiveCost"] == pytest.approx(
        2190
    )
    assert first["BilledCost"] == 0
    assert frame["EffectiveCost"].sum() == pytest.approx(278_840)
    assert frame["BilledCost"].sum() == pytest.approx(278_840)


def test_focus_commitment_beyond_the_horizon_is_unused(tiny_catalog):
    # 10 requests/s for 24 months: a 3-year reservation ($2 x 26,280 h = $52,560) beats
    # on-demand ($4 x 17,520 h = $70,080). Its last 12 months fall after the plan: 24 monthly
    # "Used" rows of $2 x 730 = $1,460 and 12 "Unused" rows of $1,460 (2029), all summing to
    # the $52,560 the plan counts.
    p = parse_problem(
        {
            "name": "three-year",
            "horizon_months": 24,
            "modes": ["on_demand", "reserved_3y"],
            "workloads": [serve(10)],
            "costs": "none",  # compute only: the reservation's rows worked by hand
        }
    )
    cat = tiny_catalog([H1])
    plan = solve_problem(p, cat)
    assert plan.total_cost_usd == pytest.approx(52_560)
    frame = focus_frame(plan, p, cat, START)
    assert validate_focus(frame) == []
    status = frame["CommitmentDiscountStatus"].value_counts().to_dict()
    assert status == {"Used": 24, "Unused": 12}
    unused = frame[frame["CommitmentDiscountStatus"] == "Unused"]
    assert unused["EffectiveCost"].to_numpy() == pytest.approx([1460.0] * 12)
    assert unused["ChargePeriodStart"].min() == "2029-01-01T00:00:00Z"
    assert unused["ConsumedQuantity"].isna().all()
    assert frame["EffectiveCost"].sum() == pytest.approx(52_560)


def test_validate_focus_catches_mistakes(yearly):
    plan, p, cat = yearly
    frame = focus_frame(plan, p, cat, START)
    broken = frame.drop(columns=["ListCost"])
    assert validate_focus(broken) == ["missing required column(s): ['ListCost']"]
    wrong = frame.copy()
    wrong.loc[0, "ChargeCategory"] = "Rental"
    wrong.loc[1, "ChargePeriodStart"] = "2027-01-01"
    wrong["Team"] = "ml"
    found = " | ".join(validate_focus(wrong))
    assert "ChargeCategory" in found and "ChargePeriodStart" in found and "x_ prefix" in found


def test_orders_per_provider_and_hardware(yearly):
    # acme's order: three 1-year reservations of one h1, one per year, $26,280 each, at
    # $3/instance-hour; $78,840 in all and $26,280 in each year's column (no TOTAL row in
    # the data: totals are the workbook's summary, below the data).
    # The hardware order: 1 x box-h100 at colo-us, ordered in y1, lead time 0 days, in
    # service from y1, $200,000.
    plan, p, cat = yearly
    orders = provider_orders(plan)
    assert list(orders) == ["acme"]
    acme = orders["acme"]
    lines = acme
    assert "TOTAL" not in set(acme["item"])
    assert list(lines["period"]) == ["y1", "y2", "y3"]
    assert list(lines["term"]) == [f"1 year from the start of y{i}" for i in (1, 2, 3)]
    assert lines["unit_price_usd_per_hour"].to_numpy() == pytest.approx([3.0] * 3)
    assert acme["total_usd"].sum() == pytest.approx(78_840)
    assert [acme[f"usd_y{i}"].sum() for i in (1, 2, 3)] == pytest.approx([26_280] * 3)
    # each order line says what its price rests on (issue 29): the tiny catalog's date,
    # and unverified (its format states no confidence), in dollars
    assert set(acme["price_date"]) == {"2026-11-22"}
    assert set(acme["price_confidence"]) == {"unverified"}
    assert set(acme["price_currency"]) == {"USD"} and set(acme["price_source"]) == {"test"}
    hw = hardware_order(plan, cat, p)
    row = hw.iloc[0]
    assert (row["server"], row["quantity"], row["site"], row["order_period"]) == (
        "box-h100",
        1.0,
        "colo-us",
        "y1",
    )
    assert (row["lead_time_days"], row["in_service_from"]) == (0.0, "y1")
    assert row["capex_usd"] == 200_000
    # the server's price provenance (servers.csv; the tiny catalog states none)
    assert (row["price_date"], row["price_confidence"]) == ("unknown", "unverified")


def test_xlsx_orders_are_readable_and_byte_stable(yearly):
    plan, p, cat = yearly
    data = orders_xlsx(plan, cat, p)
    assert data == orders_xlsx(plan, cat, p)  # same input, same bytes
    book = openpyxl.load_workbook(io.BytesIO(data))
    assert book.sheetnames == ["summary", "acme", "hardware"]
    summary = pd.read_excel(io.BytesIO(data), sheet_name="summary", nrows=2)
    assert summary.set_index("order")["total_usd"].to_dict() == pytest.approx(
        {"acme": 78_840, "hardware": 200_000}
    )
    # the total sits below the data after a blank row: 78,840 + 200,000
    # a formula over the rows above it, which a spreadsheet computes on opening
    last = list(book["summary"].iter_rows(values_only=True))[-1]
    assert last[0] == "total" and last[2] == "=ROUND(SUM(C2:C3),2)"
    values = recalculated(data)
    assert cell(values, "summary", f"C{book['summary'].max_row}") == pytest.approx(278_840)


runner = CliRunner()


def test_cli_export(yearly, tmp_path):
    plan, p, cat = yearly
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(plan_json(plan))
    cat_dir = cat.directory
    base = ["export", str(plan_file), "--catalog", cat_dir]
    problem_file = tmp_path / "p.yaml"
    missing = runner.invoke(
        app, base + ["--out", str(tmp_path / "f"), "--problem", str(problem_file)]
    )
    assert missing.exit_code == 2 and "p.yaml" in missing.output  # no such problem file
    problem_file.write_text(yaml.safe_dump(p.model_dump(mode="json", exclude_defaults=True)))
    result = runner.invoke(app, base + ["--out", str(tmp_path / "csv")])
    assert result.exit_code == 0, result.output
    assert sorted(f.name for f in (tmp_path / "csv").iterdir()) == [
        "hardware.csv",
        "orders-acme.csv",
        "procure-export.json",  # which plan the orders are of (issue 34: stale orders)
    ]
    result = runner.invoke(app, base + ["--out", str(tmp_path / "x"), "--format", "xlsx"])
    assert result.exit_code == 0 and (tmp_path / "x" / "orders.xlsx").is_file()
    # without --start the rows are dated from the plan's own start_date
    dated = runner.invoke(app, base + ["--out", str(tmp_path / "d"), "--format", "focus"])
    assert dated.exit_code == 0, dated.output
    focus = runner.invoke(
        app,
        base
        + ["--out", str(tmp_path / "f"), "--format", "focus"]
        + ["--problem", str(problem_file), "--start", "2027-01-01"],
    )
    assert focus.exit_code == 0, focus.output
    rows = pd.read_csv(tmp_path / "f" / "focus.csv")
    assert set(FOCUS_REQUIRED) <= set(rows.columns)
    assert rows["EffectiveCost"].sum() == pytest.approx(278_840)


def test_an_edited_start_date_is_refused(yearly, tmp_path):
    # issue 34's fuzz (seed 62, case 315): the yearly problem has no start, so the plan's
    # start_date (the first of the month after it was solved) is its calendar. Moved to
    # 2030-05-01 by hand, the export went on and dated every FOCUS charge from May 2030.
    # Now the date must be the month the plan's cash flow begins: refused, exit 2, naming it.
    import json

    plan, _, cat = yearly
    data = json.loads(plan_json(plan))
    assert data["start_date"][:7] == data["cash_flow"][0]["month"]
    data["start_date"] = "2030-05-01"
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(data))
    args = ["export", str(plan_file), "--catalog", cat.directory, "--format", "focus"]
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "f")])
    assert result.exit_code == 2, result.output
    assert "start_date" in result.output and "'2030-05-01'" in result.output
    assert not (tmp_path / "f").exists()
