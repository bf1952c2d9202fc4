"""The package is one straight thing: the layers contract holds, no module imports in a circle, the
wheel's package list names every subpackage, and nothing reaches the checkout's folders by their bare,
generic names (``import gp``) instead of as ``ggp_automl.gp`` (issue 23).

These tests read the checkout itself (the folder above this file), which must be the ``ggp_automl``
that Python imports (``pip install -e .``, as the README says): linting an installed copy would
prove nothing about the files being edited.
"""
from __future__ import annotations

import ast
import fnmatch
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "ggp_automl"
#: top-level folders of the checkout that are not part of the product (not in the wheel)
NOT_PRODUCT = {"tests", "benchmarks", "docs"}
#: build and run artefacts that may lie in a checkout (ignored by git; never code of the product)
ARTEFACTS = {"build", "dist", "runs", "__pycache__"}

#: Import cycles that are tolerated for now, each a set of modules (without the ``ggp_automl.``
#: prefix) mapped to the reason. A cycle found must be one of these or lie inside one (a cycle that
#: shrinks while being removed still passes); one that grows, or a new one, fails. Keep it empty:
#: an entry is a debt, to be paid by moving the shared part one layer down.
ALLOWED_CYCLES: dict[frozenset[str], str] = {}


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _skipped_dir(rel: Path) -> bool:
    """A folder that is neither product nor source of this project: hidden, caches, artefacts, venvs."""
    name = rel.name
    return name.startswith(".") or name in ARTEFACTS or name.endswith(".egg-info") \
        or (rel.parent == Path(".") and name == "venv")


def _walk(top: Path, *, product_only: bool):
    """(folder relative to the checkout, file names) for the checkout's folders, top-down."""
    for here, dirs, files in os.walk(top):
        rel = Path(here).relative_to(ROOT)
        keep = []
        for d in sorted(dirs):
            sub = rel / d
            if _skipped_dir(sub) or (product_only and rel == Path(".") and d in NOT_PRODUCT):
                continue
            keep.append(d)
        dirs[:] = keep
        yield rel, files


def _require_the_checkout_is_imported() -> None:
    spec = importlib.util.find_spec(PACKAGE)
    locations = [Path(p).resolve() for p in (spec.submodule_search_locations or [])] if spec else []
    if ROOT not in locations:
        pytest.fail(f"`import {PACKAGE}` finds {locations or 'nothing'}, not this checkout ({ROOT}): install "
                    f"it editable (`pip install -e '.[test]'`) so these tests examine the files being edited")


# --- the layers contract ---------------------------------------------------------------------------------


def test_the_layers_contract_is_kept():
    """``lint-imports`` (the contract in pyproject.toml: each layer imports only the layers beneath it)."""
    if importlib.util.find_spec("importlinter") is None:
        pytest.skip("import-linter is not installed (it is in the [test] extra: pip install -e '.[test]')")
    _require_the_checkout_is_imported()
    script = Path(sys.executable).parent / ("lint-imports.exe" if os.name == "nt" else "lint-imports")
    command = [str(script)] if script.is_file() else \
        [sys.executable, "-c", ("import sys; from importlinter.cli import lint_imports_command as c; "
                                "sys.exit(c())")]
    env = {**os.environ, "PYTHONPATH": ""}
    r = subprocess.run([*command, "--no-cache", "--no-logo", str(ROOT / "pyproject.toml")], cwd=ROOT,
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, f"lint-imports failed (exit {r.returncode}):\n{r.stdout}\n{r.stderr}"
    assert "0 broken" in r.stdout and " kept" in r.stdout, r.stdout


def test_every_top_level_part_of_the_package_is_a_layer():
    """The contract covers the whole stack: a new top-level module or subpackage must take its place
    among the layers, else lint-imports would never look at what it imports."""
    contract = next(c for c in _pyproject()["tool"]["importlinter"]["contracts"] if c["type"] == "layers")
    layers = {name.strip(" ()") for layer in contract["layers"] for name in layer.replace("|", ":").split(":")}
    parts = {p.stem for p in ROOT.glob("*.py")} - {"__init__", "__main__"}  # __main__: ``python -m``, as cli
    parts |= {rel.name for rel, files in _walk(ROOT, product_only=True)
              if rel != Path(".") and rel.parent == Path(".") and "__init__.py" in files}
    assert parts - layers == set(), f"not in the layers contract of pyproject.toml: {sorted(parts - layers)}"


# --- import cycles ---------------------------------------------------------------------------------------


def _import_cycles():
    grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter (the [test] extra)")
    import networkx as nx

    graph = grimp.build_graph(PACKAGE, include_external_packages=False, cache_dir=None)
    excluded = tuple(f"{PACKAGE}.{name}" for name in NOT_PRODUCT)
    modules = {m for m in graph.modules if not (m in excluded or m.startswith(tuple(e + "." for e in excluded)))}
    g = nx.DiGraph()
    g.add_nodes_from(modules)
    for m in modules:
        g.add_edges_from((m, i) for i in graph.find_modules_directly_imported_by(m) if i in modules)
    return graph, g, [c for c in nx.strongly_connected_components(g) if len(c) > 1]


def _short(module: str) -> str:
    return module.removeprefix(PACKAGE + ".")


def _describe(graph, g, cycle: set[str]) -> str:
    """The cycle's modules and one loop through them, with the lines that import."""
    import networkx as nx

    loop = nx.find_cycle(g.subgraph(cycle))
    lines = []
    for importer, imported in loop:
        details = graph.get_import_details(importer=importer, imported=imported)
        where = ", ".join(f"line {d['line_number']}" for d in details[:3]) if details else "?"
        lines.append(f"      {_short(importer)} -> {_short(imported)}  ({where})")
    return f"  {len(cycle)} modules: {sorted(map(_short, cycle))}\n    a loop:\n" + "\n".join(lines)


def test_no_import_cycles():
    """No strongly connected component of more than one module among the package's modules (tests,
    benchmarks and docs left out), except the allow-list above."""
    _require_the_checkout_is_imported()
    graph, g, cycles = _import_cycles()
    allowed = {frozenset(f"{PACKAGE}.{m}" for m in members) for members in ALLOWED_CYCLES}
    unexpected = [c for c in cycles if not any(c <= a for a in allowed)]
    assert not unexpected, (f"{len(unexpected)} import cycle(s) (strongly connected components of the import "
                            f"graph); break each by moving what both sides need one layer down:\n"
                            + "\n".join(_describe(graph, g, c) for c in sorted(unexpected, key=len, reverse=True)))
    stale = [sorted(a) for a in ALLOWED_CYCLES if not any(c <= frozenset(f"{PACKAGE}.{m}" for m in a)
                                                          for c in cycles)]
    assert not stale, f"allowed cycles that no longer exist, remove them from ALLOWED_CYCLES: {stale}"


# --- the wheel's package list ----------------------------------------------------------------------------


def _product_packages() -> set[str]:
    found = set()
    for rel, files in _walk(ROOT, product_only=True):
        if "__init__.py" in files:
            found.add(".".join([PACKAGE, *rel.parts]))
    return found


def test_pyproject_lists_every_subpackage():
    """``[tool.setuptools] packages`` names exactly the checkout's folders with an ``__init__.py``
    (tests/, benchmarks/, docs/ and hidden folders aside) as ``ggp_automl.<dotted path>``: a new
    subpackage left out of the list would be missing from the wheel, with no error until imported."""
    setuptools = _pyproject()["tool"]["setuptools"]
    assert setuptools["package-dir"] == {PACKAGE: "."}, setuptools["package-dir"]
    listed = setuptools["packages"]
    assert len(listed) == len(set(listed)), f"listed twice: {sorted({p for p in listed if listed.count(p) > 1})}"
    found = _product_packages()
    assert found - set(listed) == set(), f"add to packages in pyproject.toml: {sorted(found - set(listed))}"
    assert set(listed) - found == set(), f"in pyproject.toml but no such package: {sorted(set(listed) - found)}"


def test_every_code_folder_is_a_package():
    """A product folder holding modules has an ``__init__.py``: without one it is no package, is left
    out of the package list and so of the wheel, and works only from the checkout."""
    bare = [str(rel) for rel, files in _walk(ROOT, product_only=True)
            if rel != Path(".") and "__init__.py" not in files and any(f.endswith(".py") for f in files)]
    assert not bare, f"folders with modules but no __init__.py (not shipped): {bare}"


def test_package_data_covers_the_grammars_and_lark_files():
    """Every file of grammars/ and every .lark file matches a package-data pattern of pyproject.toml,
    so a new grammar folder or data file is not silently left out of the wheel."""
    patterns = _pyproject()["tool"]["setuptools"]["package-data"]

    def shipped(path: Path) -> bool:
        for package, globs in patterns.items():
            folder = Path(*package.split(".")[1:])  # ggp_automl -> ".", ggp_automl.gp -> gp
            try:
                rel = path.relative_to(folder)
            except ValueError:
                continue
            if any(fnmatch.fnmatchcase(rel.as_posix(), g) and len(rel.parts) == len(Path(g).parts) for g in globs):
                return True
        return False

    data = [rel / f for rel, files in _walk(ROOT, product_only=True) for f in files
            if rel.parts[:1] == ("grammars",) or f.endswith(".lark")]
    assert any(p.name == "large.bnf" for p in data)
    missing = sorted(str(p) for p in data if not shipped(p))
    assert not missing, f"data files no package-data pattern in pyproject.toml ships: {missing}"


# --- no generic top-level names --------------------------------------------------------------------------


def _generic_names() -> set[str]:
    """The names the checkout's own folders and modules would have if imported bare from the checkout
    (``gp``, ``spaces``, ``cli``, ``tests``, …): only ``ggp_automl.<name>`` (or a relative import) is right."""
    names = {p.stem for p in ROOT.glob("*.py")} - {"__init__", "__main__"}  # ``import __main__`` is the stdlib's
    names |= {p.name for p in ROOT.iterdir() if p.is_dir() and not _skipped_dir(Path(p.name))}
    return names


def _python_files() -> list[Path]:
    return sorted(ROOT / rel / f for rel, files in _walk(ROOT, product_only=False) for f in files if f.endswith(".py"))


def _generic_imports(tree: ast.AST, generic: set[str]):
    """(line, text) of each import of a generic name: ``import gp``, ``from spaces.x import y``,
    ``importlib.import_module("gp.tree")``, ``__import__("cli")``, ``mock.patch("search.loop.f")``,
    ``monkeypatch.setattr("gp.tree.X", …)``."""
    def bare(module: str | None) -> bool:
        return bool(module) and module.split(".")[0] in generic

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if bare(alias.name):
                    yield node.lineno, f"import {alias.name}"
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and bare(node.module):
                yield node.lineno, f"from {node.module} import …"
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            first = node.args[0]
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                continue
            if name in ("import_module", "__import__") and bare(first.value):
                yield node.lineno, f"{name}({first.value!r})"
            elif name in ("patch", "setattr", "delattr") and "." in first.value and bare(first.value):
                yield node.lineno, f"{name}({first.value!r}, …)"


def test_nothing_imports_the_checkouts_generic_names():
    """Product code, tests and benchmarks import ``ggp_automl.…`` (or relative), never a folder of the
    checkout by its bare name: that works only with the checkout on sys.path (``python -m pytest`` run
    from it), loads a second copy of the module, and would clash with any other ``gp`` or ``tests``."""
    generic = _generic_names()
    assert {"gp", "spaces", "cli", "tests"} <= generic, generic
    offences = []
    files = _python_files()
    assert any(f.name == "test_architecture.py" for f in files)
    for path in files:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except SyntaxError as exc:
            offences.append(f"{path.relative_to(ROOT)}:{exc.lineno}: does not parse: {exc.msg}")
            continue
        offences += [f"{path.relative_to(ROOT)}:{line}: {text}" for line, text in _generic_imports(tree, generic)]
    assert not offences, ("imports of the checkout's folders by their bare names (write `ggp_automl.<name>` "
                          "or a relative import; in tests `from .conftest import …`):\n  " + "\n  ".join(offences))


def test_the_generic_import_scan_finds_what_it_should():
    """The scan itself: each form it must catch, and the forms that are fine."""
    generic = {"gp", "tests", "cli"}
    bad = ("import gp\nimport gp.tree as t\nfrom gp.tree import X\nfrom tests.conftest import ROOT\n"
           "import cli\nimportlib.import_module('gp.tree')\n__import__('cli')\nmock.patch('gp.tree.f')\n"
           "monkeypatch.setattr('tests.conftest.ROOT', 1)\n")
    assert [line for line, _ in _generic_imports(ast.parse(bad), generic)] == list(range(1, 10))
    good = ("import ggp_automl.gp\nfrom ggp_automl.gp import tree\nfrom . import gp\nfrom .conftest import ROOT\n"
            "from ..gp.tree import X\nimport __main__\nimport gpx\nsetattr(obj, 'gp', 1)\n"
            "monkeypatch.setattr(gp, 'tree', 1)\nimportlib.import_module('.tree', 'ggp_automl.gp')\n")
    assert list(_generic_imports(ast.parse(good), generic)) == []
