"""``procure estimate training | inference``: back-of-envelope physics."""

from __future__ import annotations

import json
import math
from typing import Annotated

import typer

from solver.cli.common import (
    CatalogOpt,
    DebugOpt,
    _check_format,
    _choices,
    _load_catalog,
    _run,
    estimate_app,
    positive,
)
from solver.errors import ProcureError

# ``--format table|json`` as every other command takes it; ``--json`` (the older flag) is
# kept and means ``--format json``.
FormatOpt = Annotated[
    str,
    typer.Option("--format", help="Output format: table or json (--json is the same as json)"),
]


def _print_estimate(result: dict, as_json: bool, format: str = "table") -> None:
    _check_format(format, "table", "json")
    if as_json or format == "json":
        typer.echo(json.dumps(result, indent=2, default=float))
        return
    from solver.outputs.text import estimate_text

    typer.echo(estimate_text(result), nl=False)


@estimate_app.command("training")
def estimate_training_cmd(
    tokens: Annotated[
        float, typer.Option(help="Training tokens, e.g. 1e12", **positive("e.g. --tokens 1e12"))
    ],
    model: Annotated[str, typer.Option(help="Model preset")] = "dense-13b",
    params_b: Annotated[
        float | None,
        typer.Option(help="Or just a size, billions", **positive("e.g. --params-b 13")),
    ] = None,
    optimizer: Annotated[
        str,
        typer.Option(help="Optimizer", **_choices("adamw", "sgd", "lora", "qlora")),
    ] = "adamw",
    precision: Annotated[
        str, typer.Option(help="Training precision", **_choices("bf16", "fp16", "fp8"))
    ] = "bf16",
    seq_len: Annotated[int, typer.Option(**positive("e.g. --seq-len 4096", whole=True))] = 4096,
    recompute: Annotated[
        str,
        typer.Option(
            help="Activation recomputation",
            **_choices("none", "selective", "full"),
        ),
    ] = "selective",
    accelerator: Annotated[str | None, typer.Option(help="Accelerator name")] = None,
    offering: Annotated[str | None, typer.Option(help="Offering id (prices the run)")] = None,
    n_accelerators: Annotated[
        int | None,
        typer.Option(help="Cluster size", **positive("e.g. --n-accelerators 64", whole=True)),
    ] = None,
    mfu: Annotated[
        float | None,
        typer.Option(help="MFU override", **positive("a fraction, e.g. --mfu 0.4", at_most=1.0)),
    ] = None,
    spot: bool = False,
    training_margin: Annotated[
        str,
        typer.Option(
            help="MFU the run is sized at: low (the low end of the published band, as solve "
            "does by default), point (the published figure) or a fraction of it, e.g. 0.9",
        ),
    ] = "low",
    capacity_factor: Annotated[
        float,
        typer.Option(
            help="Expert capacity factor of a token-dropping mixture of experts: the "
            "routed experts compute this multiple of the routed tokens (padding "
            "included). 1.0 = dropless (MaxText's and Megatron Core's default)",
            **positive("e.g. --capacity-factor 1.25"),
        ),
    ] = 1.0,
    catalog: CatalogOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output")] = False,
    format: FormatOpt = "table",
    debug: DebugOpt = False,
) -> None:
    """Training memory per component, time and cost on an accelerator or offering."""

    def body() -> None:
        from solver.analyses.training_estimate import estimate_training

        result = estimate_training(
            _load_catalog(catalog),
            model=model,
            params_b=params_b,
            tokens=tokens,
            optimizer=optimizer,
            precision=precision,
            seq_len=seq_len,
            recompute=recompute,
            accelerator=accelerator,
            offering=offering,
            n_accelerators=n_accelerators,
            mfu=mfu,
            spot=spot,
            training_margin=_margin(training_margin),
            capacity_factor=capacity_factor,
        )
        _print_estimate(result, as_json, format)

    _run(debug, body)


def _margin(text: str) -> str | float:
    """``--training-margin``: low, point, or a number (checked by the estimate)."""
    if text in ("low", "point"):
        return text
    try:
        return float(text)
    except ValueError:
        return text  # refused by the estimate with one message


@estimate_app.command("inference")
def estimate_inference_cmd(
    model: Annotated[str, typer.Option(help="Model preset")] = "llama-3-8b",
    accelerator: Annotated[str | None, typer.Option(help="Accelerator name")] = None,
    offering: Annotated[str | None, typer.Option(help="Offering id (prices the tokens)")] = None,
    tp: Annotated[
        int,
        typer.Option(
            "--tp",
            help="Accelerators per replica",
            **positive("accelerators per replica, e.g. --tp 2", whole=True),
        ),
    ] = 1,
    batch: Annotated[
        int | None,
        typer.Option(
            help="Batch (default: best within SLO)", **positive("e.g. --batch 32", whole=True)
        ),
    ] = None,
    prompt_tokens: Annotated[
        int, typer.Option(**positive("e.g. --prompt-tokens 1000", whole=True))
    ] = 1000,
    output_tokens: Annotated[
        int, typer.Option(**positive("e.g. --output-tokens 400", whole=True))
    ] = 400,
    weight_precision: str = "bf16",
    kv_precision: str = "bf16",
    tpot_slo_ms: Annotated[
        float | None,
        typer.Option(help="Time per output token SLO, ms", **positive("e.g. --tpot-slo-ms 50")),
    ] = None,
    ttft_slo_ms: Annotated[
        float | None,
        typer.Option(help="Time to first token SLO, ms", **positive("e.g. --ttft-slo-ms 1000")),
    ] = None,
    demand_tokens_per_s: Annotated[
        float | None,
        typer.Option(help="Output tokens/s", **positive("e.g. --demand-tokens-per-s 5000")),
    ] = None,
    slo_percentile: Annotated[
        str,
        typer.Option(
            help="Check the SLOs at this percentile under Poisson arrivals (0.99 = p99, the "
            "default, as a problem's slo_percentile), or 'mean' for the mean",
            **percentile_or_mean(),
        ),
    ] = "0.99",
    utilisation: Annotated[
        float,
        typer.Option(
            help="Load the percentile is checked at, a fraction of the replica's throughput",
            **positive("e.g. --utilisation 0.8", at_most=1),
        ),
    ] = 0.8,
    server: Annotated[str | None, typer.Option(help="Owned server id (owned $/1M tokens)")] = None,
    site: Annotated[str | None, typer.Option(help="Site id for the owned server")] = None,
    runtime: Annotated[
        str | None,
        typer.Option(
            help="Serving runtime: vllm-cuda, tensorrt-llm, vllm-rocm, neuron, gaudi, tpu, "
            "jetstream (default: the vendor's); neuron@N: Neuron with its decode graph "
            "compiled for N sequences (a deployment run below its compiled batch)"
        ),
    ] = None,
    catalog: CatalogOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output")] = False,
    format: FormatOpt = "table",
    debug: DebugOpt = False,
) -> None:
    """Inference memory, latency, throughput, replicas and $/1M tokens (owned vs rented)."""

    def body() -> None:
        from solver.analyses.estimate import estimate_inference
        from solver.physics.constants import RUNTIME_EFFICIENCY, split_compiled_batch

        _check_precisions(weight_precision, kv_precision)
        percentile = None if slo_percentile == "mean" else float(slo_percentile)
        try:  # a static-batch runtime may name its compiled batch: neuron@32
            name, _ = split_compiled_batch(runtime)
        except ValueError as exc:
            raise ProcureError(
                str(exc), field="--runtime", fix="e.g. --runtime neuron@32, or the name alone"
            ) from None
        if name is not None and name not in RUNTIME_EFFICIENCY:
            raise ProcureError(
                f"unknown runtime {runtime!r}",
                field="--runtime",
                fix=f"use one of {', '.join(sorted(RUNTIME_EFFICIENCY))} (a static-batch "
                "runtime may add its compiled batch: neuron@32)",
            )
        result = estimate_inference(
            _load_catalog(catalog),
            model=model,
            accelerator=accelerator,
            offering=offering,
            tp_degree=tp,
            batch=batch,
            prompt_tokens=prompt_tokens,
            output_tokens=output_tokens,
            weight_precision=weight_precision,
            kv_precision=kv_precision,
            tpot_slo_ms=tpot_slo_ms,
            ttft_slo_ms=ttft_slo_ms,
            demand_tokens_per_s=demand_tokens_per_s,
            server=server,
            site=site,
            runtime=runtime,
            slo_percentile=percentile,
            utilisation=utilisation,
        )
        _print_estimate(result, as_json, format)

    _run(debug, body)


def percentile_or_mean() -> dict:
    """typer.Option arguments for ``--slo-percentile``: a fraction from 0.5 up to (not
    including) 1, or ``mean``; anything else is refused while the command line is read
    (exit 2, naming the option and the fix)."""
    fix = "write the percentile as a fraction from 0.5 up to (not including) 1: 0.9 for p90, "
    fix += "0.99 for p99; or 'mean' to check the SLOs at the mean"

    def parse(value: object) -> str:
        text = str(value).strip().lower()
        if text == "mean":
            return text
        try:
            number = float(text)
        except ValueError:
            raise typer.BadParameter(f"{value!r} is not a percentile\n  fix: {fix}") from None
        if not (math.isfinite(number) and 0.5 <= number < 1.0):
            raise typer.BadParameter(
                f"{value} is not a fraction from 0.5 up to 1 (below the median, or a "
                f"percentage)\n  fix: {fix}"
            )
        return repr(number)

    return {"parser": parse, "metavar": "FRACTION|mean"}


def _check_precisions(weight_precision: str, kv_precision: str) -> None:
    """One message for a precision the physics does not know (or a weight-only format
    given for the KV cache), naming the option and the values it takes."""
    from solver.physics.constants import BYTES_PER_VALUE, WEIGHT_ONLY_PRECISIONS

    weights = sorted(BYTES_PER_VALUE)
    kv = [p for p in weights if p not in WEIGHT_ONLY_PRECISIONS]
    for option, value, allowed in (
        ("--weight-precision", weight_precision, weights),
        ("--kv-precision", kv_precision, kv),
    ):
        if value not in allowed:
            raise ProcureError(
                f"unknown {option[2:]} {value!r}"
                + (
                    " (weight-only formats describe weights, not a KV cache)"
                    if value in weights
                    else ""
                ),
                field=option,
                fix=f"use one of {', '.join(allowed)}",
            )
