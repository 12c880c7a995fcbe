"""Prices in the currency a provider bills: an EUR-priced offering converted at the rate
table's rate, the rate and its date on the plan, FOCUS rows in EUR, a user's exchange-rate
file changing the plan by the amount worked by hand, hostile rate files refused (file,
line, field, fix; exit 2; nothing written), a tampered rate refused on re-verification,
and currency moves as price scenarios that touch only the offerings in that currency.

The tiny catalog (tests/conftest.py): one H100 at 3.00 EUR per hour (acme eu-north, e1)
and one at 4.00 USD per hour (acme us-east, h1); the chat workload needs one H100 for a
one-month horizon of 730 hours (no start: 730-hour months).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from conftest import CHAT_WORKLOAD, offering, write_catalog
from solver.cli import app
from solver.errors import ProcureError
from solver.inputs.catalog import load_catalog
from solver.inputs.exchange_rates import parse_exchange_rates, with_exchange_rates
from solver.inputs.problem import PriceMultiplier, Scenario

runner = CliRunner()

HEADER = "date,currency,usd_per_unit,source\n"
#: the ECB euro reference rate of 2026-05-08 (catalogs/exchange_rates.csv): 1 EUR = 1.1761 USD
TABLE_RATE = "2026-05-08,EUR,1.1761,ECB euro reference rate of 2026-05-08\n"
EUR_PER_HOUR = 3.00
HOURS = 730.0


def _catalog(folder: Path) -> Path:
    eu = offering("e1", "h100-sxm", 1, EUR_PER_HOUR, region="eu-north") | {"currency": "EUR"}
    us = offering("h1", "h100-sxm", 1, 4.0) | {"currency": "USD"}
    write_catalog(folder, [eu, us])
    (folder / "exchange_rates.csv").write_text(HEADER + TABLE_RATE)
    return folder


@pytest.fixture
def case(tmp_path: Path) -> Path:
    _catalog(tmp_path / "cat")
    # compute only (costs: none): the FOCUS rows below are the compute worked by hand
    text = "name: fx\ncosts: none\nhorizon_months: 1\nworkloads:\n" + CHAT_WORKLOAD
    (tmp_path / "p.yaml").write_text(text)
    return tmp_path


def _solve(case: Path, *extra: str) -> dict:
    args = ["solve", str(case / "p.yaml"), "--catalog", str(case / "cat"), "--format", "json"]
    result = runner.invoke(app, [*args, "--reproducible", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_an_eur_price_is_converted_at_the_tables_rate_and_the_plan_states_it(case):
    # by hand: 3.00 EUR/h x 1.1761 USD/EUR = 3.5283 USD/h, under the USD offering's 4.00,
    # so the plan rents e1: 3.5283 x 730 h = 2,575.659 USD, billed 3.00 x 730 = 2,190 EUR
    plan = _solve(case)
    (line,) = plan["line_items"]
    assert line["offering"] == "acme/eu-north/e1" and line["price_currency"] == "EUR"
    assert line["cost_usd"] == pytest.approx(2575.659)
    assert line["exchange_rate_usd_per_unit"] == 1.1761
    assert line["exchange_rate_date"] == "2026-05-08"
    assert line["cost_in_price_currency"] == pytest.approx(2190.0)
    assert line["unit_price_in_price_currency_per_hour"] == pytest.approx(EUR_PER_HOUR)
    (rate,) = plan["exchange_rates"]
    assert rate["currency"] == "EUR" and rate["rate_date"] == "2026-05-08"
    assert rate["usd_per_unit"] == 1.1761 and "ECB" in rate["rate_source"]
    assert rate["cost_usd"] == pytest.approx(2575.659) and rate["cost"] == pytest.approx(2190.0)
    assert plan["total_cost_usd"] == pytest.approx(2575.659)


def test_the_plan_table_shows_the_currency_and_its_rate(case):
    args = ["solve", str(case / "p.yaml"), "--catalog", str(case / "cat")]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    # the rates line: 2,190 EUR = $2,576 (2,575.659 rounded) at 1.1761 USD per EUR
    assert "prices in EUR: 2,190 EUR = $2,576 at 1.1761 USD per EUR (2026-05-08;" in result.output


def test_a_usd_only_plan_carries_no_rate_fields(case):
    # the EUR offering dearer than the USD one at 1.50 USD/EUR (4.50 > 4.00): a USD plan,
    # whose JSON has no exchange-rate field (USD plans keep their bytes)
    (case / "r.csv").write_text(HEADER + "2026-11-02,EUR,1.5,test rate\n")
    plan = _solve(case, "--exchange-rates", str(case / "r.csv"))
    assert "exchange_rates" not in plan
    (line,) = plan["line_items"]
    assert line["price_currency"] == "USD" and "exchange_rate_usd_per_unit" not in line
    assert plan["total_cost_usd"] == pytest.approx(4.0 * HOURS)


def test_an_override_file_moves_the_total_by_the_amount_worked_by_hand(case):
    # by hand: at 1.25 USD/EUR, 3.00 x 1.25 = 3.75 USD/h (still under 4.00): 3.75 x 730 =
    # 2,737.50 USD, 161.841 more than at the table's 1.1761 (2,575.659)
    base = _solve(case)
    (case / "r.csv").write_text(HEADER + "2026-11-02,EUR,1.25,our treasury's budget rate\n")
    moved = _solve(case, "--exchange-rates", str(case / "r.csv"))
    assert moved["total_cost_usd"] - base["total_cost_usd"] == pytest.approx(161.841)
    (line,) = moved["line_items"]
    assert line["exchange_rate_usd_per_unit"] == 1.25
    assert line["exchange_rate_date"] == "2026-11-02"
    assert line["cost_in_price_currency"] == pytest.approx(2190.0)
    assert moved["exchange_rates"][0]["rate_source"] == "our treasury's budget rate"
    assert moved["inputs"]["exchange_rates"] == str((case / "r.csv").resolve())


def test_an_older_override_rate_is_the_one_used(case):
    # the user's rate replaces the table's for EUR even when it is older than 2026-05-08
    (case / "r.csv").write_text(HEADER + "2025-01-02,EUR,1.0,an older rate\n")
    plan = _solve(case, "--exchange-rates", str(case / "r.csv"))
    assert plan["line_items"][0]["exchange_rate_date"] == "2025-01-02"
    assert plan["total_cost_usd"] == pytest.approx(EUR_PER_HOUR * 1.0 * HOURS)  # 2,190


def test_the_problems_exchange_rates_field_is_read_relative_to_it(case):
    # the same file named by the problem (exchange_rates: r.csv) as by the option: 2,737.50
    (case / "r.csv").write_text(HEADER + "2026-11-02,EUR,1.25,budget rate\n")
    text = (case / "p.yaml").read_text()
    (case / "p.yaml").write_text("exchange_rates: r.csv\n" + text)
    plan = _solve(case)
    assert plan["total_cost_usd"] == pytest.approx(2737.5)


def _focus(case: Path, plan: dict, out: str = "focus") -> pd.DataFrame:
    (case / "plan.json").write_text(json.dumps(plan))
    args = ["export", str(case / "plan.json"), "--format", "focus", "--out", str(case / out)]
    result = runner.invoke(app, [*args, "--catalog", str(case / "cat")])
    assert result.exit_code == 0, result.output
    return pd.read_csv(case / out / "focus.csv")


def test_focus_rows_are_in_the_billing_currency(case):
    # one month of e1: billed 3.00 EUR x 730 h = 2,190 EUR; in USD 2,575.659 at 1.1761
    frame = _focus(case, _solve(case))
    (row,) = frame.to_dict("records")
    assert row["BillingCurrency"] == "EUR" and row["PricingCurrency"] == "EUR"
    assert row["BilledCost"] == pytest.approx(2190.0)
    assert row["EffectiveCost"] == pytest.approx(2190.0)
    assert row["ListUnitPrice"] == pytest.approx(EUR_PER_HOUR)
    assert row["ListCost"] == pytest.approx(2190.0)
    assert row["x_ExchangeRateUsdPerUnit"] == 1.1761
    assert row["x_ExchangeRateDate"] == "2026-05-08"
    assert row["x_EffectiveCostUsd"] == pytest.approx(2575.659)


def test_focus_of_a_plan_solved_with_an_override_file_reapplies_it(case):
    # re-verification reads the recorded file again: the rows at 1.25 (2,737.50 USD)
    (case / "r.csv").write_text(HEADER + "2026-11-02,EUR,1.25,budget rate\n")
    frame = _focus(case, _solve(case, "--exchange-rates", str(case / "r.csv")))
    assert frame["BilledCost"].tolist() == pytest.approx([2190.0])
    assert frame["x_EffectiveCostUsd"].tolist() == pytest.approx([2737.5])


def test_a_tampered_rate_on_the_plan_is_refused(case):
    # the plan says 1.30 where the table it was solved with says 1.1761: re-derivation
    # refuses it, nothing is written
    plan = _solve(case)
    plan["line_items"][0]["exchange_rate_usd_per_unit"] = 1.30
    (case / "plan.json").write_text(json.dumps(plan))
    args = ["export", str(case / "plan.json"), "--format", "focus", "--out", str(case / "f")]
    result = runner.invoke(app, [*args, "--catalog", str(case / "cat")])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "exchange_rate_usd_per_unit" in result.output
    assert not (case / "f" / "focus.csv").exists()


#: hostile rate files: (body after the header, or a whole text; the field named; words)
HOSTILE = {
    "missing currency": (HEADER + "2026-11-02,,1.2,x\n", "line 2, currency", "ISO 4217"),
    "not a code": (HEADER + "2026-11-02,euro,1.2,x\n", "line 2, currency", "EUR"),
    "USD line": (HEADER + "2026-11-02,USD,1.0,x\n", "line 2, currency", "remove"),
    "bad day": (HEADER + "2026-02-30,EUR,1.2,x\n", "line 2, date", "YYYY-MM-DD"),
    "words for a date": (HEADER + "May 8,EUR,1.2,x\n", "line 2, date", "YYYY-MM-DD"),
    "zero rate": (HEADER + "2026-11-02,EUR,0,x\n", "line 2, usd_per_unit", "positive"),
    "negative rate": (HEADER + "2026-11-02,EUR,-1.2,x\n", "line 2, usd_per_unit", "positive"),
    "nan rate": (HEADER + "2026-11-02,EUR,nan,x\n", "line 2, usd_per_unit", "positive"),
    "inf rate": (HEADER + "2026-11-02,EUR,inf,x\n", "line 2, usd_per_unit", "positive"),
    "text rate": (HEADER + "2026-11-02,EUR,abc,x\n", "line 2, usd_per_unit", "positive"),
    "comma in a rate": (HEADER + "2026-11-02,EUR,1,2,x\n", "line 2, cells", "extra cells"),
    "no source": (HEADER + "2026-11-02,EUR,1.2,\n", "line 2, source", "where the rate"),
    "two rates a day": (
        HEADER + "2026-11-02,EUR,1.2,x\n# note\n2026-11-02,EUR,1.3,y\n",
        "line 4, date",
        "one rate per currency and date",
    ),
    "unknown column": ("date,currency,rate,source\n", "line 1, rate", "header"),
    "missing column": ("date,currency,usd_per_unit\n", "line 1, source", "header"),
    "empty": ("", None, "header"),
    "header only": (HEADER, None, "one line per rate"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_rates_file_is_refused_with_file_line_field_and_fix(case, name):
    text, field, words = HOSTILE[name]
    path = case / "r.csv"
    path.write_text(text)
    out = case / "plan.json"
    args = ["solve", str(case / "p.yaml"), "--catalog", str(case / "cat")]
    result = runner.invoke(app, [*args, "--exchange-rates", str(path), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    flat = " ".join(result.output.split())
    assert str(path) in flat and words in flat, flat
    if field is not None:
        assert field in flat, flat
    assert "fix:" in flat
    assert not out.exists()


def test_a_missing_rates_file_is_named(case):
    result = runner.invoke(
        app,
        [
            "solve",
            str(case / "p.yaml"),
            "--catalog",
            str(case / "cat"),
            "--exchange-rates",
            "no.csv",
        ],
    )
    assert result.exit_code == 2 and "exchange-rate file not found" in result.output


def test_an_override_reconverts_only_its_currency(tmp_path):
    # at 1.25 the EUR row is 3.00 x 1.25 = 3.75 USD/h; the USD row stays 4.00
    catalog = load_catalog(_catalog(tmp_path / "cat"))
    rates = parse_exchange_rates(HEADER + "2026-11-02,EUR,1.25,x\n", "r.csv")
    moved = with_exchange_rates(catalog, rates).offerings["on_demand_usd_per_hour"]
    assert moved["acme/eu-north/e1"] == pytest.approx(3.75)
    assert moved["acme/us-east/h1"] == 4.0
    assert catalog.offerings.at["acme/eu-north/e1", "on_demand_usd_per_hour"] == pytest.approx(
        3.5283
    )  # the catalog given is not changed


def test_a_currency_move_changes_only_the_offerings_in_that_currency(tmp_path):
    from solver.analyses.stochastic.scenarios import currency_moves, price_factors

    catalog = load_catalog(_catalog(tmp_path / "cat"))
    s = Scenario(
        name="euro_up", probability=1.0, prices=[PriceMultiplier(currency="EUR", factor=1.1)]
    )
    factors = price_factors(catalog, s)
    assert factors.loc["acme/eu-north/e1"].tolist() == [1.1, 1.1]  # on_demand, spot
    assert factors.loc["acme/us-east/h1"].tolist() == [1.0, 1.0]
    # drawn: one move per currency other than USD, none at sigma 0
    drawn = currency_moves(catalog, 0.08, np.random.default_rng(0))
    assert [m.currency for m in drawn] == ["EUR"]
    assert currency_moves(catalog, 0.0, np.random.default_rng(0)) == []


def test_a_currency_move_of_a_currency_the_catalog_has_not_is_refused(case):
    # a GBP move in a catalog priced in EUR and USD: named, with the currencies it has
    text = (case / "p.yaml").read_text() + (
        "uncertainty:\n  scenarios:\n"
        "    - {name: a, probability: 0.5, prices: [{currency: GBP, factor: 1.1}]}\n"
        "    - {name: b, probability: 0.5}\n"
    )
    (case / "p.yaml").write_text(text)
    result = runner.invoke(app, ["solve", str(case / "p.yaml"), "--catalog", str(case / "cat")])
    assert result.exit_code == 2, result.output
    flat = " ".join(result.output.split())
    assert "uncertainty.scenarios[0].prices[0].currency" in flat and "EUR, USD" in flat


def test_a_euro_scenario_moves_the_two_stage_cost_by_the_hand_worked_amount(case):
    # two equally likely scenarios, the euro as is and 10% dearer: e1 stays cheapest in
    # both (3.5283 x 1.1 = 3.881 < 4.00), so the expected cost is 2,575.659 x (0.5 + 0.55)
    text = (case / "p.yaml").read_text() + (
        "uncertainty:\n  scenarios:\n"
        "    - {name: as_is, probability: 0.5}\n"
        "    - {name: euro_up, probability: 0.5, prices: [{currency: EUR, factor: 1.1}]}\n"
    )
    (case / "p.yaml").write_text(text)
    args = ["solve", str(case / "p.yaml"), "--catalog", str(case / "cat"), "--format", "json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    assert found["expected_cost_usd"] == pytest.approx(2575.659 * 1.05)  # 2,704.442
    assert found["worst_case_usd"] == pytest.approx(2575.659 * 1.1)  # 2,833.225, euro_up


def test_parse_keeps_every_rate_sorted():
    table = parse_exchange_rates(
        HEADER + "2026-11-02,GBP,1.3,x\n2026-11-01,EUR,1.2,y\n2026-11-02,EUR,1.21,z\n", "r.csv"
    )
    assert table[["currency", "date"]].values.tolist() == [
        ["EUR", "2026-11-01"],
        ["EUR", "2026-11-02"],
        ["GBP", "2026-11-02"],
    ]


def test_a_bad_rate_raises_a_procure_error_naming_the_line():
    with pytest.raises(ProcureError) as err:
        parse_exchange_rates(HEADER + "2026-11-02,EUR,1.2,x\n2026-11-02,GBP,0,y\n", "r.csv")
    assert err.value.field == "line 3, usd_per_unit" and err.value.file == "r.csv"


def test_the_plans_own_eur_focus_rows_come_back_as_its_usd(case):
    # actuals of the plan's own FOCUS rows, billed in EUR (2,190 EUR) and read back at the
    # rate the plan was solved with (the override's 1.25): $2,737.50 planned and actual,
    # a variance of 0
    (case / "r.csv").write_text(HEADER + "2026-11-02,EUR,1.25,budget rate\n")
    _focus(case, _solve(case, "--exchange-rates", str(case / "r.csv")))
    args = ["actuals", str(case / "plan.json"), str(case / "focus" / "focus.csv")]
    result = runner.invoke(app, [*args, "--catalog", str(case / "cat"), "--format", "json"])
    assert result.exit_code == 0, result.output
    totals = json.loads(result.output)["totals"]
    assert totals["planned_usd"] == pytest.approx(2737.5)
    assert totals["actual_usd"] == pytest.approx(2737.5)
    assert totals["variance_usd"] == pytest.approx(0.0, abs=1e-6)
