"""The operating-point rule (docs/guides/operating-point.md, issue 47): the capacity an
estimate reports and the model plans on is the throughput of a batch at which every limit
given (TPOT, TTFT, memory, at the stated percentile under the planned load) holds.

A property test over random shapes (the shipped catalog's models), accelerators (its
accelerators), runtimes, replica sizes, precisions, limits, percentiles and loads; and the
B200 FP4 case of the issue against MLPerf Inference v5.0's Llama 2 70B Interactive run.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver import physics
from solver.analyses.estimate import estimate_inference
from solver.inputs.catalog import load_catalog
from solver.inputs.presets import resolve_model
from solver.physics.constants import RUNTIME_EFFICIENCY

CATALOG = load_catalog()
MODELS = sorted(CATALOG.models.index)
ACCELERATORS = sorted(CATALOG.accelerators.index)
RUNTIMES = sorted(RUNTIME_EFFICIENCY)
EPS = 1e-9

case = st.fixed_dictionaries(
    {
        "model": st.sampled_from(MODELS),
        "accelerator": st.sampled_from(ACCELERATORS),
        "runtime": st.sampled_from(RUNTIMES),
        "d": st.sampled_from([1, 2, 4, 8]),
        "precision": st.sampled_from(["bf16", "fp8", "fp4"]),
        "prompt": st.integers(16, 8000),
        "output": st.integers(8, 2000),
        "tpot_s": st.floats(0.005, 0.2),
        "ttft_s": st.one_of(st.none(), st.floats(0.05, 5.0)),
        "p": st.one_of(st.none(), st.floats(0.5, 0.999)),
        "rho": st.floats(0.2, 1.0),
        "batch": st.one_of(st.none(), st.integers(1, 1024)),
    }
)


def _device(c: dict) -> physics.Device:
    acc = CATALOG.accelerators.loc[c["accelerator"]].to_dict()
    return physics.device_figures(
        physics.one_row_table(acc), c["precision"], np.array([True]), c["runtime"]
    )


def _decode(c: dict) -> physics.DecodeResult:
    served = physics.served_model(
        resolve_model(c["model"], CATALOG, "model"), c["precision"], c["precision"]
    )
    dev = _device(c)
    load = None if c["p"] is None else physics.LoadPercentile(p=c["p"], rho=c["rho"])
    return physics.best_decode(
        served,
        prompt_tokens=c["prompt"],
        output_tokens=c["output"],
        tpot_slo_s=c["tpot_s"],
        ttft_slo_s=c["ttft_s"],
        d=np.array([float(c["d"])]),
        dev=dev,
        load=load,
        batch=c["batch"],
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case)
def test_capacity_is_only_ever_reported_where_every_limit_holds(c):
    res = _decode(c)
    b = int(res.batch[0])
    tps = float(res.tokens_per_s[0])
    if b < 1:
        # no batch meets the limits: no capacity, and the estimate says why
        assert tps == 0.0
        assert res.reason[0]
        return
    step = float(res.step_s[0])
    # the batch reported fits memory, and its own step is within the TPOT limit: the
    # full-batch step is never capacity when it is over the limit
    assert b <= int(res.b_max_memory[0])
    assert step <= c["tpot_s"] + EPS
    # capacity is b over the replica's time per output token: the step, plus the request's
    # own prefill where prompts run as their own graph (Neuron's serial prefill), never
    # more than b / step
    assert res.cycle_s is not None
    assert tps == pytest.approx(b / float(res.cycle_s[0]))
    assert tps <= b / step * (1 + 1e-12)
    # at the stated percentile under the planned load (or at the mean) every latency holds
    assert float(res.tpot_p_s[0]) <= c["tpot_s"] + EPS
    if c["ttft_s"] is not None:
        assert float(res.ttft_p_s[0]) <= c["ttft_s"] + EPS


@settings(max_examples=100, deadline=None)
@given(case)
def test_a_larger_batch_than_the_one_planned_breaks_a_limit_or_the_runtime_cap(c):
    # the planned batch is the largest meeting the limits (throughput b / t(b) rises with
    # b): one more sequence breaks memory, the runtime's cap or a limit
    c = {**c, "batch": None}
    res = _decode(c)
    b = int(res.batch[0])
    if b < 1:
        return
    if b >= min(int(res.b_max_memory[0]), int(_device(c).max_batch[0])):
        return  # memory or the runtime's max_num_seqs stops it
    more = _decode({**c, "batch": b + 1})
    assert more.reason[0] or float(more.step_s[0]) > c["tpot_s"]


def test_b200_fp4_llama2_70b_interactive_limits_hold_and_stay_near_the_published_run():
    # Issue 47's case: Llama 2 70B, FP4 weights and FP8 KV on one B200 under TensorRT-LLM,
    # MLPerf Inference v5.0 "Llama 2 70B Interactive" limits: 40 ms TPOT and 450 ms TTFT at
    # p99 (mlcommons.org/2025/04/llm-inference-v5/), on the MLPerf data set's shape (219
    # prompt and 294 output tokens a request: MLPERF_L2_PROMPT in
    # bench/accuracy/ACCURACY_SOURCES.md). Before the rule the estimate reported batch 364
    # with a 43.98 ms full-batch step (over 40 ms; the p99 check passed at 80% load where
    # fewer sequences run); before the FP4 fix, FP4 ran at twice FP8's rate
    # (constants.SERVING_COMPUTE_SHARE: end to end it runs at FP8's, fitted on seven
    # published B200 FP4 runs, rows m64-m70). Re-worked for the step's attention apart
    # (issue 47, stop 59: constants.RuntimeEfficiency.attention_apart; the KV read is its
    # own kernel, so it adds to the linear layers instead of hiding under their FLOPs):
    # linear FLOPs per sequence-step 2 x 68.98e9 x (1 + 219/294) + prompt attention
    # 2 x 80 x 8,192 x 219^2 / 294 = 240.94 GFLOP / (9,000 TFLOPS x 0.50 x 0.5 = 2,250)
    # = 107.08 us; KV read at the mean context (219 + 147) x 163,840 B (FP8, 80 layers,
    # 8 KV heads x 128) = 59.97 MB / (8,000 GB/s x 0.65) = 11.53 us (attention's FLOPs,
    # 0.43 us, are below it). The weights (34.49 GB / 5,200 GB/s = 6.63 ms) are under the
    # batch's FLOPs, so t(b) = b x 118.62 us: t(337) = 39.97 ms <= 40 (338: 40.09 ms),
    # b / t(b) = 8,430.5 tok/s. Before: batch 372, 9,301 tok/s, the KV read hidden.
    out = estimate_inference(
        CATALOG,
        model="llama-2-70b",
        accelerator="b200",
        weight_precision="fp4",
        kv_precision="fp8",
        prompt_tokens=219,
        output_tokens=294,
        tpot_slo_ms=40,
        ttft_slo_ms=450,
        slo_percentile=0.99,
        runtime="tensorrt-llm",
    )
    assert out["batch"] == 337
    assert out["decode_step_ms_derated"] <= 40.0
    assert out["tpot_ms_at_percentile"] <= 40.0
    assert out["ttft_ms_at_percentile"] <= 450.0
    # Published: NVIDIA's DGX B200 (8 GPUs, TensorRT-LLM, FP4) MLPerf Inference v5.0
    # Llama 2 70B Interactive Server result, about 7,426 tok/s per GPU (the basis taken
    # in issue 47's first build). The served rate at the planned 80% load is 0.8 x 8,430.5
    # = 6,744 tok/s, 0.91x of it; the replica's peak 8,430.5 is 1.14x: both within 1.5x.
    published = 7426.0
    for figure in (out["served_output_tokens_per_s"], out["replica_output_tokens_per_s"]):
        assert 1 / 1.5 <= figure / published <= 1.5
    assert out["replica_output_tokens_per_s"] == pytest.approx(8430.5, abs=1.0)


def test_no_batch_meets_the_limit_says_so_and_what_would():
    # Llama 2 70B FP8 on one H100 at 15 ms TPOT, p99: even one sequence steps 32.5 ms
    # (68.98 GB of weights / (3,350 GB/s x 0.65) = 31.7 ms + its KV read), so no batch; the
    # estimate reports no capacity and the tightest limits one sequence meets, and that 4
    # H100s per replica meet 15 ms (31.7 / 4 = 7.9 ms of weight read plus all-reduces).
    out = estimate_inference(
        CATALOG,
        model="llama-2-70b",
        accelerator="h100-sxm",
        weight_precision="fp8",
        kv_precision="fp8",
        tpot_slo_ms=15,
        ttft_slo_ms=450,
        slo_percentile=0.99,
    )
    assert out["batch"] == 0 and out["replica_output_tokens_per_s"] == 0
    assert "time per output token" in out["slo_limit"]
    meet = out["what_would_meet"]
    assert meet["tpot_slo_ms"] == pytest.approx(32.5, abs=0.1)
    assert meet["tp_degree"] == 4


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case)
def test_capacity_at_a_percentile_never_exceeds_capacity_at_the_mean(c):
    # a tail check only adds limits to the mean's (the batch's own step and TTFT hold at
    # a percentile too), so the capacity planned at any percentile under any load is at
    # most the capacity planned at the mean: a p99 plan can never be cheaper than the
    # mean's (issue 47: traffic-mix-measured was $81,161.40 at p99 against $87,833.60)
    c = {**c, "batch": None, "p": 0.99 if c["p"] is None else c["p"]}
    at_p = float(_decode(c).tokens_per_s[0])
    at_mean = float(_decode({**c, "p": None}).tokens_per_s[0])
    assert at_p <= at_mean * (1 + EPS)
