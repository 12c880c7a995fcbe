"""Owned hardware over its life: rent or buy by hand, replacement, residual value, NPV.

The case: one 8x H100 unit serves a small chat workload all day. Rent it at $10/h
(730 h a month: $7,300/month) or buy the 8x H100 box for $200,000 with a 60-month life,
no lead time, $500/month hosting (10 kW x $50/kW-month) and free electricity.

Cash policy, no residual value: buying for T months costs 200,000 + 500 T, renting
7,300 T, so the break-even is T* = 200,000 / (7,300 - 500) = 29.41 months: a 29-month
horizon rents, a 30-month one buys.
"""

from __future__ import annotations

import pytest

from conftest import TINY_SITES, check, offering
from solver.analyses import estimate
from solver.inputs.problem import parse_problem
from solver.solve import solve_problem

RENT = offering("p5", "h100-sxm", 8, 10.0)
SITES = [dict(TINY_SITES[0], colocation_usd_per_kw_month=50.0)]
T_STAR_MONTHS = 200_000 / (7_300 - 500)  # 29.41


def _problem(months: int, **extra):
    return parse_problem(
        {
            "name": f"rent-or-buy-{months}",
            "horizon_months": months,
            "costs": "none",  # the ledger's compute, by hand
            "periods": [{"name": f"m{i + 1:02d}", "months": 1} for i in range(months)],
            "modes": ["on_demand", "owned"],
            "load_blocks": [{"name": "day", "hours_per_day": 24, "demand_factor": 1}],
            "workloads": [
                {
                    "kind": "inference",
                    "name": "chat",
                    "model": "llama-3-8b",
                    "demand": {"tokens_per_s": 100},
                    "prompt_tokens": 500,
                    "output_tokens": 200,
                    "ttft_slo": "2 s",
                    "tpot_slo": "100 ms",
                    "max_utilisation": 1.0,
                }
            ],
            **extra,
        }
    )


def _bought(plan) -> list[str]:
    return [i.period for i in plan.line_items if i.item == "purchase" for _ in range(int(i.units))]


def test_estimate_prints_the_break_even_month(tiny_catalog):
    cat = tiny_catalog([RENT], sites=SITES)
    out = estimate.estimate_inference(
        cat, model="llama-3-8b", offering="acme/us-east/p5", tp_degree=1, server="box-h100"
    )
    assert out["buy_vs_rent_break_even_months"] == pytest.approx(T_STAR_MONTHS, abs=1e-6)


@pytest.mark.parametrize("months,buys", [(12, 0), (29, 0), (30, 1)])
def test_solve_switches_at_the_break_even_month(tiny_catalog, months, buys):
    # 12 and 29 months < 29.41: rent ($87,600 and $211,700 against $206,000 and $214,500);
    # 30 months > 29.41: buy ($215,000 against $219,000 rented)
    cat = tiny_catalog([RENT], sites=SITES)
    plan = solve_problem(_problem(months), cat)
    assert len(_bought(plan)) == buys
    rent_usd = 7_300.0 * months
    buy_usd = 200_000.0 + 500.0 * months
    assert plan.total_cost_usd == pytest.approx(min(rent_usd, buy_usd), rel=1e-9)


def test_a_server_wears_out_and_is_bought_again(tiny_catalog):
    # 72 months, 60-month life, straight-line residual value: the first box serves months
    # 1-60 ($200,000 + 60 x $500 = $230,000, nothing left at the horizon); the second,
    # bought in month 61, serves 12 months and is worth 48/60 of its price at the end:
    # 200,000 - 160,000 + 12 x 500 = $46,000 against 12 x 7,300 = $87,600 rented.
    cat = tiny_catalog([RENT], sites=SITES)
    plan = solve_problem(_problem(72, residual_value="straight_line"), cat)
    assert _bought(plan) == ["m01", "m61"]
    assert plan.total_cost_usd == pytest.approx(230_000.0 + 46_000.0, rel=1e-9)
    second = next(i for i in plan.line_items if i.item == "purchase" and i.period == "m61")
    assert second.residual_value_usd == pytest.approx(160_000.0)
    # without residual value the second box costs $206,000 for 12 months: rent instead
    # (one box for 60 of the 72 months, rented the other 12: when is a tie)
    plain = solve_problem(_problem(72), cat)
    assert len(_bought(plain)) == 1
    assert plain.total_cost_usd == pytest.approx(230_000.0 + 87_600.0, rel=1e-9)


def test_npv_discounts_each_month_at_its_middle(tiny_catalog):
    # 12 months rented at $7,300: NPV at 10%/year = sum 7,300 x 1.1 ** -((m + 0.5) / 12)
    cat = tiny_catalog([RENT], sites=SITES)
    plan = solve_problem(_problem(12, discount_rate=0.10, objective="min_npv"), cat)
    expected = sum(7_300.0 * 1.1 ** (-(m + 0.5) / 12) for m in range(12))
    assert plan.npv_usd == pytest.approx(expected, rel=1e-9)
    assert plan.total_cost_usd == pytest.approx(87_600.0)
    # the verifier recomputed the NPV on its own
    assert check(plan, "net present value recomputed") == (True, "1 checked")


@pytest.mark.parametrize(
    "extra,field",
    [
        ({"discount_rate": 1.0}, "discount_rate"),
        ({"discount_rate": -0.1}, "discount_rate"),
        ({"objective": "min_npv"}, "discount_rate"),
        ({"residual_value": "resale"}, "residual_value"),
    ],
)
def test_bad_cost_settings_are_refused(extra, field):
    from solver.errors import ProcureError

    with pytest.raises(ProcureError) as err:
        _problem(12, **extra)
    assert field in (err.value.field or "") + err.value.message
