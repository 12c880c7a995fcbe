"""Pools by context length (issue 52, Build 2): a bimodal request-length distribution,
given as a traffic mix of a short and a long bucket, is served by two pools, each sized
for the lengths it serves, where that is cheaper than one homogeneous pool.

Worked by hand (one month, 730 h, on demand, capacity = peak demand):
20 requests/s, half 100/100 tokens (short), half 1,000/1,000 (long). Measured requests/s
per unit: an H100 ($4.00/h) serves 10 short or 4 long; an L4 ($1.00/h) serves 4 short and
no long (its memory and step time leave the long bucket out).

- One homogeneous H100 pool: 10 short / 10 + 10 long / 4 = 1.0 + 2.5 = 3.5 units of
  time, so 4 H100s: 4 x $4 x 730 = $11,680.
- Split at the threshold between the buckets, each pool serving its lengths only: 10 long
  / 4 = 2.5 -> 3 H100s and 10 short / 4 = 2.5 -> 3 L4s: $8,760 + $2,190 = $10,950.
- Two pools with the H100s' spare time on short requests: 3 H100s serve the 10 long (2.5
  units of time) and 5 short (0.5); 2 L4s serve the other 5 short (1.25 units of time):
  $8,760 + $1,460 = **$10,220**, the optimum (2 H100s cannot serve the long 10/s; 3 H100s
  with 1 L4 serve at most 4 + 5 = 9 short/s).
"""

from __future__ import annotations

import pytest

from conftest import H1, L4, problem, serve
from solver.solve import solve_problem

HOURS = 730.0
ALL_DAY = [{"name": "all-day", "hours_per_day": 24, "demand_factor": 1}]
BIMODAL = [
    {"prompt_tokens": 100, "output_tokens": 100, "share": 0.5},
    {"prompt_tokens": 1000, "output_tokens": 1000, "share": 0.5},
]


def _pools(plan) -> dict[str, tuple[float, dict[int, float]]]:
    return {
        li.accelerator: (li.units, li.bucket_requests_per_s)
        for li in plan.line_items
        if li.workload == "chat" and li.units > 0
    }


def test_a_bimodal_mix_is_served_by_two_pools_sized_for_their_lengths(tiny_catalog):
    measured = {"h100-sxm": [10.0, 4.0], "l4": [4.0, 0.0]}
    w = serve(20, traffic_mix=BIMODAL, measured_throughput_rps=measured)
    plan = solve_problem(problem([w], load_blocks=ALL_DAY), tiny_catalog([H1, L4]))
    assert plan.total_cost_usd == pytest.approx((3 * 4.0 + 2 * 1.0) * HOURS)  # $10,220
    # the long pool: 3 H100s, all 10 long requests/s and 5 short on their spare time; the
    # short pool: 2 L4s, the other 5 short requests/s (bucket 0 short, bucket 1 long)
    assert _pools(plan) == {
        "h100-sxm": (3.0, {0: pytest.approx(5.0), 1: pytest.approx(10.0)}),
        "l4": (2.0, {0: pytest.approx(5.0)}),
    }


def test_one_homogeneous_pool_costs_more(tiny_catalog):
    # the same mix with the L4 given no throughput for either bucket: one H100 pool,
    # 4 units ($11,680), $1,460 (14.3%) above the two pools
    measured = {"h100-sxm": [10.0, 4.0], "l4": [0.0, 0.0]}
    w = serve(20, traffic_mix=BIMODAL, measured_throughput_rps=measured)
    plan = solve_problem(problem([w], load_blocks=ALL_DAY), tiny_catalog([H1, L4]))
    assert plan.total_cost_usd == pytest.approx(4 * 4.0 * HOURS)  # $11,680
    assert _pools(plan) == {"h100-sxm": (4.0, {0: pytest.approx(10.0), 1: pytest.approx(10.0)})}


TRIMODAL = [
    {"prompt_tokens": 100, "output_tokens": 100, "share": 0.4},
    {"prompt_tokens": 500, "output_tokens": 500, "share": 0.3},
    {"prompt_tokens": 2000, "output_tokens": 1000, "share": 0.3},
]


def test_the_mip_picks_the_threshold_among_the_mix_s_bucket_edges(tiny_catalog):
    # Three buckets give two candidate thresholds (short|medium, medium|long). 20 req/s:
    # 8 short, 6 medium, 6 long. Measured requests/s a unit: H100 ($4/h) 10 short, 5
    # medium, 2 long; L4 ($1/h) 4 short, 1.5 medium, no long. Dollars an hour per req/s:
    # short L4 0.25 < H100 0.40; medium L4 0.667 < H100 0.80; long only H100, 2.00.
    # - threshold medium|long: long 6 / 2 = 3 H100s (full), short and medium 8 / 4 + 6 /
    #   1.5 = 2 + 4 = 6 L4s (full): $12 + $6 = $18/h x 730 = $13,140, which is also the
    #   fluid lower bound (every request on its cheapest pool, no unit part-used), so the
    #   optimum, and no other unit count reaches it (the long needs 3 H100s, and they have
    #   no spare time; fewer L4s leave short or medium requests unserved)
    # - threshold short|medium: 2 L4s for the short; medium 6 / 5 + long 3 = 4.2 -> 5
    #   H100s: $22/h ($16,060); one H100 pool: 0.8 + 1.2 + 3 = 5 H100s, $20/h ($14,600)
    measured = {"h100-sxm": [10.0, 5.0, 2.0], "l4": [4.0, 1.5, 0.0]}
    w = serve(20, traffic_mix=TRIMODAL, measured_throughput_rps=measured)
    plan = solve_problem(problem([w], load_blocks=ALL_DAY), tiny_catalog([H1, L4]))
    assert plan.total_cost_usd == pytest.approx((3 * 4.0 + 6 * 1.0) * HOURS)  # $13,140
    assert _pools(plan) == {
        "h100-sxm": (3.0, {2: pytest.approx(6.0)}),
        "l4": (6.0, {0: pytest.approx(8.0), 1: pytest.approx(6.0)}),
    }
