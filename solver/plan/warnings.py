"""Warnings a plan carries (nothing silently wrong).

A warning says something about the plan that the user did not ask for and would not see
in its figures: a restriction that the period structure imposed (with what lifting it
would cost), or a value in the problem that is legal but implausible (an SLO of seconds
per token on a chat service, a growth factor of 150x). The plan is still the optimum of
the problem as written; the warning is there so that it is never silently wrong for the
problem the user meant.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

WarningKind = Literal["period_structure", "implausible_value", "market_index"]


class PlanWarning(BaseModel):
    """One warning on a plan."""

    kind: WarningKind = Field(
        description="period_structure (a period outlives a server's life or a "
        "reservation's term, so the plan could not own or reserve in it) or "
        "implausible_value (a legal value far outside what such a workload uses) or "
        "market_index (a line's price more than 2x away from its published rental index)"
    )
    field: str = Field(description="The problem field it is about (periods, a workload's field)")
    detail: str = Field(description="What was found and what to do, in one sentence")
    alternative_cost_usd: float | None = Field(
        None,
        description="period_structure: the total cost of the same problem with the periods "
        "split so that the restriction is lifted (None when it could not be priced)",
    )
    saving_usd: float | None = Field(
        None,
        description="period_structure: the plan's total cost less alternative_cost_usd",
    )
