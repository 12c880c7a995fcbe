"""Plans at a confidence on capacity (issue 33): shipped problems solved as they are, with
``capacity_confidence: 0.9`` and with ``capacity_optimism: 1.5``.

    python bench/quality/capacity_confidence.py [problem names ...]
        (default: seed-2m-13b traffic-mix-measured)

Prints, per problem and variant, the total cost, the serving cost, the most serving units
of each accelerator in use at once (any period and load block) and, for each plan, the
share of peak demand it serves if every capacity estimate is 1.5x optimistic (its
``peak_served_if_1.5x_optimistic`` assumption).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from solver.inputs.catalog import load_catalog  # noqa: E402
from solver.inputs.problem import load_problem  # noqa: E402
from solver.solve import solve_problem  # noqa: E402
from solver.units import Item  # noqa: E402

VARIANTS = {
    "today": {},
    "confidence 0.9": {"capacity_confidence": 0.9},
    "1.5x optimistic": {"capacity_optimism": 1.5},
}
SERVING = {Item.RENT, Item.USE}


def fleet(plan) -> str:
    """Serving accelerators by the most units in use at once (any period and load block)."""
    at_once: dict[tuple[str, str, str], float] = defaultdict(float)
    for i in plan.line_items:
        if i.item in SERVING and i.workload:
            at_once[(i.accelerator, i.period, i.block)] += i.units
    most: dict[str, float] = defaultdict(float)
    for (acc, _, _), n in at_once.items():
        most[acc] = max(most[acc], n)
    ranked = sorted(most.items(), key=lambda x: -x[1])
    return ", ".join(f"{acc} {n:g}" for acc, n in ranked)


def main(argv: list[str]) -> int:
    names = argv or ["seed-2m-13b", "traffic-mix-measured"]
    catalog = load_catalog(None)
    for name in names:
        base = load_problem(ROOT / "problems" / f"{name}.yaml")
        print(f"{name}")
        today_cost = None
        for label, update in VARIANTS.items():
            plan = solve_problem(base.model_copy(update=update), catalog)
            serving = sum(i.cost_usd for i in plan.line_items if i.item in SERVING and i.workload)
            today_cost = plan.total_cost_usd if today_cost is None else today_cost
            change = plan.total_cost_usd / today_cost - 1.0
            stress = [
                a.value for a in plan.assumptions if a.name == "peak_served_if_1.5x_optimistic"
            ]
            print(
                f"  {label:16} total ${plan.total_cost_usd:,.0f} ({change:+.1%})  serving "
                f"${serving:,.0f}  verified={plan.verified}  peak served at 1.5x: "
                + ", ".join(f"{v:.2f}" for v in stress)
            )
            print(f"  {'':16} serving units at most at once: {fleet(plan)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
