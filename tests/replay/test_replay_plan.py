"""``procure replay`` on the seed's plan, on a deliberately cut fleet, and with bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from solver.analyses.replay import replay_plan
from solver.cli import app
from solver.cli.replay import EXIT_REPLAY_SLO_MISSED
from solver.inputs.catalog import load_catalog

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


@pytest.fixture(scope="module")
def seed(seed_plan):
    from conftest import seed_problem

    return seed_plan, seed_problem(), load_catalog(None)


def test_the_seed_replays_every_block_with_one_unit_lost(seed):
    plan, problem, catalog = seed
    result = replay_plan(plan, problem, catalog, duration_s=60)
    blocks = {(r.period, r.block) for r in result.rows}
    # 3 serving periods x 3 load blocks (peak, shoulder, base), each with all units and
    # with one unit lost
    assert len(blocks) == 9
    assert {r.case for r in result.rows} == {"all units", "N+1 lost"}
    for r in result.rows:
        if r.units == 0:  # a deployment whose only unit is the one lost serves nothing
            assert (r.case, r.requests) == ("N+1 lost", 0)
            continue
        assert r.requests > 0 and r.unserved == 0
        assert 0 < r.ttft.p50_s <= r.ttft.p90_s <= r.ttft.p99_s < 10
        assert 0 < r.tpot.p50_s <= r.tpot.p99_s
    # one unit lost never makes a block faster at p99 (the same arrivals, fewer replicas);
    # a block with several deployments has a row for the block (deployment "") and one each
    by = {(r.period, r.block, r.case): r for r in result.rows if r.deployment == ""}
    for period, block in blocks:
        whole, lost = by[(period, block, "all units")], by[(period, block, "N+1 lost")]
        assert lost.units == whole.units - 1
        assert lost.tpot.p99_s >= whole.tpot.p99_s


def test_a_cut_fleet_misses_its_slos(seed):
    # every serving line at a third of its units (the peak's 14 A100s to 4): the block's
    # demand is then about 2x what the units serve at their planned batch, the queue
    # grows without bound and TTFT at p99 runs far past the 1 s limit
    plan, problem, catalog = seed
    cut = [
        li.model_copy(update={"units": max(1.0, li.units // 3)}) if li.tp_degree else li
        for li in plan.line_items
    ]
    result = replay_plan(
        plan.model_copy(update={"line_items": cut}),
        problem,
        catalog,
        duration_s=60,
        lose_unit=False,
    )
    assert not result.meets_slos
    peak = [r for r in result.rows if r.block == "peak"]
    assert all(r.ttft.p99_s > 1.0 and not r.meets_slo for r in peak)


def _seed_file(tmp_path, seed_solved) -> Path:
    code, output = seed_solved
    assert code == 0, output
    path = tmp_path / "seed-plan.json"
    path.write_text(output)
    return path


FLAT_OUT = """\
name: flat-out
horizon_months: 1
start: 2027-01
modes: [on_demand]
residency: [us, eu]
workloads:
  - kind: inference
    name: chat
    model: dense-13b
    demand: {requests_per_s: 5.7}
    prompt_tokens: 1000
    output_tokens: 400
    ttft_slo: 1 s
    tpot_slo: 50 ms
    max_utilisation: 1
    min_tier: neocloud
"""


def _solved(folder: Path, problem_text: str) -> Path:
    """The plan file ``procure solve`` writes for ``problem_text``."""
    problem = folder / "problem.yaml"
    problem.write_text(problem_text)
    plan = folder / "plan.json"
    solved = runner.invoke(app, ["solve", str(problem), "--format", "json", "--out", str(plan)])
    assert solved.exit_code == 0, solved.output
    return plan


def test_a_fleet_planned_flat_out_misses_and_exits_6(tmp_path, monkeypatch):
    # a deliberately undersized plan that still verifies: capacity for the demand at 100%
    # utilisation (max_utilisation 1), no N+1. Poisson arrivals at 98% of the planned
    # capacity of its one unit queue prompts for tens of seconds (the plan's batch steps
    # at the 50 ms limit, so any burst above it waits): TTFT p99 far past 1 s, exit 6.
    # 5.7 requests/s (was 5): since the sizing runs prefill as chunks (issue 47) one unit
    # carries 5 requests/s at 86% of its capacity, which meets (TTFT p99 0.23 s)
    monkeypatch.chdir(ROOT)
    plan = _solved(tmp_path, FLAT_OUT)
    result = runner.invoke(app, ["replay", str(plan), "--duration-s", "120", "--format", "json"])
    assert result.exit_code == EXIT_REPLAY_SLO_MISSED, result.output
    data = json.loads(result.output)
    assert data["exit_code"] == 6 and data["meets_slos"] is False
    (row,) = data["rows"]
    assert row["ttft"]["p99_s"] > 5.0 and row["case"] == "all units"


def test_the_seed_judged_at_p99_reports_its_verdict(tmp_path, seed_solved, monkeypatch):
    # the exit code follows the verdict of the blocks, whatever the seed's sizing
    monkeypatch.chdir(ROOT)
    plan = _seed_file(tmp_path, seed_solved)
    args = ["replay", str(plan), "--duration-s", "120", "--format", "json"]
    result = runner.invoke(app, [*args, "--percentile", "0.99"])
    data = json.loads(result.output)
    blocks = [r for r in data["rows"] if r["deployment"] == ""]
    assert data["meets_slos"] == all(r["meets_slo"] for r in blocks)
    assert result.exit_code == (0 if data["meets_slos"] else EXIT_REPLAY_SLO_MISSED)
    assert {r["slo_percentile"] for r in blocks} == {0.99}


def test_the_seed_sized_at_p99_meets_every_limit_at_p99_with_one_unit_lost(
    tmp_path, seed_solved, monkeypatch
):
    # issue 47's Must show: the seed, sized at p99 by default (and, with the price guard
    # on, served by Lambda GH200s: 2 / 6 / 6 units at base / shoulder / peak), replayed
    # with its synthetic trace (600 s per block, seed 0) meets TTFT 1 s and TPOT 50 ms at
    # p99 in all 9 blocks, with every unit and with one lost. Measured 2026-12-02 at
    # h-oppoint: worst block the peak with one GH200 lost, TTFT p99 177 ms and TPOT p99
    # 40 ms; a cut fleet misses (test_a_cut_fleet_misses_its_slos)
    monkeypatch.chdir(ROOT)
    plan = _seed_file(tmp_path, seed_solved)
    result = runner.invoke(app, ["replay", str(plan), "--format", "json"])
    data = json.loads(result.output)
    blocks = [r for r in data["rows"] if r["deployment"] == ""]
    assert {r["plan_percentile"] for r in blocks} == {0.99}
    assert len(blocks) == 18 and {r["case"] for r in blocks} == {"all units", "N+1 lost"}
    late = [(r["period"], r["block"], r["case"]) for r in blocks if not r["meets_slo"]]
    assert late == [] and data["meets_slos"] is True and result.exit_code == 0
    assert max(r["tpot"]["p99_s"] for r in blocks) <= 0.050
    assert max(r["ttft"]["p99_s"] for r in blocks) <= 1.0


GENEROUS = """\
name: generous
horizon_months: 1
start: 2027-01
modes: [on_demand]
residency: [us, eu]
workloads:
  - kind: inference
    name: chat
    model: dense-13b
    demand: {requests_per_s: 2}
    prompt_tokens: 1000
    output_tokens: 400
    ttft_slo: 1 s
    tpot_slo: 50 ms
    max_utilisation: 0.25
    redundancy: n_plus_1
    min_tier: neocloud
"""


def test_the_command_exits_0_when_every_limit_holds(tmp_path, monkeypatch):
    # planned at 25% utilisation, flat day: the fleet's mean running batch is a quarter of
    # the batch whose step is 50 ms, so even its p99 batch (with one unit lost) steps well
    # under 50 ms, and prompts rarely wait: every limit holds at p99, exit 0
    monkeypatch.chdir(ROOT)
    plan = _solved(tmp_path, GENEROUS)
    result = runner.invoke(app, ["replay", str(plan), "--duration-s", "120"])
    assert result.exit_code == 0, result.output
    assert "every block meets its limits, with one unit lost too" in result.output


@pytest.mark.parametrize(
    "trace_text, words",
    [
        ("when,in,out\n1,2,3\n", "line 1: unknown trace header"),
        ("arrival_s,prompt_tokens,output_tokens\n0,100,ten\n", "line 2, output_tokens"),
    ],
)
def test_a_bad_trace_is_one_message_and_exit_2(
    tmp_path, seed_solved, monkeypatch, trace_text, words
):
    monkeypatch.chdir(ROOT)
    plan = _seed_file(tmp_path, seed_solved)
    trace = tmp_path / "trace.csv"
    trace.write_text(trace_text)
    result = runner.invoke(app, ["replay", str(plan), "--trace", str(trace)])
    assert result.exit_code == 2
    assert f"{trace}: {words}" in result.output and "fix:" in result.output
    assert "Traceback" not in result.output


def test_a_trace_replays_at_each_blocks_rate(tmp_path, seed_solved, monkeypatch):
    monkeypatch.chdir(ROOT)
    plan = _seed_file(tmp_path, seed_solved)
    trace = tmp_path / "trace.csv"
    rows = "\n".join(f"{0.05 * k:.2f},1000,400" for k in range(400))
    trace.write_text("arrival_s,prompt_tokens,output_tokens\n" + rows + "\n")
    result = runner.invoke(app, ["replay", str(plan), "--trace", str(trace), "--format", "json"])
    data = json.loads(result.output)
    assert result.exit_code == (0 if data["meets_slos"] else EXIT_REPLAY_SLO_MISSED)
    assert data["source"] == f"trace {trace}"
    # the whole trace in every block (the block's row; its deployments' rows share it)
    assert {r["requests"] for r in data["rows"] if r["deployment"] == ""} == {400}


@pytest.mark.parametrize(
    "args, field",
    [
        (["--duration-s", "0"], "--duration-s"),
        (["--percentile", "1.5"], "--percentile"),
        (["--trace-rate", "fast"], "--trace-rate"),
    ],
)
def test_bad_options_are_refused(tmp_path, seed_solved, monkeypatch, args, field):
    monkeypatch.chdir(ROOT)
    plan = _seed_file(tmp_path, seed_solved)
    result = runner.invoke(app, ["replay", str(plan), *args])
    assert result.exit_code == 2 and field in result.output, result.output


def test_the_report_section_gives_every_block_with_its_verdict(seed):
    # procure report's replay section (solver/outputs/replay_html.py) on the seed: one row
    # per block and case (3 periods x 3 blocks x 2 cases = 18), each marked meets or misses
    # as the replay judged it, and the verdict sentence counting the misses
    from solver.outputs.replay_html import replay_section_html

    plan, problem, catalog = seed
    result = replay_plan(plan, problem, catalog, duration_s=60)
    html = replay_section_html(result)
    blocks = [r for r in result.rows if not r.deployment]
    assert len(blocks) == 18
    assert html.count('<tr class="meets">') == sum(r.meets_slo for r in blocks)
    assert html.count('<tr class="misses">') == sum(not r.meets_slo for r in blocks)
    missed = sum(not r.meets_slo for r in blocks)
    assert ("Every block meets its limits, with one unit lost too" in html) == (missed == 0)
    assert replay_section_html(None, "nothing to replay").endswith(
        '<p class="note">nothing to replay</p></section>'
    )
