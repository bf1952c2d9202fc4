"""The wheel works outside the checkout (issue 23): it holds only ``ggp_automl`` (with its grammars as
package data) and the ``ggp-automl`` command, and, installed into a fresh virtual environment, runs
from a folder that knows nothing of the checkout.

The wheel is built once per module from a copy of the checkout (so no build/ or egg-info lands in the
working tree) and installed once into a fresh venv in a temporary folder. The fresh venv does not
download the dependencies again: a ``.pth`` file names the running environment's site-packages, a
plain path line that adds the folder but does not run the ``.pth`` files inside it, so the running
environment's editable install of the checkout stays invisible there (test_installed_copy_is_imported
checks that).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the names the checkout's folders and modules would take as top-level entries of site-packages
GENERIC = ("cli", "gp", "spaces", "evaluation", "search", "results", "experiments", "commands", "grammars")
GRAMMARS = ("large.bnf", "medium.bnf", "small.bnf", "ensembles.bnf")


def _version(dist: str) -> tuple[int, ...] | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return tuple(int(p) for p in version(dist).split(".")[:2] if p.isdigit())
    except PackageNotFoundError:
        return None


def _can_build_here() -> bool:
    """setuptools>=68 (pyproject's build requirement) and bdist_wheel (the wheel package, or
    setuptools>=70.1 which carries it) in the running environment: no build isolation needed."""
    setuptools = _version("setuptools")
    return bool(setuptools and setuptools >= (68,) and (setuptools >= (70, 1) or _version("wheel")))


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "PIP_REQUIRE_VIRTUALENV")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", PYTHONNOUSERSITE="1", **extra)
    return env


def _outside_checkout(path: Path) -> Path:
    path = path.resolve()
    assert not path.is_relative_to(ROOT), f"{path} is inside the checkout {ROOT}: use a --basetemp outside it"
    return path


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    base = _outside_checkout(tmp_path_factory.mktemp("wheel"))
    source = base / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".*", "__pycache__", "*.pyc", "*.egg-info", "build", "dist", "runs"))
    out = base / "dist"
    isolation = ["--no-build-isolation"] if _can_build_here() else []  # else pip fetches the build requirements
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "-w", str(out), str(source)],
                       cwd=base, capture_output=True, text=True, timeout=600, env=_clean_env())
    if r.returncode != 0 and not isolation and "No matching distribution" in r.stderr:
        pytest.skip(f"the build requirements (setuptools>=68, wheel) are neither installed nor reachable:\n{r.stderr}")
    assert r.returncode == 0, f"pip wheel failed ({isolation or 'build isolation'}):\n{r.stdout}\n{r.stderr}"
    wheels = list(out.glob("ggp_automl-*.whl"))
    assert len(wheels) == 1, list(out.iterdir())
    return wheels[0]


class FreshVenv:
    def __init__(self, root: Path):
        self.root = root
        self.bin = root / ("Scripts" if os.name == "nt" else "bin")
        self.python = self.bin / ("python.exe" if os.name == "nt" else "python")
        self.work = root.parent / "work"  # the working directory of every command: outside the checkout
        self.work.mkdir()

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        env = _clean_env(VIRTUAL_ENV=str(self.root), PATH=f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}")
        return subprocess.run(list(args), cwd=self.work, capture_output=True, text=True, timeout=timeout, env=env)

    def python_says(self, code: str) -> str:
        r = self.run(str(self.python), "-c", code)
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    @property
    def site_packages(self) -> Path:
        return Path(self.python_says("import sysconfig; print(sysconfig.get_paths()['purelib'])"))


@pytest.fixture(scope="module")
def fresh_venv(wheel, tmp_path_factory) -> FreshVenv:
    root = _outside_checkout(tmp_path_factory.mktemp("fresh")) / "venv"
    try:
        made = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], capture_output=True,
                              text=True, timeout=300, env=_clean_env())
    except OSError as exc:
        pytest.skip(f"cannot create a virtual environment on this machine: {exc}")
    if made.returncode != 0:
        pytest.skip(f"cannot create a virtual environment on this machine (python -m venv):\n{made.stderr}")
    venv = FreshVenv(root)
    site = venv.site_packages
    assert site.is_relative_to(root), site
    # the running environment's site-packages, for the dependencies (and pip): plain paths, no code run
    running = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (site / "running_environment.pth").write_text("".join(f"{p}\n" for p in running), encoding="utf-8")
    assert venv.python_says("import importlib.util; print(importlib.util.find_spec('ggp_automl'))") == "None", \
        "the checkout's editable install is visible in the fresh venv: the test would prove nothing"
    if venv.run(str(venv.python), "-c", "import pip").returncode != 0:
        r = venv.run(str(venv.python), "-m", "ensurepip", "--default-pip")
        assert r.returncode == 0, r.stderr
    # --ignore-installed: the running environment's (editable) ggp-automl is visible as a distribution
    r = venv.run(str(venv.python), "-m", "pip", "install", "--no-deps", "--no-index", "--ignore-installed",
                 str(wheel))
    assert r.returncode == 0, f"pip install of the wheel failed:\n{r.stdout}\n{r.stderr}"
    return venv


def test_wheel_holds_only_the_package(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    dist_info = next(n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info"))
    assert {n.split("/")[0] for n in names} == {"ggp_automl", dist_info}, \
        sorted({n.split("/")[0] for n in names})
    for name in ("tests", "benchmarks", "docs"):
        assert not [n for n in names if n.startswith(f"ggp_automl/{name}/")], f"ggp_automl/{name}/ is in the wheel"
    required = [f"ggp_automl/grammars/{g}" for g in GRAMMARS] + [
        "ggp_automl/__init__.py", "ggp_automl/__main__.py", "ggp_automl/cli.py", "ggp_automl/gp/bnf.lark",
        "ggp_automl/grammars/README.md", "ggp_automl/search/cost_prior.json"]
    assert [f for f in required if f not in names] == []
    # every grammar of the checkout, species included, is in the wheel, and no other
    in_checkout = {p.relative_to(ROOT).as_posix() for p in (ROOT / "grammars").rglob("*.bnf")}
    in_wheel = {n.removeprefix("ggp_automl/") for n in names if n.startswith("ggp_automl/grammars/")
                and n.endswith(".bnf")}
    assert any(n.startswith("grammars/species/") for n in in_checkout)
    assert in_wheel == in_checkout, (sorted(in_checkout - in_wheel), sorted(in_wheel - in_checkout))
    entry_points = zipfile.ZipFile(wheel).read(f"{dist_info}/entry_points.txt").decode()
    section = entry_points.split("[console_scripts]", 1)[1].split("\n[", 1)[0]
    assert "ggp-automl = ggp_automl.cli:main" in [line.strip() for line in section.splitlines()], entry_points


def test_installed_copy_is_imported(fresh_venv):
    """In the fresh venv ``ggp_automl`` and every module of it it loads come from the installed copy,
    never from the checkout; the estimators import."""
    out = fresh_venv.python_says(
        "import sys, ggp_automl; print(ggp_automl.GrammarAutoML, ggp_automl.GrammarAutoMLClassifier); "
        "print(ggp_automl.__file__); "
        "print(*sorted({m.__file__ for n, m in list(sys.modules.items()) "
        "if n.split('.')[0] == 'ggp_automl' and getattr(m, '__file__', None)}), sep='\\n')")
    lines = out.splitlines()
    assert "GrammarAutoML'" in lines[0] and "GrammarAutoMLClassifier'" in lines[0], lines[0]
    package = Path(lines[1]).resolve()
    assert package.is_relative_to(fresh_venv.root.resolve()), f"ggp_automl imported from {package}"
    loaded = [Path(f).resolve() for f in lines[2:]]
    assert len(loaded) > 10, loaded
    assert [f for f in loaded if not f.is_relative_to(fresh_venv.root.resolve())] == []


def test_no_generic_top_level_names_installed(fresh_venv):
    site = fresh_venv.site_packages
    entries = {p.name for p in site.iterdir()}
    assert "ggp_automl" in entries
    clashes = sorted(e for e in entries if e.removesuffix(".py") in GENERIC)
    assert clashes == [], f"top-level entries of site-packages with generic names: {clashes}"
    record = next(site.glob("ggp_automl-*.dist-info")) / "RECORD"
    tops = {line.split(",")[0].split("/")[0] for line in record.read_text().splitlines() if line}
    assert {t for t in tops if t != ".." and not t.endswith(".dist-info")} == {"ggp_automl"}, tops


def test_check_finds_the_shipped_grammar_by_name(fresh_venv):
    assert not (fresh_venv.work / "large.bnf").exists()
    r = fresh_venv.run("ggp-automl", "check", "--grammar", "large.bnf")
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr}"
    assert "OK" in r.stdout and "Traceback" not in r.stderr
    assert shutil.which("ggp-automl", path=str(fresh_venv.bin)), "the ggp-automl command is not in the venv"


def test_python_m_ggp_automl(fresh_venv):
    r = fresh_venv.run(str(fresh_venv.python), "-m", "ggp_automl", "check", "--grammar", "species/small-1.bnf")
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr}"


@pytest.mark.slow
def test_evolve_outside_the_checkout(fresh_venv):
    """A one-minute run of the installed command on the embedded data set leaves a model behind."""
    r = fresh_venv.run("ggp-automl", "evolve", "--budget", "1m", "--workers", "1", "--seed", "0", "--out", "run",
                       "--quiet", timeout=900)
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr}"
    assert (fresh_venv.work / "run" / "best" / "model.joblib").is_file(), sorted(
        str(p.relative_to(fresh_venv.work)) for p in (fresh_venv.work / "run").rglob("*"))
    r = fresh_venv.run("ggp-automl", "inspect", "run")
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr}"
