"""One physics: `procure estimate` and compile give the same serving capacity for the same case.

Compile scores a pool (an offering in a mode) at a tensor-parallel degree; the estimator
takes the same offering and degree. Both call solver.physics (device_figures, best_decode),
so tokens/s per instance must agree to rounding on every case of the table, across
vendors, precisions, degrees and SLOs.
"""

from __future__ import annotations

import pytest

from solver.analyses import estimate
from solver.core.compile import build_pools, inference_capacity, resolve_model
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import parse_problem

CATALOG = load_catalog()

# model, offering, tp degree, weight precision, prompt, output, tpot ms, ttft ms
CASES = [
    ("llama-3-8b", "aws/us-east-1/g6.2xlarge", 1, "bf16", 1000, 400, 100, 2000),
    ("llama-3-8b", "aws/us-east-1/g6.12xlarge", 1, "bf16", 200, 800, None, None),
    ("llama-3-70b", "aws/ap-northeast-1/p5.48xlarge", 2, "fp8", 2048, 128, 50, 2000),
    ("llama-3-70b", "aws/ap-northeast-1/p5.48xlarge", 8, "bf16", 1000, 400, 30, 1000),
    ("llama-3-70b", "aws/ap-southeast-1/p4de.24xlarge", 4, "bf16", 4096, 512, None, None),
    (
        "llama-3-70b",
        "azure/canadacentral/Standard_ND96isr_MI300X_v5",
        1,
        "fp8",
        1000,
        400,
        60,
        2000,
    ),
    ("llama-3-405b", "gcp/asia-northeast1/a4-highgpu-8g", 8, "fp4", 1000, 400, 80, 5000),
    ("llama-2-7b", "gcp/asia-northeast1/tpu-v5litepod-4", 1, "bf16", 375, 175, 100, 2000),
    ("llama-2-7b", "aws/us-east-1/inf2.xlarge", 1, "bf16", 750, 375, None, None),
    # mixtures of experts: the batch within the SLO found by bisection (issue 28)
    ("mixtral-8x7b", "aws/ap-northeast-1/p5.48xlarge", 2, "bf16", 1000, 400, 20, 2000),
    ("deepseek-v3", "aws/us-east-1/p5en.48xlarge", 8, "fp8", 1000, 400, 50, 5000),
    ("qwen3-235b-a22b", "aws/us-east-1/p5en.48xlarge", 4, "fp8", 2000, 500, None, None),
]


def _problem(model: str, precision: str, prompt: int, output: int, tpot, ttft, percentile=None):
    data = {
        "name": "one-physics",
        "horizon_months": 1,
        "modes": ["on_demand"],
        "workloads": [
            {
                "kind": "inference",
                "name": "w",
                "model": model,
                "weight_precision": precision,
                "demand": {"tokens_per_s": 100},
                "prompt_tokens": prompt,
                "output_tokens": output,
                "ttft_slo": f"{ttft or 1e6} ms",
                "tpot_slo": f"{tpot or 1e6} ms",
                "allow_tensor_parallel_over_pcie": True,
                # None: the problem's default (p99, issue 47); "mean": the mean only
                **({} if percentile is None else {"slo_percentile": percentile}),
            }
        ],
    }
    return parse_problem(data)


@pytest.mark.parametrize("percentile", ["mean", None])
@pytest.mark.parametrize("model,offering,tp,precision,prompt,output,tpot,ttft", CASES)
def test_estimate_and_compile_agree(
    model, offering, tp, precision, prompt, output, tpot, ttft, percentile
):
    # at the mean (asked for by name), and at the problem's default, p99 under Poisson
    # arrivals at the default max_utilisation 0.8, which the estimate is given explicitly
    problem = _problem(model, precision, prompt, output, tpot, ttft, percentile)
    w = problem.workloads[0]
    pools = build_pools(problem, CATALOG)
    pool = pools[(pools["offering_id"] == offering) & (pools["mode"] == "on_demand")]
    assert len(pool) == 1, offering
    spec = resolve_model(model, CATALOG, "test")
    compiled = inference_capacity(
        w, spec, pool.reset_index(drop=True), problem.memory_headroom, prompt, output, (tp,)
    )
    est = estimate.estimate_inference(
        CATALOG,
        model=model,
        offering=offering,
        tp_degree=tp,
        weight_precision=precision,
        prompt_tokens=prompt,
        output_tokens=output,
        tpot_slo_ms=tpot or 1e6,
        ttft_slo_ms=ttft or 1e6,
        memory_headroom=problem.memory_headroom,
        slo_percentile=w.slo_percentile,
        utilisation=w.max_utilisation,
    )
    assert w.slo_percentile == (None if percentile == "mean" else 0.99)
    apu = int(CATALOG.offerings.at[offering, "accelerators_per_instance"])
    per_instance = est["replica_output_tokens_per_s"] * (apu // tp)
    assert per_instance > 0, est.get("slo_limit")
    assert float(compiled["tokens_per_s_per_unit"][0]) == pytest.approx(per_instance, rel=1e-9)
    assert int(compiled["batch"][0]) == est["batch"]
    assert float(compiled["step_s"][0]) * 1e3 == pytest.approx(est["decode_step_ms_derated"])


def test_jetstream_estimate_reports_the_dense_cache_it_holds():
    # `procure estimate --runtime jetstream`: the memory block and the assumptions say what
    # the dense cache holds. Llama 2 7B bf16 (524,288 B per token) on 8 TPU v5e, 218/940:
    # each slot holds 2,048 tokens = 1.0737 GB (paged: the full context 1,158 tokens =
    # 0.6071 GB); memory fits 102 slots (paged 305, capped at 256 decoding), and the cache
    # at that batch is 102 x 1.0737 = 109.52 GB (paged: 256 x 688 tokens = 92.34 GB).
    got = {}
    for runtime in ("jetstream", "tpu"):
        est = estimate.estimate_inference(
            CATALOG,
            model="llama-2-7b",
            accelerator="tpu-v5e",
            tp_degree=8,
            prompt_tokens=218,
            output_tokens=940,
            weight_precision="bf16",
            kv_precision="bf16",
            runtime=runtime,
        )
        mem = est["memory"]
        got[runtime] = (
            round(mem["kv_gb_per_sequence"], 4),
            mem["max_batch_by_memory"],
            est["batch"],
            round(mem["kv_gb_at_batch"], 2),
        )
        if runtime == "jetstream":
            assert "a dense cache of 2048 tokens per sequence" in est["assumptions"][0]
            assert "one sequence of 2048 tokens must fit" in est["assumptions"][0]
    assert got == {"jetstream": (1.0737, 102, 102, 109.52), "tpu": (0.6071, 305, 256, 92.34)}
