"""The carbon frontier and the two-stage plan as workspace jobs (issue 30): what each job
stores is what the analysis function gives on the same input (the CLI's own functions:
``procure report``'s frontier, ``procure solve``'s two-stage plan), on tiny problems whose
numbers are worked by hand, so each test takes seconds. The frontier's runs on SQLite and
on PostgreSQL when ``PROCURE_TEST_POSTGRES_URL`` is set.

- Frontier: one H100 serves 10 requests/s; us-east at $4/h (400 g/kWh), eu-north at $5/h
  (40 g/kWh); 200 requests/s for one month (730 h) = 20 units: the min-cost end is 20 in
  us-east = 20 x 4 x 730 = $58,400, the min-carbon end 20 in eu-north = $73,000 (as in
  tests/analyses/test_sensitivity.py::test_carbon_frontier_is_monotone).
- Two-stage: tests/analyses/test_stochastic.py's reserve-or-rent problem, worked there:
  reserve 1 unit now, expected cost $5.00/h x 8,760 h = $43,800, VSS $4,380.
"""

from __future__ import annotations

import json
from html import unescape

import pytest
import yaml
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from conftest import offering, serve, write_catalog
from solver.web.app import create_app
from solver.web.store import Analysis, Job
from tests.web.conftest import fresh_url, job_id_of, sign_in, wait_for_job

US = offering("h1", "h100-sxm", 1, 4.0)
EU = offering("h1eu", "h100-sxm", 1, 5.0, region="eu-north")
FRONTIER_PROBLEM = {
    "name": "tiny-frontier",
    "horizon_months": 1,
    "modes": ["on_demand"],
    "workloads": [serve(200)],
}
HOURS_1Y = 8_760.0
TWO_STAGE_PROBLEM = {
    "name": "reserve-or-rent",
    "horizon_months": 12,
    "modes": ["on_demand", "reserved_1y"],
    "load_blocks": [{"name": "all-day", "hours_per_day": 24, "demand_factor": 1}],
    "workloads": [serve(20)],
    "uncertainty": {
        "scenarios": [
            {
                "name": "low",
                "probability": 0.5,
                "prices": [{"mode": "on_demand", "factor": 0.375}],
                "demand": [{"factor": 0.5}],
            },
            {
                "name": "high",
                "probability": 0.5,
                "prices": [{"mode": "on_demand", "factor": 0.75}],
                "demand": [{"factor": 1.5}],
            },
        ]
    },
}


def _solved(client, data: dict) -> int:
    """Store the problem, solve its base variant as a job; the plan's id."""
    assert client.post("/problems", data={"yaml_text": yaml.safe_dump(data)}).status_code == 200
    job = wait_for_job(client, job_id_of(client.post("/variants/1/solve", follow_redirects=False)))
    assert job["status"] == "done", job
    return job["plan_id"]


def _latest_job(app, kind: str) -> int:
    with app.state.store.sessions() as session:
        return session.scalars(
            select(Job.id).where(Job.kind == kind).order_by(Job.id.desc())
        ).first()


def _count(app, model) -> int:
    with app.state.store.sessions() as session:
        return session.scalar(select(func.count()).select_from(model))


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path_factory) -> str:
    return fresh_url(request.param, tmp_path_factory)


def test_the_frontier_job_stores_what_carbon_frontier_gives(tmp_path, url):
    from solver.analyses.sensitivity import carbon_frontier
    from solver.core.compile import compile_problem
    from solver.inputs.catalog import load_catalog
    from solver.inputs.problem import parse_problem
    from solver.units import WARM_SOLVER

    catalog_dir = write_catalog(tmp_path / "cat", [US, EU])
    app = create_app(url, catalog_dir=str(catalog_dir))
    with TestClient(app) as client:
        sign_in(client, app, "infra", "infra")
        plan_id = _solved(client, FRONTIER_PROBLEM)
        assert f'href="/plans/{plan_id}/frontier"' in client.get(f"/plans/{plan_id}").text
        # a bad number of points: the message, and no job
        bad = client.post(f"/plans/{plan_id}/frontier", data={"points": "1"})
        assert bad.status_code == 400
        assert "frontier points 1 is not a whole number from 2 to 40" in unescape(bad.text)
        assert _latest_job(app, "frontier") is None
        asked = client.post(
            f"/plans/{plan_id}/frontier", data={"points": "3"}, follow_redirects=False
        )
        assert asked.headers["location"] == f"/plans/{plan_id}/frontier"
        job = wait_for_job(client, _latest_job(app, "frontier"))
        assert job["status"] == "done" and job["options"] == {"points": 3}, job
        [stored] = client.get(f"/api/plans/{plan_id}/analyses?kind=frontier").json()
        page = client.get(f"/plans/{plan_id}/frontier").text
        # the same request again: the stored frontier at once, nothing computed or stored
        client.post(f"/plans/{plan_id}/frontier", data={"points": "3"})
        again = client.get(f"/api/jobs/{_latest_job(app, 'frontier')}").json()
        assert again["stage"] == "analysed before: stored" and _count(app, Analysis) == 1
    compiled = compile_problem(
        parse_problem(FRONTIER_PROBLEM), load_catalog(catalog_dir), prune_dominated=False
    )
    expected = carbon_frontier(compiled, points=3, solver=WARM_SOLVER)
    found = stored["result"]["points"]
    assert len(found) == len(expected) == 3
    for f, e in zip(found, expected, strict=True):
        assert f["status"] == e.status and f["used"] == e.used
        assert f["value"] == pytest.approx(e.value, rel=1e-9)
        assert f["total_cost_usd"] == pytest.approx(e.total_cost_usd, rel=1e-9)
        assert f["total_co2e_t"] == pytest.approx(e.total_co2e_t, rel=1e-9)
    # the ends, by hand (module docstring): the min-carbon cap first, the min-cost last
    assert found[0]["total_cost_usd"] == pytest.approx(73_000, rel=1e-6)
    assert found[-1]["total_cost_usd"] == pytest.approx(58_400, rel=1e-6)
    # the page: the table in the report's words and the chart's data, 3 points
    assert 'id="frontier-chart"' in page and "$73,000" in page and "$58,400" in page
    chart = json.loads(page.split('id="frontier-data">')[1].split("</script>")[0])
    assert chart["cost_usd"] == pytest.approx([p["total_cost_usd"] for p in found])


def test_an_analysis_job_cancelled_stores_nothing_and_runs_again(tmp_path):
    catalog_dir = write_catalog(tmp_path / "cat", [US, EU])
    app = create_app(f"sqlite:///{tmp_path / 'w.db'}", catalog_dir=str(catalog_dir))
    with TestClient(app) as client:
        sign_in(client, app, "infra", "infra")
        plan_id = _solved(client, FRONTIER_PROBLEM)
        runner = app.state.runner
        job = runner.submit_analysis(plan_id, "frontier", {"points": 2})
        assert runner.cancel(job.id) is True
        assert wait_for_job(client, job.id)["status"] == "cancelled"
        page = client.get(f"/plans/{plan_id}/frontier").text
        assert 'id="rerun-form" >' in page or 'id="rerun-form">' in page  # shown, not hidden
        rerun = client.post(f"/jobs/{job.id}/rerun", follow_redirects=False)
        again = wait_for_job(client, job_id_of(rerun))
        assert again["status"] == "done" and again["rerun_of"] == job.id
        assert again["kind"] == "frontier" and again["options"] == {"points": 2}
        stored = client.get(f"/api/plans/{plan_id}/analyses?kind=frontier").json()
        # only the re-run stored a frontier: its 2 points are the two ends (docstring)
        assert [a["job_id"] for a in stored] == [again["id"]]
        costs = [p["total_cost_usd"] for p in stored[0]["result"]["points"]]
        assert costs == pytest.approx([73_000, 58_400], rel=1e-6)


def _summary(sp: dict) -> dict:
    """The numbers of a two-stage plan that the CLI prints (``seconds`` left out)."""
    out = {
        "expected_cost_usd": sp["expected_cost_usd"],
        "vss": sp["value_of_stochastic_solution_usd"],
        "evpi": sp["expected_value_of_perfect_information_usd"],
        "worst_case_usd": sp["worst_case_usd"],
        "reserved": sum(i["units"] for i in sp["commitments"] if i["item"] == "reservation"),
    }
    out.update({f"scenario {o['name']}": o["total_cost_usd"] for o in sp["scenarios"]})
    return out


def test_the_two_stage_job_stores_what_solve_stochastic_gives(tmp_path):
    from solver.analyses.stochastic import solve_stochastic
    from solver.inputs.catalog import load_catalog
    from solver.inputs.problem import parse_problem

    catalog_dir = write_catalog(tmp_path / "cat", [offering("h1", "h100-sxm", 1, 4.0, r1=2.0)])
    app = create_app(f"sqlite:///{tmp_path / 'w.db'}", catalog_dir=str(catalog_dir))
    with TestClient(app) as client:
        sign_in(client, app, "infra", "infra")
        plan_id = _solved(client, TWO_STAGE_PROBLEM)
        assert 'id="two-stage-form"' in client.get(f"/plans/{plan_id}/two-stage").text
        bad = client.post(f"/plans/{plan_id}/two-stage", data={"method": "guess"})
        assert bad.status_code == 400 and "two-stage method 'guess' is unknown" in unescape(
            bad.text
        )
        client.post(f"/plans/{plan_id}/two-stage", data={"method": "extensive"})
        job = wait_for_job(client, _latest_job(app, "two_stage"))
        assert job["status"] == "done", job["error"]
        [stored] = client.get(f"/api/plans/{plan_id}/analyses?kind=two_stage").json()
        page = client.get(f"/plans/{plan_id}/two-stage").text
    expected = solve_stochastic(
        parse_problem(TWO_STAGE_PROBLEM), load_catalog(catalog_dir), method="extensive"
    )
    found = _summary(stored["result"])
    assert found == pytest.approx(_summary(expected.model_dump(mode="json")), rel=1e-9)
    # by hand (module docstring): reserve 1, $43,800 expected, VSS $4,380
    assert found["reserved"] == 1
    assert found["expected_cost_usd"] == pytest.approx(5.00 * HOURS_1Y)
    assert found["vss"] == pytest.approx(0.50 * HOURS_1Y)
    assert 'id="two-stage-chart"' in page and "$43,800" in page


def test_a_two_stage_plan_of_a_problem_without_uncertainty_is_refused(tmp_path):
    catalog_dir = write_catalog(tmp_path / "cat", [US, EU])
    app = create_app(f"sqlite:///{tmp_path / 'w.db'}", catalog_dir=str(catalog_dir))
    with TestClient(app) as client:
        sign_in(client, app, "infra", "infra")
        plan_id = _solved(client, FRONTIER_PROBLEM)
        page = client.get(f"/plans/{plan_id}/two-stage").text
        assert 'id="no-uncertainty"' in page and 'id="two-stage-form"' not in page
        refused = client.post(f"/plans/{plan_id}/two-stage", data={"method": "auto"})
        assert refused.status_code == 400
        assert f"plan {plan_id}'s problem has no uncertainty: section" in unescape(refused.text)
        assert _latest_job(app, "two_stage") is None
