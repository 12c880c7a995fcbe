"""A period longer than a server's life or a reservation's term (issue 34, item 1).

The case of tests/core/test_ledger_owned_life.py: one 8x H100 unit serves a small chat
workload all day; rent it at $10/h (730 h a month: $7,300/month) or buy the box for
$200,000 with a 60-month life, no lead time, $500/month hosting, straight-line residual
value at the horizon.

Written with ONE 72-month period (the default), no server can serve the whole period
(its life is 60 months), so the plan rents all 72 months: 72 x 7,300 = $525,600. With
the period split at the server's life (60 + 12 months) the plan buys a box for the first
60 months ($200,000 + 60 x $500 = $230,000) and a second for the last 12 (worth 48/60 of
its price at the horizon: 200,000 - 160,000 + 12 x 500 = $46,000, against $87,600
rented): $276,000. The solver now makes that split itself (solver/core/refine.py) and
reports the plan in the one period written; where the split cannot be faithful (a
budget on the period) the plan keeps the period and carries a period_structure warning.
"""

from __future__ import annotations

import pytest

from conftest import TINY_SITES, offering
from solver.core.compile import compile_problem
from solver.core.restrictions import lifted_periods, period_restrictions, split_months
from solver.inputs.problem import parse_problem
from solver.solve import solve_problem

RENT = offering("p5", "h100-sxm", 8, 10.0, r1=6.0)
SITES = [dict(TINY_SITES[0], colocation_usd_per_kw_month=50.0)]


def _problem(periods: list[dict] | None, modes=("on_demand", "owned"), **extra):
    data = {
        "name": "one-long-period",
        "horizon_months": 72,
        "modes": list(modes),
        "residual_value": "straight_line",
        "load_blocks": [{"name": "day", "hours_per_day": 24, "demand_factor": 1}],
        "workloads": [
            {
                "kind": "inference",
                "name": "chat",
                "model": "llama-3-8b",
                "demand": {"tokens_per_s": 100},
                "prompt_tokens": 500,
                "output_tokens": 200,
                "ttft_slo": "2 s",
                "tpot_slo": "100 ms",
                "max_utilisation": 1.0,
            }
        ],
        **extra,
    }
    if periods is not None:
        data["periods"] = periods
    return parse_problem(data)


def test_split_months_cuts_whole_spans_then_the_rest():
    # 72 at 60: one whole span and 12 left; 72 at 12: six spans; 36 at 12: three
    assert split_months(72, 60) == [60, 12]
    assert split_months(72, 12) == [12] * 6
    assert split_months(36, 12) == [12, 12, 12]


def test_one_long_period_is_split_where_the_life_ends(tiny_catalog):
    # one 72-month period written: the solver splits it at month 60 (the box's life) and
    # finds the $276,000 plan (module docstring), reported in the one period "all"
    cat = tiny_catalog([RENT], sites=SITES)
    plan = solve_problem(_problem(None), cat)
    assert plan.total_cost_usd == pytest.approx(276_000.0, rel=1e-9)
    assert plan.warnings == []
    assert {i.period for i in plan.line_items} == {"all"}
    assert list(plan.totals.by_period) == ["all"]
    assert plan.compile_report["split_periods"]["cuts_months"] == [60.0]


def test_the_split_it_names_is_what_a_user_would_write(tiny_catalog):
    # solving the periods the warning names gives its alternative cost, and no warning
    cat = tiny_catalog([RENT], sites=SITES)
    split = _problem([{"name": "all-1", "months": 60}, {"name": "all-2", "months": 12}])
    plan = solve_problem(split, cat)
    assert plan.total_cost_usd == pytest.approx(276_000.0, rel=1e-9)
    assert plan.warnings == []


def test_a_reservation_term_shorter_than_the_period_is_found(tiny_catalog):
    # reserved_1y (12-month term) in a 72-month period: no commitment covers it; with
    # six 12-month periods a reservation at $6/h serves all along: 72 x 730 x 6 = $315,360
    cat = tiny_catalog([RENT], sites=SITES)
    problem = _problem(None, modes=("on_demand", "reserved_1y"))
    compiled = compile_problem(problem, cat)
    found = period_restrictions(compiled)
    assert [(r.period, r.mode, r.span_months) for r in found] == [("all", "reserved_1y", 12.0)]
    assert lifted_periods(compiled.periods, found)["all"] == [
        (f"all-{i}", 12.0) for i in range(1, 7)
    ]
    plan = solve_problem(problem, cat)  # split every 12 months by the solver itself
    assert plan.total_cost_usd == pytest.approx(72 * 730 * 6.0, rel=1e-9)  # $315,360
    assert plan.warnings == [] and list(plan.totals.by_period) == ["all"]


def test_periods_within_the_life_give_no_warning(tiny_catalog):
    # 72 months as 12 x 6: every period fits a server's life and a 1-year term
    cat = tiny_catalog([RENT], sites=SITES)
    periods = [{"name": f"y{i}", "months": 12} for i in range(1, 7)]
    plan = solve_problem(_problem(periods), cat)
    assert plan.warnings == []


def test_a_split_that_cannot_be_faithful_is_warned_without_a_cost(tiny_catalog):
    # a budget on the 72-month period is not a budget on each of its pieces: the
    # restriction is still reported, its cost said to be unknown (no wrong figure)
    cat = tiny_catalog([RENT], sites=SITES)
    plan = solve_problem(_problem(None, period_budget_usd={"all": 1e7}), cat)
    [warning] = plan.warnings
    assert warning.alternative_cost_usd is None and warning.saving_usd is None
    assert "not known" in warning.detail and "write shorter periods" in warning.detail


def test_the_report_shows_the_split_plan_without_a_warning(tmp_path):
    # procure report on the one-period problem: the HTML report shows the $276,000 plan
    # (module docstring), in the one period written, and no period_structure warning
    import yaml
    from typer.testing import CliRunner

    from conftest import write_catalog
    from solver.cli import app

    cat = write_catalog(tmp_path / "cat", [RENT], sites=SITES)
    problem = tmp_path / "p.yaml"
    problem.write_text(yaml.safe_dump(_problem(None).model_dump(mode="json", exclude_unset=True)))
    out = tmp_path / "report"
    args = ["report", str(problem), "--catalog", str(cat), "--out", str(out), "-q"]
    args += ["--scenarios", "1", "--frontier-points", "2"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    html = (out / "report.html").read_text()
    assert "$276,000" in html and "60-month server life" not in html
