"""A unit's figures recomputed from the catalog and the physics: hosting and staff of an
owned server, decode throughput and calibration, capacity share, price provenance.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, cast

import numpy as np
import pandas as pd

from solver import physics
from solver.inputs import staff as staff_figures
from solver.inputs.catalog import Catalog
from solver.inputs.presets import ModelSpec
from solver.inputs.problem import BatchInferenceWorkload, InferenceWorkload, Problem
from solver.physics.bands import model_class
from solver.physics.constants import IDLE_POWER_FRACTION
from solver.plan import LineItem
from solver.units import HOURS_PER_MONTH, PRICE_COLUMN, RESERVED_TERM_MONTHS, Mode, server_and_site


def _site_figure(site: pd.Series, column: str) -> float | None:
    """A site's figure, or None where the site leaves it empty."""
    value = site.get(column) if hasattr(site, "get") else None
    if value is None or value == "" or (isinstance(value, float) and math.isnan(value)):
        return None
    return float(value)


def _staff_salary(site: pd.Series) -> float:
    salary = _site_figure(site, "staff_usd_per_admin_year")
    return staff_figures.USD_PER_ADMIN_YEAR if salary is None else salary


def _staff_usd_per_server_year(site: pd.Series) -> float:
    """Staff per server-year in an owned server's hosting: the site's flat figure, its
    salary over its ratio, or (by fleet size) over 140, the ratio up to 1,000 servers;
    read from the site's columns and the published figures, not the model's rule."""
    flat = _site_figure(site, "staff_usd_per_server_year")
    if flat is not None:
        return flat
    ratio = _site_figure(site, "staff_servers_per_admin")
    return _staff_salary(site) / (ratio or staff_figures.SERVERS_PER_ADMIN_MEDIUM)


def _staff_by_size(site: pd.Series) -> bool:
    return (
        _site_figure(site, "staff_usd_per_server_year") is None
        and _site_figure(site, "staff_servers_per_admin") is None
    )


def _owned_month(srv: pd.Series, site: pd.Series) -> tuple[float, float]:
    """(USD, kgCO2e) an owned server costs per month in service, used or not: colocation,
    maintenance, staff and the idle draw (30% of its maximum power), from the catalog."""
    idle_kwh = IDLE_POWER_FRACTION * float(srv["power_kw"]) * float(site["pue"]) * HOURS_PER_MONTH
    staff = _staff_usd_per_server_year(site)
    usd = (
        float(site["colocation_usd_per_kw_month"]) * float(srv["power_kw"])
        + float(srv["maintenance_usd_per_year"]) / 12.0
        + staff / 12.0
        + idle_kwh * float(site["electricity_usd_per_kwh"])
    )
    return usd, idle_kwh * float(site["grid_gco2_per_kwh"]) / 1000.0


def _peak(acc: Mapping[str, Any], precision: str) -> float:
    """Dense peak of one catalog accelerator row at a precision."""
    table = physics.one_row_table(acc)
    return float(physics.compute_peak_tflops(table, precision)[0])


def _decode(
    w: InferenceWorkload | BatchInferenceWorkload,
    spec: ModelSpec,
    u: dict,
    d: int,
    prompt: float,
    output: float,
    headroom: float,
    at_mean: bool = False,
) -> physics.DecodeResult:
    """One replica's operating point, at the workload's SLO percentile (at the mean with
    ``at_mean``, or where the workload checks none)."""
    acc = u["acc"]
    load = w.load_percentile if isinstance(w, InferenceWorkload) and not at_mean else None
    table = physics.one_row_table(acc)
    return physics.best_decode(
        physics.served_model(spec, w.weight_precision, w.kv_precision),
        prompt_tokens=prompt,
        output_tokens=output,
        tpot_slo_s=w.tpot_slo_s if isinstance(w, InferenceWorkload) else None,
        ttft_slo_s=w.ttft_slo_s if isinstance(w, InferenceWorkload) else None,
        d=np.array([float(d)]),
        dev=physics.device_figures(table, w.weight_precision, np.array([u["nvlink"]]), w.runtime),
        memory_headroom=headroom,
        load=load,
    )


def _calibration(
    w: InferenceWorkload | BatchInferenceWorkload,
    spec: ModelSpec,
    catalog: Catalog,
    headroom: float,
) -> float:
    """Factor scaling physics to the workload's measured profiles, recomputed here.

    Geometric mean of measured / physics requests/s over every measured accelerator
    (one device per replica, no NVLink) and bucket where both are positive, the physics
    at the mean (a profile is a mean-condition figure); 1.0 when the workload has no
    profile.
    """
    if not isinstance(w, InferenceWorkload) or not w.measured_throughput_rps:
        return 1.0
    logs = []
    for name, values in w.measured_throughput_rps.items():
        acc = catalog.accelerators.loc[catalog.resolve_accelerator(name)]
        unit = {"acc": acc, "nvlink": False}
        for j, bucket in enumerate(w.traffic_mix or []):
            res = _decode(
                w, spec, unit, 1, bucket.prompt_tokens, bucket.output_tokens, headroom, True
            )
            physics_rps = float(res.tokens_per_s[0]) / bucket.output_tokens
            if values[j] > 0 and physics_rps > 0:
                logs.append(np.log(values[j] / physics_rps))
    return float(np.exp(np.mean(logs))) if logs else 1.0


def _measured_here(
    w: InferenceWorkload | BatchInferenceWorkload,
    spec: ModelSpec,
    catalog: Catalog,
    headroom: float,
    accelerator: str,
) -> list[float] | None:
    """The requests/s per bucket one ``accelerator`` is planned at from the workload's
    measured profile, recomputed; None without a profile for it.

    The profile holds at the mean; where the SLOs are checked at a percentile, each
    bucket keeps the physics' own share at that percentile
    (:func:`solver.physics.measured_tail_share`: physics requests/s at the percentile /
    at the mean, one device, no NVLink).
    """
    if not isinstance(w, InferenceWorkload) or not w.measured_throughput_rps:
        return None
    values = None
    for name, vals in w.measured_throughput_rps.items():
        if catalog.resolve_accelerator(name) == accelerator:
            values = vals
    if values is None or w.load_percentile is None:
        return values
    unit = {"acc": catalog.accelerators.loc[accelerator], "nvlink": False}
    at_p: list[float] = []
    at_mean: list[float] = []
    for bucket in w.traffic_mix or []:
        for out, mean in ((at_p, False), (at_mean, True)):
            res = _decode(
                w, spec, unit, 1, bucket.prompt_tokens, bucket.output_tokens, headroom, mean
            )
            out.append(float(res.tokens_per_s[0]) / bucket.output_tokens)
    share = physics.measured_tail_share(np.array(at_p), np.array(at_mean))
    return [float(v) * float(k) for v, k in zip(values, share, strict=True)]


def _capacity_share(
    p: Problem,
    w: InferenceWorkload | BatchInferenceWorkload,
    u: dict,
    measured_here: bool,
    spec: ModelSpec,
) -> float:
    """Share of a unit's capacity estimate the plan may count on, recomputed
    from the problem and the catalog: the error band's quantile at capacity_confidence
    (solver/physics/bands.py by the unit's accelerator family, runtime and the model's
    class, the widest band outside the validated set; the measured band for a measured
    profile; physics x calibration keeps the physics band) over capacity_optimism, times
    the share capacity_scenario keeps (a two-stage plan's throughput scenario)."""
    has_profile = isinstance(w, InferenceWorkload) and bool(w.measured_throughput_rps)
    source = "measured" if measured_here else ("calibrated" if has_profile else "physics")
    vendor = np.array([u["acc"]["vendor"]], dtype=object)
    runtime = getattr(w, "runtime", None)
    accelerator = np.array([str(u["acc"].name)], dtype=object)
    klass = model_class(spec.params, spec.experts, spec.experts_active)
    share = physics.planned_capacity_share(
        p.capacity_confidence, p.capacity_optimism, vendor, source, runtime, accelerator, klass
    )
    if p.capacity_scenario is not None:  # one throughput scenario
        share = share * p.capacity_scenario.share(
            physics.capacity_band_log(vendor, source, runtime, accelerator, klass)
        )
    return float(share[0])


def _known(item: LineItem, catalog: Catalog) -> bool:
    """The line item names an offering (with a price in its mode) or a server@site we know."""
    if item.mode == Mode.OWNED:
        server_id, site_id = server_and_site(item.offering)
        return server_id in catalog.servers.index and site_id in catalog.sites.index
    if item.offering not in catalog.offerings.index or item.mode not in PRICE_COLUMN:
        return False
    # a price cell (the stubs type a cell as any scalar)
    price = cast(float, catalog.offerings.at[item.offering, PRICE_COLUMN[item.mode]])
    return bool(pd.notna(price))


def _provenance(item: LineItem, u: dict) -> tuple[str, str, str, str]:
    """(price date, source, confidence, currency) of the price a line rests on, read from
    the catalog: an owned line's server's, a reserved line's reserved price's, else the
    offering's (catalogs/SOURCES.md)."""
    if item.mode == Mode.OWNED:
        srv = u["server"]
        return (srv["price_date"], srv["source"], srv["price_confidence"], srv["currency"])
    off = u["offering"]
    if item.mode in RESERVED_TERM_MONTHS:
        return (
            off["reserved_price_date"],
            off["reserved_source"],
            off["reserved_price_confidence"],
            off["currency"],
        )
    return (off["price_date"], off["source"], off["price_confidence"], off["currency"])


def _matches(item: LineItem, u: dict) -> bool:
    """Provider, region and accelerator of the item are those of its offering."""
    if item.mode == Mode.OWNED:
        return item.accelerator == u["acc"].name and item.region == u["site"].name
    off = u["offering"]
    return (
        item.provider == off["provider"]
        and item.region == off["region"]
        and item.accelerator == off["accelerator_id"]
    )


def _unit_tokens_per_s(
    w: InferenceWorkload,
    spec: ModelSpec,
    u: dict,
    item: LineItem,
    catalog: Catalog,
    headroom: float,
    *,
    calibration: float,
    problem: Problem,
) -> float:
    """Output tokens/s one unit of a serving line item sustains, recomputed (for N+1).

    Without a traffic mix: the physics throughput of one replica x replicas per unit.
    With one: the unit time-shared over the mix in its shares, sum(share x output
    tokens) / sum(share / requests/s) over the buckets the unit can serve, with
    requests/s measured (x accelerators per unit) or from physics x ``calibration``.
    """
    replicas = u["apu"] // item.tp_degree
    if not w.traffic_mix:
        res = _decode(w, spec, u, item.tp_degree, w.prompt_tokens, w.output_tokens, headroom)
        return float(res.tokens_per_s[0]) * replicas * _capacity_share(problem, w, u, False, spec)
    measured = _measured_here(w, spec, catalog, headroom, item.accelerator)
    share = _capacity_share(problem, w, u, measured is not None, spec)
    tokens_per_request = 0.0
    s_per_request = 0.0
    for j, bucket in enumerate(w.traffic_mix):
        if measured is not None:
            rps = measured[j] * u["apu"]
        else:
            res = _decode(
                w, spec, u, item.tp_degree, bucket.prompt_tokens, bucket.output_tokens, headroom
            )
            rps = float(res.tokens_per_s[0]) * replicas / bucket.output_tokens * calibration
        rps *= share
        if rps > 0:  # a bucket the unit cannot serve adds neither tokens nor time
            tokens_per_request += bucket.share * bucket.output_tokens
            s_per_request += bucket.share / rps
    return tokens_per_request / s_per_request if s_per_request > 0 else 0.0
