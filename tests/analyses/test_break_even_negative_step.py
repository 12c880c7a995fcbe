"""The exact break-even search never solves at a negative price (issue 50: on
traffic-mix-measured a Newton step from the current price landed at -$0.024/h for an AWS
pool not in the plan, and the MIP with the pool paid to be used ran for minutes).

f(p), the least cost of a plan that uses the pool at price p, is nondecreasing in p (each
plan's cost is), so a step below 0 is taken at 0: f(0) above the target means the pool
enters at no positive price; else Newton goes on from 0, below the break-even.

The search runs on a stand-in for the solver (the plans listed by hand), so that the
prices it asks for are known:

- plan A uses 1 unit-hour of the pool and costs $100 besides it: 100 + p;
- plan B uses 10 unit-hours and costs $60 besides them: 60 + 10 p;
- the target (the plan's cost without the pool) is $95; the current price $5.

At $5, f = min(105, 110) = 105 with A (1 unit-hour): Newton's step is 5 + (95 - 105)/1 = -5.
At 0, f = 60 with B: the step is 0 + (95 - 60)/10 = 3.5, where B costs 60 + 35 = 95, the
target: the break-even is $3.50/h (A never gets to 95 at p >= 0). With plan A alone,
f(0) = 100 > 95: it enters at no positive price.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from solver.analyses.sensitivity import search
from solver.analyses.sensitivity.results import BreakEven


class _Plans:
    """A stand-in for the cold search's solver: the cheapest of the listed plans."""

    asked: list[float]

    def __init__(self, plans: list[tuple[float, float]]) -> None:
        self.plans = plans  # (cost besides the pool in USD, the pool's unit-hours)
        self.asked = []
        self.model = SimpleNamespace(variables=[0])
        self.slopes = SimpleNamespace(objective=np.array([1.0]))
        self.start = None
        self.holds_plan = False

    def require_pool(self) -> None:
        pass

    def solve_at(self, price: float, x) -> tuple[float, np.ndarray]:
        self.asked.append(price)
        cost, hours = min(self.plans, key=lambda plan: plan[0] + price * plan[1])
        return cost + price * hours, np.array([hours])


@pytest.fixture
def searched(monkeypatch):
    def run(plans: list[tuple[float, float]]):
        way = _Plans(plans)
        row = BreakEven(
            pool_id="p", provider="aws", region="r", offering="o", accelerator="a",
            mode="on_demand", in_plan=False, price_unit="USD/h", current_price=5.0,
            direction="enters below",
        )  # fmt: skip
        monkeypatch.setattr(search, "_unsearched", lambda *a: (row, 0))
        monkeypatch.setattr(search, "Cold", lambda *a: way)
        monkeypatch.setattr(search, "pool_vars", lambda model, pi: np.array([0]))
        got = search.break_even_for_pool(None, 95.0, "p", False, warm=False)
        return got, way.asked

    return run


def test_a_step_below_zero_is_taken_at_zero(searched):
    got, asked = searched([(100.0, 1.0), (60.0, 10.0)])
    assert got.break_even_price == pytest.approx(3.5)
    assert min(asked) >= 0.0  # before: the second solve was at -$5/h
    assert asked[:2] == [5.0, 0.0]


def test_above_the_target_at_zero_it_enters_at_no_positive_price(searched):
    got, asked = searched([(100.0, 1.0)])
    assert got.break_even_price is None
    assert got.note == "does not enter at any positive price"
    assert asked == [5.0, 0.0]
