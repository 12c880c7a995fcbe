"""A training workload's storage by default: its dataset and kept checkpoints in GB, from
its tokens and its model's parameters (:mod:`solver.inputs.cost_defaults` for the bytes
and their sources)."""

from __future__ import annotations

from solver.inputs.catalog import Catalog
from solver.inputs.cost_defaults import (
    CHECKPOINTS_KEPT,
    DATASET_BYTES_PER_TOKEN,
    checkpoint_bytes_per_param,
)
from solver.inputs.presets import resolve_model
from solver.inputs.problem import TrainingWorkload


def storage_gb(w: TrainingWorkload, catalog: Catalog) -> tuple[float, float]:
    """(dataset GB, checkpoints GB) of a training workload: tokens x
    :data:`DATASET_BYTES_PER_TOKEN`, and :data:`CHECKPOINTS_KEPT` x its model's parameters
    (the catalog's) x :func:`checkpoint_bytes_per_param`; GB = 1e9 bytes."""
    params = resolve_model(w.model, catalog, f"workloads[{w.name}].model").params
    dataset = w.tokens * DATASET_BYTES_PER_TOKEN / 1e9
    checkpoints = CHECKPOINTS_KEPT * params * checkpoint_bytes_per_param(w.optimizer) / 1e9
    return dataset, checkpoints


__all__ = ["storage_gb"]
