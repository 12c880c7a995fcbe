"""A non-editable install works (issue 12, item 8): the wheel carries the report template
and the shipped catalog (data-files, under <prefix>/share/procure/catalogs), and the seed
solves from it with the source tree nowhere on the path."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import sysconfig

import pytest

from conftest import ROOT

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("wheel") is None or importlib.util.find_spec("setuptools") is None,
    reason="building a wheel without isolation needs setuptools and wheel (the dev extra)",
)


def test_the_seed_solves_from_the_wheel(tmp_path):
    wheels = tmp_path / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(ROOT),
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(wheels),
            "-q",
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (wheel,) = wheels.glob("procure-*.whl")
    env = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--prefix",
            str(env),
            "-q",
            str(wheel),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    python = env / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # the dependencies (pandas, HiGHS, ...) from this interpreter; its .pth files, and so
    # the editable install of the source tree, are not read from a path added this way
    (tmp_path / "venv" / site.split(str(env) + "/", 1)[1] / "deps.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n"
    )
    code = (
        "import json, solver, solver.catalog as c; from solver.api import solve; "
        f"p = solve({str(ROOT / 'problems' / 'seed-2m-13b.yaml')!r}); "
        "print(json.dumps([solver.__file__, str(c.DEFAULT_CATALOG_DIR), p.total_cost_usd]))"
    )
    out = subprocess.run(
        [python, "-c", code],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    where, catalog, total = json.loads(out.stdout.strip().splitlines()[-1])
    assert where.startswith(str(env)) and catalog.startswith(str(env))
    assert catalog.endswith("share/procure/catalogs")
    # the seed's optimum (bench/RESULTS.md, issue 11): $284,256.66
    assert total == pytest.approx(284_256.66, abs=0.01)
