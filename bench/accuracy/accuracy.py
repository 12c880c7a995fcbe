"""Accuracy: ``procure estimate`` against published measurements.

Run: python bench/accuracy/accuracy.py [--set main|holdout|all] [--csv OUT]

Data: ``bench/accuracy/accuracy_cases.csv``, one published measurement per row (MLPerf
Inference and vendor performance tables for serving; papers and vendor training
tables for training), cited in ``bench/accuracy/ACCURACY_SOURCES.md``. ``main`` and
``holdout`` rows come from different source documents (the ``set`` column, issue 33).

The ``role`` column (issue 47) says what a row may be used for: ``fitted`` rows may set a
default (every main row, and a holdout row whose source document a default cites: it checks
the default's own basis), ``holdout`` rows never do: no default cites their source, and the
fitting scripts (``fit_runtime.py``, :func:`fitting_rows`) and the shipped error bands
(solver/physics/bands.py, ``--bands-table``) refuse them. The summary reports the median
|error| by role and by vendor, against the targets: <= 10% fitted, <= 15% holdout, every
row within 2x.

Each row is run through ``solver.analyses.estimate.estimate_inference`` or
``estimate_training`` with the catalog's DEFAULT efficiencies (nothing is tuned
per row) and compared with the measurement:

- ``output_tokens_per_s_per_accelerator``: the replica's output tokens/s divided
  by its tensor-parallel degree. Rows with a stated batch pass it; max-throughput
  rows (MLPerf Offline, trtllm-bench) leave the batch to the estimator and set no
  SLO; MLPerf Server rows pass the scenario's TTFT/TPOT limits (``slo_ttft_ms=``,
  ``slo_tpot_ms=`` in the row's notes). A row with ``slo_percentile=0.99`` (MLPerf Server
  and Interactive, whose limits are 99th percentiles) is checked at that percentile under
  Poisson arrivals, at the highest load that meets it (:func:`predict_at_percentile`).
- ``tpot_ms`` / ``ttft_ms``: the derated decode step / time to first token at
  the stated batch.
- A row measured on a static-batch engine at another running batch than its compiled one
  (TGI-neuron with MAX_BATCH_SIZE=32, run one request at a time) names the compiled batch,
  ``compiled_batch=32`` in its notes, and is estimated with runtime ``neuron@32``
  (:func:`row_runtime_spec`; solver/physics/inference.py, "Static batch").
- ``mfu``: the utilisation the estimate effectively uses at that cluster size,
  FLOPs / (n x peak x wall-clock), i.e. default MFU x scaling efficiency.
- ``tokens_per_s_per_accelerator`` (training): tokens / (wall-clock x n).

Output: a table (case, set, predicted, measured, ratio = predicted/measured,
|error| = |predicted - measured| / measured), then per set the median |error|,
the number of rows within 2x and the five worst rows (by |log ratio|). Exits 0.
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

CASES_CSV = Path(__file__).with_name("accuracy_cases.csv")
COLUMNS = [
    "case_id",
    "set",
    "role",
    "kind",
    "accelerator",
    "n_accelerators",
    "model",
    "params_b",
    "precision",
    "tp_degree",
    "prompt_tokens",
    "output_tokens",
    "batch",
    "seq_len",
    "tokens",
    "measured_value",
    "measured_unit",
    "source",
    "notes",
]
INFERENCE_UNITS = {"output_tokens_per_s_per_accelerator", "tpot_ms", "ttft_ms"}
TRAINING_UNITS = {"mfu", "tokens_per_s_per_accelerator"}
# Tokens of a training run when the row gives none: rate comparisons do not depend on it.
DEFAULT_TRAINING_TOKENS = 1e11

# Strings that identify each source document where a default cites it. A row whose
# source is cited by a default (in solver/ or catalogs/SOURCES.md) checks that the
# default reproduces its own basis; it is not independent evidence, and the summary
# reports the rows independent of the defaults separately.
SOURCE_MARKERS: dict[str, tuple[str, ...]] = {
    # MLPerf: only a citation of the Llama 2 70B results counts (catalogs/SOURCES.md cites
    # the same rounds' system-description JSONs for data-sheet figures, not efficiencies)
    "MLPINF41_AMD": ("llama2-70b", "MLPerf Llama 2 70B", "MLPINF41_LLAMA"),
    "MLPINF41_NVIDIA": ("llama2-70b", "MLPerf Llama 2 70B", "MLPINF41_LLAMA"),
    "TRTLLM_PERF_V1": ("perf-overview", "Performance Overview", "TRTLLM_PERF", "trtllm-bench"),
    "INTEL_G2_INF": (
        "model-performance-gaudi2-inference",
        "Gaudi 2 inference table",
        "GAUDI2_INFERENCE",
    ),
    "OPTNEURON_TGI_PERF": ("optimum-neuron", "tgi-results", "TGI-neuron"),
    "INTEL_G3_INF": ("gaudi/model-performance.html", "INTEL_G3_INF"),
    "LLAMA3_PAPER": ("2407.21783",),
    "MAXTEXT_TIERING": ("tiering.md",),
    "MAXTEXT_README": ("MaxText README", "configs/v5e/README", "MAXTEXT_V5E"),
    "INTEL_G2_TRAIN": ("model-performance-gaudi2-training", "64 Gaudi 2 (Intel perf page)"),
    "NEURON_TRN1_TRAIN": ("training_data_decoder",),
    "MEGASCALE": ("MegaScale", "2402.15627"),
    "MLPINF40_GOOGLE_H100": ("llama2-70b", "MLPerf Llama 2 70B", "MLPINF40_LLAMA"),
    "MLPINF40_INTEL": ("llama2-70b", "MLPerf Llama 2 70B", "MLPINF40_LLAMA"),
    "NIM_BENCH": ("NIM 1.8.0", "nim/benchmarking", "NIM_H100"),
    "AMD_ROCM_PERF": ("rocm-hub/dev-ai/performance-results", "AMD_ROCM_PERF", "vllm_0.8.5"),
    "ORACLE_MI300X_405B": ("ORACLE_MI300X", "Oracle"),
    "MBRIDGE_PERF_25_11": ("Megatron Bridge", "Megatron-Bridge"),
    "DATABRICKS_GAUDI2": ("Databricks",),
    # issue 33 holdout: MLPerf Inference v5.1 (AMD's and its partners' MI300X/MI325X Llama 2
    # 70B results) and JetStream-PyTorch's TPU v5e serving table; no default may cite them
    "MLPINF51_AMD": ("inference_results_v5.1", "MLPINF51"),
    "MLPINF51_PARTNERS": ("inference_results_v5.1", "MLPINF51"),
    "JETSTREAM_PT_V5E": ("jetstream-pytorch", "JETSTREAM_PT"),
    # issue 33 (helper h33d): AMD's MI325X Llama 2 70B results in MLPerf Inference v5.0, main
    # rows m60-m61 (a basis of the vllm-rocm fit)
    "MLPINF50_AMD": ("inference_results_v5.0", "MLPINF50"),
    # issue 33: the TPU serving runtime's basis (tpu-recipes), main rows
    "TPU_RECIPES_VLLM_V6E": ("TPU_RECIPES_VLLM_V6E", "trillium/vLLM/Llama3.x"),
    "TPU_RECIPES_JSMT_V5E": ("TPU_RECIPES_JSMT_V5E", "JetStream-Maxtext/Llama2-7B"),
    # issue 47: the MoE training efficiency's bases (fitted) and a MoE holdout on TPU v6e
    "DEEPSEEK_V3_REPORT": ("2412.19437",),
    "MAXTEXT_MIXTRAL": ("Run_Mixtral.md",),
    "TPU_RECIPES_MIXTRAL_V6E": ("Mixtral-8x7B-MaxText", "TPU_RECIPES_MIXTRAL_V6E"),
}


def defaults_text(root: Path = ROOT) -> str:
    """The text the defaults cite their sources in: solver/**/*.py and catalogs/SOURCES.md."""
    parts = [p.read_text(errors="replace") for p in sorted((root / "solver").rglob("*.py"))]
    sources_md = root / "catalogs" / "SOURCES.md"
    if sources_md.exists():
        parts.append(sources_md.read_text(errors="replace"))
    return "\n".join(parts)


def sources_used_by_defaults(text: str) -> set[str]:
    """Source keys whose document a default cites (see SOURCE_MARKERS)."""
    return {key for key, marks in SOURCE_MARKERS.items() if any(m in text for m in marks)}


@dataclass(frozen=True)
class Comparison:
    """One row's prediction against its measurement."""

    case_id: str
    set_name: str
    kind: str
    unit: str
    predicted: float | None
    measured: float
    error: str = ""
    calibration: bool = False  # the row's source is a basis of a default
    vendor: str = ""  # the accelerator's vendor (catalog), for the per-vendor medians
    role: str = ""  # fitted | holdout (issue 47): may the row set a default

    @property
    def ratio(self) -> float | None:
        """Predicted / measured (None when the estimate failed)."""
        if self.predicted is None or self.measured == 0:
            return None
        return self.predicted / self.measured

    @property
    def abs_error(self) -> float | None:
        """|predicted - measured| / measured."""
        r = self.ratio
        return None if r is None else abs(r - 1.0)

    @property
    def log_error(self) -> float:
        """|ln(ratio)|, infinite when the estimate failed or predicted zero."""
        r = self.ratio
        return math.inf if r is None or r <= 0 else abs(math.log(r))


def read_cases(path: Path = CASES_CSV) -> list[dict[str, str]]:
    """Rows of the accuracy table as dicts of strings (header checked)."""
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames != COLUMNS:
            raise ValueError(f"{path}: header must be {','.join(COLUMNS)}")
        return list(reader)


ROLES = ("fitted", "holdout")


def fitting_rows(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """The rows a fitting script may use: all of ``rows``, which must be ``fitted`` rows.

    Raises
    ------
    ValueError
        When any row is a ``holdout`` row (or has no known role): a holdout row never sets
        a default, so a fit handed one refuses to run rather than silently drop it.
    """
    bad = [r["case_id"] for r in rows if r.get("role") != "fitted"]
    if bad:
        raise ValueError(
            f"{CASES_CSV.name}: rows {', '.join(bad[:5])}{' ...' if len(bad) > 5 else ''} "
            "are not role=fitted; a fit may only use fitted rows (select them with "
            "role == 'fitted'; holdout rows never set a default)"
        )
    return rows


def _opt_int(text: str) -> int | None:
    return int(float(text)) if text.strip() else None


def _opt_float(text: str) -> float | None:
    return float(text) if text.strip() else None


def note_value(notes: str, key: str) -> str | None:
    """A ``key=value`` token from a row's notes (e.g. ``slo_tpot_ms=200``, ``kv=fp8``)."""
    m = re.search(rf"\b{re.escape(key)}=([A-Za-z0-9.-]+)", notes)
    return m.group(1) if m else None


# Serving runtime of the measurement, by source: NVIDIA's MLPerf Llama-2-70B submissions
# (and Google's H100 one, built on NVIDIA's code), the TensorRT-LLM performance tables and
# NIM all ran TensorRT-LLM; every other row ran its vendor's default stack. A row may also
# say ``runtime=...`` in its notes.
RUNTIME_BY_SOURCE = {
    "TRTLLM_PERF_V1": "tensorrt-llm",
    "MLPINF41_NVIDIA": "tensorrt-llm",
    "MLPINF40_GOOGLE_H100": "tensorrt-llm",
    "NIM_BENCH": "tensorrt-llm",
    # JetStream's engines (MaxText's and JetStream-PyTorch's) keep a dense KV cache of the
    # stated cache length (2048 in both sources), read whole every step
    "TPU_RECIPES_JSMT_V5E": "jetstream",
    "JETSTREAM_PT_V5E": "jetstream",
}


# Utilisations a percentile row is tried at (0.50, 0.55, ..., 1.00): the MLPerf Server and
# Interactive result is the highest Poisson arrival rate whose run meets the scenario's
# 99th-percentile limits, so the prediction is the best served rate over the load.
PERCENTILE_UTILISATIONS = tuple(round(0.5 + 0.05 * i, 2) for i in range(11))


def predict_at_percentile(estimate, p: float) -> float:
    """Served output tokens/s per replica at the highest load whose latencies at
    percentile ``p`` meet the row's limits: max over rho of rho x the replica's throughput
    at rho (``estimate(slo_percentile=p, utilisation=rho)``; 0 where no load meets them).

    MLPerf's Server and Interactive scenarios issue queries as a Poisson process and
    report the target rate of a run whose TTFT and TPOT meet their limits at the 99th
    percentile (MLCommons inference rules, "Server" scenario and the LLM latency
    constraints table; bench/accuracy/ACCURACY_SOURCES.md, MLPERF_RULES).
    """
    best = 0.0
    for rho in PERCENTILE_UTILISATIONS:
        est = estimate(slo_percentile=p, utilisation=rho)
        best = max(best, float(est["served_output_tokens_per_s"]))
    return best


def row_runtime_spec(catalog, row: dict[str, str]) -> str | None:
    """The runtime the estimate is asked for: the row's (notes, else its source's; None: the
    vendor's default), with the deployment's compiled batch where the row's notes name one
    (``compiled_batch=32``: a static-batch engine measured at another running batch, e.g.
    one request at a time on TGI-neuron compiled with MAX_BATCH_SIZE=32), as ``neuron@32``."""
    runtime = note_value(row["notes"], "runtime") or RUNTIME_BY_SOURCE.get(row["source"])
    compiled = note_value(row["notes"], "compiled_batch")
    return f"{row_runtime(catalog, row)}@{int(compiled)}" if compiled else runtime


def predict_inference(catalog, row: dict[str, str]) -> float:
    """The estimate's figure in the row's unit (see module doc)."""
    from functools import partial

    from solver.analyses.estimate import estimate_inference

    notes = row["notes"]
    tp = _opt_int(row["tp_degree"]) or 1
    tpot_slo = note_value(notes, "slo_tpot_ms")
    ttft_slo = note_value(notes, "slo_ttft_ms")
    percentile = note_value(notes, "slo_percentile")
    estimate = partial(
        estimate_inference,
        catalog,
        model=row["model"],
        weight_precision=row["precision"],
        kv_precision=note_value(notes, "kv") or "bf16",
        accelerator=row["accelerator"],
        tp_degree=tp,
        batch=_opt_int(row["batch"]),
        prompt_tokens=int(float(row["prompt_tokens"])),
        output_tokens=int(float(row["output_tokens"])),
        tpot_slo_ms=float(tpot_slo) if tpot_slo else None,
        ttft_slo_ms=float(ttft_slo) if ttft_slo else None,
        runtime=row_runtime_spec(catalog, row),
    )
    unit = row["measured_unit"]
    if percentile and unit == "output_tokens_per_s_per_accelerator":
        return predict_at_percentile(estimate, float(percentile)) / tp
    est = estimate()
    if unit == "tpot_ms":
        return float(est["decode_step_ms_derated"])
    if unit == "ttft_ms":
        return float(est["ttft_ms"])
    return float(est["replica_output_tokens_per_s"]) / tp


def predict_training(catalog, row: dict[str, str]) -> float:
    """The estimate's MFU at that scale, or tokens/s per accelerator."""
    from solver.analyses.training_estimate import estimate_training

    n = int(float(row["n_accelerators"]))
    tokens = _opt_float(row["tokens"]) or DEFAULT_TRAINING_TOKENS
    params_b = _opt_float(row["params_b"])
    kwargs = dict(
        tokens=tokens,
        precision=row["precision"],
        seq_len=_opt_int(row["seq_len"]) or 4096,
        recompute="selective",
        accelerator=row["accelerator"],
        n_accelerators=n,
        # a prediction of a measured run: the published point figure, not the low end of the
        # band a plan is sized at (training_margin: low, issue 28)
        training_margin="point",
        # a token-dropping MoE recipe's expert capacity factor (``capacity_factor=1.25`` in
        # the row's notes, read from its recipe); 1.0 (dropless) otherwise
        capacity_factor=float(note_value(row["notes"], "capacity_factor") or 1.0),
    )
    if row["model"].strip():
        kwargs["model"] = row["model"]
    else:
        kwargs["params_b"] = params_b
    est = estimate_training(catalog, **kwargs)
    seconds = float(est["wall_clock_hours"]) * 3600.0
    n_used = int(est["n_accelerators"])
    if row["measured_unit"] == "mfu":
        peak = float(est["peak_dense_tflops"]) * 1e12
        return float(est["flops"]) / (n_used * peak * seconds)
    return tokens / (seconds * n_used)


def _vendor(catalog, name: str) -> str:
    try:
        return str(catalog.accelerators.at[catalog.resolve_accelerator(name), "vendor"])
    except Exception:  # noqa: BLE001 - an unknown accelerator is reported by the estimate
        return "?"


def compare(catalog, row: dict[str, str], calibration: bool = False) -> Comparison:
    """Run one row; an estimate that raises is reported, not fatal."""
    measured = float(row["measured_value"])
    try:
        if row["kind"] == "inference":
            predicted = predict_inference(catalog, row)
        else:
            predicted = predict_training(catalog, row)
        error = ""
    except Exception as exc:  # noqa: BLE001 - a failing row is a finding, not a crash
        predicted, error = None, f"{type(exc).__name__}: {exc}"
    return Comparison(
        row["case_id"],
        row["set"],
        row["kind"],
        row["measured_unit"],
        predicted,
        measured,
        error,
        calibration,
        _vendor(catalog, row["accelerator"]),
        row.get("role", ""),
    )


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.1%}" if values else "-"


def max_ratio(rows: list[Comparison]) -> float:
    """The largest factor any row is off by, max(ratio, 1/ratio) (inf when one failed)."""
    worst = 1.0
    for c in rows:
        r = c.ratio
        worst = max(worst, math.inf if r is None or r <= 0 else max(r, 1.0 / r))
    return worst


def row_runtime(catalog, row: dict[str, str]) -> str:
    """The serving runtime a row was measured on: its notes', its source's, else its
    vendor's default (solver/physics/constants.py RUNTIME_BY_VENDOR)."""
    from solver.physics.constants import RUNTIME_BY_VENDOR

    named = note_value(row["notes"], "runtime") or RUNTIME_BY_SOURCE.get(row["source"])
    return named or RUNTIME_BY_VENDOR.get(_vendor(catalog, row["accelerator"]), "vllm-cuda")


def capacity_log_errors(catalog, rows: list[dict[str, str]], results: list[Comparison]):
    """Per runtime, ln(measured capacity / predicted capacity) of the serving rows that
    measure a capacity: throughput rows as measured / predicted, time-per-token rows as
    predicted / measured (capacity is batch / step time); TTFT rows are not capacity."""
    out: dict[str, list[float]] = {}
    for row, c in zip(rows, results, strict=True):
        if c.kind != "inference" or c.unit == "ttft_ms" or c.ratio is None or c.ratio <= 0:
            continue
        log = -math.log(c.ratio) if c.unit != "tpot_ms" else math.log(c.ratio)
        out.setdefault(row_runtime(catalog, row), []).append(log)
    return out


def band_lines(catalog, rows: list[dict[str, str]], results: list[Comparison]) -> list[str]:
    """The capacity error band per runtime (issue 33): the root-mean-square of ln(measured
    / predicted) over the MAIN serving rows (holdout rows never set a default), and how
    many holdout rows fall within the band's two-sided 90% interval (+-1.645 x RMS)."""
    main = [(r, c) for r, c in zip(rows, results, strict=True) if c.set_name == "main"]
    hold = [(r, c) for r, c in zip(rows, results, strict=True) if c.set_name == "holdout"]
    by_rt = capacity_log_errors(catalog, [r for r, _ in main], [c for _, c in main])
    pooled = [x for xs in by_rt.values() for x in xs]
    lines = ["capacity band (RMS of ln(measured/predicted), main serving rows):"]
    rms = {}
    for rt, xs in sorted(by_rt.items()) + [("all", pooled)]:
        rms[rt] = math.sqrt(sum(x * x for x in xs) / len(xs)) if xs else math.nan
        mean = sum(xs) / len(xs) if xs else math.nan
        lines.append(f"  {rt}: {rms[rt]:.3f} over {len(xs)} rows (mean {mean:+.3f})")
    held = capacity_log_errors(catalog, [r for r, _ in hold], [c for _, c in hold])
    inside = total = 0
    for rt, xs in held.items():
        band = rms.get(rt, rms["all"])
        inside += sum(abs(x) <= 1.645 * band for x in xs)
        total += len(xs)
    lines.append(f"  holdout capacity rows within their runtime's 90% band: {inside}/{total}")
    return lines


def row_model_class(catalog, row: dict[str, str]) -> str:
    """The row's model class (solver/physics/bands.py model_class): from the catalog's
    model, or the row's parameter count (dense) when it names none."""
    from solver.physics.bands import model_class

    if row["model"].strip():
        m = catalog.models.loc[row["model"]]
        experts = float(m["experts"]) if str(m["experts"]).strip() not in ("", "nan") else 1.0
        active = (
            float(m["experts_active"])
            if str(m["experts_active"]).strip() not in ("", "nan")
            else 1.0
        )
        return model_class(float(m["params_b"]) * 1e9, experts, active)
    return model_class(float(row["params_b"]) * 1e9)


def band_table(
    catalog, rows: list[dict[str, str]], results: list[Comparison]
) -> dict[tuple[str, str, str], tuple[float, int]]:
    """(family, runtime, model class) -> (RMS of ln(measured / predicted) capacity, rows)
    over the FITTED serving rows that measure a capacity (:func:`capacity_log_errors`);
    the shipped solver/physics/bands.py ERROR_BANDS. Holdout rows are refused
    (:func:`fitting_rows`), so they are selected out first."""
    from solver.physics.bands import accelerator_family

    pairs = [(r, c) for r, c in zip(rows, results, strict=True) if r["role"] == "fitted"]
    fitted = fitting_rows([r for r, _ in pairs])
    logs: dict[tuple[str, str, str], list[float]] = {}
    for row, c in zip(fitted, [c for _, c in pairs], strict=True):
        one = capacity_log_errors(catalog, [row], [c])
        for runtime, xs in one.items():
            key = (accelerator_family(row["accelerator"]), runtime, row_model_class(catalog, row))
            logs.setdefault(key, []).extend(xs)
    return {
        key: (round(math.sqrt(sum(x * x for x in xs) / len(xs)), 4), len(xs))
        for key, xs in sorted(logs.items())
    }


def headline_lines(results: list[Comparison], set_name: str) -> list[str]:
    """The figures issue 33 asks for, per set: median |error| overall, serving and per
    vendor (serving and training together), and the largest factor any row is off by."""
    rows = [c for c in results if set_name in ("all", c.set_name)]
    if not rows:
        return []
    ok = [c for c in rows if c.abs_error is not None]
    serving = [c.abs_error for c in ok if c.kind == "inference"]
    vendors = sorted({c.vendor for c in rows})
    per_vendor = ", ".join(
        f"{v} {_median([c.abs_error for c in ok if c.vendor == v])} "
        f"({sum(c.vendor == v for c in rows)})"
        for v in vendors
    )
    serving_vendor = ", ".join(
        f"{v} {_median([c.abs_error for c in ok if c.vendor == v and c.kind == 'inference'])}"
        for v in vendors
        if any(c.vendor == v and c.kind == "inference" for c in rows)
    )
    return [
        f"{set_name}: median |error| {_median([c.abs_error for c in ok])} over {len(rows)} rows; "
        f"serving {_median(serving)} over {len(serving)}; max ratio "
        f"{max_ratio(rows):.2f}x",
        f"  per vendor (rows): {per_vendor}",
        f"  serving per vendor: {serving_vendor}",
    ]


def source_lines(
    rows: list[dict[str, str]], results: list[Comparison], set_name: str = "holdout"
) -> list[str]:
    """Per source document of one set: rows, median |error| and the largest factor any row
    is off by (max(ratio, 1/ratio)), with the worst row; a default that cites the source
    is flagged (its rows then check the default's own basis, not independent evidence)."""
    by_source: dict[str, list[Comparison]] = {}
    for row, c in zip(rows, results, strict=True):
        if c.set_name == set_name:
            by_source.setdefault(row["source"], []).append(c)
    lines = [f"{set_name} by source (rows, median |error|, largest factor, worst row):"]
    for source, cs in sorted(by_source.items()):
        ok = [c.abs_error for c in cs if c.abs_error is not None]
        worst = max(cs, key=lambda c: c.log_error)
        cal = " (cited by a default)" if any(c.calibration for c in cs) else ""
        lines.append(
            f"  {source}{cal}: {len(cs)} rows, median {_median(ok)}, largest "
            f"{max_ratio(cs):.2f}x ({worst.case_id})"
        )
    return lines


# Issue 47's targets for the table, by role: median |error| of the fitted and holdout rows,
# and the largest factor any row may be off by.
TARGET_MEDIAN = {"fitted": 0.10, "holdout": 0.15}
TARGET_MAX_RATIO = 2.0


def role_lines(results: list[Comparison]) -> list[str]:
    """Per role (fitted, holdout): median |error| against its target, rows within 2x, and
    the median per vendor (serving and training together)."""
    lines = []
    for role in ROLES:
        rows = [c for c in results if c.role == role]
        if not rows:
            continue
        ok = [c.abs_error for c in rows if c.abs_error is not None]
        med = statistics.median(ok) if ok else math.inf
        within = sum(1 for c in rows if c.ratio is not None and 0.5 <= c.ratio <= 2.0)
        met = med <= TARGET_MEDIAN[role] and within == len(rows)
        vendors = sorted({c.vendor for c in rows})
        per_vendor = ", ".join(
            f"{v} {_median([e for c in rows if c.vendor == v and (e := c.abs_error) is not None])}"
            f" ({sum(c.vendor == v for c in rows)})"
            for v in vendors
        )
        lines += [
            f"role {role}: {len(rows)} rows, median |error| {med:.1%} (target <= "
            f"{TARGET_MEDIAN[role]:.0%}), within 2x: {within}/{len(rows)}, largest "
            f"{max_ratio(rows):.2f}x: {'met' if met else 'NOT MET'}",
            f"  per vendor (rows): {per_vendor}",
        ]
    return lines


def summary_lines(results: list[Comparison], set_name: str, worst: int = 5) -> list[str]:
    """Median |error|, rows within 2x and the worst rows of one set."""
    rows = [c for c in results if c.set_name == set_name]
    if not rows:
        return []
    ok = [c for c in rows if c.abs_error is not None]
    median = statistics.median(c.abs_error for c in ok) if ok else math.nan
    within = sum(1 for c in rows if c.ratio is not None and 0.5 <= c.ratio <= 2.0)
    lines = [
        f"{set_name}: {len(rows)} rows ({sum(c.kind == 'inference' for c in rows)} inference, "
        f"{sum(c.kind == 'training' for c in rows)} training); median |error| {median:.1%}; "
        f"within 2x: {within}/{len(rows)}"
        + (f"; failed: {len(rows) - len(ok)}" if len(ok) < len(rows) else "")
    ]
    for kind in ("inference", "training"):
        sub = [c.abs_error for c in ok if c.kind == kind]
        if sub:
            lines.append(f"  {kind}: median |error| {statistics.median(sub):.1%} over {len(sub)}")
    independent = [c for c in rows if not c.calibration]
    ind_ok = [c.abs_error for c in independent if c.abs_error is not None]
    ind_within = sum(1 for c in independent if c.ratio is not None and 0.5 <= c.ratio <= 2.0)
    lines.append(
        f"  independent of the defaults (source not cited by a default): {len(independent)} rows, "
        + (
            f"median |error| {statistics.median(ind_ok):.1%}, "
            f"within 2x: {ind_within}/{len(independent)}"
            if ind_ok
            else "none"
        )
    )
    lines.append(f"  worst {worst}:")
    for c in sorted(rows, key=lambda c: c.log_error, reverse=True)[:worst]:
        ratio = "failed: " + c.error if c.ratio is None else f"ratio {c.ratio:.2f}"
        lines.append(f"    {c.case_id}: {ratio}")
    return lines


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.4g}" if abs(x) < 10 else f"{x:,.1f}"


def disagg_lines(catalog) -> list[str]:
    """The disaggregated holdout rows' bands (bench/accuracy/disagg_accuracy.py), printed
    next to the aggregated table with the same bands."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from disagg_accuracy import disagg_section_lines

    return disagg_section_lines(catalog)


def main(argv: list[str] | None = None) -> int:
    """Print the comparison table and the per-set summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=["main", "holdout", "all"], default="all")
    parser.add_argument("--csv", type=Path, help="write the compared rows to this CSV")
    parser.add_argument("--cases", type=Path, default=CASES_CSV, help="the measurement table")
    parser.add_argument("--catalog", type=Path, default=None, help="catalog directory")
    parser.add_argument(
        "--bands", action="store_true", help="also print the capacity error band per runtime"
    )
    parser.add_argument(
        "--bands-table",
        action="store_true",
        help="print only the error bands per (family, runtime, model class) from the fitted "
        "rows, as solver/physics/bands.py ERROR_BANDS ships them",
    )
    args = parser.parse_args(argv)

    try:
        from solver.analyses.estimate import estimate_inference  # noqa: F401
        from solver.analyses.training_estimate import estimate_training  # noqa: F401
        from solver.inputs.catalog import load_catalog
    except ImportError as exc:
        print(f"cannot import the estimator: {exc}", file=sys.stderr)
        return 1
    catalog = load_catalog(args.catalog)
    rows = [r for r in read_cases(args.cases) if args.set in ("all", r["set"])]
    used = sources_used_by_defaults(defaults_text())
    results = [compare(catalog, r, r["source"] in used) for r in rows]
    if args.bands_table:
        print("ERROR_BANDS: dict[tuple[str, str, str], tuple[float, int]] = {")
        for key, (band, n) in band_table(catalog, rows, results).items():
            print(f"    {key!r}: ({band}, {n}),".replace("'", '"'))
        print("}")
        return 0

    header = (
        f"{'case_id':44} {'set':7} {'unit':36} {'predicted':>11} {'measured':>11} "
        f"{'ratio':>6} {'|err|':>6} cal"
    )
    print(header)
    print("-" * len(header))
    for c in results:
        ratio = "-" if c.ratio is None else f"{c.ratio:.2f}"
        err = "-" if c.abs_error is None else f"{c.abs_error:.0%}"
        print(
            f"{c.case_id:44} {c.set_name:7} {c.unit:36} {_fmt(c.predicted):>11} "
            f"{_fmt(c.measured):>11} {ratio:>6} {err:>6} {'*' if c.calibration else ''}"
        )
        if c.error:
            print(f"    ! {c.error}")
    print()
    print(
        "cal * = the row's source document is also the basis of a default (cited in solver/ or "
        "catalogs/SOURCES.md): " + (", ".join(sorted(used)) or "none")
    )
    for set_name in ("main", "holdout"):
        for line in summary_lines(results, set_name):
            print(line)
    print()
    for set_name in ("all", "main", "holdout"):
        for line in headline_lines(results, set_name):
            print(line)
    print()
    for line in source_lines(rows, results, "holdout"):
        print(line)
    print()
    for line in role_lines(results):
        print(line)
    if args.set in ("all", "holdout") and args.cases == CASES_CSV:
        print()
        for line in disagg_lines(catalog):
            print(line)
    if args.bands:
        print()
        for line in band_lines(catalog, rows, results):
            print(line)

    if args.csv:
        with args.csv.open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(
                [
                    "case_id",
                    "set",
                    "kind",
                    "unit",
                    "predicted",
                    "measured",
                    "ratio",
                    "abs_error",
                    "calibration_source",
                    "error",
                ]
            )
            for c in results:
                w.writerow(
                    [
                        c.case_id,
                        c.set_name,
                        c.kind,
                        c.unit,
                        c.predicted,
                        c.measured,
                        c.ratio,
                        c.abs_error,
                        c.calibration,
                        c.error,
                    ]
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
