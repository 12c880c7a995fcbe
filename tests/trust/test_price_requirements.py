"""A plan resting on prices the problem does not accept (issue 29, part 1): refused with
its lines named, or planned without them (``weak_price_policy: exclude``); totals in the
problem's currency (part 4).

Worked by hand on the tiny catalog (tests/conftest.py): one H100 instance serves the
10 requests/s of ``serve(10)``; one month of 730 h from 2027-01 (calendar: 744 h in
January). Two H100 offerings: ``h1`` at $4/h, unverified and undated; ``h1b`` at $5/h, a
list price of 2026-10-10 (83 days old on 2027-01-01).
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import offering, problem, serve, write_catalog
from solver.cli import app
from solver.errors import InfeasibleError, ProcureError
from solver.inputs.catalog import load_catalog
from solver.solve import solve_problem
from solver.trust.price_requirements import weak_prices

JANUARY_H = 744.0  # the problems start 2027-01: January's calendar hours
RATES = "date,currency,usd_per_unit,source\n2026-05-08,EUR,1.1761,ECB (test copy)\n"


def _row(instance: str, usd: float, confidence: str, day: str, currency: str = "USD"):
    return {
        **offering(instance, "h100-sxm", 1, usd),
        "currency": currency,
        "price_date": day,
        "price_confidence": confidence,
        "price_note": "test",
    }


CHEAP = _row("h1", 4.0, "unverified", "unknown")
LISTED = _row("h1b", 5.0, "list", "2026-10-10")


@pytest.fixture
def catalog(tmp_path):
    def make(*rows):
        folder = write_catalog(tmp_path / "catalog", list(rows))
        (folder / "exchange_rates.csv").write_text(RATES)
        return load_catalog(folder)

    return make


def _problem(**extra):
    return problem([serve(10.0)], start="2027-01", **extra)


def test_without_requirements_the_cheapest_price_wins_whatever_its_provenance(catalog):
    # $4 x 744 h = $2,976 on h1; the line says what it rests on
    plan = solve_problem(_problem(), catalog(CHEAP, LISTED))
    assert plan.total_cost_usd == pytest.approx(4.0 * JANUARY_H)
    (line,) = plan.line_items
    assert (line.offering, line.price_confidence, line.price_date) == (
        "acme/us-east/h1",
        "unverified",
        "unknown",
    )
    assert line.price_source == "test" and line.price_currency == "USD"


def test_a_plan_on_a_price_below_the_minimum_confidence_is_refused_with_its_line(catalog):
    # the optimum rests on h1 (unverified < list): refused, h1 named with its $2,976
    with pytest.raises(ProcureError) as err:
        solve_problem(_problem(min_price_confidence="list"), catalog(CHEAP, LISTED))
    text = err.value.render()
    assert "acme/us-east/h1 on_demand: confidence unverified is below list" in text
    assert "1 line item(s), $2,976" in text
    assert err.value.file.endswith("offerings.csv")
    assert "weak_price_policy: exclude" in err.value.fix
    assert not isinstance(err.value, InfeasibleError)  # a refusal, exit 2, not exit 3


def test_excluding_weak_prices_plans_on_the_list_price(catalog):
    # h1 left out before solving: h1b at $5 x 744 h = $3,720
    p = _problem(min_price_confidence="list", weak_price_policy="exclude")
    plan = solve_problem(p, catalog(CHEAP, LISTED))
    assert plan.total_cost_usd == pytest.approx(5.0 * JANUARY_H)
    assert {i.offering for i in plan.line_items} == {"acme/us-east/h1b"}
    assert plan.compile_report["excluded_by_requirement"]["price confidence below list"] == 1
    assert weak_prices(plan, p) == []


def test_a_price_of_unknown_date_is_too_old_for_any_maximum_age(catalog):
    # max 90 days: h1 (undated) is too old, h1b (83 days at the start) is not
    with pytest.raises(ProcureError, match="acme/us-east/h1 on_demand: its date is unknown"):
        solve_problem(_problem(max_price_age_days=90), catalog(CHEAP, LISTED))
    p = _problem(max_price_age_days=90, weak_price_policy="exclude")
    assert solve_problem(p, catalog(CHEAP, LISTED)).total_cost_usd == pytest.approx(3_720)


def test_a_price_older_than_the_problem_allows_is_named_with_its_age(catalog):
    # max 60 days: h1b is 83 days old at 2027-01-01; h1 left out (exclude), h1b too, so no
    # plan: the infeasibility names the requirement
    only_listed = catalog(LISTED)
    with pytest.raises(ProcureError, match="it is 83 days old at the start, over 60"):
        solve_problem(_problem(max_price_age_days=60), only_listed)
    with pytest.raises(InfeasibleError, match="older than max_price_age_days 60"):
        solve_problem(_problem(max_price_age_days=60, weak_price_policy="exclude"), only_listed)


def test_a_price_in_euros_is_planned_in_dollars_and_its_currency_shown(catalog):
    # h1e: EUR 3.00/h = $3.5283/h at 1.1761 < $4: it wins; $3.5283 x 744 = $2,625.06
    euro = _row("h1e", 3.0, "list", "2026-10-10", currency="EUR")
    plan = solve_problem(_problem(), catalog(CHEAP, euro))
    (line,) = plan.line_items
    assert line.offering == "acme/us-east/h1e" and line.price_currency == "EUR"
    assert plan.total_cost_usd == pytest.approx(3.0 * 1.1761 * JANUARY_H)
    assert plan.currency == "USD" and plan.in_currency is None


def test_totals_in_the_problems_currency(catalog):
    # currency EUR: $2,625.0576 / 1.1761 = EUR 2,232.00 (= EUR 3.00 x 744 h, as charged);
    # the budget $10,000 = EUR 8,502.68
    euro = _row("h1e", 3.0, "list", "2026-10-10", currency="EUR")
    plan = solve_problem(_problem(currency="eur", budget_usd=10_000), catalog(euro))
    view = plan.in_currency
    assert plan.currency == "EUR" and view.currency == "EUR"
    assert view.total_cost == pytest.approx(2_232.0)
    assert view.budget == pytest.approx(10_000 / 1.1761)
    assert (view.usd_per_unit, view.rate_date) == (1.1761, "2026-05-08")
    assert plan.total_cost_usd == pytest.approx(2_232.0 * 1.1761)  # the plan stays in USD


def test_a_problem_currency_without_a_rate_is_one_message(catalog):
    with pytest.raises(ProcureError) as err:
        solve_problem(_problem(currency="GBP"), catalog(CHEAP))
    assert err.value.field == "currency"
    assert "GBP has no exchange rate" in err.value.message
    assert "exchange_rates.csv" in err.value.fix


def test_an_edited_provenance_fails_the_verifier(catalog):
    from solver.trust.verify import verify_plan

    cat = catalog(CHEAP, LISTED)
    p = _problem()
    plan = solve_problem(p, cat)
    forged = plan.model_copy(
        update={"line_items": [plan.line_items[0].model_copy(update={"price_confidence": "list"})]}
    )
    failed = [c for c in verify_plan(forged, p, cat) if not c.ok]
    assert [c.name for c in failed] == ["price provenance as in the catalog"]


def test_cli_refuses_with_exit_2_and_writes_the_fields_in_json(tmp_path):
    folder = write_catalog(tmp_path / "catalog", [CHEAP, LISTED])
    base = (
        "name: tiny\nhorizon_months: 1\nstart: 2027-01\nmodes: [on_demand]\nworkloads:\n"
        "  - kind: inference\n    name: chat\n    model: llama-3-8b\n    max_utilisation: 1\n"
        "    demand: {requests_per_s: 10}\n    prompt_tokens: 100\n    output_tokens: 100\n"
        "    ttft_slo: 1 s\n    tpot_slo: 50 ms\n"
        "    traffic_mix: [{prompt_tokens: 100, output_tokens: 100, share: 1.0}]\n"
        "    measured_throughput_rps: {h100-sxm: [10.0]}\n"
    )
    runner = CliRunner()
    path = tmp_path / "p.yaml"
    path.write_text(base + "min_price_confidence: list\n")
    refused = runner.invoke(app, ["solve", str(path), "--catalog", str(folder)])
    assert refused.exit_code == 2
    assert "acme/us-east/h1 on_demand: confidence unverified is below list" in refused.output
    path.write_text(base)
    solved = runner.invoke(app, ["solve", str(path), "--catalog", str(folder), "--format", "json"])
    line = json.loads(solved.output)["line_items"][0]
    assert {k: line[k] for k in ("price_date", "price_confidence", "price_source")} == {
        "price_date": "unknown",
        "price_confidence": "unverified",
        "price_source": "test",
    }
    table = runner.invoke(app, ["solve", str(path), "--catalog", str(folder)]).output
    assert "unver. ?" in table  # the plan table's price cell: confidence and date
    assert "prices the plan rests on, by confidence: unverified $2,976 (100%)" in table


def test_a_two_stage_plan_signing_a_weak_price_is_refused(catalog):
    # 12 months of 10 requests/s; h1r: on-demand $4/h (third_party), 1-year reserved $3/h
    # whose rate is unverified. The reservation ($3 x 8,760 h = $26,280 < on-demand
    # $35,040 in both scenarios) is signed now, so under min_price_confidence third_party
    # the two-stage plan is refused, the reservation named.
    from solver.analyses.stochastic import solve_stochastic

    row = {
        **_row("h1r", 4.0, "third_party", "2026-10-10"),
        "reserved_1y_usd_per_hour": 3.0,
        "reserved_price_date": "unknown",
        "reserved_price_confidence": "unverified",
        "reserved_source": "a percentage off on-demand",
    }
    scenarios = {
        "scenarios": [
            {"name": "low", "probability": 0.5, "prices": [{"factor": 0.9}]},
            {"name": "high", "probability": 0.5, "prices": [{"factor": 1.1}]},
        ]
    }
    p = problem(
        [serve(10.0)],
        horizon_months=12,
        modes=["on_demand", "reserved_1y"],
        uncertainty=scenarios,
        min_price_confidence="third_party",
    )
    with pytest.raises(ProcureError, match="acme/us-east/h1r reserved_1y: confidence unverified"):
        solve_stochastic(p, catalog(row))
