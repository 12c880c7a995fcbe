"""Explained infeasibility: the relaxations, applied, make the problem feasible."""

from __future__ import annotations

import pytest

from conftest import H1, H8, HOURS, ROOT, offering, problem, serve, train
from conftest import training_problem as train_problem
from solver.core.compile import compile_problem
from solver.errors import InfeasibleError
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import load_problem
from solver.solve import solve_problem
from solver.trust.infeasibility import apply, explain_infeasibility

EU = offering("h1eu", "h100-sxm", 1, 5.0, region="eu-north")


def alternatives(p, cat):
    with pytest.raises(InfeasibleError) as err:
        solve_problem(p, cat)
    compiled = None if "cannot run" in err.value.message else compile_problem(p, cat)
    return err.value, explain_infeasibility(p, cat, compiled)


def group(why, name):
    [alt] = [a for a in why.alternatives if a[0].group == name]
    return alt


def test_budget_short_by_hand_and_applied(tiny_catalog):
    # 20 req/s = 2 H100 at $4/h x 730 h = $5,840 at least; budget $5,000 is short by $840 (16.8%).
    cat = tiny_catalog([H1])
    p = problem([serve(20)], budget_usd=5000)
    err, why = alternatives(p, cat)
    assert "short by $840 (16.8%)" in err.message
    [relax] = group(why, "budget")
    assert relax.amount == pytest.approx(840, rel=1e-6)
    assert solve_problem(apply(p, [relax]), cat).total_cost_usd == pytest.approx(2 * 4 * HOURS)


def test_carbon_cap_relaxation_by_hand(tiny_catalog):
    # The greenest plan, 2 eu instances, emits 2 x 730 x 0.033984 kg = 0.049617 t;
    # a 0.03 t cap must rise by 0.019617 t.
    cat = tiny_catalog([H1, EU])
    p = problem([serve(20)], carbon_cap_tco2e=0.03)
    err, why = alternatives(p, cat)
    [relax] = group(why, "carbon cap")
    assert relax.amount == pytest.approx(0.049617 - 0.03, rel=1e-3)
    assert solve_problem(apply(p, [relax]), cat).total_co2e_t <= relax.edit["carbon_cap_tco2e"]


def test_availability_relaxation_by_hand(tiny_catalog):
    # 25 req/s needs 3 H100 instances; only 1 is available: allow 2 more.
    cat = tiny_catalog([dict(H1, availability_cap_instances=1)])
    p = problem([serve(25)])
    err, why = alternatives(p, cat)
    [relax] = group(why, "availability and quotas")
    assert "allow 2 more" in relax.sentence
    assert solve_problem(apply(p, [relax]), cat).total_cost_usd == pytest.approx(3 * 4 * HOURS)


def test_two_limits_give_two_alternatives(tiny_catalog):
    # Budget $6,000 and cap 0.2 t: 2 us ($5,840, 0.447 t) and 1 us + 1 eu ($6,570, 0.248 t)
    # break the cap; 2 eu ($7,300, 0.0496 t) breaks the budget. Either raise the budget by
    # $1,300 to $7,300, or raise the cap by 0.247 t to 0.447 t (all the budget allows).
    cat = tiny_catalog([H1, EU])
    p = problem([serve(20)], budget_usd=6000, carbon_cap_tco2e=0.2)
    _, why = alternatives(p, cat)
    groups = sorted(alt[0].group for alt in why.alternatives)
    assert groups == ["budget", "carbon cap", "demand"]  # or serve less
    assert group(why, "budget")[0].amount == pytest.approx(1300, rel=1e-6)
    assert group(why, "carbon cap")[0].amount == pytest.approx(0.44697 - 0.2, rel=1e-3)
    for alt in why.alternatives:
        if alt[0].group != "demand":  # serving less is advice, not a problem edit
            solve_problem(apply(p, alt), cat)  # each alone is enough


def test_deadline_relaxation_by_hand(tiny_catalog):
    # tests/core/test_model_training.py: one 8xH100 instance takes 566.68 h sized at the
    # H100 band's low end 0.30 (training_margin: low, the default), so two (the cap) take
    # 283.34 h = 11.81 days: a 1-day deadline must become 12 whole days (11 days = 264 h is
    # too short). At the point figure 0.41 two take 414.65 / 2 = 207.32 h = 8.64 days, more
    # than 1 day too, so sizing at the point is no alternative here.
    cat = tiny_catalog([dict(H8, availability_cap_instances=2)])
    p = train_problem([train(deadline_days=1)])
    err, why = alternatives(p, cat)
    [relax] = group(why, "deadline")
    assert "12 days instead of 1" in relax.sentence
    assert "12 days instead of 1" in err.message
    assert [a for a in why.alternatives if a[0].group == "training margin"] == []
    solve_problem(apply(p, [relax]), cat)
    # at the point figure the same job needs 9 days (8 days = 192 h < 207.32 h)
    _, why = alternatives(p.model_copy(update={"training_margin": "point"}), cat)
    assert "9 days instead of 1" in group(why, "deadline")[0].sentence


def test_training_margin_relaxation_by_hand(tiny_catalog):
    # a 9-day deadline (216 h): at the low end (0.30) the two instances of the cap take
    # 283.34 h, too long; at the point figure (0.41) 207.32 h fit. Two alternatives: 12 days,
    # or training_margin: point
    cat = tiny_catalog([dict(H8, availability_cap_instances=2)])
    p = train_problem([train(deadline_days=9)])
    err, why = alternatives(p, cat)
    [relax] = group(why, "training margin")
    assert "training_margin: point" in relax.sentence and "training_margin: point" in err.message
    plan = solve_problem(apply(p, [relax]), cat)
    (item,) = [i for i in plan.line_items if i.item == "training"]
    assert item.mfu == 0.41 and item.job_hours == pytest.approx(207.32, abs=0.01)
    assert "12 days instead of 9" in group(why, "deadline")[0].sentence


def test_shipped_infeasible_example_is_explained_and_the_fix_works():
    cat = load_catalog()
    p = load_problem(ROOT / "problems/infeasible-budget.yaml")
    err, why = alternatives(p, cat)
    assert "short by $" in err.message
    for alt in why.alternatives:
        plan = solve_problem(apply(p, alt), cat)
        assert plan.total_cost_usd <= alt[0].edit["budget_usd"]
