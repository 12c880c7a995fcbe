"""Costs beside compute (issue 29 part 5): storage, egress, support, staff, tax and
contingency, each its own cost line, worked by hand on the shipped problem
problems/chat-7b-all-in.yaml; their FOCUS rows; the budget holding them; bad values.

The plan: 2,000 users x 20 requests x 250 output tokens / 86,400 s = 115.7407 tokens/s of
Mistral 7B on AWS, January to March 2027 (calendar hours: 744 + 672 + 744 = 2,160 h).
One g5.xlarge on demand serves it at $1.006/h (catalogs/offerings.csv): $748.464 in
January and March (744 h), $676.032 in February (672 h), $2,172.96 in all.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
import yaml

from solver.errors import InfeasibleError, ProcureError
from solver.inputs.catalog import load_catalog
from solver.inputs.costs import SUPPORT_PLANS, support_fee_usd
from solver.inputs.problem import load_problem, parse_problem
from solver.outputs.focus import focus_frame, validate_focus
from solver.solve import solve_problem
from solver.trust.verify import verify_plan

ROOT = Path(__file__).resolve().parents[2]
PROBLEM = ROOT / "problems" / "chat-7b-all-in.yaml"


@pytest.fixture(scope="module")
def solved():
    catalog = load_catalog()
    problem = load_problem(PROBLEM)
    return solve_problem(problem, catalog), problem, catalog


def _line(plan, category: str, entry: int = -1):
    (line,) = [c for c in plan.cost_lines if c.category == category and c.entry == entry]
    return line


def test_each_cost_line_worked_by_hand(solved):
    plan, _, _ = solved
    (rent,) = plan.line_items
    # the compute the lines below rest on: one g5.xlarge on demand for 2,160 h at $1.006
    assert (rent.offering, rent.units, rent.hours) == ("aws/us-east-1/g5.xlarge", 1.0, 2160.0)
    assert plan.total_cost_usd == pytest.approx(2160 * 1.006)  # $2,172.96
    # storage: 20,000 GB x $0.023/GB-month (S3 Standard) x 3 months = $1,380, $460 a month
    storage = _line(plan, "storage", 0)
    assert storage.cost_usd == pytest.approx(1380.0)
    assert storage.cost_by_month_usd == pytest.approx({0: 460.0, 1: 460.0, 2: 460.0})
    # egress by tokens: 115.7407 tokens/s x 2,160 h x 3,600 s = 900 M tokens x 0.004 GB per
    # million = 3.6 GB x $0.09 = $0.324 (January: 744 h -> 1.24 GB -> $0.1116)
    by_tokens = _line(plan, "egress", 0)
    assert by_tokens.quantity == pytest.approx(3.6)
    assert by_tokens.cost_usd == pytest.approx(0.324)
    assert by_tokens.cost_by_month_usd[0] == pytest.approx(0.1116)
    # egress by month: 500 GB x 3 months x $0.09 = $135
    assert _line(plan, "egress", 1).cost_usd == pytest.approx(135.0)
    # support (AWS Business): each month 10% of the first $10,000 of AWS spend, at least
    # $100. January: 748.464 + 460 + 45 + 0.1116 = $1,253.5756 -> $125.35756; February:
    # 676.032 + 460 + 45 + 0.1008 = $1,181.1328 -> $118.11328; March as January.
    support = _line(plan, "support")
    assert support.cost_by_month_usd == pytest.approx({0: 125.35756, 1: 118.11328, 2: 125.35756})
    assert support.cost_usd == pytest.approx(368.8284)
    # staff (operations_staff: {}, its default): 2,160 instance-hours x $966.16 per
    # instance-year (one administrator per 140 servers at $135,262.41) / 8,760 h = $238.23125
    assert _line(plan, "staff").cost_usd == pytest.approx(2160 * 135_262.41 / 140 / 8760)
    # tax: 10% of everything AWS bills: 2,172.96 + 1,380 + 135.324 + 368.8284 = $4,057.1124
    tax = _line(plan, "tax")
    assert tax.quantity == pytest.approx(4057.1124)
    assert tax.cost_usd == pytest.approx(405.71124)
    # contingency: 10% of 4,057.1124 + 238.23125 + 405.71124 = $4,701.05489 -> $470.105489
    assert _line(plan, "contingency").cost_usd == pytest.approx(470.105489)
    # all in: $4,701.05489 + $470.105489 = $5,171.160380
    assert plan.all_in_cost_usd == pytest.approx(5171.160380)
    assert sum(m.all_in_usd for m in plan.cash_flow) == pytest.approx(plan.all_in_cost_usd)
    assert plan.cash_flow[0].support_usd == pytest.approx(125.35756)


def test_support_tiers_as_aws_publishes_them():
    # aws.amazon.com/premiumsupport/pricing's own examples: Business at $85,000 a month is
    # 10% x 10,000 + 7% x 70,000 + 5% x 5,000 = $6,150; Enterprise at $1,200,000 is
    # 10% x 150,000 + 7% x 350,000 + 5% x 500,000 + 3% x 200,000 = $70,500
    assert support_fee_usd(SUPPORT_PLANS[("aws", "business")], 85_000.0) == pytest.approx(6150)
    enterprise = SUPPORT_PLANS[("aws", "enterprise")]
    assert support_fee_usd(enterprise, 1_200_000.0) == pytest.approx(70_500)
    # below the minimum: 10% of $500 is $50 < $100, so $100; half a month: $50
    assert support_fee_usd(SUPPORT_PLANS[("aws", "business")], 500.0) == pytest.approx(100)
    assert support_fee_usd(SUPPORT_PLANS[("aws", "business")], 0.0, 0.5) == pytest.approx(50)


def test_cost_lines_in_focus_rows_validate(solved):
    plan, problem, catalog = solved
    frame = focus_frame(plan, problem, catalog, date(2027, 1, 1))
    assert validate_focus(frame) == []
    # every cost line is a row per month: 6 lines x 3 months + 1 tax x 3 ... = 7 lines x 3
    extra = frame[frame["x_PlanItem"] != "rent"]
    assert len(extra) == 7 * 3
    assert set(extra["ChargeCategory"]) == {"Usage", "Tax", "Adjustment"}
    storage = extra[extra["x_PlanItem"] == "storage"]
    assert set(storage["ServiceCategory"]) == {"Storage"}
    assert storage["EffectiveCost"].sum() == pytest.approx(1380.0)
    # EffectiveCost sums to the all-in total, not to compute alone
    assert frame["EffectiveCost"].sum() == pytest.approx(plan.all_in_cost_usd)


def test_verifier_recomputes_each_cost_line(solved):
    plan, problem, catalog = solved
    lines = [
        c.model_copy(update={"cost_usd": c.cost_usd + 1.0}) if c.category == "tax" else c
        for c in plan.cost_lines
    ]
    edited = plan.model_copy(update={"cost_lines": lines})
    failed = {c.name for c in verify_plan(edited, problem, catalog) if not c.ok}
    # the tax line no longer holds, nor its months, nor the all-in total
    assert {"tax recomputed", "cost line months add up"} <= failed


def _problem(**changes) -> dict:
    data = yaml.safe_load(PROBLEM.read_text())
    for key, value in changes.items():
        data[key] = value
    return data


def test_budget_holds_the_costs_beside_compute():
    catalog = load_catalog()
    # $4,000 covers the compute ($2,172.96) but not the all-in $5,171.16: no plan
    with pytest.raises(InfeasibleError) as err:
        solve_problem(parse_problem(_problem(budget_usd=4000)), catalog)
    # the relaxation it offers is in budget dollars, all in: at least the plan's $5,171.16
    # (the row's bound: compute x its multiplier + the fixed costs, plan.budget_basis)
    (raise_to,) = [s for s in err.value.message.splitlines() if "raise budget_usd to" in s]
    assert float(raise_to.rsplit("$", 1)[1].replace(",", "")) >= 5171.16
    # with costs: none the same budget is met by compute alone
    plain = parse_problem(_problem(budget_usd=4000, costs="none"))
    plan = solve_problem(plain, catalog)
    assert plan.cost_lines == [] and plan.all_in_cost_usd == pytest.approx(plan.total_cost_usd)
    assert plan.not_included[0].startswith("storage")


@pytest.mark.parametrize(
    ("costs", "field", "words"),
    [
        (
            {"egress": [{"provider": "aws", "gb_per_month": 5, "workload": "chat"}]},
            "costs.egress.0",
            "not both",
        ),
        (
            {"taxes": [{"provider": "aws", "rate_percent": 0}]},
            "costs.taxes.0.rate_percent",
            "greater than 0",
        ),
        ({"contingency_percent": 150}, "costs.contingency_percent", "less than or equal"),
        (
            {
                "support": [
                    {
                        "provider": "aws",
                        "bands": [
                            {"up_to_usd": 10, "percent": 5},
                            {"up_to_usd": 5, "percent": 3},
                            {"percent": 1},
                        ],
                    }
                ]
            },
            "costs.support.0",
            "must rise",
        ),
        (
            {
                "taxes": [
                    {"provider": "aws", "rate_percent": 5},
                    {"provider": "aws", "rate_percent": 6},
                ]
            },
            "costs",
            "more than once",
        ),
    ],
)
def test_bad_values_get_one_message_naming_the_field(costs, field, words):
    with pytest.raises(ProcureError) as err:
        parse_problem(_problem(costs=costs), file="p.yaml")
    assert err.value.field.replace("[", ".").replace("]", "") == field
    assert words in err.value.message


@pytest.mark.parametrize(
    ("costs", "field", "fix"),
    [
        (
            {"storage": [{"provider": "awz", "storage_class": "s3_standard", "gb": 1}]},
            "costs.storage[0].provider",
            "did you mean 'aws'",
        ),
        (
            {"storage": [{"provider": "aws", "storage_class": "glacier", "gb": 1}]},
            "costs.storage[0].usd_per_gb_month",
            "give usd_per_gb_month",
        ),
        (
            {"egress": [{"provider": "coreweave", "gb_per_month": 1}]},
            "costs.egress[0].usd_per_gb",
            "give usd_per_gb",
        ),
        (
            {"support": [{"provider": "aws", "plan": "platinum"}]},
            "costs.support[0].plan",
            "business",
        ),
        (
            {"egress": [{"provider": "aws", "workload": "chatt", "gb_per_million_tokens": 1}]},
            "costs.egress[0].workload",
            "serving workloads",
        ),
    ],
)
def test_names_and_missing_prices_refused_at_solve(costs, field, fix):
    with pytest.raises(ProcureError) as err:
        solve_problem(parse_problem(_problem(costs=costs)), load_catalog())
    assert err.value.field == field
    assert fix in err.value.fix


def test_plan_file_keeps_its_cost_lines_and_text_says_what_is_not_included(solved):
    from solver.outputs.text import plan_json, plan_table
    from solver.plan import Plan
    from solver.trust.verify import verify_plan_file

    plan, problem, catalog = solved
    # the JSON round trip keeps every cost line (months as plan-month numbers) and the
    # re-verified plan file holds every check and field
    again = Plan.model_validate_json(plan_json(plan))
    assert again.cost_lines == plan.cost_lines
    assert {i.category for i in again.line_items} == {"compute"}
    checks, field_errors = verify_plan_file(again, problem, catalog)
    assert all(c.ok for c in checks) and field_errors == []
    text = plan_table(plan)
    # every category is asked for: Not included lists only what no plan models yet
    assert "all in $5,171.16: compute $2,172.96" in text
    assert "Not included:" in text and "currency risk" in text
    assert "storage (datasets, checkpoints): no costs.storage" not in text


def test_provider_order_lists_what_the_cost_lines_buy(solved):
    from solver.outputs.orders import provider_orders

    plan, _, _ = solved
    aws = provider_orders(plan)["aws"]
    # compute first, then what AWS bills beside it: two egress lines, storage and support,
    # each at its cost line's cost ($135.324 egress, $1,380 storage, $368.8284 support);
    # staff, tax and contingency are not ordered from anyone
    assert list(aws["item"]) == ["rent", "egress", "egress", "storage", "support"]
    assert aws.loc[aws["item"] == "egress", "total_usd"].sum() == pytest.approx(135.324)
    assert aws.loc[aws["item"] == "storage", "usd_all"].sum() == pytest.approx(1380.0)
    assert aws.loc[aws["item"] == "support", "total_usd"].sum() == pytest.approx(368.8284)


def test_diff_notes_the_costs_beside_compute(solved):
    from solver.analyses.diff import diff_plans

    plan, _, catalog = solved
    plain = solve_problem(parse_problem(_problem(costs="none")), catalog)
    d = diff_plans(plain, plan)
    # the same compute ($2,172.96 both); all in $2,172.96 (costs: none) -> $5,171.16
    assert d.total_change_usd == pytest.approx(0.0)
    (note,) = [n for n in d.notes if "all in" in n]
    assert "all in $2,172.96 -> $5,171.16" in note
    assert "storage $0.00 -> $1,380.00" in note and "tax $0.00 -> $405.71" in note
