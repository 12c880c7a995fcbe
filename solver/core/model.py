"""Build the solver-neutral MIP of DESIGN.md section 5 from the compiled options.

The model is plain data (:mod:`solver.core.matrix`): a variables table (with what each
variable means: kind, option, pool, period, block, bucket), rows with a stable family name
and key, an objective, and named linear expressions (total cost, CO2e, cost per provider
and period) that the report and the second stage of a lexicographic objective reuse.
Backends translate it; nothing here imports a solver.

:func:`build_model` adds the constraint families in a fixed order, one function each, from
the modules of :mod:`solver.core.formulation` (demand and capacity, fleets over the day,
redundancy and failure domains, pools and commitments, limits, the objective) and
:mod:`solver.core.staff`. Every row is made by :func:`new_row` from a family of the
registry :data:`FAMILIES` (:mod:`solver.core.families`); the rows the column-generation
master, re-solves, two-stage plans and break-even re-solves add are made the same way. This
module also re-exports the names callers import from it.
"""

from __future__ import annotations

from solver.core.compile import Compiled
from solver.core.families import FAMILIES, Family, new_row, row_name
from solver.core.formulation.blocks import add_capacity_blocks
from solver.core.formulation.demand import add_demand, add_inference_capacity, add_training
from solver.core.formulation.disagg import add_disagg
from solver.core.formulation.egress import add_egress
from solver.core.formulation.limits import (
    add_budgets,
    add_carbon_cap,
    add_power_caps,
    add_provider_shares,
    add_quotas,
    budget_bound,
)
from solver.core.formulation.moves import add_moves_and_limits
from solver.core.formulation.objective import (
    assemble,
    has_second_stage,
    second_stage,
    stage_objective,
)
from solver.core.formulation.pools import add_fleet, add_savings_plans
from solver.core.formulation.redundancy import add_failure_domains, add_n_plus_1, block_need_tps
from solver.core.formulation.state import State
from solver.core.formulation.support import add_support
from solver.core.matrix import Expression, LinearModel, Row, VarKind, combine
from solver.core.staff import add_staff_scale


def build_model(compiled: Compiled, *, cap_demand_rows: bool = False) -> LinearModel:
    """Build every variable and constraint family of DESIGN.md section 5.

    The families are added in a fixed order, one function each (a new family is one
    more function here, and one entry in :data:`FAMILIES`: meaning, dual unit, key,
    whether it binds).

    Parameters
    ----------
    compiled
        The options table and its context from :func:`solver.core.compile.compile_problem`.
    cap_demand_rows
        Count a whole unit for at most the demand in the demand rows: the same integer
        plans, a tighter LP relaxation. Column generation's masters use it (their LP is
        the bound); the full model does not, since HiGHS's presolve tightens those rows
        itself (bench/archive/RESULTS-2026.md compares the two).

    Returns
    -------
    LinearModel
        Minimisation model with the problem's (first-stage) objective.
    """
    m = State(compiled, cap_demand_rows)
    add_inference_capacity(m)
    add_disagg(m)
    add_demand(m)
    add_egress(m)
    add_n_plus_1(
        m.B,
        compiled,
        m.unit_capacity,
        m.shortfall_tps if m.allow_shortfall else None,
        deploy_of=m.deploy_of,
        disagg_served=m.disagg_served,
    )
    add_failure_domains(m)
    add_moves_and_limits(m)
    add_training(m)
    add_capacity_blocks(m)
    add_fleet(m)
    add_savings_plans(m)
    add_quotas(m)
    add_power_caps(m)
    add_staff_scale(m)
    add_support(m)
    add_budgets(m)
    add_carbon_cap(m)
    add_provider_shares(m)
    return assemble(m)


__all__ = [
    "FAMILIES",
    "Expression",
    "Family",
    "LinearModel",
    "Row",
    "VarKind",
    "block_need_tps",
    "budget_bound",
    "build_model",
    "combine",
    "has_second_stage",
    "new_row",
    "row_name",
    "second_stage",
    "stage_objective",
]
