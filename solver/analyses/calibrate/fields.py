"""The values of a measurement file: the formats' fields and columns, the runtimes, and one
value read and checked (a number, an accelerator, a model, a runtime) with a clear error.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from solver.analyses.calibrate.buckets import (
    bucket_index,
)
from solver.errors import ProcureError
from solver.inputs.catalog import Catalog

# Serving runtimes a factor can belong to. The client ``backend`` of a vLLM
# benchmark_serving result names the server it talked to; the OpenAI-compatible
# backends are taken as vLLM (the script's own server).
RUNTIMES: tuple[str, ...] = ("vllm", "sglang", "tensorrt-llm", "tgi", "lmdeploy", "deepspeed-mii")
DEFAULT_RUNTIME = "vllm"
RUNTIME_BY_BACKEND: dict[str, str] = {
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

FORMATS_FIX = (
    "pass a vLLM benchmark_serving result JSON (--save-result), a CSV with columns "
    + ", ".join(CSV_COLUMNS)
    + ", or a Mélange profile JSON (gpu_info)"
)


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


def bad_input(file: str, field_name: str, message: str, fix: str) -> ProcureError:
    return ProcureError(message, file=file, field=field_name, fix=fix)


def checked_number(
    value: object,
    file: str,
    field_name: str,
    *,
    positive: bool = True,
    fix: str = "",
) -> float:
    """A finite number (positive, or non-negative), else a ProcureError naming the field."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise bad_input(file, field_name, f"{value!r} is not a number", fix or "write a number")
    number = float(value)
    if not math.isfinite(number):
        raise bad_input(
            file, field_name, f"{value!r} is not a finite number", fix or "rerun or drop it"
        )
    if number < 0 or (positive and number == 0):
        need = "positive" if positive else "zero or more"
        raise bad_input(file, field_name, f"{value!r} must be {need}", fix or "rerun or drop it")
    return number


def resolved_accelerator(
    name: str, catalog: Catalog, mapping: dict[str, str] | None, file: str, at: str
) -> str:
    """Resolve a name (through ``mapping`` when given: names in files) to a catalog id."""
    target = (mapping or {}).get(name.strip(), name)
    try:
        return catalog.resolve_accelerator(target)
    except ProcureError as exc:
        also = f"or map it with --accelerator {name}=ID" if mapping is not None else ""
        raise bad_input(file, at, exc.message, "; ".join(p for p in (exc.fix, also) if p)) from None


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


def resolved_model(name: object, catalog: Catalog, file: str, at: str) -> str:
    if not isinstance(name, str) or not name.strip():
        raise bad_input(
            file, at, f"{name!r} is not a model name", "name the model, or pass --model ID"
        )
    last: ProcureError | None = None
    for candidate in _model_candidates(name.strip()):
        try:
            return catalog.resolve_model(candidate)
        except ProcureError as exc:
            last = exc
    hint = last.fix if last is not None else ""
    raise bad_input(
        file,
        at,
        f"model {name!r} is not a catalog model preset",
        f"pass --model ID ({hint})" if hint else "pass --model ID",
    )


def checked_runtime(value: str | None, file: str, at: str) -> str:
    runtime = (value or DEFAULT_RUNTIME).strip().lower()
    if runtime not in RUNTIMES:
        raise bad_input(file, at, f"unknown runtime {value!r}", f"use one of {', '.join(RUNTIMES)}")
    return runtime


def point_row(**values: object) -> dict:
    prompt, output = float(values["prompt_tokens"]), float(values["output_tokens"])  # type: ignore[arg-type]
    row = {c: values.get(c) for c in POINT_COLUMNS}
    row["prompt_bucket"] = bucket_index(prompt)
    row["output_bucket"] = bucket_index(output)
    if row.get("per_bucket") is None:
        row["per_bucket"] = True
    return row


def catalog_model(name: str, catalog: Catalog) -> str:
    """Resolve ``--model`` against the catalog's model presets and aliases."""
    try:
        return catalog.resolve_model(name)
    except ProcureError as exc:
        raise ProcureError(exc.message, field="--model", fix=exc.fix) from None


def csv_number(
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
        raise bad_input(file, at, f"{column} is empty", "fill it in or drop the row")
    try:
        value = float(text_value)
    except ValueError:
        raise bad_input(file, at, f"{text_value!r} is not a number", "write a number") from None
    return checked_number(value, file, at, positive=positive)
