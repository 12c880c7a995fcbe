"""Break-even answers the LP relaxation gives before any MIP (issue 50: the capped seed's
three DGX classes took 6.3 s of MIP solves to say that no price brings them in).

The tiny world of test_sensitivity.py: H1 in us-east ($4/h, 10 requests/s, 0.306144 kg
CO2e per instance-hour) and H1eu in eu-north ($5/h, 10 requests/s, 0.033984 kg), 200
requests/s over one month (730 h), on demand. Worked by hand: 20 units serve it; the
least CO2e is 20 H1eu, 20 x 730 x 0.033984 kg = 496.17 kg (0.4962 t), $73,000. Under a
cap of 0.4962 t that is the plan, and H1 cannot enter at any price: one H1 in place of
one H1eu adds 730 x (0.306144 - 0.033984) = 198.7 kg, and even the LP relaxation, which
may split units, has at least one whole H1 (the row that requires the pool) and 19 more
units of capacity, 730 x (0.306144 + 19 x 0.033984) = 694.9 kg > 496.2 kg: no plan.
"""

from __future__ import annotations

import pytest

from conftest import H1, offering, problem, serve
from solver.analyses.sensitivity import break_even_prices
from solver.analyses.sensitivity.warm import Warm
from solver.core.backends import HighsSession, SolveOptions
from solver.core.compile import compile_problem
from solver.core.model import build_model
from solver.solve import optimise

EU = offering("h1eu", "h100-sxm", 1, 5.0, region="eu-north")
US = "acme/us-east/h1#on_demand"


def _capped(tiny_catalog):
    p = problem([serve(200)], carbon_cap_tco2e=0.4962)
    compiled = compile_problem(p, tiny_catalog([H1, EU]), prune_dominated=False)
    return optimise(compiled, build_model(compiled), solver="highs", options=SolveOptions())


def test_a_pool_no_plan_can_use_is_answered_by_the_lp(tiny_catalog, monkeypatch):
    sol = _capped(tiny_catalog)
    assert sol.result.objective == pytest.approx(73_000, rel=1e-9)  # 20 H1eu x $5 x 730 h
    mips = []
    solve = HighsSession.solve

    def counted(self, options, start=None):
        mips.append(self)
        return solve(self, options, start)

    monkeypatch.setattr(HighsSession, "solve", counted)
    [row] = break_even_prices(sol, pools=[US])
    assert (row.break_even_price, row.note) == (None, "no feasible plan can use it at this price")
    assert row.solves == 0 and mips == []  # the LP at price 0 answered: no MIP solve
    # the MIP search, told nothing by the LP, gives the same answer after its solves
    monkeypatch.setattr(Warm, "screened", lambda self, target: "")
    [searched] = break_even_prices(sol, pools=[US])
    assert (searched.break_even_price, searched.note) == (row.break_even_price, row.note)
    assert searched.solves >= 1 and mips


def test_the_lp_leaves_a_pool_that_can_enter_to_the_search(tiny_catalog):
    # without the cap H1 is the plan (20 x $4 x 730 = $58,400) and H1eu enters below $4/h,
    # where it ties H1: the LP at price 0 ($0 for H1eu) is below the target, so the search
    # runs as before and finds the hand price
    p = problem([serve(200)])
    compiled = compile_problem(p, tiny_catalog([H1, EU]), prune_dominated=False)
    sol = optimise(compiled, build_model(compiled), solver="highs", options=SolveOptions())
    assert sol.result.objective == pytest.approx(58_400, rel=1e-9)
    [row] = break_even_prices(sol, pools=["acme/eu-north/h1eu#on_demand"])
    assert row.break_even_price == pytest.approx(4.0, rel=1e-6) and row.note == ""
    assert row.solves >= 1
