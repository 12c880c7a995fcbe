"""The registry of constraint families and the one door for rows.

:data:`FAMILIES` gives each family its meaning, the unit of its dual, the names of its key
and whether it is reported as binding (one page per family in docs/formulation/);
:func:`new_row` makes every row of every module, named from its family and key.
"""

from __future__ import annotations

from dataclasses import dataclass

from solver.core.matrix import Row


@dataclass(frozen=True)
class Family:
    """A constraint family: what it says, what its dual means, the names of its key.

    Attributes
    ----------
    description
        What a row of the family says.
    dual_unit
        The unit of a row's dual (shadow price).
    keys
        The name of each part of a row's key, in order; a name ending in ``?`` may be
        left off the end (a commitment's ``availability`` has no block).
    binds
        Whether a row that holds with equality is reported in a plan's ``binding`` list:
        limits are (budget, carbon, availability, ...), the rows that define the plan
        (demand, capacity links, cuts) are not.
    """

    description: str
    dual_unit: str
    keys: tuple[str, ...] = ()
    binds: bool = True

    def takes(self, key: tuple) -> bool:
        """Whether ``key`` has the family's parts (optional ones may be left off the end)."""
        required = sum(not k.endswith("?") for k in self.keys)
        return required <= len(key) <= len(self.keys)


_WPB = ("workload", "period", "block")
_PPB = ("pool", "period", "block")
FAMILIES: dict[str, Family] = {
    "demand": Family(
        "capacity x units + shortfall >= demand of a workload in a period/block",
        "USD per (token/s) over the block",
        _WPB,
        binds=False,
    ),
    "demand_bucket": Family(
        "requests/s served in a traffic-mix bucket >= its demand",
        "USD per (request/s) over the block",
        (*_WPB, "bucket"),
        binds=False,
    ),
    "disagg_prefill": Family(
        "output tokens/s a disaggregated group serves <= its prefill units' capacity",
        "USD per (token/s) over the block",
        ("group", "period", "block"),
        binds=False,
    ),
    "disagg_decode": Family(
        "output tokens/s a disaggregated group serves <= its decode units' capacity",
        "USD per (token/s) over the block",
        ("group", "period", "block"),
        binds=False,
    ),
    "disagg_used": Family(
        "output tokens/s a disaggregated group serves <= its demand x used[g] (N+1)",
        "USD per (token/s) over the block",
        ("group", "period", "block"),
        binds=False,
    ),
    "egress_serve": Family(
        "output tokens/s the providers serve >= a workload's average in the block (egress)",
        "USD per (token/s) over the block",
        _WPB,
        binds=False,
    ),
    "egress_capacity": Family(
        "output tokens/s a provider serves <= its units' capacity x the sized utilisation",
        "USD per (token/s) over the block",
        (*_WPB, "provider"),
        binds=False,
    ),
    "support_spend": Family(
        "a provider's spend in its support bands = its spend in the month (support)",
        "USD per USD of the month's spend",
        ("provider", "month"),
        binds=False,
    ),
    "support_fee": Family(
        "a month's support fee >= its tiered percentage, and >= the plan's minimum",
        "USD per USD of fee",
        ("provider", "month", "part"),
        binds=False,
    ),
    "support_fill": Family(
        "a support band is full when the next band's binary is on (concave tiers)",
        "USD per USD of the band",
        ("provider", "month", "band"),
        binds=False,
    ),
    "support_open": Family(
        "the next support band fills only when this band's binary is on (concave tiers)",
        "USD per USD of the band",
        ("provider", "month", "band"),
        binds=False,
    ),
    "support_billed": Family(
        "a variable spending with a provider only when its support plan is billed",
        "USD per unit",
        ("provider", "variable"),
        binds=False,
    ),
    "mix_capacity": Family(
        "time shares of a unit across buckets <= units",
        "USD per unit",
        ("option", "period", "block"),
        binds=False,
    ),
    "redundancy": Family(
        "serving units >= the workload's minimum serving units", "USD per unit", _WPB
    ),
    "n_plus_1": Family(
        "serving capacity - its largest unit in use >= peak demand / max_utilisation (N+1)",
        "USD per (token/s) over the block",
        _WPB,
    ),
    "n_plus_1_units": Family(
        "at least two serving units wherever there is demand (implied by N+1)",
        "USD per unit",
        _WPB,
    ),
    "largest_unit": Family(
        "exactly one capacity class is taken as the largest serving unit (N+1)",
        "USD",
        _WPB,
        binds=False,
    ),
    "unit_class": Family(
        "units of a capacity class only if the class taken as largest is as large (N+1)",
        "USD per unit",
        (*_WPB, "class"),
        binds=False,
    ),
    "fleet_flat": Family(
        "a flat fleet: units of a rented offering the same in every load block",
        "USD per unit",
        ("option", "period", "block"),
        binds=False,
    ),
    "fleet_start": Family(
        "units of a rented offering started from one load block to the next (each day) "
        ">= the units added",
        "USD per unit started a day",
        ("option", "period", "block", "next_block"),
        binds=False,
    ),
    "fleet_base": Family(
        "an autoscaled fleet: a deployed offering runs at least one unit in every block",
        "USD per unit",
        ("option", "period", "block"),
        binds=False,
    ),
    "fleet_deploy": Family(
        "an autoscaled fleet: units of an offering only if it is deployed in the period",
        "USD per unit",
        ("option", "period", "block"),
        binds=False,
    ),
    "fleet_class": Family(
        "an autoscaled fleet: a deployed offering's capacity class is at most the class "
        "taken as the largest unit in every block (N+1)",
        "USD",
        ("option", "period", "block"),
        binds=False,
    ),
    "fleet_top_used": Family(
        "an autoscaled fleet under N+1: a capacity class is taken as the largest unit only "
        "if one of its offerings is deployed (or a flat unit of it held)",
        "USD",
        ("workload", "period", "block", "class"),
        binds=False,
    ),
    "fleet_small_cover": Family(
        "an autoscaled fleet under N+1: units no larger than a class carry the block with "
        "the unit lost when one of those classes is taken as the largest unit",
        "USD per (token/s) over the block",
        ("workload", "period", "block", "class"),
        binds=False,
    ),
    "fleet_same_top": Family(
        "an autoscaled fleet under N+1: the largest unit is the same in every block of the "
        "period (tops of classes at least as large in one block <= in another)",
        "USD",
        ("workload", "period", "block", "to_block", "class"),
        binds=False,
    ),
    "domain_loss": Family(
        "serving capacity outside one zone (region, provider) >= peak demand / max_utilisation",
        "USD per (token/s) over the block",
        (*_WPB, "kind", "domain"),
    ),
    "domain_total": Family(
        "a block's serving capacity (each unit at most the need) + shortfall, aggregated",
        "USD per (token/s) over the block",
        _WPB,
        binds=False,
    ),
    "domain_held": Family(
        "the serving capacity in one zone (region, provider), aggregated",
        "USD per (token/s) over the block",
        (*_WPB, "kind", "domain"),
        binds=False,
    ),
    "domain_cover": Family(
        "the capacity one zone (region, provider) is counted for <= the need x the "
        "deployments of its offerings",
        "USD per (token/s) over the block",
        (*_WPB, "kind", "domain"),
        binds=False,
    ),
    "domain_covered": Family(
        "a block's covered serving capacity: the sum of its domains' covered capacity",
        "USD per (token/s) over the block",
        (*_WPB, "kind"),
        binds=False,
    ),
    "domain_count": Family(
        "a block's serving capacity >= the demand x R/(R-1) for R domains used (P, a count "
        "of the deployments of units from a threshold up; smaller units' capacity S "
        "weighted), as its secant at whole R",
        "USD per (token/s) over the block",
        (*_WPB, "kind", "threshold", "domains"),
        binds=False,
    ),
    "domain_period": Family(
        "the cost of a workload's variables in one period >= the proven bound of the model "
        "restricted to them (the rows over them alone)",
        "USD per USD",
        ("workload", "period"),
        binds=False,
    ),
    "domain_round": Family(
        "a block's whole units, each counted by its rounding (MIR) coefficient for a "
        "divisor, >= the need over the divisor rounded up x R/(R-1) for R domains used, "
        "as its secant at whole R",
        "USD per rounded unit over the block",
        (*_WPB, "kind", "divisor", "domains"),
        binds=False,
    ),
    "domain_sum": Family(
        "an aggregate of a block's units for the domain cuts: the deployments of units "
        "from a threshold up, the capacity below it, or the units counted by their "
        "rounding coefficient for a divisor",
        "USD per unit over the block",
        (*_WPB, "kind", "what", "of"),
        binds=False,
    ),
    "zone_place": Family(
        "units of a serving option placed in its zones = its units",
        "USD per unit",
        ("workload", "option", "period", "block"),
        binds=False,
    ),
    "serve_at_link": Family(
        "a workload's units in a provider and region <= M x its serve_at binary",
        "USD per unit",
        ("workload", "period", "provider", "region", "var"),
        binds=False,
    ),
    "deployed_link": Family(
        "a workload's units of an offering <= M x its deployed binary",
        "USD per unit",
        ("workload", "period", "block", "offering", "var"),
        binds=False,
    ),
    "serve_at_units": Family(
        "a workload's serve_at binary <= its units in the provider and region",
        "USD",
        ("workload", "period", "provider", "region"),
        binds=False,
    ),
    "deployed_units": Family(
        "a workload's deployed binary <= its units of the offering",
        "USD",
        ("workload", "period", "block", "offering"),
        binds=False,
    ),
    "move": Family(
        "arrival in a provider and region >= served there now - served there the period before",
        "USD per move",
        ("workload", "period", "provider", "region"),
        binds=False,
    ),
    "provider_used": Family(
        "serving from a provider's region => the provider is used in the period",
        "USD",
        ("workload", "period", "provider", "region"),
        binds=False,
    ),
    "max_providers": Family(
        "providers a workload serves from in a period <= max_providers",
        "USD per provider",
        ("workload", "period"),
    ),
    "min_units_per_deployment": Family(
        "units of a deployed offering in every load block >= min_units_per_deployment",
        "USD per unit",
        ("workload", "period", "block", "offering", "in_block"),
    ),
    "max_deployments": Family(
        "offerings a workload serves from in a period <= max_deployments",
        "USD per deployment",
        ("workload", "period", "block"),
    ),
    "domain_share": Family(
        "serving capacity in one region (provider) <= its share of the workload's capacity",
        "USD per (token/s) over the block",
        (*_WPB, "kind", "domain"),
    ),
    "train_once": Family(
        "each training workload runs on exactly one cluster", "USD", ("workload",), binds=False
    ),
    "owned_capacity": Family(
        "owned units in use <= existing + bought and delivered",
        "USD per server",
        _PPB,
        binds=False,
    ),
    "reserved_capacity": Family(
        "reserved units in use <= active commitments", "USD per instance", _PPB, binds=False
    ),
    "availability": Family(
        "units of an offering and mode <= its availability cap",
        "USD per instance",
        ("pool", "period", "block?"),
    ),
    "quota": Family(
        "cloud accelerators of a provider/region/type <= quota",
        "USD per accelerator",
        ("quota", "period", "block"),
    ),
    # capacity blocks: training on whole blocks bought ahead (formulation/blocks.py)
    "block_instances": Family(
        "instances of a capacity-block offer held in a period <= the most it sells at once",
        "USD per instance",
        ("block", "period"),
    ),
    # savings plans: spend-based commitments, beside reservations
    "savings_plan_cover": Family(
        "plan-rate spend of the usage a savings plan covers in an hour <= its commitment",
        "USD per USD/h",
        ("plan", "period", "block"),
        binds=False,
    ),
    "savings_plan_use": Family(
        "on-demand units covered by savings plans <= units in use",
        "USD per instance",
        ("pool", "period", "block"),
        binds=False,
    ),
    "savings_plan_limit": Family(
        "USD per hour committed by a savings plan <= its max_usd_per_hour",
        "USD per USD/h",
        ("plan", "period"),
    ),
    "budget": Family("total cost <= budget", "USD per USD"),
    "capex_budget": Family("purchases <= capex budget", "USD per USD"),
    "period_budget": Family(
        "cost attributed to a period <= its budget", "USD per USD", ("period",)
    ),
    "carbon_cap": Family("total CO2e <= cap", "USD per tCO2e"),
    "provider_share": Family(
        "cost on a provider <= share x total cost", "USD per USD", ("provider",)
    ),
    "power_cap": Family(
        "owned server power at a site <= its power cap", "USD per kW", ("site", "period")
    ),
    # staff by fleet size past 1,000 servers at a site (core/staff.py)
    "staff_fleet": Family(
        "a site's staff segments add up to its average owned fleet in the period",
        "USD per server",
        ("site", "period"),
        binds=False,
    ),
    "staff_tier": Family(
        "a site's staff segments fill in order (fill: segment full before the next opens)",
        "USD per server",
        ("site", "period", "segment", "side"),
        binds=False,
    ),
    "objective_stage": Family(
        "first-stage objective kept (lexicographic)", "-", ("stage",), binds=False
    ),
    # mixed-integer rounding cuts of a column-generation master (core/cuts.py: Cuts)
    "demand_rounding": Family(
        "MIR of a demand row with divisor d: whole units of size d, >= ceil(demand / d) (a cut)",
        "USD per unit",
        (*_WPB, "divisor"),
        binds=False,
    ),
    # stability rows of a re-solve (analyses/resolve.py: add_stability)
    "change_link": Family(
        "a line item's units differ from the baseline only if its change indicator is 1",
        "USD per unit",
        ("group", "direction"),
        binds=False,
    ),
    "max_changes": Family("line items changed from the baseline <= limit", "USD per change"),
    "switching": Family(
        "units switched >= |units - baseline units| (switching cost)",
        "USD",
        ("group", "direction"),
        binds=False,
    ),
    # two-stage plans (analyses/stochastic.py); a scenario's copy of a row above has the
    # scenario as one more key part (see :func:`new_row`)
    "scenario_cost_cap": Family(
        "a scenario's cost <= max_scenario_cost_usd", "USD per USD", ("scenario",)
    ),
    "cvar_excess": Family(
        "a scenario's excess >= its cost - the value at risk (CVaR linearisation)",
        "USD per USD",
        ("scenario",),
        binds=False,
    ),
    "benders_cut": Family(
        "a scenario's recourse cost >= its L-shaped cut (or a feasibility cut)",
        "USD per USD",
        ("cut",),
        binds=False,
    ),
    # break-even re-solves (analyses/sensitivity.py)
    "force_use": Family(
        "at least one unit of a pool in use (a break-even re-solve)",
        "USD per unit",
        ("pool",),
        binds=False,
    ),
    # near-optimal alternatives and the price of preferences (analyses/alternatives/)
    "near_optimal": Family(
        "the objective <= (1 + slack) x the optimum (an alternative plan)",
        "USD per USD",
        (),
    ),
    "group_used_link": Family(
        "a group's units (provider, accelerator, region, mode) <= M x its used binary",
        "USD per unit",
        ("group", "var"),
        binds=False,
    ),
    "group_used_units": Family(
        "a group's used binary <= its units (1 only when the group is in use)",
        "USD",
        ("group",),
        binds=False,
    ),
    "differs_from": Family(
        "the set of groups used differs from an earlier plan's in at least one group",
        "USD",
        ("plan",),
        binds=False,
    ),
    "exclude_group": Family(
        "no unit of a group (the price of excluding it)", "USD per unit", ("group",)
    ),
    "require_group": Family(
        "at least one unit of a group (the price of requiring it)", "USD per unit", ("group",)
    ),
}


def row_name(family: str, key: tuple, scenario: str | None = None) -> str:
    """A row's name: ``family[k1,k2,...]`` (a float key part with 9 significant digits),
    then ``@scenario`` for a scenario's copy."""
    parts = ",".join(f"{k:.9g}" if isinstance(k, float) else str(k) for k in key)
    return f"{family}[{parts}]" + ("" if scenario is None else f"@{scenario}")


def new_row(
    family: str,
    key: tuple,
    coefs: dict[int, float],
    sense: str,
    rhs: float,
    *,
    scenario: str | None = None,
) -> Row:
    """The one door for rows: a :class:`Row` of a registered family, named from it.

    Parameters
    ----------
    family
        A name in :data:`FAMILIES`.
    key
        One part per name of the family's ``keys``.
    coefs, sense, rhs
        sum(coefs[i] * x[i]) sense rhs.
    scenario
        A scenario's copy of the row (a two-stage plan): named ``...@scenario``, with the
        scenario as the key's last part.

    Raises
    ------
    ValueError
        A family not in :data:`FAMILIES`, or a key of the wrong length.
    """
    registered = FAMILIES.get(family)
    if registered is None:
        raise ValueError(f"row family {family!r} is not in FAMILIES (solver/core/families.py)")
    if not registered.takes(key):
        raise ValueError(f"a {family} row's key is {registered.keys}, not {key!r}")
    name = row_name(family, key, scenario)
    if scenario is not None:
        key = (*key, scenario)
    return Row(name, family, key, coefs, sense, float(rhs))
