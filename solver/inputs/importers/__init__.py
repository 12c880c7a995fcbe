"""Importers that turn third-party price files into our tables, one module per format:

- SkyPilot's ``vms.csv`` -> offerings (:mod:`solver.inputs.importers.skypilot`);
- committed prices (:mod:`solver.inputs.importers.committed`): AWS Price List offer
  files, Reserved Instances and Savings Plans (:mod:`.aws_prices`); Azure Retail Prices
  API records, reservations and savings plans (:mod:`.azure_retail`); GCP Cloud Billing
  Catalog SKUs, committed use (:mod:`.gcp_billing`).
"""

from solver.inputs.importers.skypilot import OFFERING_COLUMNS, SkyPilotImport, read_skypilot_vms

__all__ = ["OFFERING_COLUMNS", "SkyPilotImport", "read_skypilot_vms"]
