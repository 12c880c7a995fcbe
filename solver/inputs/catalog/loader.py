"""Loading a catalog folder: every file read and checked (:func:`load_catalog`), the
validated catalog kept in a cache folder between runs, and its digest."""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from solver.errors import ProcureError
from solver.inputs import market_index as market_index_module
from solver.inputs import provenance as provenance_module
from solver.inputs import tables as tables_module
from solver.inputs.catalog.capacity_blocks import read_capacity_blocks
from solver.inputs.catalog.checks import (
    check_models,
    check_provenance,
    check_reference,
    in_usd,
    memory_in_decimal_gb,
    read_exchange_rates,
    reserved_as_on_demand,
)
from solver.inputs.catalog.columns import OPTIONAL_FILES, SCHEMAS, read_table
from solver.inputs.catalog.tables import DEFAULT_CATALOG_DIR, TIERS, Catalog
from solver.inputs.catalog.zones import check_zones
from solver.inputs.market_index import load_market_index
from solver.physics import shapes


def load_catalog(
    directory: str | Path | None = None, *, cache_dir: str | Path | None = None
) -> Catalog:
    """Load and validate every catalog file in ``directory``.

    Parameters
    ----------
    directory
        Folder with the six CSV files; default the catalogs/ shipped with the repo.
    cache_dir
        Where to keep the validated catalog between runs (the CLI passes the user's
        cache folder). A cached copy is used only when every CSV in ``directory`` and
        the code that reads them are byte for byte those it was made from, so it is
        the catalog this function would return; reading it is much faster than parsing
        and checking the files. None: no cache.

    Raises
    ------
    ProcureError
        Naming the file, line and column of the first problem found.
    """
    directory = Path(directory) if directory is not None else DEFAULT_CATALOG_DIR
    if not directory.is_dir():
        raise ProcureError(
            "catalog folder not found", file=str(directory), fix="pass --catalog DIR with the CSVs"
        )
    if cache_dir is None:
        return _load_catalog(directory)
    cache = Path(cache_dir) / f"catalog-{_catalog_key(directory)}.pickle"
    try:
        with cache.open("rb") as handle:
            cached = pickle.load(handle)
        if isinstance(cached, Catalog) and cached.directory == str(directory):
            return cached
    except Exception:  # noqa: BLE001 - a missing, damaged or foreign copy: parse the files
        pass
    catalog = _load_catalog(directory)
    catalog_sha256(catalog)  # kept with it: a cached catalog needs no digest either
    _store(cache, catalog)
    return catalog


def catalog_sha256(catalog: Catalog) -> str:
    """SHA-256 of the catalog's tables as CSV in a fixed order: the same figures give the
    same digest wherever the folder is (a plan's ``inputs.catalog_sha256``).

    Worked out once per catalog and kept on it (and in its cached copy): writing eight
    tables as CSV is not free. A catalog's tables are never changed in place; a
    changed catalog is a new object (``dataclasses.replace``), which starts without it.
    """
    known = catalog.__dict__.get("_sha256")
    if known is not None:
        return known
    tables = [
        catalog.accelerators,
        catalog.offerings,
        catalog.regions,
        catalog.servers,
        catalog.sites,
        catalog.models,
        catalog.providers if catalog.providers is not None else pd.DataFrame(),
        catalog.exchange_rates if catalog.exchange_rates is not None else pd.DataFrame(),
    ]
    digest = hashlib.sha256()
    for table in tables:
        digest.update(table.to_csv(lineterminator="\n", float_format="%.12g").encode())
        digest.update(b"\x00")
    if catalog.price_bands:  # the guard's bands decide plans as prices do
        bands = sorted(catalog.price_bands.items())
        digest.update(("price_bands:" + repr(bands)).encode())
    object.__setattr__(catalog, "_sha256", digest.hexdigest())  # frozen: set once, here
    return catalog.__dict__["_sha256"]


CACHED_CATALOGS = 8  # the most recent catalogs kept in a cache folder


def _catalog_key(directory: Path) -> str:
    """A digest of every CSV in ``directory`` (name and bytes), of the code that reads
    them and of the pandas that holds them: equal keys mean an equal catalog."""
    digest = hashlib.sha256(f"{sys.version}|{pd.__version__}|{directory}".encode())
    readers = sorted(Path(__file__).parent.glob("*.py"))  # every module of this package
    readers += [
        Path(str(m.__file__))
        for m in (tables_module, provenance_module, shapes, market_index_module)
    ]
    for module in readers:
        digest.update(module.read_bytes())
    for path in sorted(directory.glob("*.csv")):
        digest.update(path.name.encode() + b"\x00" + path.read_bytes() + b"\x00")
    shipped = DEFAULT_CATALOG_DIR / "price_bands.csv"  # read when the folder has none
    if shipped.is_file():
        digest.update(b"shipped\x00" + shipped.read_bytes())
    return digest.hexdigest()[:32]


def _store(cache: Path, catalog: Catalog) -> None:
    """Write ``catalog`` to ``cache`` whole (a temporary file renamed into place) and
    keep the :data:`CACHED_CATALOGS` newest copies; a cache that cannot be written is
    skipped, never an error."""
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        temporary = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
        temporary.write_bytes(pickle.dumps(catalog, protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(temporary, cache)
        copies = sorted(
            cache.parent.glob("catalog-*.pickle"), key=lambda p: p.stat().st_mtime, reverse=True
        )
        for old in copies[CACHED_CATALOGS:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass


def _load_catalog(directory: Path) -> Catalog:
    """Parse and check the catalog files in ``directory`` (see :func:`load_catalog`)."""
    tables = {
        file: read_table(directory, file)
        for file in SCHEMAS
        if file not in OPTIONAL_FILES or (directory / file).is_file()
    }
    acc = memory_in_decimal_gb(tables["accelerators.csv"], directory / "accelerators.csv")
    rates = read_exchange_rates(directory, tables.get("exchange_rates.csv"))
    off, srv = tables["offerings.csv"], tables["servers.csv"]
    check_provenance(off, directory / "offerings.csv", ("", "reserved_"))
    check_provenance(srv, directory / "servers.csv", ("",))
    off = in_usd(reserved_as_on_demand(off), "offerings.csv", directory, rates)
    srv = in_usd(srv, "servers.csv", directory, rates)
    reg = tables["regions.csv"]
    sites = tables["sites.csv"]
    check_reference(
        off,
        "accelerator_id",
        pd.Index(acc["accelerator_id"]),
        directory / "offerings.csv",
        "accelerators.csv",
    )
    check_reference(
        srv,
        "accelerator_id",
        pd.Index(acc["accelerator_id"]),
        directory / "servers.csv",
        "accelerators.csv",
    )
    reg_keys = reg["provider"] + "/" + reg["region"]
    dup = reg_keys[reg_keys.duplicated()]
    if not dup.empty:
        raise ProcureError(
            f"duplicate provider/region {dup.iloc[0]!r}",
            file=str(directory / "regions.csv"),
            field=f"line {int(dup.index[0]) + 2}",
            fix="each provider/region must appear once",
        )
    off_keys = (off["provider"] + "/" + off["region"]).rename("provider_region")
    check_reference(
        off.assign(provider_region=off_keys),
        "provider_region",
        pd.Index(reg_keys),
        directory / "offerings.csv",
        "regions.csv",
    )
    # Prices must be ordered: a discount is never dearer than on-demand.
    for column in ("spot_usd_per_hour", "reserved_1y_usd_per_hour", "reserved_3y_usd_per_hour"):
        dearer = off[column] > off["on_demand_usd_per_hour"] * 1.0001
        if dearer.any():
            idx = int(np.flatnonzero(dearer.fillna(False).to_numpy())[0])
            raise ProcureError(
                f"{column} is above the on-demand price",
                file=str(directory / "offerings.csv"),
                field=f"line {idx + 2}, {column}",
                fix="check the price; discounted modes cost less than on-demand",
            )
    check_models(tables["models.csv"], directory / "models.csv")
    prov = tables.get("providers.csv")
    if prov is not None:
        bad_tier = ~prov["tier"].isin(TIERS)
        if bad_tier.any():
            idx = int(np.flatnonzero(bad_tier.to_numpy())[0])
            raise ProcureError(
                f"unknown tier {prov['tier'].iloc[idx]!r} for provider "
                f"{prov['provider'].iloc[idx]!r}",
                file=str(directory / "providers.csv"),
                field=f"line {idx + 2}, tier",
                fix=f"write one of: {', '.join(TIERS)}",
            )
        check_reference(
            off,
            "provider",
            pd.Index(prov["provider"]),
            directory / "offerings.csv",
            "providers.csv",
        )
    return Catalog(
        accelerators=acc.set_index("accelerator_id", drop=False),
        offerings=off.set_index("offering_id", drop=False),
        regions=reg.set_index(["provider", "region"], drop=False),
        servers=srv.set_index("server_id", drop=False),
        sites=sites.set_index("site_id", drop=False),
        models=tables["models.csv"].set_index("model_id", drop=False),
        directory=str(directory),
        providers=prov.set_index("provider", drop=False) if prov is not None else None,
        exchange_rates=rates,
        capacity_blocks=read_capacity_blocks(directory, off.set_index("offering_id"), rates),
        zones=_zones(tables.get("zones.csv"), reg, directory),
        price_bands=_price_bands(directory),
        market_index=load_market_index(directory, set(acc["accelerator_id"])),
    )


def _price_bands(directory: Path) -> dict[str, float]:
    """Confidence level -> band fraction: the folder's own price_bands.csv, else the
    shipped one (:mod:`solver.inputs.price_bands`)."""
    from solver.inputs.price_bands import PRICE_BANDS_FILE, load_price_bands

    own = (directory / PRICE_BANDS_FILE).is_file()
    bands = load_price_bands(directory if own else DEFAULT_CATALOG_DIR)
    return {level: band.band_fraction for level, band in bands.items()}


def _zones(
    zones: pd.DataFrame | None, regions: pd.DataFrame, directory: Path
) -> pd.DataFrame | None:
    """zones.csv checked against regions.csv (:func:`check_zones`); None without it."""
    return None if zones is None else check_zones(zones, regions, directory / "zones.csv")
