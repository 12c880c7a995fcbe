"""Commit now, adapt later: two-stage planning under price and demand uncertainty.

The decision finance signs is the part that cannot be undone: reservations and purchases
(variables ``buy`` and ``commit``), the first stage, shared by every scenario. Everything
rented or used (serving units, training clusters, shortfall) is the second stage, one
copy per scenario, chosen after the scenario is known. The objective is the expected
cost, sum_s p_s cost_s; budget and carbon cap hold in every scenario or in expectation
(``uncertainty.caps``), and ``max_scenario_cost_usd`` caps the worst scenario.

A scenario multiplies rented prices (on-demand and spot, by provider, accelerator and
mode: commitments and purchases are signed now, at today's prices) and online demand (by
workload and period). Scenarios are given with probabilities, or drawn with a seed
(lognormal price drift per provider, demand uniform in a range).

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
EVPI = RP - WS >= 0.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from solver.backends import SolveOptions
from solver.catalog import Catalog
from solver.compile import Compiled, CompileReport, compile_problem, prune_dominated_pools
from solver.errors import InfeasibleError, ProcureError, closest
from solver.model import Expression, LinearModel, Row, VarKind, build_model
from solver.plan import LineItem, extract_plan
from solver.problem import DemandMultiplier, InferenceWorkload, PriceMultiplier, Problem, Scenario
from solver.units import PRICE_COLUMN, RENTED_MODES

FIRST_STAGE = (VarKind.BUY.value, VarKind.COMMIT.value)


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


class StochasticPlan(BaseModel):
    """The two-stage plan: commitments now, and what they lead to in each scenario."""

    problem: str
    status: str
    solver: str
    gap: float | None
    caps: str = Field(description="every_scenario or expectation (budget and carbon cap)")
    expected_cost_usd: float = Field(description="RP: sum over scenarios of p x cost")
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
    wait_and_see_usd: float | None = Field(None, description="WS: sum of p x hindsight cost")
    expected_value_of_perfect_information_usd: float | None = Field(
        None, description="EVPI = RP - WS"
    )
    verified: bool
    seconds: dict[str, float] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)


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
    return scenarios


def _check_against_catalog(scenarios: list[Scenario], catalog: Catalog) -> None:
    providers = sorted(set(catalog.offerings["provider"]))
    for i, s in enumerate(scenarios):
        for j, m in enumerate(s.prices):
            where = f"uncertainty.scenarios[{i}].prices[{j}]"
            if m.provider is not None and m.provider not in providers:
                hint = closest(m.provider, providers)
                raise ProcureError(
                    f"scenario {s.name!r} prices provider {m.provider!r}, which the catalog "
                    "does not have",
                    field=f"{where}.provider",
                    fix=f"did you mean {hint[0]!r}?" if hint else "use a provider of the catalog",
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


def scenario_problem(problem: Problem, demand: dict[tuple[str, str], float], caps: str) -> Problem:
    """The deterministic problem of one scenario: its demand per period in
    ``demand_by_period``; no budget or carbon cap when they hold only in expectation."""
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
) -> Compiled:
    """``base`` (compiled unpruned) with the scenario's prices and demand: what compiling
    the scenario's problem and catalog gives, without compiling again."""
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
    table = base.demand.copy()
    names = list(base.periods["name"])
    table["demand"] = table["demand"] * [
        demand.get((w, names[int(t)]), 1.0)
        for w, t in zip(table["workload"], table["period"], strict=True)
    ]
    return replace(base, problem=problem_s, pools=pools, options=options, demand=table)


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
            rows.append(Row(f"{r.name}@{name}", r.family, (*r.key, name), coefs, r.sense, r.rhs))
        p = probabilities[s]
        _add(objective, _remap(m.objective, idx, p))
        cost_s = _remap(m.expressions["total_cost_usd"], idx)
        _add(cost, _remap(m.expressions["total_cost_usd"], idx, p))
        _add(co2, _remap(m.expressions["total_co2e_t"], idx, p))
        _add(shortfall, _remap(m.expressions["shortfall_penalty_usd"], idx, p))
        expressions[f"total_cost_usd@{name}"] = cost_s
        if max_scenario_cost_usd is not None:
            rows.append(
                Row(
                    f"scenario_cost_cap[{name}]",
                    "scenario_cost_cap",
                    (name,),
                    dict(cost_s.coefs),
                    "<=",
                    max_scenario_cost_usd - cost_s.constant,
                )
            )
    if caps == "expectation" and budget_usd is not None:
        rows.append(
            Row("budget[]", "budget", (), dict(cost.coefs), "<=", budget_usd - cost.constant)
        )
    if caps == "expectation" and carbon_cap_tco2e is not None:
        rows.append(
            Row(
                "carbon_cap[]",
                "carbon_cap",
                (),
                dict(co2.coefs),
                "<=",
                carbon_cap_tco2e - co2.constant,
            )
        )
    expressions |= {
        "total_cost_usd": cost,
        "total_co2e_t": co2,
        "shortfall_penalty_usd": shortfall,
        "capex_usd": _remap(models[0].expressions["capex_usd"], maps[0]),
        "npv_usd": cost,
    }
    variables = pd.concat(frames, ignore_index=True)
    return LinearModel(variables, rows, objective, expressions), maps


# ------------------------------------------------------------------ solve


def solve_stochastic(
    problem: Problem,
    catalog: Catalog,
    *,
    solver: str = "highspy",
    options: SolveOptions | None = None,
    hindsight: bool = True,
) -> StochasticPlan:
    """The two-stage plan of a problem with ``uncertainty:`` (module docstring).

    Raises
    ------
    ProcureError
        Bad scenarios; an objective other than min_cost.
    InfeasibleError
        No commitments work in every scenario (under the caps).
    VerificationError
        A scenario's plan failed the independent verifier (a bug in procure).
    """
    from solver.solve import optimise

    if problem.objective != "min_cost":
        raise ProcureError(
            f"two-stage planning minimises expected cost; the objective is {problem.objective}",
            field="objective",
            fix="use objective: min_cost with uncertainty:",
        )
    options = options or SolveOptions()
    u = problem.uncertainty
    scenarios = scenarios_of(problem, catalog)
    names = [s.name for s in scenarios]
    probs = [s.probability for s in scenarios]
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    base = compile_problem(problem, catalog, prune_dominated=False)
    inputs = []
    for s in scenarios:
        pf, df = price_factors(catalog, s), demand_factors(problem, s)
        problem_s = scenario_problem(problem, df, u.caps)
        inputs.append(
            (problem_s, scenario_catalog(catalog, pf), scenario_compiled(base, problem_s, pf, df))
        )
    compiled = [c for _, _, c in inputs]
    kept = pools_kept_in_any(compiled)
    compiled = keep_pools(compiled, kept)
    models = [build_model(c) for c in compiled]
    ef, maps = extensive_form(
        models, probs, names, caps=u.caps, budget_usd=problem.budget_usd,
        carbon_cap_tco2e=problem.carbon_cap_tco2e,
        max_scenario_cost_usd=u.max_scenario_cost_usd,
    )  # fmt: skip
    seconds["compile_and_build"] = time.perf_counter() - started
    solution = optimise(compiled[0], ef, solver=solver, options=options)
    seconds["extensive_form"] = solution.result.solve_seconds
    values = solution.result.values
    plans = [
        _scenario_plan(compiled[s], models[s], values[maps[s]], inputs[s], solution, solver)
        for s in range(len(scenarios))
    ]
    # the deterministic plan: expected prices and demands, its commitments on every scenario
    ev_commitments, eev, ev_notes = _deterministic(
        base, problem, catalog, scenarios, kept, ef, models, maps, solver, options, seconds
    )
    hindsight_costs = None
    if hindsight:
        t0 = time.perf_counter()
        hindsight_costs = [
            optimise(c, m, solver=solver, options=options).result.objective
            for c, m in zip(compiled, models, strict=True)
        ]
        seconds["wait_and_see"] = time.perf_counter() - t0
    return _summary(
        problem, solution, plans, scenarios, ev_commitments, eev, hindsight_costs, u.caps,
        seconds, ev_notes,
    )  # fmt: skip


def _scenario_plan(compiled, model, values, inputs, solution, solver):
    """One scenario's plan, checked against its own problem and catalog."""
    from solver.solve import VerificationError
    from solver.verify import verify_plan

    problem_s, catalog_s, _ = inputs
    r = solution.result
    plan = extract_plan(
        compiled, model, values, status=r.termination.value, objective=None, gap=r.gap,
        solver=solver, solve_seconds=r.solve_seconds,
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
            "a scenario's plan failed independent verification ("
            + "; ".join(f"{c.name}: {c.detail}" for c in failed)
            + ")",
            fix="this is a bug in procure: report it with the problem file",
        )
    return plan.model_copy(update={"checks": checks, "verified": True})


def _deterministic(
    base, problem, catalog, scenarios, kept, ef, models, maps, solver, options, seconds
):
    """(EV commitments, EEV or None, notes): the plan at expected prices and demands; its
    commitments fixed in the extensive form, rentals re-planned per scenario."""
    from solver.solve import optimise

    t0 = time.perf_counter()
    probs = np.array([s.probability for s in scenarios])
    pf = sum(p * price_factors(catalog, s) for p, s in zip(probs, scenarios, strict=True))
    dfs = [demand_factors(problem, s) for s in scenarios]
    df = {k: float(sum(p * d[k] for p, d in zip(probs, dfs, strict=True))) for k in dfs[0]}
    caps = problem.uncertainty.caps if problem.uncertainty else "every_scenario"
    problem_ev = scenario_problem(problem, df, "every_scenario")
    (ev,) = keep_pools([scenario_compiled(base, problem_ev, pf, df)], kept)
    ev_model = build_model(ev)
    ev_solution = optimise(ev, ev_model, solver=solver, options=options)
    ev_plan = extract_plan(
        ev, ev_model, ev_solution.result.values, status="optimal", objective=None, gap=None,
        solver=solver, solve_seconds=0.0,
    )  # fmt: skip
    seconds["deterministic"] = time.perf_counter() - t0
    first = dict(zip(ev_model.variables["name"], ev_solution.result.values, strict=True))
    fixed = ef.variables.copy()
    is_first = fixed["kind"].isin(FIRST_STAGE).to_numpy()
    chosen = fixed.loc[is_first, "name"].map(first).fillna(0.0).to_numpy()
    fixed.loc[is_first, "lb"] = chosen
    fixed.loc[is_first, "ub"] = chosen
    notes = []
    t0 = time.perf_counter()
    try:
        eev_solution = optimise(
            replace(base, problem=problem), replace(ef, variables=fixed), solver=solver,
            options=options,
        )  # fmt: skip
        eev = float(eev_solution.result.objective)
    except InfeasibleError:
        eev = None
        notes.append(
            "the deterministic plan's commitments leave some scenario without a feasible "
            f"plan under the caps ({caps}): its VSS is unbounded"
        )
    seconds["eev"] = time.perf_counter() - t0
    commitments = [i for i in ev_plan.line_items if i.item in ("reservation", "purchase")]
    return commitments, eev, notes


def _weighted_quantile(costs: np.ndarray, probs: np.ndarray, q: float) -> float:
    order = np.argsort(costs, kind="stable")
    cum = np.cumsum(probs[order])
    return float(costs[order][np.searchsorted(cum, q - 1e-12)])


def _summary(
    problem, solution, plans, scenarios, ev_commitments, eev, hindsight, caps, seconds, notes
):
    costs = np.array([p.total_cost_usd for p in plans])
    probs = np.array([s.probability for s in scenarios])
    rp = float(probs @ costs)
    ws = None if hindsight is None else float(probs @ np.array(hindsight))
    worst = int(np.argmax(costs))
    commitments = [i for i in plans[0].line_items if i.item in ("reservation", "purchase")]
    return StochasticPlan(
        problem=problem.name,
        status=solution.result.termination.value,
        solver=solution.result.solver,
        gap=solution.result.gap,
        caps=caps,
        expected_cost_usd=rp,
        commitments=commitments,
        scenarios=[
            ScenarioOutcome(
                name=s.name,
                probability=s.probability,
                total_cost_usd=p.total_cost_usd,
                total_co2e_t=p.total_co2e_t,
                verified=p.verified,
                hindsight_cost_usd=None if hindsight is None else float(hindsight[k]),
            )
            for k, (s, p) in enumerate(zip(scenarios, plans, strict=True))
        ],
        cost_percentiles_usd={
            f"p{q}": _weighted_quantile(costs, probs, q / 100) for q in (5, 50, 95)
        },
        worst_case_usd=float(costs[worst]),
        worst_scenario=scenarios[worst].name,
        deterministic_commitments=ev_commitments,
        deterministic_expected_cost_usd=eev,
        value_of_stochastic_solution_usd=None if eev is None else eev - rp,
        wait_and_see_usd=ws,
        expected_value_of_perfect_information_usd=None if ws is None else rp - ws,
        verified=all(p.verified for p in plans),
        seconds=seconds,
        notes=notes,
    )


def stochastic_table(sp: StochasticPlan) -> str:
    """The two-stage plan for people."""

    def usd(v: float | None) -> str:
        return "n/a" if v is None else f"${v:,.0f}"

    lines = [
        f"{sp.problem}: two-stage plan over {len(sp.scenarios)} scenarios, {sp.status}, "
        f"verified={str(sp.verified).lower()}, solver {sp.solver}, caps {sp.caps}",
        f"expected cost {usd(sp.expected_cost_usd)}; p5 {usd(sp.cost_percentiles_usd['p5'])}, "
        f"median {usd(sp.cost_percentiles_usd['p50'])}, p95 "
        f"{usd(sp.cost_percentiles_usd['p95'])}; worst {usd(sp.worst_case_usd)} "
        f"({sp.worst_scenario})",
        "commitments signed now:",
    ]
    lines += [
        f"  {i.item} {i.units:g} x {i.offering} ({i.mode}) in {i.period}: {usd(i.cost_usd)}"
        for i in sp.commitments
    ] or ["  none: everything is rented as it comes"]
    lines.append("the deterministic plan (expected prices and demand) would commit:")
    lines += [
        f"  {i.item} {i.units:g} x {i.offering} ({i.mode}) in {i.period}"
        for i in sp.deterministic_commitments
    ] or ["  nothing"]
    lines += [
        f"value of the stochastic solution (VSS) {usd(sp.value_of_stochastic_solution_usd)}: "
        f"the deterministic commitments cost {usd(sp.deterministic_expected_cost_usd)} in "
        "expectation",
        f"expected value of perfect information (EVPI) "
        f"{usd(sp.expected_value_of_perfect_information_usd)}: with hindsight "
        f"{usd(sp.wait_and_see_usd)}",
        "scenarios:",
    ]
    lines += [
        f"  {o.name:<12} p={o.probability:.3f}  cost {usd(o.total_cost_usd):>14}  "
        f"hindsight {usd(o.hindsight_cost_usd):>14}  verified={str(o.verified).lower()}"
        for o in sp.scenarios
    ]
    lines += [f"note: {n}" for n in sp.notes]
    return "\n".join(lines) + "\n"
