"""The store and the jobs on each database: SQLite (a file) always, PostgreSQL when
``PROCURE_TEST_POSTGRES_URL`` names a server (``.ci/run`` starts one; skipped otherwise).

The plan stored here is the seed's golden plan (tests/golden/seed-2m-13b.json, what
``procure solve`` gives), so no test but the one job solves."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, inspect, select
from sqlalchemy.exc import IntegrityError

from conftest import ROOT
from solver.plan import Plan
from solver.web.app import create_app
from solver.web.store import Job, PlanRecord, open_store
from solver.web.workspace import add_problem, add_variant, store_plan, variant_inputs
from tests.web.conftest import (
    SEED_TOTAL_USD,
    SEED_YAML,
    fresh_url,
    job_id_of,
    sign_in,
    wait_for_job,
)

GOLDEN = Plan.model_validate(
    json.loads((ROOT / "tests" / "golden" / "seed-2m-13b.json").read_text())["output"]
)


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path_factory) -> str:
    return fresh_url(request.param, tmp_path_factory)


def test_the_migration_makes_every_table(url):
    store = open_store(url)
    names = set(inspect(store.engine).get_table_names())
    assert {"problems", "variants", "plans", "jobs", "analyses", "servers"} <= names
    assert {"price_snapshots", "price_rows", "alembic_version"} <= names
    assert {"users", "web_sessions", "settings", "plan_reviews", "approvals", "audit_log"} <= names
    # the newest migration shipped (0001 the workspace, 0002 analyses, 0003 job owners and
    # servers, 0004 price snapshots, 0005 sign-off, 0006 the audit chain and the digests
    # an approval binds; the head is read from the scripts)
    assert _version(store.engine) == _head() == "0006"
    open_store(url)  # a second start finds the schema at head and changes nothing
    # each migration goes back as well as forward
    from alembic import command
    from alembic.config import Config

    from solver.web.store.db import MIGRATIONS

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with store.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0002")
    assert _version(store.engine) == "0002"
    assert "servers" not in inspect(store.engine).get_table_names()
    assert "owner" not in {c["name"] for c in inspect(store.engine).get_columns("jobs")}
    with store.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0001")
    assert _version(store.engine) == "0001"
    assert "analyses" not in inspect(store.engine).get_table_names()
    assert "audit_log" not in inspect(store.engine).get_table_names()
    assert "price_snapshots" not in inspect(store.engine).get_table_names()
    assert _version(open_store(url).engine) == _head()
    columns = {c["name"] for c in inspect(store.engine).get_columns("jobs")}
    assert {"owner", "options_json"} <= columns


def _head() -> str:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from solver.web.store.db import MIGRATIONS

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return ScriptDirectory.from_config(config).get_current_head()


def _version(engine) -> str:
    from sqlalchemy import text

    with engine.connect() as connection:
        return connection.execute(text("SELECT version_num FROM alembic_version")).scalar()


def test_a_plan_is_stored_once_under_its_digest(url):
    store = open_store(url)
    with store.sessions() as session:
        problem = add_problem(session, SEED_YAML)
        base = problem.variants[0]
        inputs = variant_inputs(base)
        first = store_plan(session, base.id, inputs, GOLDEN)
        again = store_plan(session, base.id, inputs, GOLDEN)
        assert again.id == first.id  # found by digest, not stored twice
        assert session.scalar(select(func.count()).select_from(PlanRecord)) == 1
        assert first.total_cost_usd == pytest.approx(SEED_TOTAL_USD, abs=0.01)
        assert json.loads(first.plan_json)["total_cost_usd"] == GOLDEN.total_cost_usd
        # the database itself refuses a second row with the same digest
        session.add(
            PlanRecord(
                inputs_digest=inputs.digest,
                problem_name="x",
                problem_sha256="",
                catalog_sha256="",
                solver="highs",
                relative_gap=1e-4,
                status="optimal",
                total_cost_usd=0.0,
                total_co2e_t=0.0,
                plan_json="{}",
            )
        )
        with pytest.raises(IntegrityError):
            session.commit()
        session.rollback()
        # a variant with another budget has another problem digest, the same catalog digest
        other = add_variant(session, problem, "budget-1.5m", {"budget_usd": 1_500_000})
        other_inputs = variant_inputs(other)
        assert other_inputs.digest != inputs.digest
        assert other_inputs.catalog_sha256 == inputs.catalog_sha256
        # a price multiplier changes the catalog's digest (the prices are part of it)
        dearer = add_variant(
            session, problem, "dearer", {"price_multipliers": [{"provider": "aws", "factor": 1.1}]}
        )
        assert variant_inputs(dearer).catalog_sha256 != inputs.catalog_sha256


def test_approval_lock_and_the_append_only_audit_on_each_database(url):
    """Issue 31's store side on SQLite and PostgreSQL: two approvals (finance=1, infra=1)
    by people other than the submitter approve and lock; the audit rows are there in
    order, chained; the database itself refuses to change, delete or empty one
    (migrations 0005 and 0006's triggers; TRUNCATE exists on PostgreSQL only)."""
    from sqlalchemy import text
    from sqlalchemy.exc import DBAPIError

    from solver.web import approvals, audit

    store = open_store(url)
    required = approvals.DEFAULT_APPROVALS
    with store.sessions() as session:
        problem = add_problem(session, SEED_YAML)
        base = problem.variants[0]
        plan = store_plan(session, base.id, variant_inputs(base), GOLDEN)
        approvals.submit(session, plan.id, "ian")
        assert (
            approvals.decide(session, plan.id, "fay", "finance", "approve", "", required).status
            == "submitted"
        )
        assert approvals.locking_plan(session, problem.id) is None
        assert (
            approvals.decide(session, plan.id, "ivo", "infra", "approve", "", required).status
            == "approved"
        )
        assert approvals.locking_plan(session, problem.id) == plan.id
        steps = [(e.user_name, e.action) for e in audit.entries(session)]
        chain = audit.first_broken(audit.entries(session))
    assert steps == [("ian", "plan.submit"), ("fay", "plan.approve"), ("ivo", "plan.approve")]
    assert (chain.broken_id, chain.rows) == (None, 3)
    statements = ["UPDATE audit_log SET user_name = 'mallory'", "DELETE FROM audit_log"]
    # SQLite: INSERT OR REPLACE deletes the old row without firing DELETE triggers
    replace = (
        "INSERT OR REPLACE INTO audit_log (id, at, user_name, action, entity, before_sha256, "
        "after_sha256, detail, chain_sha256) VALUES (1, '2026-01-01 00:00:00', 'mallory', "
        "'x', 'x', '', '', '', '')"
    )
    if store.engine.dialect.name == "postgresql":
        statements.append("TRUNCATE audit_log")
    else:
        statements.append(replace)
    for statement in statements:
        with store.engine.connect() as connection:
            with pytest.raises(DBAPIError, match="append-only"):
                connection.execute(text(statement))
    with store.sessions() as session:
        assert len(audit.entries(session)) == 3


def test_a_restart_marks_open_jobs_interrupted_and_they_rerun(url):
    app = create_app(url)
    store = app.state.store
    with store.sessions() as session:
        problem = add_problem(session, SEED_YAML)
        variant_id = problem.variants[0].id
        # what a server killed mid-job leaves: one job running, one queued, one done
        session.add_all(
            [Job(variant_id=variant_id, status=s, stage=s) for s in ("running", "queued", "done")]
        )
        session.commit()
    app.state.runner.close()
    restarted = create_app(url)
    assert restarted.state.interrupted_at_start == 2
    with restarted.state.store.sessions() as session:
        statuses = session.scalars(select(Job.status).order_by(Job.id)).all()
    assert statuses == ["interrupted", "interrupted", "done"]  # never marked done
    with TestClient(restarted) as client:
        sign_in(client, restarted, "infra", "infra")
        page = client.get("/jobs/1").text
        assert 'id="job-status" class="status-interrupted">interrupted' in page
        rerun = client.post("/jobs/1/rerun", follow_redirects=False)
        job = wait_for_job(client, job_id_of(rerun))
        assert job["status"] == "done" and job["rerun_of"] == 1
        plan = client.get(f"/api/plans/{job['plan_id']}").json()
        assert plan["total_cost_usd"] == pytest.approx(SEED_TOTAL_USD, abs=0.01)
        # cancelling a finished job changes nothing
        client.post(f"/jobs/{job['id']}/cancel")
        assert client.get(f"/api/jobs/{job['id']}").json()["status"] == "done"


def test_a_cancelled_job_stores_nothing(tmp_path):
    app = create_app(f"sqlite:///{tmp_path / 'w.db'}")
    runner = app.state.runner
    with app.state.store.sessions() as session:
        variant_id = add_problem(session, SEED_YAML).variants[0].id
    job = runner.submit(variant_id)
    assert runner.cancel(job.id) is True
    runner._pool.shutdown(wait=True)  # let the solve thread finish whatever it started
    with app.state.store.sessions() as session:
        assert session.get(Job, job.id).status == "cancelled"
        assert session.scalar(select(func.count()).select_from(PlanRecord)) == 0
    runner.close()


def test_migration_0006_chains_the_audit_rows_already_there(url):
    """Rows written before 0006 get their chain digest from the migration: the same
    digests on SQLite and PostgreSQL (the canonical content is the database's text of
    the row, not its storage), and the chain goes on from the last one."""
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import text

    from solver.web import audit
    from solver.web.store.db import MIGRATIONS, _engine

    engine = _engine(url)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0005")
        for i in range(3):
            connection.execute(
                text(
                    "INSERT INTO audit_log (at, user_name, action, entity, before_sha256, "
                    "after_sha256, detail) VALUES (:at, 'ian', 'problem.add', 'problem 1', "
                    "'', 'abc', :detail)"
                ),
                {"at": f"2026-11-2{i} 10:00:00.12345{i}", "detail": f"é {i}"},
            )
    store = open_store(url)
    with store.sessions() as session:
        rows = audit.entries(session)
        # by hand for row 1: sha256("" + "\n" + '[1,"2026-11-20T10:00:00.123450","ian",
        # "problem.add","problem 1","","abc","é 0"]'), computed by hashlib in the test
        import hashlib

        line = '[1,"2026-11-20T10:00:00.123450","ian","problem.add","problem 1","","abc","é 0"]'
        assert rows[0].chain_sha256 == hashlib.sha256(("\n" + line).encode()).hexdigest()
        assert audit.first_broken(rows).broken_id is None
        audit.record(session, "ivo", "user.add", "user ivo")
        session.commit()
        check = audit.first_broken(audit.entries(session))
    assert (check.rows, check.last_id, check.broken_id) == (4, 4, None)
