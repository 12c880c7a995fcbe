"""procure: optimisation-based procurement of AI accelerators.

The flow is one-directional (DESIGN.md section 2): catalog + problem -> compile
(physics) -> MIP -> solve -> Plan -> verify -> report. Each stage takes plain data
and returns plain data; files and printing happen only in :mod:`solver.cli`.

The folders are the stages: ``inputs/``, ``core/``, ``plan/``, ``trust/``,
``analyses/``, ``outputs/``, ``cli/`` (``physics/`` at the bottom, ``solve.py`` and
``api.py`` the pipeline on top of the core).
"""

from __future__ import annotations

import time as _time

#: when this process imported procure (``time.perf_counter()``): a command's deadline
#: counts from here in a command-line process, so the interpreter's start and the imports
#: are inside ``--time-limit`` (solver.cli.common._deadline)
IMPORTED_AT_S = _time.perf_counter()

__version__ = "0.1.0"
