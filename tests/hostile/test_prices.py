"""Hostile cases of the class "prices that mislead": price feeds and price files that
would store, apply or hide a wrong price. Each test states its oracle.

The plan watched is the tiny one of tests/cli/test_actuals_cli.py, worked by hand there:
2 acme h1 instances (H100) at $4/h over three months (2,160 h: $17,280), against 10 L4
instances at $1/h; its largest (and only) line is h1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ROOT, offering, write_catalog
from solver.cli import app
from solver.errors import ProcureError
from solver.inputs.importers.skypilot import read_skypilot_vms

runner = CliRunner()
DATA = ROOT / "tests" / "data"
AZURE = DATA / "commitments" / "azure-retail-b16als-v2-australiacentral.json"
AWS = DATA / "prices" / "aws-offer" / "pricing-us-east-1.json"
GCP = DATA / "prices" / "gcp-billing" / "skus-a2-americas.json"
LAMBDA = DATA / "prices" / "lambda" / "vms.csv"
HEADER = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice"
)
PROBLEM = """\
name: tiny
horizon_months: 3
start: 2027-01
periods: [{name: m1, months: 1}, {name: m2, months: 1}, {name: m3, months: 1}]
modes: [on_demand]
workloads:
  - kind: inference
    name: chat
    model: llama-3-8b
    demand: {requests_per_s: 20}
    prompt_tokens: 100
    output_tokens: 100
    ttft_slo: 1 s
    tpot_slo: 50 ms
    traffic_mix: [{prompt_tokens: 100, output_tokens: 100, share: 1.0}]
    measured_throughput_rps: {h100-sxm: [10.0], l4: [2.0]}
    max_utilisation: 1
"""


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The acme catalog (h1 $4/h, l4 $1/h) and the plan solved on it ($17,280)."""
    tmp = tmp_path_factory.mktemp("tiny")
    cat = write_catalog(
        tmp / "cat",
        [offering("h1", "h100-sxm", 1, 4.0), offering("l4", "l4", 1, 1.0, nvlink=False)],
    )
    prob = tmp / "p.yaml"
    prob.write_text(PROBLEM)
    plan = tmp / "plan.json"
    args = ["solve", str(prob), "--catalog", str(cat), "--format", "json", "--out", str(plan)]
    assert runner.invoke(app, args).exit_code == 0
    assert json.loads(plan.read_text())["total_cost_usd"] == pytest.approx(17_280)
    return cat, plan, tmp


def _pull(db: str, source: str, path: Path, *extra: str):
    args = ["prices", "pull", "--source", source, "--from-file", str(path), "--db", db]
    return runner.invoke(app, [*args, "--date", "2026-10-15", *extra])


def _nothing_stored(db: str) -> bool:
    listing = runner.invoke(app, ["prices", "list", "--db", db])
    return listing.exit_code == 0 and "no price snapshots" in listing.output


def _refused(result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    assert "fix:" in result.output and "Traceback" not in result.output
    for word in words:
        assert word in result.output, (word, result.output)


# --------------------------------------------------------------------------- empty, schema


#: each source's response with no record in it: the envelope the API serves, empty
EMPTY_ENVELOPES = {
    "skypilot": HEADER + "\n",
    "aws-offer": json.dumps({"formatVersion": "v1.0", "products": {}, "terms": {"OnDemand": {}}}),
    "azure-retail": json.dumps({"BillingCurrency": "USD", "Items": [], "Count": 0}),
    "gcp-billing": json.dumps({"skus": [], "nextPageToken": ""}),
}


@pytest.mark.parametrize("source", ["skypilot", "aws-offer", "azure-retail", "gcp-billing"])
@pytest.mark.parametrize("body", ["", "\n  \n", "envelope"])
def test_an_empty_feed_is_refused_and_nothing_stored(tmp_path, source, body):
    # oracle: an empty file, or the source's envelope with no record, holds no price;
    # storing it would make an empty snapshot the latest (every watch against it then
    # "holds"): exit 2 naming the file, and the database holds no snapshot
    feed = tmp_path / "feed"
    feed.write_text(EMPTY_ENVELOPES[source] if body == "envelope" else body)
    db = f"sqlite:///{tmp_path / 'w.db'}"
    result = _pull(db, source, feed)
    _refused(result, str(feed))
    assert _nothing_stored(db)


@pytest.mark.parametrize(
    ("source", "other", "words"),
    [
        # a GCP skus.list response given as Azure: no item has armSkuName/retailPrice
        ("azure-retail", GCP, ["not an Azure Retail Prices API response", "armSkuName"]),
        # an Azure response given as GCP: no SKU has category/pricingInfo
        ("gcp-billing", AZURE, ["not a Cloud Billing Catalog", "pricingInfo"]),
        # JSON of no price source at all
        ("azure-retail", None, ["not an Azure Retail Prices API response"]),
        ("aws-offer", None, ["no terms"]),
        # our own price CSV given as a SkyPilot file: its columns are not SkyPilot's
        ("skypilot", "ours", ["not a SkyPilot vms.csv", "missing column"]),
    ],
)
def test_a_feed_of_the_wrong_schema_is_refused_and_nothing_stored(tmp_path, source, other, words):
    # oracle: the file is not the source's format, so none of its records is a price of
    # that source: exit 2 naming the file and the format expected; nothing stored
    feed = tmp_path / "feed.json"
    if other is None:
        feed.write_text(json.dumps({"prices": [{"sku": "x", "usd": 1.0}]}))
    elif other == "ours":
        feed.write_text("provider,region,offering,mode,price\nlambda,us-east-1,x,on_demand,1\n")
    else:
        feed.write_bytes(other.read_bytes())
    db = f"sqlite:///{tmp_path / 'w.db'}"
    _refused(_pull(db, source, feed), str(feed), *words)
    assert _nothing_stored(db)


# --------------------------------------------------------------------------- held prices


def _lambda_with(tmp_path: Path, prices: dict[str, str]) -> Path:
    """The real Lambda sample with some rows' Price replaced (row by instance type and
    region), in a folder named lambda (the cloud a SkyPilot file is for)."""
    lines = LAMBDA.read_text().splitlines()
    out = [lines[0]]
    for line in lines[1:]:
        key = ",".join(line.split(",")[:1]) + "@" + line.split(",")[6]
        if key in prices:
            cells = line.split(",")
            cells[5] = prices[key]
            line = ",".join(cells)
        out.append(line)
    folder = tmp_path / "lambda"
    folder.mkdir(exist_ok=True)
    path = folder / "vms.csv"
    path.write_text("\n".join(out) + "\n")
    return path


def test_zero_negative_nan_and_a_billion_dollars_are_held_and_listed(tmp_path):
    # The Lambda sample's 5 GPU rows (tests/data/prices/README.md). Four get a price that
    # is no price: 0, -3.2, NaN and $1e9/h; gpu_8x_v100 in us-midwest-1 keeps its $4.40.
    # oracle: the four are held (not stored, each listed with its offering), the one
    # good row is the snapshot's only price, and the exit code is 5 (prices held)
    feed = _lambda_with(
        tmp_path,
        {
            "gpu_8x_v100@us-east-1": "0",
            "gpu_4x_a6000@us-east-1": "-3.2",
            "gpu_1x_a6000@us-east-1": "nan",
            "gpu_8x_a100@us-east-1": "1e9",
        },
    )
    db = f"sqlite:///{tmp_path / 'w.db'}"
    result = _pull(db, "skypilot", feed)
    assert result.exit_code == 5, result.output
    held = [line for line in result.output.splitlines() if "held for review, not stored" in line]
    assert len(held) == 4, result.output
    for offering_id in (
        "lambda/us-east-1/gpu_8x_v100 on_demand",
        "lambda/us-east-1/gpu_4x_a6000 on_demand",
        "lambda/us-east-1/gpu_1x_a6000 on_demand",
        "lambda/us-east-1/gpu_8x_a100 on_demand",
    ):
        assert any(offering_id in line for line in held), offering_id
    assert result.output.startswith("snapshot 1: 1 prices")
    # the $1e9/h price is not the offering's latest stored price: it has none
    history = runner.invoke(app, ["prices", "history", "lambda/us-east-1/gpu_8x_a100", "--db", db])
    assert history.exit_code == 2 and "no stored snapshot prices" in history.output
    listing = runner.invoke(app, ["prices", "list", "--db", db])
    # 1 price stored, 0 unmapped, 4 held
    assert listing.output.splitlines()[1].split()[3:6] == ["1", "0", "4"], listing.output


def test_a_price_x10_from_the_previous_snapshot_is_held_against_it(tmp_path):
    # gpu_8x_v100 us-midwest-1: the catalog says $6.32/h (catalogs/offerings.csv), the
    # sample $4.40. A first pull stores $4.40; a second says $50: x11.4 the stored $4.40
    # (held: beyond x10) though only x7.9 the catalog's $6.32. oracle: the second pull
    # holds it naming snapshot 1, exit 5, and the history keeps $4.40 as the latest
    db = f"sqlite:///{tmp_path / 'w.db'}"
    assert _pull(db, "skypilot", _lambda_with(tmp_path, {})).exit_code == 0
    feed = _lambda_with(tmp_path, {"gpu_8x_v100@us-midwest-1": "50"})
    args = ["prices", "pull", "--source", "skypilot", "--from-file", str(feed), "--db", db]
    result = runner.invoke(app, [*args, "--date", "2026-11-15"])
    assert result.exit_code == 5, result.output
    assert "lambda/us-midwest-1/gpu_8x_v100 on_demand: the price $50/h is x11.4" in result.output
    assert "snapshot 1 (skypilot, 2026-10-15)" in result.output
    history = runner.invoke(
        app, ["prices", "history", "lambda/us-midwest-1/gpu_8x_v100", "--db", db]
    )
    assert history.output.count("4.4000") == 1 and "50.0000" not in history.output


def test_an_azure_feed_of_zero_negative_nan_and_huge_prices_is_refused_whole(tmp_path):
    # the real Azure sample's pay-as-you-go item priced 0, -1, NaN (a JSON NaN) and 1e9
    # in four copies, its savings plan entries dropped: every price is held, so there
    # is nothing to store. oracle: exit 2, "every price in it is held", nothing stored
    data = json.loads(AZURE.read_text())
    item = next(i for i in data["Items"] if i["meterName"] == "B16als v2")
    item = {k: v for k, v in item.items() if k != "savingsPlan"}
    regions = ["australiacentral", "eastus", "westus", "westeurope"]
    prices = [0, -1, float("nan"), 1e9]
    data["Items"] = [
        item | {"retailPrice": p, "armRegionName": r} for p, r in zip(prices, regions, strict=True)
    ]
    feed = tmp_path / "azure.json"
    feed.write_text(json.dumps(data))  # NaN as the JSON literal NaN
    db = f"sqlite:///{tmp_path / 'w.db'}"
    result = _pull(db, "azure-retail", feed)
    _refused(result, "every price in it is held for review (4)", "not above zero", "not a number")
    assert _nothing_stored(db)


# --------------------------------------------------------------------------- text, missing


@pytest.mark.parametrize(
    ("source", "edit", "field"),
    [
        (
            "azure-retail",
            lambda d: d["Items"][1].update(retailPrice="0.67 USD"),
            "Items[1].retailPrice",
        ),
        ("azure-retail", lambda d: d["Items"][1].pop("retailPrice"), "Items[1].retailPrice"),
        (
            "aws-offer",
            lambda d: d["terms"]["OnDemand"]["H7NGEAC6UEHNTKSJ"]["H7NGEAC6UEHNTKSJ.JRTCKXETXF"][
                "priceDimensions"
            ]["H7NGEAC6UEHNTKSJ.JRTCKXETXF.6YS6EN2CT7"]["pricePerUnit"].update(USD="n/a"),
            "terms.OnDemand[H7NGEAC6UEHNTKSJ][H7NGEAC6UEHNTKSJ.JRTCKXETXF].priceDimensions",
        ),
        (
            "aws-offer",
            lambda d: d["terms"]["OnDemand"]["H7NGEAC6UEHNTKSJ"]["H7NGEAC6UEHNTKSJ.JRTCKXETXF"][
                "priceDimensions"
            ]["H7NGEAC6UEHNTKSJ.JRTCKXETXF.6YS6EN2CT7"].pop("pricePerUnit"),
            "pricePerUnit.USD",
        ),
        (
            "gcp-billing",
            lambda d: d["skus"][0]["pricingInfo"][0]["pricingExpression"]["tieredRates"][0][
                "unitPrice"
            ].update(units="two"),
            "skus[0].pricingInfo[-1].pricingExpression.tieredRates[0].unitPrice.units",
        ),
        (
            "gcp-billing",
            lambda d: d["skus"][0]["pricingInfo"][0]["pricingExpression"]["tieredRates"][0].pop(
                "unitPrice"
            ),
            "skus[0].pricingInfo[-1].pricingExpression.tieredRates[0].unitPrice",
        ),
    ],
)
def test_a_text_or_missing_price_field_is_refused_by_record(tmp_path, source, edit, field):
    # oracle: the record's price cannot be read, so the feed is refused with the file and
    # the record's field path (not a KeyError or ValueError traceback); nothing stored
    sample = {"azure-retail": AZURE, "aws-offer": AWS, "gcp-billing": GCP}[source]
    data = json.loads(sample.read_text())
    edit(data)
    feed = tmp_path / "feed.json"
    feed.write_text(json.dumps(data))
    db = f"sqlite:///{tmp_path / 'w.db'}"
    _refused(_pull(db, source, feed), str(feed), field)
    assert _nothing_stored(db)


def test_a_text_price_in_a_skypilot_row_is_refused_with_its_line(tmp_path):
    # line 3 of the Lambda sample (gpu_8x_v100 us-east-1) with Price "4,40" quoted as
    # text: oracle: refused naming line 3 and the Price column
    lines = LAMBDA.read_text().splitlines()
    cells = lines[2].split(",")
    cells[5] = '"4,40"'
    lines[2] = ",".join(cells)
    folder = tmp_path / "lambda"
    folder.mkdir()
    (folder / "vms.csv").write_text("\n".join(lines) + "\n")
    db = f"sqlite:///{tmp_path / 'w.db'}"
    _refused(_pull(db, "skypilot", folder / "vms.csv"), "line 3, Price", "'4,40'")
    assert _nothing_stored(db)


# --------------------------------------------------------------------------- encodings


def test_a_latin1_feed_and_a_binary_file_are_refused(tmp_path, tiny):
    # oracle: bytes that are not UTF-8 are refused with the file, the line of the first
    # bad byte and the fix (save as UTF-8), never read with replacement characters or
    # crashing a parser: a Latin-1 SkyPilot file (0xE9, "é", on line 2), a Latin-1 price
    # CSV given to watch, and a binary file (a ZIP's first bytes) given as each source
    folder = tmp_path / "lambda"
    folder.mkdir()
    latin = folder / "vms.csv"
    row = "gpu_1x_a6000,A6000,1.0,14.0,100.0,0.8,us-east-1,Carte graphique r\u00e9seau,"
    latin.write_bytes((HEADER + "\n" + row + "\n").encode("latin-1"))
    db = f"sqlite:///{tmp_path / 'w.db'}"
    _refused(_pull(db, "skypilot", latin), str(latin), "not UTF-8", "0xE9 on line 2", "UTF-8")
    binary = tmp_path / "feed.bin"
    binary.write_bytes(b"PK\x03\x04\x14\x00\x00\x00\x08\x00\xff\xfe" * 4)
    for source in ("skypilot", "aws-offer", "azure-retail", "gcp-billing"):
        _refused(_pull(db, source, binary), str(binary), "binary file")
    assert _nothing_stored(db)
    cat, plan, _ = tiny
    prices = tmp_path / "prices.csv"
    row = "acme,us-east,h1,on_demand,4.1,2027-01-15,r\u00e9vis\u00e9\n"
    prices.write_bytes(b"provider,region,offering,mode,price,date,note\n" + row.encode("latin-1"))
    result = runner.invoke(app, ["watch", str(plan), "--prices", str(prices)])
    _refused(result, str(prices), "not UTF-8", "line 2")


# --------------------------------------------------------------------------- SkyPilot rows


@pytest.mark.parametrize(
    ("row", "where"),
    [
        # a short row: the Price value lost, so the region moved into Price's place and
        # the row has 6 fields for 9 columns: the first with no field is Region
        ("gpu_1x_a6000,A6000,1.0,14.0,100.0,us-east-1", "line 2, Region"),
        # a GPU row with its AcceleratorCount emptied
        ("gpu_1x_a6000,A6000,,14.0,100.0,0.8,us-east-1,,", "line 2, AcceleratorCount"),
        # a GPU row with neither Price nor SpotPrice
        ("gpu_1x_a6000,A6000,1.0,14.0,100.0,,us-east-1,,", "line 2, Price"),
        # a row naming nothing: no InstanceType, no AcceleratorName
        (",,,14.0,100.0,0.8,us-east-1,,", "line 2, InstanceType"),
    ],
)
def test_a_skypilot_row_that_lost_a_field_is_refused(tmp_path, row, where):
    # oracle: the importer refuses the row with the file, its line and the column (the
    # short row was padded with empty cells before; the others were skipped or read)
    path = tmp_path / "vms.csv"
    path.write_text(HEADER + "\n" + row + "\n")
    with pytest.raises(ProcureError) as err:
        read_skypilot_vms(path, "lambda")
    assert err.value.file == str(path) and err.value.field == where
    assert "lost" in err.value.message
    db = f"sqlite:///{tmp_path / 'w.db'}"
    _refused(_pull(db, "skypilot", path, "--provider", "lambda"), where)
    assert _nothing_stored(db)


# --------------------------------------------------------------------------- watch


def _prices(tmp: Path, name: str, *rows: str) -> Path:
    path = tmp / name
    path.write_text("provider,region,offering,mode,price,date\n" + "".join(r + "\n" for r in rows))
    return path


def test_a_mistyped_price_line_makes_watch_exit_non_zero(tiny):
    # The new prices raise h1 by 30% ($4 -> $5.20) but the line says "h1x"; l4 is priced
    # as before. Applied as written, nothing of the plan moves and watch said "holds",
    # exit 0. oracle: "acme/us-east/h1x" is one edit from the plan's only offering
    # acme/us-east/h1 and nearer it than any other catalog offering (l4: 3 edits), so it
    # is reported as meant for plan line 0 and watch exits 5 (needs review), naming it;
    # resolve reports the same line as unknown
    cat, plan, tmp = tiny
    prices = _prices(
        tmp, "typo.csv", "acme,us-east,h1x,on_demand,5.20,2027-01-15",
        "acme,us-east,l4,on_demand,1.00,2027-01-15",
    )  # fmt: skip
    result = runner.invoke(app, ["watch", str(plan), "--prices", str(prices), "--format", "json"])
    assert result.exit_code == 5, result.output
    doc = json.loads(result.stdout)
    assert doc["verdict"] == "needs_review" and doc["exit_code"] == 5
    [line] = doc["review"]
    assert (line["offering_id"], line["status"], line["line"]) == ("acme/us-east/h1x", "unknown", 2)
    assert (line["plan_line"], line["plan_offering"]) == (0, "acme/us-east/h1")
    table = runner.invoke(app, ["watch", str(plan), "--prices", str(prices)])
    assert table.exit_code == 5 and "needs review" in table.stdout
    assert "acme/us-east/h1x on_demand $5.2" in table.stdout and "plan line 0" in table.stdout
    problem = tmp / "p.yaml"
    resolved = runner.invoke(
        app, ["resolve", str(problem), "--baseline", str(plan), "--prices", str(prices),
              "--catalog", str(cat)],
    )  # fmt: skip
    assert resolved.exit_code == 0, resolved.output
    assert "unknown (1)" in resolved.output and "acme/us-east/h1x" in resolved.output


def test_a_line_for_an_offering_outside_the_plan_is_listed_not_blamed(tiny):
    # "l5" is one edit from l4 (in the catalog, not in the plan) and two from h1: it is
    # nearer l4. oracle: listed as not applied, but no plan line is among them: holds, 0
    cat, plan, tmp = tiny
    prices = _prices(
        tmp, "l5.csv", "acme,us-east,l5,on_demand,1.10,2027-01-15",
        "acme,us-east,h1,on_demand,4.00,2027-01-15",
    )  # fmt: skip
    result = runner.invoke(app, ["watch", str(plan), "--prices", str(prices), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["verdict"] == "holds"
    assert [(r["offering_id"], r["plan_line"]) for r in doc["review"]] == [("acme/us-east/l5", -1)]


def test_a_billion_dollar_price_on_a_plan_line_is_not_a_hold(tiny):
    # h1 at $1e9/h: x250,000,000 the catalog's $4, beyond --max-factor 2, so resolve and
    # watch do not apply it. oracle: watch used to say "holds" (exit 0); the line is the
    # plan's, so it is reported and watch exits 5
    cat, plan, tmp = tiny
    prices = _prices(tmp, "huge.csv", "acme,us-east,h1,on_demand,1e9,2027-01-15")
    result = runner.invoke(app, ["watch", str(plan), "--prices", str(prices), "--format", "json"])
    assert result.exit_code == 5, result.output
    [line] = json.loads(result.stdout)["review"]
    assert (line["status"], line["plan_line"], line["price_usd"]) == ("suspicious", 0, 1e9)


def test_a_price_held_by_the_pull_makes_watch_of_the_snapshot_exit_non_zero(tiny, tmp_path):
    # A SkyPilot file for acme prices h1 (H100) at $1e9/h and l4 at $1.00: the pull holds
    # h1 (above the $10,000 market ceiling) and stores l4. oracle: watch against that
    # snapshot would see no h1 price and say "holds"; it reports the held h1 price as
    # meant for plan line 0 and exits 5
    cat, plan, _ = tiny
    feed = tmp_path / "acme.csv"
    feed.write_text(HEADER + "\nh1,H100,1,8,64,1e9,us-east,,\nl4,L4,1,8,64,1.00,us-east,,\n")
    db = f"sqlite:///{tmp_path / 'w.db'}"
    pulled = _pull(db, "skypilot", feed, "--provider", "acme", "--catalog", str(cat))
    assert pulled.exit_code == 5, pulled.output
    assert "acme/us-east/h1 on_demand: the price $1e+09/h is above $10,000" in pulled.output
    args = ["watch", str(plan), "--prices", "snapshot:latest", "--db", db, "--format", "json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 5, result.output
    [line] = json.loads(result.stdout)["review"]
    assert (line["offering_id"], line["status"], line["plan_line"]) == (
        "acme/us-east/h1",
        "held",
        0,
    )


def test_accept_suspicious_does_not_take_a_price_above_the_market_ceiling(tiny):
    # --accept-suspicious takes moves beyond --max-factor, but $1e9/h for h1 (one H100)
    # is above the $10,000 per instance-hour ceiling (solver/inputs/price_holds.py).
    # oracle: resolve reports it suspicious and not applied; the re-solve keeps h1 at $4
    # (the plan's $17,280)
    cat, plan, tmp = tiny
    prices = _prices(tmp, "huge-accepted.csv", "acme,us-east,h1,on_demand,1e9,2027-01-15")
    args = ["resolve", str(tmp / "p.yaml"), "--baseline", str(plan), "--prices", str(prices)]
    args += ["--catalog", str(cat), "--accept-suspicious", "--format", "json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    [row] = doc["price_update"]["rows"]
    assert (row["status"], row["applied"]) == ("suspicious", False)
    assert "market ceiling $10,000" in row["note"]
    assert doc["plan"]["total_cost_usd"] == pytest.approx(17_280)
