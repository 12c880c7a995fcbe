"""Worked checks of the physics (DESIGN.md section 4), arithmetic in the comments."""

from __future__ import annotations

import pytest

from solver import physics

H100_BW_GBPS = 3350.0  # NVIDIA H100 SXM datasheet, HBM3
H100_BF16_DENSE_TFLOPS = 989.4  # datasheet 1,979 "with sparsity" / 2


def test_adamw_mixed_precision_is_18_bytes_per_param_126_gb_for_7b():
    # bf16 weights 2 + fp32 master 4 + fp32 grads 4 + Adam m 4 + v 4 = 18 B/param
    assert physics.training_state_bytes_per_param("adamw") == 18
    # 7e9 x 18 B = 126e9 B = 126 GB before activations (one device, no sharding)
    per_device = physics.training_memory_per_device_gb(7e9, "adamw", 1, activation_gb=0.0)
    assert float(per_device) == pytest.approx(126.0)


def test_zero3_shards_states_over_devices():
    # 126 GB of states over 4 devices = 31.5 GB each, plus 10 GB activations = 41.5 GB
    assert float(physics.training_memory_per_device_gb(7e9, "adamw", 4, 10.0)) == pytest.approx(
        41.5
    )
    # on 80 GB devices with 10% headroom: 72 - 10 = 62 GB room; 126 / 62 = 2.03 -> 3 devices
    assert int(physics.training_min_devices(7e9, "adamw", 10.0, 80.0, 0.10)) == 3
    # activations alone bigger than the device: no group fits
    assert int(physics.training_min_devices(7e9, "adamw", 75.0, 80.0, 0.10)) == 0


def test_llama3_70b_kv_cache_32_sequences_of_8k_is_85_9_gb():
    # 2 x 80 layers x 8 KV heads x 128 head dim x 2 B = 327,680 B per token
    per_token = physics.kv_bytes_per_token(80, 8, 128, 2)
    assert per_token == 327_680
    # x 32 sequences x 8,192 tokens = 85,899,345,920 B = 85.9 GB
    assert per_token * 32 * 8192 / 1e9 == pytest.approx(85.9, abs=0.05)


def test_13b_on_1t_tokens_is_54800_h100_hours_at_40pct_mfu():
    # shape unknown: 6 x 13e9 x 1e12 = 7.8e22 FLOPs (no attention term)
    flops = physics.training_flops(13e9, 1e12, "adamw", "selective")
    assert flops == pytest.approx(7.8e22)
    # 7.8e22 / (989.4e12 x 0.40 x 3600) = 54,747 H100-hours (one device, no scaling loss)
    hours = physics.training_hours(flops, 1, H100_BF16_DENSE_TFLOPS, 0.40)
    assert float(hours) == pytest.approx(54_747, rel=1e-3)
    # 64 devices: 54,747 / 64 = 855.4 h; losing 6.94% of the wall clock to spot
    # preemptions (see test_spot_lost_fraction_worked_case): 855.4 / (1 - 0.0694) = 919.3 h
    lost = 4 / 24 * (0.5 / 2 + 10 / 60)
    assert float(physics.training_hours(flops, 64, 989.4, 0.40, 1.0, lost)) == pytest.approx(
        919.3, rel=1e-3
    )
    # a job that would lose all its wall clock never finishes
    assert float(physics.training_hours(flops, 64, 989.4, 0.40, 1.0, 1.0)) == float("inf")


def test_13b_flops_with_attention_at_4k_context_is_12_9_pct_more():
    # attention: 12 x L x d x s per token = 12 x 40 x 5120 x 4096 = 10,066,329,600
    # (Narayanan et al. 2021 eq. 3 / PaLM appendix B); weights 6N = 7.8e10 per token
    flops = physics.training_flops(
        13e9, 1e12, "adamw", "selective", layers=40, hidden_size=5120, seq_len=4096
    )
    assert flops == pytest.approx((7.8e10 + 10_066_329_600) * 1e12)
    # 1.0066e10 / 7.8e10 = +12.9%
    assert flops / 7.8e22 == pytest.approx(1.129, abs=5e-4)
    # full recompute: one more forward of both terms, 8N + 16 L d s
    # = 1.04e11 + 16 x 40 x 5120 x 4096 (1.3422e10) = 1.17422e11 per token
    full = physics.training_flops(13e9, 1.0, "adamw", "full", 40, 5120, 4096)
    assert full == pytest.approx(117_421_772_800)
    # LoRA skips the frozen weights' gradients (4N) but back-propagates through attention:
    # 5.2e10 + 1.0066e10 = 6.2066e10 per token
    lora = physics.training_flops(13e9, 1.0, "lora", "selective", 40, 5120, 4096)
    assert lora == pytest.approx(62_066_329_600)


def test_7b_on_1t_tokens_is_about_30000_h100_hours():
    # the developers' guide: 6 x 7e9 x 1e12 / (989.4e12 x 0.4 x 3600) = 29,478 h, "about 30,000"
    hours = physics.training_hours(
        physics.training_flops(7e9, 1e12, "adamw", "none"), 1, 989.4, 0.40
    )
    assert float(hours) == pytest.approx(29_478, rel=1e-3)


def test_full_recompute_and_lora_flops():
    assert physics.training_flops(1e9, 1e9, "adamw", "full") == 8e18  # 8ND
    assert physics.training_flops(1e9, 1e9, "lora", "selective") == 4e18  # 4ND
    assert physics.training_state_bytes_per_param("qlora") == pytest.approx(0.5 + 0.18)


def test_default_mfu_is_the_published_run_with_its_scale():
    # H100 BF16: Llama 3 405B at 8k context, 400 TFLOPs/GPU on 16,384 H100 = 41%
    # (Dubey et al. 2024, arXiv 2407.21783, Table 4)
    h100 = physics.default_mfu("h100-sxm", "nvidia", "datacenter", 900.0, "bf16", 989.4, 989.4)
    assert (h100.mfu, h100.measured_at_accelerators) == (0.41, 16_384)
    # H100 FP8 against the FP8 peak: NeMo 24.07's lowest Llama row, 697 / 1,979 = 35%,
    # in a table running to 512 GPUs
    fp8 = physics.default_mfu("h100-sxm", "nvidia", "datacenter", 900.0, "fp8", 989.4, 1978.9)
    assert (fp8.mfu, fp8.measured_at_accelerators) == (0.35, 512)
    # TPU v5p: MaxText's lowest, 63.99%, up to 6,144 chips
    assert physics.default_mfu("tpu-v5p", "google", "datacenter", 1200.0).mfu == 0.64
    # L4 has an FP8 peak but no published FP8 run: FP8 at the BF16 TFLOP/s,
    # 0.35 x 121 / 242.5 = 0.1746 of the FP8 peak
    l4 = physics.default_mfu("l4", "nvidia", "datacenter", 0.0, "fp8", 121.0, 242.5)
    assert l4.mfu == pytest.approx(0.35 * 121.0 / 242.5)
    # consumer cards and unknown PCIe-only NVIDIA cards take the lower stated defaults
    assert physics.default_mfu("rtx-4090", "nvidia", "consumer", 0.0).mfu == 0.30
    assert physics.default_mfu("new-pcie-card", "nvidia", "datacenter", 0.0).mfu == 0.35


def test_scaling_loss_only_beyond_the_measured_scale():
    # H100 measured at 16,384: no loss at 16,384 on a 3,200 Gbit/s fabric (the old rule
    # gave 0.95 ** log2(2,048 nodes) = 0.57 on top of a figure already measured there)
    assert float(physics.scaling_efficiency(16_384, 16_384, 3200.0, 8)) == 1.0
    # one doubling beyond it: 0.95
    assert float(physics.scaling_efficiency(32_768, 16_384, 3200.0, 8)) == pytest.approx(0.95)
    # a 100 Gbit/s network is not what was measured: loss beyond one node of 8,
    # 32 accelerators = 2 doublings: 0.80 ** 2 = 0.64
    assert float(physics.scaling_efficiency(32, 16_384, 100.0, 8)) == pytest.approx(0.64)
    # 400 Gbit/s: 0.90 ** 2 = 0.81
    assert float(physics.scaling_efficiency(32, 16_384, 400.0, 8)) == pytest.approx(0.81)
    # TPU units join one slice over ICI: the MaxText scale counts whatever the DCN figure
    assert float(physics.scaling_efficiency(1_024, 6_144, 100.0, 4, True)) == 1.0
    # the user's own MFU is taken at the job's scale: no loss, whatever the network
    assert float(physics.scaling_efficiency(4_096, float("inf"), 100.0, 8)) == 1.0


def test_spot_lost_fraction_worked_case():
    # provider without a published rate: 1 preemption per instance-day; 4 instances
    # -> 4/24 per job-hour; each loses half a 30-minute checkpoint interval plus a
    # 10-minute restart: 4/24 x (0.25 + 0.1667) = 0.0694 of the wall clock (Young 1974)
    rate = physics.spot_preemptions_per_instance_hour("acme")
    assert rate == pytest.approx(1 / 24)
    assert float(physics.spot_lost_fraction(4, rate)) == pytest.approx(0.06944, abs=1e-5)
    # AWS: Spot Instance Advisor's top band, 20% per instance-month = 0.2 / 730 per hour;
    # 16 instances: 16 x 2.740e-4 x 0.4167 = 0.18%
    aws = physics.spot_preemptions_per_instance_hour("aws")
    assert float(physics.spot_lost_fraction(16, aws)) == pytest.approx(0.001826, abs=1e-6)
    # the rate grows with the instances of the job: twice the instances, twice the loss
    assert float(physics.spot_lost_fraction(8, rate)) == pytest.approx(2 * 0.06944, abs=1e-5)


def test_nodes_count_instances_or_eight_per_bare_node():
    # 17 bare accelerators in nodes of 8 -> 3 nodes; 16 on 8-GPU instances -> 2
    assert float(physics.training_nodes(17, 8)) == 3
    assert float(physics.training_nodes(16, 8)) == 2
    # one-GPU instances: one node per accelerator
    assert float(physics.training_nodes(5, 1)) == 5


def test_activations_korthikanti():
    # selective: 34 s b h bytes per layer; s=4096, b=1, h=4096, 32 layers
    # = 34 x 4096 x 4096 x 32 = 18.25 GB
    gb = physics.activation_gb_per_device(
        seq_len=4096,
        micro_batch=1,
        hidden_size=4096,
        layers=32,
        attention_heads=32,
        recompute="selective",
        params=7e9,
    )
    assert gb == pytest.approx(18.25, abs=0.01)
    # full recompute keeps 2 s b h per layer: 2 x 4096 x 4096 x 32 = 1.07 GB
    full = physics.activation_gb_per_device(
        seq_len=4096,
        micro_batch=1,
        hidden_size=4096,
        layers=32,
        attention_heads=32,
        recompute="full",
        params=7e9,
    )
    assert full == pytest.approx(1.074, abs=0.001)


def test_demand_from_users():
    # 50,000 users x 10 requests x 400 output tokens / 86,400 s = 2,314.8 tokens/s
    tps = physics.demand_tokens_per_s(users=50_000, requests_per_user_per_day=10, output_tokens=400)
    assert tps == pytest.approx(2314.8, abs=0.1)


def test_energy_and_carbon():
    # 700 W at u=0.9: 700 x (0.3 + 0.7 x 0.9) = 651 W; 10 h at PUE 1.2 = 7.812 kWh
    w = physics.power_w_at_utilisation(700, 0.9)
    assert float(w) == pytest.approx(651.0)
    kwh = physics.energy_kwh(w, 10, 1.2)
    assert float(kwh) == pytest.approx(7.812)
    # at 400 g/kWh: 3.1248 kg
    assert float(physics.operational_kgco2e(kwh, 400)) == pytest.approx(3.1248)
    # 164 kg embodied over 5 years = 164 / 43,800 h = 3.744 g/h
    assert float(physics.embodied_kgco2e_per_hour(164)) == pytest.approx(0.0037443, rel=1e-4)


def test_every_mfu_default_carries_a_band_around_its_point():
    # issue 28 part 5: each family's figure comes with the spread of the runs it comes
    # from (low <= point <= high), and says where the band comes from
    from solver.physics.constants import TRAINING_MFU

    for family, by_precision in TRAINING_MFU.items():
        for precision, m in by_precision.items():
            assert 0 < m.low <= m.mfu <= m.high <= 1, (family, precision)
            assert m.band and m.source, (family, precision)
    # a band that does not hold is refused where it is written
    from solver.physics.constants import MfuMeasurement

    with pytest.raises(ValueError, match="low <= mfu <= high"):
        MfuMeasurement(0.4, 8, "x", low=0.45, high=0.5, band="y")


def test_mfu_bands_by_hand():
    # H100 BF16: MosaicML llm-foundry's H100 table, MPT 7B-70B at 2k-8k on 8-64 GPUs, from
    # MPT-30B at 8k on 8 GPUs (29.92%) to MPT-7B at 2k (46.44%); the point is Llama 3's 41%
    h100 = physics.default_mfu("h100-sxm", "nvidia", "datacenter", 900.0, "bf16", 989.4, 989.4)
    assert (h100.low, h100.mfu, h100.high) == (0.30, 0.41, 0.46)
    # MI250X (CDNA2): Frontier 1T 31.96% (Dash 2023) to MosaicML's MPT-7B 166 TFLOP/s on one
    # MI250 node = 166 / 362.1 = 0.458
    mi250x = physics.default_mfu("mi250x", "amd", "datacenter", 400.0)
    assert (mi250x.low, mi250x.mfu, mi250x.high) == (0.32, 0.32, 0.46)
    # MI325X (CDNA3): no run at scale; the point is carried from Frontier (0.32), the low end
    # takes the one-run rule 0.8 x 0.32 = 0.256, the high end one 8-GPU MI300X run at
    # ~523 TFLOP/s = 523 / 1,307.4 = 0.40 (ROCm/TransformerEngine#78)
    mi325x = physics.default_mfu("mi325x", "amd", "datacenter", 896.0)
    assert (mi325x.low, mi325x.mfu, mi325x.high) == (0.256, 0.32, 0.40)
    assert mi325x.source == "assumed equal to MI250X on Frontier"
    # Trainium: Neuron 2.16's NxD rows, Llama2-70B on 512 chips 15.34 seq/s x 4096 x
    # (6 x 69e9 + 12 x 80 x 8192 x 4096) / 512 = 54.8 TFLOP/s = 0.29 of 190; Llama2-7B on
    # 256 chips 93.3 seq/s -> 70.0 TFLOP/s = 0.37
    trn = physics.default_mfu("trainium", "aws", "datacenter", 384.0)
    assert (trn.low, trn.mfu, trn.high) == (0.29, 0.32, 0.37)
    tflops_70b = 15.34 * 4096 * (6 * 69e9 + 12 * 80 * 8192 * 4096) / 512 / 1e12
    assert tflops_70b / 190 == pytest.approx(0.288, abs=1e-3)
    # a family with one run (Gaudi 2's FP8 Llama 2 70B, 0.44) takes the stated band
    # MFU_BAND_ONE_RUN (0.8-1.2 x): 0.352-0.528
    gaudi = physics.default_mfu("gaudi2", "intel", "datacenter", 300.0, "fp8", 432.0, 865.0)
    assert (gaudi.low, gaudi.high) == (pytest.approx(0.352), pytest.approx(0.528))
    assert "stated band for one run" in gaudi.band
    # FP8 without a published FP8 run: the BF16 band at the BF16 TFLOP/s, x 121 / 242.5
    l4 = physics.default_mfu("l4", "nvidia", "datacenter", 0.0, "fp8", 121.0, 242.5)
    assert l4.low == pytest.approx(0.28 * 121.0 / 242.5)
    assert l4.high == pytest.approx(0.42 * 121.0 / 242.5)


def test_planning_mfu_at_each_margin():
    # low: the band's low end; point: the published figure; a number: that fraction of the
    # point (0.9 x 0.32 = 0.288); a workload's own figure has a band of itself
    mi325x = physics.default_mfu("mi325x", "amd", "datacenter", 896.0)
    assert physics.planning_mfu(mi325x, "low") == 0.256
    assert physics.planning_mfu(mi325x, "point") == 0.32
    assert physics.planning_mfu(mi325x, 0.9) == pytest.approx(0.288)
    own = physics.own_mfu(0.45)
    assert physics.planning_mfu(own, "low") == physics.planning_mfu(own, "point") == 0.45
    assert own.measured_at_accelerators == float("inf")  # taken at the job's scale
    for bad in ("lowest", 0, 1.5, True):
        with pytest.raises(ValueError, match="training_margin"):
            physics.planning_mfu(mi325x, bad)
