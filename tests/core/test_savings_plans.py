"""Savings plans (issue 29 part 3): a spend-based commitment as a decision of its own,
beside reservations, worked by hand on the tiny catalog; the problem field refused with
one clear message per bad value."""

from __future__ import annotations

import pytest

from conftest import H1, L4, check, problem, serve
from solver.errors import ProcureError
from solver.outputs.focus import focus_frame, validate_focus
from solver.solve import solve_problem

# Two 12-hour blocks, factors 1.6 and 0.4 (mean 1). One 12-month period: 8,760 h, 4,380 h
# of each block. Workload "a" runs on H100 instances only (10 req/s each, $4/h on
# demand), "b" on L4 instances only (2 req/s each, $1/h):
#   a: 10 req/s on average -> 16 at day (2 H1), 4 at night (1 H1)
#   b: 2.5 req/s on average -> 4 at day (2 L4), 1 at night (1 L4)
# On demand: day $10/h, night $5/h -> ($10 + $5) x 4,380 = $65,700.
BLOCKS = {
    "blocks": [
        {"name": "day", "hours_per_day": 12, "factor": 1.6},
        {"name": "night", "hours_per_day": 12, "factor": 0.4},
    ]
}
BLOCK_HOURS = 4380.0
TERM_HOURS = 8760.0
# The plan's rates: H1 $2.50/h (37.5% off $4), L4 $0.80/h (20% off $1).
RATES = {"acme/us-east/h1": 2.5, "acme/us-east/l4": 0.8}


def _problem(**plan):
    sp = {"provider": "acme", "term": "1y", "rates": RATES, "source": "test rates"}
    sp.update(plan)
    workloads = [
        serve(10, name="a", accelerators=["h100-sxm"]),
        serve(2.5, name="b", accelerators=["l4"]),
    ]
    return problem(workloads, horizon_months=12, load_profile=BLOCKS, savings_plans=[sp])


def _lines(plan, item):
    return [i for i in plan.line_items if i.item == item]


def test_one_commitment_across_two_families_worked_by_hand(tiny_catalog):
    # A commitment of C $/h costs C x 8,760 h. Each dollar of it covers $1 of plan-rate
    # spend per hour, so it saves the on-demand price / the plan rate per hour it is used:
    # H1 4 / 2.5 = 1.6, L4 1 / 0.8 = 1.25; H1 first. Plan-rate spend in use: day 2 H1 +
    # 2 L4 = $5 + $1.6 = $6.6/h, night 1 H1 + 1 L4 = $2.5 + $0.8 = $3.3/h.
    #   C in [0, 2.5]:   H1 day and night: saves 1.6 x 24 h = 38.4 a day per $/h > 24 paid;
    #   C in [2.5, 3.3]: night L4 (1.25 x 12) + day H1 (1.6 x 12) = 34.2 > 24;
    #   C above 3.3:     day H1 only: 1.6 x 12 = 19.2 < 24: not worth it.
    # So C = $3.3/h: night fully covered, day 3.3 / 2.5 = 1.32 H1 covered.
    # Cost: 3.3 x 8,760 = $28,908 committed + day uncovered (2 - 1.32) x $4 + 2 x $1
    # = $4.72/h x 4,380 = $20,673.60 -> $49,581.60 (on demand alone: $65,700).
    plan = solve_problem(_problem(), tiny_catalog([H1, L4]))
    (sp,) = _lines(plan, "savings_plan")
    assert sp.units == pytest.approx(3.3)
    assert sp.mode == "savings_plan_1y" and sp.hours == TERM_HOURS
    assert sp.cost_usd == pytest.approx(3.3 * TERM_HOURS)
    assert plan.total_cost_usd == pytest.approx(28_908 + 4.72 * BLOCK_HOURS)
    assert plan.total_cost_usd == pytest.approx(49_581.60)
    covered = {(i.instance_type, i.block): i.units for i in _lines(plan, "savings_plan_cover")}
    assert covered == pytest.approx(
        {("h1", "day"): 1.32, ("h1", "night"): 1.0, ("l4", "night"): 1.0}
    )
    # each cover line credits its units' on-demand charge: H1 day -1.32 x $4 x 4,380
    h1_day = next(i for i in _lines(plan, "savings_plan_cover") if i.block == "day")
    assert h1_day.cost_usd == pytest.approx(-1.32 * 4 * BLOCK_HOURS)
    ok, detail = check(plan, "savings plan covers at most its commitment")
    assert ok and detail == "2 checked", detail  # day and night of the one period


def test_the_limit_caps_the_commitment(tiny_catalog):
    # max_usd_per_hour 2: both blocks cover 2 / 2.5 = 0.8 H1 (H1 first, as above).
    # 2 x 8,760 = $17,520 + day (2 - 0.8) x 4 + 2 = $6.8/h and night (1 - 0.8) x 4 + 1
    # = $1.8/h, x 4,380 = $37,668 -> $55,188.
    plan = solve_problem(_problem(max_usd_per_hour=2), tiny_catalog([H1, L4]))
    (sp,) = _lines(plan, "savings_plan")
    assert sp.units == pytest.approx(2.0)
    assert plan.total_cost_usd == pytest.approx(17_520 + (6.8 + 1.8) * BLOCK_HOURS)
    ok, _ = check(plan, "savings plan within max_usd_per_hour")
    assert ok


def test_a_limit_of_zero_leaves_everything_on_demand(tiny_catalog):
    # max_usd_per_hour 0 disables the plan: ($10 + $5) x 4,380 = $65,700, no plan lines.
    plan = solve_problem(_problem(max_usd_per_hour=0), tiny_catalog([H1, L4]))
    assert plan.total_cost_usd == pytest.approx(15 * BLOCK_HOURS)
    assert sum(i.units for i in _lines(plan, "savings_plan")) == 0.0


def test_the_cash_flow_and_focus_show_the_commitment(tiny_catalog):
    # The commitment is charged month by month ($3.3 x 730 h = $2,409 a month) in the cash
    # flow's commitments; the usage it pays for leaves the rented column: day $4.72/h x
    # 365 h = $1,722.80 a month. The FOCUS rows validate.
    plan = solve_problem(_problem(), tiny_catalog([H1, L4]))
    assert [m.commitments_usd for m in plan.cash_flow] == pytest.approx([2409.0] * 12)
    assert [m.rented_usd for m in plan.cash_flow] == pytest.approx([4.72 * 365] * 12)
    from datetime import date

    p = _problem()
    frame = focus_frame(plan, p, tiny_catalog([H1, L4]), date(2027, 1, 1))
    assert validate_focus(frame) == []
    # EffectiveCost sums to the plan's total; the commitment's Used and Unused rows carry
    # its $28,908 (the Purchase rows 0), the Credit rows the on-demand usage it paid for:
    # -(1.32 x $4 + 1 x $4 + 1 x $1) x 4,380 = -$45,026.40.
    assert frame["EffectiveCost"].sum() == pytest.approx(plan.total_cost_usd)
    spend = frame[frame["CommitmentDiscountCategory"] == "Spend"]
    fees = spend[spend["ChargeCategory"] == "Usage"]
    assert fees["EffectiveCost"].sum() == pytest.approx(3.3 * TERM_HOURS)
    credits = spend[spend["ChargeCategory"] == "Credit"]
    assert credits["EffectiveCost"].sum() == pytest.approx(-(1.32 * 4 + 4 + 1) * BLOCK_HOURS)
    # used share: covered plan-rate spend (day $3.3, night $3.3) / $3.3 commitment = 100%
    assert set(fees["CommitmentDiscountStatus"]) == {"Used"}


@pytest.mark.parametrize(
    ("plan", "field", "words"),
    [
        ({"provider": "acme", "term": "2y", "rates": RATES}, "term", "1y"),
        ({"provider": "acme", "term": "1y", "rates": {}}, "rates", "at least 1"),
        ({"provider": "acme", "term": "1y", "rates": {"acme/us-east/h1": -1}}, "rates", "0"),
        (
            {"provider": "acme", "term": "1y", "rates": RATES, "max_usd_per_hour": -5},
            "max_usd",
            "0",
        ),
    ],
)
def test_a_bad_savings_plan_names_its_field(plan, field, words):
    with pytest.raises(Exception) as info:
        problem([serve(10)], horizon_months=12, savings_plans=[plan])
    text = str(info.value)
    assert "savings_plans" in text and field in text and words in text, text


def test_the_same_plan_twice_is_refused():
    sp = {"provider": "acme", "term": "1y", "rates": RATES}
    with pytest.raises(Exception, match="acme 1y more than once"):
        problem([serve(10)], horizon_months=12, savings_plans=[sp, sp])


@pytest.mark.parametrize(
    ("rates", "field", "words"),
    [
        ({"acme/us-east/h9": 1.0}, "savings_plans[0].rates.acme/us-east/h9", "unknown offering"),
        ({"acme/us-east/h1": 4.0}, "savings_plans[0].rates.acme/us-east/h1", "not below"),
    ],
)
def test_a_rate_the_catalog_cannot_take_is_refused(tiny_catalog, rates, field, words):
    with pytest.raises(ProcureError) as info:
        solve_problem(_problem(rates=rates), tiny_catalog([H1, L4]))
    assert info.value.field == field and words in info.value.message, info.value


def test_an_unknown_provider_is_refused(tiny_catalog):
    with pytest.raises(ProcureError) as info:
        solve_problem(_problem(provider="acmee"), tiny_catalog([H1, L4]))
    assert info.value.field == "savings_plans[0].provider"


def test_a_plan_diffed_with_itself_keeps_its_savings_plan(tiny_catalog):
    # procure diff prices the old plan's decisions by the model: the commitment and the
    # usage it pays for are placed too, so the same plan at the same prices costs the
    # same ($49,581.60): no price effect, no plan effect (without them the old plan
    # would be priced all on demand, $16,118.40 dearer).
    from solver.analyses.resolve import diff_at_prices

    p, catalog = _problem(), tiny_catalog([H1, L4])
    plan = solve_problem(p, catalog)
    d = diff_at_prices(plan, plan, p, catalog, price_source="the same catalog")
    assert d.old_at_new_prices_usd == pytest.approx(49_581.60)
    assert d.price_effect_usd == pytest.approx(0.0, abs=1e-6)
    assert d.plan_effect_usd == pytest.approx(0.0, abs=1e-6)
