"""``procure export``: purchase orders (CSV, XLSX) and FOCUS rows of a verified plan."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from solver.cli.common import CatalogOpt, DebugOpt, ForceOpt, _check_format, _choices, _run, app
from solver.errors import ProcureError
from solver.outputs.files import check_output_dir, csv_text, write_files_together


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
