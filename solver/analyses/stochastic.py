"""Commit now, adapt later: two-stage planning under price and demand uncertainty.

The decision finance signs is the part that cannot be undone: reservations and purchases
(variables ``buy`` and ``commit``), the first stage, shared by every scenario. Everything
rented or used (serving units, training clusters, shortfall) is the second stage, one
copy per scenario, chosen after the scenario is known. The objective is the expected
cost, sum_s p_s cost_s; budget and carbon cap hold in every scenario or in expectation
(``uncertainty.caps``), and ``max_scenario_cost_usd`` caps the worst scenario. With
``uncertainty.risk`` the objective is the expected cost + weight x CVaR at a level
(:func:`add_cvar`, Rockafellar and Uryasev's linearisation).

A scenario multiplies rented prices (on-demand and spot, by provider, accelerator and
mode: commitments and purchases are signed now, at today's prices), online demand (by
workload and period) and serving capacity (``throughput``, issue 33: every serving
option's capacity per unit times a factor, or at a quantile of its own estimate's error
band, so a measured profile moves less than a physics estimate). Scenarios are given with
probabilities, or drawn with a seed (lognormal price drift per provider, demand uniform in
a range); ``throughput_scenarios`` multiply them as a product (capacity error taken as
independent of prices and demand). Capacity that falls short in a scenario is made up by
its recourse: on-demand or spot units rented in that scenario (min_cost allows no unserved
demand, so there is no shortfall penalty to pay instead).

How it is solved (the extensive form): the problem is compiled once, every scenario is
that compiled problem with its prices and demands; a pool is kept if dominance pruning
keeps it in any scenario (exact: a pool dominated in every scenario is never needed, and
commitments are priced the same in all); the scenario models are joined with their
first-stage variables shared. Each scenario's plan (the commitments and its own rentals)
is extracted and checked by the independent verifier against that scenario's problem
and catalog.

Reported beside the plan (Birge and Louveaux, Introduction to Stochastic Programming,
2nd ed., section 4.1): the expected cost RP; the deterministic plan's commitments (the
problem at expected prices and demands, EV) evaluated on the same scenarios, EEV; the
value of the stochastic solution VSS = EEV - RP >= 0; each scenario solved alone with
hindsight, WS = sum_s p_s min cost_s; the expected value of perfect information
EVPI = RP - WS >= 0. With throughput scenarios, also the commitments of the plan that takes
every capacity estimate at face value (the problem as written, ``procure solve`` without
uncertainty) and their expected cost with each scenario's rentals re-planned: how the
first stage changes when the estimates may be optimistic.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from solver.core.backends import SolveOptions
from solver.core.backends.base import relative_gap
from solver.core.clock import first_day
from solver.core.compile import Compiled, CompileReport, compile_problem, prune_dominated_pools
from solver.core.model import (
    Expression,
    LinearModel,
    Row,
    VarKind,
    budget_bound,
    build_model,
    new_row,
)
from solver.core.restrictions import described, lifted_periods, period_restrictions
from solver.core.time_budget import RESERVE_SHARE
from solver.errors import InfeasibleError, NoPlanError, ProcureError, suggestion
from solver.inputs.catalog import Catalog
from solver.inputs.problem import (
    CapacityScenario,
    DemandMultiplier,
    InferenceWorkload,
    PriceMultiplier,
    Problem,
    Scenario,
)
from solver.plan import LineItem, extract_plan
from solver.trust.price_requirements import refuse_weak_prices, weak_prices_in
from solver.units import PRICE_COLUMN, RENTED_MODES, Item

FIRST_STAGE = (VarKind.BUY.value, VarKind.COMMIT.value)
MAX_OWN_CANDIDATES = 5  # decomposition: scenarios whose own commitments are tried
MAX_BENDERS_ITERATIONS = 50  # L-shaped method: master solves at most


class ScenarioOutcome(BaseModel):
    """One scenario under the stochastic plan's commitments."""

    name: str
    probability: float
    total_cost_usd: float = Field(description="Commitments plus this scenario's rentals")
    total_co2e_t: float
    verified: bool = Field(description="Its plan passed the independent verifier")
    hindsight_cost_usd: float | None = Field(
        None, description="The best plan had this scenario been known (wait and see)"
    )
    deterministic_cost_usd: float | None = Field(
        None,
        description="The deterministic (EV) plan's commitments with this scenario's rentals "
        "re-planned; None when they leave it no feasible plan",
    )
    all_rented_cost_usd: float | None = Field(
        None,
        description="No new commitments, everything rented in this scenario; None when "
        "renting alone has no feasible plan",
    )
    saved_vs_all_rented_usd: float | None = Field(
        None,
        description="all_rented_cost_usd - total_cost_usd: what the commitments save in this "
        "scenario (negative: what they cost against renting everything)",
    )
    throughput: CapacityScenario | None = Field(
        None, description="The scenario's serving capacity (None: the estimates as they are)"
    )
    point_estimate_cost_usd: float | None = Field(
        None,
        description="With throughput scenarios: the point-estimate plan's commitments with "
        "this scenario's rentals re-planned; None when they leave it no feasible plan",
    )


class StochasticPlan(BaseModel):
    """The two-stage plan: commitments now, and what they lead to in each scenario."""

    problem: str
    status: str = Field(
        description="optimal (extensive form, proven) or feasible (decomposition: the best "
        "candidate commitments, with their gap to the lower bound)"
    )
    method: str = Field(description="extensive_form or decomposition")
    solver: str
    gap: float | None = Field(description="(objective - lower bound) / objective")
    lower_bound_usd: float | None = Field(
        None,
        description="A proven lower bound on the objective (the expected cost; with risk:, "
        "plus weight x CVaR) of any commitments",
    )
    caps: str = Field(description="every_scenario or expectation (budget and carbon cap)")
    expected_cost_usd: float = Field(description="RP: sum over scenarios of p x cost")
    objective_usd: float | None = Field(
        None, description="What was minimised: expected cost, plus weight x CVaR with risk:"
    )
    cvar_level: float | None = Field(None, description="risk: alpha of the CVaR")
    risk_weight: float | None = Field(None, description="risk: weight of the CVaR")
    cvar_usd: float | None = Field(
        None, description="CVaR at cvar_level of the cost: mean of the worst 1 - alpha"
    )
    commitments: list[LineItem] = Field(description="Reservations and purchases, signed now")
    scenarios: list[ScenarioOutcome]
    cost_percentiles_usd: dict[str, float] = Field(description="p5, p50, p95 of the cost")
    worst_case_usd: float
    worst_scenario: str
    deterministic_commitments: list[LineItem] = Field(
        description="The commitments of the plan at expected prices and demands (EV)"
    )
    deterministic_expected_cost_usd: float | None = Field(
        None, description="EEV: the EV commitments, rentals re-planned in each scenario"
    )
    value_of_stochastic_solution_usd: float | None = Field(None, description="VSS = EEV - RP")
    all_rented_expected_cost_usd: float | None = Field(
        None, description="No new commitments: sum of p x all-rented cost (None if one fails)"
    )
    wait_and_see_usd: float | None = Field(None, description="WS: sum of p x hindsight cost")
    expected_value_of_perfect_information_usd: float | None = Field(
        None, description="EVPI = RP - WS"
    )
    point_estimate_commitments: list[LineItem] | None = Field(
        None,
        description="With throughput scenarios: the commitments of the plan that takes every "
        "capacity estimate at face value (the problem as written, without uncertainty)",
    )
    point_estimate_expected_cost_usd: float | None = Field(
        None,
        description="Those commitments, rentals re-planned in each scenario: sum of p x cost "
        "(None if they leave some scenario no feasible plan)",
    )
    verified: bool
    seconds: dict[str, float] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    stopped_at_time_limit: bool = Field(
        False,
        description="The time limit stopped the solve: the plan is the best of the "
        "candidates priced in time (verified, gap against the proven bound), and "
        "cut_at_time_limit says what was left out",
    )
    cut_at_time_limit: list[str] = Field(
        default_factory=list, description="What the time limit left out, in words"
    )


# ------------------------------------------------------------------ scenarios


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


def _check_against_catalog(scenarios: list[Scenario], catalog: Catalog) -> None:
    providers = sorted(set(catalog.offerings["provider"]))
    for i, s in enumerate(scenarios):
        for j, m in enumerate(s.prices):
            where = f"uncertainty.scenarios[{i}].prices[{j}]"
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
        f[i] = float(factors.at[pools["offering_id"].iat[i], pools["mode"].iat[i]])
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


# ------------------------------------------------------------------ the extensive form


def _remap(e: Expression, idx: np.ndarray, weight: float = 1.0) -> Expression:
    out = Expression()
    for i, c in e.coefs.items():
        out.coefs[int(idx[i])] += weight * c
    out.constant = weight * e.constant
    return out


def _add(into: Expression, e: Expression) -> None:
    for i, c in e.coefs.items():
        into.coefs[i] += c
    into.constant += e.constant


def extensive_form(
    models: list[LinearModel],
    probabilities: list[float],
    names: list[str],
    *,
    caps: str,
    budget_usd: float | None = None,
    carbon_cap_tco2e: float | None = None,
    max_scenario_cost_usd: float | None = None,
) -> tuple[LinearModel, list[np.ndarray]]:
    """One model of every scenario, the first-stage variables shared.

    Returns the model (objective: expected cost) and, per scenario, the position in it
    of each of the scenario model's variables. Rows that hold only first-stage
    variables are written once; the others once per scenario (named ``row@scenario``).
    With ``caps="expectation"`` the scenarios' budget and carbon rows are replaced by one
    on the expected cost and CO2e.
    """
    base = models[0].variables
    first = base["kind"].isin(FIRST_STAGE).to_numpy()
    first_names = base["name"][first].tolist()
    first_pos = {n: i for i, n in enumerate(first_names)}
    frames, maps, n = [base[first]], [], len(first_names)
    for s, m in enumerate(models):
        v = m.variables
        fm = v["kind"].isin(FIRST_STAGE).to_numpy()
        if sorted(v["name"][fm]) != sorted(first_names):
            raise RuntimeError("the scenario models differ in their first stage (a bug)")
        idx = np.empty(len(v), dtype=int)
        idx[fm] = [first_pos[x] for x in v["name"][fm]]
        second = np.flatnonzero(~fm)
        idx[second] = n + np.arange(len(second))
        n += len(second)
        part = v.iloc[second].copy()
        part["name"] = part["name"] + "@" + names[s]
        frames.append(part)
        maps.append(idx)
    rows: list[Row] = []
    written: set[str] = set()
    objective, cost, co2, shortfall = Expression(), Expression(), Expression(), Expression()
    expressions: dict[str, Expression] = {}
    for s, m in enumerate(models):
        idx, name = maps[s], names[s]
        for r in m.rows:
            if caps == "expectation" and r.family in ("budget", "carbon_cap"):
                continue
            coefs = {int(idx[i]): c for i, c in r.coefs.items()}
            if coefs and max(coefs) < len(first_names):  # first stage only: once
                if r.name not in written:
                    written.add(r.name)
                    rows.append(replace(r, coefs=coefs))
                continue
            rows.append(new_row(r.family, r.key, coefs, r.sense, r.rhs, scenario=name))
        p = probabilities[s]
        _add(objective, _remap(m.objective, idx, p))
        cost_s = _remap(m.expressions["total_cost_usd"], idx)
        _add(cost, _remap(m.expressions["total_cost_usd"], idx, p))
        _add(co2, _remap(m.expressions["total_co2e_t"], idx, p))
        _add(shortfall, _remap(m.expressions["shortfall_penalty_usd"], idx, p))
        expressions[f"total_cost_usd@{name}"] = cost_s
        if max_scenario_cost_usd is not None:
            cap = max_scenario_cost_usd - cost_s.constant
            rows.append(new_row("scenario_cost_cap", (name,), dict(cost_s.coefs), "<=", cap))
    if caps == "expectation" and budget_usd is not None:
        rows.append(new_row("budget", (), dict(cost.coefs), "<=", budget_usd - cost.constant))
    if caps == "expectation" and carbon_cap_tco2e is not None:
        cap = carbon_cap_tco2e - co2.constant
        rows.append(new_row("carbon_cap", (), dict(co2.coefs), "<=", cap))
    expressions |= {
        "total_cost_usd": cost,
        "total_co2e_t": co2,
        "shortfall_penalty_usd": shortfall,
        "capex_usd": _remap(models[0].expressions["capex_usd"], maps[0]),
        "npv_usd": cost,
    }
    variables = pd.concat(frames, ignore_index=True)
    return LinearModel(variables, rows, objective, expressions), maps


def add_cvar(
    model: LinearModel, probabilities: list[float], names: list[str], level: float, weight: float
) -> LinearModel:
    """The extensive form with ``weight`` x CVaR at ``level`` of the scenario cost added to
    its objective (Rockafellar and Uryasev's linearisation).

    CVaR_alpha = min over eta of eta + 1/(1 - alpha) sum_s p_s max(cost_s - eta, 0): one
    free variable ``eta`` (at the optimum, the value at risk) and one ``excess[s] >= 0``
    per scenario with the row ``cvar_excess[s]``: excess[s] >= cost_s - eta. Minimising
    the objective minimises over eta too, so the added term is exactly weight x CVaR.
    ``expressions["cvar_usd"]`` is eta + 1/(1 - alpha) sum_s p_s excess[s].
    """
    n = len(model.variables)
    extra = pd.DataFrame(
        {
            "name": ["cvar_eta", *(f"cvar_excess@{x}" for x in names)],
            "kind": VarKind.RISK.value,
            "integer": False,
            "lb": [-np.inf] + [0.0] * len(names),
            "ub": np.inf,
        }
    )
    cvar = Expression()
    cvar.add(n, 1.0)
    rows = list(model.rows)
    for s, (p, name) in enumerate(zip(probabilities, names, strict=True)):
        cost = model.expressions[f"total_cost_usd@{name}"]
        cvar.add(n + 1 + s, p / (1.0 - level))
        coefs = {i: -c for i, c in cost.coefs.items()} | {n: 1.0, n + 1 + s: 1.0}
        rows.append(new_row("cvar_excess", (name,), coefs, ">=", cost.constant))
    objective = Expression()
    _add(objective, model.objective)
    _add(objective, _remap(cvar, np.arange(n + 1 + len(names)), weight))
    variables = pd.concat([model.variables, extra], ignore_index=True)
    return LinearModel(variables, rows, objective, model.expressions | {"cvar_usd": cvar})


def cvar_of(costs_usd: np.ndarray, probabilities: np.ndarray, level: float) -> float:
    """CVaR at ``level`` of a discrete cost distribution: min over eta of eta + 1/(1 -
    level) sum p max(cost - eta, 0), exact (the minimum is at one of the costs)."""
    return float(
        min(
            eta + probabilities @ np.maximum(costs_usd - eta, 0.0) / (1.0 - level)
            for eta in costs_usd
        )
    )


def risk_objective(costs_usd, probabilities, risk) -> float:
    """Expected cost, plus weight x CVaR when the problem has ``risk:``."""
    costs, probs = np.asarray(costs_usd, dtype=float), np.asarray(probabilities, dtype=float)
    expected = float(probs @ costs)
    if risk is None:
        return expected
    return expected + risk.weight * cvar_of(costs, probs, risk.cvar_level)


# ------------------------------------------------------------------ solve


class _Setup:
    """The problem's scenarios compiled and built, pools kept if any scenario needs them."""

    def __init__(self, problem: Problem, catalog: Catalog) -> None:
        if problem.objective != "min_cost":
            raise ProcureError(
                f"two-stage planning minimises expected cost; the objective is {problem.objective}",
                field="objective",
                fix="use objective: min_cost with uncertainty:",
            )
        for i, w in enumerate(problem.workloads):
            if getattr(w, "switching_cost_usd", 0.0) > 0:  # not in the scenarios' objective
                raise ProcureError(
                    "two-stage planning does not charge a switching cost",
                    field=f"workloads[{i}] ({w.name}).switching_cost_usd",
                    fix="remove switching_cost_usd (or set fleet: autoscale or flat to keep "
                    "the fleet steady) with uncertainty:",
                )
        started = time.perf_counter()
        self.problem, self.catalog = problem, catalog
        #: a ``time.perf_counter()`` time after which no scenario solve starts (None: no
        #: limit), and what the limit left out, in words (solve_stochastic)
        self.deadline: float | None = None
        self.cut: list[str] = []
        self.scenarios = scenarios_of(problem, catalog)  # refuses a problem without any
        self.throughput = has_throughput(self.scenarios)
        self.caps = problem.uncertainty.caps
        self.names = [s.name for s in self.scenarios]
        self.probs = [s.probability for s in self.scenarios]
        self.base = compile_problem(problem, catalog, prune_dominated=False)
        self.inputs, compiled, self.shares = [], [], []
        for s in self.scenarios:
            pf, df = price_factors(catalog, s), demand_factors(problem, s)
            problem_s = scenario_problem(problem, df, self.caps, s.throughput)
            self.inputs.append((problem_s, scenario_catalog(catalog, pf)))
            self.shares.append(throughput_shares(self.base, s.throughput))
            compiled.append(scenario_compiled(self.base, problem_s, pf, df, self.shares[-1]))
        #: with throughput scenarios, the problem as written (capacity at face value): its
        #: plan's commitments are compared with the two-stage plan's
        self.point = _point_estimate(problem, catalog, self.base) if self.throughput else None
        self.kept = pools_kept_in_any(compiled + ([self.point] if self.point else []))
        self.compiled = keep_pools(compiled, self.kept)
        self.models = [build_model(c) for c in self.compiled]
        self.seconds = {"compile_and_build": time.perf_counter() - started}


def solve_stochastic(
    problem: Problem,
    catalog: Catalog,
    *,
    solver: str = "highspy",
    options: SolveOptions | None = None,
    method: str = "auto",
    workers: int = 1,
    scheduler: str | None = None,
) -> StochasticPlan:
    """The two-stage plan of a problem with ``uncertainty:`` (module docstring).

    ``method``: ``extensive`` (one model of every scenario, proven optimal),
    ``decomposition`` (scenario subproblems, in parallel on ``workers`` processes or a
    Dask ``scheduler``: :func:`_decomposition`), ``benders`` (the L-shaped method, its
    scenario solves in parallel the same way: :func:`_benders`), or ``auto`` (extensive up
    to 10 scenarios).

    Raises
    ------
    ProcureError
        Bad scenarios; an objective other than min_cost.
    InfeasibleError
        No commitments work in every scenario (under the caps).
    VerificationError
        A scenario's plan failed the independent verifier (a bug in procure).
    """
    if method not in ("auto", "extensive", "decomposition", "benders"):
        raise ProcureError(
            f"unknown method {method!r}",
            field="--stochastic-method",
            fix="use auto, extensive, decomposition or benders",
        )
    options = options or SolveOptions()
    started = time.perf_counter()
    setup = _Setup(problem, catalog)
    if options.time_limit_s is not None:  # the limit holds end to end (issue 34)
        setup.deadline = started + (1.0 - RESERVE_SHARE) * options.time_limit_s
    if method == "benders":
        sp = _benders(setup, solver, options, workers, scheduler)
    elif method == "decomposition" or (method == "auto" and len(setup.scenarios) > 10):
        sp = _decomposition(setup, solver, options, workers, scheduler)
    else:
        sp = _extensive(setup, solver, options, workers, scheduler)
    # what is signed now must rest on prices the problem accepts (issue 29); each
    # scenario's rentals are not kept as line items, so only the commitments are checked
    weak = weak_prices_in(sp.commitments, problem, first_day(problem.start))
    refuse_weak_prices(weak, sp.expected_cost_usd, catalog.directory)
    sp = with_point_estimate(setup, sp, solver, options, workers, scheduler)
    return with_period_notes(sp, setup.compiled[0])


def with_period_notes(sp: StochasticPlan, compiled) -> StochasticPlan:
    """The two-stage plan with a note for each period that outlives a server's life or a
    reservation's term (issue 34: never silent). Not priced, unlike a plan's warning: a
    scenario that scales a period has no faithful split (solver.core.restrictions)."""
    found = period_restrictions(compiled)
    if not found:
        return sp
    pieces = lifted_periods(compiled.periods, found)
    notes = [
        described(r, "the commitments")
        + "; what lifting it would cost is not priced for a two-stage plan: write shorter "
        f"periods ({', '.join(f'{n} {m:g}' for n, m in pieces[r.period])} months) to let the "
        "plan buy and replace (or reserve again) within the horizon"
        for r in found
    ]
    return sp.model_copy(update={"notes": sp.notes + notes})


def _extensive(setup: _Setup, solver: str, options: SolveOptions, workers, scheduler):
    from solver.solve import optimise

    u = setup.problem.uncertainty
    budget = setup.problem.budget_usd
    if budget is not None:  # the costs beside compute held at their bound (model.budget_bound)
        bound = budget_bound(setup.compiled[0])
        budget = (budget - bound.constant_usd) / bound.multiplier
    ef, maps = extensive_form(
        setup.models, setup.probs, setup.names, caps=setup.caps,
        budget_usd=budget, carbon_cap_tco2e=setup.problem.carbon_cap_tco2e,
        max_scenario_cost_usd=u.max_scenario_cost_usd,
    )  # fmt: skip
    if u.risk is not None:
        ef = add_cvar(ef, setup.probs, setup.names, u.risk.cvar_level, u.risk.weight)
    solution = optimise(setup.compiled[0], ef, solver=solver, options=_until(setup, options))
    r = solution.result
    if setup.deadline is not None and r.termination.value == "feasible":
        setup.cut.append("the extensive form's proof of optimality (its gap is stated)")
    setup.seconds["extensive_form"] = r.solve_seconds
    plans = [
        _scenario_plan(setup, s, r.values[maps[s]], r, solver) for s in range(len(setup.names))
    ]
    ev = _ev_first_stage(setup, solver, options)
    t0 = time.perf_counter()
    fixed = _fix_first_stage(ef, ev.first)
    try:
        values = optimise(
            setup.compiled[0], fixed, solver=solver, options=_until(setup, options)
        ).result.values
        eev = ef.expressions["total_cost_usd"].value(values)
    except InfeasibleError:
        eev = None
    setup.seconds["eev"] = time.perf_counter() - t0
    alone = _alone(setup, solver, options, workers, scheduler)
    compared = _compared(setup, ev, solver, options, workers, scheduler)
    return _summary(setup, r, plans, ev, eev, alone, compared, "extensive_form", r.bound)


def _fix_first_stage(model: LinearModel, first: dict[str, float]) -> LinearModel:
    """``model`` with its first-stage variables fixed at ``first`` (by name; others 0)."""
    v = model.variables.copy()
    is_first = v["kind"].isin(FIRST_STAGE).to_numpy()
    # as floats: with no first-stage variable at all (nothing can be committed) the empty
    # object array would not go into the float bounds (pandas: TypeError)
    chosen = v.loc[is_first, "name"].map(first).fillna(0.0).to_numpy(dtype=float)
    v.loc[is_first, "lb"] = chosen
    v.loc[is_first, "ub"] = chosen
    return replace(model, variables=v)


def _first_stage(model: LinearModel, values: np.ndarray) -> dict[str, float]:
    v = model.variables
    first = v["kind"].isin(FIRST_STAGE).to_numpy()
    return {n: float(round(x)) for n, x in zip(v["name"][first], values[first], strict=True)}


def _scenario_task(shared, task):
    """Solve one scenario alone, its first stage fixed or free: (cost, bound, values), or
    None when it has no feasible plan."""
    from solver.solve import optimise

    compiled, models, solver, options = shared
    s, first = task
    model = models[s] if first is None else _fix_first_stage(models[s], first)
    try:
        r = optimise(compiled[s], model, solver=solver, options=options).result
    except InfeasibleError:
        return None
    cost = models[s].expressions["total_cost_usd"].value(r.values)
    co2 = models[s].expressions["total_co2e_t"].value(r.values)
    bound = r.bound if r.bound is not None and np.isfinite(r.bound) else r.objective
    return cost, float(bound), r.values, co2


def _run(setup: _Setup, tasks: list, solver, options, workers, scheduler) -> list:
    """The scenario solves ``tasks``; those not started by ``setup.deadline`` are None."""
    from solver.analyses.runner import run_tasks

    shared = (setup.compiled, setup.models, solver, _until(setup, options))
    return run_tasks(
        _scenario_task, tasks, shared=shared, workers=workers, scheduler=scheduler,
        deadline=setup.deadline,
    )  # fmt: skip


def _until(setup: _Setup, options: SolveOptions) -> SolveOptions:
    """``options`` with a time limit no later than ``setup.deadline`` (at least 0.01 s)."""
    if setup.deadline is None:
        return options
    left = max(0.01, setup.deadline - time.perf_counter())  # past it: no task starts
    limit = options.time_limit_s
    return replace(options, time_limit_s=left if limit is None else min(limit, left))


def _past(setup: _Setup) -> bool:
    return setup.deadline is not None and time.perf_counter() > setup.deadline


def _alone(setup: _Setup, solver, options, workers, scheduler) -> list:
    """Each scenario solved alone with hindsight (wait and see)."""
    t0 = time.perf_counter()
    out = _run(
        setup, [(s, None) for s in range(len(setup.names))], solver, options, workers, scheduler
    )
    setup.seconds["wait_and_see"] = time.perf_counter() - t0
    if any(x is None for x in out) and _past(setup):
        raise NoPlanError(
            f"the time limit ran out after {sum(x is not None for x in out)} of {len(out)} "
            "scenarios were solved with hindsight (the bound needs them all), before any "
            "two-stage plan",
            field="--time-limit",
            fix="give it more time (--time-limit S), or fewer scenarios (n_scenarios)",
        )
    if any(x is None for x in out):
        raise InfeasibleError(
            f"scenario {setup.names[out.index(None)]!r} has no feasible plan even with hindsight",
            field="uncertainty",
            fix="relax the budget, carbon cap or demand of that scenario",
        )
    return out


def _decomposition(setup: _Setup, solver, options, workers, scheduler):
    """Scenario decomposition with a proven bound.

    Each scenario is solved alone (in parallel): their expected dual bound is a lower
    bound on the expected cost of any commitments (no shared plan beats hindsight).
    Candidate commitments: each scenario's own (at most five, at spread percentiles of
    hindsight cost), the deterministic plan's (expected prices and demand), and the
    probability-weighted consensus of the scenarios' own rounded down and up. This is a
    heuristic for the plan (progressive hedging would refine it) with an exact bound.
    Each candidate is priced exactly: its commitments fixed, every scenario re-planned
    (in parallel); the cheapest in expectation is the plan, its gap against the lower
    bound reported.
    """
    alone = _alone(setup, solver, options, workers, scheduler)
    risk = setup.problem.uncertainty.risk
    # the objective is non-decreasing in each scenario's cost, none below its hindsight bound
    lower = risk_objective([x[1] for x in alone], setup.probs, risk)
    own = [_first_stage(m, x[2]) for m, x in zip(setup.models, alone, strict=True)]
    ev = _ev_first_stage(setup, solver, options)
    keys = sorted(set().union(*own)) if own else []
    mean = {k: sum(p * o.get(k, 0.0) for p, o in zip(setup.probs, own, strict=True)) for k in keys}
    # every scenario's own commitments when there are few; else those of the scenarios at
    # the 10th, 30th, 50th, 70th and 90th percentiles of hindsight cost
    picked = range(len(own))
    if len(own) > MAX_OWN_CANDIDATES:
        order = np.argsort([x[0] for x in alone], kind="stable")
        picked = sorted({int(order[int(q * (len(own) - 1))]) for q in (0.1, 0.3, 0.5, 0.7, 0.9)})
    # priced in this order, so that a time limit leaves out the scenarios' own last
    candidates = [ev.first, {k: float(np.floor(v + 1e-9)) for k, v in mean.items()},
                  {k: float(np.ceil(v - 1e-9)) for k, v in mean.items()},
                  *(own[k] for k in picked)]  # fmt: skip
    unique: list[dict] = []
    for c in candidates:
        if not any(_same_first(c, u) for u in unique):
            unique.append(c)
    t0 = time.perf_counter()
    n = len(setup.names)
    tasks = [(s, c) for c in unique for s in range(n)]
    results = _run(setup, tasks, solver, options, workers, scheduler)
    setup.seconds["candidates"] = time.perf_counter() - t0
    best, best_cost, eev = None, np.inf, None
    priced = len(unique)
    for k, c in enumerate(unique):
        part = results[k * n : (k + 1) * n]
        if any(x is None for x in part):
            if _past(setup) and all(x is None for x in results[(k + 1) * n - 1 :]):
                priced = min(priced, k)  # not reached: the time limit stopped the tasks
            continue
        expected = float(sum(p * x[0] for p, x in zip(setup.probs, part, strict=True)))
        co2 = float(sum(p * x[3] for p, x in zip(setup.probs, part, strict=True)))
        if not _within_caps(setup, [x[0] for x in part], expected, co2):
            continue
        if _same_first(c, ev.first):
            eev = expected
        objective = risk_objective([x[0] for x in part], setup.probs, risk)
        if objective < best_cost - 1e-6:
            best, best_cost = k, objective
    if priced < len(unique):
        setup.cut.append(
            f"{len(unique) - priced} of {len(unique)} candidate commitments not priced"
        )
    if best is None and priced < len(unique):
        raise NoPlanError(
            f"the time limit ran out before a candidate was priced in every scenario "
            f"({'; '.join(setup.cut)}), before any two-stage plan",
            field="--time-limit",
            fix="give it more time (--time-limit S), or fewer scenarios (n_scenarios)",
        )
    if best is None:
        raise InfeasibleError(
            "no candidate commitments give every scenario a feasible plan",
            field="uncertainty",
            fix="relax the budget or carbon cap, or use the extensive form (fewer scenarios)",
        )
    part = results[best * n : (best + 1) * n]
    plans = [_scenario_plan(setup, s, part[s][2], None, solver) for s in range(n)]
    # candidates the time limit left unpriced are not known: their None is no verdict
    known = [(c, results[k * n : (k + 1) * n]) for k, c in enumerate(unique) if k < priced]
    compared = _compared(setup, ev, solver, options, workers, scheduler, known)
    return _summary(setup, None, plans, ev, eev, alone, compared, "decomposition", lower)


def _compared(setup: _Setup, ev: _EV, solver, options, workers, scheduler, known=()) -> tuple:
    """Per scenario, what the deterministic plan's commitments and no new commitments
    (everything rented) cost, rentals re-planned in that scenario (in parallel).

    Returns
    -------
    tuple of two lists
        (deterministic, all rented) cost per scenario in USD; None where that scenario
        has no feasible plan under those commitments. ``known``: (first stage, results of
        :func:`_scenario_task` per scenario) already solved, not solved again.
    """
    n = len(setup.names)
    wanted = [ev.first, {}]
    found = [next((part for c, part in known if _same_first(c, f)), None) for f in wanted]
    todo: list[dict] = []
    for f, part in zip(wanted, found, strict=True):
        if part is None and not any(_same_first(f, t) for t in todo):
            todo.append(f)
    t0 = time.perf_counter()
    results = _run(setup, [(s, f) for f in todo for s in range(n)], solver, options, workers,
                   scheduler)  # fmt: skip
    setup.seconds["compared"] = time.perf_counter() - t0
    if todo and _past(setup) and any(x is None for x in results):  # else: infeasible
        setup.cut.append(
            "the comparison with the deterministic plan and with renting everything: "
            f"{sum(x is None for x in results)} of {len(results)} scenario re-plans"
        )
    out = []
    for f, part in zip(wanted, found, strict=True):
        if part is None:
            j = next(j for j, t in enumerate(todo) if _same_first(f, t))
            part = results[j * n : (j + 1) * n]
        out.append([None if x is None else float(x[0]) for x in part])
    return out[0], out[1]


# ------------------------------------------------------------------ the L-shaped method


def _cut_task(shared, task):
    """Benders: scenario ``s`` with its first stage fixed at ``first``: the exact cost
    (integer recourse, as :func:`_scenario_task`) and a cut from the LP relaxation.

    The cut is (kind, value, gradient by first-stage name): ``optimality`` when the LP is
    feasible (its optimal value; the reduced costs of the fixed first-stage variables are a
    subgradient of that value in the first stage), ``feasibility`` when it is not (the
    same from the LP that minimises the total violation of the scenario's rows).
    """
    from solver.core.backends import get_backend

    compiled, models, solver, options = shared
    s, first = task
    exact = _scenario_task(shared, task)
    lp = _fix_first_stage(models[s], first)
    lp = replace(lp, variables=lp.variables.assign(integer=False))
    backend = get_backend(solver if "duals" in get_backend(solver).features else "highspy")
    kind, r = "optimality", backend.solve(lp, replace(options, time_limit_s=None))
    if not r.has_solution:
        kind, r = "feasibility", backend.solve(_elastic(lp), replace(options, time_limit_s=None))
    first_rows = lp.variables["kind"].isin(FIRST_STAGE).to_numpy()
    names = lp.variables["name"][first_rows]
    gradient = dict(zip(names, r.reduced_costs[: len(first_rows)][first_rows], strict=True))
    return exact, (kind, float(r.objective), {k: float(g) for k, g in gradient.items()})


def _elastic(model: LinearModel) -> LinearModel:
    """``model`` with a slack on every row, minimising their sum: zero where the rows can
    hold, else how far they are from holding (feasibility cuts)."""
    n, rows, objective = len(model.variables), [], Expression()
    slacks = []
    for r in model.rows:
        coefs = dict(r.coefs)
        for sign in {"<=": (-1.0,), ">=": (1.0,), "==": (-1.0, 1.0)}[r.sense]:
            coefs[n + len(slacks)] = sign
            objective.add(n + len(slacks), 1.0)
            slacks.append(f"slack[{r.name},{sign:+g}]")
        rows.append(replace(r, coefs=coefs))
    extra = pd.DataFrame({"name": slacks, "kind": VarKind.RISK.value, "integer": False,
                          "lb": 0.0, "ub": np.inf})  # fmt: skip
    variables = pd.concat([model.variables, extra], ignore_index=True)
    return LinearModel(variables, rows, objective, model.expressions)


def _benders_master(setup: _Setup, floors_usd: list[float], cuts: list) -> LinearModel:
    """The master of the L-shaped method: the first-stage variables, their own rows, and
    per scenario theta_s >= its hindsight bound (``floors_usd``) and every cut so far
    (``cuts``: (scenario, kind, value, gradient, first stage it was taken at)).
    Objective sum_s p_s theta_s (+ weight x CVaR of the thetas with risk:); with caps in
    expectation, sum_s p_s theta_s <= budget; theta_s <= max_scenario_cost_usd."""
    base = setup.models[0].variables
    is_first = base["kind"].isin(FIRST_STAGE).to_numpy()
    first = base[is_first].reset_index(drop=True)
    pos = {n: i for i, n in enumerate(first["name"])}
    old = {int(i): pos[n] for i, n in zip(np.flatnonzero(is_first), first["name"], strict=True)}
    n_first, names = len(first), setup.names
    thetas = pd.DataFrame({"name": [f"theta@{x}" for x in names], "kind": VarKind.RECOURSE.value,
                           "integer": False, "lb": floors_usd, "ub": np.inf})  # fmt: skip
    rows = [
        replace(r, coefs={old[i]: c for i, c in r.coefs.items()})
        for r in setup.models[0].rows
        if r.coefs and all(i in old for i in r.coefs)
    ]
    for k, (s, kind, value, gradient, at) in enumerate(cuts):
        coefs = {pos[n]: -g for n, g in gradient.items() if g}
        rhs = value - sum(g * at.get(n, 0.0) for n, g in gradient.items())
        if kind == "optimality":  # theta_s >= value + g (x - at)
            rows.append(new_row("benders_cut", (k,), coefs | {n_first + s: 1.0}, ">=", rhs))
        else:  # value + g (x - at) <= 0
            rows.append(new_row("benders_cut", (k,), coefs, ">=", rhs))
    u, p = setup.problem.uncertainty, setup.problem
    expected = Expression()
    for s, prob in enumerate(setup.probs):
        expected.add(n_first + s, prob)
        if u.max_scenario_cost_usd is not None:
            cap = u.max_scenario_cost_usd
            rows.append(new_row("scenario_cost_cap", (names[s],), {n_first + s: 1.0}, "<=", cap))
    if setup.caps == "expectation" and p.budget_usd is not None:
        rows.append(new_row("budget", (), dict(expected.coefs), "<=", p.budget_usd))
    per_scenario = {}
    for s, x in enumerate(names):
        per_scenario[f"total_cost_usd@{x}"] = Expression()
        per_scenario[f"total_cost_usd@{x}"].add(n_first + s, 1.0)
    variables = pd.concat([first, thetas], ignore_index=True)
    master = LinearModel(variables, rows, expected, per_scenario | {"total_cost_usd": expected})
    if u.risk is not None:
        master = add_cvar(master, setup.probs, names, u.risk.cvar_level, u.risk.weight)
    return master


def _benders(setup: _Setup, solver, options, workers, scheduler):
    """The L-shaped method (Van Slyke and Wets; Birge and Louveaux, chapter 5).

    The master (:func:`_benders_master`) chooses the commitments; each scenario with them
    fixed is solved twice, in parallel (``workers`` processes or a Dask ``scheduler``,
    :func:`_cut_task`): with integer recourse, for the exact cost of the candidate (the
    upper bound: the best candidate within the caps is the plan), and as an LP, for a cut.
    The LP recourse is never above the integer one, so its cuts under-estimate the true
    scenario cost and the master's bound is a proven lower bound; each theta_s also starts
    at the scenario's hindsight bound, so the bound is never weaker than wait-and-see.
    The first candidate is the deterministic plan's commitments. Stops when the gap is
    within ``options.relative_gap``, when the master proposes a candidate already priced
    (the LP cuts are exact there; what gap is left is the integrality of the recourse),
    or after MAX_BENDERS_ITERATIONS.
    """
    from solver.solve import optimise

    alone = _alone(setup, solver, options, workers, scheduler)
    risk, n = setup.problem.uncertainty.risk, len(setup.names)
    floors = [x[1] for x in alone]
    lower = risk_objective(floors, setup.probs, risk)
    ev = _ev_first_stage(setup, solver, options)
    t0, candidate, cuts, priced = time.perf_counter(), ev.first, [], []
    best, best_cost, eev, iterations = None, np.inf, None, 0
    shared = (setup.compiled, setup.models, solver, options)
    from solver.analyses.runner import run_tasks

    while candidate is not None and iterations < MAX_BENDERS_ITERATIONS:
        iterations += 1
        results = run_tasks(_cut_task, [(s, candidate) for s in range(n)], shared=shared,
                            workers=workers, scheduler=scheduler)  # fmt: skip
        part = [exact for exact, _ in results]
        priced.append((candidate, part))
        cuts += [(s, *cut, candidate) for s, (_, cut) in enumerate(results)]
        if all(x is not None for x in part):
            costs = [x[0] for x in part]
            expected = float(np.dot(setup.probs, costs))
            co2 = float(np.dot(setup.probs, [x[3] for x in part]))
            if _same_first(candidate, ev.first) and _within_caps(setup, costs, expected, co2):
                eev = expected
            objective = risk_objective(costs, setup.probs, risk)
            if _within_caps(setup, costs, expected, co2) and objective < best_cost - 1e-6:
                best, best_cost = len(priced) - 1, objective
        master = _benders_master(setup, floors, cuts)
        try:
            r = optimise(setup.compiled[0], master, solver=solver, options=options).result
        except InfeasibleError:
            break  # no commitments satisfy the cuts: none is feasible in every scenario
        bound = r.bound if r.bound is not None and np.isfinite(r.bound) else r.objective
        lower = max(lower, float(bound))
        nxt = _first_stage(master, r.values)
        gap = relative_gap(best_cost, lower) if best is not None else None
        done = gap is not None and gap <= options.relative_gap
        candidate = None if done or any(_same_first(nxt, c) for c, _ in priced) else nxt
    setup.seconds["benders"] = time.perf_counter() - t0
    if best is None:
        raise InfeasibleError(
            "no commitments the L-shaped method tried give every scenario a feasible plan",
            field="uncertainty",
            fix="relax the budget or carbon cap, or use --stochastic-method extensive",
        )
    part = priced[best][1]
    plans = [_scenario_plan(setup, s, part[s][2], None, solver) for s in range(n)]
    compared = _compared(setup, ev, solver, options, workers, scheduler, priced)
    lower = min(lower, best_cost)  # a bound within the solver's tolerance of the plan
    proven = relative_gap(best_cost, lower) <= options.relative_gap
    sp = _summary(setup, None, plans, ev, eev, alone, compared, "benders", lower, proven)
    sp.notes.append(
        f"L-shaped method: {iterations} master solves, {len(cuts)} cuts "
        f"({sum(c[1] == 'feasibility' for c in cuts)} feasibility), {len(priced)} candidates "
        "priced exactly"
    )
    return sp


def _same_first(a: dict, b: dict) -> bool:
    return all(abs(a.get(k, 0.0) - b.get(k, 0.0)) < 1e-6 for k in set(a) | set(b))


def _within_caps(setup: _Setup, costs: list[float], expected: float, co2_t: float) -> bool:
    """Caps the scenario subproblems do not see: the worst case; the budget and carbon
    cap in expectation."""
    u, p = setup.problem.uncertainty, setup.problem
    if u.max_scenario_cost_usd is not None and max(costs) > u.max_scenario_cost_usd * (1 + 1e-9):
        return False
    if setup.caps == "expectation":
        if p.budget_usd is not None and expected > p.budget_usd * (1 + 1e-9):
            return False
        if p.carbon_cap_tco2e is not None and co2_t > p.carbon_cap_tco2e * (1 + 1e-9):
            return False
    return True


def _scenario_plan(setup: _Setup, s: int, values: np.ndarray, result, solver: str):
    """Scenario ``s``'s plan, checked against its own problem and catalog."""
    from solver.solve import VerificationError
    from solver.trust.verify import verify_plan

    problem_s, catalog_s = setup.inputs[s]
    model = setup.models[s]
    plan = extract_plan(
        setup.compiled[s], model, values,
        status="optimal" if result is None else result.termination.value,
        objective=None, gap=None if result is None else result.gap, solver=solver,
        solve_seconds=0.0 if result is None else result.solve_seconds,
    )  # fmt: skip
    model_usd = model.expressions["total_cost_usd"].value(values)
    if abs(plan.total_cost_usd - model_usd) > 1e-6 * max(1.0, abs(model_usd)) + 0.01:
        raise VerificationError(
            f"scenario plan lines total ${plan.total_cost_usd:,.2f}, the model ${model_usd:,.2f}",
            fix="this is a bug in procure: report it with the problem file",
        )
    checks = verify_plan(plan, problem_s, catalog_s)
    failed = [c for c in checks if not c.ok]
    if failed:
        raise VerificationError(
            f"scenario {setup.names[s]!r}'s plan failed independent verification ("
            + "; ".join(f"{c.name}: {c.detail}" for c in failed)
            + ")",
            fix="this is a bug in procure: report it with the problem file",
        )
    return plan.model_copy(update={"checks": checks, "verified": True})


class _EV:
    """The deterministic plan at expected prices and demands: its first stage."""

    def __init__(self, first: dict[str, float], commitments: list[LineItem]) -> None:
        self.first, self.commitments = first, commitments


def _ev_first_stage(setup: _Setup, solver: str, options: SolveOptions) -> _EV:
    """The EV plan's first stage: expected prices, demands and capacity shares (each
    option's capacity x sum_s p_s share_s)."""
    t0 = time.perf_counter()
    problem, catalog = setup.problem, setup.catalog
    probs = setup.probs
    pf = sum(p * price_factors(catalog, s) for p, s in zip(probs, setup.scenarios, strict=True))
    dfs = [demand_factors(problem, s) for s in setup.scenarios]
    df = {k: float(sum(p * d[k] for p, d in zip(probs, dfs, strict=True))) for k in dfs[0]}
    problem_ev = scenario_problem(problem, df, "every_scenario")
    shares = sum(p * x for p, x in zip(probs, setup.shares, strict=True))
    ev = scenario_compiled(setup.base, problem_ev, pf, df, shares)
    out = _first_stage_of(setup, ev, solver, options)
    setup.seconds["deterministic"] = time.perf_counter() - t0
    return out


def _point_estimate(problem: Problem, catalog: Catalog, base: Compiled) -> Compiled:
    """The problem as written (prices, demand and capacity at face value), compiled
    unpruned from ``base``."""
    as_given = Scenario(name="as_given", probability=1.0)
    df = demand_factors(problem, as_given)
    problem_pe = scenario_problem(problem, df, "every_scenario")
    return scenario_compiled(base, problem_pe, price_factors(catalog, as_given), df)


def _first_stage_of(setup: _Setup, compiled: Compiled, solver: str, options) -> _EV:
    """The first stage of the deterministic plan of ``compiled`` (kept pools only)."""
    from solver.solve import optimise

    (ev,) = keep_pools([compiled], setup.kept)
    model = build_model(ev)
    values = optimise(ev, model, solver=solver, options=_until(setup, options)).result.values
    plan = extract_plan(
        ev, model, values, status="optimal", objective=None, gap=None, solver=solver,
        solve_seconds=0.0,
    )  # fmt: skip
    commitments = [i for i in plan.line_items if i.item in (Item.RESERVATION, Item.PURCHASE)]
    return _EV(_first_stage(model, values), commitments)


def with_point_estimate(setup: _Setup, sp: StochasticPlan, solver, options, workers, scheduler):
    """With throughput scenarios: ``sp`` with the point-estimate plan's commitments, their
    cost in each scenario (rentals re-planned, in parallel) and in expectation."""
    if setup.point is None:
        return sp
    t0 = time.perf_counter()
    pe = _first_stage_of(setup, setup.point, solver, options)
    n = len(setup.names)
    priced = _run(setup, [(s, pe.first) for s in range(n)], solver, options, workers, scheduler)
    costs = [None if x is None else float(x[0]) for x in priced]
    expected = None if None in costs else float(np.dot(setup.probs, costs))
    setup.seconds["point_estimate"] = time.perf_counter() - t0
    scenarios = [
        o.model_copy(update={"throughput": x.throughput, "point_estimate_cost_usd": c})
        for o, x, c in zip(sp.scenarios, setup.scenarios, costs, strict=True)
    ]
    u = setup.problem.uncertainty
    base = len(setup.scenarios) // len(u.throughput_scenarios) if u.throughput_scenarios else n
    note = (
        "throughput scenarios: each scales every serving option's capacity per unit "
        "(a band quantile by the option's own estimate's band: measured 0.02, physics "
        "0.18-0.31 in log terms); "
        + (
            f"{base} price and demand scenarios x {len(u.throughput_scenarios)} throughput "
            "scenarios (independent); "
            if u.throughput_scenarios and base > 1
            else ""
        )
        + "capacity that falls short is rented in that scenario (on demand or spot)"
    )
    return sp.model_copy(
        update={
            "scenarios": scenarios,
            "point_estimate_commitments": pe.commitments,
            "point_estimate_expected_cost_usd": expected,
            "notes": [*sp.notes, note],
            "seconds": dict(setup.seconds),
        }
    )


def _weighted_quantile(costs: np.ndarray, probs: np.ndarray, q: float) -> float:
    order = np.argsort(costs, kind="stable")
    cum = np.cumsum(probs[order])
    return float(costs[order][min(len(costs) - 1, np.searchsorted(cum, q - 1e-12))])


def _summary(
    setup: _Setup, result, plans, ev: _EV, eev, alone, compared, method: str, lower,
    proven: bool = False,
) -> StochasticPlan:  # fmt: skip
    costs = np.array([p.total_cost_usd for p in plans])
    ev_costs, rented = compared
    probs = np.array(setup.probs)
    rp = float(probs @ costs)
    hindsight = [x[0] for x in alone]
    ws = float(probs @ np.array(hindsight))
    worst = int(np.argmax(costs))
    risk = setup.problem.uncertainty.risk
    objective = risk_objective(costs, probs, risk)
    notes = []
    if risk is not None:
        notes.append(
            f"the plan minimises expected cost + {risk.weight:g} x CVaR at {risk.cvar_level:g}; "
            "VSS and EVPI compare expected costs (VSS may be negative)"
        )
    if eev is None:
        notes.append(
            "the deterministic plan's commitments leave some scenario without a feasible "
            f"plan under the caps ({setup.caps}): its VSS is unbounded"
        )
    gap = relative_gap(objective, lower)
    return StochasticPlan(
        problem=setup.problem.name,
        status="optimal"
        if proven or (result is not None and result.termination.value == "optimal")
        else "feasible",
        method=method,
        solver=plans[0].solver,
        gap=gap,
        lower_bound_usd=lower,
        caps=setup.caps,
        expected_cost_usd=rp,
        objective_usd=objective,
        cvar_level=None if risk is None else risk.cvar_level,
        risk_weight=None if risk is None else risk.weight,
        cvar_usd=None if risk is None else cvar_of(costs, probs, risk.cvar_level),
        commitments=[i for i in plans[0].line_items if i.item in (Item.RESERVATION, Item.PURCHASE)],
        scenarios=[
            ScenarioOutcome(
                name=s.name,
                probability=s.probability,
                total_cost_usd=p.total_cost_usd,
                total_co2e_t=p.total_co2e_t,
                verified=p.verified,
                hindsight_cost_usd=float(hindsight[k]),
                deterministic_cost_usd=ev_costs[k],
                all_rented_cost_usd=rented[k],
                saved_vs_all_rented_usd=None if rented[k] is None else float(rented[k] - costs[k]),
            )
            for k, (s, p) in enumerate(zip(setup.scenarios, plans, strict=True))
        ],
        cost_percentiles_usd={
            f"p{q}": _weighted_quantile(costs, probs, q / 100) for q in (5, 50, 95)
        },
        worst_case_usd=float(costs[worst]),
        worst_scenario=setup.names[worst],
        deterministic_commitments=ev.commitments,
        deterministic_expected_cost_usd=eev,
        value_of_stochastic_solution_usd=None if eev is None else eev - rp,
        all_rented_expected_cost_usd=None
        if any(x is None for x in rented)
        else float(probs @ np.array(rented)),
        wait_and_see_usd=ws,
        expected_value_of_perfect_information_usd=rp - ws,
        verified=all(p.verified for p in plans),
        seconds=setup.seconds,
        notes=notes,
        stopped_at_time_limit=bool(setup.cut),
        cut_at_time_limit=list(setup.cut),
    )
