"""The scenarios of a problem with ``uncertainty:`` and what each one changes: rented prices
(by provider, accelerator, mode or the currency they are billed in: a currency move changes
only the offerings priced in that currency), online demand and serving capacity, applied to
a problem compiled once.
"""

from __future__ import annotations

from dataclasses import replace
from typing import cast

import numpy as np
import pandas as pd

from solver.core.compile import Compiled, CompileReport, prune_dominated_pools
from solver.errors import ProcureError, suggestion
from solver.inputs.catalog import Catalog
from solver.inputs.problem import (
    CapacityScenario,
    DemandMultiplier,
    InferenceWorkload,
    PriceMultiplier,
    Problem,
    Scenario,
)
from solver.inputs.provenance import BASE_CURRENCY
from solver.units import PRICE_COLUMN, RENTED_MODES


def scenarios_of(problem: Problem, catalog: Catalog) -> list[Scenario]:
    """The problem's scenarios: given, or drawn with its seed; checked against the catalog."""
    u = problem.uncertainty
    if u is None:
        raise ProcureError(
            "the problem has no uncertainty: section",
            field="uncertainty",
            fix="add uncertainty: {scenarios: [...]} or {n_scenarios: N, price_sigma: 0.2}",
        )
    if u.scenarios is not None:
        scenarios = list(u.scenarios)
    elif u.n_scenarios is None:  # throughput scenarios alone
        scenarios = [Scenario(name="as_given", probability=1.0)]
    else:
        rng = np.random.default_rng(u.seed)
        providers = sorted(set(catalog.offerings["provider"]))
        low, high = u.demand_range
        scenarios = []
        for k in range(u.n_scenarios or 0):
            prices = [
                PriceMultiplier(provider=p, factor=float(np.exp(rng.normal(0.0, u.price_sigma))))
                for p in providers
            ]
            demand = [DemandMultiplier(factor=float(rng.uniform(low, high)))]
            prices += currency_moves(catalog, u.currency_sigma, rng)
            scenarios.append(
                Scenario(
                    name=f"s{k + 1:03d}",
                    probability=1.0 / u.n_scenarios,
                    prices=prices,
                    demand=demand,
                )
            )
    _check_against_catalog(scenarios, catalog)
    return with_throughput(scenarios, u.throughput_scenarios, alone=u.scenarios is None
                           and u.n_scenarios is None)  # fmt: skip


def with_throughput(scenarios: list[Scenario], throughput, *, alone: bool) -> list[Scenario]:
    """The scenarios times the throughput scenarios (a product: p = p_s x p_t, named
    ``s|t``, or ``t`` when there are no price and demand scenarios)."""
    if not throughput:
        return scenarios
    for i, s in enumerate(scenarios):
        if s.throughput is not None:
            raise ProcureError(
                f"scenario {s.name!r} sets its own throughput and throughput_scenarios "
                "multiplies every scenario",
                field=f"uncertainty.scenarios[{i}].throughput",
                fix="set the capacity in each scenario or in throughput_scenarios, not both",
            )
    return [
        s.model_copy(
            update={
                "name": t.name if alone else f"{s.name}|{t.name}",
                "probability": s.probability * t.probability,
                "throughput": CapacityScenario(factor=t.factor, band_quantile=t.band_quantile),
            }
        )
        for s in scenarios
        for t in throughput
    ]


def has_throughput(scenarios: list[Scenario]) -> bool:
    """Some scenario sets its serving capacity."""
    return any(s.throughput is not None for s in scenarios)


def throughput_shares(base: Compiled, throughput: CapacityScenario | None) -> np.ndarray:
    """Per option of ``base``, the share of its capacity per unit that holds in a scenario
    with ``throughput`` (1 for training options and without one): what compiling with
    ``capacity_scenario`` gives (solver.core.compile applies the same share)."""
    n = len(base.options)
    if throughput is None or "capacity_band_log" not in base.options:
        return np.ones(n)
    band = base.options["capacity_band_log"].to_numpy(dtype=float)
    serving = np.isfinite(band)
    out = np.ones(n)
    out[serving] = throughput.share(band[serving])
    return out


def foreign_currencies(catalog: Catalog) -> list[str]:
    """The currencies other than USD the catalog's offerings are priced in, by code."""
    return sorted(set(catalog.offerings["currency"]) - {BASE_CURRENCY})


def currency_moves(
    catalog: Catalog, sigma: float, rng: np.random.Generator
) -> list[PriceMultiplier]:
    """One drawn currency move per currency other than USD the offerings are priced in:
    their rented prices x exp(N(0, ``sigma``)); none when ``sigma`` is 0 (the draws of a
    problem without currency moves stay as they were)."""
    if sigma <= 0:
        return []
    return [
        PriceMultiplier(currency=c, factor=float(np.exp(rng.normal(0.0, sigma))))
        for c in foreign_currencies(catalog)
    ]


def _check_against_catalog(scenarios: list[Scenario], catalog: Catalog) -> None:
    providers = sorted(set(catalog.offerings["provider"]))
    currencies = sorted(set(catalog.offerings["currency"]))
    for i, s in enumerate(scenarios):
        for j, m in enumerate(s.prices):
            where = f"uncertainty.scenarios[{i}].prices[{j}]"
            if m.currency is not None and m.currency not in currencies:
                raise ProcureError(
                    f"scenario {s.name!r} moves prices in {m.currency}, and no offering of the "
                    f"catalog is priced in it (its currencies: {', '.join(currencies)})",
                    field=f"{where}.currency",
                    fix=f"write one of {', '.join(currencies)}, or remove this price move",
                )
            if m.provider is not None and m.provider not in providers:
                raise ProcureError(
                    f"scenario {s.name!r} prices provider {m.provider!r}, which the catalog "
                    "does not have",
                    field=f"{where}.provider",
                    fix=suggestion(m.provider, providers),
                )
            if m.accelerator is not None:
                try:
                    catalog.resolve_accelerator(m.accelerator)
                except ProcureError as exc:
                    raise ProcureError(
                        exc.message, field=f"{where}.accelerator", fix=exc.fix
                    ) from None


def price_factors(catalog: Catalog, scenario: Scenario) -> pd.DataFrame:
    """Per offering, the scenario's multiplier on its on-demand and spot prices."""
    off = catalog.offerings
    factors = pd.DataFrame(1.0, index=off.index, columns=list(RENTED_MODES))
    for m in scenario.prices:
        rows = np.ones(len(off), dtype=bool)
        if m.provider is not None:
            rows &= (off["provider"] == m.provider).to_numpy()
        if m.accelerator is not None:
            rows &= (off["accelerator_id"] == catalog.resolve_accelerator(m.accelerator)).to_numpy()
        if m.currency is not None:
            rows &= (off["currency"] == m.currency).to_numpy()
        for mode in [m.mode] if m.mode else list(RENTED_MODES):
            factors.loc[rows, mode] *= m.factor
    return factors


def demand_factors(problem: Problem, scenario: Scenario) -> dict[tuple[str, str], float]:
    """(online workload, period name) -> the scenario's multiplier on its demand."""
    periods = [p.name for p in problem.resolved_periods]
    out = {}
    for w in problem.workloads:
        if not isinstance(w, InferenceWorkload):
            continue
        for p in periods:
            f = 1.0
            for m in scenario.demand:
                if m.workload in (None, w.name) and m.period in (None, p):
                    f *= m.factor
            out[(w.name, p)] = f
    return out


def scenario_problem(
    problem: Problem,
    demand: dict[tuple[str, str], float],
    caps: str,
    throughput: CapacityScenario | None = None,
) -> Problem:
    """The deterministic problem of one scenario: its demand per period in
    ``demand_by_period``, its serving capacity in ``capacity_scenario``; no budget or
    carbon cap when they hold only in expectation."""
    workloads = []
    for w in problem.workloads:
        if isinstance(w, InferenceWorkload):
            by_period = {
                p: w.demand_by_period.get(p, 1.0) * f
                for (name, p), f in demand.items()
                if name == w.name and (f != 1.0 or p in w.demand_by_period)
            }
            w = w.model_copy(update={"demand_by_period": by_period})
        workloads.append(w)
    update: dict = {"workloads": workloads, "uncertainty": None}
    if throughput is not None:
        update["capacity_scenario"] = throughput
    if caps == "expectation":
        update |= {"budget_usd": None, "carbon_cap_tco2e": None}
    return problem.model_copy(update=update)


def scenario_catalog(catalog: Catalog, factors: pd.DataFrame) -> Catalog:
    """The catalog with the scenario's rented prices."""
    off = catalog.offerings.copy()
    for mode in RENTED_MODES:
        off[PRICE_COLUMN[mode]] = off[PRICE_COLUMN[mode]] * factors[mode]
    return replace(catalog, offerings=off)


def scenario_compiled(
    base: Compiled,
    problem_s: Problem,
    factors: pd.DataFrame,
    demand: dict[tuple[str, str], float],
    shares: np.ndarray | None = None,
) -> Compiled:
    """``base`` (compiled unpruned) with the scenario's prices, demand and capacity shares
    (:func:`throughput_shares`, per option): what compiling the scenario's problem and
    catalog gives, without compiling again."""
    pools = base.pools.copy()
    cloud = (pools["kind"] == "cloud").to_numpy() & pools["mode"].isin(RENTED_MODES).to_numpy()
    f = np.ones(len(pools))
    for i in np.flatnonzero(cloud):
        f[i] = float(
            cast(float, factors.at[pools["offering_id"].iat[int(i)], pools["mode"].iat[int(i)]])
        )
    by_pool = dict(zip(pools["pool_id"], f, strict=True))
    pools["price_usd_per_hour"] = pools["price_usd_per_hour"] * f
    options = base.options.copy()
    f_opt = options["pool_id"].map(by_pool).fillna(1.0).to_numpy()
    options["price_usd_per_hour"] = options["price_usd_per_hour"] * f_opt
    if "rent_usd" in options:  # training options: rent of the whole job
        options["rent_usd"] = options["rent_usd"] * f_opt
    buckets = base.bucket_capacity
    if shares is not None and not np.all(shares == 1.0):
        options["tokens_per_s_per_unit"] = options["tokens_per_s_per_unit"] * shares
        by_option = dict(zip(options["option_id"], shares, strict=True))
        buckets = buckets.copy()
        buckets["requests_per_s_per_unit"] = (
            buckets["requests_per_s_per_unit"]
            * buckets["option_id"].map(by_option).fillna(1.0).to_numpy()
        )
    table = base.demand.copy()
    names = list(base.periods["name"])
    table["demand"] = table["demand"] * [
        demand.get((w, names[int(t)]), 1.0)
        for w, t in zip(table["workload"], table["period"], strict=True)
    ]
    return replace(
        base, problem=problem_s, pools=pools, options=options, demand=table,
        bucket_capacity=buckets,
    )  # fmt: skip


def keep_pools(compiled: list[Compiled], kept: set[str]) -> list[Compiled]:
    """Each compiled scenario with only the options of the ``kept`` pools."""
    out = []
    for c in compiled:
        options = c.options[c.options["pool_id"].isin(kept)].reset_index(drop=True)
        buckets = c.bucket_capacity[c.bucket_capacity["option_id"].isin(options["option_id"])]
        out.append(replace(c, options=options, bucket_capacity=buckets, pruned_dominated=True))
    return out


def pools_kept_in_any(compiled: list[Compiled]) -> set[str]:
    """Pools that dominance pruning keeps in at least one scenario (owned always)."""
    kept: set[str] = set()
    for c in compiled:
        options = prune_dominated_pools(
            c.options, c.pools, c.demand, c.problem, CompileReport(),
            bucket_capacity=c.bucket_capacity,
        )  # fmt: skip
        kept |= set(options["pool_id"])
    return kept
