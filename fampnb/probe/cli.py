"""``python -m fampnb probe [--json]``: the probes' terminal report (internal to ``fampnb.probe``)."""

from __future__ import annotations

import json
import math
import sys
from typing import Any

from .amp import amp_decay
from .casts import E4M3_SATURATION_NOTE, cast_checks
from .device import device_report

__all__ = ["cast_table", "report_lines", "main", "jsonable"]


def _fmt(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return str(v)
        return f"{v:.10g}"
    return str(v)


def jsonable(obj: Any) -> Any:
    """Non-finite floats become the strings "inf", "-inf", "nan" (strict JSON has none)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    return obj


def cast_table(casts: dict[str, Any], model_only: bool = False) -> list[str]:
    """``cast_checks`` rows as aligned text lines; ``model_only`` prints the model's predictions
    only (identical on every machine, with or without torch)."""
    head = f"  {'kind':<10} {'dtype':<14} {'input':<52}"
    lines = [head + (f" {'model':>16}" if model_only
                     else f" {'device':>16} {'model':>16}  agree")]
    for r in casts["rows"]:
        row = f"  {r['kind']:<10} {r['dtype']:<14} {r['label']:<52}"
        if model_only:
            lines.append(f"{row} {_fmt(r['model_result']):>16}")
            continue
        agree = {True: "yes", False: "NO", None: "—"}[r["agree"]]
        if r["documented"]:
            agree = "no (documented)"
        lines.append(f"{row} {_fmt(r['device_result']):>16} {_fmt(r['model_result']):>16}  {agree}")
    return lines


def report_lines(device: dict[str, Any], casts: dict[str, Any], amp: dict[str, Any]) -> list[str]:
    """The terminal report of ``python -m fampnb probe``."""
    lines = [f"fampnb probe — device: {device['device']}  [{device['measurement']}]"]
    if not device.get("available"):
        lines += [device["message"], "", "Model predictions (fampnb.formats), no device result:"]
    else:
        lines.append(f"torch {device['torch']}, CUDA {device['cuda']}, compute capability "
                     f"{device['compute_capability']}, bf16 {device['bf16_supported']}, "
                     f"TF32 matmul "
                     f"{device['tf32_matmul']}, cuDNN TF32 {device['tf32_cudnn']}")
        if device.get("nvidia_smi"):
            lines.append(f"nvidia-smi: {device['nvidia_smi']}")
        lines += ["", f"Casts and arithmetic  [{casts['measurement']}]"]
    lines += cast_table(casts)
    if device.get("available"):
        lines.append(f"  flushes subnormals: {casts['flushes_subnormals']}")
        lines.append(f"  undocumented disagreements: {casts['disagreements'] or 'none'}")
        if casts["documented"]:
            lines.append(f"  note ({len(casts['documented'])} rows): "
                         f"{E4M3_SATURATION_NOTE}")
        lines += ["", f"AMP scale decay  [{amp['measurement']}]"]
        lines.append(f"  real GradScaler scales: {[_fmt(s) for s in amp['scales']]}")
        lines.append(f"  found_inf per step:     {amp['found_inf']}")
        lines.append(f"  fampnb.scaler.simulate: {[_fmt(s) for s in amp['simulated'] or []]}"
                     f"  match: {amp['match']}")
        bf = amp["bf16"]
        if "error" in bf:
            lines.append(f"  bf16 run: {bf['error']}")
        else:
            lines.append(f"  bf16 autocast, no scaler: non-finite steps "
                         f"{sum(bf['found_inf'])}/{len(bf['found_inf'])}, losses "
                         f"{[round(v, 3) for v in bf['losses']]}")
    return lines


def main(argv: list[str] | None = None) -> int:
    """``python -m fampnb probe [--json]``: exit 0 (also without torch), 2 on usage errors."""
    args = list(sys.argv[1:] if argv is None else argv)
    bad = [a for a in args if a != "--json"]
    if bad:
        print(f"fampnb probe: unknown argument {bad[0]!r}; usage: python -m fampnb probe [--json]",
              file=sys.stderr)
        return 2
    device, casts, amp = device_report(), cast_checks(), amp_decay()
    if "--json" in args:
        print(json.dumps(jsonable({"device": device, "cast_checks": casts, "amp_decay": amp})))
    else:
        print("\n".join(report_lines(device, casts, amp)))
    return 0
