"""Hostile cases for compile's door (solver/core/compile/resolved.py): the inputs are
resolved once, so every stage must see the same resolved value, the caller's catalog must
come back untouched, and bad input must still be refused with the field that is wrong."""

from __future__ import annotations

from datetime import date

import pytest

from conftest import H1, L4, TINY_ACCELERATORS, problem, serve, write_catalog
from solver.core.compile import compile_problem
from solver.core.compile.periods import build_calendar
from solver.core.compile.resolved import resolve_inputs
from solver.errors import ProcureError
from solver.inputs.catalog import load_catalog
from solver.plan.charges import plan_calendar
from tests.core.test_hardware_and_sites import M1, MI300X, OUR_ROOM, chat, room_problem


@pytest.fixture
def catalog(tmp_path):
    return load_catalog(
        write_catalog(tmp_path / "cat", [H1, L4, M1], accelerators=[*TINY_ACCELERATORS, MI300X])
    )


def test_a_problem_site_joins_once_and_the_callers_catalog_is_untouched(catalog):
    # The room is the problem's own site: compile joins it to the catalog it resolves, the
    # owned pool stands at it, and the catalog the caller passed still lacks it.
    before = list(catalog.sites.index)
    compiled = compile_problem(room_problem(), catalog)
    assert list(catalog.sites.index) == before and "our-room" not in before
    assert "our-room" in compiled.inputs.catalog.sites.index
    owned = compiled.pools[compiled.pools["kind"] == "owned"]
    assert set(owned["site_id"]) == {"our-room"}


def test_a_site_the_catalog_lacks_is_still_refused_at_the_door(catalog):
    p = problem([chat()], modes=["on_demand", "owned"], sites=[OUR_ROOM, "our-rom"])
    with pytest.raises(ProcureError) as err:
        compile_problem(p, catalog)
    assert err.value.field == "sites" and "unknown site 'our-rom'" in err.value.message


def test_a_cost_entry_of_an_unknown_provider_is_refused_with_its_field(catalog):
    # the costs are priced once, at the door, against the catalog's providers (h1 and l4's
    # provider in the tiny catalog is "tiny"; "azure" is not in it)
    p = problem(
        [serve(5)],
        costs={"storage": [{"provider": "azure", "storage_class": "blob_hot", "gb": 10}]},
    )
    with pytest.raises(ProcureError) as err:
        resolve_inputs(p, catalog)
    assert err.value.field == "costs.storage[0].provider"
    assert "unknown provider 'azure'" in err.value.message


@pytest.mark.parametrize("start", [None, "2027-01"])
def test_fractional_months_cost_the_same_hours_in_compile_and_in_the_plan(catalog, start):
    # Two periods of 1.5 months. From 2027-01: the first holds January (744 h) and half of
    # February (672 / 2 = 336 h) = 1,080 h, the second the other half (336) and March
    # (744) = 1,080 h. Without a start, 1.5 x 730 = 1,095 h each. Compile's periods and
    # the plan's monthly slices of them count the same hours on the same clock.
    extra = {"start": start} if start else {}
    p = problem(
        [serve(5)],
        horizon_months=3,
        periods=[{"name": "a", "months": 1.5}, {"name": "b", "months": 1.5}],
        **extra,
    )
    expected = [1_080.0, 1_080.0] if start else [1_095.0, 1_095.0]
    compiled = compile_problem(p, catalog)
    assert list(compiled.periods["hours"]) == pytest.approx(expected)
    cal = plan_calendar(p, date(2027, 1, 1))
    for name, hours in zip(["a", "b"], expected, strict=True):
        begin = cal.start_month[name]
        sliced = sum(cal.clock.hours(a, b) for a, b, _ in cal.period_slices(name, 1.0))
        assert sliced == pytest.approx(hours)
        assert cal.clock.hours(begin, begin + cal.months[name]) == pytest.approx(hours)
    # without a start of its own the plan is dated from the caller's start, on 730-hour
    # months; with one, from its own
    assert cal.dates.start == date(2027, 1, 1)
    assert cal.clock.start == (date(2027, 1, 1) if start else None)
    assert build_calendar(p).clock == compiled.clock
