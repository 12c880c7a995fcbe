"""Units and fixed vocabulary shared by every stage (no logic, no imports from solver).

Time: plan months and the hours they hold (:mod:`solver.core.clock` turns months into
calendar hours when the problem states its start). Modes: how capacity is bought.
Prices: the catalog's price column of each rented or reserved mode.
"""

from __future__ import annotations

from enum import StrEnum


class Item(StrEnum):
    """A plan's line-item kinds (``LineItem.item``, :mod:`solver.plan.lines`). Members
    equal their strings, so plans, JSON and CSV hold the plain words."""

    RENT = "rent"
    RESERVATION = "reservation"
    PURCHASE = "purchase"
    USE = "use"
    TRAINING = "training"
    EXISTING = "existing"
    SAVINGS_PLAN = "savings_plan"  # a spend-based commitment: units are USD per hour
    SAVINGS_PLAN_COVER = "savings_plan_cover"  # on-demand usage a savings plan pays for
    STAFF_SCALE = "staff_scale"  # the staff saving of a site past 1,000 owned servers
    CAPACITY_BLOCK = "capacity_block"  # a capacity block bought whole, upfront (for training)


class Mode(StrEnum):
    """How capacity is bought: rented by the hour, reserved for a term, or owned."""

    ON_DEMAND = "on_demand"
    SPOT = "spot"
    RESERVED_1Y = "reserved_1y"
    RESERVED_3Y = "reserved_3y"
    OWNED = "owned"


HOURS_PER_MONTH = 730.0  # an average month: 8,760 h / 12 (AWS and GCP price pages use 730)
DAYS_PER_MONTH = 365.0 / 12.0  # lead times in days -> months

# Derived from Mode, as plain strings (tables and plans hold the words, not members).
RENTED_MODES: tuple[str, ...] = (Mode.ON_DEMAND.value, Mode.SPOT.value)
RESERVED_TERM_MONTHS = {Mode.RESERVED_1Y.value: 12.0, Mode.RESERVED_3Y.value: 36.0}
CLOUD_MODES: tuple[str, ...] = (*RENTED_MODES, *RESERVED_TERM_MONTHS)

# Price column of the catalog's offerings table per rented or reserved mode.
PRICE_COLUMN: dict[str, str] = {mode: f"{mode}_usd_per_hour" for mode in CLOUD_MODES}


#: Every ``--solver`` name, in the order --help lists them: the keys of the backends
#: registry (solver.core.backends.BACKENDS; tests/test_units.py holds them equal). Named
#: here so the CLI lists them without importing the backends and the model builder.
SOLVERS: tuple[str, ...] = ("highs", "cbc", "highspy", "scip", "cpsat")
#: What each ``--solver`` name is, in the words of ``--help``: two of them are HiGHS, one
#: driven directly (``highspy``, the default) and one through PuLP (``highs``).
SOLVER_MEANINGS: dict[str, str] = {
    "highspy": "HiGHS direct (default)",
    "highs": "HiGHS through PuLP",
    "cbc": "CBC through PuLP",
    "scip": "SCIP through OR-Tools",
    "cpsat": "CP-SAT through OR-Tools, integer models only",
}
#: The ``--solver`` option's help: each name and what it is.
SOLVER_HELP = "MIP solver: " + "; ".join(f"{n} = {m}" for n, m in SOLVER_MEANINGS.items())
#: The solver of ``solve``, ``resolve``, the analyses and the Python API: HiGHS through
#: highspy, the model passed as arrays (no PuLP objects) and started from a plan of the
#: MIP restricted to its LP relaxation's support (``HighsSession.restricted_start``).
DEFAULT_SOLVER = "highspy"
#: The solver of the analyses' re-solves: the same HiGHS session, kept for warm re-solves.
WARM_SOLVER = "highspy"


def owned_offering_id(server_id: str, site_id: str) -> str:
    """The offering id of a server bought and hosted at a site: ``server@site``."""
    return f"{server_id}@{site_id}"


def server_and_site(offering_id: str) -> tuple[str, str]:
    """(server, site) of an owned offering id (the inverse of :func:`owned_offering_id`);
    ("", "") parts when the id has no ``@``."""
    server_id, _, site_id = offering_id.partition("@")
    return server_id, site_id
