"""The optimiser on tiny problems whose optimum is worked out by hand.

Capacities come from ``measured_throughput_rps`` (one traffic bucket of 100 output
tokens) so that every optimum is plain arithmetic: an H100 instance serves 10
requests/s, an L4 instance 2 requests/s. One period of 1 month = 730 hours.
"""

from __future__ import annotations

import pytest

from conftest import H1, HOURS, L4, TINY_SITES, offering, problem, serve, units
from solver.errors import InfeasibleError
from solver.solve import solve_problem


def test_cheapest_mix_by_hand(tiny_catalog):
    # 25 req/s. H100 $4 for 10 req/s, L4 $1 for 2 req/s.
    #   0 H100 + 13 L4 = $13/h; 1 H100 + 8 L4 = $12; 2 H100 + 3 L4 = $11; 3 H100 = $12.
    # Optimum 2 H100 + 3 L4 = $11/h x 730 h = $8,030.
    plan = solve_problem(problem([serve(25)]), tiny_catalog([H1, L4]))
    assert plan.status == "optimal"
    assert plan.total_cost_usd == pytest.approx(11 * HOURS)
    assert units(plan) == {"acme/us-east/h1": 2, "acme/us-east/l4": 3}


def test_cbc_agrees(tiny_catalog):
    plan = solve_problem(problem([serve(25)]), tiny_catalog([H1, L4]), solver="cbc")
    assert plan.total_cost_usd == pytest.approx(11 * HOURS)


def test_availability_binds(tiny_catalog):
    # Only 1 H100 instance available: 1 H100 + 8 L4 = $12/h -> $8,760.
    cap1 = dict(H1, availability_cap_instances=1)
    plan = solve_problem(problem([serve(25)]), tiny_catalog([cap1, L4]))
    assert plan.total_cost_usd == pytest.approx(12 * HOURS)
    assert any(b.family == "availability" for b in plan.binding)


def test_quota_binds(tiny_catalog):
    # Quota of 1 H100 on acme: same as the availability case, $12/h.
    p = problem(
        [serve(25)], quotas=[{"provider": "acme", "accelerator": "H100", "max_accelerators": 1}]
    )
    plan = solve_problem(p, tiny_catalog([H1, L4]))
    assert plan.total_cost_usd == pytest.approx(12 * HOURS)
    assert any(b.family == "quota" for b in plan.binding)


def test_budget_binds_and_infeasible_below(tiny_catalog):
    # The optimum costs $8,030; a budget of $8,000 leaves no feasible plan.
    with pytest.raises(InfeasibleError):
        solve_problem(problem([serve(25)], budget_usd=8000), tiny_catalog([H1, L4]))
    plan = solve_problem(problem([serve(25)], budget_usd=8030.5), tiny_catalog([H1, L4]))
    assert plan.total_cost_usd == pytest.approx(8030)


def test_max_served_within_budget(tiny_catalog):
    # Budget $2,920 = $4/h: one H100 (10 req/s, $4/h) beats four L4 (8 req/s, $4/h).
    # Served 10 of 25 req/s = 40%.
    p = problem([serve(25, redundancy=1)], budget_usd=2920, objective="max_served")
    plan = solve_problem(p, tiny_catalog([H1, L4]))
    assert units(plan) == {"acme/us-east/h1": 1}
    assert plan.served_fraction["chat"] == pytest.approx(0.4)


def test_carbon_cap_binds(tiny_catalog):
    # Two H100s serve 20 req/s. us-east (400 g/kWh) $4/h, eu-north (40 g/kWh) $5/h.
    # Per instance-hour: 700 W x (0.3 + 0.7 x 0.6) = 504 W, x 1.5 host = 0.756 kWh (PUE 1.0)
    #   us: 0.756 x 0.400 = 0.3024 kg + embodied 164/43,800 = 0.003744 -> 0.306144 kg
    #   eu: 0.756 x 0.040 = 0.03024 kg + 0.003744 -> 0.033984 kg
    # No cap: 2 us = $5,840, 2 x 730 x 0.306144 = 0.44697 t.
    # Cap 0.3 t: 1 us + 1 eu = 0.24831 t, $6,570 (2 eu would cost $7,300).
    eu = offering("h1eu", "h100-sxm", 1, 5.0, region="eu-north")
    cat = tiny_catalog([H1, eu])
    free = solve_problem(problem([serve(20)]), cat)
    assert free.total_cost_usd == pytest.approx(5840)
    assert free.total_co2e_t == pytest.approx(0.44697, rel=1e-4)
    capped = solve_problem(problem([serve(20)], carbon_cap_tco2e=0.3), cat)
    assert capped.total_cost_usd == pytest.approx(6570)
    assert capped.total_co2e_t == pytest.approx(0.24831, rel=1e-4)
    # min_carbon puts both in eu: 0.04962 t
    green = solve_problem(problem([serve(20)], objective="min_carbon"), cat)
    assert green.total_co2e_t == pytest.approx(2 * HOURS * 0.033984 / 1000, rel=1e-4)
    assert green.total_cost_usd == pytest.approx(7300)


def test_residency_excludes_regions(tiny_catalog):
    eu = offering("h1eu", "h100-sxm", 1, 5.0, region="eu-north")
    plan = solve_problem(problem([serve(20, residency=["eu"])]), tiny_catalog([H1, eu]))
    assert units(plan) == {"acme/eu-north/h1eu": 2}


def test_provider_share_binds(tiny_catalog):
    # acme H100 $4/h, beta H100 $4.5/h; 40 req/s = 4 instances. At most 50% of cost on acme:
    # acme a x 4 <= 0.5 (4a + 4.5 b), a + b = 4 -> 2a <= 2.25 b -> a = 2, b = 2: $17/h = $12,410.
    beta = offering("hb", "h100-sxm", 1, 4.5, provider="beta")
    regions = [
        dict(
            provider=p,
            region="us-east",
            country="US",
            residency_zone="us",
            grid_gco2_per_kwh=400,
            grid_year=2023,
            grid_source="t",
            pue=1.0,
            electricity_usd_per_kwh=0.1,
        )
        for p in ("acme", "beta")
    ]
    cat = tiny_catalog([H1, beta], regions=regions)
    # Without the limit all four go to acme: $16/h.
    assert solve_problem(problem([serve(40)]), cat).total_cost_usd == pytest.approx(16 * HOURS)
    plan = solve_problem(problem([serve(40)], provider_share_max={"acme": 0.5}), cat)
    assert plan.total_cost_usd == pytest.approx(17 * HOURS)
    assert units(plan) == {"acme/us-east/h1": 2, "beta/us-east/hb": 2}


def test_reserved_1y_beats_on_demand_over_a_year(tiny_catalog):
    # 12 months of 10 req/s on one H100: on-demand $4 x 8,760 = $35,040;
    # 1-year reserved $3 x 8,760 = $26,280; 3-year $2 x 26,280 h = $52,560 (whole term paid).
    p = problem([serve(10)], horizon_months=12, modes=["on_demand", "reserved_1y", "reserved_3y"])
    plan = solve_problem(p, tiny_catalog([H1]))
    assert plan.total_cost_usd == pytest.approx(26_280)
    assert units(plan, "reservation") == {"acme/us-east/h1": 1}


def test_buy_versus_rent_decided_by_utilisation(tiny_catalog):
    # 80 req/s = 8 H100 ($32/h rented) or one 8x H100 box (capex $200,000, lead time 0,
    # hosting and electricity 0 in the test site).
    # Break-even: 200,000 / 32 = 6,250 h = 8.56 months of steady use.
    # 36 months steady: rent 32 x 26,280 = $840,960 > $200,000 -> buy.
    long = problem([serve(80)], horizon_months=36, modes=["on_demand", "owned"])
    plan = solve_problem(long, tiny_catalog([H1]))
    assert plan.total_cost_usd == pytest.approx(200_000)
    assert units(plan, "purchase") == {"box-h100@colo-us": 1}
    # 6 months burst: rent 32 x 4,380 = $140,160 < $200,000 -> rent.
    short = problem([serve(80)], horizon_months=6, modes=["on_demand", "owned"])
    plan = solve_problem(short, tiny_catalog([H1]))
    assert plan.total_cost_usd == pytest.approx(140_160)
    assert units(plan, "purchase") == {}


def test_capex_budget_and_power_cap_bind(tiny_catalog):
    # As above (36 months, buying optimal), but capex budget $100k forbids the box: rent.
    p = problem(
        [serve(80)], horizon_months=36, modes=["on_demand", "owned"], capex_budget_usd=100_000
    )
    plan = solve_problem(p, tiny_catalog([H1]))
    assert plan.total_cost_usd == pytest.approx(840_960)
    # A site of 15 kW holds one 10 kW box: 160 req/s needs 2 boxes -> 1 box + 8 rented.
    # 200,000 + 32 x 26,280 = $1,040,960
    site = [dict(TINY_SITES[0], power_cap_kw=15)]
    p2 = problem([serve(160)], horizon_months=36, modes=["on_demand", "owned"])
    plan2 = solve_problem(p2, tiny_catalog([H1], sites=site))
    assert plan2.total_cost_usd == pytest.approx(1_040_960)
    # without the power cap: two boxes, $400,000
    assert solve_problem(p2, tiny_catalog([H1])).total_cost_usd == pytest.approx(400_000)


def test_lead_time_delays_owned_capacity(tiny_catalog):
    # A 2-month lead time with monthly periods: a box ordered in month 1 serves from month 3.
    # 3 months at 80 req/s: rent months 1-2 (2 x 32 x 730 = $46,720) ... buying only helps
    # month 3 ($200,000 > 32 x 730), so the optimum rents all 3 months: $70,080.
    servers = [
        dict(
            server_id="box-h100",
            name="b",
            accelerator_id="h100-sxm",
            accelerators_per_server=8,
            capex_usd=200000,
            power_kw=10,
            lead_time_days=60.8,
            lifetime_years=5,
            maintenance_usd_per_year=0,
            nvlink=True,
            network_gbps=3200,
            embodied_kgco2e=2000,
            source="t",
        )
    ]
    p = problem(
        [serve(80)],
        horizon_months=3,
        modes=["on_demand", "owned"],
        periods=[{"name": f"m{i}", "months": 1} for i in range(1, 4)],
    )
    plan = solve_problem(p, tiny_catalog([H1], servers=servers))
    assert plan.total_cost_usd == pytest.approx(3 * 32 * HOURS)


def test_period_budget_binds(tiny_catalog):
    # Two months; 10 req/s each month on H100 ($2,920/month on-demand). A cap of $2,000 on
    # month 2 cannot be met by renting -> infeasible; $3,000 is fine.
    periods = [{"name": "m1", "months": 1}, {"name": "m2", "months": 1}]
    with pytest.raises(InfeasibleError):
        solve_problem(
            problem([serve(10)], horizon_months=2, periods=periods, period_budget_usd={"m2": 2000}),
            tiny_catalog([H1]),
        )
    plan = solve_problem(
        problem([serve(10)], horizon_months=2, periods=periods, period_budget_usd={"m2": 3000}),
        tiny_catalog([H1]),
    )
    assert plan.totals.by_period == {"m1": pytest.approx(2920), "m2": pytest.approx(2920)}


def test_load_blocks_rent_peaks(tiny_catalog):
    # 6 h/day at 30 req/s (3 H100) and 18 h/day at 10 req/s (1 H100), one month, on-demand:
    # 3 x 4 x 182.5 h + 1 x 4 x 547.5 h = 2,190 + 2,190 = $4,380 (vs 3 all day: $8,760).
    blocks = [
        {"name": "peak", "hours_per_day": 6, "demand_factor": 3.0},
        {"name": "base", "hours_per_day": 18, "demand_factor": 1.0},
    ]
    plan = solve_problem(problem([serve(10)], load_blocks=blocks), tiny_catalog([H1]))
    assert plan.total_cost_usd == pytest.approx(4380)


def test_redundancy_binds(tiny_catalog):
    # 5 req/s fits one H100, but redundancy 2 needs two serving units: the cheapest second
    # unit is an L4 -> 1 H100 + 1 L4? No: 3 L4 (6 req/s, $3/h) beat 1 H100 + 1 L4 ($5/h).
    plan = solve_problem(problem([serve(5, redundancy=2)]), tiny_catalog([H1, L4]))
    assert plan.total_cost_usd == pytest.approx(3 * HOURS)
    assert any(b.family == "redundancy" for b in plan.binding) or units(plan) == {
        "acme/us-east/l4": 3
    }


def test_traffic_mix_split_across_types(tiny_catalog):
    # Two buckets of 10 req/s each. Measured req/s per unit: short bucket H100 10, L4 4;
    # long bucket H100 4, L4 0.5. Cost per req/s-hour: short L4 $0.25 < H100 $0.40;
    # long H100 $1.00 < L4 $2.00. Units' time may be split across buckets:
    #   3 H100: 2.5 units serve the long 10 req/s, 0.5 unit serves 5 short; 2 L4 serve the other
    #   5 short (capacity 8): $12 + $2 = $14/h.  2 H100 + 7 L4 = $15; 4 H100 = $16;
    #   3 H100 + 1 L4 serves only 5 + 4 = 9 short.  Optimum $14/h x 730 = $10,220.
    w = serve(
        20,
        traffic_mix=[
            {"prompt_tokens": 100, "output_tokens": 100, "share": 0.5},
            {"prompt_tokens": 1000, "output_tokens": 1000, "share": 0.5},
        ],
        measured_throughput_rps={"h100-sxm": [10.0, 4.0], "l4": [4.0, 0.5]},
    )
    plan = solve_problem(problem([w]), tiny_catalog([H1, L4]))
    assert plan.total_cost_usd == pytest.approx(14 * HOURS)
    assert units(plan) == {"acme/us-east/h1": 3, "acme/us-east/l4": 2}


def test_existing_fleet_used_before_renting_or_buying(tiny_catalog):
    # One 8x H100 box already owned (hosting $0 in the test site): 80 req/s costs nothing more.
    # At 160 req/s the second 80 is cheaper bought ($200,000) than rented ($840,960).
    fleet = [{"server": "box-h100", "site": "colo-us", "units": 1}]
    p = problem([serve(80)], horizon_months=36, modes=["on_demand", "owned"], existing_fleet=fleet)
    assert solve_problem(p, tiny_catalog([H1])).total_cost_usd == pytest.approx(0.0)
    p2 = problem(
        [serve(160)], horizon_months=36, modes=["on_demand", "owned"], existing_fleet=fleet
    )
    plan = solve_problem(p2, tiny_catalog([H1]))
    assert plan.total_cost_usd == pytest.approx(200_000)
    # Without buying allowed, the existing box is still used and the rest rented.
    p3 = problem([serve(160)], horizon_months=36, modes=["on_demand"], existing_fleet=fleet)
    assert solve_problem(p3, tiny_catalog([H1])).total_cost_usd == pytest.approx(840_960)


def test_lexicographic_cost_then_carbon(tiny_catalog):
    # Two offerings with the same price, different grids: cost ties, carbon decides.
    eu = offering("h1eu", "h100-sxm", 1, 4.0, region="eu-north")
    plan = solve_problem(problem([serve(20)], objective="lexicographic"), tiny_catalog([H1, eu]))
    assert plan.total_cost_usd == pytest.approx(5840)
    assert units(plan) == {"acme/eu-north/h1eu": 2}


def test_cost_plus_carbon_price(tiny_catalog):
    # eu costs $1/h more and saves 0.27216 kg/h (0.306144 - 0.033984). At $5,000/tCO2e that
    # is worth $1.36/h > $1/h: eu wins; at $1,000/t ($0.27/h) us wins.
    eu = offering("h1eu", "h100-sxm", 1, 5.0, region="eu-north")
    cat = tiny_catalog([H1, eu])
    high = solve_problem(
        problem([serve(10)], objective="cost_plus_carbon", carbon_price_usd_per_tco2e=5000), cat
    )
    low = solve_problem(
        problem([serve(10)], objective="cost_plus_carbon", carbon_price_usd_per_tco2e=1000), cat
    )
    assert units(high) == {"acme/eu-north/h1eu": 1}
    assert units(low) == {"acme/us-east/h1": 1}


def test_a_demand_row_counts_a_unit_for_at_most_the_demand(tiny_catalog):
    # 100 tok/s of Llama 3 8B on H100s only ($4/h): a block's row asks 125 tok/s at most
    # (100 / 0.8 max utilisation x its load factor), a unit holds thousands, so the plan
    # rents one all month: $4 x 730 h = $2,920. The demand rows count a unit for at most
    # the demand (min(a, D), column generation's masters), so the LP relaxation must buy
    # that whole unit too: LP = MIP = $2,920. Counting a unit's full capacity, the LP buys
    # a few hundredths of one.
    from solver.core.columns import _solve_lp
    from solver.core.compile import compile_problem
    from solver.core.model import build_model

    chat = {
        "kind": "inference",
        "name": "chat",
        "model": "llama-3-8b",
        "demand": {"tokens_per_s": 100},
        "prompt_tokens": 500,
        "output_tokens": 200,
        "ttft_slo": "1 s",
        "tpot_slo": "50 ms",
    }
    p, cat = problem([chat]), tiny_catalog([H1])
    compiled = compile_problem(p, cat)
    model = build_model(compiled, cap_demand_rows=True)
    rows = [row for row in model.rows if row.family == "demand"]
    assert rows and all(max(row.coefs.values()) == pytest.approx(row.rhs) for row in rows)
    assert _solve_lp(model, None).objective == pytest.approx(4 * HOURS)
    assert solve_problem(p, cat).total_cost_usd == pytest.approx(4 * HOURS)
    # the full model (HiGHS tightens the rows in its own presolve) keeps a unit's capacity
    assert _solve_lp(build_model(compiled), None).objective < 0.1 * 4 * HOURS
