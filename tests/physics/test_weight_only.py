"""Weight-only int8 (W8A16, issue 33 follow-up): int8 weights read at 1 byte each and
multiplied in bf16 (TensorRT-LLM precision.md, "INT4 and INT8 Weight-Only"; constants.
BYTES_PER_VALUE), so a step reads the int8 weights and multiplies at the BF16 peak."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from solver import physics
from solver.cli import app
from solver.errors import ProcureError
from tests.physics.test_load_latency import MODEL_7B

# One TPU v5e chip as catalogs/accelerators.csv has it (GCP_TPU_V5E): 197 BF16 TFLOPS,
# 393 INT8 TOPS, no FP8, 16 GB, 819 GB/s.
TPU_V5E = {
    "vendor": np.array(["google"], dtype=object),
    "memory_gb": np.array([16.0]),
    "mem_bandwidth_gbps": np.array([819.0]),
    "bf16_dense_tflops": np.array([197.0]),
    "fp8_dense_tflops": np.array([0.0]),
    "int8_dense_tops": np.array([393.0]),
    "scaleup_gbps": np.array([400.0]),
}


def _step(precision: str) -> physics.StepModel:
    model = physics.ServedModel(**{**MODEL_7B.__dict__, "weight_bytes": 1.0})
    dev = physics.device_figures(TPU_V5E, precision, np.array([False]))
    return physics.step_model(model, 1000, 400, np.array([1.0]), dev)


def test_weight_only_int8_is_one_byte_and_the_bf16_peak():
    assert physics.bytes_per_value("int8-weight-only") == 1.0
    # int8 multiplies at the 393 TOPS int8 peak; weight-only int8 at the 197 BF16 peak
    assert float(physics.compute_peak_tflops(TPU_V5E, "int8")[0]) == 393.0
    assert float(physics.compute_peak_tflops(TPU_V5E, "int8-weight-only")[0]) == 197.0


def test_a_weight_only_step_reads_int8_weights_and_multiplies_at_bf16():
    # FLOPs per sequence-step, P = 1,000, O = 400: 2 x 7e9 x 3.5 + 4 x 32 x 4,096 x 1,200 +
    # 2 x 32 x 4,096 x 1,000^2 / 400 = 4.9e10 + 6.291e8 + 6.554e8 = 5.0285e10; at the BF16
    # peak x the tpu runtime's eta_c that is 5.0285e10 / (197e12 x eta_c); at the int8 peak
    # 393 / 197 = 1.995x less. The weight read (7 GB at 1 byte) is the same for both.
    wo, w8 = _step("int8-weight-only"), _step("int8")
    eta_c = float(physics.device_figures(TPU_V5E, "bf16", np.array([False])).eta_compute[0])
    assert float(wo.compute_s_per_seq[0]) == pytest.approx(5.0285e10 / (197e12 * eta_c), rel=1e-4)
    assert float(wo.compute_s_per_seq[0] / w8.compute_s_per_seq[0]) == pytest.approx(393 / 197)
    assert float(wo.weights_s[0]) == pytest.approx(float(w8.weights_s[0]))


def test_a_weight_only_kv_precision_is_refused_with_one_message():
    from conftest import problem

    chat = dict(
        kind="inference",
        name="chat",
        model="llama-3-8b",
        demand={"tokens_per_s": 100},
        prompt_tokens=100,
        output_tokens=100,
        ttft_slo="1 s",
        tpot_slo="50 ms",
    )
    # as the weights' format it is accepted
    assert problem([{**chat, "weight_precision": "int8-weight-only"}]) is not None
    with pytest.raises(ProcureError) as exc:
        problem([{**chat, "kv_precision": "int8-weight-only"}])
    assert "kv_precision" in str(exc.value) and "'int8' for an int8 KV cache" in str(exc.value)


def test_estimate_refuses_an_unknown_precision_with_the_values_it_takes():
    # was an internal error (exit 70) before: now one message naming the option, exit 2
    result = CliRunner().invoke(
        app, ["estimate", "inference", "--accelerator", "h100-sxm", "--weight-precision", "w8"]
    )
    assert result.exit_code == 2
    assert "--weight-precision" in result.output and "int8-weight-only" in result.output
    assert "Traceback" not in result.output
