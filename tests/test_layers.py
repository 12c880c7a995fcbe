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
    ("solver.plan.lines", "Plan._repr_html_"): (
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


def test_solver_uses_no_old_import_path():
    # old paths (solver.catalog, ...) are for notebooks and scripts outside the
    # repository; inside it every import names the module where it lives
    from solver import OLD_PATHS

    modules = _modules()
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            prefixes = tuple(f"{o}." for o in OLD_PATHS)
            old = [n for n in names if n in OLD_PATHS or n.startswith(prefixes)]
            assert not old, (name, old)


def test_old_import_paths_are_the_new_modules():
    import importlib

    from solver import OLD_PATHS

    for old, new in OLD_PATHS.items():
        module = importlib.import_module(old)
        if isinstance(new, str):
            assert module is importlib.import_module(new), old
        else:  # split in two: every public name of each part, from the old path
            for part in new:
                public = [n for n in dir(importlib.import_module(part)) if not n.startswith("_")]
                for n in public:
                    assert hasattr(module, n), (old, n)
    from solver.backends.base import SolveOptions
    from solver.core.backends.base import SolveOptions as Same

    assert SolveOptions is Same


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
