"""What a device can do in bf16 and TF32, from its compute capability.

torch's own flags say what torch *would allow*, not what the hardware does: a Colab T4 (compute
capability 7.5) reports ``bf16_supported: False`` and then runs bf16 anyway, emulated through fp32
arithmetic, and ``allow_tf32`` settings mean nothing on a GPU without TF32 tensor cores.  Native
bf16 and TF32 both arrived with Ampere (sm_80); this module turns that, and the flags torch reports,
into the lines the probe prints.  The legacy TF32 flags (``allow_tf32``) are read behind a guard:
current torch warns when they are read, and raises when the newer ``fp32_precision`` settings were
also used.  Every function takes the torch module (or a stand-in with the same attributes, as the
tests pass) and never imports it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

#: the first compute capability with native bf16 arithmetic and TF32 tensor cores (Ampere)
AMPERE = (8, 0)


def parse_capability(cc: Any) -> tuple[int, int] | None:
    """``(major, minor)`` from ``(8, 0)`` or ``"8.0"``; None for None (a CPU)."""
    if cc is None:
        return None
    if isinstance(cc, str):
        major, _, minor = cc.partition(".")
        return int(major), int(minor or 0)
    major, minor = cc
    return int(major), int(minor)


def sm_name(cc: Any) -> str:
    """``"sm_75"`` for compute capability 7.5 (``"cpu"`` for None)."""
    c = parse_capability(cc)
    return "cpu" if c is None else f"sm_{c[0]}{c[1]}"


def guarded(get: Callable[[], Any]) -> Any:
    """``get()`` with warnings silenced; None where torch has no such setting or refuses to say
    (current torch raises on a legacy read once the newer ``fp32_precision`` API was used)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = get()
        except (AttributeError, RuntimeError, TypeError, ValueError):
            return None
    return value if value is None or isinstance(value, (bool, str)) else str(value)


def tf32_settings(torch: Any) -> dict[str, Any]:
    """torch's TF32 settings, each None where this torch lacks it or will not report it.

    ``tf32_matmul`` / ``tf32_cudnn``: the legacy ``allow_tf32`` flags (bools); current torch warns
    when they are read and raises once the newer API was used, so both are read behind a guard.
    ``matmul_fp32_precision`` / ``cudnn_fp32_precision``: the newer settings (torch >= 2.9:
    ``"ieee"``, ``"tf32"``, or ``"none"`` when not set).
    """
    return {
        "tf32_matmul": guarded(lambda: bool(torch.backends.cuda.matmul.allow_tf32)),
        "tf32_cudnn": guarded(lambda: bool(torch.backends.cudnn.allow_tf32)),
        "matmul_fp32_precision": guarded(lambda: torch.backends.cuda.matmul.fp32_precision),
        "cudnn_fp32_precision": guarded(lambda: torch.backends.cudnn.conv.fp32_precision),
    }


def bf16_facts(torch: Any, index: int, cc: Any) -> dict[str, bool | None]:
    """``bf16_supported`` (native) and ``bf16_emulated`` (runs at all, natively or emulated) on CUDA
    device ``index``.  Older torch has no ``including_emulation`` argument: there native bf16 is
    read off the compute capability (sm_80 and newer)."""
    c = parse_capability(cc)
    try:
        native = bool(torch.cuda.is_bf16_supported(including_emulation=False))
        runs = bool(torch.cuda.is_bf16_supported(including_emulation=True))
    except TypeError:
        native = c is not None and c >= AMPERE
        runs = native or bool(torch.cuda.is_bf16_supported())
    return {"bf16_supported": native, "bf16_emulated": runs}


def bf16_status(rep: dict[str, Any]) -> str:
    """One phrase: ``"native (sm_90)"``, ``"emulated (no native bf16 on sm_75)"``, ``"not
    supported on sm_61"``, or, on the CPU, ``"CPU kernels"``."""
    if rep.get("compute_capability") is None:
        return "CPU kernels (fast only with AVX512-BF16 or AMX)"
    where = sm_name(rep["compute_capability"])
    if rep.get("bf16_supported"):
        return f"native ({where})"
    if rep.get("bf16_emulated"):
        return f"emulated (no native bf16 on {where})"
    return f"not supported on {where}"


def tf32_hardware(cc: Any) -> bool:
    """Does the hardware have TF32 tensor cores?  CUDA sm_80 and newer; never a CPU."""
    c = parse_capability(cc)
    return c is not None and c >= AMPERE


def _settings_phrase(rep: dict[str, Any]) -> str:
    parts = [f"matmul allow_tf32={rep.get('tf32_matmul')}",
             f"cuDNN allow_tf32={rep.get('tf32_cudnn')}"]
    if rep.get("matmul_fp32_precision") is not None:
        parts.append(f"fp32_precision matmul={rep['matmul_fp32_precision']!r} "
                     f"cuDNN={rep.get('cudnn_fp32_precision')!r}")
    return ", ".join(parts)


def tf32_status(rep: dict[str, Any]) -> str:
    """One phrase on TF32: whether the hardware has it (from the compute capability), then the
    settings, which only matter where it does."""
    cc = rep.get("compute_capability")
    settings = _settings_phrase(rep)
    if cc is None:
        return f"none on a CPU (CUDA sm_80+ only); CUDA settings: {settings}"
    where = sm_name(cc)
    if not tf32_hardware(cc):
        return (f"no TF32 on {where} (needs sm_80 or newer): fp32 matmuls run in full fp32 "
                f"whatever the settings ({settings})")
    return f"available on {where}; settings: {settings}"


def device_lines(rep: dict[str, Any]) -> list[str]:
    """The device summary the probe and notebook 06 print (from a ``device_report`` dict)."""
    if not rep.get("available"):
        return [f"device: {rep['device']}   [{rep['measurement']}]", str(rep.get("message", ""))]
    cuda = f"CUDA {rep.get('cuda')}" if rep.get("compute_capability") else "no CUDA device"
    cc = rep.get("compute_capability")
    lines = [f"device: {rep['device']}   [{rep['measurement']}]",
             f"  torch {rep.get('torch')}, {cuda}"
             + (f", compute capability {cc} ({sm_name(cc)})" if cc else ""),
             f"  bf16: {bf16_status(rep)}",
             f"  TF32: {tf32_status(rep)}",
             f"  float32_matmul_precision: {rep.get('float32_matmul_precision')}, "
             f"fp16 reduced-precision reduction: {rep.get('fp16_reduced_precision_reduction')}"]
    if rep.get("cpu_capability"):
        lines.append(f"  CPU capability: {rep['cpu_capability']}")
    if rep.get("nvidia_smi"):
        lines.append(f"  nvidia-smi: {rep['nvidia_smi']}")
    return lines
