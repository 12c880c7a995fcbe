"""The warm engine: one problem kept compiled and solved, its variants re-solved in place
(docs/concepts/warm-engine.md).

Per problem the engine keeps the catalog parsed, the problem compiled (once with every
option, and pruned per *structure*), each structure's model in a live HiGHS session with
the last plan and the last few proven plans. A variant (:mod:`solver.analyses.engine.kinds`) is laid
over a structure by name (:mod:`solver.analyses.engine.delta`) and

- answered without a solve when a plan proven before is still proven for it
  (:mod:`solver.analyses.engine.inherit`), else
- re-solved in place, starting from the last plan (a MIP start).

The base structure prunes dominated options with a budget and a carbon cap row in the
model (open where the problem has none): dominance keeps every option any budget or cap
may need, so a budget or cap variant is exact in place. Leaving out a provider or region,
or moving prices, can make a pruned option optimal, and a demand factor moves the
pruning's bounds themselves: unless the base's proof carries over (a tightening, or a
price rise, of the whole problem), such a variant is compiled afresh with its own
pruning, and solved from the last plan carried by name. Every plan goes through the
verifier as a cold solve's does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np

from solver.analyses.engine.delta import (
    StructureIndex,
    Target,
    activities,
    apply,
    carried_back,
    target_of,
)
from solver.analyses.engine.inherit import feasible, still_proven
from solver.analyses.engine.kinds import (
    OPEN_BUDGET_USD,
    OPEN_CAP_TCO2E,
    Change,
    allowed_options,
    change_of,
)
from solver.analyses.engine.monotone import (
    POINTS,
    SAME_COST,
    Point,
    at_least_as_hard,
    no_harder,
    point_of,
)
from solver.analyses.engine.plan import verified_plan
from solver.core.backends import HighsSession, SolveOptions, SolveResult, Termination
from solver.core.columns import use_columns
from solver.core.compile import Compiled, compile_problem, repruned, with_options
from solver.core.compile.demand import build_demand
from solver.core.matrix import LinearModel
from solver.core.model import budget_bound, build_model, has_second_stage
from solver.core.refine import refine_periods
from solver.core.restrictions import period_restrictions
from solver.core.root import use_root
from solver.errors import InfeasibleError
from solver.inputs.catalog import Catalog, catalog_sha256
from solver.inputs.problem import Problem
from solver.plan import Plan
from solver.plan.loss_cost import surviving
from solver.solve import Solution, charges_moves, checked, explained, solve_verified

#: HiGHS options of the engine's fresh solves (a variant pruned for itself): its primal
#: heuristics off (RINS, RENS, the root's reduced-cost heuristic and the heuristic effort).
#: Those solves start from a plan (the last one, one proven for a neighbouring variant,
#: else the restricted MIP's), so the heuristics only look for plans it has; the proof is
#: HiGHS's as ever. Not in place: a carbon cap of 74.3 t solved in place without them
#: stopped within the gap at $6.14 (1.6e-5) above the cold plan, with them at the cold
#: plan. Measured on the
#: seed's 20 demand variants of bench/speed/warm_engine.py, each solved both ways one after
#: the other (bench/speed/warm_heuristics.py): median 1.61 s without them against 2.32 s
#: with them, the same optima (bench/RESULTS.md, "warm_engine.py").
NO_HEURISTICS = {
    "mip_heuristic_effort": 0.0,
    "mip_heuristic_run_rins": False,
    "mip_heuristic_run_rens": False,
    "mip_heuristic_run_root_reduced_cost": False,
}

#: proven plans kept per structure, the first (the base's) and the newest (a variant is
#: checked against each: the base's proof serves every looser limit, a capped one the caps
#: below it)
PROOFS = 8


@dataclass
class Proven:
    """A plan proven within ``gap`` for ``target`` (structure columns), the model of
    ``problem``."""

    target: Target
    values: np.ndarray
    bound: float | None
    gap: float | None
    problem: Problem


@dataclass
class Structure:
    """One compiled, pruned model in a live HiGHS session and what it last held."""

    compiled: Compiled
    model: LinearModel
    index: StructureIndex
    session: HighsSession
    own: Target  # the model as built
    now: Target  # what the session holds
    values: np.ndarray | None = None
    proofs: list[Proven] = field(default_factory=list)  # newest first, PROOFS at most


@dataclass(frozen=True)
class Answer:
    """A variant's verified plan and how the engine got it.

    Attributes
    ----------
    plan
        The verified plan (as :func:`solver.solve.solve_verified` returns it, without the
        period-structure warnings' second solve).
    how
        ``carried`` (a plan proven before, still proven: no solve), ``warm`` (changed in
        place and re-solved from the last plan), ``fresh`` (compiled afresh with its own
        pruning, solved from the last plan), ``cold`` (:func:`solve_verified`: a change
        the engine does not make, or a problem it does not take).
    kind
        The variant's kind (:attr:`solver.analyses.engine.kinds.Change.kind`), or ``other``.
    seconds
        Wall time of the answer, plan and verification included.
    changed
        Costs, bounds and coefficients changed in place.
    """

    plan: Plan
    how: str
    kind: str
    seconds: float
    changed: int = 0


def _open_rows(problem: Problem) -> Problem:
    """``problem`` with a budget and a carbon cap row that bind nothing where it has none."""
    update: dict = {}
    if problem.budget_usd is None:
        update["budget_usd"] = OPEN_BUDGET_USD
    if problem.carbon_cap_tco2e is None:
        update["carbon_cap_tco2e"] = OPEN_CAP_TCO2E
    return problem.model_copy(update=update)


def engine_handles(problem: Problem, compiled: Compiled) -> bool:
    """Whether the engine re-solves variants of ``problem`` (else every answer is cold):
    a one-stage problem solved as one full model, whose solve adds no second search
    (stay-put moves, loss costs, split periods or period-structure warnings)."""
    return not (
        has_second_stage(problem)
        or charges_moves(problem)
        or surviving(problem)
        or use_columns(compiled, "auto")
        or use_root(compiled, "auto")
        or period_restrictions(compiled)
        or ((r := refine_periods(compiled)) is not None and r.split)
    )


def _only_left_out(proved: Problem, problem: Problem) -> bool:
    """Whether ``problem`` is ``proved`` with providers or regions left out, nothing else."""
    change = change_of(proved, problem, [])
    return change is not None and not change.demand and change.fields <= {"providers", "regions"}


def _checked(
    result: SolveResult, compiled: Compiled, problem: Problem, catalog: Catalog
) -> SolveResult:
    """:func:`solver.solve.checked`, an infeasible variant told what to relax as a cold
    solve tells it (:func:`solver.solve.explained`)."""
    try:
        return checked(result, compiled)
    except InfeasibleError as exc:
        raise explained(exc, problem, catalog, None) from None


def _continuous_again(model: LinearModel, values: np.ndarray) -> np.ndarray | None:
    """``values`` with its whole units (integer columns) kept and its continuous columns
    (a traffic mix's shares of a bucket, ...) solved again for ``model`` at least cost;
    None where the units admit no plan, or the model has no continuous column."""
    integer = model.variables["integer"].to_numpy(bool)
    if integer.all():
        return None
    session = HighsSession(model)
    fixed = np.flatnonzero(integer)
    session.set_bounds(fixed, values[fixed], values[fixed])
    result = session.solve(SolveOptions(start_heuristic=False))
    return result.values if result.termination == Termination.OPTIMAL else None


class WarmEngine:
    """Variants of one problem, answered warm (see the module docstring).

    Parameters
    ----------
    problem, catalog
        The base problem and its catalog (parsed once).
    relative_gap
        The gap every answer is proven to (``procure solve``'s default unless given).
    """

    def __init__(self, problem: Problem, catalog: Catalog, relative_gap: float = 1e-4) -> None:
        self.problem = problem
        self.catalog = catalog
        self.relative_gap = relative_gap
        self.opened = _open_rows(problem)
        base = compile_problem(self.opened, catalog)
        self.handles = engine_handles(problem, base)
        self.last: tuple[LinearModel, np.ndarray | None] | None = None
        self._full_base: Compiled | None = None  # every option, at the engine's catalog
        self.base = self._structure(base) if self.handles else None
        # USD of budget per unit of the budget row (the categories beside compute at their
        # linear bound: solver.core.formulation.limits.add_budgets)
        self.budget_scale = budget_bound(base).multiplier
        self._shas: dict[int, tuple[Catalog, str]] = {}  # catalog digests, by catalog object
        self.points: list[Point] = []  # variants proven, newest first (monotone.POINTS)
        self._full_last: tuple[Catalog, Compiled] | None = None  # the last other catalog's
        self.compiles = 1

    # ---- structures
    def _structure(self, compiled: Compiled) -> Structure:
        model = build_model(compiled)
        index = StructureIndex(model)
        target = target_of(model, model, index)
        assert target is not None
        activities(target, np.zeros(len(model.variables)))  # the flat rows, once
        return Structure(compiled, model, index, HighsSession(model), target, target)

    def _sha(self, catalog: Catalog) -> str:
        """The catalog's digest, taken once per catalog object (the last few kept)."""
        got = self._shas.get(id(catalog))
        if got is None or got[0] is not catalog:
            got = (catalog, catalog_sha256(catalog))
            self._shas[id(catalog)] = got
            while len(self._shas) > 4:
                del self._shas[next(iter(self._shas))]
        return got[1]

    # ---- answers
    def solve(
        self,
        problem: Problem,
        catalog: Catalog,
        multipliers: list[dict] | None = None,
        time_limit_s: float | None = None,
    ) -> Answer:
        """The verified plan of ``problem`` (a variant of the engine's) with ``catalog``
        (the engine's with ``multipliers`` on its rented prices), and how it was had.

        Raises
        ------
        ProcureError
            As :func:`solver.solve.solve_verified`: no plan (infeasible, or none within
            the limit), or a plan the verifier refuses.
        """
        started = time.perf_counter()
        change = change_of(self.problem, problem, list(multipliers or []))
        options = SolveOptions(time_limit_s=time_limit_s, relative_gap=self.relative_gap)
        if change is None or self.base is None:
            return self._cold(
                problem, catalog, options, started, "other" if change is None else change.kind
            )
        if (change.demand or change.prices) and not change.fields:
            answer = self._carried_monotone(problem, catalog, change, started)
            if answer is not None:
                return answer
        if change.demand:
            return self._fresh(problem, catalog, options, started, change)
        base = self.base
        if change.excludes or change.prices:
            # a tightening or a price rise of the whole problem: the base's proof may carry;
            # else the pruning is the variant's own (a pruned option may be its optimum)
            monotone = all(f >= 1.0 for _p, _a, f in change.multipliers)
            if not change.prices and not problem.savings_plans:
                answer = self._carried_exclusion(base, problem, catalog, change, started)
                if answer is not None:
                    return answer
            elif monotone and not problem.savings_plans:
                answer = self._carried(base, problem, catalog, change, started)
                if answer is not None:
                    return answer
            return self._fresh(problem, catalog, options, started, change)
        answer = self._carried(base, problem, catalog, change, started)
        if answer is not None:
            return answer
        return self._in_place(base, problem, catalog, change, options, started, "warm")

    def _variant_compiled(
        self, structure: Structure, problem: Problem, catalog: Catalog, change: Change
    ) -> Compiled | None:
        """The structure's options as the variant has them: its prices (compiled again with
        every option, the same ids), only the pools it allows, its problem."""
        compiled = structure.compiled
        if change.prices:
            full = self._full(catalog)
            ids = compiled.options["option_id"]
            options = full.options[full.options["option_id"].isin(ids)].reset_index(drop=True)
            same = options[["option_id", "workload", "pool_id"]].equals(
                compiled.options[["option_id", "workload", "pool_id"]].reset_index(drop=True)
            )
            if not same:
                return None
            compiled = with_options(full, options)
        if change.excludes:
            compiled = with_options(
                compiled, allowed_options(compiled.options, compiled.pools, problem)
            )
        return replace(compiled, problem=problem)

    def _full(self, catalog: Catalog) -> Compiled:
        """The base problem (open rows) compiled with every option at ``catalog``'s prices
        (kept for the engine's own catalog); an option has the same id as in the base
        structure (ids are given before pruning)."""
        if catalog is self.catalog and self._full_base is not None:
            return self._full_base
        if self._full_last is not None and self._full_last[0] is catalog:
            return self._full_last[1]
        self.compiles += 1
        full = compile_problem(self.opened, catalog, prune_dominated=False)
        if catalog is self.catalog:
            self._full_base = full
        else:  # kept for the variant's own pruning after a monotone carry that fails
            self._full_last = (catalog, full)
        return full

    def _variant_full(self, problem: Problem, catalog: Catalog, change: Change) -> Compiled:
        """Every option at the variant's prices (:meth:`_full`), with its problem and, where
        its demand changed, its demand table (the only table a demand factor changes)."""
        full = replace(self._full(catalog), problem=problem)
        if change.demand:
            demand = build_demand(problem, full.periods, full.blocks, full.inputs.load)
            full = replace(full, demand=demand)
        return full

    def _remember(self, point: Point) -> None:
        self.points = [point, *self.points][:POINTS]

    def _carried_monotone(self, problem, catalog, change, started) -> Answer | None:
        """A plan proven for an easier variant (no more demand, no dearer prices), or for a
        harder one, that is a plan of this one costing no more than the easier one's: proven
        for it within the easier one's gap (:mod:`solver.analyses.engine.monotone`; no
        solve). The easier variant is the one with the costliest plan (the best bound);
        its own plan is tried first, then the cheapest harder variant's at its cost. None
        where none carries."""
        easier = [p for p in self.points if p.budget_far and at_least_as_hard(p, problem, catalog)]
        if not easier:
            return None
        lower = max(easier, key=lambda p: p.objective)
        most = lower.objective + SAME_COST * max(1.0, abs(lower.objective))
        harder = sorted(
            (p for p in self.points if p.objective <= most and no_harder(p, problem, catalog)),
            key=lambda p: p.objective,
        )
        full = self._variant_full(problem, catalog, change)
        for point in [lower, *harder[:1]]:
            got = self._plan_of_point(point, problem, full)
            if got is None:
                continue
            compiled, model, target, values = got
            if float(model.objective.value(values)) > most:
                continue
            proven = Proven(target, values, lower.bound, lower.gap, problem)
            return self._carried_answer(
                compiled, model, values, proven, problem, catalog, change, started
            )
        return None

    def _plan_of_point(self, point: Point, problem: Problem, full: Compiled):
        """(compiled, model, target, values): the variant over the point's options (``full``
        is the variant with every option) and the point's plan in it, its whole units kept
        and its continuous columns solved again where they no longer hold; None where it is
        no plan of the variant."""
        from solver.solve import carried

        ids = full.options["option_id"]
        compiled = with_options(full, full.options[ids.isin(point.option_ids).to_numpy()])
        if len(compiled.options) != len(point.option_ids):
            return None
        model = build_model(compiled)
        values = carried(point.model, point.values, model)
        target = target_of(model, model, StructureIndex(model))
        if target is None:
            return None
        if not feasible(target, values):
            again = _continuous_again(model, values)
            if again is None or not feasible(target, again):
                return None
            values = again
        return compiled, model, target, values

    def _point_start(self, structure: Structure, problem: Problem, catalog: Catalog):
        """The cheapest plan proven for a variant this one is ordered with (a harder one's
        plan serves its demand; an easier one's may), carried to ``structure`` by name,
        where it is a plan there; else None."""
        from solver.solve import carried

        near = [
            p
            for p in self.points
            if no_harder(p, problem, catalog) or at_least_as_hard(p, problem, catalog)
        ]
        plans = [carried(p.model, p.values, structure.model) for p in near[:6]]
        ok = [x for x in plans if feasible(structure.own, x)]
        return min(ok, key=lambda x: float(structure.own.cost @ x)) if ok else None

    def _own_pruning(self, problem: Problem, catalog: Catalog, change: Change) -> Compiled:
        """The variant compiled with its own pruning, from the options compiled once: every
        option at the variant's prices (:meth:`_full`), those its providers and regions
        allow, its demand (:func:`solver.core.compile.demand.build_demand`: the only
        table a demand factor changes), then dominance as the compile prunes
        (:func:`solver.core.compile.repruned`, exact for the variant's own problem)."""
        full = self._variant_full(problem, catalog, change)
        if change.excludes:
            full = with_options(full, allowed_options(full.options, full.pools, problem))
        return repruned(full)

    def _lay(self, structure: Structure, problem: Problem, catalog: Catalog, change: Change):
        """The variant's compiled problem, model and target over ``structure``; None where
        it cannot be laid over it."""
        if not (change.excludes or change.prices):
            return self._limits(structure, problem)
        compiled = self._variant_compiled(structure, problem, catalog, change)
        if compiled is None:
            return None
        model = build_model(compiled)
        target = target_of(structure.model, model, structure.index)
        return None if target is None else (compiled, model, target)

    def _limits(self, structure: Structure, problem: Problem):
        """A budget or carbon cap variant, without building a model: the budget row's bound
        moves by the budget's change over the row's scale (the categories beside compute
        at their linear bound, :func:`solver.core.formulation.limits.budget_bound`), the
        cap row's by the cap's; a limit the variant leaves out frees its row."""
        own, model = structure.own, structure.model
        lower, upper = own.row_lower.copy(), own.row_upper.copy()
        rows: list = []
        budget, cap = self.opened.budget_usd, self.opened.carbon_cap_tco2e
        assert budget is not None and cap is not None  # opened: both rows are in the model
        for r, row in enumerate(model.rows):
            if row.family == "budget":
                new = problem.budget_usd
                moved = None if new is None else (new - budget) / self.budget_scale
            elif row.family == "carbon_cap":
                new = problem.carbon_cap_tco2e
                moved = None if new is None else new - cap
            else:
                rows.append(row)
                continue
            if moved is None:  # no such row in the variant
                lower[r], upper[r] = -np.inf, np.inf
            else:
                upper[r] = own.row_upper[r] + moved
                rows.append(replace(row, rhs=row.rhs + moved))
        target = replace(own, row_lower=lower, row_upper=upper)
        variant = LinearModel(
            model.variables, rows, model.objective, model.expressions, model.stage
        )
        return replace(structure.compiled, problem=problem), variant, target

    def _carried(self, structure, problem, catalog, change, started) -> Answer | None:
        """A plan proven before (the last :data:`PROOFS`), when still proven for the
        variant (no solve)."""
        if not structure.proofs:
            return None
        laid = self._lay(structure, problem, catalog, change)
        if laid is None:
            return None
        compiled, model, target = laid
        proven = next(
            (p for p in structure.proofs if still_proven(p.target, p.values, target)), None
        )
        if proven is None:
            return None
        values = carried_back(target, proven.values)
        return self._carried_answer(
            compiled, model, values, proven, problem, catalog, change, started
        )

    def _carried_answer(
        self, compiled, model, values, proven, problem, catalog, change, started
    ) -> Answer:
        """A proven plan carried to the variant (``values`` in the variant's model): its
        objective recomputed, the proof's bound and gap kept, verified as any plan."""
        result = SolveResult(
            Termination.OPTIMAL,
            "highspy",
            values,
            model.objective.value(values),
            proven.bound,
            proven.gap,
            0.0,
        )
        plan = verified_plan(
            Solution(compiled, model, result),
            problem,
            catalog,
            None,
            started,
            self.relative_gap,
            self._sha(catalog),
        )
        return Answer(plan, "carried", change.kind, time.perf_counter() - started)

    def _carried_exclusion(self, structure, problem, catalog, change, started) -> Answer | None:
        """Providers or regions left out that the base's proven plan does not use: the
        variant's plans are the base's plans that use none of the options left out (the
        same costs, the same budget row where its bound of the categories beside compute
        does not move), so that plan is still proven (docs/concepts/warm-engine.md, "A
        proof carried over"). None where the plan uses one, or the proof is not there."""
        proven = next((p for p in structure.proofs if _only_left_out(p.problem, problem)), None)
        if proven is None:
            return None
        base = structure.compiled
        compiled = with_options(base, allowed_options(base.options, base.pools, problem))
        compiled = replace(compiled, problem=problem)
        before, after = budget_bound(replace(base, problem=problem)), budget_bound(compiled)
        if (before.multiplier, before.constant_usd) != (after.multiplier, after.constant_usd):
            return None
        v = structure.model.variables
        used = np.abs(proven.values) > 1e-9
        kinds = v["kind"].to_numpy()[used]
        if "block" in kinds:
            return None  # capacity blocks: their pool column is not a pool
        kept = set(compiled.options["option_id"])
        option = v["option_id"].to_numpy()[used]
        if any(k >= 0 and k not in kept for k in option.tolist()):
            return None
        allowed = allowed_options(
            base.pools.assign(option_id=range(len(base.pools))), base.pools, problem
        )
        pools_ok = set(allowed["option_id"])
        pool = v["pool"].to_numpy()[used]
        if any(p >= 0 and k < 0 and p not in pools_ok for p, k in zip(pool, option, strict=True)):
            return None
        from solver.solve import carried

        model = build_model(compiled)
        values = carried(structure.model, proven.values, model)
        return self._carried_answer(
            compiled, model, values, proven, problem, catalog, change, started
        )

    def _in_place(self, structure, problem, catalog, change, options, started, how) -> Answer:
        laid = self._lay(structure, problem, catalog, change)
        if laid is None:
            return self._cold(problem, catalog, options, started, change.kind)
        compiled, model, target = laid
        changed = apply(structure.session, structure.now, target)
        structure.now = target
        start = self._start(structure, target)
        result = structure.session.solve(options, start=start)
        if result.has_solution:
            structure.values = result.values
            if result.termination == Termination.OPTIMAL:
                proof = Proven(target, result.values, result.bound, result.gap, problem)
                structure.proofs = [proof, *structure.proofs]
                if not change.fields and not change.prices and not change.demand:
                    v = carried_back(target, result.values)
                    whole = self._variant_full(problem, catalog, change)
                    self._remember(
                        point_of(compiled, model, v, result.bound, result.gap, catalog, whole)
                    )
                if len(structure.proofs) > PROOFS:  # the oldest (the base's) is kept
                    del structure.proofs[-2]
        values = None if result.values is None else carried_back(target, result.values)
        objective = None if values is None else model.objective.value(values)
        result = replace(result, values=values, objective=objective)
        solution = Solution(compiled, model, _checked(result, compiled, problem, catalog))
        plan = verified_plan(
            solution,
            problem,
            catalog,
            options.time_limit_s,
            started,
            self.relative_gap,
            self._sha(catalog),
        )
        self.last = (model, solution.result.values)
        return Answer(plan, how, change.kind, time.perf_counter() - started, changed)

    def _start(self, structure: Structure, target: Target) -> np.ndarray | None:
        """A start for ``structure`` holding ``target``: the cheapest of its last plan and
        its proven ones (else the last answer's plan, carried by name) that is feasible
        there; None when none is (the solve then finds its own first plan, as a cold one
        does: an infeasible start would only turn its first-plan heuristics off)."""
        from solver.solve import carried

        plans = [structure.values, *(p.values for p in structure.proofs)]
        if structure.values is None and self.last is not None and self.last[1] is not None:
            plans.append(carried(self.last[0], self.last[1], structure.model))
        ok = [x for x in plans if x is not None and feasible(target, x)]
        return min(ok, key=lambda x: float(target.cost @ x)) if ok else None

    def _fresh(self, problem, catalog, options, started, change) -> Answer:
        """Compiled afresh with the variant's own pruning, solved from the last plan
        carried by name."""
        compiled = self._own_pruning(problem, catalog, change)
        structure = self._structure(compiled)
        start = self._start(structure, structure.own)
        if start is None:  # an easier variant's plan, carried by name, where it is a plan
            start = self._point_start(structure, problem, catalog)
        left = replace(options, backend_options=dict(NO_HEURISTICS))
        if options.time_limit_s is not None:
            left = replace(
                left,
                time_limit_s=max(0.1, options.time_limit_s - (time.perf_counter() - started)),
            )
        result = _checked(structure.session.solve(left, start=start), compiled, problem, catalog)
        if result.termination == Termination.OPTIMAL and result.values is not None:
            model = structure.model
            self._remember(
                point_of(
                    compiled,
                    model,
                    result.values,
                    result.bound,
                    result.gap,
                    catalog,
                    self._variant_full(problem, catalog, change),
                )
            )
        solution = Solution(compiled, structure.model, result)
        plan = verified_plan(
            solution,
            problem,
            catalog,
            options.time_limit_s,
            started,
            self.relative_gap,
            self._sha(catalog),
        )
        self.last = (structure.model, result.values)
        return Answer(plan, "fresh", change.kind, time.perf_counter() - started)

    def _cold(self, problem, catalog, options, started, kind) -> Answer:
        plan, solution = solve_verified(problem, catalog, options=options)
        self.last = (solution.model, solution.result.values)
        return Answer(plan, "cold", kind, time.perf_counter() - started)
