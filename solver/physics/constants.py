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
    max_num_seqs: int = 256  # most sequences one replica runs at once (engine default)


RUNTIME_EFFICIENCY: dict[str, RuntimeEfficiency] = {
    # NVIDIA NIM 1.8.0 (TensorRT-LLM) on H100, Llama-3.3-70B FP8 TP2: ITL 18.91 ms at
    # concurrency 1 for 70.6 GB of weights over 2 x 3.35 TB/s (10.5 ms at 100%) -> 0.56
    # with the all-reduces, ~0.60 without; TTFT 406.77 ms for a 5,000-token prompt
    # -> 2 x 70.6e9 x 5000 / 0.4068 s / (2 x 1,979 TFLOPS) = 0.44 of FP8 peak.
    # docs.nvidia.com/nim/benchmarking/llm/latest/performance.html. Engine overheads are
    # inside these fractions (they come from end-to-end timings), so no step overhead.
    "vllm-cuda": RuntimeEfficiency(0.60, 0.45, 0.0, "NIM_H100_PERF"),
    # TensorRT-LLM: the same kernels' fractions (NIM runs TensorRT-LLM), but its engines
    # batch up to max_batch_size 2,048 by default (tensorrt_llm BuildConfig) where vLLM's
    # max_num_seqs default is 256; MLPerf Llama-2-70B submissions run 806-896 at once.
    "tensorrt-llm": RuntimeEfficiency(0.60, 0.45, 0.0, "NIM_H100_PERF", max_num_seqs=2048),
    # Oracle, "Serving Llama 3.1 405B with AMD MI300X" (vLLM ROCm, FP8, 8x MI300X):
    # 36 tok/s at batch 1 = 27.8 ms for 405 GB over 8 x 5.3 TB/s (9.6 ms) -> 0.35-0.40
    # with TP8 all-reduces. Compute: SemiAnalysis (Dec 2024) measures MI300X GEMMs at a
    # lower fraction of peak than H100; we take 0.35 (below NVIDIA's 0.45).
    "vllm-rocm": RuntimeEfficiency(0.40, 0.35, 0.0, "ORACLE_MI300X_405B; SEMIANALYSIS_MI300X"),
    # Hugging Face optimum-neuron TGI benchmark (2025-06, inf2.48xlarge, Llama-3.1-8B
    # BF16 on 4 Inferentia2 chips, 1,500-token prompts, one request at a time): ITL
    # 26.79 ms for 16 GB over 4 x 880 GB/s (4.55 ms at 100%) -> 0.18 with the TP4
    # all-reduces; TTFT 315.79 ms for 2 x 8e9 x 1,500 FLOPs over 4 x 190 TFLOPS
    # (31.6 ms) -> 0.10. Older transformers-neuronx figures (2023, batch 1: 0.35-0.42 of
    # bandwidth) are twice as fast; we take the serving stack in use today.
    "neuron": RuntimeEfficiency(0.18, 0.10, 0.0, "OPTNEURON_TGI_PERF"),
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

# ---------------------------------------------------------------- training
# LoRA trains a small adapter; its size as a fraction of the base parameters
# (rank 16-64 on all projections is 0.5-2%).
LORA_TRAINABLE_FRACTION = 0.01
# Fallback activation memory when the model shape is unknown, as a multiple of
# the bf16 weight bytes (a 7B model at 4k context with selective recompute has
# about 1.3x; see training.activation_gb_per_device).
ACTIVATION_FALLBACK_X_WEIGHTS = 1.0


@dataclass(frozen=True)
class MfuMeasurement:
    """A published training utilisation and the cluster size it was measured at.

    ``mfu`` is the achieved fraction of the dense peak at the run's precision, on the
    FLOPs :func:`solver.physics.training.training_flops` counts (6ND plus attention).
    """

    mfu: float
    measured_at_accelerators: float
    source: str


# Default MFU per accelerator family and training precision (DESIGN.md section 7: "MFU
# defaults come from published runs at the scale they were measured"). Where a paper
# gives a table, we take its lowest figure at the relevant context and the table's
# largest cluster: the tables show the figure holding across their range of sizes.
TRAINING_MFU: dict[str, dict[str, MfuMeasurement]] = {
    "nvidia-hopper": {
        # Dubey et al., "The Llama 3 Herd of Models", arXiv 2407.21783, Table 4: 405B at
        # 8k context, 430 TFLOPs/GPU (43%) on 8,192 H100 and 400 (41%) on 16,384.
        "bf16": MfuMeasurement(0.41, 16_384, "Llama 3 405B, 16,384 H100 (arXiv 2407.21783 T4)"),
        # NeMo 24.07 performance summary, DGX-H100 FP8 pre-training (NVIDIA/NeMo
        # docs/source/performance/performance_summary.md): Llama 2/3 and GPT-3 rows at
        # 697-842 model TFLOP/s/GPU = 0.35-0.43 of the 1,979 FP8 peak on 8-512 GPUs.
        "fp8": MfuMeasurement(0.35, 512, "NeMo 24.07 H100 FP8 table, 8-512 GPUs"),
    },
    "nvidia-blackwell": {
        # NeMo 25.04 long-sequence table, DGX-B200 (NVIDIA/NeMo docs/source/performance/
        # performance_long_sequence.md): Llama 3 8B FP8 with context parallelism at
        # 1,588-1,717 TFLOP/s/GPU = 0.35-0.38 of the 4,500 FP8 peak on 8-1,024 GPUs.
        "fp8": MfuMeasurement(0.35, 1_024, "NeMo 25.04 B200 FP8 table, 8-1,024 GPUs"),
        # No dense BF16 B200 pre-training run is published there; the FP8 runs'
        # utilisation is taken against the BF16 peak (stated assumption).
        "bf16": MfuMeasurement(0.35, 1_024, "assumed equal to the FP8 runs on B200"),
    },
    "nvidia-ampere": {
        # Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters
        # Using Megatron-LM", SC'21, Table 1: 135-163 TFLOP/s = 43-52% of 312 from 32 to
        # 3,072 A100 (their FLOPs count the full-recompute forward, as ours do).
        "bf16": MfuMeasurement(0.43, 3_072, "Megatron-LM, 32-3,072 A100 (Narayanan 2021 T1)"),
    },
    "nvidia-volta": {
        # Shoeybi et al., "Megatron-LM", arXiv 1909.08053: 8.3B at 15.1 PFLOP/s on 512
        # V100 = 29.5 TFLOP/s per GPU = 0.24 of 125.
        "bf16": MfuMeasurement(0.24, 512, "Megatron-LM 8.3B, 512 V100 (Shoeybi 2019)"),
    },
    "google-tpu-v5p": {
        # MaxText README, "Runtime Performance Results", TPU v5p: 63.99-71.47% MFU from
        # v5p-128 to v5p-12288 (64 to 6,144 chips; v5p-N counts N/2 chips).
        "bf16": MfuMeasurement(0.64, 6_144, "MaxText, 64-6,144 v5p chips (README table)"),
    },
    "google-tpu-v5e": {
        # MaxText configs/v5e/README.md: 16B-128B on 1 to 32 v5e-256 slices, 46.25-66.86%
        # MFU; lowest (128B) at 32 slices = 8,192 chips.
        "bf16": MfuMeasurement(0.46, 8_192, "MaxText, 256-8,192 v5e chips (v5e README)"),
    },
    "amd-cdna2": {
        # Dash et al., "Optimizing Distributed Training on Frontier for Large Language
        # Models", arXiv 2312.12705: 22B 38.38%, 175B 36.14%, 1T 31.96% of peak on
        # 3,072 MI250X GCDs = 1,536 cards (a catalog MI250X is one card of two GCDs).
        "bf16": MfuMeasurement(0.32, 1_536, "Frontier 1T, 3,072 MI250X GCDs (Dash 2023)"),
    },
    "amd-cdna3": {
        # No at-scale MI300X/MI325X training MFU is published in our sources; the CDNA2
        # Frontier figure is taken (stated assumption).
        "bf16": MfuMeasurement(0.32, 1_536, "assumed equal to MI250X on Frontier"),
    },
    "intel-gaudi": {
        # Intel Gaudi 2 model performance page (SynapseAI 1.18): Llama 2 70B FP8, 64 HPU,
        # 4k context, 54,274 tokens/s x (6 x 69e9 + 12 x 80 x 8192 x 4096) FLOPs/token
        # / 64 = 378 TFLOP/s = 0.44 of 865.
        "fp8": MfuMeasurement(0.44, 64, "Llama 2 70B FP8, 64 Gaudi 2 (Intel perf page)"),
        # Intel publishes no BF16 training run; the FP8 run's utilisation is taken
        # against the BF16 peak (stated assumption; Gaudi 3 takes the Gaudi 2 figures).
        "bf16": MfuMeasurement(0.44, 64, "assumed equal to the FP8 run on 64 Gaudi 2"),
    },
    "aws-trainium": {
        # aws-neuron-sdk general/benchmarks/trn1/training_data_decoder.csv (Neuron 2.16):
        # Llama2-13B NxD on 32 trn1.32xlarge (512 chips), 4k context, 85.65 seq/s x 4096
        # x (6 x 13e9 + 12 x 40 x 5120 x 4096) FLOPs / 512 = 60 TFLOP/s = 0.32 of 190.
        "bf16": MfuMeasurement(0.32, 512, "Llama2-13B, 512 Trainium (Neuron benchmarks)"),
    },
    "pcie": {
        # Datacenter cards without a scale-up link (L4, L40S, A10G, H100 PCIe ...): no
        # published at-scale run; ZeRO-3 gathers cross PCIe Gen4 (32 GB/s per direction,
        # a tenth of A100 NVLink), so we take 0.35, below the NVLink A100 figure (0.43),
        # for one 8-card server (stated assumption).
        "bf16": MfuMeasurement(0.35, 8, "assumed below Megatron-LM A100 (no PCIe run found)"),
    },
    "consumer": {
        # Schultheis & Alistarh, "LLMQ", arXiv 2512.15306: ~50% FLOP utilisation on 4 x
        # RTX 4090 only with a custom CUDA stack (copy-engine collectives, offloading);
        # standard stacks lack peer-to-peer on GeForce cards: 0.30 for one 4-card
        # workstation (stated assumption below the published figure).
        "bf16": MfuMeasurement(0.30, 4, "assumed below LLMQ's ~50% on 4 x RTX 4090"),
    },
}
# Accelerator id -> MFU family; ids not listed fall back by device class and vendor
# (training.mfu_family).
TRAINING_MFU_FAMILY_OF: dict[str, str] = {
    **dict.fromkeys(("h100-sxm", "h200", "gh200", "h800", "h20"), "nvidia-hopper"),
    **dict.fromkeys(("b200", "b100", "b300", "gb200"), "nvidia-blackwell"),
    **dict.fromkeys(("a100-80gb", "a100-40gb", "a800"), "nvidia-ampere"),
    **dict.fromkeys(("v100", "v100-32gb"), "nvidia-volta"),
    "tpu-v5p": "google-tpu-v5p",
    "tpu-v5e": "google-tpu-v5e",
    "mi250x": "amd-cdna2",
    **dict.fromkeys(("mi300x", "mi325x"), "amd-cdna3"),
    **dict.fromkeys(("gaudi2", "gaudi3"), "intel-gaudi"),
    **dict.fromkeys(("trainium", "trainium2", "inferentia2"), "aws-trainium"),
}
TRAINING_MFU_FAMILY_BY_VENDOR: dict[str, str] = {
    "nvidia": "nvidia-hopper",
    "amd": "amd-cdna3",
    "google": "google-tpu-v5e",
    "intel": "intel-gaudi",
    "aws": "aws-trainium",
}
# Families whose units join through the scale-up fabric: several TPU hosts form one
# slice over ICI (a v5p pod holds 8,960 chips, a v5e pod 256), so the data-centre
# network between hosts does not bound the scaling the MaxText tables measured.
TRAINING_SCALEUP_JOINS_UNITS = frozenset({"google-tpu-v5p", "google-tpu-v5e"})

# Scaling beyond the measured cluster: efficiency f per doubling of accelerators.
# Llama 3 (arXiv 2407.21783, Table 4) loses 430 -> 400 TFLOPs/GPU from 8,192 to 16,384
# H100 (0.93 per doubling); MaxText v5e 16B loses 61.10% -> 54.65% over five doublings
# (0.98 per doubling): 0.95 with a fabric like theirs (>= 1,600 Gbit/s per node:
# Selene's 8 x 200 Gbit/s HDR, Meta's 8 x 400 Gbit/s RoCE). Slower networks were not
# measured: 0.90 from 400 Gbit/s, 0.80 below (stated assumptions), and their loss
# starts beyond one node instead of beyond the measured cluster.
TRAINING_FAST_FABRIC_GBPS_PER_NODE = 1600.0
TRAINING_SCALING_PER_DOUBLING_FAST = 0.95
TRAINING_SCALING_PER_DOUBLING_400G = 0.90
TRAINING_SCALING_PER_DOUBLING_SLOW = 0.80
# A bare accelerator (no offering) is counted in nodes of 8 (HGX/DGX-class servers).
TRAINING_ACCELERATORS_PER_BARE_NODE = 8

# Spot training: preemptions per instance-hour, per provider. AWS Spot Instance Advisor
# bands its "frequency of interruption" (share of capacity reclaimed over the trailing
# month) as <5%, 5-10%, 10-15%, 15-20% and >20%; GPU instances (p4d, p5) sit in the top
# band: 0.20 per instance-month = 0.20 / 730 per instance-hour. Other providers publish
# no rate; Google stops preemptible VMs (the same spare capacity as Spot VMs) after at
# most 24 h, so one preemption per instance-day is taken for them (stated assumption).
SPOT_PREEMPTIONS_PER_INSTANCE_HOUR: dict[str, float] = {"aws": 0.20 / 730.0}
SPOT_PREEMPTIONS_PER_INSTANCE_HOUR_DEFAULT = 1.0 / 24.0
# Checkpoint interval and restart time (Young 1974, "A first order approximation to the
# optimum checkpoint interval", CACM 17(9); Daly 2006, FGCS 22(3)): a preemption loses
# on average half an interval of work plus the restart. 30 min is Young's optimum
# sqrt(2 x delta x M) for a 1-minute checkpoint write and an 8-hour job MTBF; the
# restart (replacement capacity, container start, checkpoint load) is taken at 10 min
# (stated assumption; AWS gives a 2-minute interruption notice).
SPOT_CHECKPOINT_INTERVAL_H = 0.5
SPOT_RESTART_H = 10.0 / 60.0

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
