"""``procure replay`` on a disaggregated plan (issue 52): the prefill pool, the KV transfer
and the decode pool replayed as the plan sized them (solver/analyses/replay/disagg.py).

The plan is tests/core/test_disagg.py's hand case: 8,000-token prompts, 100-token answers,
80 req/s on 8 x MI325X units at $16/h, TTFT 1 s and TPOT 50 ms at the mean; its optimum
is 5 prefill units (one device a replica: 40 replicas) and 3 decode units (8 devices a
replica, batch 173), with that module's hand-workable vLLM-on-ROCm figures
(``hand_workable_rocm``, autouse here too).
"""

from __future__ import annotations

import pytest
from core.test_disagg import M8, MI325X, hand_workable_rocm, rag  # noqa: F401 (its pin)

from conftest import problem
from solver.analyses.replay import replay_plan
from solver.analyses.replay.trace import TraceRow
from solver.outputs.replay import replay_table
from solver.solve import solve_problem


@pytest.fixture(scope="module")
def disagg(tmp_path_factory):
    from conftest import write_catalog
    from solver.inputs.catalog import load_catalog

    root = tmp_path_factory.mktemp("disagg_replay")
    catalog = load_catalog(write_catalog(root / "catalog", [M8], accelerators=[MI325X],
                                         servers=[], sites=None))  # fmt: skip
    p = problem([rag()])
    plan = solve_problem(p, catalog)
    return plan, p, catalog


def test_one_request_waits_for_nothing_prefill_then_kv_then_decode(disagg):
    plan, p, catalog = disagg
    roles = {i.pool_role: i for i in plan.line_items if i.item == "rent"}
    assert (roles["prefill"].units, roles["decode"].units) == (5, 3)
    result = replay_plan(plan, p, catalog, trace=[TraceRow(0.0, 8000, 100)], trace_as_is=True,
                         lose_unit=False)  # fmt: skip
    block = next(r for r in result.rows if r.deployment == "")
    # TTFT = prefill + KV transfer, nothing queued (tests/core/test_disagg.py works both):
    # s = 2.342144e14 FLOPs / (1,307.4e12 x 0.50) + 26 GB / (6,000 GB/s x 0.55)
    #   = 0.358290 + 0.007879 = 0.366169 s; x = 6.5536 GB x 8 / (400 Gbit/s x 0.7)
    #   = 0.187246 s: TTFT 0.553415 s
    assert block.ttft.p50_s == pytest.approx(0.366169 + 0.187246, abs=2e-6)
    # TPOT: the decode replica (8 devices) makes the 99 other tokens one a step, alone.
    # Its first step holds the prompt's KV and recomputes one token: weights 26e9 /
    # (8 x 6,000e9 x 0.55) = 0.98485 ms + fixed 80 x 24 us + 2 ms = 3.92 ms (+ 7 us of
    # compute) = 4.91 ms; the 98 after it add the sequence's KV read at ~8,050 tokens
    # (8,050 x 819,200 B / 26.4e12 B/s = 0.2498 ms), its FLOPs (6.2 us) and all-reduces
    # (4.6 us): 5.166 ms. (4.91 + 98 x 5.166) / 99 = 5.163 ms
    assert block.tpot.p50_s == pytest.approx(5.163e-3, rel=2e-3)
    assert block.e2e.p50_s == pytest.approx(0.553415 + 99 * 5.163e-3, rel=1e-3)
    assert {r.pool_role for r in result.rows if r.deployment} == {"prefill", "decode"}


def test_at_its_rate_the_prefill_pool_is_busy_as_planned_and_the_plan_holds(disagg):
    plan, p, catalog = disagg
    result = replay_plan(plan, p, catalog, duration_s=60, lose_unit=False)
    pools = {r.pool_role: r for r in result.rows if r.deployment}
    # 80 req/s x s 0.366169 s over 40 prefill replicas = 0.7323 of their time (Poisson
    # arrivals over ~6,700 requests: within 3%)
    assert pools["prefill"].busy_share == pytest.approx(80 * 0.366169 / 40, rel=0.03)
    block = next(r for r in result.rows if r.deployment == "")
    assert block.unserved == 0 and block.meets_slo
    # every TTFT is at least the prefill and the transfer; the queue adds little at 73%
    # busy over 40 servers; the decode batch stays far below the plan's 173, so TPOT
    # stays far below its 50 ms limit
    assert 0.5534 <= block.ttft.p50_s <= block.ttft.p99_s < 1.0
    assert block.tpot.p99_s < 0.05
    text = replay_table(result)
    assert "prefill pool" in text and "decode pool" in text


def test_a_cut_prefill_pool_misses_ttft(disagg):
    # 2 prefill units instead of 5: 16 replicas x 1 / 0.366169 s = 43.7 req/s < 80 req/s;
    # the queue grows without bound and TTFT runs far past 1 s
    plan, p, catalog = disagg
    cut = [i.model_copy(update={"units": 2.0}) if i.pool_role == "prefill" else i
           for i in plan.line_items]  # fmt: skip
    result = replay_plan(plan.model_copy(update={"line_items": cut}), p, catalog,
                         duration_s=30, lose_unit=False)  # fmt: skip
    block = next(r for r in result.rows if r.deployment == "")
    assert not block.meets_slo
    assert block.ttft.p99_s > 5.0
