"""Serving headroom infra would accept: max_utilisation, N+1, and exact traffic-mix shares.

The tiny problems reuse tests/core/test_model.py's catalog: an H100 instance serves 10
requests/s ($4/h), an L4 instance 2 requests/s (price set per test), one bucket of
100 output tokens (so 1 request/s = 100 tokens/s), one month = 730 h.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import H1, HOURS, check, offering, problem, serve, units
from conftest import brute_force as _brute_force
from solver.cli import app
from solver.core.compile import compile_problem
from solver.core.model import FAMILIES
from solver.errors import InfeasibleError, ProcureError
from solver.inputs.problem import load_problem
from solver.plan.unit_costs import with_unit_costs
from solver.solve import solve_problem
from solver.trust.verify import verify_plan

ROOT = Path(__file__).resolve().parents[2]
N_PLUS_1_CHECK = "N+1 (capacity without the largest unit meets peak)"


def l4_at(usd_per_hour: float) -> dict:
    return offering("l4", "l4", 1, usd_per_hour, nvlink=False)


def default_utilisation(rps: float, **extra) -> dict:
    """serve() without its max_utilisation: 1, so the problem's default applies."""
    w = serve(rps, **extra)
    del w["max_utilisation"]
    return w


# ---------------------------------------------------------------- max_utilisation


def test_max_utilisation_turns_four_units_into_five(tiny_catalog):
    # 40 req/s on H100s of 10 req/s. Flat out (max_utilisation 1): 40 / 10 = 4 units,
    # 4 x $4 x 730 h = $11,680. At the 0.8 default: capacity >= 40 / 0.8 = 50 req/s,
    # 50 / 10 = 5 units, 5 x $4 x 730 = $14,600.
    cat = tiny_catalog([H1])
    flat = solve_problem(problem([serve(40)]), cat)
    assert units(flat) == {"acme/us-east/h1": 4}
    assert flat.total_cost_usd == pytest.approx(4 * 4.0 * HOURS)
    p = problem([default_utilisation(40)])
    assert p.workloads[0].max_utilisation == 0.8
    kept = solve_problem(p, cat)
    assert units(kept) == {"acme/us-east/h1": 5}
    assert kept.total_cost_usd == pytest.approx(5 * 4.0 * HOURS)


def test_max_utilisation_scales_the_compiled_demand(tiny_catalog):
    # demand rows: 40 req/s x peak_to_average 1 x (1 + demand_headroom 0.1) / 0.8 = 55 req/s
    p = problem([default_utilisation(40)], demand_headroom=0.1)
    demand = compile_problem(p, tiny_catalog([H1])).demand
    assert float(demand["demand"].sum()) == pytest.approx(40 * 1.1 / 0.8)


def test_verifier_recomputes_the_utilisation_target(tiny_catalog):
    # 4 H100s serve 40 req/s flat out; under the 0.8 default the verifier needs 50 req/s.
    cat = tiny_catalog([H1])
    flat = solve_problem(problem([serve(40)]), cat)
    checks = verify_plan(flat, problem([default_utilisation(40)]), cat)
    failed = {c.name for c in checks if not c.ok}
    assert failed == {"demand met"}


# ---------------------------------------------------------------- N+1


def test_n_plus_1_adds_one_of_the_largest_unit(tiny_catalog):
    # 20 req/s, flat out, H100 $4 (10 req/s), L4 $1.5 (2 req/s).
    # Without N+1: 2 H100 = $8/h (1 H100 + 5 L4 = $11.5, 10 L4 = $15).
    # N+1 (capacity - largest unit >= 20): 3 H100: 30 - 10 = 20 -> $12/h; 2 H100 + 5 L4:
    # 30 - 10 = 20 -> $15.5; 1 H100 + 10 L4: $19; 11 L4: 22 - 2 = 20 -> $16.5.
    # So N+1 adds exactly one H100: $12 x 730 = $8,760.
    cat = tiny_catalog([H1, l4_at(1.5)])
    base = solve_problem(problem([serve(20)]), cat)
    assert units(base) == {"acme/us-east/h1": 2}
    plan = solve_problem(problem([serve(20, redundancy="n_plus_1")]), cat)
    assert check(plan, N_PLUS_1_CHECK) == (True, "1 checked")
    assert units(plan) == {"acme/us-east/h1": 3}
    assert plan.total_cost_usd == pytest.approx(12.0 * HOURS)
    assert any(b.family == "n_plus_1" for b in plan.binding)


def test_n_plus_1_prefers_small_units_when_they_lose_less(tiny_catalog):
    # Same 20 req/s with L4 at $1 (2 req/s). Without N+1: 2 H100 = $8/h.
    # N+1: h H100 and a L4 need 10h + 2a - (10 if h else 2) >= 20:
    #   h=0: 2a >= 22 -> 11 L4 = $11;  h=1: a=10 -> $14;  h=2: a=5 -> $13;  h=3: $12.
    # Adding one more H100 ($12) is not the cheapest: 11 L4 = $11 x 730 = $8,030.
    cat = tiny_catalog([H1, l4_at(1.0)])
    plan = solve_problem(problem([serve(20, redundancy="n_plus_1")]), cat)
    assert check(plan, N_PLUS_1_CHECK) == (True, "1 checked")
    assert units(plan) == {"acme/us-east/l4": 11}
    assert plan.total_cost_usd == pytest.approx(11.0 * HOURS)


def test_n_plus_1_with_two_unit_sizes_picks_the_cheaper_mix(tiny_catalog):
    # 25 req/s, flat out, H100 $4 (10 req/s), L4 $1.2 (2 req/s).
    # Without N+1: 2 H100 + 3 L4 = $11.6/h (3 H100 $12; 1 H100 + 8 L4 $13.6).
    # N+1 with h >= 1 H100: 10(h - 1) + 2a >= 25; L4 only: 2(a - 1) >= 25.
    #   h=1: a=13 -> $19.6; h=2: a=8 -> $17.6; h=3: a=3 -> $15.6; h=4: a=0 -> $16;
    #   L4 only: a=14 -> $16.8. Optimum 3 H100 + 3 L4 = $15.6 x 730 = $11,388.
    cat = tiny_catalog([H1, l4_at(1.2)])
    base = solve_problem(problem([serve(25)]), cat)
    assert units(base) == {"acme/us-east/h1": 2, "acme/us-east/l4": 3}
    plan = solve_problem(problem([serve(25, redundancy="n_plus_1")]), cat)
    assert check(plan, N_PLUS_1_CHECK) == (True, "1 checked")
    assert units(plan) == {"acme/us-east/h1": 3, "acme/us-east/l4": 3}
    assert plan.total_cost_usd == pytest.approx(15.6 * HOURS)


def test_n_plus_1_and_utilisation_together_with_min_units(tiny_catalog):
    # 24 req/s at the 0.8 default -> 30 req/s of capacity; N+1 on H100s: 10(h - 1) >= 30
    # -> h = 4. min_units 6 then asks for 6 units: 4 H100 + 2 L4 ($1.5) = $19/h beats
    # 6 H100 ($24) and keeps N+1 (40 + 4 - 10 = 34 >= 30).
    cat = tiny_catalog([H1, l4_at(1.5)])
    p = problem([default_utilisation(24, redundancy="n_plus_1")])
    assert units(solve_problem(p, cat)) == {"acme/us-east/h1": 4}
    p6 = problem([default_utilisation(24, redundancy="n_plus_1", min_units=6)])
    plan = solve_problem(p6, cat)
    assert check(plan, N_PLUS_1_CHECK) == (True, "1 checked")
    assert check(plan, "redundancy") == (True, "1 checked")
    assert units(plan) == {"acme/us-east/h1": 4, "acme/us-east/l4": 2}
    assert plan.total_cost_usd == pytest.approx(19.0 * HOURS)


def test_verifier_rejects_a_plan_that_violates_n_plus_1(tiny_catalog):
    # The N+1 plan of 20 req/s is 3 H100 (30 req/s). With one unit fewer (cost, CO2e and
    # totals kept consistent) 2 H100 still serve 20 req/s, so only N+1 can catch it:
    # 20 - 10 = 10 < 20 req/s (2,000 tokens/s needed, 1,000 left).
    cat = tiny_catalog([H1, l4_at(1.5)])
    p = problem([serve(20, redundancy="n_plus_1")])
    plan = solve_problem(p, cat)
    assert all(c.ok for c in verify_plan(plan, p, cat))
    (item,) = [i for i in plan.line_items if i.item == "rent"]
    fewer = item.model_copy(
        update={
            "units": 2.0,
            "accelerators": 2.0,
            "cost_usd": item.cost_usd * 2 / 3,
            "co2e_t": item.co2e_t * 2 / 3,
            "capacity_tokens_per_s": item.capacity_tokens_per_s * 2 / 3,
            "bucket_requests_per_s": {0: 20.0},  # both units busy on the 20 req/s
            # the guard's figures (the default guard) follow the cost, as the solver's would
            "guarded_cost_usd": (item.guarded_cost_usd or 0.0) * 2 / 3,
        }
    )
    bad = plan.model_copy(
        update={
            "line_items": [fewer],
            "total_cost_usd": fewer.cost_usd,
            "guarded_total_usd": fewer.guarded_cost_usd,
            "total_co2e_t": fewer.co2e_t,
            "cash_flow": [],  # the edit leaves only N+1 to catch, not the monthly sums
        }
    )
    bad = with_unit_costs(bad, p)  # nor the unit costs
    failed = {c.name for c in verify_plan(bad, p, cat) if not c.ok}
    assert failed == {N_PLUS_1_CHECK}


@pytest.mark.parametrize(
    ("budget_usd", "expected_units", "expected_served"),
    [
        # $2,920: one H100 ($4 x 730 h) alone serves nothing under N+1 (losing it leaves 0);
        # two L4s ($1.5 x 730 = $1,095 each, $2,190) serve 2 x 2 - 2 = 2 of 20 req/s: 10%.
        (2920, {"acme/us-east/l4": 2}, 0.10),
        # $5,840: two H100s serve 2 x 10 - 10 = 10 req/s (50%); five L4s ($5,475) only
        # 4 x 2 = 8, one H100 + two L4s ($5,110) 14 - 10 = 4.
        (5840, {"acme/us-east/h1": 2}, 0.50),
    ],
)
def test_max_served_keeps_n_plus_1(tiny_catalog, budget_usd, expected_units, expected_served):
    # Shortfall allowed: N+1 covers what is served (capacity less the largest unit >=
    # served demand), so the budget buys what still serves with a unit lost.
    cat = tiny_catalog([H1, l4_at(1.5)])
    p = problem([serve(20, redundancy="n_plus_1")], budget_usd=budget_usd, objective="max_served")
    plan = solve_problem(p, cat)
    assert units(plan) == expected_units
    assert plan.served_fraction["chat"] == pytest.approx(expected_served, abs=1e-6)


def test_the_verifier_refuses_service_a_lost_unit_would_take(tiny_catalog):
    # The $2,920 plan above claiming one H100 serving half the demand: the verifier
    # recomputes 0% servable with the H100 lost, so the claim fails.
    cat = tiny_catalog([H1, l4_at(1.5)])
    p = problem([serve(20, redundancy="n_plus_1")], budget_usd=5840, objective="max_served")
    plan = solve_problem(p, cat)
    item = next(i for i in plan.line_items if i.units > 0)
    bad = plan.model_copy(
        update={
            "line_items": [item.model_copy(update={"units": 1})],
            "served_fraction": {"chat": 0.5},
        }
    )
    failed = {c.name for c in verify_plan(bad, p, cat) if not c.ok}
    assert "served within N+1 (max_served)" in failed


@pytest.mark.parametrize("seed", range(12))
def test_n_plus_1_matches_brute_force(tiny_catalog, seed):
    # Random shapes, prices and caps; the MIP's optimum equals the cheapest unit vector
    # whose capacity minus its largest unit in use meets demand / 0.8.
    rng = random.Random(1000 + seed)
    shapes = [
        ("h1", "h100-sxm", 1, 10.0),
        ("h2", "h100-sxm", 2, 20.0),
        ("l1", "l4", 1, 2.0),
        ("l4x", "l4", 4, 8.0),
    ]
    cases, offerings = [], []
    for name, acc, n, rps in rng.sample(shapes, rng.randint(2, 4)):
        price = round(rng.uniform(0.5, 10.0), 2)
        cap = rng.randint(1, 5)
        cases.append({"price": price, "rps": rps, "cap": cap})
        offerings.append(offering(name, acc, n, price, cap=cap, nvlink=acc != "l4"))
    demand = round(rng.uniform(1.0, 30.0), 1)
    expected = _brute_force(cases, demand / 0.8, HOURS, n_plus_1=True)
    p = problem([default_utilisation(demand, redundancy="n_plus_1")])
    cat = tiny_catalog(offerings)
    if expected is None:
        with pytest.raises(InfeasibleError):
            solve_problem(p, cat, explain=False)
    else:
        plan = solve_problem(p, cat)
        assert check(plan, N_PLUS_1_CHECK) == (True, "1 checked")
        assert plan.total_cost_usd == pytest.approx(expected, rel=1e-6)


def test_n_plus_1_families_are_registered():
    for family in ("n_plus_1", "largest_unit", "unit_class"):
        assert FAMILIES[family].dual_unit


# ---------------------------------------------------------------- the seed

SEED = ROOT / "problems" / "seed-2m-13b.yaml"


def test_seed_serving_meets_peak_over_max_utilisation_with_n_plus_1(seed_plan):
    # 50,000 users x 10 requests x 400 output tokens / 86,400 s = 2,314.8 tokens/s on
    # average, x 3 peak = 6,944.4, / 0.8 = 8,680.6 tokens/s: in every serving period the
    # plan's capacity without its largest unit must reach it.
    p = load_problem(SEED)
    w = next(w for w in p.workloads if w.name == "chat-13b")
    assert w.n_plus_1 and w.max_utilisation == 0.8
    plan = seed_plan
    need_tps = 50_000 * 10 * 400 / 86_400 * 3 / 0.8
    assert need_tps == pytest.approx(8680.56, abs=0.01)
    for period in ("m04-15", "m16-27", "m28-36"):
        lines = [
            i
            for i in plan.line_items
            if i.workload == "chat-13b" and i.period == period and i.item in {"rent", "use"}
        ]
        total = sum(i.capacity_tokens_per_s for i in lines)
        largest = max(i.capacity_tokens_per_s / i.units for i in lines)
        assert total - largest >= need_tps * (1 - 1e-9), period
    assert next(c for c in plan.checks if c.name == N_PLUS_1_CHECK).ok


# ---------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("max_utilisation", 0, "greater than 0"),
        ("max_utilisation", 1.5, "less than or equal to 1"),
        ("max_utilisation", "x", "valid number"),
        ("redundancy", "n_plus_2", "'n_plus_1'"),
        ("redundancy", 0, "whole number of serving units >= 1"),
        ("redundancy", True, "whole number of serving units >= 1"),
        ("min_units", 0, "greater than or equal to 1"),
    ],
)
def test_bad_headroom_values_are_refused(field, value, words):
    with pytest.raises(ProcureError) as exc:
        problem([serve(20, **{field: value})])
    assert exc.value.field.endswith(f"(chat).{field}")
    assert words in str(exc.value)


def test_redundancy_and_min_units_together_are_refused():
    with pytest.raises(ProcureError, match="keep min_units"):
        problem([serve(20, redundancy=2, min_units=3)])


def test_shares_summing_to_0_99_are_refused():
    # 0.5 + 0.49 = 0.99: 1% of the requests would silently vanish from the demand.
    mix = [
        {"prompt_tokens": 100, "output_tokens": 100, "share": 0.5},
        {"prompt_tokens": 400, "output_tokens": 100, "share": 0.49},
    ]
    with pytest.raises(ProcureError) as exc:
        problem([serve(20, traffic_mix=mix, measured_throughput_rps={"h100-sxm": [10, 5]})])
    message = str(exc.value)
    assert "sum to 0.99" in message and "1% of the demand would go unserved" in message
    assert "+0.01" in message  # the fix: the change that makes them sum to 1


def test_shares_within_1e_6_of_one_are_accepted():
    # 0.5 + 0.5000005 = 1.0000005: within 1e-6 (rounding), accepted.
    mix = [
        {"prompt_tokens": 100, "output_tokens": 100, "share": 0.5},
        {"prompt_tokens": 400, "output_tokens": 100, "share": 0.5000005},
    ]
    p = problem([serve(20, traffic_mix=mix, measured_throughput_rps={"h100-sxm": [10, 5]})])
    assert len(p.workloads[0].traffic_mix) == 2


def test_shipped_traffic_mix_sums_to_one_and_loads():
    p = load_problem(ROOT / "problems" / "traffic-mix-measured.yaml")
    total = sum(b.share for b in p.workloads[0].traffic_mix)
    assert abs(total - 1.0) <= 1e-6


def test_redundancy_two_still_means_two_units():
    # Existing files keep working: redundancy: 2 is the minimum unit count, no N+1.
    w = problem([serve(5, redundancy=2)]).workloads[0]
    assert (w.min_serving_units, w.n_plus_1) == (2, False)


def test_schema_describes_the_new_fields():
    res = CliRunner().invoke(app, ["schema"])
    schema = json.loads(res.stdout)
    fields = schema["$defs"]["InferenceWorkload"]["properties"]
    assert "max_utilisation" in fields["max_utilisation"]["description"]
    assert fields["max_utilisation"]["default"] == 0.8
    assert "n_plus_1" in fields["redundancy"]["description"]
    assert "serving units" in fields["min_units"]["description"]
