"""The workspace: problems, variants, plans (immutable, keyed by their inputs digest), jobs.

Revision ID: 0001
Revises:
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _who() -> sa.Column:
    return sa.Column("created_by", sa.String(200), nullable=False, server_default="")


def upgrade() -> None:
    op.create_table(
        "problems",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("yaml_text", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
        _who(),
    )
    op.create_table(
        "variants",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("problem_id", sa.Integer, sa.ForeignKey("problems.id"), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("changes_json", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        _who(),
        sa.UniqueConstraint("problem_id", "name"),
    )
    op.create_table(
        "plans",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("inputs_digest", sa.String(64), nullable=False),
        sa.Column("variant_id", sa.Integer, sa.ForeignKey("variants.id"), nullable=True),
        sa.Column("problem_name", sa.String(200), nullable=False),
        sa.Column("problem_sha256", sa.String(64), nullable=False),
        sa.Column("catalog_sha256", sa.String(64), nullable=False),
        sa.Column("catalog_dir", sa.Text, nullable=False),
        sa.Column("price_multipliers_json", sa.Text, nullable=False),
        sa.Column("solver", sa.String(40), nullable=False),
        sa.Column("gap", sa.Float, nullable=True),
        sa.Column("relative_gap", sa.Float, nullable=False),
        sa.Column("verified", sa.Boolean, nullable=False),
        sa.Column("status", sa.String(40), nullable=False),
        sa.Column("total_cost_usd", sa.Float, nullable=False),
        sa.Column("total_co2e_t", sa.Float, nullable=False),
        sa.Column("plan_json", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        _who(),
    )
    op.create_index("ix_plans_inputs_digest", "plans", ["inputs_digest"], unique=True)
    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("variant_id", sa.Integer, sa.ForeignKey("variants.id"), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("progress", sa.Float, nullable=False),
        sa.Column("stage", sa.String(200), nullable=False),
        sa.Column("error", sa.Text, nullable=False),
        sa.Column("plan_id", sa.Integer, sa.ForeignKey("plans.id"), nullable=True),
        sa.Column("rerun_of", sa.Integer, sa.ForeignKey("jobs.id"), nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("started_at", sa.DateTime, nullable=True),
        sa.Column("finished_at", sa.DateTime, nullable=True),
        _who(),
    )
    op.create_index("ix_jobs_status", "jobs", ["status"])


def downgrade() -> None:
    op.drop_index("ix_jobs_status", "jobs")
    op.drop_table("jobs")
    op.drop_index("ix_plans_inputs_digest", "plans")
    op.drop_table("plans")
    op.drop_table("variants")
    op.drop_table("problems")
