"""The workspace's database: SQLAlchemy 2 models (:mod:`.models`) and the Alembic
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
from solver.web.store.models import Analysis, Base, Job, PlanRecord, ProblemRecord, Variant

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
    "ProblemRecord",
    "Store",
    "Variant",
    "open_store",
]
