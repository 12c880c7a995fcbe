"""The verification's tally and lookups: the checks counted by name, the tolerances, and
the problem's periods, load blocks and catalog rows a plan is read against.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd

from solver import physics
from solver.inputs.catalog import Catalog
from solver.inputs.load import resolve_load
from solver.inputs.problem import InferenceWorkload, Problem
from solver.physics.constants import HOST_POWER_FRACTION, IDLE_POWER_FRACTION
from solver.plan import Check, LineItem
from solver.units import HOURS_PER_MONTH, PRICE_COLUMN, Mode, server_and_site

REL_TOL = 1e-6


class _Checks:
    def __init__(self) -> None:
        self.items: list[Check] = []
        self.failed: dict[str, list[str]] = defaultdict(list)
        self.counts: dict[str, int] = defaultdict(int)

    def check(self, name: str, ok: bool, detail: str = "") -> None:
        self.counts[name] += 1
        if not ok:
            self.failed[name].append(detail)

    def result(self) -> list[Check]:
        out = []
        for name, n in self.counts.items():
            bad = self.failed.get(name, [])
            out.append(
                Check(
                    name=name,
                    ok=not bad,
                    detail=(
                        f"{n} checked"
                        if not bad
                        else f"{len(bad)} of {n} failed: " + "; ".join(bad[:3])
                    ),
                )
            )
        return out


def _close(a: float, b: float, tol: float = REL_TOL) -> bool:
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def _le(a: float, b: float, tol: float = REL_TOL) -> bool:
    return a <= b + tol * max(1.0, abs(b))


@dataclass(frozen=True)
class _Block:
    name: str
    hours_per_day: float
    index: int


class _Context:
    """Catalog lookups for one plan (pure reads)."""

    def __init__(self, problem: Problem, catalog: Catalog) -> None:
        self.problem = problem
        self.catalog = catalog
        months = [p.months for p in problem.resolved_periods]
        self.period_names = [p.name for p in problem.resolved_periods]
        self.start_month = dict(zip(self.period_names, np.cumsum([0.0] + months[:-1]), strict=True))
        self.months = dict(zip(self.period_names, months, strict=True))
        self.horizon = float(sum(months))
        self.load = resolve_load(problem)
        self.blocks = {
            name: _Block(name, hours, i)
            for i, (name, hours) in enumerate(
                zip(self.load.names, self.load.hours_per_day, strict=True)
            )
        }
        self.workloads = {w.name: w for w in problem.workloads}

    def demand_factor(self, w: InferenceWorkload, block: _Block) -> float:
        """The workload's demand factor in a block, re-derived from the problem.

        Explicit load_blocks: the block's demand_factor (or peak_to_average). A
        problem-level blocks profile: the block's factor over the profile's
        hour-weighted mean. Otherwise the max of the workload's hourly curve over the
        block's clock hours (capacity holds the block's worst hour).
        """
        p = self.problem
        if p.load_blocks is not None:
            given = p.load_blocks[block.index].demand_factor
            return w.peak_to_average if given is None else given
        if not self.load.hours:
            # resolve_load: no clock hours and no load_blocks is the problem's blocks profile
            assert p.load_profile is not None and p.load_profile.blocks is not None
            prof = p.load_profile.blocks
            mean = sum(b.hours_per_day * b.factor for b in prof) / 24.0
            return prof[block.index].factor / mean
        curve = self.load.hourly[w.name]
        return max(curve[h] for h in self.load.hours[block.index])

    def unit(self, item: LineItem) -> dict:
        """Per-unit facts of a line item's offering (cloud) or server@site (owned)."""
        cat = self.catalog
        if item.mode == Mode.OWNED:
            server_id, site_id = server_and_site(item.offering)
            # .loc of one label of a unique index is one row (the stubs allow a frame)
            srv = cast(pd.Series, cat.servers.loc[server_id])
            site = cast(pd.Series, cat.sites.loc[site_id])
            acc = cast(pd.Series, cat.accelerators.loc[srv["accelerator_id"]])
            return {
                "acc": acc,
                "apu": int(srv["accelerators_per_server"]),
                "nvlink": bool(srv["nvlink"]),
                "zone": site["residency_zone"],
                "pue": float(site["pue"]),
                "grid": float(site["grid_gco2_per_kwh"]),
                "usd_per_kwh": float(site["electricity_usd_per_kwh"]),
                "power_kw_max": float(srv["power_kw"]),
                "server": srv,
                "site": site,
                "network_gbps": float(srv["network_gbps"])
                if srv["network_gbps"] == srv["network_gbps"]
                else 100.0,
            }
        off = cast(pd.Series, cat.offerings.loc[item.offering])  # one row, as above
        reg = cast(pd.Series, cat.regions.loc[(off["provider"], off["region"])])
        acc = cast(pd.Series, cat.accelerators.loc[off["accelerator_id"]])
        price_col = PRICE_COLUMN[item.mode]
        return {
            "acc": acc,
            "apu": int(off["accelerators_per_instance"]),
            "nvlink": bool(off["nvlink"]),
            "zone": reg["residency_zone"],
            "pue": float(reg["pue"]),
            "grid": float(reg["grid_gco2_per_kwh"]),
            "price": float(off[price_col]),
            "offering": off,
            "network_gbps": float(off["network_gbps"])
            if off["network_gbps"] == off["network_gbps"]
            else 100.0,
        }

    def hours_at(self, month: float) -> float:
        """Hours from the plan's start to ``month`` months after it: calendar months with
        their real hours when the problem states its start, else 730-hour months."""
        if self.problem.start is None:
            return month * HOURS_PER_MONTH
        base = pd.Timestamp(self.problem.start)
        whole = math.floor(month + 1e-9)
        a = base + pd.DateOffset(months=whole)
        b = base + pd.DateOffset(months=whole + 1)
        hour = pd.Timedelta(hours=1)
        return (a - base) / hour + (month - whole) * ((b - a) / hour)

    def overlap_hours(self, name: str, begin: float, end: float) -> float:
        """Hours of [begin, end) inside period ``name``."""
        s = self.start_month[name]
        lo, hi = max(s, begin), min(s + self.months[name], end)
        return self.hours_at(hi) - self.hours_at(lo) if hi > lo else 0.0

    def period_hours(self, name: str) -> float:
        s = self.start_month[name]
        return self.hours_at(s + self.months[name]) - self.hours_at(s)

    def overlap_months(self, name: str, begin: float, end: float) -> float:
        """Months of [begin, end) inside period ``name``."""
        s = self.start_month[name]
        return max(0.0, min(s + self.months[name], end) - max(s, begin))

    def kg_per_unit_hour(self, u: dict, utilisation: float, owned: bool) -> tuple[float, float]:
        """(kWh, kgCO2e) per unit-hour of use, recomputed from the catalog."""
        if owned:  # above idle: the idle draw is charged with the hosting
            kw = u["power_kw_max"] * (1.0 - IDLE_POWER_FRACTION) * utilisation
        else:
            kw = float(physics.power_w_at_utilisation(float(u["acc"]["tdp_w"]), utilisation))
            kw = kw * u["apu"] * (1.0 + HOST_POWER_FRACTION) / 1000.0
        kwh = float(physics.energy_kwh(kw * 1000.0, 1.0, u["pue"]))
        kg = float(physics.operational_kgco2e(kwh, u["grid"]))
        if not owned:
            kg += (
                float(physics.embodied_kgco2e_per_hour(float(u["acc"]["embodied_kgco2e"])))
                * u["apu"]
            )
        return kwh, kg
