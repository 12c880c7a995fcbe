"""Constants and stated assumptions used by the physics.

Every default that is an assumption rather than a law is named here with its
reason, so the estimate command can print it and a user can see what was assumed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

BYTES_PER_VALUE: dict[str, float] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
    "fp4": 0.5,
    # Weight-only int8 (W8A16): int8 weights (1 byte read per parameter) dequantised
    # on the fly inside the matmuls, activations and the multiply in bf16/fp16, so the
    # step multiplies at the bf16 peak, not the int8 one (hardware._PEAK_COLUMN has no
    # entry for it). Basis: NVIDIA TensorRT-LLM, docs/source/precision.md, "INT4 and INT8
    # Weight-Only (W4A16 and W8A16)": "quantizing the weights of a model and dequantizing
    # those weights on-the-fly in linear layers (Matmuls). The activations are encoded
    # using floating-point values (FP16 or BF16)"
    # (https://nvidia.github.io/TensorRT-LLM/reference/precision.html); torchao's
    # quantization README lists the same scheme as int8 weights with bfloat16 activations.
    "int8-weight-only": 1.0,
}

#: precisions that name weights only: the KV cache cannot be stored in one of them
WEIGHT_ONLY_PRECISIONS = ("int8-weight-only",)

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
    # Whether the step's memory time and compute time overlap (t = max of the two) or add
    # (t = their sum, where the runtime's measurements show the kernels do not hide one
    # behind the other); see :func:`solver.physics.inference.StepModel.step_s`.
    overlap: bool = True
    # Tokens of KV cache each sequence's attention reads per decode step whatever its
    # context, for an engine whose cache is a dense array of a fixed length (0: paged, the
    # cache is read at the sequence's context); see :func:`solver.physics.inference.step_model`.
    static_kv_tokens: int = 0


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
    # vLLM on ROCm (MI300X/MI325X), issue 33. Fitted on the five main MLPerf rows of AMD's
    # harness (Llama 2 70B FP8 with FP8 KV, TP1, prompt 219 tokens: MLPERF_L2_PROMPT in
    # bench/accuracy/ACCURACY_SOURCES.md): the three MI300X rows of v4.1 (m01-m03, MLPINF41_AMD) and,
    # helper h33d, the two MI325X rows of v5.0 (m60-m61, MLPINF50_AMD: 8x MI325X, Offline
    # 33,928.1 and Server 30,724.51 tok/s). These rows are one model shape at large batch,
    # so they pin the compute fraction, not the bandwidth: along the grid's ridge a lower
    # bandwidth trades for a higher compute fraction at the same largest error (eta_bw 0.45
    # with eta_c 0.55 and eta_bw 0.55 with eta_c 0.50 both give 1.24x). The bandwidth
    # fraction (0.55) and the step overhead (2 ms) are therefore kept from the earlier basis
    # (h33c's fit of the v4.1 rows with the 405B batch-1 run) and only eta_c is refitted:
    # `python bench/accuracy/fit_runtime.py vllm-rocm --bw 0.55 --compute
    # 0.40,0.42,0.44,0.46,0.48,0.50,0.52,0.54,0.56 --overhead-ms 2 --combine sum` ranks
    # eta_c 0.50 first (largest error 1.24x, median 11.2%; 0.40 gave 1.42x, the MI325X rows
    # at 0.70x). Memory and compute times add (sum, as on Gaudi; `--combine max` is best at
    # 1.31x over the same rows). By hand (batch 256 = vLLM's max_num_seqs, 219/294, mean
    # context 366; FLOPs per sequence-step 2 x 68.98e9 x (1 + 219/294) + 4 x 80 x 8,192 x 366
    # + 2 x 80 x 8,192 x 219^2 / 294 = 241.9e9, x 256 = 61.9 TFLOP -> 61.9 / (2,614.9 x 0.50)
    # = 47.35 ms on either chip):
    #   m01, one MI300X (5,300 GB/s): weights 68.98 GB / (5,300 x 0.55) = 23.66 ms, KV 256 x
    #     366 x 163,840 B = 15.35 GB -> 5.27 ms; 23.66 + 5.27 + 47.35 + 2 = 78.28 ms -> 3,270
    #     tok/s (measured 2,939: 1.11x);
    #   m60, one MI325X (6,000 GB/s): 20.90 + 4.65 + 47.35 + 2 = 74.90 ms -> 3,418 tok/s
    #     (measured 4,241: 0.81x).
    # The MI325X measures 1.2-1.4x the MI300X at the same compute peak, more than its 13%
    # more bandwidth explains at this batch (stated gap: its 1,000 W against 750 W may hold
    # higher clocks; not modelled). Every main row is Llama 2 70B: no second model size has
    # a main AMD row (stated gap). Oracle's 405B batch-1 run (36 tok/s, 8x MI300X) comes out
    # at 1.08x (405 GB / (8 x 5,300 x 0.55) = 17.4 ms + 252 all-reduces + 2 ms).
    "vllm-rocm": RuntimeEfficiency(
        0.55,
        0.50,
        0.002,
        "MLPINF41_AMD; MLPINF50_AMD; ORACLE_MI300X_405B; SEMIANALYSIS_MI300X",
        overlap=False,
    ),
    # Neuron (TGI-neuron / NxD Inference), issue 33: a decode step on Neuron is mostly a
    # fixed cost per step, not a low bandwidth. Two published batch-1 runs at different
    # model sizes on Inferentia2 (optimum-neuron benchmark/text-generation-inference):
    #   Llama-3.1-8B bf16 on 4 chips (performance/llama3.1-8b/tgi-results.csv, 2025-06,
    #     synchronous): 26.79 ms per token for 16.06 GB / 4 = 4.02 GB per chip, L = 32;
    #   Llama-3-70B bf16 on 12 chips (performance/llama3-70b-inf2.48xlarge/
    #     tgi-results-batchsize-1.csv): 31.61 ms per token for 141.1 / 12 = 11.76 GB per
    #     chip, L = 80.
    # t = F + (W/d) / (880 GB/s x eta_bw) + 2 L x 24 us (all-reduce latency, NeuronLink).
    # The two points differ by 4.82 ms, of which 2.30 ms is the 96 more all-reduces, so
    # 7.74 GB more per chip costs 2.52 ms: 3.1 TB/s per chip, above the 880 GB/s data
    # sheet. The bandwidth slope is therefore bounded by the data sheet; the grid fit (`python
    # bench/accuracy/fit_runtime.py neuron --bw 0.3,0.5,0.7,0.9,1.0 --compute 0.05,0.07,0.1 --overhead-ms
    # 0,5,10,15,20`, over the Neuron main rows) ranks eta_bw 0.90, eta_c 0.10, 15 ms first (largest
    # error 1.52x, median 19%). By hand, at 0.9 the weight reads are 4.02 / 0.792 = 5.07 ms and
    # 11.76 / 0.792 = 14.85 ms, leaving F = 26.79 - 5.07 - 1.54 = 20.2 ms and 31.61 - 14.85 - 3.84 =
    # 12.9 ms: F = 15 ms, between them (the value whose largest error over the Neuron rows is least,
    # 1.5x, with the Trainium 70B row, 20.47 ms on 16 chips, in the fit). eta_c from the 8B run's
    # TTFT: 315.79 ms for 2 x 8e9 x 1,500 FLOPs over 4 x 190 TFLOPS (31.6 ms at 100%) -> 0.10. The
    # older single-row fit (0.18 of bandwidth, no overhead) charged the fixed cost as bandwidth and
    # predicted the 70B rows 2.5-2.9x too slow.
    "neuron": RuntimeEfficiency(0.90, 0.10, 0.015, "OPTNEURON_TGI_PERF"),
    # Gaudi (vLLM-fork / Optimum Habana), issue 33: at large batch the measured step is the
    # SUM of the memory and compute times (overlap=False), not their maximum. Fitted on the
    # Intel Gaudi 3 throughput table (intel.com .../gaudi/model-performance.html, SynapseAI
    # 1.18, FP8) for Llama 2 7B (1 HPU) and Llama 2 70B (2 HPU), 8 rows, and the Gaudi 2
    # table's 5 rows (7B-70B): eta_bw 0.85, eta_c 0.40 of the FP8 peak, F = 5 ms per step
    # minimise the largest error over those 13 rows (1.5x, the Gaudi 2 TP4 70B row; median
    # 10%). The page's 12 Llama 3.1 rows were set apart while fitting; with them the grid
    # (`python bench/accuracy/fit_runtime.py gaudi --bw 0.75,0.8,0.85,0.9,0.95 --compute
    # 0.35,0.4,0.45 --overhead-ms 3,4,5,6,8 --combine sum`) keeps the same largest error,
    # 1.51x, at these figures (median 7.1%). Two rows by hand (KV in FP8; all-reduce terms
    # from the link figures):
    #   Llama 2 7B, 2,048/2,048, batch 75, 1 Gaudi 3 (3,700 GB/s, 1,835 TFLOPS): weights
    #     6.74 GB / (3,700 x 0.85) = 2.14 ms; KV 75 x 3,072 (mean context) x 262,144 B =
    #     60.4 GB -> 19.20 ms; FLOPs 75 x [2 x 6.74e9 x 2 + attention] -> 2.97 ms at 0.40
    #     of peak; + 5 ms = 29.32 ms per step -> 75 / 0.02932 = 2,558 tok/s (measured
    #     2,734: 0.94x); memory dominates, so max or sum differ little (2,846, 1.04x);
    #   Llama 2 70B, 128/2,048, batch 512, 2 Gaudi 3: memory 10.97 + 15.36 = 26.33 ms,
    #     compute 52.18 ms, fixed 5 + 3.84 (160 all-reduces) ms, all-reduce bytes 3.88
    #     ms: the sum is 91.23 ms -> 512 / 0.09123 / 2 = 2,806 tok/s per HPU (measured
    #     3,013: 0.93x); the maximum would give 64.9 ms -> 3,944 (1.31x), and the old
    #     NVIDIA-borrowed fractions with the maximum 5,686 (1.89x).
    # Gaudi 2 keeps the same runtime figures (its table's rows fall to 0.66-0.78x at 865
    # FP8 TFLOPS, the TP4 70B row to 1.51x, and the MLPerf v4.0 holdout rows to 0.68x and
    # 0.87x: within 1.5x, below the point).
    "gaudi": RuntimeEfficiency(
        0.85, 0.40, 0.005, "INTEL_G3_INF; GAUDI2_INFERENCE_PERF", overlap=False
    ),
    # TPU (vLLM TPU, paged KV cache), issue 33. eta_c: MaxText on TPU v5e reaches 55-67%
    # MFU in training (configs/v5e/README.md), taken as the achieved GEMM fraction. eta_bw,
    # overhead and overlap from two published serving runs at different model sizes, neither
    # a holdout row (TPU_RECIPES_VLLM_V6E, TPU_RECIPES_JSMT_V5E in bench/accuracy/ACCURACY_SOURCES.md):
    #   Llama-3.3-70B bf16 on v6e-8 (vLLM TPU, tpu-recipes inference/trillium/vLLM/Llama3.x),
    #     1000/1000 at concurrency 64: 2,494.80 tok/s = 64 / 25.65 ms per step (TPOT 25.35 ms);
    #     weights 141.1 / 8 = 17.64 GB per chip / (1,638 GB/s x 0.60) = 17.95 ms, KV 64 x 1,500
    #     x 327,680 B / 8 = 3.93 GB -> 4.00 ms, 160 all-reduces x 24 us = 3.84 ms: 25.8 ms with
    #     no step overhead (0.99x of the measured step);
    #   Llama 2 7B bf16 on v5e-8 (JetStream + MaxText, batch 88, dense 2,048-token cache; the
    #     `jetstream` runtime below): 88 / 3,061.78 tok/s = 28.74 ms per step; weights 13.48 / 8
    #     = 1.69 GB / (819 x 0.60) = 3.43 ms, KV 88 x 2,048 x 524,288 B / 8 = 11.81 GB -> 24.04
    #     ms, 64 x 24 us = 1.54 ms: 29.0 ms (1.01x).
    # `python bench/accuracy/fit_runtime.py tpu --bw 0.5,0.6,0.7,0.8 --compute 0.45,0.55,0.65
    # --overhead-ms 0,2,4 --combine max` over the three TPU main rows ranks eta_bw 0.60, no
    # overhead first (largest error 1.09x); `--combine sum` does no better (1.10x), so max.
    # The rows are decode-bound: they do not pin eta_c (every grid value ties).
    "tpu": RuntimeEfficiency(0.60, 0.55, 0.0, "MAXTEXT_V5E_MFU; TPU_RECIPES_VLLM_V6E"),
}
# JetStream + MaxText on TPU keeps each sequence's KV cache in a dense array of the
# deployment's max_target_length (a prefill cache of max_prefill_predict_length and an
# autoregressive cache of the rest) and its decode attention reads the whole cache every
# step (MaxText MaxText/inference/kvcache.py: "update the cache for this entry and then
# return the full cache"); the published recipe sets MAX_TARGET_LENGTH=2048
# (AI-Hypercomputer/tpu-recipes inference/v5e/JetStream-Maxtext/Llama2-7B/README.md).
# Same kernels' fractions as the `tpu` runtime (both are XLA on TPU).
JETSTREAM_CACHE_TOKENS = 2048
RUNTIME_EFFICIENCY["jetstream"] = replace(
    RUNTIME_EFFICIENCY["tpu"],
    source="TPU_RECIPES_JSMT_V5E; " + RUNTIME_EFFICIENCY["tpu"].source,
    static_kv_tokens=JETSTREAM_CACHE_TOKENS,
)
RUNTIME_BY_VENDOR: dict[str, str] = {
    "nvidia": "vllm-cuda",
    "amd": "vllm-rocm",
    "aws": "neuron",
    "intel": "gaudi",
    "google": "tpu",
}

# Error band of a capacity figure (issue 33), as the root-mean-square of ln(measured /
# predicted) capacity over the accuracy table's MAIN serving rows of each runtime (holdout
# rows never set a default): `python bench/accuracy/accuracy.py --bands` prints them (throughput
# rows measured / predicted, time-per-token rows predicted / measured; TTFT rows are not
# capacity). The RMS counts the bias with the spread (NVIDIA's TensorRT-LLM rows sit
# +0.08 above the physics on average), so the band is wider than the spread alone.
# vLLM on CUDA shares TensorRT-LLM's kernel fractions and has no main row of its own: it
# takes TensorRT-LLM's band. A runtime with fewer than 4 main serving rows (TPU: 2 + 1
# JetStream) takes the pooled band: three rows of one shape say little about the spread
# on others. Re-read 2026-11-26 (helper h33d) after the MLPerf v5.0 MI325X rows (m60-m61)
# and the vllm-rocm refit: vLLM ROCm now has 5 main rows (MI300X and MI325X; still one
# model) and its own band; 23 of 29 holdout capacity rows fall within their runtime's
# two-sided 90% band (14 of 29 before).
CAPACITY_BAND_LOG: dict[str, float] = {
    "gaudi": 0.182,  # 25 rows (Gaudi 2 and 3 tables, MLPerf v4.0 is holdout)
    "neuron": 0.308,  # 4 rows (optimum-neuron, Inferentia2 and Trainium)
    "tensorrt-llm": 0.201,  # 10 rows (MLPerf v4.1, TensorRT-LLM perf overview)
    "vllm-cuda": 0.201,  # = TensorRT-LLM's (same kernel fractions, no main row)
    "vllm-rocm": 0.157,  # 5 rows (MLPerf v4.1 MI300X, v5.0 MI325X)
    "tpu": 0.193,  # 3 rows (vLLM TPU v6e, JetStream v5e): the pooled band
    "jetstream": 0.193,  # = tpu's
}
CAPACITY_BAND_LOG_POOLED = 0.193  # all 47 main serving rows
# A measured profile's band: run-to-run spread of published repeat runs at one setting
# (optimum-neuron llama3.1-8b tgi-results.csv, three 'throughput' runs: 928.97, 913.58 and
# 914.92 tok/s, ln spread 1.7%): 0.02. A calibrated figure (physics x a factor fitted on
# other cards) keeps its runtime's physics band: the factor moves the centre on the cards
# it was fitted on, not the spread on the others (stated assumption).
CAPACITY_BAND_LOG_MEASURED = 0.02

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
    """A published training utilisation, the spread of the runs it comes from, and the
    cluster size it was measured at.

    All figures are achieved fractions of the dense peak at the run's precision, on the
    FLOPs :func:`solver.physics.training.training_flops` counts (6ND plus attention).

    Attributes
    ----------
    mfu
        The point figure: the published run at the largest scale (the one the scaling loss
        is counted from).
    measured_at_accelerators
        Cluster size of the point figure; scaling loss applies only beyond it.
    source
        Where the point figure comes from.
    low, high
        The band: the lowest and highest published runs of the family cited here (dense
        models of 7B+ parameters at 2k-8k context on 8 or more accelerators), or, where one
        run is all there is, the stated band ``MFU_BAND_ONE_RUN`` (``band`` says which).
    band
        Where the band comes from, in words.
    """

    mfu: float
    measured_at_accelerators: float
    source: str
    low: float
    high: float
    band: str

    def __post_init__(self) -> None:
        if not 0.0 < self.low <= self.mfu <= self.high <= 1.0:
            raise ValueError(
                f"an MFU band must hold 0 < low <= mfu <= high <= 1; got low {self.low}, "
                f"mfu {self.mfu}, high {self.high} ({self.source})"
            )


# A family with one published run (or an assumed figure) has not shown its spread. Its
# band is this multiple of the point below and above it: in the families whose sources
# publish a table (H100 BF16 and FP8, B200, A100, MI250/MI250X, TPU v5e and v5p, Trainium)
# the lowest run sits at 0.73-1.0 of the point figure and the highest at 1.09-1.49 of it;
# 0.8 and 1.2 take the lower half of each range, since one run says nothing of how far
# the next falls (stated assumption).
MFU_BAND_ONE_RUN: tuple[float, float] = (0.8, 1.2)


def _one_run(mfu: float, measured_at: float, source: str, why: str) -> MfuMeasurement:
    """A family with one run or an assumed figure: the band MFU_BAND_ONE_RUN around it."""
    low_x, high_x = MFU_BAND_ONE_RUN
    return MfuMeasurement(
        mfu,
        measured_at,
        source,
        low=round(mfu * low_x, 4),
        high=round(min(1.0, mfu * high_x), 4),
        band=f"{why}: {low_x:g}-{high_x:g} x the point (stated band for one run)",
    )


# Default MFU per accelerator family and training precision (DESIGN.md section 7: "MFU
# defaults come from published runs at the scale they were measured", with their spread).
# The point figure is the published run at the largest scale (where a paper gives a
# table, its lowest figure at the relevant context and the table's largest cluster); the
# band is the lowest and highest published runs cited (dense 7B+ models at 2k-8k context
# on 8+ accelerators), and a training job meets its deadline at the band's low end by
# default (``training_margin``, solver/inputs/problem.py). Sources in full in
# catalogs/SOURCES.md, "Training MFU".
TRAINING_MFU: dict[str, dict[str, MfuMeasurement]] = {
    "nvidia-hopper": {
        # Point: Dubey et al., "The Llama 3 Herd of Models", arXiv 2407.21783, Table 4: 405B
        # at 8k context, 430 TFLOPs/GPU (43%) on 8,192 H100 and 400 (41%) on 16,384 (38% at
        # 131k context, outside the band's 2k-8k). Band: MosaicML llm-foundry
        # scripts/train/benchmarking/README.md, "H100 80GB BF16", MPT 7B-70B at 2k-8k on
        # 8-64 H100: lowest MPT-30B at 8k on 8 GPUs, 29.92%; highest MPT-7B at 2k on 8,
        # 46.44%; Llama 3's 41-43% inside.
        "bf16": MfuMeasurement(
            0.41,
            16_384,
            "Llama 3 405B, 16,384 H100 (arXiv 2407.21783 T4)",
            low=0.30,
            high=0.46,
            band="MosaicML llm-foundry H100 BF16 table, MPT 7B-70B on 8-64 GPUs: "
            "MPT-30B 8k 29.9% to MPT-7B 2k 46.4%; Llama 3 405B 41-43%",
        ),
        # Point: NeMo 24.07 performance summary, DGX-H100 FP8 pre-training (NVIDIA/NeMo
        # docs/source/performance/performance_summary.md): Llama 2/3 and GPT-3 rows at
        # 697-842 model TFLOP/s/GPU = 0.35-0.43 of the 1,979 FP8 peak on 8-512 GPUs. Band:
        # NeMo 24.12 performance summary (docs.nvidia.com/nemo-framework/user-guide/24.12/
        # nemotoolkit/performance/performance_summary.html), FP8 pre-training of 7B+ models
        # on 8-512 H100: lowest Nemotron-22B on 64 GPUs, 562 TFLOP/s = 0.28; highest
        # GPT3-175B on 512 GPUs, 888 TFLOP/s = 0.45.
        "fp8": MfuMeasurement(
            0.35,
            512,
            "NeMo 24.07 H100 FP8 table, 8-512 GPUs",
            low=0.28,
            high=0.45,
            band="NeMo 24.07 and 24.12 H100 FP8 tables, 7B-340B on 8-512 GPUs: "
            "Nemotron-22B 0.28 to GPT3-175B 0.45",
        ),
    },
    "nvidia-blackwell": {
        # NeMo 25.04 long-sequence table, DGX-B200 (NVIDIA/NeMo docs/source/performance/
        # performance_long_sequence.md): Llama 3 8B FP8 with context parallelism at
        # 1,588-1,717 TFLOP/s/GPU = 0.35-0.38 of the 4,500 FP8 peak on 8-1,024 GPUs (the
        # rows of one table are the band; no shorter-context B200 run is cited).
        "fp8": MfuMeasurement(
            0.35,
            1_024,
            "NeMo 25.04 B200 FP8 table, 8-1,024 GPUs",
            low=0.35,
            high=0.38,
            band="NeMo 25.04 B200 FP8 long-sequence table, Llama 3 8B on 8-1,024 GPUs",
        ),
        # No dense BF16 B200 pre-training run is published there; the FP8 runs'
        # utilisation and band are taken against the BF16 peak (stated assumption).
        "bf16": MfuMeasurement(
            0.35,
            1_024,
            "assumed equal to the FP8 runs on B200",
            low=0.35,
            high=0.38,
            band="the FP8 runs' band (NeMo 25.04 B200), taken for BF16",
        ),
    },
    "nvidia-ampere": {
        # Point: Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
        # Clusters Using Megatron-LM", SC'21, Table 1: 135-163 TFLOP/s = 43-52% of 312 from
        # 32 to 3,072 A100 (their FLOPs count the full-recompute forward, as ours do).
        # Band: MosaicML llm-foundry, "A100 80GB" and "A100 40GB" tables, MPT 7B-70B at
        # 2k-8k on 8-128 GPUs: lowest MPT-70B on 64 A100-40GB, 35.87%; highest MPT-7B at 2k
        # on 8 A100-80GB, 64.23%; Megatron-LM's 43-52% inside.
        "bf16": MfuMeasurement(
            0.43,
            3_072,
            "Megatron-LM, 32-3,072 A100 (Narayanan 2021 T1)",
            low=0.36,
            high=0.64,
            band="MosaicML llm-foundry A100 tables, MPT 7B-70B on 8-128 GPUs: MPT-70B "
            "35.9% to MPT-7B 64.2%; Megatron-LM 43-52%",
        ),
    },
    "nvidia-volta": {
        # Shoeybi et al., "Megatron-LM", arXiv 1909.08053: 8.3B at 15.1 PFLOP/s on 512
        # V100 = 29.5 TFLOP/s per GPU = 0.24 of 125; their one-GPU baseline (1.2B, 39
        # TFLOP/s) is 0.30, outside the band's rules (one GPU, 1.2B): one run.
        "bf16": _one_run(
            0.24,
            512,
            "Megatron-LM 8.3B, 512 V100 (Shoeybi 2019)",
            "one V100 run at scale (Shoeybi 2019; its 1-GPU baseline 0.30 agrees)",
        ),
    },
    "google-tpu-v5p": {
        # MaxText README, "Runtime Performance Results", TPU v5p: 63.99-71.47% MFU from
        # v5p-128 to v5p-12288 (64 to 6,144 chips; v5p-N counts N/2 chips).
        "bf16": MfuMeasurement(
            0.64,
            6_144,
            "MaxText, 64-6,144 v5p chips (README table)",
            low=0.64,
            high=0.71,
            band="MaxText README v5p table, 64-6,144 chips: 63.99% to 71.47%",
        ),
    },
    "google-tpu-v5e": {
        # MaxText configs/v5e/README.md: 16B-128B on 1 to 32 v5e-256 slices, 46.25-66.86%
        # MFU; lowest (128B) at 32 slices = 8,192 chips.
        "bf16": MfuMeasurement(
            0.46,
            8_192,
            "MaxText, 256-8,192 v5e chips (v5e README)",
            low=0.46,
            high=0.67,
            band="MaxText v5e README, 16B-128B on 256-8,192 chips: 46.25% to 66.86%",
        ),
    },
    "amd-cdna2": {
        # Point: Dash et al., "Optimizing Distributed Training on Frontier for Large Language
        # Models", arXiv 2312.12705: 22B 38.38%, 175B 36.14%, 1T 31.96% of peak on 3,072
        # MI250X GCDs = 1,536 cards (a catalog MI250X is one card of two GCDs). Band with
        # Databricks/MosaicML, "Training LLMs at Scale with AMD MI250 GPUs" (Oct 2023):
        # MPT-7B at 166 TFLOP/s per MI250 on 4 cards and 159 on 128 = 0.46-0.44 of the
        # MI250's 362.1 TFLOPS.
        "bf16": MfuMeasurement(
            0.32,
            1_536,
            "Frontier 1T, 3,072 MI250X GCDs (Dash 2023)",
            low=0.32,
            high=0.46,
            band="Frontier 22B-1T on 1,536 MI250X, 32.0-38.4% (Dash 2023); MPT-7B on "
            "4-128 MI250, 44-46% (Databricks 2023)",
        ),
    },
    "amd-cdna3": {
        # No at-scale MI300X/MI325X training run is published in our sources: the point is
        # the CDNA2 Frontier figure (stated assumption). Its one CDNA3 run: SemiAnalysis's
        # Llama 3 70B 4-layer proxy, FSDP on 8 MI300X, BF16 at batch 12 (ROCm/
        # TransformerEngine issue #78, Oct 2024: the FP8 run's 491.22 TFLOP/s/GPU is "6%
        # slower than bf16 at batch size 12", so BF16 ~ 523 TFLOP/s = 0.40 of 1,307.4) is the
        # high end. The low end takes the one-run rule below the carried point (0.8 x 0.32 =
        # 0.256): the point itself comes from another generation and another stack.
        "bf16": MfuMeasurement(
            0.32,
            1_536,
            "assumed equal to MI250X on Frontier",
            low=round(0.32 * MFU_BAND_ONE_RUN[0], 4),
            high=0.40,
            band="no CDNA3 run at scale: low 0.8 x the Frontier point (stated band for "
            "one run); high one 8-GPU MI300X BF16 run (Llama 3 70B proxy, ROCm/"
            "TransformerEngine#78, ~523 TFLOP/s)",
        ),
    },
    "intel-gaudi": {
        # Intel Gaudi 2 model performance page (SynapseAI 1.18): Llama 2 70B FP8, 64 HPU,
        # 4k context, 54,274 tokens/s x (6 x 69e9 + 12 x 80 x 8192 x 4096) FLOPs/token
        # / 64 = 378 TFLOP/s = 0.44 of 865: one run.
        "fp8": _one_run(
            0.44,
            64,
            "Llama 2 70B FP8, 64 Gaudi 2 (Intel perf page)",
            "one Gaudi 2 run (Intel perf page)",
        ),
        # Intel publishes no BF16 training run; the FP8 run's utilisation is taken
        # against the BF16 peak (stated assumption; Gaudi 3 takes the Gaudi 2 figures).
        "bf16": _one_run(
            0.44,
            64,
            "assumed equal to the FP8 run on 64 Gaudi 2",
            "one Gaudi 2 FP8 run, taken for BF16",
        ),
    },
    "aws-trainium": {
        # aws-neuron-sdk general/benchmarks/trn1/training_data_decoder.csv (Neuron 2.16),
        # NeuronX Distributed rows, 4k context, 16 Trainium chips (32 NeuronCores) per
        # trn1.32xlarge, FLOPs/token 6N + 12 L d s: Llama2-13B on 32 nodes (512 chips),
        # 85.65 seq/s -> 60 TFLOP/s = 0.32 of 190 (point); Llama2-7B on 16 nodes, 93.3 seq/s
        # -> 70 TFLOP/s = 0.37; Llama2-70B on 32 nodes, 15.34 seq/s -> 55 TFLOP/s = 0.29.
        # (The NeMo rows' topologies do not fill their node counts and are left out.)
        "bf16": MfuMeasurement(
            0.32,
            512,
            "Llama2-13B, 512 Trainium (Neuron benchmarks)",
            low=0.29,
            high=0.37,
            band="Neuron 2.16 NxD rows, Llama2 7B-70B on 256-512 Trainium: 70B 0.29 to 7B 0.37",
        ),
    },
    "pcie": {
        # Datacenter cards without a scale-up link (L4, L40S, A10G, H100 PCIe ...): no
        # published at-scale run; ZeRO-3 gathers cross PCIe Gen4 (32 GB/s per direction,
        # a tenth of A100 NVLink), so we take 0.35, below the NVLink A100 figure (0.43),
        # for one 8-card server (stated assumption).
        "bf16": _one_run(
            0.35,
            8,
            "assumed below Megatron-LM A100 (no PCIe run found)",
            "an assumed figure, no run",
        ),
    },
    "consumer": {
        # Schultheis & Alistarh, "LLMQ", arXiv 2512.15306: ~50% FLOP utilisation on 4 x
        # RTX 4090 only with a custom CUDA stack (copy-engine collectives, offloading);
        # standard stacks lack peer-to-peer on GeForce cards: 0.30 for one 4-card
        # workstation (stated assumption below the published figure).
        "bf16": _one_run(
            0.30,
            4,
            "assumed below LLMQ's ~50% on 4 x RTX 4090",
            "an assumed figure below one custom-stack run",
        ),
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
