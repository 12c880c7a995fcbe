"""What the serving physics needs to know about a device, from catalog columns.

One function, :func:`device_figures`, turns accelerator columns (vendor, memory,
bandwidth, dense peaks, scale-up link) into the arrays the roofline uses: real memory,
bandwidth, the dense peak at the precision the matrix multiplies run in, the runtime's
achieved fractions of bandwidth and peak, and the link's all-reduce bandwidth and
latency. Compile, the estimator and the verifier all call it, so the same case gives the
same number everywhere.

Nothing here reads files; the efficiency and latency tables are in
:mod:`solver.physics.constants` with their sources.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from solver.physics.bands import error_band
from solver.physics.constants import (
    ALLREDUCE_LATENCY_S,
    CAPACITY_BAND_LOG,
    CAPACITY_BAND_LOG_MEASURED,
    CAPACITY_BAND_LOG_POOLED,
    LINK_BY_VENDOR,
    PCIE_GBPS_PER_DIRECTION,
    RUNTIME_BY_VENDOR,
    RUNTIME_EFFICIENCY,
    SERVING_COMPUTE_SHARE,
    SUSTAINED_COMPUTE_SHARE,
    SUSTAINED_COMPUTE_SHARE_OF_VENDOR,
    split_compiled_batch,
)

# The vendor each runtime runs on (TensorRT-LLM is NVIDIA's; the others are defaults).
RUNTIME_BY_VENDOR_OF: dict[str, str] = {
    **{r: v for v, r in RUNTIME_BY_VENDOR.items()},
    "tensorrt-llm": "nvidia",
    "jetstream": "google",
}

# Weight precisions whose matrix multiplies run on a tensor path of their own; others
# (int4 weight-only, bf16/fp16) multiply at the BF16 peak after dequantisation.
_PEAK_COLUMN = {"fp8": "fp8_dense_tflops", "int8": "int8_dense_tops", "fp4": "fp4_dense_tflops"}


# Accelerator columns device_figures reads (catalogs/accelerators.csv names).
DEVICE_COLUMNS: tuple[str, ...] = (
    "accelerator_id",
    "vendor",
    "memory_gb",
    "mem_bandwidth_gbps",
    "bf16_dense_tflops",
    "fp8_dense_tflops",
    "int8_dense_tops",
    "fp4_dense_tflops",
    "scaleup_gbps",
)


def one_row_table(row: Mapping) -> dict[str, np.ndarray]:
    """The :data:`DEVICE_COLUMNS` of one accelerator row as one-element arrays."""
    return {c: np.array([row[c]]) for c in DEVICE_COLUMNS if c in row}


@dataclass(frozen=True)
class Device:
    """Per-candidate figures (arrays of one length) the serving physics reads."""

    memory_gb: np.ndarray  # real capacity per device, 1e9 bytes
    bandwidth_gbps: np.ndarray  # data-sheet memory bandwidth, GB/s
    peak_tflops: np.ndarray  # dense peak at the compute precision
    eta_bandwidth: np.ndarray  # achieved fraction of bandwidth in decode (runtime)
    eta_compute: np.ndarray  # achieved fraction of dense peak in prefill GEMMs (runtime)
    step_overhead_s: np.ndarray  # per engine step outside the kernels (runtime)
    link_gbps_per_direction: np.ndarray  # tensor-parallel link, per direction
    allreduce_latency_s: np.ndarray  # one small all-reduce across the replica
    max_batch: np.ndarray  # most sequences per replica (the runtime's max_num_seqs)
    runtime: np.ndarray  # runtime name (for reports)
    link: np.ndarray  # link kind (for reports)
    overlap: np.ndarray | bool = True  # memory and compute time overlap (max) or add (sum)
    static_kv_tokens: np.ndarray | float = 0.0  # KV tokens read per sequence-step (0: paged)
    # tokens one engine step runs at most (the runtime's max_num_batched_tokens; 0: prefill
    # compute spread evenly over every step)
    token_budget: np.ndarray | float = 0.0
    # whether a request's KV for its whole P + O tokens is reserved at admission
    # (RuntimeEfficiency.kv_reserved_full: TensorRT-LLM's GUARANTEED_NO_EVICT)
    kv_reserved_full: np.ndarray | bool = False
    # whether the KV read (attention) adds to the linear layers' time (attention_apart)
    attention_apart: np.ndarray | bool = False
    # a decode graph compiled for a fixed batch (RuntimeEfficiency.static_batch), and that
    # batch where a runtime spec names it (``neuron@32``; 0: the planned batch)
    static_batch: np.ndarray | bool = False
    compiled_batch: np.ndarray | float = 0.0
    # prompts run as their own graph between decode steps (RuntimeEfficiency.prefill_serial)
    prefill_serial: np.ndarray | bool = False


def compute_peak_tflops(table: Mapping, precision: str) -> np.ndarray:
    """Dense peak at which a model with ``precision`` weights multiplies.

    FP8, INT8 and FP4 use their own tensor path where the hardware has one (compile
    refuses them where it does not); everything else runs at the BF16 peak, weight-only
    int8 (``int8-weight-only``, W8A16: int8 weights multiplied in bf16, constants.
    BYTES_PER_VALUE) among them.
    """
    bf16 = np.asarray(table["bf16_dense_tflops"], dtype=float)
    column = _PEAK_COLUMN.get(precision)
    if column is None or column not in table:
        return bf16
    own = np.asarray(table[column], dtype=float)
    return np.where(own > 0, own, bf16)


def sustained_compute_share(
    accelerator_id: np.ndarray | None, vendor: np.ndarray, precision: str
) -> np.ndarray:
    """Share of the data-sheet dense peak each device sustains on a large GEMM
    (``constants.SUSTAINED_COMPUTE_SHARE``, the vendor's measured max-achievable FLOPs):
    1 for a device whose vendor publishes none.

    Parameters
    ----------
    accelerator_id
        Catalog ids per device (None: every device takes its vendor's default).
    vendor
        Vendor per device.
    precision
        Weight precision: FP8 and INT8 take the FP8 share, the rest the BF16 one.

    Returns
    -------
    np.ndarray
        Share per device, dimensionless, in (0, 1].
    """
    vendor = np.asarray(vendor, dtype=object)
    ids = np.asarray(accelerator_id, dtype=object) if accelerator_id is not None else None
    path = "fp8" if precision in ("fp8", "int8") else "bf16"
    out = np.ones(len(vendor))
    for i, v in enumerate(vendor):
        own = SUSTAINED_COMPUTE_SHARE.get(str(ids[i])) if ids is not None else None
        if own is None and str(v) in SUSTAINED_COMPUTE_SHARE_OF_VENDOR:
            own = SUSTAINED_COMPUTE_SHARE[SUSTAINED_COMPUTE_SHARE_OF_VENDOR[str(v)]]
        if own is not None:
            out[i] = own[path]
    return out


def link_kind(vendor: np.ndarray, nvlink: np.ndarray) -> np.ndarray:
    """Scale-up link class per device: NVIDIA NVLink or PCIe, else the vendor's fabric."""
    vendor = np.asarray(vendor, dtype=object)
    by_vendor = np.array([LINK_BY_VENDOR.get(v, "pcie") for v in vendor], dtype=object)
    return np.where(vendor == "nvidia", np.where(np.asarray(nvlink), "nvlink", "pcie"), by_vendor)


def runtime_of(vendor: np.ndarray, runtime: str | None = None) -> np.ndarray:
    """Serving runtime per device: the one asked for where it runs on that vendor's
    hardware (TensorRT-LLM only on NVIDIA), else the vendor's default."""
    vendor = np.asarray(vendor, dtype=object)
    names, where = np.unique(vendor.astype(str), return_inverse=True)
    default = np.array([RUNTIME_BY_VENDOR.get(str(v), "vllm-cuda") for v in names], dtype=object)[
        where.reshape(vendor.shape)
    ]
    if runtime is None:
        return default
    if runtime not in RUNTIME_EFFICIENCY:
        raise ValueError(f"unknown runtime {runtime!r}; use one of {sorted(RUNTIME_EFFICIENCY)}")
    home = RUNTIME_BY_VENDOR_OF.get(runtime)
    return np.where(vendor == home, runtime, default) if home else default


def capacity_band_log(
    vendor: np.ndarray,
    source: np.ndarray | str,
    runtime: str | None = None,
    accelerator: np.ndarray | None = None,
    model_class: str | None = None,
) -> np.ndarray:
    """Error band (RMS log error) of a capacity figure per device and source:
    ``measured`` the measured band, ``physics`` and ``calibrated`` their configuration's.

    With ``accelerator`` (ids, one per device) and ``model_class`` (solver/physics/bands.py)
    the configuration is (accelerator family, runtime, model class): its band in
    bands.ERROR_BANDS, or the widest band when it is outside the validated set (issue 47).
    Without them, the runtime's (constants.CAPACITY_BAND_LOG; the pooled band for a
    runtime without one)."""
    runtimes = runtime_of(vendor, runtime)
    if accelerator is not None and model_class is not None:
        accs = np.broadcast_to(np.asarray(accelerator, dtype=object), np.shape(runtimes))
        # once per distinct (accelerator, runtime): a large catalog repeats a few thousand
        # times the same few dozen
        bands: dict[tuple[str, str], float] = {}
        for a, r in zip(accs, runtimes, strict=True):
            if (a, r) not in bands:
                bands[(a, r)] = error_band(str(a), str(r), model_class).band_log
        physics_band = np.array(
            [bands[(a, r)] for a, r in zip(accs, runtimes, strict=True)], dtype=float
        )
    else:
        physics_band = np.array(
            [CAPACITY_BAND_LOG.get(r, CAPACITY_BAND_LOG_POOLED) for r in runtimes], dtype=float
        )
    src = np.broadcast_to(np.asarray(source, dtype=object), physics_band.shape)
    return np.where(src == "measured", CAPACITY_BAND_LOG_MEASURED, physics_band)


def device_figures(
    table: Mapping, precision: str, nvlink: np.ndarray | bool, runtime: str | None = None
) -> Device:
    """Serving figures for every row of an accelerator-shaped table.

    Parameters
    ----------
    table
        Columns (arrays or Series) ``vendor``, ``memory_gb`` (real, 1e9 bytes),
        ``mem_bandwidth_gbps``, ``bf16_dense_tflops``, ``fp8_dense_tflops``,
        ``int8_dense_tops``, ``fp4_dense_tflops`` (optional), ``scaleup_gbps``.
    precision
        Weight precision of the served model (decides the tensor path).
    nvlink
        Whether the devices of one replica talk over NVLink (per row or one flag).
    runtime
        Serving runtime asked for (``tensorrt-llm``, ...); None takes the vendor's default.
        A static-batch runtime may name its compiled batch, ``neuron@32``
        (:func:`solver.physics.constants.split_compiled_batch`).
    """
    vendor = np.asarray(table["vendor"], dtype=object)
    n = len(vendor)
    runtime, compiled = split_compiled_batch(runtime)
    runtimes = runtime_of(vendor, runtime)
    eff = [RUNTIME_EFFICIENCY[r] for r in runtimes]
    nv = np.broadcast_to(np.asarray(nvlink, dtype=bool), (n,))
    link = link_kind(vendor, nv)
    scaleup = np.asarray(table["scaleup_gbps"], dtype=float)
    # scale-up figures are totals over both directions; PCIe when the device has none
    link_gbps = np.where((link != "pcie") & (scaleup > 0), scaleup / 2.0, PCIE_GBPS_PER_DIRECTION)
    return Device(
        memory_gb=np.asarray(table["memory_gb"], dtype=float),
        bandwidth_gbps=np.asarray(table["mem_bandwidth_gbps"], dtype=float),
        peak_tflops=compute_peak_tflops(table, precision),
        eta_bandwidth=np.array([e.eta_bandwidth for e in eff], dtype=float),
        eta_compute=np.array([e.eta_compute for e in eff], dtype=float)
        * SERVING_COMPUTE_SHARE.get(precision, 1.0)
        * sustained_compute_share(table.get("accelerator_id"), vendor, precision),
        step_overhead_s=np.array([e.step_overhead_s for e in eff], dtype=float),
        link_gbps_per_direction=link_gbps,
        allreduce_latency_s=np.array([ALLREDUCE_LATENCY_S[k] for k in link], dtype=float),
        max_batch=np.array([e.max_num_seqs for e in eff], dtype=int),
        overlap=np.array([e.overlap for e in eff], dtype=bool),
        static_kv_tokens=np.array([e.static_kv_tokens for e in eff], dtype=float),
        token_budget=np.array([e.max_num_batched_tokens for e in eff], dtype=float),
        kv_reserved_full=np.array([e.kv_reserved_full for e in eff], dtype=bool),
        attention_apart=np.array([e.attention_apart for e in eff], dtype=bool),
        static_batch=np.array([e.static_batch for e in eff], dtype=bool),
        # the spec's compiled batch applies where its runtime runs (a static-batch one)
        compiled_batch=np.array([float(compiled) if e.static_batch else 0.0 for e in eff]),
        prefill_serial=np.array([e.prefill_serial for e in eff], dtype=bool),
        runtime=runtimes,
        link=link,
    )
