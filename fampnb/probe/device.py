"""Where the probes run: the device, its label, and the settings that change fp16/bf16 numerics.

torch is optional and imported inside the functions.  ``resolve_device`` picks CUDA when it is
available, else the CPU; every result says where it ran (``"cuda:0 NVIDIA ..."`` or ``"cpu"``) and
a CPU result is labelled as *not* a GPU measurement (``measurement_label``).  Without torch a
result says so (``NO_TORCH``, with an install hint) instead of raising.  Internal to
``fampnb.probe``: the other probe modules use these helpers; other packages use the face.
"""


from __future__ import annotations

import platform
import shutil
import subprocess
from typing import Any

from .histogram import NO_TORCH_HINT

__all__ = ["device_report", "resolve_device", "measurement_label", "NO_TORCH", "CPU_NOTE"]

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
    ``bf16_supported`` (native; ``bf16_emulated`` too on CUDA), ``tf32_matmul``, ``tf32_cudnn``,
    ``float32_matmul_precision``, ``fp16_reduced_precision_reduction``, ``cpu_capability``,
    ``nvidia_smi`` (driver summary line, or None), ``python``, ``platform``.
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
        "tf32_matmul": bool(torch.backends.cuda.matmul.allow_tf32),
        "tf32_cudnn": bool(torch.backends.cudnn.allow_tf32),
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "fp16_reduced_precision_reduction":
            bool(torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction),
        "cpu_capability": _cpu_capability(torch),
        "nvidia_smi": _nvidia_smi(),
        "python": platform.python_version(), "platform": platform.platform(),
    }
    if cuda:
        try:
            rep["bf16_supported"] = bool(torch.cuda.is_bf16_supported(including_emulation=False))
            rep["bf16_emulated"] = bool(torch.cuda.is_bf16_supported(including_emulation=True))
        except TypeError:  # older torch: no including_emulation argument
            rep["bf16_supported"] = bool(torch.cuda.is_bf16_supported())
    else:
        rep["bf16_supported"] = True  # CPU bf16 kernels exist (fast with AVX512-BF16/AMX)
    return rep


def _cpu_capability(torch: Any) -> str | None:
    try:
        return str(torch.backends.cpu.get_cpu_capability())
    except (AttributeError, RuntimeError):
        return None
