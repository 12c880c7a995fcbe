"""Break-even searches proved period by period (issue 28, fifth stop).

The tiny world of test_sensitivity.py (an H100 instance H1 at $4/h serves 10 requests/s,
an L4 at $1/h 2 requests/s, an L4b in eu-north at $1.20/h 2 requests/s), over two plan
periods of 1 and 2 months (730 and 1,460 hours) with 25 requests/s in both.

Worked by hand: each period is the one-period problem of
``test_break_even_prices_by_hand`` with its costs times its hours, so the optimum is
2 H1 + 3 L4 = $11/h in both, $11 x 2,190 h = $24,090, and the break-evens are that
test's per-hour prices:

- H1 leaves above p: without it 13 L4 ($13/h); with it the best per-hour plan is
  min(p + 8, 2p + 3, 3p), and 2p + 3 = 13 at p = $5.00 (the same in each period, so
  using it in one period or both changes nothing).
- L4 leaves above q: without it 2 H1 + 3 L4b = $11.60/h; 8 + 3q = 11.6 at q = $1.20.
- L4b enters below $1.00 (it ties L4 there).

The searches' last steps, "no plan using the pool beats the target", must be proved by
the split (:class:`solver.analyses.sensitivity._PeriodSplit`), not by the whole model,
and the prices must equal the whole model's to 1e-9.
"""

from __future__ import annotations

import pytest

from conftest import H1, L4, offering, problem, serve
from solver.analyses import sensitivity
from solver.analyses.sensitivity import break_even_prices
from solver.core.backends import SolveOptions
from solver.core.compile import compile_problem
from solver.core.model import build_model
from solver.solve import optimise

PERIODS = [{"name": "a", "months": 1}, {"name": "b", "months": 2}]
BY_HAND = {"acme/us-east/h1": 5.0, "acme/us-east/l4": 1.2, "acme/eu-north/l4b": 1.0}


def _solution(tiny_catalog):
    l4b = offering("l4b", "l4", 1, 1.2, region="eu-north", nvlink=False)
    p = problem([serve(25)], horizon_months=3, periods=PERIODS)
    compiled = compile_problem(p, tiny_catalog([H1, L4, l4b]), prune_dominated=False)
    return optimise(compiled, build_model(compiled), solver="highs", options=SolveOptions())


def test_two_periods_break_even_by_hand_proved_period_by_period(tiny_catalog, monkeypatch):
    sol = _solution(tiny_catalog)
    assert sol.result.objective == pytest.approx(11.0 * 3 * 730, rel=1e-9)  # $24,090
    answers = []
    below = sensitivity._PeriodSplit.below

    def spy(self, *args):
        answers.append(below(self, *args))
        return answers[-1]

    monkeypatch.setattr(sensitivity._PeriodSplit, "below", spy)
    rows = {b.offering: b for b in break_even_prices(sol)}
    assert {k: rows[k].break_even_price for k in BY_HAND} == pytest.approx(BY_HAND, rel=1e-6)
    assert rows["acme/eu-north/l4b"].direction == "enters below"
    # one proof ("none below the target") by the split for each of the three searches,
    # and nothing left to the whole model (False)
    assert sum(a is None for a in answers) == 3
    assert not any(a is False for a in answers)


def test_the_split_gives_the_whole_models_prices(tiny_catalog, monkeypatch):
    sol = _solution(tiny_catalog)
    split = {b.pool_id: b for b in break_even_prices(sol)}
    monkeypatch.setattr(sensitivity._Warm, "_split", lambda self: False)
    whole = {b.pool_id: b for b in break_even_prices(sol)}
    assert set(split) == set(whole) and len(whole) == 3
    for pool, b in whole.items():
        assert split[pool].break_even_price == pytest.approx(b.break_even_price, rel=1e-9)
        assert (split[pool].note, split[pool].same_as) == (b.note, b.same_as)


def test_one_period_keeps_the_whole_model(tiny_catalog, monkeypatch):
    # One period: (A) would be the whole model, so no split is built (it only added
    # solves on the shipped one-period problems); the prices are the one-period test's.
    l4b = offering("l4b", "l4", 1, 1.2, region="eu-north", nvlink=False)
    compiled = compile_problem(
        problem([serve(25)]), tiny_catalog([H1, L4, l4b]), prune_dominated=False
    )
    sol = optimise(compiled, build_model(compiled), solver="highs", options=SolveOptions())
    built = []
    monkeypatch.setattr(sensitivity._PeriodSplit, "__init__", lambda *a: built.append(a))
    rows = {b.offering: b.break_even_price for b in break_even_prices(sol)}
    assert rows == pytest.approx(BY_HAND, rel=1e-6)
    assert built == []
