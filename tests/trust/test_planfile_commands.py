"""No orders, diffs or re-solves from a plan that is unverified, edited or foreign
(issue 16, items 2 and 10).

A plan carries digests of the problem and catalog it was solved for (and the problem
itself); ``export``, ``diff`` and ``resolve`` re-verify it against them and refuse
anything else with one message, exit 2, and no file written.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import CHAT_WORKLOAD, offering, write_catalog
from solver.cli import app

runner = CliRunner()

PROBLEM = (
    """\
name: trust
horizon_months: 2
periods:
  - {name: m1, months: 1}
  - {name: m2, months: 1}
modes: [on_demand, spot]
workloads:
"""
    + CHAT_WORKLOAD
)


@pytest.fixture
def solved(tmp_path):
    cat = write_catalog(
        tmp_path / "cat",
        [offering("h1", "h100-sxm", 1, 4.0), offering("l4", "l4", 1, 1.0, nvlink=False)],
    )
    prob = tmp_path / "p.yaml"
    prob.write_text(PROBLEM)
    plan = tmp_path / "plan.json"
    args = ["solve", str(prob), "--catalog", str(cat), "--format", "json", "--out", str(plan)]
    assert runner.invoke(app, args).exit_code == 0
    return cat, prob, plan, tmp_path


def _edited(plan_path, tmp_path, edit, name="edited.json", raw=None):
    doc = json.loads(plan_path.read_text())
    edit(doc)
    path = tmp_path / name
    path.write_text(raw if raw is not None else json.dumps(doc))
    return path


def _refused(args, out=None, *fragments):
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in result.output, result.output
    if out is not None:
        assert not out.exists() or not any(out.iterdir())
    return result.output


def test_the_plan_records_its_inputs(solved):
    cat, prob, plan, _ = solved
    inputs = json.loads(plan.read_text())["inputs"]
    assert len(inputs["problem_sha256"]) == 64 and len(inputs["catalog_sha256"]) == 64
    assert inputs["problem"]["name"] == "trust"
    assert inputs["problem_file"] == str(prob.resolve())
    assert inputs["catalog_dir"] == str(cat.resolve())


def test_the_unedited_plan_exports(solved):
    _, _, plan, tmp = solved
    out = tmp / "orders"
    result = runner.invoke(app, ["export", str(plan), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "orders-acme.csv").exists()


def test_a_plan_written_without_its_cash_flow_exports_with_it_derived(solved):
    # a plan file whose cash_flow is empty (written before the plan carried one) is not
    # an edit: the cash flow is derived from its line items and cost lines, and the FOCUS
    # rows, which read it month by month, are the unedited plan's, byte for byte (before,
    # "cash_flow: ... 0 months (none), re-derived 2": bench/fuzz/fuzz.py --seed 76's
    # planfile control "no cash flow")
    _, _, plan, tmp = solved
    bare = _edited(plan, tmp, _set(["cash_flow"], []))
    rows = {}
    for name, path in (("saved", plan), ("bare", bare)):
        out = tmp / name
        args = ["export", str(path), "--format", "focus", "--out", str(out)]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        rows[name] = (out / "focus.csv").read_bytes()
    assert rows["bare"] == rows["saved"]


def _set(path: list, value):
    def edit(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return edit


@pytest.mark.parametrize(
    "edit, fragment",
    [
        (_set(["verified"], False), "not verified"),
        (_set(["status"], "infeasible"), "status is 'infeasible'"),
        (_set(["line_items", 0, "units"], -1.0), "not negative"),
        (_set(["line_items", 0, "mode"], "leased"), "offering in the catalog"),
        (_set(["line_items", 0, "cost_usd"], 0.0), "line cost recomputed"),
        (_set(["total_cost_usd"], 1.0), "total cost"),
        (_set(["inputs"], None), "no inputs"),
        (_set(["inputs", "problem", "budget_usd"], 1e9), "edited"),
        (_set(["inputs", "catalog_sha256"], "0" * 64), "another catalog"),
    ],
)
def test_export_refuses_an_edited_plan(solved, edit, fragment):
    _, _, plan, tmp = solved
    bad = _edited(plan, tmp, edit)
    out = tmp / "orders"
    _refused(["export", str(bad), "--out", str(out)], out, fragment, str(bad))


def test_export_refuses_2000_units_at_a_back_computed_price(solved):
    # someone raises the units 2000x and scales the cost to match, so "line cost
    # recomputed" holds; the availability cap (100 instances, conftest.offering) does not
    _, _, plan, tmp = solved

    def edit(doc):
        item = doc["line_items"][0]
        factor = 2000 / item["units"]
        item["units"] = 2000.0
        item["accelerators"] *= factor
        item["cost_usd"] *= factor
        item["co2e_t"] *= factor
        item["cost_by_period_usd"] = {
            k: v * factor for k, v in item.get("cost_by_period_usd", {}).items()
        }

    bad = _edited(plan, tmp, edit)
    out = tmp / "orders"
    _refused(["export", str(bad), "--out", str(out)], out, "does not verify")


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_numbers_in_a_plan_are_refused(solved, literal):
    _, _, plan, tmp = solved
    text = plan.read_text()
    doc = json.loads(text)
    units = doc["line_items"][0]["units"]
    raw = text.replace(f'"units": {json.dumps(units)}', f'"units": {literal}', 1)
    assert raw != text
    bad = _edited(plan, tmp, lambda d: None, raw=raw)
    out = tmp / "orders"
    _refused(["export", str(bad), "--out", str(out)], out, "not")


def test_a_plan_from_another_problem_with_the_same_periods_is_refused(solved):
    cat, _, plan, tmp = solved
    other = tmp / "other.yaml"
    other.write_text(PROBLEM.replace("tokens_per_s: 1000", "tokens_per_s: 100"))
    out = tmp / "orders"
    args = ["export", str(plan), "--out", str(out), "--problem", str(other)]
    _refused(args, out, "another problem")


def test_a_plan_solved_with_another_catalog_is_refused(solved):
    _, _, plan, tmp = solved
    dearer = write_catalog(
        tmp / "cat2",
        [offering("h1", "h100-sxm", 1, 5.0), offering("l4", "l4", 1, 1.2, nvlink=False)],
    )
    out = tmp / "orders"
    _refused(
        ["export", str(plan), "--out", str(out), "--catalog", str(dearer)], out, "another catalog"
    )


def test_resolve_refuses_a_foreign_baseline(solved):
    cat, _, plan, tmp = solved
    other = tmp / "other.yaml"
    other.write_text(PROBLEM.replace("name: trust", "name: other"))
    prices = tmp / "prices.csv"
    prices.write_text("provider,region,offering,mode,price,date\nacme,us-east,l4,on_demand,0.9,x\n")
    args = ["resolve", str(other), "--baseline", str(plan), "--prices", str(prices)]
    _refused([*args, "--catalog", str(cat)], None, "another problem")


def test_diff_refuses_plans_of_different_problems_and_nan_totals(solved):
    cat, prob, plan, tmp = solved
    other_prob = tmp / "other.yaml"
    other_prob.write_text(PROBLEM.replace("name: trust", "name: other"))
    other = tmp / "other.json"
    args = ["solve", str(other_prob), "--catalog", str(cat), "--format", "json"]
    assert runner.invoke(app, [*args, "--out", str(other)]).exit_code == 0
    _refused(["diff", str(plan), str(other)], None, "different problems")
    nan = _edited(
        plan,
        tmp,
        lambda d: None,
        raw=plan.read_text().replace('"total_cost_usd": ', '"total_cost_usd": NaN, "x": ', 1),
    )
    _refused(["diff", str(plan), str(nan)], None, "NaN")


def test_order_files_of_providers_differing_in_case_do_not_overwrite(tmp_path):
    from solver.outputs.orders import orders_csv
    from solver.plan import LineItem, Plan, Totals

    def rent(provider):
        return LineItem(
            item="rent",
            period="m1",
            provider=provider,
            region="r",
            offering=f"{provider}/r/x",
            instance_type="x",
            accelerator="l4",
            mode="on_demand",
            units=1,
            accelerators=1,
            hours=730,
            cost_usd=730.0,
            co2e_t=0.0,
        )

    plan = Plan(
        problem="p",
        status="optimal",
        objective=1460.0,
        objective_kind="min_cost",
        total_cost_usd=1460.0,
        total_co2e_t=0.0,
        gap=0.0,
        solver="highs",
        solve_seconds=0.0,
        line_items=[rent("Acme"), rent("acme.")],
        totals=Totals(
            by_period={"m1": 1460.0},
            by_provider={},
            by_mode={},
            by_workload={},
            co2e_t_by_workload={},
        ),
    )
    files = orders_csv(plan, None, None)  # no purchases: the catalog is not read
    names = [n for n in files if n.startswith("orders-")]
    # two files whose names differ even on a case-insensitive file system (macOS, Windows)
    assert len({n.lower() for n in names}) == 2, names


def test_resolve_refuses_one_file_for_two_outputs(solved):
    cat, prob, plan, tmp = solved
    prices = tmp / "prices.csv"
    prices.write_text("provider,region,offering,mode,price,date\nacme,us-east,l4,on_demand,0.9,x\n")
    same = tmp / "same.json"
    args = ["resolve", str(prob), "--baseline", str(plan), "--prices", str(prices)]
    args += ["--catalog", str(cat), "--plan-out", str(same), "--out", str(same)]
    _refused(args, None, "same file")
    assert not same.exists()
