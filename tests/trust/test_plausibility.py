"""Implausible values get a warning on the plan (issue 34).

Before issue 34 a chat service with ``tpot_slo: 2 s`` (seconds per token) or a growth
factor of 150x was planned without a word. The bounds (solver/trust/plausibility.py,
catalogs/SOURCES.md "Plausibility bounds"): tpot_slo above 1 s, ttft_slo above 60 s,
demand_by_period above 10x.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import CHAT_WORKLOAD, H1, offering, problem, serve, write_catalog
from solver.cli import app
from solver.inputs.problem import parse_problem
from solver.solve import solve_problem
from solver.trust.plausibility import implausible_values

runner = CliRunner()


def test_seconds_per_token_on_a_chat_service_is_warned(tiny_catalog):
    plan = solve_problem(problem([serve(25, tpot_slo="2 s")]), tiny_catalog([H1]))
    [w] = plan.warnings
    assert w.kind == "implausible_value"
    assert w.field == "workloads[0] (chat).tpot_slo"
    assert "2 s per output token" in w.detail
    # the plan is still solved as written: 25 req/s on 3 H1 at $4/h for 730 h = $8,760
    assert plan.total_cost_usd == pytest.approx(3 * 4.0 * 730, rel=1e-9)


@pytest.mark.parametrize(
    "tpot,ttft,warned",
    [
        ("50 ms", "1 s", []),  # a chat service as published (MLPerf: 200 ms, 2 s)
        ("1 s", "60 s", []),  # at the bounds: not above them
        ("1.5 s", "1 s", ["tpot_slo"]),
        ("50 ms", "2 min", ["ttft_slo"]),
    ],
)
def test_slo_bounds(tpot, ttft, warned):
    p = problem([serve(25, tpot_slo=tpot, ttft_slo=ttft)])
    assert [w.field.rsplit(".", 1)[1] for w in implausible_values(p)] == warned


def _grown(factor: float):
    return parse_problem(
        {
            "name": "growth",
            "horizon_months": 2,
            "periods": [{"name": "m1", "months": 1}, {"name": "m2", "months": 1}],
            "modes": ["on_demand"],
            "workloads": [serve(1, demand_by_period={"m2": factor})],
        }
    )


@pytest.mark.parametrize("factor,warned", [(1.5, False), (10, False), (150, True)])
def test_growth_above_ten_times_is_warned(factor, warned):
    # 150x: probably 1.5 or 150 %; 10x is the bound itself (not above it)
    found = implausible_values(_grown(factor))
    assert bool(found) == warned
    if warned:
        assert found[0].field == "workloads[0] (chat).demand_by_period.m2"
        assert "150x" in found[0].detail and "1.5" in found[0].detail


def test_the_warning_is_in_the_plan_json_and_the_text(tmp_path):
    cat = write_catalog(tmp_path / "cat", [offering("h1", "h100-sxm", 1, 4.0)])
    prob = tmp_path / "p.yaml"
    text = "name: cli\nhorizon_months: 1\nmodes: [on_demand]\nworkloads:\n" + CHAT_WORKLOAD
    prob.write_text(text.replace("tpot_slo: 50 ms", "tpot_slo: 3 s"))
    out = runner.invoke(app, ["solve", str(prob), "--catalog", str(cat), "--format", "json"])
    assert out.exit_code == 0, out.output
    [w] = json.loads(out.stdout)["warnings"]
    assert w["kind"] == "implausible_value" and w["field"].endswith(".tpot_slo")
    out = runner.invoke(app, ["solve", str(prob), "--catalog", str(cat)])
    assert out.exit_code == 0, out.output
    assert "WARNING (implausible_value, workloads[0] (chat).tpot_slo)" in out.stdout
