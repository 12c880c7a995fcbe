"""The documentation holds to the code: the formulation has one page per constraint family
of the model's registry (no family without its page, no page without its family), each page
states the registry's key and dual unit and names functions that exist, every page is in
the site's navigation, and the README stays a front door (at most 150 lines, with the set-up
and test commands CI reads). The site itself is built in strict mode by .ci/run."""

from __future__ import annotations

import importlib
import re

import pytest
import yaml

from conftest import ROOT
from solver.core.model import FAMILIES

FORMULATION = ROOT / "docs" / "formulation"


def _pages() -> dict[str, str]:
    """Family name -> page text, for every page of docs/formulation but the index."""
    return {p.stem: p.read_text() for p in FORMULATION.glob("*.md") if p.name != "index.md"}


def _resolve(dotted: str) -> object:
    """The object a dotted path names: the longest importable module, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ModuleNotFoundError(dotted)


def test_every_family_has_a_page_and_every_page_a_family():
    pages = set(_pages())
    missing = sorted(set(FAMILIES) - pages)
    orphans = sorted(pages - set(FAMILIES))
    assert not missing, f"families of FAMILIES without a page in {FORMULATION}: {missing}"
    assert not orphans, f"formulation pages whose family is not in FAMILIES: {orphans}"


def test_each_page_states_its_family_and_the_functions_that_build_it():
    for name, text in _pages().items():
        family = FAMILIES[name]
        assert text.startswith(f"# `{name}`\n"), f"{name}.md: the title names another family"
        assert f"| Dual (shadow price) unit | {family.dual_unit} |" in text, (
            f"{name}.md: the dual unit is not the registry's {family.dual_unit!r}"
        )
        assert f"| Row name | `{name}[{','.join(family.keys)}]` |" in text, (
            f"{name}.md: the key is not the registry's {family.keys}"
        )
        assert re.search(r"^\$\$\n.+\n\$\$$", text, re.M | re.S), f"{name}.md: no LaTeX block"
        assert "## Symbols" in text, f"{name}.md: no symbols"
        built_by = re.search(r"^Built by: (.+)$", text, re.M)
        assert built_by, f"{name}.md: no 'Built by:' line"
        for dotted in re.findall(r"`([\w.]+)`", built_by.group(1)):
            try:
                builder = _resolve(dotted)
            except (ImportError, AttributeError) as gone:
                raise AssertionError(f"{name}.md names {dotted}, which is gone: {gone}") from gone
            assert callable(builder), f"{name}.md names {dotted}, which is not callable"


def test_resolve_refuses_a_function_that_does_not_exist():
    # the check above must be able to fail: a name that is gone raises
    with pytest.raises(AttributeError):
        _resolve("solver.core.model.add_no_such_family")


def _nav_pages(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [p for item in node for p in _nav_pages(item)]
    if isinstance(node, dict):
        return [p for value in node.values() for p in _nav_pages(value)]
    return []


def test_every_page_is_in_the_nav():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    nav = set(_nav_pages(config["nav"]))
    docs = ROOT / "docs"
    pages = {
        p.relative_to(docs).as_posix()
        for p in docs.rglob("*.md")
        if "hooks" not in p.parts and "javascripts" not in p.parts
    }
    assert not pages - nav, f"pages not in mkdocs.yml's nav: {sorted(pages - nav)}"
    assert not {p for p in nav if p.endswith(".md")} - pages, "nav names a page that is gone"


def test_the_readme_is_a_front_door():
    readme = (ROOT / "README.md").read_text()
    lines = readme.count("\n")
    assert lines <= 150, f"README.md has {lines} lines; at most 150 (the rest goes to docs/)"
    # CI (.ci/run) runs the README's set-up, example and test commands
    commands = ("procure solve problems/seed-2m-13b.yaml", "python -m pytest -q", "procure serve")
    for command in commands:
        assert command in readme, f"README.md no longer shows `{command}`"
