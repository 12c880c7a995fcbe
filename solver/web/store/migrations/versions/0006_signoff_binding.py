"""Sign-off that cannot be bypassed: a chained digest on every audit row, the digests an
approval binds, and an audit trail no statement can empty.

- ``audit_log.chain_sha256``: SHA-256 of the previous row's chain digest and the row's
  canonical content (:func:`solver.web.audit.chain_digest`), back-filled here for the
  rows already there, so an edited or removed row breaks the chain
  (``procure users audit-check``);
- ``plan_reviews.problem_sha256`` and ``catalog_sha256``: the exact problem and catalog
  a submission (and so an approval) is for;
- PostgreSQL: a statement-level ``BEFORE TRUNCATE`` trigger besides the row triggers on
  UPDATE and DELETE; SQLite (no TRUNCATE: ``DELETE FROM`` fires the DELETE trigger): a
  ``BEFORE INSERT`` trigger that refuses a row with an id already there, since ``INSERT
  OR REPLACE`` deletes the old row without firing DELETE triggers.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_SQLITE_UPDATE = (
    "CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log "
    "BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END"
)
_SQLITE_REPLACE = (
    "CREATE TRIGGER audit_log_no_replace BEFORE INSERT ON audit_log "
    "WHEN NEW.id IS NOT NULL AND EXISTS (SELECT 1 FROM audit_log WHERE id = NEW.id) "
    "BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END"
)
_PG_TRUNCATE = (
    "CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log "
    "FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only()"
)


def _backfill() -> None:
    """Chain the rows already stored, oldest first (the UPDATE trigger is off meanwhile,
    inside this migration's transaction)."""
    from solver.web.audit import chain_digest

    bind = op.get_bind()
    rows = bind.execute(
        sa.text(
            "SELECT id, at, user_name, action, entity, before_sha256, after_sha256, detail "
            "FROM audit_log ORDER BY id"
        )
    ).mappings()
    previous = ""
    for row in list(rows):
        at = row["at"]
        if isinstance(at, str):  # SQLite hands back the stored text
            from datetime import datetime

            at = datetime.fromisoformat(at)
        previous = chain_digest(previous, {**row, "at": at})
        bind.execute(
            sa.text("UPDATE audit_log SET chain_sha256 = :c WHERE id = :i"),
            {"c": previous, "i": row["id"]},
        )


def upgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    op.add_column(
        "audit_log", sa.Column("chain_sha256", sa.String(64), nullable=False, server_default="")
    )
    for column in ("problem_sha256", "catalog_sha256"):
        op.add_column(
            "plan_reviews", sa.Column(column, sa.String(64), nullable=False, server_default="")
        )
    if postgres:
        op.execute("ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only")
        _backfill()
        op.execute("ALTER TABLE audit_log ENABLE TRIGGER audit_log_append_only")
        op.execute(_PG_TRUNCATE)
    else:
        op.execute("DROP TRIGGER IF EXISTS audit_log_no_update")
        _backfill()
        op.execute(_SQLITE_UPDATE)
        op.execute(_SQLITE_REPLACE)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS audit_log_no_truncate ON audit_log")
    else:
        op.execute("DROP TRIGGER IF EXISTS audit_log_no_replace")
    for column in ("problem_sha256", "catalog_sha256"):
        op.drop_column("plan_reviews", column)
    op.drop_column("audit_log", "chain_sha256")
