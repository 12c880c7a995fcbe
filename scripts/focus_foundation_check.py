"""Run the FinOps Foundation's ``focus-validator`` on a FOCUS export, in its own venv.

Usage: ``python scripts/focus_foundation_check.py EXPORT_DIR [--venv DIR] [--version 1.2]``

``focus-validator`` 2.x needs Python 3.12 or newer, which the project's interpreter may
not be. This script looks for one (``python3.13``, ``python3.12`` on PATH, then pyenv's
versions), creates a venv from it (default ``~/.cache/procure/focus-validator-venv``),
installs ``focus-validator`` there with ``numpy>=2`` (its ``numpy<2`` pin breaks its own
pyarrow), runs it on ``EXPORT_DIR/focus.csv`` with ``--block-download`` (offline it has
its bundled FOCUS 1.2 rule model only) from its site-packages (it opens
``focus_validator/rules/currency_codes.csv`` relative to the working directory), and
prints the pass / fail / skipped counts and every failing rule.

A failing rule that is one branch of an ``OR`` composite that passes (FOCUS nullability
rules such as ``InvoiceId-C-003-C``: "null when not invoiced" OR "not null when
invoiced", neither branch with a condition the validator can test) is printed as such:
the requirement it belongs to is met. Exit status: 0 when every other rule passes or is
skipped, and when no Python >= 3.12 is found ("skipped: no Python 3.12"); 1 otherwise;
2 on bad usage. Not part of CI (a second interpreter and a package download).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

#: The release measured (docs/concepts/focus.md); the 2.x line is the one with 1.2+ rules.
VALIDATOR_SPEC = "focus-validator==2.2.1"
#: Its ``numpy<2`` requirement breaks the pyarrow it installs; numpy 2 runs it.
EXTRA_SPECS = ("numpy>=2",)
DEFAULT_VENV = Path.home() / ".cache" / "procure" / "focus-validator-venv"
TOTALS = re.compile(
    r"Total:\s*(\d+)\s*\|\s*Pass:\s*(\d+)\s*\|\s*Fail:\s*(\d+)\s*\|\s*Skipped:\s*(\d+)"
)
FAIL_LINE = re.compile(r"^❌\s*(\S+): FAIL\s*\(violations=(\d+)")


def _version_ok(python: str) -> bool:
    """Whether ``python`` runs and is Python 3.12 or newer (a pyenv shim may not run)."""
    try:
        done = subprocess.run(
            [python, "-c", "import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)"],
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def find_python() -> str | None:
    """A Python >= 3.12 interpreter: ``python3.13``/``python3.12`` on PATH, then pyenv's."""
    candidates = [p for p in (shutil.which("python3.13"), shutil.which("python3.12")) if p]
    roots = [os.environ.get("PYENV_ROOT", ""), str(Path.home() / ".pyenv")]
    for root in filter(None, roots):
        versions = sorted(Path(root, "versions").glob("3.1[2-9]*"), reverse=True)
        candidates += [str(v / "bin" / "python3") for v in versions]
    return next((c for c in candidates if _version_ok(c)), None)


def ensure_venv(python: str, venv: Path) -> Path:
    """The venv's ``focus-validator`` executable, creating the venv and installing if needed."""
    exe = venv / "bin" / "focus-validator"
    if exe.exists():
        return exe
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    # numpy 2 after the validator, in a second step: in one step pip refuses the conflict.
    for step in ([python, "-m", "venv", str(venv)], [*pip, VALIDATOR_SPEC], [*pip, *EXTRA_SPECS]):
        if subprocess.run(step, stderr=subprocess.DEVNULL).returncode != 0:
            raise SystemExit(
                f"error: `{' '.join(step)}` failed; check the package index, or "
                f"delete {venv} and retry"
            )
    return exe


def _site_packages(venv: Path) -> Path:
    """The directory holding the venv's ``focus_validator`` package."""
    found = sorted(venv.glob("lib/python3*/site-packages/focus_validator"))
    if not found:
        raise SystemExit(
            f"error: no focus_validator package under {venv}; delete the venv and retry"
        )
    return found[-1].parent


def or_branches(rules_dir: Path) -> dict[str, str]:
    """Rule id -> the ``OR`` composite rule it is a branch of, from the bundled models."""
    branches: dict[str, str] = {}
    for model in rules_dir.glob("model-*.json"):
        rules = json.loads(model.read_text()).get("ModelRules", {})
        for parent, rule in rules.items():
            requirement = rule.get("ValidationCriteria", {}).get("Requirement", {})
            if requirement.get("CheckFunction") != "OR":
                continue
            for item in requirement.get("Items", []):
                if "ModelRuleId" in item:
                    branches[item["ModelRuleId"]] = parent
    return branches


def main(argv: list[str] | None = None) -> int:
    """Run the check; see the module docstring for the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "export_dir", type=Path, help="directory holding focus.csv (procure export --format focus)"
    )
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV, help="the validator's own venv")
    parser.add_argument(
        "--version", default="1.2", help="FOCUS version to validate against (offline: 1.2)"
    )
    args = parser.parse_args(argv)
    data = (args.export_dir / "focus.csv").resolve()
    if not data.is_file():
        print(
            f"error: {data} not found; write it with `procure export PLAN.json --format focus "
            "--problem PROBLEM --start YYYY-MM-DD --out DIR`",
            file=sys.stderr,
        )
        return 2
    python = find_python()
    if python is None:
        print(
            "skipped: no Python 3.12 (focus-validator 2.x needs Python >= 3.12;"
            " none on PATH or in pyenv)"
        )
        return 0
    exe = ensure_venv(python, args.venv)
    site = _site_packages(args.venv)
    done = subprocess.run(
        [
            str(exe),
            "--data-file",
            str(data),
            "--validate-version",
            args.version,
            "--block-download",
        ],
        cwd=site,
        capture_output=True,
        text=True,
    )
    totals = TOTALS.search(done.stdout)
    if totals is None:
        print(done.stdout[-2000:], done.stderr[-2000:], sep="\n", file=sys.stderr)
        print(
            f"error: no 'Total:' line in focus-validator's output (exit {done.returncode})",
            file=sys.stderr,
        )
        return 1
    total, passed, failed, skipped = (int(x) for x in totals.groups())
    print(f"focus-validator ({VALIDATOR_SPEC}, {python}) on {data}, FOCUS {args.version}:")
    print(f"{total} rules: {passed} pass, {failed} fail, {skipped} skipped")
    branch_of = or_branches(site / "focus_validator" / "rules")
    status = dict(re.findall(r"^\S+\s*(\S+): (PASS|FAIL|SKIPPED)", done.stdout, flags=re.M))
    errors = 0
    for line in done.stdout.splitlines():
        hit = FAIL_LINE.match(line)
        if not hit:
            continue
        rule, violations = hit.group(1), hit.group(2)
        parent = branch_of.get(rule)
        if parent and status.get(parent) == "PASS":
            print(f"  {rule}: fail ({violations} rows), a branch of {parent}, an OR that passes")
        else:
            errors += 1
            print(f"  {rule}: FAIL ({violations} rows)")
    print(f"{errors} error(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
