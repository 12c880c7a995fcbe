"""The two-stage plan put together: costs by scenario, percentiles, VSS and EVPI, the
point-estimate comparison of throughput scenarios and the notes on long periods.
"""

from __future__ import annotations

import time
from typing import cast

import numpy as np

from solver.analyses.stochastic.extensive import cvar_of, risk_objective
from solver.analyses.stochastic.recourse import EV, first_stage_of, run_scenarios
from solver.analyses.stochastic.result import ScenarioOutcome, StochasticPlan
from solver.analyses.stochastic.setup import Setup
from solver.core.backends.base import relative_gap
from solver.core.restrictions import described, lifted_periods, period_restrictions
from solver.units import Item


def with_point_estimate(setup: Setup, sp: StochasticPlan, solver, options, workers, scheduler):
    """With throughput scenarios: ``sp`` with the point-estimate plan's commitments, their
    cost in each scenario (rentals re-planned, in parallel) and in expectation."""
    if setup.point is None:
        return sp
    t0 = time.perf_counter()
    pe = first_stage_of(setup, setup.point, solver, options)
    n = len(setup.names)
    priced = run_scenarios(
        setup, [(s, pe.first) for s in range(n)], solver, options, workers, scheduler
    )
    costs = [None if x is None else float(x[0]) for x in priced]
    expected = None if None in costs else float(np.dot(setup.probs, cast(list[float], costs)))
    setup.seconds["point_estimate"] = time.perf_counter() - t0
    scenarios = [
        o.model_copy(update={"throughput": x.throughput, "point_estimate_cost_usd": c})
        for o, x, c in zip(sp.scenarios, setup.scenarios, costs, strict=True)
    ]
    u = setup.uncertainty
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
    return float(costs[order][min(len(costs) - 1, int(np.searchsorted(cum, q - 1e-12)))])


def summarised(
    setup: Setup, result, plans, ev: EV, eev, alone, compared, method: str, lower,
    proven: bool = False,
) -> StochasticPlan:  # fmt: skip
    costs = np.array([p.total_cost_usd for p in plans])
    ev_costs, rented = compared
    probs = np.array(setup.probs)
    rp = float(probs @ costs)
    hindsight = [x[0] for x in alone]
    ws = float(probs @ np.array(hindsight))
    worst = int(np.argmax(costs))
    risk = setup.uncertainty.risk
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


def with_period_notes(sp: StochasticPlan, compiled) -> StochasticPlan:
    """The two-stage plan with a note for each period that outlives a server's life or a
    reservation's term (never silent). Not priced, unlike a plan's warning: a
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
