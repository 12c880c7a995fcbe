"""The architecture stays as DESIGN.md section 2 draws it (issue 13): the verifier is
independent of how the model is built, physics stands alone, and functions stay short
enough to read."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOLVER = ROOT / "solver"
MAX_FUNCTION_LINES = 120


def _imports(path: Path) -> set[str]:
    """Modules a file imports (absolute names, at any depth of the file)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out |= {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return out


def test_the_verifier_does_not_import_what_it_checks():
    # it recomputes physics, costs and calendar hours from the catalog and the problem:
    # importing the compiler, the model builder, the cost ledger or the clock would let
    # a bug there pass its checks unseen
    # (``from solver.core import ledger`` counts as importing solver.core.ledger)
    forbidden = tuple(
        f"solver.core.{m}" for m in ("compile", "model", "formulation", "ledger", "clock")
    )
    files = sorted((SOLVER / "trust" / "verify").glob("*.py"))
    assert len(files) > 1, "the verifier package is gone: point this test at it"
    imported = set().union(*(_imports(path) for path in files))
    assert not {m for m in imported if m in forbidden or m.startswith(forbidden)}


def test_physics_stands_alone():
    for path in (SOLVER / "physics").glob("*.py"):
        outside = {m for m in _imports(path) if m.startswith("solver") and ".physics" not in m}
        assert not outside, (path.name, outside)


def test_units_and_presets_import_no_stage():
    assert not {m for m in _imports(SOLVER / "units.py") if m.startswith("solver")}
    stages = ("solver.core", "solver.solve", "solver.plan")
    assert not {m for m in _imports(SOLVER / "inputs" / "presets.py") if m.startswith(stages)}


def _long_functions() -> dict[str, int]:
    out = {}
    for path in SOLVER.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    out[f"{path.relative_to(ROOT)}:{node.name}"] = lines
    return out


def test_no_function_over_120_lines():
    # the model builder is one function per constraint family, the verifier one per
    # line-item kind; every other stage is split the same way
    assert not _long_functions(), _long_functions()


def test_compiled_tables_have_their_declared_columns():
    # solver/inputs/tables.py declares every column of the compiled tables with its type,
    # unit and meaning; compile makes exactly those, of those types, on the seed (training,
    # serving, owned and reserved pools) and no others on a traffic mix (serving only,
    # bucket capacities)
    from solver.core.compile import compile_problem
    from solver.inputs.catalog import load_catalog
    from solver.inputs.problem import load_problem
    from solver.inputs.tables import COMPILED_TABLES

    catalog = load_catalog(None)
    for name in ("seed-2m-13b", "traffic-mix-measured"):
        compiled = compile_problem(load_problem(ROOT / "problems" / f"{name}.yaml"), catalog)
        for table, schema in COMPILED_TABLES.items():
            columns = set(getattr(compiled, table).columns)
            if name == "seed-2m-13b":
                assert columns == set(schema), (name, table, columns ^ set(schema))
            assert columns <= set(schema), (name, table, columns - set(schema))
            frame = getattr(compiled, table)
            wrong = [c for c in frame.columns if not _has_type(frame[c], schema[c])]
            assert not wrong, (name, table, wrong)


def _has_type(values, column) -> bool:
    """Whether a compiled column holds its declared type (an empty table says nothing;
    a nullable ``int`` may be float, NaN where it does not apply)."""
    import pandas as pd

    if values.empty:
        return True
    if column.dtype == "str":
        text = values.map(lambda v: isinstance(v, str))
        return bool((text | (values.isna() & column.nullable)).all())
    if column.dtype == "bool":
        return pd.api.types.is_bool_dtype(values)
    if column.dtype == "int" and pd.api.types.is_integer_dtype(values):
        return True
    return pd.api.types.is_float_dtype(values) and (column.dtype == "float" or column.nullable)
