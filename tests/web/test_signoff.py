"""Sign-off (issue 31) through the HTTP API: the global guard on every route, roles,
CSRF tokens, sessions ended by sign-out, the upload bound, the sign-in rate limit, the
security headers, approvals with their lock and final orders, and the append-only audit
trail. The plan approved here is the seed's golden plan (tests/golden/seed-2m-13b.json)
stored directly, so no test solves."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from conftest import ROOT
from solver.plan import Plan
from solver.web.app import create_app
from solver.web.guard import MAX_BODY_BYTES, SESSION_COOKIE
from solver.web.signin import SignInThrottle
from solver.web.store import ProblemRecord, Variant
from solver.web.workspace import store_plan, variant_inputs
from tests.web.conftest import PASSWORD, SEED_YAML, add_account, post_login, sign_in

GOLDEN = Plan.model_validate(
    json.loads((ROOT / "tests" / "golden" / "seed-2m-13b.json").read_text())["output"]
)
STATE_CHANGING = {"POST", "PUT", "PATCH", "DELETE"}


def seed_workspace(tmp_path_factory):
    """The seed added by infra (problem 1) and its golden plan stored (plan 1); one
    signed-in client per role (a generator for a module's fixture)."""
    app = create_app(f"sqlite:///{tmp_path_factory.mktemp('ws') / 'workspace.db'}")
    with TestClient(app) as infra:
        sign_in(infra, app, "ian", "infra")
        assert infra.post("/problems", data={"yaml_text": SEED_YAML}).status_code == 200
        with app.state.store.sessions() as session:
            base = session.get(Variant, 1)
            plan = store_plan(session, base.id, variant_inputs(base), GOLDEN)
            assert plan.id == 1
        clients = {"infra": infra}
        for name, role in (("vera", "viewer"), ("fay", "finance"), ("ada", "admin")):
            clients[role] = TestClient(app)
            sign_in(clients[role], app, name, role)
        yield app, clients


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    """:func:`seed_workspace` for this module."""
    yield from seed_workspace(tmp_path_factory)


def _paths(app):
    """(method, path) of every route, path parameters as 1."""
    for route in app.routes:
        if not isinstance(route, APIRoute):
            continue  # the /static mount: vendored files, open by design
        path = re.sub(r"\{[^}]+\}", "1", route.path)
        for method in sorted(route.methods - {"HEAD"}):
            yield method, path


def test_every_route_refuses_an_anonymous_request(ws):
    app, _ = ws
    anonymous = TestClient(app)
    checked = 0
    for method, path in _paths(app):
        if path in ("/login", "/health"):
            continue  # the two open routes (issue 31)
        got = anonymous.request(method, path, follow_redirects=False)
        if method == "GET" and not path.startswith("/api/"):
            # a page: sent to sign in, and back to the page after
            assert got.status_code == 303, (method, path, got.status_code)
            assert got.headers["location"].startswith("/login?next="), (method, path)
        else:
            assert got.status_code == 401, (method, path, got.status_code)
        checked += 1
    # every route but the two open ones (at least the 30 of issues 30 and 31)
    assert checked >= 30
    assert anonymous.get("/health").status_code == 200
    assert anonymous.get("/login").status_code == 200


def test_a_viewer_gets_403_on_every_state_changing_route(ws):
    app, clients = ws
    viewer = clients["viewer"]
    changing = [(m, p) for m, p in _paths(app) if m in STATE_CHANGING]
    # every account signs out and changes its own password (issue 51: tests/web/test_accounts.py)
    own = ("/login", "/logout", "/account/password")
    changing = [(m, p) for m, p in changing if p not in own]
    assert len(changing) >= 12  # problems, variants, solve, jobs, plans, approvals, admin
    for method, path in changing:
        # with a valid CSRF token (the client's header): refused for the role alone
        got = viewer.request(method, path, data={"name": "x"}, follow_redirects=False)
        assert got.status_code == 403, (method, path, got.status_code)
    # and the admin pages are not even readable
    assert viewer.get("/admin/users").status_code == 403
    assert viewer.get("/admin/audit.csv").status_code == 403
    # while the viewer reads the plan
    assert viewer.get("/plans/1").status_code == 200


def test_a_request_without_its_csrf_token_is_refused(ws):
    app, clients = ws
    infra = clients["infra"]
    token = infra.headers.pop("X-CSRF-Token")
    try:
        with app.state.store.sessions() as session:
            before = session.scalar(select(func.count()).select_from(ProblemRecord))
        got = infra.post("/problems", data={"yaml_text": SEED_YAML}, follow_redirects=False)
        assert got.status_code == 403 and "CSRF token" in got.text
        wrong = infra.post("/problems", data={"yaml_text": SEED_YAML, "csrf_token": "0" * 64})
        assert wrong.status_code == 403
        with app.state.store.sessions() as session:
            assert session.scalar(select(func.count()).select_from(ProblemRecord)) == before
        # the token the guard writes into the page's forms is accepted
        page = infra.get("/problems/1").text
        field = re.search(r'name="csrf_token" value="([0-9a-f]{64})"', page)
        assert field and field.group(1) == token
    finally:
        infra.headers["X-CSRF-Token"] = token


def test_a_session_replayed_after_sign_out_is_refused(ws):
    app, _ = ws
    client = TestClient(app)
    sign_in(client, app, "fay", "finance")
    cookie = client.cookies[SESSION_COOKIE]
    out = client.post("/logout", follow_redirects=False)
    assert out.status_code == 303 and out.headers["location"] == "/login"
    replay = TestClient(app, cookies={SESSION_COOKIE: cookie})
    assert replay.get("/api/me").status_code == 401
    page = replay.get("/plans/1", follow_redirects=False)
    assert page.status_code == 303 and page.headers["location"].startswith("/login")


def test_a_10_mb_yaml_upload_is_refused_before_parsing(ws):
    app, clients = ws
    infra = clients["infra"]
    big = SEED_YAML + "# " + "x" * (10 * 1024 * 1024) + "\n"  # 10 MiB of comment
    with app.state.store.sessions() as session:
        before = session.scalar(select(func.count()).select_from(ProblemRecord))
    got = infra.post("/problems", data={"yaml_text": big})
    assert got.status_code == 413
    assert f"the limit is {MAX_BODY_BYTES:,} bytes" in got.text
    with app.state.store.sessions() as session:
        assert session.scalar(select(func.count()).select_from(ProblemRecord)) == before


def test_50_wrong_passwords_back_off_and_never_lock_out(ws):
    app, _ = ws
    now = [0.0]
    saved = app.state.rate_limit
    app.state.rate_limit = SignInThrottle(clock=lambda: now[0])
    try:
        client = TestClient(app)
        codes = []
        for i in range(50):
            now[0] = i * 0.01  # 50 attempts within half a second
            got = post_login(client, "fay", f"guess {i}")
            codes.append(got.status_code)
        # the first 5 are checked and wrong (401); the 5th failure makes this client wait
        # 1 s (2**0), so the other 45 are not even checked (429)
        assert codes == [401] * 5 + [429] * 45
        right = post_login(client, "fay", PASSWORD)
        assert right.status_code == 429 and "try again in 1 s" in right.text
        assert right.headers["retry-after"] == "1"
        # a second after the 5th failure (at t=0.04 s) this client may try again
        now[0] = 0.04 + 1.0
        assert post_login(client, "fay", PASSWORD).status_code == 303
    finally:
        app.state.rate_limit = saved


def test_cookies_and_security_headers(ws):
    app, _ = ws
    client = TestClient(app)
    add_account(app, "sam", "viewer")
    signed = post_login(client, "sam")
    cookie = signed.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=lax" in cookie
    page = client.get("/plans/1")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self';" in csp and "frame-ancestors 'none'" in csp
    assert page.headers["x-content-type-options"] == "nosniff"
    # no inline script in any page: only vendored files and JSON data blocks
    for tag in re.findall(r"<script\b[^>]*>", page.text):
        assert "src=" in tag or 'type="application/json"' in tag, tag
    templates = (ROOT / "solver" / "web" / "templates").glob("*.j2")
    for path in templates:
        for tag in re.findall(r"<script\b[^>]*>", path.read_text()):
            assert "src=" in tag or 'type="application/json"' in tag, (path.name, tag)


def test_the_secret_key_is_made_once_and_kept_with_the_database(tmp_path):
    url = f"sqlite:///{tmp_path / 'w.db'}"
    first = create_app(url)
    again = create_app(url)
    other = create_app(f"sqlite:///{tmp_path / 'other.db'}")
    for app in (first, again, other):
        app.state.runner.close()
    assert len(first.state.secret_key) == 64  # 256 random bits, hex
    assert again.state.secret_key == first.state.secret_key
    assert other.state.secret_key != first.state.secret_key


def test_the_proxy_header_is_off_by_default_and_signs_in_when_on(ws, tmp_path):
    app, _ = ws
    ignored = TestClient(app).get("/api/me", headers={"X-Forwarded-User": "ada"})
    assert ignored.status_code == 401
    proxied = create_app(f"sqlite:///{tmp_path / 'p.db'}", trusted_user_header="X-Forwarded-User")
    try:
        add_account(proxied, "pat", "finance")
        client = TestClient(proxied, headers={"X-Forwarded-User": "pat"})
        me = client.get("/api/me").json()
        assert (me["name"], me["role"]) == ("pat", "finance")
        unknown = TestClient(proxied, headers={"X-Forwarded-User": "nobody"}).get("/api/me")
        assert unknown.status_code == 401
    finally:
        proxied.state.runner.close()


def _audit(clients) -> list[dict]:
    got = clients["admin"].get("/admin/audit.csv")
    assert got.status_code == 200
    return list(csv.DictReader(io.StringIO(got.text)))


def test_approval_locks_the_plan_and_exports_final_orders(ws):
    app, clients = ws
    infra, finance, viewer = clients["infra"], clients["finance"], clients["viewer"]
    assert infra.get("/plans/1/orders-final.csv").status_code == 409  # a draft: not final
    # FOCUS: the plan's commitments are Proposed until it is approved (the golden seed has
    # none, so its Contract Commitment file is the 13 columns of FOCUS 1.3 and no row)
    from solver.web.approvals import commitment_lifecycle

    with app.state.store.sessions() as session:
        assert commitment_lifecycle(session, 1) == "Proposed"
    contracts = infra.get("/plans/1/focus-contract-commitment.csv")
    assert contracts.status_code == 200
    assert contracts.text.splitlines()[0].startswith("ContractCommitmentId,ContractCommitmentType")
    assert len(contracts.text.splitlines()) == 1
    assert finance.post("/plans/1/approve").status_code == 409  # not submitted yet
    assert infra.post("/plans/1/submit").status_code == 200
    # a rejection needs a comment, then ends the round
    assert finance.post("/plans/1/reject", data={"comment": " "}).status_code == 400
    rejected = finance.post("/plans/1/reject", data={"comment": "use reserved_1y for prod"})
    assert rejected.status_code == 200
    assert infra.get("/api/plans/1/approval").json()["status"] == "rejected"
    assert infra.post("/plans/1/submit").status_code == 200  # round 2
    assert finance.post("/plans/1/approve").status_code == 200
    state = infra.get("/api/plans/1/approval").json()
    # one finance approval of the two required (finance=1, infra=1): infra still missing
    assert (state["status"], state["round"], state["missing"]) == ("submitted", 2, {"infra": 1})
    assert viewer.post("/plans/1/approve").status_code == 403
    # ian submitted: he may not approve his own request (separation of duties)
    own = infra.post("/plans/1/approve")
    assert own.status_code == 403 and "ian submitted plan 1" in own.text
    other_infra = TestClient(app)
    sign_in(other_infra, app, "ivo", "infra")
    assert other_infra.post("/plans/1/approve").status_code == 200
    state = viewer.get("/api/plans/1/approval").json()
    assert (state["status"], state["locked"]) == ("approved", True)
    with app.state.store.sessions() as session:
        assert commitment_lifecycle(session, 1) == "Active"
    # locked: the problem's YAML can no longer change
    edited = infra.post("/problems/1/yaml", data={"yaml_text": SEED_YAML})
    assert edited.status_code == 409 and "is locked" in edited.text
    final = list(csv.DictReader(io.StringIO(infra.get("/plans/1/orders-final.csv").text)))
    assert final and {r["order_status"] for r in final} == {"final"}
    assert {r["approved_by"] for r in final} == {"fay (finance); ivo (infra)"}
    # the audit trail: every step in order, with its user
    steps = [(r["user"], r["action"], r["entity"]) for r in _audit(clients)]
    plan_steps = [s for s in steps if s[2] == "plan 1" and s[1].startswith("plan.")]
    # the downloads of the plan's files are in it too (issue 51: exports and orders)
    exports = [s[1] for s in steps if s[2] == "plan 1" and s[1].startswith("export.")]
    assert exports[-1] == "export.orders_final_csv"
    assert "export.focus_contract_commitment_csv" in exports
    assert plan_steps == [
        ("ian", "plan.submit", "plan 1"),
        ("fay", "plan.reject", "plan 1"),
        ("ian", "plan.submit", "plan 1"),
        ("fay", "plan.approve", "plan 1"),
        ("ivo", "plan.approve", "plan 1"),
    ]
    assert ("ian", "problem.add", "problem 1") in steps
    assert steps.index(("ian", "problem.add", "problem 1")) < steps.index(plan_steps[0])


def test_accounts_and_roles_by_the_admin_are_audited(ws):
    app, clients = ws
    admin = clients["admin"]
    added = admin.post(
        "/admin/users", data={"name": "otto", "role": "viewer", "password": "long enough"}
    )
    assert added.status_code == 200 and ">otto<" in added.text
    short = admin.post("/admin/users", data={"name": "uma", "role": "viewer", "password": "short"})
    assert short.status_code == 400 and "the password has 5 characters" in short.text
    from solver.web.store import User

    with app.state.store.sessions() as session:
        otto = session.scalar(select(User).where(User.name == "otto"))
    assert admin.post(f"/admin/users/{otto.id}/role", data={"role": "finance"}).status_code == 200
    rows = [r for r in _audit(clients) if r["entity"] == "user otto"]
    assert [(r["user"], r["action"], r["detail"]) for r in rows] == [
        ("ada", "user.add", ""),
        ("ada", "role.change", "viewer -> finance"),
    ]
    # before and after digests differ (the role changed), and are of the same account
    assert rows[1]["before_sha256"] == rows[0]["after_sha256"] != rows[1]["after_sha256"]


def test_sign_in_returns_only_to_a_page_of_this_site(ws):
    app, _ = ws
    for target, expected in (("/plans/1", "/plans/1"), ("//evil.example/", "/"),
                             ("https://evil.example/", "/"), ("/\\evil.example", "/")):  # fmt: skip
        client = TestClient(app)
        got = post_login(client, "vera", next=target)
        assert (got.status_code, got.headers["location"]) == (303, expected), target


def test_the_only_admin_cannot_be_demoted(ws):
    app, clients = ws
    from solver.web.store import User

    with app.state.store.sessions() as session:
        ada = session.scalar(select(User).where(User.name == "ada"))
    got = clients["admin"].post(f"/admin/users/{ada.id}/role", data={"role": "viewer"})
    assert got.status_code == 400 and "ada is the only admin" in got.text
    assert clients["admin"].get("/admin/users").status_code == 200  # still an admin


def test_the_audit_csv_shows_a_formula_as_text():
    from datetime import datetime

    from solver.web.audit import audit_csv
    from solver.web.store import AuditEntry

    entry = AuditEntry(id=1, at=datetime(2026, 11, 26, 2, 0), user_name="fay",
                       action="plan.reject", entity="plan 1", before_sha256="",
                       after_sha256="", detail='=HYPERLINK("http://evil.example")')  # fmt: skip
    row = next(csv.DictReader(io.StringIO(audit_csv([entry]))))
    # a rejection comment is a person's text: a spreadsheet must show it, never run it
    assert row["detail"] == "'" + '=HYPERLINK("http://evil.example")'
    assert (row["at_utc"], row["user"]) == ("2026-11-26T02:00:00Z", "fay")
