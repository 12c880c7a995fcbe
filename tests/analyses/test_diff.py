"""A diff people paste into a review (issue 12, item 6): re-priced lines listed with their
before/after unit price and $ delta; --format markdown and json beside the table."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import CHAT_WORKLOAD, offering, write_catalog
from solver.cli import app

runner = CliRunner()

PROBLEM = (
    """\
name: review
horizon_months: 2
periods:
  - {name: m1, months: 1}
  - {name: m2, months: 1}
modes: [on_demand]
load_blocks: [{name: all-day, hours_per_day: 24, demand_factor: 1}]
workloads:
"""
    + CHAT_WORKLOAD
)


@pytest.fixture
def plans(tmp_path):
    prob = tmp_path / "p.yaml"
    prob.write_text(PROBLEM)
    out = {}
    # H100 at $4.00/h, then +20% ($4.80/h): the plan keeps its H100, at the new price
    for name, price in (("old", 4.0), ("new", 4.8)):
        cat = write_catalog(tmp_path / name, [offering("h1", "h100-sxm", 1, price)])
        path = tmp_path / f"{name}.json"
        args = ["solve", str(prob), "--catalog", str(cat), "--format", "json", "--out", str(path)]
        assert runner.invoke(app, args).exit_code == 0
        out[name] = path
    return out


def test_a_price_rise_lists_every_repriced_line_with_its_delta(plans):
    result = runner.invoke(app, ["diff", str(plans["old"]), str(plans["new"]), "--format", "json"])
    assert result.exit_code == 0, result.output
    diff = json.loads(result.stdout)
    old = json.loads(plans["old"].read_text())
    # every rented line of the old plan is kept with a new price: none "changed", all re-priced
    rented = [i for i in old["line_items"] if i["item"] == "rent"]
    assert diff["n_changes"] == 0 and len(diff["repriced"]) == len(rented) >= 2
    for line in diff["repriced"]:
        assert line["old_unit_price_usd_per_hour"] == pytest.approx(4.0)
        assert line["new_unit_price_usd_per_hour"] == pytest.approx(4.8)
        # one H100 for a 730-hour month: $0.80/h x 730 h = $584 more per line
        assert line["delta_usd"] == pytest.approx(0.8 * line["new_units"] * 730)
    # by hand: the same one H100 in each of the two months, re-priced: 2 x $584 = $1,168, all
    # of it price effect (old plan at new prices $4.80 x 1,460 h = $7,008, minus $4.00 x
    # 1,460 h = $5,840); the new plan is the old one at new prices, so no plan effect
    assert [x["delta_usd"] for x in diff["repriced"]] == pytest.approx([584.0, 584.0])
    assert diff["old_at_new_prices_usd"] == pytest.approx(7_008.0)
    assert diff["price_effect_usd"] == pytest.approx(1_168.0)
    assert diff["plan_effect_usd"] == pytest.approx(0.0, abs=1e-9)
    assert diff["total_change_usd"] == pytest.approx(1_168.0)


def test_markdown_and_table(plans):
    md = runner.invoke(app, ["diff", str(plans["old"]), str(plans["new"]), "--format", "markdown"])
    assert md.exit_code == 0, md.output
    assert "| repriced | rent | acme/us-east/h1 |" in md.stdout
    assert "$4.0000 -> $4.8000" in md.stdout and "+$584.00" in md.stdout
    table = runner.invoke(app, ["diff", str(plans["old"]), str(plans["new"])])
    assert "re-priced: 2 line item(s)" in table.stdout and "+$1,168.00" in table.stdout


def test_a_problem_level_load_profile_diffs(tmp_path):
    # A plan carries its problem with every default written out (peak_to_average: 1).
    # Re-read for the diff, that default must not contradict the problem's load_profile
    # (before: "peak_to_average 1 contradicts the load_profile", exit 2). Same plan both
    # sides at $4.00 -> $4.80/h: the price effect is all of the change, as above.
    profile = "load_profile: {hourly: [" + ", ".join(["0.5"] * 12 + ["1.5"] * 12) + "]}\n"
    prob = tmp_path / "p.yaml"
    blocks = "load_blocks: [{name: all-day, hours_per_day: 24, demand_factor: 1}]\n"
    prob.write_text(PROBLEM.replace(blocks, profile))
    paths = []
    for name, price in (("old", 4.0), ("new", 4.8)):
        cat = write_catalog(tmp_path / name, [offering("h1", "h100-sxm", 1, price)])
        path = tmp_path / f"{name}.json"
        args = ["solve", str(prob), "--catalog", str(cat), "--format", "json", "--out", str(path)]
        assert runner.invoke(app, args).exit_code == 0
        paths.append(str(path))
    result = runner.invoke(app, ["diff", *paths, "--format", "json"])
    assert result.exit_code == 0, result.output
    diff = json.loads(result.stdout)
    old, new = (json.loads(open(p).read())["total_cost_usd"] for p in paths)
    assert diff["price_effect_usd"] == pytest.approx(new - old)
    assert diff["plan_effect_usd"] == pytest.approx(0.0, abs=1e-6)
    # an explicit peak_to_average other than the default still contradicts the profile
    prob.write_text(
        prob.read_text().replace("name: chat\n", "name: chat\n    peak_to_average: 2\n")
    )
    result = runner.invoke(app, ["solve", str(prob), "--catalog", str(tmp_path / "old")])
    assert result.exit_code == 2 and "contradicts the load_profile" in result.output
