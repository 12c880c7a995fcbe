"""``procure export``: purchase orders (CSV, XLSX) and FOCUS rows of a verified plan."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from solver.cli.common import (
    CatalogOpt,
    DebugOpt,
    ForceOpt,
    _check_format,
    _choices,
    _run,
    app,
    cache_dir,
    catalog_inputs,
)
from solver.errors import ProcureError
from solver.outputs.files import (
    check_not_inputs,
    check_output_dir,
    csv_text,
    money_rounded,
    write_files_together,
)


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
    focus_version: Annotated[
        str,
        typer.Option(
            "--focus-version",
            help="FOCUS version of the focus files: 1.3 (cost rows and the Contract "
            "Commitment dataset) or 1.2 (cost rows only)",
            **_choices("1.3", "1.2"),
        ),
    ] = "1.3",
    force: ForceOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Purchase orders per provider and for hardware (csv, xlsx), or FOCUS rows (focus: 1.3
    cost rows and the plan's commitments as the Contract Commitment dataset, or 1.2)."""

    def body() -> None:
        from datetime import date

        from solver.outputs.focus import focus_csv, focus_frame, validate_focus
        from solver.outputs.focus_contracts import contract_commitment_frame
        from solver.outputs.focus_validate import validate_contract_commitments
        from solver.outputs.orders import hardware_order, orders_combined, orders_csv, orders_xlsx
        from solver.trust.planfile import load_plan

        _check_format(format, "csv", "xlsx", "focus")
        if focus_version not in ("1.3", "1.2"):
            raise ProcureError(
                f"{focus_version!r} is not a FOCUS version procure writes",
                field="--focus-version",
                fix="use --focus-version 1.3 or --focus-version 1.2",
            )
        check_output_dir(out, force=force)
        the_plan, prob, cat = load_plan(
            plan, problem=problem, catalog=catalog, cache_dir=cache_dir()
        )
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
            frame = focus_frame(
                the_plan,
                prob,
                cat,
                day,
                billing_account_id=billing_account,
                focus_version=focus_version,
            )
            problems = validate_focus(frame)
            contracts = None
            if focus_version == "1.3":
                contracts = contract_commitment_frame(frame, lifecycle="Proposed")  # a proposal
                problems += validate_contract_commitments(contracts, frame)
            if problems:
                raise ProcureError(
                    "the FOCUS export does not conform: " + "; ".join(problems),
                    fix="this is a bug in procure: report it with the plan",
                )
            files["focus.csv"] = focus_csv(frame)
            if contracts is not None and not contracts.empty:
                files[CONTRACTS_FILE] = focus_csv(contracts)
        elif format == "xlsx":
            files["orders.xlsx"] = orders_xlsx(the_plan, cat, prob)
        elif by_provider:
            files.update(orders_csv(the_plan, cat, prob))
        else:
            files["orders.csv"] = csv_text(money_rounded(orders_combined(the_plan)))
            hw = hardware_order(the_plan, cat, prob)
            if not hw.empty:
                files["hardware.csv"] = csv_text(money_rounded(hw))
        kind = format if format != "csv" else ("csv" if by_provider else "csv-combined")
        stale, record, same_plan = _export_record(out, files, plan, the_plan, kind)
        files_and_record = {**files, MANIFEST: record}
        inputs = [("plan file", plan), ("problem file", problem), *catalog_inputs(catalog)]
        check_output_dir(out, [*files_and_record, *stale], force=force)
        check_not_inputs([("--out", out / n) for n in [*files_and_record, *stale]], inputs)
        if not files and not stale:
            typer.echo("nothing to order: the plan has no cloud rentals, reservations or purchases")
            return
        write_files_together(out, files_and_record, remove=stale)
        if files:
            typer.echo("wrote " + ", ".join(str(out / n) for n in files))
        else:
            typer.echo("nothing to order: the plan has no cloud rentals, reservations or purchases")
        if stale:
            removed = ", ".join(str(out / n) for n in stale)
            typer.echo(f"removed the files of {_whose(same_plan)}: {removed}")

    _run(debug, body)


def _whose(same_plan: bool) -> str:
    """Whose export the files a new export removed were, in words."""
    if same_plan:
        return "this plan's earlier export that this one no longer writes"
    return "an export of another plan"


#: the files ``export`` writes, in every format: orders per provider or combined, the
#: hardware order, the workbook and the FOCUS rows
EXPORT_FILE = re.compile(
    r"^(orders-.+\.csv|orders\.csv|hardware\.csv|orders\.xlsx|focus\.csv"
    r"|focus-contract-commitment\.csv)$"
)
#: FOCUS 1.3's Contract Commitment dataset of the plan (``--format focus``)
CONTRACTS_FILE = "focus-contract-commitment.csv"
#: the record of what the exports into a folder wrote, and of which plan
MANIFEST = "procure-export.json"


def _export_record(
    out: Path, files: dict[str, str | bytes], plan_path: Path, plan, kind: str
) -> tuple[list[str], str, bool]:
    """The files to remove with this export, the folder's new export record, and whether
    the folder's last export was of this same plan.

    A folder of orders holds the orders of one plan: files an earlier export of another
    plan wrote (the record says which) are removed with this export's publication, as one
    set; files of this plan in another format stay. A file named as an export's that no
    record names (an export from before the record, or a file put there by hand) is
    refused rather than guessed about.
    """
    import hashlib
    import json

    digest = hashlib.sha256(plan_path.read_bytes()).hexdigest()
    old: dict = {}
    where = out / MANIFEST
    if where.is_file():
        try:
            old = json.loads(where.read_text(encoding="utf-8"))
            recorded_files = {k: list(v) for k, v in old["files"].items()}
            old_digest = str(old["plan_sha256"])
        except (ValueError, KeyError, TypeError, AttributeError):
            raise ProcureError(
                "the folder's export record is not readable",
                file=str(where),
                fix="remove it and the order files beside it, or export into another folder",
            ) from None
    else:
        recorded_files, old_digest = {}, digest
    present = {p.name for p in out.iterdir()} if out.is_dir() else set()
    recorded = {name for names in recorded_files.values() for name in names}
    unrecorded = sorted(
        n for n in present if EXPORT_FILE.match(n) and n not in recorded and n not in files
    )
    if unrecorded:
        raise ProcureError(
            f"the folder holds {', '.join(unrecorded)}, which no export record names: it may "
            "order another plan, and would stay beside this plan's orders",
            file=str(out),
            field="--out",
            fix="remove those files or export into an empty folder",
        )
    if old_digest != digest:  # another plan's export: all of it goes
        stale_names, kept = recorded, {}
    else:  # this plan's: only what this format wrote before and writes no more
        stale_names = set(recorded_files.get(kind, []))
        kept = {k: v for k, v in recorded_files.items() if k != kind}
    stale = sorted(n for n in stale_names if n in present and n not in files)
    for names in kept.values():  # a file this format writes now is recorded once, here
        names[:] = [n for n in names if n not in files]
    record = {
        "plan_sha256": digest,
        "plan_file": str(plan_path.resolve()),
        "problem": plan.problem,
        "total_cost_usd": plan.total_cost_usd,
        "files": {**{k: v for k, v in kept.items() if v}, kind: sorted(files)},
    }
    return stale, json.dumps(record, indent=2, sort_keys=True) + "\n", old_digest == digest
