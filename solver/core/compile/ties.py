"""Tie classes: rented pools identical in every coefficient of the model, solved as one
class column and expanded back into the concrete offerings after the solve.

Seven offerings of one card at one price and capacity give the solver seven columns it
cannot tell apart, and a branch-and-bound proof that must close every way of spreading
units over them. A class of k tied pools is built as one pool (the first member by
offering id) whose deployment count n is an integer in [0, k] and whose units per block
lie in [n, U n], U the per-pool unit limit; the derivation and why it is exact are in
docs/formulation/fleet_deploy.md, "Tie classes". After the solve :func:`expand` splits
the class's units back over its members (deterministically: the least-carbon member first, then by
offering id) and the expanded values are checked against every row of the model with
every pool; :func:`solve_tied` returns None (solve the model as built) whenever a class
does not apply or the expansion does not hold.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable

import numpy as np
import pandas as pd

from solver.core.backends.base import SolveResult
from solver.core.compile.compiled import Compiled
from solver.core.formulation.objective import has_second_stage
from solver.core.matrix import LinearModel
from solver.inputs.problem import InferenceWorkload, Problem

#: pool columns that name or document a pool and enter no coefficient of the model
IDENTITY_COLUMNS = frozenset(
    {
        "pool_id",
        "offering_id",
        "instance_type",
        "price_date",
        "price_source",
        "price_confidence",
        "sla",
        "availability_cap_basis",
    }
)
#: where a pool is: a coefficient only when the problem has a row by region or zone
REGION_COLUMNS = frozenset({"region"})
#: a pool's carbon figures: coefficients only when the problem caps or prices carbon
CARBON_COLUMNS = frozenset(
    {"grid_gco2_per_kwh", "pue", "kgco2e_per_unit_hour", "embodied_kgco2e_unit"}
)
#: option columns that name the option, its pool or figures re-derived from the pool's
OPTION_IDENTITY = frozenset({"option_id", "pool_id", "offering_id", "region"})
#: rented modes whose pools hold nothing before the plan (no reservations, no purchases)
RENTED_MODES = frozenset({"on_demand", "spot"})
#: whether :func:`solve_tied` merges (off: every pool its own column, as before)
MERGE_TIES = True
#: relative tolerance of the expanded plan's rows and objective
FEASIBLE_TOL = 1e-7


def region_matters(problem: Problem) -> bool:
    """Whether a row of the model reads a pool's region or zone: quotas (by provider and
    region), failure domains or shares (``survive_loss_of``, ``max_region_share``), and the
    places a workload is served at (``serve_at``, for charged moves and ``max_providers``)."""
    if problem.quotas:
        return True
    return any(
        isinstance(w, InferenceWorkload)
        and (bool(w.domains) or w.migration_charged or w.max_providers is not None)
        for w in problem.workloads
    )


def carbon_matters(problem: Problem) -> bool:
    """Whether carbon enters the model: a cap, or an objective that prices or ranks it."""
    return problem.carbon_cap_tco2e is not None or problem.objective != "min_cost"


def applies(problem: Problem) -> bool:
    """Whether the problem's rows are the ones :func:`merged` is derived for: no second
    stage (its objective row would read every pool), no switching cost (its start variables
    are per pool), no limit on deployments by offering (``min_units_per_deployment``,
    ``max_deployments``: an indicator per offering)."""
    if has_second_stage(problem):
        return False
    for w in problem.workloads:
        if isinstance(w, InferenceWorkload) and (
            w.switching_cost_usd > 0
            or w.min_units_per_deployment is not None
            or w.max_deployments is not None
        ):
            return False
    return True


def _key(value: object) -> object:
    """A hashable, rounding-stable form of one cell."""
    if isinstance(value, float | np.floating):
        return "nan" if np.isnan(value) else float(f"{float(value):.12g}")
    if isinstance(value, np.integer | np.bool_):
        return value.item()
    if isinstance(value, list | tuple | np.ndarray):
        return tuple(_key(v) for v in value)
    return value


def tie_classes(compiled: Compiled) -> list[list[int]]:
    """Classes of at least two options whose pools and options are identical in every
    coefficient of the model, each sorted by (carbon, offering id), the first the class's
    representative; row positions in ``compiled.options``.

    An option qualifies when it is the only option of a rented cloud pool (on-demand or
    spot, no units held), an inference option of a workload without a disaggregated role,
    on a pool no capacity block uses.
    """
    problem = compiled.problem
    if not applies(problem):
        return []
    options = compiled.options
    if options.empty:
        return []
    pools = compiled.pools.set_index("pool_id", drop=False)
    per_pool = options["pool_id"].value_counts()
    blocked = set()
    if not compiled.capacity_blocks.empty and "pool_id" in compiled.capacity_blocks:
        blocked = set(compiled.capacity_blocks["pool_id"])
    skip = set(IDENTITY_COLUMNS)
    if not region_matters(problem):
        skip |= REGION_COLUMNS
    if not carbon_matters(problem):
        skip |= CARBON_COLUMNS
    pool_cols = [c for c in compiled.pools.columns if c not in skip]
    opt_cols = [c for c in options.columns if c not in skip | OPTION_IDENTITY]
    buckets: dict[int, tuple] = {}
    if compiled.bucket_capacity is not None and not compiled.bucket_capacity.empty:
        bc = compiled.bucket_capacity.sort_values(["option_id", "bucket"])
        for oid, g in bc.groupby("option_id"):
            buckets[int(str(oid))] = tuple(
                zip(g["bucket"].tolist(), [_key(v) for v in g.iloc[:, 2]], strict=True)
            )
    fleets = {w.name: w.fleet for w in problem.workloads if isinstance(w, InferenceWorkload)}
    groups: dict[tuple, list[int]] = defaultdict(list)
    for i, opt in enumerate(options.to_dict("records")):
        pool = pools.loc[opt["pool_id"]]
        if (
            opt.get("workload_kind") != "inference"
            or opt["workload"] not in fleets
            or str(opt.get("pool_role") or "") in {"prefill", "decode"}
            or pool["kind"] != "cloud"
            or pool["mode"] not in RENTED_MODES
            or float(pool["existing_units"]) != 0.0
            or per_pool[opt["pool_id"]] != 1
            or opt["pool_id"] in blocked
        ):
            continue
        sig = (
            tuple(_key(pool[c]) for c in pool_cols),
            tuple(_key(opt[c]) for c in opt_cols),
            buckets.get(int(opt["option_id"]), ()),
        )
        groups[sig].append(i)
    carbon = (
        options["kgco2e_per_unit_hour"].astype(float).tolist()
        if "kgco2e_per_unit_hour" in options
        else [0.0] * len(options)
    )
    names = options["offering_id"].astype(str).tolist()
    ids = options["option_id"].astype(int).tolist()
    out = []
    for members in groups.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda i: (carbon[i], names[i]))
        out.append(members)
    out.sort(key=lambda m: ids[m[0]])
    return out


def merged(compiled: Compiled, classes: list[list[int]]) -> Compiled:
    """The compiled problem with each class one pool: its representative's, with
    ``tie_count`` = k (the class's pools) and ``availability_cap`` k times a member's
    (units of the class at once); the other members' options and pools left out."""
    options = compiled.options
    drop_rows = [i for members in classes for i in members[1:]]
    drop_ids = set(options.iloc[drop_rows]["option_id"].astype(int))
    drop_pools = set(options.iloc[drop_rows]["pool_id"])
    count = {options.iloc[m[0]]["pool_id"]: len(m) for m in classes}
    pools = compiled.pools[~compiled.pools["pool_id"].isin(drop_pools)].copy()
    ties = pools["pool_id"].map(count).fillna(1).astype(int)
    pools["tie_count"] = ties.to_numpy()
    pools["availability_cap"] = pools["availability_cap"].astype(float) * ties.to_numpy()
    pools = pools.reset_index(drop=True)
    kept = options[~options["option_id"].astype(int).isin(drop_ids)].reset_index(drop=True)
    bucket = compiled.bucket_capacity
    if bucket is not None and not bucket.empty:
        bucket = bucket[~bucket["option_id"].astype(int).isin(drop_ids)].reset_index(drop=True)
    return dataclasses.replace(compiled, pools=pools, options=kept, bucket_capacity=bucket)


def _split(total: int, n: int, per_pool: int, members: int) -> list[int]:
    """Units of each member. With a deployment count ``n`` (an autoscaled fleet): the first
    ``n`` members in use, the total spread evenly (each gets floor or ceil of total / n, the
    first ones the extra units), so each has at least one unit and no more than the class's
    per-pool bound allows, and a larger total never gives a member fewer units. Without one
    (a per-block or flat fleet): members filled in order up to ``per_pool``. Empty when the
    total does not split."""
    out = [0] * members
    if n == 0:
        left = total
        for j in range(members):
            out[j] = min(per_pool, left)
            left -= out[j]
        return out if left == 0 else []
    if not n <= total <= n * per_pool or n > members:
        return []
    q, r = divmod(total, n)
    for j in range(n):
        out[j] = q + (1 if j < r else 0)
    return out


def expand(
    compiled: Compiled,
    classes: list[list[int]],
    small: LinearModel,
    values: np.ndarray,
    full: LinearModel,
) -> np.ndarray | None:
    """``small``'s plan (the merged model's) as values of ``full``'s variables, each class's
    units split over its members (:func:`_split`), each member's continuous variables of a
    block (bucket flows) in proportion to its units, its ``deploy`` 1 when it has units; every
    other variable by name. None when a class's units cannot be split or the values break a
    row of ``full`` or change its objective."""
    options = compiled.options
    sv, fv = small.variables, full.variables
    by_name = dict(zip(sv["name"], values, strict=True))
    out = np.array([by_name.get(n, 0.0) for n in fv["name"]], dtype=float)
    f_opt = fv["option_id"].to_numpy()
    index: dict[tuple, int] = {}
    for j, (oid, kind, t, b, q) in enumerate(
        zip(f_opt, fv["kind"], fv["period"], fv["block"], fv["bucket"], strict=True)
    ):
        if pd.notna(oid):
            index[(int(oid), kind, int(t), int(b), int(q))] = j
    caps = compiled.pools.set_index("pool_id")["availability_cap"].astype(float)
    s_opt = sv["option_id"].to_numpy()
    s_kind = sv["kind"].astype(str).tolist()
    s_t, s_b, s_q = (sv[c].fillna(-1).astype(int).tolist() for c in ("period", "block", "bucket"))
    option_ids = options["option_id"].astype(int).tolist()
    option_pools = options["pool_id"].astype(str).tolist()
    for members in classes:
        ids = [option_ids[i] for i in members]
        per_pool = int(caps[option_pools[members[0]]])
        rep = [int(j) for j in np.flatnonzero(s_opt == ids[0])]
        deploys = {s_t[j]: values[j] for j in rep if s_kind[j] == "deploy"}
        shares: dict[tuple[int, int], list[float]] = {}
        for j in rep:
            if s_kind[j] != "x":
                continue
            t, b = s_t[j], s_b[j]
            total = int(round(values[j]))
            n = int(round(deploys.get(t, 0.0)))
            units = _split(total, n, per_pool, len(ids))
            if not units:
                return None
            shares[(t, b)] = [u / total if total else float(k == 0) for k, u in enumerate(units)]
            for oid, u in zip(ids, units, strict=True):
                out[index[(oid, "x", t, b, -1)]] = float(u)
                if (oid, "deploy", t, -1, -1) in index and t in deploys:
                    out[index[(oid, "deploy", t, -1, -1)]] = 1.0 if u > 0 else 0.0
        for j in rep:
            kind = s_kind[j]
            if kind in {"x", "deploy"}:
                continue
            t, b, q = s_t[j], s_b[j], s_q[j]
            share = shares.get((t, b))
            if share is None:
                return None  # a per-option variable this expansion does not know
            for oid, s in zip(ids, share, strict=True):
                out[index[(oid, kind, t, b, q)]] = values[j] * s
    if not holds(full, out):
        return None
    return out


def holds(model: LinearModel, x: np.ndarray) -> bool:
    """Whether ``x`` keeps every bound and row of ``model`` (within :data:`FEASIBLE_TOL`)."""
    lb = model.variables["lb"].to_numpy(dtype=float)
    ub = model.variables["ub"].to_numpy(dtype=float)
    if (x < lb - FEASIBLE_TOL * np.maximum(1, abs(lb))).any():
        return False
    if (x > ub + FEASIBLE_TOL * np.maximum(1, np.where(np.isfinite(ub), abs(ub), 1))).any():
        return False
    for row in model.rows:
        act = sum(c * x[j] for j, c in row.coefs.items())
        tol = FEASIBLE_TOL * max(
            1.0, abs(row.rhs), sum(abs(c * x[j]) for j, c in row.coefs.items())
        )
        if (row.sense in ("<=", "==") and act > row.rhs + tol) or (
            row.sense in (">=", "==") and act < row.rhs - tol
        ):
            return False
    return True


def solve_tied(
    compiled: Compiled, full: LinearModel, run: Callable[[LinearModel], SolveResult]
) -> tuple[SolveResult, dict] | None:
    """Solve ``full`` (``build_model(compiled)``, unchanged) through its tie classes: the
    merged model solved by ``run``, its plan expanded into ``full``'s variables, with the
    merged model's bound (a bound of ``full``: every plan of ``full`` is one of the merged
    model's, docs/formulation/fleet_deploy.md, "Tie classes"). Returns the result and what
    was merged (for the compile report); without a plan (infeasible, or none within the
    limit) the merged result as it is, the model's answer too. None when nothing is tied or
    the expansion does not hold in ``full``: then solve ``full`` itself."""
    from solver.core.model import build_model  # the model builder imports the compile

    if not MERGE_TIES:
        return None
    classes = tie_classes(compiled)
    if not classes:
        return None
    small_compiled = merged(compiled, classes)
    small = build_model(small_compiled)
    result = run(small)
    options = compiled.options
    report = {
        "classes": len(classes),
        "pools_merged": sum(len(m) for m in classes),
        "columns_before": int(len(options)),
        "columns_after": int(len(small_compiled.options)),
        "members": [[str(options.iloc[i]["offering_id"]) for i in m] for m in classes],
    }
    if not result.has_solution or result.values is None:
        # exact both ways: infeasible, or no plan within the limit, is the model's answer too
        return dataclasses.replace(result, values=None), report
    values = expand(compiled, classes, small, np.asarray(result.values, dtype=float), full)
    if values is None:
        return None
    objective = full.objective.value(values)
    if (
        result.objective is not None
        and abs(objective - result.objective) > FEASIBLE_TOL * max(1.0, abs(objective)) + 1e-6
    ):
        return None
    return dataclasses.replace(result, values=values, objective=objective), report
