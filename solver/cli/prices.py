"""``procure prices pull | list | history``: price snapshots from public
sources, kept in the workspace database with their date, and ``--prices snapshot:ID``
(:func:`snapshot_price_file`) for ``procure resolve`` and ``procure watch``;
``procure prices check PLAN``: the prices a plan rests on, ranked by money at risk, and a
quote request per provider."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from solver.cli.common import (
    CatalogOpt,
    DebugOpt,
    ForceOpt,
    SnapshotDbOpt,
    _check_format,
    _choices,
    _load_catalog,
    _run,
    app,
    cache_dir,
)
from solver.errors import ProcureError

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd

    from solver.analyses.price_check import CheckedPrice, PriceCheck
    from solver.inputs.price_bands import PriceBand

from solver.outputs.files import (
    check_not_inputs,
    check_output_dir,
    check_output_file,
    csv_text,
    write_atomic,
    write_files_together,
)

prices_app = typer.Typer(
    no_args_is_help=True,
    help="Price snapshots: pull from public sources, list, history; check a plan's prices.",
)
app.add_typer(prices_app, name="prices")

DbOpt = SnapshotDbOpt
#: ``procure prices pull`` stored a snapshot but held some of its prices for review (the
#: code ``procure watch`` gives when a plan line's price is held or not matched)
EXIT_PRICES_HELD = 5
#: seconds to wait for a --url response (the source's documented endpoints are in the
#: importers' module docstrings)
_FETCH_TIMEOUT_S = 60.0


def db_url(db: str | None) -> str:
    """The database URL: ``--db``, else the workspace file in the current folder."""
    from solver.web.store.db import DEFAULT_DB_FILE

    return db or f"sqlite:///{Path(DEFAULT_DB_FILE).resolve()}"


#: at most this many pages are read from one --url (Azure serves 1,000 records a page,
#: the Cloud Billing Catalog up to 5,000: Compute Engine's whole list is a few pages)
MAX_PAGES = 200


def _get(url: str) -> bytes:
    """A URL's response body (network use is only ever asked for by --url)."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=_FETCH_TIMEOUT_S) as response:  # noqa: S310
            return response.read()
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise ProcureError(
            f"cannot read {url}: {exc}",
            field="--url",
            fix="check the address and the network, or save the response and pass --from-file",
        ) from None


def _download(url: str, folder: Path, source: str = "") -> Path:
    """A URL's response saved to a file. For a source that serves pages (Azure Retail
    Prices, Cloud Billing Catalog) every page is read, following the API's next-page
    link or token, and saved as one response holding all their records."""
    import json

    from solver.inputs.importers.feeds import PAGED_RECORDS, merge_pages, next_page_url

    if not url.startswith(("https://", "http://")):
        raise ProcureError(f"not a web address: {url!r}", field="--url", fix="give https://...")
    target = folder / "response"
    if source not in PAGED_RECORDS:
        target.write_bytes(_get(url))
        return target
    pages: list[dict] = []
    seen: set[str] = set()
    page_url: str | None = url
    while page_url is not None:
        if page_url in seen or len(pages) >= MAX_PAGES:
            raise ProcureError(
                f"{url} gave more than {len(pages)} pages or a page twice ({page_url})",
                field="--url",
                fix="narrow the request (Azure: a $filter; GCP: one service), or save the "
                "pages and pass --from-file",
            )
        seen.add(page_url)
        try:
            page = json.loads(_get(page_url))
        except ValueError:
            page = None
        if not isinstance(page, dict):
            raise ProcureError(
                f"page {len(pages) + 1} of {url} is not a JSON object ({page_url})",
                field="--url",
                fix=f"give the {source} API's address (see procure prices pull --help)",
            )
        pages.append(page)
        page_url = next_page_url(source, page_url, page)
    target.write_text(json.dumps(merge_pages(source, pages)))
    return target


@prices_app.command("pull")
def pull_cmd(
    source: Annotated[
        str,
        typer.Option("--source", help="skypilot | azure-retail | aws-offer | gcp-billing"),
    ],
    from_file: Annotated[
        Path | None, typer.Option("--from-file", help="A saved response of the source")
    ] = None,
    url: Annotated[
        str | None,
        typer.Option(
            "--url",
            help="Read the source's response from this URL (Azure and GCP: every page)",
        ),
    ] = None,
    db: DbOpt = None,
    day: Annotated[
        str | None,
        typer.Option("--date", help="Day the prices are of, YYYY-MM-DD (default: today, UTC)"),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Also write the snapshot as a price CSV")
    ] = None,
    provider: Annotated[
        str | None,
        typer.Option(
            help="SkyPilot: the cloud the vms.csv is for (default: the folder of the file or URL)"
        ),
    ] = None,
    catalog: CatalogOpt = None,
    force: ForceOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Read current prices from a source into a dated snapshot, stored in the workspace
    database; report the rows that map to no catalog offering."""

    def body() -> None:
        import tempfile
        from datetime import UTC, datetime

        from solver.inputs.importers.feeds import check_snapshot_date, check_source, pull_prices
        from solver.inputs.price_holds import HELD_PREFIX
        from solver.web.store import open_store
        from solver.web.store.snapshots import save_snapshot, stored_references

        check_source(source)
        if (from_file is None) == (url is None):
            raise ProcureError(
                "give exactly one of --from-file and --url",
                field="--from-file/--url",
                fix="--from-file SAVED_RESPONSE (no network), or --url URL",
            )
        today = datetime.now(UTC).date()
        price_date = check_snapshot_date(day or today.isoformat(), today)
        if out is not None:
            check_output_file(out, force=force)
            if from_file is not None:
                check_not_inputs([("--out", out)], [("response file", from_file)])
        cat = _load_catalog(catalog)
        cloud = provider
        if source == "skypilot" and cloud is None and url is not None:
            cloud = str(url).rstrip("/").split("/")[-2].lower()  # SkyPilot: .../<cloud>/vms.csv
        store = open_store(db_url(db))
        refs = stored_references(store, price_date)
        with tempfile.TemporaryDirectory() as folder:
            path = from_file if from_file is not None else _download(str(url), Path(folder), source)
            pull = pull_prices(
                source, path, cat.offerings, price_date=price_date, provider=cloud, references=refs
            )
        if url is not None:
            pull = replace(pull, origin=str(url))
        snapshot_id = save_snapshot(store, pull, record=_audit_pull(pull))
        mapped = int(pull.rows["in_catalog"].sum())
        typer.echo(
            f"snapshot {snapshot_id}: {len(pull.rows)} prices from {source} of {price_date} "
            f"({mapped} of catalog offerings) in {store.label}"
        )
        for r in pull.unmapped.itertuples(index=False):
            if str(r.reason).startswith(HELD_PREFIX):
                continue  # listed below
            where = "/".join(p for p in (r.provider, r.region) if p)
            typer.echo(f"  not mapped: {where} {r.what} ({r.rows} rows): {r.reason}")
        for why, n in sorted(pull.skipped.items()):
            typer.echo(f"  skipped: {why} ({n} rows)")
        for r in pull.held.itertuples(index=False):
            typer.echo(f"  held for review, not stored: {r.offering_id} {r.mode}: {r.reason}")
        if len(pull.held):
            typer.echo(
                f"{len(pull.held)} price(s) held for review (exit {EXIT_PRICES_HELD}): check "
                "them against the source; the snapshot stores the others"
            )
            outcome["code"] = EXIT_PRICES_HELD
        if out is not None:
            write_atomic(out, csv_text(pull.price_csv()))
            typer.echo(f"wrote {out}")

    outcome: dict[str, int] = {}
    _run(debug, body)
    if outcome.get("code"):
        raise typer.Exit(outcome["code"])


@prices_app.command("list")
def list_cmd(db: DbOpt = None, debug: DebugOpt = False) -> None:
    """The stored price snapshots, oldest price date first."""

    def body() -> None:
        import json

        from solver.inputs.price_holds import HELD_PREFIX
        from solver.web.store import open_store
        from solver.web.store.snapshots import list_snapshots

        store = open_store(db_url(db))
        snapshots = list_snapshots(store)
        if not snapshots:
            typer.echo(f"no price snapshots in {store.label} (procure prices pull adds one)")
            return
        typer.echo(
            f"{'id':>4}  {'date':10}  {'source':12}  {'prices':>6}  {'unmapped':>8}  "
            f"{'held':>4}  origin"
        )
        for s in snapshots:
            listed = json.loads(s.unmapped_json)
            held = sum(str(r.get("reason", "")).startswith(HELD_PREFIX) for r in listed)
            typer.echo(
                f"{s.id:>4}  {s.price_date:10}  {s.source:12}  {s.row_count:>6}  "
                f"{len(listed) - held:>8}  {held:>4}  {s.origin}"
            )

    _run(debug, body)


@prices_app.command("history")
def history_cmd(
    offering: Annotated[str, typer.Argument(help="Offering id: provider/region/instance_type")],
    db: DbOpt = None,
    debug: DebugOpt = False,
) -> None:
    """An offering's prices in every stored snapshot, oldest first (USD per instance-hour)."""

    def body() -> None:
        from solver.web.store import open_store
        from solver.web.store.snapshots import price_history

        store = open_store(db_url(db))
        history = price_history(store, offering)
        if history.empty:
            raise ProcureError(
                f"no stored snapshot prices {offering}",
                field="OFFERING",
                fix="give an offering id as provider/region/instance_type (procure catalog "
                "list shows them), or pull a snapshot that has it",
            )
        typer.echo(f"price history of {offering} (USD per instance-hour)")
        typer.echo(f"{'date':10}  {'snapshot':>8}  {'source':12}  {'mode':12}  {'price':>12}")
        for r in history.itertuples(index=False):
            typer.echo(
                f"{r.price_date:10}  {r.snapshot_id:>8}  {r.source:12}  {r.mode:12}  "
                f"{r.price_usd_per_hour:>12,.4f}"
            )

    _run(debug, body)


def snapshot_price_file(prices: Path, db: str | None) -> Path:
    """``--prices``: a price file as given, or for ``snapshot:latest`` / ``snapshot:ID`` the
    stored snapshot's rows that named a catalog offering when pulled, written as our price
    CSV beside the database
    (``price-snapshots/snapshot-ID.csv``; a snapshot never changes, so the file a re-solved
    plan records stays true). Other paths are returned unchanged."""
    text = str(prices)
    # solver.web.store.snapshots.SNAPSHOT_PREFIX, not imported: a file needs no database
    if not text.startswith("snapshot:"):
        return prices
    from solver.inputs.importers.feeds import price_csv_of
    from solver.web.store import open_store
    from solver.web.store.snapshots import find_snapshot, snapshot_rows

    store = open_store(db_url(db))
    snap = find_snapshot(store, text)
    rows = snapshot_rows(store, snap.id)
    database = (
        store.engine.url.database if store.engine.url.get_backend_name() == "sqlite" else None
    )
    folder = (Path(database).resolve().parent if database else Path.cwd()) / "price-snapshots"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"snapshot-{snap.id}.csv"
    write_atomic(path, csv_text(price_csv_of(rows)))
    return path


def snapshot_held(prices: Path, db: str | None) -> pd.DataFrame:
    """For ``--prices snapshot:ID``, the prices the pull held for review (not in the
    snapshot's price file): ``offering_id, mode, price, reason``; empty for a file."""
    from solver.inputs.price_holds import held_from_listed

    if not str(prices).startswith("snapshot:"):
        return held_from_listed("[]")
    from solver.web.store import open_store
    from solver.web.store.snapshots import find_snapshot

    return held_from_listed(find_snapshot(open_store(db_url(db)), str(prices)).unmapped_json)


def _audit_pull(pull):
    """The audit entry of a stored snapshot (``price_snapshot.add`` by ``cli:<login>``, the
    digest of its prices), written in the snapshot's own transaction."""
    import getpass

    from solver.web import audit

    rows = pull.rows[["offering_id", "mode", "price"]].astype(str).to_dict("records")
    after = {"source": pull.source, "price_date": str(pull.price_date), "rows": rows}

    def record(session, snapshot_id: int) -> None:
        entity = f"price snapshot {snapshot_id}"
        audit.record(session, f"cli:{getpass.getuser()}", "price_snapshot.add", entity, None, after)

    return record


@prices_app.command("check")
def check_cmd(
    plan: Annotated[Path, typer.Argument(help="A plan (solve --format json)")],
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Folder for the quote requests (quote-request-<provider>.csv)"),
    ] = None,
    top: Annotated[
        int,
        typer.Option("--top", help="List (and request quotes for) the N prices most at risk"),
    ] = 10,
    format: Annotated[
        str, typer.Option("--format", help="Output format", **_choices("table", "json"))
    ] = "table",
    problem: Annotated[
        Path | None, typer.Option(help="Problem YAML of the plan (default: the plan's own)")
    ] = None,
    catalog: CatalogOpt = None,
    force: ForceOpt = False,
    debug: DebugOpt = False,
) -> None:
    """The prices the plan rests on, ranked by the money at risk if each were at the top of
    its confidence band (a fixed-plan re-pricing), and with --out a quote request per
    provider in the quotes file format that solve --quotes reads once filled in."""

    def body() -> None:
        from solver.analyses.price_check import check_prices
        from solver.outputs.price_check_text import price_check_json, price_check_text
        from solver.trust.planfile import load_plan

        _check_format(format, "table", "json")
        if top < 1:
            raise ProcureError(
                f"--top is {top}; it must be 1 or more", field="--top", fix="e.g. --top 10"
            )
        if out is not None:
            _check_out_folder(out, force)
        the_plan, prob, cat = load_plan(
            plan, problem=problem, catalog=catalog, cache_dir=cache_dir()
        )
        bands, bands_file = _price_bands(cat.directory)
        check = check_prices(the_plan, prob, cat, bands)
        shown = check.prices[:top]
        written: list[str] = []
        if out is not None:
            written = _write_requests(out, plan, problem, catalog, check, shown, force)
        if format == "json":
            typer.echo(price_check_json(check, shown, written), nl=False)
            return
        typer.echo(price_check_text(check, shown))
        typer.echo(f"price bands: {bands_file}")
        for name in written:
            typer.echo(f"wrote {name}")
        if out is None and any(p.to_confirm for p in shown):
            typer.echo("pass --out FOLDER to write a quote request per provider")

    _run(debug, body)


def _check_out_folder(out: Path, force: bool) -> None:
    """Refuse an --out that is not a folder (or absent), or that cannot be looked at."""
    try:
        check_output_dir(out, force=force)
    except OSError as exc:  # a file on the way (NotADirectoryError), no permission, ...
        raise ProcureError(
            f"cannot use {out} as the folder for the quote requests: {exc.strerror or exc}",
            file=str(out),
            field="--out",
            fix="choose a folder you can write to (or a path whose parent folders exist as "
            "folders)",
        ) from None


def _price_bands(directory: str | Path) -> tuple[dict[str, PriceBand], str]:
    """The price bands the plan's catalog folder gives (its own ``price_bands.csv``, else
    the shipped one), and the file they come from, in words."""
    from solver.inputs.catalog import DEFAULT_CATALOG_DIR
    from solver.inputs.price_bands import PRICE_BANDS_FILE, load_price_bands

    own = Path(directory) / PRICE_BANDS_FILE
    if own.is_file():
        return load_price_bands(directory), str(own)
    return load_price_bands(DEFAULT_CATALOG_DIR), (
        f"the shipped {PRICE_BANDS_FILE} (the plan's catalog folder {directory} has none)"
    )


def _write_requests(
    out: Path,
    plan: Path,
    problem: Path | None,
    catalog: Path | None,
    check: PriceCheck,
    shown: Sequence[CheckedPrice],
    force: bool,
) -> list[str]:
    """Write the quote requests of ``shown`` into ``out``, all or none; a request file
    already there with other content (filled in, or of another plan) is refused, not
    replaced. Returns the paths written."""
    import hashlib

    from solver.cli.common import catalog_inputs
    from solver.outputs.quote_requests import quote_requests

    digest = hashlib.sha256(plan.read_bytes()).hexdigest()
    files: dict[str, str | bytes] = {}
    files |= quote_requests(check, shown, f"plan file {plan.name} (sha256 {digest[:16]})")
    check_output_dir(out, list(files), force=force)
    inputs = [("plan file", plan), ("problem file", problem), *catalog_inputs(catalog)]
    check_not_inputs([("--out", out / name) for name in files], inputs)
    for name, text in files.items():
        target = out / name
        if target.is_file() and target.read_bytes() != str(text).encode("utf-8"):
            raise ProcureError(
                "the folder already holds this quote request with other content (filled in, "
                "or for another plan); procure does not replace it",
                file=str(target),
                field="--out",
                fix="move the file away (keep a filled-in request: it is your quotes file), "
                "or write into another folder",
            )
    try:
        write_files_together(out, files)
    except OSError as exc:
        raise ProcureError(
            f"cannot write the quote requests: {exc.strerror or exc}",
            file=str(out),
            field="--out",
            fix="choose a folder you can write to (--out FOLDER)",
        ) from None
    return [str(out / name) for name in files]
