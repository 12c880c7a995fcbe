"""The verifier's entry point: each line item checked by its kind, then what the lines
add up to, in a fixed order.
"""

from __future__ import annotations

from collections.abc import Callable

from solver.inputs.catalog import Catalog
from solver.inputs.problem import Problem
from solver.inputs.sites import with_problem_sites
from solver.plan import Check, LineItem, Plan
from solver.trust.refinement import split_form
from solver.trust.verify.blocks import check_capacity_blocks, is_block_line
from solver.trust.verify.capacity import (
    _check_demand,
    _check_failure_domains,
    _check_load_curves,
    _check_served_within_n_plus_1,
    _n_plus_1_units,
)
from solver.trust.verify.commitments import (
    SAVINGS_PLAN_ITEMS,
    _check_existing,
    _check_purchase,
    _check_reservation,
    _check_savings_plan_line,
    _check_savings_plans,
)
from solver.trust.verify.context import _Context
from solver.trust.verify.disagg import settle_disagg
from solver.trust.verify.domains import _check_operability, _check_zone_loss
from solver.trust.verify.fleet import (
    _check_fleet,
    _check_power,
    _check_quotas,
    _check_staff_scale,
    _check_steady_fleets,
    _check_switching,
)
from solver.trust.verify.guard import _check_guard
from solver.trust.verify.items import _check_line
from solver.trust.verify.loss_costs import _check_loss_costs
from solver.trust.verify.market import _check_market
from solver.trust.verify.money import _check_cost_lines, _check_money
from solver.trust.verify.moves import _check_migration
from solver.trust.verify.run import _Run
from solver.trust.verify.serving import _check_serving
from solver.trust.verify.training_runs import _check_training
from solver.trust.verify.unit_costs import _check_unit_costs
from solver.units import Item


def verify_plan(plan: Plan, problem: Problem, catalog: Catalog) -> list[Check]:
    """Recompute every constraint and cost of ``plan``; return the checks.

    The plan is valid when every check is ok. Each line item is checked by its kind
    (serving, training, purchase, reservation, fleet held at the start), then what the
    lines add up to: demand, fleet, quotas, power, money. The sites the problem describes
    itself are read as catalog sites (:func:`solver.inputs.sites.with_problem_sites`).
    A plan solved over split periods is checked over them, against the problem with its
    periods split (:func:`solver.trust.refinement.split_form`).
    """
    split = split_form(plan, problem, _Context(problem, catalog).hours_at)
    if split is not None:
        return _verified(split.plan, split.problem, catalog).c.result() + [split.check]
    return _verified(plan, problem, catalog).c.result()


def _verified(plan: Plan, problem: Problem, catalog: Catalog, *, by_line: bool = False) -> _Run:
    """One verification run; ``by_line`` also keeps each line item's recomputed cost by
    period (``run.line_periods``, by line index)."""
    run = _Run(plan, problem, with_problem_sites(problem, catalog))
    by_kind: dict[str, Callable[..., None]] = {
        "rent": _check_serving,
        "use": _check_serving,
        "training": _check_training,
        "purchase": _check_purchase,
        "reservation": _check_reservation,
        "existing": _check_existing,
    }
    block_lines: list[tuple[int, LineItem]] = []
    for index, item in enumerate(plan.line_items):
        if item.item == Item.STAFF_SCALE:  # checked with the fleet (_check_staff_scale)
            continue
        if is_block_line(item):  # checked together below (solver/trust/verify/blocks.py)
            block_lines.append((index, item))
            continue
        before = dict(run.period_cost) if by_line else {}
        if item.item in SAVINGS_PLAN_ITEMS:
            _check_savings_plan_line(run, item)
            if by_line:
                run.line_periods[index] = {
                    name: usd - before.get(name, 0.0) for name, usd in run.period_cost.items()
                }
            continue
        facts = _check_line(run, item)
        if facts is not None and item.item in by_kind:
            by_kind[item.item](run, item, *facts)
            if by_line:
                run.line_periods[index] = {
                    name: usd - before.get(name, 0.0) for name, usd in run.period_cost.items()
                }
    block_periods = check_capacity_blocks(run, block_lines)
    if by_line:
        run.line_periods.update(block_periods)
    settle_disagg(run)
    run.unit_capacity = _n_plus_1_units(run)
    _check_load_curves(run)
    _check_demand(run)
    _check_served_within_n_plus_1(run)
    _check_steady_fleets(run)
    _check_switching(run)
    _check_migration(run)
    _check_loss_costs(run)
    _check_failure_domains(run)
    _check_zone_loss(run)
    _check_operability(run)
    _check_fleet(run)
    _check_quotas(run)
    _check_power(run)
    _check_savings_plans(run)
    _check_staff_scale(run)
    _check_money(run)
    _check_guard(run)
    _check_market(run)
    _check_cost_lines(run)
    _check_unit_costs(run)
    return run
