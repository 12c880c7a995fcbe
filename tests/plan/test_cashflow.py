"""The calendar and the monthly cash flow (issue 12, items 1-2): months from the
problem's start, opex / commitments / capex, cumulative spend against the budget; the
months sum to the plan total to the cent, and the cash flow and the FOCUS rows both
match hand-worked months and the plan's line items."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from conftest import CHAT_WORKLOAD, TINY_SITES, offering, write_catalog
from solver.cli import app
from solver.plan.cashflow import first_of_next_month

runner = CliRunner()
#: FOCUS x_PlanItem of the cost lines (the categories beside compute)
COST_LINE_ITEMS = ["storage", "egress", "support", "staff", "tax", "contingency"]

PROBLEM = (
    """\
name: calendar
horizon_months: 12
start: 2027-01
budget_usd: 100000
costs: none
periods:
  - {name: q1, months: 3}
  - {name: q2, months: 3}
  - {name: q3, months: 3}
  - {name: q4, months: 3}
modes: [MODES]
load_blocks: [{name: all-day, hours_per_day: 24, demand_factor: 1}]
workloads:
"""
    + CHAT_WORKLOAD
)


def _solve(tmp_path, modes: str, budget: str = "100000", sites=None):
    # one H100 serves the demand all year: $4.00/h on demand, $2.00/h reserved for a year
    offerings = [offering("h1", "h100-sxm", 1, 4.0, r1=2.0)]
    cat = write_catalog(tmp_path / "cat", offerings, sites=sites)
    prob = tmp_path / "p.yaml"
    prob.write_text(PROBLEM.replace("MODES", modes).replace("100000", budget))
    plan = tmp_path / "plan.json"
    args = ["solve", str(prob), "--catalog", str(cat), "--format", "json", "--out", str(plan)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads(plan.read_text()), plan, tmp_path


def _focus_by_month(plan_path, tmp_path) -> pd.Series:
    out = tmp_path / "focus"
    result = runner.invoke(app, ["export", str(plan_path), "--out", str(out), "--format", "focus"])
    assert result.exit_code == 0, result.output
    rows = pd.read_csv(io.StringIO((out / "focus.csv").read_text()))
    # the compute rows (the rows of the categories beside compute are test_costs.py's)
    rows = rows[~rows["x_PlanItem"].isin(COST_LINE_ITEMS)]
    # in USD: a line billed in EUR (the seed's Seeweb H200 since issue 47) states its
    # EffectiveCost in EUR, and x_EffectiveCostUsd in USD
    return rows.groupby(rows["BillingPeriodStart"].str.slice(0, 7))["x_EffectiveCostUsd"].sum()


def test_a_reservation_month_by_month(tmp_path):
    plan, path, tmp = _solve(tmp_path, "on_demand, reserved_1y")
    flow = plan["cash_flow"]
    assert plan["start_date"] == "2027-01-01"
    assert [m["month"] for m in flow] == [f"2027-{k:02d}" for k in range(1, 13)]
    # a 1-year reservation at $2.00/h from 2027-01: each month pays its real hours,
    # $2.00 x 744 h = $1,488 in January, x 672 h = $1,344 in February, x 720 h = $1,440 in
    # April; $2.00 x 8,760 h = $17,520 in the year; nothing rented
    days = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    assert [m["commitments_usd"] for m in flow] == pytest.approx([2.0 * 24 * d for d in days])
    assert all(m["rented_usd"] == 0 and m["capex_usd"] == 0 for m in flow)
    assert plan["total_cost_usd"] == pytest.approx(17_520.0)
    assert flow[0]["new_commitments"] == ["reserve 1 x acme/us-east/h1 (reserved_1y) to 2028-01"]
    # cumulative spend against the $100,000 budget: $82,480 left at the end
    assert flow[-1]["cumulative_usd"] == pytest.approx(17_520.0)
    assert flow[-1]["budget_headroom_usd"] == pytest.approx(82_480.0)
    # to the cent, in total and month by month: the FOCUS rows bill the same hand-worked
    # months ($1,488, $1,344, $1,488, $1,440, ...), not whatever the cash flow says
    assert round(sum(m["total_usd"] for m in flow), 2) == round(plan["total_cost_usd"], 2)
    focus = _focus_by_month(path, tmp)
    assert list(focus.index) == [f"2027-{k:02d}" for k in range(1, 13)]
    assert [float(focus[m]) for m in focus.index] == pytest.approx([2.0 * 24 * d for d in days])


def test_a_bought_server_is_capex_in_its_month(tmp_path):
    # Only owned hardware: the tiny catalog's box-h100 (8 x H100, $200,000, 10 kW, no lead
    # time, no maintenance) at a colo charging $50/kW-month with free electricity. By hand:
    #   January 2027: capex $200,000 (cash policy: paid in the month it is bought) and
    #     hosting 10 kW x $50 = $500: $200,500;
    #   February - December: hosting $500 a month (a monthly fee, whatever the month's hours);
    #   the year: 200,000 + 12 x 500 = $206,000 (no residual value credited by default).
    sites = [dict(TINY_SITES[0], colocation_usd_per_kw_month=50.0)]
    plan, path, tmp = _solve(tmp_path, "owned", budget="1000000", sites=sites)
    flow = plan["cash_flow"]
    bought = [i for i in plan["line_items"] if i["item"] == "purchase"]
    assert bought and bought[0]["period"] == "q1"
    assert plan["total_cost_usd"] == pytest.approx(206_000.0)
    assert [m["month"] for m in flow] == [f"2027-{k:02d}" for k in range(1, 13)]
    assert [m["capex_usd"] for m in flow] == pytest.approx([200_000.0] + [0.0] * 11)
    assert [m["owned_opex_usd"] for m in flow] == pytest.approx([500.0] * 12)
    assert [m["total_usd"] for m in flow] == pytest.approx([200_500.0] + [500.0] * 11)
    assert flow[0]["new_commitments"][0].startswith("buy 1 x")
    assert flow[-1]["cumulative_usd"] == pytest.approx(206_000.0)
    # the FOCUS rows bill the same hand-worked months
    focus = _focus_by_month(path, tmp)
    assert list(focus.index) == [f"2027-{k:02d}" for k in range(1, 13)]
    assert [float(focus[m]) for m in focus.index] == pytest.approx([200_500.0] + [500.0] * 11)


def test_default_start_is_the_first_of_next_month():
    from datetime import date

    assert first_of_next_month(date(2026, 11, 24)) == date(2026, 12, 1)
    assert first_of_next_month(date(2026, 12, 31)) == date(2027, 1, 1)


def test_as_of_accepts_a_date(tmp_path):
    plan, path, tmp = _solve(tmp_path, "on_demand, reserved_1y")
    prices = tmp / "prices.csv"
    prices.write_text("provider,region,offering,mode,price,date\nacme,us-east,h1,on_demand,3.0,x\n")
    args = ["resolve", str(tmp / "p.yaml"), "--baseline", str(path), "--prices", str(prices)]
    args += ["--catalog", str(tmp / "cat"), "--format", "json"]
    by_date = runner.invoke(app, [*args, "--as-of", "2027-05-15"])
    by_name = runner.invoke(app, [*args, "--as-of", "q2"])
    assert by_date.exit_code == 0, by_date.output
    # May 2027 is in q2 (April-June): the same re-solve as naming q2
    assert json.loads(by_date.stdout)["carried"]["as_of"] == "q2"
    one, other = json.loads(by_date.stdout)["plan"], json.loads(by_name.stdout)["plan"]
    assert one["line_items"] == other["line_items"]
    assert one["total_cost_usd"] == other["total_cost_usd"]
    # the re-based plan starts in April
    assert json.loads(by_date.stdout)["plan"]["start_date"] == "2027-04-01"


def test_the_seed_cash_flow_and_focus_rows_against_its_line_items(tmp_path, seed_solved):
    # The shipped seed (start 2027-01, 36 months, everything rented on demand). Checked
    # against the plan's line items and the calendar, not against each other (both are
    # made from the charges table):
    # - each period's months sum to the period's cost in the line items' totals, for the
    #   cash flow and for the FOCUS EffectiveCost;
    # - m04-15 (April 2027 - March 2028, 366 days with 29 February 2028 = 8,784 h) runs
    #   the same serving fleet every hour, so each month costs the period's cost x its
    #   hours / 8,784: April (720 h), May (744 h), February 2028 (696 h).
    code, output = seed_solved
    assert code == 0, output
    plan_path = tmp_path / "seed.json"
    plan_path.write_text(output)
    plan = json.loads(output)
    flow = plan["cash_flow"]
    assert flow[0]["month"] == "2027-01" and flow[-1]["month"] == "2029-12"
    by_period = plan["totals"]["by_period"]
    months_of = {p: [m["month"] for m in flow if m["period"] == p] for p in by_period}
    assert [len(months_of[p]) for p in by_period] == [3, 12, 12, 9]
    focus = _focus_by_month(plan_path, tmp_path)
    for period, usd in by_period.items():
        assert sum(m["total_usd"] for m in flow if m["period"] == period) == pytest.approx(usd)
        assert sum(float(focus[m]) for m in months_of[period]) == pytest.approx(usd)
    month = {m["month"]: m["total_usd"] for m in flow}
    serving = by_period["m04-15"]
    for name, hours in (("2027-04", 720), ("2027-05", 744), ("2028-02", 696)):
        assert month[name] == pytest.approx(serving * hours / 8_784)
        assert float(focus[name]) == pytest.approx(serving * hours / 8_784)
    assert round(sum(month.values()), 2) == round(plan["total_cost_usd"], 2)


FEBRUARY = (
    """\
name: february
horizon_months: 1
costs: none
START
modes: [on_demand]
load_blocks: [{name: all-day, hours_per_day: 24, demand_factor: 1}]
workloads:
"""
    + CHAT_WORKLOAD
)


def _february(tmp_path, start: str):
    cat = write_catalog(tmp_path / "cat", [offering("h1", "h100-sxm", 1, 4.0)])
    prob = tmp_path / "p.yaml"
    prob.write_text(FEBRUARY.replace("START", start))
    path = tmp_path / "plan.json"
    args = ["solve", str(prob), "--catalog", str(cat), "--format", "json", "--out", str(path)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads(path.read_text()), path, prob, cat


def test_a_month_on_the_calendar_bills_its_real_hours(tmp_path):
    # one H100 at $4.00/h for February 2027 (28 days = 672 h): $2,688; the FOCUS rows
    # bill the same 672 h
    plan, path, _, _ = _february(tmp_path, "start: 2027-02")
    assert plan["month_hours"] == "calendar"
    assert plan["total_cost_usd"] == pytest.approx(2_688.0)
    assert [i["hours"] for i in plan["line_items"]] == [672.0]
    out = tmp_path / "focus"
    result = runner.invoke(app, ["export", str(path), "--out", str(out), "--format", "focus"])
    assert result.exit_code == 0, result.output
    rows = pd.read_csv(io.StringIO((out / "focus.csv").read_text()))
    assert rows["ConsumedQuantity"].sum() == pytest.approx(672.0)
    assert rows["ChargePeriodEnd"].tolist() == ["2027-03-01T00:00:00Z"]


def test_without_a_start_a_month_is_730_hours(tmp_path):
    # no start: an average month of 8,760 / 12 = 730 h, $2,920, whatever day it is solved
    plan, _, _, _ = _february(tmp_path, "")
    assert plan["month_hours"] == "average_730"
    assert plan["total_cost_usd"] == pytest.approx(2_920.0)


def test_the_verifier_counts_the_calendar_on_its_own(tmp_path):
    # a plan billed at 730 h for February 2027 is refused: the verifier's own calendar
    # says 672 h
    from solver.inputs.catalog import load_catalog
    from solver.inputs.problem import load_problem
    from solver.plan import Plan
    from solver.trust.verify import verify_plan

    data, _, prob, cat = _february(tmp_path, "start: 2027-02")
    plan = Plan.model_validate(data)
    problem, catalog = load_problem(prob), load_catalog(cat)
    assert all(c.ok for c in verify_plan(plan, problem, catalog))
    item = plan.line_items[0].model_copy(update={"hours": 730.0, "cost_usd": 2_920.0})
    tampered = plan.model_copy(update={"line_items": [item], "total_cost_usd": 2_920.0})
    failed = {c.name for c in verify_plan(tampered, problem, catalog) if not c.ok}
    assert "line hours" in failed
