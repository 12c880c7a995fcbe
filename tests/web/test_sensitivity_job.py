"""The sensitivity job with break-even prices (slow: a minute or more of MIP re-solves):
its break-even prices, found on the workspace's Dask cluster, are those ``procure
sensitivity`` finds in this process. Run with ``python -m pytest -m slow tests/web``."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from conftest import ROOT
from solver.web.app import create_app
from tests.web.conftest import SEED_YAML, job_id_of, sign_in, wait_for_job


@pytest.mark.slow
def test_break_even_prices_match_the_cli(tmp_path):
    from solver.cli import app as cli

    app = create_app(f"sqlite:///{tmp_path / 'w.db'}")
    with TestClient(app) as client:
        sign_in(client, app, "infra", "infra")
        client.post("/problems", data={"yaml_text": SEED_YAML})
        plan = wait_for_job(
            client, job_id_of(client.post("/variants/1/solve", follow_redirects=False))
        )["plan_id"]
        asked = client.post(
            f"/plans/{plan}/sensitivity", data={"break_even": "0"}, follow_redirects=False
        )
        job = wait_for_job(client, job_id_of(asked), timeout_s=900)
        assert job["status"] == "done", job
        from sqlalchemy import select

        from solver.web.store import Analysis

        with app.state.store.sessions() as session:
            stored = json.loads(session.scalars(select(Analysis.result_json)).one())
    done = CliRunner().invoke(
        cli,
        ["sensitivity", str(ROOT / "problems" / "seed-2m-13b.yaml"), "--break-even", "0",
         "--workers", "1", "--format", "json", "--quiet"],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    expected = {b["pool_id"]: b["break_even_price"] for b in json.loads(done.output)["break_even"]}
    found = {b["pool_id"]: b["break_even_price"] for b in stored["break_even"]}
    assert found.keys() == expected.keys()
    for pool, price in expected.items():
        assert found[pool] == pytest.approx(price, rel=1e-6), pool
