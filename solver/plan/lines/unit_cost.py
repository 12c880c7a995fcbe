"""A unit cost of the plan's serving: dollars per million tokens served, for the plan, a
serving workload or one deployment, and beside it what a model API would bill for the
same tokens (plain data; :mod:`solver.plan.unit_costs` works them out)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class UnitCost(BaseModel):
    """Dollars per million tokens at the plan's served tokens (docs/concepts/unit-costs.md).

    ``usd_per_1m_output_tokens`` carries the whole cost on the output tokens (the prompts'
    processing included): the figure to set against an API's output price when prompts
    are short. ``usd_per_1m_tokens`` spreads it over input and output alike. With the
    problem's ``compare_api``, the cost is also split between input and output tokens in
    the proportion the API bills them (``*_at_api_mix``): each is the API's price times
    ``api_cost_ratio``, so the two lists read line by line.
    """

    scope: Literal["plan", "workload", "deployment"] = Field(
        description="plan: the whole plan's cost (training included) over every served "
        "token; workload: one serving workload's lines; deployment: one offering's lines "
        "for a workload over the horizon"
    )
    workload: str = Field("", description="The serving workload ('' for the plan)")
    provider: str = Field("", description="Deployment: its provider")
    region: str = Field("", description="Deployment: its region")
    offering: str = Field("", description="Deployment: its offering")
    mode: str = Field("", description="Deployment: its purchase mode")
    input_tokens: float = Field(
        description="Prompt tokens served over the horizon (average demand x hours of the "
        "workload's periods x the period's demand factor x the share served; a "
        "deployment's share of each load block in proportion to its capacity there)"
    )
    output_tokens: float = Field(description="Output tokens served over the horizon, as above")
    cost_usd: float = Field(description="Compute cost of the lines counted, USD")
    all_in_cost_usd: float | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="cost_usd plus its share of the cost lines (a provider's lines in "
        "proportion to compute at that provider, the others to all compute); left out when "
        "the plan has no cost lines",
    )
    usd_per_1m_output_tokens: float | None = Field(
        description="cost_usd per million output tokens (None when none are served)"
    )
    usd_per_1m_tokens: float | None = Field(
        description="cost_usd per million tokens, input and output alike"
    )
    all_in_usd_per_1m_output_tokens: float | None = Field(
        None, exclude_if=lambda v: v is None, description="all_in_cost_usd per 1M output tokens"
    )
    all_in_usd_per_1m_tokens: float | None = Field(
        None, exclude_if=lambda v: v is None, description="all_in_cost_usd per 1M tokens"
    )
    api_name: str | None = Field(
        None, exclude_if=lambda v: v is None, description="compare_api: the API's name"
    )
    api_cost_usd: float | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="compare_api: the same tokens at the API's prices (input x its input "
        "price + output x its output price)",
    )
    api_cost_ratio: float | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="compare_api: the cost (all-in when the plan has cost lines) over "
        "api_cost_usd; below 1 the plan is cheaper, and the API breaks even at a price cut "
        "of 1 - ratio",
    )
    usd_per_1m_input_tokens_at_api_mix: float | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="compare_api: the plan's $/1M input tokens with the cost split as the "
        "API prices input and output (the API's input price x api_cost_ratio)",
    )
    usd_per_1m_output_tokens_at_api_mix: float | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="compare_api: the plan's $/1M output tokens split the same way",
    )


__all__ = ["UnitCost"]
