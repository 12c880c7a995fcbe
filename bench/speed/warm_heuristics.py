"""The warm engine's HiGHS options, compared on the seed's what-if variants, in one run.

Run: python bench/speed/warm_heuristics.py [demand] [price]

The variants are bench/speed/warm_engine.py's (20 per kind, seed 50). Each is pruned for
itself as the engine prunes it (:meth:`solver.analyses.engine.WarmEngine._own_pruning`),
then its model is solved once per configuration, one after the other (a new HiGHS
session each time, the restricted MIP's start as the engine's solve without a start).
Prints per kind and configuration the median and largest solve time and the largest
difference of the optimum from the default's (USD). The figures behind
:data:`solver.analyses.engine.engine.NO_HEURISTICS`.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from warm_engine import KINDS, ROOT, variants  # noqa: E402

from solver.analyses.engine import WarmEngine  # noqa: E402
from solver.analyses.engine.kinds import change_of  # noqa: E402
from solver.core.backends import SolveOptions  # noqa: E402
from solver.web.workspace import inputs_for  # noqa: E402

CONFIGS: dict[str, dict] = {
    "default": {},
    "restarts off": {"mip_allow_restart": False},
    "symmetry off": {"mip_detect_symmetry": False},
    "pscost reliable 2": {"mip_pscost_minreliable": 2},
    "heuristics off": {
        "mip_heuristic_effort": 0.0,
        "mip_heuristic_run_rins": False,
        "mip_heuristic_run_rens": False,
        "mip_heuristic_run_root_reduced_cost": False,
    },
}


def main() -> None:
    kinds = sys.argv[1:] or ["demand", "price"]
    text = (ROOT / "problems/seed-2m-13b.yaml").read_text()
    base = inputs_for(text, "base", {})
    engine = WarmEngine(base.problem, base.catalog)
    engine.solve(base.problem, base.catalog)
    assert engine.base is not None
    pools = engine.base.compiled.pools
    cloud = pools[pools["kind"] != "owned"]
    providers = sorted(cloud["provider"].astype(str).unique())
    regions = sorted(cloud["region"].astype(str).unique())
    rng = np.random.default_rng(50)
    drawn = {k: variants(k, 20, rng, providers, regions) for k in KINDS}
    print(f"load {os.getloadavg()[0]:.2f} at start")
    for kind in kinds:
        seconds: dict[str, list[float]] = {c: [] for c in CONFIGS}
        optima: dict[str, list[float]] = {c: [] for c in CONFIGS}
        for changes in drawn[kind]:
            v = inputs_for(text, "v", changes)
            change = change_of(engine.problem, v.problem, v.multipliers)
            assert change is not None
            compiled = engine._own_pruning(v.problem, v.catalog, change)
            for name, backend in CONFIGS.items():
                structure = engine._structure(compiled)
                t = time.perf_counter()
                result = structure.session.solve(
                    SolveOptions(relative_gap=1e-4, backend_options=backend)
                )
                seconds[name].append(time.perf_counter() - t)
                optima[name].append(float(result.objective or 0.0))
        for name in CONFIGS:
            diff = max(abs(a - b) for a, b in zip(optima[name], optima["default"], strict=True))
            print(
                f"{kind} {name}: median {statistics.median(seconds[name]):.3f} s "
                f"max {max(seconds[name]):.3f} s, largest optimum difference ${diff:.2f}"
            )
    print(f"load {os.getloadavg()[0]:.2f} at end")


if __name__ == "__main__":
    main()
