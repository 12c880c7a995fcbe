"""'Show alternatives' on a plan page (issue 51, Build 3): ``procure alternatives`` of the
plan's problem run as a workspace job (:mod:`solver.web.analysis_jobs`, kind
``alternatives``), its plans shown side by side with the optimum.

The analysis is :func:`solver.analyses.alternatives.alternatives` (modelling to generate
alternatives: each plan within ``slack`` of the optimum, reusing as few of the earlier
plans' providers, accelerators, regions or commitments as it can, every one verified); the
stored result is exactly ``procure alternatives --format json``'s
(:func:`solver.outputs.alternatives.alternatives_json`).
"""

from __future__ import annotations

import json

from solver.analyses.alternatives.groups import MEASURES
from solver.errors import ProcureError
from solver.web.store import PlanRecord
from solver.web.workspace import problem_of_plan

__all__ = ["MEASURES", "check", "options_of", "run", "view"]

#: the page's defaults: ``procure alternatives``' own (--slack 0.02, --n 4, providers)
DEFAULT_SLACK = 0.02
DEFAULT_N = 4
DEFAULT_MEASURE = "providers"
#: seconds each solve of the job may take (the optimum and each alternative, as
#: ``--time-limit``); one stopped with a plan is shown as not proven
ALTERNATIVES_TIME_LIMIT_S = 120.0


def options_of(form) -> dict:
    """The job's options from the page's form (as the CLI's ``--slack --n --differ-by``;
    a value that is not a number is kept as typed, to be refused by :func:`check`)."""
    out: dict = {}
    for key, default, kind in (("slack", DEFAULT_SLACK, float), ("n", DEFAULT_N, int)):
        raw = str(form.get(key) or default).strip()
        try:
            out[key] = kind(raw)
        except ValueError:
            out[key] = raw
    out["differ_by"] = str(form.get("differ_by") or DEFAULT_MEASURE)
    return out


def check(record: PlanRecord, options: dict) -> None:
    """Refuse what ``procure alternatives`` refuses, before a job is queued.

    Raises
    ------
    ProcureError
        A slack, count or measure out of range (naming the page's field), or a problem the
        analysis cannot take (a two-stage objective).
    """
    from solver.analyses.alternatives.mga import check_arguments
    from solver.analyses.alternatives.resolves import check_problem

    slack, n = options.get("slack"), options.get("n")
    for key, value, kind in (("slack", slack, float), ("n", n, int)):
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ProcureError(
                f"{key} {value!r} is not a {'number' if kind is float else 'whole number'}",
                field=key,
                fix="e.g. slack 0.02 (2%) and n 4",
            )
    try:
        check_arguments(float(slack), int(n), str(options.get("differ_by")))  # type: ignore[arg-type]
        check_problem(problem_of_plan(record), "show alternatives")
    except ProcureError as exc:
        exc.field = (exc.field or "").removeprefix("--").replace("-", "_")
        exc.args = (exc.render(),)
        raise


def run(problem, catalog, options: dict) -> dict:
    """The analysis, as ``procure alternatives --format json`` prints it (a dict)."""
    from solver.analyses.alternatives import alternatives
    from solver.core.backends import SolveOptions
    from solver.outputs.alternatives import alternatives_json

    found = alternatives(
        problem,
        catalog,
        slack=options["slack"],
        n=options["n"],
        measure=options["differ_by"],
        options=SolveOptions(time_limit_s=ALTERNATIVES_TIME_LIMIT_S),
    )
    return json.loads(alternatives_json(found))


def _commitments(commitments: dict[str, float]) -> str:
    return ", ".join(f"{n:g} x {k}" for k, n in commitments.items()) or "none"


def view(result: dict | None) -> dict:
    """The stored result as the page shows it: one column per plan (the optimum first),
    one row per measure, as ``procure alternatives`` prints them."""
    if result is None:
        return {"columns": [], "rows": []}
    plans = [("optimum", result["optimum"], None)] + [
        (
            f"alternative {k + 1}" + ("" if a["proven"] else " (not proven)"),
            a,
            a["delta_usd"],
        )
        for k, a in enumerate(result["alternatives"])
    ]
    base = result["optimum"]["summary"]["total_cost_usd"]
    summaries = [p["summary"] for _, p, _ in plans]

    def vs(delta: float | None) -> str:
        if delta is None:
            return ""
        share = f" ({delta / base:+.2%})" if base else ""
        sign = "+" if delta > 0 else ("-" if delta < 0 else "")
        return f"{sign}${abs(delta):,.0f}{share}"

    rows = [
        ("total cost", [f"${s['total_cost_usd']:,.0f}" for s in summaries]),
        ("against the optimum", [vs(d) for _, _, d in plans]),
        ("providers", [", ".join(s["providers"]) for s in summaries]),
        ("accelerators", [", ".join(s["accelerators"]) for s in summaries]),
        ("purchase modes", [", ".join(s["modes"]) for s in summaries]),
        ("commitments", [_commitments(s["commitments"]) for s in summaries]),
        ("CO2e, t", [f"{s['total_co2e_t']:,.1f}" for s in summaries]),
        ("largest failure domain", [s["largest_failure_domain"] or "none" for s in summaries]),
        ("verified", ["yes" if s["verified"] else "no" for s in summaries]),
    ]
    return {"columns": [name for name, _, _ in plans], "rows": rows, "result": result}
