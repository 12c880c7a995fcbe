"""The inputs a compile reads, resolved once at the door: the catalog joined with the
problem's own sites, every name checked, the costs priced, the load curve and the
calendar; every stage of compile reads this one value."""

from __future__ import annotations

from dataclasses import dataclass

from solver.core.compile.checks import check_names, check_savings_plans
from solver.core.compile.periods import Calendar, build_calendar
from solver.inputs.catalog import Catalog
from solver.inputs.costs import Resolved
from solver.inputs.load import LoadBlocks, resolve_load
from solver.inputs.problem import Problem
from solver.inputs.sites import with_problem_sites


@dataclass(frozen=True)
class ResolvedInputs:
    """A problem's inputs as plain data, each resolved once.

    Attributes
    ----------
    problem
        The problem as given.
    catalog
        The catalog with the problem's own sites joined
        (:func:`solver.inputs.sites.with_problem_sites`).
    calendar
        Its periods in months and hours on its clock (:class:`Calendar`).
    load
        Its daily load curve: blocks and each online workload's factor in each
        (:func:`solver.inputs.load.resolve_load`).
    costs
        Its costs beside compute, priced (:func:`solver.inputs.costs.resolve_problem_costs`).
    """

    problem: Problem
    catalog: Catalog
    calendar: Calendar
    load: LoadBlocks
    costs: Resolved


def resolve_inputs(problem: Problem, catalog: Catalog) -> ResolvedInputs:
    """Resolve the problem's inputs against ``catalog``, refusing what the catalog does
    not know (:func:`solver.core.compile.checks.check_names`, then its savings plans).

    Raises
    ------
    ProcureError
        A name the catalog does not know, a bad load curve, site, cost or savings plan.
    """
    calendar = build_calendar(problem)
    load = resolve_load(problem)
    joined = with_problem_sites(problem, catalog)
    costs = check_names(problem, joined)
    check_savings_plans(problem, joined)
    return ResolvedInputs(
        problem=problem, catalog=joined, calendar=calendar, load=load, costs=costs
    )
