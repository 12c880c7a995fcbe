"""Neuron's static compiled batch, dense KV cache and serial prefill (issue 47, session 62;
solver/physics/inference.py, "Static batch"; docs/concepts/runtime-figures.md, "Neuron").

Expected figures are worked by hand below and checked against the published runs they
come from: Hugging Face optimum-neuron `benchmark/text-generation-inference/performance/`
(OPTNEURON_TGI_PERF in catalogs/SOURCES.md): Llama-3.1-8B bf16 on 4 Inferentia2 compiled for
32 sequences and 4,096 tokens (`llama3.1-8b/.env`, `tgi-results.csv`, 2025-06-03), and
Llama-3-70B on 16 Trainium compiled for 8 (`llama3-70b-trn1.32xlarge/
tgi-results-batchsize-8.csv`, Neuron SDK 2.19.1).
"""

from __future__ import annotations

import numpy as np
import pytest

from solver import physics
from solver.analyses.estimate import estimate_inference
from solver.inputs.catalog import load_catalog
from solver.inputs.presets import resolve_model
from solver.physics.constants import RUNTIME_EFFICIENCY, split_compiled_batch

CATALOG = load_catalog()


def _step(model: str, acc: str, d: int, runtime: str, p: int, o: int) -> physics.StepModel:
    row = CATALOG.accelerators.loc[acc].to_dict()
    dev = physics.device_figures(physics.one_row_table(row), "bf16", np.array([False]), runtime)
    served = physics.served_model(resolve_model(model, CATALOG, "model"), "bf16", "bf16")
    return physics.step_model(served, p, o, np.array([float(d)]), dev)


def test_the_neuron_runtime_is_static_and_serial():
    eff = RUNTIME_EFFICIENCY["neuron"]
    # every published optimum-neuron deployment compiles 4,096 tokens (MAX_TOTAL_TOKENS)
    assert (eff.static_batch, eff.prefill_serial, eff.static_kv_tokens) == (True, True, 4096)
    # eta_bw 0.90 and 15 ms unchanged; eta_c 0.115 from the 8B TTFT (below)
    assert (eff.eta_bandwidth, eff.eta_compute, eff.step_overhead_s) == (0.90, 0.115, 0.015)
    # the other runtimes keep their continuous batching with chunked prompts
    assert not any(
        e.static_batch or e.prefill_serial for k, e in RUNTIME_EFFICIENCY.items() if k != "neuron"
    )


def test_a_runtime_spec_names_the_compiled_batch():
    assert split_compiled_batch("neuron@32") == ("neuron", 32)
    assert split_compiled_batch("neuron") == ("neuron", 0)
    assert split_compiled_batch(None) == (None, 0)
    with pytest.raises(ValueError, match="static-batch"):
        split_compiled_batch("vllm-cuda@32")  # paged engines run the batch they have
    with pytest.raises(ValueError, match="whole number"):
        split_compiled_batch("neuron@0")


def test_one_request_on_a_batch_32_deployment_pays_the_padded_step():
    # Llama-3.1-8B bf16 (16.06 GB, 131,072 B of KV per token, 32 layers) on 4 Inferentia2
    # (880 GB/s, 190 TFLOPS each), compiled for 32, one request at a time:
    #   weights 16.06 / 4 = 4.015 GB at 880 x 0.90 GB/s            = 5.069 ms
    #   KV 32 slots x 4,096 tokens x 131,072 B / 4 = 4.295 GB       = 5.423 ms
    #   decode FLOPs 32 x 0.1933 ms = 6.19 ms hide under 10.49 ms of memory
    #   15 ms + 2 x 32 all-reduces x 24 us (1.536) + 32 x 0.0117 ms = 16.91 ms
    #   = 27.40 ms; published inter-token latency 26.79 ms ('synchronous')
    sm = _step("llama-3-8b", "inferentia2", 4, "neuron@32", 1500, 174)
    step = float(sm.step_s(np.array([1.0]))[0])
    assert step * 1e3 == pytest.approx(27.40, abs=0.02)
    assert step * 1e3 == pytest.approx(26.79, rel=0.05)
    # flat below the compiled batch: the same step at 8 running (no other prompt pauses it
    # beyond the serial term, subtracted here)
    at8 = float(sm.step_s(np.array([8.0]))[0]) - 7 * float(sm.prefill_serial_s[0]) / 174
    assert at8 == pytest.approx(step)
    # the same deployment compiled at the running batch (plain "neuron", one request):
    # 1 slot of KV, 5.069 + 0.169 + 16.536 + 0.012 = 21.79 ms (what the estimator said
    # before session 62: 0.81x the published step)
    one = _step("llama-3-8b", "inferentia2", 4, "neuron", 1500, 174)
    assert float(one.step_s(np.array([1.0]))[0]) * 1e3 == pytest.approx(21.79, abs=0.02)


def test_its_ttft_is_the_prompt_graph_plus_one_padded_step():
    # prefill graph: (2 x 8.03e9 x 1,500 + 2 x 32 x 4,096 x 1,500^2) = 24.68 TFLOP at
    # 4 x 190 x 0.115 = 87.4 TFLOP/s -> 282.38 ms, + one weight read 5.07 + 1.54 ms
    # all-reduces = 288.98 ms; + the padded step 27.40 = 316.4 ms (published 315.79)
    est = estimate_inference(
        CATALOG,
        model="llama-3-8b",
        accelerator="inferentia2",
        tp_degree=4,
        batch=1,
        prompt_tokens=1500,
        output_tokens=174,
        runtime="neuron@32",
    )
    assert est["ttft_ms"] == pytest.approx(288.98 + 27.40, abs=0.1)
    assert est["ttft_ms"] == pytest.approx(315.79, rel=0.02)


def test_the_throughput_run_its_inter_token_latency_and_its_tokens():
    # the 'throughput' run: 5.175 req/s over 3 replicas, 16.94 s per request of which
    # 7.17 s to the first token -> 1.725 x 9.77 = 16.8 decoding at once (Little's law); each
    # makes 928.97 / 5.175 = 179.5 tokens. At b = 17 on the batch-32 graph:
    #   t = 27.40 (padded step at O = 180) + 16 other prompts x 288.98 / 180 = 53.09 ms
    #   (the run's own inter-token latency: 54.53 ms)
    #   replica time per token 53.09 + 288.98 / 180 = 54.70 ms -> 17 / 0.05470 = 310.8 tok/s,
    #   77.7 per chip (published 928.97 / 12 chips = 77.41)
    est = estimate_inference(
        CATALOG,
        model="llama-3-8b",
        accelerator="inferentia2",
        tp_degree=4,
        batch=17,
        prompt_tokens=1500,
        output_tokens=180,
        runtime="neuron@32",
    )
    assert est["decode_step_ms_derated"] == pytest.approx(53.09, abs=0.02)
    assert est["decode_step_ms_derated"] == pytest.approx(54.53, rel=0.05)
    per_chip = est["replica_output_tokens_per_s"] / 4
    assert per_chip == pytest.approx(17 / 0.05470 / 4, rel=1e-3)
    assert per_chip == pytest.approx(77.41, rel=0.02)


def test_trainium_70b_compiled_for_8_serving_one_request():
    # Llama-3-70B bf16 (141.1 GB, 327,680 B/token, 80 layers) on 16 Trainium, compiled for
    # 8, one request: 141.1 / 16 = 8.82 GB -> 11.135 ms; KV 8 x 4,096 x 327,680 B / 16 =
    # 0.671 GB -> 0.847 ms; 15 + 160 x 24 us = 18.84 ms; + 8 x 0.0366 ms = 31.11 ms
    # (published 31.94 ms at concurrency 1, tgi-results-batchsize-8.csv, SDK 2.19.1)
    sm = _step("llama-3-70b", "trainium", 16, "neuron@8", 1500, 250)
    step = float(sm.step_s(np.array([1.0]))[0])
    assert step * 1e3 == pytest.approx(31.11, abs=0.02)
    assert step * 1e3 == pytest.approx(31.94, rel=0.05)


def test_a_planned_static_batch_is_its_compiled_batch_and_caps_the_running_one():
    # planned (plain "neuron"): the planned batch is the compiled batch, so capacity is
    # b / (t(b) + s_p / O) and a named compiled batch caps what may run
    est = estimate_inference(
        CATALOG,
        model="llama-3-8b",
        accelerator="inferentia2",
        tp_degree=4,
        prompt_tokens=1500,
        output_tokens=180,
        tpot_slo_ms=60,
        runtime="neuron@16",
    )
    assert 1 <= est["batch"] <= 16
    over = estimate_inference(
        CATALOG,
        model="llama-3-8b",
        accelerator="inferentia2",
        tp_degree=4,
        batch=20,
        prompt_tokens=1500,
        output_tokens=180,
        runtime="neuron@16",
    )
    assert over["replica_output_tokens_per_s"] == 0.0


def test_cli_estimate_takes_a_compiled_batch():
    # `procure estimate inference --runtime neuron@32` runs one request in the padded
    # batch-32 step (m19's deployment: 27.4 ms against the measured 26.79 ms ITL, as the
    # test above), the plain name at its own batch of 1 (a shorter step); a compiled batch
    # on a runtime that compiles none, or not a whole number, is refused with the field named
    import json

    from typer.testing import CliRunner

    from solver.cli import app

    def run(runtime: str):
        args = ["estimate", "inference", "--model", "llama-3-8b", "--accelerator"]
        args += ["inferentia2", "--tp", "4", "--batch", "1", "--runtime", runtime, "--json"]
        return CliRunner().invoke(app, args)

    padded, own = (json.loads(run(r).output) for r in ("neuron@32", "neuron"))
    assert padded["decode_step_ms_derated"] > own["decode_step_ms_derated"]
    assert padded["decode_step_ms_derated"] == pytest.approx(26.79, rel=0.05)
    for bad in ("vllm-cuda@8", "neuron@x"):
        result = run(bad)
        assert result.exit_code != 0 and "--runtime" in result.output


def test_a_request_waits_for_a_slot_of_a_static_batch():
    # 4 slots, offered load a = 2.72 (rho 0.68), 11.8 s in a slot, p99: Erlang B_4 =
    # 0.1747 (B_1 = 2.72/3.72 = 0.731, B_2 = 0.4985, B_3 = 0.3113), C = 0.1747 / (1 - 0.68
    # x 0.8253) = 0.398, W_99 = 11.8 ln(0.398 / 0.01) / (4 - 2.72) / 2 = 16.98 s (the
    # M/M/c tail halved for fixed service times, Allen-Cunneen). One slot is an M/D/1
    # server: the same quantile as md1_wait_quantile_s (u = 0.5, S = 1 s: ln(50) = 3.912 s)
    from solver.physics.latency import md1_wait_quantile_s, slot_wait_quantile_s

    assert float(slot_wait_quantile_s(4, 2.72 / 11.8, 11.8, 0.99)) == pytest.approx(16.98, abs=0.01)
    one = float(slot_wait_quantile_s(1, 0.5, 1.0, 0.99))
    assert one == pytest.approx(float(md1_wait_quantile_s(1.0, 0.5, 0.99)))
    assert one == pytest.approx(3.912, abs=1e-3)
    # at a = c the queue grows without bound; few arrivals never wait at p99
    assert np.isinf(slot_wait_quantile_s(4, 4.0 / 11.8, 11.8, 0.99))
    assert float(slot_wait_quantile_s(32, 1.0 / 11.8, 11.8, 0.99)) == 0.0


def test_what_would_meet_names_the_utilisation_a_static_batch_needs():
    # Mistral 7B on one Inferentia2 chip, 1,000/250 tokens, 60 ms TPOT and 2 s TTFT at
    # p99: at 0.8 utilisation no batch meets (a request waits for one of a few slots, each
    # held ~8-12 s: Slot wait), so the estimate names the highest utilisation at which one
    # does, to the hundredth: some batch meets there and none at 0.01 more
    args = dict(
        model="mistral-7b",
        accelerator="inferentia2",
        tp_degree=1,
        prompt_tokens=1000,
        output_tokens=250,
        tpot_slo_ms=60,
        ttft_slo_ms=2000,
        slo_percentile=0.99,
    )
    out = estimate_inference(load_catalog(None), **args, utilisation=0.8)
    assert out["batch"] == 0
    rho = out["what_would_meet"]["utilisation"]
    assert 0.01 <= rho < 0.8
    assert estimate_inference(load_catalog(None), **args, utilisation=rho)["batch"] >= 1
    above = estimate_inference(load_catalog(None), **args, utilisation=round(rho + 0.01, 2))
    assert above["batch"] == 0
