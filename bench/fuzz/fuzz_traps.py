"""The fuzz families of issue 34 and after: interrupted and repeated outputs, plan files
from other versions and catalogs, shapes, semantic traps in valid problems, price files,
and limits (each family's oracle is in bench/fuzz/fuzz.py's docstring)."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import time
from pathlib import Path

from fuzz_base import (  # noqa: E402
    ROOT,
    TINY_REGIONS,
    Tally,
    _check_common,
    _invoke,
    catalog_offerings,
    offering,
    random_problem,
    write_catalog,
)

# --------------------------------------------------------------------------- issue 34
# Interrupted and repeated outputs, plan files from other versions and catalogs, semantic
# traps in valid problems. Each family's oracle is in the module docstring.

SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")
MEASUREMENTS = ROOT / "tests" / "data" / "measurements.csv"


def _catalog_34(work: Path) -> Path:
    """The fuzz catalog with a second provider (beta), so that orders come in several
    files: acme's offerings and beta's 1- and 8-H100 instances a little dearer."""
    rows = catalog_offerings() + [
        offering("b1", "h100-sxm", 1, 4.2, provider="beta"),
        offering("b8", "h100-sxm", 8, 32.0, r1=24.0, provider="beta", cap=8),
    ]
    regions = [*TINY_REGIONS, {**TINY_REGIONS[0], "provider": "beta"}]
    return write_catalog(work / f"cat34-{random.random():.12f}", rows, regions=regions)


def _problem_34(
    rng: random.Random, name: str | None = None, demand: float | None = None, quota: bool = True
) -> str:
    """A feasible problem over :func:`_catalog_34`: one chat service, sometimes owned
    servers with a residual value, a quota on acme that sends the rest to beta."""
    months = rng.choice([[1], [1, 1], [2, 3], [12, 12]])
    lines = [f"name: {name or f'io-{rng.randrange(10**6)}'}", f"horizon_months: {sum(months)}"]
    lines += ["periods:"] + [f"  - {{name: p{i}, months: {m}}}" for i, m in enumerate(months)]
    if rng.random() < 0.5:
        lines.append("start: 2027-01")
    modes = ["on_demand"] + rng.sample(["spot", "reserved_1y", "owned"], rng.randint(0, 2))
    lines.append(f"modes: [{', '.join(modes)}]")
    if "owned" in modes and rng.random() < 0.7:
        lines.append("residual_value: straight_line")
    if quota and rng.random() < 0.7:
        lines.append(f"quotas: [{{provider: acme, max_accelerators: {rng.choice([1, 2, 4])}}}]")
    tokens = demand if demand is not None else rng.choice([500, 5000, 40000])
    lines += [
        "workloads:",
        "  - kind: inference",
        "    name: chat",
        "    model: llama-3-8b",
        f"    demand: {{tokens_per_s: {tokens}}}",
        "    prompt_tokens: 500",
        "    output_tokens: 200",
        "    ttft_slo: 1 s",
        "    tpot_slo: 50 ms",
        f"    peak_to_average: {rng.choice([1, 1.5, 2])}",
    ]
    return "\n".join(lines) + "\n"


def _solve_to(prob: Path, cat: Path, out: Path) -> bool:
    args = ["solve", str(prob), "--catalog", str(cat), "--format", "json", "--out", str(out)]
    return _invoke([*args, "--time-limit", "30"]).exit_code == 0


def _state(folder: Path) -> dict[str, bytes]:
    """A folder's files and their bytes, plans and reports without their timings, the
    folder's own path (a re-solved plan records where its problem was written) as
    ``<folder>``."""
    out = {}
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        data = path.read_bytes().replace(str(folder.resolve()).encode(), b"<folder>")
        if path.suffix == ".json" and path.name != "procure-export.json":
            data = _without_timings(data)
        out[path.name] = data
    return out


def _without_timings(data: bytes) -> bytes:
    def strip(node):
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if not k.endswith("_seconds")}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    try:
        return json.dumps(strip(json.loads(data)), sort_keys=True).encode()
    except ValueError:
        return data


class _Interrupt:
    """Count the files staged and renamed by an output, and raise a signal at the k-th
    staged file (after it is written) or before the k-th rename: the two phases of a
    publication (solver.outputs.files)."""

    def __init__(self, phase: str | None = None, at: int = 0, signame: str = "SIGINT") -> None:
        self.phase, self.at, self.sig = phase, at, getattr(signal, signame)
        self.writes = self.renames = 0

    def __enter__(self):
        from solver.outputs import files

        self._files, self._write, self._replace = files, files._write, os.replace

        def write(fd, content):
            self.writes += 1
            self._write(fd, content)
            if self.phase == "staging" and self.writes == self.at:
                signal.raise_signal(self.sig)

        def replace(src, dst):
            self.renames += 1
            if self.phase == "publishing" and self.renames == self.at:
                signal.raise_signal(self.sig)
            return self._replace(src, dst)

        files._write, os.replace = write, replace
        return self

    def __exit__(self, *exc) -> None:
        self._files._write, os.replace = self._write, self._replace


def _output_command(rng: random.Random, work: Path, cat: Path, prob: Path, plan: Path):
    """(kind, make_args(folder, variant)): a multi-file output command writing into a
    folder; variant 0 is the run under test, 1 an earlier one of another plan or price."""
    kind = rng.choice(["export-csv", "export-combined", "export-xlsx", "export-focus"] * 2
                      + ["resolve", "calibrate"])  # fmt: skip
    other = work / "other.json"
    if kind.startswith("export"):
        prob2 = work / "p2.yaml"
        prob2.write_text(_problem_34(rng))
        if not _solve_to(prob2, cat, other):
            other = plan
        fmt = {"export-csv": [], "export-combined": ["--combined"]}.get(
            kind, ["--format", kind.split("-")[1]]
        )
        return kind, lambda folder, variant: [
            "export",
            str(other if variant else plan),
            "--out",
            str(folder),
            *fmt,
        ]
    if kind == "resolve":
        prices = [work / "prices0.csv", work / "prices1.csv"]
        for path, usd in zip(prices, (3.9, 4.4), strict=True):
            path.write_text(
                f"provider,region,offering,mode,price,date\nbeta,us-east,b1,on_demand,{usd},"
                "2026-12-01\n"
            )
        return kind, lambda folder, variant: [
            "resolve", str(prob), "--baseline", str(plan), "--prices", str(prices[variant]),
            "--catalog", str(cat), "--format", "json", "--out", str(folder / "report.json"),
            "--plan-out", str(folder / "plan.json"), "--problem-out", str(folder / "p.yaml"),
        ]  # fmt: skip
    return kind, lambda folder, variant: [
        "calibrate", str(MEASUREMENTS), "--out", str(folder),
        *(["--tpot-slo-ms", "50"] if variant else []),
    ]  # fmt: skip


def _outputs_case(rng: random.Random, work: Path, tally: Tally) -> None:
    """Family ``outputs``: see the module docstring for the oracle."""
    cat = _catalog_34(work)
    prob = work / "p.yaml"
    prob.write_text(_problem_34(rng))
    plan = work / "plan.json"
    if not _solve_to(prob, cat, plan):
        return
    if rng.random() < 0.2:
        _input_as_output_case(rng, work, cat, prob, plan, tally)
        return
    kind, make = _output_command(rng, work, cat, prob, plan)
    folder, reference = work / "out", work / "reference"
    for target in (folder, reference):  # an earlier output of another plan in each
        target.mkdir()
        if rng.random() < 0.8:
            _invoke(make(target, 1))
    old = _state(folder)
    with _Interrupt() as counted:
        first = _invoke(make(reference, 0))
    if first.exit_code != 0:
        _check_common(tally, "outputs", first, f"{kind}: {first.output[:300]}")
        return
    new = _state(reference)
    phase = rng.choice(["staging", "publishing", None])
    at = rng.randint(1, max(1, counted.renames if phase == "publishing" else counted.writes))
    signame = rng.choice(SIGNALS)
    tally.traps[f"outputs:{kind}:{phase or 'whole'}"] += 1
    with _Interrupt(phase, at, signame) as seen:
        result = _invoke(make(folder, 0))
    what = (
        f"{kind} {phase} at {at} by {signame} (writes, renames: {counted.writes}, "
        f"{counted.renames} uninterrupted, {seen.writes}, {seen.renames} here; SIGINT "
        f"handler {signal.getsignal(signal.SIGINT)}): {make(folder, 0)}"
    )
    tally.exits[result.exit_code] += 1
    if "Traceback" in result.output or "internal error" in result.output:
        tally.tracebacks += 1
        tally.fail("outputs", "traceback/bug", what + result.output[-400:])
        return
    got = _state(folder)
    code = 128 + int(getattr(signal, signame)) if phase else 0
    said_nothing = "nothing was written" in result.output
    said_all = "every output was written" in result.output
    if any(name.startswith(".") for name in got):
        tally.lost_or_half_written += 1
        tally.fail("outputs", f"temporary files left: {sorted(got)}", what)
    elif result.exit_code != code:
        tally.fail("outputs", f"exit {result.exit_code}, expected {code}", what + result.output)
    elif phase == "staging" and not (got == old and said_nothing):
        tally.lost_or_half_written += 1
        tally.fail("outputs", "staging interrupted: not the old set, or not said", what)
    elif phase != "staging" and got != new:
        tally.lost_or_half_written += 1
        tally.fail("outputs", f"not the new set: {sorted(got)} vs {sorted(new)}", what)
    elif phase == "publishing" and not said_all:
        tally.silent_wrong += 1
        tally.fail("outputs", "publishing interrupted: the message does not say so", what)


def _input_as_output_case(rng, work: Path, cat: Path, prob: Path, plan: Path, tally) -> None:
    """An output path naming one of the command's inputs: refused, the input unchanged."""
    link = work / "alias"
    how = rng.choice(["same", "dotted", "symlink", "hardlink"])
    victim = rng.choice(["problem", "plan", "prices"])
    target = {"problem": prob, "plan": plan, "prices": work / "prices.csv"}[victim]
    if victim == "prices":
        target.write_text(
            "provider,region,offering,mode,price,date\nbeta,us-east,b1,on_demand,4.0,2026-12-01\n"
        )
    alias = {
        "same": target,
        "dotted": target.parent / "sub" / ".." / target.name,
        "symlink": link,
        "hardlink": link,
    }[how]
    (work / "sub").mkdir(exist_ok=True)
    if how == "symlink":
        link.symlink_to(target)
    elif how == "hardlink":
        os.link(target, link)
    before = target.read_bytes()
    if victim == "problem":
        args = rng.choice([["solve", str(prob)], ["sensitivity", str(prob), "--break-even", "0"]])
        args += ["--catalog", str(cat), "--out", str(alias)]
    elif victim == "plan":
        args = rng.choice([["diff", str(plan), str(plan), "--out", str(alias)],
                           ["resolve", str(prob), "--baseline", str(plan), "--prices",
                            str(work / "prices.csv"), "--plan-out", str(alias)]])  # fmt: skip
        (work / "prices.csv").write_text(
            "provider,region,offering,mode,price,date\nbeta,us-east,b1,on_demand,4.0,2026-12-01\n"
        )
    else:
        args = ["resolve", str(prob), "--baseline", str(plan), "--prices", str(alias)]
        args += ["--out", str(alias)] if how != "same" else ["--out", str(target)]
    if "--force" not in args and how == "symlink":
        args.append("--force")  # a link is refused anyway; --force must not open the way
    tally.traps[f"outputs:input-as-output:{victim}:{how}"] += 1
    result = _invoke(args)
    what = f"{victim} via {how}: {args}"
    if not _check_common(tally, "outputs", result, what):
        return
    if result.exit_code != 2 or "this command reads" not in result.output:
        tally.silent_wrong += 1
        tally.fail("outputs", f"an output over an input not refused ({result.exit_code})", what)
    if target.read_bytes() != before:
        tally.lost_or_half_written += 1
        tally.fail("outputs", "an input was overwritten", what)


def _shift_period(doc: dict) -> bool:
    """Move $1,000 of the first two periods' totals from one to the other (sum kept)."""
    periods = list(doc["totals"]["by_period"])
    if len(periods) < 2:
        return False
    doc["totals"]["by_period"][periods[0]] -= 1000.0
    doc["totals"]["by_period"][periods[1]] += 1000.0
    return True


def _shift_line_periods(doc: dict) -> bool:
    """Move $1,000 of a line's cost between two periods, the totals moved with it."""
    for item in doc["line_items"]:
        split = item.get("cost_by_period_usd") or {}
        if len(split) >= 2:
            a, b = list(split)[:2]
            split[a] -= 1000.0
            split[b] += 1000.0
            doc["totals"]["by_period"][a] -= 1000.0
            doc["totals"]["by_period"][b] += 1000.0
            return True
    return False


def _first(doc: dict, test) -> dict | None:
    return next((it for it in doc["line_items"] if test(it)), None)


def _edit_item(test, **change):
    def edit(doc: dict) -> bool:
        item = _first(doc, test)
        if item is None:
            return False
        item.update({k: v(item) if callable(v) else v for k, v in change.items()})
        return True

    return edit


def _on_doc(fn):
    def edit(doc: dict) -> bool:
        fn(doc)
        return True

    return edit


#: (name, edit of the plan's JSON returning whether it applied, whether it is a control)
PLANFILE_EDITS = [
    ("instance type", _edit_item(lambda i: i["instance_type"], instance_type="h8"), False),
    ("accelerators x8", _edit_item(lambda i: i["units"] > 0,
                                   accelerators=lambda i: i["accelerators"] * 8), False),
    ("workload renamed", _edit_item(lambda i: i["workload"], workload="batch"), False),
    ("block renamed", _edit_item(lambda i: i["block"], block="night"), False),
    ("residual +1000", _edit_item(lambda i: i["item"] == "purchase",
                                  residual_value_usd=lambda i: i["residual_value_usd"] + 1000),
     False),
    ("problem name", _on_doc(lambda d: d.update(problem="another")), False),
    ("start date", _on_doc(lambda d: d.update(start_date="2030-05-01")), False),
    ("provider total", _on_doc(lambda d: d["totals"]["by_provider"].update(
        {k: v + 1.0 for k, v in d["totals"]["by_provider"].items()})), False),
    ("period totals shifted", _shift_period, False),
    ("line periods shifted", _shift_line_periods, False),
    ("future key", _on_doc(lambda d: d.update(procure_version_99={"x": 1})), True),
    ("no cash flow", _on_doc(lambda d: d.update(cash_flow=[])), True),
    ("no deployments", _on_doc(lambda d: d.pop("deployments", None)), True),
]  # fmt: skip


def _planfile_case(rng: random.Random, work: Path, tally: Tally) -> None:
    """Family ``planfile``: see the module docstring for the oracle."""
    cat = _catalog_34(work)
    prob = work / "p.yaml"
    text = _problem_34(rng)
    prob.write_text(text)
    plan = work / "plan.json"
    if not _solve_to(prob, cat, plan):
        return
    if rng.random() < 0.15:
        _diff_same_name_case(work, cat, plan, text, tally)
        return
    fmt = rng.choice([[], ["--combined"], ["--format", "xlsx"], ["--format", "focus"]])
    reference = work / "reference"
    if _invoke(["export", str(plan), "--out", str(reference), *fmt]).exit_code != 0:
        return
    expected = {k: v for k, v in _state(reference).items() if k != "procure-export.json"}
    doc = json.loads(plan.read_text())
    bad, args, control = work / "edited.json", [], False
    kind = rng.choice(["field"] * 6 + ["duplicate key", "problem changed", "problem removed",
                                       "other catalog"])  # fmt: skip
    if kind == "field":
        name, edit, control = rng.choice(PLANFILE_EDITS)
        if not edit(doc):
            return
        bad.write_text(json.dumps(doc))
    elif kind == "duplicate key":
        name = kind
        bad.write_text(plan.read_text().replace('"status": ', '"status": "optimal", "status": ', 1))
    elif kind in ("problem changed", "problem removed"):
        name, bad, control = kind, plan, kind == "problem removed"
        if control:
            prob.unlink()
        else:
            prob.write_text(text.replace("name: chat", "name: chat2"))
    else:
        name, bad = kind, plan
        other = write_catalog(work / "other-cat", [
            {**row, "instance_type": row["instance_type"] + "-v2"}
            for row in catalog_offerings()
            + [offering("b1", "h100-sxm", 1, 4.2, provider="beta"),
               offering("b8", "h100-sxm", 8, 32.0, r1=24.0, provider="beta", cap=8)]
        ], regions=[*TINY_REGIONS, {**TINY_REGIONS[0], "provider": "beta"}])  # fmt: skip
        args = ["--catalog", str(other)]
    tally.traps[f"planfile:{name}"] += 1
    out = work / "orders"
    result = _invoke(["export", str(bad), "--out", str(out), *fmt, *args])
    what = f"{name}: {fmt} {args}"
    if not _check_common(tally, "planfile", result, what):
        return
    got = {k: v for k, v in _state(out).items() if k != "procure-export.json"}
    if result.exit_code == 0 and got != expected:
        tally.silent_wrong += 1
        tally.fail("planfile", "orders from an edited plan differ from the plan's", what)
    elif result.exit_code != 0 and control:
        tally.fail("planfile", f"a plan that holds was refused: {result.output[:300]}", what)
    elif result.exit_code != 0 and got:
        tally.lost_or_half_written += 1
        tally.fail("planfile", "files written by a refused export", what)


def _diff_same_name_case(work: Path, cat: Path, plan: Path, text: str, tally: Tally) -> None:
    """Two plans of different problems that share a name: the diff says so."""
    other = work / "p-other.yaml"  # the same name, another demand (500 -> 1500, ...)
    other.write_text(text.replace("tokens_per_s: ", "tokens_per_s: 1", 1))
    second = work / "plan-other.json"
    if not _solve_to(other, cat, second):
        return
    tally.traps["planfile:diff of different problems"] += 1
    result = _invoke(["diff", str(plan), str(second), "--format", "json"])
    if not _check_common(tally, "planfile", result, "diff") or result.exit_code != 0:
        return
    notes = json.loads(result.stdout)["notes"]
    if not any("different problems that share the name" in n for n in notes):
        tally.silent_wrong += 1
        tally.fail("planfile", "a diff of different problems does not say so", str(notes))


_MODELS: list[dict] = []


def _shape_of(row: dict) -> dict:
    shape = {k: row[k] for k in ("params_b", "layers", "hidden_size", "attention_heads",
                                 "kv_heads", "head_dim", "vocab_size")}  # fmt: skip
    shape = {k: float(v) if k.endswith("_b") else int(v) for k, v in shape.items()}
    if row["experts"] > row["experts_active"]:
        shape.update(
            active_params_b=float(row["active_params_b"]),
            experts=int(row["experts"]),
            experts_active=int(row["experts_active"]),
        )
    if row["kv_latent_dim"]:
        shape["kv_latent_dim"] = int(row["kv_latent_dim"])
    return shape


#: (trap, change to the inline shape returning whether it applies, the field named)
SHAPE_TRAPS = [
    ("params /10", lambda s: s.update(params_b=round(s["params_b"] / 10, 4)) or True, "params_b"),
    ("params x10", lambda s: s.update(params_b=s["params_b"] * 10) or True, "params_b"),
    ("active /10", lambda s: "active_params_b" in s
     and (s.update(active_params_b=round(s["active_params_b"] / 10, 4)) or True),
     "active_params_b"),
    ("kv heads", lambda s: s["attention_heads"] % (s["kv_heads"] + 1) != 0
     and (s.update(kv_heads=s["kv_heads"] + 1) or True), "kv_heads"),
    ("heads vs width", lambda s: s["hidden_size"] % (s["attention_heads"] + 3) != 0
     and (s.pop("head_dim") and s.update(attention_heads=s["attention_heads"] + 3,
                                         kv_heads=1) or True), "attention_heads"),
]  # fmt: skip


def _shapes_case(rng: random.Random, work: Path, tally: Tally) -> None:
    """Family ``shapes``: see the module docstring for the oracle."""
    if not _MODELS:
        from solver.inputs.catalog import load_catalog

        _MODELS.extend(load_catalog(None).models.to_dict("records"))
    cat = _catalog_34(work)
    quota = rng.random() < 0.35
    trap, field_named = None, None
    if quota:
        model = "llama-3-8b"
        region = rng.choice(["us-east", "us-eats", "us-\u0435ast", "ｕｓ-east", "eu-north"])
        provider = rng.choice(["acme", "beta"])
        known = region == "us-east" or (region == "eu-north" and provider == "acme")
        if not known:
            trap, field_named = f"quota region {region!r} of {provider}", "quotas[0].region"
        extra = f'quotas: [{{provider: {provider}, region: "{region}", max_accelerators: 4}}]\n'
        kind = trap or "quota control"
    else:
        small = [m for m in _MODELS if m["params_b"] <= 10]
        row = rng.choice(_MODELS if rng.random() < 0.6 else small)
        shape, extra = _shape_of(row), ""
        name, change, named = rng.choice(SHAPE_TRAPS)
        if rng.random() < 0.6 and change(shape):
            trap, field_named = f"{name} ({row['model_id']})", named
        elif row["params_b"] > 10:
            return  # controls only where a solve is quick
        else:
            if rng.random() < 0.5:
                shape.pop("vocab_size")  # a shape without its vocabulary is still checked
            trap = None
        model = json.dumps(shape)
        kind = trap or f"shape control ({row['model_id']})"
    tally.traps[f"shapes:{kind.split(' (')[0]}"] += 1
    text = _problem_34(rng, demand=500, quota=False)
    text = text.replace("model: llama-3-8b", f"model: {model}")
    prob = work / "p.yaml"
    prob.write_text(extra + text, encoding="utf-8")
    args = ["solve", str(prob), "--catalog", str(cat), "--format", "json", "--time-limit", "30"]
    result = _invoke(args)
    what = f"{kind}: {extra}{model}"
    if not _check_common(tally, "shapes", result, what):
        return
    if trap is not None and not (result.exit_code == 2 and field_named in result.output):
        tally.silent_wrong += 1
        tally.fail("shapes", f"a trap not refused by name (exit {result.exit_code})", what)
    elif trap is None and result.exit_code == 2:
        tally.fail("shapes", f"a control refused: {result.output[:300]}", what)


ISSUE_34_FAMILIES = {"outputs": _outputs_case, "planfile": _planfile_case, "shapes": _shapes_case}


# --------------------------------------------------------------------------- semantic
#: the tiny catalog's server life (tests/conftest.py TINY_SERVERS, 5 years) and the
#: reserved_1y term, months
_LIFE_MONTHS, _TERM_1Y_MONTHS = 60.0, 12.0


def _semantic_case(rng: random.Random, work: Path, tally: Tally) -> None:
    """Family ``semantic``: see the module docstring for the oracle."""
    months = rng.choice([6, 12, 13, 24, 36, 61, 72])
    modes = ["on_demand"] + rng.sample(["reserved_1y", "owned", "spot"], rng.randint(0, 2))
    tpot = rng.choice(["50 ms", "900 ms", "1 s", "1.5 s", "3 s"])
    text = _problem_34(rng, demand=rng.choice([500, 5000]), quota=False)
    head, _, body = text.partition("workloads:")
    lines = [ln for ln in head.splitlines() if not ln.startswith(("horizon_months", "periods",
             "  - {name: p", "modes", "residual_value"))]  # fmt: skip
    lines += [f"horizon_months: {months}", f"modes: [{', '.join(modes)}]"]
    if "owned" in modes:
        lines.append("residual_value: straight_line")
    text = "\n".join(lines) + "\nworkloads:" + body.replace("tpot_slo: 50 ms", f"tpot_slo: {tpot}")
    prob = work / "p.yaml"
    prob.write_text(text)
    cat = _catalog_34(work)
    result = _invoke(["solve", str(prob), "--catalog", str(cat), "--format", "json",
                      "--time-limit", "60"])  # fmt: skip
    expect_modes = {m for m, span in (("reserved_1y", _TERM_1Y_MONTHS), ("owned", _LIFE_MONTHS))
                    if m in modes and months > span}  # fmt: skip
    tpot_s = float(tpot.split()[0]) / (1000.0 if tpot.endswith("ms") else 1.0)
    kind = f"{months} months, {'+'.join(sorted(expect_modes)) or 'no restriction'}"
    tally.traps[f"semantic:{'restricted' if expect_modes else 'control'}"] += 1
    tally.traps[f"semantic:tpot {'implausible' if tpot_s > 1 else 'control'}"] += 1
    if not _check_common(tally, "semantic", result, f"{kind}: {text}") or result.exit_code:
        return
    plan = json.loads(result.stdout)
    warned = [w for w in plan["warnings"] if w["kind"] == "period_structure"]
    if warned:  # no period budget here: the solve splits the period instead of warning
        tally.silent_wrong += 1
        tally.fail("semantic", f"period warnings {[w['detail'][:120] for w in warned]}", text)
    split = (plan.get("compile_report") or {}).get("split_periods") or {}
    cuts = [float(c) for c in split.get("cuts_months", [])]
    reasons = split.get("reasons", {})
    if cuts and (
        not expect_modes
        or any(not 0 < c < months for c in cuts)
        or any(not reasons.get(f"{c:g}") for c in cuts)
    ):
        tally.silent_wrong += 1
        tally.fail("semantic", f"split at {cuts} ({reasons}) in {months} months", text)
    slo = [w for w in plan["warnings"] if w["field"].endswith(".tpot_slo")]
    if bool(slo) != (tpot_s > 1.0):
        tally.silent_wrong += 1
        tally.fail("semantic", f"tpot_slo {tpot}: warnings {slo}", text)


# --------------------------------------------------------------------------- prices
_PRICE_TRAPS = ("old date", "future date", "currency", "lost field", "duplicate", "zone")


def _price_file(rng: random.Random, work: Path, trap: str | None) -> tuple[Path, dict]:
    """A price file of one of the three kinds, with ``trap`` or clean; (path, read kwargs)."""
    from datetime import date, timedelta

    day = (date.today() - timedelta(days=rng.randint(0, 3000))).isoformat()
    if trap in ("duplicate",) or (trap is None and rng.random() < 0.3):
        h1 = offering("h1", "h100-sxm", 1, 4.0)
        rows = [h1, dict(h1, on_demand_usd_per_hour=3.0 if trap else 4.0)]
        folder = write_catalog(work / f"off{rng.randrange(10**9)}", rows)
        return folder / "offerings.csv", {}
    if trap == "zone" or (trap is None and rng.random() < 0.4):
        head = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,"
                "SpotPrice,Region,AvailabilityZone")  # fmt: skip
        zones = ["use1-az1", "use1-az1" if trap == "zone" else "use1-az2"]
        prices = [55.04, round(rng.uniform(40, 99), 2)]
        rows = [f"p5.48xlarge,H100,8.0,192.0,2048.0,,{p},20.0,us-east-1,{z}"
                for p, z in zip(prices, zones, strict=True)]  # fmt: skip
        path = work / f"vms{rng.randrange(10**9)}.csv"
        path.write_text(head + "\n" + "\n".join(rows) + "\n")
        return path, {"provider": "aws", "price_date": day}
    if trap == "old date":
        day = f"{rng.randint(1900, 2005)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"
    elif trap == "future date":
        day = (date.today() + timedelta(days=rng.randint(93, 40 * 365))).isoformat()
    header = "provider,region,offering,mode,price,date"
    row = f"acme,us-east,h1,on_demand,{rng.uniform(1, 9):.2f},{day}"
    if trap == "currency" or (trap is None and rng.random() < 0.3):
        header += ",currency"
        row += "," + (rng.choice(["EUR", "GBP", "JPY", "eur"]) if trap else rng.choice(["USD", ""]))
    if trap == "lost field":
        cells = row.split(",")
        del cells[rng.randrange(len(cells))]
        row = ",".join(cells)
    path = work / f"prices{rng.randrange(10**9)}.csv"
    path.write_text(header + "\n" + row + "\n")
    return path, {}


def _prices_case(rng: random.Random, work: Path, tally: Tally) -> None:
    """Family ``prices``: see the module docstring for the oracle."""
    from solver.errors import ProcureError
    from solver.inputs.prices import read_price_update

    trap = rng.choice(_PRICE_TRAPS) if rng.random() < 0.7 else None
    path, kwargs = _price_file(rng, work, trap)
    tally.traps[f"prices:{trap or 'control'}"] += 1
    what = f"{trap or 'control'}: {path.name}: " + path.read_text()[:600]
    tally.exits[0] += 1
    try:
        update = read_price_update(path, check_dates=True, **kwargs)
    except ProcureError as exc:
        if trap is None:
            tally.fail("prices", f"a control refused: {exc.render()[:300]}", what)
        elif exc.file != str(path) or not exc.field or not exc.fix:
            tally.fail("prices", f"a refusal that names no file or field: {exc.render()}", what)
        return
    except Exception as exc:  # noqa: BLE001 (the oracle counts every escape)
        tally.tracebacks += 1
        tally.fail("prices", f"traceback: {exc!r}"[:300], what)
        return
    if trap is not None:
        tally.silent_wrong += 1
        tally.fail("prices", f"a trap read: {update.prices['price_usd'].tolist()}", what)


# --------------------------------------------------------------------------- limits
#: what a run may take past its --time-limit (x 1.2, the issue's bound) in absolute
#: seconds on top: the in-process runner (typer's parsing, CliRunner's capture) and the
#: unwinding after the alarm, 0.3-0.5 s measured at a load average of 10 on 2 cores
_DEADLINE_SLACK_S = 0.5
_WARM: list[bool] = []


def _runqueue_wait_s() -> float:
    """Seconds this thread has spent runnable but waiting for a CPU (Linux schedstat's
    second field, ``/proc/thread-self/schedstat``; 0 where it is not available)."""
    try:
        with open("/proc/thread-self/schedstat") as handle:
            return int(handle.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


@contextlib.contextmanager
def _clock(tally: Tally, bound_s: float):
    """Time a run against ``bound_s``; yields a list that gets (wall, wall less the time
    spent waiting for a CPU). A run counts as past its deadline when the second is over the
    bound: the time it ran, or blocked on its own (a socket, a lock), not the time the
    machine's scheduler gave others (on a shared 2-core machine at load 8, a nice 19 fuzz
    run got about 6% of a core: a 0.3 s solve took 4.9 s of wall clock, all of it waiting
    for a CPU). A run past the bound on the wall clock only is counted as ``starved``."""
    got: list[float] = []
    started, waited = time.perf_counter(), _runqueue_wait_s()
    yield got
    wall = time.perf_counter() - started
    own = wall - (_runqueue_wait_s() - waited)
    got += [wall, own]
    if wall > bound_s and own <= bound_s:
        tally.starved += 1


def _peer(greeting: bytes | None):
    """A localhost listener that accepts and sends ``greeting`` (None: nothing)."""
    import socket
    import threading

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(4)
    held: list = []

    def serve() -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            held.append(conn)
            if greeting is not None:
                conn.sendall(greeting)

    threading.Thread(target=serve, daemon=True).start()
    return sock, held, f"tcp://127.0.0.1:{sock.getsockname()[1]}"


def _limits_case(rng: random.Random, work: Path, tally: Tally) -> None:
    """Family ``limits``: see the module docstring for the oracle."""
    case = rng.choice(["deadline", "deadline", "deadline", "peer", "silent", "workers"])
    tally.traps[f"limits:{case}"] += 1
    prob = work / "p.yaml"
    if case == "deadline":
        limit = rng.choice([0.05, 0.2, 0.5, 1.0, 3.0])
        text = random_problem(rng)
        prob.write_text(text)
        cat = _catalog_34(work)
        if not _WARM:  # the first command of a process imports the solver: not its time
            _invoke(["solve", str(prob), "--catalog", str(cat), "--time-limit", "30"])
            _WARM.append(True)
        with _clock(tally, 1.2 * limit + _DEADLINE_SLACK_S) as clock:
            result = _invoke(["solve", str(prob), "--catalog", str(cat), "--format", "json",
                              "--time-limit", str(limit)])  # fmt: skip
        wall, own = clock
        what = f"--time-limit {limit}: wall {wall:.2f} s ({own:.2f} s not waiting): {text}"
        if not _check_common(tally, "limits", result, what):
            return
        if own > 1.2 * limit + _DEADLINE_SLACK_S:
            tally.past_deadline += 1
            tally.fail("limits", f"past the deadline: {own:.2f} s for {limit} s", what)
        if result.exit_code == 4 and "time limit" not in result.output:
            tally.fail("limits", "a stop at the limit that does not say so", what)
        return
    if case == "silent":
        import dask.distributed  # noqa: F401  (its first import is not the probe's time)

        from solver.analyses.runner import dask_client
        from solver.errors import ProcureError

        sock, held, address = _peer(None)
        with _clock(tally, 1.2 * 0.3 + _DEADLINE_SLACK_S) as clock:
            try:
                dask_client(address, timeout_s=0.3)
                tally.silent_wrong += 1
                tally.fail("limits", "a silent peer taken for a scheduler", address)
            except ProcureError as exc:
                if "sent nothing" not in exc.message:
                    tally.fail("limits", f"silent peer: {exc.message}", address)
            finally:
                for c in held:
                    c.close()
                sock.close()
        tally.exits[2] += 1
        if clock[1] > 1.2 * 0.3 + _DEADLINE_SLACK_S:
            tally.past_deadline += 1
            tally.fail("limits", "a silent peer waited past its timeout", address)
        return
    text = _problem_34(rng, demand=500, quota=False)
    prob.write_text(text)
    cat = _catalog_34(work)
    args = ["sensitivity", str(prob), "--catalog", str(cat), "-q", "--break-even", "1"]
    if case == "peer":
        greeting = rng.choice([b"HTTP/1.1 400 Bad Request\r\n\r\n", b"SSH-2.0-OpenSSH_9.6\r\n",
                               bytes(rng.randrange(256) for _ in range(64)), b""])  # fmt: skip
        if len(greeting) >= 8 and int.from_bytes(greeting[:8], "little") <= 1 << 20:
            greeting = b"\xff" * 8 + greeting  # a small length would wait for the Dask client
        sock, held, address = _peer(greeting or None)
        if not greeting:  # nothing listening: a closed port
            sock.close()
        try:
            result = _invoke([*args, "--scheduler", address])
        finally:
            for c in held:
                c.close()
            sock.close()
        what = f"peer {greeting[:20]!r} at {address}"
        if _check_common(tally, "limits", result, what) and (
            result.exit_code != 2 or "--scheduler" not in result.output
        ):
            tally.silent_wrong += 1
            tally.fail("limits", f"a non-Dask peer: exit {result.exit_code}", what)
        return
    from solver.analyses.runner import capped_workers

    cpus = capped_workers(1_000_000)[0]
    workers = rng.choice([1, cpus, cpus + 1, 10**6])
    result = _invoke([*args, "--workers", str(workers)])
    what = f"--workers {workers} ({cpus} CPUs)"
    if not _check_common(tally, "limits", result, what):
        return
    noted = "more than this machine's" in result.output
    if noted != (workers > cpus):
        tally.silent_wrong += 1
        tally.fail("limits", f"workers {workers}: note {noted}", what)


ISSUE_34_FAMILIES.update(
    {"semantic": _semantic_case, "prices": _prices_case, "limits": _limits_case}
)
