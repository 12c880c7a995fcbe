"""``procure prices check PLAN`` on the shipped seed's plan, and the loop it starts: plan,
quote requests, quotes filled in, solve with the quotes.

The seed's plan (``procure solve problems/seed-2m-13b.yaml``, the guard on by default) rests
on three prices (bands in the shipped catalogs/price_bands.csv, measured by
bench/quality/price_bands.py: unverified 0.37, list 0; the tests follow the file's bands,
:data:`BAND` and :data:`BAND_LIST`):

- TensorWave ``tensorwave/US/mi325x-8x`` on demand, unverified, $15.60 per instance-hour
  (1.95 per GPU-hour x 8), training: 5 units x 1,827.25 h = 9,136.27 instance-hours,
  $142,525.82, at risk 0.37 x 142,525.82 = $52,734.55;
- Seeweb ``seeweb/it-fr2/ECS1GPU10`` on demand, list (Seeweb's page captured 2026-09-15),
  EUR 2.60 x 1.1761 = $3.05786 per instance-hour, serving: base 1 unit x (4,392 + 4,380 +
  3,300) h = 12,072, shoulder 2 x (2,928 + 2,920 + 2,200) = 16,096, peak 4 x (1,464 +
  1,460 + 1,100) = 16,096; 44,264 instance-hours x $3.05786 = $135,353.12, at risk $0;
- Lambda ``lambda/europe-central-1/gpu_1x_gh200`` on demand, list (lambda.ai/instances as
  read 2026-09-20), $2.29 per instance-hour, serving: base 1 x 12,072, shoulder 3 x 8,048
  = 24,144, peak 1 x 4,024; 40,240 instance-hours x $2.29 = $92,149.60, at risk
  0 x 92,149.60 = $0 (a list price's band is 0: nothing to confirm, no request).

(Issue 47's chunked-prefill sizing put the Seeweb H200 beside the GH200; it was Lambda's
GH200 alone.) The plan's total is $370,028.54 (their sum); TensorWave ranks first, then the
two list prices by money carried. Every price at the top of its band at once:
370,028.54 + 52,734.55 = $422,763.09, the plan's guarded total. Quoted 10% under the
catalog, $14.04, TensorWave's line is 10% cheaper and the re-solved plan costs 0.9 x
142,525.82 + 227,502.72 = 128,273.24 + 227,502.72 = $355,775.96.
"""

from __future__ import annotations

import csv
import io
import json

import pytest
from typer.testing import CliRunner

from conftest import ROOT
from solver.analyses.price_check import check_prices
from solver.cli import app
from solver.inputs.price_bands import PriceBand, price_band_fraction
from solver.inputs.quotes import UNFILLED, parse_quotes

runner = CliRunner()
TENSORWAVE = "tensorwave/US/mi325x-8x"
LAMBDA = "lambda/europe-central-1/gpu_1x_gh200"
SEEWEB = "seeweb/it-fr2/ECS1GPU10"
SEED = str(ROOT / "problems" / "seed-2m-13b.yaml")
#: the shipped band of an unverified price
BAND = price_band_fraction("unverified")
#: the shipped band of a list price
BAND_LIST = price_band_fraction("list")
SEED_USD = 370_028.54
LAMBDA_USD = 40_240 * 2.29  # 92,149.60
SEEWEB_USD = 44_264 * 2.60 * 1.1761  # 135,353.12
SERVING_USD = LAMBDA_USD + SEEWEB_USD  # 227,502.72


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
    assert report["total_cost_usd"] == pytest.approx(SEED_USD, abs=0.01)
    assert [p["offering"] for p in report["prices"]] == [TENSORWAVE, SEEWEB, LAMBDA]
    tensorwave, seeweb, lam = report["prices"]
    # worked in the module docstring
    assert tensorwave["confidence"] == "unverified" and tensorwave["band_fraction"] == BAND
    assert tensorwave["price_usd_per_hour"] == pytest.approx(15.60)
    assert tensorwave["carried_usd"] == pytest.approx(142_525.82, abs=0.01)
    assert tensorwave["at_risk_usd"] == pytest.approx(142_525.82 * BAND, abs=0.01)
    assert tensorwave["to_confirm"]
    assert lam["confidence"] == "list" and lam["band_fraction"] == BAND_LIST
    assert lam["price_usd_per_hour"] == pytest.approx(2.29)
    assert lam["instance_hours"] == pytest.approx(40_240.0)
    assert lam["carried_usd"] == pytest.approx(92_149.60, abs=0.01)
    assert lam["raised_total_usd"] == pytest.approx(SEED_USD + LAMBDA_USD * BAND_LIST, abs=0.01)
    assert lam["raised_price_usd_per_hour"] == pytest.approx(2.29 * (1 + BAND_LIST))
    assert lam["peak_units"] == 3 and len(lam["lines"]) == 9
    assert seeweb["confidence"] == "list" and seeweb["instance_hours"] == pytest.approx(44_264.0)
    assert seeweb["price_usd_per_hour"] == pytest.approx(2.60 * 1.1761)
    assert seeweb["carried_usd"] == pytest.approx(135_353.12, abs=0.01)
    assert seeweb["peak_units"] == 4 and len(seeweb["lines"]) == 9
    assert (lam["from_day"], lam["until_day"]) == ("2027-04-01", "2029-12-31")
    if (BAND, BAND_LIST) == (0.37, 0.0):  # the shipped bands when written
        assert [p["at_risk_usd"] for p in report["prices"]] == pytest.approx(
            [52_734.55, 0.0, 0.0], abs=0.01
        )
        assert not lam["to_confirm"]
    assert not tensorwave["over_budget"]  # at most 2 x $370,029 is within the $2,000,000
    assert report["not_checked"] == []
    # all at once: the total plus each price's carried money times its band, the plan's
    # guarded total (the guard prices every line at the top of its band)
    raised = 142_525.82 * BAND + SERVING_USD * BAND_LIST
    assert report["all_raised_total_usd"] == pytest.approx(SEED_USD + raised, abs=0.01)
    plan = json.loads(checked[0].read_text())
    assert report["all_raised_total_usd"] == pytest.approx(plan["guarded_total_usd"], abs=0.01)


def test_the_table_states_the_repricing_and_ranks(checked):
    plan, _, _ = checked
    result = runner.invoke(app, ["prices", "check", str(plan), "--top", "1"])
    assert result.exit_code == 0, result.output
    assert "fixed-plan re-pricing" in result.stdout
    assert "ranked by money at risk: 1 of 3" in result.stdout
    assert TENSORWAVE in result.stdout and LAMBDA not in result.stdout
    assert f"${142_525.82 * BAND:,.0f}" in result.stdout
    assert "pass --out FOLDER" in result.stdout


def test_one_request_per_provider_with_the_cells_to_fill(checked):
    # one request per provider with a price to confirm: TensorWave's (Lambda's list price
    # has band 0, nothing at risk: no request)
    _, report, out = checked
    names = sorted(p.name for p in out.iterdir())
    assert names == ["quote-request-tensorwave.csv"]
    assert report["quote_requests"] == [str(out / n) for n in names]
    text = (out / "quote-request-tensorwave.csv").read_text()
    rows = list(csv.DictReader(io.StringIO("\n".join(ln for ln in text.splitlines()
                                                       if not ln.startswith("#")))))  # fmt: skip
    assert len(rows) == 1
    row = rows[0]
    assert (row["provider"], row["region"], row["offering"], row["term"]) == (
        "tensorwave", "US", TENSORWAVE, "monthly",
    )  # fmt: skip
    for cell in ("price_per_instance_hour", "valid_until", "quoted_on", "reference"):
        assert row[cell] == UNFILLED
    # 5 units x 1,827.25 h = 9,136.27 instance-hours, written to one decimal
    assert (row["requested_units"], row["requested_instance_hours"]) == ("5", "9136.3")
    assert (row["requested_from"], row["requested_until"]) == ("2027-01-01", "2027-03-18")
    # every plan line the request covers is listed with its units, hours and dates
    assert "m01-03 training pretrain-13b: 5 units x 1,827.3 h, 2027-01-01 to 2027-03-18" in text


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
    """Quoted 10% under the catalog (module docstring): 15.60 x 0.9 = 14.04; the re-solved
    plan prices that line at the quote, confidence quote, and costs 0.9 x 142,525.82 +
    227,502.72 = $355,775.96 (serving unchanged, on Lambda's and Seeweb's list prices)."""
    _, report, out = checked
    quoted = {p["offering"]: round(p["price_per_hour_in_currency"] * 0.9, 6)
              for p in report["prices"] if p["to_confirm"]}  # fmt: skip
    assert quoted == {TENSORWAVE: pytest.approx(14.04)}
    text = {offering: f"{price:g}" for offering, price in quoted.items()}
    filled = _filled((out / "quote-request-tensorwave.csv").read_text(), text, "TW-12")
    quotes = tmp_path / "quotes.csv"
    quotes.write_text(filled)
    assert len(parse_quotes(filled, str(quotes))) == 1
    args = ["solve", SEED, "--quotes", str(quotes), "--format", "json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert plan["total_cost_usd"] == pytest.approx(355_775.96, abs=0.01)
    assert plan["total_cost_usd"] == pytest.approx(0.9 * 142_525.82 + SERVING_USD, abs=0.01)
    # every line now at a band-0 price (quote, list): the guarded total is the total
    assert plan["guarded_total_usd"] == pytest.approx(355_775.96, abs=0.01)
    [train] = [i for i in plan["line_items"] if i["item"] == "training"]
    assert (train["price_confidence"], train["price_source"]) == ("quote", "quote TW-12")
    assert train["price_date"] == "2026-12-01"
    assert train["cost_usd"] / (train["units"] * train["hours"]) == pytest.approx(14.04)
    rent = [i for i in plan["line_items"] if i["item"] == "rent"]
    assert {(i["offering"], i["price_confidence"]) for i in rent} == {
        (LAMBDA, "list"),
        (SEEWEB, "list"),
    }


def test_a_quoted_plan_has_nothing_left_to_confirm(checked, tmp_path):
    """A plan solved on quotes (and list prices): their band is 0, so nothing is at risk or
    requested."""
    _, report, out = checked
    text = {TENSORWAVE: "14.04"}
    quotes = tmp_path / "quotes.csv"
    quotes.write_text(_filled((out / "quote-request-tensorwave.csv").read_text(), text, "Q-1"))
    plan = tmp_path / "quoted.json"
    args = ["solve", SEED, "--quotes", str(quotes), "--format", "json"]
    assert runner.invoke(app, [*args, "--out", str(plan)]).exit_code == 0
    again = tmp_path / "again"
    result = runner.invoke(
        app, ["prices", "check", str(plan), "--out", str(again), "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {p["confidence"] for p in data["prices"]} == {"quote", "list"}
    assert all(p["at_risk_usd"] == 0 and not p["to_confirm"] for p in data["prices"])
    assert data["quote_requests"] == [] and not again.exists()


def test_a_savings_plans_cover_nets_against_the_on_demand_price(tiny_catalog):
    """The plan of tests/core/test_savings_plans.py (its problem copied), worked there by
    hand: H1 on demand at $4/h, 2 units by day and 1 by night (4,380 h each), $3.3/h
    committed covering 1.32 H1 by day and 1 by night. The usage the commitment pays does
    not pay the on-demand price: H1 carries (2 - 1.32) x $4 x 4,380 h = $11,913.60, on
    0.68 x 4,380 = 2,978.4 instance-hours; L4 (2 by day, 1 by night covered, $1/h)
    2 x 4,380 = $8,760. With a band of 10%: at risk $1,191.36 and $876; the commitment
    ($28,908) is not checked."""
    from conftest import H1, L4, problem, serve
    from solver.inputs.problem import Problem
    from solver.solve import solve_problem

    blocks = [
        {"name": "day", "hours_per_day": 12, "factor": 1.6},
        {"name": "night", "hours_per_day": 12, "factor": 0.4},
    ]
    rates = {"acme/us-east/h1": 2.5, "acme/us-east/l4": 0.8}
    sp = {"provider": "acme", "term": "1y", "rates": rates, "source": "test rates"}
    workloads = [
        serve(10, name="a", accelerators=["h100-sxm"]),
        serve(2.5, name="b", accelerators=["l4"]),
    ]
    # the plan of the catalog's prices: without a guard raising them by their bands
    unguarded = {"price_guard": "none"} if "price_guard" in Problem.model_fields else {}
    problem = problem(
        workloads,
        horizon_months=12,
        load_profile={"blocks": blocks},
        savings_plans=[sp],
        **unguarded,
    )
    catalog = tiny_catalog([H1, L4])
    plan = solve_problem(problem, catalog)
    bands = {c: PriceBand(c, 0.10, "stated", "test") for c in ("unverified", "third_party")}
    bands |= {c: PriceBand(c, 0.0, "stated", "test") for c in ("list", "quote")}
    check = check_prices(plan, problem, catalog, bands)
    by_offering = {p.offering: p for p in check.prices}
    h1, l4 = by_offering["acme/us-east/h1"], by_offering["acme/us-east/l4"]
    assert h1.carried_usd == pytest.approx(11_913.60)
    assert h1.instance_hours == pytest.approx(2_978.4)
    assert h1.at_risk_usd == pytest.approx(1_191.36)
    assert l4.carried_usd == pytest.approx(8_760.0) and l4.at_risk_usd == pytest.approx(876.0)
    assert [p.offering for p in check.prices] == ["acme/us-east/h1", "acme/us-east/l4"]
    ((item, lines, cost),) = [(n.item, n.lines, n.cost_usd) for n in check.not_checked]
    assert (item, lines) == ("savings_plan", 1) and cost == pytest.approx(28_908.0)
