"""Near-optimal alternatives and the price of each preference, worked by hand.

The case: one online workload of 10 requests/s (one 100/100-token bucket, max_utilisation
1, so capacity = demand) for one month of 730 hours, on demand. An H100 instance serves
10 req/s, an L4 instance 2 (conftest.serve). Three providers:

- acme   us-east  (us): H100 at $4.00/h -> 1 unit, $4.00 x 730 = $2,920.00 (the optimum)
- beta   us-west  (us): H100 at $4.05/h -> 1 unit, $4.05 x 730 = $2,956.50 (+1.25%)
- gamma  eu-north (eu): L4 at $1.10/h   -> 5 units, $5.50 x 730 = $4,015.00 (+37.5%)

Any plan of two providers holds 10 req/s with one H100 and an L4 at least ($5.10/h,
$3,723.00, +27.5%) or two H100s ($8.05/h).
"""

from __future__ import annotations

import pytest

from conftest import HOURS, TINY_REGIONS, offering, problem, serve
from solver.analyses.alternatives import alternatives, preferences
from solver.errors import ProcureError

ACME = offering("h1", "h100-sxm", 1, 4.0)
BETA = offering("h1", "h100-sxm", 1, 4.05, region="us-west", provider="beta")
GAMMA = offering("l4", "l4", 1, 1.1, region="eu-north", provider="gamma", nvlink=False)
REGIONS = [
    TINY_REGIONS[0],
    {**TINY_REGIONS[0], "provider": "beta", "region": "us-west"},
    {**TINY_REGIONS[1], "provider": "gamma"},
]


@pytest.fixture
def catalog(tiny_catalog):
    return tiny_catalog([ACME, BETA, GAMMA], regions=REGIONS)


def test_alternatives_within_two_percent_by_hand(catalog):
    # The optimum: acme, $2,920. Within 2% ($2,978.40 at most) only beta alone is another
    # set of providers ($2,956.50); every other set costs $3,723 or more. So one
    # alternative, {beta}, reusing none of the optimum's providers, and the search stops.
    found = alternatives(problem([serve(10)]), catalog, slack=0.02, n=2)
    assert found.optimum.total_cost_usd == pytest.approx(4.0 * HOURS)
    assert found.optimum_groups == {"acme"}
    assert found.cap_usd == pytest.approx(4.0 * HOURS * 1.02 + 0.01)
    assert len(found.alternatives) == 1
    alt = found.alternatives[0]
    assert alt.groups == {"beta"}
    assert alt.plan.total_cost_usd == pytest.approx(4.05 * HOURS)  # $2,956.50
    assert alt.plan.verified and alt.proven and alt.reused == 0.0
    assert alt.plan.status == "feasible"
    assert "no other plan within 2.0% of the optimum" in found.stopped


def test_a_wider_slack_finds_the_next_set(catalog):
    # At 30% ($3,796.01 at most), after {beta}: {gamma} alone costs $4,015 (over the cap);
    # {beta, gamma} ($5.15 x 730 = $3,759.50) reuses beta and {acme, gamma} ($5.10 x 730
    # = $3,723) reuses acme, each once: equal reuse, the cheaper wins, {acme, gamma}.
    found = alternatives(problem([serve(10)]), catalog, slack=0.30, n=2)
    assert [a.groups for a in found.alternatives] == [{"beta"}, {"acme", "gamma"}]
    assert found.alternatives[1].plan.total_cost_usd == pytest.approx(5.1 * HOURS)
    assert found.alternatives[1].reused == 1.0


def test_alternatives_by_accelerator(catalog):
    # By accelerator the optimum uses h100-sxm; the only other set within 30% is
    # {h100-sxm, l4} (1 H100 + 1 L4, $3,723); {l4} alone costs $4,015 (+37.5%).
    found = alternatives(problem([serve(10)]), catalog, slack=0.30, n=1, measure="accelerators")
    assert found.optimum_groups == {"h100-sxm"}
    assert [a.groups for a in found.alternatives] == [{"h100-sxm", "l4"}]
    assert found.alternatives[0].plan.total_cost_usd == pytest.approx(5.1 * HOURS)


@pytest.mark.parametrize(
    ("slack", "n", "measure", "field"),
    [
        (0.0, 2, "providers", "--slack"),
        (0.02, 0, "providers", "--n"),
        (0.02, 2, "sites", "--differ-by"),
    ],
)
def test_bad_arguments_name_the_option(catalog, slack, n, measure, field):
    with pytest.raises(ProcureError) as err:
        alternatives(problem([serve(10)]), catalog, slack=slack, n=n, measure=measure)
    assert err.value.field == field


def test_the_price_of_each_preference_by_hand(catalog):
    found = preferences(problem([serve(10)]), catalog)
    price = {(p.kind, p.group, p.action): (p.status, p.delta_usd) for p in found.rows}
    # Exclude acme: beta's H100, $0.05/h more: 0.05 x 730 = $36.50.
    assert price[("providers", "acme", "exclude")] == ("optimal", pytest.approx(36.5))
    # Require beta: one beta H100 serves it all, the same $36.50.
    assert price[("providers", "beta", "require")] == ("optimal", pytest.approx(36.5))
    # Require gamma: an L4 (2 req/s) and an acme H100 ($5.10/h; four more L4s are $5.50):
    # (5.10 - 4.00) x 730 = $803.00.
    assert price[("providers", "gamma", "require")] == ("optimal", pytest.approx(803.0))
    # Exclude the H100: five L4s, (5.50 - 4.00) x 730 = $1,095.00; require the L4: $803.
    assert price[("accelerators", "h100-sxm", "exclude")] == ("optimal", pytest.approx(1095.0))
    assert price[("accelerators", "l4", "require")] == ("optimal", pytest.approx(803.0))
    # Only on-demand is allowed: excluding it leaves no plan.
    assert price[("commitments", "on_demand", "exclude")] == ("infeasible", None)
    # Region groups: us is used; excluding it leaves gamma's L4s in eu ($1,095); eu is
    # required with one L4 ($803).
    assert price[("region_groups", "us", "exclude")] == ("optimal", pytest.approx(1095.0))
    assert price[("region_groups", "eu", "require")] == ("optimal", pytest.approx(803.0))
    assert len(found.rows) == 8
    assert all(p.plan is None or p.plan.verified for p in found.rows)


def test_a_two_stage_objective_is_refused_by_name(catalog):
    # lexicographic: cost, then CO2e within a tolerance; "within 2% of the optimum" has no
    # one objective to measure against, so the analysis says which field and what to use
    with pytest.raises(ProcureError) as err:
        alternatives(problem([serve(10)], objective="lexicographic"), catalog)
    assert err.value.field == "objective"
    assert "min_cost" in err.value.fix
