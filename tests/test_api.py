"""The Python API (issue 12, item 8): ``from solver.api import solve`` returns the verified
plan, with ``to_frame()`` and a notebook HTML view."""

from __future__ import annotations

import pytest

from conftest import CHAT_WORKLOAD, check, offering, write_catalog
from solver.api import solve
from solver.errors import ProcureError
from solver.inputs.yamlio import load_yaml

PROBLEM = "name: api\nhorizon_months: 1\nmodes: [on_demand]\nworkloads:\n" + CHAT_WORKLOAD


def test_solve_from_a_path_or_a_dict(tmp_path):
    cat = write_catalog(tmp_path / "cat", [offering("h1", "h100-sxm", 1, 4.0)])
    path = tmp_path / "p.yaml"
    path.write_text(PROBLEM)
    from_path = solve(path, cat)
    from_dict = solve(load_yaml(PROBLEM, file="x"), cat)
    assert from_path.total_cost_usd == from_dict.total_cost_usd
    # the plan returned carries the verifier's checks (it went through verification)
    assert check(from_path, "demand met") == (True, "1 checked")
    assert check(from_path, "total cost recomputed") == (True, "1 checked")
    frame = from_path.to_frame()
    assert len(frame) == len(from_path.line_items)
    assert round(frame["cost_usd"].sum(), 2) == round(from_path.total_cost_usd, 2)
    assert f"${from_path.total_cost_usd:,.0f}" in from_path._repr_html_()


def test_bad_input_is_a_procure_error(tmp_path):
    with pytest.raises(ProcureError, match="horizon_months"):
        solve({"name": "x", "horizon_months": -1, "workloads": []})
