"""Stop a running HiGHS solve: at a deadline, on a signal, or when a caller asks.

A Python signal handler runs only when the main thread runs Python; during ``h.run()``
HiGHS holds it in C++, so a SIGTERM or Ctrl-C used to wait for the MIP to end (a minute
and more on a hard one). HiGHS calls back into Python at its simplex, IPM and MIP
interrupt points: :func:`highs_callback` makes one callback that asks HiGHS to stop
(``user_interrupt``) once a deadline passes or a stop is requested, and the signal
handler (solver/cli/common.py) only *requests* the stop while a solve is in C++
(:func:`native`): the solve returns, and :func:`raise_if_requested` raises the signal's
:class:`~solver.errors.Interrupted` in Python, where every ``finally`` runs.

Other callers (a web job's cancel, an analysis's progress) use :func:`request_stop` and
:func:`highs_callback`'s ``extra`` hook; this module keeps no state but the request.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import highspy

_lock = threading.Lock()
#: the signal number whose stop is requested (0: a caller's request), None when none is
_requested: int | None = None
#: how many solves are in C++ now (:func:`native`)
_native_depth = 0


def _forget_in_child() -> None:
    """A forked process starts with no stop of its own: the request, the native depth and
    the lock are its parent's (a request made during the fork, in an at-fork hook where
    the handler's exception is swallowed, would stop the child's first solve and raise
    the parent's signal there; a lock a parent's thread held would never be released)."""
    global _lock, _requested, _native_depth
    _lock = threading.Lock()
    _requested = None
    _native_depth = 0


os.register_at_fork(after_in_child=_forget_in_child)


def request_stop(signum: int = 0) -> None:
    """Ask every running solve to stop at its next interrupt point (``signum``: the
    signal that asked, 0 for a caller's request)."""
    global _requested
    with _lock:
        if _requested is None:
            _requested = int(signum)


def stop_requested() -> bool:
    """Whether a stop was requested and not yet raised."""
    return _requested is not None


def pending_signal() -> int | None:
    """The signal whose stop is requested and not yet raised (0: a caller's request)."""
    return _requested


def resend_while_pending(signum: int, every_s: float = 0.2) -> None:
    """Send ``signum`` to this process again every ``every_s`` while its stop is pending:
    Python swallows an exception a handler raises inside some callbacks (an at-fork hook,
    a ``__del__``: "Exception ignored in ..."), so a signal can be lost there; repeated,
    it lands where Python runs next (as the CLI's ``--time-limit`` alarm repeats).
    :func:`clear` ends it."""

    def resend() -> None:
        while True:
            time.sleep(every_s)
            with _lock:  # a clear() between the check and the kill cannot happen
                if _requested != signum:
                    return
                os.kill(os.getpid(), signum)

    threading.Thread(target=resend, daemon=True, name="procure-resend-signal").start()


def clear() -> None:
    """Forget a request (a new command or job starts)."""
    global _requested
    with _lock:
        _requested = None


def in_native() -> bool:
    """Whether a solve is in C++ now (a signal handler then only requests the stop)."""
    return _native_depth > 0


@contextmanager
def native() -> Iterator[None]:
    """Mark a native solver call: a signal during it requests a stop (the solver's
    callback sees it) instead of raising where Python cannot run."""
    global _native_depth
    with _lock:
        _native_depth += 1
    try:
        yield
    finally:
        with _lock:
            _native_depth -= 1


def raise_if_requested() -> None:
    """Raise the requested stop in Python: :class:`~solver.errors.Interrupted` for a
    signal (SIGINT as KeyboardInterrupt, as Ctrl-C raises), nothing for a caller's request
    (the caller reads the solve's interrupted status)."""
    global _requested
    with _lock:
        signum = _requested
        if signum:
            _requested = None
    if not signum:
        return
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    from solver.errors import Interrupted

    raise Interrupted(signum)


def highs_callback(
    time_limit_s: float | None, extra: Callable[[Any], None] | None = None
) -> tuple[Callable[..., None], list[highspy.cb.HighsCallbackType]]:
    """(callback, callback types) for ``Highs.setCallback`` / ``startCallback``: HiGHS
    stops at its next simplex, IPM or MIP interrupt point once ``time_limit_s`` from now
    has passed (HiGHS checks its own ``time_limit`` only at some points) or a stop is
    requested. ``extra(data_out)`` is called at each MIP interrupt point (progress)."""
    import highspy

    deadline = None if time_limit_s is None else time.perf_counter() + float(time_limit_s)
    kinds = highspy.cb.HighsCallbackType

    def interrupt(
        callback_type: highspy.cb.HighsCallbackType,
        message: str,
        data_out: highspy.cb.HighsCallbackDataOut,
        data_in: highspy.cb.HighsCallbackDataIn,
        user_data: object,
    ) -> None:
        if extra is not None and callback_type == kinds.kCallbackMipInterrupt:
            extra(data_out)
        if _requested is not None or (deadline is not None and time.perf_counter() > deadline):
            data_in.user_interrupt = True

    return interrupt, [
        kinds.kCallbackSimplexInterrupt,
        kinds.kCallbackIpmInterrupt,
        kinds.kCallbackMipInterrupt,
    ]
