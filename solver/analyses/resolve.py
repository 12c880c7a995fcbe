"""Re-solving from where we stand: baseline -> new problem, stability, and the diff
(:mod:`solver.analyses.diff`).

Prices changed (or a month went by): the plan we are executing, the *baseline*,
is partly done. :func:`resolve` answers "what now?" in four steps, each a pure
function over plain data:

1. :func:`rebase`: the problem as seen from the start of period ``as_of``.
   Servers bought and reservations started before ``as_of`` become
   ``existing_fleet`` and ``existing_reservations`` (with the months that remain
   of each term); training jobs finished before ``as_of`` are dropped; online
   workloads keep their remaining periods; the budget and carbon cap shrink by
   what the baseline spent and emitted before ``as_of``. Everything from
   ``as_of`` on is decided afresh.
2. :func:`evaluate_decisions`: the baseline's remaining decisions (units per
   line item) placed in the new problem's model and read back as a plan, at the
   old and at the new prices. The same cost accounting as a solve, so the two
   plans compare line by line.
3. :func:`add_stability`: optional rows that keep the new plan close to the
   baseline: at most ``max_changes`` changed line items (binary change
   indicators, family ``max_changes`` linked by ``change_link`` rows), or a
   switching cost in USD per unit that differs from the baseline (family
   ``switching``).
4. :func:`diff_plans`: line items added, removed and changed (units, mode,
   region), totals before and after, and the change split into the **price
   effect** (old plan at new prices minus old plan at old prices) and the
   **plan effect** (the rest: new plan minus old plan at new prices). The two add
   up to the total change by construction; without stability rows the plan
   effect is never positive (the old plan is feasible in the new problem, so the
   optimum costs no more).

A line item's *key* is (item, period, block, workload, offering, mode): the
units of one key are what the stability rows and the diff compare.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from solver.analyses.diff import _UNITS_TOL, Key, PlanDiff, _usd, _with_items, diff_plans, item_key
from solver.core.backends import SolveOptions
from solver.core.compile import Compiled, compile_problem, repruned
from solver.core.model import (
    Expression,
    LinearModel,
    VarKind,
    build_model,
    has_second_stage,
    new_row,
)
from solver.core.restrictions import lifted_problem
from solver.errors import ProcureError
from solver.inputs.catalog import Catalog
from solver.inputs.problem import (
    BatchInferenceWorkload,
    ExistingReservation,
    ExistingServer,
    InferenceWorkload,
    Problem,
    TrainingWorkload,
    parse_problem,
)
from solver.plan import LineItem, Plan, extract_plan, input_digests
from solver.plan.charges import plan_calendar, purchase_terms
from solver.plan.reporting import in_reporting_periods, pieces_of_items, split_items
from solver.units import DEFAULT_SOLVER, RESERVED_TERM_MONTHS, Item, owned_offering_id

DECISION_ITEMS = ("rent", "use", "training", "purchase", "reservation")
# --------------------------------------------------------------------------- rebase


@dataclass(frozen=True)
class Rebased:
    """The problem as seen from ``as_of``, and what was carried over from the baseline.

    Attributes
    ----------
    problem
        The new problem: remaining periods, existing fleet and commitments,
        remaining budget and carbon cap.
    future_items
        The baseline's decisions from ``as_of`` on (line items other than
        ``existing``): what the new plan is compared with.
    carried_servers, carried_reservations
        Purchases and reservations made before ``as_of``, now existing.
    dropped_workloads
        Workloads finished (or only served) before ``as_of``.
    spent_before_usd, co2e_before_t
        What the baseline spent and emitted before ``as_of``.
    notes
        Anything a reader should know (budget left, servers still in transit).
    """

    problem: Problem
    as_of: str | None
    future_items: list[LineItem]
    carried_servers: list[ExistingServer] = field(default_factory=list)
    carried_reservations: list[ExistingReservation] = field(default_factory=list)
    dropped_workloads: list[str] = field(default_factory=list)
    spent_before_usd: float = 0.0
    co2e_before_t: float = 0.0
    notes: list[str] = field(default_factory=list)


def _check_baseline(problem: Problem, baseline: Plan, names: list[str]) -> None:
    split = sorted({i.period for i in baseline.line_items if i.served_months})
    if split:
        raise ProcureError(
            f"the baseline plan was solved over period(s) {', '.join(split)} split where a "
            "server's life or a reservation's term ends (its line items' served_months); "
            "resolve re-plans over the problem's own periods and cannot carry it yet",
            field="--baseline",
            fix="re-solve with procure solve (it splits the periods itself), or write the "
            "split periods in the problem (the plan's compile_report.split_periods names "
            "them) and solve that",
        )
    for item in baseline.line_items:
        if item.period not in names:
            raise ProcureError(
                f"the baseline plan has a line item in period {item.period!r}, "
                f"which is not a period of problem {problem.name!r} ({names})",
                field="--baseline",
                fix="pass the problem the baseline was solved from",
            )
    explained: dict[tuple[str, str], float] = defaultdict(float)
    for s in problem.existing_fleet:
        explained[(owned_offering_id(s.server, s.site), "owned")] += s.units
    for r in problem.existing_reservations:
        explained[(r.offering, r.mode)] += r.units
    held: dict[tuple[str, str], float] = defaultdict(float)
    for item in baseline.line_items:
        if item.item == Item.EXISTING:
            held[(item.offering, item.mode)] += item.units
    for key, units in held.items():
        if units > explained.get(key, 0.0) + _UNITS_TOL:
            raise ProcureError(
                f"the baseline holds {units:g} existing {key[0]} {key[1]} that problem "
                f"{problem.name!r} does not have",
                field="--baseline",
                fix="pass the problem the baseline was solved from (procure resolve "
                "--problem-out writes the problem of a re-solved plan)",
            )


def _remaining_workloads(
    problem: Problem, decisions: list[LineItem], names: list[str], cut: int, as_of: str
) -> tuple[list[dict], list[str]]:
    """The workloads left from period ``as_of`` (problem data) and those already done.

    Refuses a training or batch job that runs across ``as_of``, and a training job the
    baseline never ran whose window closed before it."""
    past_names, future_names = set(names[:cut]), names[cut:]
    ran: dict[str, set[str]] = defaultdict(set)
    for item in decisions:
        if item.item == Item.TRAINING:
            ran[item.workload].add(item.period)
    workloads, dropped = [], []
    for w in problem.workloads:
        data = w.model_dump()
        if isinstance(w, TrainingWorkload):
            periods_run = ran.get(w.name, set())
            before = periods_run & past_names
            if before and before == periods_run:
                dropped.append(w.name)
                continue
            if before:
                raise ProcureError(
                    f"training {w.name!r} runs across {as_of} (periods "
                    f"{sorted(periods_run, key=names.index)})",
                    field="--as-of",
                    fix="re-solve as of a period before it starts or after it ends",
                )
            last = w.end_period or names[-1]
            if names.index(last) < cut:
                raise ProcureError(
                    f"training {w.name!r} had to finish by {last}, before {as_of}, but the "
                    "baseline never ran it",
                    field="--as-of",
                    fix="re-solve as of an earlier period, or move its end_period",
                )
            if w.start_period is None or names.index(w.start_period) < cut:
                data["start_period"] = as_of
        else:
            served = w.periods if w.periods is not None else names
            left = [p for p in served if p in future_names]
            if not left:
                dropped.append(w.name)
                continue
            if isinstance(w, BatchInferenceWorkload) and len(left) < len(served):
                raise ProcureError(
                    f"batch job {w.name!r} runs across {as_of}",
                    field="--as-of",
                    fix="re-solve as of a period before it starts or after it ends",
                )
            data["periods"] = None if w.periods is None else left
        workloads.append(data)
    return workloads, dropped


def _caps_left(
    problem: Problem, spent: float, co2: float, capex_before: float, as_of: str, notes: list
) -> dict:
    """Budget, capex budget and carbon cap left after what the baseline spent and emitted
    before ``as_of`` (problem fields); refuses a cap already used up."""
    out: dict = {}
    if problem.budget_usd is not None:
        left = problem.budget_usd - spent
        if left <= 0:
            raise ProcureError(
                f"the baseline spent ${spent:,.0f} before {as_of}: the budget of "
                f"${problem.budget_usd:,.0f} is used up",
                field="budget_usd",
                fix="raise budget_usd in the problem file",
            )
        out["budget_usd"] = left
        notes.append(f"budget left ${left:,.0f} of ${problem.budget_usd:,.0f}")
    if problem.capex_budget_usd is not None:
        out["capex_budget_usd"] = max(0.0, problem.capex_budget_usd - capex_before)
    if problem.carbon_cap_tco2e is not None:
        left = problem.carbon_cap_tco2e - co2
        if left <= 0:
            raise ProcureError(
                f"the baseline emitted {co2:,.1f} tCO2e before {as_of}: the carbon cap of "
                f"{problem.carbon_cap_tco2e:,.1f} t is used up",
                field="carbon_cap_tco2e",
                fix="raise carbon_cap_tco2e in the problem file",
            )
        out["carbon_cap_tco2e"] = left
    return out


def rebase(problem: Problem, baseline: Plan, catalog: Catalog, as_of: str | None = None) -> Rebased:
    """The problem from the start of period ``as_of``, given the baseline plan so far.

    Parameters
    ----------
    problem
        The problem the baseline was solved from.
    baseline
        The plan being executed.
    catalog
        For servers' lead times and capex (the capex budget left).
    as_of
        A period name of ``problem``; ``None`` re-decides the whole horizon.

    Raises
    ------
    ProcureError
        ``as_of`` is not a period; the baseline does not belong to the problem;
        a training or batch job runs across ``as_of``; nothing is left to plan;
        the budget or carbon cap is already used up.
    """
    cal = plan_calendar(problem)
    names, start, months = list(cal.start_month), cal.start_month, cal.months
    _check_baseline(problem, baseline, names)
    decisions = [i for i in baseline.line_items if i.item != Item.EXISTING]
    if as_of is not None and as_of not in names:
        raise ProcureError(
            f"--as-of {as_of!r} is not a period of problem {problem.name!r}",
            field="--as-of",
            fix=f"use one of: {', '.join(names)}",
        )
    if as_of is None or as_of == names[0]:
        return Rebased(problem=problem, as_of=as_of, future_items=decisions)
    cut = names.index(as_of)
    past_names, future_names = set(names[:cut]), names[cut:]
    now = start[as_of]
    clock = cal.clock
    notes: list[str] = []

    # ---- purchases and reservations made before as-of become existing
    fleet: dict[tuple[str, str], int] = defaultdict(int)
    for s in problem.existing_fleet:
        fleet[(s.server, s.site)] += s.units
    carried_servers: list[ExistingServer] = []
    reservations: list[ExistingReservation] = [
        r.model_copy(update={"months_remaining": r.months_remaining - now})
        for r in problem.existing_reservations
        if r.months_remaining - now > 1e-9
    ]
    carried_reservations: list[ExistingReservation] = []
    capex_before = 0.0
    for item in decisions:
        if item.period not in past_names:
            continue
        units = int(round(item.units))
        if item.item == Item.PURCHASE and units > 0:
            server, site = item.instance_type, item.region
            fleet[(server, site)] += units
            carried_servers.append(ExistingServer(server=server, site=site, units=units))
            if server in catalog.servers.index:
                terms = purchase_terms(item, cal, catalog, problem.owned_cost_policy)
                arrival = terms.delivery_month
                if arrival > now + 1e-9:
                    notes.append(
                        f"{units} x {server} at {site} ordered in {item.period} arrive "
                        f"{arrival - now:.1f} months after {as_of}; treated as in service "
                        "from the start"
                    )
                capex_before += units * terms.capex_usd_per_server * terms.capex_fraction
        elif item.item == "reservation" and units > 0:
            left = start[item.period] + RESERVED_TERM_MONTHS[item.mode] - now
            if left > 1e-9:
                r = ExistingReservation(
                    offering=item.offering, mode=item.mode, units=units, months_remaining=left
                )
                reservations.append(r)
                carried_reservations.append(r)

    workloads, dropped = _remaining_workloads(problem, decisions, names, cut, as_of)
    if not workloads:
        raise ProcureError(
            f"every workload of {problem.name!r} is done before {as_of}: nothing to re-solve",
            field="--as-of",
            fix="choose an earlier period",
        )

    # ---- what was spent and emitted before as-of
    spent = float(sum(baseline.totals.by_period.get(p, 0.0) for p in past_names))
    co2 = float(sum(i.co2e_t for i in baseline.line_items if i.period in past_names))
    data = problem.model_dump()
    data["workloads"] = workloads
    data["horizon_months"] = float(sum(months[p] for p in future_names))
    data["periods"] = [{"name": p, "months": months[p]} for p in future_names]
    if problem.start is not None:  # the re-based plan begins where the open periods begin
        data["start"] = clock.timestamp(now, problem.start).date()
    data["existing_fleet"] = [
        {"server": s, "site": site, "units": u} for (s, site), u in sorted(fleet.items())
    ]
    data["existing_reservations"] = [r.model_dump() for r in reservations]
    data["period_budget_usd"] = {
        p: v for p, v in problem.period_budget_usd.items() if p in future_names
    }
    data.update(_caps_left(problem, spent, co2, capex_before, as_of, notes))
    new_problem = parse_problem(data, file=f"{problem.name} as of {as_of}")
    return Rebased(
        problem=new_problem,
        as_of=as_of,
        future_items=[i for i in decisions if i.period not in past_names],
        carried_servers=carried_servers,
        carried_reservations=carried_reservations,
        dropped_workloads=dropped,
        spent_before_usd=spent,
        co2e_before_t=co2,
        notes=notes,
    )


# --------------------------------------------------------------------------- decisions


@dataclass(frozen=True)
class Decision:
    """One model variable behind a line item key: ``units = coef x value``."""

    var: int
    coef: float
    upper: float  # an upper bound on the variable's value in any feasible solution
    option_id: int = -1


def decision_index(compiled: Compiled, model: LinearModel) -> dict[Key, list[Decision]]:
    """Line item key -> the variables whose values are that line item's units.

    Rented units (``x`` per block) give ``rent`` keys; owned and reserved units
    (``x`` per period) give one ``use`` key per block; training clusters (``z``)
    give a ``training`` key per period they run in (units = cluster size);
    ``buy`` and ``commit`` give ``purchase`` and ``reservation`` keys.
    Each variable carries an upper bound (:func:`useful_units`).
    """
    periods = list(compiled.periods["name"])
    blocks = list(compiled.blocks["name"])
    pools = compiled.pools
    offerings, modes = pools["offering_id"].to_numpy(), pools["mode"].to_numpy()
    options = compiled.options.set_index("option_id")
    runs = compiled.training_runs()
    upper = useful_units(compiled, model)
    v = model.variables
    out: dict[Key, list[Decision]] = defaultdict(list)
    for i, r in enumerate(v.itertuples(index=False)):
        if r.kind not in ("x", "z", "buy", "commit"):
            continue
        offering, mode = offerings[int(r.pool)], modes[int(r.pool)]
        if r.kind == "x":
            if r.block >= 0:
                key = ("rent", periods[r.period], blocks[r.block], r.workload, offering, mode)
                out[key].append(Decision(i, 1.0, upper[i], int(r.option_id)))
            else:
                for b in blocks:
                    key = ("use", periods[r.period], b, r.workload, offering, mode)
                    out[key].append(Decision(i, 1.0, upper[i], int(r.option_id)))
        elif r.kind == "z":
            k = options.loc[int(r.option_id)]
            for t, _h in runs[int(r.option_id)]:
                key = ("training", periods[int(t)], "", r.workload, offering, mode)
                out[key].append(Decision(i, float(k["n_units"]), 1.0, int(r.option_id)))
        else:
            item = "purchase" if r.kind == "buy" else "reservation"
            key = (item, periods[r.period], "", "", offering, mode)
            out[key].append(Decision(i, 1.0, upper[i]))
    return dict(out)


def useful_units(compiled: Compiled, model: LinearModel) -> np.ndarray:
    """Per variable, the most units any optimal plan needs (inf where unknown).

    For units of an inference option: enough to serve its workload's demand in
    the period and block alone (plus one under N+1; at least its minimum serving
    units), and never above the pool's availability cap plus existing units. More
    units only add cost, so an optimum exists within these bounds; they make the
    stability rows' big-M tight. For ``buy`` and ``commit``: the pool's useful units in its busiest
    period (capped likewise); for ``z``: 1.
    """
    v = model.variables
    pools = compiled.pools
    cap = (
        pools["availability_cap"].astype(float) + pools["existing_units"].astype(float)
    ).to_numpy()
    demand = {
        (d.workload, int(d.period), int(d.block), int(d.bucket)): float(d.demand)
        for d in compiled.demand.itertuples(index=False)
    }
    n_blocks = len(compiled.blocks)
    options = compiled.options.set_index("option_id")
    # a problem of training jobs only has no serving capacity column
    per_unit = options.get("tokens_per_s_per_unit", pd.Series(dtype=float)).to_dict()
    rps: dict[int, dict[int, float]] = defaultdict(dict)
    for r in compiled.bucket_capacity.itertuples(index=False):
        rps[int(r.option_id)][int(r.bucket)] = float(r.requests_per_s_per_unit)
    online = [w for w in compiled.problem.workloads if isinstance(w, InferenceWorkload)]
    fewest = {w.name: float(w.min_serving_units) for w in online}
    spare = {w.name: 1.0 for w in online if w.n_plus_1}  # N+1: one unit over the peak's need
    upper = np.full(len(v), np.inf)
    pool_need: dict[tuple[int, int], float] = defaultdict(float)
    training_units: dict[int, float] = defaultdict(float)
    options = compiled.options.set_index("option_id")
    for i, r in enumerate(v.itertuples(index=False)):
        if r.kind == "z":
            upper[i] = 1.0
            n = float(options.loc[int(r.option_id), "n_units"])
            training_units[int(r.pool)] = max(training_units[int(r.pool)], n)
            continue
        if r.kind != "x":
            continue
        k = int(r.option_id)
        need = 0.0
        for b in [r.block] if r.block >= 0 else range(n_blocks):
            if k in rps:
                units = sum(
                    demand.get((r.workload, r.period, b, j), 0.0) / x
                    for j, x in rps[k].items()
                    if x > 0
                )
            else:
                d = demand.get((r.workload, r.period, b, -1), 0.0)
                units = d / per_unit[k] if per_unit.get(k, 0.0) > 0 else np.inf
            need = max(need, math.ceil(units - 1e-9) if np.isfinite(units) else np.inf)
        need = max(need + spare.get(r.workload, 0.0), fewest.get(r.workload, 1.0))
        upper[i] = min(max(cap[int(r.pool)], 0.0), need)
        pool_need[(int(r.pool), int(r.period))] += upper[i]
    busiest: dict[int, float] = defaultdict(float)
    for (p, _t), n in pool_need.items():
        busiest[p] = max(busiest[p], n)
    for i, r in enumerate(v.itertuples(index=False)):
        if r.kind in ("buy", "commit"):
            p = int(r.pool)
            upper[i] = min(max(cap[p], 0.0), busiest.get(p, 0.0) + training_units.get(p, 0.0))
    return upper


def baseline_units(items: list[LineItem]) -> dict[Key, float]:
    """Units per key of the decision line items (``existing`` left out)."""
    units: dict[Key, float] = defaultdict(float)
    for i in items:
        if i.item in DECISION_ITEMS:
            key = item_key(i)
            if i.item == Item.TRAINING:
                units[key] = max(units[key], i.units)  # one cluster per workload and period
            else:
                units[key] += i.units
    return dict(units)


def baseline_pools(compiled: Compiled, items: list[LineItem]) -> frozenset[str]:
    """The pools (offering and mode) of the decision line items in ``items``."""
    wanted = {(i.offering, i.mode) for i in items if i.item in DECISION_ITEMS}
    pools = compiled.pools
    used = [(o, m) in wanted for o, m in zip(pools["offering_id"], pools["mode"], strict=True)]
    return frozenset(pools["pool_id"][used])


def _evaluated(compiled: Compiled, items: list[LineItem]) -> tuple[Plan, list[LineItem]]:
    return evaluate_decisions(compiled, build_model(compiled), items, label="baseline")


def evaluate_decisions(
    compiled: Compiled, model: LinearModel, items: list[LineItem], *, label: str = "evaluated"
) -> tuple[Plan, list[LineItem]]:
    """Place the decisions of ``items`` in ``model`` and read them back as a plan.

    The plan carries this model's prices and cost accounting (existing fleet and
    commitments included). Items the model has no variable for (an offering no
    longer in the catalog or no longer allowed) are returned apart and added to
    the plan as they stand.
    """
    index = decision_index(compiled, model)
    options = compiled.options.set_index("option_id")
    values = np.zeros(len(model.variables))
    unplaced: list[LineItem] = []
    by_key: dict[Key, list[LineItem]] = defaultdict(list)
    for i in items:
        if i.item in DECISION_ITEMS:
            by_key[item_key(i)].append(i)
    for key, group in by_key.items():
        entries = index.get(key)
        units = sum(i.units for i in group)
        if not entries:
            unplaced.extend(group)
            continue
        if key[0] == "training":
            item = group[0]
            match = [
                d
                for d in entries
                if int(options.loc[d.option_id, "n_units"]) == int(round(item.units))
                and compiled.periods["name"].iat[int(options.loc[d.option_id, "start_period"])]
                == (item.start_period or item.period)
                and abs(float(options.loc[d.option_id, "job_hours"]) - item.job_hours)
                <= 1e-6 * max(1.0, item.job_hours)
            ]
            if not match:
                unplaced.extend(group)
                continue
            values[match[0].var] = 1.0
        else:
            values[entries[0].var] = units
    _place_savings_plans(compiled, model, items, values)
    cost = model.expressions["total_cost_usd"].value(values)
    plan = extract_plan(
        compiled,
        model,
        values,
        status=label,
        objective=cost,
        gap=None,
        solver="none",
        solve_seconds=0.0,
    )
    if unplaced:
        plan = _with_items(plan, plan.line_items + unplaced, list(compiled.periods["name"]))
    return plan, unplaced


def _place_savings_plans(
    compiled: Compiled, model: LinearModel, items: list[LineItem], values: np.ndarray
) -> None:
    """The savings plans of ``items`` in ``model``'s variables, by name: each commitment
    (USD/h from its period) and the usage it paid for (units of an on-demand pool in a
    period and block), where the model has them. The plan's rates are the problem's, so
    what it covered it still may; the credits take the model's on-demand prices."""
    if not compiled.problem.savings_plans:
        return
    index = {n: i for i, n in enumerate(model.variables["name"])}
    periods = {n: t for t, n in enumerate(compiled.periods["name"])}
    blocks = {n: b for b, n in enumerate(compiled.blocks["name"])}
    for i in items:
        term = i.mode.removeprefix("savings_plan_")
        if i.item == "savings_plan":
            name = f"savings_plan[{i.provider},{term},{periods.get(i.period)}]"
        elif i.item == "savings_plan_cover":
            at = f"{periods.get(i.period)},{blocks.get(i.block)}"
            name = f"sp_cover[{i.provider},{term},{i.offering}#on_demand,{at}]"
        else:
            continue
        if name in index:
            values[index[name]] += i.units


def priced_at(
    problem: Problem, catalog: Catalog, items: list[LineItem], *, label: str = "evaluated"
) -> tuple[Plan, list[LineItem]]:
    """The decisions of ``items`` priced by the model of ``problem`` over ``catalog``.

    :func:`evaluate_decisions` on a model compiled for the purpose (every option kept,
    so every decision has its variable): "the old plan at the new prices" of the price/
    plan split (:func:`solver.analyses.diff.split_change`) when no model is at hand.
    """
    pieces = pieces_of_items(items, [(p.name, float(p.months)) for p in problem.resolved_periods])
    split = None
    if any(len(ps) > 1 for ps in pieces.values()):  # a plan solved over split periods
        split = lifted_problem(problem, pieces)
        if split is None:
            raise ProcureError(
                "the plan was solved over periods split where a life or term ends (its "
                "line items' served_months), and this problem's periods cannot be split so",
                field="periods",
                fix="pass the problem the plan was solved from",
            )
        items = split_items(items, pieces, plan_calendar(split).clock.hours_at)
    compiled = compile_problem(split or problem, catalog, prune_dominated=False)
    plan, unplaced = evaluate_decisions(compiled, build_model(compiled), items, label=label)
    if split is None:
        return plan, unplaced
    return in_reporting_periods(plan, pieces), unplaced


def diff_at_prices(
    old: Plan,
    new: Plan,
    problem: Problem,
    new_catalog: Catalog,
    *,
    price_source: str,
    notes: list[str] | None = None,
) -> PlanDiff:
    """``procure diff``: the two plans compared, the change split exactly as
    :func:`resolve` splits it: the old plan's decisions priced by the model of its
    ``problem`` over ``new_catalog`` (:func:`priced_at`)."""
    at_new, unplaced = priced_at(problem, new_catalog, old.line_items, label="baseline")
    notes = list(notes or [])
    if unplaced:
        notes.append(
            f"{len(unplaced)} old line item(s) have no place at the new prices (offering "
            "gone or no longer allowed): kept at their old cost on both sides of the price "
            "effect"
        )
    return diff_plans(old, new, old_at_new_prices=at_new, price_source=price_source, notes=notes)


# --------------------------------------------------------------------------- stability


@dataclass(frozen=True)
class StabilityInfo:
    """What :func:`add_stability` added."""

    max_changes: int | None
    switching_cost_usd: float | None
    keys: int  # line item keys compared with the baseline
    indicators: int  # binary change indicators (keys with the same variables share one)
    unavoidable: list[Key]  # baseline keys the new model cannot reproduce
    unconstrained_cost_usd: float | None = None  # the re-solve without stability rows
    unconstrained_changes: int | None = None  # its changed line items (keys)
    rows_needed: bool = True  # False: the unconstrained optimum already kept the limit


def _check_stability_options(
    compiled: Compiled, max_changes: int | None, switching_cost_usd: float | None
) -> None:
    """Refuse limits a re-solve cannot keep (negative, or a switching cost on a two-stage
    objective)."""
    if max_changes is None and switching_cost_usd is None:
        raise ValueError("add_stability needs max_changes or switching_cost_usd")
    if max_changes is not None and max_changes < 0:
        raise ProcureError(
            "--max-changes must be 0 or more", field="--max-changes", fix="e.g. --max-changes 2"
        )
    if switching_cost_usd is not None:
        if switching_cost_usd < 0:
            raise ProcureError(
                "--switching-cost-usd must be 0 or more",
                field="--switching-cost-usd",
                fix="e.g. --switching-cost-usd 5000",
            )
        if has_second_stage(compiled.problem):
            raise ProcureError(
                f"a switching cost needs a one-stage objective, not {compiled.problem.objective}",
                field="--switching-cost-usd",
                fix="use --max-changes, or objective min_cost / cost_plus_carbon / max_served",
            )


def _room_for_changes(max_changes: int, unavoidable: list) -> int:
    """Changes left to choose after the baseline items the model cannot reproduce."""
    room = max_changes - len(unavoidable)
    if room < 0:
        shown = ", ".join(f"{k[0]} {k[4]} {k[5]} in {k[1]}" for k in unavoidable[:3])
        raise ProcureError(
            f"{len(unavoidable)} baseline line items cannot be kept ({shown}...): "
            f"more than --max-changes {max_changes}",
            field="--max-changes",
            fix=f"allow at least {len(unavoidable)} changes",
        )
    return room


def add_stability(
    compiled: Compiled,
    model: LinearModel,
    baseline_items: list[LineItem],
    *,
    max_changes: int | None = None,
    switching_cost_usd: float | None = None,
) -> tuple[LinearModel, StabilityInfo]:
    """The model with stability rows: few changed line items, or a cost per changed unit.

    For every line item key k with baseline units B_k and model units U_k
    (:func:`decision_index`; M_k = max(B_k, an upper bound of U_k)):

    - ``max_changes = N``: binary d_k with ``U_k - B_k <= M_k d_k`` and
      ``B_k - U_k <= M_k d_k`` (rows ``change_link``), and
      ``sum_k d_k <= N - (baseline keys the model cannot reproduce)`` (row
      ``max_changes``). Keys whose units come from the same variables share one
      indicator, weighted by their number (an owned server in use counts once
      per load block, as the plan lists it).
    - ``switching_cost_usd = X``: continuous s_k >= |U_k - B_k| (rows
      ``switching``) and ``X * sum_k s_k`` added to the objective (not to the
      plan's cost or budget).

    Raises
    ------
    ProcureError
        Bad limits; a switching cost with a two-stage objective; more
        unavoidable changes than ``max_changes``.
    """
    _check_stability_options(compiled, max_changes, switching_cost_usd)
    index = decision_index(compiled, model)
    base = baseline_units(baseline_items)
    keys = sorted(set(index) | {k for k, u in base.items() if u > _UNITS_TOL})
    unavoidable = [k for k in keys if k not in index]
    groups: dict[tuple, int] = defaultdict(int)  # (entries, baseline) -> number of keys
    for k in keys:
        if k in index:
            entries = tuple((d.var, d.coef, d.upper) for d in index[k])
            groups[(entries, round(base.get(k, 0.0), 6))] += 1

    variables = [model.variables]
    rows = list(model.rows)
    objective = Expression(defaultdict(float, model.objective.coefs), model.objective.constant)
    n = len(model.variables)
    new_vars: list[dict] = []
    count: dict[int, float] = {}

    def var(name: str, kind: VarKind, integer: bool, ub: float) -> int:
        new_vars.append(
            {
                "name": name,
                "kind": VarKind(kind).value,
                "integer": integer,
                "lb": 0.0,
                "ub": ub,
                "option_id": -1,
                "pool": -1,
                "period": -1,
                "block": -1,
                "workload": "",
                "bucket": -1,
            }
        )
        return n + len(new_vars) - 1

    for g, ((entries, b), weight) in enumerate(sorted(groups.items())):
        units = {v: c for v, c, _ in entries}
        bounds = [c * u for _, c, u in entries]
        upper = (
            max(bounds) if len(bounds) > 1 and all(u == 1.0 for *_, u in entries) else sum(bounds)
        )
        big_m = max(b, upper, 1.0)
        if max_changes is not None:
            d = var(f"changed[{g}]", VarKind.CHANGE, True, 1.0)
            count[d] = float(weight)
            up = dict(units)
            up[d] = -big_m
            rows.append(new_row("change_link", (g, "up"), up, "<=", b))
            if b > 0:
                down = {v: -c for v, c in units.items()}
                down[d] = -big_m
                rows.append(new_row("change_link", (g, "down"), down, "<=", -b))
        if switching_cost_usd:
            if b > 0:
                s = var(f"switched[{g}]", VarKind.SWITCH, False, np.inf)
                up = dict(units)
                up[s] = -1.0
                down = {v: -c for v, c in units.items()}
                down[s] = -1.0
                rows.append(new_row("switching", (g, "up"), up, "<=", b))
                rows.append(new_row("switching", (g, "down"), down, "<=", -b))
                objective.coefs[s] += switching_cost_usd * weight
            else:
                for v, c in units.items():
                    objective.coefs[v] += switching_cost_usd * weight * c
    if max_changes is not None:
        room = _room_for_changes(max_changes, unavoidable)
        if count:
            rows.append(new_row("max_changes", (), count, "<=", room))
    if new_vars:
        variables.append(pd.DataFrame(new_vars))
    frame = pd.concat(variables, ignore_index=True)
    extended = LinearModel(frame, rows, objective, model.expressions, model.stage)
    info = StabilityInfo(
        max_changes=max_changes,
        switching_cost_usd=switching_cost_usd,
        keys=len(keys),
        indicators=len(count),
        unavoidable=unavoidable,
    )
    return extended, info


def count_changes(
    compiled: Compiled, model: LinearModel, values: np.ndarray, baseline_items: list[LineItem]
) -> int:
    """Line item keys whose units in ``values`` differ from the baseline (as the rows count)."""
    index = decision_index(compiled, model)
    base = baseline_units(baseline_items)
    changed = 0
    for k in set(index) | {k for k, u in base.items() if u > _UNITS_TOL}:
        units = sum(d.coef * values[d.var] for d in index.get(k, []))
        if k not in index or abs(units - base.get(k, 0.0)) > 1e-6:
            changed += 1
    return changed


# --------------------------------------------------------------------------- resolve


@dataclass(frozen=True)
class Resolution:
    """Everything ``procure resolve`` shows.

    Attributes
    ----------
    rebased
        The problem from ``as_of`` and what was carried over.
    plan
        The new plan, verified against the rebased problem and the new catalog.
    baseline, baseline_at_new_prices
        The baseline's remaining decisions in the rebased problem, priced at the
        old and the new catalog.
    diff
        ``baseline`` versus ``plan`` (price effect from ``baseline_at_new_prices``).
    unplaced
        Baseline items with no place in the new model (kept at their old cost).
    stability
        What the stability rows were, if any.
    """

    rebased: Rebased
    plan: Plan
    baseline: Plan
    baseline_at_new_prices: Plan
    diff: PlanDiff
    unplaced: list[LineItem]
    stability: StabilityInfo | None


def _stable_solution(
    compiled, model, future_items, max_changes, switching_cost_usd, solver, options
):
    """The re-solve's optimum, with the stability rows the user asked for (if any), and
    what they cost (a :class:`StabilityInfo`, or None)."""
    from solver.solve import carried, optimise

    def unconstrained():
        """The plain problem's optimum, pruned for its own prices, limits and demand."""
        pruned = repruned(compiled)
        return optimise(pruned, build_model(pruned), solver=solver, options=options)

    stability = None
    if max_changes is not None:
        # The unconstrained optimum first: when it already keeps the limit it is also the
        # constrained optimum (and the MIP with change indicators is not needed).
        free = unconstrained()
        free_cost = free.model.expressions["total_cost_usd"].value(free.result.values)
        values = carried(free.model, free.result.values, model)
        free_changes = count_changes(compiled, model, values, future_items)
        if free_changes <= max_changes:
            solution = free
            stability = StabilityInfo(max_changes, None, 0, 0, [], free_cost, free_changes, False)
        else:
            extended, info = add_stability(compiled, model, future_items, max_changes=max_changes)
            solution = optimise(compiled, extended, solver=solver, options=options)
            stability = replace(
                info, unconstrained_cost_usd=free_cost, unconstrained_changes=free_changes
            )
    elif switching_cost_usd is not None:
        extended, stability = add_stability(
            compiled, model, future_items, switching_cost_usd=switching_cost_usd
        )
        solution = optimise(compiled, extended, solver=solver, options=options)
    else:
        solution = unconstrained()
    return solution, stability


def _resolution_notes(baseline, old_view, plan, rebased, unplaced, stability, as_of) -> list[str]:
    """What the diff of a re-solve should say besides the line items."""
    notes = []
    if unplaced:
        notes.append(
            f"{len(unplaced)} baseline line item(s) have no place in the new problem (offering "
            "gone or no longer allowed): kept at their old cost on both sides of the price effect"
        )
    if as_of is None and not math.isclose(
        old_view.total_cost_usd, baseline.total_cost_usd, rel_tol=1e-6, abs_tol=0.01
    ):
        notes.append(
            f"the baseline costs ${baseline.total_cost_usd:,.2f} in its file but "
            f"${old_view.total_cost_usd:,.2f} at the --catalog prices: was it solved on "
            "another catalog?"
        )
    if rebased.as_of is not None:
        notes.append(
            f"both plans from {rebased.as_of} on; the baseline's remaining decisions "
            "re-read in the re-based problem (fleet and commitments made before it count "
            "as existing)"
        )
    if stability is not None and stability.unavoidable:
        notes.append(f"{len(stability.unavoidable)} baseline line item(s) cannot be kept")
    if stability is not None and stability.unconstrained_cost_usd is not None:
        extra = plan.total_cost_usd - stability.unconstrained_cost_usd
        notes.append(
            f"without --max-changes the re-solve changes {stability.unconstrained_changes} line "
            f"item(s) and costs ${stability.unconstrained_cost_usd:,.2f}; the limit of "
            f"{stability.max_changes} costs {_usd(extra)}"
        )
    return notes


def resolve(
    problem: Problem,
    baseline: Plan,
    old_catalog: Catalog,
    new_catalog: Catalog,
    *,
    as_of: str | None = None,
    max_changes: int | None = None,
    switching_cost_usd: float | None = None,
    solver: str = DEFAULT_SOLVER,
    options: SolveOptions | None = None,
) -> Resolution:
    """Re-solve ``problem`` from ``as_of`` at the new prices, keeping what is done.

    Raises
    ------
    ProcureError
        See :func:`rebase` and :func:`add_stability`; bad input.
    InfeasibleError
        Nothing satisfies the rebased problem (and the stability rows).
    VerificationError
        The new plan failed the independent verifier.
    """
    import time

    from solver.plan.provenance import with_currency
    from solver.solve import (
        VerificationError,
        kept_for_the_plan,
        period_warnings,
        plan_of,
        remaining_time,
        with_cash_flow,
    )
    from solver.trust.price_requirements import refuse_weak_prices, weak_prices
    from solver.trust.verify import verify_plan

    if max_changes is not None and switching_cost_usd is not None:
        raise ProcureError(
            "give --max-changes or --switching-cost-usd, not both",
            field="--max-changes/--switching-cost-usd",
            fix="pick one way to keep the plan stable",
        )
    options = options or SolveOptions()
    started = time.perf_counter()
    rebased = rebase(problem, baseline, old_catalog, as_of)
    compiled = compile_problem(rebased.problem, new_catalog, prune_dominated=False)
    compiled_old = compile_problem(rebased.problem, old_catalog, prune_dominated=False)
    # The baseline is read at either prices in a model pruned for them with its own pools
    # kept (each of its decisions has its variable; no other option is needed to price it).
    keep = baseline_pools(compiled, rebased.future_items)
    old_view, unplaced = _evaluated(repruned(compiled_old, keep), rebased.future_items)
    at_new, _ = _evaluated(repruned(compiled, keep), rebased.future_items)
    # the stability rows are written over every option (the unpruned model)
    stable = max_changes is not None or switching_cost_usd is not None
    model = build_model(compiled) if stable else None
    compile_seconds = time.perf_counter() - started
    # the limit holds end to end: the solver gets what the compiles left, less the reserve
    # for the plan and the verifier (issue 34)
    limit = options.time_limit_s
    options = remaining_time(options, compile_seconds, "compiling the re-solve's models")
    options = kept_for_the_plan(options, limit)
    solution, stability = _stable_solution(
        compiled, model, rebased.future_items, max_changes, switching_cost_usd, solver, options
    )
    plan = plan_of(solution)
    plan = plan.model_copy(update={"compile_seconds": compile_seconds})
    plan = with_cash_flow(plan, rebased.problem, new_catalog, compiled)
    checks = verify_plan(plan, rebased.problem, new_catalog)
    plan = plan.model_copy(
        update={
            "checks": checks,
            "verified": all(c.ok for c in checks),
            "inputs": input_digests(rebased.problem, new_catalog),
            "stopped_at_time_limit": limit is not None and plan.status == "feasible",
        }
    )
    if not plan.verified:
        failed = "; ".join(f"{c.name}: {c.detail}" for c in checks if not c.ok)
        raise VerificationError(
            f"the re-solved plan failed independent verification ({failed})",
            fix="this is a bug in procure: report it with the problem, baseline and prices",
        )
    weak = weak_prices(plan, rebased.problem)
    refuse_weak_prices(weak, plan.total_cost_usd, new_catalog.directory)
    # a period of the re-based problem that outlives a server's life or a term: said on
    # the new plan with the cost of splitting it, as procure solve says it (issue 34)
    spent = time.perf_counter() - started
    found = period_warnings(
        rebased.problem, new_catalog, compiled, plan, solver, options, "auto", spent
    )
    plan = plan.model_copy(update={"warnings": plan.warnings + found})
    rate = new_catalog.rate(
        rebased.problem.currency, field="currency", instead="leave currency out (USD)"
    )
    plan = with_currency(plan, rebased.problem, rate)
    notes = _resolution_notes(baseline, old_view, plan, rebased, unplaced, stability, as_of)
    diff = diff_plans(
        old_view, plan, old_at_new_prices=at_new, price_source="the re-solve's prices", notes=notes
    )
    return Resolution(
        rebased=rebased,
        plan=plan,
        baseline=old_view,
        baseline_at_new_prices=at_new,
        diff=diff,
        unplaced=unplaced,
        stability=stability,
    )
