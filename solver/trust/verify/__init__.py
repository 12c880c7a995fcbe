"""The independent verifier: recompute every constraint of a plan.

It reads only the plan's line items, the problem, the catalog and the physics; never the
solver's matrices or the compiled option table. Capacities, memory fits, SLOs, training
hours, costs and emissions are recomputed from the catalog rows, and every constraint
family of the MIP is checked again. One module per kind of check; the names with a leading
underscore are shared inside this package only.
"""

from solver.trust.verify.fields import FieldError, plan_name_errors, verify_plan_file
from solver.trust.verify.verifier import verify_plan

__all__ = ["FieldError", "plan_name_errors", "verify_plan", "verify_plan_file"]
