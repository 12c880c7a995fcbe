"""Infra ergonomics (issue 12, item 7): offerings filtered and sorted by $ per GPU-hour,
a per-accelerator summary, --version, and the SkyPilot provider from the file's folder."""

from __future__ import annotations

from typer.testing import CliRunner

from conftest import offering, write_catalog
from solver.cli import app

runner = CliRunner()


def _catalog(tmp_path):
    # two H100 offers: 1 GPU at $4.00 (spot $2.00) and 8 GPUs at $24.00 (spot $12.80), so
    # $4.00 and $3.00 per GPU-hour on demand, $2.00 and $1.60 on spot; an L4 at $0.90
    return write_catalog(
        tmp_path / "cat",
        [
            offering("h1", "h100-sxm", 1, 4.0, spot=2.0),
            offering("h8", "h100-sxm", 8, 24.0, spot=12.8),
            offering("l4", "l4", 1, 0.9, nvlink=False),
        ],
    )


def test_offerings_filtered_and_sorted_by_gpu_price(tmp_path):
    cat = _catalog(tmp_path)
    args = ["catalog", "list", "offerings", "--catalog", str(cat), "--accelerator", "H100"]
    result = runner.invoke(app, [*args, "--region", "us", "--mode", "spot", "--sort", "price"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "spot_usd_per_gpu_hour" in lines[0]
    # the 8-GPU box first: $12.80 / 8 = $1.60 per GPU-hour, then the single GPU at $2.00
    assert lines[1].split()[0] == "acme/us-east/h8" and lines[1].split()[-1] == "1.6"
    assert lines[2].split()[0] == "acme/us-east/h1" and len(lines) == 3  # no L4


def test_summary_per_accelerator(tmp_path):
    result = runner.invoke(app, ["catalog", "summary", "--catalog", str(_catalog(tmp_path))])
    assert result.exit_code == 0, result.output
    h100 = next(line for line in result.stdout.splitlines() if line.strip().startswith("h100"))
    assert "3.00 (acme)" in h100 and "1.60 (acme)" in h100


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.startswith("procure ")


def test_help_lists_the_values_an_option_takes():
    # option values are listed in --help (and completed by the shell), e.g. the formats
    # solve writes and the solvers it drives
    wide = {"COLUMNS": "200", "TERMINAL_WIDTH": "200"}
    solve = runner.invoke(app, ["solve", "--help"], env=wide).output
    assert "[table|json|csv]" in solve
    assert "[highs|cbc|highspy|scip|cpsat]" in solve
    listing = runner.invoke(app, ["catalog", "list", "--help"], env=wide).output
    assert "[on_demand|spot|reserved_1y|reserved_3y]" in listing
    assert "[price|provider|region]" in listing
    export = runner.invoke(app, ["export", "--help"], env=wide).output
    assert "[csv|xlsx|focus]" in export


def test_import_takes_the_provider_from_the_folder(tmp_path):
    folder = tmp_path / "lambda"
    folder.mkdir()
    (folder / "vms.csv").write_text(
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,"
        "Region,AvailabilityZone\n"
        "gpu_1x_h100_sxm5,H100,1,26,225,2.99,,us-east-1,\n"
    )
    result = runner.invoke(
        app, ["catalog", "import", str(folder / "vms.csv"), "--out", str(tmp_path / "o.csv")]
    )
    assert result.exit_code == 0, result.output
    assert "lambda/us-east-1/gpu_1x_h100_sxm5" in (tmp_path / "o.csv").read_text()
