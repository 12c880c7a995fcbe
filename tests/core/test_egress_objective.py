"""Egress by default in the objective (issue 49 Build 1): a provider's cheaper compute
loses to a dearer one with free egress when the egress it would send costs more than the
difference, and wins when it does not; the plan's egress line is what the objective
priced, to the cent.

Hand case: llama-3-8b chat at 1,000 output tokens/s all day (conftest CHAT_WORKLOAD), one
H100 (the only accelerator) serves it, January 2027 (744 h). The same H100 instance at
"aws" (egress $0.09/GB, aws.amazon.com/ec2/pricing/on-demand) and at "lambda" ($0/GB,
docs.lambda.ai/public-cloud/billing). Egress from aws: 1,000 tokens/s x 744 h x 3,600 s =
2.6784e9 tokens x 4 bytes = 10.7136 GB x $0.09 = $0.964224. Lambda at $0.001/h more
costs $0.744 more compute: less than the egress, so lambda; at $0.002/h more ($1.488),
aws. Before egress was in the objective, aws won both (cheaper compute), and dominance
pruning dropped lambda's column (same size, dearer, the aws pool with room).
"""

from __future__ import annotations

import pytest
import yaml

from conftest import CHAT_WORKLOAD, TINY_REGIONS, offering, write_catalog
from solver.inputs.catalog import load_catalog
from solver.inputs.egress import egress_usd_per_token
from solver.inputs.problem import parse_problem
from solver.solve import solve_verified

PROBLEM = (
    """\
name: egress-choice
horizon_months: 1
start: 2027-01
modes: [on_demand]
load_blocks: [{name: all-day, hours_per_day: 24, demand_factor: 1}]
costs: {defaults: true, support: [], taxes: []}
workloads:
"""
    + CHAT_WORKLOAD
)
HOURS = 744.0  # January 2027
TOKENS = 1000.0 * HOURS * 3600.0  # 2.6784e9 output tokens
AWS_EGRESS_USD = TOKENS * 4 / 1e9 * 0.09  # 10.7136 GB x $0.09 = $0.964224


def _solve(tmp_path, lambda_usd_per_hour: float):
    regions = [{**TINY_REGIONS[0], "provider": p, "region": "us-east"} for p in ("aws", "lambda")]
    offerings = [
        offering("h1", "h100-sxm", 1, 4.0, provider="aws"),
        offering("h1", "h100-sxm", 1, lambda_usd_per_hour, provider="lambda"),
    ]
    folder = write_catalog(tmp_path / "cat", offerings, regions=regions)
    problem = parse_problem(yaml.safe_load(PROBLEM))
    return solve_verified(problem, load_catalog(folder))


def test_the_coefficient_is_bytes_per_token_times_the_price():
    # $0.09/GB x 4 bytes / 1e9 = $3.6e-10 per output token; Lambda charges none
    assert egress_usd_per_token("aws") == pytest.approx(3.6e-10, rel=1e-12)
    assert egress_usd_per_token("lambda") == 0.0
    # owned servers: a colocation's per-GB transfer, $0.05/GB (the top of the published
    # $0.01-0.05, catalogs/SOURCES.md), not AWS's $0.09: $2e-10 per token
    assert egress_usd_per_token("owned") == pytest.approx(2e-10, rel=1e-12)


@pytest.mark.parametrize(
    ("lambda_price", "winner"),
    [(4.001, "lambda"), (4.002, "aws")],
)
def test_cheaper_compute_with_dear_egress_loses(tmp_path, lambda_price, winner):
    plan, solution = _solve(tmp_path, lambda_price)
    assert plan.verified
    (line,) = plan.line_items
    assert line.provider == winner and line.units == 1.0 and line.hours == HOURS
    compute = (lambda_price if winner == "lambda" else 4.0) * HOURS
    assert plan.total_cost_usd == pytest.approx(compute, abs=0.005)
    egress = [c for c in plan.cost_lines if c.category == "egress"]
    assert [c.provider for c in egress] == [winner]
    assert egress[0].quantity == pytest.approx(TOKENS * 4 / 1e9, rel=1e-9)  # 10.7136 GB
    expected = AWS_EGRESS_USD if winner == "aws" else 0.0
    assert egress[0].cost_usd == pytest.approx(expected, abs=0.005)
    # what the objective priced is the egress line, to the cent
    priced = solution.model.expressions["egress_usd"].value(solution.result.values)
    assert priced == pytest.approx(egress[0].cost_usd, abs=0.005)
    # the objective: the chosen compute + its egress; lambda: $2,976.744 + 0 against aws's
    # $2,976.00 + $0.964224 = $2,976.964224; at $4.002, $2,977.488 against aws's
    assert plan.objective == pytest.approx(compute + expected, abs=0.005)
