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
    """
    accs = catalog.accelerators.loc[list(measured)]
    model = physics.served_model(spec, w.weight_precision, w.kv_precision)
    dev = physics.device_figures(
        cast(Mapping[str, Any], accs), w.weight_precision, False, w.runtime
    )
    measured_rps, physics_rps = [], []
    for j, bucket in enumerate(w.traffic_mix or []):
        res = physics.best_decode(
            model,
            prompt_tokens=bucket.prompt_tokens,
            output_tokens=bucket.output_tokens,
            tpot_slo_s=w.tpot_slo_s,
            ttft_slo_s=w.ttft_slo_s,
            d=np.ones(len(accs)),
            dev=dev,
            memory_headroom=memory_headroom,
            load=w.load_percentile,
        )
        measured_rps += [float(measured[a][j]) for a in accs.index]
        physics_rps += list(res.tokens_per_s / bucket.output_tokens)
    factor, points, spread = physics.calibration_factor(
        np.array(measured_rps), np.array(physics_rps)
    )
    return {
        "factor": factor,
        "points": points,
        "spread_log_ratio": spread,
        "measured_on": sorted(measured),
    }
