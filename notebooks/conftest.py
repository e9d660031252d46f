"""Notebook cells that need torch (tag ``needs-torch``): without torch they are reported as skipped,
saying how to enable them, as the torch tests under ``tests/`` are; with FAMPNB_STRICT=1 (set by
``.ci/run``) they run, and fail for the output they do not print.  Such a cell guards itself (``if torch is not None:``) and prints
what it checks only with torch, so without it there is nothing to compare its stored output with;
the cells around it (the exact numbers worked out without torch) run and are checked either way."""

from __future__ import annotations

import importlib.util
import os

import pytest

TAG = "needs-torch"
HOW = "torch is not installed; enable with: make torch (requirements/torch.txt, the CPU build)"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if importlib.util.find_spec("torch") is not None or os.environ.get("FAMPNB_STRICT") == "1":
        return
    for item in items:
        cell = getattr(item, "cell", None)
        if cell is None or TAG not in cell.get("metadata", {}).get("tags", []):
            continue
        item.add_marker(pytest.mark.skip(reason=HOW))
