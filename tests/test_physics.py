"""Worked checks of the physics (DESIGN.md section 4), arithmetic in the comments."""

from __future__ import annotations

import numpy as np
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
    # 6 x 13e9 x 1e12 = 7.8e22 FLOPs
    flops = physics.training_flops(13e9, 1e12, "adamw", "selective")
    assert flops == pytest.approx(7.8e22)
    # 7.8e22 / (989.4e12 x 0.40 x 3600) = 54,745 H100-hours (one device, no scaling loss)
    hours = physics.training_hours(flops, 1, H100_BF16_DENSE_TFLOPS, 0.40)
    assert float(hours) == pytest.approx(54_745, rel=1e-3)
    # spread over 64 devices it takes 1/64 of that; spot adds 10%
    assert float(physics.training_hours(flops, 64, 989.4, 0.40, 1.0, True)) == pytest.approx(
        54_745 / 64 * 1.1, rel=1e-3
    )


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
