"""Tail by default (issue 47, Build 2): a serving plan sized at a percentile never counts
on more capacity than the same plan at the mean, on the physics path, on a measured
profile and on the cards calibrated to it (docs/guides/operating-point.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from solver import physics
from solver.core.compile import compile_problem
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import load_problem

ROOT = Path(__file__).resolve().parents[2]


def _at(problem_file: str, percentile: float | None):
    problem = load_problem(ROOT / "problems" / problem_file)
    workloads = [
        w.model_copy(update={"slo_percentile": percentile}) if w.kind == "inference" else w
        for w in problem.workloads
    ]
    return compile_problem(
        problem.model_copy(update={"workloads": workloads}), load_catalog(), prune_dominated=False
    )


def _capacity(compiled) -> pd.Series:
    """Per (workload, pool): output tokens/s per unit; with a traffic mix, per (workload,
    pool, bucket): requests/s per unit, the figures the model serves each bucket with (a
    mix's time-shared total is not one: a card that drops a slow bucket at p99 shares
    its time over faster ones)."""
    o = compiled.options
    serving = o[o["workload_kind"] == "inference"]
    if compiled.bucket_capacity.empty:
        return serving.groupby(["workload", "pool_id"])["tokens_per_s_per_unit"].max()
    rows = compiled.bucket_capacity.merge(serving[["option_id", "workload", "pool_id"]])
    return rows.groupby(["workload", "pool_id", "bucket"])["requests_per_s_per_unit"].max()


def test_a_measured_throughput_keeps_the_physics_share_at_the_tail() -> None:
    # physics requests/s at p99 / at the mean: 2 / 4 = 0.5; 0 / 5 = 0 (the physics meets
    # no p99 there); the third point has no mean figure and takes the lowest positive
    # ratio of the others, 0.5; a share above 1 is clipped to 1 (6 / 3)
    share = physics.measured_tail_share(np.array([2.0, 0.0, 3.0, 6.0]), np.array([4, 5, 0, 3.0]))
    assert share.tolist() == [0.5, 0.0, 0.5, 1.0]
    # no mean figure anywhere: the measurement is kept whole
    assert physics.measured_tail_share(np.array([1.0]), np.array([0.0])).tolist() == [1.0]


@pytest.mark.parametrize("problem_file", ["traffic-mix-measured.yaml", "seed-2m-13b.yaml"])
def test_no_pool_counts_on_more_capacity_at_p99_than_at_the_mean(problem_file: str) -> None:
    mean, tail = _capacity(_at(problem_file, None)), _capacity(_at(problem_file, 0.99))
    # every pool that serves at p99 serves at the mean, and with at most its capacity
    assert set(tail.index) <= set(mean.index)
    over = tail - mean.reindex(tail.index)
    assert (over <= 1e-9 * mean.reindex(tail.index)).all(), over[over > 0]


def test_a_measured_profile_is_fitted_at_the_mean_whatever_the_percentile() -> None:
    # the profile is a mean-condition figure: the calibration factor is the same at p99
    # and at the mean (0.3296, geometric mean of measured / physics over 124 points; 0.3525
    # before the sizing ran prefill as chunks and the NVIDIA fractions were refit, issue 47),
    # and only p99 carries tail shares
    mean, tail = _at("traffic-mix-measured.yaml", None), _at("traffic-mix-measured.yaml", 0.99)
    fit_mean = mean.report.calibration["chat-7b-mix"]
    fit_tail = tail.report.calibration["chat-7b-mix"]
    assert fit_mean["factor"] == pytest.approx(0.32963, abs=5e-5)
    assert fit_tail["factor"] == pytest.approx(fit_mean["factor"], rel=1e-12)
    assert "tail_share" not in fit_mean
    shares = [s for values in fit_tail["tail_share"].values() for s in values]
    assert len(shares) == 4 * 31 and all(0.0 <= s <= 1.0 for s in shares)
