"""Serving and training capacity against demand: the units of each option (x, y, z),
their rent, energy and CO2e, and the ``demand``, ``demand_bucket``, ``mix_capacity``,
``redundancy`` and ``train_once`` rows.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Protocol, cast

from solver.core import ledger
from solver.core.families import new_row
from solver.core.formulation.fleet_rules import add_fleet_rule
from solver.core.formulation.state import (
    OptionRow,
    State,
    guard_band,
    option_rows,
    pool_role,
)
from solver.core.matrix import VarKind
from solver.inputs.problem import InferenceWorkload
from solver.units import RENTED_MODES


def add_inference_capacity(m: State) -> None:
    """x[k,t,b] (rented: per load block) or x[k,t] (owned, reserved: flat over the day)
    for every serving option and period of its workload, their rent or energy cost and
    CO2e; for a traffic mix, y (time share per bucket) and ``mix_capacity`` rows."""
    B, demand = m.B, m.compiled.demand
    bucket_cap = m.compiled.bucket_capacity.groupby("option_id")
    inference = m.options[m.options["workload_kind"] != "training"]
    periods_of = demand.groupby("workload")["period"].unique().to_dict()
    for k in option_rows(inference):
        w = m.workloads[k.workload]
        p = m.pool_idx[k.pool_id]
        rented = k.mode in RENTED_MODES
        mix = isinstance(w, InferenceWorkload) and bool(w.traffic_mix)
        rps = {}
        if mix and k.option_id in bucket_cap.groups:
            group = bucket_cap.get_group(k.option_id)
            rps = dict(zip(group["bucket"], group["requests_per_s_per_unit"], strict=True))
        for t in sorted(int(v) for v in periods_of.get(k.workload, [])):
            shared_var: int | None = None
            block_vars: list[int] = []
            if not rented:
                shared_var = B.var(
                    f"x[{k.option_id},{t}]",
                    VarKind.X,
                    integer=True,
                    option_id=k.option_id,
                    pool=p,
                    period=t,
                    block=-1,
                    workload=k.workload,
                )
                usd = k.energy_usd_per_unit_hour * m.p_hours[t]
                m.add_cost(shared_var, usd, k.provider, {t: usd}, guard_band(k))
                m.co2_kg.add(shared_var, k.kgco2e_per_unit_hour * m.p_hours[t])
            for b in range(m.n_b):
                if rented:
                    v = B.var(
                        f"x[{k.option_id},{t},{b}]",
                        VarKind.X,
                        integer=True,
                        option_id=k.option_id,
                        pool=p,
                        period=t,
                        block=b,
                        workload=k.workload,
                    )
                    hours = m.p_hours[t] * m.b_frac[b]
                    usd = ledger.rent_usd(k.price_usd_per_hour, 1.0, hours)
                    m.add_cost(v, usd, k.provider, {t: usd}, guard_band(k))
                    m.co2_kg.add(v, k.kgco2e_per_unit_hour * hours)
                else:
                    assert shared_var is not None  # made above for an owned or reserved option
                    v = shared_var
                if rented:
                    block_vars.append(v)
                m.usage[p][(t, b)][v] += 1.0
                m.redundancy_rows[(k.workload, t, b)][v] += 1.0
                role = pool_role(k)
                if role:  # a disaggregated group's prefill or decode units
                    group_id = str(k.disagg_group)
                    m.disagg_rows[(group_id, role, t, b)][v] = float(k.tokens_per_s_per_unit)
                    continue
                m.unit_capacity[(k.workload, t, b)][v] = float(k.tokens_per_s_per_unit)
                if mix:
                    _add_mix_shares(m, k, p, t, b, v, rps)
                else:
                    m.demand_rows[(k.workload, t, b, -1)][v] += k.tokens_per_s_per_unit
            add_fleet_rule(m, k, p, t, w, block_vars)


def _add_mix_shares(
    m: State, k: OptionRow, p: int, t: int, b: int, v: int, rps: dict[int, float]
) -> None:
    """y[k,j,t,b]: the time share of option k's units on bucket j; sum_j y / rps_j <= x."""
    share_row: dict[int, float] = {}
    for j, r in rps.items():
        y = m.B.var(
            f"y[{k.option_id},{j},{t},{b}]",
            VarKind.Y,
            integer=False,
            option_id=k.option_id,
            pool=p,
            period=t,
            block=b,
            bucket=j,
            workload=k.workload,
        )
        share_row[y] = 1.0 / r
        m.demand_rows[(k.workload, t, b, j)][y] += 1.0
    share_row[v] = -1.0
    m.B.row("mix_capacity", (k.option_id, t, b), share_row, "<=", 0.0)


class _DemandRow(Protocol):
    """A row of the compiled demand table: per workload, period, block and bucket."""

    workload: str
    period: int
    block: int
    bucket: int
    demand: float
    tokens_per_unit: float


def add_demand(m: State) -> None:
    """``demand`` (tokens/s) and ``demand_bucket`` (requests/s) rows per workload, period
    and block, with a priced shortfall under max_served; ``redundancy`` (minimum serving
    units)."""
    B, problem = m.B, m.problem
    # pandas-stubs type itertuples' rows as plain tuples; these are named by the columns
    for d in cast(Iterable[_DemandRow], m.compiled.demand.itertuples(index=False)):
        key = (d.workload, int(d.period), int(d.block), int(d.bucket))
        coefs = m.demand_rows.get(key, {})
        if m.allow_shortfall:
            s = B.var(
                f"shortfall[{d.workload},{d.period},{d.block},{d.bucket}]",
                VarKind.SHORTFALL,
                integer=False,
                ub=d.demand,
                workload=d.workload,
                period=int(d.period),
                block=int(d.block),
                bucket=int(d.bucket),
            )
            coefs = dict(coefs)
            coefs[s] = 1.0
            m.shortfall_tps[key[:3]][s] = float(d.tokens_per_unit)
            hours = m.p_hours[int(d.period)] * m.b_frac[int(d.block)]
            tokens = d.tokens_per_unit * hours * 3600.0
            m.shortfall_penalty.add(s, problem.shortfall_penalty_usd_per_mtoken * tokens / 1e6)
        family = "demand" if d.bucket < 0 else "demand_bucket"
        rkey = key[:3] if d.bucket < 0 else key
        if m.cap_demand_rows and d.bucket < 0 and d.demand > 0:
            coefs = {j: _capped(a, d.demand, B.vars[j]["integer"]) for j, a in coefs.items()}
        if not coefs:
            # nothing can serve it: an empty >= row with positive rhs is infeasible
            B.rows.append(new_row(family, rkey, {}, ">=", d.demand))
            continue
        B.row(family, rkey, coefs, ">=", float(d.demand))
    for (wname, t, b), coefs in m.redundancy_rows.items():
        w = m.workloads[wname]
        need = w.min_serving_units if isinstance(w, InferenceWorkload) else 1
        if need > 1 and not m.allow_shortfall:
            B.row("redundancy", (wname, t, b), coefs, ">=", float(need))


def _capped(a: float, demand: float, integer: bool) -> float:
    """A whole unit's coefficient in a demand row, at most the demand: capacity beyond the
    demand serves nothing, so ``sum min(a, D) x >= D`` holds for exactly the same whole
    plans as ``sum a x >= D`` (one unit of ``a >= D`` meets both), and its LP relaxation
    is tighter (no plan buys a third of a unit larger than the demand). The rule of
    :func:`solver.core.dominance.served_capacity`, per coefficient."""
    return min(a, demand) if integer else a


def add_training(m: State) -> None:
    """z[k] (binary): training workload runs on cluster option k; its cost split over the
    periods it runs in, its units in use; ``train_once`` per training workload."""
    B = m.B
    training = m.options[m.options["workload_kind"] == "training"]
    train_rows: dict[str, dict[int, float]] = defaultdict(dict)
    runs = m.compiled.training_runs()
    for k in option_rows(training):
        p = m.pool_idx[k.pool_id]
        z = B.var(
            f"z[{k.option_id}]",
            VarKind.Z,
            integer=True,
            ub=1.0,
            option_id=k.option_id,
            pool=p,
            period=int(k.start_period),
            block=-1,
            workload=k.workload,
        )
        train_rows[k.workload][z] = 1.0
        usd = k.rent_usd + k.energy_usd
        run = runs[int(k.option_id)]
        by_period = {t: usd * h / k.job_hours for t, h in run}
        m.add_cost(z, usd, k.provider, by_period, guard_band(k))
        m.co2_kg.add(z, k.kgco2e)
        for t, _h in run:
            for b in range(m.n_b):
                m.usage[p][(t, b)][z] += float(k.n_units)
    for wname, coefs in train_rows.items():
        B.row("train_once", (wname,), coefs, "==", 1.0)
    for w in m.problem.workloads:
        if w.kind == "training" and w.name not in train_rows:
            B.rows.append(new_row("train_once", (w.name,), {}, "==", 1.0))
