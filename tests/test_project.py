"""The set-up files agree with each other, and ``import fampnb`` stays light."""

from __future__ import annotations

import re
import subprocess
import sys

import tomllib

from conftest import ROOT

#: conda-forge spells a few packages differently from PyPI
CONDA_TO_PIP = {"pytorch": "torch"}


def _name(req: str) -> str:
    return re.split(r"[\s<>=!~;\[]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _pyproject_packages() -> set[str]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(meta["dependencies"])
    for extra in meta["optional-dependencies"].values():
        reqs += extra
    return {_name(r) for r in reqs}


def _environment_packages() -> set[str]:
    names, in_pip, in_deps = set(), False, False
    for line in (ROOT / "environment.yml").read_text().splitlines():
        stripped = line.split("#", 1)[0].rstrip()
        if re.match(r"^\S", stripped):
            in_deps = stripped.startswith("dependencies:")
            continue
        if not in_deps:
            continue
        m = re.match(r"^(\s*)- (.+)$", stripped)
        if not m:
            in_pip = in_pip and bool(stripped.strip())
            continue
        item = m.group(2).strip()
        if item == "pip:" or item.startswith("pip:"):
            in_pip = True
            continue
        if len(m.group(1)) > 2 and in_pip:
            continue  # the `pip: -e .` block installs the package itself
        name = _name(item)
        if name not in ("python", "pip"):
            names.add(CONDA_TO_PIP.get(name, name))
    return names


def test_environment_yml_names_the_same_packages_as_pyproject():
    env, py = _environment_packages(), _pyproject_packages()
    assert env == py, f"only in environment.yml: {env - py}; only in pyproject: {py - env}"


def test_environment_yml_installs_the_package_itself():
    assert re.search(r"- pip:\s*\n\s*- -e \.", (ROOT / "environment.yml").read_text())


def test_ci_runs_the_readme_test_command_with_pinned_torch():
    ci = (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "make test" in ci and "make test" in readme and "make lab" in readme
    assert re.search(r"^\s*make torch\b", ci, re.M)  # requirements/torch.txt: torch==2.13.0
    assert "torch==2.13.0" in (ROOT / "requirements" / "torch.txt").read_text().splitlines()
    assert "FAMPNB_STRICT=1" in ci


def test_import_fampnb_is_light():
    code = ("import sys, fampnb, fampnb.formats, fampnb.seed; "
            "heavy = [m for m in ('matplotlib', 'ipywidgets', 'torch', 'IPython') if m in sys.modules]; "
            "print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_make_test_runs_the_linters_first():
    """ruff over the tree and mypy over the model layer run before the tests (layering itself:
    tests/test_layers.py)."""
    make = (ROOT / "Makefile").read_text()
    assert re.search(r"^test: lint\b", make, re.M)
    lint = re.search(r"^lint:.*\n((?:\t.*\n)+)", make, re.M)
    assert lint and "ruff check" in lint.group(1) and "mypy" in lint.group(1)
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert {"ruff", "mypy"} <= {_name(r) for r in meta["project"]["optional-dependencies"]["test"]}
    assert meta["tool"]["mypy"]["disallow_untyped_defs"] is True
