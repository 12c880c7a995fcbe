"""Hostile capacity blocks: block tables that would mislead if read naively, and plans
whose block lines were altered after the solve; each refused with its file, field and
fix, or failed by the verifier by name."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

# The block case of tests/test_capacity_blocks.py: one p5.48xlarge for 142.87 h on a
# 6-day block, 1 x 6 x 24 x $39.33 = $5,663.52
from test_capacity_blocks import PROBLEM

from solver.api import solve
from solver.errors import ProcureError
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import parse_problem
from solver.plan import Plan
from solver.trust.verify import verify_plan

REPO = Path(__file__).resolve().parents[2]
FILE = "capacity_blocks.csv"


def _folder(tmp_path: Path, column: str, value: str, row: int = 0) -> Path:
    folder = tmp_path / "catalog"
    shutil.copytree(REPO / "catalogs", folder)
    path = folder / FILE
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    table.loc[row, column] = value
    table.to_csv(path, index=False)
    return folder


@pytest.mark.parametrize(
    ("column", "value", "words"),
    [
        ("offering_id", "aws/us-east-1/p9.48xlarge", "not in offerings.csv"),
        ("region", "us-west-2", "is not the offering's"),
        ("usd_per_instance_hour", "0", "not a positive number"),
        ("usd_per_instance_hour", "nan", "not a positive number"),
        ("usd_per_instance_hour", "-39.33", "not a positive number"),
        ("min_days", "0", "not a whole number >= 1"),
        ("long_step_days", "7.5", "not a whole number"),
        ("daily_until_days", "200", "out of order"),
        ("instance_counts", "1;two;4", "not a list of counts"),
        ("instance_counts", "0;8", "not a list of counts"),
        ("min_lead_days", "-1", "not a whole number >= 0"),
        ("price_date", "unknown", "not a day"),
        ("read_date", "2026-13-01", "not a day"),
        ("price_confidence", "rumour", "unknown confidence"),
        ("currency", "XYZ", "XYZ"),
        ("source", "", "source is empty"),
        ("block_id", "aws/us-east-2/p5.48xlarge#block", "duplicate block_id"),
    ],
)
def test_a_bad_block_row_is_refused_naming_file_line_and_column(
    tmp_path: Path, column: str, value: str, words: str
) -> None:
    with pytest.raises(ProcureError) as info:
        load_catalog(_folder(tmp_path, column, value))
    err = info.value
    assert words in err.message
    assert err.file is not None and err.file.endswith(FILE)
    assert err.fix
    if column != "block_id":  # a duplicate is named at its second line
        assert err.field == f"line 2, {column}" or column == "currency"


def test_a_missing_column_is_refused(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "min_days", "1")
    path = folder / FILE
    pd.read_csv(path, dtype=str).drop(columns=["max_advance_days"]).to_csv(path, index=False)
    with pytest.raises(ProcureError, match="max_advance_days"):
        load_catalog(folder)


@pytest.fixture(scope="module")
def solved() -> tuple[Plan, object]:
    catalog = load_catalog()
    return solve(PROBLEM, catalog), catalog


def _failed(plan: Plan, catalog: object) -> set[str]:
    checks = verify_plan(plan, parse_problem(PROBLEM), catalog)  # type: ignore[arg-type]
    return {c.name for c in checks if not c.ok}


def _altered(plan: Plan, item: str, **changes: object) -> Plan:
    lines = [
        i.model_copy(update=changes) if i.item == item and i.mode == "capacity_block" else i
        for i in plan.line_items
    ]
    return plan.model_copy(update={"line_items": lines})


def test_the_plan_as_solved_passes(solved: tuple[Plan, object]) -> None:
    plan, catalog = solved
    assert _failed(plan, catalog) == set()


def test_a_block_priced_below_as_sold_fails(solved: tuple[Plan, object]) -> None:
    # 5 days charged for the 6-day block: $4,719.60 instead of $5,663.52
    plan, catalog = solved
    bad = _altered(plan, "capacity_block", cost_usd=1 * 5 * 24 * 39.33)
    assert "line cost recomputed" in _failed(bad, catalog)


def test_a_length_not_sold_fails(solved: tuple[Plan, object]) -> None:
    # 15 days: after 14 days AWS sells 7-day steps only (21, 28, ...)
    plan, catalog = solved
    block = next(i for i in plan.line_items if i.item == "capacity_block")
    terms = {**(block.capacity_block or {}), "days": 15}
    bad = _altered(
        plan, "capacity_block", capacity_block=terms, hours=15 * 24.0, cost_usd=15 * 24 * 39.33
    )
    assert "capacity block length sold" in _failed(bad, catalog)


def test_a_block_size_not_sold_fails(solved: tuple[Plan, object]) -> None:
    # 3 instances in one block: AWS sells 1, 2, 4, 8, 16, 32 or 64
    plan, catalog = solved
    block = next(i for i in plan.line_items if i.item == "capacity_block")
    terms = {**(block.capacity_block or {}), "sizes": [3]}
    bad = _altered(plan, "capacity_block", capacity_block=terms, units=3.0)
    assert "capacity block sizes sold" in _failed(bad, catalog)


def test_a_job_longer_than_its_block_fails(solved: tuple[Plan, object]) -> None:
    # a 1-day block (24 h) for the 142.87 h job, priced as sold for one day
    plan, catalog = solved
    block = next(i for i in plan.line_items if i.item == "capacity_block")
    terms = {**(block.capacity_block or {}), "days": 1}
    bad = _altered(plan, "capacity_block", capacity_block=terms, hours=24.0, cost_usd=24 * 39.33)
    failed = _failed(bad, catalog)
    assert "training on a capacity block inside it" in failed


def test_a_run_on_a_block_never_bought_fails(solved: tuple[Plan, object]) -> None:
    plan, catalog = solved
    lines = [i for i in plan.line_items if i.item != "capacity_block"]
    bad = plan.model_copy(update={"line_items": lines, "total_cost_usd": 0.0})
    assert "training on a capacity block inside it" in _failed(bad, catalog)


def test_a_block_with_a_borrowed_price_source_fails(solved: tuple[Plan, object]) -> None:
    plan, catalog = solved
    bad = _altered(plan, "capacity_block", price_confidence="list")
    assert "price provenance as in the catalog" in _failed(bad, catalog)


def test_a_block_of_an_unknown_offer_fails(solved: tuple[Plan, object]) -> None:
    plan, catalog = solved
    block = next(i for i in plan.line_items if i.item == "capacity_block")
    terms = {**(block.capacity_block or {}), "block_id": "aws/us-east-1/p9.48xlarge#block"}
    bad = _altered(plan, "capacity_block", capacity_block=terms)
    assert "capacity block in the catalog" in _failed(bad, catalog)


def test_blocks_are_refused_when_on_demand_is_not_allowed(solved: tuple[Plan, object]) -> None:
    # the same plan against the problem with reserved modes only
    plan, catalog = solved
    problem = parse_problem({**PROBLEM, "modes": ["reserved_1y"]})
    failed = {c.name for c in verify_plan(plan, problem, catalog) if not c.ok}  # type: ignore[arg-type]
    assert "purchase mode allowed" in failed
