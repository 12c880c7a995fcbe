"""A MIP's progress as it runs (issue 50): its incumbent, bound and gap, reported from
HiGHS's MIP callbacks to whoever listens (the CLI's progress line on stderr, a workspace
job's record through its child process's pipe).

A listener is set for a block of code with :func:`mip_progress`; every HiGHS solve in
that block (:func:`solver.core.backends.base.deadline_interrupt` registers the callbacks)
calls it at most once every ``every_s`` seconds, and at each improving plan. One listener
per process (the CLI and a job's child run one solve at a time); the solves of local pool
workers (other processes) are not seen, their analyses report their steps instead.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class MipProgress:
    """One look at a running MIP.

    Attributes
    ----------
    incumbent
        The objective of the best plan found so far (the model's units: USD for a cost
        objective), None before the first.
    bound
        The best bound proved so far (the same units), None before the root.
    gap
        Relative gap between the two (0.01 = 1%), None without a plan.
    elapsed_s
        Seconds since this solve started.
    time_limit_s
        The solve's own time limit in seconds, None without one.
    unit
        What the objective counts: ``USD`` for a cost, else a count's name (``plans
        reused`` for the alternatives' search).
    """

    incumbent: float | None
    bound: float | None
    gap: float | None
    elapsed_s: float
    time_limit_s: float | None
    unit: str = "USD"

    def as_dict(self) -> dict:
        return asdict(self)


Listener = Callable[[MipProgress], None]

_listener: Listener | None = None
_every_s: float = 1.0
_lock = threading.Lock()


@contextmanager
def mip_progress(listener: Listener, every_s: float = 1.0) -> Iterator[None]:
    """Call ``listener`` with each HiGHS MIP's progress inside the block, at most every
    ``every_s`` seconds (and at each improving plan). Restores the one before after."""
    global _listener, _every_s
    with _lock:
        before = (_listener, _every_s)
        _listener, _every_s = listener, float(every_s)
    try:
        yield
    finally:
        with _lock:
            _listener, _every_s = before


def listener() -> tuple[Listener, float] | None:
    """The listener set by :func:`mip_progress` and its period, or None."""
    found = _listener
    return None if found is None else (found, _every_s)


_HUGE = 1e29  # HiGHS's infinity (kHighsInf) and its stand-ins: no value yet


def reporter(
    time_limit_s: float | None, offset: float = 0.0, objective_unit: str = "USD"
) -> Callable[[bool, float, float, float], None] | None:
    """A function ``(improving, primal, dual, gap)`` that passes a HiGHS callback's MIP
    figures (``offset``, the model's constant, added; counted in ``objective_unit``) to
    the listener, throttled; None without a listener."""
    found = listener()
    if found is None:
        return None
    fn, every_s = found
    began = time.perf_counter()
    last = [-float("inf")]

    def report(improving: bool, primal: float, dual: float, gap: float) -> None:
        now = time.perf_counter()
        if not improving and now - last[0] < every_s:
            return
        last[0] = now
        incumbent = primal + offset if abs(primal) < _HUGE else None
        bound = dual + offset if abs(dual) < _HUGE else None
        fn(
            MipProgress(
                incumbent=incumbent,
                bound=bound,
                gap=float(gap) if incumbent is not None and 0 <= gap < _HUGE else None,
                elapsed_s=now - began,
                time_limit_s=time_limit_s,
                unit=objective_unit,
            )
        )

    return report
