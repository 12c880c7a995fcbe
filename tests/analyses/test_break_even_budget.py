"""Break-even prices where the feasible set moves with the price (issue 34, item 2).

The tiny world of test_sensitivity.py: an H100 instance (H1, $4/h) serves 10 requests/s;
one period of one month = 730 hours. The chat workload asks 25 requests/s under
``objective: max_served`` with a $5,000 budget: one instance costs 730 x $4 = $2,920,
two would cost $5,840 > $5,000, so the plan runs one instance and serves 10 of the
25 requests/s; the budget binds.

Worked by hand: the only pool leaves the plan at the price where not even one instance
fits in the budget, 730 p = 5,000, p* = $6.849315/h (+71.2%). Below p* one instance
serves 10 requests/s (far better than none under max_served); above it no plan can use
the pool. Newton on the plan's fixed feasible set cannot see this: its step from $4/h
lands where the budget no longer admits a unit, and before issue 34 the report said
"no feasible plan can use it at this price" instead of the price.
"""

from __future__ import annotations

import pytest

from conftest import H1, problem, serve
from solver.analyses.sensitivity import break_even_for_pool, break_even_prices, with_pool_price
from solver.core.backends import SolveOptions
from solver.core.compile import compile_problem
from solver.core.model import build_model
from solver.solve import optimise

POOL = "acme/us-east/h1#on_demand"
P_STAR = 5_000.0 / 730.0  # $6.849315 per instance-hour


def _solved(cat, price: float | None = None):
    compiled = compile_problem(
        problem([serve(25)], objective="max_served", budget_usd=5_000), cat, prune_dominated=False
    )
    if price is not None:
        compiled = with_pool_price(compiled, POOL, price)
    return optimise(compiled, build_model(compiled), solver="highs", options=SolveOptions())


def _units(sol) -> float:
    v = sol.model.variables
    used = (v["kind"] == "x").to_numpy()
    return float(sol.result.values[used].sum())


@pytest.mark.parametrize("warm", [True, False])
def test_break_even_under_a_binding_budget_is_the_hand_price(tiny_catalog, warm):
    sol = _solved(tiny_catalog([H1]))
    assert _units(sol) == pytest.approx(1.0)  # one instance: the budget binds
    b = break_even_for_pool(sol.compiled, sol.result.objective, POOL, True, warm=warm)
    assert b.note == ""
    assert b.direction == "leaves above"
    assert b.break_even_price == pytest.approx(P_STAR, rel=1e-6)
    assert b.change_pct == pytest.approx(100 * (P_STAR - 4.0) / 4.0, rel=1e-5)  # +71.2%


def test_the_plan_flips_just_past_the_break_even(tiny_catalog):
    # 1% below p*: one instance still fits ($4,950 <= $5,000); 1% above: none does
    cat = tiny_catalog([H1])
    assert _units(_solved(cat, 0.99 * P_STAR)) == pytest.approx(1.0)
    assert _units(_solved(cat, 1.01 * P_STAR)) == pytest.approx(0.0)


def test_the_report_row_carries_the_price(tiny_catalog):
    [row] = break_even_prices(_solved(tiny_catalog([H1])))
    assert row.break_even_price == pytest.approx(P_STAR, rel=1e-6)
