"""The validated catalog (:class:`Catalog`, one table per file), its exchange rates, and
the provider tiers and availability-cap bases read from it."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from solver.errors import ProcureError
from solver.inputs.catalog.names import rank_model_presets, resolve_name
from solver.inputs.market_index import MarketLevel
from solver.inputs.provenance import BASE_CURRENCY


def _shipped_catalog_dir() -> Path:
    """The shipped catalog: ``catalogs/`` beside the package in a source checkout (or an
    editable install), else where a wheel installs it (``<prefix>/share/procure/catalogs``,
    pyproject's data-files)."""
    source = Path(__file__).resolve().parents[3] / "catalogs"
    if (source / "offerings.csv").is_file():
        return source
    for prefix in (sys.prefix, sys.base_prefix):
        installed = Path(prefix) / "share" / "procure" / "catalogs"
        if (installed / "offerings.csv").is_file():
            return installed
    return source  # absent: load_catalog says which file is missing


DEFAULT_CATALOG_DIR = _shipped_catalog_dir()


#: Provider tiers, lowest first: a marketplace of third-party hosts, a neocloud
#: running its own datacenters, a hyperscaler. ``min_tier`` admits its tier and those above.
TIERS: tuple[str, ...] = ("marketplace", "neocloud", "hyperscaler")
UNKNOWN_TIER = "unknown"

# Availability caps (offerings.csv ``availability_cap_instances``) are assumptions: no
# provider publishes how many instances one buyer can get, so the importer takes 16 (64)
# instances of an 8-accelerator (smaller) size at a hyperscaler, 8 (32) at a neocloud and
# 4 (16) elsewhere (solver.inputs.importers.skypilot.default_availability_cap). Where the
# catalog counts listings (Vast: one per host offering the type, catalogs/SOURCES.md) the
# cap is a listed figure. A cap the problem gives (availability_caps) is the problem's.
LISTED_CAP_PROVIDERS = frozenset({"vast"})
CAP_BASES = ("problem", "listed", "assumed")


def availability_cap_basis(provider: str, offering_id: str, problem_caps: Mapping) -> str:
    """Where a rented offering's availability cap comes from: ``problem`` (the problem's
    ``availability_caps``), ``listed`` (the catalog counts listings) or ``assumed``."""
    if offering_id in problem_caps:
        return "problem"
    return "listed" if provider in LISTED_CAP_PROVIDERS else "assumed"


def tier_rank(tier: str) -> int:
    """Rank of a tier: 0 for unknown, 1 marketplace, 2 neocloud, 3 hyperscaler."""
    return TIERS.index(tier) + 1 if tier in TIERS else 0


def tier_allowed(tier: str, floor: str, *, default: bool = False) -> bool:
    """Whether a provider of ``tier`` passes a tier floor: owned servers always do; an
    explicit floor admits its tier and those above; the online-serving default (``default``)
    leaves out marketplace hosts only (a provider of unknown tier is not known to be one)."""
    if tier == "owned":
        return True
    if default:
        return tier != "marketplace"
    return tier_rank(tier) >= tier_rank(floor)


@dataclass(frozen=True)
class ExchangeRate:
    """US dollars per unit of a currency on a date, with its source."""

    currency: str
    usd_per_unit: float
    date: str
    source: str


@dataclass(frozen=True)
class Catalog:
    """The validated catalog: one DataFrame per file, indexed by its key."""

    accelerators: pd.DataFrame  # index accelerator_id
    offerings: pd.DataFrame  # index offering_id
    regions: pd.DataFrame  # index (provider, region)
    servers: pd.DataFrame  # index server_id
    sites: pd.DataFrame  # index site_id
    models: pd.DataFrame  # index model_id
    directory: str
    providers: pd.DataFrame | None = None  # index provider; None without providers.csv
    # ids of the sites a problem added to ``sites`` (solver.inputs.sites.with_problem_sites)
    problem_sites: tuple[str, ...] = ()
    exchange_rates: pd.DataFrame | None = None  # date, currency, usd_per_unit, source
    # index block_id; None without capacity_blocks.csv (solver.inputs.catalog.capacity_blocks)
    capacity_blocks: pd.DataFrame | None = None
    # index (provider, region, zone); None without zones.csv (catalog.zones)
    zones: pd.DataFrame | None = None
    # confidence level -> band fraction (price_bands.csv of the folder, else the shipped
    # one; solver.inputs.price_bands); None: a catalog built without it, read as no band
    price_bands: dict[str, float] | None = None
    # accelerator_id -> published rental index level (market_index.csv of the folder;
    # solver.inputs.market_index); None or empty: no market reference
    market_index: dict[str, MarketLevel] | None = None

    def rate(
        self,
        currency: str,
        *,
        file: str | None = None,
        field: str | None = None,
        instead: str = "state the price in USD",
    ) -> ExchangeRate:
        """The latest :class:`ExchangeRate` of ``currency`` (USD is 1 by definition).

        Raises
        ------
        ProcureError
            The catalog has no rate for it (naming ``file`` and ``field``; the fix offers
            a rate or ``instead``).
        """
        return exchange_rate(
            self.exchange_rates, currency, self.directory, file, field, instead=instead
        )

    def tier_of(self, provider: str) -> str:
        """A provider's tier from providers.csv; ``"owned"`` for owned servers, else unknown."""
        if provider == "owned":
            return "owned"
        if self.providers is None or provider not in self.providers.index:
            return UNKNOWN_TIER
        return str(self.providers.at[provider, "tier"])

    def sla_of(self, provider: str) -> str:
        """A provider's service-level agreement in words (providers.csv ``sla``); ``""`` for
        owned servers (your own site) and for a provider the file does not list."""
        if provider == "owned" or self.providers is None or provider not in self.providers.index:
            return ""
        value = self.providers.at[provider, "sla"]
        # the stubs' .at result lists more kinds than isna's scalar overload; it is a cell
        return "" if pd.isna(value) else str(value)  # type: ignore[arg-type]

    def counts(self) -> dict[str, int]:
        """Row counts and the number of providers and regions offered."""
        return {
            "accelerators": len(self.accelerators),
            "offerings": len(self.offerings),
            "providers": self.offerings["provider"].nunique(),
            "regions": len(self.regions),
            "servers": len(self.servers),
            "sites": len(self.sites),
            "models": len(self.models),
        }

    def resolve_accelerator(self, name: str) -> str:
        """Map a forgiving accelerator name (``H100``, ``h100_sxm``, ...) to its id."""
        return resolve_name(name, self.accelerators, "accelerator", "catalogs/accelerators.csv")

    def resolve_model(self, name: str) -> str:
        """Map a model preset name (``Llama 3 70B``, ``llama3-70b``,
        ``meta-llama/Llama-3.3-70B-Instruct``) to its id; an unknown one is refused with the
        presets of its family and size first (:func:`rank_model_presets`)."""
        return resolve_name(
            name, self.models, "model preset", "catalogs/models.csv", rank=rank_model_presets
        )


def exchange_rate(
    rates: pd.DataFrame | None,
    currency: str,
    directory: str,
    file: str | None = None,
    field: str | None = None,
    *,
    instead: str = "state the price in USD",
) -> ExchangeRate:
    """The latest rate of ``currency`` in ``rates`` (USD: 1).

    Raises
    ------
    ProcureError
        No rate for the currency: naming ``file`` and ``field`` and how to add one.
    """
    if currency == BASE_CURRENCY:
        return ExchangeRate(BASE_CURRENCY, 1.0, "", "US dollar (the plan's unit)")
    found = rates[rates["currency"] == currency] if rates is not None else pd.DataFrame()
    if found.empty:
        where = str(Path(directory) / "exchange_rates.csv")
        raise ProcureError(
            f"{currency} has no exchange rate in the catalog ({where})",
            file=file,
            field=field,
            fix=f"add a row 'date,currency,usd_per_unit,source' for {currency} to {where} "
            f"(e.g. the ECB euro reference rate with its date), or {instead}",
        )
    last = found.iloc[-1]
    return ExchangeRate(
        currency, float(last["usd_per_unit"]), str(last["date"]), str(last["source"])
    )
