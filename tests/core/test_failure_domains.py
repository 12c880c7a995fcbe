"""Failure domains and capacity shares (``survive_loss_of``, ``max_region_share``,
``max_provider_share``; issue 28), worked by hand on the tiny catalog: 10 req/s of one
100/100-token bucket for one month (730 h); an H100 instance serves 10 req/s, an L4 2."""

from __future__ import annotations

import pytest

from conftest import HOURS, L4, TINY_REGIONS, check, offering, problem, serve
from solver.errors import InfeasibleError
from solver.solve import solve_problem

H1 = offering("h1", "h100-sxm", 1, 4.0)  # acme us-east, $4/h
H1_EU = offering("h1", "h100-sxm", 1, 5.0, region="eu-north")  # acme eu-north, $5/h
H1_BETA = offering("h1", "h100-sxm", 1, 6.0, region="us-west", provider="beta")  # $6/h
REGIONS = [*TINY_REGIONS, {**TINY_REGIONS[0], "provider": "beta", "region": "us-west"}]


def _solve(tiny_catalog, offerings, **rules):
    catalog = tiny_catalog(offerings, regions=REGIONS)
    return solve_problem(problem([serve(10, **rules)]), catalog)


def _units(plan) -> dict[str, float]:
    return {i.offering: i.units for i in plan.line_items if i.item == "rent" and i.units}


def test_without_a_rule_one_region_serves(tiny_catalog):
    # 1 H100 in us-east, $4 x 730 h = $2,920.
    plan = _solve(tiny_catalog, [H1, L4, H1_EU])
    assert plan.total_cost_usd == pytest.approx(4 * HOURS)


def test_a_region_lost_leaves_the_peak_served(tiny_catalog):
    # With us-east lost, eu-north must serve 10 req/s: 1 H100 there ($5); with eu-north
    # lost, us-east must: 1 H100 ($4; 5 L4 cost $5). $9 x 730 h = $6,570 (+125%).
    plan = _solve(tiny_catalog, [H1, L4, H1_EU], survive_loss_of=["region"])
    assert plan.total_cost_usd == pytest.approx(9 * HOURS)
    assert _units(plan) == {"acme/us-east/h1": 1, "acme/eu-north/h1": 1}
    ok, detail = check(plan, "peak met with one region lost")
    assert ok, detail


def test_a_provider_lost_leaves_the_peak_served(tiny_catalog):
    # Both regions of acme count as one provider: beta must hold 10 req/s alone (1 H100,
    # $6) and acme too (1 H100 in us-east, $4): $10 x 730 h = $7,300.
    plan = _solve(tiny_catalog, [H1, L4, H1_EU, H1_BETA], survive_loss_of=["provider"])
    assert plan.total_cost_usd == pytest.approx(10 * HOURS)
    assert _units(plan) == {"acme/us-east/h1": 1, "beta/us-west/h1": 1}


def test_a_region_holds_at_most_its_share(tiny_catalog):
    # At most half the capacity in one region: 1 H100 in each (10 + 10 req/s, 50% each)
    # for $9/h; 1 eu H100 + 5 L4 (10 + 10) costs $10; 1 H100 alone is 100% in one region.
    plan = _solve(tiny_catalog, [H1, L4, H1_EU], max_region_share=0.5)
    assert plan.total_cost_usd == pytest.approx(9 * HOURS)
    ok, detail = check(plan, "capacity share per region")
    assert ok, detail


def test_one_region_cannot_survive_its_own_loss(tiny_catalog):
    with pytest.raises(InfeasibleError):
        _solve(tiny_catalog, [H1, L4], survive_loss_of=["region"])


def test_a_bad_domain_names_the_field(tiny_catalog):
    from solver.errors import ProcureError

    with pytest.raises(ProcureError) as err:
        _solve(tiny_catalog, [H1], survive_loss_of=["rack"])
    text = f"{err.value} {err.value.field} {err.value.fix}"
    assert "survive_loss_of" in text and "region" in text
