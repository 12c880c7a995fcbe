"""Property tests (hypothesis) on random small problems and catalogs.

- every plan returned passes the independent verifier (solve_problem refuses otherwise)
  and its cost equals a brute-force enumeration;
- the optimal cost never rises when the budget or the carbon cap is loosened or a price falls;
- permuting catalog rows or renaming workloads does not change the optimal cost;
- the HiGHS and CBC backends agree.

CI runs a fixed, derandomised budget of examples; a longer run:
``PROCURE_PROPERTY_EXAMPLES=2000 python -m pytest tests/test_solve_properties.py``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import brute_force as _brute_force
from conftest import offering, write_catalog
from solver.errors import InfeasibleError
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import parse_problem
from solver.solve import solve_problem

EXAMPLES = int(os.environ.get("PROCURE_PROPERTY_EXAMPLES", "25"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=EXAMPLES <= 100,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
HOURS = 730.0
# name, accelerator, accelerators per instance, requests/s per instance (measured: H100
# 10 req/s per GPU, L4 2 req/s per GPU on one 100/100-token bucket)
SHAPES = [
    ("h1", "h100-sxm", 1, 10.0),
    ("h2", "h100-sxm", 2, 20.0),
    ("l1", "l4", 1, 2.0),
    ("l4x", "l4", 4, 8.0),
]


@st.composite
def worlds(draw):
    """Offerings (2-4 shapes, either region), a demand and optional limits."""
    idx = draw(st.lists(st.integers(0, 3), min_size=2, max_size=4, unique=True))
    offers = []
    for i in idx:
        name, acc, n, rps = SHAPES[i]
        region = draw(st.sampled_from(["us-east", "eu-north"]))
        price = draw(st.integers(50, 1000)) / 100.0
        cap = draw(st.integers(1, 5))
        offers.append(
            {
                "row": offering(name, acc, n, price, cap=cap, region=region, nvlink=acc != "l4"),
                "price": price,
                "rps": rps,
                "cap": cap,
            }
        )
    demand = draw(st.integers(10, 400)) / 10.0
    budget = draw(st.one_of(st.none(), st.integers(500, 40_000).map(float)))
    carbon = draw(st.one_of(st.none(), st.integers(1, 200).map(lambda v: v / 100.0)))
    return offers, demand, budget, carbon


def build(offers, demand, budget=None, carbon=None, name="chat", order=None):
    rows = [o["row"] for o in offers]
    if order is not None:
        rows = [rows[i] for i in order]
    directory = Path(tempfile.mkdtemp(prefix="procure-prop-"))
    cat = load_catalog(write_catalog(directory, rows))
    data = {
        "name": "prop",
        "horizon_months": 1,
        "modes": ["on_demand"],
        "workloads": [
            {
                "kind": "inference",
                "name": name,
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
    }
    if budget is not None:
        data["budget_usd"] = budget
    if carbon is not None:
        data["carbon_cap_tco2e"] = carbon
    return parse_problem(data), cat


def cost(problem, cat, solver="highs"):
    """Optimal cost, or None when infeasible; every plan is verified on the way
    (solve_problem raises VerificationError on a plan that fails a check)."""
    try:
        plan = solve_problem(problem, cat, solver=solver, explain=False)
    except InfeasibleError:
        return None
    return plan.total_cost_usd


def no_more(a, b):
    """a <= b where None (infeasible) counts as +infinity."""
    if b is None:
        return True
    return a is not None and a <= b + 1e-6 * max(1.0, abs(b))


@SETTINGS
@given(worlds())
def test_verified_and_equal_to_brute_force(world):
    offers, demand, _, _ = world
    got = cost(*build(offers, demand))
    expected = _brute_force(offers, demand / 0.8, HOURS)  # capacity >= demand / 0.8 default
    if expected is None:
        assert got is None
    else:
        assert got == pytest.approx(expected, rel=1e-6)


@SETTINGS
@given(worlds(), st.floats(1.0, 3.0), st.floats(1.0, 3.0), st.floats(0.3, 1.0))
def test_loosening_a_limit_or_cutting_a_price_never_raises_the_cost(world, fb, fc, fp):
    offers, demand, budget, carbon = world
    base = cost(*build(offers, demand, budget, carbon))
    looser_budget = cost(*build(offers, demand, budget and budget * fb, carbon))
    looser_cap = cost(*build(offers, demand, budget, carbon and carbon * fc))
    cheaper = [dict(offers[0], row=dict(offers[0]["row"]))] + offers[1:]
    cheaper[0]["row"]["on_demand_usd_per_hour"] = offers[0]["price"] * fp
    cut = cost(*build(cheaper, demand, budget, carbon))
    assert no_more(looser_budget, base)
    assert no_more(looser_cap, base)
    assert no_more(cut, base)


@SETTINGS
@given(worlds(), st.randoms(use_true_random=False), st.sampled_from(["chat", "zz-serve", "a"]))
def test_permuting_rows_and_renaming_workloads_keep_the_cost(world, rnd, name):
    offers, demand, budget, carbon = world
    base = cost(*build(offers, demand, budget, carbon))
    order = list(range(len(offers)))
    rnd.shuffle(order)
    other = cost(*build(offers, demand, budget, carbon, name=name, order=order))
    assert (base is None) == (other is None)
    if base is not None:
        assert other == pytest.approx(base, rel=1e-6)


@SETTINGS
@given(worlds())
def test_highs_and_cbc_agree(world):
    offers, demand, budget, carbon = world
    problem, cat = build(offers, demand, budget, carbon)
    a, b = cost(problem, cat, "highs"), cost(problem, cat, "cbc")
    assert (a is None) == (b is None)
    if a is not None:
        assert b == pytest.approx(a, rel=1e-4)


@st.composite
def crowded_worlds(draw):
    """Several copies of the same instance shapes at different prices, caps and regions."""
    offers = []
    for k in range(draw(st.integers(3, 8))):
        name, acc, n, rps = SHAPES[draw(st.integers(0, 3))]
        region = draw(st.sampled_from(["us-east", "eu-north"]))
        price = draw(st.integers(50, 1000)) / 100.0
        cap = draw(st.integers(1, 4))
        row = offering(f"{name}-{k}", acc, n, price, cap=cap, region=region, nvlink=acc != "l4")
        offers.append({"row": row, "price": price, "rps": rps, "cap": cap})
    demand = draw(st.integers(10, 400)) / 10.0
    carbon = draw(st.one_of(st.none(), st.integers(1, 200).map(lambda v: v / 100.0)))
    redundancy = draw(st.sampled_from([1, 2, 3, "n_plus_1"]))
    return offers, demand, carbon, redundancy


@SETTINGS
@given(crowded_worlds())
def test_pruning_dominated_pools_keeps_the_optimum(world):
    # compile's pool pruning must never change the optimal cost (compile_problem calls it
    # through its module, so switching the module's function off compiles without it)
    import solver.core.compile.pruning as pruning_module

    offers, demand, carbon, redundancy = world
    problem, cat = build(offers, demand, None, carbon)
    w = problem.workloads[0].model_copy(update={"redundancy": redundancy})
    problem = problem.model_copy(update={"workloads": [w]})
    pruned = cost(problem, cat)
    original = pruning_module.prune_dominated_pools
    pruning_module.prune_dominated_pools = lambda options, *args, **kwargs: options
    try:
        full = cost(problem, cat)
    finally:
        pruning_module.prune_dominated_pools = original
    assert (pruned is None) == (full is None)
    if full is not None:
        assert pruned == pytest.approx(full, rel=1e-6)
