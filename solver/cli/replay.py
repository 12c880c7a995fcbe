"""``procure replay``: a signed plan's serving fleets replayed against traffic before
signing (:mod:`solver.analyses.replay`). Exit 0: every block meets its limits, with one
unit lost too; :data:`EXIT_REPLAY_SLO_MISSED`: some block misses one."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from solver.cli.common import (
    CatalogOpt,
    DebugOpt,
    ForceOpt,
    _check_choice,
    _check_format,
    _choices,
    _run,
    app,
    cache_dir,
    catalog_inputs,
    emit,
)
from solver.errors import ProcureError

#: a block (with every unit, or one unit lost) misses a latency limit at its percentile
EXIT_REPLAY_SLO_MISSED = 6


def _check_numbers(duration_s: float, percentile: float | None, budget: int, seed: int) -> None:
    if not (0 <= seed < 2**63):
        raise ProcureError(
            f"--seed {seed} is out of range",
            field="--seed",
            fix="give a whole number from 0 (the same seed gives the same arrivals)",
        )
    if not (1 <= budget <= 10_000_000):
        raise ProcureError(
            f"--max-batched-tokens {budget} is out of range",
            field="--max-batched-tokens",
            fix="give the tokens one engine step runs at most, from 1 (e.g. 2048 or 8192)",
        )
    if not (1.0 <= duration_s <= 86_400.0):
        raise ProcureError(
            f"--duration-s {duration_s:g} is out of range",
            field="--duration-s",
            fix="give the seconds of traffic to replay per block, from 1 to 86400 (e.g. 600)",
        )
    if percentile is not None and not (0.5 <= percentile < 1.0):
        raise ProcureError(
            f"--percentile {percentile:g} is not a fraction from 0.5 up to 1",
            field="--percentile",
            fix="write the percentile as a fraction: 0.99 for p99",
        )


def _read_trace(trace: Path):
    from solver.analyses.replay import parse_trace
    from solver.inputs.yamlio import read_text_file

    text = read_text_file(trace, what="trace file", fix="give a trace CSV that exists")
    return parse_trace(text, str(trace))


@app.command("replay")
def replay_cmd(
    plan: Annotated[Path, typer.Argument(help="The plan to replay (solve --format json)")],
    trace: Annotated[
        Path | None,
        typer.Option(
            "--trace",
            help="Requests to replay: CSV arrival_s,prompt_tokens,output_tokens or an Azure "
            "LLM inference trace (TIMESTAMP,ContextTokens,GeneratedTokens); default: Poisson "
            "arrivals at each block's worst-hour rate from the problem's load curve",
        ),
    ] = None,
    trace_rate: Annotated[
        str,
        typer.Option(
            "--trace-rate",
            help="block: stretch the trace's times to each block's rate; as-is: its own times",
            **_choices("block", "as-is"),
        ),
    ] = "block",
    duration_s: Annotated[
        float,
        typer.Option(
            "--duration-s",
            help="Seconds of synthetic traffic per block (longer where the block's rate "
            "gives fewer than 2,000 requests)",
        ),
    ] = 600.0,
    percentile: Annotated[
        float | None,
        typer.Option(
            help="Judge the limits at this percentile (default: the workload's, else 0.99)"
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the synthetic arrivals")] = 0,
    max_batched_tokens: Annotated[
        int,
        typer.Option(
            "--max-batched-tokens",
            help="Tokens one engine step runs at most (vLLM's max_num_batched_tokens; "
            "decode first, prompt chunks in the rest)",
        ),
    ] = 2048,
    format: Annotated[
        str, typer.Option("--format", help="Output format", **_choices("table", "json"))
    ] = "table",
    out: Annotated[Path | None, typer.Option(help="Write the output to this file")] = None,
    catalog: CatalogOpt = None,
    force: ForceOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Replay the plan's serving fleets against traffic: TTFT, TPOT and end-to-end latency
    at p50/p90/p99 per deployment and load block, with every unit and with one unit of the
    largest deployment lost, beside the plan's limits and utilisation. Exit 0: every
    limit met; 6: a block misses one."""
    outcome: dict[str, int] = {}

    def body() -> None:
        from solver.analyses.replay import replay_plan
        from solver.outputs.replay import replay_json, replay_table
        from solver.trust.planfile import load_plan

        _check_format(format, "table", "json")
        _check_choice(trace_rate, "--trace-rate", "block", "as-is")
        _check_numbers(duration_s, percentile, max_batched_tokens, seed)
        rows = _read_trace(trace) if trace is not None else None
        the_plan, prob, cat = load_plan(plan, catalog=catalog, cache_dir=cache_dir())
        result = replay_plan(
            the_plan,
            prob,
            cat,
            trace=rows,
            trace_as_is=trace_rate == "as-is",
            source=f"trace {trace}" if trace is not None else "",
            duration_s=duration_s,
            seed=seed,
            percentile=percentile,
            token_budget=max_batched_tokens,
        )
        if not result.rows:
            raise ProcureError(
                "the plan serves no online workload: there is nothing to replay",
                file=str(plan),
                fix="replay a plan with an inference workload (kind: inference)",
            )
        code = 0 if result.meets_slos else EXIT_REPLAY_SLO_MISSED
        text = replay_json(result, code) if format == "json" else replay_table(result)
        inputs: list[tuple[str, Path | None]] = [("plan", plan), ("trace", trace)]
        emit(text, out, force, inputs + list(catalog_inputs(catalog)))
        outcome["code"] = code

    _run(debug, body)
    if outcome.get("code"):
        raise typer.Exit(outcome["code"])
