"""Faults of the workspace answered as messages (FastAPI's TestClient, in process): a
database that is read-only, full or locked -> 503 saying what to do and never its URL;
ids outside 1..2**63-1 -> 404 on every route with an id; every catalog table and filter
the page offers -> 200; the web refuses what ``procure solve`` refuses (unknown
accelerator, provider, model, region) with the CLI's own message, and a variant name
longer than its column, storing nothing; two solves storing the same plan at once ->
one plan."""

from __future__ import annotations

import html
import re

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import event, func, select, text
from typer.testing import CliRunner

from solver.cli import app as cli_app
from solver.web.app import create_app
from solver.web.store import AuditEntry, PlanRecord, ProblemRecord, Variant
from solver.web.views import CATALOG_TABLES
from tests.web.conftest import SEED_YAML, add_account, fresh_url, sign_in


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    """The seed stored (problem 1, variant 1 ``base``), nothing solved; an infra client."""
    url = fresh_url("sqlite", tmp_path_factory)
    app = create_app(url)
    with TestClient(app) as client:
        sign_in(client, app, "infra", "infra")
        added = client.post("/problems", data={"yaml_text": SEED_YAML}, follow_redirects=False)
        assert added.status_code == 303, added.text
        yield client, app


def _count(app, model) -> int:
    with app.state.store.sessions() as session:
        return session.scalar(select(func.count()).select_from(model))


def _page_error(page: str) -> str:
    found = re.search(r'<pre class="error[^"]*"[^>]*>(.*?)</pre>', page, re.S)
    assert found, page[:2000]
    return html.unescape(found.group(1))


# --------------------------------------------------------------------------- bad input


def _cli_message(tmp_path, monkeypatch, yaml_text: str) -> str:
    """What ``procure solve problem.yaml`` says about the same text (run where the file
    is, so that it names it ``problem.yaml`` as the web's editor is named)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "problem.yaml").write_text(yaml_text)
    result = CliRunner().invoke(cli_app, ["solve", "problem.yaml"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: ")
    return result.output.removeprefix("error: ").strip()


UNKNOWN = {
    # each adds one name the shipped catalog does not know
    "accelerator": ("modes:", "accelerators: [H999]\nmodes:", "unknown accelerator"),
    "provider": ("modes:", "providers: [nocloud]\nmodes:", "unknown provider 'nocloud'"),
    "region": ("modes:", "regions: [nowhere-1]\nmodes:", "unknown region 'nowhere-1'"),
    "model": ("model: dense-13b", "model: not-a-model-13b", "not-a-model-13b"),
}


@pytest.mark.parametrize("kind", list(UNKNOWN))
def test_a_problem_with_an_unknown_name_is_refused_as_the_cli_refuses_it(
    ws, tmp_path, monkeypatch, kind
):
    client, app = ws
    old, new, words = UNKNOWN[kind]
    bad = SEED_YAML.replace(old, new, 1)
    assert bad != SEED_YAML
    problems, audit = _count(app, ProblemRecord), _count(app, AuditEntry)
    refused = client.post("/problems", data={"yaml_text": bad}, follow_redirects=False)
    assert refused.status_code == 400
    message = _page_error(refused.text)
    assert words in message
    # the CLI's own message for the same text, word for word
    assert message == _cli_message(tmp_path, monkeypatch, bad)
    assert (_count(app, ProblemRecord), _count(app, AuditEntry)) == (problems, audit)
    # and an edit of the stored problem to the same text is refused, the text unchanged
    edited = client.post("/problems/1/yaml", data={"yaml_text": bad}, follow_redirects=False)
    assert edited.status_code == 400 and words in _page_error(edited.text)
    with app.state.store.sessions() as session:
        assert session.get(ProblemRecord, 1).yaml_text == SEED_YAML


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("providers", "nocloud", "unknown provider 'nocloud'"),
        ("regions", "nowhere-1", "unknown region 'nowhere-1'"),
        ("price_multipliers", "accelerator=H999 1.1", "H999"),
        ("name", "v" * 5000, "the variant's name has 5,000 characters; at most 200 are kept"),
    ],
)
def test_a_variant_the_cli_would_refuse_is_not_stored(ws, field, value, words):
    client, app = ws
    variants, audit = _count(app, Variant), _count(app, AuditEntry)
    form = {"name": "bad-variant", field: value}
    refused = client.post("/problems/1/variants", data=form, follow_redirects=False)
    assert refused.status_code == 400
    assert words in _page_error(refused.text)
    assert (_count(app, Variant), _count(app, AuditEntry)) == (variants, audit)


def test_a_problem_name_longer_than_its_column_is_refused(ws):
    client, app = ws
    long_name = SEED_YAML.replace("name: seed-2m-13b", "name: " + "p" * 5000, 1)
    problems = _count(app, ProblemRecord)
    refused = client.post("/problems", data={"yaml_text": long_name}, follow_redirects=False)
    assert refused.status_code == 400
    assert "the problem's name has 5,000 characters; at most 200" in _page_error(refused.text)
    assert _count(app, ProblemRecord) == problems


def test_a_variant_of_200_characters_is_kept_whole(ws):
    client, app = ws
    name = "w" * 200  # exactly the column's length: accepted
    made = client.post("/problems/1/variants", data={"name": name}, follow_redirects=False)
    assert made.status_code == 303
    with app.state.store.sessions() as session:
        assert session.scalar(select(Variant).where(Variant.name == name)) is not None


# --------------------------------------------------------------------------- ids


HUGE_IDS = [str(2**64), str(2**63), "-1", "0", "abc", "9" * 400]


def _id_routes(app) -> list[tuple[str, str, str]]:
    """(method, path template, the id parameter) of every route with an id in its path,
    and the query ids of /compare and the analysis pages."""
    out = []
    for route in app.routes:
        names = re.findall(r"{(\w+)}", getattr(route, "path", ""))
        for method in sorted(getattr(route, "methods", None) or []):
            if names and method != "HEAD":
                out.append((method, route.path, names[0]))
    return out


def test_every_route_with_an_id_answers_404_to_an_id_that_cannot_be(ws):
    client, app = ws
    add_account(app, "admin", "admin")
    routes = _id_routes(app)
    assert len(routes) >= 20  # plans, jobs, problems, variants, users, analyses...
    admin = TestClient(app)
    sign_in(admin, app, "admin", "admin")
    for method, template, name in routes:
        for raw in HUGE_IDS:
            path = template.replace("{" + name + "}", raw)
            answers = [
                c.request(method, path, follow_redirects=False).status_code for c in (client, admin)
            ]
            # a role may be refused first (403); no answer is ever a 500, and one is 404
            assert 500 not in answers and 422 not in answers, (method, path, answers)
            assert 404 in answers, (method, path, answers)
    for query in ("/compare?a={}&b=1", "/compare?a=1&b={}", "/plans/1/frontier?analysis={}"):
        for raw in HUGE_IDS:
            assert client.get(query.format(raw)).status_code == 404, query.format(raw)


def test_a_404_for_a_huge_id_names_it(ws):
    client, _ = ws
    answer = client.get(f"/api/plans/{2**64}")
    assert answer.status_code == 404
    assert answer.json() == {
        "error": "no plan '18446744073709551616': an id is a whole number from 1"
    }


# --------------------------------------------------------------------------- catalog


def test_every_catalog_table_the_page_offers_answers(ws):
    client, _ = ws
    page = client.get("/catalog").text
    offered = re.findall(r'href="/catalog\?table=(\w+)"', page)
    assert offered == list(CATALOG_TABLES)
    from solver.inputs.catalog import load_catalog

    catalog = load_catalog()
    for table in offered:
        answer = client.get(f"/catalog?table={table}")
        assert answer.status_code == 200, (table, answer.text[:500])
        rows = len(getattr(catalog, table))  # every row of the table, counted once
        assert f'id="catalog-count">{rows} rows' in answer.text, table
    # the offerings' filter selects: every value offered answers
    modes = re.findall(r'<select name="mode">(.*?)</select>', page, re.S)[0]
    sorts = re.findall(r'<select name="sort">(.*?)</select>', page, re.S)[0]
    for mode in re.findall(r'value="(\w*)"', modes):
        assert client.get(f"/catalog?table=offerings&mode={mode}").status_code == 200, mode
    for sort in re.findall(r'value="(\w*)"', sorts):
        assert client.get(f"/catalog?table=offerings&sort={sort}").status_code == 200, sort


def test_the_regions_table_shows_provider_and_region_once(ws):
    client, _ = ws
    head = client.get("/catalog?table=regions").text.split("</thead>")[0]
    columns = re.findall(r"<th>(\w+)</th>", head)
    assert columns[:2] == ["provider", "region"]
    assert columns.count("provider") == 1 and columns.count("region") == 1


# --------------------------------------------------------------------------- database


@pytest.fixture
def fresh(tmp_path_factory):
    url = fresh_url("sqlite", tmp_path_factory)
    app = create_app(url)
    with TestClient(app) as client:
        sign_in(client, app, "infra", "infra")
        yield client, app, url


def _on_every_connection(app, *pragmas: str) -> None:
    """Run ``pragmas`` on every connection the app opens from now on (the pool emptied)."""
    engine = app.state.store.engine

    @event.listens_for(engine, "connect")
    def _set(dbapi_connection, _record) -> None:
        cursor = dbapi_connection.cursor()
        for pragma in pragmas:
            cursor.execute(pragma)
        cursor.close()

    engine.dispose()


def _assert_503(answer, url: str, words: str) -> None:
    assert answer.status_code == 503, answer.text[:500]
    assert answer.headers["retry-after"] == "5"
    body = answer.text
    assert words in html.unescape(body)
    assert "fix:" in html.unescape(body) or '"fix"' in body
    # never the database URL, its path or the SQL
    path = url.removeprefix("sqlite:///")
    assert path not in body and "sqlite:" not in body and "INSERT" not in body


def test_a_read_only_database_answers_503_with_what_to_do(fresh):
    client, app, url = fresh
    # SQLite's query_only: every write fails as on a read-only file (SQLITE_READONLY)
    _on_every_connection(app, "PRAGMA query_only = ON")
    added = client.post("/problems", data={"yaml_text": SEED_YAML}, follow_redirects=False)
    _assert_503(added, url, "the workspace database is read-only")
    # reads still answer, and the API answers in JSON
    assert client.get("/health").status_code == 200
    assert client.get("/api/plans").status_code == 200
    cancel = client.post("/jobs/1/cancel", headers={"accept": "application/json"})
    _assert_503(cancel, url, "read-only")


def test_a_full_database_answers_503_with_what_to_do(fresh):
    client, app, url = fresh
    with app.state.store.engine.connect() as connection:
        pages = connection.execute(text("PRAGMA page_count")).scalar()
    # no page beyond those it has: the next insert that needs one fails (SQLITE_FULL)
    _on_every_connection(app, f"PRAGMA max_page_count = {pages}")
    # the seed with a 400 kB comment: about 100 pages of 4 kB more than the file has
    big = SEED_YAML + "# " + "x" * 400_000 + "\n"
    added = client.post("/problems", data={"yaml_text": big}, follow_redirects=False)
    _assert_503(added, url, "disk of the workspace database is full")


def test_a_locked_database_answers_503_not_a_hang(fresh):
    client, app, url = fresh
    _on_every_connection(app, "PRAGMA busy_timeout = 200")
    import sqlite3

    holder = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the write lock
    try:
        added = client.post("/problems", data={"yaml_text": SEED_YAML}, follow_redirects=False)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    _assert_503(added, url, "the workspace database is busy")
    assert _count(app, ProblemRecord) == 0


# --------------------------------------------------------------------------- races


def test_two_solves_storing_the_same_plan_at_once_leave_one(ws, monkeypatch):
    """The second insert of a digest (a concurrent solve won between its look-up and its
    insert) returns the stored plan instead of failing on the unique constraint."""
    import json

    from conftest import ROOT
    from solver.plan import Plan
    from solver.web import workspace

    _, app = ws
    golden = json.loads((ROOT / "tests" / "golden" / "seed-2m-13b.json").read_text())
    plan = Plan.model_validate(golden["output"])
    store = app.state.store
    with store.sessions() as session:
        inputs = workspace.variant_inputs(session.get(Variant, 1))
        first = workspace.store_plan(session, 1, inputs, plan)
    looked = []
    real = workspace.stored_plan

    def missed_once(session, digest):
        looked.append(digest)
        return None if len(looked) == 1 else real(session, digest)

    monkeypatch.setattr(workspace, "stored_plan", missed_once)
    with store.sessions() as session:
        second = workspace.store_plan(session, 1, inputs, plan)
    assert second.id == first.id and len(looked) == 2
    with store.sessions() as session:
        same = select(func.count()).where(PlanRecord.inputs_digest == inputs.digest)
        assert session.scalar(same) == 1


def test_a_read_only_postgresql_database_answers_503(tmp_path_factory):
    url = fresh_url("postgresql", tmp_path_factory)  # skipped without a server
    app = create_app(url)
    with TestClient(app) as client:
        sign_in(client, app, "infra", "infra")
        engine = app.state.store.engine
        name = engine.url.database
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(
                text(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')
            )
        engine.dispose()  # new connections start read-only (SQLSTATE 25006 on a write)
        added = client.post("/problems", data={"yaml_text": SEED_YAML}, follow_redirects=False)
        assert added.status_code == 503, added.text[:500]
        body = html.unescape(added.text)
        assert "the workspace database is read-only" in body and "fix:" in body
        host = engine.url.host or ""
        assert "postgresql" not in body and f"{host}:{engine.url.port}" not in body
        assert name not in body and "INSERT" not in body
