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
    # Tokens one engine step runs at most (vLLM's max_num_batched_tokens, TensorRT-LLM's
    # max_num_tokens): decode tokens first, prompt chunks in the rest. The sizing's step
    # runs prefill as the engine does, in chunks of min(P, budget - b) tokens riding a
    # share of the steps (solver/physics/inference.py, "Prefill chunks"). 2048: the value
    # vLLM's guide names for inter-token latency (vllm-project/vllm
    # docs/configuration/optimization.md, "Chunked Prefill"), the replay's default too.
    max_num_batched_tokens: int = 2048
    # Whether the engine admits a request only when the KV cache can hold it to its last
    # output token (P + O tokens reserved at admission, never preempted) rather than as it
    # grows (paged, preempting when full: vLLM). TensorRT-LLM's default capacity scheduler,
    # GUARANTEED_NO_EVICT, does the former: "guarantee that a started request is never
    # paused" (nvidia.github.io/TensorRT-LLM/performance/performance-tuning-guide/
    # useful-runtime-flags.html, "Capacity Scheduler Policy"; SchedulerConfig's default
    # capacity_scheduler_policy), so its running batch is the requests whose full P + O
    # contexts fit, not their mean contexts (solver/physics/inference.py, "Reserved KV").
    kv_reserved_full: bool = False
    # Whether a decode step's attention (its KV-cache read) runs as its own kernel after
    # the linear layers, so its time adds to theirs instead of hiding under their FLOPs:
    # t = max(weights, linear FLOPs) + max(KV read, attention FLOPs), the operator-level
    # roofline summed over a layer's kernels (Yuan et al., "LLM Inference Unveiled: Survey
    # and Roofline Model Insights", arXiv:2402.16363, 2024, section 3; Vidur, Agrawal et
    # al., MLSys 2024, predicts a step as the sum of its operators' profiled times).
    # solver/physics/inference.py, "Attention apart".
    attention_apart: bool = False
    # Whether the engine's decode graph is compiled for a fixed batch (AWS Neuron:
    # transformers-neuronx / NxD Inference compile each graph for one batch size and
    # sequence length, TGI-neuron's MAX_BATCH_SIZE), so every decode step runs all the
    # compiled slots, padded: a running batch b costs the compiled batch's step, whatever
    # b. The compiled batch is the planned batch, or the one named in a runtime spec
    # ``neuron@32`` (:func:`split_compiled_batch`). solver/physics/inference.py, "Static batch".
    static_batch: bool = False
    # Whether each prompt runs as its own graph between decode steps (Neuron's context-
    # encoding model, separate from the token-generation model) instead of riding them in
    # chunks: an admitted request's prefill pauses the whole decode batch.
    # solver/physics/inference.py, "Serial prefill".
    prefill_serial: bool = False


# Share of the runtime's compute fraction a serving engine achieves at a weight precision
# whose tensor path the data sheet rates above FP8's (issue 47): FP4 on Blackwell doubles
# the dense peak (B200 9,000 against 4,500 TFLOPS), but end to end under TensorRT-LLM it
# runs at FP8's rate (activations quantised per block, attention and the other non-GEMM
# work at FP8/BF16). Fitted on the seven B200 Llama 3.3 70B FP4 TP1 rows of TensorRT-LLM's
# perf overview (TRTLLM_PERF_V1, trtllm-bench at maximum load, ISL/OSL 128/2048 to
# 20000/2000; the main rows m62-m68 of bench/accuracy/accuracy_cases.csv): at 1.0 they are
# predicted 1.30x-2.21x too fast (median |error| 48%); the grid 0.25-1.0 is best at 0.5
# (median 17.6%, every row within 0.69x-1.61x; 0.4: 18.6%, 0.6: 26.2%).
SERVING_COMPUTE_SHARE: dict[str, float] = {"fp4": 0.5}


# Share of the data-sheet dense peak a device sustains on a large dense GEMM, where its
# vendor publishes it (session 61, issue 47): the MI300X and MI325X have the same
# data-sheet peaks (2,614.9 FP8 / 1,307.4 BF16 TFLOPS, both at the 2,100 MHz boost clock),
# but under a dense GEMM the power manager holds the 750 W MI300X lower than the 1,000 W
# MI325X. AMD's measured max-achievable FLOPs (ROCm/rocm-blogs
# blogs/software-tools-optimization/measuring-max-achievable-flops-part2/README.md, "AMD MAF
# Results", hipBLASLt-bench, Feb 2025): MI300X FP8 1,273 TFLOPs at a median 1,230 MHz, BF16
# 708 at 1,207 MHz; MI325X FP8 1,519 at 1,464 MHz, BF16 843 at 1,447 MHz (1.19x at equal
# peaks). The serving step's compute time is taken at eta_c x this share x the data-sheet
# peak (solver/physics/hardware.py, device_figures); the INT8 path takes the FP8 share
# (same matrix-core rate), every other precision the BF16 one. Training MFUs are measured
# against the data-sheet peak and do not take it.
SUSTAINED_COMPUTE_SHARE: dict[str, dict[str, float]] = {
    "mi300x": {"fp8": 1273.0 / 2614.9, "bf16": 708.0 / 1307.4},
    "mi325x": {"fp8": 1519.0 / 2614.9, "bf16": 843.0 / 1307.4},
}
# A device of a vendor listed here with no share of its own takes that device's (the
# vendor's runtime fractions are fitted on shares, so a device without one must have
# one too): the MI300X's, the lower of AMD's two (stated assumption, e.g. the MI250X).
SUSTAINED_COMPUTE_SHARE_OF_VENDOR: dict[str, str] = {"amd": "mi300x"}


RUNTIME_EFFICIENCY: dict[str, RuntimeEfficiency] = {
    # NVIDIA NIM 1.8.0 (TensorRT-LLM) on H100, Llama-3.3-70B FP8 TP2: ITL 18.91 ms at
    # concurrency 1 for 70.6 GB of weights over 2 x 3.35 TB/s (10.5 ms at 100%) -> 0.56
    # with the all-reduces, ~0.60 without; TTFT 406.77 ms for a 5,000-token prompt
    # -> 2 x 70.6e9 x 5000 / 0.4068 s / (2 x 1,979 TFLOPS) = 0.44 of FP8 peak.
    # docs.nvidia.com/nim/benchmarking/llm/latest/performance.html. Engine overheads are
    # inside these fractions (they come from end-to-end timings), so no step overhead.
    # attention_apart is not set here: every fitted NVIDIA row of the accuracy table is
    # TensorRT-LLM's (the basis of the change), and vLLM on CUDA has no fitted row to check
    # it on (issue 47 wants >= 3 published vLLM-on-CUDA runs first). The replay's own error
    # study on vLLM (bench/RESULTS.md, replay.py: 63% as-is, 22% with the times added)
    # points the same way; stated, not applied.
    "vllm-cuda": RuntimeEfficiency(0.65, 0.50, 0.0, "NIM_H100_PERF"),
    # TensorRT-LLM: the same kernels' fractions (NIM runs TensorRT-LLM), but its engines
    # batch up to max_batch_size 2,048 by default (tensorrt_llm BuildConfig) where vLLM's
    # max_num_seqs default is 256; MLPerf Llama-2-70B submissions run 806-896 at once.
    # Its max_num_tokens defaults to 8192 (trtllm-build --max_num_tokens, BuildConfig;
    # nvidia.github.io/TensorRT-LLM/performance/performance-tuning-guide/
    # tuning-max-batch-size-and-max-num-tokens.html).
    "tensorrt-llm": RuntimeEfficiency(
        0.65,
        0.50,
        0.0,
        "NIM_H100_PERF",
        max_num_seqs=2048,
        max_num_batched_tokens=8192,
        kv_reserved_full=True,
        attention_apart=True,
    ),
    # vLLM on ROCm (MI300X/MI325X): fitted on the five main MLPerf rows of AMD's harness
    # (MLPINF41_AMD, MLPINF50_AMD); memory and compute times add. eta_c is a fraction of the
    # device's sustained GEMM rate (SUSTAINED_COMPUTE_SHARE x the data-sheet peak; session
    # 61: 0.94, was 0.50 of the data-sheet peak). The fit and two rows by hand:
    # docs/concepts/runtime-figures.md, "vLLM on ROCm".
    "vllm-rocm": RuntimeEfficiency(
        0.55,
        0.94,
        0.002,
        "MLPINF41_AMD; MLPINF50_AMD; ORACLE_MI300X_405B; SEMIANALYSIS_MI300X; AMD_MAF",
        overlap=False,
    ),
    # Neuron (TGI-neuron / NxD Inference): a decode step is mostly a fixed cost per step,
    # fitted on two published batch-1 runs on Inferentia2 at different model sizes. Each
    # graph is compiled for one batch and sequence length (NxD Inference NeuronConfig
    # batch_size / seq_len are compile-time options; optimum-neuron's benchmark README: the
    # compiled batch size and sequence length must match MAX_BATCH_SIZE and
    # MAX_TOTAL_TOKENS): every decode step runs the compiled batch, padded, over a dense KV
    # cache of the compiled length, 4,096 in every published optimum-neuron deployment
    # (static_batch, static_kv_tokens); a prompt runs as its own context-encoding graph,
    # pausing the batch (prefill_serial). eta_c 0.115 (session 62, was 0.10): the 8B run's
    # TTFT, 315.79 ms, under the model's own TTFT (the prompt's FLOPs at eta_c, one weight
    # read, the all-reduces, one padded step). The fit and the rows by hand:
    # docs/concepts/runtime-figures.md, "Neuron".
    "neuron": RuntimeEfficiency(
        0.90,
        0.115,
        0.015,
        "OPTNEURON_TGI_PERF; NXDI_API",
        static_kv_tokens=4096,
        static_batch=True,
        prefill_serial=True,
    ),
    # Gaudi (vLLM-fork / Optimum Habana): at large batch the measured step is the SUM of
    # the memory and compute times (overlap=False); fitted on the Intel Gaudi 3 and Gaudi 2
    # throughput tables. The fit and two rows by hand: docs/concepts/runtime-figures.md, "Gaudi".
    "gaudi": RuntimeEfficiency(
        0.85, 0.40, 0.005, "INTEL_G3_INF; GAUDI2_INFERENCE_PERF", overlap=False
    ),
    # TPU (vLLM TPU, paged KV cache): eta_c from MaxText's training MFU on TPU v5e; eta_bw,
    # overhead and overlap from two published serving runs at different model sizes. The
    # fit and both runs by hand: docs/concepts/runtime-figures.md, "TPU".
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


def split_compiled_batch(runtime: str | None) -> tuple[str | None, int]:
    """(runtime, compiled batch) of a runtime spec: ``neuron@32`` is the Neuron runtime with
    its decode graph compiled for 32 sequences (a deployment measured at another running
    batch); a plain name is compiled at the planned batch (0).

    >>> split_compiled_batch("neuron@32")
    ('neuron', 32)
    >>> split_compiled_batch("vllm-cuda")
    ('vllm-cuda', 0)
    """
    if runtime is None or "@" not in runtime:
        return runtime, 0
    name, _, batch = runtime.partition("@")
    if not batch.isdigit() or int(batch) < 1:
        raise ValueError(
            f"runtime {runtime!r}: the compiled batch after '@' is a whole number >= 1"
        )
    eff = RUNTIME_EFFICIENCY.get(name)
    if eff is None or not eff.static_batch:
        static = sorted(k for k, v in RUNTIME_EFFICIENCY.items() if v.static_batch)
        raise ValueError(
            f"runtime {runtime!r}: only a static-batch runtime takes a compiled batch "
            f"({', '.join(static)})"
        )
    return name, int(batch)


# Error band of a capacity figure, as the root-mean-square of ln(measured / predicted)
# capacity over the accuracy table's MAIN serving rows of each runtime (holdout rows never
# set a default): `python bench/accuracy/accuracy.py --bands` prints them. How the rows are
# read, and the runtimes that take another's band: docs/concepts/runtime-figures.md, "Error bands".
CAPACITY_BAND_LOG: dict[str, float] = {
    "gaudi": 0.182,  # 25 rows (Gaudi 2 and 3 tables, MLPerf v4.0 is holdout)
    "neuron": 0.197,  # 4 rows (optimum-neuron, Inferentia2 and Trainium; 0.308 before session 62)
    "tensorrt-llm": 0.201,  # 10 rows (MLPerf v4.1, TensorRT-LLM perf overview)
    "vllm-cuda": 0.201,  # = TensorRT-LLM's (same kernel fractions, no main row)
    "vllm-rocm": 0.109,  # 5 rows (MLPerf v4.1 MI300X, v5.0 MI325X; 0.157 before session 61)
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
    peak_tflops
        The dense peak, TFLOP/s, the figures are fractions of (the accelerator's at the
        run's precision), set by :func:`solver.physics.training.default_mfu`; ``None``
        where no accelerator is known. A mixture of experts reads it: its all-to-all time
        does not shrink with the peak (:func:`solver.physics.training.moe_mfu`).
    """

    mfu: float
    measured_at_accelerators: float
    source: str
    low: float
    high: float
    band: str
    peak_tflops: float | None = None

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
# Mixture-of-experts training (issue 47): a dense family's MFU x
# MOE_EFFICIENCY_MAX / (1 + x R / MOE_A2A_EFFECTIVE_GB_PER_S), x the expert-parallel
# all-to-all bytes per training FLOP (solver.physics.training.moe_all_to_all_bytes_per_flop:
# dispatch and combine, forward and backward, k experts a token, bf16 activations, every
# layer, over 6 N_active FLOPs a token) and R the dense rate on the device (the family's
# point MFU x the peak at the run's precision, TFLOP/s). The expert-parallel work outside
# the multiplies (all-to-all, permutation, routing, the host launching their many small
# kernels) takes x/B seconds a FLOP whatever the tensor cores do; the multiplies 1/R. So a
# faster peak shortens only the multiplies. Basis: Megatron-LM's DeepSeek-V3 on GB200 NVL72
# (NVIDIA/Megatron-LM docs/discussions/deepseek-v3-gb200-optimization, 2025): its MXFP8
# baseline on 256 GB200 reached 494 TFLOP/s a GPU against ~380 estimated on H800, 1.3x for
# 2.5x the FP8 peak, and "the biggest performance issue is ... the CPU kernel launch speed
# cannot keep up with the kernel execution speed on GPU ... the speed of GPU executing
# kernels is getting faster ... fine-grained MoE models introduce more quantization,
# router, and other kernels". (The earlier form, x / 2.047e-4 bytes per FLOP, let that work
# shrink with the peak, and put MoE on B200 1.6-1.8x too fast.) Fitted exactly on the two
# fitted MoE rows (`python bench/accuracy/fit_moe.py`; role fitted in
# bench/accuracy/accuracy_cases.csv): DeepSeek-V3 on 2,048 H800s (DeepSeek-AI 2024,
# arXiv:2412.19437 section 1: 1,543.2 tokens/s a GPU against the dense Hopper FP8
# prediction 2,567.2, e = 0.6011; x = 1.2605e-4, R = 0.35 x 1,978.9 = 692.6 TFLOP/s,
# x R = 87.31 GB/s) and Mixtral 8x7B on a v5p-128 (MaxText end_to_end/tpu/mixtral/
# Run_Mixtral.md: MFU 54.89% against the v5p dense 0.64, e = 0.8577; x = 2.7095e-5,
# R = 0.64 x 459 = 293.8 TFLOP/s, x R = 7.96 GB/s). Two equations e (1 + x R / B) = m:
# B = (0.6011 x 87.31 - 0.8577 x 7.96) / (0.8577 - 0.6011) = 178.0 GB/s,
# m = 0.8577 x (1 + 7.96 / 178.0) = 0.8960. Checked on the holdout MoE rows h37-h39 of the
# accuracy table (its role column says which rows a default may use).
MOE_EFFICIENCY_MAX = 0.8960
MOE_A2A_EFFECTIVE_GB_PER_S = 178.0

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
