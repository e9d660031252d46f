"""Cast, product, reduction and subnormal checks on a torch device, next to ``fampnb.formats``.

Internal to ``fampnb.probe``.  Every row holds the value(s) that went in, the dtype, what the device
gave (``device_result``), what the exact model predicts (``model_result``, from ``fampnb.formats`` /
numpy / ml_dtypes on the CPU) and ``agree``.  Device results are moved to the host *before* being
widened (``.cpu()`` first), so the only conversion done on the device is the one under test.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..formats import BF16, FP8_E4M3, FP8_E5M2, FP16, FP32, Format
from .device import _label, _no_torch, _torch, measurement_label, resolve_device

#: the one documented stack difference (pytorch PR #178817, torch 2.12; ml_dtypes 0.6/0.7 cast
#: e4m3fn overflow to NaN)
E4M3_SATURATION_NOTE = (
    "documented stack difference: torch >= 2.12 saturates float8_e4m3fn overflow to ±448 "
    "(pytorch PR #178817; older torch gave NaN); ml_dtypes, the model, gives NaN "
    "(e4m3fn has no inf)")

_TORCH_DTYPE = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16",
                "fp8_e4m3": "float8_e4m3fn", "fp8_e5m2": "float8_e5m2"}


def _same(a: float | None, b: float | None) -> bool | None:
    if a is None or b is None:
        return None
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def _f32(x: float) -> float:
    return float(np.float32(x))


def _cast_cases() -> list[tuple[str, float, Format]]:
    """(label, input value, target format); inputs are fp32 values, as in a training step."""
    bf16_thr = BF16.overflow_threshold
    return [
        ("65504 (fp16 max)", 65504.0, FP16),
        ("65519.99", 65519.99, FP16),
        ("65520 (fp16 overflow threshold)", 65520.0, FP16),
        ("70000", 70000.0, FP16),
        ("-65520", -65520.0, FP16),
        ("2^-14 (fp16 min normal)", 2.0 ** -14, FP16),
        ("2^-20 (subnormal)", 2.0 ** -20, FP16),
        ("2^-24 (fp16 min subnormal)", 2.0 ** -24, FP16),
        ("2^-25 (tie: rounds to 0)", 2.0 ** -25, FP16),
        ("2^-25 * 1.0001", 2.0 ** -25 * 1.0001, FP16),
        ("bf16 max", BF16.max, BF16),
        ("bf16 overflow threshold", bf16_thr, BF16),
        ("just below bf16 threshold",
         float(np.nextafter(np.float32(bf16_thr), np.float32(0))), BF16),
        ("1e-40 (bf16 subnormal)", 1e-40, BF16),
        ("2^-134 (tie: rounds to 0)", 2.0 ** -134, BF16),
        ("448 (e4m3fn max)", 448.0, FP8_E4M3),
        ("464 (tie: to 448)", 464.0, FP8_E4M3),
        ("465", 465.0, FP8_E4M3),
        ("1000", 1000.0, FP8_E4M3),
        ("+inf", math.inf, FP8_E4M3),
        ("2^-10 (tie: rounds to 0)", 2.0 ** -10, FP8_E4M3),
        ("57344 (e5m2 max)", 57344.0, FP8_E5M2),
        ("61439", 61439.0, FP8_E5M2),
        ("61440 (tie: to inf)", 61440.0, FP8_E5M2),
        ("2^-17 (tie: rounds to 0)", 2.0 ** -17, FP8_E5M2),
    ]


def _row(kind: str, label: str, value: Any, fmt: Format, device_result: float | None,
         model_result: float, note: str = "", documented: bool = False) -> dict[str, Any]:
    return {"kind": kind, "label": label, "value": value, "dtype": _TORCH_DTYPE[fmt.name],
            "device_result": device_result, "model_result": model_result,
            "agree": _same(device_result, model_result), "documented": documented, "note": note}


def _saturation_row(row: dict[str, Any], torch_version: str | None) -> dict[str, Any]:
    """Mark an e4m3fn overflow row where the device saturated to ±448 and the model says NaN."""
    dev, mod = row["device_result"], row["model_result"]
    if (row["dtype"] == "float8_e4m3fn" and dev is not None and math.isnan(mod)
            and abs(dev) == FP8_E4M3.max and _version_at_least(torch_version, (2, 12))):
        row["documented"] = True
        row["note"] = E4M3_SATURATION_NOTE
    return row


def _version_at_least(version: str | None, want: tuple[int, int]) -> bool:
    if not version:
        return False
    try:
        major, minor = (int(p) for p in version.split("+")[0].split(".")[:2])
    except ValueError:
        return False
    return (major, minor) >= want


def cast_rows(torch: Any, dev: Any) -> list[dict[str, Any]]:
    """Cast rows; ``torch`` None gives the model's predictions only (device_result None)."""
    version = getattr(torch, "__version__", None) if torch is not None else None
    rows = []
    for label, v, fmt in _cast_cases():
        x = _f32(v)
        model = float(fmt.round(np.float32(x)))
        result: float | None = None
        note = ""
        if torch is not None:
            tdt = getattr(torch, _TORCH_DTYPE[fmt.name], None)
            if tdt is None:
                note = f"this torch has no {_TORCH_DTYPE[fmt.name]}"
            else:
                try:
                    t = torch.tensor([x], dtype=torch.float32, device=dev).to(tdt)
                    result = float(t.cpu().double().item())
                except (RuntimeError, TypeError, NotImplementedError) as exc:
                    note = f"not supported on this device: {str(exc).splitlines()[0][:120]}"
        rows.append(_saturation_row(_row("cast", label, x, fmt, result, model, note), version))
    return rows


def _run(torch: Any, fn: Callable[[], Any]) -> tuple[float | None, str]:
    if torch is None:
        return None, ""
    try:
        return float(fn().cpu().double().item()), ""
    except (RuntimeError, TypeError, NotImplementedError) as exc:
        return None, f"not supported on this device: {str(exc).splitlines()[0][:120]}"


def _np_running_sum(values: list[float], dtype: Any) -> float:
    acc = np.zeros((), dtype=dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        for v in values:
            acc = (acc + np.asarray(v, dtype=dtype)).astype(dtype)
    return float(acc)


def arithmetic_rows(torch: Any, dev: Any) -> list[dict[str, Any]]:
    """fp16 products that overflow, reductions with and without fp32 accumulation, subnormal
    arithmetic in fp16 / bf16 / fp32 (does the device flush subnormals?)."""
    rows: list[dict[str, Any]] = []

    def t(values: list[Any], dtype: str) -> Any:  # a list of floats, or of lists of them
        base = torch.tensor(values, dtype=torch.float32, device=dev)
        return base.to(getattr(torch, dtype))

    def add(kind: str, label: str, value: Any, fmt: Format, fn: Callable[[], Any],
            model: float, note: str = "") -> None:
        result, why = _run(torch, fn)
        rows.append(_row(kind, label, value, fmt, result, model, why or note))

    # -- products whose result overflows fp16 (inputs are fine) --
    add("product", "256 * 256 (fp16)", [256.0, 256.0], FP16,
        lambda: t([256.0], "float16") * t([256.0], "float16"), float(FP16.round(65536.0)))
    add("product", "300 * 300 (fp16)", [300.0, 300.0], FP16,
        lambda: t([300.0], "float16") * t([300.0], "float16"), float(FP16.round(90000.0)))
    add("product", "[200, 200] . [200, 200] (fp16 matmul)", [200.0, 200.0], FP16,
        lambda: (t([[200.0, 200.0]], "float16") @ t([[200.0], [200.0]], "float16")).reshape(-1),
        float(FP16.round(80000.0)),
        "the result itself exceeds 65504: fp32 accumulation cannot help")
    add("product", "256 * 256 (bf16)", [256.0, 256.0], BF16,
        lambda: t([256.0], "bfloat16") * t([256.0], "bfloat16"), float(BF16.round(65536.0)),
        "bf16 has fp32's exponent range: no overflow")

    # -- reductions: an fp16 accumulator overflows, an fp32 one does not --
    big = [1000.0] * 128

    def running(values: list[float]) -> Any:
        x = t(values, "float16")
        acc = x[0]
        for i in range(1, x.numel()):
            acc = acc + x[i]  # every partial sum rounded to fp16
        return acc

    add("reduction", "running fp16 sum of 128 x 1000", "1000 x 128", FP16, lambda: running(big),
        _np_running_sum(big, np.float16), "an fp16 accumulator overflows after 66 terms")
    add("reduction", "mean of 128 x 1000, fp16 tensor", "1000 x 128", FP16,
        lambda: t(big, "float16").mean(), float(FP16.round(1000.0)),
        "torch accumulates fp16 reductions in fp32: the mean (1000) fits")
    add("reduction", "mean of 128 x 1000, fp32", "1000 x 128", FP32,
        lambda: t(big, "float16").float().mean(), 1000.0)
    cancel = [60000.0, 60000.0, -60000.0, -60000.0]
    add("reduction", "running fp16 sum of [6e4, 6e4, -6e4, -6e4]", cancel, FP16,
        lambda: running(cancel), _np_running_sum(cancel, np.float16),
        "the partial sum 120000 overflows fp16")
    add("reduction", "sum of [6e4, 6e4, -6e4, -6e4], fp16 tensor", cancel, FP16,
        lambda: t(cancel, "float16").sum(), 0.0, "fp32 accumulator: exact 0")
    add("reduction", "[6e4, 6e4, -6e4, -6e4] . [1, 1, 1, 1] (fp16 matmul)", cancel, FP16,
        lambda: (t([cancel], "float16") @ t([[1.0]] * 4, "float16")).reshape(-1), 0.0,
        "0 means the matmul accumulated in fp32; inf would mean an fp16 accumulator")

    # -- subnormal arithmetic: kept (model) or flushed to zero (device?) --
    def sub(fmt: Format, dtype: str, label: str, value: Any, fn: Callable[[], Any],
            exact: float) -> None:
        add("subnormal", label, value, fmt, fn, float(fmt.round(exact)))

    e = 2.0
    sub(FP16, "float16", "2^-24 + 2^-24 (fp16)", [e ** -24, e ** -24],
        lambda: t([e ** -24], "float16") + t([e ** -24], "float16"), e ** -23)
    sub(FP16, "float16", "2^-12 * 2^-12 (fp16)", [e ** -12, e ** -12],
        lambda: t([e ** -12], "float16") * t([e ** -12], "float16"), e ** -24)
    sub(FP16, "float16", "2^-14 / 4 (fp16)", [e ** -14, 4.0],
        lambda: t([e ** -14], "float16") / 4, e ** -16)
    sub(FP16, "float16", "16 x (2^-20 * 1) (fp16 matmul)", [e ** -20] * 16,
        lambda: (t([[e ** -20] * 16], "float16") @ t([[1.0]] * 16, "float16")).reshape(-1),
        e ** -16)
    sub(BF16, "bfloat16", "2^-130 * 1 (bf16)", [e ** -130, 1.0],
        lambda: t([e ** -130], "bfloat16") * t([1.0], "bfloat16"), e ** -130)
    sub(BF16, "bfloat16", "2^-126 * 0.5 (bf16)", [e ** -126, 0.5],
        lambda: t([e ** -126], "bfloat16") * t([0.5], "bfloat16"), e ** -127)
    sub(BF16, "bfloat16", "16 x (2^-131 * 1) (bf16 matmul)", [e ** -131] * 16,
        lambda: (t([[e ** -131] * 16], "bfloat16") @ t([[1.0]] * 16, "bfloat16")).reshape(-1),
        e ** -127)
    sub(FP32, "float32", "2^-126 * 0.5 (fp32)", [e ** -126, 0.5],
        lambda: t([e ** -126], "float32") * t([0.5], "float32"), e ** -127)
    sub(FP32, "float32", "2^-140 * 1 (fp32)", [e ** -140, 1.0],
        lambda: t([e ** -140], "float32") * t([1.0], "float32"), e ** -140)
    return rows


def flush_summary(rows: list[dict[str, Any]]) -> dict[str, bool | None]:
    """Per dtype: True when any subnormal row came back 0 where the model keeps a subnormal."""
    out: dict[str, bool | None] = {}
    for r in rows:
        if r["kind"] != "subnormal":
            continue
        key = r["dtype"]
        if r["device_result"] is None:
            out.setdefault(key, None)
            continue
        flushed = r["device_result"] == 0.0 and r["model_result"] != 0.0
        out[key] = bool(out.get(key)) or flushed
    return out


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
        rows = cast_rows(None, None) + arithmetic_rows(None, None)
        return _no_torch(rows=rows, flushes_subnormals=flush_summary(rows),
                         disagreements=[], documented=[])
    dev = resolve_device(device)
    rows = cast_rows(torch, dev) + arithmetic_rows(torch, dev)
    label = _label(dev)
    return {
        "device": label, "available": True, "measurement": measurement_label(label),
        "torch": torch.__version__, "rows": rows,
        "flushes_subnormals": flush_summary(rows),
        "disagreements": [r["label"] for r in rows if r["agree"] is False and not r["documented"]],
        "documented": [r["label"] for r in rows if r["documented"]],
    }
