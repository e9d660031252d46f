"""Widgets for the notebooks: ``make_*() -> (ui, controls, artists)``, wiring only.

ipywidgets and matplotlib are imported only here (and in the submodules), never at ``import fampnb``.  Public names
live in the submodules and are re-exported lazily: ``fampnb.widgets.make_bit_explorer`` etc.
"""

from __future__ import annotations

import importlib
from typing import Any

#: submodules searched, in order, for a public name
_PARTS = ("bits", "thresholds", "decay", "walkthrough", "logreader", "histogram", "base")


def __getattr__(name: str) -> Any:
    if not name.startswith("_"):
        for part in _PARTS:
            try:
                mod = importlib.import_module(f".{part}", __name__)
            except ModuleNotFoundError as exc:
                if exc.name != f"{__name__}.{part}":
                    raise
                continue
            if name in getattr(mod, "__all__", ()):
                return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
