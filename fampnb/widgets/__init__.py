"""Widgets for the notebooks: ``make_*() -> (ui, controls, artists)``, wiring only.

ipywidgets and matplotlib are imported only here (and in the submodules), never at
``import fampnb``.  Public names live in the submodules and are re-exported lazily:
``fampnb.widgets.make_bit_explorer`` etc.
"""

from __future__ import annotations

from .._lazy import lazy_exports

#: submodules searched, in order, for a public name
__getattr__ = lazy_exports(
    __name__, ("bits", "thresholds", "decay", "walkthrough", "logreader", "histogram", "hazards",
               "fp8", "base"))
