"""Probe results recorded on real GPUs (internal to ``fampnb.probe``; re-exported there).

``tools/gpu_check.sh`` runs the probes on a GPU machine; ``tools/gpu_results.py record`` stores what
they printed as ``fampnb/data/gpu/<device>.json`` (so a reader on a CPU runtime, on Colab too, can
see what real hardware did, labelled with where and when), and renders ``docs/gpu-results.md``.
Each record: ``recorded`` (ISO date), ``source`` (how it was made), ``versions`` (the stack there),
``probe`` (``python -m fampnb probe --json`` there), ``cpu_reference`` (the same cast rows run on a
CPU by ``record``, with the stack CI uses), ``bench_probe`` and ``checks`` (the text of the hook
benchmark and the other checks run there).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

__all__ = ["recorded_results"]

_NON_FINITE = {"inf": float("inf"), "-inf": float("-inf"), "nan": float("nan")}


def _restore(obj: Any) -> Any:
    """Undo ``probe._jsonable``: the strings "inf", "-inf" and "nan" become floats again."""
    if isinstance(obj, str):
        return _NON_FINITE.get(obj, obj)
    if isinstance(obj, dict):
        return {k: _restore(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_restore(v) for v in obj]
    return obj


def recorded_results() -> list[dict[str, Any]]:
    """Every recorded GPU result shipped with the package, oldest first (by ``recorded``)."""
    folder = resources.files("fampnb").joinpath("data").joinpath("gpu")
    if not folder.is_dir():
        return []
    out = [_restore(json.loads(f.read_text(encoding="utf-8")))
           for f in folder.iterdir() if f.name.endswith(".json")]
    return sorted(out, key=lambda r: (r["recorded"], r["probe"]["device"]["device"]))
