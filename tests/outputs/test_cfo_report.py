"""The report a CFO reads (issue 49): the sensitivity lists no dual of a pool the plan does
not use (in the HTML, the CLI table and the workbook's sheet), unused pools appear only as
what would have to change for them to enter, a handful; price scenarios as p10/p50/p90 of
the total. And the live workbook: its formulas, recomputed, give the plan's totals to the
cent, and a price changed in its inputs sheet moves the total by units x hours x change."""

from __future__ import annotations

import io

import openpyxl
import pytest
from xlsx_recalc import cell, recalculated

from conftest import ROOT
from solver.analyses.report_analysis import Analysis
from solver.analyses.sensitivity import sensitivity_report
from solver.analyses.sensitivity.results import BreakEven, SensitivityReport, SweepPoint
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import load_problem
from solver.outputs.report import report_html, report_xlsx, sensitivity_text
from solver.outputs.scenario_spread import total_percentiles
from solver.outputs.sensitivity_views import ENTERING_TOP, entering, plan_pools
from solver.solve import solve_for_analysis


@pytest.fixture(scope="module")
def seed_analysis():
    problem = load_problem(ROOT / "problems" / "seed-2m-13b.yaml")
    plan, solution = solve_for_analysis(problem, load_catalog())
    report = sensitivity_report(solution, break_even_limit=0)
    return plan, report


def test_the_sensitivity_lists_no_dual_of_a_pool_the_plan_does_not_use(seed_analysis):
    plan, report = seed_analysis
    used = plan_pools(plan)
    unused = {d.pool for d in report.duals if d.pool and d.pool not in used}
    # the LP of the fixed plan prices the zero units of pools the seed does not use (issue
    # 49 counted 14,796 fleet rows of them); their duals are degenerate (nothing of the plan
    # is in those rows: duals.plan_moves), so the report leaves them out at the source
    nonzero_unused = [
        d for d in report.duals if d.pool in unused and abs(d.d_objective_d_rhs) > 1e-9
    ]
    assert not nonzero_unused
    text = sensitivity_text(report, used=used)
    html = report_html(Analysis(plan=plan, sensitivity=report), b"")
    sensitivity = html[html.index("<h2>Sensitivity") : html.index("<h2>Frontiers")]
    for pool in unused:
        assert pool not in text, pool
        assert pool not in sensitivity, pool
    # the workbook's sensitivity sheet: only rows of no pool or of the plan's pools
    book = openpyxl.load_workbook(
        io.BytesIO(report_xlsx(Analysis(plan=plan, sensitivity=report))), read_only=True
    )
    rows = list(book["sensitivity"].iter_rows(values_only=True))
    pool_col = rows[0].index("pool")
    assert {r[pool_col] for r in rows[1:] if r[pool_col]} <= used
    assert len(rows) - 1 <= len(report.duals)


def _break_even(pool: str, change_pct: float, in_plan: bool = False) -> BreakEven:
    return BreakEven(
        pool_id=pool, provider="p", region="r", offering=pool.split("#")[0], accelerator="a",
        mode="on_demand", in_plan=in_plan, price_unit="USD per unit-hour", current_price=2.0,
        break_even_price=2.0 * (1 + change_pct / 100), change_pct=change_pct,
        direction="leaves above" if in_plan else "enters below",
    )  # fmt: skip


def test_unused_pools_only_as_what_would_change_for_them_to_enter_ranked_a_handful():
    # 8 unused pools at -5%, -10%, ..., -40%, one tie (-0.01%) and one pool of the plan: the
    # 5 closest moves, smallest first; no tie and no pool of the plan among them
    rows = [_break_even(f"o{k}#on_demand", -5.0 * k) for k in range(8, 0, -1)]
    rows += [_break_even("tie#on_demand", -0.01), _break_even("mine#on_demand", 20.0, True)]
    shown = entering(rows)
    assert ENTERING_TOP == 5
    assert [b.pool_id for b in shown] == [f"o{k}#on_demand" for k in range(1, 6)]
    report = SensitivityReport(
        problem="x", objective_kind="min_cost", objective=1.0, caveat="", duals=[],
        reduced_costs=[], break_even=rows,
    )  # fmt: skip
    text = sensitivity_text(report, used={"mine#on_demand"})
    assert "o5 (a) on_demand enters the plan below $1.50/h" in text
    assert "o6 " not in text and "tie" not in text
    assert "mine (a) on_demand leaves the plan above $2.40/h" in text


def test_price_scenarios_as_percentiles_of_the_total():
    # 11 totals $100..$200 in $10 steps: numpy's linear percentiles put p10 at the 2nd
    # ($110), p50 at the 6th ($150), p90 at the 10th ($190); an infeasible draw is left out
    points = [
        SweepPoint(sweep="scenario", value=k, status="optimal", total_cost_usd=100.0 + 10 * k)
        for k in range(11)
    ]
    points.append(SweepPoint(sweep="scenario", value=11, status="infeasible"))
    assert total_percentiles(points) == pytest.approx({"p10": 110.0, "p50": 150.0, "p90": 190.0})


def test_the_live_workbook_recomputes_the_plan_and_moves_with_a_price(seed_analysis):
    plan, report = seed_analysis
    data = report_xlsx(Analysis(plan=plan, sensitivity=report, budget_usd=2_000_000))
    values = recalculated(data)
    book = openpyxl.load_workbook(io.BytesIO(data))
    at = {r[0].value: r[1].coordinate for r in book["summary"].iter_rows(min_row=2)}
    # the summary's total is the plan sheet's total row, a formula over the line rows,
    # which are formulas over the inputs sheet: recomputed, the plan's total to the cent
    total = cell(values, "summary", at["total cost (USD)"])
    assert total == pytest.approx(round(plan.total_cost_usd, 2), abs=0.005)
    # the headline: all in by default, the compute total plus the cost lines sheet's total
    # (storage $3,462.70 + egress $36.05 + staff $10,327.80 on the seed, each line quantity
    # x unit price, compute $370,028.54): $383,855.08, the plan's all-in total to the cent
    all_in = cell(values, "summary", at["all-in total (USD)"])
    assert all_in == pytest.approx(round(plan.all_in_cost_usd, 2), abs=0.005)
    assert all_in == pytest.approx(383_855.08, abs=0.005)
    assert book["cost lines"]["F2"].value.startswith("=")  # storage: C2 x E2
    # the budget headroom: $2,000,000 less the all-in total (the budget holds it)
    headroom = cell(values, "summary", at["budget headroom (USD)"])
    assert headroom == pytest.approx(2_000_000 - round(plan.all_in_cost_usd, 2), abs=0.005)
    # the subtotals by provider, each a SUMIF over the plan sheet: the plan's totals
    sub = book["subtotals"]
    for row in sub.iter_rows(min_row=2):
        if row[0].value == "provider":
            want = plan.totals.by_provider[row[1].value]
            assert cell(values, "subtotals", row[2].coordinate) == pytest.approx(want, abs=0.005)
    # a price tried in the inputs sheet: the Lambda GH200 shoulder line of m04-15 (3 units x
    # 2,928 h, the seed under the default guard since issue 47's sizing) from $2.29 to
    # $2.39: the total moves by 3 x 2,928 x $0.10 = $878.40
    inputs = book["inputs"]
    header = [c.value for c in inputs[1]]
    line = next(
        r for r in inputs.iter_rows(min_row=2)
        if (r[header.index("period")].value, r[header.index("block")].value,
            r[header.index("provider")].value) == ("m04-15", "shoulder", "lambda")
    )  # fmt: skip
    price = line[header.index("unit_price_per_hour")]
    assert price.value == pytest.approx(2.29)
    assert line[header.index("units")].value == 3 and line[header.index("hours")].value == 2928
    price.value = 2.39
    out = io.BytesIO()
    book.save(out)
    moved = recalculated(out.getvalue())
    new_total = cell(moved, "summary", at["total cost (USD)"])
    assert new_total - total == pytest.approx(878.40, abs=0.005)
    moved_all_in = cell(moved, "summary", at["all-in total (USD)"])
    assert moved_all_in - all_in == pytest.approx(878.40, abs=0.005)
    assert cell(moved, "summary", at["budget headroom (USD)"]) == pytest.approx(
        headroom - 878.40, abs=0.005
    )
