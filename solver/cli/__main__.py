"""``python -m solver.cli``: the same as ``procure``."""

from solver.cli import main

main()
