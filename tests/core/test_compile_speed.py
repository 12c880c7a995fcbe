"""The compile's per-device sharing (solver/core/compile/training.py ``DEVICE_KEY``) changes
no number: a generated mid case compiles to the same options, capacities and model (rows,
columns, coefficients, to the last bit) as when every pool counts as its own device.

The instance is bench/generate.py's (the shipped catalog grown to 2,000 offerings: each
accelerator and unit shape repeated in many synthetic regions, the case the sharing is for).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from generate import generated_problem, scaled_catalog  # noqa: E402

from solver.core.compile import assemble, compile_problem  # noqa: E402
from solver.core.compile.requirements import requirement_mask  # noqa: E402
from solver.core.compile.training import DEVICE_KEY, distinct_rows, with_device_key  # noqa: E402
from solver.core.model import build_model  # noqa: E402


@pytest.fixture(scope="module")
def case():
    """2,000 offerings x 24 workloads x 2 monthly periods."""
    return generated_problem(24, 2, seed=3), scaled_catalog(2_000, seed=1)


def _own_device(pools: pd.DataFrame) -> pd.DataFrame:
    """Every pool its own device: each figure computed per pool, as before the sharing."""
    return pools.assign(**{DEVICE_KEY: np.arange(len(pools))})


def test_shared_devices_compile_to_the_same_model(case, monkeypatch):
    problem, catalog = case
    shared = compile_problem(problem, catalog)
    keyed = with_device_key(shared.pools)
    # the sharing is real here: far fewer devices than pools
    assert keyed[DEVICE_KEY].nunique() * 10 < len(keyed)
    monkeypatch.setattr(assemble, "with_device_key", _own_device)
    apart = compile_problem(problem, catalog)
    assert len(shared.options) > 1_000  # a case with options to compare
    for name in ("options", "bucket_capacity", "training_hours", "demand", "pools"):
        pd.testing.assert_frame_equal(getattr(shared, name), getattr(apart, name), check_exact=True)
    assert shared.report.as_dict() == apart.report.as_dict()
    a, b = build_model(shared, cap_demand_rows=True), build_model(apart, cap_demand_rows=True)
    pd.testing.assert_frame_equal(a.variables, b.variables, check_exact=True)
    assert [(r.name, r.sense, r.rhs, r.coefs) for r in a.rows] == [
        (r.name, r.sense, r.rhs, r.coefs) for r in b.rows
    ]
    assert a.objective.coefs == b.objective.coefs
    assert a.objective.constant == b.objective.constant


def test_distinct_rows_is_pandas_factorize_of_the_rows():
    # the reference: pandas' factorize of the rows as tuples, first appearance first
    frame = pd.DataFrame(
        {
            "accelerator_id": ["h100", "a100", "h100", "l4", "a100", "h100"],
            "scaleup_gbps": [900.0, 600.0, 900.0, np.nan, 600.0, 450.0],
            "vendor": ["nvidia"] * 6,
        }
    )
    where, distinct = distinct_rows(frame)
    # rows 0 and 2 equal, 1 and 4 equal; row 5 differs from 0 in scaleup only
    assert where.tolist() == [0, 1, 0, 2, 1, 3]
    ref_where, ref = pd.factorize(pd.MultiIndex.from_frame(frame.fillna(-1.0)))
    assert where.tolist() == ref_where.tolist()
    assert [d[0] for d in distinct] == [r[0] for r in ref]
    assert np.isnan(distinct[2][1])  # a missing value is kept as it is


def test_frameworks_once_per_list_as_per_pool(case):
    problem, catalog = case
    pools = compile_problem(problem, catalog).pools
    for w in problem.workloads[:6]:
        ok, _ = requirement_mask(w, pools)
        # the per-pool test it replaces
        fw = (";" + pools["frameworks"].astype(str) + ";").str.contains(
            f";{w.framework};", regex=False
        )
        assert not (ok & ~fw.to_numpy(bool)).any()  # nothing the framework forbids
        assert ok.sum() > 0
