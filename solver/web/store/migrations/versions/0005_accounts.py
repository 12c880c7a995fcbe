"""Sign-off: accounts and their sessions, the workspace's settings (its secret
key), plan approvals, and the append-only audit log.

Revision ID: 0005
Revises: 0004_price_snapshots
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004_price_snapshots"
branch_labels = None
depends_on = None

_PG_GUARD = """
CREATE OR REPLACE FUNCTION audit_log_append_only() RETURNS trigger AS $$
BEGIN RAISE EXCEPTION 'audit_log is append-only'; END; $$ LANGUAGE plpgsql
"""


def _append_only() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_PG_GUARD)
        op.execute(
            "CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log "
            "FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()"
        )
        return
    for verb in ("UPDATE", "DELETE"):
        op.execute(
            f"CREATE TRIGGER audit_log_no_{verb.lower()} BEFORE {verb} ON audit_log "
            "BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END"
        )


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("password_hash", sa.Text, nullable=False, server_default=""),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("active", sa.Boolean, nullable=False, server_default=sa.true()),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("created_by", sa.String(200), nullable=False, server_default=""),
    )
    op.create_table(
        "web_sessions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("token_sha256", sa.String(64), nullable=False),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("ended_at", sa.DateTime, nullable=True),
    )
    op.create_index("ix_web_sessions_token_sha256", "web_sessions", ["token_sha256"], unique=True)
    op.create_table(
        "settings",
        sa.Column("key", sa.String(100), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )
    op.create_table(
        "plan_reviews",
        sa.Column("plan_id", sa.Integer, sa.ForeignKey("plans.id"), primary_key=True),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("round", sa.Integer, nullable=False),
        sa.Column("submitted_by", sa.String(200), nullable=False, server_default=""),
        sa.Column("updated_at", sa.DateTime, nullable=False),
    )
    op.create_table(
        "approvals",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("plan_id", sa.Integer, sa.ForeignKey("plans.id"), nullable=False),
        sa.Column("round", sa.Integer, nullable=False),
        sa.Column("user_name", sa.String(200), nullable=False),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("decision", sa.String(20), nullable=False),
        sa.Column("comment", sa.Text, nullable=False, server_default=""),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_index("ix_approvals_plan_id", "approvals", ["plan_id"])
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("at", sa.DateTime, nullable=False),
        sa.Column("user_name", sa.String(200), nullable=False),
        sa.Column("action", sa.String(60), nullable=False),
        sa.Column("entity", sa.String(200), nullable=False),
        sa.Column("before_sha256", sa.String(64), nullable=False, server_default=""),
        sa.Column("after_sha256", sa.String(64), nullable=False, server_default=""),
        sa.Column("detail", sa.Text, nullable=False, server_default=""),
    )
    _append_only()


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS audit_log_append_only ON audit_log")
        op.execute("DROP FUNCTION IF EXISTS audit_log_append_only()")
    op.drop_table("audit_log")
    op.drop_index("ix_approvals_plan_id", "approvals")
    op.drop_table("approvals")
    op.drop_table("plan_reviews")
    op.drop_table("settings")
    op.drop_index("ix_web_sessions_token_sha256", "web_sessions")
    op.drop_table("web_sessions")
    op.drop_table("users")
