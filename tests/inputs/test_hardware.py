"""Accelerator and vendor lists and the runtime's vendor (issue 28), resolved against the
shipped catalog: names as `procure catalog list accelerators` shows them, vendors as
catalogs/accelerators.csv writes them; a bad value gets one message naming the field and
the fix."""

from __future__ import annotations

import copy
import json

import pytest

from solver.errors import ProcureError
from solver.inputs.catalog import load_catalog
from solver.inputs.hardware import LISTS, HardwareRule, hardware_rules
from solver.inputs.problem import parse_problem

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


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def rules_of(catalog, workload: dict | None = None, **top):
    data = {"name": "t", "horizon_months": 1, "workloads": [dict(CHAT, **(workload or {}))]}
    data.update(top)
    return hardware_rules(parse_problem(data), catalog)["chat"]


def refusal(catalog, workload: dict | None = None, **top) -> ProcureError:
    with pytest.raises(ProcureError) as err:
        rules_of(catalog, workload, **top)
    return err.value


def test_no_lists_allow_everything(catalog):
    rule = rules_of(catalog)
    assert rule == HardwareRule()
    assert not any(rule.values(name) for name in LISTS)


def test_names_resolve_to_catalog_ids_and_vendors_to_lower_case(catalog):
    # h100 is the alias of the SXM5 part (catalogs/accelerators.csv), "H200 SXM" of h200
    rule = rules_of(catalog, accelerators=["h100", "H200 SXM"], vendors=["NVIDIA"])
    assert rule.accelerators == {"h100-sxm", "h200"}
    assert rule.vendors == {"nvidia"}


def test_a_workload_list_narrows_the_problems(catalog):
    rule = rules_of(
        catalog,
        {"accelerators": ["h200"], "exclude_vendors": ["intel"]},
        accelerators=["h100", "h200"],
        exclude_accelerators=["l4"],
    )
    assert rule.accelerators == {"h200"}
    assert rule.exclude_accelerators == {"l4"}
    assert rule.exclude_vendors == {"intel"}
    assert rule.broken("h200", "nvidia") is None
    assert rule.broken("h100-sxm", "nvidia") == "accelerators"
    assert rule.broken("gaudi3", "intel") == "accelerators"  # the first list that says no


@pytest.mark.parametrize(
    "runtime,vendor",
    [
        ("vllm-cuda", "nvidia"),
        ("tensorrt-llm", "nvidia"),
        ("vllm-rocm", "amd"),
        ("neuron", "aws"),
        ("gaudi", "intel"),
        ("tpu", "google"),
    ],
)
def test_a_runtime_implies_its_vendor(catalog, runtime, vendor):
    rule = rules_of(catalog, {"runtime": runtime})
    assert (rule.runtime, rule.runtime_vendor) == (runtime, vendor)
    vendors = dict(catalog.accelerators["vendor"])
    kept = {a for a, v in vendors.items() if rule.broken(a, v) is None}
    assert kept == {a for a, v in vendors.items() if v == vendor}


def test_unknown_accelerator_names_the_field_and_the_fix(catalog):
    err = refusal(catalog, {"accelerators": ["h100", "H1OO"]})
    assert err.field == "workloads[0] (chat).accelerators[1]"
    assert "unknown accelerator 'H1OO'" in err.message
    assert "h100-sxm" in err.fix and "procure catalog list accelerators" in err.fix


def test_unknown_vendor_suggests_the_near_one(catalog):
    err = refusal(catalog, vendors=["nvdia"])
    assert err.field == "vendors[0]" and "unknown vendor 'nvdia'" in err.message
    assert "did you mean 'nvidia'?" in err.fix and "amd" in err.fix


@pytest.mark.parametrize(
    "workload,top,field,words",
    [
        # mi300x is AMD's: the vendors list would silently drop it
        (
            {},
            {"accelerators": ["h100", "mi300x"], "vendors": ["nvidia"]},
            "accelerators[1]",
            "vendors",
        ),
        (
            {},
            {"accelerators": ["h100"], "exclude_accelerators": ["h100-sxm"]},
            "accelerators[0]",
            "exclude",
        ),
        (
            {},
            {"vendors": ["amd"], "exclude_vendors": ["amd"]},
            "vendors[0]",
            "both allowed and excluded",
        ),
        (
            {"accelerators": ["mi300x"]},
            {"accelerators": ["h100"]},
            "workloads[0] (chat).accelerators[0]",
            "the problem's accelerators",
        ),
        (
            {"accelerators": ["mi300x"], "runtime": "vllm-cuda"},
            {},
            "workloads[0] (chat).accelerators[0]",
            "runtime vllm-cuda runs on NVIDIA hardware only",
        ),
        (
            {"vendors": ["amd"], "runtime": "vllm-cuda"},
            {},
            "workloads[0] (chat).vendors[0]",
            "runtime vllm-cuda",
        ),
        (
            {"vendors": ["amd"]},
            {"vendors": ["nvidia"]},
            "workloads[0] (chat).vendors[0]",
            "problem's vendors",
        ),
    ],
)
def test_an_entry_another_list_leaves_out_is_refused(catalog, workload, top, field, words):
    err = refusal(catalog, workload, **top)
    assert err.field == field and words in err.message, err
    assert err.fix.startswith("remove")


def test_lists_that_leave_a_workload_nothing_are_refused(catalog):
    # vllm-rocm runs on AMD only, and the problem allows NVIDIA only
    err = refusal(catalog, {"runtime": "vllm-rocm"}, vendors=["nvidia"])
    assert err.field == "workloads[0] (chat).runtime"
    assert "may run on no accelerator" in err.message and "vendors ['nvidia']" in err.message
    assert "runtime vllm-rocm runs on AMD hardware only" in err.message


def test_the_problem_is_not_changed(catalog):
    data = {
        "name": "t",
        "horizon_months": 1,
        "accelerators": ["H100"],
        "workloads": [dict(CHAT, runtime="vllm-cuda")],
    }
    problem = parse_problem(copy.deepcopy(data))
    hardware_rules(problem, catalog)
    assert problem.accelerators == ["H100"]  # as written: the resolution is the rule's


def test_procure_schema_describes_the_new_fields():
    from typer.testing import CliRunner

    from solver.cli import app

    result = CliRunner().invoke(app, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.output)
    top = schema["properties"]
    for name in ("accelerators", "vendors", "exclude_accelerators", "exclude_vendors"):
        assert top[name]["description"], name
        assert schema["$defs"]["InferenceWorkload"]["properties"][name]["description"], name
    assert "procure catalog list accelerators" in top["accelerators"]["description"]
    assert (
        "vllm-cuda and tensorrt-llm NVIDIA"
        in (schema["$defs"]["InferenceWorkload"]["properties"]["runtime"]["description"])
    )
    # sites: a catalog id (a string) or a site described in full
    assert "your own" in top["sites"]["description"]
    site = schema["$defs"]["Site"]
    assert set(site["required"]) == {"name", "pue"}
    for name in (
        "location",
        "region",
        "residency_zone",
        "grid_gco2_per_kwh",
        "electricity_usd_per_kwh",
        "colocation_usd_per_kw_month",
        "colocation_usd_per_rack_month",
        "rack_power_kw",
        "staff_usd_per_server_year",
        "power_cap_kw",
    ):
        assert site["properties"][name]["description"], name
