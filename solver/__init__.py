"""procure: optimisation-based procurement of AI accelerators.

The flow is one-directional (DESIGN.md section 2): catalog + problem -> compile
(physics) -> MIP -> solve -> Plan -> verify -> report. Each stage takes plain data
and returns plain data; files and printing happen only in :mod:`solver.cli`.
"""

__version__ = "0.1.0"
