"""The words teams use (issue 28), on tiny problems whose optimum is worked by hand:
accelerator and vendor lists, a runtime that implies its vendor's hardware, and a site
described in the problem file with the fleet already there.

Capacities come from ``measured_throughput_rps`` (conftest ``serve``: one bucket of 100
output tokens): an H100 instance serves 10 requests/s for $4/h, an L4 2 for $1/h, and an
AMD MI300X (added here) 20 for $5/h. One period of one month = 730 hours; demand 25 req/s.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from conftest import (
    H1,
    HOURS,
    L4,
    TINY_ACCELERATORS,
    offering,
    problem,
    serve,
    units,
    write_catalog,
)
from solver.cli import app
from solver.core.compile import build_pools, compile_problem
from solver.inputs.catalog import load_catalog
from solver.outputs.text import hardware_sentences
from solver.solve import solve_problem

MI300X = dict(
    TINY_ACCELERATORS[0],
    accelerator_id="mi300x",
    name="AMD Instinct MI300X",
    vendor="amd",
    aliases="MI300X",
    memory_gb=192,
    mem_bandwidth_gbps=5300,
    tdp_w=750,
)
M1 = offering("m1", "mi300x", 1, 5.0)
MEASURED = {"h100-sxm": [10.0], "l4": [2.0], "mi300x": [20.0]}


@pytest.fixture
def catalog(tmp_path):
    return load_catalog(
        write_catalog(tmp_path / "cat", [H1, L4, M1], accelerators=[*TINY_ACCELERATORS, MI300X])
    )


def chat(**extra):
    return serve(25, measured_throughput_rps=MEASURED, **extra)


def test_without_lists_the_amd_card_is_cheapest(catalog):
    # 25 req/s: 1 MI300X + 3 L4 = 26 req/s for $5 + $3 = $8/h (2 MI300X $10, 1 MI300X +
    # 1 H100 $9, 2 H100 + 3 L4 $11, 13 L4 $13): $8 x 730 h = $5,840
    plan = solve_problem(problem([chat()]), catalog)
    assert plan.total_cost_usd == pytest.approx(8 * HOURS)
    assert units(plan) == {"acme/us-east/m1": 1, "acme/us-east/l4": 3}
    assert "hardware" not in plan.compile_report


def test_runtime_vllm_cuda_leaves_amd_out_and_says_so(catalog):
    # NVIDIA only: 2 H100 + 3 L4 = 26 req/s for $11/h (3 H100 $12, 1 H100 + 8 L4 $12,
    # 13 L4 $13): $11 x 730 h = $8,030; the one MI300X pool is left out
    plan = solve_problem(problem([chat(runtime="vllm-cuda")]), catalog)
    assert plan.total_cost_usd == pytest.approx(11 * HOURS)
    assert units(plan) == {"acme/us-east/h1": 2, "acme/us-east/l4": 3}
    assert plan.compile_report["hardware"] == {
        "chat": [
            {"list": "runtime", "values": ["vllm-cuda"], "vendor": "nvidia", "options_left_out": 1}
        ]
    }
    assert hardware_sentences(plan.compile_report) == [
        "runtime vllm-cuda (chat): 1 option on non-NVIDIA hardware left out"
    ]
    checks = {c.name: c for c in plan.checks}
    assert checks["hardware allowed (accelerators, vendors, runtime)"].ok


@pytest.mark.parametrize(
    "where,lists,usd_per_hour,used",
    [
        # only H100s: 3 x 10 = 30 req/s, $12/h
        ("problem", {"accelerators": ["H100"]}, 12, {"acme/us-east/h1": 3}),
        # AMD only: 2 MI300X = 40 req/s, $10/h
        ("workload", {"vendors": ["amd"]}, 10, {"acme/us-east/m1": 2}),
        # no AMD: the NVIDIA optimum, $11/h
        ("problem", {"exclude_vendors": ["amd"]}, 11, {"acme/us-east/h1": 2, "acme/us-east/l4": 3}),
        # no L4: 1 MI300X + 1 H100 = 30 req/s, $9/h
        (
            "workload",
            {"exclude_accelerators": ["l4"]},
            9,
            {"acme/us-east/m1": 1, "acme/us-east/h1": 1},
        ),
    ],
)
def test_allow_and_deny_lists_by_hand(catalog, where, lists, usd_per_hour, used):
    p = problem([chat(**lists)]) if where == "workload" else problem([chat()], **lists)
    plan = solve_problem(p, catalog)
    assert plan.total_cost_usd == pytest.approx(usd_per_hour * HOURS)
    assert units(plan) == used


def test_a_workload_list_narrows_the_problems(catalog):
    # the problem allows H100 and MI300X, the workload H100 only: 3 H100, $12/h
    p = problem([chat(accelerators=["h100-sxm"])], accelerators=["h100-sxm", "mi300x"])
    compiled = compile_problem(p, catalog)
    # 3 pools (one mode): the workload's list leaves out the L4 and the MI300X
    assert compiled.report.hardware["chat"] == [
        {"list": "accelerators", "values": ["h100-sxm"], "vendor": None, "options_left_out": 2}
    ]
    assert set(compiled.options["accelerator_id"]) == {"h100-sxm"}


OUR_ROOM = {
    "name": "our-room",
    "location": "Basement, Building 2",
    "residency_zone": "us",
    "grid_gco2_per_kwh": 100,
    "electricity_usd_per_kwh": 0.1,
    "pue": 1.5,
    "colocation_usd_per_kw_month": 20,
    "staff_usd_per_server_year": 1200,
    "power_cap_kw": 30,
}


def room_problem(**extra):
    return problem(
        [chat(accelerators=["h100-sxm"])],
        modes=["on_demand", "owned"],
        sites=[OUR_ROOM],
        existing_fleet=[{"server": "box-h100", "site": "our-room", "units": 1}],
        **extra,
    )


def test_an_own_site_is_a_pool_with_its_economics(catalog):
    pools = build_pools(room_problem(), catalog).set_index("pool_id")
    box = pools.loc["box-h100@our-room#owned"]
    # tiny box-h100: 10 kW max, no maintenance. Hosting per month: colocation $20 x 10 kW
    # = $200 + staff $1,200 / 12 = $100 + idle power 0.3 x 10 kW x PUE 1.5 x 730 h x
    # $0.10 = $328.50: $628.50
    assert box["hosting_usd_per_month"] == pytest.approx(628.5)
    assert box["availability_cap"] == 3  # floor(30 kW / 10 kW)
    assert box["existing_units"] == 1 and box["residency_zone"] == "us"
    assert box["grid_gco2_per_kwh"] == 100
    # sites: lists only the room, so no server can be bought into the catalog's colo
    assert not pools["site_id"].eq("colo-us").any()


def test_a_team_with_its_own_box_serves_from_it(catalog):
    # The box holds 8 H100 x 10 req/s = 80 >= 25: no rental. Cost: hosting $628.50 for the
    # month, plus power above idle in use: 10 kW x 0.7 x 0.6 (serving utilisation) x PUE
    # 1.5 x 730 h x $0.10 = $459.90. Total $1,088.40 (renting: $12 x 730 = $8,760).
    plan = solve_problem(room_problem(), catalog)
    assert {i.item for i in plan.line_items} == {"existing", "use"}
    assert {i.region for i in plan.line_items} == {"our-room"}
    assert plan.total_cost_usd == pytest.approx(628.5 + 459.9)
    checks = {c.name: c for c in plan.checks}
    assert checks["site allowed (sites)"].ok


def test_the_plan_says_what_the_lists_left_out(tmp_path):
    cat = write_catalog(tmp_path / "cat", [H1, L4, M1], accelerators=[*TINY_ACCELERATORS, MI300X])
    prob = tmp_path / "p.yaml"
    prob.write_text(
        "name: t\nhorizon_months: 1\nmodes: [on_demand]\nexclude_accelerators: [l4]\n"
        "workloads:\n"
        "  - {kind: inference, name: chat, model: llama-3-8b, demand: {requests_per_s: 25},\n"
        "     prompt_tokens: 100, output_tokens: 100, ttft_slo: 1 s, tpot_slo: 50 ms,\n"
        "     max_utilisation: 1, runtime: vllm-cuda,\n"
        "     traffic_mix: [{prompt_tokens: 100, output_tokens: 100, share: 1}],\n"
        "     measured_throughput_rps: {h100-sxm: [10], l4: [2], mi300x: [20]}}\n"
    )
    res = CliRunner().invoke(app, ["solve", str(prob), "--catalog", str(cat)])
    assert res.exit_code == 0, res.output
    # the runtime goes first (the MI300X), then the deny list (the L4): 3 H100, $12/h
    assert "note: runtime vllm-cuda (chat): 1 option on non-NVIDIA hardware left out" in (
        res.output
    )
    assert "note: exclude_accelerators [l4] (chat): 1 option left out" in res.output
    assert "8,760" in res.output


def test_exports_name_an_own_site_by_its_location(catalog):
    # FOCUS rows of the room's servers are provided by the site (ProviderName), which the
    # problem names by its location; the catalog passed in does not know the room
    from datetime import date

    from solver.outputs.focus import focus_frame

    p = room_problem()
    plan = solve_problem(p, catalog)
    frame = focus_frame(plan, p, catalog, date(2027, 1, 1))
    assert set(frame["ProviderName"]) == {"Basement, Building 2"}
    assert "our-room" not in catalog.sites.index
