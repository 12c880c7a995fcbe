"""'The price of each preference' on a plan page (issue 51, Build 4): ``procure
alternatives --preferences`` of the plan's problem run as a workspace job
(:mod:`solver.web.analysis_jobs`, kind ``preferences``), shown as one table.

The analysis is :func:`solver.analyses.alternatives.preferences.preferences`: for each
provider, accelerator, purchase mode and region group the optimum uses, the cost of
excluding it; for each it could use but does not, the cost of requiring it; each a
verified re-solve. The stored result is exactly ``procure alternatives --preferences
--format json``'s (:func:`solver.outputs.alternatives.preferences_json`); a re-solve its
time limit stopped shows as "not proven" (its cost an upper bound).
"""

from __future__ import annotations

import json

from solver.web.formats import usd
from solver.web.store import PlanRecord
from solver.web.workspace import problem_of_plan

__all__ = ["PREFERENCES_TIME_LIMIT_S", "check", "run", "view"]

#: seconds each re-solve of the job may take (as ``--time-limit``); one stopped with a plan
#: is shown as "not proven"
PREFERENCES_TIME_LIMIT_S = 120.0

#: the table's words for the analysis' kinds (as ``procure alternatives --preferences``)
KIND_WORDS = {
    "providers": "provider",
    "accelerators": "accelerator",
    "commitments": "purchase mode",
    "region_groups": "region group",
}


def check(record: PlanRecord) -> None:
    """Refuse what ``procure alternatives --preferences`` refuses, before a job is queued.

    Raises
    ------
    ProcureError
        A problem the analysis cannot take (a two-stage objective or drawn scenarios).
    """
    from solver.analyses.alternatives.resolves import check_problem

    check_problem(problem_of_plan(record), "the price of each preference")


def run(problem, catalog, options: dict, time_limit_s: float = PREFERENCES_TIME_LIMIT_S) -> dict:
    """The analysis, as ``procure alternatives --preferences --format json`` prints it.

    Parameters
    ----------
    options
        The job's options (none are read: the analysis takes every kind).
    time_limit_s
        Seconds each solve may take, s.
    """
    from solver.analyses.alternatives.preferences import preferences
    from solver.core.backends import SolveOptions
    from solver.outputs.alternatives import preferences_json

    found = preferences(problem, catalog, options=SolveOptions(time_limit_s=time_limit_s))
    return json.loads(preferences_json(found))


def view(result: dict | None) -> dict:
    """The stored result as the page's table: one row per group priced, in the analysis'
    order, each with the plan's cost, what the preference costs (USD and against the
    optimum) and its status ("not proven" where a re-solve stopped early)."""
    if result is None:
        return {"rows": []}
    base = result["optimum_cost_usd"]
    rows = []
    for p in result["preferences"]:
        delta = p["delta_usd"]
        rows.append(
            {
                "kind": KIND_WORDS.get(p["kind"], p["kind"]),
                "group": p["group"],
                "preference": f"{p['action']} it",
                "cost": usd(p["cost_usd"], cents=False, missing="no plan"),
                "delta": usd(delta, cents=False, signed=True, missing="no plan"),
                "share": f"{delta / base:+.2%}" if delta is not None and base else "",
                "status": p["status"],
            }
        )
    return {"rows": rows, "result": result}
