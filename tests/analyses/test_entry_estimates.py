"""The LP estimate that picks which pools outside the plan get a break-even search
(``break_even_prices(limit=)``, ``procure sensitivity --break-even N``): what a unit is
worth at the plan's duals over what it costs.

Hand case: the chat workload's model (llama-3-8b, 500 prompt and 200 output tokens) at
20,000 output tokens/s under N+1, one month (January 2027, 744 hours), one load block,
every cost category by default (egress priced; neither provider bills a support plan).
The plan rents H100s at "lambda" at $3.90/h (egress free there). Outside it, at "acme"
(egress at the $0.09/GB reference): the same H100 at $4.00/h and an 8 x H100 at $31.20/h.

- The plan's N+1 row prices capacity at one lambda H100 per H100 of capacity: its dual is
  $3.90 x 744 h per H100's tokens/s. An acme H100 is worth $3.90/h against its $4.00:
  3.90 / 4.00 = **0.975**.
- The 8 x H100 has eight H100s of capacity, but under N+1 it would be the unit lost: added
  to the plan it adds only the capacity of the H100 it displaces as the largest, so it is
  worth one lambda H100, $3.90/h against $31.20: **0.125**. Counting its capacity up to
  the row's demand instead made it look 6x closer to entering than it is.
- Egress: acme has no units in the plan, so its egress rows' duals are degenerate (its
  egress is 0 at any dual); moving egress to acme would save nothing (lambda's is free),
  so egress adds nothing to either estimate.
"""

from __future__ import annotations

import pytest
import yaml

from conftest import ROOT, TINY_REGIONS, offering, train, training_problem, write_catalog
from solver.analyses.sensitivity import shadow_prices
from solver.analyses.sensitivity.break_even import entry_estimates
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import load_problem, parse_problem
from solver.solve import solve_for_analysis

PROBLEM = """\
name: entry-estimates
horizon_months: 1
start: 2027-01
modes: [on_demand]
load_blocks: [{name: all-day, hours_per_day: 24, demand_factor: 1}]
costs: {defaults: true, storage: [], taxes: []}
workloads:
  - kind: inference
    name: chat
    model: llama-3-8b
    demand: {tokens_per_s: 20000}
    prompt_tokens: 500
    output_tokens: 200
    ttft_slo: 1 s
    tpot_slo: 50 ms
    redundancy: n_plus_1
"""


@pytest.fixture
def solution(tmp_path):
    regions = [{**TINY_REGIONS[0], "provider": p, "region": "us-east"} for p in ("acme", "lambda")]
    offerings = [
        offering("h1", "h100-sxm", 1, 3.90, provider="lambda"),
        offering("h1", "h100-sxm", 1, 4.00, provider="acme"),
        offering("h8", "h100-sxm", 8, 31.20, provider="acme"),
    ]
    folder = write_catalog(tmp_path / "cat", offerings, regions=regions)
    _, sol = solve_for_analysis(parse_problem(yaml.safe_load(PROBLEM)), load_catalog(folder))
    return sol


def test_entry_estimates_by_hand(solution):
    estimate = entry_estimates(solution)
    assert estimate["acme/us-east/h1#on_demand"] == pytest.approx(3.90 / 4.00, rel=1e-6)
    assert estimate["acme/us-east/h8#on_demand"] == pytest.approx(3.90 / 31.20, rel=1e-6)
    # the plan's own H100 is worth its price at the plan's duals (its reduced cost is 0)
    assert estimate["lambda/us-east/h1#on_demand"] == pytest.approx(1.0, rel=1e-6)


def test_a_training_cluster_is_worth_what_the_chosen_one_costs(tiny_catalog):
    # Training (conftest train(): dense-7b on 1e11 tokens, one month) on the same 8 x H100
    # at $32/h in us-east and $40/h in eu-north, on demand. The plan's cluster is the
    # cheapest size at $32/h; a cluster's choice row (train_once) holds only what the
    # plan's LP fixes, so its dual is the one that prices the chosen cluster at its cost,
    # and the same size at $40/h (the same hours, the same units) is worth 32/40 = 0.8 of
    # its cost (before: that dual was left as HiGHS returned it, 0 here).
    eu = offering("h8", "h100-sxm", 8, 40.0, region="eu-north")
    cat = tiny_catalog([offering("h8", "h100-sxm", 8, 32.0), eu])
    _, sol = solve_for_analysis(training_problem([train()], modes=["on_demand"]), cat)
    estimate = entry_estimates(sol)
    assert estimate["acme/eu-north/h8#on_demand"] == pytest.approx(32.0 / 40.0, rel=1e-6)
    assert estimate["acme/us-east/h8#on_demand"] == pytest.approx(1.0, rel=1e-6)


def test_shadow_prices_leave_out_rows_in_which_nothing_of_the_plan_moves(solution):
    # The same hand case. acme has no units in the plan: its egress rows (egress <= its
    # units' capacity, 0 <= 0) hold at any dual up to a bound, so none of them is listed.
    # The N+1 row's dual is determined: one more token/s costs 1/c of a lambda H100 for the
    # month, $3.90 x 744 h / c, with c one H100's tokens/s for this workload.
    report = shadow_prices(solution)
    assert not [d for d in report.duals if "acme" in d.constraint or "acme" in (d.pool or "")]
    options = solution.compiled.options
    c = float(
        options.loc[
            options["pool_id"] == "lambda/us-east/h1#on_demand", "tokens_per_s_per_unit"
        ].iat[0]
    )
    [n1] = [d for d in report.duals if d.family == "n_plus_1"]
    assert n1.d_objective_d_rhs == pytest.approx(3.90 * 744 / c, rel=1e-6)


def test_a_pool_its_quota_shuts_out_is_not_estimated():
    # problems/h100-quota-training.yaml gives aws and gcp a quota of 0 B200s and 0 H200s
    # and 64 H100s, where a cluster that trains in its 30 days needs about 94 H100s
    # (more B200s or H200s than 0): every such cluster exceeds its quota row at any price,
    # so no plan can use those pools and none is estimated (before: gcp's a4-highgpu-8g
    # B200 on demand ranked first, 6.2x its price, where the exact search says "no
    # feasible plan can use it"). The A100 pools keep theirs: the closest to entering by
    # the exact search, p4de reserved for a year (-87%), is among them.
    problem = load_problem(ROOT / "problems" / "h100-quota-training.yaml")
    _, sol = solve_for_analysis(problem, load_catalog())
    estimate = entry_estimates(sol)
    pools = sol.compiled.pools.set_index("pool_id")["accelerator_id"]
    shut = {p for p, acc in pools.items() if acc in {"b200", "h200", "h100-sxm"}}
    assert shut and not shut & set(estimate)
    assert "aws/us-east-1/p4de.24xlarge#reserved_1y" in estimate
