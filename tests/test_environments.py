"""The places readers run the collection: Google Colab as it ships, and the locked test set-up.

- Colab: every requirement of fampnb (and of ``fampnb[torch]``) accepts the version Colab ships
  (``requirements/colab.in``, ``requirements/colab-torch.txt``), and pip, asked to install fampnb
  into ``.venv-colab`` (those versions, built by ``make venv-colab``), would upgrade nothing.
- The locks: ``requirements/lock.txt`` pins every package the suite installs to a version the
  package's own ranges accept; ``requirements/colab.txt`` is the lock of ``colab.in``; torch and
  torchao are pinned where CI installs them; ``.ci/run`` runs both environments.
"""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from conftest import ROOT, require

REQ = ROOT / "requirements"
COLAB_PY = ROOT / ".venv-colab" / "bin" / "python"
COLAB_HOW = "Enable with: make venv-colab"


def pins(path: Path) -> dict[str, str]:
    """``name==version`` lines of a requirements file (canonical names; comments, options and
    other specifiers skipped)."""
    out = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        m = re.fullmatch(r"([A-Za-z0-9._-]+)==([^\s;]+)", line)
        if m:
            out[canonicalize_name(m.group(1))] = m.group(2)
    return out


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def requirements(*extras: str) -> list[Requirement]:
    meta = project()
    reqs = [Requirement(r) for r in meta["dependencies"]]
    for extra in extras:
        reqs += [Requirement(r) for r in meta["optional-dependencies"][extra]]
    return reqs


def colab_versions() -> dict[str, str]:
    return {**pins(REQ / "colab.in"), **pins(REQ / "colab-torch.txt")}


# ------------------------------------------------------------------------------- Colab
def test_colab_versions_satisfy_every_requirement():
    """Each dependency of fampnb and fampnb[torch] is preinstalled on Colab at a version its range
    accepts: pip installs none of them there, and upgrades none."""
    colab = colab_versions()
    assert {"numpy", "ml-dtypes", "matplotlib", "ipywidgets", "torch"} <= set(colab)
    for req in requirements("torch"):
        name = canonicalize_name(req.name)
        assert name in colab, f"{req.name}: no Colab version recorded in requirements/colab.in"
        assert req.specifier.contains(colab[name], prereleases=True), \
            f"{req} would upgrade Colab's {req.name} {colab[name]}"


def test_colab_lock_holds_colabs_versions():
    """``colab.txt`` (the lock ``make venv-colab`` installs) pins exactly Colab's versions."""
    wanted, locked = pins(REQ / "colab.in"), pins(REQ / "colab.txt")
    assert {k: locked.get(k) for k in wanted} == wanted
    assert "torch" not in locked and "jupyterlab" not in locked  # neither is on Colab's kernel side


def _colab_python() -> Path:
    require(COLAB_PY.exists(), f"the Colab environment is not built ({COLAB_PY} is missing)",
            COLAB_HOW)
    return COLAB_PY


def test_colab_environment_has_colabs_versions():
    """``.venv-colab`` still holds Colab's versions (nothing installed there upgraded them)."""
    code = ("import importlib.metadata as m, json; print(json.dumps("
            "{d.metadata['Name']: d.version for d in m.distributions()}))")
    out = subprocess.run([str(_colab_python()), "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    have = {canonicalize_name(k): v for k, v in json.loads(out.stdout).items()}
    want = pins(REQ / "colab.in")
    assert {k: have.get(k) for k in want} == want
    assert "torch" not in have and "jupyterlab" not in have


def test_installing_fampnb_on_colab_upgrades_nothing():
    """``pip install --dry-run --report - --no-index --no-build-isolation --isolated .`` into the
    Colab environment: pip's report lists what it would install, and fampnb must be all of it.

    Why this is sound: pip's default upgrade strategy (only-if-needed, what Colab's
    ``%pip install "fampnb @ git+..."`` uses) keeps an installed package that satisfies a
    requirement, so an upgrade can only come from a requirement that Colab's version does not
    meet.  With ``--no-index`` pip cannot fetch anything: such a requirement makes the dry run
    fail ("No matching distribution"), and one that is missing altogether too, so the check
    answers offline and the same on every run.  ``--isolated`` ignores pip's configuration
    (extra indexes, find-links); ``--no-build-isolation`` builds fampnb's metadata with the
    environment's setuptools (>= 77, as pyproject's build requirement asks), where Colab's pip
    would build it in an isolated environment of its own, leaving Colab's packages alone.
    """
    cmd = [str(_colab_python()), "-m", "pip", "install", "--dry-run", "--quiet", "--report", "-",
           "--no-index", "--no-build-isolation", "--isolated", "--disable-pip-version-check",
           str(ROOT)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, f"pip would need packages Colab does not have:\n{out.stderr[-3000:]}"
    report = json.loads(out.stdout)
    names = sorted(canonicalize_name(i["metadata"]["name"]) for i in report["install"])
    assert set(names) <= {"fampnb"}, f"installing fampnb on Colab would change: {names}"


# ------------------------------------------------------------------------------- locks
def test_lock_pins_every_requirement_to_a_version_its_range_accepts():
    locked = pins(REQ / "lock.txt")
    for req in requirements("lab", "test", "torch"):
        name = canonicalize_name(req.name)
        assert name in locked, f"{req.name} is not in requirements/lock.txt (run make lock)"
        assert req.specifier.contains(locked[name], prereleases=True), (req, locked[name])


def test_torch_is_pinned_with_torchao_and_the_lock_agrees():
    torch_pins = pins(REQ / "torch.txt")
    assert torch_pins == {"torch": "2.13.0", "torchao": "0.18.0"}
    locked = pins(REQ / "lock.txt")
    for name, version in torch_pins.items():
        assert Version(locked[name]).public == version, (name, locked[name])


def test_ci_and_make_run_both_environments_from_the_locks():
    ci = (ROOT / ".ci" / "run").read_text()
    make = (ROOT / "Makefile").read_text()
    assert re.search(r"^\s*make test-colab\b", ci, re.M) and re.search(r"^\s*make test\b", ci, re.M)
    assert "requirements/torch.txt" in ci or re.search(r"^\s*make torch\b", ci, re.M)
    assert "requirements/lock.txt" in make and "-c $(LOCK)" in make
    assert "requirements/colab.txt" in make and "test-latest:" in make
