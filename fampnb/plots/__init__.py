"""Plotting for the notebooks: pure ``draw_*(ax, data) -> artists`` / ``update_*(artists, data)`` pairs.

matplotlib is imported only here (and in the submodules), never at ``import fampnb``.  Public names
live in the submodules and are re-exported lazily: ``fampnb.plots.draw_timeline`` etc.
"""

from __future__ import annotations

import importlib
from typing import Any

#: submodules searched, in order, for a public name
_PARTS = ("formats", "scale", "timeline", "histogram", "common")


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
