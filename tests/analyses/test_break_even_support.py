"""Break-even prices where a provider's support plan is priced (issue 50: the period split
leaves the support fees out of its periods, a relaxation, and keeps the searched pool's
provider's in).

Hand case: the chat workload (conftest CHAT_WORKLOAD, one H100 serves it) under N+1 (two
units), two plan periods of one month each, January and February 2027 (744 + 672 =
1,416 hours). The same H100 at "aws" at $4.00/h (AWS Business by default: the greater of
$100 and 10% of the month's spend up to $10,000, aws.amazon.com/premiumsupport/pricing;
the minimum is charged every month once the plan spends anything with aws) and at
"lambda" at $3.90/h (no support plan). Egress, storage and taxes are zeroed.

- The plan: two lambda units both months, 2 x $3.90 x 1,416 h = $11,044.80.
- An aws unit-month spends at least $3.5 x 672 = $2,352, so its fee is 10% (above the
  $100 minimum; a month spends at most 2 x 744 x $4 = $5,952, inside the first band):
  each aws hour costs 1.1 p. A plan using aws in one month only also pays the $100
  minimum in the other, so it is never better. aws enters below 1.1 p = $3.90:
  p = 39/11 = $3.545454.../h.
- Without lambda the best plan is all aws: 1.1 x $4.00 x 2,832 unit-hours = $12,460.80,
  so lambda leaves above 2,832 q = $12,460.80: q = $4.40/h.
"""

from __future__ import annotations

import pytest
import yaml

from conftest import CHAT_WORKLOAD, TINY_REGIONS, offering, write_catalog
from solver.analyses.sensitivity import break_even_prices
from solver.analyses.sensitivity.period_split import PeriodSplit, support_columns
from solver.analyses.sensitivity.warm import Warm
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import parse_problem
from solver.solve import solve_for_analysis

PROBLEM = (
    """\
name: support-break-even
horizon_months: 2
start: 2027-01
periods: [{name: jan, months: 1}, {name: feb, months: 1}]
modes: [on_demand]
load_blocks: [{name: all-day, hours_per_day: 24, demand_factor: 1}]
costs: {defaults: true, storage: [], egress: [], taxes: []}
workloads:
"""
    + CHAT_WORKLOAD
    + "    redundancy: n_plus_1\n"
)
BY_HAND = {"aws": 39.0 / 11.0, "lambda": 4.40}


@pytest.fixture
def solution(tmp_path):
    regions = [{**TINY_REGIONS[0], "provider": p, "region": "us-east"} for p in ("aws", "lambda")]
    offerings = [
        offering("h1", "h100-sxm", 1, 4.00, provider="aws"),
        offering("h1", "h100-sxm", 1, 3.90, provider="lambda"),
    ]
    folder = write_catalog(tmp_path / "cat", offerings, regions=regions)
    problem = parse_problem(yaml.safe_load(PROBLEM))
    plan, sol = solve_for_analysis(problem, load_catalog(folder))
    assert plan.total_cost_usd == pytest.approx(2 * 3.90 * 1416, abs=0.01)  # $11,044.80
    return sol


def test_break_even_prices_with_support_by_hand(solution, monkeypatch):
    built: list[str | None] = []
    init = PeriodSplit.__init__

    def spy(self, *args):
        built.append(args[-1])  # the searched pool's provider, whose support stays in
        init(self, *args)

    monkeypatch.setattr(PeriodSplit, "__init__", spy)
    rows = {b.provider: b for b in break_even_prices(solution)}
    assert {p: b.break_even_price for p, b in rows.items()} == pytest.approx(BY_HAND, rel=1e-6)
    assert rows["aws"].direction == "enters below"
    assert rows["lambda"].direction == "leaves above"
    assert sorted(built) == ["aws", "lambda"]  # the split ran in both searches


def test_the_split_with_support_gives_the_whole_models_prices(solution, monkeypatch):
    split = {b.pool_id: b for b in break_even_prices(solution)}
    monkeypatch.setattr(Warm, "_split", lambda self: False)
    whole = {b.pool_id: b for b in break_even_prices(solution)}
    assert set(split) == set(whole) and len(whole) == 2
    for pool, b in whole.items():
        assert split[pool].break_even_price == pytest.approx(b.break_even_price, rel=1e-9)
        assert split[pool].note == b.note


def test_support_columns_keep_the_searched_provider(solution):
    model = solution.model
    kinds = model.variables["kind"].to_numpy()
    names = model.variables["name"].astype(str)
    support = kinds == "support"
    # aws's fees, bands, tier binaries and billed binary: lambda has no support plan
    assert support.sum() > 0 and names[support].str.contains("aws").all()
    assert (support_columns(model) == support).all()  # lambda's search leaves them out
    assert not support_columns(model, "aws").any()  # aws's search keeps them
    assert (support_columns(model, "lambda") == support).all()
