"""Calibration from measured serving throughput: per-bucket profiles and fitted factors.

``procure calibrate`` reads a user's own measurements into one table of points, one row
per measurement, from three kinds of file:

- a vLLM ``benchmark_serving.py`` result JSON (``--save-result``): one run of one model
  on one accelerator (which the file does not name); sizes are the run's mean prompt and
  output tokens, concurrency ``max_concurrency`` (or, at a finite ``request_rate``, the
  mean number of requests in flight by Little's law);
- a CSV with the columns of :data:`CSV_COLUMNS` (one run per row);
- a Mélange profile JSON (``gpu_info: {GPU: {cost, tputs[i][j]}}``, requests/s one GPU
  sustains for prompt bucket i and output bucket j; Griggs et al. 2024).

Each point gets the physics prediction of :func:`solver.estimate.estimate_inference`
(output tokens/s of one replica at the measured concurrency, or at the best batch when
the run had no cap). :func:`fit_factors` then fits one factor per accelerator and runtime,
measured = factor x physics, as the geometric mean of measured / predicted, with the
spread of the points around it as the fit's error. :func:`build_profiles` lays the
measured requests/s out per request-size bucket in the ``measured_throughput_rps``
layout of a problem's inference workload (``problems/traffic-mix-measured.yaml``).

Everything here is pure: the CLI reads the files and writes the outputs.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import yaml

from solver.errors import ProcureError
from solver.inputs.catalog import Catalog
from solver.inputs.yamlio import DuplicateJSONKeyError, unique_json_keys
from solver.physics import calibration_factor

# Request-size buckets (tokens): the edges Mélange profiles on (Griggs et al. 2024,
# litone01/melange-release lb/lb_policies.py get_size_bucket_idx: a size belongs to the
# first bucket whose upper edge it does not exceed) and problems/traffic-mix-measured.yaml
# uses. Sizes over the last edge belong to no bucket (the arena mix drops them).
BUCKET_EDGES_TOKENS: tuple[int, ...] = (0, 25, 100, 250, 500, 1000, 2000)

# Serving runtimes a factor can belong to. The client ``backend`` of a vLLM
# benchmark_serving result names the server it talked to; the OpenAI-compatible
# backends are taken as vLLM (the script's own server).
RUNTIMES: tuple[str, ...] = ("vllm", "sglang", "tensorrt-llm", "tgi", "lmdeploy", "deepspeed-mii")
DEFAULT_RUNTIME = "vllm"
_RUNTIME_BY_BACKEND: dict[str, str] = {
    "vllm": "vllm",
    "openai": "vllm",
    "openai-chat": "vllm",
    "openai-audio": "vllm",
    "sglang": "sglang",
    "tensorrt-llm": "tensorrt-llm",
    "tgi": "tgi",
    "lmdeploy": "lmdeploy",
    "deepspeed-mii": "deepspeed-mii",
}

# The Mélange profile names its GPUs without their variant. Taken as in
# problems/traffic-mix-measured.yaml ("The profile does not state its A100 and H100
# variants: taken as A100-80GB and H100 SXM"); --accelerator A100=a100-40gb overrides.
MELANGE_ACCELERATORS: dict[str, str] = {"A100": "a100-80gb", "H100": "h100-sxm"}

# Columns of the plain CSV of measurements (``runtime`` is optional, default vLLM;
# ``concurrency``, ``ttft_ms`` and ``tpot_ms`` may be left empty).
CSV_COLUMNS: tuple[str, ...] = (
    "accelerator",
    "model",
    "prompt_tokens",
    "output_tokens",
    "concurrency",
    "output_tokens_per_s",
    "ttft_ms",
    "tpot_ms",
)

# Fields a vLLM benchmark_serving result must have (vllm-project/vllm
# benchmarks/benchmark_serving.py, main(): result_json = setup + traffic + benchmark()).
VLLM_REQUIRED: tuple[str, ...] = (
    "completed",
    "duration",
    "total_input_tokens",
    "total_output_tokens",
    "request_throughput",
    "output_throughput",
)

POINT_COLUMNS: tuple[str, ...] = (
    "file",
    "source",
    "accelerator",
    "runtime",
    "model",
    "prompt_tokens",
    "output_tokens",
    "concurrency",
    "measured_rps",
    "measured",
    "ttft_ms",
    "tpot_ms",
    "prompt_bucket",
    "output_bucket",
    "per_bucket",
)

_FORMATS_FIX = (
    "pass a vLLM benchmark_serving result JSON (--save-result), a CSV with columns "
    + ", ".join(CSV_COLUMNS)
    + ", or a Mélange profile JSON (gpu_info)"
)


@dataclass(frozen=True)
class Calibration:
    """What ``procure calibrate`` found.

    Attributes
    ----------
    points
        One row per measurement: :data:`POINT_COLUMNS` plus ``predicted`` (output
        tokens/s of one replica by the physics) and ``predicted_rps``.
    factors
        :func:`fit_factors` of the points, per accelerator and runtime.
    profiles
        :func:`build_profiles` of the points, one per model and runtime.
    notes
        What was assumed or left out, one sentence each.
    """

    points: pd.DataFrame
    factors: pd.DataFrame
    profiles: list[dict]
    notes: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- buckets


def bucket_index(tokens: float, edges: Sequence[int] = BUCKET_EDGES_TOKENS) -> int:
    """The bucket a request size falls in (upper edge inclusive), or -1 beyond the last.

    >>> bucket_index(25), bucket_index(26), bucket_index(2001)
    (0, 1, -1)
    """
    for i in range(len(edges) - 1):
        if tokens <= edges[i + 1]:
            return i
    return -1


def bucket_midpoints(edges: Sequence[int] = BUCKET_EDGES_TOKENS) -> list[int]:
    """Representative size of each bucket: its midpoint, rounded down (12, 62, 175, ...)."""
    return [(edges[i] + edges[i + 1]) // 2 for i in range(len(edges) - 1)]


def bucket_order(edges: Sequence[int] = BUCKET_EDGES_TOKENS) -> list[tuple[int, int]]:
    """(prompt bucket, output bucket) in the order of problems/traffic-mix-measured.yaml.

    Output buckets from the longest down, prompt buckets from the shortest up: the
    orientation of the Mélange arena traffic matrix the problem's mix is read from.
    """
    n = len(edges) - 1
    return [(i, j) for j in reversed(range(n)) for i in range(n)]


# --------------------------------------------------------------------------- reading


def parse_accelerator_options(values: Iterable[str] | None) -> tuple[str | None, dict[str, str]]:
    """Split ``--accelerator`` values into the default accelerator and name mappings.

    ``ID`` is the accelerator of files that do not name one (vLLM results);
    ``NAME=ID`` maps a name used in a file (a Mélange GPU, a CSV cell) to a catalog id.
    """
    default: str | None = None
    mapping: dict[str, str] = {}
    for value in values or []:
        if "=" in value:
            name, _, target = value.partition("=")
            if not name.strip() or not target.strip():
                raise ProcureError(
                    f"{value!r} is not NAME=ID",
                    field="--accelerator",
                    fix="write e.g. --accelerator A100=a100-80gb",
                )
            mapping[name.strip()] = target.strip()
        elif default is not None and default != value:
            raise ProcureError(
                f"two accelerators given without a name: {default!r} and {value!r}",
                field="--accelerator",
                fix="give one ID for the vLLM results of one run, NAME=ID for names in files",
            )
        else:
            default = value
    return default, mapping


def _bad(file: str, field_name: str, message: str, fix: str) -> ProcureError:
    return ProcureError(message, file=file, field=field_name, fix=fix)


def _number(
    value: object,
    file: str,
    field_name: str,
    *,
    positive: bool = True,
    fix: str = "",
) -> float:
    """A finite number (positive, or non-negative), else a ProcureError naming the field."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _bad(file, field_name, f"{value!r} is not a number", fix or "write a number")
    number = float(value)
    if not math.isfinite(number):
        raise _bad(file, field_name, f"{value!r} is not a finite number", fix or "rerun or drop it")
    if number < 0 or (positive and number == 0):
        need = "positive" if positive else "zero or more"
        raise _bad(file, field_name, f"{value!r} must be {need}", fix or "rerun or drop it")
    return number


def _accelerator(
    name: str, catalog: Catalog, mapping: dict[str, str] | None, file: str, at: str
) -> str:
    """Resolve a name (through ``mapping`` when given: names in files) to a catalog id."""
    target = (mapping or {}).get(name.strip(), name)
    try:
        return catalog.resolve_accelerator(target)
    except ProcureError as exc:
        also = f"or map it with --accelerator {name}=ID" if mapping is not None else ""
        raise _bad(file, at, exc.message, "; ".join(p for p in (exc.fix, also) if p)) from None


def _model_candidates(name: str) -> list[str]:
    """A Hugging Face id or a path, then its last part, then without -hf/-chat/-instruct."""
    base = name.rstrip("/").split("/")[-1]
    out = [name, base]
    stripped = base
    for _ in range(3):
        for suffix in ("-hf", "-chat", "-instruct", "-Instruct", "-Chat", "-it", "-base"):
            if stripped.endswith(suffix):
                stripped = stripped[: -len(suffix)]
        out.append(stripped)
    return list(dict.fromkeys(c for c in out if c))


def _model(name: object, catalog: Catalog, file: str, at: str) -> str:
    if not isinstance(name, str) or not name.strip():
        raise _bad(file, at, f"{name!r} is not a model name", "name the model, or pass --model ID")
    last: ProcureError | None = None
    for candidate in _model_candidates(name.strip()):
        try:
            return catalog.resolve_model(candidate)
        except ProcureError as exc:
            last = exc
    hint = last.fix if last is not None else ""
    raise _bad(
        file,
        at,
        f"model {name!r} is not a catalog model preset",
        f"pass --model ID ({hint})" if hint else "pass --model ID",
    )


def _runtime(value: str | None, file: str, at: str) -> str:
    runtime = (value or DEFAULT_RUNTIME).strip().lower()
    if runtime not in RUNTIMES:
        raise _bad(file, at, f"unknown runtime {value!r}", f"use one of {', '.join(RUNTIMES)}")
    return runtime


def _point(**values: object) -> dict:
    prompt, output = float(values["prompt_tokens"]), float(values["output_tokens"])  # type: ignore[arg-type]
    row = {c: values.get(c) for c in POINT_COLUMNS}
    row["prompt_bucket"] = bucket_index(prompt)
    row["output_bucket"] = bucket_index(output)
    if row.get("per_bucket") is None:
        row["per_bucket"] = True
    return row


def read_vllm_result(
    data: dict,
    file: str,
    catalog: Catalog,
    *,
    accelerator: str | None,
    model: str | None = None,
    runtime: str | None = None,
) -> tuple[list[dict], list[str]]:
    """One point from a vLLM benchmark_serving result (already parsed JSON).

    Parameters
    ----------
    data
        The result object: ``model_id``, ``backend``, ``completed``, ``duration``,
        ``total_input_tokens``, ``total_output_tokens``, ``request_throughput``,
        ``output_throughput``, optional ``max_concurrency``, ``request_rate``,
        ``mean_ttft_ms``, ``mean_tpot_ms``, ``mean_e2el_ms`` and the per-request
        ``input_lens``, ``output_lens``, ``errors``.
    accelerator
        Catalog id or alias of the accelerator the run used (not in the file).

    Returns
    -------
    The points (one) and notes.
    """
    notes: list[str] = []
    for name in VLLM_REQUIRED:
        if name not in data:
            raise _bad(
                file,
                name,
                f"field {name!r} is missing: not a vLLM benchmark_serving result",
                _FORMATS_FIX,
            )
    if accelerator is None:
        raise _bad(
            file,
            "accelerator",
            "a vLLM benchmark_serving result does not say which accelerator it ran on",
            "pass --accelerator ID (e.g. --accelerator h100-sxm)",
        )
    acc = _accelerator(accelerator, catalog, None, file, "--accelerator")
    model_id = (
        catalog_model(model, catalog)
        if model
        else _model(data.get("model_id"), catalog, file, "model_id")
    )
    backend = data.get("backend")
    if runtime is None and isinstance(backend, str):
        runtime = _RUNTIME_BY_BACKEND.get(backend.lower(), DEFAULT_RUNTIME)
    run = _runtime(runtime, file, "--runtime")
    completed = _number(data["completed"], file, "completed", fix="the run completed no request")
    _number(data["duration"], file, "duration")
    total_in = _number(data["total_input_tokens"], file, "total_input_tokens")
    total_out = _number(data["total_output_tokens"], file, "total_output_tokens")
    rps = _number(data["request_throughput"], file, "request_throughput")
    tps = _number(data["output_throughput"], file, "output_throughput")
    prompt, output = total_in / completed, total_out / completed
    per_bucket = True
    if data.get("input_lens") is not None or data.get("output_lens") is not None:
        ins, outs = _request_lens(data, file)
        errors = data.get("errors")
        ok = [
            (o > 0) and not (isinstance(errors, list) and i < len(errors) and errors[i])
            for i, o in enumerate(outs)
        ]
        sizes = [
            (p, o) for (p, o), good in zip(zip(ins, outs, strict=True), ok, strict=True) if good
        ]
        if sizes:
            prompt = sum(p for p, _ in sizes) / len(sizes)
            output = sum(o for _, o in sizes) / len(sizes)
            buckets = {(bucket_index(p), bucket_index(o)) for p, o in sizes}
            per_bucket = len(buckets) == 1
            if not per_bucket:
                notes.append(
                    f"{file}: requests span {len(buckets)} size buckets: the run is fitted at "
                    "its mean size but is no bucket's measured figure"
                )
    else:
        notes.append(
            f"{file}: no per-request sizes (input_lens, output_lens): the run is taken "
            "as one bucket at its mean size"
        )
    concurrency = _concurrency(data, file, rps, output, completed, notes)
    latencies = {
        key: _number(data[key], file, key, positive=False)
        for key in ("mean_ttft_ms", "mean_tpot_ms")
        if data.get(key) is not None
    }
    return [
        _point(
            file=file,
            source="vllm-benchmark",
            accelerator=acc,
            runtime=run,
            model=model_id,
            prompt_tokens=prompt,
            output_tokens=output,
            concurrency=concurrency,
            measured_rps=rps,
            measured=tps,
            ttft_ms=latencies.get("mean_ttft_ms"),
            tpot_ms=latencies.get("mean_tpot_ms"),
            per_bucket=per_bucket,
        )
    ], notes


def _request_lens(data: dict, file: str) -> tuple[list[float], list[float]]:
    lens = []
    for key in ("input_lens", "output_lens"):
        values = data.get(key)
        if not isinstance(values, list):
            raise _bad(file, key, f"{key} is not a list", "save the result with both lists or none")
        lens.append([_number(v, file, f"{key}[{i}]", positive=False) for i, v in enumerate(values)])
    if len(lens[0]) != len(lens[1]):
        raise _bad(
            file,
            "output_lens",
            f"{len(lens[0])} input_lens but {len(lens[1])} output_lens",
            "the result file was cut or edited: rerun the benchmark",
        )
    return lens[0], lens[1]


def _concurrency(
    data: dict, file: str, rps: float, output: float, completed: float, notes: list[str]
) -> float | None:
    """Requests in flight: max_concurrency, else Little's law at a finite request rate."""
    cap = data.get("max_concurrency")
    if cap is not None:
        return min(_number(cap, file, "max_concurrency"), completed)
    rate = data.get("request_rate", "inf")
    if isinstance(rate, str) and rate.strip().lower() in ("inf", "infinity"):
        return None
    rate_value = float("inf") if rate == float("inf") else _number(rate, file, "request_rate")
    if math.isinf(rate_value):
        return None
    # Little's law: requests in flight = arrival (here served) rate x time in the system.
    if data.get("mean_e2el_ms") is not None:
        latency_s = _number(data["mean_e2el_ms"], file, "mean_e2el_ms") / 1000.0
    elif data.get("mean_ttft_ms") is not None and data.get("mean_tpot_ms") is not None:
        ttft_ms = _number(data["mean_ttft_ms"], file, "mean_ttft_ms", positive=False)
        tpot_ms = _number(data["mean_tpot_ms"], file, "mean_tpot_ms", positive=False)
        latency_s = (ttft_ms + max(output - 1.0, 0.0) * tpot_ms) / 1000.0
    else:
        notes.append(
            f"{file}: request_rate {rate} without max_concurrency or latencies: fitted at "
            "the physics' best batch"
        )
        return None
    return max(1.0, rps * latency_s)


def catalog_model(name: str, catalog: Catalog) -> str:
    """Resolve ``--model`` against the catalog's model presets and aliases."""
    try:
        return catalog.resolve_model(name)
    except ProcureError as exc:
        raise ProcureError(exc.message, field="--model", fix=exc.fix) from None


def _csv_number(
    cells: dict[str, str],
    file: str,
    line: int,
    column: str,
    *,
    optional: bool = False,
    positive: bool = True,
) -> float | None:
    """A number from one CSV cell; empty is None when the column is optional."""
    text_value = cells.get(column, "")
    at = f"line {line}: {column}"
    if text_value == "":
        if optional:
            return None
        raise _bad(file, at, f"{column} is empty", "fill it in or drop the row")
    try:
        value = float(text_value)
    except ValueError:
        raise _bad(file, at, f"{text_value!r} is not a number", "write a number") from None
    return _number(value, file, at, positive=positive)


def read_measurements_csv(
    text: str,
    file: str,
    catalog: Catalog,
    *,
    accelerator_names: dict[str, str] | None = None,
    model: str | None = None,
    runtime: str | None = None,
) -> tuple[list[dict], list[str]]:
    """Points from the plain CSV (:data:`CSV_COLUMNS`, optional ``runtime``), one per row."""
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    header = [h.strip() for h in (reader.fieldnames or [])]
    reader.fieldnames = header
    missing = [c for c in CSV_COLUMNS if c not in header]
    if missing:
        raise _bad(
            file,
            missing[0],
            f"column {missing[0]!r} is missing"
            + (f" (and {', '.join(missing[1:])})" if missing[1:] else ""),
            "the header must be " + ",".join(CSV_COLUMNS) + " (runtime optional)",
        )
    mapping = accelerator_names or {}
    fixed_model = catalog_model(model, catalog) if model else None
    points: list[dict] = []
    for row in reader:
        line = reader.line_num
        cells = {k: (v or "").strip() for k, v in row.items() if k is not None}
        if not any(cells.values()):
            continue

        prompt = _csv_number(cells, file, line, "prompt_tokens")
        output = _csv_number(cells, file, line, "output_tokens")
        tps = _csv_number(cells, file, line, "output_tokens_per_s")
        acc = _accelerator(
            cells["accelerator"], catalog, mapping, file, f"line {line}: accelerator"
        )
        model_id = fixed_model or _model(cells["model"], catalog, file, f"line {line}: model")
        points.append(
            _point(
                file=file,
                source="csv",
                accelerator=acc,
                runtime=_runtime(
                    runtime or cells.get("runtime") or None, file, f"line {line}: runtime"
                ),
                model=model_id,
                prompt_tokens=prompt,
                output_tokens=output,
                concurrency=_csv_number(cells, file, line, "concurrency", optional=True),
                measured_rps=tps / output,  # type: ignore[operator]
                measured=tps,
                ttft_ms=_csv_number(cells, file, line, "ttft_ms", optional=True, positive=False),
                tpot_ms=_csv_number(cells, file, line, "tpot_ms", optional=True, positive=False),
            )
        )
    if not points:
        raise _bad(file, "line 2", "the CSV has no measurements", "add one row per run")
    return points, []


def read_melange_profile(
    data: dict,
    file: str,
    catalog: Catalog,
    *,
    accelerator_names: dict[str, str] | None = None,
    model: str | None = None,
    runtime: str | None = None,
) -> tuple[list[dict], list[str]]:
    """One point per GPU and bucket from a Mélange profile (requests/s of one GPU).

    ``tputs[i][j]`` is input bucket i, output bucket j over ``_bucket_upper_bounds_tokens``
    (which must be :data:`BUCKET_EDGES_TOKENS`); the representative size of a bucket is
    its midpoint. Rows beyond the stated buckets are left out (and said so).
    """
    notes: list[str] = []
    bounds = data.get("_bucket_upper_bounds_tokens", list(BUCKET_EDGES_TOKENS[1:]))
    if list(bounds) != list(BUCKET_EDGES_TOKENS[1:]):
        raise _bad(
            file,
            "_bucket_upper_bounds_tokens",
            f"bucket bounds {bounds} are not the Mélange buckets",
            "profile on the upper bounds " + ", ".join(map(str, BUCKET_EDGES_TOKENS[1:])),
        )
    n = len(BUCKET_EDGES_TOKENS) - 1
    mids = bucket_midpoints()
    gpus = data.get("gpu_info")
    if not isinstance(gpus, dict) or not gpus:
        raise _bad(file, "gpu_info", "gpu_info is not an object of GPUs", _FORMATS_FIX)
    if model:
        model_id = catalog_model(model, catalog)
    else:
        described = data.get("_model")
        if described is None:
            raise _bad(file, "_model", "the profile does not name its model", "pass --model ID")
        model_id = _model(str(described).split(",")[0], catalog, file, "_model")
    run = _runtime(runtime, file, "--runtime")
    mapping = {**MELANGE_ACCELERATORS, **(accelerator_names or {})}
    points: list[dict] = []
    for gpu, info in gpus.items():
        at = f"gpu_info.{gpu}.tputs"
        tputs = info.get("tputs") if isinstance(info, dict) else None
        if not isinstance(tputs, list) or len(tputs) < n:
            raise _bad(file, at, f"tputs needs {n} rows (input buckets)", "one row per bucket")
        if len(tputs) > n:
            notes.append(
                f"{file}: {gpu}: rows {n + 1}-{len(tputs)} of tputs are beyond the stated "
                "buckets and left out"
            )
        acc = _accelerator(str(gpu), catalog, mapping, file, f"gpu_info.{gpu}")
        for i in range(n):
            row = tputs[i]
            if not isinstance(row, list) or len(row) != n:
                raise _bad(file, f"{at}[{i}]", f"row {i} needs {n} values", "one per bucket")
            for j in range(n):
                rps = _number(row[j], file, f"{at}[{i}][{j}]", positive=False)
                points.append(
                    _point(
                        file=file,
                        source="melange",
                        accelerator=acc,
                        runtime=run,
                        model=model_id,
                        prompt_tokens=float(mids[i]),
                        output_tokens=float(mids[j]),
                        concurrency=None,
                        measured_rps=rps,
                        measured=rps * mids[j],
                    )
                )
    return points, notes


def read_measurements(
    file: str,
    text: str,
    catalog: Catalog,
    *,
    accelerator: str | None = None,
    accelerator_names: dict[str, str] | None = None,
    model: str | None = None,
    runtime: str | None = None,
) -> tuple[list[dict], list[str]]:
    """Points from one file's text: CSV by its ``.csv`` name, else one of the JSON kinds."""
    if file.lower().endswith(".csv"):
        return read_measurements_csv(
            text, file, catalog, accelerator_names=accelerator_names, model=model, runtime=runtime
        )
    try:
        data = json.loads(text, object_pairs_hook=unique_json_keys)
    except DuplicateJSONKeyError as exc:
        raise _bad(file, exc.key, f"{exc}: which value counts is not clear", _FORMATS_FIX) from None
    except json.JSONDecodeError as exc:
        raise _bad(
            file, f"line {exc.lineno}", f"not JSON ({exc.msg}, column {exc.colno})", _FORMATS_FIX
        ) from None
    if not isinstance(data, dict):
        raise _bad(file, "top level", "expected a JSON object", _FORMATS_FIX)
    if "gpu_info" in data:
        return read_melange_profile(
            data, file, catalog, accelerator_names=accelerator_names, model=model, runtime=runtime
        )
    return read_vllm_result(
        data, file, catalog, accelerator=accelerator, model=model, runtime=runtime
    )


# --------------------------------------------------------------------------- physics and fit


def physics_runtime(runtime: str | None) -> str | None:
    """The physics' runtime for a measured one: TensorRT-LLM has its own batch limit;
    every other engine runs on its vendor's default stack (solver/physics/constants.py)."""
    return "tensorrt-llm" if runtime == "tensorrt-llm" else None


def predict(points: pd.DataFrame, catalog: Catalog) -> pd.DataFrame:
    """Add the physics' ``predicted`` output tokens/s of one replica and ``predicted_rps``.

    At the point's concurrency when it has one (a run capped beyond what the memory holds
    is predicted at the physics' best batch, as the runtime would queue the rest), else
    at the best batch.
    """
    from solver.analyses.estimate import estimate_inference

    cache: dict[tuple, float] = {}

    def one(row: pd.Series) -> float:
        prompt = max(1, int(round(float(row["prompt_tokens"]))))
        output = max(1, int(round(float(row["output_tokens"]))))
        conc = row["concurrency"]
        batch = None if conc is None or pd.isna(conc) else max(1, int(round(float(conc))))
        runtime = physics_runtime(row.get("runtime"))
        key = (row["model"], row["accelerator"], prompt, output, batch, runtime)
        if key not in cache:
            tps = float(
                estimate_inference(
                    catalog,
                    model=row["model"],
                    accelerator=row["accelerator"],
                    prompt_tokens=prompt,
                    output_tokens=output,
                    batch=batch,
                    runtime=runtime,
                )["replica_output_tokens_per_s"]
            )
            cache[key] = tps
        return cache[key]

    out = points.copy()
    out["predicted"] = [one(row) for _, row in points.iterrows()] if len(points) else []
    out["predicted_rps"] = out["predicted"] / out["output_tokens"].astype(float)
    return out


FACTOR_COLUMNS: tuple[str, ...] = (
    "model",
    "n_points",
    "n_excluded",
    "factor",
    "median_abs_log_ratio",
    "max_abs_log_ratio",
)


def fit_factors(
    points: pd.DataFrame, by: Sequence[str] = ("accelerator", "runtime")
) -> pd.DataFrame:
    """Fit measured = factor x predicted, one factor per group.

    Parameters
    ----------
    points
        Columns ``measured`` and ``predicted`` (any one unit, the same for both: output
        tokens/s or requests/s), the ``by`` columns and optionally ``model``.
    by
        Columns that define a group; empty for one factor over all points.

    Returns
    -------
    One row per group: the ``by`` columns, ``model`` (the models fitted, ``;``-joined),
    ``n_points`` (points used), ``n_excluded`` (points with a zero, negative or missing
    measured or predicted figure, which have no ratio), ``factor`` (geometric mean of
    measured / predicted; NaN without points), and the fit's error as the median and
    largest ``|ln(measured / (factor x predicted))|`` (0.1 is about 10% off).
    """
    by = list(by)
    groups = [((), points)] if not by else list(points.groupby(by, sort=True, dropna=False))
    rows = []
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        measured = group["measured"].astype(float).to_numpy()
        predicted = group["predicted"].astype(float).to_numpy()
        # the same fit compile uses for a workload's unprofiled cards
        factor, n, max_residual = calibration_factor(measured, predicted)
        with np.errstate(divide="ignore", invalid="ignore"):
            residual = np.abs(np.log(measured / (factor * predicted)))
        residual = residual[np.isfinite(residual) & (measured > 0) & (predicted > 0)]
        row = dict(zip(by, key, strict=True))
        row["model"] = (
            ";".join(sorted({str(m) for m in group["model"]})) if "model" in group else ""
        )
        row["n_points"] = n
        row["n_excluded"] = int(len(group) - n)
        row["factor"] = factor if n else math.nan
        row["median_abs_log_ratio"] = float(np.median(residual)) if n else math.nan
        row["max_abs_log_ratio"] = max_residual if n else math.nan
        rows.append(row)
    return pd.DataFrame(rows, columns=[*by, *FACTOR_COLUMNS])


# --------------------------------------------------------------------------- profiles


def build_profiles(
    points: pd.DataFrame,
    factors: pd.DataFrame,
    catalog: Catalog,
    *,
    tpot_slo_ms: float | None = None,
) -> list[dict]:
    """Per model and runtime: requests/s one accelerator sustains in every bucket.

    A bucket's figure is the highest measured requests/s among the points that lie wholly
    in it (and meet ``tpot_slo_ms`` where they report a TPOT): ``measured``. A bucket
    without one gets the physics at its midpoint sizes and best batch, scaled by the
    accelerator's fitted factor (``calibrated``), or unscaled when no factor was fitted
    (``physics``). Buckets follow :func:`bucket_order`.
    """
    from solver.analyses.estimate import estimate_inference

    order = bucket_order()
    mids = bucket_midpoints()
    profiles: list[dict] = []
    if points.empty:
        return profiles
    factor_of = {
        (r["accelerator"], r["runtime"]): r["factor"]
        for _, r in factors.iterrows()
        if "accelerator" in factors and "runtime" in factors
    }
    for (model_id, run), group in points.groupby(["model", "runtime"], sort=True):
        usable = group[group["per_bucket"].astype(bool) & (group["prompt_bucket"] >= 0)]
        usable = usable[usable["output_bucket"] >= 0]
        if tpot_slo_ms is not None:
            tpot = usable["tpot_ms"].astype(float)
            usable = usable[tpot.isna() | (tpot <= tpot_slo_ms)]
        best = usable.groupby(["accelerator", "prompt_bucket", "output_bucket"])[
            "measured_rps"
        ].max()
        rps: dict[str, list[float]] = {}
        basis: dict[str, str | list[str]] = {}
        for acc in sorted(group["accelerator"].unique()):
            values, kinds = [], []
            for i, j in order:
                if (acc, i, j) in best.index:
                    values.append(float(best[(acc, i, j)]))
                    kinds.append("measured")
                    continue
                tps = float(
                    estimate_inference(
                        catalog,
                        model=model_id,
                        accelerator=acc,
                        prompt_tokens=mids[i],
                        output_tokens=mids[j],
                        batch=None,
                        runtime=physics_runtime(run),
                    )["replica_output_tokens_per_s"]
                )
                factor = factor_of.get((acc, run), math.nan)
                scaled = not (factor is None or pd.isna(factor))
                values.append(round(tps / mids[j] * (factor if scaled else 1.0), 6))
                kinds.append("calibrated" if scaled else "physics")
            rps[acc] = values
            basis[acc] = "measured" if set(kinds) == {"measured"} else kinds
        profiles.append(
            {
                "model": model_id,
                "runtime": run,
                "bucket_edges_tokens": list(BUCKET_EDGES_TOKENS),
                "buckets": [{"prompt_tokens": mids[i], "output_tokens": mids[j]} for i, j in order],
                "measured_throughput_rps": rps,
                "basis": basis,
            }
        )
    return profiles


# --------------------------------------------------------------------------- the command


def calibrate(
    files: Sequence[tuple[str, str]],
    catalog: Catalog,
    *,
    accelerator: str | None = None,
    accelerator_names: dict[str, str] | None = None,
    model: str | None = None,
    runtime: str | None = None,
    tpot_slo_ms: float | None = None,
) -> Calibration:
    """Read every file, predict every point, fit the factors and lay out the profiles.

    Parameters
    ----------
    files
        (name, text) of each measurement file, in the order given.
    accelerator
        The accelerator of vLLM results (which do not name it).
    accelerator_names
        Names used in files (Mélange GPUs, CSV cells) -> catalog ids.
    model, runtime
        Override what the files say (every file).
    tpot_slo_ms
        Runs whose mean TPOT exceeds this are no bucket's measured figure.
    """
    if runtime is not None:
        _runtime(runtime, "", "--runtime")
    if tpot_slo_ms is not None and not (math.isfinite(tpot_slo_ms) and tpot_slo_ms > 0):
        raise ProcureError(
            f"{tpot_slo_ms} is not a positive time", field="--tpot-slo-ms", fix="e.g. 100"
        )
    if not files:
        raise ProcureError("no measurement files given", field="FILE", fix=_FORMATS_FIX)
    rows: list[dict] = []
    notes: list[str] = []
    for name, text in files:
        found, said = read_measurements(
            name,
            text,
            catalog,
            accelerator=accelerator,
            accelerator_names=accelerator_names,
            model=model,
            runtime=runtime,
        )
        rows += found
        notes += said
    points = pd.DataFrame(rows, columns=list(POINT_COLUMNS))
    same = [c for c in POINT_COLUMNS if c not in ("file", "source")]
    duplicated = points.duplicated(subset=same)
    if duplicated.any():
        notes.append(
            f"{int(duplicated.sum())} point(s) repeat another file's figures exactly: counted once"
        )
        points = points[~duplicated].reset_index(drop=True)
    points = predict(points, catalog)
    factors = fit_factors(points)
    for _, r in factors.iterrows():
        if r["n_excluded"]:
            notes.append(
                f"{r['accelerator']} ({r['runtime']}): {r['n_excluded']} points without a "
                "ratio (zero measured, or the physics says the model does not fit) not fitted"
            )
    profiles = build_profiles(points, factors, catalog, tpot_slo_ms=tpot_slo_ms)
    return Calibration(points=points, factors=factors, profiles=profiles, notes=notes)


def profiles_yaml(calibration: Calibration, sources: Sequence[str]) -> str:
    """``profiles.yaml``: the profiles, ready to paste into an inference workload."""
    head = (
        "# Written by `procure calibrate` from: " + ", ".join(sources) + "\n"
        "# measured_throughput_rps: requests/s ONE accelerator sustains per bucket, in the\n"
        "# order of `buckets` (representative sizes = bucket midpoints). To use a profile, copy\n"
        "# `buckets` into a workload's traffic_mix (adding each bucket's share) and\n"
        "# measured_throughput_rps beside it, as in problems/traffic-mix-measured.yaml.\n"
        "# basis: measured, or calibrated (physics x fitted factor) where nothing was measured.\n"
    )
    body = yaml.safe_dump(
        {"profiles": calibration.profiles},
        sort_keys=False,
        default_flow_style=None,
        width=100_000,
    )
    return head + body


def calibration_json(calibration: Calibration) -> str:
    """Profiles, factors, points (measured vs predicted) and notes as JSON."""

    def records(frame: pd.DataFrame) -> list[dict]:
        clean = frame.astype(object).where(frame.notna(), None)
        return clean.to_dict(orient="records")

    return json.dumps(
        {
            "profiles": calibration.profiles,
            "factors": records(calibration.factors),
            "points": records(calibration.points),
            "notes": calibration.notes,
        },
        indent=2,
        default=_plain,
    )


def _plain(value: object) -> object:
    """JSON for numpy scalars (their Python value)."""
    if hasattr(value, "item"):
        return value.item()  # type: ignore[union-attr]
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")
