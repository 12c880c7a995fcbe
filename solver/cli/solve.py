"""``procure solve``: solve a problem and print or write the plan (table, CSV, JSON)."""

from __future__ import annotations

import io
import json
import math
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from solver.cli.common import (
    CatalogOpt,
    DebugOpt,
    ForceOpt,
    _check_choice,
    _check_format,
    _check_gap_and_limit,
    _choices,
    _load_catalog,
    _run,
    _with_paths,
    app,
)
from solver.errors import ProcureError
from solver.outputs.files import check_output_file, csv_text, write_atomic
from solver.units import DEFAULT_SOLVER, SOLVERS, Item


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
    past = [i for i in plan.line_items if i.item == Item.RESERVATION and i.months_after_horizon > 0]
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
