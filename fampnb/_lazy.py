"""Lazy re-export for the ``plots`` and ``widgets`` packages (their heavy imports wait until used)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, parts: tuple[str, ...]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that finds a public name in the ``__all__`` of the submodules
    ``parts`` of ``package`` (searched in order, each imported on first need)."""

    def __getattr__(name: str) -> Any:
        if not name.startswith("_"):
            for part in parts:
                try:
                    mod = importlib.import_module(f".{part}", package)
                except ModuleNotFoundError as exc:
                    if exc.name != f"{package}.{part}":
                        raise
                    continue
                if name in getattr(mod, "__all__", ()):
                    return getattr(mod, name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
