"""A two-stage problem made ready to solve: its scenarios compiled from one unpruned compile,
pools kept when any scenario needs them, one model per scenario.
"""

from __future__ import annotations

import time

from solver.analyses.stochastic.scenarios import (
    demand_factors,
    has_throughput,
    keep_pools,
    pools_kept_in_any,
    price_factors,
    scenario_catalog,
    scenario_compiled,
    scenario_problem,
    scenarios_of,
    throughput_shares,
)
from solver.core.compile import Compiled, compile_problem
from solver.core.model import (
    build_model,
)
from solver.errors import ProcureError
from solver.inputs.catalog import Catalog
from solver.inputs.problem import (
    Problem,
    Scenario,
    Uncertainty,
)


class Setup:
    """The problem's scenarios compiled and built, pools kept if any scenario needs them."""

    def __init__(self, problem: Problem, catalog: Catalog) -> None:
        if problem.objective != "min_cost":
            raise ProcureError(
                f"two-stage planning minimises expected cost; the objective is {problem.objective}",
                field="objective",
                fix="use objective: min_cost with uncertainty:",
            )
        for i, w in enumerate(problem.workloads):
            if getattr(w, "switching_cost_usd", 0.0) > 0:  # not in the scenarios' objective
                raise ProcureError(
                    "two-stage planning does not charge a switching cost",
                    field=f"workloads[{i}] ({w.name}).switching_cost_usd",
                    fix="remove switching_cost_usd (or set fleet: autoscale or flat to keep "
                    "the fleet steady) with uncertainty:",
                )
        problem = at_catalog_prices(problem)
        started = time.perf_counter()
        self.problem, self.catalog = problem, catalog
        #: a ``time.perf_counter()`` time after which no scenario solve starts (None: no
        #: limit), and what the limit left out, in words (solve_stochastic)
        self.deadline: float | None = None
        self.cut: list[str] = []
        self.scenarios = scenarios_of(problem, catalog)  # refuses a problem without any
        assert problem.uncertainty is not None, "scenarios_of refuses a problem without one"
        self.uncertainty: Uncertainty = problem.uncertainty
        self.throughput = has_throughput(self.scenarios)
        self.caps = self.uncertainty.caps
        self.names = [s.name for s in self.scenarios]
        self.probs = [s.probability for s in self.scenarios]
        self.base = compile_problem(problem, catalog, prune_dominated=False)
        self.inputs, compiled, self.shares = [], [], []
        for s in self.scenarios:
            pf, df = price_factors(catalog, s), demand_factors(problem, s)
            problem_s = scenario_problem(problem, df, self.caps, s.throughput)
            self.inputs.append((problem_s, scenario_catalog(catalog, pf)))
            self.shares.append(throughput_shares(self.base, s.throughput))
            compiled.append(scenario_compiled(self.base, problem_s, pf, df, self.shares[-1]))
        #: with throughput scenarios, the problem as written (capacity at face value): its
        #: plan's commitments are compared with the two-stage plan's
        self.point = point_estimate(problem, catalog, self.base) if self.throughput else None
        self.kept = pools_kept_in_any(compiled + ([self.point] if self.point else []))
        self.compiled = keep_pools(compiled, self.kept)
        self.models = [build_model(c) for c in self.compiled]
        self.seconds = {"compile_and_build": time.perf_counter() - started}


def at_catalog_prices(problem: Problem) -> Problem:
    """``problem`` with ``price_guard: none``: two-stage planning prices its scenarios at
    catalog prices (its price scenarios are its treatment of price uncertainty, and its
    budgets, caps and risk measures read each scenario's catalog cost), so the guard is set
    aside, whether written or the default (a plan's echoed problem writes it out, so the two
    cannot be told apart) (docs/concepts/price-guard.md, "Two-stage planning")."""
    return problem.model_copy(update={"price_guard": "none"})


def point_estimate(problem: Problem, catalog: Catalog, base: Compiled) -> Compiled:
    """The problem as written (prices, demand and capacity at face value), compiled
    unpruned from ``base``."""
    as_given = Scenario(name="as_given", probability=1.0)
    df = demand_factors(problem, as_given)
    problem_pe = scenario_problem(problem, df, "every_scenario")
    return scenario_compiled(base, problem_pe, price_factors(catalog, as_given), df)
