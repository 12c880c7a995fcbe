"""Safe outputs and honest limits: whole files or none; a limit gives a plan marked unproven;
the same inputs give byte-identical JSON."""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from conftest import CHAT_WORKLOAD, offering, write_catalog
from solver.cli import app
from solver.core.backends import SolveOptions
from solver.inputs.problem import parse_problem
from solver.outputs.files import write_atomic
from solver.outputs.text import plan_table
from solver.solve import solve_problem

runner = CliRunner()
PROBLEM = "name: cli\nhorizon_months: 1\nmodes: [on_demand]\nworkloads:\n" + CHAT_WORKLOAD


def test_interrupted_write_leaves_the_old_file_whole(tmp_path, monkeypatch):
    target = tmp_path / "plan.json"
    write_atomic(target, "old plan\n")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt  # Ctrl-C between writing the temp file and the rename

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, "new plan that would be half written\n")
    assert target.read_text() == "old plan\n"
    assert [p.name for p in tmp_path.iterdir()] == ["plan.json"]  # no temp file left


def test_ctrl_c_during_a_solve_exits_130_without_output(tmp_path, monkeypatch):
    cat = write_catalog(tmp_path / "cat", [offering("h1", "h100-sxm", 1, 4.0)])
    prob = tmp_path / "p.yaml"
    prob.write_text(PROBLEM)
    out = tmp_path / "plan.json"
    out.write_text("previous\n")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("solver.solve.solve_problem", interrupted)
    res = runner.invoke(app, ["solve", str(prob), "--catalog", str(cat), "--out", str(out)])
    assert res.exit_code == 130 and "interrupted" in res.output and "Traceback" not in res.output
    assert out.read_text() == "previous\n"


def test_a_limit_returns_the_best_plan_marked_not_proven(tiny_catalog):
    # Stop HiGHS at its first improving solution: the plan it returns is verified and
    # feasible, its status says so, and the table says it is not proven optimal.
    shapes = [
        ("h1", "h100-sxm", 1, 4.0),
        ("h2", "h100-sxm", 2, 7.9),
        ("l1", "l4", 1, 1.1),
        ("l4x", "l4", 4, 4.3),
    ]
    cat = tiny_catalog([offering(n, a, k, p, nvlink=a != "l4") for n, a, k, p in shapes])
    w = {
        "kind": "inference",
        "name": "chat",
        "model": "llama-3-8b",
        "demand": {"requests_per_s": 333.3},
        "prompt_tokens": 100,
        "output_tokens": 100,
        "ttft_slo": "1 s",
        "tpot_slo": "50 ms",
        "traffic_mix": [{"prompt_tokens": 100, "output_tokens": 100, "share": 1.0}],
        "measured_throughput_rps": {"h100-sxm": [10.0], "l4": [2.0]},
    }
    p = parse_problem(
        {"name": "limit", "horizon_months": 1, "modes": ["on_demand"], "workloads": [w]}
    )
    # without the restricted start (it can hand HiGHS the optimum as its first plan)
    opts = SolveOptions(start_heuristic=False, backend_options={"mip_max_improving_sols": 1})
    plan = solve_problem(p, cat, options=opts)
    assert plan.status == "feasible"
    assert plan.gap is not None
    assert "NOT proven optimal" in plan_table(plan)
    best = solve_problem(p, cat)
    assert best.status == "optimal" and best.total_cost_usd <= plan.total_cost_usd + 1e-6


def test_same_inputs_byte_identical_json(tmp_path):
    cat = write_catalog(
        tmp_path / "cat",
        [offering("h1", "h100-sxm", 1, 4.0), offering("l4", "l4", 1, 1.0, nvlink=False)],
    )
    prob = tmp_path / "p.yaml"
    prob.write_text(PROBLEM)
    args = ["solve", str(prob), "--catalog", str(cat), "--format", "json", "--reproducible"]
    first, second = (runner.invoke(app, args).stdout for _ in range(2))
    assert first == second
    plan = json.loads(first)
    assert plan["solve_seconds"] == 0.0 and plan["status"] == "optimal"
    # without --reproducible only the timings may differ
    a, b = (json.loads(runner.invoke(app, args[:-1]).stdout) for _ in range(2))
    for d in (a, b):
        d.pop("solve_seconds")
        d.pop("compile_seconds")
    assert a == b
