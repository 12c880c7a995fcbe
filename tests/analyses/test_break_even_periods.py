"""Break-even searches proved period by period.

The tiny world of test_sensitivity.py (an H100 instance H1 at $4/h serves 10 requests/s,
an L4 at $1/h 2 requests/s, an L4b in eu-north at $1.20/h 2 requests/s), 25 requests/s
under N+1 (capacity less the largest unit in use >= 25, max_utilisation 1), over two plan
periods of 1 and 2 months (730 and 1,460 hours).

Worked by hand, per hour (each period is the same problem, its costs times its hours):

- L4 alone needs 2n - 2 >= 25, n = 14: $14/h, the optimum ($14 x 2,190 h = $30,660).
  With H1 in use the unit lost is an H1 (10): 10a + 2b >= 35, so a H1 and b L4 cost
  p + 13, 2p + 8, 3p + 3 or 4p (a = 1..4, at H1's price p).
- H1 enters below p where the least of those lines reaches 14: 3p + 3 = 14 at
  p = 11/3 = $3.6667 (there p + 13 = 16.67, 2p + 8 = 15.33, 4p = 14.67).
- L4 leaves above q: without it, 3 H1 + 3 L4b = $15.60/h (14 L4b = 16.80, 4 H1 = 16);
  with it, 3 H1 + 3 L4 = 12 + 3q = 15.6 at q = $1.20 (14q = 15.6 only at 1.114,
  and then 12 + 3q is already lower).
- L4b enters below r: one L4b among 14 units of 2 requests/s, 13 + r = 14 at r = $1.00.

The searches' last steps, "no plan using the pool beats the target", are proved by the
split (:class:`solver.analyses.sensitivity.period_split.PeriodSplit`), not by the whole model, and
the prices equal the whole model's to 1e-9. Without N+1 or with one period the split is
not built (it only added solves there); the prices are then those of
test_sensitivity.test_break_even_prices_by_hand ($5.00, $1.20, $1.00) and the above.
"""

from __future__ import annotations

import pytest

from conftest import H1, L4, offering, problem, serve
from solver.analyses.sensitivity import break_even_prices
from solver.analyses.sensitivity.period_split import PeriodSplit
from solver.analyses.sensitivity.warm import Warm
from solver.core.backends import SolveOptions
from solver.core.compile import compile_problem
from solver.core.model import build_model
from solver.solve import optimise

PERIODS = [{"name": "a", "months": 1}, {"name": "b", "months": 2}]
N_PLUS_1 = {"acme/us-east/h1": 11.0 / 3.0, "acme/us-east/l4": 1.2, "acme/eu-north/l4b": 1.0}
NO_SPARE = {"acme/us-east/h1": 5.0, "acme/us-east/l4": 1.2, "acme/eu-north/l4b": 1.0}


def _solution(tiny_catalog, *, spare: bool = True, periods=PERIODS):
    l4b = offering("l4b", "l4", 1, 1.2, region="eu-north", nvlink=False)
    extra = {"redundancy": "n_plus_1"} if spare else {}
    months = sum(p["months"] for p in periods) if periods else 1
    more = {"periods": periods} if periods else {}
    p = problem([serve(25, **extra)], horizon_months=months, **more)
    compiled = compile_problem(p, tiny_catalog([H1, L4, l4b]), prune_dominated=False)
    return optimise(compiled, build_model(compiled), solver="highs", options=SolveOptions())


def test_two_periods_break_even_by_hand_proved_period_by_period(tiny_catalog, monkeypatch):
    sol = _solution(tiny_catalog)
    assert sol.result.objective == pytest.approx(14.0 * 3 * 730, rel=1e-9)  # $30,660
    answers = []
    below = PeriodSplit.below

    def spy(self, *args):
        answers.append(below(self, *args))
        return answers[-1]

    monkeypatch.setattr(PeriodSplit, "below", spy)
    rows = {b.offering: b for b in break_even_prices(sol)}
    assert {k: rows[k].break_even_price for k in N_PLUS_1} == pytest.approx(N_PLUS_1, rel=1e-6)
    assert rows["acme/us-east/h1"].direction == "enters below"
    assert rows["acme/us-east/l4"].direction == "leaves above"
    # one proof ("none below the target") by the split for each of the three searches,
    # and nothing left to the whole model (False)
    assert sum(a is None for a in answers) == 3
    assert not any(a is False for a in answers)


def test_the_split_gives_the_whole_models_prices(tiny_catalog, monkeypatch):
    sol = _solution(tiny_catalog)
    split = {b.pool_id: b for b in break_even_prices(sol)}
    monkeypatch.setattr(Warm, "_split", lambda self: False)
    whole = {b.pool_id: b for b in break_even_prices(sol)}
    assert set(split) == set(whole) and len(whole) == 3
    for pool, b in whole.items():
        assert split[pool].break_even_price == pytest.approx(b.break_even_price, rel=1e-9)
        assert (split[pool].note, split[pool].same_as) == (b.note, b.same_as)


@pytest.mark.parametrize(
    ("spare", "periods", "by_hand"),
    [(True, None, N_PLUS_1), (False, PERIODS, NO_SPARE)],
    ids=["one period", "no N+1"],
)
def test_the_whole_model_where_the_split_does_not_pay(
    tiny_catalog, monkeypatch, spare, periods, by_hand
):
    sol = _solution(tiny_catalog, spare=spare, periods=periods)
    built = []
    monkeypatch.setattr(PeriodSplit, "__init__", lambda *a: built.append(a))
    rows = {b.offering: b.break_even_price for b in break_even_prices(sol)}
    assert rows == pytest.approx(by_hand, rel=1e-6)
    assert built == []


def _capped(tiny_catalog, share: float):
    """The two-period world under a carbon cap of ``share`` of the uncapped optimum's CO2e
    (its 14 L4 in us-east, 400 g/kWh): the cap binds, and a plan moves units to L4b in
    eu-north (40 g/kWh), a row over both periods that (A)'s split leaves out."""
    sol = _solution(tiny_catalog)
    co2e_t = sol.model.expressions["total_co2e_t"].value(sol.result.values)
    l4b = offering("l4b", "l4", 1, 1.2, region="eu-north", nvlink=False)
    p = problem([serve(25, redundancy="n_plus_1")], horizon_months=3, periods=PERIODS,
                carbon_cap_tco2e=share * co2e_t)  # fmt: skip
    compiled = compile_problem(p, tiny_catalog([H1, L4, l4b]), prune_dominated=False)
    capped = optimise(compiled, build_model(compiled), solver="highs", options=SolveOptions())
    assert capped.result.objective > sol.result.objective * (1 + 1e-6)  # the cap binds
    return capped


@pytest.mark.parametrize("share", [0.7, 0.4])
def test_under_a_binding_cap_the_split_gives_the_whole_models_prices(
    tiny_catalog, monkeypatch, share
):
    # a cap over both periods binds: the periods' plans of (A) together would break it and
    # the split could not tell, so it is not built (the cap row has a dual in the LP
    # relaxation: Warm._spanning_row_binds) and the whole model decides every step; the
    # prices are those of the search told not to split, to 1e-9 (docs/concepts/
    # sensitivity.md, "Proofs period by period")
    sol = _capped(tiny_catalog, share)
    answers = []
    below = PeriodSplit.below

    def spy(self, *args):
        answers.append(below(self, *args))
        return answers[-1]

    monkeypatch.setattr(PeriodSplit, "below", spy)
    split = {b.pool_id: b for b in break_even_prices(sol)}
    monkeypatch.setattr(Warm, "_split", lambda self: False)
    whole = {b.pool_id: b for b in break_even_prices(sol)}
    assert set(split) == set(whole) and len(whole) == 3
    for pool, b in whole.items():
        if b.break_even_price is None:
            assert split[pool].break_even_price is None and split[pool].note == b.note
        else:
            assert split[pool].break_even_price == pytest.approx(b.break_even_price, rel=1e-9)
    assert answers == []  # the split was never asked
