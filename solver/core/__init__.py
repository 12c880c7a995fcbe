"""The optimisation core: compile (physics x catalog -> options tables), dominance, the
solver-neutral model (one ``add_*`` per constraint family), columns and root, the ledger
(every charge) and the clock; ``backends/`` runs a model on a solver."""
