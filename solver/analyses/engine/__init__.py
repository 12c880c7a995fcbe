"""The warm engine: a problem kept compiled and solved, its variants (a budget, a carbon
cap, a demand factor, providers or regions left out, rented prices times a factor)
re-solved in place from the last plan, every answer verified (docs/concepts/warm-engine.md).
"""

from solver.analyses.engine.engine import Answer, WarmEngine
from solver.analyses.engine.kinds import Change, change_of

__all__ = ["Answer", "Change", "WarmEngine", "change_of"]
