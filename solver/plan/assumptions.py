"""What a plan's choice rests on: the assumptions listed under it.

:func:`assumptions_of` reads them from the compiled problem and the plan's line items, as
data (:class:`Assumption`); :mod:`solver.outputs.text` and the report print them. Five
kinds, in this order:

- ``mfu``: per training line, the MFU its cluster is sized at, the published band and
  where both come from (``solver/physics/constants.py`` ``TRAINING_MFU``).
- ``serving_efficiency``: per serving workload and runtime whose capacity comes from the
  physics (or physics x a calibration), the achieved fractions of bandwidth and compute
  (``RUNTIME_EFFICIENCY``); measured capacity is the problem's own.
- ``capacity_band``: per serving workload, runtime, accelerator family and capacity source,
  the error band of its capacity figures (solver/physics/bands.py, by accelerator family,
  runtime and model class; a configuration outside the validated set is flagged in the
  source and takes the widest band: value the RMS log error, low
  and high the two-sided 90% interval of true / estimated capacity) and the share of each
  estimate the plan counts on (capacity_confidence, capacity_optimism); and per serving
  workload the share of its peak demand the plan still serves if every capacity estimate
  is 1.5x optimistic (the worst period and load block; below 1, the plan falls short).
- ``availability_cap``: per rented offering in the plan, its cap when the catalog's figure
  is assumed or counted from listings (not the problem's), with ``binds`` when the plan
  holds it at the cap; per owned server type and site, the site's power cap.
- ``provider_tier``: per provider in the plan, its tier and SLA (catalogs/providers.csv).
- ``owned_staff``: per site the plan holds owned servers at, staff per server-year at its
  largest fleet in the plan and how it is worked out (solver/inputs/staff.py).
- ``default``: the settings that decide a plan, each with its value and whether the
  problem set it or left it at the default (``basis``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Literal, cast

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from solver.core.compile import Compiled
from solver.inputs.problem import CapacityScenario, InferenceWorkload, Problem, TrainingWorkload
from solver.inputs.staff import STAFF_BY_SIZE_SOURCE, admins, servers_per_admin
from solver.money import usd
from solver.physics.bands import MIN_ROWS, error_band, model_class
from solver.physics.constants import RUNTIME_EFFICIENCY
from solver.physics.hardware import capacity_band_log, runtime_of
from solver.physics.inference import planned_capacity_share
from solver.units import RENTED_MODES, Item, Mode

AssumptionKind = Literal[
    "mfu",
    "serving_efficiency",
    "capacity_band",
    "availability_cap",
    "provider_tier",
    "owned_staff",
    "default",
]
Basis = Literal["published", "assumed", "listed", "catalog", "problem", "default"]

# The settings that decide a plan, on the problem and on each workload (by kind): the
# problem's own first, then each workload's. A setting left out here does not change
# which offerings a plan takes (names, descriptions) or is shown elsewhere (periods).
PROBLEM_SETTINGS = (
    "objective",
    "modes",
    "min_tier",
    "owned_cost_policy",
    "residual_value",
    "memory_headroom",
    "demand_headroom",
)
TRAINING_SETTINGS = ("training_margin", "mfu", "recompute", "interruptible", "max_accelerators")
INFERENCE_SETTINGS = (
    "slo_percentile",
    "max_utilisation",
    "fleet",
    "redundancy",
    "min_tier",
    "runtime",
    "peak_to_average",
    "survive_loss_of",
    "interruptible",
)
SERVING_ITEMS = (Item.RENT, Item.USE)
CAP_SOURCE = {
    "assumed": "no provider publishes one: an assumed catalog figure (catalogs/SOURCES.md, "
    "Availability caps); availability_caps in the problem sets your own",
    "listed": "listings counted in the catalog's price snapshot (catalogs/SOURCES.md, "
    "Availability caps)",
}
# Settings of a workload that, left unset, take the problem's (its row says so already)
INHERITED = {"training_margin", "min_tier", "mfu"}


class Assumption(BaseModel):
    """One assumption the plan's choice rests on."""

    kind: AssumptionKind = Field(
        description="mfu | serving_efficiency | capacity_band | availability_cap | "
        "provider_tier | owned_staff | default"
    )
    name: str = Field(
        description="The figure or setting: mfu, eta_bandwidth, eta_compute, "
        "calibration_factor, availability_cap, site_power_cap_kw, tier, or a problem field"
    )
    workload: str = Field("", description="The workload it applies to ('' = the problem)")
    subject: str = Field(
        "", description="What it is about: an offering, a runtime, a provider or a site"
    )
    value: float | int | str | bool | list | None = Field(
        description="The figure or setting the plan used"
    )
    low: float | None = Field(None, description="Low end of its band, where it has one")
    high: float | None = Field(None, description="High end of its band, where it has one")
    unit: str = Field("", description="Unit of value, low and high ('' for a fraction or name)")
    basis: Basis = Field(
        description="published (a cited measurement), assumed (a stated assumption), listed "
        "(counted in the catalog's source), catalog (a catalog fact), problem (set in the "
        "problem file) or default (left at its default)"
    )
    source: str = Field("", description="Where it comes from")
    binds: bool = Field(False, description="A cap the plan holds at its limit")


def assumptions_of(
    compiled: Compiled, items: list, binding_pools: set[str] | None = None
) -> list[Assumption]:
    """The assumptions a plan's line items rest on, in the module's order.

    Parameters
    ----------
    compiled
        The compiled problem the plan was read from.
    items
        The plan's line items (:class:`solver.plan.lines.LineItem`).
    binding_pools
        Pool ids whose availability row binds (:func:`solver.plan.lines.binding_rows`).
    """
    pools = compiled.pools.set_index(["offering_id", "mode"])
    binding_pools = binding_pools or set()
    return (
        _mfu(compiled.problem, items)
        + _serving(compiled, items, pools)
        + _capacity_band(compiled, items, pools)
        + _caps(compiled.problem, items, pools, binding_pools)
        + _tiers(items)
        + _owned_staff(compiled, items)
        + _settings(compiled.problem)
    )


def _mfu(problem: Problem, items: list) -> list[Assumption]:
    out, seen = [], set()
    for i in items:
        if i.item != Item.TRAINING or i.mfu is None or (i.workload, i.offering) in seen:
            continue
        seen.add((i.workload, i.offering))
        own = getattr(problem.workload(i.workload), "mfu", None) is not None
        basis = (
            "problem" if own else "assumed" if i.mfu_source.startswith("assumed") else "published"
        )
        out.append(
            Assumption(
                kind="mfu",
                name="mfu",
                workload=i.workload,
                subject=f"{i.accelerator} ({i.offering})",
                value=i.mfu,
                low=i.mfu_low,
                high=i.mfu_high,
                basis=basis,
                source=f"point {i.mfu_point:g}: {i.mfu_source}; band: {i.mfu_band_source}; "
                f"sized at training_margin {i.training_margin}",
            )
        )
    return out


def _serving(compiled: Compiled, items: list, pools: pd.DataFrame) -> list[Assumption]:
    """Per serving workload and runtime: the efficiencies its physics capacity rests on."""
    problem = compiled.problem
    calibration = compiled.report.calibration
    out, seen = [], set()
    for i in items:
        if i.item not in SERVING_ITEMS or not i.workload or not i.capacity_source:
            continue
        w = problem.workload(i.workload)
        if i.capacity_source == "measured":
            key = (i.workload, "measured", "")
            if key not in seen:
                seen.add(key)
                out.append(
                    Assumption(
                        kind="serving_efficiency",
                        name="measured_throughput_rps",
                        workload=i.workload,
                        subject=i.accelerator,
                        value="measured",
                        basis="problem",
                        source="the workload's measured_throughput_rps",
                    )
                )
            continue
        vendor = str(pools.at[(i.offering, i.mode), "vendor"])
        runtime = str(runtime_of(np.array([vendor], dtype=object), getattr(w, "runtime", None))[0])
        key = (i.workload, runtime, i.capacity_source)
        if key in seen:
            continue
        seen.add(key)
        eff = RUNTIME_EFFICIENCY[runtime]
        source = f"{eff.source} (catalogs/SOURCES.md, Serving efficiencies)"
        for name, value in (
            ("eta_bandwidth", eff.eta_bandwidth),
            ("eta_compute", eff.eta_compute),
        ):
            out.append(
                Assumption(
                    kind="serving_efficiency",
                    name=name,
                    workload=i.workload,
                    subject=runtime,
                    value=value,
                    basis="published",
                    source=source,
                )
            )
        fit = calibration.get(i.workload)
        if i.capacity_source == "calibrated" and fit:
            out.append(
                Assumption(
                    kind="serving_efficiency",
                    name="calibration_factor",
                    workload=i.workload,
                    subject=runtime,
                    value=float(fit["factor"]),
                    basis="problem",
                    source="geometric mean of measured / physics on "
                    + ", ".join(fit.get("measured_on", [])),
                )
            )
    return out


# How optimistic the estimates are taken to be in the plan's stress line (published
# work finds cost-minimal placements degrade sharply when throughput is off by 1.5x).
OPTIMISM_STRESS = 1.5
Z_90_TWO_SIDED = 1.6449  # the normal 95th percentile: a two-sided 90% interval


def _capacity_band(compiled: Compiled, items: list, pools: pd.DataFrame) -> list[Assumption]:
    """Per serving workload: its capacity figures' error band and the share counted on (per
    runtime and source), and the share of peak demand served at 1.5x optimism."""
    problem = compiled.problem
    out, seen = [], set()
    cap: dict[tuple[str, int, int], float] = {}
    periods = list(compiled.periods["name"])
    blocks = list(compiled.blocks["name"])
    for i in items:
        if i.item not in SERVING_ITEMS or not i.workload or not i.capacity_source:
            continue
        w = problem.workload(i.workload)
        vendor = np.array([pools.at[(i.offering, i.mode), "vendor"]], dtype=object)
        accelerator = np.array([pools.at[(i.offering, i.mode), "accelerator_id"]], dtype=object)
        spec = compiled.models[i.workload]
        klass = model_class(spec.params, spec.experts, spec.experts_active)
        runtime = str(runtime_of(vendor, getattr(w, "runtime", None))[0])
        band = float(
            capacity_band_log(
                vendor, i.capacity_source, getattr(w, "runtime", None), accelerator, klass
            )[0]
        )
        where = error_band(str(accelerator[0]), runtime, klass)
        share = planned_capacity_share(
            problem.capacity_confidence,
            problem.capacity_optimism,
            vendor,
            i.capacity_source,
            getattr(w, "runtime", None),
            accelerator,
            klass,
        )
        if problem.capacity_scenario is not None:  # one throughput scenario, as compile does
            share = share * problem.capacity_scenario.share(band)
        # the point estimate behind the line (its capacity is the share counted on)
        estimate = i.capacity_tokens_per_s / float(share[0])
        for b in [blocks.index(i.block)] if i.block in blocks else range(len(blocks)):
            key_pb = (i.workload, periods.index(i.period), b)
            cap[key_pb] = cap.get(key_pb, 0.0) + estimate
        key = (i.workload, runtime, i.capacity_source, where.family)
        if key in seen:
            continue
        seen.add(key)
        validated = (
            f"{where.family}, {runtime}, {klass}: validated on {where.rows} fitted rows"
            if where.validated
            else f"{where.family}, {runtime}, {klass}: OUTSIDE the validated set "
            f"({where.rows} fitted rows < {MIN_ROWS}), planned with the widest band"
        )
        out.append(
            Assumption(
                kind="capacity_band",
                name="capacity_counted",
                workload=i.workload,
                subject=f"{runtime} on {where.family} ({i.capacity_source})",
                value=round(float(share[0]), 4),
                low=round(math.exp(-Z_90_TWO_SIDED * band), 4),
                high=round(math.exp(Z_90_TWO_SIDED * band), 4),
                basis="published" if i.capacity_source != "measured" else "assumed",
                source=f"RMS log error {band:.3f} ("
                + (validated if i.capacity_source != "measured" else "a measured profile")
                + "; bench/accuracy/accuracy.py --bands-table, solver/physics/bands.py); "
                "band = true / estimate, 90%" + _scenario_words(problem.capacity_scenario),
            )
        )
    return out + _stress(compiled, cap)


def _scenario_words(scenario: CapacityScenario | None) -> str:
    """What a throughput scenario (``capacity_scenario``) adds to the share counted on."""
    if scenario is None:
        return ""
    if scenario.factor is not None:
        return f"; the throughput scenario keeps x{scenario.factor:.4g} of each estimate"
    quantile = scenario.band_quantile
    return f"; the throughput scenario takes each estimate at its band's q{quantile:g}"


def _stress(compiled: Compiled, cap: dict[tuple[str, int, int], float]) -> list[Assumption]:
    """Per serving workload, the worst block's capacity estimate / OPTIMISM_STRESS over its
    demand (without the max_utilisation and demand headroom): the share of peak served if
    every capacity estimate is 1.5x optimistic. ``cap`` holds the point estimates (the line
    capacities before capacity_confidence and capacity_optimism took their share)."""
    problem = compiled.problem
    d = compiled.demand
    out = []
    for w in problem.workloads:
        if not isinstance(w, InferenceWorkload):
            continue
        mine = d[d["workload"] == w.name]
        need = (mine["demand"] * mine["tokens_per_unit"]).groupby([mine["period"], mine["block"]])
        ratios = [
            cap.get((w.name, int(p), int(b)), 0.0) / float(v)
            # grouped by two columns, so each key is a (period, block) pair
            for (p, b), v in cast("Iterable[tuple[tuple[int, int], float]]", need.sum().items())
            if float(v) > 0
        ]
        if not ratios or not any(k[0] == w.name for k in cap):
            continue
        # the compiled demand carries (1 + demand_headroom) / max_utilisation: take it off
        headroom = (1.0 + problem.demand_headroom) / w.max_utilisation
        served = min(ratios) * headroom / OPTIMISM_STRESS
        out.append(
            Assumption(
                kind="capacity_band",
                name="peak_served_if_1.5x_optimistic",
                workload=w.name,
                value=round(served, 4),
                unit="of peak demand",
                basis="assumed",
                source="worst period and block: capacity / 1.5 over the block's demand; below 1 "
                "the plan falls short (re-plan with capacity_optimism: 1.5 or "
                "capacity_confidence)",
            )
        )
    return out


def _caps(
    problem: Problem, items: list, pools: pd.DataFrame, binding_pools: set[str]
) -> list[Assumption]:
    """Rented offerings' caps that the catalog assumes or counts; owned sites' power caps."""
    own_sites = {s.name for s in problem.own_sites}
    out, seen = [], set()
    for i in items:
        key = (i.offering, i.mode)
        if key in seen or key not in pools.index:
            continue
        seen.add(key)
        pool = pools.loc[key]
        if i.mode in RENTED_MODES or i.mode in (Mode.RESERVED_1Y, Mode.RESERVED_3Y):
            basis = str(pool["availability_cap_basis"])
            if basis == "problem":
                continue  # the problem's own figure
            out.append(
                Assumption(
                    kind="availability_cap",
                    name="availability_cap",
                    subject=f"{i.offering} {i.mode}",
                    value=int(pool["availability_cap"]),
                    unit="units",
                    basis=basis,
                    source=CAP_SOURCE[basis],
                    binds=str(pool["pool_id"]) in binding_pools,
                )
            )
        elif i.mode == Mode.OWNED and pd.notna(pool["site_power_cap_kw"]):
            site = str(pool["site_id"])
            out.append(
                Assumption(
                    kind="availability_cap",
                    name="site_power_cap_kw",
                    subject=site,
                    value=float(pool["site_power_cap_kw"]),
                    unit="kW",
                    basis="problem" if site in own_sites else "assumed",
                    source="the problem's site"
                    if site in own_sites
                    else "catalogs/sites.csv power_cap_kw: an assumed contracted block "
                    "(catalogs/SOURCES.md)",
                    binds=False,
                )
            )
    return out


def _owned_staff(compiled: Compiled, items: list) -> list[Assumption]:
    """Per site the plan holds owned servers at: staff per server-year at the site's
    largest fleet in the plan, and how it is worked out (per site: the source compares
    data centres by size)."""
    pools = compiled.pools[compiled.pools["kind"] == "owned"].drop_duplicates("site_id")
    pools = pools.set_index("site_id")
    fleet: dict[str, float] = {}
    for i in items:
        if i.mode == Mode.OWNED and i.region in pools.index:
            n = i.units if i.item == Item.STAFF_SCALE else 0.0
            fleet[i.region] = max(fleet.get(i.region, 0.0), n)
    own_sites = {s.name for s in compiled.problem.own_sites}
    out = []
    for site, n in sorted(fleet.items()):
        # site_id is unique here (drop_duplicates above), so .loc gives one row; the stubs
        # cannot know the index is unique.
        pool = cast(pd.Series, pools.loc[site])
        basis = str(pool["staff_basis"])
        salary = float(pool["staff_usd_per_admin_year"])
        if basis == "by_size":
            # headcount linear between the published sizes: the ratio the plan pays for
            ratio = n / admins(n) if n > 1000 else servers_per_admin(n)
            value = salary / ratio
            how = (
                f"{ratio:,.0f} servers per administrator (a fleet of 1,000 or fewer)"
                if n <= 1000
                else f"{ratio:,.1f} servers per administrator at {n:,.0f} servers"
            )
            source = f"{how}, per site, at {usd(salary, cents=False)} per administrator-year; "
            source += STAFF_BY_SIZE_SOURCE
        else:
            value = float(pool["staff_usd_per_server_year"])
            source = (
                "the site's staff_servers_per_admin and staff_usd_per_admin_year"
                if basis == "ratio"
                else "the site's staff_usd_per_server_year, flat whatever the fleet"
            )
        out.append(
            Assumption(
                kind="owned_staff",
                name="staff_usd_per_server_year",
                subject=site,
                value=round(value, 2),
                unit="USD per server-year",
                basis="problem"
                if site in own_sites and basis != "by_size"
                else "catalog"
                if basis != "by_size"
                else "published",
                source=source,
            )
        )
    return out


def _tiers(items: list) -> list[Assumption]:
    """Per provider in the plan: its tier and SLA."""
    out, seen = [], set()
    for i in items:
        if i.provider in seen:
            continue
        seen.add(i.provider)
        out.append(
            Assumption(
                kind="provider_tier",
                name="tier",
                subject=i.provider,
                value=i.tier,
                basis="catalog",
                source="servers you own, at your site's own service level"
                if i.tier == "owned"
                else ("SLA: " + i.sla)
                if i.sla
                else "no SLA listed (catalogs/providers.csv)",
            )
        )
    return out


def _settings(problem: Problem) -> list[Assumption]:
    """The settings that decide a plan: the problem's, then each workload's."""
    out = [_setting(problem, name, "") for name in PROBLEM_SETTINGS]
    if any(isinstance(w, TrainingWorkload) for w in problem.workloads):
        out.append(_setting(problem, "training_margin", ""))
    for w in problem.workloads:
        names = (
            TRAINING_SETTINGS
            if isinstance(w, TrainingWorkload)
            else INFERENCE_SETTINGS
            if isinstance(w, InferenceWorkload)
            else ("interruptible", "min_tier", "runtime")
        )
        out += [
            _setting(w, name, w.name)
            for name in names
            if not (name in INHERITED and getattr(w, name) is None)
        ]
    return out


def _setting(model: BaseModel, name: str, workload: str) -> Assumption:
    """One setting: its value, whether the problem file set it, and its meaning."""
    field = type(model).model_fields[name]
    value = getattr(model, name)
    if name == "slo_percentile" and value is None:
        value = "mean"  # the SLOs checked at the mean only, said in words
    return Assumption(
        kind="default",
        name=name,
        workload=workload,
        value=list(value) if isinstance(value, list | tuple) else value,
        basis="problem" if name in model.model_fields_set else "default",
        source=(field.description or "").split(". ")[0],
    )
