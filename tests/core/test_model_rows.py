"""One door for rows (issue 26, item 4): every row made while solving, re-solving, planning
in two stages or generating columns has a family registered in ``FAMILIES``, is named from
its family and key by ``new_row``, and reading what binds by family never raises.

The rows are caught as they are made (``Row.__init__`` recorded), wherever in the package
they are made: a module that builds a ``Row`` by hand with a family of its own fails here.
"""

from __future__ import annotations

import math
import sys
from collections import defaultdict

import pandas as pd
import pytest

from conftest import H1, L4, ROOT, offering, problem, serve, write_catalog
from solver.analyses.resolve import resolve
from solver.analyses.sensitivity import break_even_for_pool
from solver.analyses.stochastic import solve_stochastic
from solver.core.backends import SolveOptions
from solver.core.compile import compile_problem
from solver.core.model import (
    FAMILIES,
    Expression,
    LinearModel,
    Row,
    build_model,
    new_row,
    row_name,
)
from solver.errors import InfeasibleError
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import load_problem, parse_problem
from solver.plan import binding_rows
from solver.solve import solve_problem, solve_verified

sys.path.insert(0, str(ROOT / "bench"))

from generate import generated_problem, scaled_catalog  # noqa: E402

SHIPPED = sorted((ROOT / "problems").glob("*.yaml"))


@pytest.fixture
def made(monkeypatch) -> list[Row]:
    """Every Row constructed while the test runs (``dataclasses.replace`` included)."""
    rows: list[Row] = []
    init = Row.__init__

    def recording(self, *args, **kwargs):
        init(self, *args, **kwargs)
        rows.append(self)

    monkeypatch.setattr(Row, "__init__", recording)
    return rows


def _check(rows: list[Row]) -> set[str]:
    """Assert each row is registered and named from its family and key (a scenario's copy
    has the scenario as its key's last part); every binding family is read without
    raising. Returns the families seen."""
    assert rows
    for row in rows:
        family = FAMILIES.get(row.family)
        assert family is not None, f"{row.name}: family {row.family!r} is not in FAMILIES"
        own = family.takes(row.key) and row.name == row_name(row.family, row.key)
        copy = (
            len(row.key) > 0
            and family.takes(row.key[:-1])
            and row.name == row_name(row.family, row.key[:-1], str(row.key[-1]))
        )
        assert own or copy, (row.name, row.key, family.keys)
    # every row taken as holding with equality: what binds is read by family for each
    model = LinearModel(pd.DataFrame(), rows, Expression(), {})
    binding = binding_rows(model, defaultdict(float), tol=math.inf)
    families = {r.family for r in rows}
    assert {b.family for b in binding} == {f for f in families if FAMILIES[f].binds}
    return families


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_row_of_a_shipped_problem_is_registered(path, made):
    # rows are recorded as they are made: building the model is enough (the traffic
    # mix's MIP alone takes 15-40 s), except for the infeasible problem, whose
    # explanation's elastic rows are made by the solve
    problem, catalog = load_problem(path), load_catalog()
    if "infeasible" in path.stem:
        with pytest.raises(InfeasibleError):
            solve_problem(problem, catalog)
    else:
        build_model(compile_problem(problem, catalog))
    _check(made)


def _two_stage(**uncertainty) -> dict:
    low = {"name": "low", "probability": 0.5, "prices": [{"mode": "on_demand", "factor": 0.4}],
           "demand": [{"factor": 0.5}]}  # fmt: skip
    high = {"name": "high", "probability": 0.5, "prices": [{"mode": "on_demand", "factor": 0.8}],
            "demand": [{"factor": 1.5}]}  # fmt: skip
    return {
        "name": "reserve-or-rent",
        "horizon_months": 12,
        "modes": ["on_demand", "reserved_1y"],
        "load_blocks": [{"name": "all-day", "hours_per_day": 24, "demand_factor": 1}],
        "workloads": [serve(20)],
        "budget_usd": 1e6,
        "uncertainty": {"scenarios": [low, high], **uncertainty},
    }


@pytest.mark.parametrize("method", ["extensive", "benders", "decomposition"])
def test_every_row_of_a_two_stage_plan_is_registered(method, made, tmp_path):
    catalog = load_catalog(
        write_catalog(tmp_path / "cat", [offering("h1", "h100-sxm", 1, 4.0, r1=2.0)])
    )
    risk = {"cvar_level": 0.5, "weight": 1.0}
    data = _two_stage(risk=risk, max_scenario_cost_usd=1e6, caps="expectation")
    solve_stochastic(parse_problem(data), catalog, method=method)
    # the decomposition solves each scenario alone: rows of the one-scenario model only
    expected = {
        "extensive": {"cvar_excess", "scenario_cost_cap"},
        "benders": {"benders_cut", "scenario_cost_cap"},
        "decomposition": {"demand_bucket"},
    }
    assert expected[method] <= _check(made)


def test_every_row_of_a_column_generation_solve_is_registered(made):
    solve_verified(
        generated_problem(3, 2, seed=2),
        scaled_catalog(300),
        solver="highspy",
        options=SolveOptions(relative_gap=1e-6),
        method="columns",
    )
    assert "demand_rounding" in _check(made)


def test_every_row_of_a_re_solve_is_registered(made, tmp_path):
    old = load_catalog(write_catalog(tmp_path / "old", [offering("h1", "h100-sxm", 1, 4.0)]))
    new = load_catalog(
        write_catalog(
            tmp_path / "new",
            [offering("h1", "h100-sxm", 1, 4.5), offering("l4", "l4", 1, 0.5, nvlink=False)],
        )
    )
    periods = [{"name": f"m{i}", "months": 1} for i in range(1, 4)]
    p = problem([serve(20)], horizon_months=3, periods=periods)
    base = solve_problem(p, old)
    resolve(p, base, old, new, max_changes=2)
    resolve(p, base, old, new, switching_cost_usd=1.0)
    assert {"change_link", "max_changes", "switching"} <= _check(made)


def test_every_row_of_a_break_even_re_solve_is_registered(made, tmp_path):
    # a pool the plan leaves out, solved cold: each re-solve forces it in (force_use)
    spare = offering("l4b", "l4", 1, 1.2, region="eu-north", nvlink=False)
    cat = load_catalog(write_catalog(tmp_path / "cat", [H1, L4, spare]))
    _, solution = solve_verified(problem([serve(25)]), cat)
    pool = "acme/eu-north/l4b#on_demand"
    break_even_for_pool(solution.compiled, solution.result.objective, pool, False, warm=False)
    assert "force_use" in _check(made)


def test_the_door_refuses_an_unregistered_family_or_a_wrong_key():
    with pytest.raises(ValueError, match="not in FAMILIES"):
        new_row("my_limit", (), {0: 1.0}, "<=", 1.0)
    with pytest.raises(ValueError, match="key"):
        new_row("demand", ("chat", 0), {0: 1.0}, ">=", 1.0)
    # availability of a commitment has no block; a scenario's copy names its scenario
    assert new_row("availability", ("p", 0), {0: 1.0}, "<=", 2).name == "availability[p,0]"
    copy = new_row("demand", ("chat", 0, 1), {0: 1.0}, ">=", 1.0, scenario="low")
    assert (copy.name, copy.key) == ("demand[chat,0,1]@low", ("chat", 0, 1, "low"))
    assert (
        row_name("demand_rounding", ("chat", 0, 1, 1 / 3))
        == "demand_rounding[chat,0,1,0.333333333]"
    )


def test_every_family_says_its_key():
    for name, family in FAMILIES.items():
        assert all(k and k.strip("?").isidentifier() for k in family.keys), name
        optional = [k.endswith("?") for k in family.keys]
        assert optional == sorted(optional), f"{name}: optional key parts come last"
