"""Explain an infeasible problem: the smallest relaxations that make it feasible.

When the MIP has no feasible point, elastic copies of it are solved
(:mod:`solver.core.elastic`): one group of limits at a time (budget; carbon cap;
availability, quotas and site power; demand) gets a non-negative slack on each of its
rows, penalised in the objective, and everything else stays hard. A group whose elastic
copy is feasible yields a relaxation that is enough on its own ("the budget is short by
$312,400 (15.6%)"); the slack values are the smallest such relaxation (to the solver's
gap). Training deadlines are relaxed to the shortest deadline that is feasible, and a
training job sized below its published MFU (training_margin low, the default, or a
fraction) by sizing it at the point figure. When no single group is enough, all groups
are relaxed together. This module builds no model and calls no solver: it puts what
:mod:`solver.core.elastic` answers into words and problem edits.

Every relaxation comes with the problem edit that applies it, so a caller (and the
tests) can apply it and re-solve.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from solver.core.compile import Compiled
from solver.core.elastic import Slack, elastic_slacks, is_feasible, shortest_deadline_days
from solver.inputs.catalog import Catalog
from solver.inputs.problem import Problem, TrainingWorkload

GROUPS: dict[str, tuple[str, ...]] = {
    "budget": ("budget", "capex_budget", "period_budget"),
    "carbon cap": ("carbon_cap",),
    "availability and quotas": ("availability", "quota", "power_cap"),
    "demand": ("demand", "demand_bucket", "redundancy", "n_plus_1"),
}


@dataclass(frozen=True)
class Relaxation:
    """One change to a limit; ``edit`` applies it to the problem (field -> new value)."""

    group: str
    constraint: str
    amount: float
    unit: str
    sentence: str
    edit: dict


@dataclass(frozen=True)
class Explanation:
    """Alternatives: each list of relaxations is enough on its own."""

    alternatives: list[list[Relaxation]]

    def sentences(self) -> list[str]:
        return ["; and ".join(r.sentence for r in alt) for alt in self.alternatives]


def _sentence(compiled: Compiled, row: Slack, amount: float) -> tuple[str, str, dict]:
    """Words, unit and problem edit for relaxing the row of ``row`` by ``amount`` (in the
    limit's own units, :class:`solver.core.elastic.Slack`)."""
    problem = compiled.problem
    pools = compiled.pools
    periods = list(compiled.periods["name"])
    if row.family == "budget":
        assert problem.budget_usd is not None  # a budget row exists only with a budget
        new = math.ceil(problem.budget_usd + amount + 1.0)
        pct = 100.0 * amount / problem.budget_usd
        return (
            f"the budget is short by ${amount:,.0f} ({pct:.1f}%): raise budget_usd to ${new:,}",
            "USD",
            {"budget_usd": float(new)},
        )
    if row.family == "capex_budget":
        assert problem.capex_budget_usd is not None  # the row exists only with the cap
        new = math.ceil(problem.capex_budget_usd + amount + 1.0)
        return (
            f"the capex budget is short by ${amount:,.0f}: raise capex_budget_usd to ${new:,}",
            "USD",
            {"capex_budget_usd": float(new)},
        )
    if row.family == "period_budget":
        (name,) = row.key
        new = math.ceil(problem.period_budget_usd[name] + amount + 1.0)
        caps = dict(problem.period_budget_usd)
        caps[name] = float(new)
        return (
            f"the budget of period {name} is short by ${amount:,.0f}: raise it to ${new:,}",
            "USD",
            {"period_budget_usd": caps},
        )
    if row.family == "carbon_cap":
        assert problem.carbon_cap_tco2e is not None  # the row exists only with the cap
        cap = math.ceil((problem.carbon_cap_tco2e + amount) * 10 + 1e-9) / 10 + 0.1
        return (
            f"raise the carbon cap by {amount:,.1f} tCO2e (carbon_cap_tco2e: {cap:,.1f})",
            "tCO2e",
            {"carbon_cap_tco2e": float(cap)},
        )
    if row.family == "availability":
        pool = pools.set_index("pool_id").loc[row.key[0]]
        more = math.ceil(amount - 1e-6)
        caps = dict(problem.availability_caps)
        current = caps.get(pool["offering_id"], int(pool["availability_cap"]))
        caps[pool["offering_id"]] = int(current + more)
        accels = more * int(pool["accels_per_unit"])
        return (
            f"allow {more} more {pool['instance_type']} instances ({accels} "
            f"{pool['accelerator_id']}) of {pool['offering_id']} {pool['mode']} in period "
            f"{periods[int(row.key[1])]}",
            "instances",
            {"availability_caps": caps},
        )
    if row.family == "quota":
        qi = int(row.key[0])
        q = problem.quotas[qi]
        more = math.ceil(amount - 1e-6)
        quotas = [x.model_copy() for x in problem.quotas]
        quotas[qi] = q.model_copy(update={"max_accelerators": q.max_accelerators + more})
        where = q.provider + (f"/{q.region}" if q.region else "")
        return (
            f"allow {more} more {q.accelerator or 'accelerators'} in the {where} quota "
            f"(quotas[{qi}].max_accelerators: {q.max_accelerators + more})",
            "accelerators",
            {"quotas": quotas},
        )
    if row.family == "power_cap":
        site, t = row.key
        return (
            f"{amount:,.1f} more kW at site {site} in period {periods[int(t)]}",
            "kW",
            {},
        )
    # demand, demand_bucket, redundancy, n_plus_1
    workload = row.key[0]
    share = 100.0 * amount / row.rhs if row.rhs else 0.0
    return (
        f"serve {share:.1f}% less of {workload}'s demand ({row.name})",
        "demand units",
        {},
    )


def _relaxations(group: str, compiled: Compiled, slacks: list[Slack]) -> list[Relaxation]:
    """The relaxations of one group's slacks, in words and problem edits."""
    out: list[Relaxation] = []
    for slack in slacks:
        sentence, unit, edit = _sentence(compiled, slack, slack.amount)
        out.append(Relaxation(group, slack.name, slack.amount, unit, sentence, edit))
    return out


def _deadline_relaxations(problem: Problem, catalog: Catalog) -> list[Relaxation]:
    """Each training deadline lengthened to the shortest that makes the problem feasible
    alone (:func:`solver.core.elastic.shortest_deadline_days`), where one is found."""
    out: list[Relaxation] = []
    for i, w in enumerate(problem.workloads):
        if not isinstance(w, TrainingWorkload) or not w.deadline_days:
            continue
        high = shortest_deadline_days(problem, catalog, i)
        if high is None:
            continue
        workloads = list(problem.workloads)
        workloads[i] = w.model_copy(update={"deadline_days": float(high)})
        out.append(
            Relaxation(
                "deadline",
                f"workloads[{i}].deadline_days",
                high - w.deadline_days,
                "days",
                f"give {w.name} {high:g} days instead of {w.deadline_days:g} "
                f"(workloads[{i}].deadline_days)",
                {"workloads": workloads},
            )
        )
    return out


def _margin_relaxation(problem: Problem, catalog: Catalog) -> list[Relaxation]:
    """Training sized at the published MFU instead of below it (training_margin: point),
    when some training workload is sized below its point figure and that alone is enough."""
    below = [
        w
        for w in problem.workloads
        if isinstance(w, TrainingWorkload)
        and w.mfu is None
        and problem.training_margin_of(w) != "point"
    ]
    if not below:
        return []
    workloads = [
        w.model_copy(update={"training_margin": None}) if isinstance(w, TrainingWorkload) else w
        for w in problem.workloads
    ]
    edit = {"training_margin": "point", "workloads": workloads}
    if not is_feasible(problem.model_copy(update=edit), catalog):
        return []
    names = ", ".join(w.name for w in below)
    return [
        Relaxation(
            "training margin",
            "training_margin",
            0.0,
            "",
            f"size {names} at the published MFU instead of the low end of its band "
            "(training_margin: point; the schedule then has no margin for a slower run)",
            edit,
        )
    ]


def explain_infeasibility(
    problem: Problem, catalog: Catalog, compiled: Compiled | None = None
) -> Explanation:
    """Alternative relaxations, each enough on its own, of an infeasible problem.

    Parameters
    ----------
    problem, catalog
        The problem and catalog.
    compiled
        The compiled problem, or None when compiling failed because a workload can run
        nowhere (then only deadlines can be relaxed here; the compile error says why).
    """
    alternatives: list[list[Relaxation]] = []
    if compiled is not None:
        for group, slacks in elastic_slacks(compiled, GROUPS).items():
            alternatives.append(_relaxations(group, compiled, slacks))
    for relaxation in _deadline_relaxations(problem, catalog) + _margin_relaxation(
        problem, catalog
    ):
        alternatives.append([relaxation])
    if not alternatives and compiled is not None:
        every = tuple(f for families in GROUPS.values() for f in families)
        together = elastic_slacks(compiled, {"together": every}).get("together")
        if together:
            alternatives.append(_relaxations("together", compiled, together))
    return Explanation(alternatives)


def apply(problem: Problem, relaxations: list[Relaxation]) -> Problem:
    """The problem with the relaxations' edits applied."""
    update: dict = {}
    for r in relaxations:
        update.update(r.edit)
    return problem.model_copy(update=update)
