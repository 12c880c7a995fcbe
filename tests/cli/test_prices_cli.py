"""``procure prices pull | list | history`` and ``--prices snapshot:ID`` (issue 32 part 1).

Must show: a pull from a saved response of each source yields a snapshot that ``resolve``
takes; two snapshots a month apart give an offering's price history. Samples:
tests/data/prices/README.md. No network: every pull reads --from-file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ROOT
from solver.cli import app
from solver.inputs.catalog import load_catalog
from solver.trust.planfile import apply_price_file

runner = CliRunner()
DATA = ROOT / "tests" / "data"
SAMPLES = {
    "skypilot": DATA / "prices" / "lambda" / "vms.csv",
    "aws-offer": DATA / "commitments" / "aws-ec2-getproducts-m5.large.json",
    "azure-retail": DATA / "commitments" / "azure-retail-b16als-v2-australiacentral.json",
    "gcp-billing": DATA / "commitments" / "gcp-cloud-billing-a2-commit.json",
}


def _pull(db: str, source: str, day: str, *extra: str):
    args = ["prices", "pull", "--source", source, "--from-file", str(SAMPLES[source])]
    return runner.invoke(app, [*args, "--db", db, "--date", day, *extra])


@pytest.mark.parametrize(
    ("source", "counts"),
    [
        # the 5 Lambda GPU prices are all below the catalog's (e.g. gpu_8x_v100 $4.40 for
        # $6.32, 0.70x: within --max-factor 2): all 5 change the catalog
        ("skypilot", {"changed": 5}),
        # m5.large on demand and reserved_1y: the catalog has no such offering, so the
        # snapshot keeps them (history) but its price file has none: no change
        ("aws-offer", {}),
        # Standard_B16als_v2 on demand and reserved_1y: not in the catalog either
        ("azure-retail", {}),
        # no whole machine priced: an empty snapshot, read as no change
        ("gcp-billing", {}),
    ],
)
def test_a_pull_of_each_source_is_a_snapshot_resolve_takes(tmp_path, source, counts):
    db = f"sqlite:///{tmp_path / 'ws.db'}"
    result = _pull(db, source, "2026-10-15")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("snapshot 1: ")
    from solver.cli.prices import snapshot_price_file

    path = snapshot_price_file(Path("snapshot:1"), db)
    assert path == tmp_path / "price-snapshots" / "snapshot-1.csv"
    # what resolve and watch do with --prices (trust.planfile.apply_price_file)
    repriced = apply_price_file(load_catalog(None), path, "auto", None, None, 2.0, False, False)
    assert repriced.report.counts() == counts


def test_two_snapshots_a_month_apart_give_a_price_history(tmp_path):
    db = f"sqlite:///{tmp_path / 'ws.db'}"
    out = tmp_path / "oct.csv"
    assert _pull(db, "skypilot", "2026-10-15", "--out", str(out)).exit_code == 0
    assert _pull(db, "aws-offer", "2026-11-01").exit_code == 0
    assert _pull(db, "skypilot", "2026-11-15").exit_code == 0
    # --out is our price CSV: header + the 5 GPU prices of the sample
    assert out.read_text().splitlines()[0] == "provider,region,offering,mode,price,date"
    assert len(out.read_text().splitlines()) == 6
    listing = runner.invoke(app, ["prices", "list", "--db", db])
    assert listing.exit_code == 0
    lines = listing.output.splitlines()[1:]
    # oldest price date first: 1 (Oct 15, skypilot, 5 prices), 2 (Nov 1, aws, 2 prices, 1
    # instance type unmapped), 3 (Nov 15, skypilot)
    assert [line.split()[:5] for line in lines] == [
        ["1", "2026-10-15", "skypilot", "5", "0"],
        ["2", "2026-11-01", "aws-offer", "2", "1"],
        ["3", "2026-11-15", "skypilot", "5", "0"],
    ]
    history = runner.invoke(app, ["prices", "history", "lambda/us-east-1/gpu_8x_v100", "--db", db])
    assert history.exit_code == 0, history.output
    rows = [line.split() for line in history.output.splitlines()[2:]]
    # the two skypilot snapshots, a month apart, each at the file's $4.40
    assert rows == [
        ["2026-10-15", "1", "skypilot", "on_demand", "4.4000"],
        ["2026-11-15", "3", "skypilot", "on_demand", "4.4000"],
    ]
    # snapshot:latest is the newest price date: snapshot 3
    from solver.cli.prices import snapshot_price_file

    assert snapshot_price_file(Path("snapshot:latest"), db).name == "snapshot-3.csv"


def test_resolve_and_watch_take_a_stored_snapshot(tmp_path):
    # the seed's golden plan re-solved at the Lambda snapshot: the 5 Lambda prices are
    # applied ("changed": 5) and the re-solve runs; the re-solved plan records the
    # snapshot's file, which stays beside the database
    db = f"sqlite:///{tmp_path / 'ws.db'}"
    assert _pull(db, "skypilot", "2026-10-15").exit_code == 0
    base = tmp_path / "base.json"
    golden = json.loads((ROOT / "tests" / "golden" / "seed-2m-13b.json").read_text())
    base.write_text(json.dumps(golden["output"]))
    here = Path.cwd()
    os.chdir(ROOT)
    try:
        args = ["resolve", "problems/seed-2m-13b.yaml", "--baseline", str(base)]
        args += ["--prices", "snapshot:latest", "--db", db, "--format", "json"]
        result = runner.invoke(app, [*args, "--plan-out", str(tmp_path / "new.json")])
    finally:
        os.chdir(here)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["price_update"]["counts"] == {"changed": 5}
    recorded = json.loads((tmp_path / "new.json").read_text())["inputs"]["prices"][-1]
    assert recorded["prices"] == str(tmp_path / "price-snapshots" / "snapshot-1.csv")
    # watch: the same snapshot against the golden plan (exit 0, 3 or 4: a verdict)
    watched = runner.invoke(
        app, ["watch", str(base), "--prices", "snapshot:1", "--db", db, "--format", "json"]
    )
    assert watched.exit_code in (0, 3, 4), watched.output
    assert json.loads(watched.stdout)["verdict"] in ("holds", "prices_moved", "optimum_moved")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--source", "ebay", "--from-file", "x.json"], "--source"),
        (["--source", "skypilot"], "--from-file/--url"),
        (
            [
                "--source",
                "skypilot",
                "--from-file",
                str(SAMPLES["skypilot"]),
                "--date",
                "2099-01-01",
            ],
            "--date",
        ),
        (["--source", "aws-offer", "--from-file", str(SAMPLES["skypilot"])], "not JSON"),
        (["--source", "azure-retail", "--from-file", "missing.json"], "no such file"),
    ],
)
def test_bad_pulls_are_one_clear_message(tmp_path, args, words):
    result = runner.invoke(app, ["prices", "pull", *args, "--db", f"sqlite:///{tmp_path / 'w.db'}"])
    assert result.exit_code == 2
    assert words in result.output and "fix:" in result.output
    assert "Traceback" not in result.output


def test_an_unknown_snapshot_is_one_clear_message(tmp_path):
    db = f"sqlite:///{tmp_path / 'ws.db'}"
    plan = ROOT / "tests" / "golden" / "seed-2m-13b.json"
    result = runner.invoke(app, ["watch", str(plan), "--prices", "snapshot:latest", "--db", db])
    # no snapshot stored yet
    assert result.exit_code == 2 and "no price snapshot" in result.output
    assert "fix:" in result.output
    assert _pull(db, "skypilot", "2026-10-15").exit_code == 0
    result = runner.invoke(app, ["watch", str(plan), "--prices", "snapshot:7", "--db", db])
    assert result.exit_code == 2 and "no price snapshot '7'" in result.output
    history = runner.invoke(app, ["prices", "history", "aws/nowhere/x", "--db", db])
    assert history.exit_code == 2 and "OFFERING" in history.output


def test_a_pull_is_in_the_audit_trail(tmp_path):
    # issue 31: every change of a price file is in the append-only audit trail, with who
    # made it (the command line: cli:<login name>) and the digest of what it stored
    import getpass

    from sqlalchemy import select

    from solver.web.audit import digest
    from solver.web.store import open_store
    from solver.web.store.accounts import AuditEntry
    from solver.web.store.snapshots import snapshot_rows

    db = f"sqlite:///{tmp_path / 'ws.db'}"
    assert _pull(db, "skypilot", "2026-10-15").exit_code == 0
    store = open_store(db)
    with store.sessions() as session:
        [entry] = session.scalars(
            select(AuditEntry).where(AuditEntry.action == "price_snapshot.add")
        ).all()
        user, entity, before, after = (
            entry.user_name, entry.entity, entry.before_sha256, entry.after_sha256
        )  # fmt: skip
    assert (user, entity, before) == (f"cli:{getpass.getuser()}", "price snapshot 1", "")
    assert len(after) == 64 and after != digest(None)
    # the 5 GPU prices of the sample were stored with it
    assert len(snapshot_rows(store, 1)) == 5
