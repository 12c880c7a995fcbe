"""Plan files: read a saved plan (``procure solve --format json``) and re-verify it
against the problem and catalog it was solved for, so the CLI and the Python API act
only on a plan that is still true (orders, FOCUS rows, a diff, a re-solve).

``load_plan(path)`` returns (Plan, Problem, Catalog) or raises ProcureError naming the
file, the field and the fix.
"""

from __future__ import annotations

import hashlib
import json
import math
from datetime import date
from pathlib import Path

from pydantic import ValidationError

from solver.errors import ProcureError
from solver.inputs.catalog import Catalog, load_catalog
from solver.inputs.prices import PRICE_FILE_OPTIONS, apply_price_file
from solver.inputs.problem import Problem, load_problem, parse_problem
from solver.inputs.yamlio import DuplicateJSONKeyError, unique_json_keys
from solver.plan import Check, Plan, PlanInputs, input_digests, problem_json
from solver.plan.cashflow import cash_flow
from solver.trust.rederive import rederived_errors
from solver.trust.verify import FieldError, plan_name_errors, verify_plan_file

PLAN_FIX = "use a plan written by procure solve --format json (or resolve --plan-out), unedited"


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text} is out of range")
    return value


def _no_constant(text: str) -> float:
    raise ValueError(f"{text} is not a number a plan may hold")


def read_plan_file(path: Path) -> Plan:
    """The plan in a JSON file, refused unless it is a plan procure can act on: solved to
    a plan, verified, and carrying the inputs it was solved for."""
    where = str(path)
    if not path.is_file():
        raise ProcureError(
            "plan file not found" if not path.exists() else "the plan path is not a file",
            file=where,
            fix="write one with: procure solve PROBLEM --format json --out PLAN.json",
        )
    try:
        data = json.loads(
            path.read_text(encoding="utf-8"),
            parse_float=_finite_float,
            parse_constant=_no_constant,
            object_pairs_hook=unique_json_keys,
        )
    except DuplicateJSONKeyError as exc:
        raise ProcureError(
            f"{exc}: JSON readers disagree on which one counts, so the plan means two things",
            file=where,
            field=exc.key,
            fix=PLAN_FIX,
        ) from None
    except UnicodeDecodeError:
        raise ProcureError("not a text file", file=where, fix=PLAN_FIX) from None
    except json.JSONDecodeError as exc:
        raise ProcureError(
            f"not JSON: {exc.msg}", file=where, field=f"line {exc.lineno}", fix=PLAN_FIX
        ) from None
    except (ValueError, RecursionError) as exc:
        raise ProcureError(f"not a plan: {exc}", file=where, fix=PLAN_FIX) from None
    try:
        plan = Plan.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ProcureError(
            f"not a procure plan: {first['msg']}",
            file=where,
            field=".".join(str(p) for p in first["loc"]) or None,
            fix=PLAN_FIX,
        ) from None
    if plan.status not in ("optimal", "feasible"):
        raise ProcureError(
            f"the plan's status is {plan.status!r}: there is nothing to act on",
            file=where,
            field="status",
            fix="solve the problem until it has a plan (optimal or feasible)",
        )
    if not plan.verified:
        raise ProcureError(
            "the plan is not verified (verified: false); procure acts only on verified plans",
            file=where,
            field="verified",
            fix=PLAN_FIX,
        )
    if plan.inputs is None:
        raise ProcureError(
            "the plan does not say what problem and catalog it was solved for (no inputs)",
            file=where,
            field="inputs",
            fix="re-solve it with this version: procure solve PROBLEM --format json --out PLAN",
        )
    return plan


def _with_recorded_quotes(catalog: Catalog, recorded: dict[str, object], where: str) -> Catalog:
    """The catalog with the quotes file a plan was solved with, applied again."""
    from datetime import date

    from solver.inputs.quotes import apply_quotes, parse_quotes
    from solver.inputs.yamlio import read_text_file

    path = Path(str(recorded.get("path", "")))
    text = read_text_file(
        path,
        what="quotes file the plan was solved with",
        fix=f"restore {path} (named in {where}, inputs.quotes) or re-solve without it",
    )
    on = date.fromisoformat(str(recorded.get("on")))
    return apply_quotes(catalog, parse_quotes(text, str(path)), on=on)


def _with_recorded_rates(catalog: Catalog, path: str, where: str) -> Catalog:
    """The catalog with the exchange-rate file a plan was solved with, applied again."""
    from solver.inputs.exchange_rates import parse_exchange_rates, with_exchange_rates
    from solver.inputs.yamlio import read_text_file

    text = read_text_file(
        Path(path),
        what="exchange-rate file the plan was solved with",
        fix=f"restore {path} (named in {where}, inputs.exchange_rates) or re-solve without it",
    )
    return with_exchange_rates(catalog, parse_exchange_rates(text, path))


def load_plan(
    path: Path,
    *,
    problem: Path | None = None,
    catalog: Path | None = None,
    cache_dir: Path | None = None,
) -> tuple[Plan, Problem, Catalog]:
    """Read a plan and re-verify it against the problem and catalog it was solved for.

    A plan is used (for orders, FOCUS rows, a diff or a re-solve) only when it is
    verified, was solved to a plan (optimal or feasible), carries the digests of its
    inputs, those match the problem and catalog (``problem``/``catalog`` when given,
    else the problem the plan carries and the catalog folder it names), and the
    independent verifier passes it again. Anything else is refused. ``cache_dir``: where
    the checked catalog is kept between runs (:func:`solver.inputs.catalog.load_catalog`).

    Returns
    -------
    (Plan, Problem, Catalog)
    """
    where = str(path)
    plan = read_plan_file(path)
    inputs = plan.inputs
    assert inputs is not None  # read_plan_file refuses a plan without inputs
    if problem is not None:
        prob = load_problem(problem)
        wrong_problem = f"the plan was solved for another problem than {problem}"
    else:
        _check_problem_file(plan, where)
        try:
            prob = parse_problem(inputs.problem, file=f"{where} (inputs.problem)")
        except ProcureError:
            raise ProcureError(
                "the problem the plan carries is not a valid problem",
                file=where,
                field="inputs.problem",
                fix=PLAN_FIX,
            ) from None
        wrong_problem = "the problem the plan carries was edited (its digest does not match)"
    recorded = None if inputs.catalog_dir is None else Path(inputs.catalog_dir)
    cat = load_catalog(catalog if catalog is not None else recorded, cache_dir=cache_dir)
    if recorded_catalog(catalog, inputs):
        if inputs.exchange_rates:  # the exchange-rate file first, as solve applies it
            cat = _with_recorded_rates(cat, inputs.exchange_rates, where)
        for applied in inputs.prices:  # a re-solved plan: the price files, in order
            options = {k: v for k, v in applied.items() if k in PRICE_FILE_OPTIONS}
            cat = apply_price_file(cat, **{**options, "prices": Path(applied["prices"])}).catalog
        if inputs.quotes:  # quotes applied last, checked against the day they were then
            cat = _with_recorded_quotes(cat, inputs.quotes, where)
    digests = input_digests(prob, cat)
    if digests.problem_sha256 != inputs.problem_sha256:
        if problem is not None and str(Path(problem).resolve()) == inputs.problem_file:
            _check_problem_file(plan, where)  # the file it was solved from, edited since
        raise ProcureError(
            wrong_problem,
            file=where,
            field="inputs.problem_sha256",
            fix="pass the problem the plan was solved for (--problem), or re-solve this one",
        )
    if digests.catalog_sha256 != inputs.catalog_sha256:
        raise ProcureError(
            "the plan was solved with another catalog (or its prices changed since)",
            file=where,
            field="inputs.catalog_sha256",
            fix="pass the catalog folder it was solved with (--catalog), or re-solve the plan",
        )
    _refuse_field(plan_name_errors(plan, prob, cat), where)
    try:
        checks, recomputed = verify_plan_file(plan, prob, cat)
    except (ArithmeticError, KeyError, TypeError, ValueError) as exc:
        # an edited plan can hold what a solved one never does; it is refused, not shown
        checks, recomputed = [Check(name="plan readable", ok=False, detail=str(exc))], []
    failed = [c for c in checks if not c.ok]
    if failed:
        first = failed[0]
        raise ProcureError(
            f"the plan does not verify against its problem and catalog ({len(failed)} "
            f"failed checks; first: {first.name}: {first.detail})",
            file=where,
            fix=PLAN_FIX,
        )
    _refuse_field(recomputed, where)
    if not plan.cash_flow and plan.start_date:  # written without its cash flow: derived here
        start = date.fromisoformat(plan.start_date)
        plan = plan.model_copy(update={"cash_flow": cash_flow(plan, prob, cat, start)})
    _refuse_field(rederived_errors(plan, prob, cat), where)
    return plan, prob, cat


def _refuse_field(errors: list[FieldError], where: str) -> None:
    """Refuse a plan file with the first field that does not hold (and how many more)."""
    if errors:
        first = errors[0]
        more = f" ({len(errors) - 1} more field(s) disagree)" if len(errors) > 1 else ""
        raise ProcureError(
            f"the plan was edited or does not belong to its problem and catalog: "
            f"{first.message}{more}",
            file=where,
            field=first.field,
            fix=first.fix,
        )


def _check_problem_file(plan: Plan, where: str) -> None:
    """Refuse a plan whose problem file (``inputs.problem_file``) has changed since it was
    solved: the plan would be acted on for a problem that is no longer the one on disk. A
    file that is gone is no refusal: the plan carries its problem."""
    assert plan.inputs is not None  # read_plan_file refuses a plan without inputs
    recorded = plan.inputs.problem_file
    if not recorded or not Path(recorded).is_file():
        return
    try:
        now = hashlib.sha256(problem_json(load_problem(recorded)).encode()).hexdigest()
    except ProcureError:
        now = None  # it no longer reads as a problem: changed
    if now != plan.inputs.problem_sha256:
        raise ProcureError(
            f"the problem file the plan was solved from, {recorded}, has changed since: the "
            "plan is not a plan of the problem it names any more",
            file=where,
            field="inputs.problem_file",
            fix=f"solve it again (procure solve {recorded} --format json --out PLAN.json), "
            "or pass the problem it was solved for with --problem",
        )


#: a re-solve's price-trail entry also names the problem digest of the plan it re-solved
BASELINE_KEY = "baseline_problem_sha256"


def problem_lineage(plan: Plan) -> set[str]:
    """The problem digests a plan descends from: its own, and for a re-solved plan each
    baseline's (its price trail names them)."""
    assert plan.inputs is not None  # a plan read by read_plan_file has inputs
    return {plan.inputs.problem_sha256} | {
        a[BASELINE_KEY] for a in plan.inputs.prices if a.get(BASELINE_KEY)
    }


def same_problem(a: Plan, b: Plan) -> bool | None:
    """Whether two plans are of one problem (the same digest, or one re-solved from the
    other or both from one baseline); None when a re-solve older than the lineage in its
    price trail leaves it unknown."""
    if problem_lineage(a) & problem_lineage(b):
        return True
    assert a.inputs is not None and b.inputs is not None  # problem_lineage held them
    if any(not entry.get(BASELINE_KEY) for entry in (*a.inputs.prices, *b.inputs.prices)):
        return None
    return False


def recorded_catalog(catalog: Path | None, inputs: PlanInputs) -> bool:
    """Whether ``--catalog`` (None = not given) names the folder a plan was solved over."""
    if catalog is None:
        return True
    return inputs.catalog_dir is not None and catalog.resolve() == Path(inputs.catalog_dir)
