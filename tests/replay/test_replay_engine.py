"""The replay's engine on cases worked by hand, and its step time against the estimator's."""

from __future__ import annotations

import math

import numpy as np
import pytest

from solver import physics
from solver.analyses.replay.engine import ReplicaSpec, Request, StepCost, simulate, step_cost

# A replica with round numbers: a step reads the weights in 10 ms, a decoded token costs
# 1 ms of compute, 2 ms of overhead per step, a prompt token 10 us of prefill compute.
COST = StepCost(
    weights_s=0.010,
    routed_s=0.0,
    kv_s_per_token=0.0,
    compute_s_per_seq=0.001,
    compute_s_per_token=0.0,
    fixed_s=0.002,
    comm_s_per_token=0.0,
    overlap=True,
)


def spec(**extra) -> ReplicaSpec:
    base = dict(
        cost=COST,
        kv_tokens=100_000,
        max_seqs=64,
        token_budget=2048,
        prefill_s_per_token=1e-5,
        prefill_s_per_token_sq=0.0,
    )
    return ReplicaSpec(**{**base, **extra})


def test_alone_a_request_waits_for_nothing_and_its_ttft_is_its_prefill_step():
    # arrivals 100 s apart, each served in well under a second: no queueing. The prompt's
    # 1,000 tokens fit one step's budget (2,048): that step lasts max(weights 0.010,
    # prefill 1,000 x 1e-5 = 0.010) + 0.002 = 0.012 s and emits the first token, so
    # TTFT = 0.012 s exactly. The 2 later tokens are decode steps of one sequence,
    # max(0.010, 0.001) + 0.002 = 0.012 s each: TPOT 0.012 s, end-to-end 0.036 s.
    reqs = [Request(100.0 * k, 1000, 3) for k in range(5)]
    done, stats, end = simulate([spec()], reqs)
    for r in done:
        assert r.first_token_s - r.arrival_s == pytest.approx(0.012, abs=1e-12)
        assert (r.done_s - r.first_token_s) / 2 == pytest.approx(0.012, abs=1e-12)
        assert r.done_s - r.arrival_s == pytest.approx(0.036, abs=1e-12)
    assert end == pytest.approx(400.036)
    assert stats[0].steps == 15  # 3 steps per request


def test_a_prompt_over_the_budget_is_prefilled_in_chunks():
    # 5,000 tokens at 2,048 a step: chunks of 2,048, 2,048 and 904 tokens, steps of
    # max(0.010, 0.02048) + 0.002 = 0.02248 s twice and max(0.010, 0.00904) + 0.002 =
    # 0.012 s: the first token after 0.05696 s
    (r,), _, _ = simulate([spec()], [Request(0.0, 5000, 1)])
    assert r.first_token_s == pytest.approx(0.02248 * 2 + 0.012, abs=1e-12)
    assert r.done_s == r.first_token_s  # one output token: done with the first


def test_a_full_cache_makes_the_second_request_wait():
    # the cache holds 1,100 tokens: one request of 1,000 prompt + 10 output tokens at a
    # time. Both arrive at 0; the second is admitted only when the first ends at 0.012 +
    # 9 x 0.012 = 0.120 s, then runs the same 0.120 s: it ends at 0.240 s, TTFT 0.132 s
    reqs = [Request(0.0, 1000, 10), Request(0.0, 1000, 10)]
    (a, b), _, _ = simulate([spec(kv_tokens=1100)], reqs)
    assert a.done_s == pytest.approx(0.120, abs=1e-12)
    assert b.first_token_s == pytest.approx(0.132, abs=1e-12)
    assert b.done_s == pytest.approx(0.240, abs=1e-12)


def test_a_prompt_no_cache_can_hold_is_never_served():
    (r,), _, _ = simulate([spec(kv_tokens=500)], [Request(0.0, 1000, 2)])
    assert math.isnan(r.done_s) and math.isnan(r.first_token_s)


def test_requests_spread_over_replicas():
    # two replicas, two requests at once: one each, so both see the alone timings
    reqs = [Request(0.0, 1000, 3), Request(0.0, 1000, 3)]
    done, _, _ = simulate([spec(), spec()], reqs)
    assert {r.replica for r in done} == {0, 1}
    assert all(r.done_s == pytest.approx(0.036) for r in done)


@pytest.mark.parametrize("model_id", ["llama-3-8b", "mixtral-8x7b"])
def test_the_step_is_the_estimators_at_pure_decode(model_id):
    # b sequences at context c, no prompt chunk: the replay's step is the estimator's
    # step model of pure decode (P = 0, O = 2c: mean context c) at batch b
    from solver.inputs.catalog import load_catalog
    from solver.inputs.presets import resolve_model

    catalog = load_catalog(None)
    model = physics.served_model(resolve_model(model_id, catalog, "w"), "bf16", "bf16")
    acc = catalog.accelerators.loc["h100-sxm"]
    dev = physics.device_figures(physics.one_row_table(acc), "bf16", np.array([True]))
    cost = step_cost(model, 2, dev)
    for b, c in [(1, 100.0), (32, 1500.0), (200, 3000.0)]:
        want = float(physics.step_model(model, 0.0, 2 * c, np.array([2.0]), dev).step_s(b)[0])
        assert cost.step_s(b, b * c, 0, 0.0) == pytest.approx(want, rel=1e-9)


def test_one_slot_under_poisson_arrivals_queues_as_md1():
    # one request at a time (max_num_seqs 1) and fixed sizes: every request is served in
    # the same S = prefill step + 9 decode steps = 10 x 0.010 s = 0.100 s (weights 10 ms
    # each step; prefill 1,000 x 1e-5 = 10 ms; no overhead), so the replica is an M/D/1
    # queue. At 5 requests/s, rho = 0.5 and the Pollaczek-Khinchine mean wait is
    # rho S / (2 (1 - rho)) = 0.05 s: mean TTFT 0.05 + 0.010 = 0.060 s (Kleinrock 1975,
    # "Queueing Systems" vol. 1, eq. 5.73). 20,000 requests: within 5%.
    from solver.analyses.replay.trace import poisson_trace

    one = replace_cost(fixed_s=0.0)
    rows = poisson_trace(5.0, 4000.0, ((1.0, 1000, 10),), seed=3)
    reqs = [Request(r.arrival_s, r.prompt_tokens, r.output_tokens) for r in rows]
    done, stats, _ = simulate([spec(cost=one, max_seqs=1)], reqs)
    ttft = np.mean([r.first_token_s - r.arrival_s for r in done])
    assert ttft == pytest.approx(0.060, rel=0.05)
    assert np.mean([r.done_s - r.first_token_s for r in done]) == pytest.approx(0.090)


def test_busy_time_and_batch_are_counted_in_the_window():
    # one request alone (0.012 s prefill step with no decoding request, then two steps of
    # one): over the window (0, 0.036) the decoding batch averages 2 x 0.012 / 0.036 = 2/3
    # and the replica is busy all of it; a window past the replay's end is cut at the
    # end (0.036 s), so (0, 0.072) counts the same
    (_, (s,), _) = simulate([spec()], [Request(0.0, 1000, 3)], (0.0, 0.036))
    assert s.mean_batch == pytest.approx(2 / 3) and s.busy_s == pytest.approx(0.036)
    (_, (s,), _) = simulate([spec()], [Request(0.0, 1000, 3)], (0.0, 0.072))
    assert s.busy_s == pytest.approx(0.036) and s.mean_batch == pytest.approx(2 / 3)


def replace_cost(**changes) -> StepCost:
    from dataclasses import replace

    return replace(COST, **changes)


def test_the_router_shares_requests_by_weight():
    # 30 requests at once on replicas of weight 2 and 1: each goes where outstanding /
    # weight is least (the first of equals), so the split is 20 and 10
    reqs = [Request(0.0, 100, 3) for _ in range(30)]
    done, _, _ = simulate([spec(weight=2.0), spec(weight=1.0)], reqs)
    assert sum(r.replica == 0 for r in done) == 20


def test_a_cached_prefix_is_not_prefilled_again():
    # The same 3,000-token prompt with 2,992 tokens in the prefix cache prefills 8 tokens:
    # one step of max(weights 0.010, prefill 8 x 1e-5 = 0.00008) + 0.002 = 0.012 s, so
    # TTFT 0.012 s. Without the cache it takes two budget-sized chunks (2,048 then 952
    # tokens): max(0.010, 0.02048) + 0.002 = 0.02248 s then max(0.010, 0.00952) + 0.002 =
    # 0.012 s, TTFT 0.03448 s. A prompt wholly cached still prefills its last token (vLLM
    # recomputes it to emit the first output): cached_tokens is capped at prompt - 1.
    (warm,), _, _ = simulate([spec()], [Request(0.0, 3000, 2, cached_tokens=2992)])
    (cold,), _, _ = simulate([spec()], [Request(0.0, 3000, 2)])
    (whole,), _, _ = simulate([spec()], [Request(0.0, 3000, 2, cached_tokens=3000)])
    assert warm.first_token_s == pytest.approx(0.012)
    assert cold.first_token_s == pytest.approx(0.03448)
    assert whole.first_token_s == pytest.approx(0.012)


def test_a_dense_cache_is_read_whole_per_slot_and_a_static_batch_pads():
    # dense cache (JetStream, Neuron): 0.5 ms per slot whatever its context; a decode graph
    # compiled for 8: one sequence costs 8 slots. Overlapped: max(weights 0.010 + 8 x
    # 0.0005 = 0.014, 8 x 0.001 = 0.008) + 0.002 = 0.016 s, at any context; at 10 running
    # (past the compiled 8, not reached in a replay: max_seqs caps it) 10 slots,
    # max(0.015, 0.010) + 0.002 = 0.017 s
    cost = replace_cost(kv_s_per_slot=0.0005, compiled_batch=8)
    assert cost.step_s(1, 100.0, 0, 0.0) == pytest.approx(0.016)
    assert cost.step_s(1, 4000.0, 0, 0.0) == pytest.approx(0.016)
    assert cost.step_s(10, 40_000.0, 0, 0.0) == pytest.approx(0.017)


def test_serial_prefill_runs_each_prompt_as_its_own_graph_after_the_decode_step():
    # prompts apart (Neuron): a step that decodes 2 sequences and admits 1 prompt of
    # 1,000 tokens lasts the prompt's compute 0.010 s and its graph's fixed 0.011 s, then
    # the decode graph of 2, max(0.010, 0.002) + 0.002 = 0.012 s: 0.033 s. Alone, one
    # request's TTFT is its prompt's graph and one decode step of 1 (the estimator's
    # prefill + t(b)), 0.021 + 0.012 = 0.033 s, and each later token a decode step, 0.012 s
    cost = replace_cost(prefill_graph_s=0.011)
    assert cost.step_s(2, 0.0, 1000, 0.010, 1) == pytest.approx(0.033)
    (r,), _, _ = simulate([spec(cost=cost)], [Request(0.0, 1000, 3)])
    assert r.first_token_s == pytest.approx(0.033)
    assert r.done_s - r.first_token_s == pytest.approx(2 * 0.012)


def test_neuron_replays_as_the_estimator_predicts_the_published_run():
    # optimum-neuron's TGI benchmark (OPTNEURON_TGI_PERF, accuracy rows m19 and m20):
    # Llama 3.1 8B bf16 on 4 Inferentia2 chips compiled for batch 32 and 4,096 tokens, one
    # request at a time, ~1,500-token prompts: inter-token latency 26.79 ms, TTFT 315.79
    # ms. The replay of that deployment (the plan's batch 32) takes the padded batch-32
    # step and the prompt's own graph: within 5% of both, as the estimator (accuracy table
    # m19 1.02x, m20 1.00x)
    from solver.analyses.replay.fleet import replica_spec
    from solver.inputs.catalog import load_catalog
    from solver.inputs.presets import resolve_model

    catalog = load_catalog(None)
    model = physics.served_model(resolve_model("llama-3-8b", catalog, "w"), "bf16", "bf16")
    acc = catalog.accelerators.loc["inferentia2"]
    table = physics.one_row_table(acc)
    dev = physics.device_figures(table, "bf16", np.array([False]), "neuron")
    one = replica_spec(model, 4, dev, 0.10, planned_batch=32)
    assert one.max_seqs == 32 and one.cost.compiled_batch == 32
    (r,), _, _ = simulate([one], [Request(0.0, 1500, 174)])
    assert (r.done_s - r.first_token_s) / 173 * 1e3 == pytest.approx(26.79, rel=0.05)
    assert r.first_token_s * 1e3 == pytest.approx(315.79, rel=0.05)
