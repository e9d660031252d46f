"""Fixtures of the browser tests: one JupyterLab server and one headless Chromium per session.

The server serves a temporary copy of ``notebooks/`` (JupyterLab autosaves; the committed notebooks
are never touched) with fresh settings/workspace/runtime/config directories.  Without Chromium (or
the ``playwright`` package) the tests are skipped with a one-line how-to; with FAMPNB_STRICT=1 (CI)
they fail instead.

This directory is a package (``__init__.py``) so that this conftest does not shadow
``tests/conftest.py``, which other test modules import as ``conftest``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from conftest import ROOT, require

from .labdriver import (CHROMIUM, CHROMIUM_FLAGS, HOW_TO_ENABLE, LabPage, LabServer,
                        NotebookPage, chromium_path, playwright_available)

NOTEBOOKS = ROOT / "notebooks"
IMG_DIR = ROOT / "docs" / "img"


#: why the browser tests were skipped in this run (shown once at the end of the run)
_SKIPPED: list[str] = []


@pytest.fixture(scope="session")
def chromium() -> str:
    """Path of Debian's Chromium; skips (fails under FAMPNB_STRICT=1) without it or playwright."""
    checks = [(playwright_available(), "the browser tests need the Python package playwright",
               "Enable with: .venv/bin/pip install playwright (never `playwright install`), "
               "and apt-get install -y chromium"),
              (chromium_path() is not None,
               f"the browser tests need Chromium ({CHROMIUM} not found)", HOW_TO_ENABLE)]
    for ok, reason, how in checks:
        if not ok:
            _SKIPPED[:] = [f"{reason}. {how}"]
        require(ok, reason, how)
    path = chromium_path()
    assert path is not None
    return path


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line at the end of ``make test`` saying why the browser tests were skipped, and how to
    enable them (pytest's own summary lists skip reasons only with -rs)."""
    if _SKIPPED:
        terminalreporter.write_line(f"browser tests skipped: {_SKIPPED[0]}", yellow=True)


@pytest.fixture(scope="session")
def lab_server(chromium: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab on a free loopback port, serving a temporary copy of notebooks/."""
    server = LabServer(NOTEBOOKS, tmp_path_factory.mktemp("lab"), package_root=ROOT).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser(chromium: str) -> Iterator[object]:
    """One headless Chromium (Debian's binary, driven by the Python playwright package)."""
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    try:
        b = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_FLAGS)
        try:
            yield b
        finally:
            b.close()
    finally:
        pw.stop()


@pytest.fixture(scope="session")
def lab_page(lab_server: LabServer, browser: object) -> Iterator[LabPage]:
    """The one JupyterLab page of the session (its JavaScript loads once, ~5 s)."""
    lab = LabPage(browser, lab_server).load()
    try:
        yield lab
    finally:
        lab.close()


@pytest.fixture(scope="session")
def open_notebook(lab_server: LabServer, lab_page: LabPage) -> Callable[[str], NotebookPage]:
    """``open_notebook("01-number-formats.ipynb")``: open it, wait for its kernel, Run All.
    ``ipympl=True``: switch the kernel to ``%matplotlib widget`` before Run All.

    The next notebook's kernel is started at the same time, so that it is up when its turn
    comes.  The caller closes the returned page (module-scoped fixtures of the test modules do).
    """
    started: set[str] = set()
    order = sorted(p.name for p in lab_server.root.glob("*.ipynb"))

    def _open(name: str, ipympl: bool = False) -> NotebookPage:
        if not (lab_server.root / name).exists():
            pytest.fail(f"notebooks/{name} does not exist")
        later = [n for n in order if n > name and n not in started][:1]
        nb = NotebookPage(lab_page, name)
        try:
            nb.open()
            started.add(name)
            if later:
                lab_server.start_kernels(later)
                started.update(later)
            if ipympl:
                nb.use_ipympl()
            nb.run_all()
        except BaseException:
            nb.close()
            raise
        return nb

    return _open


@pytest.fixture(scope="module")
def nb(open_notebook: Callable[[str], NotebookPage], request: pytest.FixtureRequest):
    """The test module's notebook (its ``NOTEBOOK`` name), opened and run; closed afterwards."""
    page = open_notebook(request.module.NOTEBOOK)
    yield page
    page.close()


@pytest.fixture(scope="session")
def save_screenshot(request: pytest.FixtureRequest) -> Callable[[NotebookPage, object, str], bool]:
    """``save_screenshot(nb, locator, stem)``: docs/img/<stem>.png, with --update-screenshots."""
    update = bool(request.config.getoption("--update-screenshots"))

    def _save(nb: NotebookPage, locator: object, stem: str) -> bool:
        if not update:
            return False
        nb.screenshot(locator, IMG_DIR / f"{stem}.png")
        return True

    return _save
