"""The backend interface: one small adapter per solver library.

Every backend says whether it is available and what it can do, solves a
:class:`~solver.core.matrix.LinearModel` with typed :class:`SolveOptions`, and returns
a :class:`SolveResult` that keeps the termination apart from the numbers.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

import numpy as np

from solver.core.matrix import LinearModel

if TYPE_CHECKING:
    import highspy


class Termination(StrEnum):
    """How a solve ended."""

    OPTIMAL = "optimal"  # proven within the requested relative gap
    FEASIBLE = "feasible"  # a plan, stopped by a limit; its gap is stated
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    NO_SOLUTION = "no_solution"  # stopped by a limit before any plan was found
    ERROR = "error"


@dataclass(frozen=True)
class SolveOptions:
    """Options every backend understands, plus a per-backend dictionary that wins."""

    time_limit_s: float | None = None
    relative_gap: float = 1e-4
    threads: int | None = None
    seed: int = 0
    #: start a MIP from a plan of the MIP restricted to its LP relaxation's support
    #: (highspy only; :meth:`solver.core.backends.highs_backend.HighsSession.restricted_start`)
    start_heuristic: bool = True
    backend_options: dict = field(default_factory=dict)


@dataclass(frozen=True)
class SolveResult:
    """What a backend returns. ``values`` is None unless a plan was found."""

    termination: Termination
    solver: str
    values: np.ndarray | None
    objective: float | None
    bound: float | None
    gap: float | None
    solve_seconds: float
    message: str = ""
    duals: dict[str, float] | None = None  # row name -> dual (LPs only; None for a MIP)
    reduced_costs: np.ndarray | None = None  # per variable (LPs only)

    @property
    def has_solution(self) -> bool:
        return self.values is not None and self.termination in (
            Termination.OPTIMAL,
            Termination.FEASIBLE,
        )


class Backend(Protocol):
    """A solver adapter."""

    name: str
    features: frozenset[str]  # e.g. {"integer", "duals", "time_limit", "gap"}

    def available(self) -> bool: ...

    def solve(self, model: LinearModel, options: SolveOptions) -> SolveResult: ...


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """|objective - bound| / max(|objective|, 1e-9), or None when either is unknown."""
    if objective is None or bound is None or not np.isfinite(bound):
        return None
    return abs(objective - bound) / max(abs(objective), 1e-9)


def feasible_without_objective(
    model: LinearModel, solve: Callable[[LinearModel], SolveResult]
) -> bool:
    """Whether ``model`` has a feasible point: solve it with a zero objective.

    Used to tell "unbounded" from "infeasible" when a solver says only "one of them".
    """
    from solver.core.matrix import Expression

    if not model.objective.coefs:
        return False  # already the zero objective: the solver's "infeasible" stands
    zero = LinearModel(model.variables, model.rows, Expression(), model.expressions, model.stage)
    return solve(zero).has_solution


def empty_row_infeasible(model: LinearModel) -> str | None:
    """The message for a row with no variables that cannot hold, or None when every such row
    holds (a backend refuses the model before solving: HiGHS would drop the row silently)."""
    for row in model.rows:
        if row.coefs:
            continue
        ok = {"<=": 0.0 <= row.rhs + 1e-9, ">=": 0.0 >= row.rhs - 1e-9, "==": abs(row.rhs) <= 1e-9}
        if not ok[row.sense]:
            return f"{row.name} cannot hold: nothing can serve it"
    return None


_QUIET_LOCK = threading.Lock()
_quiet_depth = 0
_saved_stdout_fd: int | None = None


@contextlib.contextmanager
def native_output_to_stderr() -> Iterator[None]:
    """Send what native solver code prints to file descriptor 1 to stderr instead.

    HiGHS prints a debug line on some MIPs even with its output switched off, which
    would corrupt ``procure solve --format json`` on stdout. Python-level writes are
    flushed first; nested and concurrent uses (threads) share one redirection.
    """
    global _quiet_depth, _saved_stdout_fd
    with _QUIET_LOCK:
        if _quiet_depth == 0:
            try:
                sys.stdout.flush()
                if sys.__stdout__ is not None:
                    sys.__stdout__.flush()
                _flush_c_stdio()
                _saved_stdout_fd = os.dup(1)
                os.dup2(2, 1)
            except OSError:  # no fd 1 or 2 (embedded): nothing to protect
                _saved_stdout_fd = None
        _quiet_depth += 1
    try:
        yield
    finally:
        with _QUIET_LOCK:
            _quiet_depth -= 1
            if _quiet_depth == 0 and _saved_stdout_fd is not None:
                _flush_c_stdio()  # C-buffered output goes where it was written: stderr
                os.dup2(_saved_stdout_fd, 1)
                os.close(_saved_stdout_fd)
                _saved_stdout_fd = None


def _flush_c_stdio() -> None:
    """fflush(NULL): write out every C stdio buffer (a no-op where libc is not found)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).fflush(None)


def deadline_interrupt(
    time_limit_s: float | None, objective_unit: str = "USD"
) -> tuple[Callable[..., None], list[highspy.cb.HighsCallbackType]]:
    """(callback, callback types) that stop HiGHS at ``time_limit_s`` from now (None: no
    deadline), or when a signal or a caller asks (:mod:`solver.core.backends.interrupt`),
    and report a MIP's progress to the listener of
    :func:`solver.core.backends.progress.mip_progress` (incumbent, bound, gap) when one is
    set, its objective counted in ``objective_unit``.

    HiGHS checks its own ``time_limit`` only at some points; these callbacks add the
    simplex, IPM and MIP interrupt points. Some phases still reach none, so a solve can
    overrun its budget on a large model (bench/archive/RESULTS-2026.md).
    """
    from solver.core.backends.interrupt import highs_callback
    from solver.core.backends.progress import reporter

    stop, stop_kinds = highs_callback(time_limit_s)
    report = reporter(time_limit_s, objective_unit=objective_unit)
    if report is None:
        return stop, stop_kinds
    import highspy

    kinds = highspy.cb.HighsCallbackType
    mip_kinds = (kinds.kCallbackMipInterrupt, kinds.kCallbackMipImprovingSolution)

    def callback(
        callback_type: highspy.cb.HighsCallbackType,
        message: str,
        data_out: highspy.cb.HighsCallbackDataOut,
        data_in: highspy.cb.HighsCallbackDataIn,
        user_data: object,
    ) -> None:
        if callback_type in mip_kinds:
            report(
                callback_type == kinds.kCallbackMipImprovingSolution,
                float(data_out.mip_primal_bound),
                float(data_out.mip_dual_bound),
                float(data_out.mip_gap),
            )
        if callback_type != kinds.kCallbackMipImprovingSolution:
            stop(callback_type, message, data_out, data_in, user_data)

    return callback, [*stop_kinds, kinds.kCallbackMipImprovingSolution]
