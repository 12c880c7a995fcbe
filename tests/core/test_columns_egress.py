"""Egress rows in column generation's pricing (issue 50; docs/guides/large-problems.md,
"Egress rows in the pricing"): a workload whose egress the model routes between
providers of different egress prices is priced like any other, and a column priced out
is truly not improving.

Hand case: two chat workloads (llama-3-8b, 20,000 and 12,000 output tokens/s all day,
``fleet: per_block``), January 2027 (744 h), one load block. The same H100 instance at
"aws" ($4.00/h, egress $0.09/GB, aws.amazon.com/ec2/pricing/on-demand) and at "lambda"
($0/GB, docs.lambda.ai/public-cloud/billing). The first master holds aws's options only:
its egress is then a constant (one price), the dual of its ``egress_serve`` row is that
price's coefficient,

    c_e(aws) = 744 h x 3,600 s x 4 bytes x $0.09/GB / 1e9 = $9.64224e-4 per token/s,

and the ``egress_capacity`` row of lambda, absent from the master, takes
min(0, c_e(lambda) - c_e(aws)) = -$9.64224e-4. A lambda unit (a = tokens/s per unit, the
catalog's physics: 8,701.5 today) enters that row at -0.8 a (0.8 = served per capacity:
the demand rows size the fleet at 1.25x the average, 20,000 -> 25,000 tokens/s) and the
demand row at a, whose dual is aws's $/h x 744 h / a. Its reduced cost is

    rc = (P_lambda - $4.00) x 744 h - 0.8 a x $9.64224e-4
       = $0.744 - 6,961.2 x $9.64224e-4 = -$5.968      at P_lambda = $4.001 (priced in),
       = $7.440 - $6.712               = +$0.728      at P_lambda = $4.010 (priced out).

Without the egress term both would price at +$0.744 / +$7.44: lambda, cheaper all in at
$4.001 (no egress on 32,000 tokens/s), would never enter.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from conftest import TINY_REGIONS, offering, write_catalog
from solver.core import columns
from solver.core.compile import compile_problem, with_options
from solver.core.model import build_model
from solver.core.reduced_costs import Pricing, master_egress_prices, routed_workloads
from solver.inputs.catalog import load_catalog
from solver.inputs.egress import egress_usd_per_token
from solver.inputs.problem import parse_problem
from solver.solve import solve_verified

HOURS = 744.0  # January 2027
SECONDS = HOURS * 3600.0
AWS_USD_PER_H = 4.0
C_E_AWS = SECONDS * 4 / 1e9 * 0.09  # $9.64224e-4 per token/s of egress over the month
SERVED_PER_CAPACITY = 0.8  # 20,000 average / 25,000 sized for

PROBLEM = """\
name: egress-pricing
horizon_months: 1
start: 2027-01
modes: [on_demand]
load_blocks: [{name: all-day, hours_per_day: 24, demand_factor: 1}]
costs: {defaults: true, support: [], taxes: []}
workloads:
"""
WORKLOAD = """\
  - kind: inference
    name: {name}
    model: llama-3-8b
    demand: {{tokens_per_s: {tps}}}
    prompt_tokens: 500
    output_tokens: 200
    ttft_slo: 1 s
    tpot_slo: 50 ms
    fleet: per_block
"""


def _case(tmp_path: Path, lambda_usd_per_hour: float):
    regions = [{**TINY_REGIONS[0], "provider": p, "region": "us-east"} for p in ("aws", "lambda")]
    offerings = [
        offering("h1", "h100-sxm", 1, AWS_USD_PER_H, provider="aws"),
        offering("h1", "h100-sxm", 1, lambda_usd_per_hour, provider="lambda"),
    ]
    folder = write_catalog(tmp_path / "cat", offerings, regions=regions)
    text = PROBLEM + WORKLOAD.format(name="chat-a", tps=20000)
    text += WORKLOAD.format(name="chat-b", tps=12000)
    problem = parse_problem(yaml.safe_load(text))
    catalog = load_catalog(folder)
    return problem, catalog, compile_problem(problem, catalog)


def _aws_only(compiled, mask):
    """A first master of aws's options only: lambda's must come in through the pricing."""
    return ~mask | (compiled.options["provider"] == "aws").to_numpy()


def _master(compiled, keep):
    """The master over the options ``keep``: its model, LP, and the pricing's reduced
    costs of every serving column at its duals (as the column generation prices them)."""
    mask = columns.priced_mask(compiled)
    sub = with_options(compiled, compiled.options[keep])
    model = build_model(sub, cap_demand_rows=True)
    lp = columns._solve_lp(model, None)
    assert not isinstance(lp, str), lp
    pricing = Pricing(compiled, mask)
    duals = pricing.duals(model, lp.row_dual)
    duals["_egress_master"] = master_egress_prices(sub.options, routed_workloads(compiled))
    rc_s, _ = pricing.reduced_costs(duals)
    return model, lp, pricing, rc_s


def _rc_by_option(pricing, rc_s) -> dict[int, float]:
    return dict(zip(pricing.columns["option_id"].to_numpy(int), rc_s, strict=True))


def test_the_coefficients_are_the_hand_figures(tmp_path):
    _, _, compiled = _case(tmp_path, 4.001)
    assert routed_workloads(compiled) == {"chat-a", "chat-b"}
    assert columns.priced_mask(compiled).all()  # routed workloads are priced now
    assert egress_usd_per_token("aws") * SECONDS == pytest.approx(C_E_AWS, rel=1e-12)
    pricing = Pricing(compiled, columns.priced_mask(compiled))
    e = pricing.egress
    a = compiled.options["tokens_per_s_per_unit"].to_numpy(float)
    assert len(e) == 4  # one per (option, period, block): 2 workloads x 2 providers
    assert e["coef"].to_numpy() == pytest.approx(-SERVED_PER_CAPACITY * a[e["piece"]])
    assert e["c_unit"].to_numpy() == pytest.approx(SECONDS)


@pytest.mark.parametrize(
    ("lambda_price", "priced_in"),
    [(4.001, True), (4.010, False)],
)
def test_lambda_priced_from_an_aws_master_by_hand(tmp_path, lambda_price, priced_in):
    _, _, compiled = _case(tmp_path, lambda_price)
    mask = columns.priced_mask(compiled)
    keep = _aws_only(compiled, mask)
    model, lp, pricing, rc_s = _master(compiled, keep)
    opt = compiled.options
    a = float(opt["tokens_per_s_per_unit"].iloc[0])  # the same H100 everywhere
    # the master's own columns price at 0 (basic) and agree with HiGHS (checked inside)
    columns.check_pricing(model, lp.col_dual, pricing, rc_s, np.zeros(0))
    hand = (lambda_price - AWS_USD_PER_H) * HOURS - SERVED_PER_CAPACITY * a * C_E_AWS
    rc = _rc_by_option(pricing, rc_s)
    for k in opt.index[opt["provider"] == "lambda"]:
        assert rc[int(opt.loc[k, "option_id"])] == pytest.approx(hand, rel=1e-9, abs=1e-9)
    assert (hand < 0) == priced_in
    # priced out: lambda's columns added to the master do not lower its LP (the master's
    # duals, with the absent rows' min(0, c_e - y_serve), are dual feasible for the full
    # LP); priced in: they lower it
    _, lp_full, _, rc_full = _master(compiled, np.ones(len(opt), dtype=bool))
    assert np.min(rc_full) >= -1e-9  # at the full LP's optimum nothing prices negative
    if priced_in:
        assert lp_full.objective < lp.objective - 1.0
    else:
        assert lp_full.objective == pytest.approx(lp.objective, rel=1e-12)


@pytest.mark.parametrize(("lambda_price", "winner"), [(4.001, "lambda"), (4.010, "aws")])
def test_the_plan_by_columns_is_the_full_models_optimum(
    tmp_path, monkeypatch, lambda_price, winner
):
    # 3 units for chat-a (25,000 / 8,701.5 = 2.87) and 2 for chat-b (15,000 / 8,701.5 =
    # 1.72), all at the winner: lambda 5 x $4.001 x 744 h = $14,883.72 and no egress
    # against aws's $14,880 + 32,000 x $9.64224e-4 = $14,910.86; at $4.010, lambda
    # $14,917.20 and aws the same $14,910.86
    problem, catalog, _ = _case(tmp_path, lambda_price)
    full, _ = solve_verified(problem, catalog, method="full")
    monkeypatch.setattr(columns, "first_master", _aws_only)
    plan, solution = solve_verified(problem, catalog, method="columns")
    report = solution.compiled.report.columns
    assert report["method"] == "columns" and report["options_priced"] == 4
    assert report["history"][0]["columns_priced_negative"] == (2 if winner == "lambda" else 0)
    assert plan.verified and full.verified
    assert plan.objective == pytest.approx(full.objective, abs=0.005)
    assert {line.provider for line in plan.line_items} == {winner}
    assert sum(line.units for line in plan.line_items) == 5
    compute = 5 * (lambda_price if winner == "lambda" else AWS_USD_PER_H) * HOURS
    egress = 0.0 if winner == "lambda" else 32000 * C_E_AWS
    assert plan.objective == pytest.approx(compute + egress, abs=0.005)
