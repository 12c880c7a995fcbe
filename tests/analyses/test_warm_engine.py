"""The warm engine (issue 50, Build 1): a variant answered by it costs what a cold solve
of the same variant costs and is verified; a proof carries over only where it holds; a
change that can make a pruned option optimal, or that moves the pruning's bounds, is
compiled afresh.

Worked by hand on a tiny problem: one H100 serves 10 requests/s (measured), 200
requests/s at max_utilisation 1 need 20 units for one month (730 h). Offerings: acme
us-east $4/h, acme eu-north $5/h, beta us-east $4.50/h (price bands 0, so the guarded
prices are the catalog's and the objective is the plan's cost).

- base: 20 x 4 x 730 = $58,400 at acme us-east; beta us-east is pruned (acme us-east
  serves the same units for less, with room: availability 100 >= 20);
- acme x 1.2 ($4.80/h): the pruned beta us-east is now the cheapest, 20 x 4.5 x 730 =
  $65,700 (a structure pruned at the base's prices would miss it and answer $70,080);
- acme x 0.5: 20 x 2 x 730 = $29,200;
- regions [eu-north]: 20 x 5 x 730 = $73,000;
- demand x 1.5: 30 units, 30 x 4 x 730 = $87,600.
"""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from conftest import TINY_REGIONS, offering, serve, write_catalog
from solver.analyses.engine import WarmEngine
from solver.analyses.engine.delta import Target
from solver.analyses.engine.inherit import still_proven
from solver.errors import InfeasibleError
from solver.solve import solve_verified
from solver.web.workspace import inputs_for

HOURS = 730.0
PROBLEM = {
    "name": "tiny-warm",
    "horizon_months": 1,
    "modes": ["on_demand"],
    # compute only: the budgets and costs below are worked on compute (all in by default
    # would add staff and egress lines, held by the budget too)
    "costs": "none",
    "workloads": [serve(200)],
}


@pytest.fixture(scope="module")
def catalog_dir(tmp_path_factory) -> str:
    offerings = [
        offering("h1", "h100-sxm", 1, 4.0),
        offering("h1eu", "h100-sxm", 1, 5.0, region="eu-north"),
        offering("h1b", "h100-sxm", 1, 4.5, provider="beta"),
    ]
    regions = [*TINY_REGIONS, {**TINY_REGIONS[0], "provider": "beta"}]
    return str(write_catalog(tmp_path_factory.mktemp("cat"), offerings, regions=regions))


def _variant(catalog_dir: str, changes: dict, problem: dict = PROBLEM):
    return inputs_for(yaml.safe_dump(problem), "v", changes, catalog_dir)


def _engine(catalog_dir: str, problem: dict = PROBLEM) -> WarmEngine:
    base = _variant(catalog_dir, {}, problem)
    return WarmEngine(base.problem, base.catalog)


def _answer(engine: WarmEngine, catalog_dir: str, changes: dict, problem: dict = PROBLEM):
    """The engine's answer to ``changes``, after checking it against a cold solve."""
    v = _variant(catalog_dir, changes, problem)
    answer = engine.solve(v.problem, v.catalog, v.multipliers)
    cold, _ = solve_verified(v.problem, v.catalog)
    assert answer.plan.verified and cold.verified
    assert answer.plan.total_cost_usd == pytest.approx(cold.total_cost_usd, abs=0.01)
    return answer


def test_the_base_is_solved_in_place_then_budgets_carry_its_proof(catalog_dir):
    engine = _engine(catalog_dir)
    base = _answer(engine, catalog_dir, {})
    assert (base.how, base.plan.total_cost_usd) == ("warm", pytest.approx(20 * 4 * HOURS))
    # $60,000 and $58,400 hold the plan ($58,400): a tighter feasible set, the same optimum
    for budget in (60_000, 58_400):
        answer = _answer(engine, catalog_dir, {"budget_usd": budget})
        assert (answer.how, answer.plan.total_cost_usd) == ("carried", pytest.approx(58_400))
    # $50,000 < 20 x $4 x 730: the budget row is changed in place and the solve says no plan
    v = _variant(catalog_dir, {"budget_usd": 50_000})
    with pytest.raises(InfeasibleError):
        engine.solve(v.problem, v.catalog)
    with pytest.raises(InfeasibleError):
        solve_verified(v.problem, v.catalog)
    assert engine.base is not None
    budget_row = next(r for r, row in enumerate(engine.base.model.rows) if row.family == "budget")
    assert engine.base.now.row_upper[budget_row] == pytest.approx(50_000)


def test_a_looser_budget_carries_where_the_row_is_the_objectives_cost(catalog_dir):
    """Base budget $60,000 (plan $58,400), variant $100,000: a plan the base refused costs
    more than $60,000 (the budget row's coefficients are the objective's), so no new plan
    beats $58,400; a carried answer."""
    problem = {**PROBLEM, "budget_usd": 60_000}
    engine = _engine(catalog_dir, problem)
    assert _answer(engine, catalog_dir, {}, problem).how == "warm"
    answer = _answer(engine, catalog_dir, {"budget_usd": 100_000}, problem)
    assert (answer.how, answer.plan.total_cost_usd) == ("carried", pytest.approx(58_400))


def test_prices_that_can_make_a_pruned_option_optimal_are_compiled_afresh(catalog_dir):
    engine = _engine(catalog_dir)
    _answer(engine, catalog_dir, {})
    compiles = engine.compiles
    # beta unused by the plan and dearer: the proof carries (no compile, no solve)
    answer = _answer(
        engine, catalog_dir, {"price_multipliers": [{"provider": "beta", "factor": 1.2}]}
    )
    assert (answer.how, answer.plan.total_cost_usd) == ("carried", pytest.approx(58_400))
    # acme x 1.2: beta us-east, pruned in the base, is the optimum (module docstring)
    assert engine.base is not None
    assert set(engine.base.compiled.options["provider"]) == {"acme"}  # beta pruned
    up = {"price_multipliers": [{"provider": "acme", "factor": 1.2}]}
    answer = _answer(engine, catalog_dir, up)
    assert (answer.how, answer.plan.total_cost_usd) == ("fresh", pytest.approx(20 * 4.5 * HOURS))
    assert {i.provider for i in answer.plan.line_items if i.units > 0} == {"beta"}
    down = {"price_multipliers": [{"provider": "acme", "factor": 0.5}]}
    answer = _answer(engine, catalog_dir, down)
    assert (answer.how, answer.plan.total_cost_usd) == ("fresh", pytest.approx(20 * 2 * HOURS))
    assert engine.compiles > compiles


def test_left_out_providers_and_regions(catalog_dir):
    engine = _engine(catalog_dir)
    _answer(engine, catalog_dir, {})
    answer = _answer(engine, catalog_dir, {"providers": ["acme"]})  # beta was unused
    assert (answer.how, answer.plan.total_cost_usd) == ("carried", pytest.approx(58_400))
    answer = _answer(engine, catalog_dir, {"regions": ["eu-north"]})  # the plan's region out
    assert (answer.how, answer.plan.total_cost_usd) == ("fresh", pytest.approx(20 * 5 * HOURS))


def test_a_demand_factor_is_a_fresh_compile_and_other_changes_are_cold(catalog_dir):
    engine = _engine(catalog_dir)
    _answer(engine, catalog_dir, {})
    compiles = engine.compiles
    answer = _answer(engine, catalog_dir, {"demand_factor": 1.5})
    assert (answer.how, answer.kind) == ("fresh", "demand")
    assert answer.plan.total_cost_usd == pytest.approx(30 * 4 * HOURS)  # $87,600
    # every option was compiled once at the base's answer (its budget row checked against
    # the whole problem's: solver/analyses/engine/monotone.py); the demand factor reuses it
    assert engine.compiles == compiles == 2
    # a capacity margin is no kind the engine changes in place: solved cold, the same plan
    # sized 20 x 1.25 = 25 units, 25 x 4 x 730 = $73,000
    answer = _answer(engine, catalog_dir, {"demand_headroom": 0.25})
    assert (answer.how, answer.kind) == ("cold", "other")
    assert answer.plan.total_cost_usd == pytest.approx(25 * 4 * HOURS)


def _target(cost, rows, row_upper, upper=(9.0, 9.0)) -> Target:
    n = len(cost)
    return Target(
        cost=np.asarray(cost, float),
        offset=0.0,
        lower=np.zeros(n),
        upper=np.asarray(upper, float),
        row_lower=np.array([1.0, -np.inf]),
        row_upper=np.asarray(row_upper, float),
        coefs=rows,
        columns=np.arange(n),
    )


def test_a_proof_carries_only_where_the_argument_holds():
    """min 3a + 5b, a + b >= 1 (row 0), a budget 3a + 5b <= B (row 1): x = (1, 0), cost 3,
    proven at B = 4."""
    cover, budget = {0: 1.0, 1: 1.0}, {0: 3.0, 1: 5.0}
    ref = _target([3, 5], [cover, budget], [np.inf, 4.0])
    x = np.array([1.0, 0.0])
    assert still_proven(ref, x, _target([3, 5], [cover, budget], [np.inf, 3.0]))  # tighter
    assert not still_proven(ref, x, _target([3, 5], [cover, budget], [np.inf, 2.0]))  # x out
    # looser, but a plan refused at B = 4 costs more than 4 >= 3: still x
    assert still_proven(ref, x, _target([3, 5], [cover, budget], [np.inf, 10.0]))
    # b dearer (unused): still x; b cheaper than a: b = 1 costs 2 < 3, not x
    assert still_proven(ref, x, _target([3, 6], [cover, {0: 3.0, 1: 6.0}], [np.inf, 4.0]))
    assert not still_proven(ref, x, _target([3, 2], [cover, {0: 3.0, 1: 2.0}], [np.inf, 4.0]))
    # a dearer: the plan's own cost moves, no proof
    assert not still_proven(ref, x, _target([4, 5], [cover, {0: 4.0, 1: 5.0}], [np.inf, 4.0]))
    # a wider bound on b: a looser set that the budget argument does not cover
    assert not still_proven(ref, x, _target([3, 5], [cover, budget], [np.inf, 4.0], (9, 12)))


def test_a_proof_carries_along_more_demand_only_where_the_plan_still_serves(catalog_dir):
    """docs/concepts/warm-engine.md, "A proof carried along more demand or dearer prices".
    One H100 serves 10 requests/s (module docstring), $4/h at acme us-east:

    - demand x 1.42: 284 requests/s, ceil(28.4) = 29 units, 29 x 4 x 730 = $84,680 (solved);
    - x 1.45: 290 requests/s, still 29 units (290 >= 290): the plan of x 1.42 serves it at
      the same cost, and no plan of x 1.45 costs less than x 1.42's optimum: carried;
    - x 1.46: 292 requests/s need 30 units ($87,600): the 29 units do not serve it, so the
      rule must not carry (solved);
    - x 1.3: 260 requests/s, 26 units ($75,920): the plans of x 1.42 and x 1.45 serve it
      but are proven for more demand, not less; the base (x 1, 20 units) is easier but
      does not serve it: the rule must not carry (solved)."""
    engine = _engine(catalog_dir)
    _answer(engine, catalog_dir, {})
    first = _answer(engine, catalog_dir, {"demand_factor": 1.42})
    assert (first.how, first.plan.total_cost_usd) == ("fresh", pytest.approx(29 * 4 * HOURS))
    more = _answer(engine, catalog_dir, {"demand_factor": 1.45})
    assert (more.how, more.plan.total_cost_usd) == ("carried", pytest.approx(29 * 4 * HOURS))
    over = _answer(engine, catalog_dir, {"demand_factor": 1.46})
    assert (over.how, over.plan.total_cost_usd) == ("fresh", pytest.approx(30 * 4 * HOURS))
    less = _answer(engine, catalog_dir, {"demand_factor": 1.3})
    assert (less.how, less.plan.total_cost_usd) == ("fresh", pytest.approx(26 * 4 * HOURS))


def test_a_proof_carries_along_dearer_prices_only_where_the_plan_costs_the_same(catalog_dir):
    """acme x 0.5: 20 units at $2/h, 20 x 2 x 730 = $29,200 (solved). Then

    - acme x 0.5 and beta x 1.1: beta's prices only rise and the plan uses none of them,
      so it costs the same: carried;
    - acme x 0.6: dearer than x 0.5, but the plan is acme's, now 20 x 2.4 x 730 =
      $35,040: it does not cost the same, so the rule must not carry (solved; the same
      units are the optimum);
    - acme x 0.55 after that: easier than x 0.6 (no carry from it), and x 0.5's plan
      costs 20 x 2.2 x 730 = $32,120 there, not $29,200: must not carry (solved)."""
    engine = _engine(catalog_dir)
    _answer(engine, catalog_dir, {})
    half = [{"provider": "acme", "factor": 0.5}]
    answer = _answer(engine, catalog_dir, {"price_multipliers": half})
    assert (answer.how, answer.plan.total_cost_usd) == ("fresh", pytest.approx(20 * 2 * HOURS))
    beta_up = [*half, {"provider": "beta", "factor": 1.1}]
    answer = _answer(engine, catalog_dir, {"price_multipliers": beta_up})
    assert (answer.how, answer.plan.total_cost_usd) == ("carried", pytest.approx(29_200))
    for factor, usd in ((0.6, 20 * 2.4 * HOURS), (0.55, 20 * 2.2 * HOURS)):
        up = {"price_multipliers": [{"provider": "acme", "factor": factor}]}
        answer = _answer(engine, catalog_dir, up)
        assert (answer.how, answer.plan.total_cost_usd) == ("fresh", pytest.approx(usd))


def test_at_least_as_hard_is_more_demand_and_dearer_prices_nothing_else(catalog_dir):
    """The order the monotone carry needs (solver/analyses/engine/monotone.py): from demand
    x 1.2 with acme x 0.9, more demand or dearer acme is at least as hard; less demand,
    cheaper acme, or a budget changed besides, is not."""
    from solver.analyses.engine.monotone import Point, at_least_as_hard, no_harder

    def inputs(factor: float, acme: float, **more) -> tuple:
        changes = {
            "demand_factor": factor,
            "price_multipliers": [{"provider": "acme", "factor": acme}],
            **more,
        }
        v = _variant(catalog_dir, changes)
        return v.problem, v.catalog

    problem, catalog = inputs(1.2, 0.9)
    p = Point(problem, catalog, frozenset(), None, np.zeros(0), 0.0, None, None, True)  # type: ignore[arg-type]
    assert at_least_as_hard(p, *inputs(1.2, 0.9))  # the same variant
    assert at_least_as_hard(p, *inputs(1.3, 1.0))  # more demand, dearer acme
    assert not no_harder(p, *inputs(1.3, 1.0))  # and not the other way round
    assert no_harder(p, *inputs(1.1, 0.8))
    assert not at_least_as_hard(p, *inputs(1.3, 0.8))  # cheaper acme
    assert not at_least_as_hard(p, *inputs(1.1, 0.9))  # less demand
    # a budget is no monotone change here (the rule keeps the same limits)
    assert not at_least_as_hard(p, *inputs(1.3, 0.9, budget_usd=1e6))
