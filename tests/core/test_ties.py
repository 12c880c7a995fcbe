"""Tie classes (solver.core.compile.ties, issue 50): identical rented pools solved as one
class column and expanded back into the concrete offerings; the same optimum as the model
with every pool its own column, worked by hand on the tiny catalog (an L4 instance serves
2 req/s for $1/h, an H100 instance 10 req/s for $4/h; one month of 730 h)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import HOURS, TINY_REGIONS, check, offering, problem, serve
from solver.core.compile import compile_problem, ties
from solver.inputs.catalog import Catalog
from solver.solve import solve_problem

H1 = offering("h1", "h100-sxm", 1, 4.0)


def _l4s(n: int, cap: int, region: str = "us-east") -> list[dict]:
    """n L4 offerings identical but for their names: $1/h, ``cap`` instances each."""
    return [
        offering(f"l4-{chr(97 + i)}", "l4", 1, 1.0, cap=cap, nvlink=False, region=region)
        for i in range(n)
    ]


# Two 12-hour blocks, factors 1.6 and 0.4: 10 req/s on average is 16 at peak, 4 at base.
BLOCKS = {
    "blocks": [
        {"name": "peak", "hours_per_day": 12, "factor": 1.6},
        {"name": "base", "hours_per_day": 12, "factor": 0.4},
    ]
}
BLOCK_HOURS = HOURS / 2


def _solve(catalog: Catalog, merge: bool, rps: float = 10.0, **rules):
    old = ties.MERGE_TIES
    ties.MERGE_TIES = merge
    try:
        return solve_problem(problem([serve(rps, **rules)], load_profile=BLOCKS), catalog)
    finally:
        ties.MERGE_TIES = old


def _units(plan) -> dict[tuple[str, str], float]:
    return {
        (i.instance_type, i.block): i.units for i in plan.line_items if i.item == "rent" and i.units
    }


def test_three_identical_pools_form_one_class(tiny_catalog):
    # l4-a, l4-b, l4-c differ only in name: one class of 3; the H100 is alone
    compiled = compile_problem(
        problem([serve(10)], load_profile=BLOCKS), tiny_catalog([H1, *_l4s(3, 3)])
    )
    classes = ties.tie_classes(compiled)
    assert [
        [compiled.options.iloc[i]["offering_id"].split("/")[-1] for i in m] for m in classes
    ] == [["l4-a", "l4-b", "l4-c"]]


def test_autoscale_with_a_pool_limit_is_exact(tiny_catalog):
    # Three identical L4 pools of 3 instances each; autoscaled (a deployed pool runs a unit
    # in every block). Per pair of block-hours:
    #   3 L4 pools: peak 8 L4 (16 req/s; 9 fit) $8, base 3 (one per pool) $3 -> $11;
    #   H100 only: peak 2 $8, base 1 $4 -> $12; H100 + 1 L4 pool: peak 1 + 3 $7,
    #   base 1 + 1 $5 -> $12; 2 L4 pools hold 12 req/s < 16 at peak.
    # $11 x 365 h = $4,015. Merging the three into one pool of 9 (a relaxation, not this)
    # would give 1 deployment, peak 8 base 2 = $10 x 365 = $3,650: the count n of pools in
    # use with n <= units <= 3 n is what keeps it exact.
    catalog = tiny_catalog([H1, *_l4s(3, 3)])
    merged = _solve(catalog, True)
    assert merged.total_cost_usd == pytest.approx(11 * BLOCK_HOURS)
    assert merged.compile_report["ties"]["pools_merged"] == 3
    # expanded deterministically: 8 at peak spread 3, 3, 2; base one per pool
    assert _units(merged) == {
        ("l4-a", "peak"): 3,
        ("l4-b", "peak"): 3,
        ("l4-c", "peak"): 2,
        ("l4-a", "base"): 1,
        ("l4-b", "base"): 1,
        ("l4-c", "base"): 1,
    }
    ok, detail = check(merged, "autoscaled fleet: a deployed offering runs all day")
    assert ok, detail
    plain = _solve(catalog, False)
    assert plain.total_cost_usd == pytest.approx(merged.total_cost_usd)
    assert "ties" not in plain.compile_report


def test_n_plus_1_same_optimum(tiny_catalog):
    # N+1 (capacity less the largest unit in use meets the block) with the H100 and two
    # identical L4 pools of 4. Peak 16 req/s: 2 H100 + 3 L4 (10 + 6 with an H100 lost)
    # $11; 1 H100 + 8 L4 $12; 3 H100 $12; L4 alone needs 9 > 8. Base 4 req/s with the
    # H100 deployed (it runs all day): 1 H100 + 2 L4 (4 with it lost) $6. $17 x 365 h =
    # $6,205, with and without merging; the plans verified (solve_problem refuses otherwise).
    catalog = tiny_catalog([H1, *_l4s(2, 4)])
    merged = _solve(catalog, True, redundancy="n_plus_1")
    plain = _solve(catalog, False, redundancy="n_plus_1")
    assert merged.total_cost_usd == pytest.approx(17 * BLOCK_HOURS)
    assert plain.total_cost_usd == pytest.approx(merged.total_cost_usd)
    assert merged.verified and plain.verified


def test_a_region_lost_same_optimum(tiny_catalog):
    # survive_loss_of [region]: pools tie only within a region (a region is then a
    # coefficient). Two identical L4 pools in us-east, two in eu-north (cap 5 each).
    # Each region must carry the 16 req/s peak alone: 8 L4 in each, split 5 + 3 (autoscale:
    # both pools of a region deployed, so at base 1 + 1 in each region, 4 req/s per region).
    # $16 at peak, $4 at base -> $20 x 365 = $7,300, with and without merging.
    catalog = tiny_catalog([*_l4s(2, 5), *_l4s(2, 5, "eu-north")], regions=TINY_REGIONS)
    compiled = compile_problem(
        problem([serve(10, survive_loss_of=["region"])], load_profile=BLOCKS), catalog
    )
    regions = [{compiled.options.iloc[i]["region"] for i in m} for m in ties.tie_classes(compiled)]
    assert sorted(map(sorted, regions)) == [["eu-north"], ["us-east"]]
    merged = _solve(catalog, True, survive_loss_of=["region"])
    plain = _solve(catalog, False, survive_loss_of=["region"])
    assert merged.total_cost_usd == pytest.approx(20 * BLOCK_HOURS)
    assert plain.total_cost_usd == pytest.approx(merged.total_cost_usd)
    assert merged.compile_report["ties"]["classes"] == 2


def test_split_is_even_and_monotone():
    # 8 units over 3 pools in use: 3, 3, 2; a larger total never gives a member fewer
    assert ties._split(8, 3, 3, 3) == [3, 3, 2]
    assert ties._split(10, 3, 3, 3) == []  # more than 3 x 3 do not fit
    assert ties._split(2, 3, 3, 3) == []  # 3 pools in use need a unit each
    previous = [0, 0, 0, 0]
    for total in range(2, 9):
        now = ties._split(total, 2, 4, 4)
        assert all(a >= b for a, b in zip(now, previous, strict=True))
        previous = now


@settings(
    max_examples=5,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    pools=st.integers(2, 4),
    cap=st.integers(1, 4),
    rps=st.sampled_from([3.0, 6.0, 10.0]),
    n_plus_1=st.booleans(),
    fleet=st.sampled_from(["autoscale", "per_block", "flat"]),
)
def test_same_optimum_with_and_without_merging(
    tiny_catalog, pools: int, cap: int, rps: float, n_plus_1: bool, fleet: str
):
    # any number of identical pools, any per-pool limit, N+1 or not, every fleet: the
    # merged model's optimum is the model's (each plan verified by solve_problem)
    catalog = tiny_catalog([H1, *_l4s(pools, cap)])
    rules: dict = {"fleet": fleet}
    if n_plus_1:
        rules["redundancy"] = "n_plus_1"
    merged = _solve(catalog, True, rps, **rules)
    plain = _solve(catalog, False, rps, **rules)
    assert merged.total_cost_usd == pytest.approx(plain.total_cost_usd, rel=1e-9)
