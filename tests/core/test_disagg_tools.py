"""The tools around a plan on a disaggregated plan (issue 52 Build 3): the text and HTML
report name the architecture, its pools and KV link and what it saves; ``procure
sensitivity`` and ``procure resolve`` run on it; the workspace shows its plan page.

The problem is tests/core/test_disagg.py's hand case (8,000-token prompts, 100-token
answers, 80 req/s, 8 x MI325X at $16/h = $11,680 a unit-month): 5 prefill + 3 decode units,
$93,440, against 9 aggregated units, $105,120, with that module's hand-workable
vLLM-on-ROCm figures (``hand_workable_rocm``).
"""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from conftest import COMPUTE_ONLY, write_catalog
from core.test_disagg import (  # noqa: F401 (hand_workable_rocm: its pin, autouse here)
    M8,
    MI325X,
    UNIT_USD,
    hand_workable_rocm,
    rag,
)
from solver.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """(problem YAML, catalog folder, plan JSON with architecture_costs) on disk."""
    root = tmp_path_factory.mktemp("disagg_tools")
    catalog = write_catalog(root / "catalog", [M8], accelerators=[MI325X], servers=[],
                            sites=None)  # fmt: skip
    data = {"name": "tiny", "horizon_months": 1, "modes": ["on_demand"], "workloads": [rag()]}
    data.update(COMPUTE_ONLY)
    problem = root / "rag.yaml"
    problem.write_text(yaml.safe_dump(data))
    out = runner.invoke(app, ["solve", str(problem), "--catalog", str(catalog),
                              "--compare-architectures", "--format", "json"])  # fmt: skip
    assert out.exit_code == 0, out.output
    plan = root / "plan.json"
    plan.write_text(out.stdout)
    return problem, catalog, plan


def test_the_text_report_names_the_pools_the_kv_link_and_the_saving(files):
    problem, catalog, _ = files
    out = runner.invoke(app, ["solve", str(problem), "--catalog", str(catalog),
                              "--compare-architectures"])  # fmt: skip
    assert out.exit_code == 0, out.output
    text = " ".join(out.stdout.split())
    # aggregated alone needs 9 units ($105,120); this plan 5 + 3 ($93,440)
    assert (
        "architectures: aggregated $105,120; disaggregated best $93,440; this plan $93,440"
    ) in text
    assert (
        "rag runs disaggregated: decode pool 3 x acme/us-east/m8 (on_demand), TP8, batch 173;"
    ) in text
    assert "prefill pool 5 x acme/us-east/m8 (on_demand), TP1" in text
    # KV 819,200 B x 8,000 = 6.55 GB over the unit's NIC share: 0.187 s (test_disagg.py)
    assert "KV cache 6.55 GB a request over" in text and "187 ms of its TTFT" in text


def test_architecture_sentences_say_what_it_saves(files):
    from solver.outputs.architecture_text import architecture_sentences
    from solver.plan import Plan

    plan = Plan.model_validate(json.loads(files[2].read_text()))
    *_, saving = architecture_sentences(plan)
    # $105,120 - $93,440 = $11,680, one unit: 11.1% of the aggregated plan
    assert saving.startswith("Against aggregated serving ($105,120) this plan ($93,440) "
                             "saves $11,680 (11.1%)")  # fmt: skip
    assert plan.total_cost_usd == pytest.approx(8 * UNIT_USD)


def test_sensitivity_runs_on_a_disaggregated_plan(files):
    problem, catalog, _ = files
    out = runner.invoke(app, ["sensitivity", str(problem), "--catalog", str(catalog),
                              "--format", "json", "--break-even", "2"])  # fmt: skip
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report  # shadow prices of the disaggregated plan's rows, no traceback


def test_resolve_keeps_the_split_at_new_prices(files, tmp_path):
    # the unit at $20/h instead of $16: every plan's cost scales alike, so the cheapest
    # stays 5 prefill + 3 decode units: 8 x $20 x 730 = $116,800
    problem, catalog, plan = files
    new = write_catalog(tmp_path / "new", [dict(M8, on_demand_usd_per_hour=20.0)],
                        accelerators=[MI325X], servers=[], sites=None)  # fmt: skip
    out = runner.invoke(app, ["resolve", str(problem), "--baseline", str(plan), "--prices",
                              str(new), "--catalog", str(catalog), "--format", "json"])  # fmt: skip
    assert out.exit_code == 0, out.output
    body = json.loads(out.stdout)
    new_plan = body.get("plan", body)
    roles = {}
    for i in new_plan["line_items"]:
        if i.get("item") == "rent":
            roles[i.get("pool_role")] = roles.get(i.get("pool_role"), 0) + i["units"]
    assert roles == {"prefill": 5, "decode": 3}
    assert new_plan["total_cost_usd"] == pytest.approx(8 * 20.0 * 730)


def test_the_workspace_shows_a_disaggregated_plan(files, tmp_path):
    from fastapi.testclient import TestClient

    from solver.plan import Plan
    from solver.web.app import create_app
    from solver.web.store import Variant
    from solver.web.workspace import store_plan, variant_inputs
    from tests.web.conftest import sign_in

    problem, catalog, plan_file = files
    plan = Plan.model_validate(json.loads(plan_file.read_text()))
    web = create_app(f"sqlite:///{tmp_path / 'ws.db'}", catalog_dir=str(catalog))
    with TestClient(web) as client:
        sign_in(client, web, "ian", "infra")
        assert client.post("/problems", data={"yaml_text": problem.read_text()}).status_code == 200
        with web.state.store.sessions() as session:
            base = session.get(Variant, 1)
            inputs = variant_inputs(base, catalog_dir=str(catalog))
            stored = store_plan(session, base.id, inputs, plan)
        page = client.get(f"/plans/{stored.id}")
        assert page.status_code == 200
        assert "$93,440" in page.text
        replay = client.get(f"/plans/{stored.id}/replay")
        assert replay.status_code == 200 and "prefill pool" in replay.text


def test_procure_replay_gives_a_line_per_pool(files):
    # the plan file carries its problem; at 80 req/s the plan meets its mean limits
    # (tests/replay/test_replay_disagg.py works the pools by hand): exit 0
    _, catalog, plan = files
    out = runner.invoke(app, ["replay", str(plan), "--catalog", str(catalog),
                              "--duration-s", "30"])  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "prefill pool" in out.stdout and "decode pool" in out.stdout
