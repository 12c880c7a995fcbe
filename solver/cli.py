"""The command line: ``procure solve | sensitivity | report | estimate | catalog | schema``.

The only place that reads arguments, prints and writes files. Every user error
becomes one message naming the file, the field and the fix, and exit code 2;
``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from solver.errors import ProcureError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Optimisation-based procurement of AI accelerators.",
)
catalog_app = typer.Typer(no_args_is_help=True, help="Inspect, validate and import catalogs.")
estimate_app = typer.Typer(no_args_is_help=True, help="Back-of-envelope physics with assumptions.")
app.add_typer(catalog_app, name="catalog")
app.add_typer(estimate_app, name="estimate")

EXIT_USER_ERROR = 2
EXIT_INFEASIBLE = 3
EXIT_INTERRUPTED = 130

CatalogOpt = Annotated[
    Path | None, typer.Option("--catalog", help="Catalog folder (default: the shipped catalogs/)")
]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show tracebacks")]


def _run(debug: bool, body: Callable[[], None]) -> None:
    """Run a command body; turn user errors into one message and a non-zero exit."""
    from solver.errors import InfeasibleError

    try:
        body()
    except ProcureError as exc:
        if debug:
            raise
        typer.echo(f"error: {exc.render()}", err=True)
        code = EXIT_INFEASIBLE if isinstance(exc, InfeasibleError) else EXIT_USER_ERROR
        raise typer.Exit(code) from None
    except (OSError, ValueError) as exc:
        if debug:
            raise
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(EXIT_USER_ERROR) from None
    except KeyboardInterrupt:
        if debug:
            raise
        typer.echo(
            "interrupted: no output was written (files are replaced whole or not at all)", err=True
        )
        raise typer.Exit(EXIT_INTERRUPTED) from None


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write a file so that it is either whole or absent (temp file + rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        if isinstance(text, bytes):
            with os.fdopen(fd, "wb") as handle:
                handle.write(text)
        else:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _load_catalog(directory: Path | None):
    from solver.catalog import load_catalog

    return load_catalog(directory)


# --------------------------------------------------------------------------- solve


def plan_table(plan) -> str:
    """The plan for people: grouped by period and provider, totals, what binds."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=150, force_terminal=False, color_system=None)
    gap = "n/a" if plan.gap is None else f"{plan.gap:.4%}"
    console.print(
        f"[bold]{plan.problem}[/bold]: {plan.status} (objective {plan.objective_kind}), "
        f"verified={str(plan.verified).lower()}, solver {plan.solver}, gap {gap}, "
        f"compile {plan.compile_seconds:.2f} s, solve {plan.solve_seconds:.2f} s"
    )
    if plan.status != "optimal":
        console.print(
            f"stopped at a limit: the best plan found, NOT proven optimal (gap {gap}); "
            "give the solver more time (--time-limit) to prove it"
        )
    console.print(f"total cost ${plan.total_cost_usd:,.0f}   total CO2e {plan.total_co2e_t:,.1f} t")
    for period in plan.totals.by_period:
        rows = [i for i in plan.line_items if i.period == period]
        if not rows:
            continue
        table = Table(
            title=f"period {period}  (${plan.totals.by_period[period]:,.0f})",
            title_justify="left",
            show_lines=False,
        )
        for col, justify in [
            ("provider", "left"),
            ("region", "left"),
            ("what", "left"),
            ("accelerator", "left"),
            ("mode", "left"),
            ("units", "right"),
            ("GPUs", "right"),
            ("workload", "left"),
            ("block", "left"),
            ("hours", "right"),
            ("cost $", "right"),
            ("tCO2e", "right"),
        ]:
            table.add_column(col, justify=justify)
        last_provider = None
        for i in sorted(rows, key=lambda r: (r.provider, r.region, r.offering, r.item)):
            table.add_row(
                i.provider if i.provider != last_provider else "",
                i.region,
                f"{i.item}: {i.instance_type}",
                i.accelerator,
                i.mode,
                f"{i.units:g}",
                f"{i.accelerators:g}",
                i.workload,
                i.block,
                f"{i.hours:,.0f}",
                f"{i.cost_usd:,.0f}",
                f"{i.co2e_t:,.2f}",
            )
            last_provider = i.provider
        console.print(table)
    totals = Table(title="totals", title_justify="left")
    totals.add_column("by")
    totals.add_column("key")
    totals.add_column("cost $", justify="right")
    for label, mapping in [
        ("provider", plan.totals.by_provider),
        ("mode", plan.totals.by_mode),
        ("workload", plan.totals.by_workload),
    ]:
        for key, value in mapping.items():
            totals.add_row(label, key, f"{value:,.0f}")
    console.print(totals)
    if plan.owned_utilisation:
        console.print(
            "owned fleet utilisation: "
            + ", ".join(f"{k} {v:.0%}" for k, v in plan.owned_utilisation.items())
        )
    if plan.binding:
        console.print("binds: " + "; ".join(f"{b.name} ({b.description})" for b in plan.binding))
    else:
        console.print(
            "binds: no budget, carbon, availability, quota or share limit binds; "
            "the plan is driven by demand and prices"
        )
    rep = plan.compile_report
    console.print(
        f"options: {rep.get('options_generated', 0)} generated, {rep.get('options_kept', 0)} "
        f"kept from {rep.get('pools', 0)} pools; verifier: "
        f"{sum(c.ok for c in plan.checks)}/{len(plan.checks)} checks passed"
    )
    return buffer.getvalue()


def plan_csv(plan) -> str:
    import pandas as pd

    frame = pd.DataFrame([i.model_dump() for i in plan.line_items])
    return frame.to_csv(index=False, lineterminator="\n")


def plan_json(plan) -> str:
    return json.dumps(plan.model_dump(mode="json"), indent=2, sort_keys=False) + "\n"


@app.command()
def solve(
    problem: Annotated[Path, typer.Argument(help="Problem YAML file")],
    catalog: CatalogOpt = None,
    solver: Annotated[str, typer.Option(help="highs | cbc")] = "highs",
    time_limit: Annotated[float | None, typer.Option("--time-limit", help="Seconds")] = None,
    gap: Annotated[float, typer.Option(help="Relative MIP gap to prove")] = 1e-4,
    format: Annotated[str, typer.Option("--format", help="table | json | csv")] = "table",
    out: Annotated[Path | None, typer.Option(help="Write the output to this file")] = None,
    reproducible: Annotated[
        bool,
        typer.Option(
            "--reproducible",
            help="Report solve_seconds and compile_seconds as 0 so that the same inputs "
            "give byte-identical output",
        ),
    ] = False,
    debug: DebugOpt = False,
) -> None:
    """Solve a problem to proven optimality, verify the plan, and show it."""

    def body() -> None:
        from solver.backends import SolveOptions
        from solver.problem import load_problem
        from solver.solve import solve_problem

        if format not in {"table", "json", "csv"}:
            raise ProcureError(
                f"unknown format {format!r}", field="--format", fix="use table, json or csv"
            )
        if gap < 0 or (time_limit is not None and time_limit <= 0):
            raise ProcureError(
                "gap must be >= 0 and time limit > 0",
                field="--gap/--time-limit",
                fix="e.g. --gap 0.001 --time-limit 60",
            )
        prob = load_problem(problem)
        cat = _load_catalog(catalog)
        try:
            plan = solve_problem(
                prob,
                cat,
                solver=solver,
                options=SolveOptions(time_limit_s=time_limit, relative_gap=gap),
            )
        except ProcureError as exc:
            if exc.file is None:
                exc.file = str(problem)
                exc.args = (exc.render(),)
            raise
        if reproducible:
            plan = plan.model_copy(update={"solve_seconds": 0.0, "compile_seconds": 0.0})
        text = {"table": plan_table, "json": plan_json, "csv": plan_csv}[format](plan)
        if out is not None:
            write_atomic(out, text)
            typer.echo(f"wrote {out}")
        else:
            sys.stdout.write(text)

    _run(debug, body)


def _solve_for_analysis(problem: Path, catalog: Path | None, solver: str):
    """Load, solve and verify: the plan and the solution behind it."""
    from solver.problem import load_problem
    from solver.solve import solve_verified

    prob = load_problem(problem)
    cat = _load_catalog(catalog)
    try:
        return solve_verified(prob, cat, solver=solver)
    except ProcureError as exc:
        if exc.file is None:
            exc.file = str(problem)
            exc.args = (exc.render(),)
        raise


class _Progress:
    """A progress bar on stderr for long sweeps (silent when stderr is not a terminal)."""

    def __init__(self) -> None:
        from rich.progress import Progress

        self.bar = Progress(console=Console(stderr=True), transient=True)
        self.tasks: dict[str, int] = {}

    def __enter__(self):
        self.bar.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.bar.__exit__(*exc)

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage not in self.tasks:
            self.tasks[stage] = self.bar.add_task(stage, total=total)
        self.bar.update(self.tasks[stage], completed=done)


WorkersOpt = Annotated[int, typer.Option(help="Local processes for re-solves")]
SchedulerOpt = Annotated[
    str | None, typer.Option(help="Dask scheduler address (tcp://host:8786) for re-solves")
]
BreakEvenOpt = Annotated[
    int,
    typer.Option(
        "--break-even",
        help="Break-even prices for the plan's pools and this many closest others (-1: all)",
    ),
]


@app.command()
def sensitivity(
    problem: Annotated[Path, typer.Argument(help="Problem YAML file")],
    catalog: CatalogOpt = None,
    solver: Annotated[str, typer.Option(help="highs | cbc")] = "highs",
    format: Annotated[str, typer.Option("--format", help="table | json")] = "table",
    break_even: BreakEvenOpt = 12,
    workers: WorkersOpt = 1,
    scheduler: SchedulerOpt = None,
    out: Annotated[Path | None, typer.Option(help="Write the output to this file")] = None,
    debug: DebugOpt = False,
) -> None:
    """What binds, what it is worth, and how far prices may move before the plan changes."""

    def body() -> None:
        from solver.report import sensitivity_text
        from solver.sensitivity import sensitivity_report

        if format not in {"table", "json"}:
            raise ProcureError(
                f"unknown format {format!r}", field="--format", fix="use table or json"
            )
        _, solution = _solve_for_analysis(problem, catalog, solver)
        with _Progress() as bar:
            report = sensitivity_report(
                solution,
                break_even_limit=None if break_even < 0 else break_even,
                solver=solver,
                workers=workers,
                scheduler=scheduler,
                progress=lambda done, total: bar("break-even prices", done, total),
            )
        if format == "json":
            text = json.dumps(report.model_dump(mode="json"), indent=2) + "\n"
        else:
            text = sensitivity_text(report)
        if out is not None:
            write_atomic(out, text)
            typer.echo(f"wrote {out}")
        else:
            sys.stdout.write(text)

    _run(debug, body)


@app.command()
def report(
    problem: Annotated[Path, typer.Argument(help="Problem YAML file")],
    out: Annotated[Path, typer.Option(help="Folder for report.html, report.xlsx, ...")],
    catalog: CatalogOpt = None,
    solver: Annotated[str, typer.Option(help="highs | cbc")] = "highs",
    break_even: BreakEvenOpt = 12,
    frontier_points: Annotated[int, typer.Option(help="Points on the CO2e frontier")] = 8,
    scenarios: Annotated[int, typer.Option(help="Price scenarios to draw")] = 20,
    spread: Annotated[float, typer.Option(help="Price scenario range, +/- fraction")] = 0.2,
    workers: WorkersOpt = 1,
    scheduler: SchedulerOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Write a self-contained HTML report and an XLSX workbook for finance."""

    def body() -> None:
        from solver.report import build_analysis, frontier_png, report_html, report_xlsx

        if frontier_points < 2 or scenarios < 1 or not 0 <= spread < 1:
            raise ProcureError(
                "need --frontier-points >= 2, --scenarios >= 1 and 0 <= --spread < 1",
                field="--frontier-points/--scenarios/--spread",
                fix="e.g. --frontier-points 8 --scenarios 20 --spread 0.2",
            )
        plan, solution = _solve_for_analysis(problem, catalog, solver)
        with _Progress() as bar:
            analysis = build_analysis(
                plan,
                solution,
                solver=solver,
                break_even_limit=None if break_even < 0 else break_even,
                frontier_points=frontier_points,
                scenarios=scenarios,
                spread=spread,
                workers=workers,
                scheduler=scheduler,
                progress=bar,
            )
        png = frontier_png(analysis)
        files = {
            "report.html": report_html(analysis, png),
            "report.xlsx": report_xlsx(analysis),
            "frontier.png": png,
            "analysis.json": json.dumps(analysis.model_dump(mode="json"), indent=2) + "\n",
        }
        for name, content in files.items():
            write_atomic(out / name, content)
        typer.echo(f"wrote {', '.join(str(out / n) for n in files)}")

    _run(debug, body)


# --------------------------------------------------------------------------- estimate


def _print_estimate(result: dict, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(result, indent=2, default=float))
        return

    def emit(prefix: str, value) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                emit(f"{prefix}{k}." if isinstance(v, dict) else f"{prefix}{k}", v)
        elif isinstance(value, float):
            typer.echo(f"  {prefix:<44} {value:,.4g}")
        else:
            typer.echo(f"  {prefix:<44} {value}")

    assumptions = result.pop("assumptions", [])
    for key, value in result.items():
        emit(f"{key}." if isinstance(value, dict) else key, value)
    typer.echo("assumptions:")
    for a in assumptions:
        typer.echo(f"  - {a}")


@estimate_app.command("training")
def estimate_training_cmd(
    tokens: Annotated[float, typer.Option(help="Training tokens, e.g. 1e12")],
    model: Annotated[str, typer.Option(help="Model preset")] = "dense-13b",
    params_b: Annotated[float | None, typer.Option(help="Or just a size, billions")] = None,
    optimizer: Annotated[str, typer.Option(help="adamw | sgd | lora | qlora")] = "adamw",
    precision: Annotated[str, typer.Option(help="bf16 | fp8")] = "bf16",
    seq_len: int = 4096,
    recompute: Annotated[str, typer.Option(help="none | selective | full")] = "selective",
    accelerator: Annotated[str | None, typer.Option(help="Accelerator name")] = None,
    offering: Annotated[str | None, typer.Option(help="Offering id (prices the run)")] = None,
    n_accelerators: Annotated[int | None, typer.Option(help="Cluster size")] = None,
    mfu: Annotated[float | None, typer.Option(help="MFU override")] = None,
    spot: bool = False,
    catalog: CatalogOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output")] = False,
    debug: DebugOpt = False,
) -> None:
    """Training memory per component, time and cost on an accelerator or offering."""

    def body() -> None:
        from solver.estimate import estimate_training

        if tokens <= 0:
            raise ProcureError(
                "tokens must be positive", field="--tokens", fix="e.g. --tokens 1e12"
            )
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
        )
        _print_estimate(result, as_json)

    _run(debug, body)


@estimate_app.command("inference")
def estimate_inference_cmd(
    model: Annotated[str, typer.Option(help="Model preset")] = "llama-3-8b",
    accelerator: Annotated[str | None, typer.Option(help="Accelerator name")] = None,
    offering: Annotated[str | None, typer.Option(help="Offering id (prices the tokens)")] = None,
    tp: Annotated[int, typer.Option("--tp", help="Accelerators per replica")] = 1,
    batch: Annotated[int | None, typer.Option(help="Batch (default: best within SLO)")] = None,
    prompt_tokens: int = 1000,
    output_tokens: int = 400,
    weight_precision: str = "bf16",
    kv_precision: str = "bf16",
    tpot_slo_ms: Annotated[float | None, typer.Option(help="Time per output token SLO, ms")] = None,
    ttft_slo_ms: Annotated[float | None, typer.Option(help="Time to first token SLO, ms")] = None,
    demand_tokens_per_s: Annotated[float | None, typer.Option(help="Output tokens/s")] = None,
    server: Annotated[str | None, typer.Option(help="Owned server id (owned $/1M tokens)")] = None,
    site: Annotated[str | None, typer.Option(help="Site id for the owned server")] = None,
    catalog: CatalogOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output")] = False,
    debug: DebugOpt = False,
) -> None:
    """Inference memory, latency, throughput, replicas and $/1M tokens (owned vs rented)."""

    def body() -> None:
        from solver.estimate import estimate_inference

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
        )
        _print_estimate(result, as_json)

    _run(debug, body)


# --------------------------------------------------------------------------- catalog


@catalog_app.command("validate")
def catalog_validate(catalog: CatalogOpt = None, debug: DebugOpt = False) -> None:
    """Validate every catalog file; print the counts."""

    def body() -> None:
        cat = _load_catalog(catalog)
        counts = ", ".join(f"{v} {k}" for k, v in cat.counts().items())
        typer.echo(f"catalog {cat.directory} is valid: {counts}")

    _run(debug, body)


@catalog_app.command("list")
def catalog_list(
    what: Annotated[
        str, typer.Argument(help="accelerators | offerings | regions | servers | sites | models")
    ] = "accelerators",
    provider: Annotated[str | None, typer.Option(help="Filter offerings by provider")] = None,
    catalog: CatalogOpt = None,
    debug: DebugOpt = False,
) -> None:
    """List a catalog table."""

    def body() -> None:
        cat = _load_catalog(catalog)
        tables = {
            "accelerators": (
                cat.accelerators,
                [
                    "accelerator_id",
                    "name",
                    "bf16_dense_tflops",
                    "memory_gb",
                    "mem_bandwidth_gbps",
                    "tdp_w",
                ],
            ),
            "offerings": (
                cat.offerings,
                [
                    "offering_id",
                    "accelerator_id",
                    "accelerators_per_instance",
                    "on_demand_usd_per_hour",
                    "spot_usd_per_hour",
                ],
            ),
            "regions": (
                cat.regions,
                ["provider", "region", "residency_zone", "grid_gco2_per_kwh", "pue"],
            ),
            "servers": (
                cat.servers,
                ["server_id", "accelerator_id", "accelerators_per_server", "capex_usd", "power_kw"],
            ),
            "sites": (
                cat.sites,
                ["site_id", "residency_zone", "grid_gco2_per_kwh", "power_cap_kw"],
            ),
            "models": (cat.models, ["model_id", "params_b", "layers", "kv_heads"]),
        }
        if what not in tables:
            raise ProcureError(
                f"unknown table {what!r}", field="WHAT", fix=f"use one of: {', '.join(tables)}"
            )
        frame, columns = tables[what]
        if provider and what == "offerings":
            frame = frame[frame["provider"] == provider]
        typer.echo(frame[columns].to_string(index=False))

    _run(debug, body)


@catalog_app.command("show")
def catalog_show(
    item_id: Annotated[
        str,
        typer.Argument(
            metavar="ID",
            help="Accelerator, offering, server, site or model id (names resolve forgivingly)",
        ),
    ],
    catalog: CatalogOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Show one catalog row with its source."""

    def body() -> None:
        cat = _load_catalog(catalog)
        for table in (cat.offerings, cat.servers, cat.sites, cat.models, cat.accelerators):
            if item_id in table.index:
                typer.echo(table.loc[item_id].to_string())
                return
        try:
            acc = cat.resolve_accelerator(item_id)
        except ProcureError:
            try:
                typer.echo(cat.models.loc[cat.resolve_model(item_id)].to_string())
                return
            except ProcureError:
                pass
            raise
        typer.echo(cat.accelerators.loc[acc].to_string())

    _run(debug, body)


@catalog_app.command("import")
def catalog_import(
    file: Annotated[Path, typer.Argument(help="A SkyPilot-format vms.csv")],
    provider: Annotated[str, typer.Option(help="Provider name for the rows (aws, gcp, ...)")],
    format: Annotated[str, typer.Option("--format", help="skypilot")] = "skypilot",
    out: Annotated[Path | None, typer.Option(help="Write offerings CSV here")] = None,
    price_date: Annotated[str, typer.Option(help="Date the prices were read")] = "unknown",
    debug: DebugOpt = False,
) -> None:
    """Read a SkyPilot vms.csv into offerings; report what could not be mapped."""

    def body() -> None:
        from solver.importers.skypilot import read_skypilot_vms

        if format != "skypilot":
            raise ProcureError(
                f"unknown import format {format!r}", field="--format", fix="use --format skypilot"
            )
        if not file.is_file():
            raise ProcureError("file not found", file=str(file), fix="check the path")
        result = read_skypilot_vms(
            file, provider, price_date=price_date, source=f"skypilot:{file.name}"
        )
        typer.echo(
            f"mapped {len(result.offerings)} offerings "
            f"({result.offerings['accelerator_id'].nunique() if len(result.offerings) else 0}"
            f" accelerator types) from {file}"
        )
        if result.unmapped:
            typer.echo(
                "could not map: "
                + ", ".join(f"{name} ({n} rows)" for name, n in sorted(result.unmapped.items()))
            )
        if result.skipped:
            typer.echo(
                "skipped: " + ", ".join(f"{why} ({n})" for why, n in sorted(result.skipped.items()))
            )
        if out is not None:
            write_atomic(out, result.offerings.to_csv(index=False, lineterminator="\n"))
            typer.echo(f"wrote {out}")

    _run(debug, body)


@app.command()
def schema() -> None:
    """Print the JSON Schema of problem files."""
    from solver.problem import Problem

    typer.echo(json.dumps(Problem.model_json_schema(), indent=2))


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
