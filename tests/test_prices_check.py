"""``procure prices check PLAN`` on the shipped seed's plan, and the loop it starts: plan,
quote requests, quotes filled in, solve with the quotes.

The seed's plan (``procure solve problems/seed-2m-13b.yaml``) rests on two prices, both
``unverified`` (band 30%, catalogs/price_bands.csv):

- Seeweb ``seeweb/it-fr2/ECS1GPU3`` on demand, $0.99 per instance-hour, serving: base
  3 units x (4,392 + 4,380 + 3,300) h = 36,216, peak 14 x (1,464 + 1,460 + 1,100) = 56,336,
  shoulder 12 x (2,928 + 2,920 + 2,200) = 96,576; 189,128 instance-hours x $0.99 =
  $187,236.72, at risk 0.30 x 187,236.72 = $56,171.02;
- TensorWave ``tensorwave/US/mi325x-8x`` on demand, $15.60 per instance-hour (1.95 per
  GPU-hour x 8), training: 5 units x 1,827.25 h = 9,136.27 instance-hours, $142,525.82,
  at risk 0.30 x 142,525.82 = $42,757.75.

The plan's total is $329,762.54 (their sum); Seeweb ranks first. Quoted 10% under the
catalog, $0.891 and $14.04, every dollar of the plan is 10% cheaper, so the same plan stays
optimal at 0.9 x 329,762.54 = $296,786.29.
"""

from __future__ import annotations

import csv
import io
import json

import pytest
from typer.testing import CliRunner

from conftest import ROOT
from solver.cli import app
from solver.inputs.quotes import UNFILLED, parse_quotes

runner = CliRunner()
SEEWEB = "seeweb/it-fr2/ECS1GPU3"
TENSORWAVE = "tensorwave/US/mi325x-8x"
SEED = str(ROOT / "problems" / "seed-2m-13b.yaml")


@pytest.fixture(scope="module")
def checked(seed_solved, tmp_path_factory):
    """The seed's plan file, its check as JSON and the folder of its quote requests."""
    code, output = seed_solved
    assert code == 0, output
    folder = tmp_path_factory.mktemp("check")
    plan = folder / "plan.json"
    plan.write_text(output)
    out = folder / "requests"
    args = ["prices", "check", str(plan), "--out", str(out), "--format", "json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return plan, json.loads(result.stdout), out


def test_the_seeds_prices_ranked_by_money_at_risk(checked):
    _, report, _ = checked
    assert report["repricing"] == "fixed-plan"
    assert report["total_cost_usd"] == pytest.approx(329_762.54, abs=0.01)
    assert [p["offering"] for p in report["prices"]] == [SEEWEB, TENSORWAVE]
    seeweb, tensorwave = report["prices"]
    # worked in the module docstring
    assert seeweb["confidence"] == "unverified" and seeweb["band_fraction"] == 0.30
    assert seeweb["price_usd_per_hour"] == pytest.approx(0.99)
    assert seeweb["instance_hours"] == pytest.approx(189_128.0)
    assert seeweb["carried_usd"] == pytest.approx(187_236.72, abs=0.01)
    assert seeweb["at_risk_usd"] == pytest.approx(56_171.02, abs=0.01)
    # 329,762.54 + 56,171.02
    assert seeweb["raised_total_usd"] == pytest.approx(385_933.56, abs=0.01)
    assert seeweb["raised_price_usd_per_hour"] == pytest.approx(1.287)  # 0.99 x 1.3
    assert seeweb["peak_units"] == 14 and len(seeweb["lines"]) == 9
    assert (seeweb["from_day"], seeweb["until_day"]) == ("2027-04-01", "2029-12-31")
    assert tensorwave["price_usd_per_hour"] == pytest.approx(15.60)
    assert tensorwave["carried_usd"] == pytest.approx(142_525.82, abs=0.01)
    assert tensorwave["at_risk_usd"] == pytest.approx(42_757.75, abs=0.01)
    assert tensorwave["raised_total_usd"] == pytest.approx(372_520.29, abs=0.01)
    assert not seeweb["over_budget"]  # $385,934 is within the seed's $2,000,000
    assert report["not_checked"] == []


def test_the_table_states_the_repricing_and_ranks(checked):
    plan, _, _ = checked
    result = runner.invoke(app, ["prices", "check", str(plan), "--top", "1"])
    assert result.exit_code == 0, result.output
    assert "fixed-plan re-pricing" in result.stdout
    assert "ranked by money at risk: 1 of 2" in result.stdout
    assert SEEWEB in result.stdout and TENSORWAVE not in result.stdout
    assert "$56,171" in result.stdout and "$385,934" in result.stdout
    assert "pass --out FOLDER" in result.stdout


def test_one_request_per_provider_with_the_cells_to_fill(checked):
    _, report, out = checked
    names = sorted(p.name for p in out.iterdir())
    assert names == ["quote-request-seeweb.csv", "quote-request-tensorwave.csv"]
    assert report["quote_requests"] == [str(out / n) for n in names]
    text = (out / "quote-request-seeweb.csv").read_text()
    rows = list(csv.DictReader(io.StringIO("\n".join(ln for ln in text.splitlines()
                                                       if not ln.startswith("#")))))  # fmt: skip
    assert len(rows) == 1
    row = rows[0]
    assert (row["provider"], row["region"], row["offering"], row["term"]) == (
        "seeweb", "it-fr2", SEEWEB, "monthly",
    )  # fmt: skip
    for cell in ("price_per_instance_hour", "valid_until", "quoted_on", "reference"):
        assert row[cell] == UNFILLED
    assert (row["requested_units"], row["requested_instance_hours"]) == ("14", "189128.0")
    assert (row["requested_from"], row["requested_until"]) == ("2027-04-01", "2029-12-31")
    # every plan line the request covers is listed with its units, hours and dates
    assert "m04-15 rent chat-13b peak: 14 units x 1,464.0 h, 2027-04-01 to 2028-03-31" in text


def test_solve_refuses_a_request_not_filled_in(checked, tmp_path):
    _, _, out = checked
    request = out / "quote-request-tensorwave.csv"
    result = runner.invoke(app, ["solve", SEED, "--quotes", str(request)])
    assert result.exit_code == 2
    # the header is line 13 (12 comment lines), the quote line 14
    assert f"{request}: line 14, price_per_instance_hour: price_per_instance_hour is not " in (
        result.output
    )
    assert "not filled in (FILL-IN)" in result.output
    assert "Traceback" not in result.output


def _filled(text: str, prices: dict[str, str], reference: str) -> str:
    """A request with its FILL-IN cells filled in as a provider would."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("#") and UNFILLED in line:
            cells = next(csv.reader([line]))
            cells[4] = prices[cells[2]]  # price_per_instance_hour
            cells[6:9] = ["2027-06-30", "2026-12-01", reference]
            line = ",".join(cells)
        lines.append(line)
    return "\n".join(lines) + "\n"


def test_the_loop_plan_check_quotes_solve(checked, tmp_path):
    """Quoted 10% under the catalog (module docstring): 0.99 x 0.9 = 0.891 and
    15.60 x 0.9 = 14.04; the re-solved plan prices those lines at the quotes, confidence
    quote, and costs 0.9 x 329,762.54 = 296,786.29."""
    _, report, out = checked
    quoted = {p["offering"]: round(p["price_per_hour_in_currency"] * 0.9, 6)
              for p in report["prices"]}  # fmt: skip
    assert quoted == {SEEWEB: pytest.approx(0.891), TENSORWAVE: pytest.approx(14.04)}
    text = {offering: f"{price:g}" for offering, price in quoted.items()}
    joined = "".join(
        _filled((out / name).read_text(), text, ref)
        for name, ref in (("quote-request-seeweb.csv", "SW-77"),
                          ("quote-request-tensorwave.csv", "TW-12"))
    )  # fmt: skip
    quotes = tmp_path / "quotes.csv"
    quotes.write_text(joined)  # the two files joined as with cat: the header twice
    assert len(parse_quotes(joined, str(quotes))) == 2
    args = ["solve", SEED, "--quotes", str(quotes), "--format", "json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert plan["total_cost_usd"] == pytest.approx(296_786.29, abs=0.01)
    assert plan["total_cost_usd"] == pytest.approx(0.9 * report["total_cost_usd"], rel=1e-9)
    lines = [i for i in plan["line_items"] if i["item"] in ("rent", "training")]
    assert {i["price_confidence"] for i in lines} == {"quote"}
    assert {i["price_source"] for i in lines} == {"quote SW-77", "quote TW-12"}
    assert {i["price_date"] for i in lines} == {"2026-12-01"}
    for i in lines:
        base = i["offering"].split("~")[0]
        assert i["cost_usd"] / (i["units"] * i["hours"]) == pytest.approx(quoted[base])


def test_a_quoted_plan_has_nothing_left_to_confirm(checked, tmp_path):
    """A plan solved on quotes: their band is 0, so nothing is at risk or requested."""
    _, report, out = checked
    text = {SEEWEB: "0.891", TENSORWAVE: "14.04"}
    quotes = tmp_path / "quotes.csv"
    quotes.write_text("".join(_filled((out / n).read_text(), text, "Q-1")
                              for n in sorted(p.name for p in out.iterdir())))  # fmt: skip
    plan = tmp_path / "quoted.json"
    args = ["solve", SEED, "--quotes", str(quotes), "--format", "json"]
    assert runner.invoke(app, [*args, "--out", str(plan)]).exit_code == 0
    again = tmp_path / "again"
    result = runner.invoke(
        app, ["prices", "check", str(plan), "--out", str(again), "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {p["confidence"] for p in data["prices"]} == {"quote"}
    assert all(p["at_risk_usd"] == 0 and not p["to_confirm"] for p in data["prices"])
    assert data["quote_requests"] == [] and not again.exists()
