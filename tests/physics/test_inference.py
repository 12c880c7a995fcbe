"""Worked checks of the serving physics (DESIGN.md sections 4 and 7), arithmetic in comments.

The device is built by hand (round efficiencies) so these checks hold whatever the
runtime table in solver/physics/constants.py says; the table's own figures are checked
against published measurements by bench/accuracy/accuracy.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from solver import physics
from solver.inputs.catalog import load_catalog

GIB = 2**30

# A 7B dense model (Llama-2-7B-like: 32 layers, 32 KV heads of 128, hidden 4096), BF16.
MODEL_7B = physics.ServedModel(
    params=7e9,
    active_params=7e9,
    layers=32,
    kv_heads=32,
    head_dim=128,
    hidden_size=4096,
    attention_heads=32,
    weight_bytes=2,
    kv_bytes=2,
)


def h100(eta_bw: float = 0.6, eta_c: float = 0.45, overhead_s: float = 0.0) -> physics.Device:
    """One H100 SXM: 80 GiB, 3,350 GB/s, 989.4 dense BF16 TFLOPS (NVIDIA data sheet)."""
    return physics.Device(
        memory_gb=np.array([80 * GIB / 1e9]),
        bandwidth_gbps=np.array([3350.0]),
        peak_tflops=np.array([989.4]),
        eta_bandwidth=np.array([eta_bw]),
        eta_compute=np.array([eta_c]),
        step_overhead_s=np.array([overhead_s]),
        max_batch=np.array([256]),
        link_gbps_per_direction=np.array([450.0]),
        allreduce_latency_s=np.array([12e-6]),
        runtime=np.array(["test"], dtype=object),
        link=np.array(["nvlink"], dtype=object),
    )


def decode_1000_400(model=MODEL_7B, tpot_slo_s=None):
    """best_decode of 1,000 prompt / 400 output tokens on one H100 (no TTFT SLO)."""
    return physics.best_decode(
        model,
        prompt_tokens=1000,
        output_tokens=400,
        tpot_slo_s=tpot_slo_s,
        ttft_slo_s=None,
        d=np.array([1.0]),
        dev=h100(),
    )


def test_step_reads_weights_once_and_kv_at_the_mean_context():
    # KV per token 2 x 32 x 32 x 128 x 2 B = 524,288 B; prompt 1,000, output 400: the mean
    # context is 1,000 + 400/2 = 1,200 tokens -> 0.6291 GB per sequence.
    # Batch 1 at the data sheet: (14 + 0.6291) GB / 3,350 GB/s = 4.367 ms (memory-bound;
    # compute is 5.03e10 FLOPs / 989.4e12 = 0.05 ms).
    sm = physics.step_model(MODEL_7B, 1000, 400, np.array([1.0]), h100())
    assert float(sm.roofline_s(1)[0]) * 1e3 == pytest.approx(4.367, abs=0.001)
    # Derated at 60% of bandwidth: 4.367 / 0.6 = 7.278 ms.
    assert float(sm.step_s(1)[0]) * 1e3 == pytest.approx(7.278, abs=0.001)
    # Batch 64: weights once + 64 KV reads = (14 + 64 x 0.6291) / (3,350 x 0.6) = 26.998 ms;
    # compute 64 x 5.028e10 / (989.4e12 x 0.45) = 7.23 ms, so memory-bound:
    # 64 / 26.998 ms = 2,370.6 output tokens/s.
    assert float(sm.step_s(64)[0]) * 1e3 == pytest.approx(26.998, abs=0.001)
    assert 64 / float(sm.step_s(64)[0]) == pytest.approx(2370.6, abs=0.1)


def test_chunked_prefill_puts_the_prompt_in_the_steps():
    # FLOPs per sequence-step: linear layers on 1 output + 1000/400 = 2.5 prompt tokens,
    # 2 x 7e9 x 3.5 = 4.9e10; attention of the output token over 1,200 tokens,
    # 4 x 32 x 4,096 x 1,200 = 6.29e8; causal prompt attention 2 x 32 x 4,096 x 1000^2 / 400
    # = 6.55e8. Total 5.0284e10 -> at 989.4e12 x 0.45 = 4.4523e14: 0.11294 ms per sequence.
    sm = physics.step_model(MODEL_7B, 1000, 400, np.array([1.0]), h100())
    assert float(sm.compute_s_per_seq[0]) * 1e3 == pytest.approx(0.11294, abs=1e-5)
    # Without a prompt the same step does 2 x 7e9 + 4 x 32 x 4096 x 200 = 1.4105e10 FLOPs:
    # prefill work shared with the decode steps is 3.56x the decode work here.
    bare = physics.step_model(MODEL_7B, 0, 400, np.array([1.0]), h100())
    assert float(sm.compute_s_per_seq[0] / bare.compute_s_per_seq[0]) == pytest.approx(
        5.0284e10 / 1.4105e10, rel=1e-3
    )


def test_batch_limits_memory_then_slo():
    # Memory: 80 GiB = 85.899 GB x 0.9 - 14 GB weights = 63.309 GB free; 0.6291 GB per
    # sequence at the mean context -> floor(100.6) = 100 sequences.
    free = decode_1000_400()
    assert float(free.free_gb[0]) == pytest.approx(63.309, abs=0.001)
    assert int(free.b_max_memory[0]) == 100 and int(free.batch[0]) == 100
    # A 20 ms time per output token: weights 14 / 2,010 = 6.965 ms, each sequence adds
    # 0.6291 / 2,010 = 0.3130 ms -> b <= (20 - 6.965) / 0.3130 = 41.6 -> 41.
    slo = decode_1000_400(tpot_slo_s=0.020)
    assert int(slo.batch[0]) == 41
    assert float(slo.step_s[0]) <= 0.020
    # A 5 ms SLO is below the weight read alone: infeasible, and said so.
    tight = decode_1000_400(tpot_slo_s=0.005)
    assert int(tight.batch[0]) == 0 and "SLO" in tight.reason[0]
    assert float(tight.tokens_per_s[0]) == 0.0


def test_tensor_parallel_all_reduce_latency_per_layer():
    # Two all-reduces per layer: 2 x 32 x 12 us = 0.768 ms per step at TP2.
    # Bytes: (1 + 2.5) tokens x 4,096 x 2 B x ring 2(2-1)/2 = 1 per layer pair, 2 x 32 layers,
    # over 450 GB/s x 0.7 -> 2 x 32 x 3.5 x 8,192 / 315e9 = 5.825 us per sequence.
    sm = physics.step_model(MODEL_7B, 1000, 400, np.array([2.0]), h100())
    assert float(sm.fixed_s[0]) * 1e6 == pytest.approx(768.0)
    assert float(sm.comm_s_per_seq[0]) * 1e6 == pytest.approx(5.825, abs=0.001)
    # One device: no all-reduce.
    assert float(physics.step_model(MODEL_7B, 1000, 400, np.array([1.0]), h100()).fixed_s[0]) == 0


def test_weights_that_do_not_fit_are_reported_not_zeroed():
    # 70B in BF16 = 140 GB > 85.9 GB x 0.9 on one H100: no batch, with the reason.
    big = physics.ServedModel(70e9, 70e9, 80, 8, 128, 8192, 64, 2, 2)
    res = decode_1000_400(big)
    assert int(res.batch[0]) == 0
    assert "do not fit" in res.reason[0]


def test_hbm_memory_is_gib_and_gddr_is_gb():
    # An "80 GB" H100 holds 80 GiB = 85.899e9 bytes (nvidia-smi: 81,559 MiB usable of
    # 81,920); an L4 "24 GB" (GDDR6, ECC on) reports about 24e9 bytes.
    cat = load_catalog()
    assert cat.accelerators.at["h100-sxm", "memory_gb"] == pytest.approx(85.899, abs=0.001)
    assert cat.accelerators.at["h100-sxm", "memory_label_gb"] == 80
    assert cat.accelerators.at["l4", "memory_gb"] == pytest.approx(24.0)


def test_fp4_runs_on_the_fp4_peak_where_the_hardware_has_one():
    # B200: 9,000 dense FP4 TFLOPS (NVIDIA HGX B200 data sheet, 18,000 sparse / 2);
    # an H100 has no FP4 path: FP4 weights dequantise and multiply at BF16 (989.4).
    cat = load_catalog()
    acc = cat.accelerators.loc[["b200", "h100-sxm"]]
    peaks = physics.compute_peak_tflops(acc, "fp4")
    assert list(peaks) == [9000.0, 989.4]
    assert list(physics.compute_peak_tflops(acc, "int4")) == [2250.0, 989.4]


def test_calibration_factor_is_the_geometric_mean():
    # measured / physics = 0.5 and 0.8 -> sqrt(0.4) = 0.63246; spread |ln(0.5/0.63246)| =
    # 0.2350; a zero point is left out.
    factor, points, spread = physics.calibration_factor(
        np.array([1.0, 4.0, 0.0]), np.array([2.0, 5.0, 3.0])
    )
    assert factor == pytest.approx(0.63246, abs=1e-5)
    assert points == 2
    assert spread == pytest.approx(0.2350, abs=1e-4)


def test_runtime_whose_times_add_sums_memory_and_compute_and_pays_its_step_overhead():
    # Issue 33: a runtime with overlap=False (Gaudi, constants.py) charges memory time plus
    # compute time, and every runtime pays its fixed step overhead (here 5 ms).
    # Per step on one H100 at 60% / 45%: weights 14e9 / (3,350e9 x 0.6) = 6.965 ms; KV per
    # sequence 0.6291 GB / 2,010 GB/s = 0.3130 ms; FLOPs per sequence 2 x 7e9 x (1 + 1000/
    # 400) + 4 x 32 x 4096 x 1,200 + 2 x 32 x 4096 x 1000^2 / 400 = 5.028e10 -> / (989.4e12
    # x 0.45) = 0.1129 ms.
    import dataclasses

    adds = dataclasses.replace(h100(overhead_s=0.005), overlap=np.array([False]))
    sm = physics.step_model(MODEL_7B, 1000, 400, np.array([1.0]), adds)
    # batch 64: memory 6.965 + 64 x 0.3130 = 27.00 ms, compute 64 x 0.1129 = 7.23 ms:
    # sum 34.23 + 5 = 39.23 ms; overlapping (max) the same runtime takes 27.00 + 5 = 32.00
    assert float(sm.step_s(64)[0]) * 1e3 == pytest.approx(39.23, abs=0.01)
    overlaps = physics.step_model(MODEL_7B, 1000, 400, np.array([1.0]), h100(overhead_s=0.005))
    assert float(overlaps.step_s(64)[0]) * 1e3 == pytest.approx(32.00, abs=0.01)
    # the closed-form batch limit under a 50 ms TPOT SLO when the times add:
    # (50 - 6.965 - 5) / (0.3130 + 0.1129) = 38.035 / 0.4259 = 89.3 -> 89 sequences
    res = physics.best_decode(
        MODEL_7B,
        prompt_tokens=1000,
        output_tokens=400,
        tpot_slo_s=0.05,
        ttft_slo_s=None,
        d=np.array([1.0]),
        dev=adds,
    )
    assert int(res.batch[0]) == 89 and float(res.step_s[0]) <= 0.05


def test_neuron_runtime_reproduces_its_two_fitted_points_within_the_fit_band():
    # constants.py "neuron": eta_bw 0.90, 15 ms per step, 24 us per NeuronLink all-reduce.
    # Llama-3.1-8B (8.03e9 params, 32 layers) on 4 Inferentia2 chips at batch 1: weights
    # 16.06 GB / (4 x 880 GB/s x 0.9) = 5.07 ms + 15 + 64 x 24 us = 1.54 -> 21.6 ms (+ KV
    # and all-reduce bytes, < 0.3 ms) against the measured 26.79 ms (0.81x); Llama-3-70B
    # on 12 chips: 141.1 / (12 x 880 x 0.9) = 14.85 + 15 + 160 x 24 us = 3.84 -> 33.7 ms
    # against 31.61 (1.07x). A single bandwidth fraction without the overhead cannot fit
    # both: the old 0.18 gave 26.8 and 78.9 ms.
    from solver.physics.constants import RUNTIME_EFFICIENCY

    neuron = RUNTIME_EFFICIENCY["neuron"]
    assert (neuron.eta_bandwidth, neuron.step_overhead_s) == (0.90, 0.015)
    cat = load_catalog()
    inf2 = physics.one_row_table(cat.accelerators.loc["inferentia2"])
    for name, chips, measured_ms, low, high in (
        ("llama-3-8b", 4, 26.79, 0.75, 0.85),
        ("llama-3-70b", 12, 31.61, 1.03, 1.12),
    ):
        from solver.analyses.estimate import resolve_model

        model = physics.served_model(resolve_model(name, cat, "--model"), "bf16", "bf16")
        dev = physics.device_figures(inf2, "bf16", np.array([True]))
        sm = physics.step_model(model, 1500, 250, np.array([float(chips)]), dev)
        ratio = float(sm.step_s(1)[0]) * 1e3 / measured_ms
        assert low <= ratio <= high, (name, ratio)


def test_tpu_runtimes_reproduce_their_two_published_steps():
    # constants.py "tpu" / "jetstream": eta_bw 0.60, no step overhead, 24 us per ICI
    # all-reduce; JetStream reads each sequence's whole 2,048-token dense cache per step.
    # Llama-3-70B bf16 (141.1 GB, 80 layers, 8 KV heads x 128: 327,680 B per token) on 8
    # TPU v6e (1,638 GB/s) at batch 64, 1000/1000 (mean context 1,500): weights 141.1 /
    # (8 x 1,638 x 0.6) = 17.95 ms, KV 64 x 1,500 x 327,680 B / (8 x 1,638e9 x 0.6) = 4.00
    # ms, 160 x 24 us = 3.84 ms -> 25.8 ms, + the all-reduce bytes (160 x 128 tokens x 8,192
    # x 2 B x 2 x 7/8 over 400 GB/s x 0.7, 2.2 ms) -> 28.0 ms with the prompts' compute spread
    # over every step. Run as chunks (solver/physics/inference.py, "Prefill chunks": vLLM
    # TPU's budget 2,048 > P, so each of the 63 other sequences' 1,000-token prompts rides one
    # step whole): q = 63 x 1,000 / (1,000 x 1,000) = 0.063 of the steps carry a 35.26 ms
    # prompt (2 x 70.6e9 x 1,000 + 2 x 80 x 8,192 x 1,000^2 FLOPs / (8 x 918 TFLOPS x 0.55)),
    # decode compute 4.55 - 0.063 x 35.26 = 2.33 ms: 0.937 x 21.95 + 0.063 x (2.33 + 35.26)
    # = 22.93 ms + 3.84 + 2.10 -> 28.87 ms; measured 64 / 2,494.80 tok/s =
    # 25.65 ms (vLLM TPU recipe): 1.13x. Llama 2 7B bf16 (13.48 GB, 32 layers, 32 KV heads
    # x 128: 524,288 B per token) on 8 TPU v5e (819 GB/s) at batch 88 under JetStream:
    # weights 3.43 ms, KV 88 x 2,048 x 524,288 / (8 x 819e9 x 0.6) = 24.04 ms, 64 x 24 us =
    # 1.54 ms, + 0.71 ms of all-reduce bytes -> 29.7 ms; measured 88 / 3,061.78 = 28.74 ms
    # (1.03x). Paged (the `tpu` runtime), the same batch would read 88 x 688 tokens (218 +
    # 940/2): 8.1 ms of KV, a 13.7 ms step (0.48x) that would predict 2.1x the measured
    # rate, which is the error the dense cache removes.
    from solver.analyses.estimate import resolve_model

    cat = load_catalog()
    cases = (
        ("tpu-v6e", "llama-3-70b", "tpu", 1000, 1000, 64, 25.65, 1.12, 1.13),
        ("tpu-v5e", "llama-2-7b", "jetstream", 218, 940, 88, 28.74, 0.98, 1.06),
        ("tpu-v5e", "llama-2-7b", "tpu", 218, 940, 88, 28.74, 0.40, 0.50),
    )
    for acc, name, runtime, p, o, b, measured_ms, low, high in cases:
        table = physics.one_row_table(cat.accelerators.loc[acc])
        dev = physics.device_figures(table, "bf16", np.array([False]), runtime=runtime)
        model = physics.served_model(resolve_model(name, cat, "--model"), "bf16", "bf16")
        sm = physics.step_model(model, p, o, np.array([8.0]), dev)
        ratio = float(sm.step_s(b)[0]) * 1e3 / measured_ms
        assert low <= ratio <= high, (acc, runtime, ratio)


def test_vllm_rocm_step_adds_memory_and_compute_as_fitted_on_mlperf_mi300x_and_mi325x():
    # constants.py "vllm-rocm": eta_bw 0.55, eta_c 0.94 of the device's sustained GEMM rate
    # (SUSTAINED_COMPUTE_SHARE, AMD's measured max-achievable FP8 FLOPs: MI300X 1,273,
    # MI325X 1,519 TFLOPS against the same 2,614.9 data-sheet peak), 2 ms per step, times
    # added. Llama 2 70B FP8 (68.98 GB, 80 layers, 8 KV heads x 128 in FP8: 163,840 B per
    # token) at batch 256, 219/294 (mean context 366); FLOPs 256 x [2 x 68.98e9 x (1 +
    # 219/294) + 4 x 80 x 8,192 x 366 + 2 x 80 x 8,192 x 219^2 / 294] = 256 x 241.9e9 =
    # 61.93 TFLOP: / (1,273e12 x 0.94) = 51.75 ms on the MI300X, / (1,519e12 x 0.94) =
    # 43.37 ms on the MI325X.
    #   one MI300X (5,300 GB/s): weights 68.98 / (5,300 x 0.55) = 23.66 ms; KV 256 x 366 x
    #     163,840 B / (5,300e9 x 0.55) = 5.27 ms; + 2 ms -> 82.68 ms, 256 / 0.08268 = 3,096
    #     tok/s against MLPerf v4.1's 2,939 (1.05x; 1.11x before session 61);
    #   one MI325X (6,000 GB/s): 68.98 / 3,300 = 20.90 ms, 15.35 GB / 3,300 = 4.65 ms ->
    #     70.92 ms, 3,609 tok/s against MLPerf v5.0's 33,928.1 / 8 = 4,241 (0.85x; was 0.81x).
    from solver.analyses.estimate import resolve_model

    cat = load_catalog()
    model = physics.served_model(resolve_model("llama-2-70b", cat, "--model"), "fp8", "fp8")
    for acc, step_ms, tok_s in (("mi300x", 82.68, 3096), ("mi325x", 70.92, 3609)):
        table = physics.one_row_table(cat.accelerators.loc[acc])
        dev = physics.device_figures(table, "fp8", np.array([False]))
        assert str(dev.runtime[0]) == "vllm-rocm" and not bool(np.asarray(dev.overlap)[0])
        sm = physics.step_model(model, 219, 294, np.array([1.0]), dev)
        assert float(sm.step_s(256)[0]) * 1e3 == pytest.approx(step_ms, abs=0.05), acc
        assert 256 / float(sm.step_s(256)[0]) == pytest.approx(tok_s, rel=0.001), acc


def test_jetstream_dense_cache_counts_in_the_memory_limit_on_batch():
    # JetStream keeps a dense 2,048-token KV cache per decode slot (constants.py
    # JETSTREAM_CACHE_TOKENS), so memory holds 2,048 tokens for every sequence, not the
    # mean context. Llama 2 7B bf16 (13.48 GB of weights; 2 x 32 layers x 32 KV heads x
    # 128 x 2 B = 524,288 B per token) on 8 TPU v5e (16 GiB = 17.18e9 B each), 10% kept
    # free: 8 x 17.18 x 0.9 = 123.70 GB - 13.48 = 110.22 GB for the cache.
    #   dense: 110.22 / (2,048 x 524,288e-9 GB = 1.0737 GB) = 102.6 -> 102 slots;
    #   paged (`tpu`), at the mean context 218 + 940/2 = 688: 110.22 / 0.3607 = 305.5 ->
    #     305, above the runtime's 256 sequences, so 256 decode.
    # The published JetStream + MaxText run of this shape used 88 slots (m59), within 102.
    from solver.analyses.estimate import resolve_model

    cat = load_catalog()
    table = physics.one_row_table(cat.accelerators.loc["tpu-v5e"])
    model = physics.served_model(resolve_model("llama-2-7b", cat, "--model"), "bf16", "bf16")
    got = {}
    for runtime in ("jetstream", "tpu"):
        dev = physics.device_figures(table, "bf16", np.array([False]), runtime=runtime)
        res = physics.best_decode(
            model,
            prompt_tokens=218,
            output_tokens=940,
            tpot_slo_s=None,
            ttft_slo_s=None,
            d=np.array([8.0]),
            dev=dev,
        )
        assert float(res.free_gb[0]) == pytest.approx(110.22, abs=0.01)
        got[runtime] = (int(res.b_max_memory[0]), int(res.batch[0]))
    assert got == {"jetstream": (102, 102), "tpu": (305, 256)}
    # a batch the dense cache cannot hold is refused, where the paged cache holds it
    dev = physics.device_figures(table, "bf16", np.array([False]), runtime="jetstream")
    res = physics.best_decode(
        model,
        prompt_tokens=218,
        output_tokens=940,
        tpot_slo_s=None,
        ttft_slo_s=None,
        d=np.array([8.0]),
        dev=dev,
        batch=103,
    )
    assert int(res.batch[0]) == 0 and "does not fit memory" in str(res.reason[0])


def test_sustained_compute_share_is_amds_measured_gemm_rate_over_the_data_sheet():
    # AMD_MAF (catalogs/SOURCES.md): FP8 1,273 / 2,614.9 = 0.4868 on the MI300X and 1,519 /
    # 2,614.9 = 0.5809 on the MI325X; BF16 708 / 1,307.4 = 0.5415 and 843 / 1,307.4 =
    # 0.6448. INT8 takes the FP8 share; an AMD device without its own (MI250X) takes the
    # MI300X's; a vendor with none (NVIDIA) keeps the data-sheet peak (1).
    ids = np.array(["mi300x", "mi325x", "mi250x", "h100-sxm"], dtype=object)
    vendors = np.array(["amd", "amd", "amd", "nvidia"], dtype=object)
    fp8 = physics.sustained_compute_share(ids, vendors, "fp8")
    assert list(fp8) == pytest.approx([0.4868, 0.5809, 0.4868, 1.0], abs=1e-4)
    assert list(physics.sustained_compute_share(ids, vendors, "int8")) == pytest.approx(list(fp8))
    bf16 = physics.sustained_compute_share(ids, vendors, "bf16")
    assert list(bf16) == pytest.approx([0.5415, 0.6448, 0.5415, 1.0], abs=1e-4)
    # a table without ids: each device takes its vendor's default
    assert list(physics.sustained_compute_share(None, vendors, "fp8")) == pytest.approx(
        [0.4868, 0.4868, 0.4868, 1.0], abs=1e-4
    )
