"""Solving at the root (issue 14, solver/core/root.py): MIR cuts lift the full LP toward the
optimum and never past it, the support's plan is a plan, and reduced-cost fixing keeps
the optimum.

The instances are bench/generate.py's (the shipped catalog grown to 1,000 offerings, 10
to 20 seeded workloads over 3 to 6 monthly periods), small enough for the full MIP to be
solved beside as the reference; in each, the plan from the LP's support is not the
optimum, so the optimum must come through reduced-cost fixing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from generate import generated_problem, scaled_catalog  # noqa: E402

from solver.core import columns, root  # noqa: E402
from solver.core.backends import SolveOptions  # noqa: E402
from solver.core.compile import compile_problem  # noqa: E402
from solver.core.model import build_model  # noqa: E402
from solver.inputs.catalog import load_catalog  # noqa: E402
from solver.inputs.problem import load_problem  # noqa: E402
from solver.solve import solve_verified  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def case():
    """The generated case, its full LP relaxation (demand rows capped, as the root's is),
    its MIP optimum (full model, 1e-6 gap) and its root solve at the same gap."""
    # seed 7: with issue 33's Gaudi and Neuron figures seed 4's support plan is its optimum
    # (nothing left for reduced-cost fixing to do), so the case moved to seed 5; with issue
    # 47's chunked-prefill sizing seed 5's and seed 6's are too, so it moved to seed 7
    problem = generated_problem(10, 3, seed=7)
    catalog = scaled_catalog(1_000)
    compiled = compile_problem(problem, catalog)
    lp = columns._solve_lp(build_model(compiled, cap_demand_rows=True), None)
    assert not isinstance(lp, str), lp
    tight = SolveOptions(relative_gap=1e-6)
    best, _ = solve_verified(problem, catalog, solver="highspy", options=tight, method="full")
    at_root = solve_verified(problem, catalog, solver="highspy", options=tight, method="root")
    return lp.objective, best, at_root


def test_the_cuts_lift_the_lp_but_never_above_the_optimum(case):
    # the MIR cuts hold for every integer plan: the bound rises above the plain LP and
    # stays at or below the MIP optimum solved beside
    full_lp, best, (_, solution) = case
    report = solution.compiled.report.root
    assert report["lp_usd"] == pytest.approx(full_lp, rel=1e-7)  # the same LP relaxation
    assert report["cuts"] > 0 and report["cut_rounds"] >= 1
    assert report["bound_usd"] > full_lp * (1 + 1e-6)
    # the bound is on the objective: under the guard (the default) the guarded total
    assert report["bound_usd"] <= best.objective * (1 + 1e-9)


def test_reduced_cost_fixing_keeps_the_optimum(case):
    # the support's plan ($187,344.14 here) is 0.11% above the optimum ($187,144.12), so
    # step 4 fixes the columns whose reduced cost exceeds UB - LB: the MIP over the rest
    # must still reach the full MIP's optimum (to 1e-6), and its bound stay at or below it
    _, best, (plan, solution) = case
    report = solution.compiled.report.root
    # (the figures the root reports are the objective's: at guarded prices, the default)
    assert report["support_plan_usd"] > best.objective * (1 + 1e-4)
    assert report["fixed_by_reduced_cost"] > 0
    assert plan.objective == pytest.approx(best.objective, rel=1e-6)
    assert report["final_bound_usd"] <= best.objective * (1 + 1e-9)
    assert plan.gap == pytest.approx(
        (plan.objective - report["final_bound_usd"]) / plan.objective, abs=1e-9
    )
    assert plan.gap <= 1e-6 * 1.0001


@pytest.mark.parametrize("workloads,periods,seed", [(20, 3, 0), (20, 3, 4), (10, 6, 5)])
def test_the_root_reaches_the_full_optimum(workloads, periods, seed):
    # three more cases whose support plan is above the optimum (0.38%, 0.06%, 0.16%; seeds
    # 1 and 4 of the last two shapes lost that gap with issue 33's Gaudi and Neuron figures):
    # after reduced-cost fixing the root's plan costs the full MIP's optimum (both to 1e-6)
    problem = generated_problem(workloads, periods, seed=seed)
    catalog = scaled_catalog(1_000)
    tight = SolveOptions(relative_gap=1e-6)
    best, _ = solve_verified(problem, catalog, options=tight, method="full")
    plan, solution = solve_verified(problem, catalog, options=tight, method="root")
    assert solution.compiled.report.root["support_plan_usd"] > best.total_cost_usd * (1 + 1e-4)
    assert plan.total_cost_usd == pytest.approx(best.total_cost_usd, rel=1e-6)


SHIPPED = sorted(p for p in (ROOT / "problems").glob("*.yaml") if p.stem != "infeasible-budget")


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_shipped_problem_at_the_root_costs_its_optimum(path):
    # solved at the root to a 1e-6 gap, every shipped problem costs its recorded optimum
    # (tests/golden, the full MIP to a 1e-4 gap): at most it, and at least 1e-4 below it
    golden = json.loads((ROOT / "tests" / "golden" / f"{path.stem}.json").read_text())["output"]
    options = SolveOptions(relative_gap=1e-6)
    plan = solve_verified(load_problem(path), load_catalog(), options=options, method="root")[0]
    assert plan.total_cost_usd <= golden["total_cost_usd"] * (1 + 1e-6)
    assert plan.total_cost_usd >= golden["total_cost_usd"] * (1 - 1e-4)


def test_the_seed_at_the_root_costs_its_optimum_to_the_cent():
    # the seed's optimum: $370,028.54 at catalog prices ($422,763.09 guarded, the objective
    # under the default guard), its serving autoscaled (the default since issue 28;
    # bench/archive/RESULTS-2026.md, "Autoscale the default"; tests/core/test_fleet.py works it
    # by hand)
    path = ROOT / "problems" / "seed-2m-13b.yaml"
    plan = solve_verified(load_problem(path), load_catalog(), method="root")[0]
    assert plan.total_cost_usd == pytest.approx(370_028.54, abs=0.01)


def test_the_infeasible_problem_at_the_root_still_says_what_to_relax():
    # the LP is infeasible: the full model is solved and explains it
    from solver.errors import InfeasibleError

    path = ROOT / "problems" / "infeasible-budget.yaml"
    with pytest.raises(InfeasibleError, match="raise budget_usd to"):
        solve_verified(load_problem(path), load_catalog(), method="root")


def test_auto_takes_the_root_between_its_thresholds(case, monkeypatch):
    # auto: one MIP below ROOT_COLUMNS priced columns, the root from there up to
    # AUTO_COLUMNS, column generation above
    compiled = compile_problem(generated_problem(10, 3, seed=4), scaled_catalog(1_000))
    n = columns.priced_columns(compiled)
    assert not root.use_root(compiled, "full") and root.use_root(compiled, "root")
    monkeypatch.setattr(root, "ROOT_COLUMNS", n)
    assert root.use_root(compiled, "auto")
    monkeypatch.setattr(root, "ROOT_COLUMNS", n + 1)
    assert not root.use_root(compiled, "auto")
    monkeypatch.setattr(root, "ROOT_COLUMNS", 0)
    monkeypatch.setattr(root, "AUTO_COLUMNS", n)
    assert not root.use_root(compiled, "auto")  # column generation's from there


def test_the_cli_takes_method_root():
    from solver.cli import app

    args = ["solve", "problems/seed-2m-13b.yaml", "--method", "root", "--format", "json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    plan = json.loads(result.output)
    assert plan["total_cost_usd"] == pytest.approx(370_028.54, abs=0.01)  # as above
