"""The workspace (``procure serve``, DESIGN.md section 9): problems, their variants and
stored plans in a database, pages rendered on the server, solves as background jobs on
the Dask runner.

- :mod:`solver.web.store`: SQLAlchemy 2 models and Alembic migrations (SQLite by default,
  PostgreSQL by URL);
- :mod:`solver.web.workspace`: what the pages do with the store, in plain functions (a
  variant's problem and catalog, the digest lookup, storing a plan);
- :mod:`solver.web.jobs`: solves as background jobs on :func:`solver.analyses.runner.run_tasks`
  (a local Dask cluster by default, a scheduler address for a real cluster);
- :mod:`solver.web.app`: the FastAPI app, its routes and templates.
"""
