"""What a plan was solved for: the canonical JSON of the problem, its digest and the
catalog's, checked before a plan file is used again.
"""

from __future__ import annotations

import hashlib
import json

from pydantic import BaseModel, Field

from solver.inputs.catalog import Catalog, catalog_sha256
from solver.inputs.problem import Problem


class PlanInputs(BaseModel):
    """What a plan was solved for: digests of the problem and catalog, and where they are.

    ``export``, ``diff`` and ``resolve`` reload the problem and catalog, check the digests
    and re-verify the plan before using it: an edited, foreign or stale plan is refused.
    """

    problem_sha256: str = Field(description="SHA-256 of the parsed problem (canonical JSON)")
    catalog_sha256: str = Field(description="SHA-256 of the catalog tables (canonical CSV)")
    problem: dict = Field(
        default_factory=dict,
        description="The parsed problem itself (after re-basing, for a re-solved plan), so "
        "that the plan can be re-verified without its YAML",
    )
    problem_file: str | None = Field(None, description="The problem file, when it is on disk")
    catalog_dir: str | None = Field(None, description="The catalog folder; None = shipped")
    prices: list[dict] = Field(
        default_factory=list,
        description="A re-solved plan: the price files applied over catalog_dir, in order, "
        "with their options",
    )
    quotes: dict | None = Field(
        None,
        description="The vendor quotes file applied last (``path``) and the day its quotes "
        "were checked against (``on``), when the plan was solved with one",
    )
    exchange_rates: str | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="The exchange-rate file applied over the catalog's rates, first (its "
        "path), when the plan was solved with one",
    )


#: problem fields added after plans were first recorded, left out of the canonical JSON
#: while at their default (empty): a problem that does not use them keeps the digest, and
#: the plan files, it had before they existed
LATER_FIELDS = ("savings_plans", "costs", "compare_api")


def problem_json(problem: Problem) -> str:
    """The canonical JSON of a parsed problem (what its digest is taken of)."""
    data = problem.model_dump(mode="json")
    for name in LATER_FIELDS:
        if not data.get(name):
            data.pop(name, None)
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def input_digests(problem: Problem, catalog: Catalog) -> PlanInputs:
    """The digests of a problem and a catalog (no paths: the CLI adds those).

    The problem is hashed as its parsed model in JSON, so comments, key order and
    whitespace in the YAML do not matter; the catalog by :func:`catalog_sha256`.
    """
    problem_text = problem_json(problem)
    return PlanInputs(
        problem_sha256=hashlib.sha256(problem_text.encode()).hexdigest(),
        problem=json.loads(problem_text),
        catalog_sha256=catalog_sha256(catalog),
    )
