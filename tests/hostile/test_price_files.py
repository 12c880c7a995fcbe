"""Price files in a format procure does not read: told by their first bytes, refused with
the format's name and what to do, nothing stored (inputs/price_traps.read_price_text, the
one reader that price feeds, price CSVs and bills share)."""

from __future__ import annotations

import gzip
import io
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ROOT
from solver.cli import app
from solver.errors import ProcureError
from solver.inputs.prices import read_price_update

runner = CliRunner()
DATA = ROOT / "tests" / "data"
FEEDS = {
    "skypilot": DATA / "prices" / "lambda" / "vms.csv",
    "aws-offer": DATA / "prices" / "aws-offer" / "pricing-us-east-1.json",
    "gcp-billing": DATA / "prices" / "gcp-billing" / "skus-a2-americas.json",
    "azure-retail": DATA / "commitments" / "azure-retail-b16als-v2-australiacentral.json",
}


def _zipped(data: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("prices.csv", data)
    return buffer.getvalue()


#: (how a file is mangled, words its refusal must hold): the format's name and the fix
FORMATS = {
    "gzip": (lambda b: gzip.compress(b, mtime=0), ("gzip archive", "gunzip")),
    "zip": (_zipped, ("zip archive", "unzip it")),
    "utf16": (lambda b: b.decode("utf-8").encode("utf-16"), ("UTF-16 text", "iconv")),
}


@pytest.mark.parametrize("source", sorted(FEEDS))
@pytest.mark.parametrize("kind", sorted(FORMATS))
def test_a_compressed_or_utf16_feed_is_named_and_nothing_stored(tmp_path, source, kind):
    # oracle: the file is the source's real response, only compressed or re-encoded; no
    # price source procure reads serves gzip, zip or UTF-16, so each is refused with the
    # file and what to do, exit 2, and no snapshot is stored
    mangle, words = FORMATS[kind]
    folder = tmp_path / "lambda"  # SkyPilot: the cloud is the name of the folder
    folder.mkdir()
    path = folder / f"feed.{kind}"
    path.write_bytes(mangle(FEEDS[source].read_bytes()))
    db = f"sqlite:///{tmp_path / 'w.db'}"
    args = ["prices", "pull", "--source", source, "--from-file", str(path), "--db", db]
    result = runner.invoke(app, [*args, "--date", "2026-10-15"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and str(path) in result.output
    for word in words:
        assert word in result.output, (word, result.output)
    listing = runner.invoke(app, ["prices", "list", "--db", db])
    assert "no price snapshots" in listing.output


@pytest.mark.parametrize("kind", sorted(FORMATS))
def test_a_compressed_price_csv_is_named_when_read(tmp_path, kind):
    # the same for our own price CSV (what resolve, diff and watch read with --prices)
    mangle, words = FORMATS[kind]
    path = tmp_path / "prices.csv"
    csv = b"provider,region,offering,mode,price,date\nacme,us-east,h1,on_demand,4.1,2027-01-15\n"
    path.write_bytes(mangle(csv))
    with pytest.raises(ProcureError) as refused:
        read_price_update(Path(path))
    text = refused.value.render()
    assert str(path) in text
    for word in words:
        assert word in text, (word, text)
