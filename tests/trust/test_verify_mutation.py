"""Verifier mutation test: corrupt verified plans one way at a time; every one is rejected.

Three verified plans (physics-sized inference under US residency; a ZeRO-3 training job
on single-GPU instances; a 3-year service that buys a server and reserves instances) are
corrupted line item by line item, one mutation at a time, keeping the plan's own sums
consistent so that only a recomputation from the catalog, the problem and the physics can
tell. Each corrupted plan must fail at least one check, and the check it fails must be the
constraint the mutation breaks.
"""

from __future__ import annotations

import pytest

from conftest import offering
from solver.inputs.problem import parse_problem
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


def consistent(plan, items):
    """The plan with these line items and its totals re-summed from them."""
    return plan.model_copy(
        update={
            "line_items": items,
            "total_cost_usd": sum(i.cost_usd for i in items),
            "total_co2e_t": sum(i.co2e_t for i in items),
        }
    )


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


def mutations(plan, problem):
    """(kind, expected failing checks, corrupted plan) for every applicable mutation."""
    items = plan.line_items
    for i, item in enumerate(items):

        def put(new, i=i):
            return consistent(plan, [*items[:i], new, *items[i + 1 :]])

        if item.units >= 1 and item.item != "existing":
            yield (
                "one unit fewer",
                {
                    "demand met",
                    "owned units cover use",
                    "reserved units cover use",
                    "training fits memory (ZeRO-3)",
                    "training hours recomputed",
                    "unit time split across buckets",
                    "redundancy",
                    "N+1 (capacity without the largest unit meets peak)",
                },
                put(scaled(item, item.units - 1)),
            )
        yield (
            "price changed",
            {"line cost recomputed"},
            put(item.model_copy(update={"cost_usd": item.cost_usd * 1.1 + 1.0})),
        )
        if problem.residency and item.mode == "on_demand" and item.workload:
            eu = item.model_copy(
                update={
                    "offering": "acme/eu-north/h1eu",
                    "region": "eu-north",
                    "instance_type": "h1eu",
                    "accelerator": "h100-sxm",
                    "cost_usd": item.cost_usd * 5.0 / 4.0
                    if item.mode == "on_demand"
                    else item.cost_usd,
                }
            )
            yield ("region outside residency", {"residency"}, put(eu))
        if item.item == "training":
            yield (
                "training cluster too small",
                {"training fits memory (ZeRO-3)"},
                put(item.model_copy(update={"units": 2.0, "accelerators": 2.0})),
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
            yield ("SLO missed", {"memory and SLOs met (physics recomputed)"}, put(l4))


@pytest.mark.parametrize("case", [INFERENCE, TRAINING, FLEET], ids=lambda c: c["name"])
def test_every_corrupted_plan_is_rejected_naming_the_constraint(tiny_catalog, case):
    cat = tiny_catalog([H1, L4, EU, H8] if case is not TRAINING else [H1, EU])
    problem = parse_problem(case)
    plan = solve_problem(problem, cat)
    held = {c.name for c in plan.checks if c.ok}
    seen = 0
    kinds = set()
    for kind, expected, bad in mutations(plan, problem):
        # the check the mutation should trip ran on the uncorrupted plan and held there
        assert expected & held, (kind, expected)
        failed = {c.name for c in verify_plan(bad, problem, cat) if not c.ok}
        seen += 1
        kinds.add(kind)
        assert failed & expected, (kind, failed)
    assert seen >= 3  # every mutation above was rejected naming its constraint
    # every plan gets the unit and price mutations; each kind below appears somewhere
    assert {"one unit fewer", "price changed"} <= kinds


def test_all_mutation_kinds_are_exercised(tiny_catalog):
    kinds = set()
    for case in (INFERENCE, TRAINING, FLEET):
        cat = tiny_catalog([H1, L4, EU, H8] if case is not TRAINING else [H1, EU])
        problem = parse_problem(case)
        kinds |= {kind for kind, _, _ in mutations(solve_problem(problem, cat), problem)}
    assert kinds == {
        "one unit fewer",
        "price changed",
        "region outside residency",
        "training cluster too small",
        "SLO missed",
    }
