"""Shadow prices and reduced costs at the chosen plan: the duals of the LP of that plan
(docs/concepts/sensitivity.md, "Shadow prices").
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from solver.analyses.sensitivity.pricing import USE_KINDS
from solver.analyses.sensitivity.results import (
    Dual,
    ReducedCost,
    SensitivityReport,
)
from solver.core.backends import SolveOptions, get_backend
from solver.core.compile import Compiled
from solver.core.matrix import Row
from solver.core.model import (
    FAMILIES,
    LinearModel,
    has_second_stage,
    stage_objective,
)
from solver.solve import Solution
from solver.units import RENTED_MODES


def support_lp(model: LinearModel, values: np.ndarray) -> LinearModel:
    """The LP of the chosen plan (docs/concepts/sensitivity.md, "Shadow prices"): a
    continuous copy of ``model``."""
    v = model.variables.copy()
    used = values > 1e-7
    v["integer"] = False
    fix_zero = v["kind"].isin(USE_KINDS).to_numpy() & ~used
    fix_value = v["kind"].isin(("z", "top")).to_numpy()  # binary choices as chosen
    v.loc[fix_zero, "ub"] = 0.0
    v.loc[fix_value, "lb"] = values[fix_value]
    v.loc[fix_value, "ub"] = values[fix_value]
    # fleet_small_cover rows (solver/core/model.py) are cuts, implied by the others at an
    # integer plan; in this LP they would only share the N+1 rows' duals among more rows
    # (a degenerate choice of duals), so shadow prices and entry estimates leave them out
    rows = [r for r in model.rows if r.family != "fleet_small_cover"]
    return LinearModel(v, rows, model.objective, model.expressions, model.stage + "-lp")


def plan_moves(row: Row, values: np.ndarray, fixed: np.ndarray) -> bool:
    """Whether something of the plan ``values`` can move in ``row`` in the plan's LP: a
    variable nonzero in the plan and not ``fixed`` there. In a row without one every
    variable rests at a bound whatever the dual up to a limit (none of the plan in it: a
    provider's egress or support rows where it has no units; or only what the LP fixes:
    the training cluster as chosen), so the LP's dual there is one of many and says
    nothing of what the plan's limits are worth (on the seed, gcp's egress rows came back
    at $310 per token/s, above every row that binds)."""
    return any(abs(values[j]) > 1e-9 and not fixed[j] for j in row.coefs)


def _objective_unit(kind: str) -> str:
    return "tCO2e" if kind == "min_carbon" else "USD"


def shadow_prices(solution: Solution, *, solver: str = "highspy") -> SensitivityReport:
    """Duals of every named constraint and reduced costs of unused options.

    Parameters
    ----------
    solution
        A solved problem (:func:`solver.solve.optimise`).
    solver
        Backend for the LP (it must report duals: ``highs`` or ``cbc``).
    """
    compiled, model, values = solution.compiled, solution.model, solution.result.values
    assert values is not None and solution.result.objective is not None  # a solved problem
    problem = compiled.problem
    if has_second_stage(problem):  # the duals of the first criterion (cost, or carbon)
        first = [r for r in model.rows if r.family != "objective_stage"]
        model = LinearModel(
            model.variables, first, stage_objective(model, problem, first=True), model.expressions
        )
    lp = support_lp(model, values)
    result = get_backend(solver).solve(lp, SolveOptions())
    if result.duals is None or result.reduced_costs is None:
        raise RuntimeError(f"the LP of the plan did not solve to optimality ({result.message})")
    fixed = (lp.variables["lb"] == lp.variables["ub"]).to_numpy()
    kind = compiled.problem.objective
    unit = _objective_unit(kind)
    hours = _block_hours(compiled)
    d = compiled.demand
    bucket_tokens = {
        (w, int(t), int(b), int(k)): float(n)
        for w, t, b, k, n in zip(
            d["workload"], d["period"], d["block"], d["bucket"], d["tokens_per_unit"], strict=True
        )
    }
    duals: list[Dual] = []
    place_of = _row_placer(compiled)
    for row in model.rows:
        if row.family == "objective_stage" or row.name not in result.duals:
            continue
        if not plan_moves(row, values, fixed):
            continue  # no dual, or one of many: nothing of the plan can move in it
        pi = float(result.duals[row.name])
        worth = -pi if row.sense == "<=" else pi
        place = place_of(row)
        per_mtoken = None
        tokens = _tokens_per_unit(bucket_tokens, row)
        if tokens is not None:
            _, t, b = row.key[:3]
            per_mtoken = pi / (hours[(int(t), int(b))] * 3600.0 * tokens) * 1e6
        duals.append(
            Dual(
                constraint=row.name,
                family=row.family,
                meaning=FAMILIES[row.family].description,
                d_objective_d_rhs=pi,
                unit=FAMILIES[row.family].dual_unit.replace("USD per", f"{unit} per", 1),
                worth=worth,
                usd_per_mtoken=per_mtoken,
                **place,
            )
        )
    duals.sort(key=lambda d: (-abs(d.d_objective_d_rhs), d.constraint))
    reduced = _reduced_costs(compiled, lp, values, result.reduced_costs, hours)
    return SensitivityReport(
        problem=compiled.problem.name,
        objective_kind=kind,
        objective=float(solution.result.objective),
        caveat=(
            "Shadow prices are duals of the LP of the chosen plan (training clusters as "
            "chosen, unused options at zero, unit counts divisible): they hold for small "
            "changes around this integer plan, not for large ones. Rows in which nothing "
            "of the plan can move (a provider's egress or support where it has no units, "
            "a training cluster as chosen) have no dual the plan determines and are not "
            "listed."
        ),
        duals=duals,
        reduced_costs=reduced,
    )


#: rows whose right-hand side is tokens/s of serving capacity (their dual is USD per token/s
#: over the block); ``demand_bucket`` rows are requests/s of a bucket (x its output tokens)
_TOKENS_PER_S_ROWS = ("demand", "n_plus_1")


def _tokens_per_unit(bucket_tokens: dict[tuple, float], row) -> float | None:
    """Output tokens per second that one unit of the row's right-hand side stands for (1
    for tokens/s rows, the bucket's output tokens for a requests/s row, from
    ``bucket_tokens``: (workload, period, block, bucket) -> tokens); None for rows that
    are not about serving capacity."""
    if row.family in _TOKENS_PER_S_ROWS:
        return 1.0
    if row.family != "demand_bucket":
        return None
    w, t, b, k = row.key[:4]
    tokens = bucket_tokens.get((w, int(t), int(b), int(k)), 0.0)
    return tokens if tokens > 0 else None


def _row_placer(compiled: Compiled) -> Callable[[object], dict[str, str | None]]:
    """A function giving the workload, period and block (by name) and pool a row is about,
    from the names of its family's key (:data:`solver.core.model.FAMILIES`; an option's row
    names the option's pool); None where it has none. The tables are looked up once, not
    per row (a model has a row per option and block)."""
    periods = compiled.periods["name"].tolist()
    blocks = compiled.blocks["name"].tolist()
    options = compiled.options
    pool_of = dict(zip(options["option_id"].tolist(), options["pool_id"].tolist(), strict=True))

    def named(value, table):
        if value is None:
            return None
        if isinstance(value, int | np.integer) and 0 <= int(value) < len(table):
            return str(table[int(value)])
        return str(value)

    def place(row) -> dict[str, str | None]:
        names = [k.rstrip("?") for k in FAMILIES[row.family].keys]
        parts = dict(zip(names, row.key, strict=False))
        pool = parts.get("pool")
        if pool is None and parts.get("option") is not None:  # a unit of an option: its pool
            pool = pool_of.get(parts["option"])
        return {
            "workload": None if parts.get("workload") is None else str(parts["workload"]),
            "period": named(parts.get("period"), periods),
            "block": named(parts.get("block"), blocks),
            "pool": None if pool is None else str(pool),
        }

    return place


def _block_hours(compiled: Compiled) -> dict[tuple[int, int], float]:
    p = compiled.periods["hours"].to_numpy()
    f = compiled.blocks["fraction"].to_numpy()
    return {(t, b): float(p[t] * f[b]) for t in range(len(p)) for b in range(len(f))}


def _reduced_costs(
    compiled: Compiled,
    lp: LinearModel,
    values: np.ndarray,
    dj: np.ndarray,
    hours: dict[tuple[int, int], float],
) -> list[ReducedCost]:
    # Only options that carry their whole cost themselves (rented units, rented training
    # clusters): a reserved or owned unit's cost sits on its commitment or purchase, which
    # is fixed at zero here, so its reduced cost alone would mislead (break-even prices
    # cover those pools).
    options = compiled.options.set_index("option_id")
    v = lp.variables.assign(dj=dj, value=values)
    rented = v["option_id"].map(options["mode"]).isin(RENTED_MODES)
    unused = v[v["kind"].isin(("x", "z")) & rented & (v["value"] <= 1e-7) & np.isfinite(v["dj"])]
    if unused.empty:
        return []
    best = unused.loc[unused.groupby("option_id")["dj"].idxmin()]
    out = []
    for r in best.itertuples(index=False):
        k = options.loc[r.option_id]
        cut = None
        if r.kind == "x" and k["mode"] in RENTED_MODES and r.block >= 0:
            cut = max(0.0, float(r.dj)) / hours[(int(r.period), int(r.block))]
        out.append(
            ReducedCost(
                option=f"{k['offering_id']} {k['mode']} -> {r.workload}",
                pool_id=k["pool_id"],
                workload=r.workload,
                mode=k["mode"],
                reduced_cost=float(r.dj),
                price_cut_usd_per_hour=cut,
            )
        )
    out.sort(key=lambda rc: (rc.reduced_cost, rc.option))
    return out
