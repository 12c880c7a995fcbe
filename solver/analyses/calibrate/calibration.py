"""``procure calibrate``: every file read, every point predicted, the factors fitted and the
profiles laid out; the results as YAML and JSON. Pure: the CLI reads and writes the files.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd
import yaml

from solver.analyses.calibrate.fields import (
    FORMATS_FIX,
    POINT_COLUMNS,
    checked_runtime,
)
from solver.analyses.calibrate.fit import fit_factors, predict
from solver.analyses.calibrate.profiles import build_profiles
from solver.analyses.calibrate.readers import (
    read_measurements,
)
from solver.errors import ProcureError
from solver.inputs.catalog import Catalog


@dataclass(frozen=True)
class Calibration:
    """What ``procure calibrate`` found.

    Attributes
    ----------
    points
        One row per measurement: :data:`POINT_COLUMNS` plus ``predicted`` (output
        tokens/s of one replica by the physics) and ``predicted_rps``.
    factors
        :func:`fit_factors` of the points, per accelerator and runtime.
    profiles
        :func:`build_profiles` of the points, one per model and runtime.
    notes
        What was assumed or left out, one sentence each.
    """

    points: pd.DataFrame
    factors: pd.DataFrame
    profiles: list[dict]
    notes: list[str] = field(default_factory=list)


def calibrate(
    files: Sequence[tuple[str, str]],
    catalog: Catalog,
    *,
    accelerator: str | None = None,
    accelerator_names: dict[str, str] | None = None,
    model: str | None = None,
    runtime: str | None = None,
    tpot_slo_ms: float | None = None,
) -> Calibration:
    """Read every file, predict every point, fit the factors and lay out the profiles.

    Parameters
    ----------
    files
        (name, text) of each measurement file, in the order given.
    accelerator
        The accelerator of vLLM results (which do not name it).
    accelerator_names
        Names used in files (Mélange GPUs, CSV cells) -> catalog ids.
    model, runtime
        Override what the files say (every file).
    tpot_slo_ms
        Runs whose mean TPOT exceeds this are no bucket's measured figure.
    """
    if runtime is not None:
        checked_runtime(runtime, "", "--runtime")
    if tpot_slo_ms is not None and not (math.isfinite(tpot_slo_ms) and tpot_slo_ms > 0):
        raise ProcureError(
            f"{tpot_slo_ms} is not a positive time", field="--tpot-slo-ms", fix="e.g. 100"
        )
    if not files:
        raise ProcureError("no measurement files given", field="FILE", fix=FORMATS_FIX)
    rows: list[dict] = []
    notes: list[str] = []
    for name, text in files:
        found, said = read_measurements(
            name,
            text,
            catalog,
            accelerator=accelerator,
            accelerator_names=accelerator_names,
            model=model,
            runtime=runtime,
        )
        rows += found
        notes += said
    points = pd.DataFrame(rows, columns=list(POINT_COLUMNS))
    same = [c for c in POINT_COLUMNS if c not in ("file", "source")]
    duplicated = points.duplicated(subset=same)
    if duplicated.any():
        notes.append(
            f"{int(duplicated.sum())} point(s) repeat another file's figures exactly: counted once"
        )
        points = points[~duplicated].reset_index(drop=True)
    points = predict(points, catalog)
    factors = fit_factors(points)
    for _, r in factors.iterrows():
        if r["n_excluded"]:
            notes.append(
                f"{r['accelerator']} ({r['runtime']}): {r['n_excluded']} points without a "
                "ratio (zero measured, or the physics says the model does not fit) not fitted"
            )
    profiles = build_profiles(points, factors, catalog, tpot_slo_ms=tpot_slo_ms)
    return Calibration(points=points, factors=factors, profiles=profiles, notes=notes)


def profiles_yaml(calibration: Calibration, sources: Sequence[str]) -> str:
    """``profiles.yaml``: the profiles, ready to paste into an inference workload."""
    head = (
        "# Written by `procure calibrate` from: " + ", ".join(sources) + "\n"
        "# measured_throughput_rps: requests/s ONE accelerator sustains per bucket, in the\n"
        "# order of `buckets` (representative sizes = bucket midpoints). To use a profile, copy\n"
        "# `buckets` into a workload's traffic_mix (adding each bucket's share) and\n"
        "# measured_throughput_rps beside it, as in problems/traffic-mix-measured.yaml.\n"
        "# basis: measured, or calibrated (physics x fitted factor) where nothing was measured.\n"
    )
    body = yaml.safe_dump(
        {"profiles": calibration.profiles},
        sort_keys=False,
        default_flow_style=None,
        width=100_000,
    )
    return head + body


def calibration_json(calibration: Calibration) -> str:
    """Profiles, factors, points (measured vs predicted) and notes as JSON."""

    def records(frame: pd.DataFrame) -> list[dict]:
        clean = frame.astype(object).where(frame.notna(), None)
        return clean.to_dict(orient="records")

    return json.dumps(
        {
            "profiles": calibration.profiles,
            "factors": records(calibration.factors),
            "points": records(calibration.points),
            "notes": calibration.notes,
        },
        indent=2,
        default=_plain,
    )


def _plain(value: object) -> object:
    """JSON for numpy scalars (their Python value)."""
    if hasattr(value, "item"):
        return value.item()  # type: ignore[union-attr]
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")
