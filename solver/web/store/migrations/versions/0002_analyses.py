"""Analyses of stored plans (sensitivity: shadow prices and break-even prices), each the
result of a job.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "analyses",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("plan_id", sa.Integer, sa.ForeignKey("plans.id"), nullable=False),
        sa.Column("job_id", sa.Integer, sa.ForeignKey("jobs.id"), nullable=True),
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("break_even_limit", sa.Integer, nullable=True),
        sa.Column("result_json", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("created_by", sa.String(200), nullable=False, server_default=""),
    )
    op.create_index("ix_analyses_plan_id", "analyses", ["plan_id"])
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("break_even_limit", sa.Integer, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("break_even_limit")
    op.drop_index("ix_analyses_plan_id", "analyses")
    op.drop_table("analyses")
