"""Measurement files read into points, one row per measurement: a vLLM benchmark_serving
result, the plain CSV of :data:`~solver.analyses.calibrate.fields.CSV_COLUMNS`, or a Mélange
profile.
"""

from __future__ import annotations

import csv
import io
import json
import math

from solver.analyses.calibrate.buckets import (
    BUCKET_EDGES_TOKENS,
    bucket_index,
    bucket_midpoints,
)
from solver.analyses.calibrate.fields import (
    CSV_COLUMNS,
    DEFAULT_RUNTIME,
    FORMATS_FIX,
    MELANGE_ACCELERATORS,
    RUNTIME_BY_BACKEND,
    VLLM_REQUIRED,
    bad_input,
    catalog_model,
    checked_number,
    checked_runtime,
    csv_number,
    point_row,
    resolved_accelerator,
    resolved_model,
)
from solver.inputs.catalog import Catalog
from solver.inputs.yamlio import DuplicateJSONKeyError, unique_json_keys


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
            raise bad_input(
                file,
                name,
                f"field {name!r} is missing: not a vLLM benchmark_serving result",
                FORMATS_FIX,
            )
    if accelerator is None:
        raise bad_input(
            file,
            "accelerator",
            "a vLLM benchmark_serving result does not say which accelerator it ran on",
            "pass --accelerator ID (e.g. --accelerator h100-sxm)",
        )
    acc = resolved_accelerator(accelerator, catalog, None, file, "--accelerator")
    model_id = (
        catalog_model(model, catalog)
        if model
        else resolved_model(data.get("model_id"), catalog, file, "model_id")
    )
    backend = data.get("backend")
    if runtime is None and isinstance(backend, str):
        runtime = RUNTIME_BY_BACKEND.get(backend.lower(), DEFAULT_RUNTIME)
    run = checked_runtime(runtime, file, "--runtime")
    completed = checked_number(
        data["completed"], file, "completed", fix="the run completed no request"
    )
    checked_number(data["duration"], file, "duration")
    total_in = checked_number(data["total_input_tokens"], file, "total_input_tokens")
    total_out = checked_number(data["total_output_tokens"], file, "total_output_tokens")
    rps = checked_number(data["request_throughput"], file, "request_throughput")
    tps = checked_number(data["output_throughput"], file, "output_throughput")
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
        key: checked_number(data[key], file, key, positive=False)
        for key in ("mean_ttft_ms", "mean_tpot_ms")
        if data.get(key) is not None
    }
    return [
        point_row(
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
            raise bad_input(
                file, key, f"{key} is not a list", "save the result with both lists or none"
            )
        lens.append(
            [checked_number(v, file, f"{key}[{i}]", positive=False) for i, v in enumerate(values)]
        )
    if len(lens[0]) != len(lens[1]):
        raise bad_input(
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
        return min(checked_number(cap, file, "max_concurrency"), completed)
    rate = data.get("request_rate", "inf")
    if isinstance(rate, str) and rate.strip().lower() in ("inf", "infinity"):
        return None
    rate_value = (
        float("inf") if rate == float("inf") else checked_number(rate, file, "request_rate")
    )
    if math.isinf(rate_value):
        return None
    # Little's law: requests in flight = arrival (here served) rate x time in the system.
    if data.get("mean_e2el_ms") is not None:
        latency_s = checked_number(data["mean_e2el_ms"], file, "mean_e2el_ms") / 1000.0
    elif data.get("mean_ttft_ms") is not None and data.get("mean_tpot_ms") is not None:
        ttft_ms = checked_number(data["mean_ttft_ms"], file, "mean_ttft_ms", positive=False)
        tpot_ms = checked_number(data["mean_tpot_ms"], file, "mean_tpot_ms", positive=False)
        latency_s = (ttft_ms + max(output - 1.0, 0.0) * tpot_ms) / 1000.0
    else:
        notes.append(
            f"{file}: request_rate {rate} without max_concurrency or latencies: fitted at "
            "the physics' best batch"
        )
        return None
    return max(1.0, rps * latency_s)


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
        raise bad_input(
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

        prompt = csv_number(cells, file, line, "prompt_tokens")
        output = csv_number(cells, file, line, "output_tokens")
        tps = csv_number(cells, file, line, "output_tokens_per_s")
        acc = resolved_accelerator(
            cells["accelerator"], catalog, mapping, file, f"line {line}: accelerator"
        )
        model_id = fixed_model or resolved_model(
            cells["model"], catalog, file, f"line {line}: model"
        )
        points.append(
            point_row(
                file=file,
                source="csv",
                accelerator=acc,
                runtime=checked_runtime(
                    runtime or cells.get("runtime") or None, file, f"line {line}: runtime"
                ),
                model=model_id,
                prompt_tokens=prompt,
                output_tokens=output,
                concurrency=csv_number(cells, file, line, "concurrency", optional=True),
                measured_rps=tps / output,  # type: ignore[operator]
                measured=tps,
                ttft_ms=csv_number(cells, file, line, "ttft_ms", optional=True, positive=False),
                tpot_ms=csv_number(cells, file, line, "tpot_ms", optional=True, positive=False),
            )
        )
    if not points:
        raise bad_input(file, "line 2", "the CSV has no measurements", "add one row per run")
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
        raise bad_input(
            file,
            "_bucket_upper_bounds_tokens",
            f"bucket bounds {bounds} are not the Mélange buckets",
            "profile on the upper bounds " + ", ".join(map(str, BUCKET_EDGES_TOKENS[1:])),
        )
    n = len(BUCKET_EDGES_TOKENS) - 1
    mids = bucket_midpoints()
    gpus = data.get("gpu_info")
    if not isinstance(gpus, dict) or not gpus:
        raise bad_input(file, "gpu_info", "gpu_info is not an object of GPUs", FORMATS_FIX)
    if model:
        model_id = catalog_model(model, catalog)
    else:
        described = data.get("_model")
        if described is None:
            raise bad_input(
                file, "_model", "the profile does not name its model", "pass --model ID"
            )
        model_id = resolved_model(str(described).split(",")[0], catalog, file, "_model")
    run = checked_runtime(runtime, file, "--runtime")
    mapping = {**MELANGE_ACCELERATORS, **(accelerator_names or {})}
    points: list[dict] = []
    for gpu, info in gpus.items():
        at = f"gpu_info.{gpu}.tputs"
        tputs = info.get("tputs") if isinstance(info, dict) else None
        if not isinstance(tputs, list) or len(tputs) < n:
            raise bad_input(file, at, f"tputs needs {n} rows (input buckets)", "one row per bucket")
        if len(tputs) > n:
            notes.append(
                f"{file}: {gpu}: rows {n + 1}-{len(tputs)} of tputs are beyond the stated "
                "buckets and left out"
            )
        acc = resolved_accelerator(str(gpu), catalog, mapping, file, f"gpu_info.{gpu}")
        for i in range(n):
            row = tputs[i]
            if not isinstance(row, list) or len(row) != n:
                raise bad_input(file, f"{at}[{i}]", f"row {i} needs {n} values", "one per bucket")
            for j in range(n):
                rps = checked_number(row[j], file, f"{at}[{i}][{j}]", positive=False)
                points.append(
                    point_row(
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
        raise bad_input(
            file, exc.key, f"{exc}: which value counts is not clear", FORMATS_FIX
        ) from None
    except json.JSONDecodeError as exc:
        raise bad_input(
            file, f"line {exc.lineno}", f"not JSON ({exc.msg}, column {exc.colno})", FORMATS_FIX
        ) from None
    if not isinstance(data, dict):
        raise bad_input(file, "top level", "expected a JSON object", FORMATS_FIX)
    if "gpu_info" in data:
        return read_melange_profile(
            data, file, catalog, accelerator_names=accelerator_names, model=model, runtime=runtime
        )
    return read_vllm_result(
        data, file, catalog, accelerator=accelerator, model=model, runtime=runtime
    )
