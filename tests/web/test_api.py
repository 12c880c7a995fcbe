"""The workspace through its HTTP API (FastAPI's TestClient): the seed stored and solved
as a job, the same inputs answered by the stored plan, a budget variant and a price
variant compared, bad input refused with the CLI's message and nothing stored, orders and
FOCUS downloads, the catalog filtered as ``procure catalog list`` filters it."""

from __future__ import annotations

import html
import io
import re

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from typer.testing import CliRunner

from solver.web.app import create_app
from solver.web.store import Job, PlanRecord, ProblemRecord, Variant
from tests.web.conftest import (
    SEED_GUARDED_USD,
    SEED_TOTAL_USD,
    SEED_YAML,
    job_id_of,
    sign_in,
    wait_for_job,
)


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    """The seed stored (problem 1, variant 1 ``base``) and solved once (plan 1)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('ws') / 'workspace.db'}"
    app = create_app(url)
    with TestClient(app) as client:
        sign_in(client, app, "infra", "infra")
        added = client.post("/problems", data={"yaml_text": SEED_YAML}, follow_redirects=False)
        assert added.status_code == 303 and added.headers["location"] == "/problems/1"
        job = wait_for_job(
            client, job_id_of(client.post("/variants/1/solve", follow_redirects=False))
        )
        assert job["status"] == "done", job
        yield client, app, job["plan_id"]


def _count(app, model) -> int:
    with app.state.store.sessions() as session:
        return session.scalar(select(func.count()).select_from(model))


def _messages(page: str, element_id: str) -> list[str]:
    found = re.findall(rf'id="{element_id}">(.*?)</pre>', page, re.S)
    return [html.unescape(m) for m in found]


def test_health_answers_200(ws):
    client, _, _ = ws
    assert client.get("/health").status_code == 200
    assert client.get("/health").json() == {"status": "ok"}


def test_the_seed_solved_as_a_job_is_stored_verified(ws):
    client, app, plan_id = ws
    plan = client.get(f"/api/plans/{plan_id}").json()
    # the seed's optimum (issues 12, 28 and 46): $363,684.86 (autoscaled, guarded)
    assert plan["total_cost_usd"] == pytest.approx(SEED_TOTAL_USD, abs=0.01)
    assert plan["verified"] is True
    with app.state.store.sessions() as session:
        record = session.get(PlanRecord, plan_id)
        assert record.verified and record.solver == plan["solver"]
        assert record.catalog_sha256 == plan["inputs"]["catalog_sha256"]
        assert record.problem_sha256 == plan["inputs"]["problem_sha256"]
        assert len(record.inputs_digest) == 64
    page = client.get(f"/plans/{plan_id}").text
    # finance first: the all-in total (all in by default: compute $370,028.54 + storage
    # $3,462.70 + egress $36.05 (Seeweb's lines at the $0.09/GB reference, tokens served
    # cheapest egress first) + staff $10,327.80 = $383,855.08,
    # tests/plan/test_default_costs.py) with compute beside it,
    # the $2M budget and its headroom on the all in, which the budget holds:
    # 2,000,000 - 383,855.08 = 1,616,144.92
    assert plan["all_in_cost_usd"] == pytest.approx(383_855.08, abs=0.01)
    assert page.index('id="all-in">$383,855') < page.index('id="total">$370,029')
    assert page.index('id="total">$370,029') < page.index("Deployments per workload")
    assert 'id="budget">$2,000,000' in page and 'id="headroom">$1,616,145' in page
    assert 'id="cashflow-data"' in page and "/static/chart.umd.min.js" in page
    # the lists show the all in too, compute beside it: the home page's stored plans and
    # the problem page's variants ($383,855.08 all in, $370,028.54 compute)
    home = client.get("/").text
    assert f'id="all-in-{plan_id}">$383,855' in home
    row = home[home.index(f'id="all-in-{plan_id}"') :]
    assert row.index("$383,855") < row.index('class="compute">$370,029')
    problem_page = client.get("/problems/1").text
    assert f'id="all-in-{plan_id}">$383,855' in problem_page
    assert "all in</span> (compute $370,029" in problem_page


def test_the_same_inputs_return_the_stored_plan_at_once(ws):
    client, app, plan_id = ws
    plans = _count(app, PlanRecord)
    again = client.post("/variants/1/solve", follow_redirects=False)
    # no solve: straight to the plan stored for the same digest, and no new plan row
    assert again.status_code == 303 and again.headers["location"] == f"/plans/{plan_id}"
    assert _count(app, PlanRecord) == plans
    with app.state.store.sessions() as session:
        last = session.scalars(select(Job).order_by(Job.id.desc())).first()
        assert (last.status, last.plan_id) == ("done", plan_id)


def test_malformed_yaml_gets_the_cli_message_and_nothing_is_stored(ws, tmp_path, monkeypatch):
    client, app, _ = ws
    bad = SEED_YAML.replace("horizon_months: 36", "horizon_months: [36")
    before = _count(app, ProblemRecord)
    page = client.post("/problems", data={"yaml_text": bad})
    assert page.status_code == 400
    assert _count(app, ProblemRecord) == before
    # the same text as a file named problem.yaml, given to `procure solve`
    from solver.cli import app as cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "problem.yaml").write_text(bad)
    done = CliRunner().invoke(cli, ["solve", "problem.yaml"])
    assert done.exit_code == 2
    cli_message = done.output.strip().removeprefix("error: ")
    assert _messages(page.text, "yaml-error") == [cli_message]
    assert cli_message.startswith("problem.yaml: line ")  # the line of the fault
    # the editor keeps the text pasted, beside the message
    assert html.escape(bad, quote=False)[:200] in page.text


def test_an_invalid_field_is_shown_beside_it_and_no_variant_is_stored(ws):
    client, app, _ = ws
    before = _count(app, Variant)
    page = client.post("/problems/1/variants", data={"name": "negative", "budget_usd": "-5"})
    assert page.status_code == 400
    # the problem reader's own message for budget_usd (gt=0), beside the budget field
    beside = re.findall(r'data-field="budget_usd">(.*?)</pre>', page.text, re.S)
    assert len(beside) == 1 and "budget_usd: Input should be greater than 0" in beside[0]
    words = client.post("/problems/1/variants", data={"name": "words", "budget_usd": "lots"})
    assert words.status_code == 400 and "&#39;lots&#39; is not a number" in words.text
    assert _count(app, Variant) == before


def _solve_variant(client, name: str, data: dict) -> int:
    made = client.post("/problems/1/variants", data={"name": name, **data}, follow_redirects=False)
    assert made.status_code == 303, made.text[:2000]
    page = client.get("/problems/1").text
    variant_id = int(
        re.findall(
            rf'action="/variants/(\d+)/solve"><button type="submit" class="solve" '
            rf'data-variant="{name}"',
            page,
        )[0]
    )
    job = wait_for_job(
        client, job_id_of(client.post(f"/variants/{variant_id}/solve", follow_redirects=False))
    )
    assert job["status"] == "done", job
    return job["plan_id"]


def test_a_budget_variant_is_a_new_plan_with_the_same_decisions(ws):
    client, _, base = ws
    plan_id = _solve_variant(client, "budget-1.5m", {"budget_usd": "1,500,000"})
    assert plan_id != base  # another problem digest, another stored plan
    plan = client.get(f"/api/plans/{plan_id}").json()
    assert plan["inputs"]["problem"]["budget_usd"] == 1_500_000
    # $1.5M is far above the $363,685 optimum: the budget does not bind, the plan is the same
    assert plan["total_cost_usd"] == pytest.approx(SEED_TOTAL_USD, abs=0.01)
    page = client.get(f"/compare?a={base}&b={plan_id}").text
    assert 'id="total-change">$0<' in page
    assert 'id="price-effect">$0<' in page and 'id="plan-effect">$0<' in page
    assert "Line items: 0 changed" in page


def test_a_price_variant_splits_the_change_into_price_and_plan_effects(ws):
    client, _, base = ws
    old = client.get(f"/api/plans/{base}").json()
    rented = [i for i in old["line_items"] if i["mode"] in ("on_demand", "spot")]
    provider = max(
        {i["provider"] for i in rented},
        key=lambda p: sum(i["cost_usd"] for i in rented if i["provider"] == p),
    )
    plan_id = _solve_variant(client, "dearer", {"price_multipliers": f"provider={provider} 1.25"})
    new = client.get(f"/api/plans/{plan_id}").json()
    page = client.get(f"/compare?a={base}&b={plan_id}").text
    # price effect = the old decisions at +25% on that provider's rented prices - the old
    # plan = 0.25 x what the old plan pays that provider for on-demand and spot units
    expected_price = 0.25 * sum(i["cost_usd"] for i in rented if i["provider"] == provider)
    shown = lambda v: f"{'-' if v < 0 else ''}${abs(v):,.0f}"  # noqa: E731
    assert f'id="price-effect">{shown(expected_price)}<' in page
    # the two effects sum to the change of totals (split_change)
    change = new["total_cost_usd"] - old["total_cost_usd"]
    assert f'id="total-change">{shown(change)}<' in page
    plan_effect = change - expected_price
    assert plan_effect <= 1.0  # a re-solve never costs more than the old decisions re-priced
    assert f'id="plan-effect">{shown(plan_effect)}<' in page


def test_orders_and_focus_download(ws):
    client, _, plan_id = ws
    csv = client.get(f"/plans/{plan_id}/orders.csv")
    assert csv.status_code == 200 and "attachment" in csv.headers["content-disposition"]
    from openpyxl import load_workbook

    xlsx = client.get(f"/plans/{plan_id}/orders.xlsx")
    book = load_workbook(io.BytesIO(xlsx.content))
    assert book.sheetnames[0] == "summary"
    import pandas as pd

    from solver.outputs.focus import validate_focus

    focus = pd.read_csv(io.StringIO(client.get(f"/plans/{plan_id}/focus.csv").text))
    assert validate_focus(focus) == []
    # the FOCUS rows carry the whole plan: their effective cost in USD sums to its all-in
    # total (compute $370,028.54 + storage $3,462.70 + egress $36.05 + staff $10,327.80 =
    # $383,855.08, as in test_the_seed_solved_as_a_job_is_stored_verified). The seed's
    # Seeweb H200 line is billed in EUR (BillingCurrency, solver/outputs/focus_currency.py),
    # so BilledCost mixes currencies and the USD column x_EffectiveCostUsd adds up
    assert "EUR" in set(focus["BillingCurrency"])
    assert focus["x_EffectiveCostUsd"].sum() == pytest.approx(383_855.08, abs=0.01)


def test_the_catalog_filters_as_the_cli_does(ws):
    client, _, _ = ws
    from solver.inputs.catalog import load_catalog, offerings_view

    frame, _ = offerings_view(load_catalog(), accelerator="H100", sort="price")
    page = client.get("/catalog?table=offerings&accelerator=H100&sort=price").text
    assert f'id="catalog-count">{len(frame)} rows' in page
    bad = client.get("/catalog?table=offerings&mode=owned")
    assert bad.status_code == 400 and "unknown mode" in bad.text


def test_unknown_things_are_404(ws):
    client, _, _ = ws
    assert client.get("/plans/999").status_code == 404
    assert client.get("/api/jobs/999").json() == {"error": "no job 999"}


def test_what_moves_the_plan_runs_as_a_job_and_is_stored(ws):
    client, app, plan_id = ws
    page = client.get(f"/plans/{plan_id}").text
    assert 'id="sensitivity-form"' in page  # not analysed yet: a button
    # break_even -1: shadow prices only (the break-even search is the slow part)
    queued = client.post(
        f"/plans/{plan_id}/sensitivity", data={"break_even": "-1"}, follow_redirects=False
    )
    job = wait_for_job(client, job_id_of(queued))
    assert job["status"] == "done", job
    from solver.analyses.sensitivity import SensitivityReport
    from solver.web.store import Analysis

    with app.state.store.sessions() as session:
        (stored,) = session.scalars(select(Analysis).where(Analysis.plan_id == plan_id)).all()
        report = SensitivityReport.model_validate_json(stored.result_json)
    # the plan is the one analysed: its objective is the seed's optimum, at guarded prices
    # under the default guard
    assert report.objective == pytest.approx(SEED_GUARDED_USD, rel=1e-4)
    # the $2M budget does not bind at $363,685: one more dollar of it is worth nothing
    budget = [d for d in report.duals if d.family == "budget"]
    assert all(abs(d.d_objective_d_rhs) < 1e-9 for d in budget)
    worth = [d for d in report.duals if abs(d.d_objective_d_rhs) > 1e-9]
    assert worth  # serving demand binds: one more token/s costs money
    page = client.get(f"/plans/{plan_id}").text
    assert 'id="sensitivity-form"' not in page and 'id="duals"' in page
    from solver.outputs.report import dual_sentence
    from solver.outputs.sensitivity_views import shown_duals

    # the largest dual of what the plan uses is shown; none of a pool it does not use
    # (issue 49: the seed's largest are fleet rows of machines not in the plan)
    stored = client.get(f"/api/plans/{plan_id}").json()
    items = stored.get("plan", stored)["line_items"]
    used = {f"{i['offering']}#{i['mode']}" for i in items}
    top = shown_duals(report, used)[0]
    assert html.escape(dual_sentence(top), quote=True) in page
    # no dual of a pool it does not use is stored at all: those rows' duals are degenerate
    # (nothing of the plan is in them: duals.plan_moves), so none can be shown
    assert not [d for d in worth if d.pool and d.pool not in used]
    # asked again: the stored analysis, no new job run
    again = client.post(
        f"/plans/{plan_id}/sensitivity", data={"break_even": "-1"}, follow_redirects=False
    )
    assert again.headers["location"] == f"/plans/{plan_id}"
    bad = client.post(f"/plans/{plan_id}/sensitivity", data={"break_even": "-7"})
    assert bad.status_code == 400


def test_editing_the_yaml_badly_keeps_the_problem(ws):
    client, app, _ = ws
    with app.state.store.sessions() as session:
        before = session.get(ProblemRecord, 1).yaml_text
    bad = before.replace("budget_usd: 2000000", "budget_usd: -1")
    page = client.post("/problems/1/yaml", data={"yaml_text": bad})
    assert page.status_code == 400
    # the reader's message for budget_usd (gt=0), named as the editor's file
    (message,) = _messages(page.text, "yaml-error")
    assert message.startswith("problem.yaml: budget_usd: Input should be greater than 0")
    with app.state.store.sessions() as session:
        assert session.get(ProblemRecord, 1).yaml_text == before


def test_a_bad_price_multiplier_is_named_beside_its_field(ws):
    client, app, _ = ws
    before = _count(app, Variant)
    for text, words in (
        ("accelerator=H900 1.1", "H900"),  # the catalog's resolver names what it knows
        ("provider=aws lots", "'lots' is not a number"),
        ("aws 1.1", "is not understood"),
    ):
        page = client.post(
            "/problems/1/variants", data={"name": "prices", "price_multipliers": text}
        )
        assert page.status_code == 400
        beside = re.findall(r'data-field="price_multipliers">(.*?)</pre>', page.text, re.S)
        assert len(beside) == 1 and words in html.unescape(beside[0]), beside
    assert _count(app, Variant) == before


def test_demand_changes_must_keep_demand_positive(ws):
    client, app, _ = ws
    before = _count(app, Variant)
    for field, value, words in (
        ("demand_factor", "0", "0 is not above 0"),  # no demand at all is not a variant
        ("growth_per_period", "-1", "-1 is not above -1"),  # -100% per period: none left
    ):
        page = client.post("/problems/1/variants", data={"name": "d", field: value})
        beside = re.findall(rf'data-field="{field}">(.*?)</pre>', page.text, re.S)
        assert page.status_code == 400 and len(beside) == 1 and words in beside[0]
    assert _count(app, Variant) == before
