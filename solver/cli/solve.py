"""``procure solve``: solve a problem and print or write the plan (table, CSV, JSON)."""

from __future__ import annotations

import json
import sys
from datetime import date
from pathlib import Path
from typing import Annotated

import typer

from solver.cli.common import (
    CatalogOpt,
    DebugOpt,
    ForceOpt,
    QuotesOpt,
    RatesOpt,
    _check_choice,
    _check_format,
    _check_gap_and_limit,
    _choices,
    _load_catalog,
    _quotes_file,
    _rates_file,
    _run,
    _with_paths,
    _with_quotes,
    app,
    catalog_inputs,
    cli_workers,
    say_if_stopped,
    terminal_mip_progress,
    time_left,
)
from solver.errors import ProcureError
from solver.outputs.files import check_not_inputs, check_output_file, write_atomic
from solver.units import DEFAULT_SOLVER, SOLVER_HELP, SOLVERS

#: ``procure solve --throughput-scenarios``
ThroughputOpt = Annotated[
    str | None,
    typer.Option(
        "--throughput-scenarios",
        help="Two-stage over serving capacity: factor:probability pairs, e.g. "
        "1:0.6,0.8:0.3,0.6667:0.1 (capacity x 1, x 0.8, x 0.6667), qQ:P for a quantile of "
        "each estimate's own error band, or 'band' (10th, 50th and 90th percentiles at "
        "0.3, 0.4 and 0.3). Multiplies the problem's scenarios (replaces its "
        "throughput_scenarios); implies --stochastic",
    ),
]


@app.command()
def solve(
    problem: Annotated[Path, typer.Argument(help="Problem YAML file")],
    catalog: CatalogOpt = None,
    quotes: QuotesOpt = None,
    exchange_rates: RatesOpt = None,
    solver: Annotated[
        str,
        typer.Option(
            help=SOLVER_HELP,
            **_choices(*SOLVERS),
        ),
    ] = DEFAULT_SOLVER,
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
    throughput_scenarios: ThroughputOpt = None,
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
    compare_architectures: Annotated[
        bool,
        typer.Option(
            "--compare-architectures",
            help="Also solve with every online workload aggregated and with every one "
            "disaggregated, and report both costs (the plan's architecture_costs)",
        ),
    ] = False,
    debug: DebugOpt = False,
) -> None:
    """Solve a problem to proven optimality, verify the plan, and show it."""

    def body() -> None:
        from solver.inputs.problem import load_problem
        from solver.outputs.text import plan_csv, plan_json, plan_table

        _check_format(format, "table", "json", "csv")
        _check_choice(method, "--method", "auto", "full", "root", "columns")
        if out is not None:
            check_output_file(out, force=force)
            check_not_inputs(
                [("--out", out)], [("problem file", problem), *catalog_inputs(catalog)]
            )
        _check_gap_and_limit(gap, time_limit)
        prob = load_problem(problem)
        if throughput_scenarios is not None:
            prob = _with_throughput_scenarios(prob, throughput_scenarios)
        cat = _with_quotes(_load_catalog(catalog), prob, problem, quotes, rates=exchange_rates)
        if stochastic or prob.uncertainty is not None:
            two_stage = (stochastic_method, workers, scheduler)
            text = _stochastic_text(prob, cat, problem, solver, time_limit, gap, format, two_stage)
            _write_or_print(text, out, force)
            return
        plan = _solved(prob, cat, problem, solver, time_limit, gap, method, compare_architectures)
        applied = _quotes_file(prob, problem, quotes)
        on = {"on": str(prob.start or date.today())}
        quoted = None if applied is None else {"path": str(applied.resolve()), **on}
        rates = _rates_file(prob, problem, exchange_rates)
        plan = _with_paths(plan, problem, catalog, quotes=quoted, rates=rates)
        if reproducible:
            plan = plan.model_copy(update={"solve_seconds": 0.0, "compile_seconds": 0.0})
        text = {"table": plan_table, "json": plan_json, "csv": plan_csv}[format](plan)
        _write_or_print(text, out, force)
        say_if_stopped(plan, time_limit)

    _run(debug, body, time_limit, before="any plan was found")


def _solved(prob, cat, path: Path, solver: str, time_limit, gap, method: str, compare: bool):
    """The verified plan (errors name the problem file), with the architectures' costs
    when ``compare`` (``--compare-architectures``)."""
    from solver.core.backends import SolveOptions
    from solver.solve import solve_problem

    try:
        with terminal_mip_progress():
            plan = solve_problem(
                prob,
                cat,
                solver=solver,
                options=SolveOptions(time_limit_s=time_left(time_limit), relative_gap=gap),
                method=method,
            )
    except ProcureError as exc:
        if exc.file is None:
            exc.file = str(path)
            exc.args = (exc.render(),)
        raise
    if compare:
        from solver.analyses.architectures import architecture_costs

        costs = architecture_costs(
            prob,
            cat,
            solver=solver,
            options=SolveOptions(time_limit_s=time_left(time_limit), relative_gap=gap),
            method=method,
        )
        plan = plan.model_copy(update={"architecture_costs": costs})
    return plan


def _with_throughput_scenarios(prob, text: str):
    """The problem with ``--throughput-scenarios`` as its uncertainty's
    throughput_scenarios (an uncertainty of those alone when it has none)."""
    from solver.inputs.problem import Uncertainty, throughput_scenarios_from_text

    found = throughput_scenarios_from_text(text)
    if prob.capacity_scenario is not None:
        raise ProcureError(
            "the problem sets capacity_scenario, and --throughput-scenarios sets the capacity "
            "per scenario",
            field="--throughput-scenarios",
            fix="drop capacity_scenario from the problem, or the option",
        )
    if prob.savings_plans:  # as the problem's own check of uncertainty: (problem.py)
        raise ProcureError(
            "savings_plans with uncertainty is not modelled yet (a two-stage plan commits "
            "reservations and purchases only)",
            field="--throughput-scenarios",
            fix="solve without --throughput-scenarios, or without savings_plans",
        )
    u = prob.uncertainty
    u = (
        Uncertainty(throughput_scenarios=found)
        if u is None
        else u.model_copy(update={"throughput_scenarios": found})
    )
    return prob.model_copy(update={"uncertainty": u})


def _stochastic_text(
    prob, cat, path: Path, solver: str, time_limit, gap, format: str, method: tuple
) -> str:
    """The two-stage plan of a problem with ``uncertainty:`` as a table or JSON."""
    from solver.outputs.text import two_stage_text

    if format == "csv":
        raise ProcureError(
            "a two-stage plan has no single line-item table",
            field="--format",
            fix="use --format table or --format json",
        )
    sp = _two_stage(prob, cat, path, solver, time_limit, gap, method)
    if format == "json":
        return json.dumps(sp.model_dump(mode="json"), indent=2) + "\n"
    return two_stage_text(sp)


def _two_stage(prob, cat, path: Path, solver: str, time_limit, gap, method: tuple):
    """Solve the two-stage plan; errors name the problem file."""
    from solver.analyses.stochastic import solve_stochastic
    from solver.core.backends import SolveOptions

    name, workers, scheduler = method
    workers = cli_workers(workers)
    try:
        return solve_stochastic(
            prob,
            cat,
            solver=solver,
            options=SolveOptions(time_limit_s=time_left(time_limit), relative_gap=gap),
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
