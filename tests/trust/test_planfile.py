"""Plan files (solver/trust/planfile.py): the Python API loads a saved plan only after
re-verifying it against the problem and catalog it was solved for."""

from __future__ import annotations

import json

import pytest

from conftest import CHAT_WORKLOAD, offering, write_catalog
from solver.api import load_plan, solve
from solver.errors import ProcureError
from solver.inputs.yamlio import load_yaml

PROBLEM = "name: api\nhorizon_months: 1\nmodes: [on_demand]\nworkloads:\n" + CHAT_WORKLOAD


def test_a_saved_plan_loads_reverified_and_an_edited_one_is_refused(tmp_path):
    cat = write_catalog(tmp_path / "cat", [offering("h1", "h100-sxm", 1, 4.0)])
    plan = solve(load_yaml(PROBLEM, file="x"), cat)
    path = tmp_path / "plan.json"
    path.write_text(plan.model_dump_json())
    loaded, problem, catalog = load_plan(path, catalog=cat)
    assert loaded.line_items == plan.line_items and problem.name == "api"
    assert len(catalog.offerings) == 1

    edited = json.loads(path.read_text())
    edited["line_items"][0]["units"] *= 2  # more than was solved for: verify refuses it
    path.write_text(json.dumps(edited))
    with pytest.raises(ProcureError, match="does not verify|another catalog"):
        load_plan(path, catalog=cat)
    with pytest.raises(ProcureError, match="plan file not found"):
        load_plan(tmp_path / "absent.json")
