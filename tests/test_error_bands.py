"""Issue 47, Build 4 and 5: the accuracy table's roles (fitted | holdout) and the capacity
error bands per (accelerator family, runtime, model class) that the estimate and the plan
carry (solver/physics/bands.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_accuracy_table import ACC, ROWS  # the bench's accuracy module, loaded once

from conftest import H1, problem, serve
from solver import physics
from solver.analyses.estimate import estimate_inference
from solver.inputs.catalog import load_catalog
from solver.physics import bands
from solver.solve import solve_problem


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


# ---------------------------------------------------------------- roles of the table's rows


def test_every_row_has_a_role_and_holdout_rows_are_cited_by_no_default():
    # fitted: every main row, and a holdout-set row whose source a default cites (it checks
    # the default's basis); holdout: never cited, so never a basis of a default
    assert {r["role"] for r in ROWS} == {"fitted", "holdout"}
    assert all(r["role"] == "fitted" for r in ROWS if r["set"] == "main")
    used = ACC.sources_used_by_defaults(ACC.defaults_text())
    holdout = [r for r in ROWS if r["role"] == "holdout"]
    assert holdout and not {r["source"] for r in holdout} & used
    # a holdout-set row whose source a default cites is fitted, not holdout
    for r in ROWS:
        if r["set"] == "holdout" and r["source"] in used:
            assert r["role"] == "fitted", r["case_id"]


def test_fitting_rows_refuse_a_holdout_row():
    fitted = [r for r in ROWS if r["role"] == "fitted"]
    assert ACC.fitting_rows(fitted) == fitted
    one_holdout = fitted[:2] + [next(r for r in ROWS if r["role"] == "holdout")]
    with pytest.raises(ValueError, match="accuracy_cases.csv: rows .* are not role=fitted"):
        ACC.fitting_rows(one_holdout)


def test_role_lines_by_hand():
    # fitted: |errors| 5%, 10%, 20% -> median 10.0% (target <= 10%: met, all within 2x);
    # holdout: ratio 2.5 (|error| 150%, outside 2x) and 1.1 (10%) -> median 80.0%, 1 of 2
    # within 2x, largest 2.50x: not met
    C = ACC.Comparison
    results = [
        C("a", "main", "inference", "tpot_ms", 1.05, 1.0, vendor="amd", role="fitted"),
        C("b", "main", "inference", "tpot_ms", 0.9, 1.0, vendor="amd", role="fitted"),
        C("c", "main", "inference", "tpot_ms", 1.2, 1.0, vendor="nvidia", role="fitted"),
        C("d", "holdout", "inference", "tpot_ms", 2.5, 1.0, vendor="aws", role="holdout"),
        C("e", "holdout", "inference", "tpot_ms", 1.1, 1.0, vendor="aws", role="holdout"),
    ]
    lines = ACC.role_lines(results)
    assert lines[0] == (
        "role fitted: 3 rows, median |error| 10.0% (target <= 10%), within 2x: 3/3, "
        "largest 1.20x: met"
    )
    # amd: median of 5% and 10% = 7.5%; nvidia 20%
    assert lines[1] == "  per vendor (rows): amd 7.5% (2), nvidia 20.0% (1)"
    assert lines[2] == (
        "role holdout: 2 rows, median |error| 80.0% (target <= 15%), within 2x: 1/2, "
        "largest 2.50x: NOT MET"
    )


# ---------------------------------------------------------------- bands


def test_shipped_bands_are_the_table_measured_now(catalog):
    # solver/physics/bands.py ERROR_BANDS is what `accuracy.py --bands-table` prints: a
    # change of the estimator or the table that moves a band must re-ship it
    used = ACC.sources_used_by_defaults(ACC.defaults_text())
    results = [ACC.compare(catalog, r, r["source"] in used) for r in ROWS]
    measured = ACC.band_table(catalog, ROWS, results)
    assert set(measured) == set(bands.ERROR_BANDS)
    for key, (band, n) in measured.items():
        assert bands.ERROR_BANDS[key][1] == n, key
        assert bands.ERROR_BANDS[key][0] == pytest.approx(band, abs=1e-4), key


def test_band_table_by_hand():
    # two fitted MI300X rows (Llama 2 70B: dense-large, vllm-rocm): throughput predicted
    # 1.25x (ln(measured / predicted) = -ln 1.25 = -0.2231) and a time per token predicted
    # 0.8x (capacity 1 / 0.8 = 1.25x: ln(0.8) = -0.2231): RMS 0.2231 over 2 rows; the
    # holdout row is left out
    C = ACC.Comparison
    row = {
        "accelerator": "mi300x",
        "model": "llama-2-70b",
        "params_b": "",
        "notes": "",
        "source": "X",
    }
    rows = [
        {**row, "case_id": "a", "role": "fitted"},
        {**row, "case_id": "b", "role": "fitted"},
        {**row, "case_id": "c", "role": "holdout"},
    ]
    unit = "output_tokens_per_s_per_accelerator"
    results = [
        C("a", "main", "inference", unit, 1.25, 1.0, vendor="amd", role="fitted"),
        C("b", "main", "inference", "tpot_ms", 0.8, 1.0, vendor="amd", role="fitted"),
        C("c", "holdout", "inference", unit, 9.0, 1.0, vendor="amd", role="holdout"),
    ]
    table = ACC.band_table(load_catalog(), rows, results)
    assert table == {("amd-cdna3", "vllm-rocm", "dense-large"): (round(math.log(1.25), 4), 2)}


def test_model_class_and_family_by_hand():
    # Mixtral 8x7B: 8 experts, 2 a token -> moe; 13B dense -> dense-small (<= 20B);
    # 70B -> dense-large; the H100 and H200 are Hopper; TPU v6e its own generation
    assert bands.model_class(46.7e9, 8, 2) == "moe"
    assert bands.model_class(13e9) == "dense-small"
    assert bands.model_class(20e9) == "dense-small"
    assert bands.model_class(70e9) == "dense-large"
    assert bands.accelerator_family("h200") == "nvidia-hopper"
    assert bands.accelerator_family("tpu-v6e") == "google-tpu-v6e"
    assert bands.accelerator_family("made-up-9000") == "made-up-9000"


def test_outside_the_validated_set_takes_the_widest_band():
    # MI300X, vLLM ROCm, 70B: 7 fitted rows -> its own band, validated
    amd = bands.error_band("mi300x", "vllm-rocm", "dense-large")
    assert amd.validated and amd.rows == 7
    assert amd.band_log == bands.ERROR_BANDS[("amd-cdna3", "vllm-rocm", "dense-large")][0]
    # Inferentia2 with Neuron, 8B: 2 fitted rows (< 3) -> not validated, the widest band;
    # H100 with vLLM (no vLLM-on-CUDA row at all) and any MoE likewise
    widest = max(b for b, n in bands.ERROR_BANDS.values() if n >= bands.MIN_ROWS)
    assert bands.WIDEST_BAND_LOG == widest
    for acc, runtime, klass, rows in [
        ("inferentia2", "neuron", "dense-small", 2),
        ("h100-sxm", "vllm-cuda", "dense-small", 0),
        ("h100-sxm", "tensorrt-llm", "moe", 0),
    ]:
        b = bands.error_band(acc, runtime, klass)
        assert (b.validated, b.rows, b.band_log) == (False, rows, widest), (acc, runtime)
    # the widest band is no narrower than any validated one
    assert all(widest >= band for band, n in bands.ERROR_BANDS.values() if n >= bands.MIN_ROWS)


def test_capacity_band_log_by_configuration():
    # with accelerator and model class: the configuration's band; a measured profile keeps
    # its 0.02 whatever the configuration
    got = physics.capacity_band_log(
        np.array(["amd", "nvidia", "amd"], dtype=object),
        np.array(["physics", "physics", "measured"], dtype=object),
        None,
        np.array(["mi300x", "h100-sxm", "mi300x"], dtype=object),
        "dense-large",
    )
    amd = bands.ERROR_BANDS[("amd-cdna3", "vllm-rocm", "dense-large")][0]
    # H100 serves on vllm-cuda by default: no fitted row, the widest band
    assert list(got) == pytest.approx([amd, bands.WIDEST_BAND_LOG, 0.02])


# ---------------------------------------------------------------- the estimate and the plan


def test_estimate_carries_its_band_and_flags_an_unvalidated_configuration(catalog):
    # Llama 3 8B on an H100 with vLLM (the default runtime): no fitted row -> flagged, the
    # widest band; 90% one-sided share exp(-1.2816 x band)
    est = estimate_inference(catalog, model="llama-3-8b", accelerator="h100-sxm")
    band = est["error_band"]
    assert band["validated"] is False and "outside the validated set" in band["note"]
    assert band["band_log"] == bands.WIDEST_BAND_LOG
    assert band["capacity_share_at_90pct"] == pytest.approx(
        math.exp(-1.28155 * bands.WIDEST_BAND_LOG), abs=1e-4
    )
    # Llama 2 70B FP8 on an MI300X with vLLM ROCm: 7 fitted rows, validated, no note
    est = estimate_inference(
        catalog, model="llama-2-70b", weight_precision="fp8", accelerator="mi300x"
    )
    assert est["error_band"]["validated"] is True and "note" not in est["error_band"]
    assert est["error_band"]["model_class"] == "dense-large"


def test_plan_at_confidence_uses_the_configuration_band_and_flags_it(tiny_catalog):
    # The tiny H100 serving problem with its capacity from the physics (no measured
    # profile): Llama 3 8B on vllm-cuda is outside the validated set, so 90% confidence
    # counts exp(-1.2816 x widest) of each estimate; the verifier recomputes the same share
    # (solve refuses a plan it does not verify)
    cat = tiny_catalog([H1])
    w = serve(40, measured_throughput_rps=None)
    plan = solve_problem(problem([w], capacity_confidence=0.9), cat)
    found = {(a.kind, a.name): a for a in plan.assumptions}
    counted = found[("capacity_band", "capacity_counted")]
    assert counted.value == pytest.approx(math.exp(-1.28155 * bands.WIDEST_BAND_LOG), abs=1e-4)
    assert "OUTSIDE the validated set" in counted.source
    assert "nvidia-hopper" in counted.subject


# ---------------------------------------------------------------- MoE training (Build 5)


def test_moe_all_to_all_bytes_per_flop_by_hand():
    # 4 k d x 2 bytes x L over 6 N_active: DeepSeek-V3 (k 8, d 7,168, 61 layers, 37e9
    # active) 4 x 8 x 7,168 x 2 x 61 / (6 x 37e9) = 27,983,872 / 2.22e11 = 1.2605e-4;
    # Mixtral 8x7B (k 2, d 4,096, 32 layers, 12.9e9) 2,097,152 / 7.74e10 = 2.7095e-5;
    # a dense model 0
    x = physics.training.moe_all_to_all_bytes_per_flop
    assert x(37e9, 256, 8, 7168, 61) == pytest.approx(1.2605e-4, rel=1e-4)
    assert x(12.9e9, 8, 2, 4096, 32) == pytest.approx(2.7095e-5, rel=1e-4)
    assert x(70e9, 1, 1, 8192, 80) == 0.0


def test_moe_training_efficiency_reproduces_its_two_fitted_rows(catalog):
    # 0.8960 / (1 + x R / 178.0 GB/s), R the dense rate on the device: DeepSeek-V3 on the
    # Hopper FP8 point, R = 0.35 x 1,978.9 = 692.6 TFLOP/s, x R = 1.2605e-4 x 692.6e12 =
    # 87.30 GB/s, 0.8960 / (1 + 87.30 / 178.0) = 0.8960 / 1.4905 = 0.6011 (measured 1,543.2
    # over the dense Hopper FP8 prediction 2,567.2 = 0.6011); Mixtral on v5p, R = 0.64 x
    # 459 = 293.8, x R = 7.96 GB/s, 0.8960 / 1.04472 = 0.8577 (MFU 0.5489 over the v5p dense
    # 0.64 = 0.8577); a dense model keeps 1
    eff = physics.training.moe_training_efficiency
    assert eff(1.2605e-4, 0.35 * 1978.9) == pytest.approx(0.6011, abs=2e-4)
    assert eff(2.7095e-5, 0.64 * 459.0) == pytest.approx(0.8577, abs=2e-4)
    assert eff(0.0, 1000.0) == 1.0
    # the same model on a device twice as fast keeps the overhead's time: DeepSeek-V3 at
    # R = 1,385.2 TFLOP/s, x R = 174.6 GB/s, 0.8960 / (1 + 174.6 / 178.0) = 0.4523
    assert eff(1.2605e-4, 2 * 0.35 * 1978.9) == pytest.approx(0.4523, abs=2e-4)
    # the two fitted rows, through the estimator, within 1% (they set the two constants)
    by_id = {r["case_id"]: r for r in ROWS}
    for case in ("m62_deepseek_v3_h800_2048", "m63_maxtext_mixtral_v5p_64"):
        c = ACC.compare(catalog, by_id[case])
        assert c.ratio == pytest.approx(1.0, abs=0.01), case


def test_moe_holdout_rows_are_within_two_x_and_were_not_fitted(catalog):
    # h37-h39 (Megatron-Bridge B200 DeepSeek-V3 and Qwen3-235B, MaxText Mixtral on v6e-256)
    # are holdout: their sources are cited by no default. Without the MoE factor the B200
    # rows were 3.0x and 3.2x too fast (a dense MFU on the active parameters); with the
    # factor in bytes per FLOP (its overhead shrinking with the peak) 1.82x and 1.62x; with
    # the overhead at a fixed 178 GB/s, R = 0.35 x 4,500 = 1,575 TFLOP/s on B200:
    # DeepSeek-V3 x R = 198.5 GB/s, 0.8960 / (1 + 198.5 / 178.0) = 0.4236 of the dense
    # prediction 6,468 = 2,739.8 against 2,139 measured, 1.28x; Qwen3-235B (k 8, d 4,096,
    # 94 layers, 22e9 active: x = 1.8668e-4) x R = 294.0 GB/s, 0.8960 / 2.6518 = 0.3379 of
    # 10,436 = 3,526 against 3,269, 1.08x; Mixtral on v6e 1.16x dropless, 0.97x with its
    # recipe's capacity factor 1.25 (session 61: 1.2016x the FLOPs, 4,240.2 / 1.2016 =
    # 3,528.9 against 3,645.2; docs/concepts/runtime-figures.md, "Expert capacity factor")
    by_id = {r["case_id"]: r for r in ROWS}
    expected = {
        "h37_mbridge_b200_deepseek_v3_256": 1.28,
        "h38_mbridge_b200_qwen3_235b_64": 1.08,
        "h39_tpurecipes_mixtral_v6e_256": 0.97,
    }
    used = ACC.sources_used_by_defaults(ACC.defaults_text())
    for case, ratio in expected.items():
        row = by_id[case]
        assert row["role"] == "holdout" and row["source"] not in used, case
        c = ACC.compare(catalog, row)
        assert c.ratio == pytest.approx(ratio, abs=0.01), case
        assert 0.5 <= c.ratio <= 2.0, case


def test_the_table_meets_its_targets_by_role_and_by_vendor(catalog):
    # Issue 47 Must-show 3 read per vendor (bench/RESULTS.md, accuracy.py): every role and
    # every (role, vendor) cell within its target (median |error| <= 10% fitted, <= 15%
    # holdout; every row within 2x). Session 61 moved AMD fitted 11.2% -> 8.0% (sustained
    # GEMM rate) and Google holdout 16.3% -> 13.9% (the Mixtral recipe's capacity factor);
    # session 62 AWS fitted 13.1% -> 7.2% (Neuron's static compiled batch and serial
    # prefill; docs/concepts/runtime-figures.md, "Neuron"). AWS's one row still past 10%,
    # Trainium Llama 3 70B at batch 1 (1.47x), is a later Neuron SDK than the profile's
    # Inferentia2 basis (the same deployment: 24.78 ms under SDK 2.18, 20.47 under 2.19.1).
    import statistics

    results = [ACC.compare(catalog, r) for r in ROWS]
    unmet = set()
    for role, target in ACC.TARGET_MEDIAN.items():
        rows = [c for c in results if c.role == role]
        assert all(0.5 <= c.ratio <= 2.0 for c in rows), role
        assert statistics.median(c.abs_error for c in rows) <= target, role
        for vendor in {c.vendor for c in rows}:
            errors = [c.abs_error for c in rows if c.vendor == vendor]
            if statistics.median(errors) > target:
                unmet.add((role, vendor))
    assert unmet == set()
