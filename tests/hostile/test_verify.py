"""A saved plan corrupted one way at a time is refused by the check the corruption breaks.

The plan: 25 req/s of one 100/100-token bucket, an H100 instance serving 10 (measured), so 3
rented on demand at $4/h for one 730-hour month: 3 x 730 x 4 = $8,760. Each corruption edits
its one line item and keeps every sum of the file consistent (totals, cash flow), so only a
recomputation from the catalog, the problem and the physics can tell. Loading the saved
file (:func:`solver.api.load_plan`) must refuse it naming, first, the check the corruption
breaks, with exactly the failed checks stated (the named one and those recomputing the same
corrupted figure at another level).
"""

from __future__ import annotations

from datetime import date

import pytest

from conftest import offering, serve, write_catalog
from solver.api import load_plan, solve
from solver.errors import ProcureError
from solver.plan.cashflow import cash_flow
from solver.plan.guard import resummed_guard
from solver.plan.unit_costs import with_unit_costs
from solver.trust.verify import verify_plan

PROBLEM = {
    "name": "corrupted",
    # compute only: each corruption names the compute check it breaks (with cost lines,
    # the all-in total's check would fail beside it)
    "costs": "none",
    "horizon_months": 1,
    "modes": ["on_demand"],
    "residency": ["us"],
    "workloads": [serve(25)],
}
OFFERINGS = [
    offering("h1", "h100-sxm", 1, 4.0),
    offering("h1eu", "h100-sxm", 1, 5.0, region="eu-north"),  # outside the residency
]


def _scaled(item, units: float) -> dict:
    f = units / item.units
    return {
        "units": units,
        "accelerators": item.accelerators * f,
        "cost_usd": item.cost_usd * f,
        "co2e_t": item.co2e_t * f,
        "capacity_tokens_per_s": item.capacity_tokens_per_s * f,
    }


#: (corruption, the edit of the line, failed checks, the refusal's first check and detail)
CASES = [
    (
        # $8,760 stated as $8,759: the line's cost and the plan's total, recomputed
        "a cost changed by $1",
        lambda item: {"cost_usd": item.cost_usd - 1.0},
        {"line cost recomputed", "total cost recomputed"},
        "line cost recomputed: 1 of 1 failed: acme/us-east/h1: 8759.00 vs 8760.00",
    ),
    (
        # 25 req/s over 2 units at 10 each need 2.5 units of time
        "one unit fewer",
        lambda item: _scaled(item, 2.0),
        {"unit time split across buckets"},
        "unit time split across buckets: 1 of 1 failed: acme/us-east/h1: 2.5000 > 2.0",
    ),
    (
        # 2.5 units serve 25 req/s exactly and cost 2.5 x 730 x 4 = $7,300: only the count
        # being whole is wrong
        "half a unit",
        lambda item: _scaled(item, 2.5),
        {"unit counts are whole numbers"},
        "unit counts are whole numbers: 1 of 1 failed: acme/us-east/h1 2.5",
    ),
    (
        # the same H100s in eu-north at $5/h (3 x 730 x 5 = $10,950, consistent); the line
        # keeps its us-east CO2e, and eu-north's grid differs
        "a region outside the residency",
        lambda item: {
            "offering": "acme/eu-north/h1eu",
            "region": "eu-north",
            "instance_type": "h1eu",
            "cost_usd": item.cost_usd * 5.0 / 4.0,
        },
        {"residency", "line CO2e recomputed", "total CO2e recomputed"},
        "residency: 1 of 1 failed: chat on acme/eu-north/h1eu (eu)",
    ),
]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    directory = tmp_path_factory.mktemp("verify")
    cat = write_catalog(directory / "cat", OFFERINGS)
    plan = solve(PROBLEM, cat)
    assert [(i.item, i.offering, i.units) for i in plan.line_items] == [
        ("rent", "acme/us-east/h1", 3.0)
    ]
    assert plan.total_cost_usd == pytest.approx(3 * 730 * 4.0)
    path = directory / "plan.json"
    path.write_text(plan.model_dump_json())
    _, problem, catalog = load_plan(path, catalog=cat)  # the saved plan, untouched, loads
    return plan, problem, catalog, cat, directory


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_a_corrupted_saved_plan_is_refused_naming_the_check(saved, case):
    _, edit, failed, first = case
    plan, problem, catalog, cat, directory = saved
    item = plan.line_items[0]
    line = item.model_copy(update=edit(item))
    bad = plan.model_copy(
        update={"line_items": [line], "total_cost_usd": line.cost_usd, "total_co2e_t": line.co2e_t}
    )
    bad = resummed_guard(bad)  # the guarded figures kept consistent with the edit
    start = date.fromisoformat(plan.start_date)
    bad = bad.model_copy(update={"cash_flow": cash_flow(bad, problem, catalog, start)})
    bad = with_unit_costs(bad, problem)  # and the unit costs (their own check)
    assert {c.name for c in verify_plan(bad, problem, catalog) if not c.ok} == failed
    path = directory / "corrupted.json"
    path.write_text(bad.model_dump_json())
    with pytest.raises(ProcureError) as refused:
        load_plan(path, catalog=cat)
    assert f"({len(failed)} failed checks; first: {first})" in str(refused.value)
