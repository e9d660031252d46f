"""Where the probes run: the device, its label, and the settings that change fp16/bf16 numerics.

torch is optional and imported inside the functions.  ``resolve_device`` picks CUDA when it is
available, else the CPU; every result says where it ran (``"cuda:0 NVIDIA ..."`` or ``"cpu"``) and
a CPU result is labelled as *not* a GPU measurement (``measurement_label``).  Without torch a
result says so (``NO_TORCH``, with an install hint) instead of raising.  ``report_lines`` is the
terminal report of every probe (``python -m fampnb probe``).  Internal to
``fampnb.probe``: the other probe modules use these helpers; other packages use the face.
"""


from __future__ import annotations

import math
import platform
import shutil
import subprocess
from typing import Any

from . import capability
from .histogram import NO_TORCH_HINT

__all__ = ["device_report", "resolve_device", "measurement_label", "NO_TORCH", "CPU_NOTE", "cast_table",
           "report_lines", "jsonable"]

NO_TORCH = "none (torch is not installed)"
CPU_NOTE = "CPU — not a GPU measurement"


def _torch() -> Any:
    """The torch module, or None when it cannot be imported."""
    try:
        import torch
    except ImportError:
        return None
    return torch


def resolve_device(device: Any = None) -> Any:
    """``torch.device``: ``device`` as given, or ``"cuda"`` when available, else ``"cpu"``."""
    import torch

    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    dev = torch.device(device)
    if dev.type == "cuda" and dev.index is None:
        dev = torch.device("cuda", torch.cuda.current_device())
    return dev


def _label(dev: Any) -> str:
    import torch

    if dev.type == "cuda":
        return f"cuda:{dev.index} {torch.cuda.get_device_name(dev.index)}"
    return str(dev)


def measurement_label(device: str) -> str:
    """The label a table carries: "CPU — not a GPU measurement", "GPU measurement on ...", or the
    no-torch line."""
    if device.startswith("none"):
        return "no device: torch is not installed (model predictions only)"
    if device.startswith("cuda"):
        return f"GPU measurement on {device}"
    return CPU_NOTE if device == "cpu" else f"{device} — not a GPU measurement"


def _no_torch(**extra: Any) -> dict[str, Any]:
    return {"device": NO_TORCH, "available": False, "measurement": measurement_label(NO_TORCH),
            "torch": None, "message": NO_TORCH_HINT, **extra}


# ------------------------------------------------------------------------------------ device
def _nvidia_smi() -> str | None:
    exe = shutil.which("nvidia-smi")
    if not exe:
        return None
    try:
        out = subprocess.run([exe, "--query-gpu=name,driver_version,memory.total,compute_cap",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def device_report(device: Any = None) -> dict[str, Any]:
    """Where the probes run and the settings that change fp16/bf16 numerics there.

    Keys: ``device`` (``"cpu"`` or ``"cuda:0 <name>"``), ``measurement``, ``torch``, ``cuda``
    (torch's CUDA version or None), ``cuda_available``, ``name``, ``compute_capability``,
    ``bf16_supported`` (native; ``bf16_emulated`` too on CUDA), ``bf16`` (one phrase: "native
    (sm_90)", "emulated (no native bf16 on sm_75)", ...), ``tf32_hardware`` (TF32 tensor cores,
    from the compute capability: sm_80+), ``tf32`` (one phrase: hardware, then settings),
    ``tf32_matmul``, ``tf32_cudnn`` (the legacy ``allow_tf32`` flags, None where torch refuses to
    report them), ``matmul_fp32_precision``, ``cudnn_fp32_precision`` (the newer settings, None
    before torch 2.9), ``float32_matmul_precision``, ``fp16_reduced_precision_reduction``,
    ``cpu_capability``, ``nvidia_smi`` (driver summary line, or None), ``python``, ``platform``.
    ``device_lines(report)`` prints it.
    """
    torch = _torch()
    if torch is None:
        return _no_torch(python=platform.python_version(), platform=platform.platform(),
                         nvidia_smi=_nvidia_smi())
    dev = resolve_device(device)
    cuda = dev.type == "cuda"
    rep: dict[str, Any] = {
        "device": _label(dev), "available": True, "measurement": measurement_label(_label(dev)),
        "torch": torch.__version__, "cuda": torch.version.cuda,
        "cuda_available": bool(torch.cuda.is_available()),
        "name": torch.cuda.get_device_name(dev.index) if cuda else (platform.processor() or "cpu"),
        "compute_capability": (".".join(map(str, torch.cuda.get_device_capability(dev.index)))
                               if cuda else None),
        "bf16_supported": None, "bf16_emulated": None,
        **capability.tf32_settings(torch),
        "float32_matmul_precision": capability.guarded(torch.get_float32_matmul_precision),
        "fp16_reduced_precision_reduction": capability.guarded(
            lambda: bool(torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction)),
        "cpu_capability": _cpu_capability(torch),
        "nvidia_smi": _nvidia_smi(),
        "python": platform.python_version(), "platform": platform.platform(),
    }
    if cuda:
        rep.update(capability.bf16_facts(torch, dev.index, rep["compute_capability"]))
    else:
        rep["bf16_supported"] = True  # CPU bf16 kernels exist (fast with AVX512-BF16/AMX)
    rep["bf16"] = capability.bf16_status(rep)
    rep["tf32_hardware"] = capability.tf32_hardware(rep["compute_capability"])
    rep["tf32"] = capability.tf32_status(rep)
    return rep


device_lines = capability.device_lines


def _cpu_capability(torch: Any) -> str | None:
    try:
        return str(torch.backends.cpu.get_cpu_capability())
    except (AttributeError, RuntimeError):
        return None


# ------------------------------------------------------------------------------------ report
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
        lines += device_lines(device)[1:]
        lines += ["", f"Casts and arithmetic  [{casts['measurement']}]"]
    lines += cast_table(casts)
    if device.get("available"):
        lines.append(f"  flushes subnormals: {casts['flushes_subnormals']}")
        lines.append(f"  undocumented disagreements: {casts['disagreements'] or 'none'}")
        if casts["documented"]:
            lines.append(f"  note ({len(casts['documented'])} rows): "
                         f"{next(r['note'] for r in casts['rows'] if r['documented'])}")
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
