"""``procure actuals`` and ``procure watch`` on a tiny plan worked by hand.

The plan (tests/analyses/test_resolve.py's tiny problem, dated from 2027-01): an H100
instance serves 10 requests/s, demand is 20, so 2 acme h1 instances at $4/h every month,
on the calendar's hours: January 2 x 744 h x $4 = $5,952, February 2 x 672 h = $5,376,
March $5,952 ($17,280 in all). An L4 instance serves 2 requests/s at $1/h: 10 of them
cost 10 x 744 x $1 = $7,440 in January, more than the H100s at any price up to $5/h.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import offering, write_catalog
from solver.cli import app

runner = CliRunner()
PROBLEM = """\
name: tiny
horizon_months: 3
start: 2027-01
periods: [{name: m1, months: 1}, {name: m2, months: 1}, {name: m3, months: 1}]
modes: [on_demand]
# compute only: the variance is worked by hand against the plan's compute (the bill
# carries compute rows alone)
costs: none
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
HEADER = (
    "ProviderName,BillingCurrency,ChargePeriodStart,ChargeCategory,EffectiveCost,"
    "PricingQuantity,PricingUnit,RegionId,SkuId,PricingCategory,SkuPriceDetails\n"
)


def _bill_row(month: str, instance: str, usd: float, hours: float, currency="USD") -> str:
    details = '"{""InstanceType"": ""' + instance + '""}"'
    return (
        f"acme,{currency},{month}-01T00:00:00Z,Usage,{usd},{hours},Hours,us-east,"
        f"acme/us-east/{instance},Standard,{details}\n"
    )


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The catalog, the solved plan and the bill, made once for the module (tests only
    add files beside them)."""
    tmp_path = tmp_path_factory.mktemp("tiny")
    cat = write_catalog(
        tmp_path / "cat",
        [offering("h1", "h100-sxm", 1, 4.0), offering("l4", "l4", 1, 1.0, nvlink=False)],
    )
    prob = tmp_path / "p.yaml"
    prob.write_text(PROBLEM)
    plan = tmp_path / "plan.json"
    args = ["solve", str(prob), "--catalog", str(cat), "--format", "json", "--out", str(plan)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads(plan.read_text())["total_cost_usd"] == pytest.approx(17_280)
    # The bill: January's 1,488 h of h1 at $4.40 (10% dearer) = $6,547.20; February's h1
    # bill missing; 50 h of l4 in February ($50), which the plan never had.
    bill = tmp_path / "bill.csv"
    bill.write_text(
        HEADER + _bill_row("2027-01", "h1", 6547.20, 1488) + _bill_row("2027-02", "l4", 50, 50)
    )
    return cat, plan, bill, tmp_path


def test_actuals_cli_variance_and_flags(tiny):
    # January matched: price (4.40 - 4.00) x 1,488 h = $595.20, no volume, no mix.
    # February: h1 unbilled -$5,376; l4 unplanned $50. March is after the last month
    # billed: not compared. variance = 6,547.20 + 50 - (5,952 + 5,376) = -$4,730.80
    # = 595.20 + 50 - 5,376.
    cat, plan, bill, tmp = tiny
    result = runner.invoke(app, ["actuals", str(plan), str(bill), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    t = doc["totals"]
    assert t["planned_usd"] == pytest.approx(11_328)
    assert t["actual_usd"] == pytest.approx(6_597.20)
    assert t["price_usd"] == pytest.approx(595.20)
    assert t["volume_usd"] == pytest.approx(0) and t["mix_usd"] == pytest.approx(0)
    assert t["unplanned_usd"] == pytest.approx(50)
    assert t["unbilled_usd"] == pytest.approx(-5_376)
    assert t["variance_usd"] == pytest.approx(-4_730.80)
    assert [(r["month"], r["instance_type"]) for r in doc["unplanned"]] == [("2027-02", "l4")]
    assert [(r["month"], r["instance_type"]) for r in doc["unbilled"]] == [("2027-02", "h1")]
    table = runner.invoke(app, ["actuals", str(plan), str(bill)])
    assert table.exit_code == 0, table.output
    assert "1 billed but not planned" in table.stdout
    assert "1 planned, not billed" in table.stdout
    assert "-$4,730.80" in table.stdout
    csv = runner.invoke(app, ["actuals", str(plan), str(bill), "--format", "csv"])
    assert csv.exit_code == 0 and csv.stdout.startswith("provider,region,instance_type")


def test_actuals_cli_reforecast(tiny):
    # Actual to February, forecast from March. February is the last month billed and
    # bills fewer keys than planned (the h1's $5,376 has no row): it is partial, its h1
    # invoice not in yet, so the run-rate reads January alone: $6,547.20 / $5,952 = 1.1
    # (read as a drop, February's missing bill would have given $6,547.20 / $11,328 =
    # 0.578). March at the plan $5,952, at the run-rate 1.1 x $5,952 + the l4's mean $25 a
    # month = $6,572.20. February's h1 is pending: at the plan and at re-solve $50 +
    # $5,376 = $5,426, at the run-rate $50 + 1.1 x $5,376 = $5,963.60. The re-solve from
    # m3 with nothing bought or reserved: m3 alone, 2 h1 for $5,952, no change.
    cat, plan, bill, tmp = tiny
    args = ["actuals", str(plan), str(bill), "--reforecast", "--format", "json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)["reforecast"]
    flow = {r["month"]: r for r in doc["cash_flow"]}
    assert [flow[m]["kind"] for m in ("2027-01", "2027-02", "2027-03")] == [
        "actual",
        "actual",
        "forecast",
    ]
    assert flow["2027-01"]["actual_usd"] == pytest.approx(6_547.20)  # to the cent
    assert flow["2027-02"]["actual_usd"] == pytest.approx(50)
    assert flow["2027-02"]["pending_usd"] == pytest.approx(5_376)
    assert flow["2027-02"]["at_plan_usd"] == pytest.approx(5_426)
    assert flow["2027-02"]["at_run_rate_usd"] == pytest.approx(5_963.60)
    assert flow["2027-03"]["actual_usd"] is None
    assert flow["2027-03"]["at_plan_usd"] == pytest.approx(5_952)
    assert flow["2027-03"]["at_run_rate_usd"] == pytest.approx(6_572.20)
    assert doc["resolve"]["as_of"] == "m3"
    assert doc["resolve"]["total_cost_usd"] == pytest.approx(5_952)
    assert doc["resolve"]["changes"] == 0
    # the re-solve's cash flow: its own charges in March, the bill (and pending) before
    assert flow["2027-03"]["at_resolve_usd"] == pytest.approx(5_952)
    assert flow["2027-01"]["at_resolve_usd"] == pytest.approx(6_547.20)
    assert doc["totals"]["at_resolve_usd"] == pytest.approx(6_547.20 + 5_426 + 5_952)
    csv = runner.invoke(app, ["actuals", str(plan), str(bill), "--reforecast", "--format", "csv"])
    assert csv.exit_code == 0, csv.output
    columns = (
        "month,kind,plan_usd,actual_usd,at_plan_usd,at_run_rate_usd,at_resolve_usd,pending_usd"
    )
    assert csv.stdout.splitlines()[0] == columns
    assert csv.stdout.splitlines()[3].startswith("2027-03,forecast,")


def test_actuals_cli_bad_input_one_message(tiny):
    cat, plan, bill, tmp = tiny
    no_column = tmp / "no_column.csv"
    no_column.write_text(bill.read_text().replace("RegionId", "Region"))
    result = runner.invoke(app, ["actuals", str(plan), str(no_column)])
    assert result.exit_code == 2
    assert "no_column.csv: RegionId" in result.output and "fix:" in result.output
    assert "Traceback" not in result.output
    xts = tmp / "xts.csv"
    xts.write_text(HEADER + _bill_row("2027-01", "h1", 100, 10, currency="XTS"))
    result = runner.invoke(app, ["actuals", str(plan), str(xts)])
    assert result.exit_code == 2
    assert "xts.csv: row 1, BillingCurrency" in result.output and "fix:" in result.output
    # a plan edited after it was solved fails re-verification: refused, naming the plan
    edited = tmp / "edited.json"
    doc = json.loads(plan.read_text())
    doc["line_items"][0]["cost_usd"] += 100.0
    edited.write_text(json.dumps(doc))
    result = runner.invoke(app, ["actuals", str(edited), str(bill)])
    assert result.exit_code == 2
    assert "edited.json" in result.output and "fix:" in result.output


@pytest.mark.parametrize(
    ("h1_price", "code", "verdict"),
    [
        # $4.10 (+2.5%, within 5%): the H100s still beat the L4s: nothing moved -> 0
        (4.10, 0, "holds"),
        # $4.50 (+12.5%): the line moved beyond 5%, but 2 h1 at $4.50 ($6,696 in January)
        # still beat 10 L4 ($7,440): the plan holds -> 3
        (4.50, 3, "prices_moved"),
        # $7.00 (+75%): 2 h1 cost 2 x 2,160 h x $7 = $30,240 over the 2,160 hours of the
        # three months; 10 L4 cost 10 x 2,160 x $1 = $21,600: the optimum saves 28.6% -> 4
        (7.00, 4, "optimum_moved"),
    ],
)
def test_watch_exit_codes(tiny, h1_price, code, verdict):
    cat, plan, bill, tmp = tiny
    prices = tmp / f"prices-{code}.csv"
    prices.write_text(
        f"provider,region,offering,mode,price,date\nacme,us-east,h1,on_demand,{h1_price},2027-01-15\n"
    )
    args = ["watch", str(plan), "--prices", str(prices), "--threshold-pct", "5"]
    result = runner.invoke(app, [*args, "--format", "json"])
    assert result.exit_code == code, result.output
    doc = json.loads(result.stdout)
    assert doc["verdict"] == verdict and doc["exit_code"] == code
    assert doc["plan_at_new_prices_usd"] == pytest.approx(2 * 2160 * h1_price)
    moved = doc["moved"]
    assert {m["instance_type"] for m in moved} == {"h1"}  # the three months' lines
    assert moved[0]["change_pct"] == pytest.approx((h1_price / 4.0 - 1) * 100)
    if code == 4:
        assert doc["optimum_usd"] == pytest.approx(21_600)
        assert doc["saving_pct"] == pytest.approx((30_240 - 21_600) / 30_240 * 100)
    table = runner.invoke(app, args)
    assert table.exit_code == code
    assert verdict.replace("_", " ") in table.stdout


def test_watch_refuses_a_bad_threshold(tiny):
    cat, plan, bill, tmp = tiny
    prices = tmp / "prices-same.csv"
    prices.write_text("provider,region,offering,mode,price\nacme,us-east,h1,on_demand,4\n")
    result = runner.invoke(
        app, ["watch", str(plan), "--prices", str(prices), "--threshold-pct", "-1"]
    )
    assert result.exit_code == 2
    assert "--threshold-pct" in result.output and "fix:" in result.output
