"""Plan files trusted only where they hold (issue 34): the fields exports copy and the
totals are checked against the catalog, the problem and the line items; a plan whose
problem file has changed since is refused; duplicate keys are refused; a diff of plans of
different problems that share a name says so.

Before this, each edit below passed re-verification and reached the orders, FOCUS rows,
diff or re-solve: the verifier recomputed costs and constraints, but not the names and
figures the exports copy beside them.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import CHAT_WORKLOAD, TINY_REGIONS, offering, write_catalog
from solver.cli import app

runner = CliRunner()

# One 8x H100 box bought in y1 ($200,000; 60-month life, no hosting in the tiny catalog)
# and 1 rented H100 at $4/h at the peak and shoulder (acme's quota is 2 accelerators).
# Capacity (issue 47's chunked step, vllm-cuda eta_c 0.50, worked in
# tests/hostile/test_planfile.py): 8,701.5 tok/s per H100 at batch 256, the box 69,612.0.
# At 80% utilisation the peak (40,000 x 1.5 = 60,000 tok/s) needs 75,000 and the shoulder
# (40,000 x 1.4330, its worst hours, 11:00 and 16:00 of the default curve) 71,651: 5,388 and 2,039
# beyond the box, one H100 each (two each at the 7,831.35 before the refit); the base
# (50,000) the box alone.
#   rent y1 peak: 1 x $4 x 1,460 h = $5,840 (1,460 h = 8,760 h x 4/24), shoulder $11,680;
#   y2 (2028 is a leap year: 8,784 h): $5,856 and $11,712;
#   purchase: $200,000 in y1, less the residual 200,000 x 36/60 = $120,000 credited in y2;
#   total 5,840 + 11,680 + 5,856 + 11,712 + 80,000 = $115,088.
# The rented H100s change per load block (none at base), so the workload pins
# `fleet: per_block` (opt-in; the default autoscale would run one all day).
PROBLEM = (
    """\
name: fields
horizon_months: 24
start: 2027-01
periods: [{name: y1, months: 12}, {name: y2, months: 12}]
modes: [on_demand, owned]
residual_value: straight_line
quotas: [{provider: acme, max_accelerators: 2}]
workloads:
"""
    + CHAT_WORKLOAD.replace("tokens_per_s: 1000", "tokens_per_s: 40000")
    + "    peak_to_average: 1.5\n    fleet: per_block\n"
)


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fields")
    cat = write_catalog(
        tmp / "cat",
        [offering("h1", "h100-sxm", 1, 4.0), offering("b1", "h100-sxm", 1, 4.2, provider="beta")],
        regions=[*TINY_REGIONS, {**TINY_REGIONS[0], "provider": "beta"}],
    )
    prob = tmp / "p.yaml"
    prob.write_text(PROBLEM)
    plan = tmp / "plan.json"
    args = ["solve", str(prob), "--catalog", str(cat), "--format", "json", "--out", str(plan)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    doc = json.loads(plan.read_text())
    assert doc["total_cost_usd"] == pytest.approx(115_088.0)
    return cat, prob, plan, tmp


def _index(doc: dict, item: str, period: str = "y1", block: str = "") -> int:
    return next(
        i
        for i, it in enumerate(doc["line_items"])
        if it["item"] == item and it["period"] == period and (not block or it["block"] == block)
    )


def _edit_rent(field: str, value):
    def edit(doc):
        doc["line_items"][_index(doc, "rent", block="peak")][field] = value

    return edit


def _shift_purchase_between_periods(doc):
    # the purchase's $80,000 split y1 $190,000 / y2 -$110,000 instead of 200,000 / -120,000,
    # and the totals by period moved with it: every sum still holds, the split does not
    item = doc["line_items"][_index(doc, "purchase")]
    item["cost_by_period_usd"] = {"y1": 190_000.0, "y2": -110_000.0}
    doc["totals"]["by_period"]["y1"] -= 10_000.0
    doc["totals"]["by_period"]["y2"] += 10_000.0


def _shift_totals_between_periods(doc):
    doc["totals"]["by_period"]["y1"] -= 1_000.0
    doc["totals"]["by_period"]["y2"] += 1_000.0


def _set(*path_and_value):
    *path, value = path_and_value

    def edit(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return edit


def _residual(doc):
    # a residual of $180,000 instead of $120,000: the purchase's cost and the total are
    # left as solved, so the FOCUS credit and the hardware order would carry the edit
    doc["line_items"][_index(doc, "purchase")]["residual_value_usd"] = 180_000.0


EDITS = [
    ("instance type", _edit_rent("instance_type", "h8"), "line_items[0].instance_type", "'h1'"),
    ("accelerators", _edit_rent("accelerators", 16.0), "line_items[0].accelerators", "1 per unit"),
    ("workload", _edit_rent("workload", "batch"), "line_items[0].workload", "'batch'"),
    ("block", _edit_rent("block", "night"), "line_items[0].block", "'night'"),
    ("residual", _residual, "line_items[2].residual_value_usd", "recomputed $120,000.00"),
    ("problem name", _set("problem", "other"), "problem:", "'other'"),
    ("start", _set("start_date", "2027-02-01"), "start_date", "'2027-02-01'"),
    ("provider total", _set("totals", "by_provider", "acme", 1.0), "totals.by_provider.acme", ""),
    ("period totals", _shift_totals_between_periods, "totals.by_period.y1", "sum of the line"),
    (
        "purchase by period",
        _shift_purchase_between_periods,
        "line_items[2].cost_by_period_usd.y1",
        "recomputed $200,000.00",
    ),
]


@pytest.mark.parametrize("edit, field, fragment", [e[1:] for e in EDITS], ids=[e[0] for e in EDITS])
def test_an_edited_field_is_refused_by_name(solved, tmp_path, edit, field, fragment):
    _, _, plan, _ = solved
    doc = json.loads(plan.read_text())
    assert doc["line_items"][0]["item"] == "rent" and doc["line_items"][2]["item"] == "purchase"
    edit(doc)
    bad = tmp_path / "edited.json"
    bad.write_text(json.dumps(doc))
    for command in (
        ["export", str(bad), "--out", str(tmp_path / "orders")],
        ["export", str(bad), "--out", str(tmp_path / "focus"), "--format", "focus"],
    ):
        result = runner.invoke(app, command)
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.output and result.output.count("error:") == 1
        assert f"{bad}: {field}" in result.output, result.output
        assert fragment in result.output, result.output
        assert "fix:" in result.output
    assert not (tmp_path / "orders").exists() and not (tmp_path / "focus").exists()


def test_the_unedited_plan_still_exports_with_its_residual(solved, tmp_path):
    _, _, plan, _ = solved
    out = tmp_path / "focus"
    result = runner.invoke(app, ["export", str(plan), "--out", str(out), "--format", "focus"])
    assert result.exit_code == 0, result.output
    assert "-120000" in (out / "focus.csv").read_text()  # the residual credited at the horizon


# --------------------------------------------------------------------------- problem file


def _trust_problem(tmp_path, demand: int = 1000):
    cat = write_catalog(tmp_path / "cat", [offering("h1", "h100-sxm", 1, 4.0)])
    text = "name: chat\nhorizon_months: 2\n"
    text += "periods: [{name: m1, months: 1}, {name: m2, months: 1}]\n"
    text += "modes: [on_demand]\nworkloads:\n" + CHAT_WORKLOAD
    prob = tmp_path / "p.yaml"
    prob.write_text(text.replace("tokens_per_s: 1000", f"tokens_per_s: {demand}"))
    return cat, prob


def _solve(prob, cat, out):
    args = ["solve", str(prob), "--catalog", str(cat), "--format", "json", "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return out


def _prices(tmp_path, usd: float = 3.9):
    prices = tmp_path / "prices.csv"
    prices.write_text(
        f"provider,region,offering,mode,price,date\nacme,us-east,h1,on_demand,{usd},2026-12-01\n"
    )
    return prices


def test_a_plan_whose_problem_file_changed_since_is_refused(tmp_path):
    cat, prob = _trust_problem(tmp_path)
    plan = _solve(prob, cat, tmp_path / "plan.json")
    prob.write_text(prob.read_text().replace("tokens_per_s: 1000", "tokens_per_s: 4000"))
    prices = _prices(tmp_path)
    for args in (
        ["export", str(plan), "--out", str(tmp_path / "orders")],
        ["diff", str(plan), str(plan)],
        ["resolve", str(prob), "--baseline", str(plan), "--prices", str(prices)],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args[0], result.output)
        assert "inputs.problem_file" in result.output and "has changed since" in result.output
        assert str(prob.resolve()) in result.output and "Traceback" not in result.output
    assert not (tmp_path / "orders").exists()
    # a problem file that no longer reads as a problem has changed too
    prob.write_text("name: [\n")
    result = runner.invoke(app, ["export", str(plan), "--out", str(tmp_path / "orders")])
    assert result.exit_code == 2 and "has changed since" in result.output
    # gone (the plan moved to another machine): the plan carries its problem and is used
    prob.unlink()
    result = runner.invoke(app, ["export", str(plan), "--out", str(tmp_path / "orders")])
    assert result.exit_code == 0, result.output


def test_duplicate_keys_in_a_plan_are_refused(tmp_path):
    cat, prob = _trust_problem(tmp_path)
    plan = _solve(prob, cat, tmp_path / "plan.json")
    text = plan.read_text()
    # json.loads keeps the last of two keys, other readers the first: the plan means two
    # things. A harmless duplicate (the same name twice) is refused all the same.
    raw = text.replace('"problem": "chat"', '"problem": "chat", "problem": "chat"', 1)
    assert raw != text
    bad = tmp_path / "dup.json"
    bad.write_text(raw)
    result = runner.invoke(app, ["export", str(bad), "--out", str(tmp_path / "orders")])
    assert result.exit_code == 2, result.output
    assert f"{bad}: problem: the key 'problem' appears twice" in result.output


def test_a_diff_of_different_problems_sharing_a_name_says_so(tmp_path):
    cat, prob = _trust_problem(tmp_path)
    first = _solve(prob, cat, tmp_path / "a.json")
    other = tmp_path / "other.yaml"  # the same name, four times the demand
    other.write_text(prob.read_text().replace("tokens_per_s: 1000", "tokens_per_s: 4000"))
    second = _solve(other, cat, tmp_path / "b.json")
    result = runner.invoke(app, ["diff", str(first), str(second), "--format", "json"])
    assert result.exit_code == 0, result.output
    notes = json.loads(result.stdout)["notes"]
    assert notes[0].startswith("the plans are for different problems that share the name 'chat'")
    assert "(they differ in workloads)" in notes[0]
    text = runner.invoke(app, ["diff", str(first), str(second)]).output
    assert "different problems that share the name 'chat'" in text


def test_a_diff_of_a_plan_and_its_re_solve_is_of_one_problem(tmp_path):
    # The re-solve's problem is re-based (another digest), but its price trail names the
    # baseline's problem digest: one lineage, no note.
    cat, prob = _trust_problem(tmp_path)
    base = _solve(prob, cat, tmp_path / "base.json")
    new = tmp_path / "new.json"
    args = ["resolve", str(prob), "--baseline", str(base), "--prices", str(_prices(tmp_path))]
    result = runner.invoke(app, [*args, "--plan-out", str(new), "--as-of", "m2"])
    assert result.exit_code == 0, result.output
    trail = json.loads(new.read_text())["inputs"]["prices"]
    digest = json.loads(base.read_text())["inputs"]["problem_sha256"]
    assert trail[-1]["baseline_problem_sha256"] == digest
    result = runner.invoke(app, ["diff", str(base), str(new), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert not any("different problems" in n for n in json.loads(result.stdout)["notes"])
    # and the re-solved plan still loads: its price trail re-applies (the lineage key is
    # no option of the price file)
    result = runner.invoke(app, ["export", str(new), "--out", str(tmp_path / "orders")])
    assert result.exit_code == 0, result.output
