"""Shared test settings.

FAMPNB_STRICT=1 (set by .ci/run) turns every skip for a missing optional dependency (torch,
Chromium) into a failure, so CI can never count a skipped test as a pass.

A test needs torch when it uses the ``torch_mod`` fixture or carries ``@pytest.mark.torch`` (the
fixture adds the mark, so ``-m "not torch"`` deselects them all); without torch each one skips
before any of its fixtures is set up (a browser test opens no notebook), naming the reason and how
to enable it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
STRICT = os.environ.get("FAMPNB_STRICT", "") not in ("", "0")


def require(condition: bool, reason: str, how: str = "") -> None:
    """Skip the calling test when ``condition`` is false, unless FAMPNB_STRICT is set: then fail."""
    if condition:
        return
    if STRICT:
        pytest.fail(f"{reason} (FAMPNB_STRICT=1: optional dependencies must be present)")
    pytest.skip(f"{reason}. {how}".strip())


def load_tool(name: str):
    """A script of ``tools/`` (not a package) as a module."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def torch_available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


TORCH_HOW = "Enable with: make torch (requirements/torch.txt: torch==2.13.0, the CPU build)"


def require_torch() -> None:
    require(torch_available(), "torch is not installed", TORCH_HOW)


@pytest.fixture
def torch_mod():
    """The torch module; skips (fails in CI) when torch is not installed."""
    require_torch()
    import torch

    return torch


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that uses ``torch_mod`` is marked ``torch`` (before ``-m`` selects), and so is
    every notebook cell (an nbval item) tagged ``needs-torch``: notebook 08's torch demos, which
    guard themselves and print what nbval compares only with torch.  This hook sees the
    notebooks' items too (the suite collects ``tests`` and ``notebooks`` in one session), but
    ``pytest_runtest_setup`` below runs only for items under ``tests/``: such a cell is given its
    skip here, when torch is missing (under FAMPNB_STRICT=1 it runs, and fails for the output it
    does not print)."""
    no_torch = None
    for item in items:
        cell = getattr(item, "cell", None)
        if "torch_mod" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.torch)
        elif cell is not None and "needs-torch" in cell.get("metadata", {}).get("tags", ()):
            item.add_marker(pytest.mark.torch)
            if no_torch is None:
                no_torch = not torch_available()
            if no_torch and not STRICT:
                item.add_marker(pytest.mark.skip(reason=f"torch is not installed. {TORCH_HOW}"))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A ``torch`` test skips (fails under FAMPNB_STRICT=1) before its fixtures are set up."""
    if item.get_closest_marker("torch") is not None:
        require_torch()


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture
def run_cli():
    """Run ``python -m fampnb ARGS`` in a fresh process; returns CompletedProcess (text)."""
    import subprocess

    def _run(*args: str, stdin: str | None = None, timeout: float = 120):
        return subprocess.run([sys.executable, "-m", "fampnb", *args], capture_output=True,
                              text=True, input=stdin, timeout=timeout, cwd=ROOT)

    return _run


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-screenshots", action="store_true", default=False,
                     help="browser tests: save widget screenshots into docs/img/")
