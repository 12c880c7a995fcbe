"""``procure alternatives``: near-optimal plans that differ most from the optimum, and
(``--preferences``) the price of each preference."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer

from solver.cli.common import (
    CatalogOpt,
    DebugOpt,
    ForceOpt,
    QuietOpt,
    QuotesOpt,
    Stages,
    _check_format,
    _choices,
    _load_catalog,
    _run,
    _with_quotes,
    app,
    catalog_inputs,
    emit,
)
from solver.errors import ProcureError
from solver.outputs.files import check_not_inputs, check_output_file
from solver.units import DEFAULT_SOLVER, SOLVERS

_MEASURES = ("providers", "accelerators", "regions", "commitments")


@app.command()
def alternatives(
    problem: Annotated[Path, typer.Argument(help="Problem YAML file")],
    slack: Annotated[
        float,
        typer.Option(help="Fraction an alternative may cost more than the optimum (0.02 = 2%)"),
    ] = 0.02,
    n: Annotated[int, typer.Option("--n", help="How many alternatives to look for")] = 4,
    differ_by: Annotated[
        str,
        typer.Option(
            "--differ-by",
            help="What the alternatives differ in: the set of providers, accelerators, "
            "regions or purchase modes (commitments) they use",
            **_choices(*_MEASURES),
        ),
    ] = "providers",
    preferences: Annotated[
        bool,
        typer.Option(
            "--preferences",
            help="Instead: the cost of excluding each provider, accelerator, purchase mode "
            "and region group the optimum uses, and of requiring each one it could use",
        ),
    ] = False,
    catalog: CatalogOpt = None,
    quotes: QuotesOpt = None,
    solver: Annotated[str, typer.Option(help="MIP solver", **_choices(*SOLVERS))] = DEFAULT_SOLVER,
    time_limit: Annotated[
        float | None,
        typer.Option(
            "--time-limit",
            help="Seconds for EACH solve (the optimum, each alternative, each re-solve); one "
            "stopped with a plan is shown as not proven",
        ),
    ] = None,
    format: Annotated[
        str, typer.Option("--format", help="Output format", **_choices("table", "json"))
    ] = "table",
    out: Annotated[Path | None, typer.Option(help="Write the output to this file")] = None,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Plans within a slack of the optimum that differ most from it, or the price of each
    preference: every plan verified."""

    def body() -> None:
        from solver.analyses import alternatives as mga
        from solver.core.backends import SolveOptions
        from solver.inputs.problem import load_problem
        from solver.outputs import alternatives as show

        _check_format(format, "table", "json")
        if solver not in SOLVERS:
            raise ProcureError(
                f"unknown solver {solver!r}", field="--solver", fix=f"use {', '.join(SOLVERS)}"
            )
        if differ_by not in _MEASURES:
            raise ProcureError(
                f"--differ-by {differ_by!r} is not a measure",
                field="--differ-by",
                fix=f"use one of {', '.join(_MEASURES)}",
            )
        if time_limit is not None and not (math.isfinite(time_limit) and time_limit > 0):
            raise ProcureError(
                f"--time-limit is {time_limit}", field="--time-limit", fix="e.g. --time-limit 60"
            )
        if not preferences:
            mga.mga.check_arguments(slack, n, differ_by)
        inputs: list[tuple[str, Path | None]] = [("problem file", problem)]
        inputs += catalog_inputs(catalog)
        if out is not None:
            check_output_file(out, force=force)
            check_not_inputs([("--out", out)], inputs)
        prob = load_problem(problem)
        cat = _with_quotes(_load_catalog(catalog), prob, problem, quotes)
        options = SolveOptions(time_limit_s=time_limit)
        with Stages(quiet) as bar:
            try:
                if preferences:
                    prices = mga.preferences(prob, cat, solver=solver, options=options)
                    bar.done("preferences", f"{len(prices.rows)} re-solves, verified")
                else:
                    found = mga.alternatives(
                        prob,
                        cat,
                        slack=slack,
                        n=n,
                        measure=differ_by,
                        solver=solver,
                        options=options,
                    )
                    bar.done("alternatives", f"{len(found.alternatives)} found, verified")
            except ProcureError as exc:
                if exc.file is None:
                    exc.file = str(problem)
                    exc.args = (exc.render(),)
                raise
        if preferences:
            text = (show.preferences_json if format == "json" else show.preferences_text)(prices)
        else:
            text = (show.alternatives_json if format == "json" else show.alternatives_text)(found)
        emit(text, out, force, inputs)

    _run(debug, body)
