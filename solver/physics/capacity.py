"""Capacity a plan counts on: demand in tokens/s, the error band's share at a confidence,
calibration against measured points, and a measured profile's share at a percentile.

Split from solver/physics/inference.py (its step and operating point) at the seam; the
inference module re-exports these names.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

from solver.physics.hardware import capacity_band_log

SECONDS_PER_DAY = 86_400.0


def demand_tokens_per_s(
    *,
    users: float | None = None,
    requests_per_user_per_day: float | None = None,
    tokens_per_s: float | None = None,
    requests_per_s: float | None = None,
    output_tokens: float,
) -> float:
    """Average output tokens/s from users x requests, requests/s, or tokens/s."""
    if tokens_per_s is not None:
        return float(tokens_per_s)
    if requests_per_s is not None:
        return float(requests_per_s) * output_tokens
    if users is None or requests_per_user_per_day is None:
        raise ValueError("demand needs users and requests_per_user_per_day")
    return users * requests_per_user_per_day * output_tokens / SECONDS_PER_DAY


def capacity_derate(confidence: float | None, band_log: np.ndarray | float) -> np.ndarray:
    """Share of a capacity estimate that holds at ``confidence``.

    With ln(true / estimate) taken as normal with standard deviation ``band_log`` (the
    accuracy table's RMS log error, constants.CAPACITY_BAND_LOG), the capacity met with
    probability c is estimate x exp(-z_c band): z_0.9 = 1.2816, so a 0.283 band keeps
    exp(-0.3627) = 0.696 of the estimate. None (no confidence asked) keeps all of it.
    """
    band = np.asarray(band_log, dtype=float)
    if confidence is None:
        return np.ones(band.shape)
    z = NormalDist().inv_cdf(float(confidence))
    return np.exp(-z * band)


def planned_capacity_share(
    confidence: float | None,
    optimism: float,
    vendor: np.ndarray,
    source: np.ndarray | str,
    runtime: str | None = None,
    accelerator: np.ndarray | None = None,
    model_class: str | None = None,
) -> np.ndarray:
    """Share of each capacity estimate a plan counts on: the band's quantile
    at ``confidence`` (:func:`solver.physics.inference.capacity_derate`; 1 without one),
    divided by ``optimism`` (1.5: plan as if every estimate were 1.5x too high). The band
    is the (family, runtime, model class)'s when ``accelerator`` and ``model_class`` are
    given (:func:`solver.physics.hardware.capacity_band_log`)."""
    band = capacity_band_log(
        np.asarray(vendor, dtype=object), source, runtime, accelerator, model_class
    )
    return capacity_derate(confidence, band) / float(optimism)


def calibration_factor(measured: np.ndarray, predicted: np.ndarray) -> tuple[float, int, float]:
    """Geometric mean of measured / predicted over points where both are positive.

    Returns (factor, points used, spread), the spread being the largest
    |ln(ratio / factor)|: 0 when one factor explains every point, ln 2 when some point
    is off by 2x after scaling. No usable point gives factor 1.0 and 0 points.
    """
    measured = np.asarray(measured, dtype=float)
    predicted = np.asarray(predicted, dtype=float)
    ok = (measured > 0) & (predicted > 0) & np.isfinite(measured) & np.isfinite(predicted)
    if not ok.any():
        return 1.0, 0, 0.0
    log_ratio = np.log(measured[ok] / predicted[ok])
    centre = float(log_ratio.mean())
    return float(np.exp(centre)), int(ok.sum()), float(np.abs(log_ratio - centre).max())


def measured_tail_share(at_percentile: np.ndarray, at_mean: np.ndarray) -> np.ndarray:
    """Share of a throughput measured at the mean that the physics keeps at a percentile.

    A measured profile (requests/s per bucket) states a throughput, not a latency
    distribution: it is taken as the mean-condition figure and scaled by the physics' own
    ratio at / mean (requests/s, same accelerator and bucket), so a tail check never plans
    more than the measurement (docs/guides/operating-point.md). Points where the physics
    has no mean figure take the lowest positive ratio of the others (1 where there is
    none). Ratios are clipped to [0, 1].

    Parameters
    ----------
    at_percentile, at_mean : np.ndarray
        Physics requests/s at the SLO percentile under load, and at the mean.

    Returns
    -------
    np.ndarray
        Share per point, dimensionless, in [0, 1].
    """
    p = np.asarray(at_percentile, dtype=float)
    m = np.asarray(at_mean, dtype=float)
    known = m > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.clip(np.where(known, p / m, 0.0), 0.0, 1.0)
    positive = ratio[known & (ratio > 0)]
    fallback = float(positive.min()) if positive.size else 1.0
    return np.where(known, ratio, fallback)
