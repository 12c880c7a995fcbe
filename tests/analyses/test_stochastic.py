"""Two-stage planning under price and demand uncertainty (solver/analyses/stochastic/),
worked by hand.

One H100 offering serves 10 requests/s per instance: $4.00/h on demand, $2.00/h reserved
for a year (the whole 12-month horizon, 8,760 h). Base demand 20 requests/s (2 units).
Two equally likely scenarios:

- low:  demand x 0.5 = 1 unit; on demand x 0.375 = $1.50/h;
- high: demand x 1.5 = 3 units; on demand x 0.75 = $3.00/h.

Reserving R units now costs $2R/h in both; the rest is rented in each scenario.
The k-th reserved unit saves the on-demand price in every scenario that needs k units:
unit 1 saves 0.5 x 1.50 + 0.5 x 3.00 = $2.25/h > $2 (reserve it); units 2 and 3 save
0.5 x 3.00 = $1.50/h < $2 (rent them). So R = 1, where low alone would reserve 0 (1.50 <
2) and high alone 3 (3.00 > 2).

- RP  = 2 x 1 + 0.5 x 0 + 0.5 x (2 x 3.00) = $5.00/h x 8,760 = $43,800;
- EV: expected demand 2 units at 0.5 x 1.50 + 0.5 x 3.00 = $2.25/h > $2: reserve 2;
  EEV = 2 x 2 + 0.5 x 0 + 0.5 x (1 x 3.00) = $5.50/h = $48,180; VSS = EEV - RP = $4,380;
- WS = 0.5 x 1.50 + 0.5 x (3 x 2) = $3.75/h = $32,850; EVPI = RP - WS = $10,950.
"""

from __future__ import annotations

import importlib
import json
import time
import types

import pytest
import yaml
from typer.testing import CliRunner

from conftest import offering, serve, write_catalog
from solver.analyses.stochastic import (
    demand_factors,
    price_factors,
    scenario_catalog,
    scenario_problem,
    scenarios_of,
    solve_stochastic,
)
from solver.cli import app
from solver.core.backends import SolveOptions
from solver.errors import InfeasibleError, NoPlanError, ProcureError
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import parse_problem
from solver.solve import solve_problem

runner = CliRunner()
HOURS = 8_760.0

LOW = {
    "name": "low",
    "probability": 0.5,
    "prices": [{"mode": "on_demand", "factor": 0.375}],
    "demand": [{"factor": 0.5}],
}
HIGH = {
    "name": "high",
    "probability": 0.5,
    "prices": [{"mode": "on_demand", "factor": 0.75}],
    "demand": [{"factor": 1.5}],
}


def _problem(**uncertainty) -> dict:
    return {
        "name": "reserve-or-rent",
        "horizon_months": 12,
        "modes": ["on_demand", "reserved_1y"],
        "load_blocks": [{"name": "all-day", "hours_per_day": 24, "demand_factor": 1}],
        "workloads": [serve(20)],
        "uncertainty": {"scenarios": [LOW, HIGH], **uncertainty},
    }


@pytest.fixture
def catalog(tmp_path):
    return load_catalog(
        write_catalog(tmp_path / "cat", [offering("h1", "h100-sxm", 1, 4.0, r1=2.0)])
    )


def _reserved(items) -> float:
    return sum(i.units for i in items if i.item == "reservation")


def test_the_stochastic_plan_reserves_what_neither_scenario_would(catalog):
    problem = parse_problem(_problem())
    sp = solve_stochastic(problem, catalog)
    assert _reserved(sp.commitments) == 1
    assert sp.expected_cost_usd == pytest.approx(5.00 * HOURS)  # $43,800
    assert [o.total_cost_usd for o in sp.scenarios] == [
        pytest.approx(2.0 * HOURS),  # low: the reserved unit serves it all
        pytest.approx((2.0 + 2 * 3.0) * HOURS),  # high: 1 reserved + 2 rented at $3
    ]
    assert _reserved(sp.deterministic_commitments) == 2
    assert sp.deterministic_expected_cost_usd == pytest.approx(5.50 * HOURS)  # $48,180
    assert sp.value_of_stochastic_solution_usd == pytest.approx(0.50 * HOURS)  # $4,380
    assert sp.wait_and_see_usd == pytest.approx(3.75 * HOURS)  # $32,850
    assert sp.expected_value_of_perfect_information_usd == pytest.approx(1.25 * HOURS)
    assert sp.worst_scenario == "high" and sp.worst_case_usd == pytest.approx(8.0 * HOURS)
    # each scenario's own optimum, solved alone as a deterministic problem: 0 and 3
    for scenario, own in zip(scenarios_of(problem, catalog), (0, 3), strict=True):
        p_s = scenario_problem(problem, demand_factors(problem, scenario), "every_scenario")
        c_s = scenario_catalog(catalog, price_factors(catalog, scenario))
        plan = solve_problem(p_s, c_s)
        assert _reserved(plan.line_items) == own


def test_caps_hold_in_every_scenario_or_in_expectation(catalog, tmp_path):
    # A $50,000 budget: in every scenario it is infeasible (high needs at least
    # 3 x $2 x 8,760 = $52,560); in expectation the plan above ($43,800) keeps it.
    every = _problem()
    every["budget_usd"] = 50_000
    path = tmp_path / "every.yaml"
    path.write_text(yaml.safe_dump(every))
    cat = tmp_path / "cat"
    result = runner.invoke(app, ["solve", str(path), "--catalog", str(cat)])
    assert result.exit_code == 3, result.output
    expectation = _problem(caps="expectation")
    expectation["budget_usd"] = 50_000
    sp = solve_stochastic(parse_problem(expectation), catalog)
    assert sp.expected_cost_usd == pytest.approx(43_800.0)
    assert sp.worst_case_usd > 50_000  # one scenario spends more; the expectation holds


def test_a_worst_case_cap_buys_insurance(catalog):
    # No scenario may cost more than $60,000: R = 1 leaves high at $70,080 and R = 2 at
    # (2 x 2 + 3) x 8,760 = $61,320, so R = 3: $6/h in both = $52,560
    sp = solve_stochastic(parse_problem(_problem(max_scenario_cost_usd=60_000)), catalog)
    assert _reserved(sp.commitments) == 3
    assert sp.worst_case_usd == pytest.approx(52_560.0)
    assert sp.expected_cost_usd == pytest.approx(52_560.0)


def test_the_cli_writes_the_two_stage_plan(tmp_path):
    write_catalog(tmp_path / "cat", [offering("h1", "h100-sxm", 1, 4.0, r1=2.0)])
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(_problem()))
    args = ["solve", str(path), "--catalog", str(tmp_path / "cat")]
    table = runner.invoke(app, args)
    assert table.exit_code == 0, table.output
    assert "value of the stochastic solution (VSS) $4,380" in table.output
    doc = json.loads(runner.invoke(app, [*args, "--format", "json"]).output)
    assert doc["expected_value_of_perfect_information_usd"] == pytest.approx(10_950.0)
    assert runner.invoke(app, [*args, "--format", "csv"]).exit_code == 2


def test_drawn_scenarios_are_reproducible(catalog):
    drawn = _problem()
    drawn["uncertainty"] = {"n_scenarios": 6, "seed": 7, "price_sigma": 0.3,
                            "demand_range": [0.5, 1.5]}  # fmt: skip
    problem = parse_problem(drawn)
    first = scenarios_of(problem, catalog)
    assert [s.model_dump() for s in first] == [
        s.model_dump() for s in scenarios_of(problem, catalog)
    ]
    assert sum(s.probability for s in first) == pytest.approx(1.0)
    sp = solve_stochastic(problem, catalog)
    assert len(sp.scenarios) == 6
    assert sp.value_of_stochastic_solution_usd >= -1e-6
    assert sp.expected_value_of_perfect_information_usd >= -1e-6


@pytest.mark.parametrize(
    ("change", "fragments"),
    [
        ({"scenarios": [dict(LOW, probability=0.4), HIGH]}, ["add up to 0.9", "uncertainty"]),
        ({"scenarios": [dict(LOW, prices=[{"factor": 0}]), HIGH]}, ["factor", "greater than 0"]),
        ({"scenarios": [dict(LOW, prices=[{"mode": "reserved_1y", "factor": 2}]), HIGH]},
         ["mode", "on_demand"]),
        ({"scenarios": [dict(LOW, demand=[{"workload": "nope", "factor": 2}]), HIGH]},
         ["workload 'nope'"]),
        ({"scenarios": [dict(LOW, prices=[{"provider": "acmee", "factor": 2}]), HIGH]},
         ["provider 'acmee'", "prices[0].provider", "did you mean 'acme'"]),
        ({"scenarios": [LOW, HIGH], "n_scenarios": 4}, ["either scenarios"]),
    ],
)  # fmt: skip
def test_bad_scenarios_get_one_clear_message(tmp_path, change, fragments):
    write_catalog(tmp_path / "cat", [offering("h1", "h100-sxm", 1, 4.0, r1=2.0)])
    data = _problem()
    data["uncertainty"] = change
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(data))
    result = runner.invoke(app, ["solve", str(path), "--catalog", str(tmp_path / "cat")])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: ") and "fix:" in result.output
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in result.output, (fragment, result.output)


@pytest.mark.parametrize("workers", [1, 2])
def test_the_decomposition_agrees_with_the_extensive_form(catalog, workers):
    # Scenario decomposition on the same case: each scenario alone gives the lower bound
    # WS = $32,850; the candidates (low's R = 0, high's R = 3, the deterministic R = 2 and
    # the consensus 1.5 rounded to 1 and 2) priced exactly: R = 1 at $43,800 is the best,
    # the extensive form's optimum; gap (43,800 - 32,850) / 43,800 = 25%
    sp = solve_stochastic(
        parse_problem(_problem()), catalog, method="decomposition", workers=workers
    )
    assert sp.method == "decomposition"
    assert _reserved(sp.commitments) == 1
    assert sp.expected_cost_usd == pytest.approx(43_800.0)
    assert sp.lower_bound_usd == pytest.approx(32_850.0)
    assert sp.gap == pytest.approx(0.25)
    assert sp.deterministic_expected_cost_usd == pytest.approx(48_180.0)
    # nothing reserved (low's own candidate, reused): low 1 x $1.50/h = $13,140, high
    # 3 x $3.00/h = $78,840; expected $45,990
    assert [o.all_rented_cost_usd for o in sp.scenarios] == [
        pytest.approx(13_140.0),
        pytest.approx(78_840.0),
    ]
    assert sp.all_rented_expected_cost_usd == pytest.approx(45_990.0)
    extensive = solve_stochastic(parse_problem(_problem()), catalog, method="extensive")
    assert extensive.gap == pytest.approx(0.0, abs=1e-6)
    assert extensive.expected_cost_usd == pytest.approx(sp.expected_cost_usd)


def test_the_decomposition_keeps_caps_in_expectation(catalog):
    # the $50,000 budget in expectation: R = 1 ($43,800) keeps it; with a $40,000 budget
    # no commitments do (the cheapest expectation is $43,800): infeasible
    data = _problem(caps="expectation")
    data["budget_usd"] = 50_000
    sp = solve_stochastic(parse_problem(data), catalog, method="decomposition")
    assert sp.expected_cost_usd == pytest.approx(43_800.0)
    data["budget_usd"] = 40_000
    with pytest.raises(InfeasibleError):
        solve_stochastic(parse_problem(data), catalog, method="decomposition")


def test_stochastic_without_uncertainty_is_refused(tmp_path):
    write_catalog(tmp_path / "cat", [offering("h1", "h100-sxm", 1, 4.0, r1=2.0)])
    data = _problem()
    del data["uncertainty"]
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(data))
    args = ["solve", str(path), "--catalog", str(tmp_path / "cat"), "--stochastic"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "no uncertainty: section" in result.output and "fix:" in result.output


@pytest.mark.parametrize("method", ["extensive", "decomposition", "benders"])
def test_a_cvar_weight_buys_more_reservations(catalog, method):
    # Expected cost + w x CVaR at 0.9. With two equally likely scenarios the worst 10% lies
    # in high, so CVaR_0.9 = high's cost. Per hour, for R reserved (table of the module doc):
    #   R   low            high                 E      CVaR
    #   0   1 x 1.50       3 x 3.00 = 9         5.25   9
    #   1   2              2 + 2 x 3.00 = 8     5.00   8
    #   2   4              4 + 1 x 3.00 = 7     5.50   7
    #   3   6              6                    6.00   6
    # (R >= 4: E = CVaR = 2R >= 8). w = 0.25: 7.50, 7.00, 7.25, 7.50: R = 1 as risk-neutral.
    # w = 1: 14.25, 13, 12.5, 12: R = 3, objective 12 x 8,760 = $105,120, expected $52,560,
    # CVaR $52,560 (high with 3 reserved). Decomposition lower bound: hindsight costs
    # low $13,140, high $52,560: E $32,850 + 1 x CVaR $52,560 = $85,410; gap
    # (105,120 - 85,410) / 105,120 = 18.75%.
    mild = solve_stochastic(
        parse_problem(_problem(risk={"cvar_level": 0.9, "weight": 0.25})), catalog, method=method
    )
    assert _reserved(mild.commitments) == 1
    assert mild.objective_usd == pytest.approx(7.0 * HOURS)  # $61,320
    assert mild.cvar_usd == pytest.approx(8.0 * HOURS)  # $70,080
    averse = solve_stochastic(
        parse_problem(_problem(risk={"cvar_level": 0.9, "weight": 1.0})), catalog, method=method
    )
    assert _reserved(averse.commitments) == 3
    assert averse.objective_usd == pytest.approx(105_120.0)
    assert averse.expected_cost_usd == pytest.approx(52_560.0)
    assert averse.cvar_usd == pytest.approx(52_560.0)
    assert averse.cvar_level == 0.9 and averse.risk_weight == 1.0
    # the deterministic plan (R = 2, $48,180) is cheaper in expectation: VSS -$4,380
    assert averse.value_of_stochastic_solution_usd == pytest.approx(-4_380.0)
    # Benders: the cuts are exact at whole R (see the L-shaped test below), so the master
    # proves R = 3 as the extensive form does
    if method in ("extensive", "benders"):
        assert averse.gap == pytest.approx(0.0, abs=1e-6)
        assert averse.lower_bound_usd == pytest.approx(105_120.0, rel=1e-6)
    else:
        assert averse.lower_bound_usd == pytest.approx(85_410.0)
        assert averse.gap == pytest.approx(0.1875)


def test_no_risk_weight_is_the_expected_cost(catalog):
    # weight 0: the objective is the expected cost, R = 1 at $43,800 as without risk:
    sp = solve_stochastic(parse_problem(_problem(risk={"cvar_level": 0.5, "weight": 0})), catalog)
    assert _reserved(sp.commitments) == 1
    assert sp.objective_usd == pytest.approx(43_800.0)


@pytest.mark.parametrize(
    ("risk", "fragments"),
    [
        ({"cvar_level": 1.0, "weight": 0.5}, ["uncertainty.risk.cvar_level", "less than 1"]),
        ({"cvar_level": 0, "weight": 0.5}, ["uncertainty.risk.cvar_level", "greater than 0"]),
        ({"cvar_level": 0.9, "weight": -1}, ["uncertainty.risk.weight", "greater than or equal"]),
        ({"cvar_level": 0.9}, ["uncertainty.risk.weight"]),
        ({"cvar_level": 0.9, "weight": 1, "wieght": 2}, ["wieght"]),
    ],
)
def test_bad_risk_gets_one_clear_message(tmp_path, risk, fragments):
    write_catalog(tmp_path / "cat", [offering("h1", "h100-sxm", 1, 4.0, r1=2.0)])
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(_problem(risk=risk)))
    result = runner.invoke(app, ["solve", str(path), "--catalog", str(tmp_path / "cat")])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: ") and "fix:" in result.output
    assert str(path) in result.output and "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in result.output, (fragment, result.output)


@pytest.mark.parametrize("workers", [1, 2])
def test_the_l_shaped_method_agrees_with_the_extensive_form(catalog, workers):
    # Benders on the hand case. Per hour, with R reserved, the scenario costs are
    # low 2R + 1.50 max(1 - R, 0) and high 2R + 3.00 max(3 - R, 0); their LP relaxation is
    # the same at whole R (rented units follow R), so the cuts are exact.
    # 1. the first candidate is the deterministic R = 2 ($48,180): cuts theta_low >= 2R
    #    (slope 2 at R = 2) and theta_high >= 9 - R (slope 2 - 3), thetas at least their
    #    hindsight costs 1.50 and 6.00;
    # 2. the master: R = 0: 0.5 (1.5 + 9) = 5.25, R = 1: 0.5 (2 + 8) = 5.00, R = 2: 5.50,
    #    R = 3: 6.00: R = 1, bound 5.00 x 8,760 = $43,800; priced exactly: $43,800, gap 0;
    #    the bound beats wait-and-see ($32,850).
    sp = solve_stochastic(parse_problem(_problem()), catalog, method="benders", workers=workers)
    assert sp.method == "benders" and sp.status == "optimal"
    assert _reserved(sp.commitments) == 1
    assert sp.expected_cost_usd == pytest.approx(43_800.0)
    assert sp.lower_bound_usd == pytest.approx(43_800.0)
    assert sp.lower_bound_usd >= sp.wait_and_see_usd  # $32,850
    assert sp.gap == pytest.approx(0.0, abs=1e-6)
    assert sp.deterministic_expected_cost_usd == pytest.approx(48_180.0)
    assert "2 master solves, 4 cuts (0 feasibility), 2 candidates" in sp.notes[-1]


def test_the_l_shaped_method_cuts_off_infeasible_commitments(catalog):
    # A $65,000 budget in every scenario: R = 1 leaves high at $70,080 (infeasible), R = 2
    # costs $61,320 there, so the optimum is R = 2 at $48,180 (R = 3: $52,560). Benders:
    # R = 2 first (as above); the master proposes R = 1; high's LP at R = 1 is infeasible
    # and the LP of its least violation (demand short by (78,840 - 8,760 R - 65,000) /
    # 26,280 units, slope -1/3 per reserved unit) cuts R < 1.58 off; the master returns to
    # R = 2, already priced: stop with bound $48,180 (the cuts at R = 2 are exact).
    data = _problem()
    data["budget_usd"] = 65_000
    sp = solve_stochastic(parse_problem(data), catalog, method="benders")
    assert _reserved(sp.commitments) == 2
    assert sp.expected_cost_usd == pytest.approx(48_180.0)
    assert sp.lower_bound_usd == pytest.approx(48_180.0)
    assert "(1 feasibility)" in sp.notes[-1]
    extensive = solve_stochastic(parse_problem(data), catalog, method="extensive")
    assert extensive.expected_cost_usd == pytest.approx(48_180.0)


def test_the_l_shaped_method_bounds_drawn_scenarios(catalog):
    # Six drawn scenarios: the bound lies between wait-and-see and the extensive form's
    # optimum, and the plan costs at least that optimum (no hand figure: a property)
    drawn = _problem()
    drawn["uncertainty"] = {"n_scenarios": 6, "seed": 7, "price_sigma": 0.3,
                            "demand_range": [0.5, 1.5]}  # fmt: skip
    problem = parse_problem(drawn)
    sp = solve_stochastic(problem, catalog, method="benders")
    best = solve_stochastic(problem, catalog, method="extensive").expected_cost_usd
    assert sp.wait_and_see_usd - 1e-6 <= sp.lower_bound_usd <= best * (1 + 1e-6)
    assert sp.expected_cost_usd >= best * (1 - 1e-6)
    assert sp.gap == pytest.approx((sp.expected_cost_usd - sp.lower_bound_usd)
                                   / sp.expected_cost_usd)  # fmt: skip


def _set_clock(monkeypatch: pytest.MonkeyPatch, clock: types.SimpleNamespace) -> None:
    """``clock`` as the ``time`` of the task runner and of every module of the two-stage
    package that reads one (the deadline is read wherever a scenario solve starts)."""
    import pkgutil

    import solver.analyses.runner as runner_module
    import solver.analyses.stochastic as stochastic

    monkeypatch.setattr(runner_module, "time", clock)
    patched = 0
    for info in pkgutil.iter_modules(stochastic.__path__):
        module = importlib.import_module(f"{stochastic.__name__}.{info.name}")
        if getattr(module, "time", None) is time:
            monkeypatch.setattr(module, "time", clock)
            patched += 1
    assert patched, "no module of solver.analyses.stochastic reads the clock"


def test_a_decomposition_cut_by_its_time_limit_says_what_it_left_out(catalog, monkeypatch):
    # The case above, with the clock jumping past the deadline once four scenario solves
    # are done: the two solved with hindsight (the bound, WS = $32,850) and the first
    # candidate priced in both scenarios, the deterministic plan's R = 2 (priced first:
    # EEV = $48,180 above). The other candidates (R = 1, 0, 3) are not priced, and the
    # all-rented comparison is not made; the plan is R = 2 at $48,180, verified, with its
    # gap against the proven bound: (48,180 - 32,850) / 48,180 = 31.8%. (Without the
    # limit: R = 1 at $43,800, 25%.)
    import solver.analyses.stochastic.recourse as recourse

    real = time.perf_counter
    jump = [0.0]
    _set_clock(monkeypatch, types.SimpleNamespace(perf_counter=lambda: real() + jump[0]))
    task = recourse.scenario_task
    calls = []

    def counted(shared, t):
        calls.append(t)
        out = task(shared, t)
        if len(calls) == 4:
            jump[0] = 1e6  # the deadline (3,600 s x 0.9 from the start) is now past
        return out

    monkeypatch.setattr(recourse, "scenario_task", counted)
    sp = solve_stochastic(
        parse_problem(_problem()),
        catalog,
        method="decomposition",
        options=SolveOptions(time_limit_s=3600.0),
    )
    assert len(calls) == 4
    assert sp.stopped_at_time_limit and sp.verified and sp.status == "feasible"
    assert _reserved(sp.commitments) == 2
    assert sp.expected_cost_usd == pytest.approx(48_180.0)
    assert sp.lower_bound_usd == pytest.approx(32_850.0)
    assert sp.gap == pytest.approx((48_180.0 - 32_850.0) / 48_180.0)
    assert sp.cut_at_time_limit == [
        "3 of 4 candidate commitments not priced",
        "the comparison with the deterministic plan and with renting everything: "
        "2 of 2 scenario re-plans",
    ]
    assert sp.all_rented_expected_cost_usd is None


def test_a_decomposition_with_no_time_for_the_bound_stops_with_a_message(catalog, monkeypatch):
    # the deadline past before the first scenario is solved with hindsight: no bound, so
    # no plan is claimed; one message says how far it got
    real = time.perf_counter
    calls = [0]

    def late():
        calls[0] += 1
        return real() + (1e6 if calls[0] > 1 else 0.0)  # the first reading: the start

    _set_clock(monkeypatch, types.SimpleNamespace(perf_counter=late))
    with pytest.raises(NoPlanError, match="0 of 2 scenarios were solved with hindsight"):
        solve_stochastic(
            parse_problem(_problem()),
            catalog,
            method="decomposition",
            options=SolveOptions(time_limit_s=3600.0),
        )


def test_a_switching_cost_with_uncertainty_is_refused_by_name(catalog):
    # the scenarios' objective has no switching penalty (analyses/stochastic/extensive.py), so
    # a two-stage plan would leave it out silently: refused, naming the workload's field
    data = _problem()
    data["workloads"] = [serve(20, switching_cost_usd=5.0)]
    with pytest.raises(ProcureError) as err:
        solve_stochastic(parse_problem(data), catalog)
    assert err.value.field == "workloads[0] (chat).switching_cost_usd"


BANDED = {"quote": 0.0, "list": 0.0, "third_party": 0.37, "unverified": 0.37}


def test_two_stage_planning_sets_the_default_guard_aside(tmp_path):
    # the case of test_the_stochastic_plan_reserves_what_neither_scenario_would with its
    # reserved price unverified (band 0.37) and its on-demand price list (band 0)
    # (docs/concepts/price-guard.md, "Two-stage planning"). At catalog prices one reserved
    # unit costs 2.00 + (0 + 2 x 3.00) / 2 = $5.00/h expected against 1 x 1.50 / 2 +
    # 3 x 3.00 / 2 = $5.25/h without: it is reserved. Guarded, it would cost 2.00 x 1.37 =
    # 2.74 + 3.00 = $5.74/h and lose; the scenarios are priced at catalog prices, so the
    # plan reserves 1 for 5.00 x 8,760 = $43,800
    row = offering("h1", "h100-sxm", 1, 4.0, r1=2.0)
    row |= {"price_confidence": "list", "reserved_price_confidence": "unverified"}
    cat = write_catalog(tmp_path / "cat", [row], price_bands=BANDED)
    problem = parse_problem(_problem())
    assert problem.price_guard == "band_top"  # the default
    sp = solve_stochastic(problem, load_catalog(cat))
    assert _reserved(sp.commitments) == 1
    assert sp.expected_cost_usd == pytest.approx(5.00 * HOURS)
