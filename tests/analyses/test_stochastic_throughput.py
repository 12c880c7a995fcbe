"""Throughput as a scenario dimension of the two-stage plan (issue 33, build item 3),
worked by hand.

Two offerings of one H100 (measured: 10 requests/s per unit at the estimate):

- ``acme/us-east/h1``: $4.00/h on demand, $2.00/h reserved for a year (the whole
  12-month horizon, 8,760 h);
- ``acme/us-east/h2``: $3.00/h on demand, nothing to reserve (the cheapest recourse).

Demand 18 requests/s around the clock. Two throughput scenarios:

- ``as_estimated`` (probability 1 - p): capacity x 1, 10 requests/s a unit: 2 units
  (20 >= 18; 1 unit gives 10);
- ``optimistic_1.5`` (probability p): the estimate 1.5x too high, capacity x 1/1.5 =
  6.667 requests/s a unit: 3 units (20 >= 18; 2 units give 13.3).

Reserving R units of h1 costs $2R/h in both; what is missing is rented from h2 at $3/h.
Units 1 and 2 are needed in both scenarios and $2 < $3: reserve them. The third unit costs
$2/h always and saves $3/h only in the optimistic scenario: worth it when 3p > 2, above the
break-even probability p* = 2/3.

- p = 0.7 > 2/3: R = 3, $6.00/h in both scenarios: expected $52,560. The plan at the
  estimates (capacity x 1) reserves 2: 0.3 x $4 + 0.7 x ($4 + $3) = $6.10/h = $53,436.
- p = 0.6 < 2/3: R = 2, 0.4 x $4 + 0.6 x $7 = $5.80/h = $50,808 (the third unit would
  make it $6.00/h). The EV plan (expected capacity factor 0.4 + 0.6 / 1.5 = 0.8: 8
  requests/s a unit, 18 / 8 = 2.25, so 3 units) reserves 3: EEV = $6.00/h = $52,560,
  VSS = $0.20/h = $1,752.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from conftest import offering, serve, write_catalog
from solver.analyses.stochastic import (
    demand_factors,
    scenario_compiled,
    scenario_problem,
    scenarios_of,
    solve_stochastic,
    throughput_shares,
)
from solver.cli import app
from solver.core.compile import compile_problem
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import parse_problem
from solver.solve import solve_problem
from solver.trust.verify import verify_plan

runner = CliRunner()
HOURS = 8_760.0
OPTIMISTIC = 1 / 1.5


def _throughput(p: float) -> list[dict]:
    return [
        {"name": "as_estimated", "factor": 1.0, "probability": round(1 - p, 10)},
        {"name": "optimistic_1.5", "factor": OPTIMISTIC, "probability": p},
    ]


def _problem(p: float | None = None, **extra) -> dict:
    out = {
        "name": "reserve-or-rent-capacity",
        "horizon_months": 12,
        "modes": ["on_demand", "reserved_1y"],
        "load_blocks": [{"name": "all-day", "hours_per_day": 24, "demand_factor": 1}],
        "workloads": [serve(18)],
        **extra,
    }
    if p is not None:
        out["uncertainty"] = {"throughput_scenarios": _throughput(p)}
    return out


OFFERINGS = [
    offering("h1", "h100-sxm", 1, 4.0, r1=2.0),
    offering("h2", "h100-sxm", 1, 3.0),
]


@pytest.fixture
def catalog(tmp_path):
    return load_catalog(write_catalog(tmp_path / "cat", OFFERINGS))


def _reserved(items) -> float:
    return sum(i.units for i in items if i.item == "reservation")


def test_above_the_break_even_probability_one_more_unit_is_reserved(catalog):
    sp = solve_stochastic(parse_problem(_problem(0.7)), catalog)
    assert _reserved(sp.commitments) == 3  # 3 x 0.7 = 2.1 > 2: the third unit pays
    assert sp.expected_cost_usd == pytest.approx(6.00 * HOURS)  # $52,560
    assert [o.total_cost_usd for o in sp.scenarios] == [
        pytest.approx(6.00 * HOURS),  # 3 reserved units serve 18 at 10 each
        pytest.approx(6.00 * HOURS),  # and 20 at 6.667 each: nothing rented
    ]
    # the plan at the estimates as they are reserves 2 (capacity x 1: 2 units serve 18)
    assert _reserved(sp.point_estimate_commitments) == 2
    assert sp.point_estimate_expected_cost_usd == pytest.approx(6.10 * HOURS)  # $53,436
    assert [o.point_estimate_cost_usd for o in sp.scenarios] == [
        pytest.approx(4.00 * HOURS),  # 2 reserved
        pytest.approx(7.00 * HOURS),  # 2 reserved + 1 rented from h2 at $3
    ]
    assert [o.throughput.factor for o in sp.scenarios] == [1.0, pytest.approx(OPTIMISTIC)]


def test_below_the_break_even_probability_the_unit_is_rented_when_needed(catalog):
    sp = solve_stochastic(parse_problem(_problem(0.6)), catalog)
    assert _reserved(sp.commitments) == 2  # 3 x 0.6 = 1.8 < 2: rent the third unit
    assert sp.expected_cost_usd == pytest.approx(5.80 * HOURS)  # $50,808
    assert [o.total_cost_usd for o in sp.scenarios] == [
        pytest.approx(4.00 * HOURS),
        pytest.approx(7.00 * HOURS),
    ]
    assert _reserved(sp.point_estimate_commitments) == 2  # the same first stage
    assert sp.point_estimate_expected_cost_usd == pytest.approx(5.80 * HOURS)
    # EV: capacity x 0.8 (8 requests/s a unit) needs 3 units, all reserved
    assert _reserved(sp.deterministic_commitments) == 3
    assert sp.deterministic_expected_cost_usd == pytest.approx(6.00 * HOURS)  # $52,560
    assert sp.value_of_stochastic_solution_usd == pytest.approx(0.20 * HOURS)  # $1,752


def test_each_scenarios_recourse_is_checked_against_its_own_capacity(catalog):
    # The as-estimated scenario's plan (2 units) meets 18 requests/s at 10 a unit, but not
    # at 6.667 a unit (13.3 < 18): the verifier, reading capacity_scenario from the
    # scenario's problem, passes it in its own scenario and fails it in the optimistic one.
    problem = parse_problem(_problem(0.6))
    s_est, s_opt = scenarios_of(problem, catalog)
    df = demand_factors(problem, s_est)
    p_est = scenario_problem(problem, df, "every_scenario", s_est.throughput)
    p_opt = scenario_problem(problem, df, "every_scenario", s_opt.throughput)
    plan = solve_problem(p_est, catalog)
    assert _reserved(plan.line_items) == 2
    assert all(c.ok for c in verify_plan(plan, p_est, catalog))
    # with a traffic mix the verifier checks capacity as each unit's time: serving 18
    # requests/s at 6.667 takes 18 / 6.667 = 2.7 units' time, more than the 2 units
    failed = [c for c in verify_plan(plan, p_opt, catalog) if not c.ok]
    assert [c.name for c in failed] == ["unit time split across buckets"]
    assert failed[0].detail.endswith("2.7000 > 2.0")


def test_a_band_quantile_scales_each_option_by_its_own_band(catalog):
    # A measured profile's band is 0.02 in log terms (physics/constants.py,
    # CAPACITY_BAND_LOG_MEASURED); at the 0.1 quantile, z = -1.281552, so the capacity
    # kept is exp(-1.281552 x 0.02) = exp(-0.025631) = 0.974695 of 10 requests/s. The
    # scenario compiled from the unpruned base equals compiling with capacity_scenario.
    problem = parse_problem(_problem())
    base = compile_problem(problem, catalog, prune_dominated=False)
    cs = {"band_quantile": 0.1}
    direct = compile_problem(
        parse_problem(_problem(capacity_scenario=cs)), catalog, prune_dominated=False
    )
    shares = throughput_shares(base, direct.problem.capacity_scenario)
    assert shares == pytest.approx([0.974695] * len(base.options), rel=1e-6)
    df = demand_factors(problem, scenarios_of(parse_problem(_problem(0.5)), catalog)[0])
    import pandas as pd

    ones = pd.DataFrame(1.0, index=catalog.offerings.index, columns=["on_demand", "spot"])
    scaled = scenario_compiled(base, direct.problem, ones, df, shares)
    assert np.allclose(
        scaled.options["tokens_per_s_per_unit"], direct.options["tokens_per_s_per_unit"]
    )
    assert np.allclose(
        scaled.bucket_capacity["requests_per_s_per_unit"],
        direct.bucket_capacity["requests_per_s_per_unit"],
    )
    assert direct.bucket_capacity["requests_per_s_per_unit"].iloc[0] == pytest.approx(9.74695)


def test_throughput_scenarios_multiply_the_demand_scenarios(catalog):
    # 2 demand scenarios x 2 throughput scenarios = 4, p = p_demand x p_throughput
    doc = _problem()
    doc["uncertainty"] = {
        "scenarios": [
            {"name": "low", "probability": 0.5, "demand": [{"factor": 0.5}]},
            {"name": "high", "probability": 0.5, "demand": [{"factor": 1.5}]},
        ],
        "throughput_scenarios": _throughput(0.25),
    }
    found = scenarios_of(parse_problem(doc), catalog)
    assert [s.name for s in found] == [
        "low|as_estimated", "low|optimistic_1.5", "high|as_estimated", "high|optimistic_1.5",
    ]  # fmt: skip
    assert [s.probability for s in found] == pytest.approx([0.375, 0.125, 0.375, 0.125])
    assert [s.demand[0].factor for s in found] == [0.5, 0.5, 1.5, 1.5]


def test_the_cli_option_asks_for_throughput_scenarios(tmp_path):
    # the same problem without uncertainty:, p = 0.7 given on the command line: R = 3
    write_catalog(tmp_path / "cat", OFFERINGS)
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(_problem()))
    args = ["solve", str(path), "--catalog", str(tmp_path / "cat"), "--format", "json"]
    result = runner.invoke(app, [*args, "--throughput-scenarios", "1:0.3,0.666667:0.7"])
    assert result.exit_code == 0, result.output
    sp = json.loads(result.output)
    assert sum(i["units"] for i in sp["commitments"]) == 3
    assert sp["expected_cost_usd"] == pytest.approx(6.00 * HOURS)
    assert sum(i["units"] for i in sp["point_estimate_commitments"]) == 2
    table = runner.invoke(app, [*args[:4], "--throughput-scenarios", "1:0.3,0.666667:0.7"])
    assert "capacity x 0.6667" in table.output and "point-estimate plan" in table.output


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("1:0.6,0.8:0.3", "add up to 0.9, not 1"),  # 0.6 + 0.3
        ("0:0.5,1:0.5", "the factor must be above 0"),
        ("q1.2:1", "the band quantile must be above 0 and below 1"),
        ("fast:1", "is not value:probability"),
    ],
)
def test_bad_throughput_scenarios_on_the_command_line_get_one_message(tmp_path, spec, words):
    write_catalog(tmp_path / "cat", OFFERINGS)
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(_problem()))
    args = ["solve", str(path), "--catalog", str(tmp_path / "cat")]
    result = runner.invoke(app, [*args, "--throughput-scenarios", spec])
    assert result.exit_code == 2, result.output
    assert words in result.output and "--throughput-scenarios" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("throughput", "words"),
    [
        (
            [{"name": "a", "factor": 1, "probability": 0.5},
             {"name": "b", "factor": 0.8, "probability": 0.3}],
            "throughput_scenarios probabilities add up to 0.8, not 1",
        ),
        ([{"name": "a", "factor": 0, "probability": 1}], "factor"),
        ([{"name": "a", "probability": 1}], "give either factor"),
    ],
)  # fmt: skip
def test_bad_throughput_scenarios_in_the_problem_get_one_message(tmp_path, throughput, words):
    write_catalog(tmp_path / "cat", OFFERINGS)
    doc = _problem()
    doc["uncertainty"] = {"throughput_scenarios": throughput}
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(doc))
    result = runner.invoke(app, ["solve", str(path), "--catalog", str(tmp_path / "cat")])
    assert result.exit_code == 2, result.output
    assert words in result.output and "p.yaml" in result.output
    assert "Traceback" not in result.output


def test_a_problems_own_capacity_scenario_plans_one_scenario(catalog):
    # capacity_scenario {factor: 1/1.5} on the problem is the optimistic scenario planned
    # alone: 3 units (20 >= 18 at 6.667 each), all reserved at $2: $6.00/h = $52,560, the
    # same plan as capacity_optimism: 1.5 (capacity / 1.5), verified against that capacity
    alone = solve_problem(
        parse_problem(_problem(capacity_scenario={"factor": OPTIMISTIC})), catalog
    )
    wary = solve_problem(parse_problem(_problem(capacity_optimism=1.5)), catalog)
    assert _reserved(alone.line_items) == 3
    assert alone.total_cost_usd == pytest.approx(6.00 * HOURS)
    assert wary.total_cost_usd == pytest.approx(alone.total_cost_usd)

    # the plan's assumptions read the scenario's share as compile does: 1/1.5 = 0.6667 of
    # each estimate counted on, and the same share of peak served if the estimates are
    # 1.5x optimistic as under capacity_optimism: 1.5 (was 1.0 counted, and a point
    # estimate taken 1.5x too low)
    def band(plan) -> dict:
        return {(a.name, a.subject): a.value for a in plan.assumptions if a.kind == "capacity_band"}

    counted = [v for (name, _), v in band(alone).items() if name == "capacity_counted"]
    assert counted and all(v == pytest.approx(1 / 1.5, abs=1e-4) for v in counted)
    assert band(alone) == band(wary)
    sources = [a.source for a in alone.assumptions if a.name == "capacity_counted"]
    assert all("throughput scenario keeps x0.6667" in text for text in sources)
