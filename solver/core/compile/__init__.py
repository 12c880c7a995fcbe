"""Compile: workloads x capacity pools -> the table of feasible options.

A *pool* is where units come from: a cloud offering in one purchase mode (on-demand,
spot, 1-/3-year reserved), or a server type bought and hosted at a site (owned). An
*option* is one feasible way to run one workload on one pool: for serving, the replica
shape that gives the most output tokens/s per unit (per traffic-mix bucket too); for
training, a cluster of ``n_units`` units starting in a period, its hours and the periods
it occupies. Options that break a hard requirement are never generated; dominated ones
are pruned. :func:`compile_problem` returns a :class:`Compiled`.
"""

from solver.core.compile.assemble import compile_problem
from solver.core.compile.compiled import Compiled, CompileReport, with_options
from solver.core.compile.periods import Calendar, build_calendar, build_periods
from solver.core.compile.pools import build_pools
from solver.core.compile.pruning import prune_dominated_pools, repruned
from solver.core.compile.requirements import requirement_mask, weak_price_pools
from solver.core.compile.serving import inference_capacity
from solver.inputs.presets import resolve_model

__all__ = [
    "Calendar",
    "CompileReport",
    "Compiled",
    "build_calendar",
    "build_periods",
    "build_pools",
    "compile_problem",
    "inference_capacity",
    "prune_dominated_pools",
    "repruned",
    "requirement_mask",
    "resolve_model",
    "weak_price_pools",
    "with_options",
]
