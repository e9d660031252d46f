"""fampnb: why fp16/bf16 mixed-precision training turns NaN.

A small, exact helper package behind a Jupyter teaching collection.  Importing ``fampnb`` loads
nothing but this docstring; submodules are imported on first use (``fampnb.formats``,
``fampnb.scaler``, ...) so that ``import fampnb`` stays as cheap as ``import numpy`` and never pulls
in matplotlib, ipywidgets or torch.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__version__ = "0.1.0"

_SUBMODULES = frozenset(
    {"formats", "seed", "scaler", "scenarios", "logs", "diagnose", "chain", "report", "probe", "plots",
     "widgets", "cli", "data", "i18n"}
)


def __getattr__(name: str) -> ModuleType:
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'fampnb' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _SUBMODULES)
