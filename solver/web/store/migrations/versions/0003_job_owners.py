"""Job owners and the servers that run them; options of analyses (frontier, two-stage).

- ``servers``: one row per running ``procure serve`` (a random instance id made at its
  start, its name: host and port or ``--instance``, and a heartbeat ``seen_at``);
- ``jobs.owner``: the instance id of the server that queued the job, so that a server
  starting again marks only its own (earlier) jobs and those of servers gone silent
  ``interrupted``, never the jobs of another live server on the same database;
- ``jobs.options_json`` and ``analyses.options_json``: what an analysis was asked for
  (frontier points, two-stage method), so the same request finds the stored result.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "servers",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, server_default=""),
        sa.Column("started_at", sa.DateTime, nullable=False),
        sa.Column("seen_at", sa.DateTime, nullable=False),
    )
    op.create_index("ix_servers_name", "servers", ["name"])
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("owner", sa.String(64), nullable=False, server_default=""))
        batch.add_column(sa.Column("options_json", sa.Text, nullable=False, server_default="{}"))
        batch.create_index("ix_jobs_owner", ["owner"])
    with op.batch_alter_table("analyses") as batch:
        batch.add_column(sa.Column("options_json", sa.Text, nullable=False, server_default="{}"))


def downgrade() -> None:
    with op.batch_alter_table("analyses") as batch:
        batch.drop_column("options_json")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_index("ix_jobs_owner")
        batch.drop_column("options_json")
        batch.drop_column("owner")
    op.drop_index("ix_servers_name", "servers")
    op.drop_table("servers")
