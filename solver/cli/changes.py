"""``procure resolve`` (re-solve after a price change or a month) and ``procure diff``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from solver.cli.common import (
    PRICES_HELP,
    CatalogOpt,
    DebugOpt,
    ForceOpt,
    QuietOpt,
    QuotesOpt,
    SnapshotDbOpt,
    Stages,
    _check_format,
    _check_gap_and_limit,
    _choices,
    _load_catalog,
    _run,
    _with_paths,
    _with_quotes,
    app,
    cache_dir,
    catalog_inputs,
    emit,
    price_day,
    say_if_stopped,
    time_left,
)
from solver.errors import ProcureError
from solver.money import usd
from solver.outputs.files import check_not_inputs, check_output_file, write_paths_together
from solver.units import DEFAULT_SOLVER, SOLVER_HELP, SOLVERS

if TYPE_CHECKING:
    from solver.plan import Plan


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
    str | None,
    typer.Option(
        "--price-date",
        help="Day the prices were observed (YYYY-MM-DD or unknown), if the file has none",
        **price_day(),
    ),
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


def _problem_digest(plan: Plan) -> str:
    """The problem digest of a plan :func:`load_plan` read (it refuses one without)."""
    assert plan.inputs is not None
    return plan.inputs.problem_sha256


@app.command("resolve")
def resolve_cmd(
    problem: Annotated[Path, typer.Argument(help="Problem YAML the baseline was solved from")],
    baseline: Annotated[
        Path, typer.Option("--baseline", help="The plan being executed (solve --format json)")
    ],
    prices: Annotated[
        Path,
        typer.Option("--prices", help=PRICES_HELP),
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
    quotes: QuotesOpt = None,
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
        typer.Option(help=SOLVER_HELP, **_choices(*SOLVERS)),
    ] = DEFAULT_SOLVER,
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
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
    db: SnapshotDbOpt = None,
) -> None:
    """Prices changed: re-solve from where we stand, and say what changed and why."""

    def body() -> None:
        nonlocal prices
        from solver.analyses.resolve import resolve
        from solver.cli.prices import snapshot_price_file
        from solver.core.backends import SolveOptions
        from solver.inputs.prices import apply_price_file, price_file_entry
        from solver.trust.planfile import BASELINE_KEY, load_plan

        _check_format(format, "table", "json")
        _check_gap_and_limit(gap, time_limit)
        prices = snapshot_price_file(prices, db)
        outputs = {"--plan-out": plan_out, "--problem-out": problem_out, "--out": out}
        inputs = [("problem file", problem), ("baseline plan", baseline), *_price_inputs(prices)]
        _check_distinct_outputs(outputs, force, inputs + catalog_inputs(catalog))
        stages = Stages(quiet)
        base, prob, old_cat = load_plan(
            baseline, problem=problem, catalog=catalog, cache_dir=cache_dir()
        )
        stages.done("baseline re-verified")
        try:
            repriced = apply_price_file(
                old_cat, prices, fmt=prices_format, provider=provider, price_date=price_date,
                max_factor=max_factor, accept=accept_suspicious, add_new=add_new,
            )  # fmt: skip
        except ProcureError as exc:
            _blame(exc, {}, prices)
            raise
        new_cat = _with_quotes(repriced.catalog, prob, problem, quotes, from_problem=False)
        try:
            result = resolve(
                prob,
                base,
                old_cat,
                new_cat,
                as_of=_as_of_period(as_of, prob, base.start_date),
                max_changes=max_changes,
                switching_cost_usd=switching_cost_usd,
                solver=solver,
                options=SolveOptions(time_limit_s=time_left(time_limit), relative_gap=gap),
            )
        except ProcureError as exc:
            _blame(exc, {"--baseline": baseline}, problem)
            raise
        applied = price_file_entry(
            prices, fmt=prices_format, provider=provider, price_date=price_date,
            max_factor=max_factor, accept=accept_suspicious, add_new=add_new,
        )  # fmt: skip
        applied[BASELINE_KEY] = _problem_digest(base)  # the lineage diff reads
        stages.done("re-solve", f"{usd(result.plan.total_cost_usd)}, verified")
        result = _with_price_trail(result, base, catalog, problem_out, applied)
        text = _resolution_text(repriced, result, format)
        _write_resolution(text, result, out, plan_out, problem_out, force)
        say_if_stopped(result.plan, time_limit)

    _run(debug, body, time_limit, before="any plan was found")


def _check_distinct_outputs(
    outputs: dict[str, Path | None], force: bool, inputs: list[tuple[str, Path | None]]
) -> None:
    """Refuse two outputs naming one file, an output naming one of the command's inputs,
    and outputs that may not be written."""
    named = {option: p for option, p in outputs.items() if p is not None}
    if len({p.resolve() for p in named.values()}) < len(named):
        raise ProcureError(
            "two outputs name the same file: one would overwrite the other",
            field="--out/--plan-out/--problem-out",
            fix="give each output its own file",
        )
    for path in named.values():
        check_output_file(path, force=force)
    check_not_inputs(list(named.items()), inputs)


def _price_inputs(prices: Path | None) -> list[tuple[str, Path | None]]:
    """The files a --prices option reads: the file, or the tables of a catalog folder."""
    if prices is not None and prices.is_dir():
        return [(f"price {what}", path) for what, path in catalog_inputs(prices)]
    return [("price file", prices)]


def _write_resolution(text: str, result, out, plan_out, problem_out, force: bool) -> None:
    """Write the re-solve's text (or print it), its plan and its re-based problem."""
    import yaml

    from solver.outputs.text import plan_json

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
    """The re-solve with its plan's inputs: the problem written, the catalog, the
    baseline's exchange-rate file and every price file applied to it in order (the
    baseline's, then this one)."""
    from dataclasses import replace

    from solver.trust.planfile import recorded_catalog

    recorded = recorded_catalog(catalog, base.inputs)
    trail = [*(base.inputs.prices if recorded else []), applied]
    catalog_dir = catalog if catalog is not None else base.inputs.catalog_dir
    # the baseline's exchange-rate file, applied first again (load_plan applied it)
    rates = base.inputs.exchange_rates if recorded else None
    plan = _with_paths(
        result.plan, problem_out, catalog_dir, trail, rates=None if rates is None else Path(rates)
    )
    return replace(result, plan=plan)


def _resolution_text(repriced, result, format: str) -> str:
    """What ``resolve`` prints: the price update, what was carried, the plan and the diff
    (a table, or one JSON document)."""
    from solver.outputs.text import diff_text, plan_table, price_report_text, rebased_text

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
                price_report_text(repriced.report),
                rebased_text(result.rebased),
                plan_table(result.plan),
                diff_text(result.diff),
            ]
        )
    return text


def _different_problems(name: str, old_problem, new_problem) -> str:
    """The note of a diff between plans of two problems that share a name: which of the
    problem's fields differ."""
    a = old_problem.model_dump(mode="json")
    b = new_problem.model_dump(mode="json")
    fields = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    return (
        f"the plans are for different problems that share the name {name!r} (they differ in "
        f"{', '.join(fields) or 'nothing visible'}) and neither is re-solved from the other: "
        "the plan effect includes the change of problem"
    )


def _with_problems(diff, before, after, related: bool | None):
    """The diff with both plans' problem digests and, when they are not of one problem,
    the warning it shows first."""
    return diff.model_copy(
        update={
            "old_problem_sha256": before.inputs.problem_sha256,
            "new_problem_sha256": after.inputs.problem_sha256,
            "problem_warning": _problem_warning(before, after, related),
        }
    )


def _problem_warning(before, after, related: bool | None) -> str:
    """The first line of a diff of plans that are not of one problem (``related``: as
    :func:`solver.trust.planfile.same_problem` says), naming both problem digests; ''
    when they are of one problem."""
    if related is True:
        return ""
    digests = (
        f"problem digests {before.inputs.problem_sha256} (old) and "
        f"{after.inputs.problem_sha256} (new)"
    )
    if related is None:
        return (
            f"the plans' problems differ ({digests}) and a re-solve among them does not "
            "name the problem it was re-solved from: whether they are of one problem is not "
            "known, and the plan effect may include a change of problem"
        )
    return (
        f"the plans are of different problems that share the name {before.problem!r} "
        f"({digests}): a what-if across problems; the plan effect includes the change of "
        "problem"
    )


@app.command("diff")
def diff_cmd(
    old: Annotated[Path, typer.Argument(help="The old plan (solve --format json)")],
    new: Annotated[Path, typer.Argument(help="The new plan")],
    prices: Annotated[
        Path | None,
        typer.Option(
            "--prices",
            help="New prices for the price effect, applied over --catalog (default: over the "
            "old plan's catalog, as resolve applies them); without it, the new plan's own prices",
        ),
    ] = None,
    catalog: Annotated[
        Path | None,
        typer.Option(
            "--catalog",
            help="Catalog the new prices apply over; alone, the new prices themselves "
            "(default: the old plan's catalog under --prices, else the new plan's catalog)",
        ),
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

    Price effect: the old plan's decisions priced by the model at the new prices, minus
    the old plan; plan effect: the new plan minus that (resolve splits the same way).
    The new prices are the new plan's own catalog and price files, or --prices (over the
    old plan's catalog, or --catalog), or --catalog alone.
    """

    def body() -> None:
        from solver.analyses.diff import diff_plans, prices_of_catalog
        from solver.analyses.resolve import diff_at_prices
        from solver.inputs.prices import apply_price_file
        from solver.outputs.markdown import diff_markdown
        from solver.outputs.text import diff_text
        from solver.plan import input_digests
        from solver.trust.planfile import load_plan, same_problem

        _check_format(format, "table", "json", "markdown")
        before, old_problem, old_catalog = load_plan(old, cache_dir=cache_dir())
        after, new_problem, new_catalog = load_plan(new, cache_dir=cache_dir())
        if before.problem != after.problem:
            raise ProcureError(
                f"the plans are for different problems ({before.problem!r} and "
                f"{after.problem!r}): a diff would compare unrelated things",
                file=str(new),
                fix="diff two plans of the same problem (a plan and its re-solve)",
            )
        notes = []
        related = same_problem(before, after)
        if related is False:
            notes.append(_different_problems(before.problem, old_problem, new_problem))
        if prices is not None:
            base = _load_catalog(catalog) if catalog is not None else old_catalog
            try:
                new_catalog = apply_price_file(
                    base,
                    prices,
                    fmt=prices_format,
                    provider=provider,
                    price_date=price_date,
                    max_factor=max_factor,
                    accept=accept_suspicious,
                ).catalog
            except ProcureError as exc:
                _blame(exc, {}, prices)
                raise
            over = "--catalog" if catalog is not None else "the old plan's catalog"
            source = f"--prices {prices.name} over {over}"
        elif catalog is not None:
            new_catalog = _load_catalog(catalog)
            source = f"the prices of --catalog {catalog}"
        else:
            source = "the new plan's own catalog and price files"
        assert after.inputs is not None  # load_plan refuses a plan without its inputs
        if (prices is not None or catalog is not None) and input_digests(
            old_problem, new_catalog
        ).catalog_sha256 != after.inputs.catalog_sha256:
            notes.append(
                "the new plan was solved at other prices than these: its total is at its own "
                "prices, so the plan effect also holds that difference"
            )
        try:
            diff = diff_at_prices(
                before, after, old_problem, new_catalog, price_source=source, notes=notes
            )
        except ProcureError as exc:  # the old problem does not compile at the new prices
            notes.append(f"the old plan could not be priced by the model at {source}: {exc}")
            diff = diff_plans(before, after, new_prices=prices_of_catalog(new_catalog), notes=notes)
        diff = _with_problems(diff, before, after, related)
        if format == "json":
            text = json.dumps(diff.model_dump(mode="json"), indent=2) + "\n"
        elif format == "markdown":
            text = diff_markdown(diff)
        else:
            text = diff_text(diff)
        inputs = [("old plan", old), ("new plan", new), *_price_inputs(prices)]
        inputs += catalog_inputs(catalog) if catalog is not None else []
        if diff.problem_warning and (out is not None or format == "json"):
            typer.echo(f"warning: {diff.problem_warning}", err=True)  # not at the text's top
        emit(text, out, force, inputs)

    _run(debug, body)
