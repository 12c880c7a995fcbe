"""Hostile: ``procure prices check`` and the quote requests it writes.

The plan most cases check (worked by hand): one H100 (acme h1, 1 accelerator) serves the
chat workload (1,000 tok/s) for 6 months from 2027-01; a 1-year reservation at $1.50/h
(8,760 h: $13,140) beats on demand at $4/h (4,344 h: $17,376). Its price is ``unverified``
(the tiny catalog states no confidence), band 30% (the shipped catalogs/price_bands.csv
when written: the tiny catalog has none; the test follows the file): at risk 0.30 x 13,140
= $3,942, total at the band's top $17,082.

Bad input (a plan missing, corrupt or edited; an output folder that is a file, under a
file, or not writable; a request already filled in) gets one message naming the file and
the fix, exit 2, and nothing written. A request not filled in is refused by ``solve``
cell by cell, never read as zero.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import CHAT_WORKLOAD, offering, write_catalog
from solver.analyses.price_check import CheckedPrice, PriceCheck, PricedLine
from solver.cli import app
from solver.errors import ProcureError
from solver.inputs.price_bands import price_band_fraction
from solver.inputs.quotes import UNFILLED, parse_quotes
from solver.outputs.quote_requests import REQUEST_COLUMNS, quote_requests, request_file_name

runner = CliRunner()

PROBLEM = (
    "name: hostile\nhorizon_months: 6\nstart: 2027-01\n"
    "periods: [{name: a, months: 3}, {name: b, months: 3}]\n"
    "modes: [on_demand, reserved_1y]\nworkloads:\n" + CHAT_WORKLOAD
)
REQUEST = "quote-request-acme.csv"


@pytest.fixture(scope="module")
def solved(tmp_path_factory) -> tuple[Path, Path, Path]:
    """(plan file, problem file, catalog folder) of the module docstring's plan."""
    folder = tmp_path_factory.mktemp("hostile-check")
    catalog = write_catalog(  # no price_bands.csv: the shipped bands (the docstring's)
        folder / "cat",
        [offering("h1", "h100-sxm", 1, 4.0, r1=1.5, provider="acme")],
        price_bands=None,
    )
    problem = folder / "p.yaml"
    problem.write_text(PROBLEM)
    plan = folder / "plan.json"
    args = ["solve", str(problem), "--catalog", str(catalog), "--format", "json"]
    result = runner.invoke(app, [*args, "--out", str(plan)])
    assert result.exit_code == 0, result.output
    return plan, problem, catalog


def _check(*args: str):
    return runner.invoke(app, ["prices", "check", *args])


def _refused(result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "internal error" not in result.output
    for word in words:
        assert word in result.output


def test_the_plan_checked_by_hand(solved, tmp_path):
    plan, _, _ = solved
    result = _check(str(plan), "--out", str(tmp_path / "r"), "--format", "json")
    assert result.exit_code == 0, result.output
    (price,) = json.loads(result.stdout)["prices"]
    assert (price["offering"], price["mode"], price["term"]) == (
        "acme/us-east/h1",
        "reserved_1y",
        "1y",
    )
    assert price["carried_usd"] == pytest.approx(13_140.0)
    band = price_band_fraction("unverified")  # the shipped file's (0.30 when written)
    assert price["band_fraction"] == band
    assert price["at_risk_usd"] == pytest.approx(13_140.0 * band)
    assert price["raised_total_usd"] == pytest.approx(13_140.0 * (1 + band))
    # the reservation's term: 2027-01-01 for 12 months
    assert (price["from_day"], price["until_day"]) == ("2027-01-01", "2027-12-31")
    assert "the shipped price_bands.csv" in _check(str(plan)).stdout  # the band file, said


@pytest.mark.parametrize(
    "content, words",
    [
        (None, ["plan file not found"]),
        ("{not json", ["not JSON"]),
        (b"\xff\xfe\x00garbage", ["not a text file"]),
        ('{"status": "optimal"}', ["not a procure plan"]),
    ],
)
def test_a_missing_or_corrupt_plan_is_refused_and_nothing_written(tmp_path, content, words):
    plan = tmp_path / "plan.json"
    if isinstance(content, bytes):
        plan.write_bytes(content)
    elif content is not None:
        plan.write_text(content)
    out = tmp_path / "out"
    _refused(_check(str(plan), "--out", str(out)), str(plan), *words)
    assert not out.exists()


def test_an_edited_plan_is_refused(solved, tmp_path):
    plan, _, _ = solved
    data = json.loads(plan.read_text())
    data["line_items"][0]["cost_usd"] = 1.0  # a cheaper price carried: would hide the risk
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data))
    out = tmp_path / "out"
    _refused(_check(str(edited), "--out", str(out)), str(edited))
    assert not out.exists()


def test_an_out_folder_that_is_a_file_or_under_one_is_refused(solved, tmp_path):
    plan, _, _ = solved
    a_file = tmp_path / "a-file"
    a_file.write_text("keep me")
    _refused(_check(str(plan), "--out", str(a_file)), str(a_file), "--out")
    _refused(_check(str(plan), "--out", str(a_file / "sub")), "a-file", "--out")
    assert a_file.read_text() == "keep me"


def test_an_out_folder_that_cannot_be_written_is_one_message(solved):
    """/proc takes no new folder, even for root."""
    plan, _, _ = solved
    _refused(_check(str(plan), "--out", "/proc/procure-requests"), "--out", "fix:")


def test_the_plan_itself_is_never_overwritten(solved, tmp_path):
    plan, _, _ = solved
    folder = tmp_path / "f"
    folder.mkdir()
    copy = folder / REQUEST
    copy.write_bytes(plan.read_bytes())
    result = _check(str(copy), "--out", str(folder))
    _refused(result, "--out")
    assert copy.read_bytes() == plan.read_bytes()


def test_a_filled_in_request_is_never_replaced(solved, tmp_path):
    plan, _, _ = solved
    out = tmp_path / "out"
    assert _check(str(plan), "--out", str(out)).exit_code == 0
    again = _check(str(plan), "--out", str(out))  # the same request again: unchanged
    assert again.exit_code == 0, again.output
    request = out / REQUEST
    filled = request.read_text().replace(
        f"{UNFILLED},USD,{UNFILLED},{UNFILLED},{UNFILLED}", "1.35,USD,2027-06-30,2026-12-01,A-1"
    )
    request.write_text(filled)
    _refused(_check(str(plan), "--out", str(out)), str(request), "does not replace it")
    assert request.read_text() == filled


@pytest.mark.parametrize(
    "cell, column",
    [
        (4, "price_per_instance_hour"),
        (6, "valid_until"),
        (7, "quoted_on"),
        (8, "reference"),
    ],
)
def test_each_cell_left_to_fill_is_refused_by_name(solved, tmp_path, cell, column):
    """Every cell but ``cell`` filled in: the quote is refused naming that cell, with the
    line it is on (the 13th: 12 comment lines and the header before it)."""
    plan, problem, catalog = solved
    out = tmp_path / "out"
    assert _check(str(plan), "--out", str(out)).exit_code == 0
    request = out / REQUEST
    lines = request.read_text().splitlines()
    cells = lines[-1].split(",")
    answer = {4: "1.35", 6: "2027-06-30", 7: "2026-12-01", 8: "A-1"}
    for k, v in answer.items():
        cells[k] = v if k != cell else UNFILLED.lower()  # the mark in any case
    lines[-1] = ",".join(cells)
    request.write_text("\n".join(lines) + "\n")
    args = ["solve", str(problem), "--catalog", str(catalog), "--quotes", str(request)]
    result = runner.invoke(app, args)
    _refused(result, f"{request}: line {len(lines)}, {column}: {column} is not filled in")


@pytest.mark.parametrize(
    "price, words",
    [
        ("", ["price_per_instance_hour is missing"]),
        ("0", ["must be above 0"]),
        ("nan", ["not a finite number"]),
    ],
)
def test_a_price_left_blank_or_zero_is_never_read_as_zero(solved, tmp_path, price, words):
    plan, problem, catalog = solved
    out = tmp_path / "out"
    assert _check(str(plan), "--out", str(out)).exit_code == 0
    request = out / REQUEST
    request.write_text(
        request.read_text().replace(
            f"{UNFILLED},USD,{UNFILLED},{UNFILLED},{UNFILLED}",
            f"{price},USD,2027-06-30,2026-12-01,A-1",
        )
    )
    args = ["solve", str(problem), "--catalog", str(catalog), "--quotes", str(request)]
    _refused(runner.invoke(app, args), str(request), *words)


HEADER = "provider,region,offering,term,price_per_instance_hour,valid_until,reference"


def test_joined_files_with_another_header_order_are_refused():
    text = (
        f"{HEADER}\nacme,us-east,h1,1y,1.2,2027-06-30,A-1\n"
        "region,provider,offering,term,price_per_instance_hour,valid_until,reference\n"
    )
    with pytest.raises(ProcureError) as info:
        parse_quotes(text, "q.csv")
    assert info.value.field == "line 3, provider"
    assert "another column order" in info.value.message


@pytest.mark.parametrize(
    "column, value, words",
    [
        ("requested_units", "-1", "must be 0 or more"),
        ("requested_instance_hours", "many", "is not a number"),
        ("requested_from", "2027-13-01", "is not a day"),
    ],
)
def test_bad_requested_cells_are_refused(column, value, words):
    text = f"{HEADER},{column}\nacme,us-east,h1,1y,1.2,2027-06-30,A-1,{value}\n"
    with pytest.raises(ProcureError) as info:
        parse_quotes(text, "q.csv")
    assert info.value.field == f"line 2, {column}" and words in info.value.message


def _price(provider: str, offering: str, **extra) -> CheckedPrice:
    line = PricedLine("rent", "a", "", "chat", 1.0, 10.0, 15.0, "2027-01-01", "2027-01-31")
    fields = dict(
        provider=provider, region="r", offering=offering, instance_type="i",
        accelerator="h100-sxm", mode="on_demand", term="monthly", confidence="unverified",
        price_date="2026-11-01", source="s", currency="USD", price_usd_per_hour=1.5,
        price_per_hour_in_currency=1.5, band_fraction=0.3, carried_usd=15.0,
        at_risk_usd=4.5, raised_total_usd=19.5, over_budget=False, peak_units=1.0,
        instance_hours=10.0, from_day="2027-01-01", until_day="2027-01-31", lines=(line,),
    )  # fmt: skip
    fields.update(extra)
    return CheckedPrice(**fields)  # type: ignore[arg-type]


def test_names_that_would_escape_the_folder_or_break_a_comment():
    """A provider named like a path lands in the folder; an offering with a line break
    cannot turn the comment into a quote line: the request still holds one quote, still
    unfilled and refused."""
    assert request_file_name("../../etc/passwd", set()) == "quote-request-etc-passwd.csv"
    assert request_file_name("/", set()) == "quote-request-provider.csv"
    first = request_file_name("a b", set())
    assert request_file_name("a-b", {first}) != first
    sneaky = "x\nacme,us-east,h1,monthly,0.01,USD,2099-01-01,2026-01-01,EVIL"
    check = PriceCheck("p", 15.0, None, "fixed-plan", (), ())
    files = quote_requests(check, [_price("a b", sneaky), _price("a-b", "y")], "plan")
    assert len(files) == 2 and all("/" not in name for name in files)
    text = files[request_file_name("a b", set())]
    lines = text.splitlines()
    header = lines.index(",".join(REQUEST_COLUMNS))
    assert all(line.startswith("#") for line in lines[:header])
    with pytest.raises(ProcureError) as info:
        parse_quotes(text, "req.csv")
    assert "is not filled in" in info.value.message


def test_prices_a_quote_cannot_confirm_get_no_request():
    """Spot has no quote term, and a quote's band is 0: neither is requested."""
    check = PriceCheck("p", 15.0, None, "fixed-plan", (), ())
    spot = _price("acme", "acme/r/s", mode="spot", term="")
    quoted = _price("acme", "acme/r/q", confidence="quote", band_fraction=0.0)
    assert quote_requests(check, [spot, quoted], "plan") == {}


def test_top_and_format_are_checked(solved):
    plan, _, _ = solved
    _refused(_check(str(plan), "--top", "0"), "--top")
    result = _check(str(plan), "--format", "xml")
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_requests_saved_by_a_spreadsheet_and_joined_read_back():
    """Saved as "CSV UTF-8" (a byte-order mark, CRLF line ends) and joined with cat: the
    mark is not part of the first column's name, the second header is skipped."""
    one = f"\ufeff# a request\r\n{HEADER}\r\nacme,us-east,h1,1y,1.2,2027-06-30,A-1\r\n"
    two = f"\ufeff{HEADER}\r\nacme,us-east,h2,1y,2.5,2027-06-30,A-2\r\n"
    quotes = parse_quotes(one + two, "q.csv")
    assert [(q.offering, q.price_per_instance_hour, q.line) for q in quotes] == [
        ("h1", 1.2, 3),
        ("h2", 2.5, 5),
    ]
