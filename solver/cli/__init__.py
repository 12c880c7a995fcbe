"""The command line: ``procure solve | sensitivity | report | estimate | catalog | schema``,
``procure resolve | diff | export`` (re-solving after a price change, orders, FOCUS),
``procure actuals | watch`` (after the plan is signed: bills against the plan, price watch),
``procure prices pull | list | history`` (dated price snapshots in the workspace database),
``procure serve`` (the workspace in the browser).

The only place that reads arguments, prints and writes files. Every user error
becomes one message naming the file, the field and the fix, and exit code 2;
``--debug`` shows the traceback instead.

One module per command group (``solve``, ``analyses``: sensitivity and report,
``estimate``, ``catalog``, ``changes``: resolve and diff, ``export``, ``calibrate``,
``actuals``: actuals and watch; ``prices``: price snapshots);
:mod:`solver.cli.common` holds the app, the exit codes and what the commands share.
Importing a group registers its commands, in the order ``procure --help`` lists them.
"""

from __future__ import annotations

import os

# numpy's OpenBLAS starts a thread per core when it is imported (CPU at each command's
# start, more on a busy machine): procure's arithmetic is vectors of a few
# thousand numbers and the MIP solvers run their own threads, so one BLAS thread, unless
# the user set another number. Set before anything imports numpy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# isort: off
# importing a group registers its commands: this order is the order of ``procure --help``
from solver.cli import solve  # noqa: F401
from solver.cli import analyses  # noqa: F401
from solver.cli import alternatives  # noqa: F401
from solver.cli import estimate  # noqa: F401
from solver.cli import catalog  # noqa: F401
from solver.cli import changes  # noqa: F401
from solver.cli import export  # noqa: F401
from solver.cli import calibrate  # noqa: F401
from solver.cli import actuals  # noqa: F401
from solver.cli import replay  # noqa: F401
from solver.cli import prices  # noqa: F401
from solver.cli import serve  # noqa: F401
from solver.cli import users  # noqa: F401

# isort: on
from solver.cli.common import (
    EXIT_BUG,
    EXIT_INFEASIBLE,
    EXIT_INTERRUPTED,
    EXIT_NO_PLAN,
    EXIT_USER_ERROR,
    app,
)

__all__ = [
    "EXIT_BUG",
    "EXIT_INFEASIBLE",
    "EXIT_INTERRUPTED",
    "EXIT_NO_PLAN",
    "EXIT_USER_ERROR",
    "app",
    "leave",
    "main",
]


def main() -> None:  # pragma: no cover
    """``procure``: run the command, then leave the process at once (:func:`leave`)."""
    try:
        app()
    except SystemExit as stop:
        leave(stop.code)
    leave(0)


def leave(code: int | str | None) -> None:  # pragma: no cover
    """End the process with ``code`` as Python's own exit would, without its teardown.

    Python's exit runs the atexit handlers, flushes stdout and stderr, then frees every
    module and object, a noticeable part of a short command (pandas, numpy and pydantic
    hold a great many objects). Here the handlers run and the streams
    are flushed as usual, and the process ends without the freeing (``os._exit``). With
    threads still running (a worker pool, the web server) Python's own exit joins them.
    """
    import atexit
    import sys
    import threading

    if threading.active_count() > 1:
        sys.exit(code)
    if code is None:
        code = 0
    elif not isinstance(code, int):  # sys.exit("message"): printed, status 1
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # a closed pipe (procure solve | head): status 120, as Python's exit
        code = code or 120
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()
