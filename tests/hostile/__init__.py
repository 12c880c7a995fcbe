"""Hostile and fault cases: one file per class of failure, each case with its oracle."""
