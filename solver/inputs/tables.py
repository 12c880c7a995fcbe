"""Every table's columns, declared once: the catalog files (:data:`CATALOG_TABLES`, which
:func:`solver.inputs.catalog.load_catalog` validates and coerces by) and the compiled tables
(:data:`COMPILED_TABLES`, :class:`solver.core.compile.Compiled`; tests/test_architecture.py
checks that compile makes exactly these columns, of these types, so a column cannot be
added, renamed or dropped unseen).

Units: USD, h (hours), months (plan months, :mod:`solver.core.clock`), kW, kWh, kgCO2e,
tokens/s, requests/s; "-" for ids, names and flags. The catalog's columns carry their unit
in their names (``capex_usd``, ``tdp_w``).
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import pandas as pd

Dtype = Literal["str", "float", "int", "bool"]


@dataclass(frozen=True)
class Column:
    """One column of a table: its type, unit and meaning, and what its values must be.

    Parameters
    ----------
    name
        The column's name, with its unit in it where it has one.
    dtype
        ``str``, ``float``, ``int`` (whole numbers) or ``bool``.
    unit
        The unit of its values; ``-`` for ids, names, flags and ratios.
    meaning
        What a value says, in a phrase.
    nullable
        Whether a value may be missing (an empty cell in a catalog; NaN in a compiled
        table, or a float column for an ``int`` one).
    unique
        A key: each value appears once.
    positive
        Numbers above zero; otherwise numbers are zero or more.
    """

    name: str
    dtype: Dtype
    unit: str = "-"
    meaning: str = ""
    nullable: bool = False
    unique: bool = False
    positive: bool = False


def table(*columns: Column) -> dict[str, Column]:
    """A table's declaration: its columns by name, in order."""
    return {column.name: column for column in columns}


def _key(name: str) -> Column:
    return Column(name, "str", unique=True)


def _text(name: str, nullable: bool = False) -> Column:
    return Column(name, "str", nullable=nullable)


def _number(name: str, nullable: bool = False, positive: bool = False) -> Column:
    return Column(name, "float", nullable=nullable, positive=positive)


def _count(name: str, positive: bool = False) -> Column:
    return Column(name, "int", positive=positive)


def _flag(name: str) -> Column:
    return Column(name, "bool")


ACCELERATORS = table(
    _key("accelerator_id"),
    _text("name"),
    _text("vendor"),
    _text("aliases", nullable=True),
    _text("device_class"),
    _number("bf16_dense_tflops", positive=True),
    _number("fp8_dense_tflops"),
    _number("int8_dense_tops"),
    _number("fp4_dense_tflops"),
    _number("memory_gb", positive=True),
    _text("memory_unit", nullable=True),
    _number("mem_bandwidth_gbps", positive=True),
    _text("scaleup_link", nullable=True),
    _number("scaleup_gbps"),
    _number("tdp_w", positive=True),
    _flag("ecc"),
    _text("frameworks"),
    _number("purchase_price_usd", nullable=True),
    _number("embodied_kgco2e"),
    _text("source"),
)

OFFERINGS = table(
    _key("offering_id"),
    _text("provider"),
    _text("region"),
    _text("instance_type"),
    _text("accelerator_id"),
    _count("accelerators_per_instance", positive=True),
    _number("on_demand_usd_per_hour", positive=True),
    _number("spot_usd_per_hour", nullable=True, positive=True),
    _number("reserved_1y_usd_per_hour", nullable=True, positive=True),
    _number("reserved_3y_usd_per_hour", nullable=True, positive=True),
    _flag("nvlink"),
    _number("network_gbps", nullable=True),
    _count("availability_cap_instances"),
    Column(
        "currency",
        "str",
        meaning="ISO 4217 code of the four price columns as the source states them (USD "
        "unless it says otherwise; converted to USD on load at exchange_rates.csv's rate)",
    ),
    Column(
        "price_date",
        "str",
        meaning="when the source observed the on-demand and spot prices: YYYY-MM-DD, or unknown",
    ),
    Column(
        "price_confidence",
        "str",
        meaning="quote, list, third_party or unverified (solver/inputs/provenance.py)",
    ),
    Column("price_note", "str", meaning="the date in words (what is known of it)", nullable=True),
    _text("source"),
    Column(
        "reserved_price_date",
        "str",
        meaning="when the 1y/3y prices were observed (empty: as price_date)",
        nullable=True,
    ),
    Column(
        "reserved_price_confidence",
        "str",
        meaning="confidence of the 1y/3y prices (empty: as price_confidence)",
        nullable=True,
    ),
    Column(
        "reserved_source",
        "str",
        meaning="where the 1y/3y prices come from, or why there are none",
        nullable=True,
    ),
    Column(
        "price_date_basis",
        "str",
        meaning="what price_date is: published (a date the source itself states) or read "
        "(the day the source was read, when it states none); empty only with an unknown date",
        nullable=True,
    ),
    Column(
        "currency_basis",
        "str",
        meaning="stated (the source, or the provider's own page, names the currency) or "
        "assumed (nothing names it)",
    ),
)

REGIONS = table(
    _text("provider"),
    _text("region"),
    _text("country"),
    _text("residency_zone"),
    _number("grid_gco2_per_kwh"),
    _text("grid_year", nullable=True),
    _text("grid_source"),
    _number("pue", positive=True),
    _number("electricity_usd_per_kwh", nullable=True),
)

SERVERS = table(
    _key("server_id"),
    _text("name"),
    _text("accelerator_id"),
    _count("accelerators_per_server", positive=True),
    _number("capex_usd", positive=True),
    _number("power_kw", positive=True),
    _number("lead_time_days"),
    _number("lifetime_years", positive=True),
    _number("maintenance_usd_per_year"),
    _flag("nvlink"),
    _number("network_gbps", nullable=True),
    _number("embodied_kgco2e"),
    _text("source"),
    Column("currency", "str", meaning="ISO 4217 code of capex_usd and maintenance as stated"),
    Column(
        "price_date", "str", meaning="when the capex figure was published: YYYY-MM-DD or unknown"
    ),
    Column("price_confidence", "str", meaning="quote, list, third_party or unverified"),
)

SITES = table(
    _key("site_id"),
    _text("name"),
    _text("kind"),
    _text("country"),
    _text("residency_zone"),
    _number("grid_gco2_per_kwh"),
    _number("pue", positive=True),
    _number("electricity_usd_per_kwh"),
    _number("colocation_usd_per_kw_month"),
    # empty: staff by the site's fleet size (solver/inputs/staff.py)
    _number("staff_usd_per_server_year", nullable=True),
    _number("power_cap_kw", positive=True),
    _text("source"),
)

MODELS = table(
    _key("model_id"),
    _text("name"),
    _text("aliases", nullable=True),
    _number("params_b", positive=True),
    _number("active_params_b", positive=True),
    _count("layers", positive=True),
    _count("hidden_size", positive=True),
    _count("attention_heads", positive=True),
    _count("kv_heads", positive=True),
    _count("head_dim", positive=True),
    _count("vocab_size", positive=True),
    Column(
        "experts",
        "int",
        "-",
        "routed experts per mixture-of-experts layer (num_local_experts, num_experts, "
        "n_routed_experts); 1 for a dense model",
        positive=True,
    ),
    Column(
        "experts_active",
        "int",
        "-",
        "routed experts each token uses (num_experts_per_tok); 1 for a dense model",
        positive=True,
    ),
    Column(
        "kv_latent_dim",
        "int",
        "values",
        "values per token per layer in a compressed (MLA) KV cache: kv_lora_rank + "
        "qk_rope_head_dim; 0 = standard attention (2 x kv_heads x head_dim)",
    ),
    _text("source"),
)

PROVIDERS = table(
    _key("provider"),
    _text("tier"),
    _text("sla"),
    _text("data_terms"),
    _text("hosts"),
    _text("source"),
    _text("read_date"),
)

EXCHANGE_RATES = table(
    Column("date", "str", meaning="the rate's date, YYYY-MM-DD"),
    Column("currency", "str", meaning="ISO 4217 code"),
    Column(
        "usd_per_unit", "float", "USD", "US dollars per one unit of the currency", positive=True
    ),
    _text("source"),
)

ZONES = table(
    _text("provider"),
    _text("region"),
    Column("zone", "str", meaning="availability zone name (AWS: zone ID, e.g. use1-az4)"),
    Column(
        "instance_types",
        "str",
        meaning="the region's instance types the source lists in this zone, space-separated",
    ),
    _text("source"),
)

CATALOG_TABLES: dict[str, dict[str, Column]] = {
    "accelerators.csv": ACCELERATORS,
    "offerings.csv": OFFERINGS,
    "regions.csv": REGIONS,
    "servers.csv": SERVERS,
    "sites.csv": SITES,
    "models.csv": MODELS,
    "providers.csv": PROVIDERS,
    "exchange_rates.csv": EXCHANGE_RATES,
    "zones.csv": ZONES,
}
"""The catalog's files, each with its columns (providers.csv, exchange_rates.csv and
zones.csv are optional)."""

PERIODS = table(
    Column("name", "str", "-", "the period's name in the problem"),
    Column("months", "float", "months", "its length"),
    Column(
        "hours",
        "float",
        "h",
        "its hours (calendar hours when the problem states its start, else 730/month)",
    ),
    Column("start_month", "float", "months", "when it starts, from the plan's start"),
    Column("end_month", "float", "months", "when it ends"),
)

BLOCKS = table(
    Column("name", "str", "-", "the load block's name"),
    Column("hours_per_day", "float", "h", "hours of the day it covers"),
    Column("fraction", "float", "-", "hours_per_day / 24, the share of each period's hours"),
    Column(
        "demand_factor",
        "float",
        "-",
        "demand over the daily average (NaN: per workload, solver/load.py)",
        nullable=True,
    ),
)

POOLS = table(
    Column("pool_id", "str", "-", "offering#mode (cloud) or server@site#owned"),
    Column("kind", "str", "-", "cloud or owned"),
    Column("offering_id", "str", "-", "catalog offering id, or server@site"),
    Column("server_id", "str", "-", "owned server id ('' for cloud)"),
    Column("site_id", "str", "-", "owned site id ('' for cloud)"),
    Column("provider", "str", "-", "provider id ('owned' for servers)"),
    Column("region", "str", "-", "cloud region, or the site"),
    Column("instance_type", "str", "-", "instance type, or the server id"),
    Column("mode", "str", "-", "on_demand, spot, reserved_1y, reserved_3y or owned"),
    Column("accelerator_id", "str", "-", "accelerator in each unit"),
    Column("accels_per_unit", "int", "-", "accelerators per instance or server"),
    Column("nvlink", "bool", "-", "accelerators joined by a scale-up link"),
    Column(
        "network_gbps",
        "float",
        "Gbit/s",
        "scale-out network per unit (100 when the catalog is silent)",
    ),
    Column("price_usd_per_hour", "float", "USD/h", "price of one unit in its mode (0 for owned)"),
    Column("price_date", "str", "-", "when its price was observed (YYYY-MM-DD or unknown)"),
    Column("price_source", "str", "-", "where its price comes from (server: its capex)"),
    Column("price_confidence", "str", "-", "quote, list, third_party or unverified"),
    Column("price_currency", "str", "-", "the currency the source states the price in"),
    Column(
        "guard_band_fraction",
        "float",
        "fraction",
        "the price guard's band of its price confidence (catalogs/price_bands.csv)",
    ),
    Column("term_months", "float", "months", "reservation term (0 otherwise)"),
    Column("capex_usd", "float", "USD", "purchase price of one server"),
    Column("lead_months", "float", "months", "from order to delivery"),
    Column("lifetime_months", "float", "months", "service life of a server"),
    Column(
        "hosting_usd_per_month",
        "float",
        "USD/month",
        "colocation, maintenance, staff and idle power",
    ),
    Column("idle_kgco2e_per_month", "float", "kgCO2e/month", "a server's idle draw"),
    Column("power_kw_max", "float", "kW", "a server's maximum power"),
    Column("embodied_kgco2e_unit", "float", "kgCO2e", "embodied carbon of one unit"),
    Column("electricity_usd_per_kwh", "float", "USD/kWh", "the site's electricity price"),
    Column(
        "site_power_cap_kw", "float", "kW", "the site's power cap (NaN for cloud)", nullable=True
    ),
    Column(
        "staff_by_size",
        "bool",
        "-",
        "owned: the site's staff goes by its fleet size (solver/inputs/staff.py); False else",
    ),
    Column(
        "staff_usd_per_admin_year",
        "float",
        "USD/admin-year",
        "owned: what one administrator costs the site a year (0 for cloud)",
    ),
    Column(
        "staff_usd_per_server_year",
        "float",
        "USD/server-year",
        "owned: staff in the hosting, per server while the site holds at most 1,000 (0 cloud)",
    ),
    Column(
        "staff_basis",
        "str",
        "-",
        "owned: by_size (the default), ratio (the site's servers per admin) or flat (its "
        "USD per server-year); '' for cloud",
    ),
    Column("availability_cap", "int", "units", "at most this many at once"),
    Column("residency_zone", "str", "-", "residency zone of the region or site"),
    Column("tier", "str", "-", "provider tier (hyperscaler, neocloud, marketplace, owned)"),
    Column("sla", "str", "-", "the provider's SLA in words (providers.csv; '' for owned)"),
    Column(
        "availability_cap_basis",
        "str",
        "-",
        "where the cap comes from: problem, listed, assumed (cloud); site (owned: the "
        "site's power cap / server kW)",
    ),
    Column("grid_gco2_per_kwh", "float", "gCO2e/kWh", "grid carbon intensity"),
    Column("pue", "float", "-", "power usage effectiveness"),
    Column(
        "existing_units", "int", "units", "held at the start (servers owned, instances reserved)"
    ),
    Column("vendor", "str", "-", "accelerator vendor"),
    Column("device_class", "str", "-", "datacenter, workstation or consumer"),
    Column("bf16_dense_tflops", "float", "TFLOPS", "dense BF16 peak per accelerator"),
    Column("fp8_dense_tflops", "float", "TFLOPS", "dense FP8 peak (0 when unsupported)"),
    Column("int8_dense_tops", "float", "TOPS", "dense INT8 peak (0 when unsupported)"),
    Column("fp4_dense_tflops", "float", "TFLOPS", "dense FP4 peak (0 when unsupported)"),
    Column("memory_gb", "float", "GB", "memory per accelerator"),
    Column("mem_bandwidth_gbps", "float", "GB/s", "memory bandwidth per accelerator"),
    Column("scaleup_gbps", "float", "GB/s", "scale-up link bandwidth per accelerator"),
    Column("tdp_w", "float", "W", "accelerator board power"),
    Column("ecc", "bool", "-", "ECC memory"),
    Column("frameworks", "str", "-", "frameworks supported (; separated)"),
)

OPTIONS = table(
    Column("option_id", "int", "-", "the option's id (the same with and without pruning)"),
    Column("workload", "str", "-", "the workload it serves or trains"),
    Column("workload_kind", "str", "-", "inference, batch_inference or training"),
    Column("pool_id", "str", "-", "the pool it draws units from"),
    Column("kind", "str", "-", "the pool's kind (cloud or owned)"),
    Column("mode", "str", "-", "the pool's mode"),
    Column("provider", "str", "-", "the pool's provider"),
    Column("region", "str", "-", "the pool's region or site"),
    Column("offering_id", "str", "-", "the pool's offering"),
    Column("accelerator_id", "str", "-", "the pool's accelerator"),
    Column("accels_per_unit", "int", "-", "accelerators per unit"),
    Column("price_usd_per_hour", "float", "USD/h", "the pool's price per unit"),
    Column(
        "guard_band_fraction", "float", "fraction", "the price guard's band of the pool's price"
    ),
    # serving options
    Column("tp_degree", "int", "-", "tensor-parallel degree of a replica", nullable=True),
    Column(
        "batch",
        "int",
        "-",
        "sequences decoded together (0 when capacity is measured)",
        nullable=True,
    ),
    Column("replicas_per_unit", "int", "-", "model replicas per unit", nullable=True),
    Column(
        "tokens_per_s_per_unit",
        "float",
        "tokens/s",
        "output tokens one unit serves within the SLOs",
    ),
    Column("step_s", "float", "s", "decode step time (NaN when measured)", nullable=True),
    Column("ttft_s", "float", "s", "time to first token (NaN when measured)", nullable=True),
    Column("capacity_source", "str", "-", "physics, calibrated or measured", nullable=True),
    Column(
        "capacity_band_log",
        "float",
        "-",
        "RMS log error of the capacity figure's source and runtime (issue 33; NaN: training)",
        nullable=True,
    ),
    Column("kwh_per_unit_hour", "float", "kWh", "energy per unit-hour in use"),
    Column(
        "energy_usd_per_unit_hour", "float", "USD", "electricity per unit-hour in use (owned only)"
    ),
    Column(
        "kgco2e_per_unit_hour", "float", "kgCO2e", "per unit-hour in use (cloud: with embodied)"
    ),
    # training options
    Column("n_units", "int", "units", "instances or servers in the cluster", nullable=True),
    Column("n_accelerators", "int", "-", "accelerators in the cluster", nullable=True),
    Column("job_hours", "float", "h", "wall-clock hours of the job"),
    Column("start_period", "int", "-", "period index the job starts in", nullable=True),
    Column("end_period", "int", "-", "period index it ends in", nullable=True),
    Column("mfu", "float", "-", "model FLOPs utilisation used (at the training margin)"),
    Column("mfu_measured_at_accelerators", "float", "-", "cluster size the MFU was measured at"),
    Column("mfu_point", "float", "-", "the published point MFU of the family (or the own mfu)"),
    Column("mfu_low", "float", "-", "low end of the published MFU band"),
    Column("mfu_high", "float", "-", "high end of the published MFU band"),
    Column("mfu_source", "str", "-", "where the point MFU comes from", nullable=True),
    Column("mfu_band", "str", "-", "where the MFU band comes from", nullable=True),
    Column("window_hours", "float", "h", "hours the job may take (window or deadline)"),
    Column(
        "units_at_point_mfu",
        "int",
        "units",
        "fewest units of the pool finishing in the window at the point MFU (0: none)",
        nullable=True,
    ),
    Column("scaling_efficiency", "float", "-", "loss beyond the measured cluster (1 = none)"),
    Column("spot_lost_fraction", "float", "-", "wall-clock lost to spot preemptions"),
    Column("energy_kwh", "float", "kWh", "energy of the job"),
    Column("energy_usd", "float", "USD", "electricity of the job (owned only)"),
    Column("kgco2e", "float", "kgCO2e", "emissions of the job"),
    Column("rent_usd", "float", "USD", "rent of the job (cloud)"),
)

DEMAND = table(
    Column("workload", "str", "-", "the workload"),
    Column("period", "int", "-", "period index"),
    Column("block", "int", "-", "load block index"),
    Column("bucket", "int", "-", "traffic-mix bucket (-1: the workload's one request size)"),
    Column("demand", "float", "tokens/s or requests/s (``unit``)", "capacity needed in the block"),
    Column("unit", "str", "-", "tokens/s or requests/s"),
    Column(
        "tokens_per_unit", "float", "tokens", "output tokens per unit of demand (1, or per request)"
    ),
)

TRAINING_HOURS = table(
    Column("option_id", "int", "-", "a training option"),
    Column("period", "int", "-", "period index the job runs in"),
    Column("hours", "float", "h", "wall-clock hours it runs in that period"),
)

BUCKET_CAPACITY = table(
    Column("option_id", "int", "-", "a serving option of a traffic-mix workload"),
    Column("bucket", "int", "-", "the bucket"),
    Column("requests_per_s_per_unit", "float", "requests/s", "one unit serving only this bucket"),
)

COMPILED_TABLES: dict[str, dict[str, Column]] = {
    "periods": PERIODS,
    "blocks": BLOCKS,
    "pools": POOLS,
    "options": OPTIONS,
    "demand": DEMAND,
    "bucket_capacity": BUCKET_CAPACITY,
    "training_hours": TRAINING_HOURS,
}


def row_tuples(frame: pd.DataFrame) -> list[tuple[Any, ...]]:
    """A DataFrame's rows as named tuples: what ``frame.itertuples(index=False)`` gives
    (the same fields, values and Python types), about ten times faster on wide frames.

    ``itertuples`` reads pandas 3's string columns one element at a time; here each column
    is converted once (``tolist``) and the tuples zipped from the lists.
    """
    # mypy reads namedtuple() only with literal field names; these are the frame's columns
    row = namedtuple("Row", [str(c) for c in frame.columns], rename=True)  # type: ignore[misc]
    columns = (frame.iloc[:, k].tolist() for k in range(frame.shape[1]))
    return [row._make(values) for values in zip(*columns, strict=True)]
