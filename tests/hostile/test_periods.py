"""Periods that never hide the optimum: the solver splits the problem's periods where a
candidate's life or term ends, solves over the pieces and reports the plan in the
periods the user wrote (solver/core/refine.py, solver/plan/reporting.py).

The cases (tests/analyses/test_period_outputs.py and tests/core/test_period_restrictions.py
give the catalogs): one 8x H100 unit serves a small chat workload around the clock.
"""

from __future__ import annotations

import pytest

from conftest import TINY_SERVERS, TINY_SITES, offering
from solver.core.compile import compile_problem
from solver.core.refine import refine_periods
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import load_problem, parse_problem
from solver.plan.lines import Plan
from solver.solve import solve_problem, solve_verified
from solver.trust.refinement import check_split_periods
from tests.core.test_period_restrictions import _problem

BIG_RENT = offering("p5", "h100-sxm", 8, 80.0)
BIG_SERVERS = [dict(TINY_SERVERS[0], capex_usd=1_764_000)]
BIG_SITES = [dict(TINY_SITES[0], colocation_usd_per_kw_month=500.0)]
SMALL_RENT = offering("p5", "h100-sxm", 8, 10.0, r1=6.0)
SMALL_SITES = [dict(TINY_SITES[0], colocation_usd_per_kw_month=50.0)]


def _issue_problem(periods=None):
    """The issue's 72-month problem (cash policy, no residual value: the defaults)."""
    data = _problem(periods).model_dump(mode="json", exclude_unset=True)
    del data["residual_value"]
    return parse_problem(data)


def _same_cents(a: float, b: float) -> bool:
    return abs(a - b) < 0.005


def test_the_issues_72_month_period_solves_to_buying_once_and_renting_the_last_year(
    tiny_catalog,
):
    # $80/h rented (730 h a month: $58,400), or a $1,764,000 box with a 60-month life and
    # 10 kW at $500/kW-month ($5,000 a month hosting). One 72-month period written.
    # Buy once, serve 60 months, rent the last 12:
    #   1,764,000 + 60 x 5,000 + 12 x 58,400 = 2,064,000 + 700,800 = $2,764,800
    # against all rented 72 x 58,400 = $4,204,800 (the plan before) and two boxes
    # 2 x 1,764,000 + 72 x 5,000 = $3,888,000.
    cat = tiny_catalog([BIG_RENT], servers=BIG_SERVERS, sites=BIG_SITES)
    plan = solve_problem(_issue_problem(), cat)
    assert _same_cents(plan.total_cost_usd, 2_764_800.0)
    assert plan.warnings == []
    assert list(plan.totals.by_period) == ["all"]
    bought = [(i.period, i.units, i.served_months) for i in plan.line_items if i.item == "purchase"]
    assert bought == [("all", 1.0, [0.0, 60.0])]
    [rent] = [i for i in plan.line_items if i.mode == "on_demand"]
    assert rent.served_months == [60.0, 72.0] and rent.hours == 12 * 730
    assert _same_cents(rent.cost_usd, 700_800.0)


def test_the_tiny_case_solves_to_276000_in_one_user_period(tiny_catalog):
    # $10/h rented or a $200,000 box, 60-month life, $500/month hosting, straight-line
    # residual: box 1 for months 0-60 (200,000 + 60 x 500 = 230,000), box 2 for 60-72
    # (200,000 less 48/60 of it at the horizon + 12 x 500 = 46,000): $276,000
    cat = tiny_catalog([SMALL_RENT], sites=SMALL_SITES)
    plan = solve_problem(_problem(None), cat)
    assert _same_cents(plan.total_cost_usd, 276_000.0)
    assert {i.period for i in plan.line_items} == {"all"}
    assert [i.served_months for i in plan.line_items if i.item == "purchase"] == [
        [0.0, 60.0],
        [60.0, 72.0],
    ]


def test_a_reservation_term_ending_inside_the_period(tiny_catalog):
    # 18 months in one period, on demand $10/h or a 1-year reservation at $6/h. No
    # 12-month term covers 18 months, so before: all on demand, 18 x 730 x 10 = $131,400.
    # Split at month 12: reserve months 0-12 (12 x 730 x 6 = $52,560) and rent the last 6
    # (6 x 730 x 10 = $43,800; a second reservation would be charged its whole 12-month
    # term, $52,560, the months past the horizon included): $96,360
    cat = tiny_catalog([SMALL_RENT], sites=SMALL_SITES)
    problem = _problem(None, modes=("on_demand", "reserved_1y"))
    data = problem.model_dump(mode="json", exclude_unset=True)
    data["horizon_months"] = 18
    plan = solve_problem(parse_problem(data), cat)
    assert _same_cents(plan.total_cost_usd, 12 * 730 * 6.0 + 6 * 730 * 10.0)
    assert plan.warnings == [] and list(plan.totals.by_period) == ["all"]
    [reserved] = [i for i in plan.line_items if i.item == "reservation"]
    assert reserved.period == "all" and reserved.served_months == [0.0, 12.0]


def test_a_life_ending_inside_a_period_no_longer_than_it(tiny_catalog):
    # two 36-month periods: each is shorter than the 60-month life, so nothing was
    # flagged, but a box bought at month 0 ends at month 60, inside the second period,
    # and so could serve only the first: a box for the first period and the second
    # rented, 1,764,000 + 36 x 5,000 + 36 x 58,400 = $4,046,400, or two boxes,
    # 2 x 1,764,000 + 72 x 5,000 = $3,888,000. Split at 60: the issue's $2,764,800,
    # reported in the two periods written
    cat = tiny_catalog([BIG_RENT], servers=BIG_SERVERS, sites=BIG_SITES)
    periods = [{"name": "first", "months": 36}, {"name": "second", "months": 36}]
    plan = solve_problem(_issue_problem(periods), cat)
    assert _same_cents(plan.total_cost_usd, 2_764_800.0)
    assert list(plan.totals.by_period) == ["first", "second"]
    # first: the box (1,764,000) and 36 months hosting; second: 24 months hosting and 12
    # months rented: 1,764,000 + 180,000 = 1,944,000 and 120,000 + 700,800 = 820,800
    assert _same_cents(plan.totals.by_period["first"], 1_944_000.0)
    assert _same_cents(plan.totals.by_period["second"], 820_800.0)


def test_the_plan_is_in_the_users_periods_everywhere(tiny_catalog):
    cat = tiny_catalog([BIG_RENT], servers=BIG_SERVERS, sites=BIG_SITES)
    periods = [{"name": "first", "months": 36}, {"name": "second", "months": 36}]
    plan = solve_problem(_issue_problem(periods), cat)
    names = {"first", "second"}
    assert {i.period for i in plan.line_items} <= names
    assert {i.start_period for i in plan.line_items if i.start_period} <= names
    assert all(set(i.cost_by_period_usd) <= names for i in plan.line_items)
    assert {m.period for m in plan.cash_flow} == names and len(plan.cash_flow) == 72
    assert {d.period for d in plan.deployments} <= names
    # the months: 36 in each period, and the money adds up to the cent
    assert [m.period for m in plan.cash_flow].count("second") == 36
    assert _same_cents(sum(m.total_usd for m in plan.cash_flow), plan.total_cost_usd)
    assert _same_cents(sum(plan.totals.by_period.values()), plan.total_cost_usd)
    assert _same_cents(sum(i.cost_usd for i in plan.line_items), plan.total_cost_usd)
    # and it round-trips as a plan file
    again = Plan.model_validate_json(plan.model_dump_json())
    assert again.line_items == plan.line_items


def test_the_verifier_checks_the_split_and_can_refuse_it(tiny_catalog):
    cat = tiny_catalog([BIG_RENT], servers=BIG_SERVERS, sites=BIG_SITES)
    problem = _issue_problem()
    plan, solution = solve_verified(problem, cat)
    [check] = [c for c in plan.checks if c.name == "split_periods"]
    assert check.detail.startswith("planned over 2 periods"), check.detail
    # the independent checks ran on the split plan, against the split problem: its one
    # workload in one block has its demand checked once in each of the 2 split periods
    # (the problem as written has 1 period), then the split check ties it to what is
    # reported
    details = {c.name: c.detail for c in plan.checks}
    assert details["demand met"] == "2 checked"
    assert list(details)[-1] == "split_periods"
    split = solution.compiled.problem
    assert [p.name for p in split.resolved_periods] == ["all-1", "all-2"]
    inner = Plan.model_validate(plan.model_dump())
    inner = inner.model_copy(
        update={"totals": inner.totals.model_copy(update={"by_period": {"all": 1.0}})}
    )
    bad = check_split_periods(problem, split, plan, inner)
    assert not bad.ok and "period 'all' totals differ" in bad.detail


def test_the_seed_keeps_its_periods():
    # the shipped seed: its reservations and servers cost more per token/s than renting
    # the same work on demand, so no split (its golden plan and time are unchanged)
    problem = load_problem("problems/seed-2m-13b.yaml")
    refinement = refine_periods(compile_problem(problem, load_catalog()))
    assert refinement is not None and not refinement.split


def test_a_budget_on_the_period_keeps_it_and_warns(tiny_catalog):
    # a budget over the 72-month period is not a budget over each piece: no split, the
    # restricted plan (all rented, 72 x 7,300 = $525,600) and the warning say so
    cat = tiny_catalog([SMALL_RENT], sites=SMALL_SITES)
    plan = solve_problem(_problem(None, period_budget_usd={"all": 1e7}), cat)
    assert _same_cents(plan.total_cost_usd, 525_600.0)
    [warning] = plan.warnings
    assert warning.kind == "period_structure"


@pytest.mark.parametrize("horizon", [61, 66, 119, 121])
def test_no_split_plan_costs_more_than_the_periods_written(tiny_catalog, horizon):
    # the split problem holds every plan of the problem as written, so its optimum is
    # never dearer: one period against periods of one month each would be the truth; here
    # against the same problem solved without splitting
    cat = tiny_catalog([BIG_RENT], servers=BIG_SERVERS, sites=BIG_SITES)
    data = _issue_problem().model_dump(mode="json", exclude_unset=True)
    data["horizon_months"] = horizon
    problem = parse_problem(data)
    split = solve_problem(problem, cat)
    kept, _ = solve_verified(problem, cat, split_periods=False)
    assert split.total_cost_usd <= kept.total_cost_usd + 0.005
    assert list(split.totals.by_period) == ["all"]


def test_a_split_plan_file_verifies_exports_and_diffs_at_its_months(tiny_catalog, tmp_path):
    # the issue's plan as a file, dated from 2027-01 (calendar hours): the plan-file
    # verifier takes it back to its split periods and accepts it; FOCUS rows date the box
    # in month 0 and the rent in months 60-72, the year 2032 (a leap year: 366 x 24 =
    # 8,784 h x $80 = $702,720); diff prices the old plan at new prices ($90/h) exactly:
    # 2,064,000 + 8,784 x 90 = $2,854,560
    import json

    import yaml
    from typer.testing import CliRunner

    from conftest import write_catalog
    from solver.cli import app

    data = _issue_problem().model_dump(mode="json", exclude_unset=True)
    data["start"] = "2027-01"
    problem = tmp_path / "p.yaml"
    problem.write_text(yaml.safe_dump(data))
    cat = write_catalog(tmp_path / "cat", [BIG_RENT], servers=BIG_SERVERS, sites=BIG_SITES)
    dear = offering("p5", "h100-sxm", 8, 90.0)
    cat90 = write_catalog(tmp_path / "cat90", [dear], servers=BIG_SERVERS, sites=BIG_SITES)
    runner = CliRunner()
    plan = tmp_path / "plan.json"
    args = ["solve", str(problem), "--catalog", str(cat), "--format", "json", "--out", str(plan)]
    assert runner.invoke(app, args).exit_code == 0
    focus = tmp_path / "focus"
    args = ["export", str(plan), "--out", str(focus), "--format", "focus"]
    result = runner.invoke(app, args + ["--problem", str(problem), "--catalog", str(cat)])
    assert result.exit_code == 0, result.output
    import csv

    rows = list(csv.DictReader((focus / "focus.csv").open()))
    # all in by default: the rows add up to the plan's all-in total (compute and the cost
    # lines, worked on the problem's own periods, so the file reloads and re-derives)
    saved = json.loads(plan.read_text())
    assert saved["cost_lines"] and saved["all_in_cost_usd"] > saved["total_cost_usd"]
    assert _same_cents(sum(float(r["BilledCost"]) for r in rows), saved["all_in_cost_usd"])
    beside = {"storage", "egress", "support", "staff", "tax", "contingency"}
    by_year: dict[str, float] = {}
    for r in rows:
        if r["x_PlanItem"] in beside:  # the compute rows, worked by hand below
            continue
        year = r["ChargePeriodStart"][:4]
        by_year[year] = by_year.get(year, 0.0) + float(r["BilledCost"])
    # 2027: the box and 12 months hosting, 1,764,000 + 60,000; 2028-2031: hosting
    # 60,000 a year; 2032: the last year rented, 702,720
    assert _same_cents(by_year["2027"], 1_824_000.0)
    assert all(_same_cents(by_year[y], 60_000.0) for y in ("2028", "2029", "2030", "2031"))
    assert _same_cents(by_year["2032"], 8_784 * 80.0)
    args = ["diff", str(plan), str(plan), "--catalog", str(cat90), "--format", "json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    diff = json.loads(result.output)
    assert _same_cents(diff["old_at_new_prices_usd"], 2_064_000.0 + 8_784 * 90.0)


def test_the_cash_flow_recomputed_from_the_reported_plan_is_the_plans(tiny_catalog):
    # the months of the reported plan (user periods, served_months) give the same cash
    # flow as the split plan it was solved as
    from datetime import date

    from solver.plan.cashflow import cash_flow

    cat = tiny_catalog([SMALL_RENT], sites=SMALL_SITES)
    problem = _problem(None)
    plan = solve_problem(problem, cat)
    again = cash_flow(plan, problem, cat, date.fromisoformat(plan.start_date))
    assert [round(m.total_usd, 2) for m in again] == [round(m.total_usd, 2) for m in plan.cash_flow]
