"""Uncertainty in a problem: price, demand and throughput scenarios with their
probabilities, drawn scenarios, and the risk measure of a two-stage plan."""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Annotated, Literal, cast

import numpy as np
from pydantic import Field, model_validator

from solver.errors import ProcureError
from solver.inputs.problem.fields import MAX_MAGNITUDE, StrictModel


class PriceMultiplier(StrictModel):
    """Rented prices in a scenario: on-demand and spot prices of the matching offerings
    times ``factor`` (commitments and purchases are signed now, at today's prices)."""

    provider: str | None = Field(None, description="Only this provider; default all")
    accelerator: str | None = Field(None, description="Only this accelerator; default all")
    mode: Literal["on_demand", "spot"] | None = Field(
        None, description="Only this rented mode; default both"
    )
    currency: str | None = Field(
        None,
        pattern=r"^[A-Z]{3}$",
        description="Only offerings priced in this currency (ISO 4217, the catalog's "
        "currency column): a currency move, e.g. {currency: EUR, factor: 1.1} for the euro "
        "10% dearer in US dollars; default every currency",
    )
    factor: float = Field(gt=0, le=1e3, description="Price multiplier, e.g. 1.2 for +20%")


class DemandMultiplier(StrictModel):
    """Online demand in a scenario: the matching workloads' demand times ``factor``."""

    workload: str | None = Field(None, description="Only this online workload; default all")
    period: str | None = Field(None, description="Only this period; default all")
    factor: float = Field(gt=0, le=1e3, description="Demand multiplier, e.g. 0.8")


class CapacityScenario(StrictModel):
    """Serving capacity in one throughput scenario: every serving option's
    capacity per unit times ``factor``, or at the ``band_quantile`` of its own error band.

    A band quantile q scales each estimate by exp(z_q x band), band being the RMS log error
    of its source and runtime (solver/physics/constants.py CAPACITY_BAND_LOG: a measured
    profile 0.02, a physics estimate 0.18-0.31), so q = 0.1 keeps 0.975 of a measured figure
    and 0.77 of a TensorRT-LLM physics one: a measured profile is trusted more, as the
    accuracy table says it should be. Training options are not scaled.
    """

    factor: float | None = Field(
        None, gt=0, le=10, description="Capacity x factor (1/1.5: estimates 1.5x optimistic)"
    )
    band_quantile: float | None = Field(
        None, gt=0, lt=1, description="Or capacity at this quantile of each estimate's band"
    )

    @model_validator(mode="after")
    def _one_way(self) -> CapacityScenario:
        if (self.factor is None) == (self.band_quantile is None):
            raise ValueError("give either factor (e.g. 0.8) or band_quantile (e.g. 0.1)")
        return self

    def share(self, band_log: np.ndarray | float) -> np.ndarray:
        """Share of each capacity estimate that holds in this scenario, per ``band_log``."""
        band = np.asarray(band_log, dtype=float)
        if self.factor is not None:
            return np.full(band.shape, float(self.factor))
        quantile = cast(float, self.band_quantile)  # _one_way: set when factor is not
        return np.exp(NormalDist().inv_cdf(float(quantile)) * band)


class ThroughputScenario(CapacityScenario):
    """One throughput scenario of ``uncertainty.throughput_scenarios``, with its
    probability (combined with the price and demand scenarios as a product)."""

    name: str = Field(min_length=1, max_length=64)
    probability: float = Field(gt=0, le=1)


#: ``--throughput-scenarios band``: Swanson's 30-40-30 rule, the 10th, 50th and 90th
#: percentiles weighted 0.3, 0.4 and 0.3, which matches the mean and variance of a normal
#: (here ln(true / estimate); Hurst, Brown and Swanson, "Swanson's 30-40-30 rule", AAPG
#: Bulletin 84(12), 2000; derivation: G. Keith, "Swanson's Swansong", 2020,
#: https://graeme-47328.medium.com/swansons-swansong-569c932b3f68)
SWANSON_BAND_SCENARIOS: tuple[tuple[str, float, float], ...] = (
    ("band_p10", 0.1, 0.3),
    ("band_p50", 0.5, 0.4),
    ("band_p90", 0.9, 0.3),
)


def throughput_scenarios_from_text(text: str) -> list[ThroughputScenario]:
    """``--throughput-scenarios``: ``F:P,...`` (capacity factor F with probability P),
    ``qQ:P,...`` (band quantile Q), or ``band`` (SWANSON_BAND_SCENARIOS).

    Raises
    ------
    ProcureError
        A part that is not a number pair, a factor <= 0, a probability outside (0, 1], or
        probabilities that do not add up to 1.
    """
    field, fix = (
        "--throughput-scenarios",
        (
            "write factor:probability pairs, e.g. 1:0.6,0.8:0.3,0.6667:0.1 (capacity x 1, x 0.8 "
            "and x 0.6667), qQ:P for a band quantile (q0.1:0.3,q0.5:0.4,q0.9:0.3), or band"
        ),
    )
    if text.strip().lower() == "band":
        return [
            ThroughputScenario(name=n, band_quantile=q, probability=p)
            for n, q, p in SWANSON_BAND_SCENARIOS
        ]
    out = []
    for part in [x.strip() for x in text.split(",") if x.strip()]:
        value, _, prob = part.partition(":")
        quantile = value.lower().startswith("q")
        try:
            v, p = float(value[1:] if quantile else value), float(prob)
        except ValueError:
            raise ProcureError(f"{part!r} is not value:probability", field=field, fix=fix) from None
        if not (0 < p <= 1) or not math.isfinite(v) or v <= 0 or (quantile and v >= 1):
            what = "band quantile" if quantile else "factor"
            raise ProcureError(
                f"{part!r}: the {what} must be above 0"
                + (" and below 1" if quantile else "")
                + " and the probability in (0, 1]",
                field=field,
                fix=fix,
            )
        name = f"q{v:g}" if quantile else f"x{v:g}"
        kind = {"band_quantile": v} if quantile else {"factor": v}
        out.append(ThroughputScenario(name=name, probability=p, **kind))
    total = sum(s.probability for s in out)
    if not out or abs(total - 1.0) > 1e-6:
        raise ProcureError(
            f"the throughput scenarios' probabilities add up to {total:g}, not 1",
            field=field,
            fix="scale the probabilities so that they add up to 1",
        )
    if len({s.name for s in out}) != len(out):
        raise ProcureError("two throughput scenarios are the same", field=field, fix=fix)
    return out


class Scenario(StrictModel):
    """One way the future may go, with its probability."""

    name: str = Field(min_length=1, max_length=64)
    probability: float = Field(gt=0, le=1)
    prices: list[PriceMultiplier] = Field(default_factory=list)
    demand: list[DemandMultiplier] = Field(default_factory=list)
    throughput: CapacityScenario | None = Field(
        None,
        description="Serving capacity in this scenario: {factor: 0.8} or {band_quantile: 0.1} "
        "(default: the estimates as they are)",
    )


class Risk(StrictModel):
    """Risk aversion of a two-stage plan: minimise expected cost + weight x CVaR.

    CVaR at ``cvar_level`` (alpha) is the expected cost of the worst 1 - alpha of the
    scenarios by probability (Rockafellar and Uryasev, 2000).
    """

    cvar_level: float = Field(
        gt=0, lt=1, description="alpha in (0, 1): 0.9 averages the worst 10% of scenarios"
    )
    weight: float = Field(
        ge=0, le=1e3, description="USD of objective per USD of CVaR (0: expected cost only)"
    )


class Uncertainty(StrictModel):
    """Scenarios for two-stage planning (solver/analyses/stochastic.py): given, or drawn."""

    scenarios: list[Scenario] | None = Field(
        None, min_length=1, description="Scenarios with probabilities summing to 1"
    )
    n_scenarios: int | None = Field(
        None, ge=1, le=1000, description="Or draw this many equally likely scenarios"
    )
    seed: int = Field(0, ge=0, description="Random seed of the drawn scenarios")
    price_sigma: float = Field(
        0.0,
        ge=0,
        le=2,
        description="Drawn: each provider's rented prices x exp(N(0, sigma)) (lognormal)",
    )
    currency_sigma: float = Field(
        0.0,
        ge=0,
        le=2,
        description="Drawn: the rented prices in each currency other than USD x "
        "exp(N(0, sigma)) (lognormal), drawn once per scenario and currency, on top of "
        "price_sigma: the exchange rate's move over the horizon, e.g. 0.08 for a yearly "
        "EUR/USD volatility of 8%",
    )
    demand_range: tuple[
        Annotated[float, Field(gt=0, le=1e3)], Annotated[float, Field(gt=0, le=1e3)]
    ] = Field((1.0, 1.0), description="Drawn: online demand x uniform(low, high)")
    caps: Literal["every_scenario", "expectation"] = Field(
        "every_scenario",
        description="Budget and carbon cap hold in every scenario, or in expectation",
    )
    max_scenario_cost_usd: float | None = Field(
        None, gt=0, le=MAX_MAGNITUDE, description="Cap on any one scenario's cost (worst case)"
    )
    risk: Risk | None = Field(
        None,
        description="Minimise expected cost + weight x CVaR at cvar_level instead of the "
        "expected cost (e.g. {cvar_level: 0.9, weight: 0.5})",
    )

    throughput_scenarios: list[ThroughputScenario] | None = Field(
        None,
        min_length=1,
        description="Scenarios of serving capacity (issue 33), probabilities summing to 1, "
        "e.g. [{name: as_estimated, factor: 1, probability: 0.6}, {name: optimistic_1.5, "
        "factor: 0.6667, probability: 0.1}, ...] or {band_quantile: 0.1}: combined with the "
        "price and demand scenarios as a product (independent), or alone",
    )

    @model_validator(mode="after")
    def _one_source(self) -> Uncertainty:
        if self.scenarios is not None and self.n_scenarios is not None:
            raise ValueError("give either scenarios (a list) or n_scenarios (to draw them)")
        if self.scenarios is None and self.n_scenarios is None and not self.throughput_scenarios:
            raise ValueError(
                "give scenarios (a list), n_scenarios (to draw them) or throughput_scenarios"
            )
        if self.throughput_scenarios is not None:
            total = sum(s.probability for s in self.throughput_scenarios)
            if abs(total - 1.0) > 1e-6:
                raise ValueError(
                    f"throughput_scenarios probabilities add up to {total:g}, not 1; scale "
                    "them so they do"
                )
            names = [s.name for s in self.throughput_scenarios]
            if len(set(names)) != len(names):
                raise ValueError("throughput_scenarios names must be unique")
        if self.scenarios is not None:
            total = sum(s.probability for s in self.scenarios)
            if abs(total - 1.0) > 1e-6:
                raise ValueError(
                    f"scenario probabilities add up to {total:g}, not 1; scale them so they do"
                )
            names = [s.name for s in self.scenarios]
            if len(set(names)) != len(names):
                raise ValueError("scenario names must be unique")
        low, high = self.demand_range
        if low > high:
            raise ValueError(f"demand_range low {low:g} is above high {high:g}")
        return self
