"""Plotting for the notebooks: pure ``draw_*(ax, data) -> artists`` / ``update_*(artists, data)`` pairs.

matplotlib is imported only here (and in the submodules), never at ``import fampnb``.  Public names
live in the submodules and are re-exported lazily: ``fampnb.plots.draw_timeline`` etc.
"""

from __future__ import annotations

from .._lazy import lazy_exports

#: submodules searched, in order, for a public name
__getattr__ = lazy_exports(__name__, ("formats", "scale", "timeline", "histogram", "hazards",
                                      "fp8", "common"))
