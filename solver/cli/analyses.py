"""``procure sensitivity`` and ``procure report``: analyses of a solved plan."""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from solver.cli.common import (
    CatalogOpt,
    DebugOpt,
    ForceOpt,
    QuietOpt,
    QuotesOpt,
    Stages,
    _check_format,
    _check_gap_and_limit,
    _choices,
    _load_catalog,
    _run,
    _with_quotes,
    app,
    catalog_inputs,
    cli_workers,
    emit,
    time_left,
)
from solver.cli.solve import _two_stage
from solver.errors import ProcureError
from solver.outputs.files import (
    check_not_inputs,
    check_output_dir,
    check_output_file,
    write_files_together,
)
from solver.units import DEFAULT_SOLVER, SOLVERS, WARM_SOLVER

if TYPE_CHECKING:
    from solver.inputs.problem import Problem
    from solver.plan import Plan


def _solve_for_analysis(
    problem: Path,
    catalog: Path | None,
    solver: str,
    time_limit: float | None = None,
    quotes: Path | None = None,
):
    """Load, solve and verify: the plan ``procure solve`` gives, and a solution over every
    option holding it (:func:`solver.solve.solve_for_analysis`)."""
    from solver.core.backends import SolveOptions
    from solver.inputs.problem import load_problem
    from solver.solve import solve_for_analysis

    prob = load_problem(problem)
    cat = _with_quotes(_load_catalog(catalog), prob, problem, quotes)
    # the solve gets a share of what is left of the limit; the analysis the rest
    left = time_left(time_limit)
    share = None if left is None else ANALYSIS_SOLVE_SHARE * left
    try:
        return solve_for_analysis(
            prob, cat, solver=solver, options=SolveOptions(time_limit_s=share)
        )
    except ProcureError as exc:
        if exc.file is None:
            exc.file = str(problem)
            exc.args = (exc.render(),)
        raise


#: share of what is left of --time-limit (once the inputs are read) that an analysis gives
#: its solve: the analysis (compiled again without pruning, break-evens, sweeps) and its
#: output get the rest (given the whole limit, the solve would leave nothing for them)
ANALYSIS_SOLVE_SHARE = 0.7
#: share of --time-limit kept at the end of an analysis for writing its output
OUTPUT_SHARE = 0.1


def _analysis_deadline(time_limit: float | None, share: float = 1.0) -> float | None:
    """The ``time.perf_counter()`` time by which an analysis stops starting work: ``share``
    of what is left of the limit once :data:`OUTPUT_SHARE` of it is kept for the output."""
    if time_limit is None:
        return None
    left = time_left(time_limit, "solving the plan") - OUTPUT_SHARE * time_limit
    return time.perf_counter() + share * max(0.0, left)


AnalysisSolverOpt = Annotated[
    str | None,
    typer.Option(
        help=f"MIP solver (default: the plan as `procure solve` gives it, with {DEFAULT_SOLVER}; "
        f"the re-solves with {WARM_SOLVER}, warm-started)",
        **_choices(*SOLVERS),
    ),
]


def _solvers(solver: str | None) -> tuple[str, str]:
    """The solver of the plan and of the re-solves: the one asked for, or the defaults
    (the plan then is exactly ``procure solve``'s).

    Raises
    ------
    ProcureError
        ``cpsat``: it solves no LP, and the analyses need the duals of the plan's LP.
    """
    if solver == "cpsat":
        raise ProcureError(
            "cpsat cannot run an analysis: CP-SAT solves no LP, and shadow prices "
            "are the duals of the plan's LP",
            field="--solver",
            fix="use highs, highspy, cbc or scip (or leave --solver out)",
        )
    return (solver or DEFAULT_SOLVER, solver or WARM_SOLVER)


WorkersOpt = Annotated[
    int,
    typer.Option(
        help="Local processes for re-solves (default: this machine's CPUs, at most 8; the "
        "results do not depend on it)"
    ),
]
#: the re-solves of an analysis are independent MIPs: one process per CPU
DEFAULT_WORKERS = max(
    1,
    min(
        8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    ),
)


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
    quotes: QuotesOpt = None,
    solver: AnalysisSolverOpt = None,
    format: Annotated[
        str,
        typer.Option("--format", help="Output format", **_choices("table", "json")),
    ] = "table",
    break_even: BreakEvenOpt = 12,
    workers: WorkersOpt = DEFAULT_WORKERS,
    scheduler: SchedulerOpt = None,
    time_limit: Annotated[
        float | None,
        typer.Option(
            "--time-limit",
            help="Seconds for the whole analysis: the solve gets 70% of them, the break-even "
            "search what is left (pools not reached are left out, and the output names them)",
        ),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Write the output to this file")] = None,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
) -> None:
    """What binds, what it is worth, and how far prices may move before the plan changes."""

    def body() -> None:
        from solver.analyses.sensitivity import sensitivity_report
        from solver.outputs.report import sensitivity_text
        from solver.outputs.sensitivity_views import plan_pools

        _check_format(format, "table", "json")
        inputs: list[tuple[str, Path | None]] = [("problem file", problem)]
        inputs += catalog_inputs(catalog)
        if out is not None:
            check_output_file(out, force=force)
            check_not_inputs([("--out", out)], inputs)
        if time_limit is not None and not (math.isfinite(time_limit) and time_limit > 0):
            raise ProcureError(
                f"--time-limit is {time_limit}", field="--time-limit", fix="e.g. --time-limit 60"
            )
        n_workers = cli_workers(workers)
        with Stages(quiet) as bar:
            plan_solver, solver_ = _solvers(solver)
            plan, solution = _solve_for_analysis(problem, catalog, plan_solver, time_limit, quotes)
            bar.done("solve", _solved_words(plan))
            report = sensitivity_report(
                solution,
                deadline=_analysis_deadline(time_limit),
                break_even_limit=_break_even_limit(break_even),
                solver=solver_,
                workers=n_workers,
                scheduler=scheduler,
                progress=lambda done, total: bar("break-even prices", done, total),
            )
        report = report.model_copy(update={"warnings": plan.warnings})
        if format == "json":
            text = json.dumps(report.model_dump(mode="json"), indent=2) + "\n"
        else:
            text = sensitivity_text(report, used=plan_pools(plan))
        emit(text, out, force, inputs)

    _run(debug, body, time_limit)


def _replay_section(
    plan: Plan, prob: Problem, catalog: Path | None, problem: Path, quotes: Path | None
) -> str:
    """The report's replay section (``procure replay``'s defaults); "" when the plan serves
    no online workload."""
    from solver.analyses.replay import replay_plan
    from solver.outputs.replay_html import replay_section_html

    cat = _with_quotes(_load_catalog(catalog), prob, problem, quotes)
    result = replay_plan(plan, prob, cat)
    return replay_section_html(result) if result.rows else ""


def _solved_words(plan: Plan) -> str:
    """The analysis solve's progress words: the plan's totals as `procure solve` heads them
    (all in, with compute beside it), so the line never shows compute alone as the plan's
    cost."""
    if plan.all_in_cost_usd is None:
        return f"compute ${plan.total_cost_usd:,.2f}, verified"
    return f"${plan.all_in_cost_usd:,.2f} all in (compute ${plan.total_cost_usd:,.2f}), verified"


def _check_sweep_options(
    frontier_points: int, scenarios: int, spread: float, sweep_gap: float
) -> None:
    """Refuse report sweep options that name no sweep: fewer than 2 frontier points, no
    price scenario, a spread outside [0, 1) or a sweep gap outside [0, 1) (or nan)."""
    if frontier_points < 2 or scenarios < 1 or not 0 <= spread < 1:
        raise ProcureError(
            "need --frontier-points >= 2, --scenarios >= 1 and 0 <= --spread < 1",
            field="--frontier-points/--scenarios/--spread",
            fix="e.g. --frontier-points 8 --scenarios 20 --spread 0.2",
        )
    if not 0 <= sweep_gap < 1:  # also refuses nan
        raise ProcureError(
            f"--sweep-gap {sweep_gap:g} is not a relative gap",
            field="--sweep-gap",
            fix="give a fraction from 0 to below 1, e.g. --sweep-gap 0.005 (0.5%)",
        )


@app.command()
def report(
    problem: Annotated[Path, typer.Argument(help="Problem YAML file")],
    out: Annotated[Path, typer.Option(help="Folder for report.html, report.xlsx, ...")],
    catalog: CatalogOpt = None,
    quotes: QuotesOpt = None,
    solver: AnalysisSolverOpt = None,
    break_even: BreakEvenOpt = 12,
    frontier_points: Annotated[int, typer.Option(help="Points on the CO2e frontier")] = 8,
    scenarios: Annotated[int, typer.Option(help="Price scenarios to draw")] = 20,
    spread: Annotated[float, typer.Option(help="Price scenario range, +/- fraction")] = 0.2,
    sweep_gap: Annotated[
        float,
        typer.Option(
            "--sweep-gap",
            help="Relative gap each point of the frontier, the budget and demand sweeps and "
            "the price scenarios is proven to (each point shows the gap it reached; the plan "
            "and its break-even prices keep the solve's 1e-4)",
        ),
    ] = 5e-3,  # solver.analyses.sensitivity.sweeps.SWEEP_GAP (tests/cli check they agree)
    workers: WorkersOpt = DEFAULT_WORKERS,
    scheduler: SchedulerOpt = None,
    stochastic_method: Annotated[
        str,
        typer.Option(
            "--stochastic-method",
            help="Problems with uncertainty: how the two-stage section is solved (as solve)",
            **_choices("auto", "extensive", "decomposition", "benders"),
        ),
    ] = "auto",
    time_limit: Annotated[
        float | None,
        typer.Option(
            "--time-limit",
            help="Seconds for the whole report: the solve gets 70% of them, the break-even "
            "search half of what is left, and sections not started by three quarters of it "
            "are left out and named; past the limit (+10%) the command stops with a "
            "message and writes nothing",
        ),
    ] = None,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Write a self-contained HTML report and an XLSX workbook for finance (with a
    two-stage section when the problem has ``uncertainty:``)."""

    def body() -> None:
        from solver.analyses.report_analysis import build_analysis
        from solver.inputs.problem import load_problem
        from solver.outputs.report import (
            analysis_json,
            frontier_png,
            report_html,
            report_xlsx,
        )

        names = ["report.html", "report.xlsx", "frontier.png", "analysis.json"]
        check_output_dir(out, names, force=force)
        inputs: list[tuple[str, Path | None]] = [("problem file", problem)]
        inputs += catalog_inputs(catalog)
        check_not_inputs([("--out", out / name) for name in names], inputs)
        _check_sweep_options(frontier_points, scenarios, spread, sweep_gap)
        _check_gap_and_limit(0.0, time_limit)
        n_workers = cli_workers(workers)
        with Stages(quiet) as bar:
            plan_solver, solver_ = _solvers(solver)
            plan, solution = _solve_for_analysis(
                problem, catalog, plan_solver, time_limit, quotes=quotes
            )
            bar.done("solve", _solved_words(plan))
            prob = load_problem(problem)
            two_stage = None
            if prob.uncertainty is not None:
                method = (stochastic_method, n_workers, scheduler)
                cat = _with_quotes(_load_catalog(catalog), prob, problem, quotes)
                two_stage = _two_stage(prob, cat, problem, plan_solver, time_limit, 1e-4, method)
                bar.done("two-stage plan")
            sections_deadline = _analysis_deadline(time_limit, 0.75)
            analysis = build_analysis(
                plan,
                solution,
                solver=solver_,
                break_even_limit=_break_even_limit(break_even),
                frontier_points=frontier_points,
                scenarios=scenarios,
                spread=spread,
                workers=n_workers,
                scheduler=scheduler,
                progress=bar,
                two_stage=two_stage,
                deadline=_analysis_deadline(time_limit, 0.5),
                sections_deadline=sections_deadline,
                sweep_gap=sweep_gap,
            )
            png = frontier_png(analysis)
            replay = ""
            if sections_deadline is None or time.perf_counter() < sections_deadline:
                replay = _replay_section(plan, prob, catalog, problem, quotes)
                bar.done("replay")
            else:  # past the sections' deadline: left out and named, as the others
                analysis.cut_at_time_limit.append("replay against traffic")
            files: dict[str, str | bytes] = {
                "report.html": report_html(analysis, png, replay),
                "report.xlsx": report_xlsx(analysis),
                "frontier.png": png,
                "analysis.json": analysis_json(analysis),
            }
            bar.done("report files")
        check_output_dir(out, names, force=force)
        write_files_together(out, files)
        typer.echo(f"wrote {', '.join(str(out / n) for n in files)}")

    _run(debug, body, time_limit)
