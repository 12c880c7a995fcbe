"""Ways a renderer could run an analysis past the layer rule "outputs run no analysis"
(tests/test_layers.py: a module under solver/outputs takes from solver.analyses,
solver.solve and solver.api only their plain result types). Each form below reaches a
function that computes; the checker must name it."""

from __future__ import annotations

import ast

import pytest
from test_layers import _computing_imports


@pytest.mark.parametrize(
    ("source", "named"),
    [
        # an alias hides the module's name, not the module
        ("import solver.analyses.sensitivity as s\n", "solver.analyses.sensitivity"),
        # the pipeline by its parent package, relative and absolute
        ("from .. import solve\n", "solver.solve"),
        ("from solver import api as entry\n", "solver.api"),
        # a sub-package's driver through its package's re-export
        (
            "from solver.analyses.sensitivity import report_sweeps\n",
            "solver.analyses.sensitivity.report_sweeps",
        ),
        # a constant is no result type: a renderer has no use for the sweeps' names
        (
            "from solver.analyses.sensitivity import REPORT_SWEEPS\n",
            "solver.analyses.sensitivity.REPORT_SWEEPS",
        ),
        # the whole results module: types and all, but taken as a module
        (
            "from solver.analyses.sensitivity import results\n",
            "solver.analyses.sensitivity.results",
        ),
        # an import inside a function counts as much as one at the top
        (
            "def render(p):\n    from solver.solve import solve_problem\n",
            "solver.solve.solve_problem",
        ),
        # a private helper is a function all the same
        ("from solver.analyses.diff import _role\n", "solver.analyses.diff._role"),
    ],
)
def test_a_hidden_analysis_call_is_named(source: str, named: str) -> None:
    assert _computing_imports(ast.parse(source), "solver.outputs") == [named]


def test_result_types_pass_however_they_are_imported() -> None:
    # the types the report renders: pydantic models, a dataclass, through packages and
    # relative imports; and modules outside the computing packages are not its business
    source = (
        "from solver.analyses.sensitivity import BreakEven, SensitivityReport\n"
        "from ..analyses.report_analysis import Analysis\n"
        "from solver.analyses.resolve import Rebased\n"
        "from solver.plan import Plan\n"
        "from solver.outputs.files import workbook\n"
    )
    assert _computing_imports(ast.parse(source), "solver.outputs") == []
