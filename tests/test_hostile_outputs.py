"""Outputs that cannot be abused (issue 16, items 1 and 3).

Every file a spreadsheet opens neutralises cells it would execute (OWASP, "CSV
Injection": a cell starting with = + - @ tab or CR is prefixed with '), and no
command writes through a symlink, into a FIFO or device, or leaves a mixed set of
files behind when interrupted.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import zipfile

import openpyxl
import pytest
from typer.testing import CliRunner

from conftest import TINY_REGIONS, offering, write_catalog
from solver.cli import app
from solver.outputs.files import neutralise_cell, write_files_together

runner = CliRunner()

# An instance type a hostile or careless catalog (or SkyPilot file) could carry: Excel
# would run it as a DDE command, and =HYPERLINK would send the reader to a URL.
DDE = "=cmd|' /C calc'!A0"
LINK = '=HYPERLINK("http://evil.example","click")'

PROBLEM = """\
name: hostile
horizon_months: 1
modes: [on_demand]
workloads:
  - kind: inference
    name: "@SUM(1+1)*cmd|' /C calc'!A0"
    model: llama-3-8b
    demand: {tokens_per_s: 1000}
    prompt_tokens: 500
    output_tokens: 200
    ttft_slo: 1 s
    tpot_slo: 50 ms
"""


@pytest.fixture
def hostile(tmp_path):
    """A catalog whose only card has a formula for an instance type, its problem and plan."""
    cat = write_catalog(tmp_path / "cat", [offering(DDE, "h100-sxm", 1, 4.0)])
    prob = tmp_path / "p.yaml"
    prob.write_text(PROBLEM)
    plan = tmp_path / "plan.json"
    result = runner.invoke(
        app, ["solve", str(prob), "--catalog", str(cat), "--format", "json", "--out", str(plan)]
    )
    assert result.exit_code == 0, result.output
    return cat, prob, plan, tmp_path


def _csv_cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def _assert_no_live_cell(cells: list[str]) -> None:
    live = [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r")]
    assert not live, live
    # the instance type and the workload name are kept, as text
    assert any(c.startswith(("'=cmd|", "'@SUM")) for c in cells)


#: the live workbook's own formulas (solver/outputs/live_workbook.py, the totals of
#: solver/outputs/files.workbook): functions over cell references and numbers, never a
#: string, so no name from the problem or catalog can be part of one
# a sheet whose name has a space is quoted ('cost lines'!F8)
OUR_FORMULA = re.compile(r"^=(?:[A-Z0-9!:(),*+\-/. ]|'[a-z ]+'!)+$", re.IGNORECASE)


def _assert_no_formula(data: bytes) -> None:
    """No cell of data is a formula: the only formulas are the workbook's own (totals,
    subtotals, line costs over the inputs sheet), cell references and functions alone."""
    book = openpyxl.load_workbook(io.BytesIO(data))
    formulas = [
        (sheet.title, cell.coordinate, cell.value)
        for sheet in book.worksheets
        for row in sheet.iter_rows()
        for cell in row
        if cell.data_type == "f" and not OUR_FORMULA.match(str(cell.value))
    ]
    assert formulas == []
    values = [
        str(cell.value) for sheet in book.worksheets for row in sheet.iter_rows() for cell in row
    ]
    assert any(v.startswith("'=cmd|") for v in values)


def test_neutralise_cell_follows_owasp():
    # each trigger gets a leading quote; numbers (also negative ones) stay numbers
    for text in ("=1+1", "+1", "-1+2", "@SUM(A1)", "\t=1", "\r=1", "＝1"):
        assert neutralise_cell(text) == "'" + text
    assert neutralise_cell(-5.0) == -5.0
    assert neutralise_cell("acme") == "acme"
    assert neutralise_cell(None) is None


def test_plan_csv_is_neutralised(hostile):
    cat, prob, _, _ = hostile
    result = runner.invoke(app, ["solve", str(prob), "--catalog", str(cat), "--format", "csv"])
    assert result.exit_code == 0, result.output
    _assert_no_live_cell(_csv_cells(result.stdout))


@pytest.mark.parametrize("shape", ["--by-provider", "--combined"])
def test_order_csvs_are_neutralised(hostile, shape):
    _, _, plan, tmp = hostile
    out = tmp / "orders"
    result = runner.invoke(app, ["export", str(plan), "--out", str(out), shape])
    assert result.exit_code == 0, result.output
    cells = [c for f in sorted(out.glob("*.csv")) for c in _csv_cells(f.read_text())]
    _assert_no_live_cell(cells)


def test_orders_xlsx_has_no_formula(hostile):
    _, _, plan, tmp = hostile
    out = tmp / "orders"
    result = runner.invoke(app, ["export", str(plan), "--out", str(out), "--format", "xlsx"])
    assert result.exit_code == 0, result.output
    _assert_no_formula((out / "orders.xlsx").read_bytes())


def test_focus_csv_is_neutralised(hostile):
    _, _, plan, tmp = hostile
    out = tmp / "focus"
    args = ["export", str(plan), "--out", str(out), "--format", "focus", "--start", "2027-01-01"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    _assert_no_live_cell(_csv_cells((out / "focus.csv").read_text()))


def test_report_xlsx_has_no_formula(hostile):
    cat, prob, _, tmp = hostile
    out = tmp / "report"
    args = ["report", str(prob), "--catalog", str(cat), "--out", str(out)]
    args += ["--frontier-points", "2", "--scenarios", "1", "--break-even", "1"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    _assert_no_formula((out / "report.xlsx").read_bytes())


def test_skypilot_import_csv_is_neutralised(tmp_path):
    vms = tmp_path / "vms.csv"
    vms.write_text(
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,"
        "Region,AvailabilityZone\n"
        f'"{LINK.replace(chr(34), chr(34) * 2)}",H100,8,192,2048,98.32,,us-east-1,us-east-1a\n'
    )
    out = tmp_path / "offerings.csv"
    result = runner.invoke(
        app, ["catalog", "import", str(vms), "--provider", "aws", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    cells = _csv_cells(out.read_text())
    assert not [c for c in cells if c.startswith("=")]
    assert any(c.startswith("'=HYPERLINK") for c in cells)


def test_calibration_factors_csv_is_neutralised(tmp_path):
    # a measurement CSV naming its accelerator by a formula: refused or neutralised, never live
    data = tmp_path / "runs.csv"
    data.write_text(
        "accelerator,model,prompt_tokens,output_tokens,concurrency,output_tokens_per_s\n"
        "h100-sxm,llama-3-8b,512,128,16,2000\n"
    )
    out = tmp_path / "cal"
    result = runner.invoke(
        app, ["calibrate", str(data), "--runtime", "=cmd|' /C calc'!A0", "--out", str(out)]
    )
    assert "Traceback" not in result.output
    if result.exit_code == 0:
        assert not [c for c in _csv_cells((out / "factors.csv").read_text()) if c[:1] == "="]
    else:
        assert result.exit_code == 2 and not out.exists()


# --------------------------------------------------------------------------- --out


def test_symlink_at_out_is_refused_and_its_target_untouched(hostile):
    cat, prob, _, tmp = hostile
    target = tmp / "precious.txt"
    target.write_text("keep me\n")
    link = tmp / "plan-link.json"
    link.symlink_to(target)
    args = ["solve", str(prob), "--catalog", str(cat), "--format", "json", "--out", str(link)]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert "symbolic link" in result.output and "--force" in result.output
    assert target.read_text() == "keep me\n" and link.is_symlink()
    # with --force the link itself is replaced by a file; its target is still untouched
    result = runner.invoke(app, [*args, "--force"])
    assert result.exit_code == 0, result.output
    assert not link.is_symlink() and "line_items" in json.loads(link.read_text())
    assert target.read_text() == "keep me\n"


def test_fifo_and_directory_at_out_are_refused(hostile):
    cat, prob, _, tmp = hostile
    fifo = tmp / "pipe"
    os.mkfifo(fifo)
    for path, kind in ((fifo, "FIFO"), (tmp, "directory")):
        for force in ([], ["--force"]):  # --force never writes into a FIFO or over a folder
            args = ["solve", str(prob), "--catalog", str(cat), "--out", str(path), *force]
            result = runner.invoke(app, args)
            assert result.exit_code == 2, result.output
            assert kind in result.output and "--out" in result.output
    assert fifo.exists() and not fifo.is_file()


def test_export_into_a_file_or_over_a_fifo_is_refused(hostile):
    _, _, plan, tmp = hostile
    not_a_folder = tmp / "a-file"
    not_a_folder.write_text("x")
    result = runner.invoke(app, ["export", str(plan), "--out", str(not_a_folder)])
    assert result.exit_code == 2 and "--out" in result.output
    out = tmp / "orders"
    out.mkdir()
    os.mkfifo(out / "orders-acme.csv")
    result = runner.invoke(app, ["export", str(plan), "--out", str(out)])
    assert result.exit_code == 2 and "FIFO" in result.output


def test_interrupted_multi_file_write_keeps_the_old_set(tmp_path, monkeypatch):
    write_files_together(tmp_path, {"a.csv": "old a\n", "b.csv": "old b\n"})
    calls = []

    def interrupted(src, dst):
        calls.append(dst)
        raise KeyboardInterrupt  # Ctrl-C before the first new file is moved into place

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_files_together(tmp_path, {"a.csv": "new a\n", "b.csv": "new b\n"})
    assert (tmp_path / "a.csv").read_text() == "old a\n"
    assert (tmp_path / "b.csv").read_text() == "old b\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "b.csv"]  # no temp files


def test_cli_interrupted_export_says_nothing_was_written(hostile, monkeypatch):
    _, _, plan, tmp = hostile
    out = tmp / "orders"

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    result = runner.invoke(app, ["export", str(plan), "--out", str(out)])
    assert result.exit_code == 130
    assert "interrupted (SIGINT): nothing was written" in result.output
    assert not list(out.glob("*.csv"))


def test_xlsx_written_whole(hostile):
    _, _, plan, tmp = hostile
    out = tmp / "x"
    assert (
        runner.invoke(app, ["export", str(plan), "--out", str(out), "--format", "xlsx"]).exit_code
        == 0
    )
    assert zipfile.ZipFile(out / "orders.xlsx").testzip() is None


def test_a_provider_named_summary_keeps_its_own_sheet(tmp_path):
    # a provider called "summary" must not replace the workbook's summary sheet
    from solver.inputs.catalog import load_catalog
    from solver.inputs.problem import parse_problem
    from solver.inputs.yamlio import load_yaml
    from solver.outputs.orders import orders_xlsx
    from solver.solve import solve_problem

    rows = [offering("h1", "h100-sxm", 1, 4.0, provider="summary")]
    regions = [{**TINY_REGIONS[0], "provider": "summary"}]
    cat = load_catalog(write_catalog(tmp_path / "cat", rows, regions=regions))
    plan = solve_problem(parse_problem(load_yaml(PROBLEM, file="p")), cat)
    book = openpyxl.load_workbook(io.BytesIO(orders_xlsx(plan, cat)))
    assert book.sheetnames[0] == "summary" and len(book.sheetnames) == 2
    assert book["summary"]["A1"].value == "order"  # still the summary, not the order
