"""Every notebook has a browser test module, and the README shows every notebook's screenshot."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.browser

HERE = Path(__file__).parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_every_notebook_has_a_browser_test():
    missing = [nb.name for nb in NOTEBOOKS if not list(HERE.glob(f"test_nb{nb.name[:2]}_*.py"))]
    assert not missing, f"notebooks without tests/browser/test_nbNN_*.py: {missing}"


def test_readme_shows_every_screenshot():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for nb in NOTEBOOKS:
        img = f"docs/img/{nb.stem}.png"
        assert (ROOT / img).is_file(), f"{img} missing: pytest -m browser --update-screenshots"
        assert img in readme, f"README.md does not show {img}"
