"""procure: optimisation-based procurement of AI accelerators.

The flow is one-directional (DESIGN.md section 2): catalog + problem -> compile
(physics) -> MIP -> solve -> Plan -> verify -> report. Each stage takes plain data
and returns plain data; files and printing happen only in :mod:`solver.cli`.

The folders are the stages: ``inputs/``, ``core/``, ``plan/``, ``trust/``,
``analyses/``, ``outputs/``, ``cli/`` (``physics/`` at the bottom, ``solve.py`` and
``api.py`` the pipeline on top of the core).

Old import paths (before the folders) keep working for notebooks and scripts outside
this repository: :data:`OLD_PATHS` maps each old module to its new home, and one import
hook hands back the new module under the old name (``solver.catalog`` *is*
``solver.inputs.catalog``; submodules such as ``solver.backends.base`` follow their
package). A module that was split in two (``solver.changes``, ``solver.export``) is a
small module object that looks each name up in the new modules, in order. New code
imports the new paths.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import time as _time
import types

#: when this process imported procure (``time.perf_counter()``): a command's deadline
#: counts from here in a command-line process, so the interpreter's start and the imports
#: (seconds on a loaded machine) are inside ``--time-limit`` (solver.cli.common._deadline)
IMPORTED_AT_S = _time.perf_counter()

__version__ = "0.1.0"

#: old dotted name -> new dotted name (or the new modules a split one's names are in)
OLD_PATHS: dict[str, str | tuple[str, ...]] = {
    "solver.catalog": "solver.inputs.catalog",
    "solver.problem": "solver.inputs.problem",
    "solver.presets": "solver.inputs.presets",
    "solver.load": "solver.inputs.load",
    "solver.prices": "solver.inputs.prices",
    "solver.yamlio": "solver.inputs.yamlio",
    "solver.tables": "solver.inputs.tables",
    "solver.importers": "solver.inputs.importers",
    "solver.compile": "solver.core.compile",
    "solver.dominance": "solver.core.dominance",
    "solver.model": "solver.core.model",
    "solver.columns": "solver.core.columns",
    "solver.root": "solver.core.root",
    "solver.ledger": "solver.core.ledger",
    "solver.clock": "solver.core.clock",
    "solver.backends": "solver.core.backends",
    "solver.cashflow": "solver.plan.cashflow",
    "solver.verify": "solver.trust.verify",
    "solver.infeasibility": "solver.trust.infeasibility",
    "solver.sensitivity": "solver.analyses.sensitivity",
    "solver.stochastic": "solver.analyses.stochastic",
    "solver.estimate": "solver.analyses.estimate",
    "solver.calibrate": "solver.analyses.calibrate",
    "solver.changes": ("solver.analyses.resolve", "solver.analyses.diff"),
    "solver.report": "solver.outputs.report",
    "solver.export": ("solver.outputs.orders", "solver.outputs.focus"),
    "solver.notebook": "solver.outputs.notebook",
}


def _new_name(fullname: str) -> str | tuple[str, ...] | None:
    if fullname in OLD_PATHS:
        return OLD_PATHS[fullname]
    package, _, leaf = fullname.rpartition(".")
    new = _new_name(package) if package.startswith("solver.") else None
    return f"{new}.{leaf}" if isinstance(new, str) else None


def _split_module(fullname: str, targets: tuple[str, ...]) -> types.ModuleType:
    modules = [importlib.import_module(t) for t in targets]
    module = types.ModuleType(fullname, f"Old path: names from {', '.join(targets)}.")

    def __getattr__(name: str):
        for m in modules:
            if hasattr(m, name):
                return getattr(m, name)
        raise AttributeError(f"module {fullname!r} has no attribute {name!r}")

    module.__getattr__ = __getattr__
    module.__dir__ = lambda: sorted({n for m in modules for n in dir(m)})
    return module


class _OldPaths:
    """Finds ``solver.<old path>`` and loads it as the module at its new path (a meta path
    finder and loader by their protocols: importing importlib.abc for its base classes
    took 10 ms of every command's start)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith("solver.") and _new_name(fullname) is not None:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        new = _new_name(spec.name)
        if isinstance(new, tuple):
            return _split_module(spec.name, new)
        return importlib.import_module(new)

    def exec_module(self, module):
        pass  # the new module has run already


# first in line: a path finder would otherwise load a second copy of a moved package's
# submodule under its old name (solver.backends.base from the new backends folder)
if not any(isinstance(f, _OldPaths) for f in sys.meta_path):
    sys.meta_path.insert(0, _OldPaths())
