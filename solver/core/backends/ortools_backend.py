"""OR-Tools adapters: SCIP (MIP) / GLOP (LP) through pywraplp, and CP-SAT directly.

``OrtoolsBackend("scip")`` solves a model with integer variables with SCIP; a model
without any goes to GLOP instead, because pywraplp's SCIP returns zero duals
(../shared/SOLVERS.md) while GLOP's duals and reduced costs are correct. pywraplp
has no array entry point, so rows are added one coefficient at a time (cheap at our
sizes).

``OrtoolsBackend("cpsat")`` drives CP-SAT through ``ortools.sat.python.cp_model``
(never through PuLP, whose adapter reports a feasible CP-SAT answer as optimal and
turns continuous variables into integers). CP-SAT only accepts a model that is
purely integer after scaling:

* every variable is integer;
* every variable has finite bounds, or bounds implied by the rows (activity-based
  bound propagation) or by dominance: a variable whose cost is >= 0 and that only
  ever makes rows easier to hold as it grows is capped at the value that satisfies
  each of its rows on its own, since any plan above the cap can be lowered to it at
  no extra cost (and symmetrically for a cost <= 0 and lower bounds);
* the coefficients of each row, and of the objective, are integral after scaling
  by one power of ten up to 1e6 (a right-hand side is then rounded inwards, exact
  for integer variables and integer coefficients).

Anything else is refused with a :class:`Termination.ERROR` result whose message
says why. CP-SAT's FEASIBLE (stopped by a limit) is reported as FEASIBLE with its
gap from CP-SAT's best bound, never as optimal.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from solver.core.backends.base import (
    SolveOptions,
    SolveResult,
    Termination,
    empty_row_infeasible,
    native_output_to_stderr,
    relative_gap,
)
from solver.core.matrix import LinearModel

if TYPE_CHECKING:
    from ortools.linear_solver import pywraplp

ENGINES = ("scip", "cpsat")
MAX_SCALE_EXPONENT = 6  # coefficients must be integral after scaling by 10**k, k <= 6
_INTEGRAL_TOL = 1e-9  # relative tolerance of "integral" and of bound rounding
_SCIP_INFINITY = 1e20
_SAFE_INT = 2.0**53  # |bound| and |scaled coefficient x bound| sums must stay below this


def _no_plan(term: Termination, name: str, seconds: float, message: str = "") -> SolveResult:
    return SolveResult(term, name, None, None, None, None, seconds, message=message)


def _optimal_gap(gap: float | None, requested: float) -> float:
    """The gap of a solve reported optimal, clipped to the requested gap as the others do."""
    gap = gap or 0.0
    return min(gap, requested) if gap <= requested * 1.0001 else gap


class OrtoolsBackend:
    """Solve with OR-Tools: ``"scip"`` (SCIP for a MIP, GLOP for an LP) or ``"cpsat"``.

    Parameters
    ----------
    engine
        ``"scip"`` or ``"cpsat"``.

    Notes
    -----
    ``SolveOptions.backend_options`` win over the typed options: for ``scip`` they are
    SCIP parameters (``{"limits/gap": 0.01}``; GLOP parameters such as
    ``{"use_dual_simplex": "true"}`` when the model is an LP), for ``cpsat`` fields of
    ``SatParameters`` (``{"num_workers": 1}``).
    """

    def __init__(self, engine: str = "scip") -> None:
        if engine not in ENGINES:
            raise ValueError(f"unknown OR-Tools engine {engine!r}; use scip or cpsat")
        self.engine = engine
        self.name = f"ortools-{engine}"
        self.features = (
            frozenset({"integer", "time_limit", "gap", "duals"})
            if engine == "scip"
            else frozenset({"integer", "time_limit", "gap"})
        )

    def available(self) -> bool:
        try:
            if self.engine == "cpsat":
                from ortools.sat.python import cp_model  # noqa: F401

                return True
            from ortools.linear_solver import pywraplp
        except ImportError:
            return False
        return all(pywraplp.Solver.CreateSolver(s) is not None for s in ("SCIP", "GLOP"))

    def solve(self, model: LinearModel, options: SolveOptions) -> SolveResult:
        infeasible_row = empty_row_infeasible(model)
        if infeasible_row:
            return _no_plan(Termination.INFEASIBLE, self.name, 0.0, infeasible_row)
        if self.engine == "cpsat":
            return _solve_cpsat(model, options, self.name)
        return _solve_mp(model, options)


# ---------------------------------------------------------------- pywraplp: SCIP / GLOP


def _build_mp(
    model: LinearModel, engine: str
) -> tuple[pywraplp.Solver, list[pywraplp.Variable], list[pywraplp.Constraint | None]]:
    """A pywraplp solver holding ``model``; row ``r`` of the model is ``constraints[r]``.

    Rows with no variables are left out (``None``): they were decided before the solve.
    """
    from ortools.linear_solver import pywraplp

    solver = pywraplp.Solver.CreateSolver(engine)
    inf = solver.infinity()
    v = model.variables
    lower = np.nan_to_num(v["lb"].to_numpy(dtype=float), neginf=-inf, posinf=inf)
    upper = np.nan_to_num(v["ub"].to_numpy(dtype=float), neginf=-inf, posinf=inf)
    integer = v["integer"].to_numpy(dtype=bool)
    xs = [
        solver.Var(float(lb), float(ub), bool(k), f"v{i}")
        for i, (lb, ub, k) in enumerate(zip(lower, upper, integer, strict=True))
    ]
    constraints: list[pywraplp.Constraint | None] = []
    for r, row in enumerate(model.rows):
        if not row.coefs:
            constraints.append(None)
            continue
        lo = row.rhs if row.sense in (">=", "==") else -inf
        hi = row.rhs if row.sense in ("<=", "==") else inf
        ct = solver.RowConstraint(lo, hi, f"r{r}")
        for i, c in row.coefs.items():
            ct.SetCoefficient(xs[i], float(c))
        constraints.append(ct)
    objective = solver.Objective()
    for i, c in model.objective.coefs.items():
        objective.SetCoefficient(xs[i], float(c))
    objective.SetOffset(float(model.objective.constant))
    objective.SetMinimization()
    return solver, xs, constraints


def _mp_parameters(
    solver: pywraplp.Solver, engine: str, options: SolveOptions, time_limit_s: float | None
) -> pywraplp.MPSolverParameters:
    """Apply the typed options (and the backend's own, which win); return MPSolverParameters."""
    from ortools.linear_solver import pywraplp

    params = pywraplp.MPSolverParameters()
    if time_limit_s is not None:
        solver.SetTimeLimit(max(1, int(time_limit_s * 1000)))
    specific: dict[str, object] = {}
    if engine == "SCIP":
        params.SetDoubleParam(params.RELATIVE_MIP_GAP, float(options.relative_gap))
        if options.threads:
            solver.SetNumThreads(int(options.threads))
        if options.seed:
            specific["randomization/randomseedshift"] = int(options.seed)
        specific.update(options.backend_options)
        text = "".join(f"{k} = {_scip_value(val)}\n" for k, val in specific.items())
    else:  # GLOP: a text-format GlopParameters
        if options.seed:
            specific["random_seed"] = int(options.seed)
        specific.update(options.backend_options)
        text = " ".join(f"{k}: {_glop_value(val)}" for k, val in specific.items())
    if text and not solver.SetSolverSpecificParametersAsString(text):
        raise ValueError(f"{engine} rejected the solver parameters {specific!r}")
    return params


def _scip_value(value: object) -> str:
    return ("TRUE" if value else "FALSE") if isinstance(value, bool) else str(value)


def _glop_value(value: object) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _solve_mp(model: LinearModel, options: SolveOptions) -> SolveResult:
    from ortools.linear_solver import pywraplp

    mip = bool(model.n_integer)
    engine = "SCIP" if mip else "GLOP"
    name = "ortools-scip" if mip else "ortools-glop"
    solver, xs, constraints = _build_mp(model, engine)
    try:
        params = _mp_parameters(solver, engine, options, options.time_limit_s)
    except ValueError as exc:
        return _no_plan(Termination.ERROR, name, 0.0, str(exc))
    began = time.perf_counter()
    with native_output_to_stderr():
        status = solver.Solve(params)
    seconds = time.perf_counter() - began
    if status == pywraplp.Solver.INFEASIBLE:
        # GLOP says INFEASIBLE for an unbounded LP, and SCIP's "infeasible or unbounded"
        # comes back as INFEASIBLE too: a zero-objective solve tells the two apart.
        return _infeasible_or_unbounded(model, engine, name, options, seconds)
    if status == pywraplp.Solver.UNBOUNDED:
        return _no_plan(Termination.UNBOUNDED, name, seconds)
    if status == pywraplp.Solver.NOT_SOLVED:
        return _no_plan(Termination.NO_SOLUTION, name, seconds, "stopped before a plan was found")
    if status not in (pywraplp.Solver.OPTIMAL, pywraplp.Solver.FEASIBLE):
        label = {pywraplp.Solver.ABNORMAL: "ABNORMAL", pywraplp.Solver.MODEL_INVALID: "INVALID"}
        return _no_plan(Termination.ERROR, name, seconds, f"{engine}: {label.get(status, status)}")
    values = np.array([x.solution_value() for x in xs], dtype=float)
    integer = model.variables["integer"].to_numpy(dtype=bool)
    values[integer] = np.round(values[integer])
    objective = model.objective.value(values)
    bound: float | None
    if mip:
        bound = float(solver.Objective().BestBound())
        if not abs(bound) < _SCIP_INFINITY:  # no bound yet (SCIP's infinity is 1e20)
            bound = None
        gap = relative_gap(objective, bound)
    else:
        bound, gap = (objective, 0.0) if status == pywraplp.Solver.OPTIMAL else (None, None)
    if status == pywraplp.Solver.OPTIMAL:
        term, gap = Termination.OPTIMAL, _optimal_gap(gap, options.relative_gap)
    else:
        term = Termination.FEASIBLE
    duals = reduced = None
    if not mip and term == Termination.OPTIMAL:
        # GLOP on a minimisation: d objective / d rhs, the signs the other backends give.
        duals = {
            row.name: float(ct.dual_value())
            for row, ct in zip(model.rows, constraints, strict=True)
            if ct is not None
        }
        reduced = np.array([x.reduced_cost() for x in xs], dtype=float)
    return SolveResult(
        term,
        name,
        values,
        objective,
        bound,
        gap,
        seconds,
        message="" if term == Termination.OPTIMAL else "stopped by a limit",
        duals=duals,
        reduced_costs=reduced,
    )


def _infeasible_or_unbounded(
    model: LinearModel, engine: str, name: str, options: SolveOptions, seconds: float
) -> SolveResult:
    """Re-solve with a zero objective: a plan means the model was unbounded, not infeasible."""
    from ortools.linear_solver import pywraplp

    solver, _xs, _cts = _build_mp(model, engine)
    solver.Objective().Clear()
    left = None if options.time_limit_s is None else max(options.time_limit_s - seconds, 0.001)
    params = _mp_parameters(solver, engine, options, left)
    began = time.perf_counter()
    with native_output_to_stderr():
        status = solver.Solve(params)
    seconds += time.perf_counter() - began
    if status in (pywraplp.Solver.OPTIMAL, pywraplp.Solver.FEASIBLE):
        return _no_plan(Termination.UNBOUNDED, name, seconds)
    if status == pywraplp.Solver.INFEASIBLE:
        return _no_plan(Termination.INFEASIBLE, name, seconds)
    return _no_plan(
        Termination.ERROR, name, seconds, f"{engine}: infeasible or unbounded, not decided"
    )


# ---------------------------------------------------------------- CP-SAT


@dataclass(frozen=True)
class _LessEqual:
    """The rows as ``A x <= b`` in coordinate form (>= negated, == split in two)."""

    row: np.ndarray  # entry -> row of the <= form
    col: np.ndarray  # entry -> variable
    val: np.ndarray  # entry -> coefficient (nonzero)
    rhs: np.ndarray  # row of the <= form -> right-hand side


def _less_equal(model: LinearModel) -> _LessEqual:
    rows: list[npt.NDArray[np.int64]] = []
    cols: list[npt.NDArray[np.int64]] = []
    vals: list[npt.NDArray[np.float64]] = []
    rhs: list[float] = []
    for row in model.rows:
        coefs = {i: c for i, c in row.coefs.items() if c}
        if not coefs or row.rhs == {"<=": np.inf, ">=": -np.inf, "==": None}[row.sense]:
            continue  # nothing to say (an empty row is decided before the solve)
        keys = np.fromiter(coefs.keys(), dtype=np.int64, count=len(coefs))
        data = np.fromiter(coefs.values(), dtype=float, count=len(coefs))
        for sign in {"<=": (1.0,), ">=": (-1.0,), "==": (1.0, -1.0)}[row.sense]:
            rows.append(np.full(len(keys), len(rhs), dtype=np.int64))
            cols.append(keys)
            vals.append(sign * data)
            rhs.append(sign * row.rhs)
    if not rhs:
        empty = np.zeros(0, dtype=np.int64)
        return _LessEqual(empty, empty, np.zeros(0), np.zeros(0))
    return _LessEqual(
        np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), np.asarray(rhs)
    )


def _activity_of_others(le: _LessEqual, at: np.ndarray) -> np.ndarray:
    """For each entry: the activity of the rest of its row with each variable at ``at``.

    ``at`` is per entry (the bound of the entry's variable that is wanted); infinite
    contributions make the result infinite with the same sign.
    """
    term = le.val * at
    finite = np.isfinite(term)
    n_rows = len(le.rhs)
    total = np.bincount(le.row, np.where(finite, term, 0.0), minlength=n_rows)
    plus = np.bincount(le.row, ~finite & (term > 0), minlength=n_rows)
    minus = np.bincount(le.row, ~finite & (term < 0), minlength=n_rows)
    own = np.where(finite, term, 0.0)
    others_plus = plus[le.row] - (~finite & (term > 0))
    others_minus = minus[le.row] - (~finite & (term < 0))
    out = total[le.row] - own
    out = np.where(others_plus > 0, np.inf, out)
    return np.where(others_minus > 0, -np.inf, out)  # only one sign is ever asked for


def _slack(x: np.ndarray) -> np.ndarray:
    """How far from an integer still counts as that integer (0 for infinite values)."""
    return np.where(np.isfinite(x), _INTEGRAL_TOL * np.maximum(1.0, np.abs(x)), 0.0)


def _tolerant_floor(x: np.ndarray) -> np.ndarray:
    return np.floor(x + _slack(x))


def _tolerant_ceil(x: np.ndarray) -> np.ndarray:
    return np.ceil(x - _slack(x))


def integer_bounds(model: LinearModel, passes: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """Finite bounds for the integer variables where the rows or dominance give them.

    Every variable is taken to be integer (bounds are rounded inwards). Bound
    propagation (valid for every plan) and dominance caps (valid for at least one
    optimal plan: see the module docstring) alternate until nothing changes. A bound
    that stays infinite means the variable cannot be bounded this way.

    Returns
    -------
    lower, upper
        Per variable, integral where finite (``lower > upper`` means no plan exists).
    """
    v = model.variables
    lower = _tolerant_ceil(v["lb"].to_numpy(dtype=float))
    upper = _tolerant_floor(v["ub"].to_numpy(dtype=float))
    n = len(v)
    cost = np.zeros(n)
    for i, c in model.objective.coefs.items():
        cost[i] += c
    le = _less_equal(model)
    up, down = le.val > 0, le.val < 0
    # a variable "only helps" upward if it has no positive entry (x up never hurts a row)
    hurts_up = np.bincount(le.col[up], minlength=n) > 0
    hurts_down = np.bincount(le.col[down], minlength=n) > 0
    may_cap = (cost >= 0) & ~hurts_up
    may_floor = (cost <= 0) & ~hurts_down
    for _ in range(passes):
        before = (lower.copy(), upper.copy())
        # propagation: a x_i <= b - (minimum activity of the others)
        at_min = np.where(up, lower[le.col], upper[le.col])
        with np.errstate(invalid="ignore", divide="ignore"):
            limit = (le.rhs[le.row] - _activity_of_others(le, at_min)) / le.val
        np.fmin.at(upper, le.col[up], _tolerant_floor(limit[up]))
        np.fmax.at(lower, le.col[down], _tolerant_ceil(limit[down]))
        # dominance: the value of x_i that holds each row whatever the others do
        at_max = np.where(up, upper[le.col], lower[le.col])
        with np.errstate(invalid="ignore", divide="ignore"):
            need = (le.rhs[le.row] - _activity_of_others(le, at_max)) / le.val
        cap = np.full(n, -np.inf)
        np.fmax.at(cap, le.col[down], _tolerant_ceil(need[down]))
        cap = np.maximum(cap, lower)
        fill = may_cap & np.isinf(upper) & np.isfinite(cap)
        upper[fill] = cap[fill]
        floor = np.full(n, np.inf)
        np.fmin.at(floor, le.col[up], _tolerant_floor(need[up]))
        floor = np.minimum(floor, upper)
        fill = may_floor & np.isinf(lower) & np.isfinite(floor)
        lower[fill] = floor[fill]
        if np.any(lower > upper):
            break  # no plan: bounds of an infeasible model can creep on for ever
        if np.array_equal(before[0], lower) and np.array_equal(before[1], upper):
            break
    return lower, upper


def integral_scale(values: np.ndarray) -> int | None:
    """The smallest 10**k (k <= 6) making every value integral, or None."""
    for k in range(MAX_SCALE_EXPONENT + 1):
        scaled = values * 10.0**k
        if np.all(np.abs(scaled - np.round(scaled)) <= _INTEGRAL_TOL * np.maximum(1, abs(scaled))):
            return 10**k
    return None


@dataclass(frozen=True)
class _IntegerModel:
    """The model as CP-SAT takes it: integer bounds, integer rows, a scaled objective."""

    lower: np.ndarray
    upper: np.ndarray
    # per row: name, variables, integer coefficients, lower and upper side (None: none)
    rows: list[tuple[str, list[int], list[int], int | None, int | None]]
    objective_vars: list[int]
    objective_coefs: list[int]
    objective_scale: int


def _least_integral(values: np.ndarray) -> float:
    """The value furthest from an integer after scaling by the largest power of ten."""
    scaled = values * 10.0**MAX_SCALE_EXPONENT
    return float(values[np.argmax(np.abs(scaled - np.round(scaled)))])


def _variable_names(model: LinearModel, index: np.ndarray, limit: int = 3) -> str:
    names = model.variables["name"].to_numpy()[index[:limit]]
    more = f" and {len(index) - limit} more" if len(index) > limit else ""
    return ", ".join(str(x) for x in names) + more


@dataclass(frozen=True)
class _Refusal:
    """Why a model gets no CP-SAT solve: refused (ERROR), or already shown INFEASIBLE."""

    termination: Termination
    message: str


def _refuse(message: str) -> _Refusal:
    return _Refusal(Termination.ERROR, message)


def integer_model(model: LinearModel) -> _IntegerModel | _Refusal:
    """The integer form of ``model`` for CP-SAT, or why there is none to solve."""
    v = model.variables
    continuous = np.flatnonzero(~v["integer"].to_numpy(dtype=bool))
    if len(continuous):
        return _refuse(
            f"CP-SAT solves integer models only: {len(continuous)} continuous variable(s) "
            f"({_variable_names(model, continuous)}); use --solver scip or highs"
        )
    lower, upper = integer_bounds(model)
    empty = np.flatnonzero(lower > upper)
    if len(empty):
        return _Refusal(
            Termination.INFEASIBLE,
            f"the rows leave no integer value for {_variable_names(model, empty)}",
        )
    unbounded = np.flatnonzero(~np.isfinite(lower) | ~np.isfinite(upper))
    if len(unbounded):
        return _refuse(
            f"CP-SAT needs finite bounds: {len(unbounded)} variable(s) cannot be bounded "
            f"by their rows or costs ({_variable_names(model, unbounded)}); use --solver scip"
        )
    big = np.flatnonzero(np.maximum(np.abs(lower), np.abs(upper)) > _SAFE_INT)
    if len(big):
        return _refuse(
            f"CP-SAT: bounds too large for exact integers ({_variable_names(model, big)})"
        )
    magnitude = np.maximum(np.abs(lower), np.abs(upper))
    rows = []
    for row in model.rows:
        coefs = {i: c for i, c in row.coefs.items() if c}
        if not coefs or row.rhs == {"<=": np.inf, ">=": -np.inf, "==": None}[row.sense]:
            continue
        if not np.isfinite(row.rhs):
            return _Refusal(Termination.INFEASIBLE, f"{row.name} cannot hold (rhs {row.rhs})")
        keys = list(coefs)
        data = np.fromiter(coefs.values(), dtype=float, count=len(coefs))
        scale = integral_scale(data)
        if scale is None:
            return _refuse(
                f"CP-SAT needs coefficients that are integral after scaling by at most "
                f"1e{MAX_SCALE_EXPONENT}: row {row.name} has {_least_integral(data)!r}; "
                "use --solver scip or highs"
            )
        ints = np.round(data * scale)
        if float(np.abs(ints) @ magnitude[keys]) > _SAFE_INT:
            return _refuse(f"CP-SAT: row {row.name} could overflow 64-bit integers after scaling")
        rhs = row.rhs * scale
        lo = int(_tolerant_ceil(np.array([rhs]))[0]) if row.sense in (">=", "==") else None
        hi = int(_tolerant_floor(np.array([rhs]))[0]) if row.sense in ("<=", "==") else None
        if lo is not None and hi is not None and lo > hi:
            return _Refusal(Termination.INFEASIBLE, f"{row.name} cannot hold with integers")
        rows.append((row.name, keys, [int(c) for c in ints], lo, hi))
    objective = {i: c for i, c in model.objective.coefs.items() if c}
    keys = list(objective)
    data = np.fromiter(objective.values(), dtype=float, count=len(objective))
    scale = integral_scale(data) if len(data) else 1
    if scale is None:
        return _refuse(
            f"CP-SAT needs objective coefficients that are integral after scaling by at most "
            f"1e{MAX_SCALE_EXPONENT}: the objective has {_least_integral(data)!r}; "
            "use --solver scip or highs"
        )
    ints = np.round(data * scale)
    if float(np.abs(ints) @ magnitude[keys]) > _SAFE_INT:
        return _refuse("CP-SAT: the objective could overflow 64-bit integers after scaling")
    return _IntegerModel(lower, upper, rows, keys, [int(c) for c in ints], scale)


def _solve_cpsat(model: LinearModel, options: SolveOptions, name: str) -> SolveResult:
    import pandas as pd
    from ortools.sat.python import cp_model

    started = time.perf_counter()
    im = integer_model(model)
    if isinstance(im, _Refusal):
        return _no_plan(im.termination, name, time.perf_counter() - started, im.message)
    cp = cp_model.CpModel()
    index = pd.RangeIndex(len(im.lower))
    xs = cp.new_int_var_series(
        "x",
        index,
        pd.Series(im.lower.astype(np.int64), index=index),
        pd.Series(im.upper.astype(np.int64), index=index),
    )
    x_list = list(xs)
    for _row_name, keys, coefs, lo, hi in im.rows:
        expr = cp_model.LinearExpr.weighted_sum([x_list[i] for i in keys], coefs)
        if lo is not None and hi is not None:
            cp.add_linear_constraint(expr, lo, hi)
        elif lo is not None:
            cp.add(expr >= lo)
        else:
            cp.add(expr <= hi)
    cp.minimize(
        cp_model.LinearExpr.weighted_sum([x_list[i] for i in im.objective_vars], im.objective_coefs)
    )
    solver = cp_model.CpSolver()
    p = solver.parameters
    if options.time_limit_s is not None:
        p.max_time_in_seconds = float(options.time_limit_s)
    p.relative_gap_limit = float(options.relative_gap)
    if options.threads:
        p.num_workers = int(options.threads)
    p.random_seed = int(options.seed)
    for key, value in options.backend_options.items():
        setattr(p, key, value)
    began = time.perf_counter()
    with native_output_to_stderr():
        status = solver.solve(cp)
    seconds = time.perf_counter() - began
    if status == cp_model.INFEASIBLE:
        return _no_plan(Termination.INFEASIBLE, name, seconds)
    if status == cp_model.MODEL_INVALID:
        return _no_plan(Termination.ERROR, name, seconds, f"CP-SAT: {cp.validate()}")
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        # UNKNOWN: stopped by a limit before any plan
        return _no_plan(Termination.NO_SOLUTION, name, seconds, solver.status_name(status))
    values = solver.values(xs).to_numpy(dtype=float)
    objective = model.objective.value(values)
    bound = (
        float(solver.best_objective_bound) / im.objective_scale + model.objective.constant
        if math.isfinite(solver.best_objective_bound)
        else None
    )
    gap = relative_gap(objective, bound)
    if status == cp_model.OPTIMAL:
        term, gap, message = Termination.OPTIMAL, _optimal_gap(gap, options.relative_gap), ""
    else:
        # a plan, not proven within the gap: never reported as optimal
        term, message = Termination.FEASIBLE, "CP-SAT: feasible, stopped by a limit"
    return SolveResult(term, name, values, objective, bound, gap, seconds, message=message)
