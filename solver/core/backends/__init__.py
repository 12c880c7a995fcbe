"""Solver adapters behind one interface (see :mod:`solver.core.backends.base`)."""

from __future__ import annotations

from collections.abc import Callable

from solver.core.backends.base import Backend, SolveOptions, SolveResult, Termination
from solver.core.backends.highs_backend import HighsBackend, HighsSession
from solver.core.backends.ortools_backend import OrtoolsBackend
from solver.core.backends.pulp_backend import PulpBackend
from solver.errors import ProcureError
from solver.units import SOLVERS

BACKENDS: dict[str, Callable[[], Backend]] = {
    "highs": lambda: PulpBackend("highs"),
    "cbc": lambda: PulpBackend("cbc"),
    "highspy": HighsBackend,
    "scip": lambda: OrtoolsBackend("scip"),
    "cpsat": lambda: OrtoolsBackend("cpsat"),
}


def get_backend(name: str) -> Backend:
    """The backend called ``name``; refuses unknown or unavailable ones."""
    if name not in BACKENDS:
        raise ProcureError(
            f"unknown solver {name!r}", field="--solver", fix=f"use one of: {', '.join(SOLVERS)}"
        )
    backend = BACKENDS[name]()
    if not backend.available():
        raise ProcureError(
            f"solver {name!r} is not available on this machine",
            field="--solver",
            fix="reinstall procure (pip install -e .) or pick another --solver",
        )
    return backend


__all__ = [
    "BACKENDS",
    "Backend",
    "HighsSession",
    "SolveOptions",
    "SolveResult",
    "Termination",
    "get_backend",
]
