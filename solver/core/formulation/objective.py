"""The model's named expressions and objective: the first stage of every objective
kind and the second stage of a lexicographic one (``objective_stage``).
"""

from __future__ import annotations

import pandas as pd

from solver.core import ledger
from solver.core.families import new_row
from solver.core.formulation.state import State
from solver.core.matrix import Expression, LinearModel, combine
from solver.inputs.problem import Problem


def assemble(m: State) -> LinearModel:
    """The variables table, rows, named expressions and the first-stage objective."""
    co2_t = Expression(
        {i: c / 1000.0 for i, c in m.co2_kg.coefs.items()}, m.co2_kg.constant / 1000.0
    )
    discount = ledger.discount_factors(m.periods, m.problem.discount_rate)
    npv = combine(*((float(discount[t]), m.cost_by_period[t]) for t in range(m.n_t)))
    names = list(m.periods["name"])
    guard = combine(*((1.0, g) for g in m.guard_by_period))
    guard_npv = combine(*((float(discount[t]), m.guard_by_period[t]) for t in range(m.n_t)))
    expressions = {
        "total_cost_usd": m.cost,
        "npv_usd": npv,
        "total_co2e_t": co2_t,
        "capex_usd": m.capex,
        "shortfall_penalty_usd": m.shortfall_penalty,
        "switching_penalty_usd": m.switching,
        "migration_penalty_usd": m.migration,
        # the guard's premium at the top of each price's band (price_guard), in the
        # objective only; empty when the guard is off or every band is 0
        "guard_premium_usd": guard,
        "guard_premium_npv_usd": guard_npv,
        # egress by default (formulation.egress): beside compute, in the objective
        "egress_usd": m.egress,
        "egress_npv_usd": combine(
            *((float(discount[t]), m.egress_by_period[t]) for t in range(m.n_t))
        ),
        # support plans (formulation.support): beside compute, in the objective
        "support_usd": m.support,
        "support_npv_usd": combine(
            *((float(discount[t]), m.support_by_period[t]) for t in range(m.n_t))
        ),
        **{f"support_usd[provider={p}]": e for p, e in m.support_by_provider.items()},
        **{f"cost_usd[provider={p}]": e for p, e in m.cost_by_provider.items()},
        **{f"cost_usd[period={names[t]}]": e for t, e in enumerate(m.cost_by_period)},
    }
    variables = pd.DataFrame(m.B.vars)
    for column in ("option_id", "pool", "period", "block", "bucket"):
        if column not in variables:
            variables[column] = -1
        variables[column] = variables[column].fillna(-1).astype(int)
    if "plan" in variables:  # savings plans: which of problem.savings_plans
        variables["plan"] = variables["plan"].fillna(-1).astype(int)
    if "workload" not in variables:
        variables["workload"] = ""
    variables["workload"] = variables["workload"].fillna("")
    model = LinearModel(variables, m.B.rows, Expression(), expressions)
    model.objective = stage_objective(model, m.problem, first=True)
    return model


def stage_objective(model: LinearModel, problem: Problem, *, first: bool) -> Expression:
    """The objective of the first (or second) stage for the problem's objective kind."""
    e = model.expressions
    cost, co2, penalty = e["total_cost_usd"], e["total_co2e_t"], e["shortfall_penalty_usd"]
    # a switching cost (_add_starts) goes with money in every objective that counts it
    switching = (
        1.0,
        combine(
            (1.0, e.get("switching_penalty_usd", Expression())),
            (1.0, e.get("migration_penalty_usd", Expression())),
        ),
    )
    # the guard (price_guard): money in the objective at the top of each price's band
    guard = (1.0, e.get("guard_premium_usd", Expression()))
    # egress by default (formulation.egress): money beside compute wherever money counts
    egress = (1.0, e.get("egress_usd", Expression()))
    # support plans (formulation.support): with egress, wherever money counts
    egress = (1.0, combine(egress, (1.0, e.get("support_usd", Expression()))))
    kind = problem.objective
    if kind == "min_cost":
        return combine((1.0, cost), guard, switching, egress)
    if kind == "min_npv":
        npv_guard = (1.0, e.get("guard_premium_npv_usd", Expression()))
        npv_egress = (
            1.0,
            combine(
                (1.0, e.get("egress_npv_usd", Expression())),
                (1.0, e.get("support_npv_usd", Expression())),
            ),
        )
        return combine((1.0, e["npv_usd"]), npv_guard, switching, npv_egress)
    if kind == "max_served":
        return combine((1.0, cost), guard, (1.0, penalty), switching, egress)
    if kind == "cost_plus_carbon":
        carbon = (problem.carbon_price_usd_per_tco2e, co2)
        return combine((1.0, cost), guard, carbon, switching, egress)
    if kind == "min_carbon":
        return combine((1.0, co2)) if first else combine((1.0, cost), guard, switching, egress)
    if kind == "lexicographic":
        return combine((1.0, cost), guard, switching, egress) if first else combine((1.0, co2))
    raise ValueError(f"unknown objective {kind!r}")


def has_second_stage(problem: Problem) -> bool:
    """Whether the problem's objective has a second stage (``min_carbon``,
    ``lexicographic``)."""
    return problem.objective in {"min_carbon", "lexicographic"}


def second_stage(model: LinearModel, problem: Problem, first_value: float) -> LinearModel:
    """Keep the first stage's optimum (within tolerance) and optimise the second criterion."""
    first = stage_objective(model, problem, first=True)
    tol = problem.lexicographic_cost_tolerance if problem.objective == "lexicographic" else 0.0
    slack = abs(first_value) * max(tol, 1e-7) + 1e-6
    keep = new_row(
        "objective_stage",
        ("first",),
        dict(first.coefs),
        "<=",
        first_value + slack - first.constant,
    )
    return model.with_stage(stage_objective(model, problem, first=False), keep, "second")
