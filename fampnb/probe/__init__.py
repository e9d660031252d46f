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
  run (module, phase, tensor) and judge it (room ``watcher``, verdict in ``verdict``; imported on
  first use).
- ``main(argv)``: ``python -m fampnb probe [--json]``.

Rooms: ``device`` (where it runs, ``device_report``; the report), ``capability`` (bf16/TF32 from
the compute capability, guarded settings), ``casts`` (``cast_checks``), ``amp``
(``amp_decay``, ``demo_problem``), ``histogram`` (``GradHistogram``), ``recorder``
(``grad_histogram``, the device-side hook), ``recorded`` (the shipped GPU records), ``cli``
(``main``).  Other packages import from here (``from fampnb.probe import GradHistogram``).
"""

from __future__ import annotations

from .amp import AMP_GROWTH_INTERVAL, AMP_INIT_SCALE, amp_decay, demo_problem
from .casts import cast_checks
from .cli import main
from .device import (
    CPU_NOTE,
    NO_TORCH,
    cast_table,
    device_lines,
    device_report,
    jsonable,
    measurement_label,
    report_lines,
    resolve_device,
)
from .histogram import NO_TORCH_HINT, GradHistogram, power_of_two_exponent
from .recorded import record_lines, recorded_results, row_differences
from .recorder import GradHistogramRecorder, grad_histogram

__all__ = ["device_report", "device_lines", "cast_checks", "amp_decay", "grad_histogram", "GradHistogram",
           "GradHistogramRecorder", "demo_problem", "resolve_device", "measurement_label",
           "cast_table", "report_lines", "NO_TORCH", "NO_TORCH_HINT", "CPU_NOTE", "main",
           "power_of_two_exponent", "recorded_results", "record_lines", "row_differences",
           "jsonable", "AMP_INIT_SCALE", "AMP_GROWTH_INTERVAL"]

#: names served lazily from the ``watcher`` room (``fampnb.probe.watch``; a room named
#: ``watch`` would shadow the function once imported)
_WATCH_NAMES = frozenset({"watch", "Watch", "Origin", "Near", "StepSummary"})


def __getattr__(name: str) -> object:
    if name in _WATCH_NAMES:
        from . import watcher as _room

        return getattr(_room, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
