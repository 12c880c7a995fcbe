"""Sites described in the problem file (issue 28): they join the catalog's sites for that
problem only, in the catalog's columns, with figures from their region unless given; a bad
value gets one message naming the field and the fix. Figures are the shipped catalog's:
aws/us-east-1 is US, zone us, 295 gCO2e/kWh, $0.088/kWh (catalogs/regions.csv); an
hgx-h100-8 server draws 10.2 kW at most (catalogs/servers.csv)."""

from __future__ import annotations

import math

import pytest

from solver.errors import ProcureError
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import parse_problem
from solver.inputs.sites import with_problem_sites

CHAT = {
    "kind": "inference",
    "name": "chat",
    "model": "llama-3-8b",
    "demand": {"tokens_per_s": 1000},
    "prompt_tokens": 500,
    "output_tokens": 200,
    "ttft_slo": "1 s",
    "tpot_slo": "50 ms",
}
OUR_DC = {"name": "our-dc", "location": "Ashburn, VA", "region": "aws/us-east-1", "pue": 1.5}
TWO_H100_SERVERS = [{"server": "hgx-h100-8", "site": "our-dc", "units": 2}]


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def problem(sites, fleet=(), **extra):
    data = {
        "name": "t",
        "horizon_months": 12,
        "sites": sites,
        "existing_fleet": list(fleet),
        "workloads": [CHAT],
    }
    data.update(extra)
    return parse_problem(data)


def refusal(catalog, sites, fleet=TWO_H100_SERVERS) -> ProcureError:
    with pytest.raises(ProcureError) as err:
        with_problem_sites(problem(sites, fleet), catalog)
    return err.value


def test_an_own_site_joins_the_catalogs_sites_with_its_regions_figures(catalog):
    joined = with_problem_sites(problem([OUR_DC], TWO_H100_SERVERS), catalog)
    assert list(joined.sites.index[: len(catalog.sites)]) == list(catalog.sites.index)
    assert joined.problem_sites == ("our-dc",)
    row = joined.sites.loc["our-dc"]
    # from aws/us-east-1: country, zone, grid and the power price; the PUE is the room's
    assert (row["country"], row["residency_zone"]) == ("US", "us")
    assert row["grid_gco2_per_kwh"] == 295 and row["electricity_usd_per_kwh"] == 0.088
    assert row["pue"] == 1.5 and row["name"] == "Ashburn, VA"
    # no colocation given: a room of one's own, no rent; staff as every catalog site: no
    # flat figure (empty), so by the site's fleet size (solver/inputs/staff.py)
    assert row["colocation_usd_per_kw_month"] == 0 and row["kind"] == "own"
    assert math.isnan(row["staff_usd_per_server_year"])
    assert math.isnan(row["staff_servers_per_admin"])
    # no power cap given: the two servers already there, 2 x 10.2 kW = 20.4 kW
    assert row["power_cap_kw"] == pytest.approx(20.4)


def test_the_catalog_is_not_changed_and_joining_twice_is_joining_once(catalog):
    before = catalog.sites.copy()
    p = problem([OUR_DC], TWO_H100_SERVERS)
    once = with_problem_sites(p, catalog)
    twice = with_problem_sites(p, once)
    assert catalog.sites.equals(before) and catalog.problem_sites == ()
    assert twice.sites.equals(once.sites)
    # a catalog joined with one problem's sites, given another problem, has only its sites
    other = with_problem_sites(problem(["colo-us-ashburn"]), once)
    assert other.sites.equals(catalog.sites)


def test_given_figures_win_and_rack_colocation_is_per_kw(catalog):
    site = dict(
        OUR_DC,
        grid_gco2_per_kwh=100,
        electricity_usd_per_kwh=0.05,
        colocation_usd_per_rack_month=1000,
        rack_power_kw=20,
        staff_usd_per_server_year=4768,
        power_cap_kw=40,
    )
    row = with_problem_sites(problem([site], TWO_H100_SERVERS), catalog).sites.loc["our-dc"]
    assert row["grid_gco2_per_kwh"] == 100 and row["electricity_usd_per_kwh"] == 0.05
    # $1,000 per rack-month for a 20 kW rack = $50 per kW-month
    assert row["colocation_usd_per_kw_month"] == pytest.approx(50.0)
    assert row["kind"] == "colocation"
    assert row["staff_usd_per_server_year"] == 4768 and row["power_cap_kw"] == 40


def test_a_region_one_provider_lists_or_several_list_alike_is_enough(catalog):
    # us-east-1 is in aws's and lambda's lists with the same country, zone, grid and price
    site = dict(OUR_DC, region="us-east-1")
    row = with_problem_sites(problem([site], TWO_H100_SERVERS), catalog).sites.loc["our-dc"]
    assert row["grid_gco2_per_kwh"] == 295


def test_a_site_without_region_gives_its_figures(catalog):
    site = {
        "name": "lab",
        "residency_zone": "eu",
        "grid_gco2_per_kwh": 80,
        "electricity_usd_per_kwh": 0.1,
        "pue": 1.3,
        "power_cap_kw": 50,
    }
    row = with_problem_sites(problem([site, "colo-eu-helsinki"]), catalog).sites.loc["lab"]
    assert (row["residency_zone"], row["grid_gco2_per_kwh"], row["country"]) == ("eu", 80, "")


@pytest.mark.parametrize(
    "site,field,words",
    [
        (dict(OUR_DC, region="us-east-2"), "region", "different figures"),  # aws 480, lambda 370
        (dict(OUR_DC, region="us-eastt-1"), "region", "unknown region"),
        (dict(OUR_DC, name="colo-us-ashburn"), "name", "is a catalog site"),
        (dict(OUR_DC, residency_zone="mars"), "residency_zone", "unknown residency zone"),
        (dict(OUR_DC, power_cap_kw=15), "power_cap_kw", "below the 20.4 kW"),
    ],
)
def test_bad_site_values_are_refused_naming_the_field(catalog, site, field, words):
    err = refusal(catalog, [site])
    assert err.field.startswith("sites[0] (") and err.field.endswith(f".{field}"), err
    assert words in err.message and err.fix, err


def test_a_site_with_nothing_to_host_needs_a_power_cap(catalog):
    err = refusal(catalog, [OUR_DC], fleet=())
    assert err.field == "sites[0] (our-dc).power_cap_kw"
    assert "no power_cap_kw and no servers" in err.message and "existing_fleet" in err.fix


def test_the_ambiguous_region_fix_names_a_provider_region(catalog):
    err = refusal(catalog, [dict(OUR_DC, region="us-east-2")])
    assert "aws/us-east-2" in err.fix


@pytest.mark.parametrize(
    "site,words",
    [
        ({"name": "our-dc", "pue": 1.5}, "has no region, so it needs residency_zone"),
        (dict(OUR_DC, pue=0.9), "greater than or equal to 1"),
        (dict(OUR_DC, colocation_usd_per_rack_month=900), "needs rack_power_kw"),
        (dict(OUR_DC, rack_power_kw=20), "goes with colocation_usd_per_rack_month"),
        (
            dict(OUR_DC, colocation_usd_per_kw_month=150, colocation_usd_per_rack_month=900),
            "both per kW and per rack",
        ),
        (dict(OUR_DC, name="our dc"), "pattern"),
        (dict(OUR_DC, colour="blue"), "Extra inputs"),
    ],
)
def test_a_site_is_checked_when_the_problem_is_read(site, words):
    with pytest.raises(ProcureError) as err:
        problem([site], TWO_H100_SERVERS)
    assert err.value.field.startswith("sites[0]") and words in err.value.message, err.value


def test_sites_as_strings_work_as_before_and_mix_with_objects():
    p = problem(["colo-us-ashburn", OUR_DC], TWO_H100_SERVERS)
    assert p.site_ids == ["colo-us-ashburn", "our-dc"]
    assert [s.name for s in p.own_sites] == ["our-dc"]
    assert problem(None).site_ids is None


def test_one_site_described_twice_is_refused():
    with pytest.raises(ProcureError, match="more than once") as err:
        problem([OUR_DC, OUR_DC], TWO_H100_SERVERS)
    assert err.value.field == "sites"


def test_a_bad_entry_says_what_an_entry_is():
    with pytest.raises(ProcureError) as err:
        problem(["colo-us-ashburn", 5])
    assert err.value.field == "sites[1]" and "describe your own site" in err.value.fix
