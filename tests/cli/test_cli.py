"""The CLI contract: commands, options, JSON fields, exit codes, atomic outputs."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import CHAT_WORKLOAD, ROOT, offering, write_catalog
from solver.cli import app

runner = CliRunner()

PROBLEM = (
    """\
name: cli
horizon_months: 1
modes: [on_demand]
workloads:
"""
    + CHAT_WORKLOAD
)


@pytest.fixture
def setup(tmp_path):
    cat = write_catalog(
        tmp_path / "cat",
        [offering("h1", "h100-sxm", 1, 4.0), offering("l4", "l4", 1, 1.0, nvlink=False)],
    )
    prob = tmp_path / "p.yaml"
    prob.write_text(PROBLEM)
    return cat, prob, tmp_path


def test_solve_json_contract(setup):
    cat, prob, _ = setup
    result = runner.invoke(app, ["solve", str(prob), "--catalog", str(cat), "--format", "json"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    for field in [
        "status",
        "objective",
        "total_cost_usd",
        "total_co2e_t",
        "verified",
        "gap",
        "solver",
        "solve_seconds",
        "line_items",
    ]:
        assert field in plan
    assert plan["status"] == "optimal" and plan["verified"] is True
    # the default solver (solver/units.py DEFAULT_SOLVER): HiGHS through highspy
    assert plan["solver"] == "highspy"
    assert sum(i["cost_usd"] for i in plan["line_items"]) == pytest.approx(plan["total_cost_usd"])
    for field in [
        "period",
        "provider",
        "region",
        "offering",
        "accelerator",
        "mode",
        "units",
        "workload",
        "hours",
        "cost_usd",
        "co2e_t",
    ]:
        assert field in plan["line_items"][0]


def test_solve_table_csv_and_out_file(setup):
    cat, prob, tmp = setup
    table = runner.invoke(app, ["solve", str(prob), "--catalog", str(cat), "--solver", "cbc"])
    assert table.exit_code == 0 and "verified=true" in table.stdout
    out = tmp / "plan.csv"
    res = runner.invoke(
        app, ["solve", str(prob), "--catalog", str(cat), "--format", "csv", "--out", str(out)]
    )
    assert res.exit_code == 0 and out.read_text().startswith("item,period")
    assert not list(tmp.glob(".plan.csv.*"))  # no temp file left behind


def test_same_input_same_output_byte_for_byte(setup):
    cat, prob, _ = setup
    runs = [
        runner.invoke(app, ["solve", str(prob), "--catalog", str(cat), "--format", "csv"])
        for _ in range(2)
    ]
    assert runs[0].stdout == runs[1].stdout


def test_bad_input_exit_2_one_message_no_traceback(setup):
    cat, prob, tmp = setup
    bad = tmp / "bad.yaml"
    bad.write_text(PROBLEM.replace("tpot_slo: 50 ms", "tpot_slo: 50"))
    res = runner.invoke(app, ["solve", str(bad), "--catalog", str(cat)])
    assert res.exit_code == 2
    assert "tpot_slo" in res.output and "fix:" in res.output and "Traceback" not in res.output
    res = runner.invoke(app, ["solve", str(prob), "--catalog", str(cat), "--solver", "gurobi"])
    assert res.exit_code == 2 and "unknown solver" in res.output


def test_infeasible_exit_3(setup):
    cat, prob, tmp = setup
    inf = tmp / "inf.yaml"
    inf.write_text(PROBLEM.replace("modes:", "budget_usd: 10\nmodes:"))
    res = runner.invoke(app, ["solve", str(inf), "--catalog", str(cat)])
    assert res.exit_code == 3 and "no feasible plan" in res.output


def test_estimate_json_worked_figures(setup):
    cat, _, _ = setup
    # 13B on 1T tokens: 6 x 13e9 x 1e12 = 7.8e22 plus attention 12 x 40 x 5120 x 4096 x 1e12
    # = 1.0066e22 -> 8.8066e22 FLOPs = 82,416 H100-hours at the low end of the H100 band,
    # 0.30 of 989.4 dense TFLOPS (8.8066e22 / (989.4e12 x 0.30 x 3600)); 60,305 at the 41%
    # Llama 3 point (--training-margin point)
    res = runner.invoke(
        app,
        [
            "estimate",
            "training",
            "--tokens",
            "1e12",
            "--model",
            "dense-13b",
            "--accelerator",
            "H100",
            "--catalog",
            str(cat),
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["flops"] == pytest.approx(8.8066e22, rel=1e-4)
    assert out["accelerator_hours_at_mfu"] == pytest.approx(82_416, rel=1e-4)
    assert (out["mfu"], out["mfu_point"], out["training_margin"]) == (0.30, 0.41, "low")
    assert out["assumptions"]
    args = ["estimate", "training", "--tokens", "1e12", "--accelerator", "H100", "--json"]
    res = runner.invoke(app, [*args, "--catalog", str(cat), "--training-margin", "point"])
    assert json.loads(res.stdout)["accelerator_hours_at_mfu"] == pytest.approx(60_305, rel=1e-4)
    res = runner.invoke(app, [*args, "--catalog", str(cat), "--training-margin", "1.5"])
    assert res.exit_code == 2 and "--training-margin" in res.output and "fix:" in res.output
    # 7B-class fp16 decode at batch 1 on H100: 14 GB / 3,350 GB/s = 4.18 ms (dense-7b, tiny KV)
    res = runner.invoke(
        app,
        [
            "estimate",
            "inference",
            "--model",
            "dense-7b",
            "--accelerator",
            "h100_sxm",
            "--batch",
            "1",
            "--prompt-tokens",
            "1",
            "--output-tokens",
            "1",
            "--catalog",
            str(cat),
            "--json",
        ],
    )
    out = json.loads(res.stdout)
    assert out["decode_step_ms_roofline"] == pytest.approx(4.18, abs=0.01)
    # derated at the NVIDIA runtime's 65% of bandwidth (the issue-47 refit of eta_bw on the
    # chunked step form, physics/constants.py "vllm-cuda"): 4.18 / 0.65 = 6.43 ms (batch 1:
    # no other sequence's prompt chunk rides the step, (b - 1) = 0)
    assert out["decode_step_ms_derated"] == pytest.approx(4.18 / 0.65, abs=0.02)


def test_estimate_70b_on_two_h100_with_32_users_at_8k(setup):
    # Llama 3 70B bf16 weights 141.1 GB; 2 x 80 x 0.9 = 144 GB usable: 2.9 GB left. KV is
    # 327,680 B per token; paged, a sequence holds the mean context 4,096 + 4,096/2 = 6,144
    # tokens = 2.01 GB, so 32 of them need 32 x 2.01 = 64.4 GB -> it does not fit (one
    # sequence of 8,192 tokens, 2.68 GB, does: max batch 1).
    cat, _, _ = setup
    res = runner.invoke(
        app,
        [
            "estimate",
            "inference",
            "--model",
            "llama-3-70b",
            "--accelerator",
            "H100",
            "--tp",
            "2",
            "--batch",
            "32",
            "--prompt-tokens",
            "4096",
            "--output-tokens",
            "4096",
            "--catalog",
            str(cat),
            "--json",
        ],
    )
    out = json.loads(res.stdout)
    assert out["memory"]["kv_gb_at_batch"] == pytest.approx(64.4, abs=0.1)
    assert out["fits"] is False and out["memory"]["max_batch_by_memory"] == 1
    # the engine runs the one sequence that fits and queues the rest: throughput at batch 1
    assert out["batch_running"] == 1 and out["replica_output_tokens_per_s"] > 0
    assert "queue" in out["slo_limit"]
    assert out["what_would_fit"]


def test_catalog_commands(setup):
    cat, _, _ = setup
    res = runner.invoke(app, ["catalog", "validate", "--catalog", str(cat)])
    assert res.exit_code == 0 and "2 offerings" in res.stdout
    res = runner.invoke(app, ["catalog", "show", "H100 SXM5 80GB", "--catalog", str(cat)])
    assert res.exit_code == 0 and "989.4" in res.stdout
    res = runner.invoke(app, ["catalog", "show", "H1OO", "--catalog", str(cat)])
    assert res.exit_code == 2 and "h100-sxm" in res.output


def test_schema_prints_json_schema():
    res = runner.invoke(app, ["schema"])
    schema = json.loads(res.stdout)
    assert "workloads" in schema["properties"]


def test_shipped_seed_solves_verified_optimal(seed_solved):
    code, output = seed_solved
    assert code == 0, output
    plan = json.loads(output)
    assert plan["status"] == "optimal" and plan["verified"] is True
    assert plan["total_cost_usd"] <= 2_000_000


@pytest.mark.parametrize("command", ["sensitivity", "report"])
def test_an_analysis_refuses_cpsat_with_a_message(command, tmp_path):
    # CP-SAT solves no LP, and an analysis needs the duals of the plan's LP: one message
    # naming the option and the fix, exit 2 (was an internal error, exit 70)
    args = [command, str(ROOT / "problems" / "seed-2m-13b.yaml"), "--solver", "cpsat"]
    if command == "report":
        args += ["--out", str(tmp_path / "r")]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert "--solver" in result.output and "fix: use highs" in result.output


def test_estimate_takes_format_json_like_other_commands(setup):
    # issue 33: ``--format json`` prints the same JSON as ``--json`` (kept); ``--format table``
    # prints the text; an unknown format is refused with exit 2 naming --format.
    cat, _, _ = setup
    base = ["estimate", "inference", "--model", "dense-7b", "--accelerator", "h100_sxm"]
    base += ["--batch", "1", "--prompt-tokens", "1", "--output-tokens", "1", "--catalog", str(cat)]
    by_flag = runner.invoke(app, [*base, "--json"])
    by_format = runner.invoke(app, [*base, "--format", "json"])
    assert by_flag.exit_code == 0 and by_format.exit_code == 0, by_format.output
    assert json.loads(by_format.stdout) == json.loads(by_flag.stdout)
    # the same 7B step as above: 14 GB / 3,350 GB/s = 4.18 ms at the data sheet
    assert json.loads(by_format.stdout)["decode_step_ms_roofline"] == pytest.approx(4.18, abs=0.01)
    table = runner.invoke(app, [*base, "--format", "table"])
    assert table.exit_code == 0 and not table.stdout.lstrip().startswith("{")
    bad = runner.invoke(app, [*base, "--format", "xml"])
    assert bad.exit_code == 2 and "--format" in bad.output and "fix:" in bad.output
    train = ["estimate", "training", "--tokens", "1e12", "--accelerator", "H100"]
    res = runner.invoke(app, [*train, "--catalog", str(cat), "--format", "json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["flops"] == pytest.approx(8.8066e22, 1e-4)
