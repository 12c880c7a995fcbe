"""The extensive form of a two-stage problem: one model of every scenario with the first-stage
variables (``buy``, ``commit``) shared, and CVaR added to its objective.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from solver.core.model import (
    Expression,
    LinearModel,
    Row,
    VarKind,
    new_row,
)

FIRST_STAGE = (VarKind.BUY.value, VarKind.COMMIT.value)


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
