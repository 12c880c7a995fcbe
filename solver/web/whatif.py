"""Live what-if (issue 51, Build 2): the variant form's fields, as they change, re-solved
fast and set against the base plan, without storing anything.

``POST /api/problems/{id}/whatif`` takes the variant form as it stands (the same fields,
read by the same :func:`solver.web.routes.form_changes` and checked by the problem reader
and the catalog check as "Add variant" checks them) and answers JSON:

- ``total_cost_usd``: the variant's plan, answered by the problem's warm engine
  (:class:`solver.analyses.engine.WarmEngine`, kept per problem text, catalog and base variant:
  :func:`engine_for`) and verified by the independent verifier, as every plan, within
  :data:`WHATIF_TIME_LIMIT_S`; ``answered_by`` says how (``carried``, ``warm``,
  ``fresh`` or ``cold``: docs/concepts/warm-engine.md);
- ``base_total_cost_usd`` and ``change_usd``: against the base plan (the problem's first
  variant, unchanged: its stored plan when there is one, else solved the same way);
- ``lines``: the plan lines whose cost changed, by (workload, item, provider, region,
  offering, mode), with the base's and the variant's cost and units;
- ``error`` (status 400): a field's message and the form field it belongs to.

A plan is stored only when asked: "Add variant" stores the variant, its Solve the plan.
Answers are kept per inputs digest (:data:`CACHE_SIZE` of them) so a field changed back
answers at once; one what-if solves at a time (:data:`_SOLVING`), the others wait.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict

from sqlalchemy import select
from sqlalchemy.orm import Session

from solver.analyses.engine import WarmEngine
from solver.errors import NoPlanError, ProcureError
from solver.plan import Plan
from solver.web.store.models import PlanRecord, ProblemRecord, Variant
from solver.web.workspace import (
    DEFAULT_GAP,
    EDITOR_FILE,
    Inputs,
    changes_of,
    check_against_catalog,
    inputs_for,
    plan_of,
    stored_plan,
)

#: seconds one what-if solve may take (the answer says when it stopped there, unproven)
WHATIF_TIME_LIMIT_S = 10.0
#: what-if plans kept in memory, by inputs digest
CACHE_SIZE = 64
#: a line's cost must move by more than this to count as changed, USD (half a cent)
CHANGED_USD = 0.005

#: warm engines kept in memory, by problem text, catalog folder and base variant
ENGINES = 8

_cache: OrderedDict[str, tuple[Plan, str]] = OrderedDict()
_cache_lock = threading.Lock()
_SOLVING = threading.Lock()
_engines: OrderedDict[str, WarmEngine | None] = OrderedDict()


def base_plan_of(session: Session, variants: list[Variant]) -> PlanRecord | None:
    """The latest stored plan of the problem's base variant (its first), or None."""
    if not variants:
        return None
    return session.scalars(
        select(PlanRecord)
        .where(PlanRecord.variant_id == variants[0].id)
        .order_by(PlanRecord.id.desc())
    ).first()


def engine_for(yaml_text: str, base_changes: dict, catalog_dir: str | None) -> WarmEngine | None:
    """The warm engine of a problem's base variant (built at its first what-if, then kept:
    :data:`ENGINES` of them); None where the base moves prices (the engine's variants
    move prices from the catalog's own) or cannot be read. Called under :data:`_SOLVING`."""
    key = hashlib.sha256(
        json.dumps([yaml_text, base_changes, catalog_dir], sort_keys=True).encode()
    ).hexdigest()
    if key in _engines:
        _engines.move_to_end(key)
        return _engines[key]
    engine = None
    if not base_changes.get("price_multipliers"):
        try:
            base = inputs_for(yaml_text, "base", base_changes, catalog_dir)
            engine = WarmEngine(base.problem, base.catalog, base.relative_gap)
        except ProcureError:
            engine = None  # the base itself is refused: each what-if is solved cold
    _engines[key] = engine
    while len(_engines) > ENGINES:
        _engines.popitem(last=False)
    return engine


def _solved(inputs: Inputs, session: Session, engine: WarmEngine | None) -> tuple[Plan, str]:
    """The verified plan of ``inputs`` and how it was had: stored, kept, or answered now
    within the limit (by ``engine``, else cold)."""
    record = stored_plan(session, inputs.digest)
    if record is not None:
        return plan_of(record), "stored"
    with _cache_lock:
        if inputs.digest in _cache:
            _cache.move_to_end(inputs.digest)
            return _cache[inputs.digest]
    from solver.api import solve

    with _SOLVING:
        try:
            if engine is not None and inputs.solver == "highspy":
                answer = engine.solve(
                    inputs.problem,
                    inputs.catalog,
                    inputs.multipliers,
                    time_limit_s=WHATIF_TIME_LIMIT_S,
                )
                plan, how = answer.plan, answer.how
            else:
                plan = solve(
                    inputs.problem,
                    inputs.catalog,
                    solver=inputs.solver,
                    time_limit_s=WHATIF_TIME_LIMIT_S,
                    gap=inputs.relative_gap,
                )
                how = "cold"
        except NoPlanError:
            raise ProcureError(
                f"no plan within the what-if's {WHATIF_TIME_LIMIT_S:g} s (this says nothing "
                "about whether a plan exists)",
                fix="add the variant and Solve it: a job solves without this limit",
            ) from None
    with _cache_lock:
        _cache[inputs.digest] = (plan, how)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return plan, how


def _line_key(item) -> str:
    where = f"{item.provider} {item.region}".strip()
    return " · ".join(x for x in (item.workload, item.item, where, item.offering, item.mode) if x)


def _lines(plan: Plan) -> dict[str, tuple[float, float]]:
    """Cost (USD) and most units of each kind of line, by :func:`_line_key`."""
    out: dict[str, tuple[float, float]] = {}
    for item in plan.line_items:
        key = _line_key(item)
        cost, units = out.get(key, (0.0, 0.0))
        out[key] = (cost + item.cost_usd, max(units, item.units))
    return out


def changed_lines(base: Plan, plan: Plan) -> list[dict]:
    """The lines whose cost moved between ``base`` and ``plan``, the largest move first."""
    before, after = _lines(base), _lines(plan)
    rows = []
    for key in sorted(set(before) | set(after)):
        b_cost, b_units = before.get(key, (0.0, 0.0))
        a_cost, a_units = after.get(key, (0.0, 0.0))
        if abs(a_cost - b_cost) > CHANGED_USD:
            rows.append(
                {
                    "line": key,
                    "base_units": b_units,
                    "units": a_units,
                    "base_cost_usd": round(b_cost, 2),
                    "cost_usd": round(a_cost, 2),
                    "change_usd": round(a_cost - b_cost, 2),
                }
            )
    return sorted(rows, key=lambda r: -abs(r["change_usd"]))


def what_if(
    session: Session, problem: ProblemRecord, changes: dict, catalog_dir: str | None
) -> dict:
    """The what-if answer for ``changes`` to ``problem`` (see the module's docstring).

    Raises
    ------
    ProcureError
        A field the reader or the catalog check refuses; no plan (infeasible, or none
        within the limit), with the solver's message.
    """
    started = time.perf_counter()
    variants = list(problem.variants)
    base_changes = changes_of(variants[0]) if variants else {}
    file = f"{EDITOR_FILE} (what-if)"
    inputs = inputs_for(problem.yaml_text, "what-if", changes, catalog_dir)
    check_against_catalog(inputs.problem, inputs.catalog, file=file)
    with _SOLVING:
        engine = engine_for(problem.yaml_text, base_changes, catalog_dir)
    record = base_plan_of(session, variants)
    if record is not None:
        base = plan_of(record)
    else:
        base_inputs = inputs_for(problem.yaml_text, "base", base_changes, catalog_dir)
        base = _solved(base_inputs, session, engine)[0]
    plan, how = _solved(inputs, session, engine)
    stored = stored_plan(session, inputs.digest)
    return {
        "total_cost_usd": round(plan.total_cost_usd, 2),
        "base_total_cost_usd": round(base.total_cost_usd, 2),
        "change_usd": round(plan.total_cost_usd - base.total_cost_usd, 2),
        "base_plan_id": None if record is None else record.id,
        "stored_plan_id": None if stored is None else stored.id,
        "status": plan.status,
        "verified": plan.verified,
        "gap": plan.gap,
        "relative_gap_asked": DEFAULT_GAP,
        "time_limit_s": WHATIF_TIME_LIMIT_S,
        "regions": sorted({i.region for i in plan.line_items if i.units > 0}),
        "providers": sorted({i.provider for i in plan.line_items if i.units > 0}),
        "lines": changed_lines(base, plan),
        "seconds": round(time.perf_counter() - started, 3),
        "answered_by": how,
    }


def error_json(exc: ProcureError, at: str) -> dict:
    """A refused what-if: the message as the CLI prints it and the form field it is for."""
    return {"error": {"message": str(exc), "field": exc.field or "", "at": at}}
