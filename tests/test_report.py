"""`procure sensitivity` and `procure report` on a tiny problem: files written, sums agree."""

from __future__ import annotations

import json

import openpyxl
import pytest
from typer.testing import CliRunner

from conftest import offering, write_catalog
from solver.cli import app

runner = CliRunner()

# 25 req/s over one 100/100-token bucket: H1 serves 10 req/s for $4/h, L4 2 req/s for $1/h,
# L4b (eu) 2 req/s for $1.20/h. Optimum 2 H1 + 3 L4 = $11/h x 730 h = $8,030.
PROBLEM = """\
name: tiny-report
horizon_months: 1
modes: [on_demand]
carbon_cap_tco2e: 1.0
workloads:
  - kind: inference
    name: chat
    model: llama-3-8b
    demand: {requests_per_s: 25}
    prompt_tokens: 100
    output_tokens: 100
    ttft_slo: 1 s
    tpot_slo: 50 ms
    traffic_mix: [{prompt_tokens: 100, output_tokens: 100, share: 1.0}]
    measured_throughput_rps: {h100-sxm: [10.0], l4: [2.0]}
    max_utilisation: 1  # capacity = demand, as in test_sensitivity's hand-worked break-evens
"""


@pytest.fixture
def setup(tmp_path):
    cat = write_catalog(
        tmp_path / "cat",
        [
            offering("h1", "h100-sxm", 1, 4.0),
            offering("l4", "l4", 1, 1.0, nvlink=False),
            offering("l4b", "l4", 1, 1.2, region="eu-north", nvlink=False),
        ],
    )
    prob = tmp_path / "p.yaml"
    prob.write_text(PROBLEM)
    return cat, prob, tmp_path


def test_sensitivity_json(setup):
    cat, prob, _ = setup
    res = runner.invoke(app, ["sensitivity", str(prob), "--catalog", str(cat), "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["objective"] == pytest.approx(8030)
    # break-even prices worked out in test_sensitivity.test_break_even_prices_by_hand
    prices = {b["offering"]: b["break_even_price"] for b in out["break_even"]}
    assert prices["acme/us-east/h1"] == pytest.approx(5.0, rel=1e-6)
    assert prices["acme/eu-north/l4b"] == pytest.approx(1.0, rel=1e-6)
    table = runner.invoke(app, ["sensitivity", str(prob), "--catalog", str(cat)])
    assert table.exit_code == 0 and "enters the plan below $1.00/h" in table.stdout


def test_report_writes_html_and_xlsx_that_sum_to_the_plan(setup):
    cat, prob, tmp = setup
    out = tmp / "report"
    res = runner.invoke(
        app,
        ["report", str(prob), "--catalog", str(cat), "--out", str(out), "--scenarios", "4"],
    )
    assert res.exit_code == 0, res.output
    html = (out / "report.html").read_text()
    assert "data:image/png;base64," in html and "Break-even prices" in html
    # finance first: the summary, then money by month, then the sensitivity detail
    order = [html.index(h) for h in ("<h2>Summary", "<h2>Cost by month", "<h2>Sensitivity")]
    assert order == sorted(order)
    assert "What moves the plan most" in html and "$8,030" in html
    book = openpyxl.load_workbook(out / "report.xlsx")
    assert {"plan", "purchase plan", "sensitivity", "break-even", "frontier"} <= set(
        book.sheetnames
    )
    assert book.sheetnames[:2] == ["summary", "monthly"]  # finance's sheets first
    sheet = book["plan"]
    header = [c.value for c in sheet[1]]
    col = header.index("cost_usd")
    rows = list(sheet.iter_rows(min_row=2, values_only=True))
    blank = rows.index(tuple([None] * len(header)))  # the data, a blank row, then the total
    assert sum(row[col] for row in rows[:blank]) == pytest.approx(8030)
    assert rows[blank + 1][0] == "total" and rows[blank + 1][col] == pytest.approx(8030)
    assert sheet.freeze_panes == "A2" and sheet.auto_filter.ref.startswith("A1:")
    assert sheet.cell(row=2, column=col + 1).number_format.startswith('"$"#,##0.00')
    assert sheet.cell(row=1, column=1).font.bold
    monthly = book["monthly"]
    months = [r for r in monthly.iter_rows(min_row=2, values_only=True) if r[0] and r[0] != "total"]
    total_col = [c.value for c in monthly[1]].index("total_usd")
    assert sum(r[total_col] for r in months) == pytest.approx(8030, abs=0.01)
    analysis = json.loads((out / "analysis.json").read_text())
    assert analysis["plan"]["total_cost_usd"] == pytest.approx(8030)
    assert (out / "frontier.png").read_bytes()[:4] == b"\x89PNG"


def test_report_refuses_bad_options(setup):
    cat, prob, tmp = setup
    res = runner.invoke(
        app,
        ["report", str(prob), "--catalog", str(cat), "--out", str(tmp / "r"), "--spread", "2"],
    )
    assert res.exit_code == 2 and "--spread" in res.output and "Traceback" not in res.output


def _chromium() -> str | None:
    import shutil

    names = ("chromium", "chromium-browser", "google-chrome", "chrome", "headless_shell")
    return next((path for path in map(shutil.which, names) if path), None)


@pytest.mark.skipif(_chromium() is None, reason="no headless Chromium on this machine")
def test_report_screenshot_in_headless_chromium(setup):
    # the report renders in a real browser: a screenshot is written and is not blank
    import subprocess

    cat, prob, tmp = setup
    out = tmp / "report"
    args = ["report", str(prob), "--catalog", str(cat), "--out", str(out), "--scenarios", "2"]
    assert runner.invoke(app, args).exit_code == 0
    html = out / "report.html"
    shot = tmp / "shot.png"
    subprocess.run(
        [
            _chromium(),
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            f"--screenshot={shot}",
            "--window-size=1200,900",
            html.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    assert shot.read_bytes()[:4] == b"\x89PNG" and shot.stat().st_size > 2000
