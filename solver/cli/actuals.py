"""``procure actuals`` (billed against planned, variance, re-forecast) and ``procure watch``
(did a signed plan's prices or optimum move?)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from solver.cli.common import (
    CatalogOpt,
    DebugOpt,
    ForceOpt,
    SnapshotDbOpt,
    _check_format,
    _choices,
    _run,
    app,
    cache_dir,
    catalog_inputs,
    emit,
)
from solver.errors import ProcureError
from solver.units import DEFAULT_SOLVER, SOLVER_HELP, SOLVERS


def _start_day(plan, where: Path):
    from datetime import date

    try:
        return date.fromisoformat(plan.start_date or "")
    except ValueError:
        raise ProcureError(
            "the plan has no start date, so its months cannot meet a bill's",
            file=str(where),
            field="start_date",
            fix="add start: YYYY-MM to the problem and solve it again",
        ) from None


def _read_bills(billing: list[Path]):
    """The billing exports, each row counted once (rows passed twice dropped)."""
    from solver.inputs.importers.focus_bills import read_focus_bills

    return read_focus_bills(billing)


def _resolve_from(plan, prob, cat, month: str, solver: str):
    """The re-solve from the period holding ``month`` (YYYY-MM) with what is bought and
    reserved before it held, at the signed catalog's prices; (None, why) when the month is
    past the horizon or the problem cannot be re-based there."""
    from solver.analyses.resolve import resolve
    from solver.cli.changes import _as_of_period

    try:
        as_of = _as_of_period(month, prob, plan.start_date)
    except ProcureError:
        return None, f"{month} is past the plan's horizon: nothing left to re-solve"
    try:
        result = resolve(prob, plan, cat, cat, as_of=as_of, solver=solver)
    except ProcureError as exc:
        return None, f"no re-solve from {as_of}: {exc.message}"
    return result, f"period {as_of}, the first still open, is re-decided from its start"


@app.command("actuals")
def actuals_cmd(
    plan: Annotated[Path, typer.Argument(help="The signed plan (solve --format json)")],
    billing: Annotated[
        list[Path],
        typer.Argument(help="Billing exports in FOCUS (CSV): AWS, Azure, GCP or the plan's own"),
    ],
    format: Annotated[
        str, typer.Option("--format", help="Output format", **_choices("table", "json", "csv"))
    ] = "table",
    out: Annotated[Path | None, typer.Option(help="Write the output to this file")] = None,
    reforecast: Annotated[
        bool,
        typer.Option(
            "--reforecast",
            help="Add the rest of the horizon at the plan and at the run-rate, and a "
            "re-solve from the month after the last billed (bought and reserved held)",
        ),
    ] = False,
    billed_through: Annotated[
        str | None,
        typer.Option(
            "--billed-through",
            help="YYYY-MM: the bills are complete to the end of this month (a line with "
            "no row in a month up to it was used less, not billed late)",
        ),
    ] = None,
    catalog: CatalogOpt = None,
    solver: Annotated[str, typer.Option(help=SOLVER_HELP, **_choices(*SOLVERS))] = DEFAULT_SOLVER,
    force: ForceOpt = False,
    debug: DebugOpt = False,
) -> None:
    """What was billed against what was planned: variance by line and month (price,
    volume, mix, unplanned, unbilled), the reservations' burn-down, and with --reforecast
    the rest of the horizon."""

    def body() -> None:
        from solver.analyses.actuals import actuals, with_resolve
        from solver.analyses.actuals import reforecast as make_reforecast
        from solver.analyses.commitment_burn import commitment_burn
        from solver.outputs.actuals import (
            actuals_csv,
            actuals_json,
            actuals_table,
            commitments_table,
            reforecast_csv,
            reforecast_table,
        )
        from solver.trust.planfile import load_plan

        _check_format(format, "table", "json", "csv")
        the_plan, prob, cat = load_plan(plan, catalog=catalog, cache_dir=cache_dir())
        start = _start_day(the_plan, plan)
        result = actuals(the_plan, prob, cat, _read_bills(billing), start, billed_through)
        forecast, resolution, note = None, None, ""
        if reforecast:
            forecast = make_reforecast(result)
            resolution, note = _resolve_from(the_plan, prob, cat, forecast.as_of_month, solver)
            if resolution is not None:
                rebased = resolution.rebased.problem
                forecast = with_resolve(forecast, resolution.plan, rebased, cat, rebased.start)
        burn = commitment_burn(result)
        if format == "json":
            text = actuals_json(result, forecast, resolution, note, commitments=burn)
        elif format == "csv":
            text = reforecast_csv(forecast) if forecast is not None else actuals_csv(result)
        else:
            text = actuals_table(result)
            if not burn.empty:
                text += "\n" + commitments_table(burn)
            if forecast is not None:
                text += "\n" + reforecast_table(forecast, resolution, note)
        inputs = [("plan", plan), *(("billing export", b) for b in billing)]
        emit(text, out, force, inputs + catalog_inputs(catalog))

    _run(debug, body)


@app.command("watch")
def watch_cmd(
    plan: Annotated[Path, typer.Argument(help="The signed plan (solve --format json)")],
    prices: Annotated[
        Path,
        typer.Option(
            "--prices",
            help="Newer prices: price CSV, catalog folder or offerings.csv, vms.csv, or a "
            "stored snapshot: snapshot:latest or snapshot:ID",
        ),
    ],
    threshold_pct: Annotated[
        float,
        typer.Option(
            "--threshold-pct",
            help="A line's price, or the optimum's saving, must move by more than this "
            "percentage to count",
        ),
    ] = 5.0,
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of", help="First period still open (name or YYYY-MM): commitments before held"
        ),
    ] = None,
    format: Annotated[
        str, typer.Option("--format", help="Output format", **_choices("table", "json"))
    ] = "table",
    out: Annotated[Path | None, typer.Option(help="Write the output to this file")] = None,
    catalog: CatalogOpt = None,
    solver: Annotated[str, typer.Option(help=SOLVER_HELP, **_choices(*SOLVERS))] = DEFAULT_SOLVER,
    force: ForceOpt = False,
    debug: DebugOpt = False,
    db: SnapshotDbOpt = None,
) -> None:
    """Did the signed plan's prices move, and its optimum? Exit 0: nothing moved beyond
    the threshold; 3: prices moved, the plan holds; 4: the optimum moved; 5: a price line
    meant for a plan line was not applied (unknown offering, beyond x2, or held)."""
    outcome: dict[str, int] = {}

    def body() -> None:
        nonlocal prices
        from solver.analyses.price_review import known_ids, prices_to_review
        from solver.analyses.watch import WATCH_EXIT, watch
        from solver.cli.changes import _as_of_period, _blame, _price_inputs
        from solver.cli.prices import snapshot_held, snapshot_price_file
        from solver.inputs.prices import apply_price_file
        from solver.outputs.actuals import watch_json, watch_table
        from solver.trust.planfile import load_plan

        _check_format(format, "table", "json")
        if not (threshold_pct >= 0.0 and threshold_pct < 1e6):
            raise ProcureError(
                f"threshold {threshold_pct:g}% is not a percentage",
                field="--threshold-pct",
                fix="e.g. --threshold-pct 5 (a move of more than 5% counts)",
            )
        held = snapshot_held(prices, db)
        prices = snapshot_price_file(prices, db)
        the_plan, prob, cat = load_plan(plan, catalog=catalog, cache_dir=cache_dir())
        try:
            repriced = apply_price_file(cat, prices)
        except ProcureError as exc:
            _blame(exc, {}, prices)
            raise
        result = watch(
            the_plan,
            prob,
            cat,
            repriced.catalog,
            threshold_pct=threshold_pct,
            as_of=_as_of_period(as_of, prob, the_plan.start_date),
            solver=solver,
            review=prices_to_review(repriced.report.rows, held, the_plan, known_ids(cat)),
        )
        code = WATCH_EXIT[result.verdict]
        text = watch_json(result, code) if format == "json" else watch_table(result)
        inputs = [("plan", plan), *_price_inputs(prices)]
        emit(text, out, force, inputs + catalog_inputs(catalog))
        outcome["code"] = code

    _run(debug, body)
    if outcome.get("code"):
        raise typer.Exit(outcome["code"])
