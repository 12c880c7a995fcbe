"""What surviving a loss costs (plan ``loss_costs``) and the moves the verifier recomputes
(``migration_penalty_usd``), worked by hand on the tiny catalog: an H100 instance serves
10 req/s, 730 h a month, capacity for the peak at max_utilisation 1 (conftest.serve)."""

from __future__ import annotations

import pytest

from conftest import HOURS, TINY_REGIONS, check, offering, problem, serve
from solver.outputs.loss_cost_text import loss_cost_lines
from solver.solve import solve_problem
from solver.trust.verify import verify_plan

H1 = offering("h1", "h100-sxm", 1, 4.0)  # acme us-east, $4/h
H1_EU = offering("h1", "h100-sxm", 1, 5.0, region="eu-north")  # acme eu-north, $5/h
H1_WEST = offering("h1", "h100-sxm", 1, 5.0, region="us-west")  # acme us-west, $5/h
REGIONS = [*TINY_REGIONS, {**TINY_REGIONS[0], "region": "us-west"}]
TWO_MONTHS = {
    "horizon_months": 2,
    "periods": [{"name": "m1", "months": 1}, {"name": "m2", "months": 1}],
}


def _solve(tiny_catalog, workload, offerings=(H1, H1_EU, H1_WEST)):
    catalog = tiny_catalog(list(offerings), regions=REGIONS)
    return solve_problem(problem([workload], **TWO_MONTHS), catalog), catalog


def test_the_cost_of_surviving_a_region_worked_by_hand(tiny_catalog):
    # 10 req/s = 1 H100 unit. Surviving a region: 1 unit in us-east ($4/h) and 1 in
    # eu-north or us-west ($5/h), ($4 + $5) x 730 h x 2 months = $13,140. Without the rule:
    # the one us-east unit, $4 x 730 x 2 = $5,840. Surviving it costs $5 x 730 x 2 =
    # $7,300. Each region holds one of the two units: its loss takes 50% of the capacity.
    plan, _ = _solve(tiny_catalog, serve(10, survive_loss_of=["region"]))
    assert plan.total_cost_usd == pytest.approx(9 * 2 * HOURS)
    [row] = plan.loss_costs
    assert row.kind == "region" and row.workloads == ["chat"]
    assert row.total_cost_usd == pytest.approx(13_140.0)
    assert row.without_total_usd == pytest.approx(5_840.0)
    assert row.cost_usd == pytest.approx(7_300.0)
    assert row.largest_share_of_capacity == pytest.approx(0.5)
    assert row.largest_domain in {"acme/us-east", "acme/eu-north", "acme/us-west"}
    ok, detail = check(plan, "loss costs")
    assert ok, detail
    [line] = loss_cost_lines(plan)[1:]
    assert "losing a region (chat): $7,300.00 ($13,140.00 against $5,840.00 without" in line


def test_a_plan_without_a_loss_rule_carries_no_loss_costs(tiny_catalog):
    # No survive_loss_of: the field is left out of the plan's JSON (old goldens stand).
    plan, _ = _solve(tiny_catalog, serve(10))
    assert plan.loss_costs is None
    assert "loss_costs" not in plan.model_dump(mode="json")
    assert loss_cost_lines(plan) == []


def test_the_verifier_refuses_an_edited_loss_cost(tiny_catalog):
    # The cost is the difference of the two totals: $7,300 edited to $1,000 is refused, and
    # a largest domain that holds none of the capacity (acme/nowhere) too.
    plan, catalog = _solve(tiny_catalog, serve(10, survive_loss_of=["region"]))
    prob = problem([serve(10, survive_loss_of=["region"])], **TWO_MONTHS)
    row = plan.loss_costs[0]
    for edit in ({"cost_usd": 1_000.0}, {"largest_domain": "acme/nowhere"}):
        edited = plan.model_copy(update={"loss_costs": [row.model_copy(update=edit)]})
        failed = {c.name: c.detail for c in verify_plan(edited, prob, catalog) if not c.ok}
        assert "loss costs" in failed, edit


def test_the_verifier_recomputes_the_moves(tiny_catalog):
    # 10 req/s in m1, 20 in m2, surviving a region, a move at $1,000 + 100 GB x $0.10 =
    # $1,010 (tests/test_moves_and_limits.py: m2 moves into a third region, one move).
    # The plan's $1,010 holds; edited to $0 it is refused with the move named.
    cheap = {"migration_usd_per_move": 1000, "migration_gb": 100, "migration_usd_per_gb": 0.1}
    workload = serve(10, survive_loss_of=["region"], demand_by_period={"m2": 2}, **cheap)
    plan, catalog = _solve(tiny_catalog, workload)
    assert plan.migration_penalty_usd == pytest.approx(1010.0)
    ok, detail = check(plan, "migration penalty recomputed")
    assert ok, detail
    edited = plan.model_copy(update={"migration_penalty_usd": 0.0})
    prob = problem([workload], **TWO_MONTHS)
    failed = {c.name: c.detail for c in verify_plan(edited, prob, catalog) if not c.ok}
    assert (
        "$0.00 vs recomputed $1,010.00 (1 moves: chat m2 into acme/"
        in failed["migration penalty recomputed"]
    )


def test_the_table_and_the_report_say_what_the_loss_costs(tiny_catalog):
    # The same plan as above: procure solve's table and the report's summary carry the
    # sentence with the $7,300.00 a region's loss costs.
    from solver.analyses.report_analysis import Analysis
    from solver.analyses.sensitivity.results import SensitivityReport
    from solver.outputs.report import report_html
    from solver.outputs.text import plan_table

    plan, _ = _solve(tiny_catalog, serve(10, survive_loss_of=["region"]))
    words = " ".join(plan_table(plan).split())
    assert "losing a region (chat): $7,300.00 ($13,140.00 against $5,840.00 without" in words
    empty = SensitivityReport(
        problem="t", objective_kind="min_cost", objective=0.0, caveat="", duals=[], reduced_costs=[]
    )
    html = report_html(Analysis(plan=plan, sensitivity=empty), b"")
    section = html[html.index("<h3>What surviving a loss costs") :]
    assert "losing a region (chat): $7,300.00" in section[: section.index("</ul>")]
