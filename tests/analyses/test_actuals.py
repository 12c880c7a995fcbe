"""Actuals against the plan: the variance split and the re-forecast
(solver/analyses/actuals.py)."""

from __future__ import annotations

from datetime import date

import pandas as pd
import pytest
import yaml

from conftest import ROOT, offering, seed_problem
from solver.analyses.actuals import (
    CATEGORIES,
    KEY,
    actuals,
    billed_in_usd,
    compare,
    key_billed,
    reforecast,
)
from solver.errors import ProcureError
from solver.inputs.catalog import load_catalog
from solver.inputs.importers.focus_billing import read_focus_billing
from solver.inputs.problem import parse_problem
from solver.outputs.focus import focus_csv, focus_frame
from solver.solve import solve_problem


def _row(provider, region, instance, accelerator, usd, hours, line=0, month="2027-01"):
    return {
        "provider": provider,
        "region": region,
        "instance_type": instance,
        "pricing": "on_demand",
        "accelerator": accelerator,
        "month": month,
        "line": line,
        "planned_usd": usd,
        "planned_hours": hours,
        "cost_usd": usd,
        "hours": hours,
    }


def test_variance_split_worked_by_hand():
    # Planned in January: A aws p5 100 h at $10 = $1,000 and B lambda 8x-H100 100 h at $8
    # = $800 (both H100: one mix group), D 30 h of A100 at $10 = $300. Billed: A 120 h at
    # $11 = $1,320, B 60 h at $8 = $480, C an unplanned CoreWeave $50 (5 h); D not billed.
    # Group H100: H_p = 200 h, H_a = 180 h, planned shares s_A = s_B = 0.5.
    #   A: volume = 0.5 x (180 - 200) x $10 = -$100; hours effect (120 - 100) x $10 = $200,
    #      so mix = $300; price = $1,320 - $1,000 - $200 = $120 = ($11 - $10) x 120 h.
    #   B: volume = 0.5 x -20 x $8 = -$80; hours effect (60 - 100) x $8 = -$320, mix =
    #      -$240; price = $480 - $800 + $320 = $0.
    #   The group's volume -$180 = (180 - 200) x $1,800 / 200 h; its mix $60 = $1,200 + $480
    #   - 180 h x $9 (what the hours billed cost at the planned prices, less at the average).
    # Totals: price $120, volume -$180, mix $60, unplanned $50, unbilled -$300: -$250 =
    # actual $1,850 - planned $2,100.
    planned = pd.DataFrame(
        [
            _row("aws", "us-east-1", "p5", "h100-sxm", 1000.0, 100.0, line=0),
            _row("lambda", "us-west-1", "gpu_8x_h100", "h100-sxm", 800.0, 100.0, line=1),
            _row("aws", "us-east-1", "p4de", "a100-80gb", 300.0, 30.0, line=2),
        ]
    )
    billed = pd.DataFrame(
        [
            _row("aws", "us-east-1", "p5", "", 1320.0, 120.0),
            _row("lambda", "us-west-1", "gpu_8x_h100", "", 480.0, 60.0),
            _row("coreweave", "us-east-04", "gd-8xh100ib", "", 50.0, 5.0),
        ]
    )
    lines = compare(planned, billed).set_index("instance_type")
    assert lines.loc["p5", ["price_usd", "volume_usd", "mix_usd"]].tolist() == pytest.approx(
        [120.0, -100.0, 300.0]
    )
    assert lines.loc["gpu_8x_h100", ["price_usd", "volume_usd", "mix_usd"]].tolist() == (
        pytest.approx([0.0, -80.0, -240.0])
    )
    assert lines.loc["gd-8xh100ib", "status"] == "unplanned"
    assert lines.loc["gd-8xh100ib", "unplanned_usd"] == 50.0
    assert lines.loc["p4de", "status"] == "unbilled"
    assert lines.loc["p4de", "unbilled_usd"] == -300.0
    totals = {c: lines[c].sum() for c in (*CATEGORIES, "variance_usd")}
    assert totals == pytest.approx(
        {
            "price_usd": 120.0,
            "volume_usd": -180.0,
            "mix_usd": 60.0,
            "unplanned_usd": 50.0,
            "unbilled_usd": -300.0,
            "variance_usd": -250.0,
        }
    )
    # each row's categories sum to its actual - planned, to the last bit of a cent
    parts = lines[list(CATEGORIES)].sum(axis=1)
    assert (parts - (lines["actual_usd"] - lines["planned_usd"])).abs().max() < 1e-9


def _per_block_at_catalog_prices():
    # the per-block seed with price_guard: none: its serving on three providers (Lambda
    # GH200, Seeweb H200, Verda A100), so each perturbation lands on a line of its own (under
    # the default guard Seeweb's A100, list, takes Verda's place: two providers)
    # compute only (costs: none): the bill and its perturbations are compute, worked by hand
    update = {"price_guard": "none", "costs": "none"}
    return seed_problem("per_block").model_copy(update=update)


@pytest.fixture(scope="module")
def seed_per_block_plan():
    """The seed at fleet: per_block and catalog prices, solved once for this module:
    $358,781.38 (Lambda GH200 2 at base, 5 at shoulder, 1 at peak; Seeweb H200 4 at peak;
    Verda A100 1 at shoulder)."""
    return solve_problem(_per_block_at_catalog_prices(), load_catalog())


@pytest.fixture(scope="module")
def seed_bill(seed_per_block_plan, tmp_path_factory):
    """The seed's FOCUS forecast to June 2027 (its first six months) with four known
    perturbations, saved as a CSV bill and read back as a bill is. The seed at the opt-in
    ``fleet: per_block`` (tests/conftest.py): its three serving instance types at three
    providers put each perturbation on a line of its own."""
    problem = _per_block_at_catalog_prices()
    catalog = load_catalog()
    frame = focus_frame(seed_per_block_plan, problem, catalog, date(2027, 1, 1))
    month = frame["ChargePeriodStart"].str[:7]
    frame = frame[month <= "2027-06"].copy()
    month = frame["ChargePeriodStart"].str[:7]
    sku = frame["SkuPriceDetails"]
    # 1. a price rise: the GH200 at Lambda 10% dearer in April (same hours)
    rise = (month == "2027-04") & sku.str.contains("gpu_1x_gh200")
    frame.loc[rise, "EffectiveCost"] *= 1.10
    # 2. extra hours: the A100s at Verda ran 25% longer in May, at the planned price
    extra = (month == "2027-05") & sku.str.contains('"1A100.22V"')
    frame.loc[extra, ["EffectiveCost", "PricingQuantity"]] *= 1.25
    # 3. a month missing: no bill for the H200s at Seeweb in June
    frame = frame[~((month == "2027-06") & sku.str.contains('"ECS1GPU10"'))]
    # 4. an unplanned provider: $1,000 for 20 hours of a CoreWeave H100 node in May
    unplanned = frame.iloc[[0]].copy()
    unplanned["ProviderName"] = "CoreWeave"
    unplanned["RegionId"] = "US-EAST-04"
    unplanned["SkuPriceDetails"] = '{"InstanceType": "gd-8xh100ib-i128"}'
    unplanned["ChargePeriodStart"] = "2027-05-10T00:00:00Z"
    unplanned[["EffectiveCost", "PricingQuantity"]] = [1000.0, 20.0]
    frame = pd.concat([frame, unplanned], ignore_index=True)
    path = tmp_path_factory.mktemp("bill") / "bill.csv"
    path.write_text(focus_csv(frame))
    return problem, catalog, path


def test_the_seeds_perturbed_bill_gives_each_perturbation_back(seed_per_block_plan, seed_bill):
    # The seed's charges in those months (solver/plan/charges.py; calendar hours from
    # 2027-01-01; m04-15 runs 12 h base, 8 h shoulder and 4 h peak a day): Lambda GH200 2 at
    # base, 5 at shoulder, 1 at peak -> April (30 days) 2 x 360 + 5 x 240 + 1 x 120 = 2,040 h
    # x $2.29 = $4,671.60; Verda A100 1A100.22V 1 at shoulder -> May 1 x 248 h x $1.29 =
    # $319.92; Seeweb H200 ECS1GPU10 4 at peak -> June 4 x 120 h = 480 h x EUR 2.60 x 1.1761
    # = $1,467.7728 (the per-block plan since issue 47's chunked-prefill sizing).
    # Each accelerator is alone in its mix group: no mix.
    #   1. price +10% on $4,671.60: price $467.16
    #   2. +25% hours on $319.92: volume $79.98
    #   3. June's H200 bill missing: unbilled -$1,467.7728
    #   4. CoreWeave: unplanned $1,000.00
    # variance = 467.16 + 79.98 + 1,000 - 1,467.7728 = $79.3672, and nothing else moved.
    # Each figure to 1e-4 (the bill is CSV at 10 significant digits, as focus_csv writes
    # it: 120 h come back as 119.99999...); the categories sum to the variance exactly.
    problem, catalog, path = seed_bill
    result = actuals(
        seed_per_block_plan, problem, catalog, read_focus_billing(path), date(2027, 1, 1)
    )
    assert (result.first_month, result.last_month) == ("2027-01", "2027-06")
    assert result.duplicate_rows == 0 and result.outside == []  # every row its own charge
    t = result.totals()
    assert t["price_usd"] == pytest.approx(467.16, abs=1e-4)
    assert t["volume_usd"] == pytest.approx(79.98, abs=1e-4)
    assert t["mix_usd"] == pytest.approx(0.0, abs=1e-4)
    assert t["unplanned_usd"] == pytest.approx(1000.0, abs=1e-4)
    assert t["unbilled_usd"] == pytest.approx(-1467.7728, abs=1e-4)
    assert t["variance_usd"] == pytest.approx(79.3672, abs=1e-4)
    assert t["actual_usd"] - t["planned_usd"] == pytest.approx(t["variance_usd"], abs=1e-9)
    assert sum(t[c] for c in CATEGORIES) == pytest.approx(t["variance_usd"], abs=1e-9)
    lines = result.lines.set_index(["month", "instance_type"])
    rise = lines.loc[("2027-04", "gpu_1x_gh200")]
    # the GH200 runs in three of m04-15's lines (base, peak, shoulder): 1, 2 and 3
    assert (rise.status, rise.lines) == ("matched", "1,2,3")
    assert rise.price_usd == pytest.approx(467.16, abs=1e-4)
    assert rise.actual_usd_per_hour == pytest.approx(2.29 * 1.1)  # 2,040 h, the same hours
    extra = lines.loc[("2027-05", "1A100.22V")]
    assert extra.actual_hours == pytest.approx(248 * 1.25)  # 310 h
    assert extra.volume_usd == pytest.approx(79.98, abs=1e-4)
    # flagged: the CoreWeave row billed but not planned, the June H200 planned, not billed
    flagged_unplanned = result.flagged("unplanned")
    assert flagged_unplanned[KEY].values.tolist() == [
        ["coreweave", "US-EAST-04", "gd-8xh100ib-i128", "on_demand"]
    ]
    flagged_unbilled = result.flagged("unbilled")
    assert flagged_unbilled[["month", "instance_type", "lines"]].values.tolist() == [
        ["2027-06", "ECS1GPU10", "4"]
    ]
    # matching by provider, instance type, region and month: every other row matched
    assert (result.lines["status"] == "matched").sum() == len(result.lines) - 2


def test_reforecast_keeps_actual_months_to_the_cent(seed_per_block_plan, seed_bill):
    problem, catalog, path = seed_bill
    billed = read_focus_billing(path)
    result = actuals(seed_per_block_plan, problem, catalog, billed, date(2027, 1, 1))
    forecast = reforecast(result)
    flow = forecast.cash_flow.set_index("month")
    assert (forecast.last_actual_month, forecast.as_of_month) == ("2027-06", "2027-07")
    actual = flow[flow["kind"] == "actual"]
    assert list(actual.index) == ["2027-01", "2027-02", "2027-03", "2027-04", "2027-05", "2027-06"]
    # months before the as-of date are the bill's EffectiveCost by month, to the cent;
    # June is the last month billed and bills fewer keys than planned (the H200s' $1,467.77
    # has no row): partial, the H200s' June invoice not in yet, so it is pending and the
    # other columns add it (at the plan, and at the H200s' run-rate factor, 1 below)
    # (Seeweb bills in EUR: its rows at the catalog's rate, as actuals reads them)
    by_month = billed_in_usd(billed, catalog).groupby("month")["cost_usd"].sum()
    assert (actual["actual_usd"].round(2) == by_month.round(2)).all()
    assert result.partial_months == ["2027-06"]
    pending = pd.Series(0.0, index=by_month.index)
    pending["2027-06"] = 1467.7728
    assert (actual["pending_usd"].round(2) == pending.round(2)).all()
    for column in ("at_plan_usd", "at_run_rate_usd", "at_resolve_usd"):
        assert (actual[column].round(2) == (by_month + pending).round(2)).all()
    forecast_months = flow[flow["kind"] == "forecast"]
    assert forecast_months.index[0] == "2027-07" and forecast_months.index[-1] == "2029-12"
    assert forecast_months["actual_usd"].isna().all()
    assert forecast_months["at_resolve_usd"].isna().all()  # no re-solve asked for
    assert (forecast_months["at_plan_usd"] == forecast_months["plan_usd"]).all()
    # at the run-rate, over the settled months (June, partial, left out): the H200s were
    # planned in April ($1,467.77, 30 days) and May ($1,516.70, 31 days) and billed as
    # planned, so their factor is 1 (read as a drop in use, June's missing bill would
    # have made it 2,984.47 / 4,452.24 = 0.670)
    rates = forecast.run_rates.set_index("instance_type")["factor"]
    assert rates["ECS1GPU10"] == pytest.approx(1.0)
    # the A100: April 1 x 240 h x $1.29 = $309.60 as planned, May +25%:
    # (309.60 + 1.25 x 319.92) / (309.60 + 319.92) = 709.50 / 629.52
    assert rates["1A100.22V"] == pytest.approx((309.60 + 1.25 * 319.92) / 629.52)
    # the CoreWeave $1,000 continues at its mean over the six months billed: $166.67 a month
    july = flow.loc["2027-07"]
    planned_july = result.planned[result.planned["month"] == "2027-07"]
    scaled = sum(r.planned_usd * rates.get(r.instance_type, 1.0) for r in planned_july.itertuples())
    assert july["at_run_rate_usd"] == pytest.approx(scaled + 1000.0 / 6)


def test_a_currency_without_a_rate_is_refused(seed_per_block_plan, seed_bill, tmp_path):
    problem, catalog, path = seed_bill
    text = path.read_text().replace(",USD,", ",XTS,")  # XTS: ISO 4217's code for testing
    bill = tmp_path / "xts.csv"
    bill.write_text(text)
    with pytest.raises(ProcureError) as err:
        actuals(seed_per_block_plan, problem, catalog, read_focus_billing(bill), date(2027, 1, 1))
    message = str(err.value)
    assert "xts.csv" in message and "BillingCurrency" in message and "fix:" in message


RESERVED_PROBLEM = """\
name: tiny-reserved
costs: none  # compute only: the reservation's bill worked by hand
horizon_months: 12
start: 2027-01
periods: [{name: y1, months: 12}]
modes: [on_demand, reserved_1y]
workloads:
  - kind: inference
    name: chat
    model: llama-3-8b
    demand: {requests_per_s: 20}
    prompt_tokens: 100
    output_tokens: 100
    ttft_slo: 1 s
    tpot_slo: 50 ms
    traffic_mix: [{prompt_tokens: 100, output_tokens: 100, share: 1.0}]
    measured_throughput_rps: {h100-sxm: [10.0], l4: [2.0]}
    max_utilisation: 1
"""


def test_a_reservation_billed_as_planned_has_no_variance(tiny_catalog, tmp_path):
    # 2 H100 instances serve the 20 requests/s all year; reserved for a year at $3/h they
    # cost 2 x 8,760 h x $3 = $52,560 (on demand $4/h). The plan's own FOCUS rows, read
    # back as a bill: the fee is a Purchase row (EffectiveCost 0, its hours not usage) and
    # Used/Unused Committed usage carrying the fee; matched month by month to the
    # reservation line as `reserved` pricing: January 2 x 744 h x $3 = $4,464, and no
    # variance in any category.
    catalog = tiny_catalog(
        [offering("h1", "h100-sxm", 1, 4.0, r1=3.0), offering("l4", "l4", 1, 1.0, nvlink=False)]
    )
    problem = parse_problem(yaml.safe_load(RESERVED_PROBLEM))
    plan = solve_problem(problem, catalog)
    assert [(i.item, i.mode, i.units) for i in plan.line_items if i.cost_usd] == [
        ("reservation", "reserved_1y", 2.0)
    ]
    bill = tmp_path / "bill.csv"
    bill.write_text(focus_csv(focus_frame(plan, problem, catalog, date(2027, 1, 1))))
    result = actuals(plan, problem, catalog, read_focus_billing(bill), date(2027, 1, 1))
    lines = result.lines
    assert set(lines["status"]) == {"matched"} and set(lines["pricing"]) == {"reserved"}
    assert len(lines) == 12
    january = lines[lines["month"] == "2027-01"].iloc[0]
    assert january.planned_usd == pytest.approx(4464.0)
    assert january.actual_hours == pytest.approx(1488.0)
    t = result.totals()
    assert t["actual_usd"] == pytest.approx(52_560.0)
    assert all(abs(t[c]) < 1e-6 for c in (*CATEGORIES, "variance_usd"))


def _planned(provider, region, instance, pricing, accelerator, usd, hours, offering):
    return {
        "provider": provider,
        "region": region,
        "instance_type": instance,
        "pricing": pricing,
        "accelerator": accelerator,
        "offering": offering,
        "month": "2026-05",
        "line": 0,
        "planned_usd": usd,
        "planned_hours": hours,
    }


def test_the_three_clouds_samples_match_plan_lines_by_provider_sku_region_and_month():
    # Plan lines (May 2026) with the keys of rows of the stored samples
    # (tests/data/focus/README.md), each its own accelerator (no mix):
    #   A aws us-west-2 m6i.large reserved, 1 h at $0.064032: billed the same (row 5):
    #     no variance.
    #   B azure westus2 Standard_D4s_v5 on demand, 1 h at the list $0.192065: billed
    #     $0.172859 for 1 h (row 4): price -$0.019206.
    #   C gcp us-central1 e2-standard-4 on demand, 2 h at $0.1344 = $0.2688: billed 1 h,
    #     $0.120962 (row 6): volume (1 - 2) x $0.1344 = -$0.1344, price $0.120962 -
    #     $0.2688 + $0.1344 = -$0.013438.
    #   D gcp asia-southeast1 offering "F38B-0ED2-3093" reserved, 1 h at $0.089378: the
    #     billed row (row 2) has its InstanceType removed, so it matches by SkuId.
    # Everything else in the three files is unplanned: its EffectiveCost, 49.418038 +
    # 162.607333 + 434.844511 - (0.064032 + 0.172859 + 0.120962 + 0.089378) = 646.422651.
    data = ROOT / "tests" / "data" / "focus"
    frames = [read_focus_billing(data / f"{c}_focus_1_2_excerpt.csv") for c in ("aws", "azure")]
    gcp = read_focus_billing(data / "gcp_focus_1_2_excerpt.csv")
    gcp.loc[gcp["row"] == 2, "instance_type"] = ""  # as if the export had no SkuPriceDetails
    billed = pd.concat([*frames, gcp], ignore_index=True)
    planned = pd.DataFrame(
        [
            _planned("aws", "us-west-2", "m6i.large", "reserved", "a", 0.064032, 1.0, "m6i"),
            _planned("azure", "westus2", "Standard_D4s_v5", "on_demand", "b", 0.192065, 1, "d4"),
            _planned("gcp", "us-central1", "e2-standard-4", "on_demand", "c", 0.2688, 2.0, "e2"),
            _planned(
                "gcp", "asia-southeast1", "e2-standard-4", "reserved", "d", 0.089378, 1.0,
                "F38B-0ED2-3093",
            ),
        ]
    )  # fmt: skip
    keyed = key_billed(billed_in_usd(billed, load_catalog()), planned)
    by_sku = keyed[(keyed["provider"] == "gcp") & (keyed["row"] == 2)]
    assert by_sku["instance_type"].tolist() == ["e2-standard-4"]  # from the plan offering
    lines = compare(planned, keyed[(keyed["cost_usd"] != 0) | (keyed["hours"] != 0)])
    matched = lines[lines["status"] == "matched"].set_index(["provider", "region"])
    assert len(matched) == 4
    assert matched.loc[("aws", "us-west-2"), "variance_usd"] == pytest.approx(0.0, abs=1e-12)
    assert matched.loc[("azure", "westus2"), "price_usd"] == pytest.approx(-0.019206)
    c = matched.loc[("gcp", "us-central1")]
    assert (c.volume_usd, c.price_usd) == pytest.approx((-0.1344, -0.013438))
    assert matched.loc[("gcp", "asia-southeast1"), "variance_usd"] == pytest.approx(0.0, abs=1e-12)
    assert set(lines["status"]) == {"matched", "unplanned"}  # nothing planned went unbilled
    assert lines["unplanned_usd"].sum() == pytest.approx(646.422651, abs=1e-9)
