"""Capacity blocks: the booking rules, a training window a block covers more cheaply than
on demand (chosen by the MIP, priced as sold) and cases where on demand wins."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from solver.api import solve
from solver.core.compile import compile_problem
from solver.inputs.catalog import load_catalog
from solver.inputs.catalog.capacity_blocks import (
    allowed_lengths_days,
    instances_to_buy,
    shortest_length_days,
)
from solver.inputs.problem import parse_problem

REPO = Path(__file__).resolve().parents[1]
AWS_RULES = {"min_days": 1, "daily_until_days": 14, "long_step_days": 7, "max_days": 182}

# Fine-tuning Llama 3 8B on 2e10 tokens in us-east-1 within 30 days. Physics sizes one
# p5.48xlarge (8 x H100) at 142.87 h (at the low end of the MFU band) and one
# p6-b200.48xlarge at 53.85 h; the cheapest on-demand cluster is the B200 one:
# 113.9328 $/h x 53.849 h = $6,135.18 (p5 on demand: 55.04 x 142.87 = $7,863.47).
PROBLEM = {
    "name": "block-case",
    "horizon_months": 1,
    "providers": ["aws"],
    "regions": ["us-east-1"],
    "modes": ["on_demand"],
    # blocks against on-demand at catalog prices: these cases are about the booking rules;
    # the price guard (issue 46, docs/concepts/price-guard.md) would weigh the block's
    # third_party price (x 1.15) against the on-demand clusters' own confidence
    "price_guard": "none",
    "workloads": [
        {
            "kind": "training",
            "name": "ft",
            "model": "llama-3-8b",
            "tokens": 2.0e10,
            "precision": "bf16",
            "optimizer": "adamw",
            "seq_len": 8192,
            "deadline_days": 30,
        }
    ],
}


def test_lengths_sold_are_days_to_14_then_weeks_to_182() -> None:
    # AWS user guide: 1-day increments up to 14 days, 7-day increments up to 182 days
    lengths = allowed_lengths_days(**AWS_RULES)
    assert lengths[:15] == [*range(1, 15), 21]
    assert lengths[-1] == 182 and len(lengths) == 14 + (182 - 14) // 7
    # 15 days of running need the 21-day block; 182 days + 1 h fit no block
    assert shortest_length_days(AWS_RULES, 15 * 24.0) == 21
    assert shortest_length_days(AWS_RULES, 14 * 24.0) == 14
    assert shortest_length_days(AWS_RULES, 182 * 24.0 + 1) is None


def test_instances_bought_are_whole_blocks_of_sizes_sold() -> None:
    sizes = (1, 2, 4, 8, 16, 32, 64)
    assert instances_to_buy(sizes, 100, 256) == (64, 32, 4)  # 100 = 64 + 32 + 4
    assert instances_to_buy(sizes, 257, 256) is None  # more than 256 across blocks
    assert instances_to_buy((8, 16), 9, 256) == (16,)  # 9 instances: one block of 16
    assert instances_to_buy((8, 16), 20, 256) == (16, 8)  # 24 >= 20, fewest instances


def test_block_cheaper_than_on_demand_is_chosen_and_priced_as_sold() -> None:
    plan = solve(PROBLEM)  # verified independently inside solve
    block = [i for i in plan.line_items if i.item == "capacity_block"]
    runs = [i for i in plan.line_items if i.mode == "capacity_block" and i.item == "training"]
    assert len(block) == 1 and len(runs) == 1
    b, run = block[0], runs[0]
    # one p5.48xlarge, 142.87 h of running -> the 6-day block (5.95 days, rounded up to a
    # whole day), sold at 1 instance x 6 days x 24 h x $39.33 = $5,663.52, upfront
    assert b.offering == "aws/us-east-1/p5.48xlarge" and run.units == 1
    assert run.job_hours == pytest.approx(142.868, abs=0.01)
    assert b.capacity_block is not None and b.capacity_block["days"] == 6
    assert b.capacity_block["sizes"] == [1]
    assert b.cost_usd == pytest.approx(1 * 6 * 24 * 39.33)  # 5,663.52
    assert b.cost_by_period_usd == {b.period: pytest.approx(5663.52)}
    assert run.cost_usd == 0.0  # the block pays for the run
    assert plan.total_cost_usd == pytest.approx(5663.52)
    # $471.66 less than the cheapest on-demand cluster ($6,135.18, above)
    od = compile_problem(parse_problem(PROBLEM), load_catalog(), prune_dominated=False).options
    assert od["rent_usd"].min() == pytest.approx(6135.18, abs=0.01)
    assert sum(m.total_usd for m in plan.cash_flow) == pytest.approx(5663.52)
    assert b.price_date == "2024-12-31" and b.price_confidence == "third_party"


def _catalog_with(tmp_path: Path, **rule: object) -> Path:
    """The shipped catalog with every block offer's ``rule`` columns replaced."""
    folder = tmp_path / "catalog"
    shutil.copytree(REPO / "catalogs", folder)
    path = folder / "capacity_blocks.csv"
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    for column, value in rule.items():
        table[column] = str(value)
    table.to_csv(path, index=False)
    return folder


def test_on_demand_wins_when_the_only_block_sold_is_too_long(tmp_path: Path) -> None:
    # Blocks sold by the week only, one instance at most: the 142.87 h job needs a
    # 7-day block, 1 x 7 x 24 x $39.33 = $6,607.44, dearer than the B200 cluster on
    # demand ($6,135.18), which the MIP takes
    catalog = load_catalog(
        _catalog_with(
            tmp_path, min_days=7, daily_until_days=7, instance_counts="1", max_instances_total=1
        )
    )
    compiled = compile_problem(parse_problem(PROBLEM), catalog)
    assert compiled.capacity_blocks["block_usd"].min() == pytest.approx(6607.44)
    plan = solve(PROBLEM, catalog)
    assert not [i for i in plan.line_items if i.mode == "capacity_block"]
    assert plan.total_cost_usd == pytest.approx(6135.18, abs=0.01)


def test_on_demand_wins_when_the_lead_time_is_too_short(tmp_path: Path) -> None:
    # Blocks booked 14 days ahead at the soonest: the only period starts on the plan's
    # first day, so no block can start in it and the job runs on demand ($6,135.18)
    catalog = load_catalog(_catalog_with(tmp_path, min_lead_days=14))
    assert compile_problem(parse_problem(PROBLEM), catalog).capacity_blocks.empty
    plan = solve(PROBLEM, catalog)
    assert not [i for i in plan.line_items if i.mode == "capacity_block"]
    assert plan.total_cost_usd == pytest.approx(6135.18, abs=0.01)


def test_a_later_period_past_the_lead_time_takes_the_block(tmp_path: Path) -> None:
    # Two monthly periods, the window both: with a 14-day lead the block starts in the
    # second month (730 h after the start >= 14 days) and is still the cheapest
    catalog = load_catalog(_catalog_with(tmp_path, min_lead_days=14))
    periods = [{"name": "m1", "months": 1}, {"name": "m2", "months": 1}]
    problem = {**PROBLEM, "horizon_months": 2, "periods": periods}
    problem["workloads"] = [{**PROBLEM["workloads"][0], "deadline_days": None}]
    plan = solve(problem, catalog)
    block = [i for i in plan.line_items if i.item == "capacity_block"]
    assert len(block) == 1 and block[0].capacity_block is not None
    assert block[0].capacity_block["start_day"] == pytest.approx(730 / 24)
    assert block[0].cost_usd == pytest.approx(5663.52)


def test_a_plan_file_with_a_block_verifies_field_by_field() -> None:
    # the plan as a file (JSON and back) passes the checks a saved plan takes
    from solver.plan import Plan
    from solver.trust.verify import plan_name_errors, verify_plan_file

    catalog = load_catalog()
    problem = parse_problem(PROBLEM)
    plan = Plan.model_validate_json(solve(PROBLEM, catalog).model_dump_json())
    assert plan_name_errors(plan, problem, catalog) == []
    checks, errors = verify_plan_file(plan, problem, catalog)
    assert [c.name for c in checks if not c.ok] == [] and errors == []


def solved_block_plan(folder: Path) -> tuple[Path, Path]:
    """The block case written to ``folder/p.yaml`` and solved by the CLI into
    ``folder/plan.json`` (the problem file and the plan file)."""
    import yaml
    from typer.testing import CliRunner

    from solver.cli import app

    problem = folder / "p.yaml"
    problem.write_text(yaml.safe_dump(PROBLEM))
    plan = folder / "plan.json"
    args = ["solve", str(problem), "--format", "json", "--out", str(plan)]
    solved = CliRunner().invoke(app, args)
    assert solved.exit_code == 0, solved.output
    return problem, plan


def test_a_saved_plan_with_a_block_exports_its_order_and_focus_rows(tmp_path: Path) -> None:
    # solve -> plan file -> export: the plan file is re-derived on load (the block's
    # decision placed back in the model), the order lists the block at $39.33 per
    # instance-hour for 1 x 144 h = $5,663.52, and the FOCUS rows add up to the all in
    from typer.testing import CliRunner

    from solver.cli import app

    runner = CliRunner()
    problem, plan = solved_block_plan(tmp_path)
    out = tmp_path / "orders"
    made = runner.invoke(app, ["export", str(plan), "--out", str(out), "--problem", str(problem)])
    assert made.exit_code == 0, made.output
    orders = pd.read_csv(out / "orders-aws.csv")
    block = orders[orders["item"] == "capacity_block"]
    assert len(block) == 1
    assert block["unit_price_usd_per_hour"].iloc[0] == pytest.approx(39.33)
    assert block["total_usd"].iloc[0] == pytest.approx(5663.52)
    focus = tmp_path / "focus"
    made = runner.invoke(
        app,
        ["export", str(plan), "--out", str(focus), "--format", "focus", "--problem", str(problem)],
    )
    assert made.exit_code == 0, made.output
    # the FOCUS rows add up to the plan's all-in total (all in by default): the block's
    # $5,663.52 and the cost lines beside compute (storage, support, staff), each a row
    import json

    saved = json.loads(plan.read_text())
    rows = pd.read_csv(focus / "focus.csv")
    assert saved["total_cost_usd"] == pytest.approx(5663.52)
    assert rows["BilledCost"].sum() == pytest.approx(saved["all_in_cost_usd"])
    assert ((rows["BilledCost"] - 5663.52).abs() < 0.005).sum() == 1


def test_a_block_longer_than_a_month_is_in_the_support_spend_of_its_first_month(
    tmp_path: Path,
) -> None:
    # Llama 3 8B on 1.2e11 tokens (6 x the case above: 857 h on one p5.48xlarge) within 80
    # days of a 3-month period, p5 blocks of one instance at half the listed rate
    # ($19.665/h): the MIP takes a 42-day block, 1,008 h x $19.665 = $19,822.32, billed
    # upfront in the first month (solver.plan.charges). AWS Business on that month's spend,
    # $19,822.32 + $13.63 of storage = $19,835.95: $1,000 + 7% of $9,835.95 = $1,688.52;
    # $100 in each of the two others: $1,888.52, what the objective priced. Spread over the
    # period's months (as before) the objective priced $1,986.32 and the plan failed
    # "support priced in the objective".
    catalog = load_catalog(
        _catalog_with(
            tmp_path, instance_counts="1", max_instances_total=1, usd_per_instance_hour=19.665
        )
    )
    problem = {
        **PROBLEM,
        "horizon_months": 3,
        "start": "2027-01",
        "periods": [{"name": "q", "months": 3}],
        "workloads": [{**PROBLEM["workloads"][0], "tokens": 1.2e11, "deadline_days": 80}],
    }
    plan = solve(problem, catalog)
    block = [i for i in plan.line_items if i.item == "capacity_block"]
    assert len(block) == 1 and block[0].capacity_block is not None
    assert block[0].capacity_block["days"] == 42
    assert block[0].cost_usd == pytest.approx(19822.32, abs=0.01)
    support = next(c for c in plan.cost_lines if c.category == "support")
    assert support.cost_by_month_usd[0] == pytest.approx(1688.52, abs=0.01)
    assert support.cost_usd == pytest.approx(1888.52, abs=0.01)
    assert plan.support_in_objective_usd == pytest.approx(support.cost_usd, abs=0.005)
