"""The stages on their own (issue 13): compile, plan extraction and solve, batch inference,
the owned cost policies with non-zero hosting, power and maintenance, and the budget
sweep, each against a number worked by hand.

The serving workload is conftest's ``serve``: one 100/100-token bucket with measured
throughput, 10 requests/s per H100, 2 per L4; ``max_utilisation`` 1.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import H1, HOURS, L4, TINY_SERVERS, TINY_SITES, problem, serve
from solver.analyses.sensitivity import budget_sweep
from solver.core.compile import compile_problem
from solver.core.model import build_model
from solver.inputs.problem import parse_problem
from solver.plan import extract_plan
from solver.solve import solve_problem

ALL_DAY = [{"name": "all-day", "hours_per_day": 24, "demand_factor": 1}]


def test_compile_alone_gives_the_demand_and_one_option_per_pool(tiny_catalog):
    # 25 requests/s of 100 output tokens = 2,500 output tokens/s; one period, one block;
    # one option per offering (an H100 and an L4, on demand), with 10 and 2 requests/s
    # per unit = 1,000 and 200 output tokens/s
    compiled = compile_problem(problem([serve(25)], load_blocks=ALL_DAY), tiny_catalog([H1, L4]))
    assert list(compiled.periods["hours"]) == [730.0]
    assert compiled.demand["demand"].sum() == pytest.approx(25.0)  # requests/s, one bucket
    by_pool = dict(
        zip(compiled.options["pool_id"], compiled.options["tokens_per_s_per_unit"], strict=True)
    )
    assert by_pool == {
        "acme/us-east/h1#on_demand": pytest.approx(1000.0),
        "acme/us-east/l4#on_demand": pytest.approx(200.0),
    }


def test_extract_plan_alone_reads_a_given_solution(tiny_catalog):
    # 2 H100 + 3 L4 for the month (the optimum of tests/core/test_model.py), set by hand: the
    # plan lists them at $4 x 2 x 730 = $5,840 and $1 x 3 x 730 = $2,190, $8,030 in all
    compiled = compile_problem(problem([serve(25)], load_blocks=ALL_DAY), tiny_catalog([H1, L4]))
    model = build_model(compiled)
    values = np.zeros(len(model.variables))
    x = model.variables[model.variables["kind"] == "x"]
    pool_of = dict(enumerate(compiled.pools["pool_id"]))
    for i, row in x.iterrows():
        values[i] = 2.0 if pool_of[row["pool"]] == "acme/us-east/h1#on_demand" else 3.0
    y = model.variables["kind"] == "y"  # the time shares the units give the one bucket
    for i in np.flatnonzero(y.to_numpy()):
        values[i] = 20.0 if pool_of[model.variables.at[i, "pool"]].endswith("h1#on_demand") else 6
    plan = extract_plan(
        compiled, model, values, status="optimal", objective=None, gap=0.0, solver="by hand",
        solve_seconds=0.0,
    )  # fmt: skip
    costs = {i.offering: i.cost_usd for i in plan.line_items}
    assert costs == {
        "acme/us-east/h1": pytest.approx(5_840.0),
        "acme/us-east/l4": pytest.approx(2_190.0),
    }
    assert plan.total_cost_usd == pytest.approx(8_030.0)
    assert model.expressions["total_cost_usd"].value(values) == pytest.approx(8_030.0)


def test_batch_inference_spreads_its_tokens_over_the_hours_it_may_run(tiny_catalog):
    # 1e9 output tokens in one 730-hour month: 1e9 / (730 x 3,600) = 380.52 tokens/s,
    # served flat out (no utilisation target, no peak); on the calendar, February 2027
    # has 672 h: 1e9 / (672 x 3,600) = 413.36 tokens/s
    batch = {
        "kind": "batch_inference",
        "name": "backfill",
        "model": "llama-3-8b",
        "output_tokens_total": 1e9,
        "prompt_tokens": 500,
        "output_tokens": 200,
    }
    cat = tiny_catalog([H1, L4])
    for start, rate in ((None, 1e9 / (730 * 3600)), ("2027-02", 1e9 / (672 * 3600))):
        extra = {"start": start} if start else {}
        p = problem([batch], modes=["on_demand", "spot"], load_blocks=ALL_DAY, **extra)
        compiled = compile_problem(p, cat)
        assert compiled.demand["demand"].sum() == pytest.approx(rate)
        plan = solve_problem(p, cat)
        served = sum(i.capacity_tokens_per_s for i in plan.line_items)
        assert served >= rate
        # a batch job may run on spot: the cheapest capacity is spot ($2.00 H100, $0.40 L4
        # per hour), never on demand
        assert {i.mode for i in plan.line_items} == {"spot"}


def _owned_catalog(tiny_catalog):
    # the box: $200,000, 10 kW, $12,000/yr maintenance, 5-year life, no lead time; the
    # site: colocation $100/kW-month, electricity $0.10/kWh, PUE 1.5
    server = dict(TINY_SERVERS[0], maintenance_usd_per_year=12_000)
    site = dict(
        TINY_SITES[0], colocation_usd_per_kw_month=100, electricity_usd_per_kwh=0.10, pue=1.5
    )
    return tiny_catalog([H1], servers=[server], sites=[site])


@pytest.mark.parametrize(
    ("policy", "residual", "capex_usd"),
    [
        # amortised: 12 of 60 months of life used = $200,000 x 12/60 = $40,000
        ("amortised", "none", 40_000.0),
        # cash: the whole $200,000 when bought
        ("cash", "none", 200_000.0),
        # cash less the straight-line value of 48 months left: $200,000 - $160,000
        ("cash", "straight_line", 40_000.0),
    ],
)
def test_an_owned_server_by_hand(tiny_catalog, policy, residual, capex_usd):
    # One box (8 H100 = 80 requests/s) serves 25 requests/s for a 12-month horizon of
    # 730-hour months (8,760 h). Per month in service, used or not:
    #   colocation 100 x 10 kW = $1,000; maintenance 12,000 / 12 = $1,000;
    #   idle draw 0.30 x 10 kW x PUE 1.5 x 730 h = 3,285 kWh x $0.10 = $328.50;
    #   = $2,328.50 x 12 = $27,942.
    # In use all day, the draw above idle: 10 kW x 0.70 x 0.60 (inference utilisation)
    #   x PUE 1.5 = 6.3 kWh per hour x 8,760 h = 55,188 kWh x $0.10 = $5,518.80.
    p = parse_problem(
        {
            "name": "owned",
            "horizon_months": 12,
            "modes": ["owned"],
            "owned_cost_policy": policy,
            "residual_value": residual,
            "load_blocks": ALL_DAY,
            "workloads": [serve(25)],
        }
    )
    plan = solve_problem(p, _owned_catalog(tiny_catalog))
    (bought,) = [i for i in plan.line_items if i.item == "purchase"]
    assert bought.units == 1
    assert bought.cost_usd == pytest.approx(capex_usd + 27_942.0)
    energy = sum(i.cost_usd for i in plan.line_items if i.item == "use")
    assert energy == pytest.approx(5_518.80)
    assert plan.total_cost_usd == pytest.approx(capex_usd + 27_942.0 + 5_518.80)


def test_budget_sweep_serves_what_each_budget_buys(tiny_catalog):
    # max served within a budget, 25 requests/s for 730 h. $8,030 (= $11/h: 2 H100 + 3 L4)
    # serves it all. $4,380 (= $6/h) buys at most 14 requests/s: 1 H100 + 2 L4 (10 + 4;
    # 6 L4 give 12), 14 / 25 = 0.56 of demand.
    p = problem([serve(25)], load_blocks=ALL_DAY)
    compiled = compile_problem(p, tiny_catalog([H1, L4]), prune_dominated=False)
    points = budget_sweep(compiled, [6 * HOURS, 11 * HOURS])
    assert [p.served_fraction for p in points] == [pytest.approx(0.56), pytest.approx(1.0)]
    assert points[0].total_cost_usd == pytest.approx(4_380.0)
