"""Price snapshots: one row per ``procure prices pull``, with its prices, and
the workspace's price watches of stored plans against a snapshot.

Revision ID: 0004_price_snapshots
Revises: 0003
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_price_snapshots"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "price_snapshots",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("source", sa.String(40), nullable=False),
        sa.Column("price_date", sa.String(10), nullable=False),
        sa.Column("origin", sa.Text, nullable=False, server_default=""),
        sa.Column("row_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("unmapped_json", sa.Text, nullable=False, server_default="[]"),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("created_by", sa.String(200), nullable=False, server_default=""),
    )
    op.create_index("ix_price_snapshots_price_date", "price_snapshots", ["price_date"])
    op.create_table(
        "price_rows",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("snapshot_id", sa.Integer, sa.ForeignKey("price_snapshots.id"), nullable=False),
        sa.Column("offering_id", sa.String(300), nullable=False),
        sa.Column("provider", sa.String(60), nullable=False),
        sa.Column("region", sa.String(100), nullable=False),
        sa.Column("instance_type", sa.String(200), nullable=False),
        sa.Column("mode", sa.String(20), nullable=False),
        sa.Column("price_usd_per_hour", sa.Float, nullable=False),
        sa.Column("in_catalog", sa.Boolean, nullable=False),
        sa.Column("accelerator_id", sa.String(60), nullable=False, server_default=""),
        sa.Column("accelerators_per_instance", sa.Integer, nullable=False, server_default="0"),
    )
    op.create_index("ix_price_rows_snapshot_id", "price_rows", ["snapshot_id"])
    op.create_index("ix_price_rows_offering_id", "price_rows", ["offering_id"])
    op.create_table(
        "price_watches",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("plan_id", sa.Integer, sa.ForeignKey("plans.id"), nullable=False),
        sa.Column("job_id", sa.Integer, sa.ForeignKey("jobs.id"), nullable=True),
        sa.Column("snapshot_id", sa.Integer, sa.ForeignKey("price_snapshots.id"), nullable=False),
        sa.Column("verdict", sa.String(40), nullable=False),
        sa.Column("result_json", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("created_by", sa.String(200), nullable=False, server_default=""),
    )
    op.create_index("ix_price_watches_plan_id", "price_watches", ["plan_id"])


def downgrade() -> None:
    op.drop_index("ix_price_watches_plan_id", "price_watches")
    op.drop_table("price_watches")
    op.drop_index("ix_price_rows_offering_id", "price_rows")
    op.drop_index("ix_price_rows_snapshot_id", "price_rows")
    op.drop_table("price_rows")
    op.drop_index("ix_price_snapshots_price_date", "price_snapshots")
    op.drop_table("price_snapshots")
