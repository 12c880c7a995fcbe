"""The FOCUS export checked by an outside checker: ``focus-data-toolkit`` 0.14.1 (PyPI; the
dev extra), run as its command line is, on the seed's export and on a plan with
commitments; its generated AWS, Azure and GCP FOCUS 1.3 bills read by ``procure``'s
bill reader.

What the toolkit checks (its README and ``focus-toolkit --help``): ``detect`` scores a
header against every FOCUS dataset and version (1.2, 1.3, 1.4) of the FinOps Foundation's
data model; ``validate`` is a structural and semantic lint against the FOCUS 1.4 model
(types, nulls, allowed values, JSON columns, ``x_`` custom keys). FOCUS 1.4 removed
ProviderName and PublisherName, which 1.3 deprecates but keeps, so ``validate`` reports
exactly those two on a 1.3 file; the same rows without them (the 1.4 view) lint clean.

The FinOps Foundation's own validator (``focus-validator``): its 2.x releases, which carry
the 1.2 and 1.3 rules, require Python 3.12 or newer; this project's machines have Debian's
Python 3.11 only (``apt-cache policy python3.12`` finds no candidate) and PyPI ships no
CPython interpreter, so it cannot run here. Its 1.0.0 installs but checks FOCUS 1.0's
column names (docs/concepts/focus.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from conftest import ROOT
from solver.cli import app
from solver.inputs.importers.focus_billing import read_focus_billing
from solver.outputs.focus_schema import FOCUS_1_3_ABSENT


def toolkit(*args: str) -> subprocess.CompletedProcess:
    """``focus-toolkit ARGS`` (its module, in this interpreter)."""
    return subprocess.run(
        [sys.executable, "-m", "focus_data_toolkit", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def seed_export(seed_solved, tmp_path_factory) -> Path:
    """The seed's plan file exported as FOCUS (the CLI, as a user runs it)."""
    code, output = seed_solved
    assert code == 0, output
    folder = tmp_path_factory.mktemp("seed-focus")
    plan = folder / "plan.json"
    plan.write_text(output)
    problem = ROOT / "problems" / "seed-2m-13b.yaml"
    out = folder / "out"
    made = CliRunner().invoke(
        app,
        ["export", str(plan), "--format", "focus", "--problem", str(problem), "--out", str(out)],
    )
    assert made.exit_code == 0, made.output
    return out


def test_toolkit_reads_the_seed_export_as_focus_1_3_cost_and_usage(seed_export):
    # detect at 1.3: the Cost and Usage dataset, every Mandatory column present, no column
    # it does not know (ours are x_-prefixed), and only the conditional columns whose
    # feature a plan lacks absent: the 19 of FOCUS_1_3_ABSENT, each with its reason.
    done = toolkit("detect", "--version", "1.3", "--format", "json", str(seed_export / "focus.csv"))
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert (found["dataset"], found["detected_version"]) == ("Cost and Usage", "1.3")
    assert found["unknown_columns"] == [] and found["additional_focus_columns"] == []
    assert set(found["missing_columns"]) == set(FOCUS_1_3_ABSENT)
    assert len(found["missing_columns"]) == 19


def test_toolkit_validate_finds_no_error_but_1_4s_removed_names(seed_export, tmp_path):
    # validate (the FOCUS 1.4 lint): on the 1.3 file exactly 2 violations, ProviderName and
    # PublisherName "not a FOCUS 1.4 column" (1.3 keeps both, deprecated); on the same rows
    # without those two columns: 0 violations, exit 0.
    done = toolkit("validate", str(seed_export / "focus.csv"))
    assert "2 violation(s)" in done.stdout, done.stdout
    lines = [x for x in done.stdout.splitlines() if x.strip().startswith("[")]
    assert lines == [
        "  [STRUCTURAL_VALID:unknown_column] ProviderName: ProviderName is not a FOCUS 1.4 "
        "Cost and Usage column",
        "  [STRUCTURAL_VALID:unknown_column] PublisherName: PublisherName is not a FOCUS 1.4 "
        "Cost and Usage column",
    ]
    rows = pd.read_csv(seed_export / "focus.csv", dtype=str, keep_default_na=False)
    view = tmp_path / "focus-1.4-view.csv"
    rows.drop(columns=["ProviderName", "PublisherName"]).to_csv(view, index=False)
    done = toolkit("validate", str(view))
    assert done.returncode == 0, done.stdout
    assert "lint OK" in done.stdout


def focus_check(folder: Path) -> subprocess.CompletedProcess:
    """``python scripts/focus_check.py FOLDER``: the toolkit's lint with its 1.4-only
    findings on 1.3's columns excluded, each with its citation (the script's docstring)."""
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "focus_check.py"), str(folder)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_ci_check_finds_0_errors_on_the_seed_export(seed_export):
    # The check CI runs (this test): the toolkit's 2 findings on the seed's 1.3 file are
    # the two columns FOCUS 1.3 still requires (providername.md, publishername.md: "MUST be
    # present", deprecated in 1.3) and are excluded with that citation; 0 errors, exit 0.
    done = focus_check(seed_export)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "focus.csv: 0 error(s), 2 excluded"
    excluded = [x for x in done.stdout.splitlines() if ": excluded (FOCUS 1.3 " in x]
    assert [x.split("] ")[1].split(":")[0] for x in excluded] == ["ProviderName", "PublisherName"]


def test_the_ci_check_counts_every_other_finding(seed_export, tmp_path):
    # The exclusions are only those: the same export with a 1.3 Mandatory column dropped
    # (BilledCost) gives one error per row (the toolkit reports a missing mandatory column on
    # each row) and exit 1: the check can fail.
    rows = pd.read_csv(seed_export / "focus.csv", dtype=str, keep_default_na=False)
    rows.drop(columns=["BilledCost"]).to_csv(tmp_path / "focus.csv", index=False)
    done = focus_check(tmp_path)
    assert done.returncode == 1, done.stdout
    errors = [x for x in done.stdout.splitlines() if ": ERROR: " in x]
    assert len(errors) == len(rows) > 0 and all("] BilledCost row " in x for x in errors)
    assert done.stdout.splitlines()[-1] == f"focus.csv: {len(rows)} error(s), 2 excluded"


def test_the_ci_check_finds_0_errors_on_a_plan_with_commitments(tmp_path):
    # The block case's export: the Cost and Usage file (2 excluded, as the seed's) and the
    # 1.3 Contract Commitment file, on which the 1.4 lint asks for the 14 Mandatory columns
    # 1.4 added (the toolkit's model gives each "version": "1.4"; 1.3's dataset has 13
    # columns, all present, test below), each excluded with that version: 0 errors.
    from tests.test_capacity_blocks import solved_block_plan

    problem, plan = solved_block_plan(tmp_path)
    out = tmp_path / "out"
    args = ["export", str(plan), "--format", "focus", "--problem", str(problem), "--out", str(out)]
    made = CliRunner().invoke(app, args)
    assert made.exit_code == 0, made.output
    done = focus_check(out)
    assert done.returncode == 0, done.stdout + done.stderr
    last = "focus.csv, focus-contract-commitment.csv: 0 error(s), 16 excluded"
    assert done.stdout.splitlines()[-1] == last
    newer = [x for x in done.stdout.splitlines() if "introduced in FOCUS 1.4" in x]
    assert len(newer) == 14


def test_toolkit_reads_the_contract_commitments_as_the_1_3_dataset(tmp_path):
    # The block case (tests/test_capacity_blocks.py) exported: its Contract Commitment file
    # is the 1.3 dataset, an exact match (all 13 columns; ours beside them x_-prefixed).
    from tests.test_capacity_blocks import solved_block_plan

    runner = CliRunner()
    problem, plan = solved_block_plan(tmp_path)
    out = tmp_path / "out"
    args = ["export", str(plan), "--format", "focus", "--problem", str(problem), "--out", str(out)]
    made = runner.invoke(app, args)
    assert made.exit_code == 0, made.output
    done = toolkit("detect", "--format", "json", str(out / "focus-contract-commitment.csv"))
    found = json.loads(done.stdout)
    assert (found["dataset"], found["detected_version"]) == ("Contract Commitment", "1.3")
    assert found["exact_match"] and found["confidence"] == "HIGH"


@pytest.mark.parametrize("provider", ["aws", "azure", "gcp"])
@pytest.mark.parametrize("version", ["1.2", "1.3"])
def test_generated_provider_bills_are_read_row_for_row(tmp_path, provider, version):
    # The toolkit's provider-realistic bills (real service names, regions, commitment
    # models; seed 7, 40 rows): every row comes through the bill reader, none dropped,
    # provider id from the bill's ProviderName, cost = the file's EffectiveCost to the cent.
    done = toolkit(
        "generate",
        "--provider",
        provider,
        "--focus-version",
        version,
        "--rows",
        "40",
        "--seed",
        "7",
        "--out",
        str(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    (bill,) = tmp_path.glob(f"focus_{version.replace('.', '_')}_cost_and_usage_{provider}.csv")
    read = read_focus_billing(bill)
    raw = pd.read_csv(bill, dtype=str, keep_default_na=False)
    assert len(read) == len(raw) == 40
    assert set(read["provider"]) == {provider}
    assert read["cost"].sum() == pytest.approx(raw["EffectiveCost"].astype(float).sum(), abs=0.01)
    # commitments are told apart: rows the bill prices as Committed read as reserved
    committed = (raw["PricingCategory"] == "Committed").sum()
    assert (read["pricing"] == "reserved").sum() == committed > 0


@pytest.mark.parametrize("provider", ["aws", "azure", "gcp"])
def test_a_bill_without_the_deprecated_provider_name_reads_service_provider_name(
    tmp_path, provider
):
    # FOCUS 1.3 deprecates ProviderName for ServiceProviderName (1.4 removes it): the
    # generated 1.3 bill without ProviderName and PublisherName reads the same 40 rows, the
    # provider from ServiceProviderName.
    done = toolkit(
        "generate", "--provider", provider, "--focus-version", "1.3", "--rows", "40",
        "--seed", "7", "--out", str(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (bill,) = tmp_path.glob(f"focus_1_3_cost_and_usage_{provider}.csv")
    raw = pd.read_csv(bill, dtype=str, keep_default_na=False)
    bare = tmp_path / "bare.csv"
    raw.drop(columns=["ProviderName", "PublisherName"]).to_csv(bare, index=False)
    read = read_focus_billing(bare)
    assert len(read) == 40 and set(read["provider"]) == {provider}
    assert read["cost"].sum() == pytest.approx(read_focus_billing(bill)["cost"].sum(), abs=1e-9)
