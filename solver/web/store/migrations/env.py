"""Alembic environment: migrations run on the connection :func:`solver.web.store.db.upgrade`
passes (``config.attributes["connection"]``); there is no alembic.ini."""

from alembic import context

from solver.web.store.models import Base

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
