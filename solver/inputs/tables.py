"""Declared schemas of the compiled tables (:class:`solver.compile.Compiled`): every
column with its unit and meaning. tests/test_architecture.py checks that compile makes
exactly these columns, so a column cannot be added, renamed or dropped unseen.

Units: USD, h (hours), months (plan months, :mod:`solver.clock`), kW, kWh, kgCO2e,
tokens/s, requests/s; "-" for ids, names and flags.
"""

from __future__ import annotations

PERIODS = {
    "name": "-: the period's name in the problem",
    "months": "months: its length",
    "hours": "h: its hours (calendar hours when the problem states its start, else 730/month)",
    "start_month": "months: when it starts, from the plan's start",
    "end_month": "months: when it ends",
}

BLOCKS = {
    "name": "-: the load block's name",
    "hours_per_day": "h: hours of the day it covers",
    "fraction": "-: hours_per_day / 24, the share of each period's hours",
    "demand_factor": "-: demand over the daily average (NaN: per workload, solver/load.py)",
}

POOLS = {
    "pool_id": "-: offering#mode (cloud) or server@site#owned",
    "kind": "-: cloud or owned",
    "offering_id": "-: catalog offering id, or server@site",
    "server_id": "-: owned server id ('' for cloud)",
    "site_id": "-: owned site id ('' for cloud)",
    "provider": "-: provider id ('owned' for servers)",
    "region": "-: cloud region, or the site",
    "instance_type": "-: instance type, or the server id",
    "mode": "-: on_demand, spot, reserved_1y, reserved_3y or owned",
    "accelerator_id": "-: accelerator in each unit",
    "accels_per_unit": "-: accelerators per instance or server",
    "nvlink": "-: accelerators joined by a scale-up link",
    "network_gbps": "Gbit/s: scale-out network per unit (100 when the catalog is silent)",
    "price_usd_per_hour": "USD/h: price of one unit in its mode (0 for owned)",
    "term_months": "months: reservation term (0 otherwise)",
    "capex_usd": "USD: purchase price of one server",
    "lead_months": "months: from order to delivery",
    "lifetime_months": "months: service life of a server",
    "hosting_usd_per_month": "USD/month: colocation, maintenance, staff and idle power",
    "idle_kgco2e_per_month": "kgCO2e/month: a server's idle draw",
    "power_kw_max": "kW: a server's maximum power",
    "embodied_kgco2e_unit": "kgCO2e: embodied carbon of one unit",
    "electricity_usd_per_kwh": "USD/kWh: the site's electricity price",
    "site_power_cap_kw": "kW: the site's power cap (NaN for cloud)",
    "availability_cap": "units: at most this many at once",
    "residency_zone": "-: residency zone of the region or site",
    "tier": "-: provider tier (hyperscaler, neocloud, marketplace, owned)",
    "grid_gco2_per_kwh": "gCO2e/kWh: grid carbon intensity",
    "pue": "-: power usage effectiveness",
    "existing_units": "units: held at the start (servers owned, instances reserved)",
    "vendor": "-: accelerator vendor",
    "device_class": "-: datacenter, workstation or consumer",
    "bf16_dense_tflops": "TFLOPS: dense BF16 peak per accelerator",
    "fp8_dense_tflops": "TFLOPS: dense FP8 peak (0 when unsupported)",
    "int8_dense_tops": "TOPS: dense INT8 peak (0 when unsupported)",
    "fp4_dense_tflops": "TFLOPS: dense FP4 peak (0 when unsupported)",
    "memory_gb": "GB: memory per accelerator",
    "mem_bandwidth_gbps": "GB/s: memory bandwidth per accelerator",
    "scaleup_gbps": "GB/s: scale-up link bandwidth per accelerator",
    "tdp_w": "W: accelerator board power",
    "ecc": "-: ECC memory",
    "frameworks": "-: frameworks supported (; separated)",
}

OPTIONS = {
    "option_id": "-: the option's id in the model (the same with and without pruning)",
    "workload": "-: the workload it serves or trains",
    "workload_kind": "-: inference, batch_inference or training",
    "pool_id": "-: the pool it draws units from",
    "kind": "-: the pool's kind (cloud or owned)",
    "mode": "-: the pool's mode",
    "provider": "-: the pool's provider",
    "region": "-: the pool's region or site",
    "offering_id": "-: the pool's offering",
    "accelerator_id": "-: the pool's accelerator",
    "accels_per_unit": "-: accelerators per unit",
    "price_usd_per_hour": "USD/h: the pool's price per unit",
    # serving options
    "tp_degree": "-: tensor-parallel degree of a replica",
    "batch": "-: sequences decoded together (0 when capacity is measured)",
    "replicas_per_unit": "-: model replicas per unit",
    "tokens_per_s_per_unit": "tokens/s: output tokens one unit serves within the SLOs",
    "step_s": "s: decode step time (NaN when measured)",
    "ttft_s": "s: time to first token (NaN when measured)",
    "capacity_source": "-: physics, calibrated or measured",
    "kwh_per_unit_hour": "kWh: energy per unit-hour in use",
    "energy_usd_per_unit_hour": "USD: electricity per unit-hour in use (owned only)",
    "kgco2e_per_unit_hour": "kgCO2e: per unit-hour in use (cloud: with embodied)",
    # training options
    "n_units": "units: instances or servers in the cluster",
    "n_accelerators": "-: accelerators in the cluster",
    "job_hours": "h: wall-clock hours of the job",
    "start_period": "-: period index the job starts in",
    "end_period": "-: period index it ends in",
    "mfu": "-: model FLOPs utilisation used",
    "mfu_measured_at_accelerators": "-: cluster size the MFU was measured at",
    "scaling_efficiency": "-: loss beyond the measured cluster (1 = none)",
    "spot_lost_fraction": "-: wall-clock lost to spot preemptions",
    "energy_kwh": "kWh: energy of the job",
    "energy_usd": "USD: electricity of the job (owned only)",
    "kgco2e": "kgCO2e: emissions of the job",
    "rent_usd": "USD: rent of the job (cloud)",
}

DEMAND = {
    "workload": "-: the workload",
    "period": "-: period index",
    "block": "-: load block index",
    "bucket": "-: traffic-mix bucket (-1: the workload's one request size)",
    "demand": "tokens/s or requests/s (``unit``): capacity needed in the block",
    "unit": "-: tokens/s or requests/s",
    "tokens_per_unit": "tokens: output tokens per unit of demand (1, or per request)",
}

TRAINING_HOURS = {
    "option_id": "-: a training option",
    "period": "-: period index the job runs in",
    "hours": "h: wall-clock hours it runs in that period",
}

BUCKET_CAPACITY = {
    "option_id": "-: a serving option of a traffic-mix workload",
    "bucket": "-: the bucket",
    "requests_per_s_per_unit": "requests/s: one unit serving only this bucket",
}

COMPILED_TABLES = {
    "periods": PERIODS,
    "blocks": BLOCKS,
    "pools": POOLS,
    "options": OPTIONS,
    "demand": DEMAND,
    "bucket_capacity": BUCKET_CAPACITY,
    "training_hours": TRAINING_HOURS,
}
