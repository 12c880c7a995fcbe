"""``procure catalog validate | list | summary | show | import | commitments`` and
``procure schema``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from solver.cli.common import (
    CatalogOpt,
    DebugOpt,
    ForceOpt,
    _choices,
    _load_catalog,
    _run,
    app,
    catalog_app,
    price_day,
)
from solver.errors import ProcureError
from solver.outputs.files import check_not_inputs, check_output_file, csv_text, write_atomic


@catalog_app.command("validate")
def catalog_validate(
    catalog: CatalogOpt = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Fail (exit 2) when an offering's price date is unknown or its currency "
            "is assumed",
        ),
    ] = False,
    debug: DebugOpt = False,
) -> None:
    """Validate every catalog file; print the counts, the offerings whose price date
    is unknown or whose currency no source states (by file, line and field), and the
    offerings priced more than 2x away from their accelerator's rental index
    (market_index.csv; flagged, never refused, --strict included)."""

    def body() -> None:
        from solver.inputs.catalog.dating import dating_lines, dating_report, unsettled_error
        from solver.inputs.market_index import market_lines

        cat = _load_catalog(catalog)
        counts = ", ".join(f"{v} {k}" for k, v in cat.counts().items())
        typer.echo(f"catalog {cat.directory} is valid: {counts}")
        report = dating_report(cat.offerings)
        path = str(Path(cat.directory) / "offerings.csv")
        for line in dating_lines(report, path):
            typer.echo(line)
        for line in market_lines(cat.offerings, cat.market_index or {}, path):
            typer.echo(line)
        if strict and (report.unknown_dates or report.assumed_currencies):
            raise unsettled_error(report, path)

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
            "models": (
                cat.models,
                [
                    "model_id",
                    "params_b",
                    "active_params_b",
                    "experts",
                    "experts_active",
                    "layers",
                    "kv_heads",
                ],
            ),
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
    price_date: Annotated[
        str,
        typer.Option(help="Day the prices were observed (YYYY-MM-DD), or unknown", **price_day()),
    ] = "unknown",
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
            check_not_inputs([("--out", out)], [("SkyPilot file", file)])
            write_atomic(out, csv_text(result.offerings))
            typer.echo(f"wrote {out}")

    _run(debug, body)


COMMITMENT_FORMATS = ("aws-ec2", "aws-savings-plan", "azure-retail", "gcp-billing")


@catalog_app.command("commitments")
def catalog_commitments(
    file: Annotated[Path, typer.Argument(help="A provider's price file (JSON)")],
    format: Annotated[
        str,
        typer.Option(
            "--format",
            help="aws-ec2 (EC2 offer file or GetProducts record: on-demand and Reserved "
            "Instances), aws-savings-plan (Savings Plans offer file), azure-retail (Retail "
            "Prices API response), gcp-billing (Cloud Billing Catalog SKUs)",
        ),
    ],
    catalog: CatalogOpt = None,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Write the reserved prices as rows of scripts/commitment_prices.csv (to "
            "append there; scripts/build_offerings.py applies them to the catalog)"
        ),
    ] = None,
    source_url: Annotated[
        str, typer.Option(help="Where the file was read (cited in --out's rows)")
    ] = "",
    force: ForceOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Read committed prices (reservations, savings plans, committed use) from a
    provider's price file; say which name the catalog's offerings and print the rates a
    problem's savings_plans takes."""

    def body() -> None:
        from solver.inputs.importers.committed import commitment_price_rows, offering_rates

        if format not in COMMITMENT_FORMATS:
            raise ProcureError(
                f"unknown format {format!r}",
                field="--format",
                fix=f"use one of {', '.join(COMMITMENT_FORMATS)}",
            )
        rates = _read_commitments(file, format)
        cat = _load_catalog(catalog)
        typer.echo(f"read {len(rates)} prices from {file}")
        for r in rates.itertuples(index=False):
            what = r.instance_type or r.resource
            term = f"{r.term_years:g}y " if r.term_years else ""
            pay = f" {r.payment_option}" if r.payment_option else ""
            plan = f" {r.plan_type}" if r.plan_type else ""
            typer.echo(
                f"  {r.kind} {term}{what} in {r.region}{plan}{pay}: "
                f"${r.usd_per_hour:.6g}/{r.unit} ({r.price_date})"
            )
        groups = rates[rates["kind"] == "savings_plan"][["provider", "term_years"]]
        for provider, years in sorted(set(map(tuple, groups.to_numpy()))):
            found = offering_rates(
                rates[rates["provider"] == provider],
                cat.offerings,
                kind="savings_plan",
                term_years=float(years),
            )
            typer.echo(f"savings plan {provider} {years:g}y: {len(found)} catalog offerings")
            if found:
                typer.echo("savings_plans:")
                typer.echo(f"  - {{provider: {provider}, term: {years:g}y, source: {file.name}}}")
                typer.echo("    rates:")
                for offering, usd in found.items():
                    typer.echo(f"      {offering}: {usd:.6g}")
        if out is not None:
            check_output_file(out, force=force)
            check_not_inputs([("--out", out)], [("price file", file)])
            rows = commitment_price_rows(rates, source_url or str(file))
            write_atomic(out, csv_text(rows))
            typer.echo(f"wrote {len(rows)} reserved prices to {out}")

    _run(debug, body)


def _read_commitments(file: Path, format: str):
    from solver.inputs.importers import aws_prices, azure_retail, gcp_billing

    readers = {
        "aws-ec2": aws_prices.read_aws_ec2_offer,
        "aws-savings-plan": aws_prices.read_aws_savings_plan_offer,
        "azure-retail": azure_retail.read_azure_retail_prices,
        "gcp-billing": gcp_billing.read_gcp_billing_skus,
    }
    return readers[format](file)


@app.command()
def schema() -> None:
    """Print the JSON Schema of problem files."""
    from solver.inputs.problem import Problem

    typer.echo(json.dumps(Problem.model_json_schema(), indent=2))
