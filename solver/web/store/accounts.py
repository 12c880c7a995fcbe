"""The sign-off tables, on the same declarative base as :mod:`.models`.

- ``users``: local accounts, an Argon2id hash of each password and one role each
  (viewer, infra, finance, admin);
- ``web_sessions``: signed-in browsers; the cookie holds a random token, the table only
  its SHA-256, and signing out sets ``ended_at`` so that the same cookie is refused after;
- ``settings``: the workspace's own values, among them the secret key made on first
  start (kept with the database, never in the repository);
- ``plan_reviews`` and ``approvals``: a plan's approval status and every decision on it;
- ``audit_log``: who changed what, when, with digests of before and after, each row
  chained to the one before by a digest; append-only (the migrations add triggers that
  refuse UPDATE, DELETE, TRUNCATE and a replacing INSERT on SQLite and PostgreSQL).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from solver.web.store.models import Base, utc_now

#: the roles, least to most: a viewer reads; infra and finance change and approve; admin
#: manages accounts (and changes, but approves nothing)
ROLES = ("viewer", "infra", "finance", "admin")


class PlanStatus(StrEnum):
    """A plan's approval status (``PlanReview.status``): ``draft`` until submitted;
    ``approved`` locks it; ``void``: its problem or catalog changed after submission
    (submit a plan of the new inputs). Members equal their strings."""

    DRAFT = "draft"
    SUBMITTED = "submitted"
    APPROVED = "approved"
    REJECTED = "rejected"
    VOID = "void"


class Decision(StrEnum):
    """A reviewer's decision on a submitted plan (``Approval.decision``)."""

    APPROVE = "approve"
    REJECT = "reject"


#: every approval status, as the words the database holds
PLAN_STATUSES: tuple[str, ...] = tuple(s.value for s in PlanStatus)


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    password_hash: Mapped[str] = mapped_column(Text, default="")
    role: Mapped[str] = mapped_column(String(20))
    active: Mapped[bool] = mapped_column(default=True)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    created_by: Mapped[str] = mapped_column(String(200), default="")


class WebSession(Base):
    __tablename__ = "web_sessions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True, index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    ended_at: Mapped[datetime | None] = mapped_column(nullable=True)


class Setting(Base):
    __tablename__ = "settings"

    key: Mapped[str] = mapped_column(String(100), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class PlanReview(Base):
    __tablename__ = "plan_reviews"

    plan_id: Mapped[int] = mapped_column(ForeignKey("plans.id"), primary_key=True)
    status: Mapped[str] = mapped_column(String(20), default=PlanStatus.DRAFT.value)
    #: one more at each submission: approvals count within the current round only
    round: Mapped[int] = mapped_column(Integer, default=0)
    submitted_by: Mapped[str] = mapped_column(String(200), default="")
    updated_at: Mapped[datetime] = mapped_column(default=utc_now)
    #: the exact problem and catalog (SHA-256) the submission, hence its approval, is for
    problem_sha256: Mapped[str] = mapped_column(String(64), default="")
    catalog_sha256: Mapped[str] = mapped_column(String(64), default="")


class Approval(Base):
    __tablename__ = "approvals"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    plan_id: Mapped[int] = mapped_column(ForeignKey("plans.id"), index=True)
    round: Mapped[int] = mapped_column(Integer)
    user_name: Mapped[str] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(String(20))
    decision: Mapped[str] = mapped_column(String(20))  # approve | reject
    comment: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utc_now)


class AuditEntry(Base):
    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime] = mapped_column(default=utc_now)
    user_name: Mapped[str] = mapped_column(String(200))
    action: Mapped[str] = mapped_column(String(60))
    entity: Mapped[str] = mapped_column(String(200))
    before_sha256: Mapped[str] = mapped_column(String(64), default="")
    after_sha256: Mapped[str] = mapped_column(String(64), default="")
    detail: Mapped[str] = mapped_column(Text, default="")
    #: SHA-256 of the previous row's chain digest and this row's canonical content
    chain_sha256: Mapped[str] = mapped_column(String(64), default="")
