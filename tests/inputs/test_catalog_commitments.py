"""Commitments as sold (issue 11, item 3): the published-rate table and the liability shown
for a reservation whose term runs past the horizon.

The worked cases use the tiny catalog of tests/conftest.py: one H100 instance serves 10
requests/s, on-demand $4/h, 1-year reserved $3/h, 3-year reserved $2/h, 730 h a month.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pandas as pd
import pytest

from conftest import ROOT, offering
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import parse_problem
from solver.outputs.text import plan_table
from solver.solve import solve_problem

HOURS = 730.0


def _build_script():
    """scripts/build_offerings.py as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location(
        "build_offerings", ROOT / "scripts" / "build_offerings.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def build():
    return _build_script()


# ---------------------------------------------------------------------------- the table


def test_every_rule_has_a_page_and_a_read_date(build):
    for provider, _pattern, f1, f3, src in build.RESERVED_RULES:
        assert "https://" in src and "2026-11-24" in src, (provider, src)
        for f in (f1, f3):
            assert f is None or 0.0 < f <= 1.0, (provider, f)
        if f1 is not None and f3 is not None:
            # a 3-year commitment is never dearer per hour than a 1-year one
            assert f3 <= f1, provider


def test_upper_bounds_are_not_prices_and_unpublished_terms_stay_empty(build):
    # one rule per provider in the table
    by_provider = {p: (f1, f3, src) for p, _, f1, f3, src in build.RESERVED_RULES}
    assert len(by_provider) == len(build.RESERVED_RULES)
    # AWS and Azure advertise only "up to 72%" for GPU instances: a best case, not the
    # price of a p5 or ND H100 commitment, so both terms stay empty and the source says why.
    for provider in ("aws", "azure"):
        f1, f3, src = by_provider[provider]
        assert f1 is None and f3 is None
        assert "an upper bound is not a price" in src
    # Neoclouds publish no rate: both columns empty, never a made-up factor.
    for provider in ("lambda", "coreweave", "nebius", "oci"):
        f1, f3, src = by_provider[provider]
        assert f1 is None and f3 is None and "none published" in src


def test_apply_reserved_worked_rows(build):
    rows = pd.DataFrame(
        {
            "provider": ["aws", "gcp", "lambda"],
            "instance_type": ["p5.48xlarge", "a3-highgpu-8g", "gpu_8x_h100_sxm5"],
            "on_demand_usd_per_hour": [100.0, 100.0, 100.0],
            "reserved_1y_usd_per_hour": [np.nan] * 3,
            "reserved_3y_usd_per_hour": [np.nan] * 3,
            "source": ["list", "list", "list"],
        }
    )
    out = build.apply_reserved(rows).set_index("provider")
    # aws p5: only an advertised upper bound, so no commitment price at all.
    assert out.loc["aws", ["reserved_1y_usd_per_hour", "reserved_3y_usd_per_hour"]].isna().all()
    # gcp a3: 1y = 100 x (1 - 0.37) = $63/h, 3y = 100 x (1 - 0.55) = $45/h.
    assert out.loc["gcp", "reserved_1y_usd_per_hour"] == pytest.approx(63.0)
    assert out.loc["gcp", "reserved_3y_usd_per_hour"] == pytest.approx(45.0)
    # lambda: nothing published, both empty, the reserved source says so (issue 29: the
    # reserved prices' source is their own column, beside their confidence and date).
    assert out.loc["lambda", ["reserved_1y_usd_per_hour", "reserved_3y_usd_per_hour"]].isna().all()
    assert "reserved: none published" in out.loc["lambda", "reserved_source"]
    assert "reserved: none published" in out.loc["aws", "reserved_source"]
    assert out.loc["lambda", "reserved_price_confidence"] == ""  # no price, no confidence
    # gcp: a published percentage applied to our on-demand price is no published price;
    # it is dated by the day the percentage was read (RESERVED_RULES' texts: 2026-11-24)
    assert out.loc["gcp", "reserved_price_confidence"] == "unverified"
    assert out.loc["gcp", "reserved_price_date"] == "2026-11-24"
    assert out.loc["gcp", "source"] == "list"  # the on-demand source is left alone


def test_a_fraction_above_one_stops_the_build(build, monkeypatch):
    # A commitment dearer than on-demand is a table error, not a price.
    monkeypatch.setattr(build, "RESERVED_RULES", [("aws", r"^p5\.", 1.2, None, "bad")])
    rows = pd.DataFrame(
        {
            "provider": ["aws"],
            "instance_type": ["p5.48xlarge"],
            "on_demand_usd_per_hour": [100.0],
            "reserved_1y_usd_per_hour": [np.nan],
            "reserved_3y_usd_per_hour": [np.nan],
            "source": ["list"],
        }
    )
    with pytest.raises(ValueError, match="not in"):
        build.apply_reserved(rows)


def test_published_per_sku_prices_win_over_the_rules(build, tmp_path):
    # one GCP row with a published price (1y $63.50, 3y $40), one AWS row with a 1y RI
    # ($13.921094 for p4d.24xlarge in us-east-1: the AWS Price List via ec2instances.info),
    # one whose source prices on-demand 20% above the catalog (skipped: another thing)
    table = tmp_path / "prices.csv"
    table.write_text(
        "provider,instance_type,region,term,price_usd_per_hour,source_on_demand_usd_per_hour,"
        "payment_option,source_url,source_date\n"
        "gcp,a3-highgpu-8g,us-central1,1y,63.5,100,CUD,https://x,2026-07-30\n"
        "gcp,a3-highgpu-8g,us-central1,3y,40,100,CUD,https://x,2026-07-30\n"
        "aws,p4d.24xlarge,us-east-1,1y,13.921094,21.957642,RI no upfront,https://y,2026-01-21\n"
        "aws,p4d.24xlarge,us-west-2,1y,13.921094,26.35,RI no upfront,https://y,2026-01-21\n"
    )
    rows = pd.DataFrame(
        {
            "provider": ["gcp", "aws", "aws"],
            "instance_type": ["a3-highgpu-8g", "p4d.24xlarge", "p4d.24xlarge"],
            "region": ["us-central1", "us-east-1", "us-west-2"],
            "on_demand_usd_per_hour": [100.0, 21.957642, 21.957642],
            "reserved_1y_usd_per_hour": [np.nan] * 3,
            "reserved_3y_usd_per_hour": [np.nan] * 3,
            "source": ["list"] * 3,
        }
    )
    out = build.apply_commitment_prices(build.apply_reserved(rows), table)
    # the rule alone would give 63.0 and 45.0 (0.63 x, 0.45 x): the published prices win
    assert out.loc[0, "reserved_1y_usd_per_hour"] == 63.5
    assert out.loc[0, "reserved_3y_usd_per_hour"] == 40.0
    assert "1y price: CUD, https://x (2026-07-30)" in out.loc[0, "reserved_source"]
    # both terms from the compiled table: third_party, dated by the table (issue 29)
    assert out.loc[0, "reserved_price_confidence"] == "third_party"
    assert out.loc[0, "reserved_price_date"] == "2026-07-30"
    # AWS: 1y from the RI (0.634 of on-demand), 3y still empty (nothing published)
    assert out.loc[1, "reserved_1y_usd_per_hour"] == pytest.approx(13.921094)
    assert np.isnan(out.loc[1, "reserved_3y_usd_per_hour"])
    # source on-demand $26.35 vs catalog $21.96: 20% apart, > 10%: not used
    assert np.isnan(out.loc[2, "reserved_1y_usd_per_hour"])


def test_shipped_catalog_carries_the_published_commitments():
    # scripts/commitment_prices.csv, applied by scripts/build_offerings.py
    off = load_catalog().offerings.set_index("offering_id")
    p4d = off.loc["aws/us-east-1/p4d.24xlarge"]
    assert p4d["reserved_1y_usd_per_hour"] == pytest.approx(13.92109, abs=1e-5)
    assert "Standard RI, no upfront" in p4d["reserved_source"]
    # tsaol/aws-gpu's file, "Last updated: 2026-01-21": a third party's table (issue 29)
    assert (p4d["reserved_price_confidence"], p4d["reserved_price_date"]) == (
        "third_party",
        "2026-01-21",
    )
    a2 = off.loc["gcp/us-central1/a2-highgpu-1g"]
    # Google's billing catalog: $2.31421 (1y) and $1.28571 (3y) against $3.67339 on demand
    assert a2["reserved_1y_usd_per_hour"] == pytest.approx(2.31421, abs=1e-5)
    assert a2["reserved_3y_usd_per_hour"] == pytest.approx(1.28571, abs=1e-5)


def test_shipped_catalog_no_reserved_price_above_on_demand():
    off = pd.read_csv(ROOT / "catalogs" / "offerings.csv")
    od = off["on_demand_usd_per_hour"]
    for col in ("reserved_1y_usd_per_hour", "reserved_3y_usd_per_hour"):
        priced = off[col].notna()
        assert (off.loc[priced, col] <= od[priced] + 1e-9).all(), col
        # every committed price carries its source (a rule's or the published price's), its
        # confidence and its date (issue 29)
        term = col.split("_")[1]  # 1y or 3y
        cited = off.loc[priced, "reserved_source"].str.contains(f"reserved: |{term} price: ")
        assert cited.all(), col
        levels = off.loc[priced, "reserved_price_confidence"]
        assert levels.isin(["third_party", "unverified"]).all()
        assert off.loc[priced, "reserved_price_date"].notna().all()
    both = off["reserved_1y_usd_per_hour"].notna() & off["reserved_3y_usd_per_hour"].notna()
    assert (
        off.loc[both, "reserved_3y_usd_per_hour"] <= off.loc[both, "reserved_1y_usd_per_hour"]
    ).all()


# ------------------------------------------------------------- liability past the horizon

H1 = offering("h1", "h100-sxm", 1, 4.0, r1=3.0, r3=2.0)


def _serve_10_rps() -> dict:
    return {
        "max_utilisation": 1.0,
        "kind": "inference",
        "name": "chat",
        "model": "llama-3-8b",
        "demand": {"requests_per_s": 10.0},
        "prompt_tokens": 100,
        "output_tokens": 100,
        "ttft_slo": "1 s",
        "tpot_slo": "50 ms",
        "traffic_mix": [{"prompt_tokens": 100, "output_tokens": 100, "share": 1.0}],
        "measured_throughput_rps": {"h100-sxm": [10.0]},
    }


def _problem(horizon_months: int, modes: list[str], **extra):
    data = {
        "name": "tiny",
        "horizon_months": horizon_months,
        "modes": modes,
        "workloads": [_serve_10_rps()],
    }
    data.update(extra)
    return parse_problem(data)


def _reservations(plan):
    return [i for i in plan.line_items if i.item == "reservation"]


def test_three_year_reservation_past_a_two_year_horizon_shows_its_liability(tiny_catalog):
    # One H100 for 24 months. On-demand: $4 x 730 x 24 = $70,080. A 3-year reservation
    # costs $2 x 730 x 36 = $52,560 for the whole term (cash policy: the 12 months after
    # the horizon are owed and charged to the last period), so it wins. What runs past
    # the horizon: term ends month 36, 36 - 24 = 12 months, $2 x 730 x 12 = $17,520.
    plan = solve_problem(_problem(24, ["on_demand", "reserved_3y"]), tiny_catalog([H1]))
    assert plan.total_cost_usd == pytest.approx(52_560)
    (res,) = _reservations(plan)
    assert res.units == 1
    assert res.term_end_month == pytest.approx(36)
    assert res.months_after_horizon == pytest.approx(12)
    assert res.liability_after_horizon_usd == pytest.approx(17_520)
    text = plan_table(plan)
    assert "commitments running past the horizon" in text
    assert "12 months and $17,520 still owed after the horizon" in text


def test_amortised_policy_still_shows_what_is_owed_after_the_horizon(tiny_catalog):
    # Amortised: only the 24 months inside count, $2 x 730 x 24 = $35,040 (cheaper than
    # on-demand's $70,080); the $17,520 for months 25-36 is still owed and still shown.
    p = _problem(24, ["on_demand", "reserved_3y"], owned_cost_policy="amortised")
    plan = solve_problem(p, tiny_catalog([H1]))
    assert plan.total_cost_usd == pytest.approx(35_040)
    (res,) = _reservations(plan)
    assert res.liability_after_horizon_usd == pytest.approx(17_520)


def test_reservation_inside_the_horizon_has_no_liability_line(tiny_catalog):
    # 12 months, 1-year reservation $3 x 730 x 12 = $26,280 < on-demand $35,040; the term
    # ends at month 12 = the horizon: nothing owed after it and no line in the table.
    plan = solve_problem(_problem(12, ["on_demand", "reserved_1y"]), tiny_catalog([H1]))
    assert plan.total_cost_usd == pytest.approx(26_280)
    (res,) = _reservations(plan)
    assert res.term_end_month == pytest.approx(12)
    assert res.months_after_horizon == 0 and res.liability_after_horizon_usd == 0
    assert "commitments running past the horizon" not in plan_table(plan)


def test_reserved_price_column_empty_means_no_commitment_offered(tiny_catalog):
    # An offering with no published 3-year rate (empty column) cannot be reserved for
    # 3 years: 24 months of one H100 then stay on demand, $4 x 730 x 24 = $70,080.
    no_r3 = offering("h1", "h100-sxm", 1, 4.0, r1=None, r3=None)
    plan = solve_problem(_problem(24, ["on_demand", "reserved_3y"]), tiny_catalog([no_r3]))
    assert plan.total_cost_usd == pytest.approx(70_080)
    assert _reservations(plan) == []
