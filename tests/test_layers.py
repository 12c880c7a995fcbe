"""The layer contract (issue 26, DESIGN.md section 2): the folders of solver/ are the
stages, stacked in floors, and a module imports only its own floor or a lower one, with
no import cycles between modules. Imports are read from the source (ast), at any depth
of a file: an import inside a function counts as much as one at the top."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOLVER = ROOT / "solver"

#: bottom to top; a module's floor is that of the longest prefix listed
FLOORS: list[tuple[str, ...]] = [
    ("solver", "solver.physics", "solver.units", "solver.errors"),
    ("solver.inputs",),
    ("solver.core",),
    ("solver.plan",),
    ("solver.trust",),
    ("solver.solve", "solver.api"),  # the pipeline on top of the core
    ("solver.analyses",),
    ("solver.outputs",),
    ("solver.cli", "solver.web"),
]

#: (importer, imported) edges allowed to point upward, each with its reason; an edge
#: listed here that no longer exists fails the test, so the list only shrinks
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}


#: rendering happens at the edge (issue 26, item 3): below outputs/ no function makes text
#: for people. A function renders when a word of its name is one of these and it returns
#: text (annotated ``str`` or ``list[str]``, or not annotated); reading text in (a name with
#: read, load or parse) is not rendering
RENDER_WORDS = {"text", "markdown", "md", "table", "tables", "summary", "sentence", "sentences"}
RENDER_WORDS |= {"render", "html", "png", "svg", "report", "pretty", "describe"}
BELOW_OUTPUTS = ("solver.physics", "solver.inputs", "solver.core", "solver.plan", "solver.trust")
BELOW_OUTPUTS += ("solver.solve", "solver.api", "solver.analyses")

#: (module, function) below outputs/ allowed to render, each with its reason; an entry
#: that no longer exists fails the test, so the list only shrinks
ALLOWED_RENDERERS: dict[tuple[str, str], str] = {
    ("solver.plan.lines.schema", "Plan._repr_html_"): (
        "Jupyter's display protocol looks the method up on the object itself"
    ),
    ("solver.trust.infeasibility", "Explanation.sentences"): (
        "the words of an InfeasibleError: solve.py (below outputs/) raises it, and an "
        "error's message is made where it is raised"
    ),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in SOLVER.rglob("*.py")}


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The solver modules ``name`` imports, anywhere in the file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                full = f"{module}.{alias.name}"
                out.add(full if full in modules else module)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return {m for m in out if m in modules and m != name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _floor(module: str) -> int:
    best, floor = -1, None
    for i, prefixes in enumerate(FLOORS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, floor = len(prefix), i
    assert floor is not None, f"{module} is on no floor: add it to FLOORS"
    return floor


def test_every_module_is_on_a_floor():
    for module in _graph():
        _floor(module)


def _functions(tree: ast.AST, prefix: str = ""):
    """(qualified name, node) of every function in ``tree``, methods as Class.name."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield prefix + node.name, node
            yield from _functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}{node.name}.")
        else:
            yield from _functions(node, prefix)


def _renders(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    words = set(node.name.strip("_").split("_"))
    if not words & RENDER_WORDS or words & {"read", "load", "parse"}:
        return False
    returns = ast.unparse(node.returns) if node.returns is not None else None
    return returns in (None, "str", "list[str]", "str | None")


def test_only_outputs_and_cli_render():
    found = {
        (module, name)
        for module, path in _modules().items()
        if module.startswith(tuple(f"{p}." for p in BELOW_OUTPUTS)) or module in BELOW_OUTPUTS
        for name, node in _functions(ast.parse(path.read_text()))
        if _renders(node)
    }
    assert found <= set(ALLOWED_RENDERERS), sorted(found - set(ALLOWED_RENDERERS))
    assert set(ALLOWED_RENDERERS) <= found, (
        "an allowed renderer is gone: remove it from ALLOWED_RENDERERS",
        set(ALLOWED_RENDERERS) - found,
    )


def test_the_renderer_check_finds_a_renderer():
    tree = ast.parse(
        "class D:\n    def text(self) -> str: ...\n"
        "def diff_markdown(d): ...\n"
        "def read_text_file(p) -> str: ...\n"
        "def accelerator_summary(c) -> pd.DataFrame: ...\n"
    )
    assert [n for n, node in _functions(tree) if _renders(node)] == ["D.text", "diff_markdown"]


def test_no_module_imports_a_higher_floor():
    upward = {
        (a, b): (_floor(a), _floor(b))
        for a, deps in _graph().items()
        for b in deps
        if _floor(b) > _floor(a)
    }
    assert set(upward) <= set(ALLOWED_UPWARD), {
        e: f for e, f in upward.items() if e not in ALLOWED_UPWARD
    }
    assert set(ALLOWED_UPWARD) <= set(upward), (
        "an allowed upward import is gone: remove it from ALLOWED_UPWARD",
        set(ALLOWED_UPWARD) - set(upward),
    )


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    out.append(sorted(component))
    return out


def test_no_import_cycles():
    cycles = [c for c in _strongly_connected(_graph()) if len(c) > 1]
    assert not cycles, cycles


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert sorted(map(sorted, _strongly_connected(graph))) == [["a", "b", "c"], ["d"]]


#: module paths from before the stage folders (the CHANGELOG says where each went): none
#: exists any more, and nothing in the repository imports one
REMOVED_PATHS = (
    "solver.catalog", "solver.problem", "solver.presets", "solver.load", "solver.prices",
    "solver.yamlio", "solver.tables", "solver.importers", "solver.compile",
    "solver.dominance", "solver.model", "solver.columns", "solver.root", "solver.ledger",
    "solver.clock", "solver.backends", "solver.cashflow", "solver.verify",
    "solver.infeasibility", "solver.sensitivity", "solver.stochastic", "solver.estimate",
    "solver.calibrate", "solver.changes", "solver.report", "solver.export",
    "solver.notebook",
)  # fmt: skip


def _removed_imports(source: str) -> list[str]:
    """The names imported by ``source`` (Python) that are a removed path or inside one."""
    prefixes = tuple(f"{old}." for old in REMOVED_PATHS)

    def removed(name: str) -> bool:
        return name in REMOVED_PATHS or name.startswith(prefixes)

    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if removed(node.module):
                found.append(node.module)
            else:  # from solver import verify
                found += [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names]
    return [name for name in found if removed(name)]


def _notebook_code(path: Path) -> str:
    """The code cells of a notebook as one Python source (IPython magics left out)."""
    import json

    cells = json.loads(path.read_text())["cells"]
    lines = [
        line
        for cell in cells
        if cell["cell_type"] == "code"
        for line in "".join(cell["source"]).splitlines()
        if not line.lstrip().startswith(("%", "!"))
    ]
    return "\n".join(lines)


def test_nothing_imports_a_removed_path():
    # solver/, the tests, the bench, the scripts and the notebooks import the stage folders
    python = [p for d in ("solver", "tests", "bench", "scripts") for p in (ROOT / d).rglob("*.py")]
    for path in python:
        assert _removed_imports(path.read_text()) == [], path
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks, "no notebook found: the check would pass on nothing"
    for path in notebooks:
        assert _removed_imports(_notebook_code(path)) == [], path


def test_removed_paths_are_not_importable():
    # no import hook aliases an old path to its new module any more: each one fails
    import importlib

    import pytest

    for old in REMOVED_PATHS:
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(old)


def test_the_removed_path_finder_finds_each_form():
    # the three forms an old import takes; the new paths are not flagged
    planted = (
        "import solver.catalog as c\n"
        "from solver.backends.base import SolveOptions\n"
        "from solver import verify, api\n"
        "from solver.inputs.catalog import load_catalog\n"
    )
    assert _removed_imports(planted) == [
        "solver.catalog",
        "solver.backends.base",
        "solver.verify",
    ]


def test_solving_a_problem_loads_no_exporter_module():
    # issue 26: a solve's money by month comes from the charges table (solver/plan), not
    # from the FOCUS exporter; a fresh interpreter solves the shipped seed and lists what
    # it imported
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from solver.inputs.catalog import load_catalog\n"
        "from solver.inputs.problem import load_problem\n"
        "from solver.solve import solve_problem\n"
        "plan = solve_problem(load_problem('problems/seed-2m-13b.yaml'), load_catalog())\n"
        "assert plan.cash_flow, 'the solve made no cash flow'\n"
        "print('\\n'.join(sorted(m for m in sys.modules if m.startswith('solver.'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    loaded = done.stdout.split()
    assert "solver.plan.charges" in loaded  # the solve did build its charges
    assert [m for m in loaded if m == "solver.outputs" or m.startswith("solver.outputs.")] == []


#: the backends: each translates the matrix (solver.core.matrix) for one solver
BACKENDS = "solver.core.backends"
#: the formulation: the modules that build the model's rows, and any module importing one
#: of these names (it makes rows or builds the model)
FORMULATION = ("solver.core.model", "solver.core.formulation")
ROW_MAKERS = {"new_row", "build_model"}


def _imported_names(path: Path) -> set[tuple[str, str]]:
    """(module, name) of every ``from module import name`` of a solver module in the file."""
    return {
        (node.module, alias.name)
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("solver")
        for alias in node.names
    }


def _builds_formulation(name: str, path: Path) -> bool:
    in_formulation = name in FORMULATION or name.startswith(tuple(f"{f}." for f in FORMULATION))
    return in_formulation or any(n in ROW_MAKERS for _m, n in _imported_names(path))


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others (not itself)."""
    seen: set[str] = set()
    todo = list(graph.get(start, ()))
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph.get(module, ()))
    return seen - {start}


def _backends_reaching(graph: dict[str, set[str]], builds: set[str]) -> dict[str, set[str]]:
    """backend module -> the formulation modules it imports, directly or not."""
    backends = [m for m in graph if m == BACKENDS or m.startswith(BACKENDS + ".")]
    out = {b: _reachable(graph, b) & builds for b in backends}
    return {b: found for b, found in out.items() if found}


def test_no_module_a_backend_imports_builds_a_formulation():
    # a backend translates the matrix types (solver.core.matrix) and builds no model: the
    # modules it imports, however indirectly, make no rows
    modules = _modules()
    builds = {name for name, path in modules.items() if _builds_formulation(name, path)}
    assert "solver.core.model" in builds and "solver.core.formulation.demand" in builds
    assert "solver.core.matrix" not in builds
    assert _backends_reaching(_graph(), builds) == {}


def test_the_backend_check_finds_a_formulation_behind_a_helper():
    # planted: a backend imports base, base imports the model; the matrix alone is fine
    graph = {
        "solver.core.backends.x_backend": {"solver.core.backends.base", "solver.core.matrix"},
        "solver.core.backends.base": {"solver.core.model"},
        "solver.core.backends.y_backend": {"solver.core.matrix"},
        "solver.core.model": {"solver.core.matrix"},
        "solver.core.matrix": set(),
    }
    found = _backends_reaching(graph, {"solver.core.model"})
    assert found == {
        "solver.core.backends.x_backend": {"solver.core.model"},
        "solver.core.backends.base": {"solver.core.model"},
    }


def _private_imports(name: str, path: Path) -> set[tuple[str, str]]:
    """(module, name) of each private name (a leading underscore) ``name`` imports from
    another solver module."""
    return {
        (module, imported)
        for module, imported in _imported_names(path)
        if imported.startswith("_") and module != name
    }


def test_backends_import_no_private_helper():
    # a helper two backends share lives in a shared module under a public name
    # (solver.core.backends.base), not in one backend reached into by another
    found = {
        name: _private_imports(name, path)
        for name, path in _modules().items()
        if name.startswith(BACKENDS + ".") and _private_imports(name, path)
    }
    assert not found, found


def test_the_private_import_check_finds_one(tmp_path):
    planted = tmp_path / "ortools_backend.py"
    planted.write_text(
        "from solver.core.backends.base import relative_gap\n"
        "from solver.core.backends.highs_backend import _empty_row_infeasible\n"
        "def f():\n    from solver.core.matrix import _hidden\n"
    )
    assert _private_imports("solver.core.backends.ortools_backend", planted) == {
        ("solver.core.backends.highs_backend", "_empty_row_infeasible"),
        ("solver.core.matrix", "_hidden"),
    }


#: trust builds no model (DESIGN.md section 2): a module under solver/trust imports no
#: model builder (a name of solver.core.model that is not a class: the matrix types are
#: plain data a trust module may read, the functions build), no backend (solver.core.backends
#: and its adapters; its ``base`` is the shared interface, options and results as plain
#: data) and no solver library, and calls nothing that builds or solves a model. The
#: elastic model and the feasibility probes it needs live in solver.core.elastic
MODEL_BUILDERS = "solver.core.model"
SOLVER_BACKENDS = ("solver.core.backends", "highspy", "pulp", "ortools")
BACKEND_INTERFACE = "solver.core.backends.base"
SOLVING_CALLS = {"build_model", "get_backend", "solve"}

#: (trust module, offence) allowed, each with its reason; an entry that no longer exists
#: fails the test, so the list only shrinks
ALLOWED_TRUST_MODELS: dict[tuple[str, str], str] = {
    ("solver.trust.rederive", "imports solver.core.model.build_model"): (
        "a plan file is re-derived through the plan builder (solver.plan.extract_plan), which "
        "reads the variables of the plan's model: the decisions are placed in that model, "
        "never solved"
    ),
    ("solver.trust.rederive", "calls build_model"): "the same placement, as above",
}


def _is_model_builder(name: str) -> bool:
    """A name of solver.core.model that is not a class (or the module itself)."""
    import importlib
    import inspect

    model = importlib.import_module(MODEL_BUILDERS)
    return not inspect.isclass(getattr(model, name, None))


def _model_offences(name: str, path_is_package: bool, source: str) -> set[str]:
    """What module ``name`` (its ``source``) does that builds or solves a model."""
    package = name if path_is_package else name.rpartition(".")[0]
    out: set[str] = set()

    def forbidden(module: str, imported: str | None) -> bool:
        full = f"{module}.{imported}" if imported else module
        if full == MODEL_BUILDERS or full.startswith(MODEL_BUILDERS + "."):
            return full == MODEL_BUILDERS or _is_model_builder(full.split(".")[3])
        if full == BACKEND_INTERFACE or full.startswith(BACKEND_INTERFACE + "."):
            return False
        return any(full == b or full.startswith(b + ".") for b in SOLVER_BACKENDS)

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                if forbidden(module, alias.name):
                    out.add(f"imports {module}.{alias.name}")
        elif isinstance(node, ast.Import):
            out |= {f"imports {a.name}" for a in node.names if forbidden(a.name, None)}
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in SOLVING_CALLS:
                out.add(f"calls {called}")
    return out


def test_trust_builds_no_model():
    found = {
        (module, offence)
        for module, path in _modules().items()
        if module.startswith("solver.trust.")
        for offence in _model_offences(module, path.name == "__init__.py", path.read_text())
    }
    assert found <= set(ALLOWED_TRUST_MODELS), sorted(found - set(ALLOWED_TRUST_MODELS))
    assert set(ALLOWED_TRUST_MODELS) <= found, (
        "an allowed model builder in trust/ is gone: remove it from ALLOWED_TRUST_MODELS",
        set(ALLOWED_TRUST_MODELS) - found,
    )


def test_the_model_check_finds_a_model_built_in_trust():
    # a planted module doing each forbidden thing once, beside what trust may do: read the
    # matrix types, the backends' options, and ask solver.core.elastic
    source = (
        "from solver.core.model import LinearModel, build_model\n"
        "from solver.core import backends\n"
        "from solver.core.backends.base import SolveOptions\n"
        "from solver.core.elastic import is_feasible\n"
        "from ..core.backends.highs_backend import HighsBackend\n"
        "import highspy\n"
        "def explain(m: LinearModel):\n"
        "    return backends.get_backend('highs').solve(build_model(m), SolveOptions())\n"
    )
    assert _model_offences("solver.trust.planted", False, source) == {
        "imports solver.core.model.build_model",
        "imports solver.core.backends",
        "imports solver.core.backends.highs_backend.HighsBackend",
        "imports highspy",
        "calls get_backend",
        "calls solve",
        "calls build_model",
    }


#: outputs/ renders what the analyses return and runs none of them (the CLI and the web
#: run the analysis and hand its result to the renderer): a module under solver/outputs
#: takes from these packages only their plain result types, a class that is a pydantic
#: model, a dataclass or an enum; never a function, a constant or a whole module
COMPUTING = ("solver.analyses", "solver.solve", "solver.api")


def _is_result_type(obj: object) -> bool:
    import dataclasses
    import enum
    import inspect

    from pydantic import BaseModel

    return inspect.isclass(obj) and (
        issubclass(obj, BaseModel | enum.Enum) or dataclasses.is_dataclass(obj)
    )


def _computing_imports(tree: ast.AST, package: str) -> list[str]:
    """What a module of ``package`` imports from :data:`COMPUTING` that is not a plain
    result type: ``module.name`` for a name, ``module`` for a whole module."""
    import importlib

    def computing(module: str) -> bool:
        return module.startswith(tuple(f"{c}." for c in COMPUTING)) or module in COMPUTING

    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names if computing(a.name)]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([module] if module else []))
            for alias in node.names:
                full = f"{module}.{alias.name}"
                if not computing(module):  # a computing module by its parent package
                    out += [full] if computing(full) else []
                elif not _is_result_type(getattr(importlib.import_module(module), alias.name)):
                    out.append(full)
    return out


def test_outputs_run_no_analysis():
    found = {
        name: bad
        for name, path in _modules().items()
        if name.startswith("solver.outputs.")
        and (bad := _computing_imports(ast.parse(path.read_text()), "solver.outputs"))
    }
    assert not found, found


def test_the_outputs_check_finds_an_analysis_call():
    # a renderer that runs the sensitivity analysis, a sweep and the report's driver, or
    # takes a whole module, is refused; the result types it renders are not
    tree = ast.parse(
        "from solver.analyses.sensitivity import SensitivityReport, sensitivity_report\n"
        "from solver.analyses.report_analysis import Analysis, build_analysis\n"
        "from solver.analyses import sensitivity\n"
        "import solver.solve\n"
        "from solver import analyses, api, plan\n"
        "def f():\n"
        "    from ..analyses.sensitivity.sweeps import SweepPoint, carbon_frontier\n"
    )
    assert _computing_imports(tree, "solver.outputs") == [
        "solver.analyses.sensitivity.sensitivity_report",
        "solver.analyses.report_analysis.build_analysis",
        "solver.analyses.sensitivity",
        "solver.solve",
        "solver.analyses",
        "solver.api",
        "solver.analyses.sensitivity.sweeps.carbon_frontier",
    ]


def _outside_importers(graph: dict[str, set[str]], package: str) -> set[tuple[str, str]]:
    """(importer, imported) edges into ``package`` from a module outside it."""

    def inside(module: str) -> bool:
        return module == package or module.startswith(package + ".")

    return {(a, b) for a, deps in graph.items() for b in deps if inside(b) and not inside(a)}


def test_nothing_outside_the_cli_imports_it():
    # cli/ is the command line's edge: the web workspace and every stage below it take
    # what they share with it from a lower floor (the watch exit codes from
    # analyses/watch.py), never from a command's module
    assert not _outside_importers(_graph(), "solver.cli")


def test_the_cli_import_check_finds_a_planted_import(tmp_path):
    # a function-level import of a command's module, from a module of the workspace
    planted = tmp_path / "planted.py"
    planted.write_text("def run():\n    from solver.cli.actuals import WATCH_EXIT\n")
    modules = _modules()
    graph = {name: set() for name in modules}
    graph["solver.cli.actuals"] = {"solver.cli.common"}  # inside cli/: allowed
    graph["solver.web.planted"] = _imports("solver.web.planted", planted, modules)
    found = _outside_importers(graph, "solver.cli")
    assert found == {("solver.web.planted", "solver.cli.actuals")}
