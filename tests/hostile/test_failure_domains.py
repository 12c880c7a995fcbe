"""Hostile cases for failure domains, moves and operability limits: a broken zones.csv, a
bad value in the problem, and plans edited after the solve, each refused with the file or
field that is wrong and what to do; nothing silently accepted."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import TINY_REGIONS, offering, problem, serve, write_catalog
from solver.errors import InfeasibleError, ProcureError
from solver.inputs.catalog import load_catalog
from solver.solve import solve_problem
from solver.trust.verify import verify_plan

H1 = offering("h1", "h100-sxm", 1, 4.0)
H1_EU = offering("h1", "h100-sxm", 1, 5.0, region="eu-north")


def _zones(tmp_path, rows: list[dict]):
    folder = write_catalog(tmp_path / "catalog", [H1, H1_EU], regions=TINY_REGIONS)
    pd.DataFrame(rows).to_csv(folder / "zones.csv", index=False)
    return folder


def _zone(zone: str, region: str = "us-east", types: str = "h1") -> dict:
    return {"provider": "acme", "region": region, "zone": zone, "instance_types": types,
            "source": "t"}  # fmt: skip


@pytest.mark.parametrize(
    ("rows", "line", "column", "words"),
    [
        ([_zone("a"), _zone("a")], "line 3", "zone", "listed twice"),
        ([_zone("a"), _zone("a", region="mars-1")], "line 3", "region", "regions.csv"),
        ([_zone("us-east/a")], "line 2", "zone", "'/'"),
    ],
)
def test_a_broken_zones_file_is_refused_with_its_line(tmp_path, rows, line, column, words):
    folder = _zones(tmp_path, rows)
    with pytest.raises(ProcureError) as err:
        load_catalog(folder)
    e = err.value
    assert e.file is not None and e.file.endswith("zones.csv")
    assert e.field == f"{line}, {column}" and words in str(e) and e.fix


def test_a_zone_row_with_no_instance_type_is_refused(tmp_path):
    folder = _zones(tmp_path, [_zone("a", types="")])
    with pytest.raises(ProcureError) as err:
        load_catalog(folder)
    assert "zones.csv" in str(err.value.file) and "instance_types" in str(err.value.field)


@pytest.mark.parametrize("bad", [["rack"], ["Zone"], [None]])
def test_an_unknown_domain_names_the_field_and_its_values(bad):
    with pytest.raises(ProcureError) as err:
        problem([serve(10, survive_loss_of=bad)])
    e = err.value
    assert "survive_loss_of" in str(e.field)
    assert "'zone', 'region' or 'provider'" in str(e)
    assert "<unrecognised key>" not in f"{e} {e.fix}" and "survive_loss_of" in str(e.fix)


@pytest.mark.parametrize(
    "field",
    [
        {"min_units_per_deployment": 0},
        {"max_providers": 0},
        {"max_deployments": -1},
        {"migration_usd_per_move": -5},
        {"migration_gb": float("inf")},
        {"migration_usd_per_gb": "cheap"},
    ],
)
def test_a_bad_limit_or_migration_figure_is_refused(field):
    with pytest.raises(ProcureError) as err:
        problem([serve(10, **field)])
    assert next(iter(field)) in str(err.value.field)


def test_one_zone_only_is_infeasible_naming_the_field(tmp_path):
    # us-east's h1 in zone a only, and no other region: nothing survives losing zone a
    folder = write_catalog(tmp_path / "catalog", [H1], regions=TINY_REGIONS)
    pd.DataFrame([_zone("a")]).to_csv(folder / "zones.csv", index=False)
    with pytest.raises(InfeasibleError) as err:
        solve_problem(problem([serve(10, survive_loss_of=["zone"])]), load_catalog(folder))
    assert err.value.field == "workloads[0].survive_loss_of"
    assert "zones.csv" in str(err.value.fix)


def _edited(plan, zone_units):
    return plan.model_copy(
        update={
            "line_items": [
                i.model_copy(update={"zone_units": zone_units}) if i.item == "rent" else i
                for i in plan.line_items
            ]
        }
    )


@pytest.mark.parametrize(
    ("zone_units", "check_name"),
    [
        ({"acme/us-east/a": 1.0, "acme/us-east/b": 1.0}, "zone units placed"),  # 2 of 3
        ({"acme/us-east/a": 4.0, "acme/us-east/b": -1.0}, "zone units placed"),  # negative
        ({"acme/us-east/a": 1.5, "acme/us-east/b": 1.5}, "zone units placed"),  # halves
        ({"acme/us-east/a": 3.0}, "peak met with one zone lost"),  # all in one zone
        (None, "zone units placed"),  # placement removed
    ],
)
def test_an_edited_placement_is_refused(tmp_path, zone_units, check_name):
    catalog = load_catalog(_zones(tmp_path, [_zone("a"), _zone("b"), _zone("c")]))
    prob = problem([serve(20, survive_loss_of=["zone"])])
    plan = solve_problem(prob, catalog)
    failed = {c.name for c in verify_plan(_edited(plan, zone_units), prob, catalog) if not c.ok}
    assert check_name in failed


def test_a_plan_solved_without_zones_is_refused_against_a_catalog_with_them(tmp_path):
    # Solved where us-east is one zone, then checked against a catalog that lists three:
    # the line's zone `acme/us-east` is not one of them.
    plain = load_catalog(write_catalog(tmp_path / "plain", [H1, H1_EU], regions=TINY_REGIONS))
    prob = problem([serve(10, survive_loss_of=["zone"])])
    plan = solve_problem(prob, plain)
    zoned = load_catalog(_zones(tmp_path, [_zone("a"), _zone("b"), _zone("c")]))
    failed = {c.name for c in verify_plan(plan, prob, zoned) if not c.ok}
    assert "zone units placed" in failed
