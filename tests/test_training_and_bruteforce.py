"""Training options by hand, and a brute-force enumerator against the MIP."""

from __future__ import annotations

import itertools
import random

import pytest

from conftest import offering
from solver.errors import InfeasibleError
from solver.problem import parse_problem
from solver.solve import solve_problem

H8 = offering("h8", "h100-sxm", 8, 32.0, spot=16.0)


def train(**extra) -> dict:
    w = {"kind": "training", "name": "pretrain", "model": "dense-7b", "tokens": 1e11}
    w.update(extra)
    return w


def problem(workloads, **extra):
    data = {
        "name": "train",
        "horizon_months": 1,
        "modes": ["on_demand", "spot"],
        "workloads": workloads,
    }
    data.update(extra)
    return parse_problem(data)


def test_training_smallest_cluster_by_hand(tiny_catalog):
    # dense-7b: 7e9 params x 18 B = 126 GB states; selective activations at 4k context
    # 34 x 4096 x 4096 x 32 layers = 18.25 GB; room 80 x 0.9 - 18.25 = 53.75 GB -> 3 GPUs,
    # so one 8-GPU instance. FLOPs 6 x 7e9 x 1e11 = 4.2e21;
    # hours = 4.2e21 / (8 x 989.4e12 x 0.40 x 3600) = 368.49 h; cost $32 x 368.49 = $11,791.6
    plan = solve_problem(problem([train()]), tiny_catalog([H8]))
    assert plan.total_cost_usd == pytest.approx(11_791.6, abs=0.5)
    (item,) = [i for i in plan.line_items if i.item == "training"]
    assert item.units == 1 and item.job_hours == pytest.approx(368.49, abs=0.01)


def test_training_deadline_forces_bigger_cluster(tiny_catalog):
    # deadline 10 days = 240 h < 368.49 h: two instances (scaling 0.95 over 2 nodes with
    # 3,200 Gbit/s): 368.49 / (2 x 0.95) = 193.94 h; cost 2 x 32 x 193.94 = $12,412.1
    plan = solve_problem(problem([train(deadline_days=10)]), tiny_catalog([H8]))
    assert plan.total_cost_usd == pytest.approx(12_412.1, abs=0.5)
    # 1 day is out of reach with the instance cap of 2
    capped = dict(H8, availability_cap_instances=2)
    with pytest.raises(Exception) as err:
        solve_problem(problem([train(deadline_days=1)]), tiny_catalog([capped]))
    assert "cannot run" in str(err.value) or isinstance(err.value, InfeasibleError)


def test_interruptible_training_uses_spot(tiny_catalog):
    # spot $16/h with +10% checkpoint/restart: 368.49 x 1.1 = 405.34 h x $16 = $6,485.4
    plan = solve_problem(problem([train(interruptible=True)]), tiny_catalog([H8]))
    assert plan.total_cost_usd == pytest.approx(6_485.4, abs=0.5)
    assert {i.mode for i in plan.line_items} == {"spot"}


def _brute_force(cases, demand, hours):
    """Min cost over every unit vector within caps; capacity >= demand and >= 1 unit."""
    best = None
    ranges = [range(c["cap"] + 1) for c in cases]
    for counts in itertools.product(*ranges):
        if sum(counts) < 1:
            continue
        if sum(n * c["rps"] for n, c in zip(counts, cases, strict=True)) < demand - 1e-9:
            continue
        cost = sum(n * c["price"] * hours for n, c in zip(counts, cases, strict=True))
        best = cost if best is None or cost < best else best
    return best


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
    expected = _brute_force(cases, demand, 730.0)
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
        assert plan.verified
        assert plan.total_cost_usd == pytest.approx(expected, rel=1e-6)
