"""The model in rooms of one idea holds at run time, not only in the import graph: a backend
loads the matrix and no formulation, every module of the formulation imports first in a
fresh interpreter (the build state and the staff rows do not import each other), the
names callers import from solver.core.model are the defining modules' own objects, and no
path that makes rows lets an unregistered family or a wrong key through.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT

FORMULATION_MODULES = (
    "solver.core.formulation.state",
    "solver.core.formulation.demand",
    "solver.core.formulation.fleet_rules",
    "solver.core.formulation.redundancy",
    "solver.core.formulation.pools",
    "solver.core.formulation.limits",
    "solver.core.formulation.objective",
    "solver.core.staff",
    "solver.core.families",
    "solver.core.matrix",
    "solver.core.model",
)


def _fresh(code: str) -> list[str]:
    """The solver modules a fresh interpreter has loaded after running ``code``."""
    done = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint('\\n'.join(sorted(sys.modules)))"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return [m for m in done.stdout.split() if m.startswith("solver.")]


def test_every_backend_loads_the_matrix_and_no_formulation():
    # the four adapters and their shared base, imported the way the solve imports them
    loaded = _fresh(
        "from solver.core.backends import HighsBackend, OrtoolsBackend, PulpBackend\n"
        "from solver.core.backends.highs_backend import HighsSession\n"
    )
    assert "solver.core.matrix" in loaded
    built = [
        m
        for m in loaded
        if m in ("solver.core.model", "solver.core.compile", "solver.core.staff")
        or m.startswith("solver.core.formulation")
    ]
    assert built == []


def test_each_model_module_imports_first():
    # importing the staff rows first is how an import cycle between them and the model
    # would show (the model module would find the staff module half made); whichever
    # module comes first, the model and every family's builder then import. One fresh
    # interpreter, its solver modules forgotten before each first import
    code = (
        "import importlib, sys\n"
        f"for first in {FORMULATION_MODULES!r}:\n"
        "    for name in [m for m in sys.modules if m.startswith('solver')]:\n"
        "        del sys.modules[name]\n"
        "    importlib.import_module(first)\n"
        "    from solver.core.model import build_model\n"
        "    from solver.core.staff import add_staff_scale\n"
        "    assert callable(build_model) and callable(add_staff_scale), first\n"
    )
    assert "solver.core.formulation.pools" in _fresh(code)


def test_the_names_of_solver_core_model_are_the_defining_modules_objects():
    # a copy of FAMILIES would let a family registered in one be missing from the other
    from solver.core import families, matrix, model
    from solver.core.formulation import limits, objective

    assert model.FAMILIES is families.FAMILIES
    assert model.new_row is families.new_row
    assert model.Family is families.Family
    assert model.LinearModel is matrix.LinearModel
    assert model.Row is matrix.Row
    assert model.Expression is matrix.Expression
    assert model.budget_bound is limits.budget_bound
    assert model.stage_objective is objective.stage_objective
    for name in model.__all__:
        assert getattr(model, name) is not None, name


def test_the_builder_refuses_an_unregistered_family_and_a_wrong_key():
    # the builder is one more way to make a row: it goes through the same door
    from solver.core.formulation.state import Builder
    from solver.core.matrix import VarKind

    b = Builder()
    x = b.var("x[0]", VarKind.X, integer=True)
    with pytest.raises(ValueError, match=r"'no_such_family' is not in FAMILIES .*families\.py"):
        b.row("no_such_family", (), {x: 1.0}, ">=", 1.0)
    # budget has no key; quota has (quota, period, block)
    with pytest.raises(ValueError, match=r"a budget row's key is \(\), not \('extra',\)"):
        b.row("budget", ("extra",), {x: 1.0}, "<=", 1.0)
    with pytest.raises(ValueError, match="a quota row's key is"):
        b.row("quota", (0, 0), {x: 1.0}, "<=", 1.0)
    assert b.rows == []
    # an empty row is left out by the builder (nothing in it to hold)
    b.row("budget", (), {}, "<=", 1.0)
    assert b.rows == []
    b.row("budget", (), {x: 2.0}, "<=", 10.0)
    assert [(r.name, r.coefs, r.sense, r.rhs) for r in b.rows] == [
        ("budget[]", {x: 2.0}, "<=", 10.0)
    ]
