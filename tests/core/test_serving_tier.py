"""Online serving needs datacenter hosts unless the problem opts in to marketplaces
(issue 28, "honest defaults"): worked by hand on the tiny catalog (10 req/s, one month of
730 h; an L4 serves 2 req/s)."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import HOURS, TINY_REGIONS, check, offering, problem, serve, write_catalog
from solver.inputs.catalog import load_catalog
from solver.solve import solve_problem

L4_ACME = offering("l4", "l4", 1, 1.0, nvlink=False)  # acme: a neocloud, $1/h
L4_VAST = offering("l4", "l4", 1, 0.5, nvlink=False, provider="vast")  # marketplace, $0.5/h
REGIONS = [*TINY_REGIONS, {**TINY_REGIONS[0], "provider": "vast"}]
PROVIDERS = [
    {
        "provider": "acme",
        "tier": "neocloud",
        "sla": "99.9%",
        "data_terms": "DPA",
        "hosts": "own datacenters",
        "source": "test",
        "read_date": "2026-11-25",
    },
    {
        "provider": "vast",
        "tier": "marketplace",
        "sla": "none",
        "data_terms": "none",
        "hosts": "individuals",
        "source": "test",
        "read_date": "2026-11-25",
    },
]


def _catalog(tmp_path):
    folder = write_catalog(tmp_path / "cat", [L4_ACME, L4_VAST], regions=REGIONS)
    pd.DataFrame(PROVIDERS).to_csv(folder / "providers.csv", index=False)
    return load_catalog(folder)


def test_online_serving_leaves_marketplace_hosts_out_by_default(tmp_path):
    # 10 req/s = 5 L4. At acme: 5 x $1 x 730 h = $3,650; at vast it would be $1,825.
    plan = solve_problem(problem([serve(10)]), _catalog(tmp_path))
    assert plan.total_cost_usd == pytest.approx(5 * 1.0 * HOURS)
    assert {i.provider for i in plan.line_items} == {"acme"}
    ok, detail = check(plan, "provider tier")
    assert ok, detail


@pytest.mark.parametrize("where", ["workload", "problem"])
def test_min_tier_marketplace_opts_in(tmp_path, where):
    # 5 L4 at vast: 5 x $0.5 x 730 h = $1,825.
    if where == "workload":
        p = problem([serve(10, min_tier="marketplace")])
    else:
        p = problem([serve(10)], min_tier="marketplace")
    plan = solve_problem(p, _catalog(tmp_path))
    assert plan.total_cost_usd == pytest.approx(5 * 0.5 * HOURS)
    assert {i.provider for i in plan.line_items} == {"vast"}
