"""Bit explorer (notebook 01): a value, a format -> its bits, stored value, neighbours, ulp, zone.

``make_bit_explorer()`` returns ``(ui, controls, artists)``.  Controls (CSS class
``fampnb-bits-<key>``): ``value`` (text box: ``65504``, ``1e-8``, ``2**-20``, ``-3.5``, ``inf``,
``nan``, or a bit pattern ``0x7bff`` of the chosen format), ``magnitude`` (log2 slider of |value|),
``sign`` (+/−) and ``format``.  Text outputs: ``artists["readout_text"]`` (bits, stored value,
neighbours, ulp, zone, relative error) and ``artists["status_text"]`` (notes and error messages).
Every number comes from ``fampnb.formats.Format.decompose``.
"""

from __future__ import annotations

import html
import math
import re
from typing import Any

from .. import formats as F
from ..i18n import t
from ..plots.common import BIT_COLORS, ZONE_COLORS
from ..plots.formats import draw_bits, draw_number_line, update_bits, update_number_line
from .base import LiveFigure, guard, status_line, tag

__all__ = ["make_bit_explorer", "parse_value", "FORMAT_CHOICES", "SnapGuard"]

NAME = "bits"
#: format names offered by the explorer, in display order
FORMAT_CHOICES = ("fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2")
_SLIDER_MIN, _SLIDER_MAX = -152, 130  # log2 |value|: fp32's whole range and a bit beyond
_POW = re.compile(r"^([+-]?)\s*(?:(\d+(?:\.\d*)?(?:e[+-]?\d+)?)\s*\*\s*)?2\s*(?:\*\*|\^)\s*"
                  r"\(?\s*([+-]?\d+)\s*\)?$", re.IGNORECASE)


def parse_value(text: str, fmt: Any = None) -> float:
    """Read what a reader typed: a decimal (``65504``, ``1e-8``, ``-3.5``, ``inf``, ``nan``), a
    power of two (``2**-20``, ``2^-20``, ``3*2**-20``, ``-2**15``), or a bit pattern ``0x...`` of
    ``fmt`` (decoded by ``Format.decode``).  ValueError with a hint for anything else."""
    t = str(text).strip().replace("_", "").replace("−", "-").replace(" ", "")
    if not t:
        raise ValueError("empty value: type a number such as 65504, 1e-8, 2**-20 or 0x3c00")
    if t.lower().startswith("0x"):
        if fmt is None:
            raise ValueError("a bit pattern 0x... needs a format")
        try:
            code = int(t, 16)
        except ValueError:
            raise ValueError(f"{text!r} is not a hexadecimal bit pattern") from None
        return F.get(fmt).decode(code)
    m = _POW.match(t)
    if m:
        sign, mult, exp = m.groups()
        k = int(exp)
        if abs(k) > 1100:
            raise ValueError(f"2**{k} is beyond float64; use an exponent between -1074 and 1023")
        v = math.ldexp(float(mult) if mult else 1.0, k)
        return -v if sign == "-" else v
    try:
        return float(t)
    except ValueError:
        raise ValueError(f"could not read {text!r} as a number: type e.g. 65504, 1e-8, 2**-20, "
                         "-3.5 or 0x3c00") from None


class SnapGuard:
    """Tell a log slider's *echo* from a reader's move.

    The browser snaps a ``FloatLogSlider`` value to its grid (``base ** (min + k * step)``) when
    the kernel sets it (on first render, or when a typed value moves the slider) and sends the
    snapped value back: 65510 would come back as 2**16.  ``expect(v)`` records a value the kernel
    set; ``is_echo(new)`` is True (once) when ``new`` lies within half a step of it, so the exact
    value is kept.  A reader's move is at least one step, or lands anywhere: it passes.
    """

    def __init__(self, slider: Any) -> None:
        self.slider = slider
        self.expected: float | None = None

    def expect(self, value: float) -> None:
        self.expected = float(value)

    def is_echo(self, new: float) -> bool:
        exp, self.expected = self.expected, None
        if exp is None or not (math.isfinite(new) and new > 0 and exp > 0):
            return False
        dist = abs(math.log(new) - math.log(exp)) / math.log(self.slider.base)
        return dist <= self.slider.step / 2 + 1e-9


def _fmt_num(x: float) -> str:
    if math.isnan(x):
        return "nan"
    return repr(float(x))


def _bits_html(b: Any) -> str:
    spans = [(str(b.sign), "sign"), (b.exponent_bits, "exponent"), (b.mantissa_bits, "mantissa")]
    return " ".join(f'<span style="color:{BIT_COLORS[k]};font-weight:bold">{v}</span>'
                    for v, k in spans)


def _zone_text(zone: F.Zone) -> tuple[str, str]:
    """The zone's name and what it means, in the current language (``fampnb.i18n``)."""
    key = zone.name.lower()
    return t(f"widget.bits.zone.{key}"), t(f"widget.bits.zone.{key}.why")

_ZONE_COLOR = {F.Zone.NORMAL: "normal", F.Zone.SUBNORMAL: "subnormal", F.Zone.UNDERFLOW: "zero",
               F.Zone.ZERO: "zero", F.Zone.OVERFLOW: "overflow", F.Zone.NAN: "nan"}


def readout_html(b: Any) -> str:
    """The numbers of ``b`` (a ``formats.Bits``) as a small HTML table."""
    fmt = F.get(b.format_name)
    zname, zwhy = _zone_text(b.zone)
    zcol = ZONE_COLORS[_ZONE_COLOR[b.zone]]
    rel = b.rel_error
    rel_s = "nan" if math.isnan(rel) else ("inf" if math.isinf(rel) else f"{rel:.3g}")
    rows = [
        (t("widget.bits.row.typed"), _fmt_num(b.value)),
        (t("widget.bits.row.stored", fmt=fmt.name), f"<b>{_fmt_num(b.stored)}</b>"),
        (t("widget.bits.row.bits"), f"<code>{_bits_html(b)}</code> &nbsp; {b.hex}"),
        (t("widget.bits.row.zone"), f'<span style="background:{zcol};padding:0 4px">{zname}</span> — {zwhy}'),
        (t("widget.bits.row.neighbours"), f"{_fmt_num(b.next_down)} &nbsp;&lt;&nbsp; · "
                                          f"&nbsp;&lt;&nbsp; {_fmt_num(b.next_up)}"),
        (t("widget.bits.row.ulp"), _fmt_num(b.ulp)),
        (t("widget.bits.row.rel_error"), rel_s),
    ]
    body = "".join(f"<tr><td style='padding:1px 10px 1px 0;color:#555'>{html.escape(k)}</td>"
                   f"<td style='padding:1px 0'>{v}</td></tr>" for k, v in rows)
    return f"<table style='font-size:13px;line-height:1.35'>{body}</table>"


def _note(value: float) -> str:
    if math.isnan(value):
        return t("widget.bits.note.nan")
    if value == 0:
        return t("widget.bits.note.zero")
    if math.isinf(value):
        return t("widget.bits.note.inf")
    if value < 0:
        return t("widget.bits.note.negative")
    return ""


def make_bit_explorer(value: float = 65510.0, fmt: str = "fp16") -> tuple[Any, dict, dict]:
    """Build the bit explorer; returns ``(ui, controls, artists)`` (see the module docstring)."""
    import ipywidgets as w

    fmt_name = F.get(fmt).name
    if fmt_name not in FORMAT_CHOICES:
        raise ValueError(f"fmt must be one of {FORMAT_CHOICES}, got {fmt!r}")
    value = float(value)
    controls: dict[str, Any] = {
        "format": w.ToggleButtons(options=list(FORMAT_CHOICES), value=fmt_name,
                                  description=t("widget.bits.format"),
                                  style={"button_width": "86px", "description_width": "60px"},
                                  layout=w.Layout(width="auto")),
        "sign": w.ToggleButtons(options=[("+", 1), ("−", -1)], value=-1 if value < 0 else 1,
                                description=t("widget.bits.sign"), layout=w.Layout(width="auto"),
                                style={"button_width": "36px", "description_width": "60px"}),
        "magnitude": w.FloatLogSlider(value=_clamp_mag(value), base=2, min=_SLIDER_MIN,
                                      max=_SLIDER_MAX, step=0.05, description="|value|",
                                      readout_format=".4g", continuous_update=False,
                                      style={"description_width": "60px"},
                                      layout=w.Layout(width="640px")),
        "value": w.Text(value=repr(value), description=t("widget.bits.value"), continuous_update=False,
                        placeholder="65504, 1e-8, 2**-20, -3.5, 0x7bff",
                        style={"description_width": "50px"}, layout=w.Layout(width="300px")),
    }
    for key, c in controls.items():
        tag(c, f"{NAME}-{key}")
    status = status_line(NAME)
    tag(status, f"{NAME}-status-text")
    readout = tag(w.HTML(), f"{NAME}-readout-text")

    live = LiveFigure(figsize=(8.0, 3.3), nrows=2,
                      gridspec_kw={"height_ratios": [1.15, 1.0]})
    b0 = F.get(fmt_name).decompose(value)
    bit_art = draw_bits(live.axes[0, 0], b0)
    line_art = draw_number_line(live.axes[1, 0], fmt_name, value)
    artists: dict[str, Any] = {
        "bits": bit_art, "line": line_art, "cells": bit_art["cells"],
        "bit_texts": bit_art["texts"], "formula": bit_art["formula"],
        "typed_marker": line_art["typed"], "stored_marker": line_art["stored"],
        "readout_text": readout, "status_text": status, "figure": live.fig,
    }
    state = {"value": value, "busy": False}
    snap = SnapGuard(controls["magnitude"])
    snap.expect(controls["magnitude"].value)

    def show(v: float, note: str = "") -> None:
        fmt_ = F.get(controls["format"].value)
        b = fmt_.decompose(v)
        update_bits(bit_art, b)
        update_number_line(line_art, fmt_, v, b.stored)
        extra = note or _note(v)
        readout.value = readout_html(b) + (
            f"<div style='color:#555;font-size:12px'>{html.escape(extra)}</div>" if extra else "")
        live.refresh()
        state["value"] = v

    def set_quietly(key: str, new: Any) -> None:
        state["busy"] = True
        try:
            controls[key].value = new
        finally:
            state["busy"] = False

    def on_text(change: Any) -> None:
        if state["busy"]:
            return
        v = parse_value(change["new"], controls["format"].value)
        note = ""
        if math.isfinite(v) and v != 0:
            mag = abs(v)
            if not 2.0 ** _SLIDER_MIN <= mag <= 2.0 ** _SLIDER_MAX:
                note = "Beyond the slider's range: the slider shows the nearest end."
            snap.expect(_clamp_mag(mag))
            set_quietly("magnitude", _clamp_mag(mag))
        if not math.isnan(v):
            set_quietly("sign", -1 if math.copysign(1.0, v) < 0 else 1)
        show(v, note)

    def on_slider(change: Any) -> None:
        if state["busy"]:
            return
        mag = float(change["new"])
        if not math.isfinite(mag) or mag <= 0:
            raise ValueError(f"|value| must be a finite number > 0, got {mag!r}")
        if snap.is_echo(mag):  # the browser snapped the kernel's value to the grid: keep ours
            return
        v = controls["sign"].value * float(f"{mag:.5g}")
        set_quietly("value", repr(v))
        show(v)

    def on_sign(change: Any) -> None:
        if state["busy"]:
            return
        v = state["value"]
        v = math.copysign(v, change["new"]) if not math.isnan(v) else v
        set_quietly("value", repr(v))
        show(v)

    def on_format(change: Any) -> None:
        show(state["value"])

    controls["value"].observe(guard(status, on_text), names="value")
    controls["magnitude"].observe(guard(status, on_slider), names="value")
    controls["sign"].observe(guard(status, on_sign), names="value")
    controls["format"].observe(guard(status, on_format), names="value")
    show(value)

    ui = tag(w.VBox([
        controls["format"],
        w.HBox([controls["sign"], controls["value"]]),
        controls["magnitude"],
        live.view, readout, status,
    ]), NAME)
    return ui, controls, artists


def _clamp_mag(v: float) -> float:
    v = abs(float(v))
    if not math.isfinite(v) or v == 0:
        return 1.0
    return min(max(v, 2.0 ** _SLIDER_MIN), 2.0 ** _SLIDER_MAX)
