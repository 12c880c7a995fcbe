"""What the workspace does with its store, as plain functions (no HTTP here).

- a problem is YAML text read by the CLI's own reader (:func:`read_problem_text`: the same
  messages as ``procure solve``) and checked against the catalog as ``procure solve``
  checks it before solving (:func:`checked_problem_text`: unknown accelerators,
  providers, models, regions... refused with its message); a variant's problem and prices
  are checked the same way, and names longer than their column are refused;
- a variant is a dict of changes to its problem (:data:`CHANGE_FIELDS`): the budget, the
  demand and its growth, the carbon cap, the allowed providers, regions, modes and tier
  (fields of the problem), what a meeting asks (:mod:`solver.web.variant_fields`: a region
  group, failure domains, shares, price confidence, margin, SLO percentile, drawn
  scenarios), and price multipliers by provider or accelerator (applied to the
  catalog's rented prices as an uncertainty scenario applies them:
  :func:`solver.analyses.stochastic.price_factors`);
- a plan is stored once under the digest of everything that decides it
  (:func:`inputs_digest`): the same inputs find the stored plan instead of solving again.

Solving is :func:`solver.api.solve`, run by :func:`solve_task` on the Dask runner
(:mod:`solver.web.jobs`); nothing here re-implements a stage.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from solver.errors import ProcureError
from solver.inputs.catalog import Catalog, load_catalog
from solver.inputs.problem import InferenceWorkload, Problem, parse_problem
from solver.inputs.yamlio import load_yaml
from solver.plan import Plan, input_digests
from solver.units import DEFAULT_SOLVER
from solver.web.store.models import Job, JobStatus, PlanRecord, ProblemRecord, Variant
from solver.web.variant_fields import MEETING_FIELDS, apply_meeting_fields, resolved

#: the name the editor's text goes by in messages (as a file given to ``procure solve``)
EDITOR_FILE = "problem.yaml"
#: the gap every workspace solve proves (``procure solve``'s default)
DEFAULT_GAP = 1e-4
#: a variant's changes: field -> what it does
CHANGE_FIELDS = {
    "budget_usd": "total spend cap, USD (replaces the problem's)",
    "carbon_cap_tco2e": "CO2e cap, tonnes (replaces the problem's)",
    "demand_factor": "every online workload's demand times this",
    "growth_per_period": "demand growth per period served after the first (0.2 = +20%)",
    "providers": "allowed cloud providers",
    "regions": "allowed regions",
    "modes": "allowed purchase modes",
    "min_tier": "lowest provider tier",
    "price_multipliers": "rented prices times factor: [{provider|accelerator, factor}]",
    **MEETING_FIELDS,
}


def read_problem_text(text: str, *, file: str = EDITOR_FILE) -> tuple[Problem, dict]:
    """Read problem YAML as ``procure solve`` reads a file: the parsed problem and its data.

    Raises
    ------
    ProcureError
        Exactly the CLI's message for the same text in a file named ``file``.
    """
    data = load_yaml(text, file=file)
    problem = parse_problem(data, file=file)
    return problem, data


#: the longest name a problem or variant may have (their ``name`` columns hold 200)
MAX_NAME_CHARS = 200


def _check_name_length(name: str, what: str, file: str | None = None) -> None:
    if len(name) > MAX_NAME_CHARS:
        raise ProcureError(
            f"the {what}'s name has {len(name):,} characters; at most {MAX_NAME_CHARS} are kept",
            file=file,
            field="name",
            fix=f"give it a name of at most {MAX_NAME_CHARS} characters",
        )


def check_against_catalog(problem: Problem, catalog: Catalog, *, file: str) -> None:
    """Refuse the problem as ``procure solve`` refuses it before solving
    (:func:`solver.solve.check_before_solving`: the currency, and every accelerator,
    provider, model, region and other name the catalog must know), its message naming
    ``file`` as the CLI names the problem file."""
    from solver.solve import check_before_solving

    try:
        check_before_solving(problem, catalog)
    except ProcureError as exc:
        if exc.file is None:
            exc.file = file
            exc.args = (exc.render(),)
        raise


def checked_problem_text(text: str, catalog_dir: str | None = None) -> Problem:
    """Read problem YAML as ``procure solve`` reads a file (:func:`read_problem_text`) and
    check it against the catalog as it does before solving (:func:`check_against_catalog`);
    a name longer than the database keeps is refused too.

    Raises
    ------
    ProcureError
        The CLI's message for the same text in a file named :data:`EDITOR_FILE`.
    """
    problem, _ = read_problem_text(text)
    _check_name_length(problem.name, "problem", EDITOR_FILE)
    check_against_catalog(problem, shipped_or_dir_catalog(catalog_dir), file=EDITOR_FILE)
    return problem


def changes_of(variant: Variant) -> dict:
    return json.loads(variant.changes_json or "{}")


def _demand_by_period(w: dict, served: list[str], factor: float, growth: float) -> dict:
    out = dict(w.get("demand_by_period") or {})
    for i, name in enumerate(served):
        out[name] = float(out.get(name, 1.0)) * factor * (1.0 + growth) ** i
    return out


def apply_changes(data: dict, problem: Problem, changes: dict, *, file: str) -> Problem:
    """The problem of a variant: ``data`` (the problem's YAML data) with ``changes``,
    validated by the problem reader (a bad value gets its message, naming the field)."""
    new = copy.deepcopy(data)
    for key in ("budget_usd", "carbon_cap_tco2e", "providers", "regions", "modes", "min_tier"):
        if key in changes:
            if changes[key] is None:
                new.pop(key, None)
            else:
                new[key] = changes[key]
    factor = float(changes.get("demand_factor") or 1.0)
    growth = float(changes.get("growth_per_period") or 0.0)
    if factor != 1.0 or growth != 0.0:
        periods = [p.name for p in problem.resolved_periods]
        for raw, w in zip(new.get("workloads") or [], problem.workloads, strict=False):
            if isinstance(w, InferenceWorkload) and isinstance(raw, dict):
                served = [p for p in periods if w.periods is None or p in w.periods]
                raw["demand_by_period"] = _demand_by_period(raw, served, factor, growth)
    apply_meeting_fields(new, problem, changes)
    return parse_problem(new, file=file)


@lru_cache(maxsize=8)
def shipped_or_dir_catalog(catalog_dir: str | None) -> Catalog:
    """The catalog of a folder (None: the shipped one), read once per process."""
    return load_catalog(catalog_dir)


def priced_catalog(catalog: Catalog, multipliers: list[dict]) -> Catalog:
    """``catalog`` with its rented prices times the variant's multipliers."""
    if not multipliers:
        return catalog
    from solver.analyses.stochastic import price_factors, scenario_catalog
    from solver.inputs.problem import PriceMultiplier, Scenario

    try:
        scenario = Scenario(
            name="variant",
            probability=1.0,
            prices=[PriceMultiplier.model_validate(m) for m in multipliers],
        )
        return scenario_catalog(catalog, price_factors(catalog, scenario))
    except ProcureError as exc:
        raise ProcureError(exc.message, field="price_multipliers", fix=exc.fix) from None
    except ValueError as exc:
        raise ProcureError(
            f"a price multiplier is not valid: {str(exc).splitlines()[-1].strip()}",
            field="price_multipliers",
            fix="one per line: provider=NAME factor, or accelerator=NAME factor (0 < factor)",
        ) from None


@dataclass(frozen=True)
class Inputs:
    """Everything that decides a variant's plan, with its digest."""

    problem: Problem
    catalog: Catalog
    catalog_dir: str | None
    multipliers: list[dict]
    solver: str
    relative_gap: float
    problem_sha256: str
    catalog_sha256: str
    digest: str


def inputs_digest(problem_sha256: str, catalog_sha256: str, solver: str, gap: float) -> str:
    """SHA-256 of the problem's digest, the catalog's (prices as the variant sets them),
    the solver and the gap: one stored plan per value."""
    key = {"problem": problem_sha256, "catalog": catalog_sha256, "solver": solver, "gap": gap}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()


def variant_inputs(
    variant: Variant,
    catalog_dir: str | None = None,
    *,
    solver: str = DEFAULT_SOLVER,
    gap: float = DEFAULT_GAP,
) -> Inputs:
    """The problem, catalog and digest of a variant (no solve).

    Raises
    ------
    ProcureError
        The problem or a change is not valid (its message names the field).
    """
    return inputs_for(
        variant.problem.yaml_text,
        variant.name,
        changes_of(variant),
        catalog_dir,
        solver=solver,
        gap=gap,
    )


def inputs_for(
    yaml_text: str,
    variant_name: str,
    changes: dict,
    catalog_dir: str | None = None,
    *,
    solver: str = DEFAULT_SOLVER,
    gap: float = DEFAULT_GAP,
) -> Inputs:
    """:func:`variant_inputs` of a problem's text and a variant's changes."""
    base, data = read_problem_text(yaml_text)
    file = f"{EDITOR_FILE} (variant {variant_name})"
    shipped = shipped_or_dir_catalog(catalog_dir)
    problem = apply_changes(data, base, resolved(changes, shipped, file), file=file)
    multipliers = list(changes.get("price_multipliers") or [])
    catalog = priced_catalog(shipped, multipliers)
    digests = input_digests(problem, catalog)
    return Inputs(
        problem=problem,
        catalog=catalog,
        catalog_dir=catalog_dir,
        multipliers=multipliers,
        solver=solver,
        relative_gap=gap,
        problem_sha256=digests.problem_sha256,
        catalog_sha256=digests.catalog_sha256,
        digest=inputs_digest(digests.problem_sha256, digests.catalog_sha256, solver, gap),
    )


def solve_task(_shared: object, task: dict) -> dict:
    """One solve on a Dask worker (:func:`solver.analyses.runner.run_tasks`): the verified
    plan as JSON, or the user's error as its message (never a traceback)."""
    from solver.api import solve

    try:
        catalog = priced_catalog(shipped_or_dir_catalog(task["catalog_dir"]), task["multipliers"])
        plan = solve(task["problem"], catalog, solver=task["solver"], gap=task["gap"])
    except ProcureError as exc:
        return {"error": str(exc)}
    return {"plan_json": plan.model_dump_json()}


def task_of(inputs: Inputs) -> dict:
    """What a worker needs to solve ``inputs`` (plain data)."""
    return {
        "problem": inputs.problem.model_dump(mode="json"),
        "catalog_dir": inputs.catalog_dir,
        "multipliers": inputs.multipliers,
        "solver": inputs.solver,
        "gap": inputs.relative_gap,
    }


def stored_plan(session: Session, digest: str) -> PlanRecord | None:
    return session.scalars(select(PlanRecord).where(PlanRecord.inputs_digest == digest)).first()


def store_plan(session: Session, variant_id: int | None, inputs: Inputs, plan: Plan) -> PlanRecord:
    """Store a verified plan under its inputs digest (once: a plan stored already under the
    same digest is returned as it is, also one a concurrent solve of the same inputs
    stored between the look-up and the insert; rows are never updated)."""
    found = stored_plan(session, inputs.digest)
    if found is not None:
        return found
    record = PlanRecord(
        inputs_digest=inputs.digest,
        variant_id=variant_id,
        problem_name=plan.problem,
        problem_sha256=inputs.problem_sha256,
        catalog_sha256=inputs.catalog_sha256,
        catalog_dir=inputs.catalog_dir or "",
        price_multipliers_json=json.dumps(inputs.multipliers),
        solver=plan.solver,
        gap=plan.gap,
        relative_gap=inputs.relative_gap,
        verified=plan.verified,
        status=plan.status,
        total_cost_usd=plan.total_cost_usd,
        total_co2e_t=plan.total_co2e_t,
        plan_json=plan.model_dump_json(),
    )
    session.add(record)
    try:
        session.commit()
    except IntegrityError:  # the same inputs stored meanwhile: that plan is the answer
        session.rollback()
        found = stored_plan(session, inputs.digest)
        if found is None:
            raise
        return found
    return record


def plan_of(record: PlanRecord) -> Plan:
    return Plan.model_validate_json(record.plan_json)


def problem_of_plan(record: PlanRecord) -> Problem:
    """The parsed problem a stored plan was solved for (kept in the plan's inputs)."""
    return _problem_in(plan_of(record), record.id)


def _problem_in(plan: Plan, plan_id: int) -> Problem:
    if plan.inputs is None:
        raise ProcureError("the stored plan has no inputs", fix="solve its variant again")
    return parse_problem(plan.inputs.problem, file=f"plan {plan_id}")


def catalog_of_plan(record: PlanRecord) -> Catalog:
    """The catalog a stored plan was solved over (its folder and price multipliers)."""
    return priced_catalog(
        shipped_or_dir_catalog(record.catalog_dir or None),
        json.loads(record.price_multipliers_json or "[]"),
    )


@dataclass(frozen=True)
class QueuedPlanJob:
    """A queued job on a stored plan (sensitivity, analysis, watch), read in one session:
    what its runner needs of the job and of the plan."""

    plan_id: int
    plan: Plan
    problem: Problem
    catalog: Catalog
    options_json: str | None
    break_even_limit: int | None


def queued_plan_job(session: Session, job_id: int) -> QueuedPlanJob | None:
    """The job and its plan while the job is still queued; None when it is gone, or was
    started or cancelled meanwhile (then its runner does nothing)."""
    job = session.get(Job, job_id)
    if job is None or job.status != JobStatus.QUEUED:
        return None
    record = session.get(PlanRecord, job.plan_id)
    plan = plan_of(record)
    return QueuedPlanJob(
        plan_id=record.id,
        plan=plan,
        problem=_problem_in(plan, record.id),
        catalog=catalog_of_plan(record),
        options_json=job.options_json,
        break_even_limit=job.break_even_limit,
    )


def add_problem(session: Session, text: str, catalog_dir: str | None = None) -> ProblemRecord:
    """Store a problem after reading and checking it as the CLI does
    (:func:`checked_problem_text`; nothing stored on an error), with a first variant
    ``base`` (no changes)."""
    problem = checked_problem_text(text, catalog_dir)
    record = ProblemRecord(name=problem.name, yaml_text=text)
    record.variants.append(Variant(name="base", changes_json="{}"))
    session.add(record)
    session.commit()
    return record


def add_variant(
    session: Session,
    problem: ProblemRecord,
    name: str,
    changes: dict,
    catalog_dir: str | None = None,
) -> Variant:
    """Store a variant of ``problem`` after checking that its problem and prices read and
    that ``procure solve`` would accept them (:func:`check_against_catalog`; nothing
    stored on an error)."""
    name = name.strip()
    if not name:
        raise ProcureError("the variant has no name", field="name", fix="e.g. budget-1.5m")
    _check_name_length(name, "variant")
    if any(v.name == name for v in problem.variants):
        raise ProcureError(
            f"{problem.name} has a variant {name!r} already",
            field="name",
            fix="choose another name",
        )
    inputs = inputs_for(problem.yaml_text, name, changes, catalog_dir)
    check_against_catalog(inputs.problem, inputs.catalog, file=f"{EDITOR_FILE} (variant {name})")
    variant = Variant(name=name, changes_json=json.dumps(changes, sort_keys=True))
    problem.variants.append(variant)
    session.commit()
    return variant
