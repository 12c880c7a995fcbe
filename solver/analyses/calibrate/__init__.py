"""Calibration from measured serving throughput: per-bucket profiles and fitted factors.

``procure calibrate`` reads a user's own measurements (vLLM benchmark results, a CSV, Mélange
profiles), fits measured = factor x physics per accelerator and runtime, and lays the
measured requests/s out per request-size bucket: docs/concepts/capacity.md.
"""

from solver.analyses.calibrate.buckets import (
    BUCKET_EDGES_TOKENS,
    bucket_index,
    bucket_midpoints,
    bucket_order,
)
from solver.analyses.calibrate.calibration import (
    Calibration,
    calibrate,
    calibration_json,
    profiles_yaml,
)
from solver.analyses.calibrate.fields import (
    CSV_COLUMNS,
    DEFAULT_RUNTIME,
    MELANGE_ACCELERATORS,
    POINT_COLUMNS,
    RUNTIMES,
    VLLM_REQUIRED,
    catalog_model,
    parse_accelerator_options,
)
from solver.analyses.calibrate.fit import FACTOR_COLUMNS, fit_factors, physics_runtime, predict
from solver.analyses.calibrate.profiles import build_profiles
from solver.analyses.calibrate.readers import (
    read_measurements,
    read_measurements_csv,
    read_melange_profile,
    read_vllm_result,
)

__all__ = [
    "BUCKET_EDGES_TOKENS",
    "CSV_COLUMNS",
    "Calibration",
    "DEFAULT_RUNTIME",
    "FACTOR_COLUMNS",
    "MELANGE_ACCELERATORS",
    "POINT_COLUMNS",
    "RUNTIMES",
    "VLLM_REQUIRED",
    "bucket_index",
    "bucket_midpoints",
    "bucket_order",
    "build_profiles",
    "calibrate",
    "calibration_json",
    "catalog_model",
    "fit_factors",
    "parse_accelerator_options",
    "physics_runtime",
    "predict",
    "profiles_yaml",
    "read_measurements",
    "read_measurements_csv",
    "read_melange_profile",
    "read_vllm_result",
]
