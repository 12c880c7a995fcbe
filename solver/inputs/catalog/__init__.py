"""Load and validate the catalog (catalogs/*.csv) into typed tables.

The catalog is six CSV files, one row per thing, units in the column names:

``accelerators.csv``
    one row per accelerator type (dense TFLOPS, memory, bandwidth, power, ...).
``offerings.csv``
    one row per cloud instance type in a region, prices per instance-hour.
``regions.csv``
    one row per (provider, region): residency zone, grid intensity, PUE.
``servers.csv`` and ``sites.csv``
    servers one can buy, and the sites that can host them.
``models.csv``
    model presets (shape of common open models).
``providers.csv`` (optional)
    one row per provider: tier (marketplace < neocloud < hyperscaler), SLA, data
    terms, hosts, source. When present, every offering's provider must be in it.
``exchange_rates.csv`` (optional)
    dated rates, US dollars per unit of a currency, each with its source. A price in
    another currency than USD (offerings' and servers' ``currency``) is converted to USD
    on load at its currency's latest rate; without a rate it is refused.

Every price carries its date, confidence and currency (:mod:`solver.inputs.provenance`).

:func:`load_catalog` refuses a broken catalog with one :class:`ProcureError` that
names the file, the line and the field.
"""

from __future__ import annotations

from solver.inputs.catalog.columns import SCHEMAS, header_names
from solver.inputs.catalog.loader import CACHED_CATALOGS, catalog_sha256, load_catalog
from solver.inputs.catalog.names import normalise_name, rank_model_presets
from solver.inputs.catalog.tables import (
    DEFAULT_CATALOG_DIR,
    TIERS,
    UNKNOWN_TIER,
    Catalog,
    ExchangeRate,
    availability_cap_basis,
    exchange_rate,
    tier_allowed,
    tier_rank,
)
from solver.inputs.catalog.views import accelerator_summary, offerings_view

__all__ = [
    "CACHED_CATALOGS",
    "DEFAULT_CATALOG_DIR",
    "SCHEMAS",
    "TIERS",
    "UNKNOWN_TIER",
    "Catalog",
    "ExchangeRate",
    "accelerator_summary",
    "availability_cap_basis",
    "catalog_sha256",
    "exchange_rate",
    "header_names",
    "load_catalog",
    "normalise_name",
    "offerings_view",
    "rank_model_presets",
    "tier_allowed",
    "tier_rank",
]
