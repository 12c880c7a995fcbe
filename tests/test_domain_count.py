"""The ``domain_count`` rows (docs/formulation/domain_count.md): the block's capacity
T >= D R/(R-1) for R domains used, as secants at whole R over a count P of the
deployments. Worked by hand on the tiny catalog: an H100 unit serves 10 req/s of one
100/100-token bucket (1,000 output tokens/s), one month is 730 h, max_utilisation 1."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_failure_domains import H1, H1_EU, zoned_catalog

from conftest import HOURS, TINY_REGIONS, offering, problem, serve, write_catalog
from solver.core.backends import SolveOptions, get_backend
from solver.core.compile import compile_problem
from solver.core.formulation import domains
from solver.core.matrix import LinearModel
from solver.core.model import build_model
from solver.inputs.catalog import load_catalog
from solver.solve import solve_problem


def _lp_bound(
    model: LinearModel, keep_counts: bool = True, without: tuple[str, ...] = ("domain_round",)
) -> float:
    """The model's LP relaxation (every variable continuous), with or without the
    ``domain_count`` rows; never with the families ``without``."""
    v = model.variables.copy()
    v["integer"] = False
    drop = set(without) | (set() if keep_counts else {"domain_count"})
    rows = [r for r in model.rows if r.family not in drop]
    lp = LinearModel(v, rows, model.objective, model.expressions)
    result = get_backend("highspy").solve(lp, SolveOptions())
    assert result.objective is not None
    return float(result.objective)


def test_four_zones_and_a_second_region_worked_by_hand(tmp_path):
    # 20 req/s: D = 2,000 output tokens/s. Zones: us-east a, b, c, d ($4/h) and eu-north
    # (one zone, $5/h): n_dom = 5, so rows for R = 2, 3, 4 with slope D/(R(R-1)) and
    # right-hand side D(R+1)/(R-1): 1,000 and 6,000; 333.33 and 4,000; 166.67 and 3,333.33.
    catalog = zoned_catalog(tmp_path, ("a", "b", "c", "d"))
    prob = problem([serve(20, survive_loss_of=["zone"])])
    model = build_model(compile_problem(prob, catalog))
    rows = sorted((r for r in model.rows if r.family == "domain_count"), key=lambda r: r.key)
    assert [r.key[-1] for r in rows] == [2, 3, 4]
    # the smallest threshold's rows are over the covered capacity C (domain_cover.md)
    total = next(i for i, n in enumerate(model.variables["name"]) if n.startswith("covered["))
    slopes, rhss = (1000.0, 2000 / 6, 2000 / 12), (6000.0, 4000.0, 2000 * 5 / 3)
    for r, slope, rhs in zip(rows, slopes, rhss, strict=True):
        assert r.coefs[total] == 1.0 and r.rhs == pytest.approx(rhs)
        # P, one variable: the sum of four zone placements of us-east and eu-north's one
        # unit (or its deploy), each with coefficient 1 in its domain_sum row
        ((p, c),) = ((j, c) for j, c in r.coefs.items() if j != total)
        assert c == pytest.approx(slope)
        (sums,) = (x for x in model.rows if x.family == "domain_sum" and x.coefs.get(p) == 1)
        others = [c for j, c in sums.coefs.items() if j != p]
        assert sums.rhs == 0 and len(others) == 5 and np.allclose(others, -1.0)
    # The LP relaxation without the rows spreads half a unit over each of the five zones:
    # losing any leaves 2 units; 4 x 0.5 x $4 + 0.5 x $5 = $10.50/h, $7,665 a month. With
    # them (R = 2: 1,000 n + 1,000 P >= 6,000 and P <= n) it holds n >= 3: three us-east
    # units at $4/h, $12/h, $8,760, the optimum (one unit in each of three zones).
    assert _lp_bound(model, keep_counts=False) == pytest.approx(10.5 * HOURS)
    assert _lp_bound(model) == pytest.approx(12.0 * HOURS)
    plan = solve_problem(prob, catalog)
    assert plan.total_cost_usd == pytest.approx(12.0 * HOURS)


@pytest.mark.parametrize(
    ("zones", "rps", "usd_per_hour"),
    [
        # 3 units, one per zone of a, b, c ($12/h: test_failure_domains worked it)
        (("a", "b", "c"), 20, 12.0),
        # two zones: 1 + 1 in us-east and 1 in eu-north, $13/h (test_failure_domains)
        (("a", "b"), 20, 13.0),
        # 30 req/s (3 units' worth) over four zones: 4 units one per zone lose 1, leave 3;
        # 3 units cannot survive (2 left), so 4 x $4 = $16/h
        (("a", "b", "c", "d"), 30, 16.0),
    ],
)
def test_the_rows_keep_the_optimum(tmp_path, monkeypatch, zones, rps, usd_per_hour):
    # Exactness: the same optimum with the rows and without them (DOMAIN_COUNT_MAX = 1
    # writes none), each the hand-worked cost.
    catalog = zoned_catalog(tmp_path, zones)
    prob = problem([serve(rps, survive_loss_of=["zone"])])
    with_rows = solve_problem(prob, catalog).total_cost_usd
    monkeypatch.setattr(domains, "DOMAIN_COUNT_MAX", 1)
    without = solve_problem(prob, catalog).total_cost_usd
    assert with_rows == pytest.approx(usd_per_hour * HOURS)
    assert without == pytest.approx(usd_per_hour * HOURS)


def test_small_units_are_weighted_not_counted(tmp_path):
    # us-east's h1 (an H100, 1,000 output tokens/s, $4/h) and l1 (an L4, 2 req/s = 200
    # tokens/s, $1/h) both in zones a, b, c; eu-north's h1 at $5/h. D = 2,000.
    # Four zones hold units (a, b, c, eu-north), so R = 2 and 3. Thresholds: the smallest
    # class (200: every unit counted, S = 0) and 1,000 (at least D/8 = 250): there the
    # L4s are small and P counts the H100 placements (a, b, c and eu-north's unit):
    # R = 2: T + 1,000 P + 2/(2-1) x 200 = 400 per L4 >= 2,000 x 3/1 = 6,000;
    # R = 3: T + 2,000/6 = 333.33 P + 2/(3-1) x 200 = 200 per L4 >= 2,000 x 4/2 = 4,000.
    folder = write_catalog(
        tmp_path / "catalog",
        [H1, H1_EU, offering("l1", "l4", 1, 1.0)],
        regions=TINY_REGIONS,
    )
    rows = [
        {"provider": "acme", "region": "us-east", "zone": z, "instance_types": "h1 l1"}
        for z in "abc"
    ]
    pd.DataFrame([{**r, "source": "t"} for r in rows]).to_csv(folder / "zones.csv", index=False)
    catalog = load_catalog(folder)
    prob = problem([serve(20, survive_loss_of=["zone"])])
    model = build_model(compile_problem(prob, catalog))
    big = {r.key[-1]: r for r in model.rows if r.family == "domain_count" and r.key[-2] == 1000}
    assert sorted(big) == [2, 3]
    sums = {next(iter(x.coefs)): x.coefs for x in model.rows if x.family == "domain_sum"}
    total = next(i for i, n in enumerate(model.variables["name"]) if n.startswith("total["))
    for r, slope, small, rhs in ((2, 1000.0, 400.0, 6000.0), (3, 2000 / 6, 200.0, 4000.0)):
        assert big[r].rhs == pytest.approx(rhs) and big[r].coefs[total] == 1.0
        # P, one variable: the four H100 placements; S, one: the three L4 placements'
        # capacity, 200 tokens/s each, weighted 2/(R-1) in the row
        parts = {
            tuple(sorted(c for i, c in sums[j].items() if i != j)): c
            for j, c in big[r].coefs.items()
            if j != total
        }
        assert parts == pytest.approx({(-1.0,) * 4: slope, (-200.0,) * 3: small / 200})
    # The optimum with the rows and without: three H100s, one per zone, $12/h (two H100s
    # in a and b need 1,000 tokens/s of L4s outside each, five L4s in c, $8 + $5 = $13/h;
    # a cost per token/s of $4/1,000 for the H100 against $5/1,000 for the L4).
    plan = solve_problem(prob, catalog)
    assert plan.total_cost_usd == pytest.approx(12.0 * HOURS)


def test_whole_units_round_the_count_worked_by_hand(tmp_path, monkeypatch):
    # domain_round (docs/formulation/domain_round.md): 25 req/s, D = 2,500 output tokens/s,
    # over us-east's zones a, b, c, d ($4/h, 1,000 tokens/s a unit) and eu-north ($5/h).
    # In whole units a lost zone must leave 3 units (2,500 / 1,000 rounded up): 4 units,
    # one per zone, lose 1 and keep 3: $16/h, $11,680 a month, the optimum.
    # The LP with domain_count (per block: P counts the units, P = n, T = 1,000 n) holds
    # 1,000 n + 2,500/(R(R-1)) n >= 2,500 (R+1)/(R-1): R = 2: n >= 3.33; R = 3: n >= 3.53;
    # R = 4: n >= 3.45; so n = 3.53 at $4/h: $14.12/h ($10,306.67 a month).
    # domain_round with the divisor 1,000 (K = 3, each unit counted 1, G = P = n):
    # n + 3/(R(R-1)) n >= 3 (R+1)/(R-1): R = 2: n >= 3.6; R = 3: 1.5 n >= 6, n >= 4: the
    # LP holds the optimum's 4 units.
    catalog = zoned_catalog(tmp_path, ("a", "b", "c", "d"))
    prob = problem([serve(25, survive_loss_of=["zone"])])
    assert not any(
        r.family == "domain_round" for r in build_model(compile_problem(prob, catalog)).rows
    )
    monkeypatch.setattr(domains, "ROUND_DOMAINS", True)  # off by default (domains.py)
    model = build_model(compile_problem(prob, catalog))
    keys = {r.key[-2:] for r in model.rows if r.family == "domain_round"}
    assert (1000.0, 3) in keys  # the divisor 1,000 at R = 3 (five domains: R = 2, 3, 4)
    assert _lp_bound(model) == pytest.approx(2 * 2500 / (1000 + 2500 / 6) * 4.0 * HOURS)
    assert _lp_bound(model, without=()) == pytest.approx(16.0 * HOURS)
    plan = solve_problem(prob, catalog)
    assert plan.total_cost_usd == pytest.approx(16.0 * HOURS)


# Two 12-hour blocks, factors 1.6 and 0.4: 10 req/s on average is 16 at the peak (D =
# 1,600 output tokens/s) and 4 at the base (D = 400); autoscaled, so each deployed
# offering has a deploy variable (tests/core/test_fleet.py works the same profile).
BLOCKS = {
    "blocks": [
        {"name": "peak", "hours_per_day": 12, "factor": 1.6},
        {"name": "base", "hours_per_day": 12, "factor": 0.4},
    ]
}


def test_domain_cover_counts_a_domain_for_the_need_while_deployed(tiny_catalog):
    # survive_loss_of: [region] over us-east ($4/h) and eu-north ($5/h), 1,000 tokens/s a
    # unit. Each region must hold the whole need alone: at the peak 2 units each (1 is
    # 1,000 < 1,600), at the base 1 each: ($8 + $10) x 365 h + ($4 + $5) x 365 h =
    # $9,855. Each domain_cover row is H_r <= D x the region's one deploy variable: -1,600
    # at the peak, -400 at the base; the optimum is the same with the rows and without.
    catalog = tiny_catalog([H1, H1_EU])
    prob = problem([serve(10, fleet="autoscale", survive_loss_of=["region"])], load_profile=BLOCKS)
    model = build_model(compile_problem(prob, catalog))
    kinds = model.variables["kind"]
    cover = [r for r in model.rows if r.family == "domain_cover"]
    assert len(cover) == 4  # 2 regions x 2 blocks
    for r in cover:
        ((deploy, coef),) = ((j, c) for j, c in r.coefs.items() if kinds.iat[j] == "deploy")
        assert r.sense == "<=" and r.rhs == 0
        assert coef == pytest.approx(-1600.0 if r.key[2] == 0 else -400.0)
    with_rows = solve_problem(prob, catalog).total_cost_usd
    assert with_rows == pytest.approx((18.0 + 9.0) * HOURS / 2)


def test_domain_cover_keeps_the_optimum(tiny_catalog, monkeypatch):
    # Exactness (docs/formulation/domain_cover.md) with a third region, beta's us-west at
    # $6/h. Per hour of a peak and a base hour: us-east and eu-north alone hold the need
    # each, 2 + 2 units at the peak and 1 + 1 at the base, $18 + $9 = $27; all three
    # regions at 1 unit each (any two hold 2,000 >= 1,600) cost $15 in each block, $30;
    # us-west with one other needs 2 + 2 at the peak, dearer still. So $27 x 365 h, the
    # same with the covered rows (the default) and with domain_loss over the units.
    regions = [*TINY_REGIONS, {**TINY_REGIONS[0], "provider": "beta", "region": "us-west"}]
    beta = offering("h1", "h100-sxm", 1, 6.0, region="us-west", provider="beta")
    catalog = tiny_catalog([H1, H1_EU, beta], regions=regions)
    prob = problem([serve(10, fleet="autoscale", survive_loss_of=["region"])], load_profile=BLOCKS)
    assert any(r.family == "domain_cover" for r in build_model(compile_problem(prob, catalog)).rows)
    with_rows = solve_problem(prob, catalog).total_cost_usd
    monkeypatch.setattr(domains, "COVER_DOMAINS", False)
    model = build_model(compile_problem(prob, catalog))
    assert not any(r.family == "domain_cover" for r in model.rows)
    without = solve_problem(prob, catalog).total_cost_usd
    assert with_rows == pytest.approx(27.0 * HOURS / 2)
    assert without == pytest.approx(27.0 * HOURS / 2)
