"""Trust in a plan: the independent verifier, infeasibility explanations, and reading and
re-verifying a saved plan file (:mod:`solver.trust.planfile`)."""
