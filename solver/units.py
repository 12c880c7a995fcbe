"""Units and fixed vocabulary shared by every stage (no logic, no imports from solver).

Time: plan months and the hours they hold (:mod:`solver.clock` turns months into
calendar hours when the problem states its start). Modes: how capacity is bought.
Prices: the catalog's price column of each rented or reserved mode.
"""

from __future__ import annotations

HOURS_PER_MONTH = 730.0  # an average month: 8,760 h / 12 (AWS and GCP price pages use 730)
DAYS_PER_MONTH = 365.0 / 12.0  # lead times in days -> months

CLOUD_MODES = ("on_demand", "spot", "reserved_1y", "reserved_3y")
RENTED_MODES = ("on_demand", "spot")
RESERVED_TERM_MONTHS = {"reserved_1y": 12.0, "reserved_3y": 36.0}

# Price column of the catalog's offerings table per rented or reserved mode.
PRICE_COLUMN: dict[str, str] = {
    "on_demand": "on_demand_usd_per_hour",
    "spot": "spot_usd_per_hour",
    "reserved_1y": "reserved_1y_usd_per_hour",
    "reserved_3y": "reserved_3y_usd_per_hour",
}


def owned_offering_id(server_id: str, site_id: str) -> str:
    """The offering id of a server bought and hosted at a site: ``server@site``."""
    return f"{server_id}@{site_id}"


def server_and_site(offering_id: str) -> tuple[str, str]:
    """(server, site) of an owned offering id (the inverse of :func:`owned_offering_id`);
    ("", "") parts when the id has no ``@``."""
    server_id, _, site_id = offering_id.partition("@")
    return server_id, site_id
