"""Near-optimal alternatives (modelling to generate alternatives) and the price of each
preference: plain data in (problem, catalog), plain data out (verified plans and tables).
"""

from __future__ import annotations

from solver.analyses.alternatives.groups import MEASURES, PREFERENCE_KINDS
from solver.analyses.alternatives.mga import Alternative, Alternatives, alternatives
from solver.analyses.alternatives.preferences import Preference, Preferences, preferences

__all__ = [
    "MEASURES",
    "PREFERENCE_KINDS",
    "Alternative",
    "Alternatives",
    "Preference",
    "Preferences",
    "alternatives",
    "preferences",
]
