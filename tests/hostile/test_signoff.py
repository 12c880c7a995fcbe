"""Hostile cases of the sign-off: "sign-off that can be bypassed" and "an approval that
means something other than what was approved".

Each test states its oracle: the role matrix of the README ("Accounts, approvals and the
audit trail": infra and finance submit and approve, an admin approves nothing and does not
submit), separation of duties (nobody decides on their own request; approvals count
distinct people), an approval bound to the exact problem and catalog digests, login CSRF
(OWASP CSRF Prevention Cheat Sheet: check Origin, pre-session token), back-off instead of
lock-out (OWASP Authentication Cheat Sheet), an audit trail no statement can empty and
whose chained digests show an edited row, ``Cache-Control: no-store`` on every page and
download, and one pending request out of concurrent submits. The plan is the seed's
golden plan (tests/golden/seed-2m-13b.json) stored directly: no test solves.
"""

from __future__ import annotations

import csv
import io
import json
import re
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, text
from typer.testing import CliRunner

from conftest import ROOT
from solver.plan import Plan
from solver.web.app import create_app
from solver.web.signin import SignInThrottle
from solver.web.store import PlanReview, ProblemRecord, Variant
from solver.web.store.accounts import AuditEntry
from solver.web.workspace import add_problem, store_plan, variant_inputs
from tests.web.conftest import (
    PASSWORD,
    POSTGRES_URL,
    SEED_YAML,
    add_account,
    fresh_url,
    post_login,
    sign_in,
)

GOLDEN = Plan.model_validate(
    json.loads((ROOT / "tests" / "golden" / "seed-2m-13b.json").read_text())["output"]
)
#: the seed serves 50,000 daily users (problems/seed-2m-13b.yaml): the edit makes it 60,000
EDITED_YAML = SEED_YAML.replace("users: 50000", "users: 60000")


def _workspace(url: str, approvals: dict[str, int] | None = None, **options):
    """An app on ``url`` with the seed as problem 1 and its golden plan as plan 1."""
    app = create_app(url, approvals=approvals, **options)
    with app.state.store.sessions() as session:
        problem = add_problem(session, SEED_YAML)
        base = session.get(Variant, problem.variants[0].id)
        plan = store_plan(session, base.id, variant_inputs(base), GOLDEN)
        assert (problem.id, plan.id) == (1, 1)
    return app


def _client(app, name: str, role: str, address: str = "testclient") -> TestClient:
    client = TestClient(app, client=(address, 50000), raise_server_exceptions=False)
    sign_in(client, app, name, role)
    return client


def _status(app, plan_id: int = 1) -> str:
    with app.state.store.sessions() as session:
        review = session.get(PlanReview, plan_id)
        return review.status if review is not None else "draft"


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'workspace.db'}"


def test_one_finance_person_cannot_submit_and_approve_alone(sqlite_url):
    # --approvals finance=1: before, the finance person who submitted approved alone
    app = _workspace(sqlite_url, {"finance": 1})
    try:
        fay = _client(app, "fay", "finance")
        assert fay.post("/plans/1/submit", follow_redirects=False).status_code == 303
        for decision, data in (("approve", {}), ("reject", {"comment": "mine"})):
            own = fay.post(f"/plans/1/{decision}", data=data)
            assert own.status_code == 403, decision
            assert "fay submitted plan 1: someone else must" in own.text
        assert _status(app) == "submitted"
        # a change of role does not make her someone else
        ada = _client(app, "ada", "admin")
        with app.state.store.sessions() as session:
            from solver.web.store import User

            fay_id = session.scalar(select(User.id).where(User.name == "fay"))
        assert ada.post(f"/admin/users/{fay_id}/role", data={"role": "infra"}).status_code == 200
        fay_again = _client(app, "fay", "infra")
        assert fay_again.post("/plans/1/approve").status_code == 403
        # another finance person approves: the one approval required, from someone else
        fred = _client(app, "fred", "finance")
        assert fred.post("/plans/1/approve").status_code == 200
        assert _status(app) == "approved"
    finally:
        app.state.runner.close()


def test_approvals_count_distinct_people_never_the_submitter(sqlite_url):
    app = _workspace(sqlite_url, {"finance": 2, "infra": 0})
    try:
        ian = _client(app, "ian", "infra")
        assert ian.post("/plans/1/submit", follow_redirects=False).status_code == 303
        fay, fred = _client(app, "fay", "finance"), _client(app, "fred", "finance")
        assert fay.post("/plans/1/approve").status_code == 200
        # the same person twice is one approval: finance=2 still needs one more
        twice = fay.post("/plans/1/approve")
        assert twice.status_code == 409 and "already decided" in twice.text
        state = ian.get("/api/plans/1/approval").json()
        assert (state["status"], state["missing"]) == ("submitted", {"finance": 1})
        assert fred.post("/plans/1/approve").status_code == 200
        assert _status(app) == "approved"
    finally:
        app.state.runner.close()


def test_an_admin_cannot_submit_a_plan(sqlite_url):
    # README: infra and finance submit; an admin manages accounts and approves nothing
    app = _workspace(sqlite_url)
    try:
        ada = _client(app, "ada", "admin")
        got = ada.post("/plans/1/submit", follow_redirects=False)
        assert got.status_code == 403 and "the admin role may not POST /plans/1/submit" in got.text
        assert _status(app) == "draft"
        assert 'id="submit-form"' not in ada.get("/plans/1/approval").text
        assert 'id="submit-form"' in _client(app, "ian", "infra").get("/plans/1/approval").text
    finally:
        app.state.runner.close()


def test_an_edit_while_a_plan_awaits_approval_is_refused(sqlite_url):
    app = _workspace(sqlite_url)
    try:
        ian = _client(app, "ian", "infra")
        assert ian.post("/plans/1/submit", follow_redirects=False).status_code == 303
        edited = ian.post("/problems/1/yaml", data={"yaml_text": EDITED_YAML})
        assert edited.status_code == 409
        assert "plan 1 of it awaits approval" in edited.text
        with app.state.store.sessions() as session:
            assert session.get(ProblemRecord, 1).yaml_text == SEED_YAML  # nothing stored
        # approved by two others: the lock holds the exact digests the plan was solved for
        assert _client(app, "fay", "finance").post("/plans/1/approve").status_code == 200
        assert _client(app, "ivo", "infra").post("/plans/1/approve").status_code == 200
        state = ian.get("/api/plans/1/approval").json()
        with app.state.store.sessions() as session:
            now = variant_inputs(session.get(Variant, 1))
        assert state["status"] == "approved"
        assert (state["problem_sha256"], state["catalog_sha256"]) == (
            now.problem_sha256,
            now.catalog_sha256,
        )
        assert state["problem_sha256"] == GOLDEN.inputs.problem_sha256  # the plan's own
        locked = ian.post("/problems/1/yaml", data={"yaml_text": EDITED_YAML})
        assert locked.status_code == 409 and "is locked" in locked.text
    finally:
        app.state.runner.close()


def test_an_approval_cannot_lock_a_problem_changed_under_it(sqlite_url):
    """A change that reaches the problem while the request is pending however it came
    (here written straight to the table, as a race past the route's check would) voids
    the request at the next approval: the approved plan never locks a problem it does
    not solve."""
    app = _workspace(sqlite_url)
    try:
        ian = _client(app, "ian", "infra")
        assert ian.post("/plans/1/submit", follow_redirects=False).status_code == 303
        assert _client(app, "fay", "finance").post("/plans/1/approve").status_code == 200
        with app.state.store.sessions() as session:
            session.get(ProblemRecord, 1).yaml_text = EDITED_YAML
            session.commit()
        last = _client(app, "ivo", "infra").post("/plans/1/approve")
        assert last.status_code == 409 and "request is void" in last.text
        assert _status(app) == "void"
        state = ian.get("/api/plans/1/approval").json()
        assert state["locked"] is False
        audit = list(csv.DictReader(io.StringIO(_client(app, "ada", "admin").get(
            "/admin/audit.csv").text)))  # fmt: skip
        assert [r["action"] for r in audit if r["entity"] == "plan 1"][-1] == "plan.void"
        # the plan (of the 50,000-user problem) is stale: it cannot be submitted again
        again = ian.post("/plans/1/submit")
        assert again.status_code == 409 and "solve its variant again" in again.text
    finally:
        app.state.runner.close()


def test_a_plan_solved_before_an_edit_cannot_be_submitted(sqlite_url):
    app = _workspace(sqlite_url)
    try:
        ian = _client(app, "ian", "infra")
        assert ian.post("/problems/1/yaml", data={"yaml_text": EDITED_YAML}).status_code == 200
        got = ian.post("/plans/1/submit")
        assert got.status_code == 409 and "inputs that changed since (problem" in got.text
        assert _status(app) == "draft"
    finally:
        app.state.runner.close()


def test_a_sign_in_from_another_site_is_refused(sqlite_url):
    app = _workspace(sqlite_url)
    try:
        add_account(app, "fay", "finance")
        for headers in (
            {"Origin": "https://evil.example"},
            {"Origin": "null"},
            {"Referer": "https://evil.example/login.html"},
            {"Origin": "http://testserver.evil.example"},
        ):
            client = TestClient(app)
            got = post_login(client, "fay", headers=headers)
            assert got.status_code == 403, headers
            assert "a sign-in from another site" in got.text
            assert "procure_session" not in client.cookies
        # the same origin (TestClient's host is testserver) signs in
        for headers in ({"Origin": "http://testserver"}, {"Referer": "http://testserver/login"}):
            got = post_login(TestClient(app), "fay", headers=headers)
            assert got.status_code == 303, headers
        # the form carries its pre-session token; without it (or with another's) refused
        form = TestClient(app).get("/login")
        assert re.search(r'name="csrf_token" value="[0-9a-f]{64}"', form.text)
        bare = TestClient(app).post("/login", data={"name": "fay", "password": PASSWORD})
        assert bare.status_code == 403 and "token is missing or expired" in bare.text
        victim = TestClient(app)
        victim.get("/login")  # the victim's own pre-session cookie
        forged = victim.post(
            "/login",
            data={"name": "fay", "password": PASSWORD, "csrf_token": form.headers["x-csrf-token"]},
        )
        assert forged.status_code == 403
    finally:
        app.state.runner.close()


def _frozen(app) -> list[float]:
    now = [1000.0]
    app.state.rate_limit = SignInThrottle(clock=lambda: now[0])
    return now


def test_twelve_x_forwarded_for_values_from_one_address_are_one_client(sqlite_url):
    app = _workspace(sqlite_url)
    try:
        add_account(app, "fay", "finance")
        _frozen(app)
        client = TestClient(app, client=("203.0.113.5", 40000))
        codes = []
        for i in range(12):
            forwarded = {"X-Forwarded-For": f"198.51.100.{i + 1}"}
            codes.append(post_login(client, "fay", f"guess {i}", headers=forwarded).status_code)
        # no trusted proxy configured: one client; 5 free failures, then it backs off
        assert codes == [401] * 5 + [429] * 7
        throttled = post_login(client, "fay", f"guess {i}", headers=forwarded)
        assert throttled.headers["retry-after"] == "1"  # 2**0 s after the 5th failure
    finally:
        app.state.runner.close()


def test_a_stranger_cannot_lock_the_owner_out(sqlite_url):
    app = _workspace(sqlite_url, trusted_proxies="127.0.0.1")
    try:
        add_account(app, "ada", "admin")
        now = _frozen(app)
        stranger = TestClient(app, client=("203.0.113.5", 40000))
        codes = [post_login(stranger, "ada", f"guess {i}").status_code for i in range(10)]
        assert codes == [401] * 5 + [429] * 5  # the stranger's own client backs off
        owner = TestClient(app, client=("198.51.100.7", 40000))
        assert post_login(owner, "ada").status_code == 303
        # a distributed stranger behind the trusted proxy: 40 addresses, one guess each
        proxy = TestClient(app, client=("127.0.0.1", 40000))
        for i in range(40):
            now[0] += 0.01
            hop = {"X-Forwarded-For": f"192.0.2.{i + 1}"}
            assert post_login(proxy, "ada", "wrong", headers=hop).status_code == 401
        # the account has 45 failures: an address that failed on it backs off (2**35 s,
        # capped at 15 min) ...
        retry = post_login(proxy, "ada", PASSWORD, headers={"X-Forwarded-For": "192.0.2.1"})
        assert retry.status_code == 429 and retry.headers["retry-after"] == "900"
        # ... while the owner from a client with no failure there signs in at once
        fresh = TestClient(app, client=("198.51.100.99", 40000))
        assert post_login(fresh, "ada").status_code == 303
        hop = {"X-Forwarded-For": "192.0.2.200"}
        assert post_login(proxy, "ada", headers=hop).status_code == 303
    finally:
        app.state.runner.close()


def test_no_store_on_pages_and_downloads(sqlite_url):
    app = _workspace(sqlite_url)
    try:
        ian = _client(app, "ian", "infra")
        ada = _client(app, "ada", "admin")
        for client, path in (
            (ian, "/plans/1"),
            (ian, "/"),
            (ian, "/plans/1/orders.csv"),
            (ian, "/plans/1/orders.xlsx"),
            (ian, "/api/plans/1"),
            (ada, "/admin/audit.csv"),
            (ian, "/plans/99"),  # an error page
            (TestClient(app), "/login"),
        ):
            got = client.get(path)
            assert got.headers["cache-control"] == "no-store", (path, got.status_code)
        # the vendored static files may be cached (nothing of the user's in them)
        assert "no-store" not in TestClient(app).get("/static/chart.umd.min.js").headers.get(
            "cache-control", ""
        )
    finally:
        app.state.runner.close()


def _concurrent_submits(url: str) -> None:
    app = _workspace(url)
    try:
        ian = _client(app, "ian", "infra")
        start = threading.Barrier(10)

        def submit(_: int) -> int:
            start.wait()
            return ian.post("/plans/1/submit", follow_redirects=False).status_code

        with ThreadPoolExecutor(10) as pool:
            codes = sorted(pool.map(submit, range(10)))
        # one submission wins (303 to its page), the nine others are told (409); no 500
        assert codes == [303] + [409] * 9, codes
        with app.state.store.sessions() as session:
            review = session.get(PlanReview, 1)
            submits = session.scalars(
                select(AuditEntry).where(AuditEntry.action == "plan.submit")
            ).all()
            assert (review.status, review.round, len(submits)) == ("submitted", 1, 1)
            from solver.web.audit import entries, first_broken

            assert first_broken(entries(session)).broken_id is None
    finally:
        app.state.runner.close()


def test_ten_concurrent_submits_leave_one_request_on_sqlite(sqlite_url):
    _concurrent_submits(sqlite_url)


def test_ten_concurrent_submits_leave_one_request_on_postgres(tmp_path_factory):
    _concurrent_submits(fresh_url("postgresql", tmp_path_factory))


def _audit_check(url: str):
    from solver.cli import app as cli

    return CliRunner().invoke(cli, ["users", "audit-check", "--db", url])


def test_the_chain_check_names_an_edited_row(sqlite_url):
    app = _workspace(sqlite_url)
    try:
        for name, role in (("ian", "infra"), ("fay", "finance"), ("ivo", "viewer")):
            add_account(app, name, role)  # audit rows 1-3 (user.add)
    finally:
        app.state.runner.close()
    intact = _audit_check(sqlite_url)
    assert intact.exit_code == 0 and "audit trail intact: 3 row(s), last row 3" in intact.output
    # someone with the database file drops the trigger and edits row 2
    store = app.state.store
    with store.engine.begin() as connection:
        connection.execute(text("DROP TRIGGER audit_log_no_update"))
        connection.execute(text("UPDATE audit_log SET user_name = 'mallory' WHERE id = 2"))
    broken = _audit_check(sqlite_url)
    assert broken.exit_code == 3
    assert "audit trail broken at row 2: its content was changed" in broken.output


def test_truncate_of_the_audit_trail_is_refused_on_postgres(tmp_path_factory):
    from sqlalchemy.exc import DBAPIError

    url = fresh_url("postgresql", tmp_path_factory)
    app = _workspace(url)
    try:
        add_account(app, "ian", "infra")
        add_account(app, "fay", "finance")
        with app.state.store.engine.connect() as connection:
            with pytest.raises(DBAPIError, match="append-only"):
                connection.execute(text("TRUNCATE audit_log"))
        # an owner who switches the triggers off and removes row 1 is still found out
        with app.state.store.engine.begin() as connection:
            connection.execute(text("ALTER TABLE audit_log DISABLE TRIGGER USER"))
            connection.execute(text("DELETE FROM audit_log WHERE id = 1"))
    finally:
        app.state.runner.close()
    broken = _audit_check(url)
    assert broken.exit_code == 3 and "broken at row 2" in broken.output


def test_no_database_url_in_an_error_page(tmp_path_factory):
    if not POSTGRES_URL:
        pytest.skip("PROCURE_TEST_POSTGRES_URL is not set")
    url = fresh_url("postgresql", tmp_path_factory)
    app = _workspace(url)
    try:
        ian = _client(app, "ian", "infra")
        # no price snapshot stored: the watch is refused with a message naming the store
        got = ian.post("/plans/1/watch")
        assert got.status_code == 400 and "no price snapshot is stored in" in got.text
        database = url.rsplit("/", 1)[1]
        assert f"postgresql database {database}" in got.text
        for secret in ("postgresql+psycopg://", "127.0.0.1", "postgres@", ":46891"):
            assert secret not in got.text, secret
    finally:
        app.state.runner.close()


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://mallory:s3cret@db.internal:abc/procure",  # a port that is no number
        "postgresql+nodriver://mallory:s3cret@db.internal/procure",  # an unknown driver
        "sqlite://mallory:s3cret@db.internal/procure",  # a host in a SQLite URL
        "postgresql://mallory:s3cret@127.0.0.1:1/procure",  # nothing listens on port 1
    ],
)
def test_no_connection_string_in_a_start_up_message(url):
    # each is refused as bad input naming --db (exit 2), and the message quotes neither
    # the URL nor its user, password or host
    got = _audit_check(url)
    assert got.exit_code == 2, got.output
    assert "error: --db:" in got.output
    for secret in ("s3cret", "mallory", "db.internal", "://"):
        assert secret not in got.output.split("fix:")[0], (secret, got.output)
