"""Notebook 06 (no widget): the probe runs in JupyterLab (CPU here, labelled) without errors.

It needs torch (the notebook's device tables come from it): without torch it skips, naming how to
enable it, before JupyterLab opens the notebook (the ``torch`` mark, see tests/conftest.py)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.torch]

NOTEBOOK = "06-gpu-probe.ipynb"
STEM = NOTEBOOK.removesuffix(".ipynb")


def test_runs_clean(nb, save_screenshot):
    from fampnb import formats

    # the model column (fampnb.formats, identical everywhere) is printed by the notebook
    out = nb.root.locator(".jp-OutputArea-output", has_text="model predictions").first
    text = out.text_content()
    assert repr(formats.FP16.max) in text or f"{formats.FP16.max:g}" in text, text[:500]
    device = nb.root.locator(".jp-OutputArea-output", has_text="device:").first
    device.wait_for()
    table = nb.root.locator(".jp-OutputArea-output", has_text="casts and arithmetic on").first
    save_screenshot(nb, table if table.count() else device, STEM)
    nb.assert_clean()
