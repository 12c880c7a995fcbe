"""Staff for owned servers by the size of the fleet at a site (issue 28, honest defaults;
solver/inputs/staff.py, solver/core/staff.py), worked by hand.

Figures (catalogs/SOURCES.md STAFF_BY_SIZE and STAFF_LOADING):

- one administrator costs $95,360 (BLS median pay) / 0.705 (wages' share of employer
  compensation, BLS ECEC) = $135,262.41 a year;
- 140 servers per administrator up to 1,000 servers at a site; 1,000 per administrator at
  50,000; between, the ratio is 140 x (n / 1,000)^b with b = ln(1,000 / 140) / ln(50) =
  1.966113 / 3.912023 = 0.502582, evaluated at 1,000, 2,000, 5,000, 10,000, 20,000 and
  50,000 servers, the headcount linear between those sizes.

The solved problems use the tiny catalog of tests/conftest.py: an 8x H100 box (box-h100,
10 kW, $200,000, no maintenance, no lead time) serves 80 requests/s (8 x 10 measured); a
site of the problem's own with no colocation, $0.10/kWh and PUE 1.5; one period of 12
months.
"""

from __future__ import annotations

import pytest

from conftest import H1, L4, problem, serve
from solver.core.compile import build_pools
from solver.core.staff import segments
from solver.inputs.staff import USD_PER_ADMIN_YEAR, admins, servers_per_admin
from solver.solve import solve_problem

SALARY = 135_262.41  # $95,360 / 0.705
OUR_DC = {
    "name": "our-dc",
    "residency_zone": "us",
    "grid_gco2_per_kwh": 100,
    "electricity_usd_per_kwh": 0.1,
    "pue": 1.5,
    "power_cap_kw": 100_000,  # room for 10,000 boxes of 10 kW: the MIP's staff rows apply
}


@pytest.fixture
def catalog(tiny_catalog):
    return tiny_catalog([H1, L4])


def owned_problem(rps: float, existing: int = 0, **site):
    fleet = [{"server": "box-h100", "site": "our-dc", "units": existing}] if existing else []
    return problem(
        [serve(rps, accelerators=["h100-sxm"])],
        modes=["owned"],
        horizon_months=12,
        sites=[dict(OUR_DC, **site)],
        existing_fleet=fleet,
    )


def lines(plan, item: str) -> list:
    return [i for i in plan.line_items if i.item == item]


def test_the_published_points_and_the_interpolation_by_hand():
    assert USD_PER_ADMIN_YEAR == pytest.approx(SALARY, abs=0.01)
    # up to 1,000 servers: 140 per administrator (2 servers: 2 / 140 = 0.0142857 admin)
    assert servers_per_admin(2) == 140 and admins(2) == pytest.approx(2 / 140)
    assert admins(1_000) == pytest.approx(1_000 / 140)  # 7.142857
    # 5,000 servers: 140 x 5^0.502582 = 140 x 2.245380 = 314.353 servers per admin,
    # 5,000 / 314.353 = 15.905676 administrators (a published size: exact)
    assert servers_per_admin(5_000) == pytest.approx(314.353, abs=1e-3)
    assert admins(5_000) == pytest.approx(15.905676, abs=1e-6)
    # 50,000: 1,000 per admin, 50 admins; beyond, flat: 60,000 -> 50 + 10 = 60
    assert admins(50_000) == pytest.approx(50.0) and admins(60_000) == pytest.approx(60.0)
    # 1,100 servers: between 1,000 (7.142857) and 2,000 (2,000 / (140 x 2^0.502582) =
    # 2,000 / 198.345 = 10.083462): 7.142857 + 0.1 x 2.940605 = 7.436918
    assert admins(1_100) == pytest.approx(7.436918, abs=1e-6)


def test_segments_of_the_saving_start_flat_and_stop_at_the_sites_room():
    # the saving (admins(n) - n / 140) is 0 up to 1,000 servers, so the first segment's
    # slope is 0; a site holding at most 3,000 servers has segments 0-1,000, 1,000-2,000
    # and 2,000-3,000
    parts = segments(3_000)
    assert [length for length, _ in parts] == [1_000, 1_000, 1_000]
    assert parts[0][1] == 0
    # 1,000-2,000: (10.083462 - 2,000 / 140) - 0 over 1,000 = (10.083462 - 14.285714) /
    # 1,000 = -0.004202 admin per server
    assert parts[1][1] == pytest.approx(-0.0042023, abs=1e-7)


def test_two_bought_servers_pay_two_140ths_of_an_administrator(catalog):
    # 150 req/s needs 2 boxes (160 req/s). Staff is 2 / 140 admin x $135,262.41 =
    # $1,932.32 for the year: the plan costs exactly that more than the same site at a
    # flat $0 of staff
    by_size = solve_problem(owned_problem(150), catalog)
    no_staff = solve_problem(owned_problem(150, staff_usd_per_server_year=0), catalog)
    assert [i.units for i in lines(by_size, "purchase")] == [2]
    assert by_size.total_cost_usd - no_staff.total_cost_usd == pytest.approx(1_932.32, abs=0.01)
    assert not lines(by_size, "staff_scale")  # 2 servers: no saving, so no staff_scale line
    staff = [a for a in by_size.assumptions if a.kind == "owned_staff"]
    assert [(a.subject, a.value, a.basis) for a in staff] == [("our-dc", 966.16, "published")]


def test_five_thousand_servers_pay_the_interpolated_ratio(catalog):
    # 5,000 boxes held at the start. Staff for the year: 15.905676 admin x $135,262.41 =
    # $2,151,440.11; the hosting carries 5,000 / 140 x $135,262.41 = $4,830,800.41 of it,
    # so the staff_scale line saves $4,830,800.41 - $2,151,440.11 = $2,679,360.30
    plan = solve_problem(owned_problem(80 * 5_000 - 1, existing=5_000), catalog)
    (saving,) = lines(plan, "staff_scale")
    assert saving.units == pytest.approx(5_000) and saving.region == "our-dc"
    assert saving.cost_usd == pytest.approx(-2_679_360.30, abs=0.01)
    in_hosting = 5_000 / 140 * USD_PER_ADMIN_YEAR
    assert in_hosting + saving.cost_usd == pytest.approx(2_151_440.11, abs=0.01)


def test_the_mip_buys_past_1000_at_the_concave_cost_the_verifier_recomputes(catalog):
    # 900 boxes at the start, 88,000 req/s: 1,100 boxes, so 200 are bought. The site's
    # fleet is 1,100: staff 7.436918 admin instead of 1,100 / 140 = 7.857143, a saving of
    # 0.420225 x $135,262.41 = $56,840.68. The model prices it through its segment
    # binaries; the verifier recomputes it from the servers the plan holds (check below)
    plan = solve_problem(owned_problem(88_000, existing=900), catalog)
    assert [i.units for i in lines(plan, "purchase")] == [200]
    (saving,) = lines(plan, "staff_scale")
    assert saving.units == pytest.approx(1_100)
    assert saving.cost_usd == pytest.approx(-56_840.68, abs=0.01)
    # the verifier recomputed that one saving: one site in the problem's one period
    checks = [c for c in plan.checks if c.name == "staff saving past 1,000 servers recomputed"]
    assert [c.detail for c in checks] == ["1 checked"]
    # the plan's staff figure: $135,262.41 x 7.436918 / 1,100 = $914.49 per server-year
    (staff,) = [a for a in plan.assumptions if a.kind == "owned_staff"]
    assert staff.value == pytest.approx(914.49, abs=0.01)


def test_a_site_ratio_or_salary_overrides_the_default(catalog):
    # 20 servers per admin at $100,000: $5,000 per server-year in the hosting ($416.67 a
    # month); by size at the default salary: $966.16 ($80.51 a month). No colocation, no
    # maintenance; idle power 0.3 x 10 kW x 1.5 x 730 h x $0.10 = $328.50 a month
    p = owned_problem(150, staff_servers_per_admin=20, staff_usd_per_admin_year=100_000)
    pools = build_pools(p, catalog).set_index("pool_id")
    assert pools.loc["box-h100@our-dc#owned", "hosting_usd_per_month"] == pytest.approx(
        328.5 + 5_000 / 12
    )
    assert pools.loc["box-h100@our-dc#owned", "staff_basis"] == "ratio"
    default = build_pools(owned_problem(150), catalog).set_index("pool_id")
    assert default.loc["box-h100@our-dc#owned", "hosting_usd_per_month"] == pytest.approx(
        328.5 + SALARY / 140 / 12, abs=1e-6
    )


def test_a_site_that_cannot_hold_1000_servers_adds_no_staff_rows(catalog):
    # power_cap_kw 5,000 over 10 kW boxes: at most 500 servers, so the hosting's 1/140 is
    # exact and the model has no staff variables or rows
    from solver.core.compile import compile_problem
    from solver.core.model import build_model

    model = build_model(compile_problem(owned_problem(150, power_cap_kw=5_000), catalog))
    assert not model.variables["kind"].isin(["staff", "staff_tier"]).any()
    assert not any(r.family.startswith("staff") for r in model.rows)
    big = build_model(compile_problem(owned_problem(150), catalog))
    # 10,000 servers of room: segments 0-1k, 1k-2k, 2k-5k, 5k-10k: 4 deltas, 3 binaries
    assert (big.variables["kind"] == "staff").sum() == 4
    assert (big.variables["kind"] == "staff_tier").sum() == 3


def test_the_saving_reads_back_from_a_plan_file_and_exports(catalog):
    # the 1,100-server plan above: its saving, -$56,840.68, is one owned_opex charge of the
    # cash flow (which still sums to the total), re-verifies from the plan's JSON as a file
    # would carry it, and is one FOCUS row per month with its own words
    from datetime import date

    from solver.outputs.focus import focus_frame
    from solver.plan import Plan
    from solver.plan.charges import line_charges
    from solver.trust.verify import plan_name_errors, verify_plan_file

    p = owned_problem(88_000, existing=900)
    plan = solve_problem(p, catalog)
    table = line_charges(plan, p, catalog, date(2027, 1, 1))
    (line,) = [n for n, i in enumerate(plan.line_items) if i.item == "staff_scale"]
    saving = table[table["line"] == line]
    assert set(saving["category"]) == {"owned_opex"}
    assert saving["usd"].sum() == pytest.approx(-56_840.68, abs=0.01)
    assert table["usd"].sum() == pytest.approx(plan.total_cost_usd, rel=1e-9)
    again = Plan.model_validate_json(plan.model_dump_json())
    assert not plan_name_errors(again, p, catalog)
    checks, errors = verify_plan_file(again, p, catalog)
    assert all(c.ok for c in checks) and not errors, [c for c in checks if not c.ok] + errors
    frame = focus_frame(plan, p, catalog, date(2027, 1, 1))
    rows = frame[frame["ChargeDescription"].str.startswith("staff saving")]
    assert len(rows) == 12 and rows["BilledCost"].sum() == pytest.approx(-56_840.68, abs=0.01)
