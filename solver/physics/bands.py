"""Capacity error bands per (accelerator family, serving runtime, model class).

A serving capacity estimate is off by a factor that depends on where it was validated: the
accuracy table (bench/accuracy/accuracy_cases.csv) measures it per configuration. This
module ships that measurement: for each (accelerator family, runtime, model class) with at
least :data:`MIN_ROWS` fitted capacity rows, the root-mean-square of ln(measured /
predicted) capacity over those rows (the bias is part of the band: a class predicted 20%
fast has a band of at least ln 1.2 = 0.18). Holdout rows never enter it (issue 47: they
never set a default). A configuration outside the table is *not validated*: it is flagged
on the estimate and the plan and takes the widest band of the table,
:data:`WIDEST_BAND_LOG`.

Measured with::

    python bench/accuracy/accuracy.py --bands-table

which prints :data:`ERROR_BANDS` as shipped (tests/test_error_bands.py recomputes it from
the table and fails when the two differ). Capacity rows are the serving rows that measure
a throughput (ln measured / predicted) or a time per output token (ln predicted /
measured: capacity is batch / step time); time-to-first-token rows are not capacity.
"""

from __future__ import annotations

from dataclasses import dataclass

from solver.physics.constants import TRAINING_MFU_FAMILY_OF

# A (family, runtime, class) needs this many fitted capacity rows to count as validated:
# with fewer, the RMS of one or two errors says little about the next configuration
# (stated choice, not a measurement).
MIN_ROWS = 3

# Model classes: a mixture of experts reads a share of its weights per step and routes
# tokens across devices; dense models split at 20B parameters (7B-13B decode at small
# batches is launch- and overhead-bound, 70B-405B is bandwidth-bound).
DENSE_SMALL_MAX_PARAMS = 20e9
MODEL_CLASSES = ("dense-small", "dense-large", "moe")

# Serving families: the training families (constants.TRAINING_MFU_FAMILY_OF) plus the TPU
# generations they leave out; an accelerator in neither is its own family (never validated).
SERVING_FAMILY_OF: dict[str, str] = {**TRAINING_MFU_FAMILY_OF, "tpu-v6e": "google-tpu-v6e"}

# (family, runtime, model class) -> (RMS of ln(measured / predicted) capacity, fitted rows).
# Printed by `python bench/accuracy/accuracy.py --bands-table` (2026-12-03, 97 rows; AMD
# refitted on the sustained GEMM rate in session 61: 0.1684 -> 0.1328; Neuron's static
# compiled batch and serial prefill in session 62: 8B 0.332 -> 0.0162, 70B 0.2824 -> 0.2775,
# both still under 3 rows, so not validated).
ERROR_BANDS: dict[tuple[str, str, str], tuple[float, int]] = {
    ("amd-cdna3", "vllm-rocm", "dense-large"): (0.1328, 7),
    ("aws-trainium", "neuron", "dense-large"): (0.2775, 2),
    ("aws-trainium", "neuron", "dense-small"): (0.0162, 2),
    ("google-tpu-v5e", "jetstream", "dense-small"): (0.0332, 1),
    ("google-tpu-v6e", "tpu", "dense-large"): (0.0838, 2),
    ("intel-gaudi", "gaudi", "dense-large"): (0.1546, 16),
    ("intel-gaudi", "gaudi", "dense-small"): (0.2129, 11),
    ("nvidia-blackwell", "tensorrt-llm", "dense-large"): (0.206, 7),
    ("nvidia-hopper", "tensorrt-llm", "dense-large"): (0.1423, 12),
    ("nvidia-hopper", "tensorrt-llm", "dense-small"): (0.1828, 3),
}


def _validated_bands() -> list[float]:
    return [band for band, rows in ERROR_BANDS.values() if rows >= MIN_ROWS]


# The widest validated band: what a configuration outside the validated set is planned with.
WIDEST_BAND_LOG: float = max(_validated_bands())


@dataclass(frozen=True)
class ErrorBand:
    """One configuration's capacity error band.

    Attributes
    ----------
    family, runtime, model_class
        The configuration (accelerator family, serving runtime, model class).
    band_log
        RMS of ln(measured / predicted) capacity, dimensionless; the widest band when the
        configuration is not validated.
    rows
        Fitted capacity rows of the accuracy table for the configuration (0 when none).
    validated
        Whether it has at least :data:`MIN_ROWS` rows.
    """

    family: str
    runtime: str
    model_class: str
    band_log: float
    rows: int
    validated: bool

    def as_dict(self) -> dict[str, object]:
        """The band as plain values (estimate output, plan assumptions)."""
        return {
            "family": self.family,
            "runtime": self.runtime,
            "model_class": self.model_class,
            "band_log": self.band_log,
            "fitted_rows": self.rows,
            "validated": self.validated,
        }


def accelerator_family(accelerator_id: str) -> str:
    """The serving family of an accelerator id (itself when no family lists it)."""
    return SERVING_FAMILY_OF.get(accelerator_id, accelerator_id)


def model_class(params: float, experts: float = 1.0, experts_active: float = 1.0) -> str:
    """``moe`` when a token uses fewer routed experts than the model has, else
    ``dense-small`` up to :data:`DENSE_SMALL_MAX_PARAMS` parameters (a count, not
    billions) and ``dense-large`` above."""
    if experts > experts_active:
        return "moe"
    return "dense-small" if params <= DENSE_SMALL_MAX_PARAMS else "dense-large"


def error_band(accelerator_id: str, runtime: str, klass: str) -> ErrorBand:
    """The band of one (accelerator, runtime, model class); the widest band, flagged not
    validated, when the table has fewer than :data:`MIN_ROWS` rows for it."""
    family = accelerator_family(accelerator_id)
    band, rows = ERROR_BANDS.get((family, runtime, klass), (WIDEST_BAND_LOG, 0))
    validated = rows >= MIN_ROWS
    return ErrorBand(
        family, runtime, klass, band if validated else WIDEST_BAND_LOG, rows, validated
    )
