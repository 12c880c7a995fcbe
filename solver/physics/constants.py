"""Constants and stated assumptions used by the physics.

Every default that is an assumption rather than a law is named here with its
reason, so the estimate command can print it and a user can see what was assumed.
"""

from __future__ import annotations

from dataclasses import dataclass

BYTES_PER_VALUE: dict[str, float] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
    "fp4": 0.5,
}

# ---------------------------------------------------------------- serving (inference)
# Achieved fractions of the data sheet, per serving runtime (DESIGN.md section 7).
# A decode step reads the weights and the KV cache (memory-bound: eta_bandwidth of the
# HBM figure) and multiplies the step's tokens (compute-bound: eta_compute of the dense
# peak); step_overhead_s is the engine's time per step outside the kernels (scheduling,
# sampling, launch gaps). Sources per row in catalogs/SOURCES.md, "Serving efficiencies".


@dataclass(frozen=True)
class RuntimeEfficiency:
    """Achieved fractions of a device's data-sheet figures under one serving runtime."""

    eta_bandwidth: float
    eta_compute: float
    step_overhead_s: float
    source: str


RUNTIME_EFFICIENCY: dict[str, RuntimeEfficiency] = {
    # NVIDIA NIM 1.8.0 (TensorRT-LLM) on H100, Llama-3.3-70B FP8 TP2: ITL 18.91 ms at
    # concurrency 1 for 70.6 GB of weights over 2 x 3.35 TB/s (10.5 ms at 100%) -> 0.56
    # with the all-reduces, ~0.60 without; TTFT 406.77 ms for a 5,000-token prompt
    # -> 2 x 70.6e9 x 5000 / 0.4068 s / (2 x 1,979 TFLOPS) = 0.44 of FP8 peak.
    # docs.nvidia.com/nim/benchmarking/llm/latest/performance.html. Engine overheads are
    # inside these fractions (they come from end-to-end timings), so no step overhead.
    "vllm-cuda": RuntimeEfficiency(0.60, 0.45, 0.0, "NIM_H100_PERF"),
    # Oracle, "Serving Llama 3.1 405B with AMD MI300X" (vLLM ROCm, FP8, 8x MI300X):
    # 36 tok/s at batch 1 = 27.8 ms for 405 GB over 8 x 5.3 TB/s (9.6 ms) -> 0.35-0.40
    # with TP8 all-reduces. Compute: SemiAnalysis (Dec 2024) measures MI300X GEMMs at a
    # lower fraction of peak than H100; we take 0.35 (below NVIDIA's 0.45).
    "vllm-rocm": RuntimeEfficiency(0.40, 0.35, 0.0, "ORACLE_MI300X_405B; SEMIANALYSIS_MI300X"),
    # AWS Neuron benchmarks (inf2.48xlarge, transformers-neuronx 2.13, batch 1):
    # opt-13b TP8 19.8 ms/token (26 GB over 4 chips x 0.88 TB/s = 7.4 ms -> 0.37), opt-30b
    # 0.42, opt-66b 0.35. Compute: trn1 NxD Llama-2 training reaches 27-32% MFU
    # (aws-neuron-sdk training_data_decoder.csv), taken as the achieved GEMM fraction.
    "neuron": RuntimeEfficiency(0.38, 0.30, 0.0, "NEURON_INF2_LATENCY; NEURON_TRN1_TRAINING"),
    # Intel Gaudi 2 inference table (SynapseAI 1.18, FP8): Llama 2 7B, one HPU,
    # 2,048-token prompt in 56.31 ms -> 490 TFLOPS = 0.57 of 865; Llama 3.1 8B 0.63.
    # No direct bandwidth fraction is published; Databricks/MosaicML (Jan 2024) found 8x
    # Gaudi 2 at parity with 8x H100 in 70B decode latency: we take NVIDIA's 0.60.
    "gaudi": RuntimeEfficiency(0.60, 0.57, 0.0, "GAUDI2_INFERENCE_PERF; DATABRICKS_GAUDI2"),
    # MaxText on TPU v5e reaches 55-67% MFU in training (configs/v5e/README.md), taken
    # as the achieved GEMM fraction; no decode bandwidth fraction is published: 0.60.
    "tpu": RuntimeEfficiency(0.60, 0.55, 0.0, "MAXTEXT_V5E_MFU"),
}
RUNTIME_BY_VENDOR: dict[str, str] = {
    "nvidia": "vllm-cuda",
    "amd": "vllm-rocm",
    "aws": "neuron",
    "intel": "gaudi",
    "google": "tpu",
}

# Tensor-parallel all-reduce: scale-up link class per vendor (NVIDIA is NVLink or PCIe
# per offering), PCIe Gen4 x16 per direction when a device has no scale-up figure, the
# achieved fraction of the link, and the latency of one small all-reduce per link.
# NVLink: vLLM's custom all-reduce on H100 NVSwitch takes 9.1-11.8 us for 512 B-32 KB
# messages at TP2-8 (sgl-project/sglang PR #2904, Jan 2025); 12 us. Other fabrics have
# no published small-message figure: PCIe without peer-to-peer goes through host
# memory (NCCL's PCIe path), stated as 3x NVLink; Infinity Fabric, NeuronLink, ICI and
# Gaudi's RoCE are taken at 2x NVLink (stated assumptions, not measurements).
LINK_BY_VENDOR: dict[str, str] = {
    "amd": "infinity_fabric",
    "aws": "neuronlink",
    "intel": "roce",
    "google": "ici",
}
PCIE_GBPS_PER_DIRECTION = 32.0
ETA_LINK = 0.70
ALLREDUCE_LATENCY_S: dict[str, float] = {
    "nvlink": 12e-6,
    "pcie": 36e-6,
    "infinity_fabric": 24e-6,
    "neuronlink": 24e-6,
    "ici": 24e-6,
    "roce": 24e-6,
}
# Memory kept free per device when the problem does not say: vLLM's default
# gpu_memory_utilization is 0.90 (weights, activations and KV cache live in 90% of
# the device; vLLM EngineArgs docs), so 10% is the reserve.
GPU_MEMORY_UTILIZATION_DEFAULT = 0.90
# Most sequences one replica runs at once: vLLM's default max_num_seqs (256).
MAX_NUM_SEQS_DEFAULT = 256

# Training: LoRA trains a small adapter; its size as a fraction of the base
# parameters (rank 16-64 on all projections is 0.5-2%).
LORA_TRAINABLE_FRACTION = 0.01
# Fallback activation memory when the model shape is unknown, as a multiple of
# the bf16 weight bytes (a 7B model at 4k context with selective recompute has
# about 1.3x; see training.activation_gb_per_device).
ACTIVATION_FALLBACK_X_WEIGHTS = 1.0
# Spot training: checkpoint/restart overhead on the job's hours.
SPOT_TRAINING_OVERHEAD = 0.10

# Power: fraction of TDP drawn at a utilisation u is IDLE + (1 - IDLE) * u.
IDLE_POWER_FRACTION = 0.30
TRAINING_UTILISATION = 0.90
INFERENCE_UTILISATION = 0.60
# Host (CPU, memory, NICs, fans) power as a fraction of accelerator power for
# cloud instances (a DGX H100 draws 10.2 kW max for 5.6 kW of GPUs; typical
# draw is lower).
HOST_POWER_FRACTION = 0.50
# Embodied carbon of cloud accelerators is amortised over this service life.
CLOUD_ACCELERATOR_LIFETIME_YEARS = 5.0


def bytes_per_value(precision: str) -> float:
    """Bytes per stored value for a precision name (bf16 -> 2)."""
    try:
        return BYTES_PER_VALUE[precision]
    except KeyError:
        raise ValueError(
            f"unknown precision {precision!r}; use one of {sorted(BYTES_PER_VALUE)}"
        ) from None
