"""A price file applied over a catalog in one call, with the options a re-solved plan
records of it (``inputs.prices``), so that the plan can be re-verified by applying it
again."""

from __future__ import annotations

from pathlib import Path

from solver.inputs.catalog import Catalog
from solver.inputs.prices.applying import apply_prices
from solver.inputs.prices.reading import read_price_update
from solver.inputs.prices.update import DEFAULT_MAX_FACTOR, Repriced

#: the keys of a price-trail entry (a plan's ``inputs.prices``) that are the parameters of
#: :func:`apply_price_file`: an entry is applied again as ``apply_price_file(**entry)``
PRICE_FILE_OPTIONS = (
    "prices",
    "fmt",
    "provider",
    "price_date",
    "max_factor",
    "accept",
    "add_new",
)


def apply_price_file(
    cat: Catalog,
    prices: Path,
    *,
    fmt: str = "auto",
    provider: str | None = None,
    price_date: str | None = None,
    max_factor: float = DEFAULT_MAX_FACTOR,
    accept: bool = False,
    add_new: bool = False,
) -> Repriced:
    """The catalog with a price file applied, and the report of what moved.

    Parameters
    ----------
    cat
        The catalog the prices move.
    prices
        A price CSV, a catalog folder or offerings.csv, or a SkyPilot vms.csv.
    fmt
        ``auto`` (told by the file's header), ``csv``, ``catalog`` or ``skypilot``.
    provider
        The cloud a SkyPilot file is for (default: the name of its folder).
    price_date
        The day the prices were read, ``YYYY-MM-DD``, for rows that state none.
    max_factor
        A price moving by more than this factor either way is held, not applied...
    accept
        ...unless this is set (``--accept-suspicious``).
    add_new
        Add offerings the catalog does not have (catalog and SkyPilot files).

    Raises
    ------
    ProcureError
        The file is not a price file procure reads, or a price in it is refused
        (:func:`~solver.inputs.prices.reading.read_price_update`,
        :func:`~solver.inputs.prices.applying.apply_prices`).
    """
    update = read_price_update(
        prices,
        format=fmt,
        provider=provider,
        price_date=price_date,
        known_providers=set(cat.offerings["provider"]),
        check_dates=True,
    )
    return apply_prices(
        cat, update, max_factor=max_factor, accept_suspicious=accept, add_new=add_new
    )


def price_file_entry(
    prices: Path,
    *,
    fmt: str,
    provider: str | None,
    price_date: str | None,
    max_factor: float,
    accept: bool,
    add_new: bool,
) -> dict[str, object]:
    """How a price file was applied, as a re-solved plan records it (an entry of
    ``inputs.prices``, keys :data:`PRICE_FILE_OPTIONS`, the file's absolute path)."""
    return {
        "prices": str(Path(prices).resolve()),
        "fmt": fmt,
        "provider": provider,
        "price_date": price_date,
        "max_factor": max_factor,
        "accept": accept,
        "add_new": add_new,
    }
