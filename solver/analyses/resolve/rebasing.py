"""The problem as seen from the start of a period ``as_of``: what the baseline bought and
reserved before it becomes the existing fleet, the caps shrink by what it spent and emitted.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from solver.analyses.diff import _UNITS_TOL
from solver.errors import ProcureError
from solver.inputs.catalog import Catalog
from solver.inputs.problem import (
    BatchInferenceWorkload,
    ExistingReservation,
    ExistingServer,
    Problem,
    TrainingWorkload,
    parse_problem,
)
from solver.plan import LineItem, Plan
from solver.plan.charges import plan_calendar, purchase_terms
from solver.units import RESERVED_TERM_MONTHS, Item, owned_offering_id


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
