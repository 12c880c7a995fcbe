"""Re-solving from a baseline: rebase, stability rows, the diff and its price/plan split.

Tiny problems as in tests/core/test_model.py: capacities come from measured throughput (an
H100 instance serves 10 requests/s, an L4 instance 2), one month = 730 hours. Prices:
acme/us-east/h1 $4/h on-demand ($3 1-year reserved), acme/us-east/l4 $1/h; server
box-h100 (8 x H100 = 80 requests/s) $200,000, no lead time, hosting and power free.
"""

from __future__ import annotations

import copy
import json

import pytest
import yaml
from typer.testing import CliRunner

from conftest import ROOT, SHARED_DATA, offering, problem, serve, units
from solver.analyses.diff import diff_plans, prices_of_catalog
from solver.analyses.resolve import rebase, resolve
from solver.cli import app
from solver.errors import ProcureError
from solver.inputs.catalog import load_catalog
from solver.inputs.prices import apply_prices, read_price_update
from solver.inputs.problem import parse_problem
from solver.outputs.text import diff_text
from solver.plan import LineItem, Plan, Totals
from solver.solve import solve_problem

HOURS = 730.0
H1 = offering("h1", "h100-sxm", 1, 4.0, spot=2.0, r1=3.0, r3=2.0)
L4 = offering("l4", "l4", 1, 1.0, spot=0.4, nvlink=False)
# the price change of these tests: H100 $4 -> $4.50/h, L4 $1 -> $0.70/h
H1_NEW = dict(H1, on_demand_usd_per_hour=4.5)
L4_NEW = dict(L4, on_demand_usd_per_hour=0.7)
SNAPSHOTS = SHARED_DATA / "external" / "skypilot-catalog" / "anycloud-sh-catalog"
GCP_OLD = SNAPSHOTS / "69b86f0bec0f152ed452516e6fac70ff53106a5a" / "gcp" / "vms.csv"
GCP_NEW = SNAPSHOTS / "62ff0a987e0c257a89235415d2877812fb1aaf29" / "gcp" / "vms.csv"


def monthly(n: int, months: float = 1.0) -> dict:
    return {
        "horizon_months": n * months,
        "periods": [{"name": f"m{i + 1}", "months": months} for i in range(n)],
    }


def test_price_cut_brings_l4_into_the_plan(tiny_catalog, tmp_path):
    # 20 requests/s for one month. Old prices: 2 H100 = $8/h beats 10 L4 = $10/h:
    # baseline 2 x $4 x 730 h = $5,840.
    # New prices (H100 $4.50, L4 $0.70): 10 L4 = $7/h, 1 H100 + 5 L4 = $8/h, 2 H100 = $9/h,
    # so the re-solve takes 10 L4: $7 x 730 = $5,110.
    # Price effect: the old plan at new prices 2 x $4.50 x 730 = $6,570, minus $5,840 = +$730.
    # Plan effect: $5,110 - $6,570 = -$1,460. Together: -$730 = $5,110 - $5,840.
    p = problem([serve(20)])
    old = tiny_catalog([H1, L4])
    base = solve_problem(p, old)
    assert base.total_cost_usd == pytest.approx(5840)
    prices = tmp_path / "prices.csv"
    prices.write_text(
        "provider,region,offering,mode,price,date\n"
        "acme,us-east,h1,on_demand,4.50,2026-12-01\n"
        "acme,us-east,l4,on_demand,0.70,2026-12-01\n"
    )
    new = apply_prices(old, read_price_update(prices)).catalog
    r = resolve(p, base, old, new)
    assert units(r.plan) == {"acme/us-east/l4": 10}
    assert r.plan.total_cost_usd == pytest.approx(5110)
    d = r.diff
    assert [c.new_offering for c in d.added] == ["acme/us-east/l4"]
    assert [c.old_offering for c in d.removed] == ["acme/us-east/h1"]
    assert d.old_at_new_prices_usd == pytest.approx(6570)
    assert d.price_effect_usd == pytest.approx(730)
    assert d.plan_effect_usd == pytest.approx(-1460)
    assert d.total_change_usd == pytest.approx(-730)
    assert "acme/us-east/l4" in diff_text(d)


def test_diff_of_two_plans_alone_is_marked_approximate(tiny_catalog):
    # diff_plans(old, new) with nothing but the two plans: the old H100s are not priced in
    # the new plan (it has none), so their price is taken as unchanged: price effect $0,
    # plan effect the whole -$730, and it says so (0 of 1 old line items, not exact).
    # With the new catalog's prices the H100 is re-priced ($4 -> $4.50): +$730 as above,
    # still marked approximate; the model's pricing (resolve, procure diff) is the exact one.
    p = problem([serve(20)])
    base = solve_problem(p, tiny_catalog([H1, L4]))
    new_cat = tiny_catalog([H1_NEW, L4_NEW])
    new = solve_problem(p, new_cat)
    blind = diff_plans(base, new)
    assert blind.price_effect_usd == pytest.approx(0.0)
    assert blind.plan_effect_usd == pytest.approx(-730)
    assert not blind.price_exact
    assert blind.price_basis.startswith("approximate: new prices inferred from the new plan")
    assert "for 0 of 1 priced line items" in blind.price_basis
    assert "approximate" in diff_text(blind)
    priced = diff_plans(base, new, new_prices=prices_of_catalog(new_cat))
    assert priced.price_effect_usd == pytest.approx(730)
    assert priced.plan_effect_usd == pytest.approx(-1460)
    assert not priced.price_exact and "for 1 of 1 priced" in priced.price_basis


def three_months(tiny_catalog):
    # Three one-month periods of 20 requests/s: the baseline rents 2 H100 in each, $5,840 a
    # month, $17,520 in all.
    p = problem([serve(20)], **monthly(3))
    base = solve_problem(p, tiny_catalog([H1, L4]))
    assert base.total_cost_usd == pytest.approx(3 * 5840)
    return p, base


def test_max_changes_limits_the_diff_at_a_price(tiny_catalog):
    # At the new prices each month would switch to 10 L4 ($5,110 instead of $6,570): the
    # unconstrained re-solve changes 6 line items (3 removed, 3 added), $15,330.
    # --max-changes 2 allows one month to switch (its H100 removed, its L4 added; a partial
    # switch, 1 H100 + 5 L4 at $5,840, also costs 2 changes and saves less):
    # 2 x $6,570 + $5,110 = $18,250 >= $15,330. --max-changes 0 keeps the baseline: $19,710.
    p, base = three_months(tiny_catalog)
    old, new = tiny_catalog([H1, L4]), tiny_catalog([H1_NEW, L4_NEW])
    free = resolve(p, base, old, new)
    assert free.diff.n_changes == 6 and free.plan.total_cost_usd == pytest.approx(15_330)
    two = resolve(p, base, old, new, max_changes=2)
    assert two.diff.n_changes <= 2
    assert two.plan.total_cost_usd == pytest.approx(18_250)
    assert two.plan.total_cost_usd >= free.plan.total_cost_usd
    assert two.stability.unconstrained_cost_usd == pytest.approx(15_330)
    assert any(b.family == "max_changes" for b in two.plan.binding)
    none = resolve(p, base, old, new, max_changes=0)
    assert none.diff.n_changes == 0 and none.plan.total_cost_usd == pytest.approx(19_710)
    # the price effect is the same whatever the limit: 3 x 2 x $0.50 x 730 = $2,190
    assert two.diff.price_effect_usd == pytest.approx(2190)


def test_max_changes_not_binding_needs_no_indicators(tiny_catalog):
    # With a limit of 6 the unconstrained optimum (6 changes) already complies.
    p, base = three_months(tiny_catalog)
    r = resolve(p, base, tiny_catalog([H1, L4]), tiny_catalog([H1_NEW, L4_NEW]), max_changes=6)
    assert r.stability.rows_needed is False
    assert r.plan.total_cost_usd == pytest.approx(15_330)


@pytest.mark.parametrize(("usd", "expected"), [(100.0, 15_330), (150.0, 19_710)])
def test_switching_cost(tiny_catalog, usd, expected):
    # Switching one month moves 12 units (2 H100 off, 10 L4 on) and saves $1,460:
    # worth it when 12 x X < $1,460, i.e. X < $121.67 per unit.
    # $100: all three months switch ($15,330 of cost + $3,600 of switching in the objective).
    # $150: none do ($19,710).
    p, base = three_months(tiny_catalog)
    r = resolve(
        p, base, tiny_catalog([H1, L4]), tiny_catalog([H1_NEW, L4_NEW]), switching_cost_usd=usd
    )
    assert r.plan.total_cost_usd == pytest.approx(expected)
    if expected == 15_330:
        assert r.plan.objective == pytest.approx(15_330 + 3 * 12 * usd)


def test_owned_servers_kept_and_used_before_renting(tiny_catalog):
    # 90 requests/s for 36 months in three 12-month periods m1..m3, on-demand or owned.
    # Baseline: one box (80 req/s, $200,000) bought in m1 plus 1 rented H100 (10 req/s,
    # $4 x 8,760 h = $35,040 a period): $305,120 (two boxes $400,000; renting 9 H100s
    # $946,080).
    # Re-solve as of m2 with the H100 at $3/h: the box is now existing fleet (no re-purchase,
    # no cost: hosting and power are free in the test site) and serves 80 req/s; one H100 is
    # rented for the rest: 2 x $3 x 8,760 = $52,560 (not 9 H100s, not a second box).
    # Spent before m2: $200,000 + $35,040 = $235,040. The old plan from m2 on: $70,080 at $4,
    # $52,560 at $3: price effect -$17,520, plan effect 0.
    p = problem(
        [serve(90)],
        **{**monthly(3, months=12.0), "modes": ["on_demand", "owned"]},
    )
    old = tiny_catalog([H1])
    base = solve_problem(p, old)
    assert base.total_cost_usd == pytest.approx(305_120)
    assert units(base, "purchase") == {"box-h100@colo-us": 1}
    new = tiny_catalog([dict(H1, on_demand_usd_per_hour=3.0)])
    r = resolve(p, base, old, new, as_of="m2")
    assert [(s.server, s.site, s.units) for s in r.rebased.carried_servers] == [
        ("box-h100", "colo-us", 1)
    ]
    assert r.rebased.problem.horizon_months == 24
    assert r.rebased.spent_before_usd == pytest.approx(235_040)
    assert units(r.plan, "purchase") == {}
    assert units(r.plan, "use") == {"box-h100@colo-us": 2}  # one box in each of m2, m3
    assert units(r.plan) == {"acme/us-east/h1": 2}  # one H100 in each of m2, m3
    assert r.plan.total_cost_usd == pytest.approx(52_560)
    assert r.diff.n_changes == 0
    assert r.diff.price_effect_usd == pytest.approx(-17_520)
    assert r.diff.plan_effect_usd == pytest.approx(0.0, abs=1e-6)


def test_reservation_made_before_as_of_becomes_a_commitment(tiny_catalog):
    # 10 requests/s (one H100) for 24 months in four 6-month periods, on-demand or 1-year
    # reserved ($3/h, 8,760 h a term = $26,280). Baseline: reserve in q1 (covers q1, q2) and
    # in q3 (q3, q4): $52,560 (on-demand all along $70,080).
    # As of q2 the q1 reservation has 12 - 6 = 6 months left: an existing commitment that
    # covers q2; only the q3 reservation remains a decision, and prices are unchanged, so the
    # re-solve keeps it: nothing changes. Its cost: 6 months x 730 h x $3 = $13,140 existing
    # + $26,280 = $39,420.
    p = problem(
        [serve(10)],
        **{
            "horizon_months": 24,
            "periods": [{"name": f"q{i}", "months": 6} for i in range(1, 5)],
            "modes": ["on_demand", "reserved_1y"],
        },
    )
    cat = tiny_catalog([H1])
    base = solve_problem(p, cat)
    assert base.total_cost_usd == pytest.approx(52_560)
    r = resolve(p, base, cat, cat, as_of="q2")
    carried = r.rebased.carried_reservations
    assert [(c.offering, c.mode, c.units, c.months_remaining) for c in carried] == [
        ("acme/us-east/h1", "reserved_1y", 1, 6.0)
    ]
    assert units(r.plan, "reservation") == {"acme/us-east/h1": 1}
    assert [i.period for i in r.plan.line_items if i.item == "reservation"] == ["q3"]
    assert r.plan.total_cost_usd == pytest.approx(39_420)
    assert r.diff.n_changes == 0 and r.diff.total_change_usd == pytest.approx(0.0, abs=1e-6)


def fake_plan(items: list[LineItem], periods: list[str]) -> Plan:
    by_period = {p: sum(i.cost_usd for i in items if i.period == p) for p in periods}
    return Plan(
        problem="seed-2m-13b",
        status="optimal",
        objective=0.0,
        objective_kind="min_cost",
        total_cost_usd=sum(by_period.values()),
        total_co2e_t=0.0,
        gap=0.0,
        solver="test",
        solve_seconds=0.0,
        line_items=items,
        totals=Totals(
            by_period=by_period, by_provider={}, by_mode={}, by_workload={}, co2e_t_by_workload={}
        ),
    )


def training_item(period: str) -> LineItem:
    return LineItem(
        item="training",
        period=period,
        provider="acme",
        region="us-east",
        offering="acme/us-east/h1",
        accelerator="h100-sxm",
        mode="on_demand",
        units=64,
        accelerators=64,
        workload="pretrain-13b",
        hours=100,
        cost_usd=1000,
        co2e_t=1.0,
        start_period="m01-03",
    )


def test_rebase_drops_finished_training_and_refuses_bad_cuts(tiny_catalog):
    # The seed trains in m01-03 and serves from m04-15: as of m04-15 training is done
    # ($1,000 and 1 t spent), the budget left is $2,000,000 - $1,000 = $1,999,000.
    seed = yaml.safe_load((ROOT / "problems" / "seed-2m-13b.yaml").read_text())
    p = parse_problem(seed)
    cat = tiny_catalog([H1])
    periods = ["m01-03", "m04-15", "m16-27", "m28-36"]
    done = rebase(p, fake_plan([training_item("m01-03")], periods), cat, "m04-15")
    assert done.dropped_workloads == ["pretrain-13b"]
    assert [w.name for w in done.problem.workloads] == ["chat-13b"]
    assert done.problem.budget_usd == pytest.approx(1_999_000)
    assert done.co2e_before_t == pytest.approx(1.0)
    # a job running on both sides of as-of cannot be cut
    across = fake_plan([training_item("m01-03"), training_item("m04-15")], periods)
    with pytest.raises(ProcureError, match="runs across") as err:
        rebase(p, across, cat, "m04-15")
    assert err.value.field == "--as-of"
    with pytest.raises(ProcureError) as err:
        rebase(p, across, cat, "m99")
    assert err.value.field == "--as-of" and "m04-15" in err.value.fix
    # a baseline from another problem (a period this one lacks) is refused
    stray = fake_plan([training_item("q1")], ["q1"])
    with pytest.raises(ProcureError, match="not a period") as err:
        rebase(p, stray, cat, "m04-15")
    assert err.value.field == "--baseline"


@pytest.mark.skipif(not GCP_NEW.is_file(), reason="../shared/data (GCP snapshots) not present")
def test_gcp_snapshots_drive_a_real_resolve():
    # The seed scenario on GCP only, with training and serving allowed on spot capacity.
    # Baseline: solved at the prices of the older snapshot (69b86f0b, 2026-04-02). The newer
    # snapshot (62ff0a98, 2026-05-20) moves GCP spot prices; the re-solve at those prices
    # costs no more than the old plan at the new prices (plan effect <= 0).
    # The price effect, re-priced line by line from the two catalogs (not from the diff):
    # every baseline line is spot, each costs units x hours x its spot price, so the price
    # effect is the sum of units x hours x (new spot - old spot). On this baseline: the
    # a3-highgpu-8g trains 5 x 2,108.50 h = 10,542.51 unit-hours at $10.76162 -> $9.37674
    # (-$14,600.11) and the a3-highgpu-1g serves 112,672 unit-hours at $1.34520 -> $1.17209
    # (-$19,504.65): -$34,104.76.
    shipped = load_catalog()
    old = apply_prices(shipped, read_price_update(GCP_OLD, provider="gcp")).catalog
    update = apply_prices(old, read_price_update(GCP_NEW, provider="gcp"))
    assert set(update.report.with_status("changed")["mode"]) == {"spot"}
    seed = yaml.safe_load((ROOT / "problems" / "seed-2m-13b.yaml").read_text())
    data = copy.deepcopy(seed)
    data["providers"] = ["gcp"]
    # at catalog prices: the spot snapshot is the case (under the default guard GCP's spot
    # prices, third_party, band 0.37, give way to its commitments, whose terms split the
    # periods, a baseline resolve does not carry yet)
    data["price_guard"] = "none"
    for w in data["workloads"]:
        w["interruptible"] = True
    p = parse_problem(data)
    base = solve_problem(p, old)
    r = resolve(p, base, old, update.catalog)
    d = r.diff
    assert d.old_total_usd == pytest.approx(base.total_cost_usd, rel=1e-9)
    assert {i.mode for i in base.line_items} == {"spot"}
    spot_old, spot_new = (
        c.offerings.set_index("offering_id")["spot_usd_per_hour"] for c in (old, update.catalog)
    )
    repriced = sum(
        i.units * i.hours * (spot_new[i.offering] - spot_old[i.offering]) for i in base.line_items
    )
    assert abs(repriced) > 1.0  # the snapshot moved prices the baseline pays
    assert d.price_effect_usd == pytest.approx(repriced, rel=1e-9)
    assert d.old_at_new_prices_usd == pytest.approx(base.total_cost_usd + repriced, rel=1e-9)
    assert d.plan_effect_usd <= 1e-6
    assert all(c.provider == "gcp" for c in d.added + d.removed + d.changed)


# --------------------------------------------------------------------------- CLI

runner = CliRunner()
PROBLEM = """\
name: tiny
# compute only: the re-solves' costs and budgets below are compute worked by hand
costs: none
horizon_months: 3
periods: [{name: m1, months: 1}, {name: m2, months: 1}, {name: m3, months: 1}]
modes: [on_demand]
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
    max_utilisation: 1  # capacity = demand, so the changes below are plain arithmetic
"""


@pytest.fixture
def files(tmp_path):
    from conftest import write_catalog

    cat = write_catalog(tmp_path / "cat", [H1, L4])
    prob = tmp_path / "p.yaml"
    prob.write_text(PROBLEM)
    prices = tmp_path / "prices.csv"
    prices.write_text(
        "provider,region,offering,mode,price,date\n"
        "acme,us-east,h1,on_demand,4.50,2026-12-01\n"
        "acme,us-east,l4,on_demand,0.70,2026-12-01\n"
        "acme,us-east,h1,spot,20,2026-12-01\n"  # x10: suspicious, not taken
    )
    base = tmp_path / "base.json"
    result = runner.invoke(
        app, ["solve", str(prob), "--catalog", str(cat), "--format", "json", "--out", str(base)]
    )
    assert result.exit_code == 0, result.output
    return cat, prob, prices, base, tmp_path


def test_cli_resolve_as_of_with_max_changes(files):
    # As of m2 (m1 is spent: $5,840), months m2 and m3 remain. Unconstrained both switch to
    # 10 L4 (4 changes, $10,220); --max-changes 2 lets one switch: $6,570 + $5,110 = $11,680.
    cat, prob, prices, base, tmp = files
    args = ["resolve", str(prob), "--catalog", str(cat), "--baseline", str(base)]
    args += ["--prices", str(prices), "--as-of", "m2", "--max-changes", "2", "--format", "json"]
    args += ["--plan-out", str(tmp / "new.json"), "--problem-out", str(tmp / "p2.yaml")]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["plan"]["total_cost_usd"] == pytest.approx(11_680)
    assert doc["diff"]["n_changes"] <= 2
    assert doc["price_update"]["counts"]["suspicious"] == 1
    assert doc["carried"]["spent_before_usd"] == pytest.approx(5_840)
    # the written plan and problem chain into the next re-solve
    new_plan = json.loads((tmp / "new.json").read_text())
    assert new_plan["total_cost_usd"] == pytest.approx(11_680)
    nxt = runner.invoke(
        app,
        [
            "resolve",
            str(tmp / "p2.yaml"),
            "--catalog",
            str(cat),
            "--baseline",
            str(tmp / "new.json"),
            "--prices",
            str(prices),
            "--as-of",
            "m3",
        ],
    )
    assert nxt.exit_code == 0, nxt.output
    assert "what changed" in nxt.stdout


def test_cli_diff_and_errors(files):
    cat, prob, prices, base, tmp = files
    new_plan = tmp / "new.json"
    result = runner.invoke(
        app,
        ["resolve", str(prob), "--catalog", str(cat), "--baseline", str(base)]
        + ["--prices", str(prices), "--plan-out", str(new_plan)],
    )
    assert result.exit_code == 0, result.output
    assert "price effect +$2,190.00" in result.stdout  # 3 x 2 x $0.50 x 730
    diff = runner.invoke(app, ["diff", str(base), str(new_plan), "--format", "json"])
    assert diff.exit_code == 0, diff.output
    assert json.loads(diff.stdout)["n_changes"] == 6
    # bad input: one message naming the file and the fix, exit 2
    bad = runner.invoke(
        app,
        ["resolve", str(prob), "--catalog", str(cat), "--baseline", str(base)]
        + ["--prices", str(prices), "--as-of", "m9"],
    )
    assert bad.exit_code == 2
    assert "p.yaml: --as-of" in bad.output and "fix:" in bad.output
    missing = runner.invoke(app, ["diff", str(tmp / "nope.json"), str(base)])
    assert missing.exit_code == 2 and "nope.json" in missing.output
    both = runner.invoke(
        app,
        ["resolve", str(prob), "--catalog", str(cat), "--baseline", str(base)]
        + ["--prices", str(prices), "--max-changes", "1", "--switching-cost-usd", "5"],
    )
    assert both.exit_code == 2 and "not both" in both.output


def test_cli_resolve_infeasible_exits_3(files):
    # The baseline (2 H100 a month, $17,520) fits a budget of $17,600. With the H100 at
    # $4.50 and no change allowed it costs 3 x $6,570 = $19,710: no feasible plan, exit 3.
    cat, prob, prices, base, tmp = files
    squeezed = tmp / "squeezed.yaml"
    squeezed.write_text(PROBLEM + "budget_usd: 17600\n")
    result = runner.invoke(
        app,
        ["solve", str(squeezed), "--catalog", str(cat), "--format", "json", "--out", str(base)],
    )
    assert result.exit_code == 0, result.output
    prices.write_text(
        "provider,region,offering,mode,price,date\nacme,us-east,h1,on_demand,4.5,2026-12-01\n"
    )
    result = runner.invoke(
        app,
        ["resolve", str(squeezed), "--catalog", str(cat), "--baseline", str(base)]
        + ["--prices", str(prices), "--max-changes", "0"],
    )
    assert result.exit_code == 3, result.output


# --------------------------------------------------------------------------- the split
# One definition (README, Commands; solver/analyses/diff.py: split_change): price effect =
# the old plan's decisions at the new prices - the old plan at the old prices; plan effect
# = the new plan - the old plan's decisions at the new prices; resolve and diff alike.

SPLIT_PRICES = (
    "provider,region,offering,mode,price,date\n"
    "acme,us-east,h1,on_demand,6.50,2026-12-01\n"
    "acme,us-east,l4,on_demand,1.20,2026-12-01\n"
)


def _effects(diff: dict) -> tuple[float, float, float]:
    return diff["price_effect_usd"], diff["plan_effect_usd"], diff["total_change_usd"]


def test_diff_and_resolve_split_a_change_alike(tmp_path):
    # Two workloads, one 730-hour month. chat 20 requests/s: 2 H100 $8/h < 1 H100 + 5 L4
    # $9/h < 10 L4 $10/h; small 5 requests/s: 3 L4 $3/h < 1 H100 $4/h.
    # Old plan: (2 x $4 + 3 x $1) x 730 = $8,030.
    # New prices H100 $6.50, L4 $1.20: chat 10 L4 $12/h < 1 H100 + 5 L4 $12.50 < 2 H100 $13;
    # small keeps 3 L4 ($3.60 < $6.50). New plan: 13 x $1.20 x 730 = $11,388.
    # The old plan's decisions at the new prices: (2 x $6.50 + 3 x $1.20) x 730 = $12,118.
    # Price effect $12,118 - $8,030 = +$4,088; plan effect $11,388 - $12,118 = -$730;
    # together +$3,358 = $11,388 - $8,030.
    # Re-priced from the new plan's line items alone (the L4 only: 1 of 2 old lines), the
    # H100s would stay at $4: old at new $8,468, price effect +$438, plan effect +$2,920,
    # the sign flipped: what procure diff without --prices used to print.
    from conftest import write_catalog

    cat = write_catalog(tmp_path / "cat", [H1, L4])
    data = {
        "name": "split",
        "horizon_months": 1,
        "modes": ["on_demand"],
        "workloads": [serve(20), serve(5, name="small")],
    }
    prob = tmp_path / "p.yaml"
    prob.write_text(yaml.safe_dump(data))
    prices = tmp_path / "prices.csv"
    prices.write_text(SPLIT_PRICES)
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    solved = runner.invoke(
        app, ["solve", str(prob), "--catalog", str(cat), "--format", "json", "--out", str(old)]
    )
    assert solved.exit_code == 0, solved.output
    resolved = runner.invoke(
        app,
        ["resolve", str(prob), "--catalog", str(cat), "--baseline", str(old)]
        + ["--prices", str(prices), "--format", "json", "--plan-out", str(new)],
    )
    assert resolved.exit_code == 0, resolved.output
    by_resolve = json.loads(resolved.stdout)["diff"]
    assert by_resolve["old_total_usd"] == pytest.approx(8030)
    assert by_resolve["old_at_new_prices_usd"] == pytest.approx(12_118)
    assert by_resolve["new_total_usd"] == pytest.approx(11_388)
    assert _effects(by_resolve) == pytest.approx((4088, -730, 3358))
    assert by_resolve["price_exact"]

    # the API's resolve, the CLI's diff without and with --prices: the same split
    old_cat = load_catalog(cat)
    new_cat = apply_prices(old_cat, read_price_update(prices)).catalog
    base = Plan.model_validate(json.loads(old.read_text()))
    api = resolve(parse_problem(data), base, old_cat, new_cat).diff.model_dump(mode="json")
    runs = {"resolve (API)": api}
    for name, extra in (("diff", []), ("diff --prices", ["--prices", str(prices)])):
        result = runner.invoke(app, ["diff", str(old), str(new), "--format", "json", *extra])
        assert result.exit_code == 0, result.output
        runs[name] = json.loads(result.stdout)
    for name, d in runs.items():
        assert _effects(d) == pytest.approx(_effects(by_resolve), abs=0.005), name
        assert d["old_at_new_prices_usd"] == pytest.approx(12_118), name
        assert d["price_exact"] and d["price_basis"].startswith("exact"), name
        # they sum to the change, to the cent and beyond
        assert abs(d["price_effect_usd"] + d["plan_effect_usd"] - d["total_change_usd"]) < 1e-9
    table = runner.invoke(app, ["diff", str(old), str(new)])
    assert "price effect +$4,088.00" in table.stdout
    assert "plan effect  -$730.00" in table.stdout
    assert "the new plan's own catalog" in table.stdout

    # two plans alone: re-priced line by line; with every old line priced (the new
    # catalog's prices) it gives the same split here (rent is price x units x hours), with
    # the new plan's line items alone (1 of 2 lines) it does not, and says so
    after = Plan.model_validate(json.loads(new.read_text()))
    full = diff_plans(base, after, new_prices=prices_of_catalog(new_cat))
    assert (full.price_effect_usd, full.plan_effect_usd) == pytest.approx((4088, -730))
    assert "for 2 of 2 priced line items" in full.price_basis and not full.price_exact
    blind = diff_plans(base, after)
    assert (blind.price_effect_usd, blind.plan_effect_usd) == pytest.approx((438, 2920))
    assert "for 1 of 2 priced line items" in blind.price_basis and not blind.price_exact


def test_diff_says_when_its_prices_are_not_the_new_plans(tmp_path):
    # The new plan solved on the old catalog (nothing changed), diffed with --prices: the
    # old plan at those prices is dearer, so the plan effect holds the prices the new plan
    # never saw, and a note says so.
    from conftest import write_catalog

    cat = write_catalog(tmp_path / "cat", [H1, L4])
    prob = tmp_path / "p.yaml"
    prob.write_text(PROBLEM)
    prices = tmp_path / "prices.csv"
    prices.write_text(SPLIT_PRICES)
    plan = tmp_path / "plan.json"
    args = ["solve", str(prob), "--catalog", str(cat), "--format", "json", "--out", str(plan)]
    assert runner.invoke(app, args).exit_code == 0
    same = runner.invoke(app, ["diff", str(plan), str(plan), "--format", "json"])
    assert _effects(json.loads(same.stdout)) == pytest.approx((0, 0, 0))
    other = runner.invoke(
        app, ["diff", str(plan), str(plan), "--prices", str(prices), "--format", "json"]
    )
    assert other.exit_code == 0, other.output
    d = json.loads(other.stdout)
    # 3 months x 2 H100 x ($6.50 - $4) x 730 h = $10,950
    assert _effects(d) == pytest.approx((10_950, -10_950, 0))
    assert any("solved at other prices" in n for n in d["notes"])


def test_seed_diff_gives_the_resolve_split(seed_solved, tmp_path):
    # The seed, every offering its plan uses +30% (on demand): resolve's split and diff's,
    # with --prices and without, on resolve's own output plan, agree to the cent.
    import csv

    code, output = seed_solved
    assert code == 0, output
    old = tmp_path / "old.json"
    old.write_text(output)
    plan = Plan.model_validate(json.loads(output))
    offerings = load_catalog(None).offerings
    prices = tmp_path / "prices.csv"
    with prices.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["provider", "region", "offering", "mode", "price", "date"])
        for offering_id, mode in sorted({(i.offering, i.mode) for i in plan.line_items}):
            row = offerings.loc[offering_id]
            price = round(1.3 * float(row[f"{mode}_usd_per_hour"]), 6)
            out.writerow([row["provider"], row["region"], offering_id, mode, price, "2026-12-01"])
    new = tmp_path / "new.json"
    problem_file = str(ROOT / "problems" / "seed-2m-13b.yaml")
    resolved = runner.invoke(
        app,
        ["resolve", problem_file, "--baseline", str(old), "--prices", str(prices)]
        + ["--format", "json", "--plan-out", str(new), "--quiet"],
    )
    assert resolved.exit_code == 0, resolved.output
    by_resolve = json.loads(resolved.stdout)["diff"]
    assert by_resolve["price_effect_usd"] > 0 > by_resolve["plan_effect_usd"]
    for extra in ([], ["--prices", str(prices)]):
        result = runner.invoke(app, ["diff", str(old), str(new), "--format", "json", *extra])
        assert result.exit_code == 0, result.output
        d = json.loads(result.stdout)
        assert _effects(d) == pytest.approx(_effects(by_resolve), abs=0.005), extra
        assert d["old_at_new_prices_usd"] == pytest.approx(
            by_resolve["old_at_new_prices_usd"], abs=0.005
        )
        assert abs(d["price_effect_usd"] + d["plan_effect_usd"] - d["total_change_usd"]) < 1e-6
