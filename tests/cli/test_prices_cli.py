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

from conftest import ROOT, SHARED_DATA
from solver.cli import app
from solver.inputs.catalog import load_catalog
from solver.inputs.prices import apply_price_file

runner = CliRunner()
DATA = ROOT / "tests" / "data"
SAMPLES = {
    "skypilot": DATA / "prices" / "lambda" / "vms.csv",
    "aws-offer": DATA / "prices" / "aws-offer" / "pricing-us-east-1.json",
    "azure-retail": DATA / "commitments" / "azure-retail-b16als-v2-australiacentral.json",
    "gcp-billing": DATA / "prices" / "gcp-billing" / "skus-a2-americas.json",
}
#: SkyPilot GCP catalogs at two commits of anycloud-sh/catalog, 7 weeks apart
#: (../shared/data/external/skypilot-catalog/SOURCES.md): 69b86f0b of 2026-04-02 and
#: 62ff0a98 of 2026-05-20
SKYPILOT = SHARED_DATA / "external" / "skypilot-catalog" / "anycloud-sh-catalog"
GCP_APR = SKYPILOT / "69b86f0bec0f152ed452516e6fac70ff53106a5a" / "gcp" / "vms.csv"
GCP_MAY = SKYPILOT / "62ff0a987e0c257a89235415d2877812fb1aaf29" / "gcp" / "vms.csv"


def _pull(db: str, source: str, day: str, *extra: str):
    args = ["prices", "pull", "--source", source, "--from-file", str(SAMPLES[source])]
    return runner.invoke(app, [*args, "--db", db, "--date", day, *extra])


@pytest.mark.parametrize(
    ("source", "counts"),
    [
        # the 5 Lambda GPU prices are all below the catalog's (e.g. gpu_8x_v100 $4.40 for
        # $6.32, 0.70x: within --max-factor 2): all 5 change the catalog
        ("skypilot", {"changed": 5}),
        # p4d.24xlarge us-east-1 on demand at the offer file's $32.7726 (May 2024, before
        # the June 2025 P4/P5 cut) for the catalog's $21.95764 (x1.49, within --max-factor
        # 2): changed; its reserved_1y has no price in the file and moves with it (derived)
        ("aws-offer", {"changed": 1, "derived": 1}),
        # Standard_B16als_v2 on demand and reserved_1y: not in the catalog, so the
        # snapshot keeps them (history) but its price file has none: no change
        ("azure-retail", {}),
        # 13 A2 machines on demand in us-central1/us-east1/us-west1, priced from the GPU,
        # vCPU and GiB SKUs (tests/inputs/test_price_feeds.py works them by hand). The
        # catalog holds the same published prices rounded to 5 decimals: 9 equal them
        # (unchanged); 4 differ by the rounding (a2-highgpu-1g in each region $3.673385 for
        # $3.67339, a2-megagpu-16g $55.739504 for $55.73951): changed, their reserved
        # prices moving with them (2 each: derived 8)
        ("gcp-billing", {"changed": 4, "derived": 8, "unchanged": 9}),
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
    # what resolve and watch do with --prices (inputs.prices.apply_price_file)
    repriced = apply_price_file(load_catalog(None), path)
    assert repriced.report.counts() == counts


def test_two_snapshots_a_month_apart_give_a_price_history(tmp_path):
    db = f"sqlite:///{tmp_path / 'ws.db'}"
    out = tmp_path / "oct.csv"
    assert _pull(db, "skypilot", "2026-10-15", "--out", str(out)).exit_code == 0
    assert _pull(db, "azure-retail", "2026-11-01").exit_code == 0
    assert _pull(db, "skypilot", "2026-11-15").exit_code == 0
    # --out is our price CSV: header + the 5 GPU prices of the sample
    assert out.read_text().splitlines()[0] == "provider,region,offering,mode,price,date"
    assert len(out.read_text().splitlines()) == 6
    listing = runner.invoke(app, ["prices", "list", "--db", db])
    assert listing.exit_code == 0
    lines = listing.output.splitlines()[1:]
    # oldest price date first: 1 (Oct 15, skypilot, 5 prices), 2 (Nov 1, azure, 2 prices,
    # 1 instance type unmapped), 3 (Nov 15, skypilot)
    assert [line.split()[:5] for line in lines] == [
        ["1", "2026-10-15", "skypilot", "5", "0"],
        ["2", "2026-11-01", "azure-retail", "2", "1"],
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


@pytest.mark.skipif(not GCP_MAY.is_file(), reason="../shared/data (SkyPilot GCP snapshots) absent")
def test_two_real_versions_of_a_price_file_give_a_price_move(tmp_path):
    # The same SkyPilot GCP vms.csv at two commits 7 weeks apart, each pulled on its
    # commit's day. gcp/us-central1/a3-megagpu-8g is a host row (a3-megagpu-8g, zone
    # us-central1-a) plus its 8 x H100-MEGA GPU row; the importer prices the pair:
    #   on demand, both files: 9.46006 + 82.75421 = $92.21427 (no move)
    #   spot, 69b86f0b (Apr 2):  3.33757 + 29.1992 = $32.53677
    #   spot, 62ff0a98 (May 20): 3.86318 + 33.8016 = $37.66478 (+$5.12801, +15.8%)
    db = f"sqlite:///{tmp_path / 'ws.db'}"
    for path, day in ((GCP_APR, "2026-04-02"), (GCP_MAY, "2026-05-20")):
        args = ["prices", "pull", "--source", "skypilot", "--from-file", str(path)]
        result = runner.invoke(app, [*args, "--db", db, "--date", day])
        assert result.exit_code == 0, result.output
    offering = "gcp/us-central1/a3-megagpu-8g"
    history = runner.invoke(app, ["prices", "history", offering, "--db", db])
    assert history.exit_code == 0, history.output
    rows = [line.split() for line in history.output.splitlines()[2:]]
    # oldest first, then mode: the spot price moved, on demand did not
    assert rows == [
        ["2026-04-02", "1", "skypilot", "on_demand", "92.2143"],
        ["2026-04-02", "1", "skypilot", "spot", "32.5368"],
        ["2026-05-20", "2", "skypilot", "on_demand", "92.2143"],
        ["2026-05-20", "2", "skypilot", "spot", "37.6648"],
    ]
    from solver.web.store import open_store
    from solver.web.store.snapshots import price_history

    full = price_history(open_store(db), offering)
    spot = full[full["mode"] == "spot"]["price_usd_per_hour"].tolist()
    assert spot == pytest.approx([32.53677, 37.66478], abs=1e-9)


@pytest.mark.parametrize(
    ("source", "offering", "old_usd", "new_usd"),
    [
        # the offer file's OnDemand pricePerUnit USD "32.7726000000" for the catalog's
        # $21.95764 (skypilot-catalog v8, after the June 2025 cut)
        ("aws-offer", "aws/us-east-1/p4d.24xlarge", 21.95764, 32.7726),
        # 12 vCPUs x $0.031611 + 85 GiB x $0.004237 + 1 A100 x $2.933908
        # = 0.379332 + 0.360145 + 2.933908 = $3.673385 for the catalog's rounded $3.67339
        ("gcp-billing", "gcp/us-central1/a2-highgpu-1g", 3.67339, 3.673385),
    ],
)
def test_resolve_on_the_seed_sees_a_pulled_price(tmp_path, source, offering, old_usd, new_usd):
    db = f"sqlite:///{tmp_path / 'ws.db'}"
    assert _pull(db, source, "2026-10-15").exit_code == 0
    base = tmp_path / "base.json"
    golden = json.loads((ROOT / "tests" / "golden" / "seed-2m-13b.json").read_text())
    base.write_text(json.dumps(golden["output"]))
    args = ["resolve", str(ROOT / "problems" / "seed-2m-13b.yaml"), "--baseline", str(base)]
    result = runner.invoke(app, [*args, "--prices", "snapshot:1", "--db", db, "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["price_update"]["rows"]
    row = next(r for r in rows if r["offering_id"] == offering and r["mode"] == "on_demand")
    assert (row["status"], row["applied"]) == ("changed", True)
    assert row["old_usd"] == pytest.approx(old_usd, abs=1e-9)
    assert row["new_usd"] == pytest.approx(new_usd, abs=1e-9)


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


PAGED = DATA / "prices" / "paged"
AZURE_URL = (
    "https://prices.azure.com/api/retail/prices?api-version=2023-01-01-preview&$filter="
    "armSkuName%20eq%20'Standard_B16als_v2'%20and%20armRegionName%20eq%20'australiacentral'"
)
GCP_URL = "https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus?key=K"


@pytest.mark.parametrize(
    ("source", "url", "pages", "expected"),
    [
        # page 1: the Low Priority meter (left out) and pay-as-you-go $0.673; its
        # NextPageLink is page 2's URL, as given; page 2: the 1-year reservation $3,478
        # (/ 8,760 h = $0.397032/h). Both pages read: 2 prices of one (non-GPU) size
        (
            "azure-retail",
            AZURE_URL,
            [AZURE_URL, AZURE_URL + "&$skip=2"],
            {
                ("azure/australiacentral/Standard_B16als_v2", "on_demand"): 0.673,
                ("azure/australiacentral/Standard_B16als_v2", "reserved_1y"): 3478 / 8760,
            },
        ),
        # page 1: the A100 GPU and A2 Ram SKUs and a nextPageToken; page 2 (the same URL,
        # key kept, pageToken set to the token, URL-encoded): the A2 Core SKU. A machine
        # needs all three, so a2-highgpu-1g's $3.673385 (test_price_feeds) proves page 2
        # was read: 12 x 0.031611 + 85 x 0.004237 + 1 x 2.933908
        (
            "gcp-billing",
            GCP_URL,
            [
                GCP_URL,
                GCP_URL + "&pageToken=APKCS1HVa0YpwgyTFbqbJ1eGwzKZmsPwLqzMZPTSNia5ck1Hc54Tx_Kz"
                "3oBxwSnRIdGVxXoSPdf-XlDpyNBf4QuxKcIEgtrQ1LDLWAgZowI0ns7HjrGta2s%3D",
            ],
            {("gcp/us-central1/a2-highgpu-1g", "on_demand"): 3.673385},
        ),
    ],
)
def test_url_follows_every_page(tmp_path, monkeypatch, source, url, pages, expected):
    # no network: the saved pages stand in for the API, served in the order asked for
    import solver.cli.prices as prices_cli

    name = "azure" if source == "azure-retail" else "gcp"
    saved = [(PAGED / f"{name}-page-{i}.json").read_bytes() for i in (1, 2)]
    asked: list[str] = []

    def fake_get(page_url: str) -> bytes:
        asked.append(page_url)
        return saved[len(asked) - 1]

    monkeypatch.setattr(prices_cli, "_get", fake_get)
    db = f"sqlite:///{tmp_path / 'ws.db'}"
    args = ["prices", "pull", "--source", source, "--url", url, "--db", db]
    result = runner.invoke(app, [*args, "--date", "2026-10-15"])
    assert result.exit_code == 0, result.output
    assert asked == pages  # two pages, then the last page's empty link ends it
    from solver.web.store import open_store
    from solver.web.store.snapshots import snapshot_rows

    rows = snapshot_rows(open_store(db), 1).set_index(["offering_id", "mode"])["price"]
    for key, usd in expected.items():
        assert rows[key] == pytest.approx(usd, abs=1e-9)


def test_a_page_that_repeats_is_one_clear_message(tmp_path, monkeypatch):
    # a NextPageLink that points back at the page itself would loop for ever
    import solver.cli.prices as prices_cli

    page = json.dumps({"Items": [], "NextPageLink": AZURE_URL}).encode()
    monkeypatch.setattr(prices_cli, "_get", lambda page_url: page)
    db = f"sqlite:///{tmp_path / 'ws.db'}"
    args = ["prices", "pull", "--source", "azure-retail", "--url", AZURE_URL, "--db", db]
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and "a page twice" in result.output
    assert "--url" in result.output and "fix:" in result.output
    monkeypatch.setattr(prices_cli, "_get", lambda page_url: b"<html>")
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and "page 1 of" in result.output and "not a JSON" in result.output
