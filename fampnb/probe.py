"""Hardware probes: check the fp16/bf16/fp8 models of ``fampnb.formats`` on the reader's device.

torch is optional and imported inside the functions (``import fampnb.probe`` never imports it).
Every function runs on CUDA when it is available (``device=None``), else on the CPU, and every
result says where it ran: ``"device": "cuda:0 NVIDIA ..."`` or ``"cpu"``.  A CPU result is *not* a
GPU measurement and is labelled so (``measurement``).  Without torch each function returns a result
labelled ``"none (torch is not installed)"`` with an install hint instead of raising; the model's
predictions are still filled in where they need no device.

- ``device_report()``: torch/CUDA versions, device name, compute capability, bf16 support, TF32 and
  reduced-precision settings, ``nvidia-smi`` summary when present.
- ``cast_checks(device)``: boundary casts (fp16, bf16, fp8), overflowing fp16 products, fp16
  reductions with and without fp32 accumulation, subnormal arithmetic (flush or keep), each row
  next to the model's prediction.
- ``amp_decay(device, steps)``: a tiny model trained with real ``torch.autocast`` +
  ``torch.amp.GradScaler`` whose gradients overflow fp16 at the initial scale; the real scale
  sequence next to ``fampnb.scaler.simulate`` for the same overflow pattern; the same run in bf16.
- ``grad_histogram(model, loss_fn, batch, scale)``: exact log2 histograms of gradients computed on
  the device, re-evaluable at any power-of-two scale (``GradHistogram.at``).
- ``recorded_results()``: the probes as they ran on real GPUs, shipped with the package
  (``docs/gpu-results.md``), for readers without one; ``record_lines(rec, casts)`` prints one,
  with the rows where it and this machine differ (``row_differences``).
- ``watch(model, fmt, scaler, every)``: hooks that find the first inf/NaN tensor of a training
  run (module, phase, tensor) and judge it (``fampnb._watch``; imported on first use).
- ``main(argv)``: ``python -m fampnb probe [--json]``.
"""

from __future__ import annotations

import json
import math
import platform
import shutil
import subprocess
import sys
from typing import Any

from . import _probe_casts
from ._probe_hist import NO_TORCH_HINT, GradHistogram, power_of_two_exponent
from ._probe_record import GradHistogramRecorder, grad_histogram
from ._probe_recorded import record_lines, recorded_results, row_differences

__all__ = ["device_report", "cast_checks", "amp_decay", "grad_histogram", "GradHistogram",
           "GradHistogramRecorder", "demo_problem", "resolve_device", "measurement_label",
           "cast_table", "report_lines", "NO_TORCH", "NO_TORCH_HINT", "CPU_NOTE", "main",
           "power_of_two_exponent", "recorded_results", "record_lines", "row_differences"]

#: names served lazily from fampnb._watch (``fampnb.probe.watch``)
_WATCH_NAMES = frozenset({"watch", "Watch", "Origin", "Near", "StepSummary"})


def __getattr__(name: str) -> Any:
    if name in _WATCH_NAMES:
        from . import _watch

        return getattr(_watch, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


# ------------------------------------------------------------------------------------ casts
def cast_checks(device: Any = None) -> dict[str, Any]:
    """Boundary casts and fp16/bf16/fp32 arithmetic on the device, next to the exact model.

    ``rows``: dicts with ``kind`` ("cast", "product", "reduction", "subnormal"), ``label``,
    ``value`` (the fp32 input), ``dtype``, ``device_result``, ``model_result``, ``agree``,
    ``documented`` (a disagreement explained by a documented stack difference: torch >= 2.12
    saturates e4m3fn overflow to ±448 where ml_dtypes gives NaN) and ``note``.
    ``flushes_subnormals``: per dtype, whether the device flushed a subnormal the model keeps.
    ``disagreements``: labels of rows that disagree and are not documented.  Without torch, the
    rows carry the model's predictions and ``device_result`` None.
    """
    torch = _torch()
    if torch is None:
        rows = _probe_casts.cast_rows(None, None) + _probe_casts.arithmetic_rows(None, None)
        return _no_torch(rows=rows, flushes_subnormals=_probe_casts.flush_summary(rows),
                         disagreements=[], documented=[])
    dev = resolve_device(device)
    rows = _probe_casts.cast_rows(torch, dev) + _probe_casts.arithmetic_rows(torch, dev)
    label = _label(dev)
    return {
        "device": label, "available": True, "measurement": measurement_label(label),
        "torch": torch.__version__, "rows": rows,
        "flushes_subnormals": _probe_casts.flush_summary(rows),
        "disagreements": [r["label"] for r in rows if r["agree"] is False and not r["documented"]],
        "documented": [r["label"] for r in rows if r["documented"]],
    }


# ------------------------------------------------------------------------------------ AMP
AMP_INIT_SCALE = 2.0 ** 16
AMP_GROWTH_INTERVAL = 2


def _amp_model(torch: Any, dev: Any) -> tuple[Any, Any, Any]:
    """Tiny MLP (8-16-1, 161 parameters) and a batch whose fp16 weight gradients overflow at
    scale 2**15 and above but fit at 2**14 (so the scaler settles into a saw-tooth).  Seeded with a
    local generator: no global RNG state is touched."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, 8, generator=g) * 2
    y = torch.randn(16, 1, generator=g) * 2
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    gw = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gw) * 0.5)
    return model.to(dev), x.to(dev), y.to(dev)


def _amp_run(torch: Any, dev: Any, dtype: Any, steps: int, scaler_on: bool) -> dict[str, Any]:
    model, x, y = _amp_model(torch, dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler(dev.type, init_scale=AMP_INIT_SCALE,
                                  growth_interval=AMP_GROWTH_INTERVAL, enabled=scaler_on)
    scales, found, losses, gmax = [], [], [], []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        with torch.autocast(dev.type, dtype=dtype):
            out = model(x)
        loss = torch.nn.functional.mse_loss(out.float(), y)
        scales.append(float(scaler.get_scale()) if scaler_on else 1.0)
        scaler.scale(loss).backward()
        grads = [p.grad for p in model.parameters()]
        finite = torch.stack([torch.isfinite(gr).all() for gr in grads]).all()
        amax = torch.stack([gr.abs().max() for gr in grads]).max()
        found.append(not bool(finite))
        gmax.append(float(amax) / scales[-1])
        losses.append(float(loss.detach()))
        scaler.step(opt)
        scaler.update()
    return {"scales": scales, "found_inf": found, "losses": losses,
            "final_scale": float(scaler.get_scale()) if scaler_on else 1.0,
            "grad_abs_max": gmax}


def amp_decay(device: Any = None, steps: int = 8) -> dict[str, Any]:
    """Real ``torch.autocast`` + ``torch.amp.GradScaler`` on the device, next to the simulator.

    A tiny model (``_amp_model``) trains ``steps`` SGD steps with fp16 autocast and
    ``GradScaler(init_scale=2**16, growth_interval=2)``: its weight gradients exceed 65504 at the
    start scale, so the scaler backs off until they fit, then grows and backs off again.  Returned:
    ``scales`` (the real scale in force at each step), ``found_inf`` (non-finite gradients, checked
    independently of the scaler), ``simulated`` (``fampnb.scaler.simulate`` of
    ``TorchGradScaler`` with the same settings on that ``found_inf`` pattern), ``match``,
    ``losses``,
    ``grad_abs_max`` (unscaled; inf on overflowed steps), and ``bf16``: the same run under bf16
    autocast without a scaler (``scales`` all 1.0; ``found_inf`` should be all False).
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be an integer >= 1, got {steps!r}")
    settings = {"init_scale": AMP_INIT_SCALE, "growth_factor": 2.0, "backoff_factor": 0.5,
                "growth_interval": AMP_GROWTH_INTERVAL}
    torch = _torch()
    if torch is None:
        return _no_torch(steps=steps, settings=settings, scales=None, found_inf=None,
                         simulated=None, match=None, bf16=None)
    dev = resolve_device(device)
    label = _label(dev)
    fp16 = _amp_run(torch, dev, torch.float16, steps, True)
    try:
        bf16: dict[str, Any] = _amp_run(torch, dev, torch.bfloat16, steps, False)
        bf16.pop("scales")
        bf16.pop("final_scale")
    except RuntimeError as exc:  # e.g. a GPU without bf16 support
        bf16 = {"error": str(exc).splitlines()[0][:200]}
    simulated, sim_note = _simulate(fp16["found_inf"], settings)
    return {
        "device": label, "available": True, "measurement": measurement_label(label),
        "torch": torch.__version__, "steps": steps, "settings": settings, **fp16,
        "simulated": simulated,
        "match": None if simulated is None else simulated == fp16["scales"],
        "simulator_note": sim_note, "bf16": bf16,
    }


def _simulate(found_inf: list[bool], settings: dict[str, Any]) -> tuple[list[float] | None, str]:
    try:
        from . import scaler
    except ImportError as exc:  # the simulator module is optional for the probe
        return None, f"fampnb.scaler is not available: {exc}"
    trace = scaler.simulate(scaler.TorchGradScaler(**settings), found_inf=found_inf)
    note = "fampnb.scaler.simulate(TorchGradScaler, found_inf=...)"
    return [float(s) for s in trace.scales], note


# ------------------------------------------------------------------------------------ demo
def demo_problem(device: Any = None, seed: int = 0, warmup_steps: int = 40) -> tuple[Any, Any, Any]:
    """The gradient-histogram demo: ``(model, loss_fn, batch)`` on the device.

    A small MLP (32-64-64-8, ReLU, 6,792 parameters) regressing a fixed random "teacher" on 256
    synthetic samples; targets are small (|y| <= 0.02) and the output layer starts small, as is
    common, so the loss gradients are small.  It is trained ``warmup_steps`` Adam steps in fp32, so
    its gradients are mid-training ones, spread over ~24 octaves with a tail below fp16's 2**-24.
    Seeded with a local generator (the global RNG is untouched); milliseconds on a CPU.
    """
    import torch

    dev = resolve_device(device)
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(256, 32, generator=g)
    teacher = torch.randn(32, 8, generator=g)
    y = torch.tanh(x @ teacher / 6) * 0.02
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64),
                                torch.nn.ReLU(), torch.nn.Linear(64, 8))
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            fan_in = p.shape[-1] if p.dim() > 1 else 64
            p.copy_(torch.randn(p.shape, generator=g) / math.sqrt(fan_in) * (1e-2 if i >= 4 else 1))
    model = model.to(dev)
    batch = (x.to(dev), y.to(dev))
    loss_fn = torch.nn.functional.mse_loss
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(warmup_steps):
        opt.zero_grad(set_to_none=True)
        loss_fn(model(batch[0]), batch[1]).backward()
        opt.step()
    model.zero_grad(set_to_none=True)
    return model, loss_fn, batch


# ------------------------------------------------------------------------------------ CLI
def _fmt(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return str(v)
        return f"{v:.10g}"
    return str(v)


def _jsonable(obj: Any) -> Any:
    """Non-finite floats become the strings "inf", "-inf", "nan" (strict JSON has none)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
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
                         f"{_probe_casts.E4M3_SATURATION_NOTE}")
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
        print(json.dumps(_jsonable({"device": device, "cast_checks": casts, "amp_decay": amp})))
    else:
        print("\n".join(report_lines(device, casts, amp)))
    return 0
