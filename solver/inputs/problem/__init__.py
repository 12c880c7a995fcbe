"""Problem files: pydantic models of what a team asks (workloads and constraints).

A problem file is YAML. :func:`load_problem` reads one and returns a validated
:class:`Problem`; every mistake becomes one :class:`~solver.errors.ProcureError`
that names the file, the field path and the fix. ``procure schema`` prints the
JSON Schema generated from these models.

The package's modules: :mod:`~solver.inputs.problem.fields` (shared field types and
checks), :mod:`~solver.inputs.problem.shape` (a model's shape),
:mod:`~solver.inputs.problem.workloads`, :mod:`~solver.inputs.problem.fleet` (servers,
sites, commitments, quotas), :mod:`~solver.inputs.problem.scenarios` (uncertainty),
:mod:`~solver.inputs.problem.schema` (the :class:`Problem` itself) and
:mod:`~solver.inputs.problem.validate` (reading a file, the friendly errors).
"""

from __future__ import annotations

from solver.inputs.problem.fields import HOURS_PER_DAY, Mode, parse_duration_s
from solver.inputs.problem.fleet import ExistingReservation, ExistingServer, SavingsPlan, Site
from solver.inputs.problem.scenarios import (
    CapacityScenario,
    DemandMultiplier,
    PriceMultiplier,
    Scenario,
    Uncertainty,
    throughput_scenarios_from_text,
)
from solver.inputs.problem.schema import CompareApi, Problem
from solver.inputs.problem.shape import ModelShape
from solver.inputs.problem.validate import load_problem, parse_problem
from solver.inputs.problem.workloads import (
    BatchInferenceWorkload,
    InferenceWorkload,
    LoadBlock,
    LoadProfile,
    TrainingWorkload,
    Workload,
)

__all__ = [
    "HOURS_PER_DAY",
    "BatchInferenceWorkload",
    "CapacityScenario",
    "CompareApi",
    "DemandMultiplier",
    "ExistingReservation",
    "ExistingServer",
    "InferenceWorkload",
    "LoadBlock",
    "LoadProfile",
    "Mode",
    "ModelShape",
    "PriceMultiplier",
    "Problem",
    "SavingsPlan",
    "Scenario",
    "Site",
    "TrainingWorkload",
    "Uncertainty",
    "Workload",
    "load_problem",
    "parse_duration_s",
    "parse_problem",
    "throughput_scenarios_from_text",
]
