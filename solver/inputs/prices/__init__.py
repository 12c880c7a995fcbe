"""Price updates: read new prices and apply them over a catalog, reporting what was not taken.

Three sources are understood (:func:`read_price_update` tells them apart):

``price CSV`` (ours)
    one row per price: ``provider, region, offering, mode, price, date``.
    ``offering`` is an instance type (with ``provider`` and ``region``) or a
    whole offering id (``aws/us-east-1/p5.48xlarge``). ``mode`` is
    ``on_demand | spot | reserved_1y | reserved_3y`` (price in USD per
    instance-hour) or ``owned`` (``offering`` is a server id, price in USD of
    capex per server). ``date`` is when the price was read (optional).
``a whole catalog``
    a folder with the six catalog CSVs (validated by
    :func:`solver.inputs.catalog.load_catalog`), or just an ``offerings.csv``: its four
    price columns, and for a folder the servers' ``capex_usd``.
``SkyPilot vms.csv``
    read by :func:`solver.inputs.importers.skypilot.read_skypilot_vms` (on-demand and
    spot prices; SkyPilot has no reserved prices).

:func:`apply_prices` returns a new :class:`~solver.inputs.catalog.Catalog` and a
:class:`PriceReport`, one row per price considered, with a ``status``:

``changed`` / ``new_mode``
    applied (``new_mode``: the catalog had no price in that mode).
``derived``
    a reserved price the update does not give, moved by the same factor as
    the offering's on-demand price (the catalog's discount is kept: its
    reserved prices are stated discounts off on-demand, catalogs/SOURCES.md).
``unchanged``
    the same price (within 1e-9, relative).
``suspicious``
    the price moves by more than ``max_factor`` either way (new/old above
    ``max_factor`` or below ``1/max_factor``): **not applied** unless
    ``accept_suspicious``; a typo (an hourly price given per month, a missing
    decimal point) should not move a plan silently.
``unknown``
    the offering (or server) is not in the catalog: not applied (a whole
    catalog or a SkyPilot file may add it with ``add_new``: status ``added``).
``inconsistent``
    after the update a discounted mode (spot, reserved) would cost more than
    on-demand: **none** of that offering's prices are applied.
``missing``
    (catalog and SkyPilot sources only) an offering of a provider the update
    covers that the update does not mention: kept at its old price.

A price the update leaves empty means "no information": the old price is kept.
Withdrawing a mode or an offering is an edit to ``catalogs/``, not a price update.

An applied price brings its provenance: its date (``YYYY-MM-DD``, else
``unknown``), its source (the file and line) and its confidence: our CSV's optional
``confidence`` column (``unverified`` when absent: nothing says more), a catalog's own
``price_confidence``, or ``third_party`` for a SkyPilot file. Every update is in USD.
"""

from __future__ import annotations

from solver.inputs.prices.applying import apply_prices
from solver.inputs.prices.price_file import (
    PRICE_FILE_OPTIONS,
    apply_price_file,
    price_file_entry,
)
from solver.inputs.prices.reading import (
    detect_format,
    read_catalog_prices,
    read_price_csv,
    read_price_update,
    read_skypilot_prices,
)
from solver.inputs.prices.update import (
    APPLIED_STATUSES,
    DEFAULT_MAX_FACTOR,
    OWNED,
    PRICE_COLUMNS,
    PriceReport,
    PriceUpdate,
    Repriced,
    isnan,
)

__all__ = [
    "APPLIED_STATUSES",
    "DEFAULT_MAX_FACTOR",
    "OWNED",
    "PRICE_COLUMNS",
    "PRICE_FILE_OPTIONS",
    "PriceReport",
    "PriceUpdate",
    "Repriced",
    "apply_price_file",
    "apply_prices",
    "detect_format",
    "isnan",
    "price_file_entry",
    "read_catalog_prices",
    "read_price_csv",
    "read_price_update",
    "read_skypilot_prices",
]
