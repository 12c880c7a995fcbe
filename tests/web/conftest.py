"""The workspace's fixtures: an app on a fresh SQLite file (and on PostgreSQL when
``PROCURE_TEST_POSTGRES_URL`` names a server database, as ``.ci/run`` sets it), with the
seed problem stored and its base variant solved once per module."""

from __future__ import annotations

import os
import time
import uuid

import pytest

from conftest import ROOT

SEED_YAML = (ROOT / "problems" / "seed-2m-13b.yaml").read_text()
#: the seed's optimum (issues 12, 28 and 46; tests/test_wheel.py): $370,028.54 at catalog
#: prices, its serving autoscaled and guarded (the defaults; tests/core/test_fleet.py works
#: it by hand)
SEED_TOTAL_USD = 370_028.54
#: its objective under the default guard, at the top of each price's band (tests/golden)
SEED_GUARDED_USD = 422_763.09
POSTGRES_URL = os.environ.get("PROCURE_TEST_POSTGRES_URL")


def fresh_url(kind: str, tmp_path_factory) -> str:
    """An empty database of ``kind``: a new SQLite file, or a new schema-free PostgreSQL
    database emptied of the workspace's tables."""
    if kind == "sqlite":
        return f"sqlite:///{tmp_path_factory.mktemp('ws') / 'workspace.db'}"
    if not POSTGRES_URL:
        pytest.skip("PROCURE_TEST_POSTGRES_URL is not set (.ci/run starts a PostgreSQL server)")
    from sqlalchemy import create_engine, text

    from solver.web.store.db import normalise_url

    admin = create_engine(normalise_url(POSTGRES_URL), isolation_level="AUTOCOMMIT")
    name = f"procure_test_{uuid.uuid4().hex[:10]}"
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return normalise_url(POSTGRES_URL).rsplit("/", 1)[0] + f"/{name}"


def wait_for_job(client, job_id: int, timeout_s: float = 120.0) -> dict:
    """Poll ``/api/jobs/ID`` (as the job page does) until the job is no longer open."""
    stop = time.monotonic() + timeout_s
    while time.monotonic() < stop:
        job = client.get(f"/api/jobs/{job_id}").json()
        if job["status"] not in ("queued", "running"):
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} still open after {timeout_s} s")


def job_id_of(response) -> int:
    location = response.headers["location"]
    assert location.startswith("/jobs/"), location
    return int(location.rsplit("/", 1)[1])


#: the test accounts' password (the hash is Argon2id, as in use)
PASSWORD = "correct horse battery"


def add_account(app, name: str, role: str, password: str = PASSWORD) -> None:
    """An account straight in the store (as ``procure users add`` makes it)."""
    from sqlalchemy import select

    from solver.web import auth
    from solver.web.store import User

    with app.state.store.sessions() as session:
        if session.scalar(select(User).where(User.name == name)) is None:
            auth.add_user(session, name, role, password, by="test")


def post_login(client, name: str, password: str = PASSWORD, headers=None, **fields):
    """``POST /login`` as the sign-in form does: first ``GET /login`` for its pre-session
    cookie and token (the form's hidden field; the response's ``X-CSRF-Token`` header);
    ``headers`` go with the POST."""
    token = client.get("/login").headers["x-csrf-token"]
    data = {"name": name, "password": password, "csrf_token": token, **fields}
    return client.post("/login", data=data, headers=headers, follow_redirects=False)


def sign_in(client, app, name: str = "admin", role: str = "admin") -> str:
    """Sign ``client`` in as ``name`` (made with ``role`` if new) through ``POST /login``;
    every later request of the client carries the session's CSRF token as a header."""
    add_account(app, name, role)
    client.headers.pop("X-CSRF-Token", None)
    signed = post_login(client, name)
    assert signed.status_code == 303, signed.text
    token = client.get("/api/me").json()["csrf_token"]
    client.headers["X-CSRF-Token"] = token
    return token


#: axe-core, vendored (solver/web/static/vendor/README.md); the browser tests inject it
AXE = ROOT / "solver" / "web" / "static" / "vendor" / "axe.min.js"
#: the impacts the check refuses
BLOCKING = ("serious", "critical")


def axe_violations(driver) -> list[dict]:
    """axe-core run on the page open in ``driver``: its violations (rule id, impact, the
    first few offending nodes' selectors)."""
    if not driver.execute_script("return typeof window.axe !== 'undefined'"):
        driver.execute_script(AXE.read_text())
    result = driver.execute_async_script(
        """const done = arguments[arguments.length - 1];
        axe.run(document, {resultTypes: ['violations']})
          .then(r => done(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
             nodes: v.nodes.slice(0, 4).map(n => n.target.join(' '))}))))
          .catch(e => done([{id: 'axe-error', impact: 'critical', help: String(e), nodes: []}]));"""
    )
    return list(result)


def blocking(driver) -> list[dict]:
    """axe-core's violations of impact serious or critical on the page open in ``driver``."""
    return [v for v in axe_violations(driver) if v["impact"] in BLOCKING]
