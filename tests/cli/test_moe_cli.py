"""A mixture-of-experts model estimated, served and trained from the command line (issue 28):
``procure estimate inference|training --model mixtral-8x7b`` and ``procure solve
problems/moe-mixtral.yaml``, with the figures worked by hand in comments."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import ROOT
from solver.cli import app

runner = CliRunner()


def _json(args: list[str]) -> dict:
    res = runner.invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_estimate_inference_mixtral_reads_the_experts_it_hits():
    # Mixtral 8x7B, BF16, on one H200 (141 GiB = 151.4 GB; 0.9 x 151.4 = 136.3 GB usable):
    # all 93.4 GB of weights in memory. Batch 1, 1,000 prompt / 400 output tokens: a step
    # reads the shared 3.267 GB and f(1) = 0.25 + (1/400) x 0.75 = 0.251875 of the 90.133 GB
    # of experts (2 of 8 per layer, and a prefill chunk in 1 step of 400) = 25.97 GB.
    out = _json(
        [
            "estimate",
            "inference",
            "--model",
            "mixtral-8x7b",
            "--accelerator",
            "h200",
            "--batch",
            "1",
        ]
    )
    moe = out["mixture_of_experts"]
    assert out["memory"]["weights_gb"] == pytest.approx(93.4)
    assert moe["active_weights_gb"] == pytest.approx(25.8)
    assert moe["experts_hit_per_layer"] == pytest.approx(2.0)
    assert moe["routed_share_read_per_step"] == pytest.approx(0.251875)
    assert moe["weights_read_gb_per_step"] == pytest.approx(3.2667 + 0.251875 * 90.1333, rel=1e-4)
    # Roofline at 4,800 GB/s: (25.97 + 0.157 KV of 1,200 tokens) / 4,800 = 5.443 ms, a
    # quarter of the 19.5 ms a dense 46.7B would take.
    assert out["decode_step_ms_roofline"] == pytest.approx(5.443, abs=1e-3)
    assert any("mixture of experts" in a for a in out["assumptions"])
    # At batch 32 the decode tokens hit 8 x (1 - 0.75^32) = 7.9992 experts per layer.
    out = _json(
        [
            "estimate",
            "inference",
            "--model",
            "mixtral-8x7b",
            "--accelerator",
            "h200",
            "--batch",
            "32",
        ]
    )
    assert out["mixture_of_experts"]["experts_hit_per_layer"] == pytest.approx(7.9992, abs=1e-4)


def test_estimate_inference_deepseek_latent_kv_cache():
    # DeepSeek-V3 FP8 on 8 H200: 671 GB of weights in 8 x 136.3 = 1,090 GB; KV 61 x 576 x 2 B
    # = 70,272 B per token (MLA latent), 1,400 tokens per sequence = 0.0984 GB.
    out = _json(
        [
            "estimate",
            "inference",
            "--model",
            "deepseek-v3",
            "--accelerator",
            "h200",
            "--tp",
            "8",
            "--weight-precision",
            "fp8",
        ]
    )
    assert out["memory"]["weights_gb"] == pytest.approx(671.0)
    assert out["memory"]["kv_bytes_per_token"] == pytest.approx(70_272)
    assert out["memory"]["kv_gb_per_sequence"] == pytest.approx(0.09838, abs=1e-5)
    assert any("latent (MLA) KV cache" in a for a in out["assumptions"])
    # On one H200 it does not fit: 671 GB > 136.3 GB; the replica needs every expert.
    one = _json(
        [
            "estimate",
            "inference",
            "--model",
            "deepseek-v3",
            "--accelerator",
            "h200",
            "--weight-precision",
            "fp8",
        ]
    )
    assert one["fits"] is False and one["memory"]["max_batch_by_memory"] == 0
    # ceil((671 + 0.098) / 136.3) = 5 H200s hold every expert: --tp 8 is the shape to ask.
    assert any("all 256 experts" in i and "5 x h200 (--tp 8)" in i for i in one["what_would_fit"])


def test_estimate_training_mixtral_counts_active_flops_and_all_memory():
    # FLOPs: 6 x 12.9e9 x 1e10 = 7.74e20 plus attention 12 x 32 x 4,096 x 4,096 x 1e10 =
    # 6.442e19 -> 8.384e20 (a dense 46.7B: 2.867e21). Memory: 46.7e9 x 18 B = 840.6 GB of
    # states; 85.9 x 0.9 - 18.25 GB of activations = 59.06 GB per H100 -> 15 H100s.
    out = _json(
        [
            "estimate",
            "training",
            "--model",
            "mixtral-8x7b",
            "--tokens",
            "1e10",
            "--accelerator",
            "H100",
        ]
    )
    assert out["params"] == pytest.approx(46.7e9) and out["active_params"] == pytest.approx(12.9e9)
    assert out["flops"] == pytest.approx(8.384e20, rel=1e-4)
    assert out["memory"]["weights_grads_optimizer_gb"] == pytest.approx(840.6)
    assert out["memory"]["min_devices_zero3"] == 15
    assert "12.9B active" in out["assumptions"][0]


def test_capacity_factor_adds_the_padded_expert_flops():
    # Issue 47: a token-dropping recipe's experts compute capacity_factor x the routed
    # tokens (buffers padded to capacity). Mixtral's routed share per token: 2 x (46.7 -
    # 12.9)e9 / (8 - 2) = 11.2667e9. At 1.25 the weight term is 6 x (12.9 + 0.25 x
    # 11.2667)e9 x 1e10 = 9.43e20, plus the same attention 6.442e19 -> 1.00742e21, i.e.
    # 1.2016x the dropless 8.384e20 (the run takes 1.2016x as long at the same MFU).
    base = ["estimate", "training", "--model", "mixtral-8x7b", "--tokens", "1e10"]
    dropless = _json([*base, "--accelerator", "tpu-v6e", "--n-accelerators", "256"])
    dropped = _json(
        [*base, "--accelerator", "tpu-v6e", "--n-accelerators", "256", "--capacity-factor", "1.25"]
    )
    assert dropless["capacity_factor"] == 1.0
    assert dropless["flops"] == pytest.approx(8.384e20, rel=1e-4)
    assert dropped["capacity_factor"] == 1.25
    assert dropped["flops"] == pytest.approx(1.00742e21, rel=1e-4)
    assert dropped["wall_clock_hours"] / dropless["wall_clock_hours"] == pytest.approx(
        1.00742e21 / 8.384e20, rel=1e-4
    )
    assert any("1.25 expert capacity factor" in a for a in dropped["assumptions"])


def test_capacity_factor_is_refused_for_a_dense_model_and_at_zero():
    base = ["estimate", "training", "--tokens", "1e10", "--accelerator", "H100"]
    dense = runner.invoke(app, [*base, "--model", "llama-3-8b", "--capacity-factor", "1.25"])
    assert dense.exit_code != 0 and "Traceback" not in dense.output
    assert "--capacity-factor" in dense.output and "dense" in dense.output
    zero = runner.invoke(app, [*base, "--model", "mixtral-8x7b", "--capacity-factor", "0"])
    assert zero.exit_code != 0 and "Traceback" not in zero.output
    assert "--capacity-factor" in zero.output


def test_a_problem_serving_and_training_mixtral_solves(monkeypatch):
    monkeypatch.chdir(ROOT)
    res = runner.invoke(app, ["solve", "problems/moe-mixtral.yaml", "--format", "json"])
    assert res.exit_code == 0, res.output
    plan = json.loads(res.stdout)
    assert plan["status"] == "optimal" and plan["verified"] is True
    lines = plan["line_items"]
    assert {i["workload"] for i in lines} == {"chat-mixtral", "cpt-mixtral"}
    # The training cluster holds the states of every expert: 840.6 GB plus activations
    # within 90% of its memory, whatever the 12.9B active parameters would need.
    from solver.inputs.catalog import load_catalog

    accelerators = load_catalog().accelerators
    train = [i for i in lines if i["workload"] == "cpt-mixtral"]
    assert len(train) == 1
    memory_gb = float(accelerators.at[train[0]["accelerator"], "memory_gb"])
    assert train[0]["accelerators"] * memory_gb * 0.9 >= 840.6
