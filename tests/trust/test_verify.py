"""The independent verifier catches plans that break a constraint."""

from __future__ import annotations

import pytest

from conftest import offering
from solver.inputs.problem import parse_problem
from solver.solve import solve_problem
from solver.trust.verify import verify_plan

H1 = offering("h1", "h100-sxm", 1, 4.0, spot=2.0)
L4 = offering("l4", "l4", 1, 1.0, nvlink=False)

PROBLEM = {
    "name": "v",
    "horizon_months": 1,
    "modes": ["on_demand", "spot"],
    "budget_usd": 100_000,
    "carbon_cap_tco2e": 50,
    "workloads": [
        {
            "kind": "inference",
            "name": "chat",
            "model": "llama-3-8b",
            "demand": {"tokens_per_s": 3000},
            "prompt_tokens": 500,
            "output_tokens": 200,
            "ttft_slo": "1 s",
            "tpot_slo": "50 ms",
        }
    ],
}


@pytest.fixture
def solved(tiny_catalog):
    cat = tiny_catalog([H1, L4])
    problem = parse_problem(PROBLEM)
    plan = solve_problem(problem, cat)
    # every check the tests below break ran on the untouched plan and held, so each
    # failure they see is the corruption's
    ran = {c.name for c in plan.checks if c.ok}
    assert {
        "demand met",
        "line cost recomputed",
        "total cost = sum of line items",
        "spot only for interruptible work",
        "budget",
        "carbon cap",
        "memory and SLOs met (physics recomputed)",
    } <= ran
    return plan, problem, cat


def failed(plan, problem, cat) -> set[str]:
    return {c.name for c in verify_plan(plan, problem, cat) if not c.ok}


def mutate(plan, index: int, **changes):
    items = list(plan.line_items)
    items[index] = items[index].model_copy(update=changes)
    return plan.model_copy(update={"line_items": items})


def test_untouched_plan_passes(solved):
    assert failed(*solved) == set()


def test_fewer_units_break_demand(solved):
    plan, problem, cat = solved
    i = max(range(len(plan.line_items)), key=lambda k: plan.line_items[k].units)
    item = plan.line_items[i]
    bad = mutate(plan, i, units=0.0, cost_usd=0.0, co2e_t=0.0)
    bad = bad.model_copy(
        update={
            "total_cost_usd": plan.total_cost_usd - item.cost_usd,
            "total_co2e_t": plan.total_co2e_t - item.co2e_t,
        }
    )
    assert "demand met" in failed(bad, problem, cat)


def test_wrong_cost_is_caught(solved):
    plan, problem, cat = solved
    bad = mutate(plan, 0, cost_usd=plan.line_items[0].cost_usd * 0.5)
    assert {"line cost recomputed", "total cost = sum of line items"} <= failed(bad, problem, cat)


def test_spot_for_non_interruptible_is_caught(solved):
    plan, problem, cat = solved
    i = next(k for k, it in enumerate(plan.line_items) if it.offering.endswith("/h1"))
    bad = mutate(plan, i, mode="spot")
    assert "spot only for interruptible work" in failed(bad, problem, cat)


def test_tighter_limits_are_caught(solved):
    plan, problem, cat = solved
    tight = problem.model_copy(
        update={
            "budget_usd": plan.total_cost_usd * 0.9,
            "carbon_cap_tco2e": plan.total_co2e_t * 0.9,
        }
    )
    assert {"budget", "carbon cap"} <= failed(plan, tight, cat)


def test_slo_recomputed_from_physics(solved):
    plan, problem, cat = solved
    # the same plan under a 5 ms time-per-token SLO: no accelerator can decode that fast
    w = problem.workloads[0].model_copy(update={"tpot_slo": "5 ms"})
    tight = problem.model_copy(update={"workloads": [w]})
    assert "memory and SLOs met (physics recomputed)" in failed(plan, tight, cat)


def test_availability_recomputed(tiny_catalog):
    # 30,000 tokens/s needs several units; the same plan against caps of 1 fails.
    w = dict(PROBLEM["workloads"][0], demand={"tokens_per_s": 30000})
    problem = parse_problem(dict(PROBLEM, workloads=[w]))
    plan = solve_problem(problem, tiny_catalog([H1, L4]))
    assert max(it.units for it in plan.line_items) >= 2
    capped = tiny_catalog(
        [dict(H1, availability_cap_instances=1), dict(L4, availability_cap_instances=1)]
    )
    assert "availability" in failed(plan, problem, capped)
