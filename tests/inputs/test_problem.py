"""Problem files: good ones load; bad ones are refused with the field path and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from solver.errors import ProcureError
from solver.inputs.problem import load_problem, parse_duration_s

ROOT = Path(__file__).resolve().parents[2]

BASE = """\
name: t
horizon_months: 12
workloads:
  - kind: inference
    name: chat
    model: llama-3-8b
    demand: {users: 1000, requests_per_user_per_day: 10}
    prompt_tokens: 500
    output_tokens: 200
    ttft_slo: 1 s
    tpot_slo: 50 ms
"""


def write(tmp_path, text: str) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(text)
    return path


def refused(tmp_path, text: str) -> ProcureError:
    with pytest.raises(ProcureError) as err:
        load_problem(write(tmp_path, text))
    return err.value


def test_every_shipped_problem_loads():
    files = sorted((ROOT / "problems").glob("*.yaml"))
    assert len(files) >= 6
    for path in files:
        assert load_problem(path).name


def test_durations_need_units():
    assert parse_duration_s("50 ms") == pytest.approx(0.05)
    assert parse_duration_s("1 s") == 1.0
    with pytest.raises(ValueError, match="no unit"):
        parse_duration_s(50)


CASES = [
    # (what, edit, expected field path fragment, expected message fragment)
    (
        "slo without unit",
        ("tpot_slo: 50 ms", "tpot_slo: 50"),
        "workloads[0] (chat).tpot_slo",
        "no unit",
    ),
    (
        "negative tokens",
        ("workloads:", "workloads:\n  - {kind: training, name: tr, model: dense-7b, tokens: -5}"),
        "workloads[0] (tr).tokens",
        "greater than 0",
    ),
    (
        "no demand",
        ("    demand: {users: 1000, requests_per_user_per_day: 10}\n", ""),
        "workloads[0] (chat).demand",
        "Field required",
    ),
    (
        "typo in a field",
        ("horizon_months: 12", "horizon_months: 12\nbudget_usdd: 5"),
        "budget_usdd",
        "budget_usd",
    ),
    ("unknown kind", ("kind: inference", "kind: inferense"), "workloads[0]", "kind"),
    (
        "negative budget",
        ("horizon_months: 12", "horizon_months: 12\nbudget_usd: -1"),
        "budget_usd",
        "greater than 0",
    ),
    (
        "period out of the horizon",
        ("tpot_slo: 50 ms", "tpot_slo: 50 ms\n    periods: [q9]"),
        "(top level)",
        "q9",
    ),
    (
        "half a demand",
        ("{users: 1000, requests_per_user_per_day: 10}", "{users: 1000}"),
        "workloads[0] (chat).demand",
        "requests_per_user_per_day",
    ),
]


@pytest.mark.parametrize("what,edit,field,message", CASES, ids=[c[0] for c in CASES])
def test_bad_problem_refused_with_field_and_fix(tmp_path, what, edit, field, message):
    old, new = edit
    assert old in BASE
    err = refused(tmp_path, BASE.replace(old, new, 1))
    text = err.render()
    assert str(tmp_path / "p.yaml") in text
    assert field in text, text
    assert message in text, text
    assert "fix:" in text


def test_yaml_syntax_error_names_the_line(tmp_path):
    err = refused(tmp_path, BASE.replace("prompt_tokens: 500", "prompt_tokens: [500"))
    assert "line" in (err.field or "") and "YAML" in err.message


def test_missing_file():
    with pytest.raises(ProcureError, match="not found"):
        load_problem("no/such/file.yaml")


def test_unknown_preset_refused_with_suggestion(tiny_catalog):
    import yaml

    from conftest import offering
    from solver.core.compile import compile_problem
    from solver.inputs.problem import parse_problem

    data = yaml.safe_load(BASE.replace("llama-3-8b", "llama-3-8bb"))
    cat = tiny_catalog([offering("h1", "h100-sxm", 1, 4.0)])
    with pytest.raises(ProcureError) as err:
        compile_problem(parse_problem(data), cat)
    assert "llama-3-8b" in err.value.fix and "workloads[0]" in err.value.field
