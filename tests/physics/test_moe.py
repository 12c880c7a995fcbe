"""Mixture-of-experts and latent-attention physics worked by hand (issue 28).

Memory holds every expert, the FLOPs count the active parameters, and a decode step
reads the shared weights plus the experts its tokens hit: E u(n) per layer with
u(n) = 1 - (1 - k/E)^n for n tokens routed uniformly (solver/physics/inference.py).
The shapes are the shipped presets (catalogs/models.csv, from the models' config.json);
the device is built by hand with round efficiencies, as in test_inference.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from solver import physics
from solver.inputs.catalog import load_catalog
from solver.inputs.presets import resolve_model

GIB = 2**30
CATALOG = load_catalog()


def served(model_id: str, weights: str = "bf16", kv: str = "bf16") -> physics.ServedModel:
    """A preset as the serving physics sees it."""
    return physics.served_model(resolve_model(model_id, CATALOG, "test"), weights, kv)


def h200(eta_bw: float = 0.6, eta_c: float = 0.45) -> physics.Device:
    """One H200: 141 GiB, 4,800 GB/s, 989.4 dense BF16 TFLOPS, no step overhead."""
    return physics.Device(
        memory_gb=np.array([141 * GIB / 1e9]),
        bandwidth_gbps=np.array([4800.0]),
        peak_tflops=np.array([989.4]),
        eta_bandwidth=np.array([eta_bw]),
        eta_compute=np.array([eta_c]),
        step_overhead_s=np.array([0.0]),
        max_batch=np.array([256]),
        link_gbps_per_direction=np.array([450.0]),
        allreduce_latency_s=np.array([12e-6]),
        runtime=np.array(["test"], dtype=object),
        link=np.array(["nvlink"], dtype=object),
    )


def test_mixtral_memory_flops_and_decode_bytes_by_hand():
    m = served("mixtral-8x7b")  # 46.7B total, 12.9B active, 8 experts, 2 per token
    # Weights in memory: all 46.7e9 parameters x 2 B (BF16) = 93.4 GB.
    assert m.weights_gb == pytest.approx(93.4)
    # One expert over the 32 layers: (46.7 - 12.9)e9 / (8 - 2) = 5.6333e9 parameters
    # (its config: 3 x 4,096 x 14,336 x 32 = 5.637e9); all 8: 45.067e9 = 90.133 GB;
    # shared (attention, embeddings, norms, routers): 93.4 - 90.133 = 3.267 GB.
    assert m.params_per_expert == pytest.approx(5.6333e9, rel=1e-4)
    assert m.routed_weights_gb == pytest.approx(90.133, abs=1e-3)
    assert m.shared_weights_gb == pytest.approx(3.267, abs=1e-3)
    # FLOPs per generated token: 2 x N_active = 2 x 12.9e9 = 2.58e10 (a dense 46.7B:
    # 9.34e10); per training token 6 x 12.9e9 = 7.74e10 (no shape given: no attention term).
    assert 2 * m.active_params == pytest.approx(2.58e10)
    assert physics.training_flops(m.active_params, 1.0, "adamw", "none") == pytest.approx(7.74e10)
    # Decode step at batch 1 (one token): u(1) = 1 - (1 - 2/8)^1 = 0.25, 2 of 8 experts per
    # layer: 3.267 + 0.25 x 90.133 = 25.8 GB = the 12.9e9 active parameters x 2 B.
    assert m.experts * float(physics.experts_hit_share(8, 2, 1)) == pytest.approx(2.0)
    assert float(m.weights_read_gb(1)) == pytest.approx(25.8)
    # At batch 32: u(32) = 1 - 0.75^32 = 1 - 1.0045e-4 = 0.99990, 7.9992 experts per layer:
    # 3.267 + 0.99990 x 90.133 = 93.391 GB, all but 9 MB of the weights.
    assert m.experts * float(physics.experts_hit_share(8, 2, 32)) == pytest.approx(7.9992, abs=1e-4)
    assert float(m.weights_read_gb(32)) == pytest.approx(93.391, abs=1e-3)
    # KV cache as for Mistral 7B: 2 x 32 layers x 8 KV heads x 128 x 2 B = 131,072 B/token.
    assert m.kv_gb_per_token * 1e9 == pytest.approx(131_072)


def test_deepseek_v3_experts_and_latent_kv_by_hand():
    m = served("deepseek-v3", weights="fp8")  # 671B total, 37B active, 256 experts, 8/token
    # FP8 weights: 671e9 x 1 B = 671 GB in memory.
    assert m.weights_gb == pytest.approx(671.0)
    # One routed expert over the MoE layers: (671 - 37)e9 / (256 - 8) = 2.5565e9 (its
    # config: 3 x 7,168 x 2,048 x 58 MoE layers = 2.554e9); all 256: 654.45 GB; shared
    # (MLA attention, 3 dense layers, the shared expert, embeddings): 16.55 GB.
    assert m.routed_weights_gb == pytest.approx(654.45, abs=0.01)
    assert m.shared_weights_gb == pytest.approx(16.55, abs=0.01)
    # Batch 1: 8 of 256 experts per layer, 16.55 + 654.45 x 8/256 = 37.0 GB (= 37B x 1 B).
    assert float(m.weights_read_gb(1)) == pytest.approx(37.0)
    # Batch 32: (1 - 1/32)^32 = 0.36206, u = 0.63794, 256 x 0.63794 = 163.3 experts per
    # layer: 16.55 + 0.63794 x 654.45 = 434.05 GB, 12x the batch-1 read, not 32x.
    assert m.experts * float(physics.experts_hit_share(256, 8, 32)) == pytest.approx(
        163.31, abs=0.01
    )
    assert float(m.weights_read_gb(32)) == pytest.approx(434.05, abs=0.01)
    # MLA caches kv_lora_rank + qk_rope_head_dim = 512 + 64 = 576 values per layer:
    # 61 x 576 x 2 B (BF16 cache) = 70,272 B per token, where 2 x 61 layers x 128 heads x
    # 128 x 2 B = 3,997,696 B would be the uncompressed K and V (57x more).
    assert m.kv_gb_per_token * 1e9 == pytest.approx(70_272)
    assert physics.kv_bytes_per_token(61, 128, 128, 2) == pytest.approx(3_997_696)


def test_a_step_adds_the_prefill_chunks_experts():
    # P = 1,000 prompt and O = 400 output tokens: b/O of the steps also carry one prompt's
    # prefill chunk, whose 1,000 tokens hit every expert, u(b + 1000) ~ 1.
    # Mixtral, batch 1: f(1) = 0.25 + (1/400) x (1 - 0.25) = 0.251875.
    assert float(physics.routed_share_per_step(8, 2, 1, 1000, 400)) == pytest.approx(0.251875)
    # DeepSeek-V3, batch 32: 0.63794 + (32/400) x (1 - 0.63794) = 0.66691.
    assert float(physics.routed_share_per_step(256, 8, 32, 1000, 400)) == pytest.approx(
        0.66691, abs=1e-5
    )
    # Without a prompt the step reads what its decode tokens hit: u(b).
    assert float(physics.routed_share_per_step(256, 8, 32, 0, 400)) == pytest.approx(
        float(physics.experts_hit_share(256, 8, 32))
    )
    # At b >= O every step carries a chunk.
    assert float(physics.routed_share_per_step(8, 2, 400, 1000, 400)) == pytest.approx(1.0)


def test_mixtral_step_time_on_one_h200_by_hand():
    m = served("mixtral-8x7b")
    sm = physics.step_model(m, 1000, 400, np.array([1.0]), h200())
    # Batch 1: shared 3.2667 + 0.251875 x 90.1333 = 22.7028 routed + KV of 1,200 tokens x
    # 131,072 B = 0.15729 GB -> 26.1268 GB; at 4,800 GB/s x 0.6 = 2,880 GB/s: 9.0718 ms
    # (compute: 2 x 12.9e9 x 3.5 + 4 x 32 x 4,096 x 1,200 + 2 x 32 x 4,096 x 1000^2/400 =
    # 9.1585e10 FLOPs / (989.4e12 x 0.45) = 0.2057 ms: memory-bound).
    assert float(sm.step_s(1)[0]) * 1e3 == pytest.approx(9.0718, abs=1e-3)
    assert float(sm.compute_s_per_seq[0]) * 1e3 == pytest.approx(0.2057, abs=1e-4)
    # The data-sheet roofline: 26.1268 / 4,800 = 5.4431 ms.
    assert float(sm.roofline_s(1)[0]) * 1e3 == pytest.approx(5.4431, abs=1e-3)
    # Batch 32: 3.2667 + 0.9999076 x 90.1333 + 32 x 0.15729 = 98.4249 GB -> 34.175 ms
    # (compute 32 x 0.2057 = 6.58 ms): 32 / 34.175 ms = 936.4 output tokens/s.
    assert float(sm.step_s(32)[0]) * 1e3 == pytest.approx(34.175, abs=1e-3)
    assert 32 / float(sm.step_s(32)[0]) == pytest.approx(936.4, abs=0.1)
    # A dense model of the same 46.7B reads all 93.4 GB at batch 1: 93.557 / 2,880 =
    # 32.485 ms, 3.6x the MoE step; at batch 32 the two read nearly the same bytes.
    dense = physics.ServedModel(46.7e9, 46.7e9, 32, 8, 128, 4096, 32, 2, 2)
    dense_sm = physics.step_model(dense, 1000, 400, np.array([1.0]), h200())
    assert float(dense_sm.step_s(1)[0]) * 1e3 == pytest.approx(32.485, abs=1e-3)


def test_largest_batch_within_the_slo_is_the_brute_force_one():
    # t(b) is concave in b for a mixture of experts, so the batch within the SLO is found
    # by bisection; it must be the largest b in 1..256 a scan finds, and b / t(b) rises
    # with b (so the largest is the best).
    m = served("deepseek-v3", weights="fp8")
    dev = h200()
    d = np.array([8.0])
    sm = physics.step_model(m, 1000, 400, d, dev)
    b = np.arange(1, 257, dtype=float)
    t = np.array([float(sm.step_s(x)[0]) for x in b])
    assert np.all(np.diff(t) > 0) and np.all(np.diff(b / t) > 0)
    for slo_s in (t[0] * 0.99, t[0], t[9] + 1e-7, t[100], 1.0):
        expected = int(b[t <= slo_s + 1e-12].max()) if (t <= slo_s + 1e-12).any() else 0
        assert int(sm.largest_batch_within(slo_s, 256)[0]) == expected
        res = physics.best_decode(
            m,
            prompt_tokens=1000,
            output_tokens=400,
            tpot_slo_s=slo_s,
            ttft_slo_s=None,
            d=d,
            dev=dev,
        )
        assert int(res.batch[0]) == expected


def test_a_dense_model_reads_all_its_weights_at_any_batch():
    # One expert used by every token: u(n) = 1 - 0^n = 1; no routed weights; the step model
    # keeps the closed form (weights read once per step whatever the batch).
    m = served("llama-3-8b")
    assert not m.is_moe and m.routed_weights_gb == 0.0
    assert m.shared_weights_gb == m.weights_gb
    assert float(physics.experts_hit_share(1, 1, 32)) == 1.0
    assert float(m.weights_read_gb(32)) == m.weights_gb
    sm = physics.step_model(m, 1000, 400, np.array([1.0]), h200())
    assert float(sm.step_s(32)[0]) == pytest.approx(
        float(sm.weights_s[0] + 32 * sm.kv_s_per_seq[0]), rel=1e-12
    )


def test_expert_memory_sets_the_smallest_replica_and_cluster():
    # Serving: the replica holds every expert. Mixtral's 93.4 GB (BF16) exceed one H100
    # (85.9 GB x 0.9 = 77.3 GB usable) though a step at batch 1 reads only 25.8 GB: one
    # device does not fit, two do.
    m = served("mixtral-8x7b")
    acc = CATALOG.accelerators.loc["h100-sxm"]
    dev = physics.device_figures(physics.one_row_table(acc), "bf16", True)

    def batch_on(devices: float) -> physics.DecodeResult:
        return physics.best_decode(
            m,
            prompt_tokens=1000,
            output_tokens=400,
            tpot_slo_s=None,
            ttft_slo_s=None,
            d=np.array([devices]),
            dev=dev,
        )

    one, two = batch_on(1.0), batch_on(2.0)
    assert int(one.batch[0]) == 0 and "do not fit" in one.reason[0]
    assert int(two.batch[0]) > 0
    # Training: ZeRO-3 holds the states of all 46.7B parameters, 46.7e9 x 18 B = 840.6 GB,
    # over devices with 77.31 - 18.25 GB of activations (seq 4,096, selective recompute:
    # 34 x 4,096 x 4,096 x 32 layers = 18.25 GB) = 59.06 GB free: ceil(840.6 / 59.06) = 15
    # H100s, where the 12.9B active parameters alone would ask for ceil(232.2 / 59.06) = 4.
    act_gb = physics.activation_gb_per_device(
        seq_len=4096,
        micro_batch=1,
        hidden_size=4096,
        layers=32,
        attention_heads=32,
        recompute="selective",
        params=m.params,
    )
    assert act_gb == pytest.approx(18.254, abs=1e-3)
    n = physics.training_min_devices(m.params, "adamw", act_gb, float(acc["memory_gb"]))
    assert int(n) == 15


def test_capacity_factor_scales_only_the_routed_experts_flops():
    # Mixtral 8x7B: k e = 2 x (46.7 - 12.9)e9 / (8 - 2) = 11.2667e9 routed parameters a
    # token uses; the other 1.6333e9 (attention, embeddings, routers) are not padded.
    m = resolve_model("mixtral-8x7b", CATALOG, "test")
    routed = physics.routed_expert_active_params(m.params, m.active_params, m.experts, 2)
    assert routed == pytest.approx(11.2667e9, rel=1e-4)
    # 6 x (12.9e9 + 0.25 x 11.2667e9) = 6 x 15.7167e9 = 9.43e10 per token at 1.25;
    # 6 x (12.9e9 - 0.5 x 11.2667e9) = 6 x 7.2667e9 = 4.36e10 at 0.5 (half the buffer).
    at = {
        cf: physics.training_flops(
            m.active_params, 1.0, "adamw", "none", routed_expert_params=routed, capacity_factor=cf
        )
        for cf in (0.5, 1.0, 1.25)
    }
    assert at[1.0] == pytest.approx(7.74e10)
    assert at[1.25] == pytest.approx(9.43e10, rel=1e-4)
    assert at[0.5] == pytest.approx(4.36e10, rel=1e-4)
    # a dense model has no routed experts: nothing to scale
    d = resolve_model("llama-3-8b", CATALOG, "test")
    assert physics.routed_expert_active_params(d.params, d.active_params, 1, 1) == 0.0
