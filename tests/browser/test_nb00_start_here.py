"""Notebook 00 (no widget): it runs in JupyterLab without errors and shows the article's numbers."""

from __future__ import annotations

import pytest

from fampnb import seed

pytestmark = pytest.mark.browser

NOTEBOOK = "00-start-here.ipynb"
STEM = NOTEBOOK.removesuffix(".ipynb")


def test_runs_clean(nb, save_screenshot):
    rows = seed.experiment_2()
    shown = nb.root.locator(".jp-OutputArea-output", has_text=f"row 5 = {rows[4].scale}")
    assert shown.count() >= 1, f"no output shows 'row 5 = {rows[4].scale}'"
    figure = nb.root.locator(".jp-OutputArea-output:has(img)").first
    figure.wait_for()
    save_screenshot(nb, figure, STEM)
    nb.assert_clean()
