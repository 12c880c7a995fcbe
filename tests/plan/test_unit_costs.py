"""Unit costs ($/1M tokens) worked by hand: the seed's plan (served tokens from the load
curve, the serving cost lines) and a tiny hand case with a model API to compare with; the
verifier refuses a plan whose unit cost was edited."""

from __future__ import annotations

import math

import pytest

from conftest import ROOT, offering, serve, write_catalog
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import load_problem, parse_problem
from solver.outputs.unit_costs_text import unit_cost_lines
from solver.solve import solve_problem
from solver.trust.verify import verify_plan


@pytest.fixture(scope="module")
def seed():
    problem = load_problem(ROOT / "problems" / "seed-2m-13b.yaml")
    catalog = load_catalog()
    return solve_problem(problem, catalog), problem, catalog


@pytest.fixture(scope="module")
def seed_unguarded():
    # the seed at catalog prices (price_guard: none), where two deployments share the load
    # (Lambda GH200 and Massed Compute A100 pairs): the case the split by capacity is worked on
    problem = load_problem(ROOT / "problems" / "seed-2m-13b.yaml")
    problem = problem.model_copy(update={"price_guard": "none"})
    catalog = load_catalog()
    return solve_problem(problem, catalog), problem, catalog


def _rows(plan):
    return {(u.scope, u.workload, u.offering): u for u in plan.unit_costs}


def test_the_seeds_dollars_per_million_tokens_by_hand(seed):
    plan, _, _ = seed
    rows = _rows(plan)
    chat = rows[("workload", "chat-13b", "")]
    # served tokens from the demand and the load curve (its hourly factors have mean 1):
    # 50,000 users x 10 requests x 400 output tokens = 2e8 output tokens a day, over the
    # serving periods m04-15..m28-36 = 2027-04-01 to 2029-12-31 = 365 + 366 + 275 = 1,006
    # days: 2.012e11 output tokens; the prompts 1,000 / 400 as many: 5.03e11 input tokens
    assert chat.output_tokens == pytest.approx(2.012e11, rel=1e-9)
    assert chat.input_tokens == pytest.approx(5.03e11, rel=1e-9)
    # the serving lines (tests/core/test_fleet.py): Lambda GH200 at $2.29/h, 40 unit-hours a
    # day, and Seeweb H200 at EUR 2.60 x 1.1761 = $3.05786/h, 44 unit-hours a day, over 1,006
    # days: $92,149.60 + $135,353.12 = $227,502.72
    by_hand = 2.29 * 40 * 1006 + 2.60 * 1.1761 * 44 * 1006
    assert chat.cost_usd == pytest.approx(by_hand, abs=0.01)
    assert chat.cost_usd == pytest.approx(227_502.72, abs=0.01)
    # $227,502.72 / 201,200 million output tokens = $1.130729 per 1M output tokens;
    # / (503,000 + 201,200) million tokens = $0.32307 per 1M tokens in and out
    assert chat.usd_per_1m_output_tokens == pytest.approx(by_hand / 201_200, rel=1e-9)
    assert chat.usd_per_1m_output_tokens == pytest.approx(1.130729, abs=1e-6)
    assert chat.usd_per_1m_tokens == pytest.approx(by_hand / 704_200, rel=1e-9)
    # the whole plan carries the training too: $370,028.54 / 201,200 = $1.8391 per 1M output
    whole = rows[("plan", "", "")]
    assert whole.cost_usd == pytest.approx(plan.total_cost_usd)
    assert whole.usd_per_1m_output_tokens == pytest.approx(plan.total_cost_usd / 201_200)
    # all in by default (no costs: block): the plan's $383,855.08 (compute $370,028.54 +
    # storage $3,462.70 + egress $36.05 + staff $10,327.80, tests/plan/test_default_costs.py)
    # / 201,200 = $1.907828 per 1M output tokens. The chat's share: its $227,502.72
    # compute, its providers' lines in full (Lambda's egress and support $0, Seeweb's
    # egress $36.05: the 100.1327 billion output tokens Lambda's free egress leaves it
    # (test below) x 4 bytes = 400.53 GB x the $0.09 reference, support $0), the staff
    # line (no provider) in proportion to compute, $10,327.80 x 227,502.72 / 370,028.54 =
    # $6,349.78, and none of TensorWave's storage: $233,888.55 / 201,200 = $1.162468 per
    # 1M output tokens
    seeweb_gb = (2.012e11 - 101_067_323_312.6457) * 4 / 1e9
    assert seeweb_gb * 0.09 == pytest.approx(36.05, abs=0.005)
    assert plan.all_in_cost_usd == pytest.approx(383_855.08, abs=0.01)
    assert whole.all_in_cost_usd == pytest.approx(383_855.08, abs=0.01)
    assert whole.all_in_usd_per_1m_output_tokens == pytest.approx(383_855.08 / 201_200, abs=1e-7)
    staff = 10_327.80 * 227_502.72 / 370_028.54
    assert staff == pytest.approx(6_349.78, abs=0.01)
    assert chat.all_in_cost_usd == pytest.approx(227_502.72 + 36.05 + staff, abs=0.02)
    assert chat.all_in_usd_per_1m_output_tokens == pytest.approx(1.162468, abs=1e-5)
    # no compare_api: no API figures
    assert whole.api_cost_usd is None
    assert "unit_costs" in plan.model_dump(mode="json")


def test_the_seeds_deployments_serve_the_load_curve_cheapest_egress_first(seed_unguarded):
    plan, _, _ = seed_unguarded
    rows = _rows(plan)
    # the default day for peak_to_average 3: f(h) = m + (3 - m) s(h), s(h) = ((1 +
    # cos(2 pi (h - 14) / 24)) / 2)^3, m = 1/11 (solver.inputs.load.diurnal_factors); the
    # blocks are the top 4 hours (12-15), the next 8 (8-11, 16-19) and the last 12; a
    # block's share of the day's tokens is the sum of f over its hours / 24
    m = 1 / 11

    def f(h: int) -> float:
        return m + (3 - m) * ((1 + math.cos(2 * math.pi * (h - 14) / 24)) / 2) ** 3

    hours = {
        "peak": (12, 13, 14, 15),
        "shoulder": (8, 9, 10, 11, 16, 17, 18, 19),
        "base": (*range(8), *range(20, 24)),
    }
    share = {b: sum(f(h) for h in hs) / 24 for b, hs in hours.items()}
    assert sum(share.values()) == pytest.approx(1.0)
    assert share["peak"] == pytest.approx(0.46506, abs=1e-5)
    # each block's tokens go to the cheapest egress first (solver.inputs.egress): Lambda
    # ($0/GB) before Seeweb ($0.09/GB reference), each deployment up to the utilisation its
    # demand row sized for: at most the block's average over its demand D_b = 2e8 / 86,400
    # = 2,314.81 tokens/s x its worst hour's f / 0.8 (max_utilisation) per token/s of
    # capacity, so Lambda serves min(1, its capacity / D_b) of the block. Lambda 1 / 1 / 3
    # GH200 (batch 67, 1,720.78 tok/s each), Seeweb 1 / 4 / 2 H200 (batch 112, 2,330.25
    # tok/s each) in base / peak / shoulder: the plan's capacities, sized at p99 (the
    # default) on the chunked-prefill step (issue 47). Base: D = 1,315.24 < 1,720.78, all
    # of it; peak: 1,720.78 / 8,680.56 = 0.19823; shoulder: 5,162.33 / 7,099.74 = 0.72711
    gh = 1720.7760553082273
    units = {"base": 1, "peak": 1, "shoulder": 3}
    avg = 2e8 / 86_400
    served = {
        b: min(1.0, n * gh / (avg * max(f(h) for h in hours[b]) / 0.8)) for b, n in units.items()
    }
    assert served["peak"] == pytest.approx(0.19823, abs=1e-5)
    assert served["shoulder"] == pytest.approx(0.72711, abs=1e-5)
    lambda_share = sum(share[b] * served[b] for b in units)
    assert lambda_share == pytest.approx(0.50232, abs=1e-5)
    offering_of = "lambda/europe-central-1/gpu_1x_gh200"
    lam = rows[("deployment", "chat-13b", offering_of)]
    assert lam.output_tokens == pytest.approx(2.012e11 * lambda_share, rel=1e-9)
    # its cost $92,149.60 (40 unit-hours a day) over 101.07 billion output tokens: $0.9118
    # per 1M
    assert lam.cost_usd == pytest.approx(92_149.60, abs=0.01)
    assert lam.usd_per_1m_output_tokens == pytest.approx(
        92_149.60 / (2.012e5 * lambda_share), rel=1e-9
    )
    deployments = [u for u in plan.unit_costs if u.scope == "deployment"]
    assert sum(u.output_tokens for u in deployments) == pytest.approx(2.012e11, rel=1e-9)
    # at catalog prices (the same plan as guarded): $227,502.72 / 201,200 million output
    # tokens = $1.1307
    assert "chat-13b: $1.1307 per 1M output tokens" in "\n".join(unit_cost_lines(plan))


TINY = {
    "name": "tiny-unit-costs",
    "horizon_months": 1,
    "modes": ["on_demand"],
    "workloads": [serve(25)],
    "costs": "none",  # compute worked by hand against the API
    "compare_api": {
        "name": "example api",
        "usd_per_1m_input_tokens": 0.5,
        "usd_per_1m_output_tokens": 1.5,
    },
}


@pytest.fixture
def tiny(tmp_path):
    cat = write_catalog(
        tmp_path / "cat",
        [offering("h1", "h100-sxm", 1, 4.0), offering("l4", "l4", 1, 1.0, nvlink=False)],
    )
    problem = parse_problem(TINY)
    catalog = load_catalog(cat)
    return solve_problem(problem, catalog), problem, catalog


def test_a_tiny_plan_against_a_model_api_by_hand(tiny):
    plan, _, _ = tiny
    # 25 req/s of 100 prompt and 100 output tokens; H1 serves 10 req/s for $4/h, L4 2 req/s
    # for $1/h (measured): 2 H1 + 3 L4 = $11/h x 730 h = $8,030
    assert plan.total_cost_usd == pytest.approx(8030)
    rows = _rows(plan)
    chat = rows[("workload", "chat", "")]
    # 25 x 100 = 2,500 output tokens/s x 730 h x 3,600 s = 6.57e9, and as many input tokens
    assert chat.output_tokens == pytest.approx(6.57e9)
    assert chat.input_tokens == pytest.approx(6.57e9)
    # $8,030 / 6,570 million = $1.2222 per 1M output tokens; / 13,140 M = $0.6111 per 1M
    assert chat.usd_per_1m_output_tokens == pytest.approx(8030 / 6570)
    assert chat.usd_per_1m_tokens == pytest.approx(8030 / 13140)
    # the API bills 6,570 x $0.50 + 6,570 x $1.50 = $13,140 for the same tokens: the plan
    # costs 8,030 / 13,140 = 0.6111 of it, $0.3056 per 1M input and $0.9167 per 1M output
    # at the API's mix; the API breaks even at a price cut of 38.9%
    assert chat.api_cost_usd == pytest.approx(13_140)
    assert chat.api_cost_ratio == pytest.approx(8030 / 13140)
    assert chat.usd_per_1m_input_tokens_at_api_mix == pytest.approx(0.5 * 8030 / 13140)
    assert chat.usd_per_1m_output_tokens_at_api_mix == pytest.approx(1.5 * 8030 / 13140)
    assert "the API breaks even at a price cut of 38.9%" in "\n".join(unit_cost_lines(plan))
    # the day is flat: the H1 pair (2 x 1,000 tok/s) serves 2,000 / 2,600 of the tokens
    # for 2 x $4 x 730 = $5,840, the L4s 600 / 2,600 for $2,190
    h1 = rows[("deployment", "chat", "acme/us-east/h1")]
    l4 = rows[("deployment", "chat", "acme/us-east/l4")]
    assert h1.output_tokens == pytest.approx(6.57e9 * 2000 / 2600)
    assert h1.cost_usd == pytest.approx(5840) and l4.cost_usd == pytest.approx(2190)
    assert l4.usd_per_1m_output_tokens == pytest.approx(2190 / (6570 * 600 / 2600))


def test_the_verifier_refuses_an_edited_unit_cost(tiny):
    plan, problem, catalog = tiny
    assert [c.name for c in verify_plan(plan, problem, catalog) if not c.ok] == []
    rows = list(plan.unit_costs)
    k = next(i for i, u in enumerate(rows) if u.scope == "workload")
    rows[k] = rows[k].model_copy(
        update={"usd_per_1m_output_tokens": rows[k].usd_per_1m_output_tokens * 0.9}
    )
    edited = plan.model_copy(update={"unit_costs": rows})
    failed = {c.name for c in verify_plan(edited, problem, catalog) if not c.ok}
    assert failed == {"unit cost: $/1M output tokens"}
    # and a deployment that claims more tokens than its workload serves
    rows = list(plan.unit_costs)
    d = next(i for i, u in enumerate(rows) if u.scope == "deployment")
    rows[d] = rows[d].model_copy(update={"output_tokens": rows[d].output_tokens * 2})
    edited = plan.model_copy(update={"unit_costs": rows})
    failed = {c.name for c in verify_plan(edited, problem, catalog) if not c.ok}
    assert "unit costs: deployments serve the workload's tokens" in failed


def test_a_problem_without_serving_has_no_unit_costs(tmp_path):
    # a training-only plan serves no tokens: the field is left out of the JSON (a 7B model
    # on 1e10 tokens, as tests/trust/test_verify_mutation.py's training case)
    cat = write_catalog(tmp_path / "cat", [offering("h1", "h100-sxm", 1, 4.0)])
    training = {"kind": "training", "name": "pretrain", "model": "dense-7b", "tokens": 1e10}
    problem = parse_problem(
        {"name": "train", "horizon_months": 1, "modes": ["on_demand"], "workloads": [training]}
    )
    plan = solve_problem(problem, load_catalog(cat))
    assert plan.verified and plan.total_cost_usd > 0
    assert plan.unit_costs is None
    assert "unit_costs" not in plan.model_dump(mode="json")
