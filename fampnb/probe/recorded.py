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

__all__ = ["recorded_results", "row_differences", "record_lines"]

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


def row_differences(rows: list[dict[str, Any]],
                    other_rows: list[dict[str, Any]]) -> list[tuple[dict[str, Any], float | None]]:
    """The rows whose ``device_result`` differs from the same row of ``other_rows`` (matched by
    kind, dtype and label; NaN equals NaN, the sign of zero counts), each with the other value.
    Rows missing on either side, or without a device result, are not compared."""
    from .casts import _same

    other = {(r["kind"], r["dtype"], r["label"]): r["device_result"] for r in other_rows}
    out: list[tuple[dict[str, Any], float | None]] = []
    for r in rows:
        theirs = other.get((r["kind"], r["dtype"], r["label"]))
        if _same(r["device_result"], theirs) is False:
            out.append((r, theirs))
    return out


def record_lines(rec: dict[str, Any], casts: dict[str, Any] | None = None) -> list[str]:
    """A record (``recorded_results()``) as text: where and when, agreement with the model, the
    real scaler's scales, and, given this machine's ``cast_checks``, the rows that differ here."""
    dev, rc, amp = rec["probe"]["device"], rec["probe"]["cast_checks"], rec["probe"]["amp_decay"]
    agree = sum(r["agree"] is True for r in rc["rows"])
    lines = [f"recorded {rec['recorded']} on {dev['device']} (torch {dev['torch']}, CUDA "
             f"{dev['cuda']}, compute capability {dev['compute_capability']}) — not this machine",
             f"  {agree} of {len(rc['rows'])} rows agree with the model; flushes subnormals: "
             f"{rc['flushes_subnormals']}",
             f"  real GradScaler scales: {[int(s) for s in amp['scales']]}  simulator matches: "
             f"{amp['match']}"]
    if casts is not None and casts.get("available"):
        differ = row_differences(rc["rows"], casts["rows"])
        lines.append(f"  rows where it and {casts['device']} differ: {len(differ) or 'none'}")
        lines += [f"    {r['dtype']:<14} {r['label']:<10} there {r['device_result']!s:>6}   "
                  f"here {here!s:>6}" for r, here in differ]
    return lines
