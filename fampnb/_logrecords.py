"""Record rules of the log reader: Megatron iteration lines, HF Trainer dicts, generic
``loss:`` / ``grad_norm`` / ``loss scale`` fields (at most one record per segment).

Values are read with ``float()`` on matched digits; nothing is evaluated.
"""

from __future__ import annotations

import math
import re

from fampnb._logevent import NUM as _NUM
from fampnb._logevent import Event, LineState, _c, _f

__all__ = ["records", "framework_of"]

# ---- records (at most one of each kind per segment) -----------------------------------------
_MEGATRON = _c(r"\biteration\s+\d+\s*/\s*\d+\s*\|")
_MEG_FIELD = re.compile(r"\|\s*([A-Za-z][A-Za-z0-9 _\-()/]*?)\s*:\s*([^|]*?)\s*(?=\||$)")
_HF_FIELD = _c(r"'(loss|grad_norm|learning_rate|epoch|train_loss|eval_loss)':\s*(" + _NUM + ")")
_GNORM = _c(r"\b(?:grad[_ ]?norm|gnorm)['\"]?(?:\s*[:=]\s*|\s+)(?:tensor\()?(" + _NUM + r")(?![\w.])")
_SCALE_OBS = _c(r"(?:\bloss[ _]scale|grad scale)['\"]?\s*[:=]?\s*(" + _NUM + r")(?![\w.])")
_FAIRSEQ_SUMMARY = re.compile(r"\| (?:train|valid|train_inner) \|")
_GLOG = re.compile(r"^[IWEF]\d{4} \d\d:\d\d")

def framework_of(text: str, default: str) -> str:
    low = text.lower()
    if "mmengine" in low or "mmdet" in low:
        return "mmengine"
    if "v_num" in low or "lightning" in low:
        return "lightning"
    if "fairseq" in low or "train_inner" in low or _FAIRSEQ_SUMMARY.search(text):
        return "fairseq"
    if _GLOG.match(text):
        return "keras"
    return default


def records(text: str, low: str, st: LineState, ev: object, out: list[Event]) -> None:
    if "iteration" in low and _MEGATRON.search(low):
        _megatron(text, st, ev)
    elif "'loss'" in low or "'grad_norm'" in low or "'train_loss'" in low:
        _hf(low, st, ev)
    elif not out or out[-1].kind in ("scale", "skip"):
        _generic(text, low, st, ev)


def _megatron(text: str, st: LineState, ev: object) -> None:
    fields = {k.strip().lower(): v for k, v in _MEG_FIELD.findall(text)}
    loss_key = next((k for k in fields if "loss" in k and "scale" not in k), None)
    scale = _num(fields.get("loss scale"))
    gnorm = _num(fields.get("grad norm"))
    skipped = _int(fields.get("number of skipped iterations"))
    nans = _int(fields.get("number of nan iterations"))
    emit = ev  # type: ignore[assignment]
    if loss_key is not None:
        loss = _num(fields[loss_key])
        kind = "nan" if loss is None or not math.isfinite(loss) or (nans or 0) > 0 else "loss"
        emit(kind, "megatron", "megatron-loss", loss=loss if loss is not None else math.nan,
             grad_norm=gnorm, scale_after=scale, count=skipped)  # type: ignore[operator]
    elif scale is not None or gnorm is not None or skipped is not None:
        # the loss key is printed before ``loss scale``: absent here means it vanished (NaN),
        # unless every iteration of the interval was skipped (skip counter > 0)
        if skipped:
            emit("skip", "megatron", "megatron-all-skipped", scale_after=scale, grad_norm=gnorm,
                 count=skipped)  # type: ignore[operator]
        else:
            emit("nan", "megatron", "megatron-loss-missing", loss=math.nan, scale_after=scale,
                 grad_norm=gnorm, count=skipped)  # type: ignore[operator]
    if scale is not None:
        st.seen["megatron-scale"] = 1


def _hf(text: str, st: LineState, ev: object) -> None:
    vals = {k.lower(): _f(v) for k, v in _HF_FIELD.findall(text)}
    loss = vals.get("loss", vals.get("train_loss", vals.get("eval_loss")))
    gnorm = vals.get("grad_norm")
    if loss is None and gnorm is None:
        return
    kind = "nan" if loss is not None and not math.isfinite(loss) else "loss"
    ev(kind, "hf", "hf-dict", loss=loss, grad_norm=gnorm)  # type: ignore[operator]


def _generic(text: str, low: str, st: LineState, ev: object) -> None:
    loss: float | None = None
    if "loss" in low:
        loss = _find_loss(low)
    g = _GNORM.search(low) if "norm" in low else None
    gnorm = _f(g.group(1)) if g else None
    s = _SCALE_OBS.search(low) if "scale" in low else None
    scale = _f(s.group(1)) if s else None
    if loss is None and gnorm is None and scale is None:
        return
    fw = framework_of(text, "generic")
    if s and "grad scale" in s.group(0):
        fw = "insightface"
    if loss is not None:
        kind = "nan" if not math.isfinite(loss) else "loss"
        ev(kind, fw, "loss", loss=loss, grad_norm=gnorm, scale_after=scale)  # type: ignore[operator]
    elif gnorm is not None and not math.isfinite(gnorm):
        ev("skip", fw, "grad-norm-nonfinite", grad_norm=gnorm, scale_after=scale)  # type: ignore[operator]
    elif scale is not None:
        ev("scale", fw, "scale", scale_after=scale)  # type: ignore[operator]


_NUM_RX = re.compile(_NUM)
_LOSS_VAL = re.compile(r"['\"]?(?:\s*[:=]\s*|\s+is\s+|\s+)(?:tensor\()?(" + _NUM + r")(?![\w.])")
_KEYCH = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


def _find_loss(low: str) -> float | None:
    """The loss of a line with ``<key with loss>: <number>`` fields whose key is not a scale
    (``loss``, ``DLoss``, ``nll_loss``, ``loss_cls``...): the plain ``loss``/``total_loss`` field
    when there is one, else a non-finite component (mmdet prints ``loss_cls: nan``), else the
    first.  ``str.find`` for ``loss``, the key's ends by hand, one anchored regex per value."""
    first: float | None = None
    bad: float | None = None
    i = low.find("loss")
    while i >= 0:
        ks = i
        while ks > 0 and low[ks - 1] in _KEYCH:
            ks -= 1
        ke = i + 4
        while ke < len(low) and low[ke] in _KEYCH:
            ke += 1
        key = low[ks:ke]
        if "scal" not in key:
            m = _LOSS_VAL.match(low, ke)
            if m:
                value = _f(m.group(1))
                if key in ("loss", "total_loss", "train_loss"):
                    return value
                if first is None:
                    first = value
                if bad is None and not math.isfinite(value):
                    bad = value
        i = low.find("loss", ke)
    return bad if bad is not None else first


def _num(text: str | None) -> float | None:
    if text is None:
        return None
    m = _NUM_RX.match(text.strip().lower())
    return _f(m.group(0)) if m else None


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    m = re.match(r"\d+", text.strip())
    return int(m.group(0)[:12]) if m else None
