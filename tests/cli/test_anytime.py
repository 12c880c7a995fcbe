"""Anytime answers (issue 34, item 3): a time limit that runs out after the solver has a
plan gives that plan, verified, with its proven gap and "stopped at the time limit"
(plan JSON ``stopped_at_time_limit``, one line on stderr, exit 0: a verified plan is
shown); and the limit counts from the command's start, so the solver is not given again
what reading the inputs took.

The solver's stop is simulated where HiGHS reports it (a kTimeLimit status with the
incumbent and a dual bound), so that the test does not depend on how fast the machine is:
the rest of the pipeline (plan, verifier, output) runs for real.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace

import pytest
from typer.testing import CliRunner

import solver.cli.common as common
from conftest import CHAT_WORKLOAD, offering, write_catalog
from solver.cli import app
from solver.core.backends import Termination
from solver.core.backends.highs_backend import HighsSession
from solver.errors import NoPlanError

runner = CliRunner()


@pytest.fixture
def setup(tmp_path):
    cat = write_catalog(tmp_path / "cat", [offering("h1", "h100-sxm", 1, 4.0)])
    prob = tmp_path / "p.yaml"
    prob.write_text(
        "name: cli\nhorizon_months: 1\nmodes: [on_demand]\nworkloads:\n" + CHAT_WORKLOAD
    )
    return cat, prob, tmp_path


def _stopped_at_the_limit(monkeypatch, seen: list) -> None:
    """Every MIP ends as HiGHS ends one stopped by its time limit: the incumbent, and a
    dual bound 3% below it."""
    solve = HighsSession.solve

    def stopped(self, options, start=None):
        seen.append(options.time_limit_s)
        r = solve(self, options, start)
        if not r.has_solution or not self.integer.any():
            return r
        return replace(
            r, termination=Termination.FEASIBLE, bound=0.97 * r.objective, gap=0.03,
            message="kTimeLimit",
        )  # fmt: skip

    monkeypatch.setattr(HighsSession, "solve", stopped)


def test_a_limit_that_runs_out_after_a_plan_gives_it_verified_with_its_gap(setup, monkeypatch):
    cat, prob, tmp = setup
    quiet = tmp / "optimal.json"
    args = ["solve", str(prob), "--catalog", str(cat), "--format", "json"]
    done = runner.invoke(app, [*args, "--out", str(quiet)])
    assert done.exit_code == 0, done.output
    optimal = json.loads(quiet.read_text())
    assert optimal["stopped_at_time_limit"] is False and optimal["status"] == "optimal"

    seen: list = []
    _stopped_at_the_limit(monkeypatch, seen)
    out_file = tmp / "plan.json"
    out = runner.invoke(app, [*args, "--time-limit", "60", "--out", str(out_file)])
    assert out.exit_code == 0, out.output  # README, "Exit codes": 0, a verified plan
    plan = json.loads(out_file.read_text())
    assert plan["stopped_at_time_limit"] is True
    assert plan["status"] == "feasible" and plan["verified"] is True
    # the bound is 0.97 x the plan's cost: gap (c - 0.97 c) / c = 3%
    assert plan["gap"] == pytest.approx(0.03)
    assert all(c["ok"] for c in plan["checks"])  # the independent verifier ran on it
    # the incumbent is the plan the solver had: the same one the quiet run proves optimal
    assert plan["total_cost_usd"] == pytest.approx(optimal["total_cost_usd"])
    assert "stopped at the time limit: --time-limit 60 s" in out.output
    assert "within 3.00% of the optimum (proven gap)" in out.output
    # the solver got the limit less what the command had spent and less the 10% kept
    # for the plan and the verifier: below 60 x 0.9 = 54 s
    assert seen and all(t is not None and t <= 54.0 for t in seen)


def test_the_limit_counts_from_the_start_of_the_command(monkeypatch):
    # 7 s already spent of a 10 s limit: 3 s are left for the solver phases
    monkeypatch.setattr(common, "_LIMIT_STARTED", time.perf_counter() - 7.0)
    assert common.time_left(10.0) == pytest.approx(3.0, abs=0.1)
    assert common.time_left(None) is None
    with pytest.raises(NoPlanError, match="ran out while reading the problem"):
        common.time_left(5.0)  # 7 s spent of 5: nothing left, one clear message


def test_no_limit_no_note(setup):
    cat, prob, _ = setup
    out = runner.invoke(app, ["solve", str(prob), "--catalog", str(cat)])
    assert out.exit_code == 0, out.output
    assert "stopped at the time limit" not in out.output


def _analysed(setup):
    from solver.inputs.catalog import load_catalog
    from solver.inputs.problem import load_problem
    from solver.solve import solve_for_analysis

    cat, prob, _ = setup
    return solve_for_analysis(load_problem(prob), load_catalog(cat))


def test_a_break_even_search_cut_by_its_deadline_names_the_pools_left_out(setup):
    from solver.analyses.sensitivity import sensitivity_report

    plan, solution = _analysed(setup)
    full = sensitivity_report(solution)
    searched = sorted({b.pool_id for b in full.break_even} | {p for b in full.break_even
                                                                 for p in b.same_as})  # fmt: skip
    assert searched and full.break_even_left_out == []
    # a deadline already past: no pool is started, so every pool the full search did is
    # left out, by name, and the note says so
    cut = sensitivity_report(solution, deadline=time.perf_counter() - 1.0)
    assert cut.break_even == [] and cut.break_even_left_out == searched
    assert f"0 pools done, {len(searched)} left out: {searched[0]}" in cut.break_even_tolerance


def test_a_report_cut_by_its_deadline_says_which_sections_it_left_out(setup):
    from solver.analyses.report_analysis import build_analysis
    from solver.outputs.report import analysis_json, report_html

    plan, solution = _analysed(setup)
    whole = build_analysis(plan, solution, frontier_points=2, scenarios=2)
    assert whole.cut_at_time_limit == [] and whole.demand_sweep
    assert "cut_at_time_limit" not in json.loads(analysis_json(whole))  # the file as before
    # the sections' deadline already past: none of the four is started, each is named in
    # the order the report runs them, and the sweeps are empty rather than partial
    cut = build_analysis(
        plan, solution, frontier_points=2, scenarios=2, sections_deadline=time.perf_counter() - 1
    )
    assert cut.cut_at_time_limit == [
        "carbon frontier", "budget sweep", "demand sweep", "price scenarios",
    ]  # fmt: skip
    assert cut.carbon_frontier == [] and cut.demand_sweep == [] and cut.scenario_share == {}
    assert cut.sensitivity.break_even  # the break-even search had no deadline: done
    assert json.loads(analysis_json(cut))["cut_at_time_limit"] == cut.cut_at_time_limit
    html = report_html(cut, b"")
    assert "Stopped at the time limit: left out, not started before its deadline: carbon " in html
