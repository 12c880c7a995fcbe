"""One verification run: the checks so far and what the line items add up to."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from solver.inputs.catalog import Catalog
from solver.inputs.hardware import hardware_rules
from solver.inputs.presets import ModelSpec, resolve_model
from solver.inputs.problem import BatchInferenceWorkload, InferenceWorkload, Problem
from solver.plan import LineItem, Plan
from solver.trust.verify.context import _Checks, _Context
from solver.trust.verify.unit_facts import _calibration


class _Run:
    """One verification: the checks so far and what the line items add up to."""

    def __init__(self, plan: Plan, problem: Problem, catalog: Catalog) -> None:
        self.plan, self.p, self.catalog = plan, problem, catalog
        self.ctx = _Context(problem, catalog)
        self.c = _Checks()
        self.specs = {w.name: resolve_model(w.model, catalog, w.name) for w in problem.workloads}
        self.factors: dict[str, float] = {}
        self.allowed_modes = set(problem.modes)
        # the accelerators each workload may run on, from its lists and runtime
        self.hardware = hardware_rules(problem, catalog)
        # capacity served per (workload, period, block, bucket or -1)
        self.served: dict[tuple, float] = defaultdict(float)
        self.units_in_use: dict[tuple, float] = defaultdict(
            float
        )  # (offering, mode, period, block)
        self.serving_units: dict[tuple, float] = defaultdict(float)
        self.period_cost: dict[str, float] = defaultdict(float)
        self.provider_cost: dict[str, float] = defaultdict(float)
        self.total_cost = 0.0
        self.total_kg = 0.0
        self.capex = 0.0
        self.bought: dict[str, list[tuple[str, float]]] = defaultdict(list)  # -> (period, units)
        self.committed: dict[tuple, list[tuple[str, float]]] = defaultdict(list)
        # savings plans: (provider, term) -> [(start period, USD/h)]; plan-rate USD/h
        # covered per (provider, term, period, block); units covered per (offering,
        # period, block)
        self.savings_plans: dict[tuple, list[tuple[str, float]]] = defaultdict(list)
        self.sp_covered: dict[tuple, float] = defaultdict(float)
        self.sp_cover_units: dict[tuple, float] = defaultdict(float)
        self.trained: dict[str, int] = defaultdict(int)
        self.unit_capacity: dict[tuple, list[tuple[float, float, str, str]]] = {}
        # (workload, period, block, provider, region, KV link) -> the disaggregated lines
        # of that group: (line, its unit's facts, KV GB per request) (verify/disagg.py)
        self.disagg_lines: dict[tuple, list[tuple[Any, dict, float]]] = defaultdict(list)
        # (workload, period, block) -> per group (prefill, decode, largest prefill unit,
        # largest decode unit), output tokens/s (verify/disagg.py)
        self.disagg_groups: dict[tuple, list[tuple[float, float, float, float]]] = defaultdict(list)
        # plan files (:func:`verify_plan_file`): per line index, its cost by period; per
        # purchase line (by id), the residual value credited at the horizon
        self.line_periods: dict[int, dict[str, float]] = {}
        self.residuals: dict[int, float] = {}

    def add_line(self, item: LineItem, cost_usd: float, kgco2e: float) -> None:
        """Count a usage line's recomputed cost and CO2e in the totals, its period and its
        provider."""
        self.total_cost += cost_usd
        self.total_kg += kgco2e
        self.period_cost[item.period] += cost_usd
        self.provider_cost[item.provider] += cost_usd

    def calibration_of(
        self, w: InferenceWorkload | BatchInferenceWorkload, spec: ModelSpec
    ) -> float:
        """The workload's calibration factor (computed once)."""
        if w.name not in self.factors:
            self.factors[w.name] = _calibration(w, spec, self.catalog, self.p.memory_headroom)
        return self.factors[w.name]
