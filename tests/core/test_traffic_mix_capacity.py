"""A traffic-mix unit's total output tokens/s counts only the buckets it can serve (issue
47): the capacity the plan gives a line (N+1, the line's capacity) and the verifier's
recomputation of it."""

from __future__ import annotations

import pytest

from conftest import H1, L4, problem, serve
from solver.core.compile import compile_problem
from solver.solve import solve_problem

ALL_DAY = [{"name": "all-day", "hours_per_day": 24, "demand_factor": 1}]
MIX = [
    {"prompt_tokens": 100, "output_tokens": 100, "share": 0.5},
    {"prompt_tokens": 1000, "output_tokens": 1000, "share": 0.5},
]
# measured requests/s per unit: the H100 serves both buckets (10 and 4), the L4 only the
# short one (4; 0 for the long)
MEASURED = {"h100-sxm": [10.0, 4.0], "l4": [4.0, 0.0]}


def test_a_unit_counts_only_the_tokens_of_the_buckets_it_serves(tiny_catalog):
    # L4: it serves only the short bucket, 4 req/s x 100 tokens = 400 tokens/s. The old
    # form divided the whole mix's tokens per request (0.5 x 100 + 0.5 x 1000 = 550) by the
    # short bucket's time alone (0.5 / 4 = 0.125 s): 4,400 tokens/s, 11x what it serves.
    # H100: both buckets, 550 / (0.5 / 10 + 0.5 / 4) = 550 / 0.175 = 3,142.857 tokens/s.
    # Measured throughput is planned on whole (tests/test_solve_stages.py: 10 req/s x 100
    # tokens = 1,000 tokens/s), so these are the figures exactly.
    w = serve(20, traffic_mix=MIX, measured_throughput_rps=MEASURED)
    compiled = compile_problem(problem([w], load_blocks=ALL_DAY), tiny_catalog([H1, L4]))
    by_pool = dict(
        zip(compiled.options["pool_id"], compiled.options["tokens_per_s_per_unit"], strict=True)
    )
    assert by_pool == {
        "acme/us-east/h1#on_demand": pytest.approx(550 / 0.175),
        "acme/us-east/l4#on_demand": pytest.approx(400.0),
    }


def test_the_verified_plan_states_the_line_capacity_it_serves(tiny_catalog):
    # 20 req/s, half short and half long, N+1. The long 10 req/s only H100s serve: 2.5
    # H100 units of time. The plan is verified (solve_problem raises otherwise), so the
    # verifier's recomputed unit capacity agrees; each line's stated capacity is its units
    # x the unit's capacity of the buckets it serves: an L4 line 400 tokens/s a unit.
    w = serve(20, traffic_mix=MIX, measured_throughput_rps=MEASURED, redundancy="n_plus_1")
    plan = solve_problem(problem([w], load_blocks=ALL_DAY), tiny_catalog([H1, L4]))
    per_unit = {"h100-sxm": 550 / 0.175, "l4": 400.0}
    lines = [li for li in plan.line_items if li.workload == "chat" and li.units > 0]
    assert lines
    for li in lines:
        assert li.capacity_tokens_per_s == pytest.approx(per_unit[li.accelerator] * li.units)
