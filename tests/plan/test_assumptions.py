"""What a plan rests on (issue 28 parts 4-6): each line's tier and SLA, the training line's
MFU, band, source and slack, availability caps named when they bind and said to be
assumed, and the settings that decided the plan, in the JSON and under the table."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import HOURS, L4, offering, problem, serve
from solver.outputs.text import plan_table
from solver.solve import solve_problem

H1_CAP2 = offering("h1", "h100-sxm", 1, 4.0, cap=2)
PROVIDERS = [
    {
        "provider": "acme",
        "tier": "neocloud",
        "sla": "99.9% monthly uptime (test)",
        "data_terms": "test",
        "hosts": "test",
        "source": "test",
        "read_date": "2026-11",
    }
]


def _words(text: str) -> str:
    """The plan's text with its line wraps undone (the table is 150 columns wide)."""
    return " ".join(text.split())


def _with_providers(catalog):
    """The tiny catalog with a providers.csv row for acme (tier and SLA)."""
    from dataclasses import replace

    return replace(catalog, providers=pd.DataFrame(PROVIDERS).set_index("provider"))


def test_a_binding_availability_cap_names_its_offering_and_says_it_is_assumed(tiny_catalog):
    # 20 req/s: an H100 instance serves 10 for $4/h ($0.40 per req/s), an L4 2 for $1/h
    # ($0.50), so the optimum takes the 2 H100s the cap allows: 2 x $4 x 730 h = $5,840, and
    # the H100 availability row holds at its cap. The catalog's cap is an assumption (no
    # provider publishes one), and the plan says so where it binds.
    plan = solve_problem(problem([serve(20)]), tiny_catalog([H1_CAP2, L4]))
    assert plan.total_cost_usd == pytest.approx(2 * 4.0 * HOURS)
    [cap] = [b for b in plan.binding if b.family == "availability"]
    assert (cap.offering, cap.mode, cap.limit, cap.limit_basis) == (
        "acme/us-east/h1",
        "on_demand",
        2.0,
        "assumed",
    )
    assert cap.key["pool"] == "acme/us-east/h1#on_demand"  # by the family's key names
    [row] = [a for a in plan.assumptions if a.subject == "acme/us-east/h1 on_demand"]
    assert (row.kind, row.value, row.basis, row.binds) == ("availability_cap", 2, "assumed", True)
    text = _words(plan_table(plan))
    assert "acme/us-east/h1 on_demand held at its cap of 2 units, an assumed figure" in text
    # the same cap given by the problem is the problem's, and is not listed as an assumption
    given = problem([serve(20)], availability_caps={"acme/us-east/h1": 2})
    plan = solve_problem(given, tiny_catalog([H1_CAP2, L4]))
    [cap] = [b for b in plan.binding if b.family == "availability"]
    assert cap.limit_basis == "problem"
    assert "the problem's availability_caps" in _words(plan_table(plan))
    assert not [a for a in plan.assumptions if a.kind == "availability_cap"]


def test_each_line_carries_its_providers_tier_and_sla(tiny_catalog):
    # providers.csv gives acme's tier and SLA: every line says both, the assumptions list
    # each provider once, and the table shows the tier beside the provider
    plan = solve_problem(problem([serve(20)]), _with_providers(tiny_catalog([H1_CAP2, L4])))
    assert {(i.tier, i.sla) for i in plan.line_items} == {
        ("neocloud", "99.9% monthly uptime (test)")
    }
    [tier] = [a for a in plan.assumptions if a.kind == "provider_tier"]
    assert (tier.subject, tier.value) == ("acme", "neocloud")
    assert tier.source == "SLA: 99.9% monthly uptime (test)"
    assert "(neocloud)" in plan_table(plan)
    # without providers.csv the tier is unknown and no SLA is listed
    plan = solve_problem(problem([serve(20)]), tiny_catalog([H1_CAP2, L4]))
    assert {(i.tier, i.sla) for i in plan.line_items} == {("unknown", "")}


def test_the_settings_say_whether_the_problem_set_them(tiny_catalog):
    # serve() sets max_utilisation: 1 (the problem's); fleet, owned_cost_policy and
    # residual_value are left at their defaults (autoscale, cash, none); measured capacity
    # rests on the problem's own measurements, not on a runtime's efficiencies
    plan = solve_problem(problem([serve(20)]), tiny_catalog([H1_CAP2, L4]))
    settings = {(a.workload, a.name): a for a in plan.assumptions if a.kind == "default"}
    assert (
        settings[("chat", "max_utilisation")].value,
        settings[("chat", "max_utilisation")].basis,
    ) == (
        1.0,
        "problem",
    )
    assert (settings[("chat", "fleet")].value, settings[("chat", "fleet")].basis) == (
        "autoscale",
        "default",
    )
    # the plan states the percentile its SLOs were checked at: p99 by default (issue 47)
    percentile = settings[("chat", "slo_percentile")]
    assert (percentile.value, percentile.basis) == (0.99, "default")
    mean = solve_problem(problem([serve(20, slo_percentile="mean")]), tiny_catalog([H1_CAP2, L4]))
    [stated] = [a for a in mean.assumptions if a.name == "slo_percentile"]
    assert (stated.value, stated.basis) == ("mean", "problem")
    assert settings[("", "owned_cost_policy")].value == "cash"
    assert settings[("", "residual_value")].basis == "default"
    assert settings[("", "modes")].basis == "problem"  # problem() lists on_demand
    assert ("", "training_margin") not in settings  # no training workload
    [measured] = [a for a in plan.assumptions if a.kind == "serving_efficiency"]
    assert (measured.name, measured.basis) == ("measured_throughput_rps", "problem")
    text = plan_table(plan)
    assert "settings that decided the plan" in text and "owned_cost_policy" in text


def test_physics_capacity_rests_on_the_runtimes_efficiencies(tiny_catalog):
    # without measurements the capacity is physics: the plan lists the vLLM-on-CUDA fractions
    # it used, 0.65 of bandwidth and 0.50 of compute (NIM on H100, catalogs/SOURCES.md;
    # refit on the chunked-prefill step, issue 47: docs/concepts/runtime-figures.md)
    w = {
        "kind": "inference",
        "name": "chat",
        "model": "llama-3-8b",
        "demand": {"tokens_per_s": 500},
        "prompt_tokens": 500,
        "output_tokens": 200,
        "ttft_slo": "1 s",
        "tpot_slo": "50 ms",
    }
    plan = solve_problem(problem([w]), tiny_catalog([offering("h1", "h100-sxm", 1, 4.0)]))
    rows = {a.name: a for a in plan.assumptions if a.kind == "serving_efficiency"}
    assert (rows["eta_bandwidth"].value, rows["eta_compute"].value) == (0.65, 0.50)
    assert rows["eta_bandwidth"].subject == "vllm-cuda"
    assert "NIM_H100_PERF" in rows["eta_compute"].source


def test_the_seed_trains_at_the_low_end_of_its_band_and_says_why(seed_plan):
    # The seed's 1T-token 13B job is 7.8e22 + 12 x 40 x 5120 x 4096 x 1e12 = 8.807e22 FLOPs.
    # At the published MI325X point (0.32, assumed equal to MI250X on Frontier) 32 GPUs
    # take 8.807e22 / (32 x 1,307.4e12 x 0.32 x 3600) = 1,827.25 h of the 2,160 h of
    # January-March 2027 (15.4% slack). Sized at the low end of the band (0.256 = 0.8 x
    # 0.32: no CDNA3 run at scale is published) they would take 1,827.25 x 0.32 / 0.256 =
    # 2,284 h and miss the window, so the plan takes 5 MI325X-8x (40 GPUs): 1,827.25 x 32 /
    # 40 x 0.32 / 0.256 = 1,827.25 h again, for 5 x $15.60 x 1,827.25 h = $142,525.82
    # (was $114,020.66 with 4), and the seed costs $370,028.54 with its serving autoscaled
    # and guarded (the defaults; $227,502.72 of serving; $359,284.50 at the opt-in fleet:
    # per_block; issue 47's chunked-prefill sizing, $363,684.86 before).
    [line] = [i for i in seed_plan.line_items if i.item == "training"]
    assert (line.offering, line.units, line.accelerators) == ("tensorwave/US/mi325x-8x", 5, 40)
    assert (line.mfu, line.mfu_low, line.mfu_point, line.mfu_high) == (0.256, 0.256, 0.32, 0.40)
    assert line.mfu_source == "assumed equal to MI250X on Frontier"
    assert line.job_hours == pytest.approx(1827.25, abs=0.01)
    assert line.window_hours == 2160.0
    assert line.slack_fraction == pytest.approx(1 - 1827.25 / 2160, abs=1e-5)
    assert line.units_at_point_mfu == 4
    assert line.cost_usd == pytest.approx(142_525.82, abs=0.01)
    assert seed_plan.total_cost_usd == pytest.approx(370_028.54, abs=0.01)
    assert (line.tier, line.training_margin) == ("neocloud", "low")
    [mfu] = [a for a in seed_plan.assumptions if a.kind == "mfu"]
    assert (mfu.value, mfu.low, mfu.high, mfu.basis) == (0.256, 0.256, 0.40, "assumed")
    text = _words(plan_table(seed_plan))
    assert "slack 15.4%, at MFU 0.256, the low end of its band 0.256-0.4" in text
    assert "at the point MFU 4 units would finish in the window: the margin adds 1 unit" in text
