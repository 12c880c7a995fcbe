"""Analyses on top of a solve: sensitivity, break-even, sweeps, re-solve and diff,
stochastic, estimate, calibrate; one parallel runner (:mod:`solver.analyses.runner`)."""
