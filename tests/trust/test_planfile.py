"""Plan files (solver/trust/planfile.py): the Python API loads a saved plan only after
re-verifying it against the problem and catalog it was solved for."""

from __future__ import annotations

import json
from datetime import date

import pytest

from conftest import CHAT_WORKLOAD, offering, serve, write_catalog
from solver.api import load_plan, solve
from solver.errors import ProcureError
from solver.inputs.catalog import Catalog
from solver.inputs.problem import Problem
from solver.inputs.yamlio import load_yaml
from solver.plan import Plan
from solver.plan.cashflow import cash_flow
from solver.plan.costs import with_cost_lines
from solver.plan.guard import resummed_guard
from solver.plan.unit_costs import with_unit_costs

PROBLEM = "name: api\nhorizon_months: 1\nmodes: [on_demand]\nworkloads:\n" + CHAT_WORKLOAD


def test_a_saved_plan_loads_reverified_and_an_edited_one_is_refused(tmp_path):
    cat = write_catalog(tmp_path / "cat", [offering("h1", "h100-sxm", 1, 4.0)])
    plan = solve(load_yaml(PROBLEM, file="x"), cat)
    path = tmp_path / "plan.json"
    path.write_text(plan.model_dump_json())
    loaded, problem, catalog = load_plan(path, catalog=cat)
    assert loaded.line_items == plan.line_items and problem.name == "api"
    assert len(catalog.offerings) == 1

    edited = json.loads(path.read_text())
    edited["line_items"][0]["units"] *= 2  # more than was solved for: verify refuses it
    path.write_text(json.dumps(edited))
    with pytest.raises(ProcureError, match="does not verify|another catalog"):
        load_plan(path, catalog=cat)
    with pytest.raises(ProcureError, match="plan file not found"):
        load_plan(tmp_path / "absent.json")


def _one_unit_fewer(plan: Plan, problem: Problem, catalog: Catalog) -> Plan:
    """``plan`` with one unit fewer on its one serving line, everything the line's units
    scale (accelerators, cost, CO2e, capacity, cost by period) scaled with them, and the
    plan's own sums (totals, cash flow, unit costs) made again: only a recomputation can tell."""
    (i,) = [k for k, item in enumerate(plan.line_items) if item.item == "rent"]
    item = plan.line_items[i]
    f = (item.units - 1) / item.units
    fewer = item.model_copy(
        update={
            "units": item.units - 1,
            "accelerators": item.accelerators * f,
            "cost_usd": item.cost_usd * f,
            "co2e_t": item.co2e_t * f,
            "capacity_tokens_per_s": item.capacity_tokens_per_s * f,
            "cost_by_period_usd": {k: v * f for k, v in item.cost_by_period_usd.items()},
        }
    )
    items = [*plan.line_items[:i], fewer, *plan.line_items[i + 1 :]]
    new = plan.model_copy(
        update={
            "line_items": items,
            "total_cost_usd": sum(x.cost_usd for x in items),
            "total_co2e_t": sum(x.co2e_t for x in items),
        }
    )
    new = resummed_guard(new)  # the guarded figures kept consistent too
    start = date.fromisoformat(plan.start_date)
    new = with_cost_lines(new, problem, catalog, start)  # the cost lines made again too
    new = new.model_copy(update={"cash_flow": cash_flow(new, problem, catalog, start)})
    return with_unit_costs(new, problem)


def test_a_saved_plan_one_unit_short_is_refused_by_the_check_that_counts_it(tmp_path):
    # 25 req/s of one 100/100-token bucket; an H100 instance serves 10 (measured), so the
    # plan rents 3 (30 >= 25, at max_utilisation 1) and its line states the 25 req/s it
    # serves. Saved, then corrupted to 2 units with every sum of the file kept consistent:
    # 25 req/s at 10 per unit need 25 / 10 = 2.5 units of time, and the line has 2. The
    # check that holds a serving line's units against what it serves refuses it, and it
    # is the only check failing
    cat = write_catalog(tmp_path / "cat", [offering("h1", "h100-sxm", 1, 4.0)])
    plan = solve({"name": "short", "horizon_months": 1, "modes": ["on_demand"],
                  "workloads": [serve(25)]}, cat)  # fmt: skip
    assert [(i.item, i.units) for i in plan.line_items] == [("rent", 3.0)]
    path = tmp_path / "plan.json"
    path.write_text(plan.model_dump_json())
    _, problem, catalog = load_plan(path, catalog=cat)  # the saved plan verifies
    path.write_text(_one_unit_fewer(plan, problem, catalog).model_dump_json())
    with pytest.raises(ProcureError) as refused:
        load_plan(path, catalog=cat)
    assert (
        "the plan does not verify against its problem and catalog (1 failed checks; first: "
        "unit time split across buckets: 1 of 1 failed: acme/us-east/h1: 2.5000 > 2.0)"
    ) in str(refused.value)
