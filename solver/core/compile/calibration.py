"""Calibration: the factor that scales the physics to a workload's measured throughput."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import numpy as np

from solver import physics
from solver.inputs.catalog import Catalog
from solver.inputs.presets import ModelSpec
from solver.inputs.problem import (
    InferenceWorkload,
)


def calibrate_to_measured(
    w: InferenceWorkload,
    spec: ModelSpec,
    catalog: Catalog,
    memory_headroom: float,
    measured: dict[str, list[float]],
) -> dict:
    """Factor that scales the physics to a workload's measured per-bucket throughput.

    For every measured accelerator (one device per replica, as the profiles are taken)
    and bucket, the physics requests/s under the workload's SLOs is set beside the
    measured figure; the factor is the geometric mean of measured / physics over the
    points where both are positive (:func:`solver.physics.calibration_factor`). Cards
    without a profile then compete on physics x factor, not on physics alone.

    The profile states a throughput at the mean, so the factor is fitted against the
    physics at the mean; where the SLOs are checked at a percentile, ``tail_share`` (per
    measured accelerator and bucket, :func:`solver.physics.measured_tail_share`) is the
    share of the measurement the physics keeps at that percentile, and the calibrated
    cards are physics at the percentile x factor: neither plans more at the tail than at
    the mean.
    """
    accs = catalog.accelerators.loc[list(measured)]
    model = physics.served_model(spec, w.weight_precision, w.kv_precision)
    dev = physics.device_figures(
        cast(Mapping[str, Any], accs), w.weight_precision, False, w.runtime
    )

    def physics_rps(bucket: Any, load: physics.LoadPercentile | None) -> np.ndarray:
        res = physics.best_decode(
            model,
            prompt_tokens=bucket.prompt_tokens,
            output_tokens=bucket.output_tokens,
            tpot_slo_s=w.tpot_slo_s,
            ttft_slo_s=w.ttft_slo_s,
            d=np.ones(len(accs)),
            dev=dev,
            memory_headroom=memory_headroom,
            load=load,
        )
        return res.tokens_per_s / bucket.output_tokens

    mix = list(w.traffic_mix or [])
    # the profile is a mean-condition figure: fitted against the physics at the mean
    at_mean = np.column_stack([physics_rps(b, None) for b in mix])  # (accelerator, bucket)
    measured_rps = np.array([[float(measured[a][j]) for j in range(len(mix))] for a in accs.index])
    factor, points, spread = physics.calibration_factor(measured_rps.ravel(), at_mean.ravel())
    fit: dict[str, Any] = {
        "factor": factor,
        "points": points,
        "spread_log_ratio": spread,
        "measured_on": sorted(measured),
    }
    if w.load_percentile is not None:
        at_p = np.column_stack([physics_rps(b, w.load_percentile) for b in mix])
        share = physics.measured_tail_share(at_p, at_mean)
        fit["tail_share"] = {a: [float(x) for x in share[i]] for i, a in enumerate(accs.index)}
    return fit
