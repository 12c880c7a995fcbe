"""Verifier mutation test: corrupt verified plans one way at a time; each is refused by the
one check the corruption breaks.

Four verified plans (physics-sized inference under US residency; a ZeRO-3 training job on
single-GPU instances; a 3-year service on bought servers; the same service on 1-year
reservations) are corrupted line item by line item, one mutation at a time, keeping the
plan's own sums consistent (totals and the monthly cash flow made again from the corrupted
line items) so that only a recomputation from the catalog, the problem and the physics can
tell. Each mutation names the one check it breaks and the checks that must fail with it
because they recompute the same corrupted figure at another level (stated with each
mutation); the set of failed checks must be exactly those.
"""

from __future__ import annotations

from datetime import date

import pytest

from conftest import offering
from solver.inputs.problem import parse_problem
from solver.plan.cashflow import cash_flow
from solver.plan.costs import with_cost_lines
from solver.plan.guard import resummed_guard
from solver.plan.unit_costs import with_unit_costs
from solver.solve import solve_problem
from solver.trust.verify import verify_plan

H1 = offering("h1", "h100-sxm", 1, 4.0, spot=2.0, r1=3.0)
L4 = offering("l4", "l4", 1, 1.0, nvlink=False)
EU = offering("h1eu", "h100-sxm", 1, 5.0, region="eu-north")
H8 = offering("h8", "h100-sxm", 8, 32.0)

INFERENCE = {
    "name": "inference",
    "horizon_months": 1,
    "modes": ["on_demand", "spot"],
    "residency": ["us"],
    "workloads": [
        {
            # 8B bf16: decode reads 16 GB per step; an L4 (300 GB/s x 0.8) needs 67 ms > 20 ms,
            # an H100 (3,350 GB/s x 0.8) 6 ms: only H100s can serve it.
            "kind": "inference",
            "name": "chat",
            "model": "llama-3-8b",
            "demand": {"tokens_per_s": 20000},
            "prompt_tokens": 500,
            "output_tokens": 200,
            "ttft_slo": "1 s",
            "tpot_slo": "20 ms",
        }
    ],
}
TRAINING = {
    "name": "training",
    "horizon_months": 1,
    "modes": ["on_demand"],
    "residency": ["us"],
    "workloads": [
        # 7B AdamW: 126 GB of states + 18.25 GB activations per device -> 3 single-GPU units
        {"kind": "training", "name": "pretrain", "model": "dense-7b", "tokens": 1e10}
    ],
}
FLEET = {
    "name": "fleet",
    "horizon_months": 36,
    "periods": [
        {"name": "y1", "months": 12},
        {"name": "y2", "months": 12},
        {"name": "y3", "months": 12},
    ],
    "modes": ["on_demand", "reserved_1y", "owned"],
    "workloads": [
        {
            "kind": "inference",
            "name": "chat",
            "model": "llama-3-8b",
            "demand": {"requests_per_s": 95},
            "prompt_tokens": 100,
            "output_tokens": 100,
            "ttft_slo": "1 s",
            "tpot_slo": "50 ms",
            "traffic_mix": [{"prompt_tokens": 100, "output_tokens": 100, "share": 1.0}],
            "measured_throughput_rps": {"h100-sxm": [10.0]},
        }
    ],
}
#: the same service without owned servers: 95 req/s at 10 per H100 and 80% utilisation is
#: 12 units, reserved for a year in each period at $3/h against $4/h on demand
RESERVED = dict(FLEET, name="reserved", modes=["on_demand", "reserved_1y"])
CASES = [INFERENCE, TRAINING, FLEET, RESERVED]

#: a line's units are counted by one check, by what the line is (a serving line whose
#: bucket_requests_per_s say what it serves is held by its unit time instead of demand)
ONE_UNIT_FEWER = {
    "rent": "demand met",
    "use": "demand met",
    "use with buckets": "unit time split across buckets",
    "purchase": "owned units cover use",
    "reservation": "reserved units cover use",
    "training": "training fits memory (ZeRO-3)",
}


def consistent(plan, items, problem, catalog):
    """The plan with these line items, its totals re-summed and its cost lines (the
    categories beside compute, by default), cash flow and unit costs made again from them
    (as procure solve makes them, from the plan's own start date)."""
    new = plan.model_copy(
        update={
            "line_items": items,
            "total_cost_usd": sum(i.cost_usd for i in items),
            "total_co2e_t": sum(i.co2e_t for i in items),
        }
    )
    new = resummed_guard(new)  # the guarded figures kept consistent too
    start = date.fromisoformat(plan.start_date)
    new = with_cost_lines(new, problem, catalog, start)
    new = new.model_copy(update={"cash_flow": cash_flow(new, problem, catalog, start)})
    return with_unit_costs(new, problem)


def scaled(item, units):
    f = units / item.units if item.units else 0.0
    return item.model_copy(
        update={
            "units": units,
            "accelerators": item.accelerators * f,
            "cost_usd": item.cost_usd * f,
            "co2e_t": item.co2e_t * f,
            "capacity_tokens_per_s": item.capacity_tokens_per_s * f,
            "bucket_requests_per_s": item.bucket_requests_per_s,
        }
    )


def mutations(plan, problem, catalog):
    """(kind, the check it breaks, the checks that fail with it, corrupted plan) for every
    applicable mutation."""
    items = plan.line_items
    for i, item in enumerate(items):

        def put(new, i=i):
            return consistent(plan, [*items[:i], new, *items[i + 1 :]], problem, catalog)

        if item.units >= 1 and item.item != "existing":
            what = "use with buckets" if item.bucket_requests_per_s else item.item
            # a training line still states the job hours and slack of the cluster it was
            # sized for, which the smaller cluster cannot match
            also = (
                {"training hours recomputed", "training slack recomputed"}
                if item.item == "training"
                else set()
            )
            yield ("one unit fewer", ONE_UNIT_FEWER[what], also, put(scaled(item, item.units - 1)))
        # the plan's total carries the changed line (re-summed), so it differs from the
        # verifier's recomputed total by the same dollars
        yield (
            "price changed",
            "line cost recomputed",
            {"total cost recomputed"},
            put(item.model_copy(update={"cost_usd": item.cost_usd * 1.1 + 1.0})),
        )
        if problem.residency and item.mode == "on_demand" and item.workload:
            eu = item.model_copy(
                update={
                    "offering": "acme/eu-north/h1eu",
                    "region": "eu-north",
                    "instance_type": "h1eu",
                    "accelerator": "h100-sxm",
                    "cost_usd": item.cost_usd * 5.0 / 4.0,
                }
            )
            # the line keeps its US region's CO2e, and eu-north's grid differs: the total
            # CO2e recomputed differs, and a serving line's own CO2e check sees it too
            also = {"total CO2e recomputed"}
            if item.item != "training":
                also.add("line CO2e recomputed")
            yield ("region outside residency", "residency", also, put(eu))
        if item.item == "training":
            # one H100: 126 GB of optimizer states alone exceed its 80 GB; the line keeps
            # the job hours and slack of the 3-unit cluster
            yield (
                "training cluster too small",
                "training fits memory (ZeRO-3)",
                {"training hours recomputed", "training slack recomputed"},
                put(scaled(item, 1.0)),
            )
        if (
            item.item == "rent"
            and item.accelerator == "h100-sxm"
            and not item.bucket_requests_per_s
        ):
            l4 = item.model_copy(
                update={
                    "offering": "acme/us-east/l4",
                    "instance_type": "l4",
                    "accelerator": "l4",
                    "cost_usd": item.cost_usd / 4.0,
                }
            )
            # an L4 cannot decode fast enough (the SLO) and so serves less than the H100
            # it replaces (demand); the line keeps the H100's CO2e
            yield (
                "SLO missed",
                "memory and SLOs met (physics recomputed)",
                {"demand met", "line CO2e recomputed", "total CO2e recomputed"},
                put(l4),
            )


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_every_corrupted_plan_is_refused_by_the_check_it_breaks(tiny_catalog, case):
    cat = tiny_catalog([H1, L4, EU, H8] if case is not TRAINING else [H1, EU])
    problem = parse_problem(case)
    plan = solve_problem(problem, cat)
    held = {c.name for c in plan.checks if c.ok}
    # the harness alone corrupts nothing: the plan with its sums made again passes
    same = consistent(plan, list(plan.line_items), problem, cat)
    assert [c.name for c in verify_plan(same, problem, cat) if not c.ok] == []
    kinds = set()
    for kind, check, also, bad in mutations(plan, problem, cat):
        # the check ran on the uncorrupted plan and held there
        assert check in held and check not in also, (kind, check)
        failed = {c.name for c in verify_plan(bad, problem, cat) if not c.ok}
        # exactly the check the mutation breaks, and those that recompute the same
        # corrupted figure at another level: no other check may fail (a mutation caught
        # only by some unrelated check would mean the named one missed it), and "any of
        # several" is not enough
        assert failed == {check} | also, (kind, check, failed)
        kinds.add(kind)
    # every plan gets the unit and price mutations
    assert {"one unit fewer", "price changed"} <= kinds


def test_all_mutation_kinds_and_unit_checks_are_exercised(tiny_catalog):
    kinds, unit_checks = set(), set()
    for case in CASES:
        cat = tiny_catalog([H1, L4, EU, H8] if case is not TRAINING else [H1, EU])
        problem = parse_problem(case)
        for kind, check, _, _ in mutations(solve_problem(problem, cat), problem, cat):
            kinds.add(kind)
            if kind == "one unit fewer":
                unit_checks.add(check)
    assert kinds == {
        "one unit fewer",
        "price changed",
        "region outside residency",
        "training cluster too small",
        "SLO missed",
    }
    # every check one unit fewer can name is named by some line of the four plans
    assert unit_checks == set(ONE_UNIT_FEWER.values())
