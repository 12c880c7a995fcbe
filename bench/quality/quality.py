"""Quality: the optimal plan's cost against the rules of thumb people use today.

Run: python bench/quality/quality.py [--generated N] [--workers 2] [--solver highspy]
[--time-limit S]

Every solve has a time limit (``--time-limit``, default :data:`TIME_LIMIT_S` s): a solve
stopped by it reports its plan and gap (counted under "stopped at the limit"), so one hard
restriction cannot hold the run.

For every problem in problems/ (an infeasible one is reported as infeasible and
skipped) and N seeded generated problems (small random mixes of training and
inference workloads over the model presets in catalogs/models.csv), it solves:

- **optimum**: the verified optimal plan (``solve_problem``), its objective: what the
  solver minimises (``min_cost``: compute at the price guard's prices, egress and support;
  docs/concepts/price-guard.md), the figure every plan below is compared on. Compute at
  catalog prices alone would let a rule's plan look cheaper where the guard prices its
  weak prices higher (generated seed 16: verda B200 at $86,508 of compute against the
  optimum's seeweb H200 at $107,445, $118,517 against $107,556 guarded).
- **best single accelerator type**: for each accelerator type in the catalog,
  the catalog restricted to that type's offerings and servers; the cheapest
  feasible type, named (what a team that standardises on one GPU type gets at best).
- **cheapest $ per dense TFLOPS**: the type whose cheapest on-demand offering
  has the lowest on_demand_usd_per_hour / (accelerators_per_instance x
  bf16_dense_tflops), then that type only (every mode the problem allows).
- **cheapest $ per GB/s (inference)**: the same with mem_bandwidth_gbps; only for
  problems with an inference workload (n/a otherwise).
- **all on-demand in one cloud**: on-demand only, one provider; the cheapest
  feasible provider, named.

Both ratio picks look only at offerings the problem allows (its providers,
regions, residency) on accelerators that run every workload's framework.

Every rule-of-thumb plan is itself solved *optimally within its restriction*:
the rule fixes the accelerator type (or the mode and the cloud), and procure
still picks the best regions, modes, replica shapes and cluster sizes. A real
team applying the rule by hand does worse, so the saving reported here,
1 - optimum / rule, is a LOWER BOUND on the saving of the optimum over the rule.

Each restriction is a subset of the problem's choices, so no rule can beat the
optimum (beyond the solver's relative gap); the script checks this and flags any
violation as a BUG.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import random
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from solver.core.backends import SolveOptions
from solver.core.compile import build_pools
from solver.errors import InfeasibleError, ProcureError
from solver.inputs.catalog import Catalog, load_catalog
from solver.inputs.problem import (
    BatchInferenceWorkload,
    InferenceWorkload,
    Problem,
    TrainingWorkload,
    load_problem,
    parse_problem,
)
from solver.plan import Plan
from solver.solve import solve_problem

ROOT = Path(__file__).resolve().parents[2]
RULES = ("single_type", "usd_per_tflops", "usd_per_gbps", "on_demand_one_cloud")
RULE_TITLES = {
    "single_type": "best single type",
    "usd_per_tflops": "cheapest $/TFLOPS",
    "usd_per_gbps": "cheapest $/(GB/s)",
    "on_demand_one_cloud": "on-demand, one cloud",
}
# the optimum is solved to a tighter gap than the rules, so that the check
# "no rule beats the optimum" is meaningful at the cent level
OPTIMUM_GAP = 1e-6
RULE_GAP = 1e-4
#: seconds each solve may take (the optimum and every restriction)
TIME_LIMIT_S = 60.0


# --------------------------------------------------------------------------- restrictions


def restrict_to_accelerator(catalog: Catalog, accelerator_id: str) -> Catalog:
    """A copy of the catalog with only the offerings and servers of one accelerator type."""
    return dataclasses.replace(
        catalog,
        offerings=catalog.offerings[catalog.offerings["accelerator_id"] == accelerator_id],
        servers=catalog.servers[catalog.servers["accelerator_id"] == accelerator_id],
    )


def fit_names(problem: Problem, catalog: Catalog) -> Problem:
    """Drop provider and offering names that a restricted catalog no longer holds.

    A provider without an offering of the kept type contributes nothing, so
    removing it from ``providers`` lists, quotas and shares leaves the same
    problem; it only keeps the compiler's name check (which refuses unknown
    providers) from rejecting it. A list left empty means nothing can run.
    """
    known = set(catalog.offerings["provider"]) | {"owned"}

    def kept(names: list[str] | None, where: str) -> list[str] | None:
        if names is None:
            return None
        out = [n for n in names if n in known]
        if not out:
            raise InfeasibleError(f"no provider in {where} offers the kept accelerators")
        return out

    workloads = [
        w.model_copy(update={"providers": kept(w.providers, f"workload {w.name}")})
        if w.providers is not None
        else w
        for w in problem.workloads
    ]
    return problem.model_copy(
        update={
            "providers": kept(problem.providers, "providers"),
            "workloads": workloads,
            "quotas": [q for q in problem.quotas if q.provider in known],
            "provider_share_max": {
                k: v for k, v in problem.provider_share_max.items() if k in known
            },
            "availability_caps": {
                k: v for k, v in problem.availability_caps.items() if k in catalog.offerings.index
            },
        }
    )


def on_demand_in(problem: Problem, provider: str) -> Problem:
    """The problem with on-demand capacity from one provider only."""
    if "on_demand" not in problem.modes:
        raise InfeasibleError("the problem does not allow on-demand capacity")
    if problem.providers is not None and provider not in problem.providers:
        raise InfeasibleError(f"the problem does not allow provider {provider}")
    return problem.model_copy(update={"modes": ["on_demand"], "providers": [provider]})


def allowed_on_demand_offerings(problem: Problem, catalog: Catalog) -> pd.DataFrame:
    """On-demand offerings the problem allows, joined with their accelerator's specs."""
    off = catalog.offerings.reset_index(drop=True)
    off = off[off["on_demand_usd_per_hour"].notna()]
    if problem.providers is not None:
        off = off[off["provider"].isin(problem.providers)]
    if problem.regions is not None:
        off = off[off["region"].isin(problem.regions)]
    if problem.residency is not None:
        zones = catalog.regions.reset_index(drop=True)[["provider", "region", "residency_zone"]]
        off = off.merge(zones, on=["provider", "region"], how="left")
        off = off[off["residency_zone"].isin(problem.residency)]
    acc = catalog.accelerators.reset_index(drop=True)
    off = off.merge(
        acc[["accelerator_id", "bf16_dense_tflops", "mem_bandwidth_gbps", "frameworks"]],
        on="accelerator_id",
        how="left",
    )
    needed = {w.framework for w in problem.workloads}
    runs_all = off["frameworks"].astype(str).str.split(";").map(lambda f: needed <= set(f))
    return off[runs_all]


def ratio_pick(problem: Problem, catalog: Catalog, column: str) -> tuple[str, float, str] | None:
    """(accelerator, $ per instance-hour / (accelerators x column), offering) of the best ratio."""
    off = allowed_on_demand_offerings(problem, catalog)
    if off.empty:
        return None
    ratio = off["on_demand_usd_per_hour"] / (
        off["accelerators_per_instance"].astype(float) * off[column].astype(float)
    )
    # ties broken by name so the pick is reproducible
    best = off.assign(ratio=ratio).sort_values(["ratio", "offering_id"], kind="stable").iloc[0]
    return str(best["accelerator_id"]), float(best["ratio"]), str(best["offering_id"])


def has_inference(problem: Problem) -> bool:
    return any(isinstance(w, InferenceWorkload | BatchInferenceWorkload) for w in problem.workloads)


# --------------------------------------------------------------------------- generated problems

TRAIN_MODELS = ("llama-3-8b", "llama-2-7b", "mistral-7b", "dense-7b", "llama-2-13b", "dense-13b")
SERVE_MODELS = (
    "llama-3-8b",
    "llama-2-7b",
    "mistral-7b",
    "llama-2-13b",
    "mixtral-8x7b",
    "llama-3-70b",
    "llama-2-70b",
)
LARGE_MODELS = {"mixtral-8x7b", "llama-3-70b", "llama-2-70b"}


def generated_problem(seed: int) -> Problem:
    """A small random mix of training and inference workloads (solves in seconds)."""
    rng = random.Random(seed)
    n_train = rng.choice([0, 1, 1, 2])
    n_serve = rng.choice([1, 1, 2]) if n_train == 0 else rng.choice([0, 1, 1])
    workloads: list[dict] = []
    for i in range(n_train):
        lora = rng.random() < 0.4
        workloads.append(
            {
                "kind": "training",
                "name": f"train-{i + 1}",
                "model": rng.choice(TRAIN_MODELS),
                "tokens": rng.choice([2e9, 1e10] if lora else [1e10, 5e10, 2e11]),
                "optimizer": "lora" if lora else "adamw",
                "deadline_days": rng.choice([7, 14, 30]),
                "interruptible": rng.random() < 0.5,
            }
        )
    for i in range(n_serve):
        model = rng.choice(SERVE_MODELS)
        workloads.append(
            {
                "kind": "inference",
                "name": f"serve-{i + 1}",
                "model": model,
                "weight_precision": "fp8"
                if model in LARGE_MODELS and rng.random() < 0.5
                else "bf16",
                "demand": {
                    "users": rng.choice([2_000, 10_000, 30_000]),
                    "requests_per_user_per_day": rng.choice([5, 10, 20]),
                },
                "prompt_tokens": rng.choice([500, 1000, 2000]),
                "output_tokens": rng.choice([150, 300, 500]),
                "ttft_slo": rng.choice(["1 s", "2 s"]),
                "tpot_slo": rng.choice(["50 ms", "80 ms"]),
                "peak_to_average": rng.choice([1.0, 2.0, 3.0]),
                "redundancy": rng.choice([1, 2]),
                "interruptible": rng.random() < 0.3,
            }
        )
    data: dict = {
        "name": f"gen-{seed:02d}",
        "description": ", ".join(f"{w['name']} {w['model']}" for w in workloads),
        "horizon_months": rng.choice([3, 6, 12]),
        "workloads": workloads,
    }
    residency = rng.choice([None, ["us"], ["eu"], ["us", "eu"]])
    if residency is not None:
        data["residency"] = residency
    if n_serve and rng.random() < 0.5:
        data["load_blocks"] = [
            {"name": "peak", "hours_per_day": 6, "demand_factor": 2.5},
            {"name": "offpeak", "hours_per_day": 18, "demand_factor": 0.5},
        ]
    return parse_problem(data, file=f"<generated seed {seed}>")


def describe(problem: Problem) -> str:
    """'12 mo: 12 x train mistral-7b 2e+09 tok (lora)' (same workloads counted once)."""
    parts: dict[str, int] = {}
    for w in problem.workloads:
        if isinstance(w, TrainingWorkload):
            text = f"train {w.model} {w.tokens:.0e} tok ({w.optimizer})"
        elif isinstance(w, InferenceWorkload):
            text = f"serve {w.model} {w.weight_precision}"
        else:
            text = f"batch {w.model}"
        parts[text] = parts.get(text, 0) + 1
    listed = [(f"{n} x " if n > 1 else "") + text for text, n in parts.items()]
    where = f", {'+'.join(problem.residency)} only" if problem.residency else ""
    return f"{problem.horizon_months:g} mo{where}: " + "; ".join(listed)


# --------------------------------------------------------------------------- solving


@dataclass(frozen=True)
class Job:
    problem_key: str
    rule: str  # "optimum", "type", "cloud"
    variant: str  # accelerator id or provider ("" for the optimum)
    problem: Problem


@dataclass(frozen=True)
class Outcome:
    job: Job
    cost_usd: float | None  # the plan's objective (USD); None: no feasible plan
    gap: float | None
    mix: str  # what the plan buys, by accelerator and mode
    detail: str  # why infeasible, or the error
    seconds: float
    error: bool = False


_CATALOG: Catalog | None = None
_SOLVER = "highspy"
_TIME_LIMIT_S = TIME_LIMIT_S


def _init(solver: str, time_limit_s: float = TIME_LIMIT_S) -> None:
    global _CATALOG, _SOLVER, _TIME_LIMIT_S
    _CATALOG = load_catalog()
    _SOLVER = solver
    _TIME_LIMIT_S = time_limit_s


def plan_mix(plan: Plan) -> str:
    """'b200 on_demand (nebius) 58%, v100-32gb on_demand (vast) 42%' by cost."""
    cost: dict[tuple[str, str], float] = defaultdict(float)
    providers: dict[tuple[str, str], set[str]] = defaultdict(set)
    for li in plan.line_items:
        key = (li.accelerator, li.mode)
        cost[key] += li.cost_usd
        providers[key].add(li.provider)
    total = sum(cost.values()) or 1.0
    parts = [
        f"{acc} {mode} ({'/'.join(sorted(providers[(acc, mode)]))}) {c / total:.0%}"
        for (acc, mode), c in sorted(cost.items(), key=lambda kv: -kv[1])
        if c > 0.005 * total
    ]
    return ", ".join(parts)


def run_job(job: Job) -> Outcome:
    assert _CATALOG is not None
    started = time.perf_counter()
    catalog = _CATALOG
    problem = job.problem
    gap = OPTIMUM_GAP if job.rule == "optimum" else RULE_GAP
    try:
        if job.rule == "type":
            catalog = restrict_to_accelerator(catalog, job.variant)
            problem = fit_names(problem, catalog)
        elif job.rule == "cloud":
            problem = on_demand_in(problem, job.variant)
        # compile_problem crashes (TypeError in _requirement_mask) on an empty pool table
        # instead of raising InfeasibleError; a restriction often leaves no pool at all
        if build_pools(problem, catalog).empty:
            raise InfeasibleError("no offering or server of the restriction is allowed")
        plan = solve_problem(
            problem,
            catalog,
            solver=_SOLVER,
            options=SolveOptions(relative_gap=gap, threads=1, time_limit_s=_TIME_LIMIT_S),
            explain=False,
        )
    except InfeasibleError as exc:
        return Outcome(job, None, None, "", exc.message, time.perf_counter() - started)
    except ProcureError as exc:  # e.g. the solver stopped without a plan
        return Outcome(job, None, None, "", exc.message, time.perf_counter() - started, True)
    except Exception as exc:  # a crash in procure: report it, do not lose the run
        detail = f"{type(exc).__name__}: {exc}"
        return Outcome(job, None, None, "", detail, time.perf_counter() - started, True)
    return Outcome(
        job,
        plan.objective if plan.objective is not None else plan.total_cost_usd,
        plan.gap,
        plan_mix(plan),
        plan.status,
        time.perf_counter() - started,
    )


def run_all(
    jobs: list[Job], workers: int, solver: str, time_limit_s: float = TIME_LIMIT_S
) -> list[Outcome]:
    if workers <= 1:
        _init(solver, time_limit_s)
        return [run_job(j) for j in jobs]
    with ProcessPoolExecutor(workers, initializer=_init, initargs=(solver, time_limit_s)) as pool:
        return list(pool.map(run_job, jobs, chunksize=1))


# --------------------------------------------------------------------------- results


@dataclass
class RuleResult:
    cost_usd: float | None = None  # None: infeasible (or n/a)
    name: str = ""  # the type or provider the rule ends up with
    note: str = ""  # "infeasible", "n/a (no inference)", ...
    mix: str = ""

    def saving(self, optimum: float) -> float | None:
        if self.cost_usd is None or self.cost_usd <= 0:
            return None
        return 1.0 - optimum / self.cost_usd


@dataclass
class Row:
    key: str
    source: str  # "problems/x.yaml" or "generated seed 3"
    what: str
    optimum_usd: float | None = None
    optimum_gap: float | None = None
    optimum_mix: str = ""
    infeasible: str = ""
    rules: dict[str, RuleResult] = dataclasses.field(default_factory=dict)
    picks: dict[str, str] = dataclasses.field(default_factory=dict)  # rule -> pick explanation
    bugs: list[str] = dataclasses.field(default_factory=list)
    errors: list[str] = dataclasses.field(default_factory=list)


def best_of(outcomes: list[Outcome]) -> RuleResult:
    feasible = [o for o in outcomes if o.cost_usd is not None]
    if not feasible:
        return RuleResult(note="infeasible")
    best = min(feasible, key=lambda o: (o.cost_usd, o.job.variant))
    return RuleResult(best.cost_usd, best.job.variant, "", best.mix)


def money(x: float) -> str:
    return f"${x:,.0f}"


def rule_cell(r: RuleResult) -> str:
    if r.cost_usd is None:
        return f"{r.note} ({r.name})" if r.name else r.note
    return f"{money(r.cost_usd)} ({r.name})"


def saving_cell(row: Row, rule: str) -> str:
    r = row.rules.get(rule)
    if r is None or row.optimum_usd is None:
        return "-"
    s = r.saving(row.optimum_usd)
    return "-" if s is None else f"{s:.1%}"


def table_rows(rows: list[Row]) -> tuple[list[str], list[list[str]]]:
    header = ["problem", "optimum"]
    for rule in RULES:
        header += [RULE_TITLES[rule], "saving"]
    body = []
    for row in rows:
        if row.optimum_usd is None:
            body.append([row.key, row.infeasible] + ["-"] * (2 * len(RULES)))
            continue
        cells = [row.key, money(row.optimum_usd)]
        for rule in RULES:
            cells += [rule_cell(row.rules[rule]), saving_cell(row, rule)]
        body.append(cells)
    return header, body


def text_table(rows: list[Row]) -> str:
    header, body = table_rows(rows)
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    for r in body:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    return "\n".join(lines)


def markdown_table(rows: list[Row]) -> str:
    header, body = table_rows(rows)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(lines)


def summary_lines(rows: list[Row]) -> list[str]:
    out = []
    for rule in RULES:
        savings = [
            s
            for row in rows
            if row.optimum_usd is not None and rule in row.rules
            for s in [row.rules[rule].saving(row.optimum_usd)]
            if s is not None
        ]
        infeasible = sum(
            1
            for row in rows
            if row.optimum_usd is not None
            and rule in row.rules
            and row.rules[rule].cost_usd is None
            and row.rules[rule].note == "infeasible"
        )
        if savings:
            ordered = sorted(savings)
            median = ordered[len(ordered) // 2]
            if len(ordered) % 2 == 0:
                median = (ordered[len(ordered) // 2 - 1] + median) / 2
            out.append(
                f"{RULE_TITLES[rule]}: saving min {min(savings):.1%}, median {median:.1%}, "
                f"max {max(savings):.1%} over {len(savings)} problems; "
                f"infeasible on {infeasible}"
            )
        else:
            out.append(f"{RULE_TITLES[rule]}: no feasible case; infeasible on {infeasible}")
    return out


def detail_lines(rows: list[Row]) -> list[str]:
    out = []
    for row in rows:
        out.append(f"- {row.key} ({row.source}; {row.what})")
        if row.optimum_usd is None:
            out.append(f"  - infeasible: {row.infeasible}")
            continue
        out.append(f"  - optimum: {row.optimum_mix}")
        for rule in RULES:
            r = row.rules[rule]
            pick = f" [{row.picks[rule]}]" if rule in row.picks else ""
            plan = r.mix if r.cost_usd is not None else r.note
            out.append(f"  - {RULE_TITLES[rule]}{pick}: {plan}")
        for e in row.errors:
            out.append(f"  - ERROR: {e}")
        for b in row.bugs:
            out.append(f"  - BUG: {b}")
    return out


# --------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generated", type=int, default=8, help="generated problems (seeds 1..N)")
    parser.add_argument("--workers", type=int, default=2, help="solver processes")
    parser.add_argument("--solver", default="highspy")
    parser.add_argument(
        "--time-limit", type=float, default=TIME_LIMIT_S, help="seconds per solve (wall)"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    catalog = load_catalog()

    problems: list[tuple[str, str, Problem]] = []
    for path in sorted((ROOT / "problems").glob("*.yaml")):
        p = load_problem(path)
        problems.append((p.name, str(path.relative_to(ROOT)), p))
    for seed in range(1, args.generated + 1):
        p = generated_problem(seed)
        problems.append((p.name, f"generated seed {seed}", p))
    rows = {key: Row(key, source, describe(p)) for key, source, p in problems}

    # 1. the optimum of each problem; an infeasible problem gets no rules
    optima = run_all(
        [Job(key, "optimum", "", p) for key, _, p in problems],
        args.workers,
        args.solver,
        args.time_limit,
    )
    feasible = []
    for o, (key, _, p) in zip(optima, problems, strict=True):
        row = rows[key]
        if o.cost_usd is None:
            row.infeasible = "infeasible" if not o.error else f"error: {o.detail}"
            continue
        row.optimum_usd, row.optimum_gap, row.optimum_mix = o.cost_usd, o.gap, o.mix
        feasible.append((key, p))

    # 2. every accelerator type alone, and on-demand in every provider alone
    types = sorted(
        set(catalog.offerings["accelerator_id"]) | set(catalog.servers["accelerator_id"])
    )
    providers = sorted(set(catalog.offerings["provider"]))
    jobs = [Job(key, "type", t, p) for key, p in feasible for t in types]
    jobs += [Job(key, "cloud", prov, p) for key, p in feasible for prov in providers]
    outcomes = run_all(jobs, args.workers, args.solver, args.time_limit)
    by: dict[tuple[str, str], list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by[(o.job.problem_key, o.job.rule)].append(o)
        if o.error:
            rows[o.job.problem_key].errors.append(f"{o.job.rule} {o.job.variant}: {o.detail}")

    for key, p in feasible:
        row = rows[key]
        per_type = {o.job.variant: o for o in by[(key, "type")]}
        row.rules["single_type"] = best_of(by[(key, "type")])
        row.rules["on_demand_one_cloud"] = best_of(by[(key, "cloud")])
        for rule, column, unit in (
            ("usd_per_tflops", "bf16_dense_tflops", "$/dense-PFLOPS-h"),
            ("usd_per_gbps", "mem_bandwidth_gbps", "$/(TB/s)-h"),
        ):
            if rule == "usd_per_gbps" and not has_inference(p):
                row.rules[rule] = RuleResult(note="n/a (no inference)")
                continue
            pick = ratio_pick(p, catalog, column)
            if pick is None:
                row.rules[rule] = RuleResult(note="no allowed offering")
                continue
            acc, ratio, offering = pick
            row.picks[rule] = f"{acc}: {ratio * 1000:.3f} {unit} at {offering}"
            o = per_type[acc]  # the same restriction as "that type only": reuse the solve
            row.rules[rule] = (
                RuleResult(o.cost_usd, acc, "", o.mix)
                if o.cost_usd is not None
                else RuleResult(note="infeasible", name=acc)
            )
        # the optimum must be at most every restricted optimum (up to the optimum's gap)
        tol = row.optimum_usd * max(row.optimum_gap or 0.0, OPTIMUM_GAP) + 0.01
        for rule, r in row.rules.items():
            if r.cost_usd is not None and r.cost_usd < row.optimum_usd - tol:
                row.bugs.append(
                    f"rule {RULE_TITLES[rule]} ({r.name}) costs {money(r.cost_usd)}, "
                    f"below the optimum {money(row.optimum_usd)}"
                )

    ordered = [rows[key] for key, _, _ in problems]
    seconds = time.perf_counter() - started
    n_solves = len(optima) + len(outcomes)
    print(
        "Every figure is a plan's objective (compute at the price guard's prices, egress and\n"
        "support). Saving of the optimum over each rule of thumb = 1 - optimum / rule. Each\n"
        "rule's plan is solved optimally WITHIN its restriction, so every saving is a LOWER\n"
        "BOUND on the real saving over a team applying the rule by hand.\n"
    )
    print(text_table(ordered))
    print()
    for line in summary_lines(ordered):
        print(line)
    print()
    print("Plans (share of cost by accelerator, mode and provider):")
    for line in detail_lines(ordered):
        print(line)
    bugs = [f"{r.key}: {b}" for r in ordered for b in r.bugs]
    errors = [f"{r.key}: {e}" for r in ordered for e in r.errors]
    print()
    if bugs:
        print("!!! BUG: a rule of thumb beat the optimum:")
        for b in bugs:
            print(f"!!!   {b}")
    else:
        print("check: no rule of thumb beats the optimum on any problem (as it must be).")
    stopped = [o for o in [*optima, *outcomes] if o.detail == "feasible"]
    slowest = max([*optima, *outcomes], key=lambda o: o.seconds)
    print(
        f"stopped at the limit ({args.time_limit:g} s): {len(stopped)} solve(s)"
        + "".join(
            f"\n  {o.job.problem_key} {o.job.rule} {o.job.variant}: gap {(o.gap or 0.0):.2%}"
            for o in stopped
        )
    )
    print(
        f"slowest solve: {slowest.job.problem_key} {slowest.job.rule} {slowest.job.variant} "
        f"{slowest.seconds:.1f} s"
    )
    if errors:
        print(f"{len(errors)} solve(s) ended in an error (not infeasibility):")
        for e in errors:
            print(f"  {e}")
    print(
        f"{n_solves} solves ({args.solver}, {args.workers} worker(s)) in {seconds:.1f} s; "
        f"{len(types)} accelerator types, {len(providers)} providers; "
        f"{datetime.date.today().isoformat()}"
    )
    print("\nMarkdown:\n")
    print(markdown_table(ordered))
    print()
    for line in summary_lines(ordered):
        print(f"- {line}")


if __name__ == "__main__":
    main()
