"""The tables of the workspace (SQLAlchemy 2, typed declarative mapping).

- ``problems``: a problem as its YAML text (validated by the CLI's reader when stored);
- ``variants``: a named set of changes to a problem (budget, demand and growth, carbon
  cap, allowed providers/regions/modes/tier, price multipliers) as JSON;
- ``plans``: one verified plan each, stored once and never updated: its key is the digest
  of everything that decides it (``inputs_digest``: problem, catalog, solver, gap), so the
  same inputs find the stored plan instead of solving again;
- ``jobs``: background solves and analyses with their status and progress;
- ``analyses``: a plan's sensitivity (shadow prices, break-even prices), carbon frontier or
  two-stage plan, as the job left it;
- ``servers``: the running servers (a random instance id each, made at start, and a
  heartbeat): a job's ``owner`` names the server that runs it, so a server starting again
  marks ``interrupted`` only its own earlier jobs and those of servers gone silent.

Every row records ``created_by`` (empty until sign-in exists) so that accounts, approvals
and an audit trail can be added by a migration without rewriting these tables.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum

from sqlalchemy import Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class JobStatus(StrEnum):
    """A job's status (``Job.status``). Members equal their strings, so the database and
    the JSON hold the plain words; ``interrupted``: the server stopped while the job was
    queued or running; ``timed_out``: stopped at its time limit."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"
    #: stopped at its time limit (issue 50)
    TIMED_OUT = "timed_out"


#: every job status, as the words the database holds
JOB_STATUSES: tuple[str, ...] = tuple(s.value for s in JobStatus)
#: the statuses of a job not yet ended
JOB_OPEN: tuple[str, ...] = (JobStatus.QUEUED.value, JobStatus.RUNNING.value)


def utc_now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class Base(DeclarativeBase):
    pass


class ProblemRecord(Base):
    __tablename__ = "problems"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    yaml_text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    updated_at: Mapped[datetime] = mapped_column(default=utc_now)
    created_by: Mapped[str] = mapped_column(String(200), default="")
    variants: Mapped[list[Variant]] = relationship(
        back_populates="problem", order_by="Variant.id", cascade="all, delete-orphan"
    )


class Variant(Base):
    __tablename__ = "variants"
    __table_args__ = (UniqueConstraint("problem_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    problem_id: Mapped[int] = mapped_column(ForeignKey("problems.id"))
    name: Mapped[str] = mapped_column(String(200))
    changes_json: Mapped[str] = mapped_column(Text, default="{}")
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    created_by: Mapped[str] = mapped_column(String(200), default="")
    problem: Mapped[ProblemRecord] = relationship(back_populates="variants")


class PlanRecord(Base):
    __tablename__ = "plans"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    inputs_digest: Mapped[str] = mapped_column(String(64), unique=True, index=True)
    variant_id: Mapped[int | None] = mapped_column(ForeignKey("variants.id"), nullable=True)
    problem_name: Mapped[str] = mapped_column(String(200))
    problem_sha256: Mapped[str] = mapped_column(String(64))
    catalog_sha256: Mapped[str] = mapped_column(String(64))
    catalog_dir: Mapped[str] = mapped_column(Text, default="")
    price_multipliers_json: Mapped[str] = mapped_column(Text, default="[]")
    solver: Mapped[str] = mapped_column(String(40))
    gap: Mapped[float | None] = mapped_column(Float, nullable=True)
    relative_gap: Mapped[float] = mapped_column(Float)
    verified: Mapped[bool] = mapped_column(default=False)
    status: Mapped[str] = mapped_column(String(40))
    total_cost_usd: Mapped[float] = mapped_column(Float)
    total_co2e_t: Mapped[float] = mapped_column(Float)
    plan_json: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    created_by: Mapped[str] = mapped_column(String(200), default="")
    variant: Mapped[Variant | None] = relationship()


class Job(Base):
    __tablename__ = "jobs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(40), default="solve")
    variant_id: Mapped[int] = mapped_column(ForeignKey("variants.id"))
    status: Mapped[str] = mapped_column(String(20), default=JobStatus.QUEUED.value, index=True)
    progress: Mapped[float] = mapped_column(Float, default=0.0)
    stage: Mapped[str] = mapped_column(String(200), default="queued")
    error: Mapped[str] = mapped_column(Text, default="")
    plan_id: Mapped[int | None] = mapped_column(ForeignKey("plans.id"), nullable=True)
    rerun_of: Mapped[int | None] = mapped_column(ForeignKey("jobs.id"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    started_at: Mapped[datetime | None] = mapped_column(nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(nullable=True)
    created_by: Mapped[str] = mapped_column(String(200), default="")
    #: sensitivity jobs: break-even prices for the plan's pools and this many others
    #: (None: every pool; -1: none, shadow prices only)
    break_even_limit: Mapped[int | None] = mapped_column(Integer, nullable=True)
    #: the instance id of the server that queued it (:class:`Server`; '' before 0003)
    owner: Mapped[str] = mapped_column(String(64), default="", index=True)
    #: analyses: what was asked (frontier points, two-stage method) as JSON
    options_json: Mapped[str] = mapped_column(Text, default="{}")
    variant: Mapped[Variant] = relationship()


class Analysis(Base):
    __tablename__ = "analyses"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    plan_id: Mapped[int] = mapped_column(ForeignKey("plans.id"), index=True)
    job_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id"), nullable=True)
    kind: Mapped[str] = mapped_column(String(40), default="sensitivity")
    break_even_limit: Mapped[int | None] = mapped_column(Integer, nullable=True)
    result_json: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    created_by: Mapped[str] = mapped_column(String(200), default="")
    #: what was asked (frontier points, two-stage method) as JSON, as on its job
    options_json: Mapped[str] = mapped_column(Text, default="{}")


class Server(Base):
    """A running server: its instance id (random, made at its start), its name (host and
    port, or ``procure serve --instance``: the same after a restart) and its heartbeat."""

    __tablename__ = "servers"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(200), default="", index=True)
    started_at: Mapped[datetime] = mapped_column(default=utc_now)
    seen_at: Mapped[datetime] = mapped_column(default=utc_now)
