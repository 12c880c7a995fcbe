"""Hostile YAML: an alias bomb refused fast with one message (by the reader the CLI and the
web share, :mod:`solver.inputs.yamlio`), and a byte-order mark or CR line ends that change
nothing about what a problem file says."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import CHAT_WORKLOAD, offering, write_catalog
from solver.cli import app
from solver.errors import ProcureError
from solver.inputs.problem import load_problem
from solver.inputs.yamlio import MAX_NODES, load_yaml

runner = CliRunner()

PROBLEM = (
    """\
name: yaml-hostile
# a comment line, and a block scalar whose line ends are part of its value
description: |
  first line
  second line
horizon_months: 2
periods:
  - {name: m1, months: 1}
  - {name: m2, months: 1}
modes: [on_demand]
workloads:
"""
    + CHAT_WORKLOAD
)


def bomb_text() -> str:
    """The classic "billion laughs": nine lists of nine aliases of the list before, under
    500 bytes, 9**9 = 387,420,489 strings once expanded."""
    lines = ["name: bomb", "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    lines.append("workloads: *a8")
    return "\n".join(lines) + "\n"


def test_the_bomb_is_under_500_bytes():
    assert len(bomb_text().encode()) < 500


def test_the_bomb_is_refused_by_the_reader_in_well_under_a_second(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(bomb_text())
    started = time.perf_counter()
    with pytest.raises(ProcureError) as caught:
        load_problem(path)
    elapsed_s = time.perf_counter() - started
    # the expansion is counted while composing: refused after a few dozen events (about
    # 2 ms here), never after building 387 million values
    assert elapsed_s < 1.0
    exc = caught.value
    assert exc.file == str(path)
    # the lists a0..a3 hold 10, 91, 820 and 7,381 values (1 + 9 x the one before); with
    # the root, the keys and "name" 8,309 values precede a4 (line 6), whose list and key
    # make 8,311 and whose second alias of a3 makes 8,311 + 2 x 7,381 = 23,073 > 20,000
    assert exc.field == "line 6"
    assert f"more than {MAX_NODES:,} values" in exc.message and "aliases" in exc.message
    assert "fewer nested aliases" in exc.fix


def _timed_solve(path: Path) -> tuple[subprocess.CompletedProcess, float]:
    procure = Path(sys.executable).with_name("procure")
    started = time.perf_counter()
    done = subprocess.run(
        [str(procure), "solve", str(path)], capture_output=True, text=True, timeout=120
    )
    return done, time.perf_counter() - started


def test_the_bomb_is_refused_by_procure_solve_as_a_process(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(bomb_text())
    # the same command on a missing file: Python's start and procure's imports, which
    # are most of the time (about 1.2 s on the shared 2-core machine, 5 s under load)
    _, baseline_s = _timed_solve(tmp_path / "missing.yaml")
    done, elapsed_s = _timed_solve(path)
    # the bomb adds about 2 ms to that; 2 s is a bound for a loaded machine, far from a
    # command that never ended
    assert elapsed_s - baseline_s < 2.0, (elapsed_s, baseline_s)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith(f"error: {path}: line ")
    assert f"more than {MAX_NODES:,} values" in done.stderr
    assert "fix: " in done.stderr


def _counted(k: int, pad: int) -> str:
    """A document of exactly 1,004 + 1,000 k + 2 + pad values: the root mapping (1), key
    x (1), the list x (1 + 999 items = 1,000), key y (1), the list y (1 + k aliases of x,
    1,000 each), key z (1) and the list z (1 + pad items)."""
    x = "[" + ", ".join(["1"] * 999) + "]"
    y = "[" + ", ".join(["*x"] * k) + "]"
    z = "[" + ", ".join(["2"] * pad) + "]"
    return f"x: &x {x}\ny: {y}\nz: {z}\n"


def test_the_bound_counts_every_expanded_value_exactly():
    assert MAX_NODES == 20_000
    # k = 18, pad = 994: 1,004 + 18,000 + 2 + 994 = 20,000 values: read
    data = load_yaml(_counted(18, 994), file="p.yaml")
    assert len(data["y"]) == 18 and len(data["y"][0]) == 999 and len(data["z"]) == 994
    # one more value (pad = 995): 20,001, refused on line 3 (the list z crosses it)
    with pytest.raises(ProcureError) as caught:
        load_yaml(_counted(18, 995), file="p.yaml")
    assert caught.value.field == "line 3"


def test_a_document_without_aliases_past_the_bound_is_refused_too():
    text = "name: many\nvalues: [" + ",".join(["1"] * 30_000) + "]\n"
    with pytest.raises(ProcureError) as caught:
        load_yaml(text, file="p.yaml")
    assert f"more than {MAX_NODES:,} values" in caught.value.message


def test_anchors_and_aliases_within_the_bound_still_read():
    text = "slo: &slo {ttft: 1 s, tpot: 50 ms}\nworkloads:\n  - {name: a, slo: *slo}\n"
    text += "  - {name: b, slo: *slo}\n"
    assert load_yaml(text, file="p.yaml")["workloads"] == [
        {"name": "a", "slo": {"ttft": "1 s", "tpot": "50 ms"}},
        {"name": "b", "slo": {"ttft": "1 s", "tpot": "50 ms"}},
    ]


def test_an_alias_inside_its_own_anchor_is_refused():
    with pytest.raises(ProcureError) as caught:
        load_yaml("a: &a [1, *a]\n", file="p.yaml")
    assert "inside the node its anchor names" in caught.value.message
    assert caught.value.field == "line 1"


# --------------------------------------------------------------------------- BOM, CR


VARIANTS = {
    "bom": lambda t: "\ufeff" + t,
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "cr": lambda t: t.replace("\n", "\r"),
    "bom+crlf": lambda t: "\ufeff" + t.replace("\n", "\r\n"),
    "bom+cr": lambda t: "\ufeff" + t.replace("\n", "\r"),
}


@pytest.mark.parametrize("kind", list(VARIANTS))
def test_bom_and_cr_line_ends_parse_to_the_same_data(kind):
    plain = load_yaml(PROBLEM, file="p.yaml")
    assert load_yaml(VARIANTS[kind](PROBLEM), file="p.yaml") == plain
    # the block scalar keeps LF line ends, as in the file without CRs
    assert plain["description"] == "first line\nsecond line\n"


@pytest.mark.parametrize("kind", list(VARIANTS))
def test_bom_and_cr_line_ends_give_the_same_error_at_the_same_line(kind):
    # a duplicate key on lines 6 and 7: the message names the same lines
    bad = PROBLEM.replace("horizon_months: 2\n", "horizon_months: 2\nhorizon_months: 3\n")
    with pytest.raises(ProcureError) as plain:
        load_yaml(bad, file="p.yaml")
    with pytest.raises(ProcureError) as other:
        load_yaml(VARIANTS[kind](bad), file="p.yaml")
    assert str(other.value) == str(plain.value)
    assert "lines 6 and 7" in str(plain.value)


@pytest.mark.parametrize("kind", list(VARIANTS))
def test_the_web_reader_gives_the_same_problem_and_digest(kind):
    from solver.plan import input_digests
    from solver.web.workspace import read_problem_text

    cat = _tiny_catalog_obj()
    plain, _ = read_problem_text(PROBLEM)
    other, _ = read_problem_text(VARIANTS[kind](PROBLEM))
    assert other == plain
    assert input_digests(other, cat) == input_digests(plain, cat)


def _tiny_catalog_obj():
    import tempfile

    from solver.inputs.catalog import load_catalog

    folder = Path(tempfile.mkdtemp(prefix="procure-yaml-cat-"))
    return load_catalog(write_catalog(folder, [offering("h1", "h100-sxm", 1, 4.0)]))


@pytest.mark.parametrize("kind", ["bom+crlf", "bom+cr"])
def test_procure_solve_prints_the_same_plan(tmp_path, kind):
    cat = write_catalog(tmp_path / "cat", [offering("h1", "h100-sxm", 1, 4.0)])
    plans = {}
    for name, text in (("plain", PROBLEM), (kind, VARIANTS[kind](PROBLEM))):
        path = tmp_path / f"{name}.yaml"
        path.write_bytes(text.encode("utf-8"))
        args = ["solve", str(path), "--catalog", str(cat), "--format", "json", "--reproducible"]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        plan = json.loads(result.stdout)
        plan["inputs"].pop("problem_file")  # the only difference: the file's own path
        plans[name] = plan
    assert plans[kind] == plans["plain"]
    # the chat workload's 1,000 tok/s on one H100 at $4/h (conftest): a plan was made
    assert plans["plain"]["total_cost_usd"] > 0


@pytest.mark.parametrize(
    "text",
    [
        bomb_text(),
        _counted(18, 995),
        _counted(18, 994),
        "a: &a [1, *a]\n",
        "a: *undefined\n",
        "name: many\nvalues: [" + ",".join(["1"] * 30_000) + "]\n",
        "d: " + "[" * 100 + "]" * 100 + "\n",
    ],
)
def test_the_fast_count_and_the_loader_agree(monkeypatch, text):
    """LibYAML's events are counted first (fast); the Python loader counts again. Either
    alone gives the same answer and the same message."""
    import yaml

    def outcome():
        try:
            return ("read", load_yaml(text, file="p.yaml"))
        except ProcureError as exc:
            return ("refused", str(exc))

    with_c = outcome()
    monkeypatch.setattr(yaml, "__with_libyaml__", False)
    assert outcome() == with_c


def test_a_large_document_is_refused_before_python_composes_it():
    # 200,000 values in 400 kB: refused by the count of LibYAML's events at the 20,001st
    # (about 0.07 s; the Python composition alone took about 2 s on the loaded machine)
    text = "name: many\nvalues: [" + ",".join(["1"] * 200_000) + "]\n"
    started = time.perf_counter()
    with pytest.raises(ProcureError, match="more than 20,000 values"):
        load_yaml(text, file="p.yaml")
    assert time.perf_counter() - started < 1.0
