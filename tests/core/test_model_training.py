"""Training options by hand, and a brute-force enumerator against the MIP."""

from __future__ import annotations

import random

import numpy as np
import pytest

from conftest import H8, TINY_REGIONS, check, offering, train
from conftest import brute_force as _brute_force
from conftest import training_problem as problem
from solver.errors import InfeasibleError
from solver.solve import solve_problem


def test_training_smallest_cluster_by_hand(tiny_catalog):
    # dense-7b: 7e9 params x 18 B = 126 GB states; selective activations at 4k context
    # 34 x 4096 x 4096 x 32 layers = 18.25 GB; room 80 x 0.9 - 18.25 = 53.75 GB -> 3 GPUs,
    # so one 8-GPU instance. FLOPs 6 x 7e9 x 1e11 = 4.2e21 plus attention
    # 12 x 32 x 4096 x 4096 x 1e11 = 6.442e20 -> 4.8442e21. The cluster is sized at the low
    # end of the H100 BF16 band (training_margin: low, the default): 0.30, MosaicML's
    # MPT-30B at 8k on 8 H100 (29.92%); the point figure 0.41 (Llama 3 on 16,384 H100) is
    # measured at 16,384 GPUs: no scaling loss at 8.
    # hours = 4.8442e21 / (8 x 989.4e12 x 0.30 x 3600) = 566.68 h; cost $32 x 566.68 = $18,133.87
    plan = solve_problem(problem([train()]), tiny_catalog([H8]))
    assert plan.total_cost_usd == pytest.approx(18_133.87, abs=0.01)
    (item,) = [i for i in plan.line_items if i.item == "training"]
    assert item.units == 1 and item.job_hours == pytest.approx(566.68, abs=0.01)
    # the line says which MFU, its band and source, and the slack: the one-month window
    # is 730 h (no start: average months), 1 - 566.68 / 730 = 22.4% spare
    assert (item.mfu, item.mfu_low, item.mfu_point, item.mfu_high) == (0.30, 0.30, 0.41, 0.46)
    assert item.training_margin == "low" and "Llama 3" in item.mfu_source
    assert item.window_hours == 730.0
    assert item.slack_fraction == pytest.approx(1 - 566.68 / 730, abs=1e-5)
    assert item.units_at_point_mfu == 1  # one instance at 0.41 too (414.65 h)
    assert check(plan, "training MFU at its margin") == (True, "1 checked")
    assert check(plan, "training slack recomputed") == (True, "1 checked")


def test_training_at_the_point_mfu_by_hand(tiny_catalog):
    # training_margin: point sizes at the published figure 0.41:
    # hours = 4.8442e21 / (8 x 989.4e12 x 0.41 x 3600) = 414.65 h; cost $32 x 414.65 = $13,268.7;
    # 0.41 / 0.30 = 1.367 x faster than the default's 566.68 h
    plan = solve_problem(problem([train()], training_margin="point"), tiny_catalog([H8]))
    assert plan.total_cost_usd == pytest.approx(13_268.7, abs=0.5)
    (item,) = [i for i in plan.line_items if i.item == "training"]
    assert item.job_hours == pytest.approx(414.65, abs=0.01) and item.mfu == 0.41
    # a number is a fraction of the point figure: 0.9 x 0.41 = 0.369 -> 414.65 / 0.9 = 460.72 h,
    # and a workload's own margin wins over the problem's
    plan = solve_problem(
        problem([train(training_margin=0.9)], training_margin="point"), tiny_catalog([H8])
    )
    (item,) = [i for i in plan.line_items if i.item == "training"]
    assert item.mfu == pytest.approx(0.369) and item.training_margin == "0.9"
    assert item.job_hours == pytest.approx(460.72, abs=0.01)


def test_training_deadline_forces_bigger_cluster(tiny_catalog):
    # deadline 10 days = 240 h < 566.68 h at the low end (0.30): ceil(566.68 / 240) = 3
    # instances; 24 GPUs is far below the 16,384 the MFU was measured at, so no scaling
    # loss: 566.68 / 3 = 188.89 h; cost 3 x 32 x 188.89 = $18,133.87 (the same GPU-hours).
    # At the point figure (414.65 h) two instances would do: the margin adds one
    plan = solve_problem(problem([train(deadline_days=10)]), tiny_catalog([H8]))
    assert plan.total_cost_usd == pytest.approx(18_133.87, abs=0.01)
    (item,) = [i for i in plan.line_items if i.item == "training"]
    assert item.units == 3 and item.job_hours == pytest.approx(188.89, abs=0.01)
    assert item.units_at_point_mfu == 2 and item.window_hours == 240.0
    assert item.slack_fraction == pytest.approx(1 - 188.89 / 240, abs=1e-4)
    # 1 day is out of reach with the instance cap of 2
    capped = dict(H8, availability_cap_instances=2)
    with pytest.raises(Exception) as err:
        solve_problem(problem([train(deadline_days=1)]), tiny_catalog([capped]))
    assert "cannot run" in str(err.value) or isinstance(err.value, InfeasibleError)
    assert "training_margin: low" in str(err.value)


def test_interruptible_training_uses_spot(tiny_catalog):
    # provider "acme" publishes no preemption rate: 1 per instance-day. One instance
    # loses 1/24 x (0.5 h / 2 + 10 min) = 1.736% of its wall clock:
    # 566.68 / (1 - 0.01736) = 576.70 h x $16 = $9,227.13 (more instances only add loss)
    plan = solve_problem(problem([train(interruptible=True)]), tiny_catalog([H8]))
    # the verifier recomputed the job's hours on its own, with the provider's rate
    assert check(plan, "training hours recomputed") == (True, "1 checked")
    assert plan.total_cost_usd == pytest.approx(9_227.13, abs=0.01)
    assert {i.mode for i in plan.line_items} == {"spot"}
    (item,) = [i for i in plan.line_items if i.item == "training"]
    assert item.job_hours == pytest.approx(576.70, abs=0.01)


H8_400G = dict(offering("h8slow", "h100-sxm", 8, 20.0, spot=8.0), network_gbps=400)
AWS_H8 = offering("p5", "h100-sxm", 8, 98.0, spot=40.0, provider="aws", region="us-east-1")
AWS_REGION = dict(TINY_REGIONS[0], provider="aws", region="us-east-1")


@pytest.mark.parametrize(
    ("offer", "extra"),
    [
        # one instance, on demand
        (H8, {}),
        # deadline: several instances, spot and on demand (spot at the default rate)
        (H8, {"deadline_days": 5, "interruptible": True}),
        # 400 Gbit/s: loss beyond one node (0.90 per doubling)
        (H8_400G, {"deadline_days": 2, "interruptible": True}),
        # FP8 at the FP8 peak with the FP8 MFU
        (H8, {"precision": "fp8", "deadline_days": 3}),
        # the user's MFU, taken at the job's scale
        (H8_400G, {"mfu": 0.5, "deadline_days": 2}),
        # AWS spot rate
        (AWS_H8, {"deadline_days": 2, "interruptible": True}),
    ],
)
def test_estimate_equals_compile_on_the_same_pool_and_cluster(tiny_catalog, offer, extra):
    # every training option compile generates has the hours the estimator gives for the
    # same offering, mode and cluster: both call physics.cluster_training_hours with
    # nodes = instances of the offering
    from solver.analyses.training_estimate import estimate_training
    from solver.core.compile import compile_problem

    cat = tiny_catalog([offer], regions=[*TINY_REGIONS, AWS_REGION])
    compiled = compile_problem(problem([train(**extra)]), cat, prune_dominated=False)
    opts = compiled.options[compiled.options["workload_kind"] == "training"]
    assert len(opts) > 0
    pools = compiled.pools.set_index("pool_id")
    for _, opt in opts.iterrows():
        pool = pools.loc[opt["pool_id"]]
        est = estimate_training(
            cat,
            model="dense-7b",
            tokens=1e11,
            precision=extra.get("precision", "bf16"),
            offering=pool["offering_id"],
            n_accelerators=int(opt["n_accelerators"]),
            mfu=extra.get("mfu"),
            spot=pool["mode"] == "spot",
        )
        assert est["nodes"] == opt["n_units"]
        assert est["wall_clock_hours"] == pytest.approx(opt["job_hours"], rel=1e-9)


def test_estimate_on_a_400g_cluster_by_hand(tiny_catalog):
    # H100 on 400 Gbit/s, 4 instances = 32 GPUs: the MFU (Llama 3 at 16,384 H100 on 3,200
    # Gbit/s per node) holds within one node only; 32 / 8 = 4 nodes = 2 doublings at 0.90
    # -> 0.81. FLOPs 4.8442e21 (see above); at the band's low end 0.30 (the default):
    # hours = 4.8442e21 / (32 x 989.4e12 x 0.30 x 0.81 x 3600) = 4.8442e21 / 2.7697e19
    # = 174.90 h; at the point 0.41: 4.8442e21 / 3.7852e19 = 127.98 h
    from solver.analyses.training_estimate import estimate_training

    args = dict(model="dense-7b", tokens=1e11, offering="acme/us-east/h8slow", n_accelerators=32)
    est = estimate_training(tiny_catalog([H8_400G]), **args)
    assert est["scaling_efficiency"] == pytest.approx(0.81)
    assert (est["mfu"], est["mfu_low"], est["mfu_point"], est["mfu_high"]) == (
        0.30,
        0.30,
        0.41,
        0.46,
    )
    assert est["wall_clock_hours"] == pytest.approx(174.90, abs=0.01)
    # 4 instances x $20 x 174.90 h = $13,992
    assert est["cost_usd"] == pytest.approx(13_992, abs=1)
    point = estimate_training(tiny_catalog([H8_400G]), training_margin="point", **args)
    assert point["wall_clock_hours"] == pytest.approx(127.98, abs=0.01)


def test_spot_cluster_is_the_smallest_that_meets_the_deadline(tiny_catalog):
    # H100 on 400 Gbit/s, spot at 1 preemption per instance-day, deadline 48 h. With n
    # instances: efficiency 0.90 ** log2(n), lost = n/24 x (0.25 + 0.1667) h.
    # n = 24: eff 0.6169, lost 0.4167 -> 4.8442e21 / (192 x 989.4e12 x 0.41 x 0.6169
    #   x 3600) / 0.5833 = 48.01 h (misses);
    # n = 25: eff 0.6131, lost 0.4340 -> 47.80 h (meets); the fastest is n = 26 (47.70 h),
    # beyond which more instances lose more than they add (n = 100 loses it all).
    # Compile must find 25 although the pool's cap (100) never finishes.
    from solver import physics
    from solver.core.compile import compile_problem

    # sized at the point MFU 0.41 (training_margin: point), as the brute force below; at
    # the band's low end (0.30) even the fastest spot cluster takes 47.70 x 0.41 / 0.30 =
    # 65.2 h and none is generated
    p = problem([train(deadline_days=2, interruptible=True)], training_margin="point")
    compiled = compile_problem(p, tiny_catalog([H8_400G]), prune_dominated=False)
    spot = compiled.options[compiled.options["pool_id"] == "acme/us-east/h8slow#spot"]
    assert list(spot["n_units"]) == [25]
    assert float(spot["job_hours"].iloc[0]) == pytest.approx(47.80, abs=0.01)
    # the same answer by brute force over every cluster size
    n = np.arange(1, 101)
    hours = physics.cluster_training_hours(
        4.8442450944e21, n * 8, 8, 989.4, 0.41, 16_384, 400.0, False, 1 / 24
    )[0]
    assert int(n[np.flatnonzero(hours <= 48.0)[0]]) == 25
    low = compile_problem(p.model_copy(update={"training_margin": "low"}), tiny_catalog([H8_400G]))
    assert low.options[low.options["pool_id"] == "acme/us-east/h8slow#spot"].empty


@pytest.mark.parametrize("seed", range(25))
def test_mip_matches_brute_force(tiny_catalog, seed):
    rng = random.Random(seed)
    shapes = [
        ("h1", "h100-sxm", 1, 10.0),
        ("h2", "h100-sxm", 2, 20.0),
        ("l1", "l4", 1, 2.0),
        ("l4x", "l4", 4, 8.0),
    ]
    chosen = rng.sample(shapes, rng.randint(2, 4))
    cases, offerings = [], []
    for name, acc, n, rps in chosen:
        price = round(rng.uniform(0.5, 10.0), 2)
        cap = rng.randint(1, 5)
        cases.append({"price": price, "rps": rps, "cap": cap})
        offerings.append(offering(name, acc, n, price, cap=cap, nvlink=acc != "l4"))
    demand = round(rng.uniform(1.0, 40.0), 1)
    # capacity >= demand / max_utilisation (default 0.8)
    expected = _brute_force(cases, demand / 0.8, 730.0)
    p = problem(
        [
            {
                "kind": "inference",
                "name": "chat",
                "model": "llama-3-8b",
                "demand": {"requests_per_s": demand},
                "prompt_tokens": 100,
                "output_tokens": 100,
                "ttft_slo": "1 s",
                "tpot_slo": "50 ms",
                "traffic_mix": [{"prompt_tokens": 100, "output_tokens": 100, "share": 1.0}],
                "measured_throughput_rps": {"h100-sxm": [10.0], "l4": [2.0]},
            }
        ],
        modes=["on_demand"],
    )
    cat = tiny_catalog(offerings)
    if expected is None:
        with pytest.raises(InfeasibleError):
            solve_problem(p, cat)
    else:
        plan = solve_problem(p, cat)
        assert plan.total_cost_usd == pytest.approx(expected, rel=1e-6)
