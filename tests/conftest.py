"""Shared fixtures: a tiny catalog with round numbers for hand-worked tests."""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from solver.core.model import Expression, LinearModel, Row
from solver.inputs.catalog import SCHEMAS, load_catalog
from solver.inputs.problem import parse_problem

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"

# Two real accelerators (figures from catalogs/accelerators.csv sources), one fictional
# provider "acme" with round prices so optima can be worked out by hand.
# One online workload the tiny catalog serves (an H100 holds 1,000 tok/s of Llama 3 8B at a
# 50 ms TPOT): the body of many test problems' ``workloads:`` list.
CHAT_WORKLOAD = """\
  - kind: inference
    name: chat
    model: llama-3-8b
    demand: {tokens_per_s: 1000}
    prompt_tokens: 500
    output_tokens: 200
    ttft_slo: 1 s
    tpot_slo: 50 ms
"""

TINY_ACCELERATORS = [
    dict(
        accelerator_id="h100-sxm",
        name="NVIDIA H100 SXM",
        vendor="nvidia",
        aliases="H100;H100 SXM5 80GB",
        device_class="datacenter",
        bf16_dense_tflops=989.4,
        fp8_dense_tflops=1978.9,
        int8_dense_tops=1978.9,
        memory_gb=80,
        mem_bandwidth_gbps=3350,
        scaleup_link="NVLink 4",
        scaleup_gbps=900,
        tdp_w=700,
        ecc=True,
        frameworks="pytorch;jax",
        purchase_price_usd=30000,
        embodied_kgco2e=164,
        source="test",
    ),
    dict(
        accelerator_id="l4",
        name="NVIDIA L4",
        vendor="nvidia",
        aliases="L4",
        device_class="datacenter",
        bf16_dense_tflops=121,
        fp8_dense_tflops=242.5,
        int8_dense_tops=242.5,
        memory_gb=24,
        mem_bandwidth_gbps=300,
        scaleup_link="PCIe Gen4",
        scaleup_gbps=0,
        tdp_w=72,
        ecc=True,
        frameworks="pytorch;jax",
        purchase_price_usd=2500,
        embodied_kgco2e=30,
        source="test",
    ),
]

# The CLI runs in this process (CliRunner): its deadline watchdog must not end the process
# (solver.cli.common._deadline); the alarm that stops a command at its limit stays on.
os.environ.setdefault("PROCURE_HARD_DEADLINE", "0")
# The CLI keeps the checked catalog between runs (solver.cli.common.cache_dir): the tests
# keep theirs in a folder of their own, removed at the end, never in the user's ~/.cache.
os.environ.setdefault("PROCURE_CACHE_DIR", tempfile.mkdtemp(prefix="procure-test-cache-"))
atexit.register(shutil.rmtree, os.environ["PROCURE_CACHE_DIR"], ignore_errors=True)


def offering(
    instance: str,
    acc: str,
    n: int,
    od: float,
    spot: float | None = None,
    r1: float | None = None,
    r3: float | None = None,
    region: str = "us-east",
    provider: str = "acme",
    cap: int = 100,
    nvlink: bool = True,
) -> dict:
    return dict(
        offering_id=f"{provider}/{region}/{instance}",
        provider=provider,
        region=region,
        instance_type=instance,
        accelerator_id=acc,
        accelerators_per_instance=n,
        vcpus=8,
        memory_gib=64,
        on_demand_usd_per_hour=od,
        spot_usd_per_hour=spot,
        reserved_1y_usd_per_hour=r1,
        reserved_3y_usd_per_hour=r3,
        nvlink=nvlink,
        network_gbps=3200,
        availability_cap_instances=cap,
        price_date="2026-11-22",
        source="test",
    )


TINY_REGIONS = [
    dict(
        provider="acme",
        region="us-east",
        country="US",
        residency_zone="us",
        grid_gco2_per_kwh=400,
        grid_year=2023,
        grid_source="test",
        pue=1.0,
        electricity_usd_per_kwh=0.1,
        source="test",
    ),
    dict(
        provider="acme",
        region="eu-north",
        country="SE",
        residency_zone="eu",
        grid_gco2_per_kwh=40,
        grid_year=2023,
        grid_source="test",
        pue=1.0,
        electricity_usd_per_kwh=0.1,
        source="test",
    ),
]
TINY_SERVERS = [
    dict(
        server_id="box-h100",
        name="8x H100 box",
        accelerator_id="h100-sxm",
        accelerators_per_server=8,
        capex_usd=200000,
        power_kw=10,
        lead_time_days=0,
        lifetime_years=5,
        maintenance_usd_per_year=0,
        nvlink=True,
        network_gbps=3200,
        embodied_kgco2e=2000,
        source="test",
    ),
]
TINY_SITES = [
    dict(
        site_id="colo-us",
        name="Test colo",
        kind="colocation",
        country="US",
        residency_zone="us",
        grid_gco2_per_kwh=400,
        grid_year=2023,
        grid_source="test",
        pue=1.0,
        electricity_usd_per_kwh=0.0,
        colocation_usd_per_kw_month=0.0,
        power_cap_kw=1000,
        source="test",
    ),
]


#: No band at any confidence level (write_catalog's default): the guard changes nothing.
ZERO_PRICE_BANDS: dict[str, float] = {
    "quote": 0.0,
    "list": 0.0,
    "third_party": 0.0,
    "unverified": 0.0,
}


def write_catalog(
    directory: Path,
    offerings: list[dict],
    *,
    accelerators=None,
    regions=None,
    servers=None,
    sites=None,
    price_bands: dict[str, float] | None = ZERO_PRICE_BANDS,
) -> Path:
    """Write a catalog folder (models.csv copied from the shipped catalog).

    ``price_bands`` (confidence -> band fraction) is written as its price_bands.csv: 0 for
    every level by default, so a small catalog's figures stay hand-workable with the guard
    on (price_guard band_top, the default); None writes none (the shipped bands apply)."""
    directory.mkdir(parents=True, exist_ok=True)
    if price_bands is not None:
        rows = [
            {"confidence": level, "band_fraction": band, "basis": "stated", "source": "a test"}
            for level, band in price_bands.items()
        ]
        pd.DataFrame(rows).to_csv(directory / "price_bands.csv", index=False)
    tables = {
        "accelerators.csv": accelerators or TINY_ACCELERATORS,
        "offerings.csv": offerings,
        "regions.csv": regions or TINY_REGIONS,
        "servers.csv": TINY_SERVERS if servers is None else servers,
        "sites.csv": sites or TINY_SITES,
    }
    for file, rows in tables.items():
        frame = pd.DataFrame(rows, columns=list(rows[0]) if rows else list(SCHEMAS[file]))
        frame.to_csv(directory / file, index=False)
    shutil.copy(ROOT / "catalogs" / "models.csv", directory / "models.csv")
    return directory


@pytest.fixture(scope="session")
def seed_solved() -> tuple[int, str]:
    """The shipped seed solved once per test run, as ``procure solve
    problems/seed-2m-13b.yaml --format json --reproducible`` prints it from the project
    root: (exit code, output)."""
    import os

    from typer.testing import CliRunner

    from solver.cli import app

    here = Path.cwd()
    os.chdir(ROOT)
    try:
        args = ["solve", "problems/seed-2m-13b.yaml", "--format", "json", "--reproducible"]
        result = CliRunner().invoke(app, args)
    finally:
        os.chdir(here)
    return result.exit_code, result.output


@pytest.fixture(scope="session")
def seed_plan(seed_solved):
    """The shipped seed's verified plan (a :class:`solver.plan.Plan`), solved once."""
    import json

    from solver.plan import Plan

    code, output = seed_solved
    assert code == 0, output
    return Plan.model_validate(json.loads(output))


def seed_problem(fleet: str | None = None):
    """The shipped seed (a :class:`solver.inputs.problem.Problem`); with ``fleet``, its
    serving workload at that ``fleet`` instead of the default (autoscale)."""
    from solver.inputs.problem import load_problem

    p = load_problem(ROOT / "problems" / "seed-2m-13b.yaml")
    if fleet is None:
        return p
    workloads = [
        w.model_copy(update={"fleet": fleet}) if w.kind == "inference" else w for w in p.workloads
    ]
    return p.model_copy(update={"workloads": workloads})


@pytest.fixture(scope="session")
def seed_per_block_plan():
    """The seed with its serving at the opt-in ``fleet: per_block``, solved once (under the
    default price guard): 3 Seeweb A100 at base, 4 Seeweb H200 at shoulder, 6 Lambda GH200
    at peak, $345,236.89 (tests/plan/test_provenance.py works its lines). For tests worked
    by hand on that plan's lines."""
    from solver.inputs.catalog import load_catalog
    from solver.solve import solve_problem

    return solve_problem(seed_problem("per_block"), load_catalog())


@pytest.fixture
def tiny_catalog(tmp_path):
    """A loader: tiny_catalog(offerings, **tables) -> Catalog."""

    def make(offerings: list[dict], **tables):
        return load_catalog(write_catalog(tmp_path / "catalog", offerings, **tables))

    return make


# --------------------------------------------------------------------------- serving
# Tiny serving problems whose optimum is plain arithmetic (tests/core/test_model.py): an H100
# instance serves 10 requests/s of a 100/100-token bucket, an L4 instance 2; one period of
# one month = 730 hours.

HOURS = 730.0


def serve(rps: float, **extra) -> dict:
    """An online workload over one 100/100-token bucket with measured throughput.

    ``max_utilisation`` is 1 (capacity = peak demand) so that the optima of the tests
    built on it stay plain arithmetic about the family each test is about; the 0.8
    default and N+1 are worked by hand in tests/core/test_model_headroom.py.
    """
    w = {
        "max_utilisation": 1.0,
        "kind": "inference",
        "name": "chat",
        "model": "llama-3-8b",
        "demand": {"requests_per_s": rps},
        "prompt_tokens": 100,
        "output_tokens": 100,
        "ttft_slo": "1 s",
        "tpot_slo": "50 ms",
        "traffic_mix": [{"prompt_tokens": 100, "output_tokens": 100, "share": 1.0}],
        "measured_throughput_rps": {"h100-sxm": [10.0], "l4": [2.0]},
    }
    w.update(extra)
    return w


#: the tiny problems are compute worked by hand: no categories beside compute (their
#: defaults are tests/plan/test_default_costs.py's); a test gives ``costs=`` to have them
COMPUTE_ONLY = {"costs": "none"}


def problem(workloads, **extra):
    """A one-month problem of these workloads, on demand unless ``modes`` says; compute
    only unless ``costs`` says (:data:`COMPUTE_ONLY`)."""
    data = {"name": "tiny", "horizon_months": 1, "modes": ["on_demand"], "workloads": workloads}
    data.update(COMPUTE_ONLY)
    data.update(extra)
    return parse_problem(data)


H1 = offering("h1", "h100-sxm", 1, 4.0, spot=2.0, r1=3.0, r3=2.0)
L4 = offering("l4", "l4", 1, 1.0, spot=0.4, nvlink=False)


def units(plan, item="rent"):
    """Offering -> units of the plan's line items of one kind."""
    out = {}
    for i in plan.line_items:
        if i.item == item:
            out[i.offering] = out.get(i.offering, 0) + i.units
    return out


def check(plan, name: str) -> tuple[bool, str]:
    """(ok, detail) of the verifier's check ``name`` on a plan (a Plan or its JSON): detail
    "N checked" counts what it recomputed. A KeyError when the verifier did not run it, so
    that a test can ask which check held a plan, not only whether the plan is verified
    (solve refuses a plan that fails any)."""
    rows = plan["checks"] if isinstance(plan, dict) else [c.model_dump() for c in plan.checks]
    found = {c["name"]: (c["ok"], c["detail"]) for c in rows}
    return found[name]


# --------------------------------------------------------------------------- training

H8 = offering("h8", "h100-sxm", 8, 32.0, spot=16.0)


def train(**extra) -> dict:
    w = {"kind": "training", "name": "pretrain", "model": "dense-7b", "tokens": 1e11}
    w.update(extra)
    return w


def training_problem(workloads, **extra):
    """A one-month training problem, on demand or spot; compute only unless ``costs``
    says (:data:`COMPUTE_ONLY`)."""
    data = {
        "name": "train",
        "horizon_months": 1,
        "modes": ["on_demand", "spot"],
        "workloads": workloads,
        **COMPUTE_ONLY,
    }
    data.update(extra)
    return parse_problem(data)


def brute_force(cases, demand, hours, *, n_plus_1=False):
    """Min cost over every unit vector within caps; capacity >= demand and >= 1 unit.

    With ``n_plus_1``, capacity minus the largest unit in use must meet the demand.
    """
    best = None
    ranges = [range(c["cap"] + 1) for c in cases]
    for counts in itertools.product(*ranges):
        if sum(counts) < 1:
            continue
        capacity = sum(n * c["rps"] for n, c in zip(counts, cases, strict=True))
        if n_plus_1:
            capacity -= max(c["rps"] for n, c in zip(counts, cases, strict=True) if n > 0)
        if capacity < demand - 1e-9:
            continue
        cost = sum(n * c["price"] * hours for n, c in zip(counts, cases, strict=True))
        best = cost if best is None or cost < best else best
    return best


# --------------------------------------------------------------------------- backends


def knapsack_cover() -> LinearModel:
    # min 3a + 5b  s.t. 2a + 4b >= 7, a, b integer >= 0.
    # a=4,b=0 -> 12; a=2,b=1 -> 11; a=0,b=2 -> 10 (8 >= 7); a=1,b=2 -> 13. Optimum 10.
    variables = pd.DataFrame(
        {
            "name": ["a", "b"],
            "kind": ["x", "x"],
            "integer": [True, True],
            "lb": [0.0, 0.0],
            "ub": [np.inf, np.inf],
        }
    )
    rows = [Row("cover[]", "demand", (), {0: 2.0, 1: 4.0}, ">=", 7.0)]
    objective = Expression()
    objective.coefs.update({0: 3.0, 1: 5.0})
    return LinearModel(variables, rows, objective, {})
