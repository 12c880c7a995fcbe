"""Hostile: traces and options ``procure replay`` may be handed. Each is one message naming
the file (or option), the line and field, and the fix, exit 2, nothing written; a trace
that is valid but strange (a prompt no cache holds, everything at once, CRLF line ends, a
byte-order mark) is replayed, not refused, and counted as it is."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from solver.analyses.replay import parse_trace
from solver.analyses.replay.engine import Request, simulate
from solver.cli import app
from solver.errors import ProcureError

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
HEADER = "arrival_s,prompt_tokens,output_tokens\n"


@pytest.fixture
def plan(tmp_path, seed_solved, monkeypatch) -> Path:
    monkeypatch.chdir(ROOT)
    code, output = seed_solved
    assert code == 0, output
    path = tmp_path / "plan.json"
    path.write_text(output)
    return path


@pytest.mark.parametrize(
    "content, where",
    [
        (b"\xff\xfe\x00\x01garbage", "trace.csv"),  # not UTF-8 text
        (HEADER.encode() + b"1e400,10,10\n", "line 2, arrival_s"),  # overflows to inf
        (HEADER.encode() + b"0,1e12,10\n", "line 2, prompt_tokens"),  # past any context
        (HEADER.encode() + b"0,-5,10\n", "line 2, prompt_tokens"),
        (HEADER.encode() + b"0,10,10,extra\n", "line 2"),
        (b"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-13-45 99:00:00,1,1\n", "TIMESTAMP"),
    ],
)
def test_a_hostile_trace_is_refused_with_its_place(tmp_path, plan, content, where):
    trace = tmp_path / "trace.csv"
    trace.write_bytes(content)
    out = tmp_path / "out.txt"
    result = runner.invoke(app, ["replay", str(plan), "--trace", str(trace), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "error:" in result.output and where in result.output and "fix:" in result.output
    assert "Traceback" not in result.output and not out.exists()


@pytest.mark.parametrize("kind", ["missing", "folder"])
def test_a_trace_that_is_not_a_file_is_refused(tmp_path, plan, kind):
    trace = tmp_path / "trace"
    if kind == "folder":
        trace.mkdir()
    result = runner.invoke(app, ["replay", str(plan), "--trace", str(trace)])
    assert result.exit_code == 2 and str(trace) in result.output, result.output


def test_the_output_may_not_replace_the_trace(tmp_path, plan):
    trace = tmp_path / "trace.csv"
    trace.write_text(HEADER + "0,100,10\n")
    args = ["replay", str(plan), "--trace", str(trace), "--out", str(trace), "--force"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert trace.read_text() == HEADER + "0,100,10\n"


def test_crlf_and_a_byte_order_mark_are_read():
    rows = parse_trace("\ufeff" + HEADER.replace("\n", "\r\n") + " 1.5 , 10 , 3\r\n", "t.csv")
    assert [(r.arrival_s, r.prompt_tokens, r.output_tokens) for r in rows] == [(0.0, 10, 3)]


def test_a_prompt_no_cache_holds_is_counted_never_served(tmp_path, plan):
    # a 10-million-token prompt fits no A100's cache: the request is never served, counts
    # as late on both limits (late 100% of 1), and the others are replayed as usual
    trace = tmp_path / "trace.csv"
    trace.write_text(HEADER + "0,10000000,10\n")
    args = ["replay", str(plan), "--trace", str(trace), "--format", "json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 6, result.output
    rows = json.loads(result.output)["rows"]
    blocks = [r for r in rows if r["deployment"] == ""]  # a block's row, over its deployments
    assert blocks and all(r["unserved"] == 1 and r["ttft"]["p99_s"] is None for r in blocks)


def test_every_request_at_once_queues_rather_than_breaks():
    # 1,000 requests at t = 0 on one replica of 8 slots: served 8 at a time, all of them
    from solver.analyses.replay.engine import ReplicaSpec, StepCost

    cost = StepCost(0.01, 0.0, 0.0, 0.001, 0.0, 0.0, 0.0, True)
    spec = ReplicaSpec(cost, 10**6, 8, 2048, 1e-5, 0.0)
    done, _, _ = simulate([spec], [Request(0.0, 100, 5) for _ in range(1000)])
    assert all(math.isfinite(r.done_s) for r in done)
    assert max(r.first_token_s for r in done) > 100 * min(r.first_token_s for r in done)


@pytest.mark.parametrize(
    "args, field",
    [
        (["--duration-s", "nan"], "--duration-s"),
        (["--duration-s", "1e9"], "--duration-s"),
        (["--percentile", "0.2"], "--percentile"),
        (["--percentile", "1"], "--percentile"),
        (["--max-batched-tokens", "0"], "--max-batched-tokens"),
        (["--seed", "-1"], "--seed"),
        (["--format", "xml"], "--format"),
    ],
)
def test_hostile_options_are_refused(plan, args, field):
    result = runner.invoke(app, ["replay", str(plan), *args])
    assert result.exit_code == 2 and field in result.output, result.output
    assert "Traceback" not in result.output


def test_the_parser_refuses_an_empty_trace_with_its_file():
    with pytest.raises(ProcureError) as err:
        parse_trace(HEADER, "empty.csv")
    assert err.value.file == "empty.csv" and "no request" in err.value.message
