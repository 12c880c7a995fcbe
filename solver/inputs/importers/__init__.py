"""Importers that turn third-party price catalogs into our offerings.csv schema.

Only one format so far: SkyPilot's ``vms.csv`` (:mod:`solver.importers.skypilot`).
"""

from solver.inputs.importers.skypilot import OFFERING_COLUMNS, SkyPilotImport, read_skypilot_vms

__all__ = ["OFFERING_COLUMNS", "SkyPilotImport", "read_skypilot_vms"]
