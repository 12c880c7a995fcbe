"""Replay before signing: a discrete-event simulation of a plan's serving fleets against
a request trace (:func:`replay_plan`), beside what the plan assumed."""

from solver.analyses.replay.run import ReplayResult, ReplayRow, replay_plan
from solver.analyses.replay.trace import TraceRow, parse_trace, poisson_trace

__all__ = ["ReplayResult", "ReplayRow", "TraceRow", "parse_trace", "poisson_trace", "replay_plan"]
