"""The command line: ``procure solve | sensitivity | report | estimate | catalog | schema``,
``procure resolve | diff | export`` (re-solving after a price change, orders, FOCUS).

The only place that reads arguments, prints and writes files. Every user error
becomes one message naming the file, the field and the fix, and exit code 2;
``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import io
import json
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from solver.errors import ProcureError
from solver.outputs.files import (
    check_output_dir,
    check_output_file,
    csv_text,
    write_atomic,
    write_files_together,
    write_paths_together,
)

app = typer.Typer(
    add_completion=True,
    no_args_is_help=True,
    help="Optimisation-based procurement of AI accelerators.",
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"procure {version('procure')}")
        except PackageNotFoundError:  # run from a source tree without installing
            from solver import __version__

            typer.echo(f"procure {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version"),
    ] = False,
) -> None:
    """Optimisation-based procurement of AI accelerators."""


catalog_app = typer.Typer(no_args_is_help=True, help="Inspect, validate and import catalogs.")
estimate_app = typer.Typer(no_args_is_help=True, help="Back-of-envelope physics with assumptions.")
app.add_typer(catalog_app, name="catalog")
app.add_typer(estimate_app, name="estimate")

EXIT_USER_ERROR = 2
EXIT_INFEASIBLE = 3
EXIT_NO_PLAN = 4
EXIT_BUG = 70  # EX_SOFTWARE (sysexits.h): an internal error, a bug in procure
EXIT_INTERRUPTED = 130

CatalogOpt = Annotated[
    Path | None, typer.Option("--catalog", help="Catalog folder (default: the shipped catalogs/)")
]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show tracebacks")]
ForceOpt = Annotated[
    bool,
    typer.Option(
        "--force",
        help="Replace a symbolic link at an output path (the link, never what it points to)",
    ),
]


def _run(debug: bool, body: Callable[[], None]) -> None:
    """Run a command body; turn user errors into one message and a non-zero exit."""
    from solver.errors import InfeasibleError, NoPlanError
    from solver.solve import VerificationError

    try:
        body()
    except ProcureError as exc:
        if debug:
            raise
        if isinstance(exc, VerificationError):
            typer.echo(f"internal error (a bug in procure): {exc.render()}", err=True)
            raise typer.Exit(EXIT_BUG) from None
        typer.echo(f"error: {exc.render()}", err=True)
        code = (
            EXIT_INFEASIBLE
            if isinstance(exc, InfeasibleError)
            else EXIT_NO_PLAN
            if isinstance(exc, NoPlanError)
            else EXIT_USER_ERROR
        )
        raise typer.Exit(code) from None
    except OSError as exc:
        if debug:
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        typer.echo(f"error: {where}{exc.strerror or exc}", err=True)
        raise typer.Exit(EXIT_USER_ERROR) from None
    except typer.Exit:
        raise
    except Exception as exc:  # anything else is a bug: say so, never a bare traceback
        if debug:
            raise
        typer.echo(
            f"internal error (a bug in procure): {type(exc).__name__}: {exc}\n"
            "  fix: report it with the command and its input files; --debug shows where",
            err=True,
        )
        raise typer.Exit(EXIT_BUG) from None
    except KeyboardInterrupt:
        if debug:
            raise
        typer.echo(
            "interrupted: no output was written (files are replaced whole or not at all)", err=True
        )
        raise typer.Exit(EXIT_INTERRUPTED) from None


def _check_format(format: str, *allowed: str) -> None:
    """Refuse a --format value the command does not write."""
    if format not in allowed:
        choices = ", ".join(allowed[:-1]) + " or " + allowed[-1]
        raise ProcureError(f"unknown format {format!r}", field="--format", fix=f"use {choices}")


def _check_choice(value: str, option: str, *allowed: str) -> None:
    """Refuse a value of a fixed-value option that the command does not know."""
    if value not in allowed:
        choices = ", ".join(allowed[:-1]) + " or " + allowed[-1]
        raise ProcureError(f"unknown {option} {value!r}", field=option, fix=f"use {choices}")


def _choices(*values: str) -> dict:
    """typer.Option arguments for an option with fixed values: listed in --help and
    completed by the shell. The command refuses any other value itself, with an
    ``error:``/``fix:`` message (exit 2)."""
    return {
        "metavar": "[" + "|".join(values) + "]",
        "autocompletion": lambda incomplete: [v for v in values if v.startswith(incomplete)],
    }


def _load_catalog(directory: Path | None):
    from solver.inputs.catalog import load_catalog

    return load_catalog(directory)


# --------------------------------------------------------------------------- solve


def cash_flow_table(plan) -> Table:
    """The plan's cash flow by calendar quarter (the JSON has it by month)."""
    quarters: dict[str, list] = {}
    for m in plan.cash_flow:
        year, month = m.month.split("-")
        quarters.setdefault(f"{year}-Q{(int(month) - 1) // 3 + 1}", []).append(m)
    table = Table(
        title=f"cash flow by quarter from {plan.start_date} (USD)",
        title_justify="left",
        show_lines=False,
    )
    for column in ("quarter", "rented", "owned opex", "commitments", "capex", "total"):
        table.add_column(column, justify="left" if column == "quarter" else "right")
    table.add_column("cumulative", justify="right")
    budgeted = plan.cash_flow[0].budget_headroom_usd is not None
    if budgeted:
        table.add_column("budget headroom", justify="right")
    for name, months in quarters.items():
        sums = [
            sum(getattr(m, f) for m in months)
            for f in ("rented_usd", "owned_opex_usd", "commitments_usd", "capex_usd", "total_usd")
        ]
        cells = [name, *(f"{v:,.0f}" for v in sums), f"{months[-1].cumulative_usd:,.0f}"]
        if budgeted:
            cells.append(f"{months[-1].budget_headroom_usd:,.0f}")
        table.add_row(*cells)
    return table


def _period_table(plan, period: str, rows: list) -> Table:
    """One period's line items, grouped by provider."""
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
        ("tok/s (source)", "right"),
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
            f"{i.capacity_tokens_per_s:,.0f} ({i.capacity_source})" if i.capacity_source else "",
            i.workload,
            i.block,
            f"{i.hours:,.0f}",
            f"{i.cost_usd:,.0f}",
            f"{i.co2e_t:,.2f}",
        )
        last_provider = i.provider
    return table


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
    if plan.cash_flow:
        console.print(cash_flow_table(plan))
    for period in plan.totals.by_period:
        rows = [i for i in plan.line_items if i.period == period]
        if rows:
            console.print(_period_table(plan, period, rows))
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
    past = [i for i in plan.line_items if i.item == "reservation" and i.months_after_horizon > 0]
    if past:
        console.print(
            "commitments running past the horizon: "
            + "; ".join(
                f"{i.units:g} x {i.offering} {i.mode} from {i.start_period}, term ends month "
                f"{i.term_end_month:g}: {i.months_after_horizon:g} months and "
                f"${i.liability_after_horizon_usd:,.0f} still owed after the horizon"
                for i in past
            )
            + f" (total ${sum(i.liability_after_horizon_usd for i in past):,.0f})"
        )
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
    for workload, fit in rep.get("calibration", {}).items():
        console.print(
            f"capacity: {workload}: cards without a profile are physics x {fit['factor']:.3f} "
            f"(calibrated: geometric mean of measured / physics over {fit['points']} points on "
            f"{', '.join(fit['measured_on'])}; worst point off by "
            f"x{math.exp(fit['spread_log_ratio']):.2f})"
        )
    curve = rep.get("load_curve") or {}
    if curve.get("blocks"):
        blocks = ", ".join(f"{b['name']} {b['hours_per_day']:g} h" for b in curve["blocks"])
        factors = "; ".join(
            f"{w} " + "/".join(f"{x:.2f}" for x in f) for w, f in curve["factors"].items()
        )
        console.print(
            f"load curve: blocks {blocks} ({curve['source']}); demand factors, x the daily "
            f"average (profiles normalised to mean 1): {factors}"
        )
    console.print(
        f"options: {rep.get('options_generated', 0)} generated, {rep.get('options_kept', 0)} "
        f"kept from {rep.get('pools', 0)} pools; verifier: "
        f"{sum(c.ok for c in plan.checks)}/{len(plan.checks)} checks passed"
    )
    return buffer.getvalue()


def plan_csv(plan) -> str:
    import pandas as pd

    return csv_text(pd.DataFrame([i.model_dump() for i in plan.line_items]))


def plan_json(plan) -> str:
    return json.dumps(plan.model_dump(mode="json"), indent=2, sort_keys=False) + "\n"


@app.command()
def solve(
    problem: Annotated[Path, typer.Argument(help="Problem YAML file")],
    catalog: CatalogOpt = None,
    solver: Annotated[
        str,
        typer.Option(
            help="MIP solver",
            **_choices("highs", "cbc", "highspy", "scip", "cpsat"),
        ),
    ] = "highs",
    time_limit: Annotated[float | None, typer.Option("--time-limit", help="Seconds")] = None,
    gap: Annotated[float, typer.Option(help="Relative MIP gap to prove")] = 1e-4,
    format: Annotated[
        str,
        typer.Option("--format", help="Output format", **_choices("table", "json", "csv")),
    ] = "table",
    out: Annotated[Path | None, typer.Option(help="Write the output to this file")] = None,
    force: ForceOpt = False,
    reproducible: Annotated[
        bool,
        typer.Option(
            "--reproducible",
            help="Report solve_seconds and compile_seconds as 0 so that the same inputs "
            "give byte-identical output",
        ),
    ] = False,
    stochastic: Annotated[
        bool,
        typer.Option(
            "--stochastic",
            help="Two-stage plan over the problem's uncertainty: scenarios (the default "
            "when the problem has one)",
        ),
    ] = False,
    stochastic_method: Annotated[
        str,
        typer.Option(
            "--stochastic-method",
            help="Two-stage: one extensive model (proven optimal), a scenario "
            "decomposition with a bound, or the L-shaped method (benders: LP cuts, a bound "
            "and a gap) (auto: extensive up to 10 scenarios)",
            **_choices("auto", "extensive", "decomposition", "benders"),
        ),
    ] = "auto",
    workers: Annotated[
        int, typer.Option(help="Local processes for the decomposition's scenario solves")
    ] = 1,
    scheduler: Annotated[
        str | None, typer.Option(help="Dask scheduler (tcp://host:8786) for the decomposition")
    ] = None,
    method: Annotated[
        str,
        typer.Option(
            "--method",
            help="full: every option in one MIP; root: the full LP with MIR cuts, a plan "
            "from its support, then reduced-cost fixing (highs, highspy); columns: column "
            "generation, a restricted MIP and its gap against the full LP with MIR cuts "
            "(highs, highspy); auto: root from 2,000 priced columns, columns from 400,000",
            **_choices("auto", "full", "root", "columns"),
        ),
    ] = "auto",
    debug: DebugOpt = False,
) -> None:
    """Solve a problem to proven optimality, verify the plan, and show it."""

    def body() -> None:
        from solver.core.backends import SolveOptions
        from solver.inputs.problem import load_problem
        from solver.solve import solve_problem

        _check_format(format, "table", "json", "csv")
        _check_choice(method, "--method", "auto", "full", "root", "columns")
        if out is not None:
            check_output_file(out, force=force)
        _check_gap_and_limit(gap, time_limit)
        prob = load_problem(problem)
        cat = _load_catalog(catalog)
        if stochastic or prob.uncertainty is not None:
            two_stage = (stochastic_method, workers, scheduler)
            text = _stochastic_text(prob, cat, problem, solver, time_limit, gap, format, two_stage)
            _write_or_print(text, out, force)
            return
        try:
            plan = solve_problem(
                prob,
                cat,
                solver=solver,
                options=SolveOptions(time_limit_s=time_limit, relative_gap=gap),
                method=method,
            )
        except ProcureError as exc:
            if exc.file is None:
                exc.file = str(problem)
                exc.args = (exc.render(),)
            raise
        plan = _with_paths(plan, problem, catalog)
        if reproducible:
            plan = plan.model_copy(update={"solve_seconds": 0.0, "compile_seconds": 0.0})
        text = {"table": plan_table, "json": plan_json, "csv": plan_csv}[format](plan)
        _write_or_print(text, out, force)

    _run(debug, body)


def _solve_for_analysis(
    problem: Path, catalog: Path | None, solver: str, time_limit: float | None = None
):
    """Load, solve and verify: the plan and the solution behind it."""
    from solver.core.backends import SolveOptions
    from solver.inputs.problem import load_problem
    from solver.solve import solve_verified

    prob = load_problem(problem)
    cat = _load_catalog(catalog)
    try:
        return solve_verified(
            prob,
            cat,
            solver=solver,
            prune_dominated=False,
            options=SolveOptions(time_limit_s=time_limit),
        )
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


def _break_even_limit(n: int) -> int | None:
    """--break-even: N >= 0 pools beyond the plan's, or -1 for all (None)."""
    if n < -1:
        raise ProcureError(
            f"--break-even is {n}", field="--break-even", fix="give 0 or more, or -1 for all"
        )
    return None if n == -1 else n


@app.command()
def sensitivity(
    problem: Annotated[Path, typer.Argument(help="Problem YAML file")],
    catalog: CatalogOpt = None,
    solver: Annotated[
        str,
        typer.Option(help="MIP solver", **_choices("highspy", "highs", "cbc", "scip")),
    ] = "highspy",
    format: Annotated[
        str,
        typer.Option("--format", help="Output format", **_choices("table", "json")),
    ] = "table",
    break_even: BreakEvenOpt = 12,
    workers: WorkersOpt = 1,
    scheduler: SchedulerOpt = None,
    time_limit: Annotated[
        float | None,
        typer.Option(
            "--time-limit",
            help="Seconds for the whole analysis: the solve gets them first, the break-even "
            "search what is left (pools not reached are left out, and the output says so)",
        ),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Write the output to this file")] = None,
    force: ForceOpt = False,
    debug: DebugOpt = False,
) -> None:
    """What binds, what it is worth, and how far prices may move before the plan changes."""

    def body() -> None:
        from solver.analyses.sensitivity import sensitivity_report
        from solver.outputs.report import sensitivity_text

        _check_format(format, "table", "json")
        if out is not None:
            check_output_file(out, force=force)
        if time_limit is not None and not (math.isfinite(time_limit) and time_limit > 0):
            raise ProcureError(
                f"--time-limit is {time_limit}", field="--time-limit", fix="e.g. --time-limit 60"
            )
        started = time.perf_counter()
        _, solution = _solve_for_analysis(problem, catalog, solver, time_limit)
        with _Progress() as bar:
            report = sensitivity_report(
                solution,
                deadline=None if time_limit is None else started + time_limit,
                break_even_limit=_break_even_limit(break_even),
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
            check_output_file(out, force=force)
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
    solver: Annotated[
        str,
        typer.Option(help="MIP solver", **_choices("highspy", "highs", "cbc", "scip")),
    ] = "highspy",
    break_even: BreakEvenOpt = 12,
    frontier_points: Annotated[int, typer.Option(help="Points on the CO2e frontier")] = 8,
    scenarios: Annotated[int, typer.Option(help="Price scenarios to draw")] = 20,
    spread: Annotated[float, typer.Option(help="Price scenario range, +/- fraction")] = 0.2,
    workers: WorkersOpt = 1,
    scheduler: SchedulerOpt = None,
    stochastic_method: Annotated[
        str,
        typer.Option(
            "--stochastic-method",
            help="Problems with uncertainty: how the two-stage section is solved (as solve)",
            **_choices("auto", "extensive", "decomposition", "benders"),
        ),
    ] = "auto",
    force: ForceOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Write a self-contained HTML report and an XLSX workbook for finance (with a
    two-stage section when the problem has ``uncertainty:``)."""

    def body() -> None:
        from solver.inputs.problem import load_problem
        from solver.outputs.report import (
            analysis_json,
            build_analysis,
            frontier_png,
            report_html,
            report_xlsx,
        )

        names = ["report.html", "report.xlsx", "frontier.png", "analysis.json"]
        check_output_dir(out, names, force=force)
        if frontier_points < 2 or scenarios < 1 or not 0 <= spread < 1:
            raise ProcureError(
                "need --frontier-points >= 2, --scenarios >= 1 and 0 <= --spread < 1",
                field="--frontier-points/--scenarios/--spread",
                fix="e.g. --frontier-points 8 --scenarios 20 --spread 0.2",
            )
        plan, solution = _solve_for_analysis(problem, catalog, solver)
        prob = load_problem(problem)
        two_stage = None
        if prob.uncertainty is not None:
            method = (stochastic_method, workers, scheduler)
            two_stage = _two_stage(
                prob, _load_catalog(catalog), problem, solver, None, 1e-4, method
            )
        with _Progress() as bar:
            analysis = build_analysis(
                plan,
                solution,
                solver=solver,
                break_even_limit=_break_even_limit(break_even),
                frontier_points=frontier_points,
                scenarios=scenarios,
                spread=spread,
                workers=workers,
                scheduler=scheduler,
                progress=bar,
                two_stage=two_stage,
            )
        png = frontier_png(analysis)
        files = {
            "report.html": report_html(analysis, png),
            "report.xlsx": report_xlsx(analysis),
            "frontier.png": png,
            "analysis.json": analysis_json(analysis),
        }
        check_output_dir(out, names, force=force)
        write_files_together(out, files)
        typer.echo(f"wrote {', '.join(str(out / n) for n in files)}")

    _run(debug, body)


# --------------------------------------------------------------------------- estimate


def _positive(option: str, value: float | None, fix: str, at_most: float = 1e15) -> None:
    """Refuse an option that is given but is not a finite number in (0, at_most]."""
    if value is not None and not (math.isfinite(value) and 0 < value <= at_most):
        limit = f" and at most {at_most:g}" if at_most < 1e15 else ""
        raise ProcureError(
            f"{option} is {value}; it must be a finite number above 0{limit}",
            field=option,
            fix=fix,
        )


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
    optimizer: Annotated[
        str,
        typer.Option(help="Optimizer", **_choices("adamw", "sgd", "lora", "qlora")),
    ] = "adamw",
    precision: Annotated[
        str, typer.Option(help="Training precision", **_choices("bf16", "fp16", "fp8"))
    ] = "bf16",
    seq_len: int = 4096,
    recompute: Annotated[
        str,
        typer.Option(
            help="Activation recomputation",
            **_choices("none", "selective", "full"),
        ),
    ] = "selective",
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
        from solver.analyses.estimate import estimate_training

        _positive("--tokens", tokens, "e.g. --tokens 1e12")
        _positive("--params-b", params_b, "e.g. --params-b 13")
        _positive("--seq-len", seq_len, "e.g. --seq-len 4096")
        _positive("--n-accelerators", n_accelerators, "e.g. --n-accelerators 64")
        _positive("--mfu", mfu, "a fraction, e.g. --mfu 0.4", at_most=1.0)
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
    runtime: Annotated[
        str | None,
        typer.Option(
            help="Serving runtime: vllm-cuda, tensorrt-llm, vllm-rocm, neuron, gaudi, tpu "
            "(default: the vendor's)"
        ),
    ] = None,
    catalog: CatalogOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output")] = False,
    debug: DebugOpt = False,
) -> None:
    """Inference memory, latency, throughput, replicas and $/1M tokens (owned vs rented)."""

    def body() -> None:
        from solver.analyses.estimate import estimate_inference
        from solver.physics.constants import RUNTIME_EFFICIENCY

        _positive("--tp", tp, "accelerators per replica, e.g. --tp 2")
        _positive("--batch", batch, "e.g. --batch 32")
        _positive("--prompt-tokens", prompt_tokens, "e.g. --prompt-tokens 1000")
        _positive("--output-tokens", output_tokens, "e.g. --output-tokens 400")
        _positive("--tpot-slo-ms", tpot_slo_ms, "e.g. --tpot-slo-ms 50")
        _positive("--ttft-slo-ms", ttft_slo_ms, "e.g. --ttft-slo-ms 1000")
        _positive("--demand-tokens-per-s", demand_tokens_per_s, "e.g. --demand-tokens-per-s 5000")
        if runtime is not None and runtime not in RUNTIME_EFFICIENCY:
            raise ProcureError(
                f"unknown runtime {runtime!r}",
                field="--runtime",
                fix=f"use one of {', '.join(sorted(RUNTIME_EFFICIENCY))}",
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
        str,
        typer.Argument(
            help="Catalog table",
            **_choices("accelerators", "offerings", "regions", "servers", "sites", "models"),
        ),
    ] = "accelerators",
    provider: Annotated[str | None, typer.Option(help="Filter offerings by provider")] = None,
    accelerator: Annotated[
        str | None, typer.Option(help="Offerings of one accelerator (name or id: H100, l4)")
    ] = None,
    region: Annotated[
        str | None,
        typer.Option(help="Offerings in regions starting with this (us-east) or in a zone (EU)"),
    ] = None,
    mode: Annotated[
        str | None,
        typer.Option(
            help="Offerings sold in this mode",
            **_choices("on_demand", "spot", "reserved_1y", "reserved_3y"),
        ),
    ] = None,
    sort: Annotated[
        str | None,
        typer.Option(
            help="Sort offerings: price ($/GPU-hour), provider or region",
            **_choices("price", "provider", "region"),
        ),
    ] = None,
    catalog: CatalogOpt = None,
    debug: DebugOpt = False,
) -> None:
    """List a catalog table (offerings: filtered and sorted, with $ per GPU-hour)."""

    def body() -> None:
        cat = _load_catalog(catalog)
        tables = {
            "accelerators": (
                cat.accelerators,
                [
                    "accelerator_id",
                    "name",
                    "bf16_dense_tflops",
                    "memory_label_gb",
                    "memory_unit",
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
        if what == "offerings":
            from solver.inputs.catalog import offerings_view

            frame, columns = offerings_view(
                cat, provider=provider, accelerator=accelerator, region=region, mode=mode, sort=sort
            )
        if frame.empty:
            typer.echo("no rows match")
            return
        typer.echo(frame[columns].to_string(index=False))

    _run(debug, body)


@catalog_app.command("summary")
def catalog_summary(catalog: CatalogOpt = None, debug: DebugOpt = False) -> None:
    """Cheapest $ per GPU-hour per accelerator and mode, with the provider (like
    ``sky show-gpus``)."""

    def body() -> None:
        from solver.inputs.catalog import accelerator_summary

        frame = accelerator_summary(_load_catalog(catalog))
        typer.echo(frame.to_string(index=False))

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
    provider: Annotated[
        str | None,
        typer.Option(help="Provider name for the rows (aws, gcp, ...); default: the file's folder"),
    ] = None,
    format: Annotated[str, typer.Option("--format", help="skypilot")] = "skypilot",
    out: Annotated[Path | None, typer.Option(help="Write offerings CSV here")] = None,
    price_date: Annotated[str, typer.Option(help="Date the prices were read")] = "unknown",
    force: ForceOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Read a SkyPilot vms.csv into offerings; report what could not be mapped."""

    def body() -> None:
        from solver.inputs.importers.skypilot import read_skypilot_vms

        if format != "skypilot":
            raise ProcureError(
                f"unknown import format {format!r}", field="--format", fix="use --format skypilot"
            )
        if not file.is_file():
            raise ProcureError("file not found", file=str(file), fix="check the path")
        name = provider or file.resolve().parent.name.lower()  # SkyPilot: <cloud>/vms.csv
        known = _load_catalog(None).providers
        if provider is None and (known is None or name not in known.index):
            raise ProcureError(
                f"which cloud is this SkyPilot file for? its folder {name!r} is not a provider",
                file=str(file),
                field="--provider",
                fix="pass --provider NAME (aws, gcp, azure, lambda, ...)",
            )
        result = read_skypilot_vms(
            file,
            name,
            price_date=price_date,
            source=f"skypilot:{file.name}",
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
            check_output_file(out, force=force)
            write_atomic(out, csv_text(result.offerings))
            typer.echo(f"wrote {out}")

    _run(debug, body)


@app.command()
def schema() -> None:
    """Print the JSON Schema of problem files."""
    from solver.inputs.problem import Problem

    typer.echo(json.dumps(Problem.model_json_schema(), indent=2))


# --------------------------------------------------------------------------- resolve, diff, export



def _as_of_period(as_of: str | None, problem, start_date: str | None) -> str | None:
    """--as-of as a period name: a name is kept; a date (YYYY-MM or YYYY-MM-DD) names the
    period its month falls in, counting calendar months from the plan's start_date."""
    import re
    from datetime import date

    names = [p.name for p in problem.resolved_periods]
    if as_of is None or as_of in names:
        return as_of
    match = re.fullmatch(r"(\d{4})-(\d{2})(?:-(\d{2}))?", as_of.strip())
    if match is None:
        return as_of  # not a date: rebase names the periods there are
    start = problem.start or (date.fromisoformat(start_date) if start_date else None)
    if start is None:
        raise ProcureError(
            "--as-of is a date but the plan has no start date",
            field="--as-of",
            fix=f"give a period name ({', '.join(names)}) or add start: YYYY-MM to the problem",
        )
    month = (int(match[1]) - start.year) * 12 + int(match[2]) - start.month
    running = 0.0
    for p in problem.resolved_periods:
        if running <= month < running + p.months:
            return p.name
        running += p.months
    raise ProcureError(
        f"{as_of} is outside the plan ({start:%Y-%m} for {running:g} months)",
        field="--as-of",
        fix="give a month inside the plan, or a period name",
    )


def _with_paths(plan, problem_file: Path | None, catalog, prices: list[dict] | None = None):
    """The plan with the files it was solved from recorded beside its digests."""
    inputs = plan.inputs.model_copy(
        update={
            "problem_file": None if problem_file is None else str(Path(problem_file).resolve()),
            "catalog_dir": None if catalog is None else str(Path(catalog).resolve()),
            "prices": prices or [],
        }
    )
    return plan.model_copy(update={"inputs": inputs})


def _blame(exc: ProcureError, by_field: dict[str, Path], default: Path) -> None:
    """Name the file a located error belongs to (by its field), else ``default``."""
    if exc.file is None:
        field = exc.field or ""
        exc.file = str(next((p for k, p in by_field.items() if field.startswith(k)), default))
        exc.args = (exc.render(),)


PricesFormatOpt = Annotated[
    str,
    typer.Option(
        "--prices-format",
        help="Prices file format",
        **_choices("auto", "csv", "catalog", "skypilot"),
    ),
]
ProviderOpt = Annotated[
    str | None, typer.Option(help="Cloud of a SkyPilot vms.csv (default: its folder name)")
]
PriceDateOpt = Annotated[
    str | None, typer.Option("--price-date", help="Date the prices were read, if the file has none")
]
MaxFactorOpt = Annotated[
    float,
    typer.Option(
        "--max-factor", help="Prices moving by more than this factor are reported, not taken"
    ),
]
AcceptOpt = Annotated[
    bool,
    typer.Option("--accept-suspicious", help="Take prices that move by more than --max-factor"),
]


@app.command("resolve")
def resolve_cmd(
    problem: Annotated[Path, typer.Argument(help="Problem YAML the baseline was solved from")],
    baseline: Annotated[
        Path, typer.Option("--baseline", help="The plan being executed (solve --format json)")
    ],
    prices: Annotated[
        Path,
        typer.Option(
            "--prices", help="Price CSV, catalog folder or offerings.csv, or SkyPilot vms.csv"
        ),
    ],
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of",
            help="First period still open (a period name, or a date YYYY-MM[-DD] in it): "
            "purchases and reservations before it stay",
        ),
    ] = None,
    max_changes: Annotated[
        int | None,
        typer.Option("--max-changes", help="At most N line items may differ from the baseline"),
    ] = None,
    switching_cost_usd: Annotated[
        float | None,
        typer.Option("--switching-cost-usd", help="USD per unit that differs from the baseline"),
    ] = None,
    catalog: CatalogOpt = None,
    prices_format: PricesFormatOpt = "auto",
    provider: ProviderOpt = None,
    price_date: PriceDateOpt = None,
    max_factor: MaxFactorOpt = 2.0,
    accept_suspicious: AcceptOpt = False,
    add_new: Annotated[
        bool, typer.Option("--add-new", help="Add offerings the catalog lacks (catalog, SkyPilot)")
    ] = False,
    solver: Annotated[
        str,
        typer.Option(help="MIP solver", **_choices("highs", "cbc", "highspy", "scip")),
    ] = "highs",
    time_limit: Annotated[float | None, typer.Option("--time-limit", help="Seconds")] = None,
    gap: Annotated[float, typer.Option(help="Relative MIP gap to prove")] = 1e-4,
    format: Annotated[
        str,
        typer.Option("--format", help="Output format", **_choices("table", "json")),
    ] = "table",
    out: Annotated[Path | None, typer.Option(help="Write the output to this file")] = None,
    force: ForceOpt = False,
    plan_out: Annotated[
        Path | None,
        typer.Option("--plan-out", help="The new plan as solve --format json writes it"),
    ] = None,
    problem_out: Annotated[
        Path | None,
        typer.Option("--problem-out", help="The re-based problem YAML (for the next re-solve)"),
    ] = None,
    debug: DebugOpt = False,
) -> None:
    """Prices changed: re-solve from where we stand, and say what changed and why."""

    def body() -> None:
        from solver.analyses.resolve import resolve
        from solver.core.backends import SolveOptions
        from solver.trust.planfile import apply_price_file, load_plan

        _check_format(format, "table", "json")
        _check_gap_and_limit(gap, time_limit)
        _check_distinct_outputs([plan_out, problem_out, out], force)
        base, prob, old_cat = load_plan(baseline, problem=problem, catalog=catalog)
        try:
            repriced = apply_price_file(
                old_cat,
                prices,
                prices_format,
                provider,
                price_date,
                max_factor,
                accept_suspicious,
                add_new,
            )
        except ProcureError as exc:
            _blame(exc, {}, prices)
            raise
        try:
            result = resolve(
                prob,
                base,
                old_cat,
                repriced.catalog,
                as_of=_as_of_period(as_of, prob, base.start_date),
                max_changes=max_changes,
                switching_cost_usd=switching_cost_usd,
                solver=solver,
                options=SolveOptions(time_limit_s=time_limit, relative_gap=gap),
            )
        except ProcureError as exc:
            _blame(exc, {"--baseline": baseline}, problem)
            raise
        applied = {
            "prices": str(prices.resolve()),
            "fmt": prices_format,
            "provider": provider,
            "price_date": price_date,
            "max_factor": max_factor,
            "accept": accept_suspicious,
            "add_new": add_new,
        }
        result = _with_price_trail(result, base, catalog, problem_out, applied)
        text = _resolution_text(repriced, result, format)
        _write_resolution(text, result, out, plan_out, problem_out, force)

    _run(debug, body)


def _stochastic_text(
    prob, cat, path: Path, solver: str, time_limit, gap, format: str, method: tuple
) -> str:
    """The two-stage plan of a problem with ``uncertainty:`` as a table or JSON."""
    from solver.analyses.stochastic import stochastic_table

    if format == "csv":
        raise ProcureError(
            "a two-stage plan has no single line-item table",
            field="--format",
            fix="use --format table or --format json",
        )
    sp = _two_stage(prob, cat, path, solver, time_limit, gap, method)
    if format == "json":
        return json.dumps(sp.model_dump(mode="json"), indent=2) + "\n"
    return stochastic_table(sp)


def _two_stage(prob, cat, path: Path, solver: str, time_limit, gap, method: tuple):
    """Solve the two-stage plan; errors name the problem file."""
    from solver.analyses.stochastic import solve_stochastic
    from solver.core.backends import SolveOptions

    name, workers, scheduler = method
    if workers < 1:
        raise ProcureError("--workers must be 1 or more", field="--workers", fix="e.g. 2")
    try:
        return solve_stochastic(
            prob,
            cat,
            solver=solver,
            options=SolveOptions(time_limit_s=time_limit, relative_gap=gap),
            method=name,
            workers=workers,
            scheduler=scheduler,
        )
    except ProcureError as exc:
        if exc.file is None:
            exc.file = str(path)
            exc.args = (exc.render(),)
        raise


def _write_or_print(text: str, out: Path | None, force: bool) -> None:
    if out is not None:
        check_output_file(out, force=force)
        write_atomic(out, text)
        typer.echo(f"wrote {out}")
    else:
        sys.stdout.write(text)


def _check_gap_and_limit(gap: float, time_limit: float | None) -> None:
    if gap < 0 or (time_limit is not None and time_limit <= 0):
        raise ProcureError(
            "gap must be >= 0 and time limit > 0",
            field="--gap/--time-limit",
            fix="e.g. --gap 0.001 --time-limit 60",
        )


def _check_distinct_outputs(paths: list[Path | None], force: bool) -> None:
    """Refuse two outputs naming one file, and outputs that may not be written."""
    named = [p for p in paths if p is not None]
    if len({p.resolve() for p in named}) < len(named):
        raise ProcureError(
            "two outputs name the same file: one would overwrite the other",
            field="--out/--plan-out/--problem-out",
            fix="give each output its own file",
        )
    for path in named:
        check_output_file(path, force=force)


def _write_resolution(text: str, result, out, plan_out, problem_out, force: bool) -> None:
    """Write the re-solve's text (or print it), its plan and its re-based problem."""
    import yaml

    outputs: dict[Path, str] = {}
    if plan_out is not None:
        outputs[plan_out] = plan_json(result.plan)
    if problem_out is not None:
        data = result.rebased.problem.model_dump(mode="json", exclude_defaults=True)
        outputs[problem_out] = yaml.safe_dump(data, sort_keys=False)
    if out is not None:
        outputs[out] = text
    for path in outputs:
        check_output_file(path, force=force)
    write_paths_together(outputs)
    if out is not None:
        typer.echo(f"wrote {out}")
    else:
        sys.stdout.write(text)
    for path in (plan_out, problem_out):
        if path is not None:
            typer.echo(f"wrote {path}", err=out is None)


def _with_price_trail(result, base, catalog: Path | None, problem_out: Path | None, applied):
    """The re-solve with its plan's inputs: the problem written, the catalog, and every
    price file applied to it in order (the baseline's, then this one)."""
    from dataclasses import replace

    from solver.trust.planfile import recorded_catalog

    trail = [*(base.inputs.prices if recorded_catalog(catalog, base.inputs) else []), applied]
    catalog_dir = catalog if catalog is not None else base.inputs.catalog_dir
    return replace(result, plan=_with_paths(result.plan, problem_out, catalog_dir, trail))


def _resolution_text(repriced, result, format: str) -> str:
    """What ``resolve`` prints: the price update, what was carried, the plan and the diff
    (a table, or one JSON document)."""
    if format == "json":
        doc = {
            "price_update": repriced.report.as_dict(),
            "carried": {
                "as_of": result.rebased.as_of,
                "servers": [s.model_dump() for s in result.rebased.carried_servers],
                "reservations": [r.model_dump() for r in result.rebased.carried_reservations],
                "dropped_workloads": result.rebased.dropped_workloads,
                "spent_before_usd": result.rebased.spent_before_usd,
                "co2e_before_t": result.rebased.co2e_before_t,
                "notes": result.rebased.notes,
            },
            "plan": result.plan.model_dump(mode="json"),
            "diff": result.diff.model_dump(mode="json"),
        }
        text = json.dumps(doc, indent=2) + "\n"
    else:
        text = "\n".join(
            [
                repriced.report.summary(),
                result.rebased.summary(),
                plan_table(result.plan),
                result.diff.text(),
            ]
        )
    return text


@app.command("diff")
def diff_cmd(
    old: Annotated[Path, typer.Argument(help="The old plan (solve --format json)")],
    new: Annotated[Path, typer.Argument(help="The new plan")],
    prices: Annotated[
        Path | None,
        typer.Option("--prices", help="New prices (applied over --catalog) for the price effect"),
    ] = None,
    catalog: Annotated[
        Path | None,
        typer.Option("--catalog", help="Catalog the new prices apply over (default: shipped)"),
    ] = None,
    prices_format: PricesFormatOpt = "auto",
    provider: ProviderOpt = None,
    price_date: PriceDateOpt = None,
    max_factor: MaxFactorOpt = 2.0,
    accept_suspicious: AcceptOpt = False,
    format: Annotated[
        str,
        typer.Option(
            "--format",
            help="Output format",
            **_choices("table", "json", "markdown"),
        ),
    ] = "table",
    out: Annotated[Path | None, typer.Option(help="Write the output to this file")] = None,
    force: ForceOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Line items added, removed and changed; the cost change split into price and plan effect.

    The price effect re-prices the old plan: at the new plan's own unit prices,
    and with --prices (or --catalog) at that catalog's prices for the rest.
    """

    def body() -> None:
        from solver.analyses.diff import diff_plans, prices_of_catalog
        from solver.trust.planfile import apply_price_file, load_plan

        _check_format(format, "table", "json", "markdown")
        before, after = load_plan(old)[0], load_plan(new)[0]
        if before.problem != after.problem:
            raise ProcureError(
                f"the plans are for different problems ({before.problem!r} and "
                f"{after.problem!r}): a diff would compare unrelated things",
                file=str(new),
                fix="diff two plans of the same problem (a plan and its re-solve)",
            )
        new_prices = None
        if prices is not None:
            try:
                repriced = apply_price_file(
                    _load_catalog(catalog),
                    prices,
                    prices_format,
                    provider,
                    price_date,
                    max_factor,
                    accept_suspicious,
                    False,
                )
            except ProcureError as exc:
                _blame(exc, {}, prices)
                raise
            new_prices = prices_of_catalog(repriced.catalog)
        elif catalog is not None:
            new_prices = prices_of_catalog(_load_catalog(catalog))
        diff = diff_plans(before, after, new_prices=new_prices)
        if format == "json":
            text = json.dumps(diff.model_dump(mode="json"), indent=2) + "\n"
        elif format == "markdown":
            text = diff.markdown()
        else:
            text = diff.text()
        if out is not None:
            check_output_file(out, force=force)
            write_atomic(out, text)
            typer.echo(f"wrote {out}")
        else:
            sys.stdout.write(text)

    _run(debug, body)


@app.command("export")
def export_cmd(
    plan: Annotated[Path, typer.Argument(help="A plan (solve --format json)")],
    out: Annotated[Path, typer.Option("--out", help="Folder for the files")],
    by_provider: Annotated[
        bool,
        typer.Option("--by-provider/--combined", help="One order per provider, or one table"),
    ] = True,
    format: Annotated[
        str,
        typer.Option("--format", help="Output format", **_choices("csv", "xlsx", "focus")),
    ] = "csv",
    problem: Annotated[
        Path | None,
        typer.Option(help="Problem YAML of the plan (dates, delivery periods; focus needs it)"),
    ] = None,
    catalog: CatalogOpt = None,
    start: Annotated[
        str | None,
        typer.Option(help="First day of the plan, YYYY-MM-DD (default: the plan's start_date)"),
    ] = None,
    billing_account: Annotated[
        str, typer.Option("--billing-account", help="BillingAccountId for FOCUS rows")
    ] = "planned",
    force: ForceOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Purchase orders per provider and for hardware (csv, xlsx), or FOCUS 1.2 rows (focus)."""

    def body() -> None:
        from datetime import date

        from solver.outputs.focus import focus_csv, focus_frame, validate_focus
        from solver.outputs.orders import hardware_order, orders_combined, orders_csv, orders_xlsx
        from solver.trust.planfile import load_plan

        _check_format(format, "csv", "xlsx", "focus")
        check_output_dir(out, force=force)
        the_plan, prob, cat = load_plan(plan, problem=problem, catalog=catalog)
        files: dict[str, str | bytes] = {}
        if format == "focus":
            try:
                day = date.fromisoformat(start or the_plan.start_date or "")
            except ValueError:
                raise ProcureError(
                    f"{start!r} is not a date" if start else "the plan has no start_date",
                    field="--start",
                    fix="write it as --start YYYY-MM-DD",
                ) from None
            frame = focus_frame(the_plan, prob, cat, day, billing_account_id=billing_account)
            problems = validate_focus(frame)
            if problems:
                raise ProcureError(
                    "the FOCUS export does not conform: " + "; ".join(problems),
                    fix="this is a bug in procure: report it with the plan",
                )
            files["focus.csv"] = focus_csv(frame)
        elif format == "xlsx":
            files["orders.xlsx"] = orders_xlsx(the_plan, cat, prob)
        elif by_provider:
            files.update(orders_csv(the_plan, cat, prob))
        else:
            files["orders.csv"] = csv_text(orders_combined(the_plan))
            hw = hardware_order(the_plan, cat, prob)
            if not hw.empty:
                files["hardware.csv"] = csv_text(hw)
        if not files:
            typer.echo("nothing to order: the plan has no cloud rentals, reservations or purchases")
            return
        check_output_dir(out, list(files), force=force)
        write_files_together(out, files)
        typer.echo("wrote " + ", ".join(str(out / n) for n in files))

    _run(debug, body)


# --------------------------------------------------------------------------- calibrate


def _calibration_table(calibration) -> str:
    """Per-bucket requests/s per accelerator (c = calibrated, p = physics), then the factors."""
    import pandas as pd

    parts = []
    for profile in calibration.profiles:
        frame = pd.DataFrame(profile["buckets"])
        for acc, values in profile["measured_throughput_rps"].items():
            basis = profile["basis"][acc]
            kinds = [basis] * len(values) if isinstance(basis, str) else basis
            frame[acc] = [
                f"{v:.4g}" + {"measured": "", "calibrated": " c", "physics": " p"}[k]
                for v, k in zip(values, kinds, strict=True)
            ]
        parts.append(
            f"requests/s per accelerator, {profile['model']} on {profile['runtime']} "
            "(c = calibrated physics, p = physics: not measured)\n" + frame.to_string(index=False)
        )
    factors = calibration.factors.copy()
    parts.append(
        "fitted factors (measured = factor x physics; error = |ln(measured / fitted)|)\n"
        + factors.to_string(index=False, float_format=lambda x: f"{x:.4g}")
    )
    if calibration.notes:
        parts.append("notes:\n" + "\n".join(f"  - {n}" for n in calibration.notes))
    return "\n\n".join(parts)


@app.command("calibrate")
def calibrate_cmd(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="vLLM benchmark_serving result JSON, CSV of measurements, or Mélange profile JSON"
        ),
    ],
    accelerator: Annotated[
        list[str] | None,
        typer.Option(
            "--accelerator",
            help="ID: the accelerator of vLLM results; NAME=ID: map a name in a file (repeatable)",
        ),
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model preset (default: each file's)")] = None,
    runtime: Annotated[
        str | None, typer.Option(help="vllm | sglang | tensorrt-llm | tgi | ... (default: file's)")
    ] = None,
    tpot_slo_ms: Annotated[
        float | None, typer.Option(help="Runs over this mean TPOT are no bucket's figure, ms")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Folder for profiles.yaml and factors.csv")
    ] = None,
    format: Annotated[
        str,
        typer.Option("--format", help="Output format", **_choices("table", "json")),
    ] = "table",
    catalog: CatalogOpt = None,
    force: ForceOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Per-bucket profiles and fitted efficiency factors from your own measurements."""

    def body() -> None:
        from solver.analyses.calibrate import (
            calibrate,
            calibration_json,
            parse_accelerator_options,
            profiles_yaml,
        )

        _check_format(format, "table", "json")
        default_acc, names = parse_accelerator_options(accelerator)
        texts = []
        for path in files:
            try:
                texts.append((str(path), path.read_text(encoding="utf-8")))
            except UnicodeDecodeError:
                raise ProcureError(
                    "not a text file", file=str(path), fix="pass a JSON or CSV file"
                ) from None
            except OSError as exc:
                raise ProcureError(
                    f"cannot read it ({exc.strerror})", file=str(path), fix="check the path"
                ) from None
        result = calibrate(
            texts,
            _load_catalog(catalog),
            accelerator=default_acc,
            accelerator_names=names,
            model=model,
            runtime=runtime,
            tpot_slo_ms=tpot_slo_ms,
        )
        if out is not None:
            written = {
                "profiles.yaml": profiles_yaml(result, [t[0] for t in texts]),
                "factors.csv": csv_text(result.factors),  # neutralised cells
            }
            check_output_dir(out, list(written), force=force)
            write_files_together(out, written)
        typer.echo(calibration_json(result) if format == "json" else _calibration_table(result))
        if out is not None:
            wrote = f"wrote {out / 'profiles.yaml'}, {out / 'factors.csv'}"
            typer.echo(wrote, err=format == "json")  # stdout stays one JSON document

    _run(debug, body)


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
