"""Issue 51, Builds 6 and 7 through the HTTP API: one's own password, an admin's reset
and disabling of an account, the buttons a role may use (and only those), the styled 403
page naming the role needed, the approval status on the home, problem and plan pages,
and the audit trail's solves, analyses, downloads and sign-ins. The plan is the seed's
golden plan stored directly (as in tests/web/test_signoff.py), so no test solves."""

from __future__ import annotations

import csv
import io

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from solver.web.store import User
from tests.web.conftest import PASSWORD, add_account, post_login, sign_in
from tests.web.test_signoff import seed_workspace


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    """The seed (problem 1) and its golden plan (plan 1); one signed-in client per role."""
    yield from seed_workspace(tmp_path_factory)


#: a new password of 10 characters (the rule: 8 or more)
NEW = "a new one!"


def _audit(clients) -> list[dict]:
    text = clients["admin"].get("/admin/audit.csv").text
    return list(csv.DictReader(io.StringIO(text)))


def _user_id(app, name: str) -> int:
    with app.state.store.sessions() as session:
        return session.scalar(select(User.id).where(User.name == name))


def test_a_viewer_sees_no_button_it_may_not_use_and_a_styled_403_names_the_role(ws):
    _, clients = ws
    viewer, infra = clients["viewer"], clients["infra"]
    # infra sees Solve, Add variant, Save YAML, Add problem, the analysis form
    for client, shown in ((infra, True), (viewer, False)):
        problem, home = client.get("/problems/1").text, client.get("/").text
        plan = client.get("/plans/1").text
        assert ('class="solve"' in problem) is shown
        assert ('id="add-variant"' in problem) is shown
        assert ('id="save-yaml"' in problem) is shown
        assert ('id="add-problem"' in home) is shown
        assert ('id="sensitivity-form"' in plan) is shown
        assert ('id="watch-form"' in plan) is shown
    # the viewer's forged POST: 403, a page in the site's style that says which role
    refused = viewer.post("/variants/1/solve")
    assert refused.status_code == 403
    assert refused.headers["content-type"].startswith("text/html")
    assert '<link rel="stylesheet" href="/static/workspace.css">' in refused.text
    assert 'id="needed-role">infra, finance or admin<' in refused.text
    assert "the viewer role may not POST /variants/1/solve" in refused.text
    # an admin page read by infra: only admin
    page = infra.get("/admin/users")
    assert page.status_code == 403 and 'id="needed-role">admin<' in page.text
    # the API keeps its JSON error
    assert viewer.post("/api/plans/1/approval").status_code in (403, 405)


def test_the_approval_status_is_on_the_home_problem_and_plan_pages(ws):
    _, clients = ws
    infra = clients["infra"]
    for path in ("/", "/problems/1", "/plans/1"):
        assert 'class="review-draft"' in infra.get(path).text, path
    assert infra.post("/plans/1/submit", follow_redirects=False).status_code == 303
    for path in ("/", "/problems/1", "/plans/1"):
        # the plan page is cached per reader and status: the new status is shown
        assert 'class="review-submitted"' in infra.get(path).text, path
    assert clients["finance"].post("/plans/1/reject", data={"comment": "no"}).status_code == 200
    assert 'class="review-rejected"' in clients["viewer"].get("/").text


def test_own_password_change_ends_other_sessions_and_is_audited(ws):
    app, clients = ws
    add_account(app, "pia", "viewer")
    first, second = TestClient(app), TestClient(app)
    sign_in(first, app, "pia", "viewer")
    sign_in(second, app, "pia", "viewer")
    wrong = first.post(
        "/account/password",
        data={"current_password": "nope", "new_password": NEW, "repeat_password": NEW},
    )
    assert wrong.status_code == 400 and "the current password is wrong" in wrong.text
    differ = first.post(
        "/account/password",
        data={"current_password": PASSWORD, "new_password": "a new one!", "repeat_password": "x"},
    )
    assert differ.status_code == 400 and "differ" in differ.text
    short = first.post(
        "/account/password",
        data={"current_password": PASSWORD, "new_password": "short", "repeat_password": "short"},
    )
    assert short.status_code == 400 and "the password has 5 characters" in short.text
    done = first.post(
        "/account/password",
        data={"current_password": PASSWORD, "new_password": NEW, "repeat_password": NEW},
    )
    assert done.status_code == 200 and 'id="password-changed"' in done.text
    assert first.get("/api/me").json()["name"] == "pia"  # this browser stays signed in
    assert second.get("/api/me").status_code == 401  # the other session ended
    assert post_login(TestClient(app), "pia").status_code == 401  # the old password: no
    assert post_login(TestClient(app), "pia", "a new one!").status_code == 303
    rows = [(r["user"], r["action"]) for r in _audit(clients) if r["entity"] == "user pia"]
    assert ("pia", "user.password") in rows


def test_an_admin_resets_and_disables_an_account(ws):
    app, clients = ws
    admin = clients["admin"]
    add_account(app, "rex", "infra")
    rex = TestClient(app)
    sign_in(rex, app, "rex", "infra")
    rid = _user_id(app, "rex")
    reset = admin.post(f"/admin/users/{rid}/password", data={"password": "reset by ada"})
    assert reset.status_code == 200
    assert rex.get("/api/me").status_code == 401  # the reset ends his sessions
    assert post_login(TestClient(app), "rex", "reset by ada").status_code == 303
    off = admin.post(f"/admin/users/{rid}/active", data={"active": "no"})
    assert off.status_code == 200 and "disabled" in off.text
    assert post_login(TestClient(app), "rex", "reset by ada").status_code == 401
    on = admin.post(f"/admin/users/{rid}/active", data={"active": "yes"})
    assert on.status_code == 200
    assert post_login(TestClient(app), "rex", "reset by ada").status_code == 303
    # not oneself, and never the only active admin
    me = admin.post(f"/admin/users/{_user_id(app, 'ada')}/active", data={"active": "no"})
    assert me.status_code == 400 and "you cannot disable your own account" in me.text
    # infra may not reset anyone
    forged = clients["infra"].post(f"/admin/users/{rid}/password", data={"password": "x" * 9})
    assert forged.status_code == 403
    rows = [
        (r["user"], r["action"])
        for r in _audit(clients)
        if r["entity"] == "user rex" and r["action"] != "user.signin"
    ]
    assert rows[-3:] == [("ada", "user.reset"), ("ada", "user.disable"), ("ada", "user.enable")]


def test_the_audit_trail_lists_solves_analyses_downloads_and_sign_ins(ws):
    app, clients = ws
    infra = clients["infra"]
    # the base variant's inputs are plan 1's: the solve answers at once with the stored
    # plan (a job done at once), and is recorded all the same
    solved = infra.post("/variants/1/solve", follow_redirects=False)
    assert solved.status_code == 303 and solved.headers["location"] == "/plans/1"
    for name in ("orders.csv", "orders.xlsx", "focus.csv"):
        assert infra.get(f"/plans/1/{name}").status_code == 200
    analysed = infra.post("/plans/1/sensitivity", data={"break_even": "-1"}, follow_redirects=False)
    assert analysed.status_code == 303
    rows = _audit(clients)
    actions = [(r["user"], r["action"], r["entity"]) for r in rows]
    solve = [r for r in rows if r["action"] == "job.solve"][-1]
    assert (solve["user"], solve["detail"]) == ("ian", "variant 1; plan 1")
    for kind in ("orders_csv", "orders_xlsx", "focus_csv"):
        assert ("ian", f"export.{kind}", "plan 1") in actions
    assert any(u == "ian" and a == "job.sensitivity" for u, a, _ in actions)
    # every sign-in of the fixture (sign_in goes through POST /login)
    for name in ("ian", "vera", "fay", "ada"):
        assert (name, "user.signin", f"user {name}") in actions
    # the jobs page says who asked for each job
    jobs = infra.get("/jobs").text
    assert "<td>ian</td>" in jobs
