"""``--quotes`` and ``quotes:`` on the commands that solve (issue 29, part 2): the tiny
neocloud of tests/inputs/test_quotes.py, a steady 10 req/s for 12 months (8,760 h) on one
H100: on demand $4/h = $35,040; quoted for a year at $3/h = $26,280, breaking even with on
demand at $4.00/h."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import H1, TINY_REGIONS, write_catalog
from solver.cli import app

runner = CliRunner()

NEO_REGION = dict(
    provider="neo",
    region="eu-west",
    country="NL",
    residency_zone="eu",
    grid_gco2_per_kwh=300,
    grid_year=2023,
    grid_source="test",
    pue=1.2,
    electricity_usd_per_kwh=0.1,
    source="test",
)
PROBLEM = """\
name: quoted
horizon_months: 12
modes: [on_demand, reserved_1y]
providers: [neo]
workloads:
  - kind: inference
    name: chat
    model: llama-3-8b
    max_utilisation: 1.0
    demand: {requests_per_s: 10}
    prompt_tokens: 100
    output_tokens: 100
    ttft_slo: 1 s
    tpot_slo: 50 ms
    traffic_mix: [{prompt_tokens: 100, output_tokens: 100, share: 1.0}]
    measured_throughput_rps: {h100-sxm: [10.0]}
"""
QUOTES = """\
# our 1-year quote from neo
provider,region,offering,term,price_per_instance_hour,upfront_share,valid_until,reference
neo,eu-west,gpu-1x-h100,1y,{price},0,{valid_until},NEO-114
"""


@pytest.fixture
def setup(tmp_path):
    from conftest import offering

    neo = offering("gpu-1x-h100", "h100-sxm", 1, 4.0, provider="neo", region="eu-west")
    cat = write_catalog(tmp_path / "cat", [H1, neo], regions=[*TINY_REGIONS, NEO_REGION])
    return cat, tmp_path


def _write(tmp_path, price=3.0, valid_until="2099-12-31", in_problem=True):
    (tmp_path / "quotes.csv").write_text(QUOTES.format(price=price, valid_until=valid_until))
    prob = tmp_path / "p.yaml"
    prob.write_text(PROBLEM + ("quotes: quotes.csv\n" if in_problem else ""))
    return prob


def test_solve_reads_the_problems_quotes_and_cites_the_reference(setup):
    cat, tmp = setup
    prob = _write(tmp)
    result = runner.invoke(app, ["solve", str(prob), "--catalog", str(cat), "--format", "json"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert plan["total_cost_usd"] == pytest.approx(3.0 * 8760)
    (line,) = [i for i in plan["line_items"] if i["item"] == "reservation"]
    assert (line["item"], line["price_confidence"], line["price_source"]) == (
        "reservation",
        "quote",
        "quote NEO-114",
    )


def test_solve_with_the_quotes_option(setup):
    cat, tmp = setup
    prob = _write(tmp, in_problem=False)
    args = ["solve", str(prob), "--catalog", str(cat), "--format", "json"]
    result = runner.invoke(app, args)
    assert json.loads(result.stdout)["total_cost_usd"] == pytest.approx(4.0 * 8760)
    result = runner.invoke(app, [*args, "--quotes", str(tmp / "quotes.csv")])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["total_cost_usd"] == pytest.approx(3.0 * 8760)


def test_sensitivity_states_the_break_even_quote_price(setup):
    cat, tmp = setup
    prob = _write(tmp, price=4.5)  # above on demand: not in the plan, enters below $4
    args = ["sensitivity", str(prob), "--catalog", str(cat), "--format", "json"]
    result = runner.invoke(app, [*args, "--break-even", "0", "--workers", "1", "-q"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["break_even"]
    row = next(r for r in rows if r["pool_id"] == "neo/eu-west/gpu-1x-h100#reserved_1y")
    assert row["direction"] == "enters below"
    assert row["break_even_price"] == pytest.approx(4.0, rel=1e-3)


@pytest.mark.parametrize(
    ("price", "valid_until", "field", "words"),
    [
        ("-1", "2099-12-31", "price_per_instance_hour", "above 0"),
        ("3", "2020-01-31", "valid_until", "expired on 2020-01-31"),
    ],
)
def test_a_bad_quote_is_one_message_and_exit_2(setup, price, valid_until, field, words):
    cat, tmp = setup
    prob = _write(tmp, price=price, valid_until=valid_until)
    result = runner.invoke(app, ["solve", str(prob), "--catalog", str(cat)])
    assert result.exit_code == 2
    assert f"quotes.csv: line 3, {field}: " in result.output and words in result.output
    assert "fix:" in result.output and "Traceback" not in result.output


def test_an_unknown_offering_in_a_quote_is_one_message(setup):
    cat, tmp = setup
    prob = _write(tmp)
    (tmp / "quotes.csv").write_text(QUOTES.format(price=3, valid_until="2099-12-31").replace(
        "gpu-1x-h100", "gpu-1x-h200"
    ))  # fmt: skip
    result = runner.invoke(app, ["solve", str(prob), "--catalog", str(cat)])
    assert result.exit_code == 2
    assert "line 3, offering: neo has no offering 'gpu-1x-h200'" in result.output
    assert "did you mean 'gpu-1x-h100'" in result.output


def test_a_missing_quotes_file_is_one_message(setup):
    cat, tmp = setup
    prob = _write(tmp)
    (tmp / "quotes.csv").unlink()
    result = runner.invoke(app, ["solve", str(prob), "--catalog", str(cat)])
    assert result.exit_code == 2
    assert "quotes file not found" in result.output


def test_resolve_applies_quotes_over_the_new_prices(setup):
    # The baseline (no quote): on demand, $35,040. Re-solved with an unchanged price file and
    # the $3/h 1-year quote: the reservation, $26,280, citing the quote.
    cat, tmp = setup
    prob = _write(tmp, in_problem=False)
    base = tmp / "base.json"
    args = ["solve", str(prob), "--catalog", str(cat), "--format", "json", "--out", str(base)]
    assert runner.invoke(app, args).exit_code == 0
    prices = tmp / "prices.csv"
    prices.write_text(
        "provider,region,offering,mode,price,date\nneo,eu-west,gpu-1x-h100,on_demand,4.0,2026-11-20\n"
    )
    args = ["resolve", str(prob), "--catalog", str(cat), "--baseline", str(base)]
    args += ["--prices", str(prices), "--quotes", str(tmp / "quotes.csv"), "--format", "json"]
    result = runner.invoke(app, [*args, "-q"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)["plan"]
    assert plan["total_cost_usd"] == pytest.approx(3.0 * 8760)
    sources = {i["price_source"] for i in plan["line_items"] if i["item"] == "reservation"}
    assert sources == {"quote NEO-114"}


def test_report_states_the_break_even_quote_and_its_orders_cite_the_reference(setup):
    # The $3/h quote is in the plan and leaves it above $4.00/h (on demand); the report's
    # purchase plan cites the quote's reference.
    import openpyxl

    cat, tmp = setup
    prob = _write(tmp)
    args = ["report", str(prob), "--catalog", str(cat), "--out", str(tmp / "r"), "-q"]
    args += ["--break-even", "0", "--workers", "1", "--scenarios", "1", "--frontier-points", "2"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    analysis = json.loads((tmp / "r" / "analysis.json").read_text())
    rows = analysis["sensitivity"]["break_even"]
    row = next(r for r in rows if r["pool_id"] == "neo/eu-west/gpu-1x-h100#reserved_1y")
    assert (row["direction"], row["break_even_price"]) == ("leaves above", pytest.approx(4.0))
    assert "gpu-1x-h100 (h100-sxm) reserved_1y leaves the plan above $4.00/h" in (
        (tmp / "r" / "report.html").read_text()
    )
    sheet = openpyxl.load_workbook(tmp / "r" / "report.xlsx")["purchase plan"]
    cells = {c for row in sheet.iter_rows(values_only=True) for c in row}
    assert "quote NEO-114" in cells


def test_a_plan_solved_with_quotes_is_exported_and_diffed(setup):
    # The plan records the quotes file and the day it was checked against
    # (inputs.quotes); export and diff re-apply it, so the plan re-verifies against the
    # catalog it was solved with ($26,280 on the NEO-114 reservation) instead of being
    # refused as solved on another catalog.
    cat, tmp = setup
    prob = _write(tmp)
    plan_path = tmp / "plan.json"
    args = ["solve", str(prob), "--catalog", str(cat), "--format", "json", "--out", str(plan_path)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    inputs = json.loads(plan_path.read_text())["inputs"]
    assert inputs["quotes"]["path"] == str((tmp / "quotes.csv").resolve())
    result = runner.invoke(app, ["export", str(plan_path), "--out", str(tmp / "orders")])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["diff", str(plan_path), str(plan_path)])
    assert result.exit_code == 0, result.output
