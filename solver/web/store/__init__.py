"""The workspace's database: SQLAlchemy 2 models (:mod:`.models`; price snapshots in
:mod:`.snapshots`) and the Alembic
migrations that create and change them (``migrations/``, shipped in the package).

:func:`open_store` upgrades the database to the newest migration and returns a session
factory; the schema is never created any other way, so SQLite files and PostgreSQL
servers go through the same steps.
"""

from solver.web.store.accounts import (
    ROLES,
    Approval,
    AuditEntry,
    PlanReview,
    Setting,
    User,
    WebSession,
)
from solver.web.store.db import Store, open_store
from solver.web.store.models import Analysis, Base, Job, PlanRecord, ProblemRecord, Server, Variant
from solver.web.store.snapshots import PriceRow, PriceSnapshot, PriceWatch

__all__ = [
    "ROLES",
    "Analysis",
    "Approval",
    "AuditEntry",
    "PlanReview",
    "Setting",
    "User",
    "WebSession",
    "Base",
    "Job",
    "PlanRecord",
    "PriceRow",
    "PriceSnapshot",
    "PriceWatch",
    "ProblemRecord",
    "Server",
    "Store",
    "Variant",
    "open_store",
]
