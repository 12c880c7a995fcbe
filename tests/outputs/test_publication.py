"""Interrupted and repeated outputs (issue 34), in process: a multi-file output is staged
beside its targets and published as one set (the complete old set or the complete new
set, never a mix); an output path naming one of the command's own inputs is refused; an
export folder keeps one plan's orders (tests/cli/test_signals.py sends real signals).
"""

from __future__ import annotations

import json
import os
import signal

import pytest
from typer.testing import CliRunner

from conftest import CHAT_WORKLOAD, ROOT, TINY_REGIONS, offering, write_catalog
from solver.cli import app
from solver.errors import ProcureError
from solver.outputs import files
from solver.outputs.files import (
    check_not_inputs,
    published,
    reset_published,
    write_files_together,
)

runner = CliRunner()


def _listing(folder):
    return sorted(p.name for p in folder.iterdir())


def _old_set(folder):
    write_files_together(folder, {"a.csv": "old a\n", "b.csv": "old b\n", "c.csv": "old c\n"})
    reset_published()


def test_an_error_between_two_renames_puts_the_old_set_back(tmp_path, monkeypatch):
    # Before: a.csv was already new when b.csv's rename failed: old and new side by side.
    _old_set(tmp_path)
    real = os.replace
    calls = []

    def second_fails(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", second_fails)
    with pytest.raises(OSError):
        write_files_together(tmp_path, {"a.csv": "new a\n", "b.csv": "new b\n"}, ["c.csv"])
    monkeypatch.setattr(os, "replace", real)
    assert [(tmp_path / n).read_text() for n in ("a.csv", "b.csv", "c.csv")] == [
        "old a\n",
        "old b\n",
        "old c\n",
    ]
    assert _listing(tmp_path) == ["a.csv", "b.csv", "c.csv"]  # no temp files, no kept copies
    assert published() == []


def test_a_signal_while_publishing_waits_for_the_whole_new_set(tmp_path, monkeypatch):
    # SIGINT arrives at the first rename: it is held until every file is in place and the
    # removal done, then raised; what was published is recorded first.
    _old_set(tmp_path)
    real = os.replace

    def signalled(src, dst):
        signal.raise_signal(signal.SIGINT)
        return real(src, dst)

    monkeypatch.setattr(os, "replace", signalled)
    with pytest.raises(KeyboardInterrupt):
        write_files_together(tmp_path, {"a.csv": "new a\n", "b.csv": "new b\n"}, ["c.csv"])
    monkeypatch.setattr(os, "replace", real)
    assert _listing(tmp_path) == ["a.csv", "b.csv"]
    assert (tmp_path / "a.csv").read_text() == "new a\n"
    assert (tmp_path / "b.csv").read_text() == "new b\n"
    assert [p.name for p in published()] == ["a.csv", "b.csv", "c.csv"]


def test_a_signal_while_staging_leaves_the_old_set_and_no_temp_file(tmp_path, monkeypatch):
    _old_set(tmp_path)
    real = files._write
    written = []

    def signalled(fd, content):
        written.append(content)
        real(fd, content)
        if len(written) == 1:
            signal.raise_signal(signal.SIGINT)  # the first staged file is whole, the second not

    monkeypatch.setattr(files, "_write", signalled)
    with pytest.raises(KeyboardInterrupt):
        write_files_together(tmp_path, {"a.csv": "new a\n", "b.csv": "new b\n"})
    assert _listing(tmp_path) == ["a.csv", "b.csv", "c.csv"]
    assert (tmp_path / "a.csv").read_text() == "old a\n" and published() == []


class _Alarm(Exception):
    """What the CLI's --time-limit alarm raises (TimeLimitReached), as a test stands it."""


def test_a_signal_while_the_handlers_are_swapped_leaves_none_behind(tmp_path, monkeypatch):
    # Found reading the code while chasing fuzz failures (they were the harness's: a run in
    # the background inherits SIGINT ignored): the --time-limit alarm (SIGALRM, every 0.1 s
    # once the limit is reached) coming between two signal.signal calls as a write began
    # holding signals raised there, SIGINT's handler stayed the write's "hold it" handler,
    # every later Ctrl-C in the process was dropped, and the staged file was left.
    # Expected now: the alarm waits until every handler is set, is held by the write like
    # any signal, and is raised once the file is whole (1 file, no temp), with SIGINT's
    # handler back to what it was.
    def alarm(signum, frame):
        raise _Alarm

    before = signal.signal(signal.SIGALRM, alarm)
    sigint = signal.getsignal(signal.SIGINT)
    real = signal.signal
    calls = []

    def alarm_after_the_first(sig, handler):
        previous = real(sig, handler)
        calls.append(sig)
        if len(calls) == 1:  # between the first and second handler of the hold
            signal.raise_signal(signal.SIGALRM)
        return previous

    monkeypatch.setattr(signal, "signal", alarm_after_the_first)
    try:
        with pytest.raises(_Alarm):
            write_files_together(tmp_path, {"a.csv": "new a\n"})
    finally:
        monkeypatch.setattr(signal, "signal", real)
        real(signal.SIGALRM, before)
    assert signal.getsignal(signal.SIGINT) is sigint
    assert _listing(tmp_path) == ["a.csv"] and (tmp_path / "a.csv").read_text() == "new a\n"


def test_an_output_naming_an_input_is_refused_however_it_is_reached(tmp_path):
    problem = tmp_path / "p.yaml"
    problem.write_text("name: x\n")
    (tmp_path / "link.yaml").symlink_to(problem)
    os.link(problem, tmp_path / "hard.yaml")
    for out in (problem, tmp_path / "link.yaml", tmp_path / "hard.yaml", tmp_path / "." / "p.yaml"):
        with pytest.raises(ProcureError) as err:
            check_not_inputs([("--out", out)], [("problem file", problem)])
        assert err.value.field == "--out" and "problem file this command reads" in err.value.message
    check_not_inputs([("--out", tmp_path / "plan.json")], [("problem file", problem), ("x", None)])


# --------------------------------------------------------------------------- the CLI

PROBLEM = "name: io\nhorizon_months: 1\nmodes: [on_demand]\nworkloads:\n" + CHAT_WORKLOAD


@pytest.fixture
def two_providers(tmp_path):
    """acme at $4/h and beta at $4.2/h; acme's quota of 2 accelerators sends the rest of
    the 40,000 tokens/s to beta (hand-check: the plan uses both)."""
    cat = write_catalog(
        tmp_path / "cat",
        [offering("h1", "h100-sxm", 1, 4.0), offering("b1", "h100-sxm", 1, 4.2, provider="beta")],
        regions=[*TINY_REGIONS, {**TINY_REGIONS[0], "provider": "beta"}],
    )
    prob = tmp_path / "p.yaml"
    prob.write_text(
        PROBLEM.replace("tokens_per_s: 1000", "tokens_per_s: 40000")
        + "quotas: [{provider: acme, max_accelerators: 2}]\n"
    )
    return cat, prob


def _solve(prob, cat, out):
    args = ["solve", str(prob), "--catalog", str(cat), "--format", "json", "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return out


def test_an_output_path_naming_the_problem_is_refused(tmp_path, two_providers):
    # Before: solve --out p.yaml replaced the problem with its own plan.
    cat, prob = two_providers
    text = prob.read_text()
    for command in (["solve"], ["sensitivity", "--break-even", "0"]):
        args = [*command, str(prob), "--catalog", str(cat), "--out", str(prob)]
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert "--out: the output path is the problem file this command reads" in result.output
        assert prob.read_text() == text
    args = ["solve", str(prob), "--catalog", str(cat), "--out", str(cat / "offerings.csv")]
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and "catalog table offerings.csv" in result.output


def test_resolve_and_diff_refuse_to_write_over_their_inputs(tmp_path, two_providers):
    cat, prob = two_providers
    plan = _solve(prob, cat, tmp_path / "plan.json")
    prices = tmp_path / "prices.csv"
    prices.write_text(
        "provider,region,offering,mode,price,date\nbeta,us-east,b1,on_demand,4.1,2026-12-01\n"
    )
    before = {p: p.read_bytes() for p in (prob, plan, prices)}
    base = ["resolve", str(prob), "--baseline", str(plan), "--prices", str(prices)]
    base += ["--catalog", str(cat)]
    for option, path, what in (
        ("--plan-out", plan, "baseline plan"),
        ("--problem-out", prob, "problem file"),
        ("--out", prices, "price file"),
    ):
        result = runner.invoke(app, [*base, option, str(path)])
        assert result.exit_code == 2, result.output
        assert f"{option}: the output path is the {what} this command reads" in result.output
    result = runner.invoke(app, ["diff", str(plan), str(plan), "--out", str(plan)])
    assert result.exit_code == 2 and "the old plan this command reads" in result.output
    assert {p: p.read_bytes() for p in before} == before


def test_calibrate_refuses_to_write_over_its_measurements(tmp_path):
    data = tmp_path / "factors.csv"  # a measurement file named as calibrate's output
    text = (ROOT / "tests" / "data" / "measurements.csv").read_text()
    data.write_text(text)
    result = runner.invoke(app, ["calibrate", str(data), "--out", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert "measurement file this command reads" in result.output and data.read_text() == text


def test_an_export_folder_keeps_one_plans_orders(tmp_path, two_providers):
    # Plan A orders from acme and beta; plan B (beta's price raised above acme's... and
    # acme's quota lifted) from acme only. Exported into one folder, B's export removes A's
    # orders-beta.csv (before: it stayed beside B's orders, read as current).
    cat, prob = two_providers
    plan = _solve(prob, cat, tmp_path / "plan.json")
    out = tmp_path / "orders"
    result = runner.invoke(app, ["export", str(plan), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert _listing(out) == ["orders-acme.csv", "orders-beta.csv", "procure-export.json"]
    # the same plan as a workbook too: both formats of one plan stay
    result = runner.invoke(app, ["export", str(plan), "--out", str(out), "--format", "xlsx"])
    assert result.exit_code == 0, result.output
    assert "removed" not in result.output
    assert _listing(out) == [
        "orders-acme.csv",
        "orders-beta.csv",
        "orders.xlsx",
        "procure-export.json",
    ]
    record = json.loads((out / "procure-export.json").read_text())
    assert record["files"] == {
        "csv": ["orders-acme.csv", "orders-beta.csv"],
        "xlsx": ["orders.xlsx"],
    }
    # another plan into the same folder: every file of the first plan's exports goes
    prob.write_text(prob.read_text().replace("max_accelerators: 2", "max_accelerators: 100"))
    _solve(prob, cat, plan)  # re-solved over the same path
    result = runner.invoke(app, ["export", str(plan), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "removed the files of an export of another plan" in result.output
    assert "orders-beta.csv" in result.output and "orders.xlsx" in result.output
    assert _listing(out) == ["orders-acme.csv", "procure-export.json"]
    # a file named as an order that no record names is refused, not guessed about
    (out / "orders-gamma.csv").write_text("hand-made\n")
    result = runner.invoke(app, ["export", str(plan), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "orders-gamma.csv, which no export record names" in result.output
    assert (out / "orders-gamma.csv").read_text() == "hand-made\n"
