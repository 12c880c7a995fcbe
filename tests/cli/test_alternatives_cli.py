"""``procure alternatives`` on the hand-worked case of tests/analyses/test_alternatives.py:
acme's H100 at $4.00/h is the optimum ($2,920 over 730 h), beta's at $4.05/h ($2,956.50,
+1.25%) the only other set of providers within 2%; excluding acme costs $36.50."""

from __future__ import annotations

import json

import yaml
from typer.testing import CliRunner

from conftest import serve, write_catalog
from solver.cli import app
from tests.analyses.test_alternatives import ACME, BETA, GAMMA, REGIONS

runner = CliRunner()


def _files(tmp_path):
    catalog = write_catalog(tmp_path / "catalog", [ACME, BETA, GAMMA], regions=REGIONS)
    problem = tmp_path / "p.yaml"
    data = {"name": "tiny", "horizon_months": 1, "modes": ["on_demand"], "workloads": [serve(10)]}
    problem.write_text(yaml.safe_dump(data))
    return problem, catalog


def test_table_shows_the_optimum_and_its_alternative_side_by_side(tmp_path):
    problem, catalog = _files(tmp_path)
    args = ["alternatives", str(problem), "--catalog", str(catalog), "--n", "2", "--quiet"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "1 of 2 alternative(s) within 2.0% of the optimum ($2,978.41 at most)" in result.output
    assert "+$36 (+1.25%)" in result.output  # $2,956.50 - $2,920.00
    assert "no other plan within 2.0% of the optimum uses a different set of providers" in (
        result.output
    )


def test_json_carries_each_plan_verified(tmp_path):
    problem, catalog = _files(tmp_path)
    out = tmp_path / "alts.json"
    args = ["alternatives", str(problem), "--catalog", str(catalog), "--format", "json"]
    result = runner.invoke(app, [*args, "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["optimum"]["groups"] == ["acme"]
    [alt] = data["alternatives"]
    assert alt["groups"] == ["beta"] and alt["plan"]["verified"] is True
    assert alt["delta_usd"] == 36.5  # (4.05 - 4.00) x 730


def test_preferences_table(tmp_path):
    problem, catalog = _files(tmp_path)
    args = ["alternatives", str(problem), "--catalog", str(catalog), "--preferences"]
    result = runner.invoke(app, [*args, "--format", "json", "--quiet"])
    assert result.exit_code == 0, result.output
    rows = {(r["kind"], r["group"]): r for r in json.loads(result.output)["preferences"]}
    assert rows[("providers", "acme")]["action"] == "exclude"
    assert rows[("providers", "acme")]["delta_usd"] == 36.5
    assert rows[("commitments", "on_demand")]["status"] == "infeasible"


def test_bad_options_say_which_and_exit_2(tmp_path):
    problem, catalog = _files(tmp_path)
    base = ["alternatives", str(problem), "--catalog", str(catalog)]
    for extra, field in (
        (["--slack", "0"], "--slack"),
        (["--n", "0"], "--n"),
        (["--differ-by", "sites"], "--differ-by"),
        (["--time-limit", "-1"], "--time-limit"),
    ):
        result = runner.invoke(app, [*base, *extra])
        assert result.exit_code == 2, (extra, result.output)
        assert f"error: {field}" in result.output, result.output
        assert "Traceback" not in result.output
