"""The solver-neutral matrix of a mixed-integer linear program: the variables table's
kinds, the rows, named linear expressions and the model that holds them.

Plain data that every backend translates; it builds no formulation (that is
:mod:`solver.core.model`) and imports no solver.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
import pandas as pd


class VarKind(StrEnum):
    """What a variable of the model decides (the variables table's ``kind``)."""

    X = "x"  # serving units of an option in a period (and block, when rented)
    Y = "y"  # time share of an option's units on one traffic-mix bucket
    Z = "z"  # 1 when a training job runs on this cluster option
    BUY = "buy"  # servers bought in a period
    COMMIT = "commit"  # instances reserved from a period for the term
    SAVINGS_PLAN = "savings_plan"  # USD per hour committed from a period for the term
    SP_COVER = "sp_cover"  # on-demand units of a pool a savings plan pays for (per block)
    TOP = "top"  # 1 when a capacity class is the largest serving unit (N+1)
    ZONE = "zone"  # units of a serving x variable placed in one availability zone
    DOMAIN_TPS = "domain_tps"  # serving tokens/s of a block, all or in one failure domain
    DOMAIN_UNITS = "domain_units"  # a block's units (rounded, or deployments) in the domain cuts
    SERVE_AT = "serve_at"  # 1 when a workload serves from a place (offering, provider) in a period
    MOVE = "move"  # a workload's arrival in a provider and region it did not serve from before
    DEPLOY = "deploy"  # 1 when a rented offering is in a workload's fleet in a period
    START = "start"  # units of a rented offering started between two load blocks, a day
    SHORTFALL = "shortfall"  # demand left unserved (max_served)
    DISAGG = "disagg"  # output tokens/s a disaggregated group serves in a block
    EGRESS = "egress"  # output tokens/s a provider serves of a block (egress in the objective)
    CHANGE = "change"  # 1 when a line item differs from the baseline (re-solve)
    SWITCH = "switch"  # units switched from the baseline (re-solve)
    RISK = "risk"  # CVaR of a two-stage plan: its threshold and each scenario's excess
    RECOURSE = "recourse"  # Benders master: a scenario's cost as its cuts bound it
    STAFF = "staff"  # servers of a site's fleet on one staff segment (core/staff.py)
    STAFF_TIER = "staff_tier"  # 1 when a site's staff segment is full (core/staff.py)
    BLOCK = "block"  # 1 when a training job runs on this capacity-block option
    USED = "used"  # 1 when a plan uses a group (provider, accelerator, ...): alternatives
    SUPPORT = "support"  # a provider's support fee, its bands and tier binaries (support.py)


@dataclass(frozen=True)
class Row:
    """One linear constraint: sum(coefs[i] * x[i]) sense rhs."""

    name: str
    family: str
    key: tuple
    coefs: dict[int, float]
    sense: str  # "<=", ">=", "=="
    rhs: float


@dataclass
class Expression:
    """A named linear expression: sum(coefs[i] * x[i]) + constant."""

    coefs: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    constant: float = 0.0

    def add(self, index: int, value: float) -> None:
        """Add ``value`` to variable ``index``'s coefficient (nothing for a zero)."""
        if value:
            self.coefs[index] += value

    def value(self, x: np.ndarray) -> float:
        """The expression at the variables' values ``x``."""
        return float(sum(c * x[i] for i, c in self.coefs.items()) + self.constant)


@dataclass
class LinearModel:
    """A solver-neutral mixed-integer linear program (minimisation)."""

    variables: pd.DataFrame
    rows: list[Row]
    objective: Expression
    expressions: dict[str, Expression]
    stage: str = "main"
    objective_unit: str = "USD"
    """What the objective counts, for the progress line: ``USD`` (a cost, shown as
    ``$1,234``) or a count's name (``plans reused``)."""

    @property
    def n_integer(self) -> int:
        """How many variables are integer."""
        return int(self.variables["integer"].sum())

    def with_stage(self, objective: Expression, keep: Row | None, stage: str) -> LinearModel:
        """The same model with a new objective and optionally one more row."""
        rows = self.rows + ([keep] if keep is not None else [])
        return LinearModel(
            self.variables, rows, objective, self.expressions, stage, self.objective_unit
        )


def combine(*terms: tuple[float, Expression]) -> Expression:
    """sum(weight * expression)."""
    out = Expression()
    for weight, e in terms:
        for i, c in e.coefs.items():
            out.coefs[i] += weight * c
        out.constant += weight * e.constant
    return out
