"""Rented options that cheaper, larger options with room replace (solver/core/dominance.py):
pruned by hand-worked rules, and never at the cost of the optimum."""

from __future__ import annotations

import contextlib
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_solve_properties import SETTINGS, SHAPES, cost

import solver.core.compile as compile_module
from conftest import TINY_REGIONS, offering, write_catalog
from solver.core import dominance
from solver.errors import InfeasibleError
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import parse_problem
from solver.solve import solve_problem

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))


@contextlib.contextmanager
def _without_pruning():
    """Compile with the option pruning switched off (the reference to compare with)."""
    original = dominance.prune_dominated_options
    dominance.prune_dominated_options = lambda options, *args: (options, {})
    try:
        yield
    finally:
        dominance.prune_dominated_options = original


def _problem(**extra) -> object:
    data = {
        "name": "dominance",
        "horizon_months": 1,
        "modes": ["on_demand"],
        "workloads": [
            {
                "kind": "inference",
                "name": "chat",
                "model": "llama-3-8b",
                "demand": {"requests_per_s": 5},
                "prompt_tokens": 100,
                "output_tokens": 100,
                "ttft_slo": "1 s",
                "tpot_slo": "50 ms",
            }
        ],
    }
    data.update(extra)
    return parse_problem(data)


def _tables(avail_a: int = 10, training_units: int = 0):
    """Three rented pools for one workload, one period and one block, 2,500 tok/s:
    A $2/h, 1,000 tok/s a unit; B $3/h, 800 tok/s; C $1/h, 500 tok/s with 2 units."""
    pools = pd.DataFrame(
        {
            "pool_id": ["A", "B", "C"],
            "kind": "cloud",
            "mode": "on_demand",
            "provider": "acme",
            "price_usd_per_hour": [2.0, 3.0, 1.0],
            "availability_cap": [avail_a, 10, 2],
        }
    )
    options = pd.DataFrame(
        {
            "workload": "chat",
            "workload_kind": "inference",
            "pool_id": ["A", "B", "C"],
            "tokens_per_s_per_unit": [1000.0, 800.0, 500.0],
        }
    )
    if training_units:
        job = {
            "workload": "train",
            "workload_kind": "training",
            "pool_id": "A",
            "n_units": training_units,
            "hours_by_period": ((0, 100.0),),
            "rent_usd": 200.0 * training_units,
            "energy_usd": 0.0,
        }
        options = pd.concat([options, pd.DataFrame([job])], ignore_index=True)
    demand = pd.DataFrame(
        {"workload": ["chat"], "period": [0], "block": [0], "bucket": [-1], "demand": [2500.0]}
    )
    return options, pools, demand


def test_a_dearer_smaller_option_goes_when_a_cheaper_larger_pool_has_room():
    # Bounds: A ceil(2500/1000) = 3 units <= 10 available (room); B 4 <= 10; C 5 > 2 (no
    # room). By price: C ($1, 500 tok/s) has nothing before it; A ($2, 1,000) only C,
    # without room; B ($3, 800) has A before it, with room and 1,000 >= 800: B goes.
    options, pools, demand = _tables()
    kept, dropped = dominance.prune_dominated_options(options, pools, demand, _problem())
    assert dropped == {dominance.REASON: 1}
    assert list(kept["pool_id"]) == ["A", "C"]


def test_a_kept_pool_neither_goes_nor_stands_in():
    # A break-even search moves one pool's price. Kept A ($2, 1,000 tok/s) may become
    # dearer, so it cannot stand in for B: B stays. Kept B is never pruned, whatever
    # its price now.
    options, pools, demand = _tables()
    kept, dropped = dominance.prune_dominated_options(
        options, pools, demand, _problem(), keep=frozenset({"A"})
    )
    assert dropped == {} and list(kept["pool_id"]) == ["A", "B", "C"]
    kept, _ = dominance.prune_dominated_options(
        options, pools, demand, _problem(), keep=frozenset({"B"})
    )
    assert "B" in set(kept["pool_id"])


def test_no_room_no_pruning():
    # A with 2 units available cannot hold its bound of 3: B may be needed beside it.
    options, pools, demand = _tables(avail_a=2)
    _, dropped = dominance.prune_dominated_options(options, pools, demand, _problem())
    assert dropped == {}


def test_two_small_units_replace_a_larger_dearer_one():
    # C with room now (10 units >= its bound 5). One unit of A ($2, 1,000 tok/s) is
    # replaced by ceil(1,000/500) = 2 of C at 2 x $1 = $2 (no dearer), one of B ($3, 800
    # tok/s) by 2 of C at $2: both go, C alone stays. The optimum is unchanged: 2,500 tok/s
    # = 5 C = $5/h (2 A + 1 C is $5/h too; 3 A $6/h).
    options, pools, demand = _tables()
    pools.loc[pools["pool_id"] == "C", "availability_cap"] = 10
    kept, dropped = dominance.prune_dominated_options(options, pools, demand, _problem())
    assert dropped == {dominance.REASON: 2}
    assert list(kept["pool_id"]) == ["C"]
    # Under a quota, m units hold m times the accelerators: only m = 1 (a larger unit at
    # no higher price) stands in, within one quota group. All three pools in one group
    # (acme, us, h100, 1 accelerator a unit): B goes for A as before, A stays.
    pools = pools.assign(region="us", accelerator_id="h100", accels_per_unit=1)
    quota = [{"provider": "acme", "max_accelerators": 100}]
    kept, dropped = dominance.prune_dominated_options(
        options, pools, demand, _problem(quotas=quota)
    )
    assert list(kept["pool_id"]) == ["A", "C"]


def test_a_training_job_takes_room():
    # A training job that may run on 8 units of A: 3 + 8 = 11 > 10, no room in A.
    options, pools, demand = _tables(training_units=8)
    _, dropped = dominance.prune_dominated_options(options, pools, demand, _problem())
    assert dropped == {}
    # ... with 7 units, 3 + 7 = 10 <= 10: room again, B goes.
    options, pools, demand = _tables(training_units=7)
    _, dropped = dominance.prune_dominated_options(options, pools, demand, _problem())
    assert dropped == {dominance.REASON: 1}


def _with_training(avail_a: int):
    """_tables() plus one training job "train" with a 4-unit cluster in A ($800), B
    ($1,200) and a 2-unit one in C ($400), each running in period 0."""
    options, pools, demand = _tables(avail_a=avail_a)
    jobs = pd.DataFrame(
        {
            "workload": "train",
            "workload_kind": "training",
            "pool_id": ["A", "B", "C"],
            "n_units": [4, 4, 2],
            "hours_by_period": [((0, 100.0),)] * 3,
            "rent_usd": [800.0, 1200.0, 400.0],
            "energy_usd": 0.0,
        }
    )
    return pd.concat([options, jobs], ignore_index=True), pools, demand


def test_a_dearer_training_cluster_goes_when_a_cheaper_one_has_room():
    # Room per pool (serving bound + each job's largest cluster there): A 3 + 4 = 7 <= 10;
    # B 4 + 4 = 8 <= 10; C 5 + 2 = 7 > 2. The job's cheapest cluster with room is A ($800):
    # B ($1,200) goes; C ($400) is cheaper and stays. Serving B goes as before.
    options, pools, demand = _with_training(avail_a=10)
    kept, dropped = dominance.prune_dominated_options(options, pools, demand, _problem())
    assert dropped == {dominance.REASON: 1, dominance.TRAINING_REASON: 1}
    training = kept[kept["workload_kind"] == "training"]
    assert list(training["pool_id"]) == ["A", "C"]
    # A with 6 units available: 3 + 4 = 7 > 6, no room: every cluster and option stays
    options, pools, demand = _with_training(avail_a=6)
    assert dominance.prune_dominated_options(options, pools, demand, _problem())[1] == {}
    # min_npv weighs a cluster's cost by its periods' discounts: nothing is pruned
    npv = _problem(objective="min_npv", discount_rate=0.08)
    options, pools, demand = _with_training(avail_a=10)
    assert dominance.prune_dominated_options(options, pools, demand, npv)[1] == {
        dominance.REASON: 1
    }


def test_nothing_under_carbon():
    options, pools, demand = _tables()
    carbon = _problem(carbon_cap_tco2e=10.0)
    assert dominance.prune_dominated_options(options, pools, demand, carbon)[1] == {}


def test_under_carbon_a_column_goes_only_for_one_no_dirtier():
    # Under a carbon cap rule 2 also compares CO2e per unit-hour. A ($2/h, 1,000 tok/s)
    # emits 1.0 kg an hour: B ($3/h, 800 tok/s) at 0.5 kg stays (one A emits more),
    # at 2.0 kg it goes as without the cap.
    options, pools, demand = _tables()
    capped = _problem(carbon_cap_tco2e=10.0)
    for b_kg, expected in ((0.5, {}), (2.0, {dominance.REASON: 1})):
        co2 = options.assign(kgco2e_per_unit_hour=[1.0, b_kg, 0.1])
        assert dominance.prune_dominated_options(co2, pools, demand, capped)[1] == expected


def test_n_plus_1_bounds_one_unit_more():
    # Under N+1 each bound is one unit more: A ceil(2500/1000) + 1 = 4 <= 10 (room),
    # B 4 + 1 = 5, C 5 + 1 = 6 > 2. B ($3, 800 tok/s) goes for one A ($2, 1,000) as
    # without N+1: a larger unit in its place keeps capacity less the largest unit.
    w = _problem().workloads[0].model_copy(update={"redundancy": "n_plus_1"})
    n_plus_1 = _problem().model_copy(update={"workloads": [w]})
    options, pools, demand = _tables()
    kept, dropped = dominance.prune_dominated_options(options, pools, demand, n_plus_1)
    assert dropped == {dominance.REASON: 1}
    assert list(kept["pool_id"]) == ["A", "C"]
    # A with 3 units available holds the plain bound (3) but not N+1's (4): no room, and
    # B stays, where without N+1 it would go.
    options, pools, demand = _tables(avail_a=3)
    assert dominance.prune_dominated_options(options, pools, demand, n_plus_1)[1] == {}
    assert dominance.prune_dominated_options(options, pools, demand, _problem())[1] == {
        dominance.REASON: 1
    }


@st.composite
def crowded(draw):
    """Copies of the instance shapes at different prices and caps; tokens/s demand."""
    rows = []
    for k in range(draw(st.integers(3, 8))):
        name, acc, n, _ = SHAPES[draw(st.integers(0, 3))]
        price = draw(st.integers(50, 1000)) / 100.0
        cap = draw(st.integers(1, 6))
        region = draw(st.sampled_from(["us-east", "eu-north"]))
        rows.append(offering(f"{name}-{k}", acc, n, price, cap=cap, region=region))
    users = draw(st.integers(1_000, 400_000))
    budget = draw(st.one_of(st.none(), st.integers(2_000, 60_000).map(float)))
    units = draw(st.sampled_from([1, 2, 3, "n_plus_1"]))
    return rows, users, budget, units


@SETTINGS
@given(crowded())
def test_pruning_dominated_options_keeps_the_optimum(world):
    rows, users, budget, units = world
    cat = load_catalog(write_catalog(Path(tempfile.mkdtemp(prefix="procure-dom-")), rows))
    w = {
        "kind": "inference",
        "name": "chat",
        "model": "llama-3-8b",
        "demand": {"users": users, "requests_per_user_per_day": 10},
        "prompt_tokens": 500,
        "output_tokens": 200,
        "ttft_slo": "2 s",
        "tpot_slo": "80 ms",
        "redundancy": units,
    }
    extra = {"budget_usd": budget} if budget is not None else {}
    problem = parse_problem(
        {"name": "dom", "horizon_months": 1, "modes": ["on_demand"], "workloads": [w], **extra}
    )
    pruned = cost(problem, cat)
    with _without_pruning():
        full = cost(problem, cat)
    assert (pruned is None) == (full is None)
    if full is not None:
        assert pruned == pytest.approx(full, rel=1e-6)


@SETTINGS
@given(crowded(), st.sampled_from([0.0, 300.0, 3000.0]))
def test_pruning_under_a_carbon_price_keeps_the_optimum(world, usd_per_tco2e):
    # Where CO2e counts, a column goes only for units no dearer and emitting no more;
    # the two regions' grids differ tenfold (400 and 40 gCO2/kWh), so price and CO2e
    # often disagree. The optimum of cost + carbon price x CO2e is the unpruned one.
    rows, users, _, units = world
    cat = load_catalog(write_catalog(Path(tempfile.mkdtemp(prefix="procure-dom-")), rows))
    w = {
        "kind": "inference",
        "name": "chat",
        "model": "llama-3-8b",
        "demand": {"users": users, "requests_per_user_per_day": 10},
        "prompt_tokens": 500,
        "output_tokens": 200,
        "ttft_slo": "2 s",
        "tpot_slo": "80 ms",
        "redundancy": units,
    }
    problem = parse_problem(
        {
            "name": "dom",
            "horizon_months": 1,
            "modes": ["on_demand"],
            "workloads": [w],
            "objective": "cost_plus_carbon",
            "carbon_price_usd_per_tco2e": usd_per_tco2e,
        }
    )

    def objective():
        try:
            plan = solve_problem(problem, cat, explain=False)
        except InfeasibleError:
            return None
        return plan.total_cost_usd + usd_per_tco2e * plan.total_co2e_t

    pruned = objective()
    with _without_pruning():
        full = objective()
    assert (pruned is None) == (full is None)
    if full is not None:
        assert pruned == pytest.approx(full, rel=1e-6)


def test_generated_portfolio_same_lp_and_optimum():
    # bench/generate.py's 1,000 offerings x 20 workloads x 4 months (inference, batch and
    # training sharing pools): the pruning drops options (counted in the compile report)
    # and leaves the MIP optimum as it was, and the LP relaxation too where demand rows
    # count a unit for at most the demand (column generation's masters: a dominated
    # column is dearer per token/s served there). In the full model the LP can only rise.
    from generate import generated_problem, scaled_catalog

    from solver.core.backends import SolveOptions, get_backend
    from solver.core.columns import _solve_lp
    from solver.core.model import build_model

    problem, catalog = generated_problem(20, 4, seed=3), scaled_catalog(1_000)
    figures = []
    for prune in (True, False):
        with contextlib.nullcontext() if prune else _without_pruning():
            compiled = compile_module.compile_problem(problem, catalog)
        model = build_model(compiled)
        mip = get_backend("highspy").solve(model, SolveOptions(relative_gap=1e-7))
        capped = build_model(compiled, cap_demand_rows=True)
        lps = (_solve_lp(capped, None).objective, _solve_lp(model, None).objective)
        figures.append((len(compiled.options), lps, mip.objective, compiled))
    (n_pruned, lp_pruned, mip_pruned, c), (n_all, lp_all, mip_all, _) = figures
    pruned = c.report.pruned[dominance.REASON] + c.report.pruned[dominance.TRAINING_REASON]
    assert pruned == n_all - n_pruned > 0
    assert c.report.pruned[dominance.TRAINING_REASON] > 0
    assert lp_pruned[0] == pytest.approx(lp_all[0], rel=1e-9)
    assert lp_pruned[1] >= lp_all[1] * (1 - 1e-9)
    assert mip_pruned == pytest.approx(mip_all, rel=1e-6)


def test_nothing_under_provider_shares():
    # Workload "a" runs only in us-east (acme's H100, $1/h, one unit); "b" only in
    # eu-north, on beta's L4s: l1 $0.6/h or l1b $1.0/h, same shape, one unit each.
    # acme may take at most half the cost. b on l1: acme 1/1.6 = 62.5% > 50%; b on l1b:
    # 1/2 = 50%, $2.0/h x 730 h = $1,460; b on two l1: 1/2.2, $2.2/h = $1,606. l1b is
    # dearer than l1 with room to spare, yet the optimum needs it: nothing may be pruned.
    rows = [
        offering("h1", "h100-sxm", 1, 1.0, region="us-east"),
        offering("l1", "l4", 1, 0.6, region="eu-north", provider="beta", nvlink=False),
        offering("l1b", "l4", 1, 1.0, region="eu-north", provider="beta", nvlink=False),
    ]
    regions = [*TINY_REGIONS, {**TINY_REGIONS[1], "provider": "beta"}]
    directory = Path(tempfile.mkdtemp(prefix="procure-share-"))
    cat = load_catalog(write_catalog(directory, rows, regions=regions))

    def chat(name: str, region: str) -> dict:
        return {
            "kind": "inference",
            "name": name,
            "model": "llama-3-8b",
            "demand": {"tokens_per_s": 50},
            "prompt_tokens": 100,
            "output_tokens": 100,
            "ttft_slo": "2 s",
            "tpot_slo": "100 ms",
            "regions": [region],
        }

    problem = _problem(
        workloads=[chat("a", "us-east"), chat("b", "eu-north")],
        provider_share_max={"acme": 0.5},
    )
    plan = solve_problem(problem, cat, explain=False)
    assert plan.total_cost_usd == pytest.approx(1_460.0)
    assert not dominance.prunable(problem)
