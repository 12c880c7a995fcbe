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

# numpy's OpenBLAS starts a thread per core when it is imported (about 60 ms of CPU at each
# command's start, more on a busy machine): procure's arithmetic is vectors of a few
# thousand numbers and the MIP solvers run their own threads, so one BLAS thread, unless
# the user set another number. Set before anything imports numpy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# isort: off
# importing a group registers its commands: this order is the order of ``procure --help``
from solver.cli import solve  # noqa: F401
from solver.cli import analyses  # noqa: F401
from solver.cli import estimate  # noqa: F401
from solver.cli import catalog  # noqa: F401
from solver.cli import changes  # noqa: F401
from solver.cli import export  # noqa: F401
from solver.cli import calibrate  # noqa: F401
from solver.cli import actuals  # noqa: F401
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
    "main",
]


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
