"""Trace files: the two formats read, and every bad file refused with its line and field."""

from __future__ import annotations

import pytest

from solver.analyses.replay import parse_trace, poisson_trace
from solver.errors import ProcureError


def test_a_csv_trace_is_read_and_sorted():
    rows = parse_trace("arrival_s,prompt_tokens,output_tokens\n2.5,100,20\n0.5,300,7\n", "t.csv")
    assert [(r.arrival_s, r.prompt_tokens, r.output_tokens) for r in rows] == [
        (0.0, 300, 7),
        (2.0, 100, 20),
    ]


def test_an_azure_trace_is_read_relative_to_its_first_row():
    # the Azure LLM inference trace's schema (AzurePublicDataset, AzureLLMInferenceDataset
    # 2023.md): TIMESTAMP, ContextTokens, GeneratedTokens; 7 decimal places as published
    text = (
        "TIMESTAMP,ContextTokens,GeneratedTokens\n"
        "2023-11-16 18:15:46.6805900,374,44\n"
        "2023-11-16 18:15:50.9951690,396,109\n"
    )
    rows = parse_trace(text, "azure.csv")
    assert rows[0].arrival_s == 0.0
    assert rows[1].arrival_s == pytest.approx(4.314579, abs=1e-6)
    assert (rows[1].prompt_tokens, rows[1].output_tokens) == (396, 109)


@pytest.mark.parametrize(
    "text, field, words",
    [
        ("time,in,out\n1,2,3\n", "line 1", "unknown trace header"),
        ("", "line 1", "unknown trace header"),
        ("arrival_s,prompt_tokens,output_tokens\n1,2\n", "line 2", "2 fields"),
        ("arrival_s,prompt_tokens,output_tokens\n1,2,3\nx,2,3\n", "line 3, arrival_s", "'x'"),
        ("arrival_s,prompt_tokens,output_tokens\n-1,2,3\n", "line 2, arrival_s", "'-1'"),
        ("arrival_s,prompt_tokens,output_tokens\nnan,2,3\n", "line 2, arrival_s", "'nan'"),
        ("arrival_s,prompt_tokens,output_tokens\n1,2.5,3\n", "line 2, prompt_tokens", "2.5"),
        ("arrival_s,prompt_tokens,output_tokens\n1,2,0\n", "line 2, output_tokens", "'0'"),
        ("arrival_s,prompt_tokens,output_tokens\n", "line 2", "no request"),
        (
            "TIMESTAMP,ContextTokens,GeneratedTokens\nyesterday,1,1\n",
            "line 2, TIMESTAMP",
            "'yesterday'",
        ),
    ],
)
def test_a_bad_trace_names_its_line_and_field(text, field, words):
    with pytest.raises(ProcureError) as err:
        parse_trace(text, "bad.csv")
    assert err.value.file == "bad.csv" and err.value.field == field
    assert words in err.value.message and err.value.fix


def test_poisson_arrivals_have_the_asked_rate_and_sizes():
    rows = poisson_trace(20.0, 500.0, ((0.25, 100, 10), (0.75, 1000, 50)), seed=1)
    # 10,000 expected arrivals: within 4 standard deviations (4 x 100)
    assert abs(len(rows) - 10_000) < 400
    big = sum(r.prompt_tokens == 1000 for r in rows) / len(rows)
    assert big == pytest.approx(0.75, abs=0.02)
