"""Record rules of the log reader: Megatron iteration lines, HF Trainer dicts, generic
``loss:`` / ``grad_norm`` / ``loss scale`` fields (at most one record per segment).

Values are read with ``float()`` on matched digits; nothing is evaluated.
"""

from __future__ import annotations

import math
import re

from fampnb._logevent import NUM as _NUM
from fampnb._logevent import Event, LineState, _c, _f

__all__ = ["records", "hf", "framework_of", "pick_loss", "table_row", "kv_values", "log2_scale"]

# ---- records (at most one of each kind per segment) -----------------------------------------
_MEGATRON = _c(r"\biteration\s+\d+\s*/\s*\d+\s*\|")
#: ``| key: value |`` cells, or ``| key value |`` with a number (Megatron-LM before 2020 and its
#: forks print ``| lm loss 6.758929E+00 | loss scale 64.0 |``)
_MEG_FIELD = re.compile(r"\|\s*([A-Za-z][A-Za-z0-9 _\-()/]*?)\s*(?::\s*([^|]*?)|\s(?i:(" + _NUM
                        + r")))\s*(?=\||$)")
_HF_FIELD = _c(r"'(loss|grad_norm|learning_rate|epoch|train_loss|eval_loss)':\s*(" + _NUM + ")")
_GNORM = _c(r"\b(?:grad[_ ]?norm|gnorm)['\"]?(?:\s*[:=]\s*|\s+)(?:tensor\()?(" + _NUM + r")(?![\w.])")
_SCALE_OBS = _c(r"(?:\bloss[ _]scale|grad scale)['\"]?\s*[:=]?\s*(" + _NUM + r")(?![\w.])")
_LG_SCALE_OBS = _c(r"\b(?:lg|log2?)_loss_scale['\"]?\s*[:=]?\s*(" + _NUM + r")(?![\w.])")
_FAIRSEQ_SUMMARY = re.compile(r"\| (?:train|valid|train_inner) \||^\| epoch \d+ \|")
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
        return "caffe" if ".cpp:" in text else "keras"   # glog: Caffe's C++, else TF/absl
    return default


def records(text: str, low: str, st: LineState, ev: object, out: list[Event],
            step: int | None = None) -> None:
    """The record of a line (``step``: the step the line itself names, if any)."""
    if "iteration" in low and _MEGATRON.search(low):
        _megatron(text, st, ev)
    elif "'loss'" in low or "'grad_norm'" in low or "'train_loss'" in low:
        hf(low, st, ev)
    elif not out or out[-1].kind in ("scale", "skip"):
        _generic(text, low, st, ev, step)


def _megatron(text: str, st: LineState, ev: object) -> None:
    fields = {k.strip().lower(): v or n for k, v, n in _MEG_FIELD.findall(text)}
    loss_keys = [k for k in fields if "loss" in k and "scale" not in k]
    loss_key = _best_loss_key(loss_keys, {k: _num(fields[k]) for k in loss_keys})
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


def hf(text: str, st: LineState, ev: object) -> None:
    vals = {k: _f(v) for k, v in _HF_FIELD.findall(text)}   # (text is lower-cased)
    loss = vals.get("loss", vals.get("train_loss", vals.get("eval_loss")))
    gnorm = vals.get("grad_norm")
    if loss is None and gnorm is None:
        return
    kind = "nan" if loss is not None and not math.isfinite(loss) else "loss"
    ev(kind, "hf", "hf-dict", loss=loss, grad_norm=gnorm,
       epoch=vals.get("epoch"))  # type: ignore[operator]
    lr = vals.get("learning_rate")
    if lr is None:
        return
    before, last = st.hf_lr
    st.hf_lr = (last, lr)
    if gnorm is not None and not math.isfinite(gnorm) and lr == last and before not in (None, last):
        # a non-finite grad norm and a learning rate that stopped although it was moving: the
        # Trainer (Accelerate) skips the scheduler with the optimizer step, and only an fp16
        # loss scaler skips that (reference: "Skip detection")
        ev("skip", "hf", "lr-frozen", count=1, grad_norm=gnorm)  # type: ignore[operator]


def _generic(text: str, low: str, st: LineState, ev: object, step: int | None) -> None:
    loss, total = _find_loss(low) if "loss" in low else (None, False)
    if loss is not None:
        if total:
            st.total_step = step
        elif step is None and st.total_step is not None and st.total_step == st.step:
            # a component (``loss_cls: 0.64``) on a line of its own right after the total loss
            # of the same step (Caffe, tf-faster-rcnn print one field a line): part of that
            # record, not a record of its own
            loss = None
    g = _GNORM.search(low) if "norm" in low else None
    gnorm = _f(g.group(1)) if g else None
    s = _SCALE_OBS.search(low) if "scale" in low else None
    scale = _f(s.group(1)) if s else None
    lg2: float | None = None
    if s is None and "_loss_scale" in low:
        lg = _LG_SCALE_OBS.search(low)
        lg2 = _f(lg.group(1)) if lg else None
        scale = log2_scale(lg2) if lg2 is not None else None
    if loss is None and gnorm is None and scale is None:
        return
    fw = framework_of(text, "generic")
    if s and "grad scale" in s.group(0):
        fw = "insightface"
    if loss is not None:
        kind = "nan" if not math.isfinite(loss) else "loss"
        ev(kind, fw, "loss", loss=loss, grad_norm=gnorm, scale_after=scale,
           scale_log2=lg2)  # type: ignore[operator]
    elif gnorm is not None and not math.isfinite(gnorm):
        ev("skip", fw, "grad-norm-nonfinite", grad_norm=gnorm, scale_after=scale,
           scale_log2=lg2)  # type: ignore[operator]
    elif scale is not None:
        ev("scale", fw, "scale", scale_after=scale, scale_log2=lg2)  # type: ignore[operator]


_NUM_RX = re.compile(_NUM)
_LOSS_VAL = re.compile(r"['\"]?(?:\s*[:=]\s*|\s+is\s+|\s+)(?:tensor\()?(" + _NUM + r")(?![\w.])")
_KEYCH = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


def _find_loss(low: str) -> tuple[float | None, bool]:
    """The loss of a line with ``<key with loss>: <number>`` fields whose key is not a scale
    (``loss``, ``DLoss``, ``nll_loss``, ``loss_cls``...): the plain ``loss``/``total_loss`` field
    when there is one, else a non-finite component (mmdet prints ``loss_cls: nan``), else the
    first; and whether it is the total.  ``str.find`` for ``loss``, the key's ends by hand, one
    anchored regex per value."""
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
                if key in TOTAL_LOSS:
                    return value, True
                if first is None:
                    first = value
                if bad is None and not math.isfinite(value):
                    bad = value
        i = low.find("loss", ke)
    return (bad if bad is not None else first), False


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


# ---- which of several loss fields is the loss --------------------------------------------------
#: keys that name the total loss of a record (every other key with ``loss`` is a component)
TOTAL_LOSS = frozenset({"loss", "total_loss", "train_loss", "loss_total", "lm loss", "lm_loss",
                        "train_loss_step", "overall_loss", "train/loss", "total loss"})


def _best_loss_key(keys: list[str], values: dict[str, float | None]) -> str | None:
    """The exact total-loss key if there is one, else the first non-finite component (mmdet
    prints ``loss_cls: nan``), else the first key."""
    for k in keys:
        if k in TOTAL_LOSS:
            return k
    for k in keys:
        v = values.get(k)
        if v is not None and not math.isfinite(v):
            return k
    return keys[0] if keys else None


def pick_loss(pairs: dict[str, float]) -> float | None:
    """The loss of a record given as ``{key: value}`` (see ``_best_loss_key``)."""
    keys = [k for k in pairs if "loss" in k and "scal" not in k]
    k = _best_loss_key(keys, pairs)  # type: ignore[arg-type]
    return pairs[k] if k is not None else None


# ---- ``| key | value |`` tables (one field per line, e.g. guided-diffusion's logger) -----------
_TABLE_ROW = re.compile(r"^\|\s*([A-Za-z_][\w./\- ]*?)\s*\|\s*(\S[^|]*?)\s*\|$")
_STEP_KEYS = frozenset({"step", "steps", "global_step", "iteration", "iter", "num_updates",
                        "train/global_step", "trainer/global_step"})
#: loss scales printed as their base-2 logarithm (guided-diffusion's ``lg_loss_scale``)
LOG2_SCALE_KEYS = frozenset({"lg_loss_scale", "log2_loss_scale", "log_loss_scale", "lg_scale",
                             "log2_scale"})
_SCALE_KEYS = frozenset({"loss_scale", "loss scale", "scale", "grad_scale", "grad scale",
                         "scaler", "amp_scale"})


def table_row(text: str) -> tuple[str, str] | None:
    """``(key, value)`` of a two-cell table row ``| loss | nan |``, lower-cased; else None."""
    s = text.strip()
    if len(s) < 5 or s[0] != "|" or s[-1] != "|" or s.count("|") != 3:
        return None
    m = _TABLE_ROW.match(s)
    return (m.group(1).lower(), m.group(2).lower()) if m else None


def log2_scale(x: float) -> float:
    """The scale whose base-2 logarithm is ``x`` (0.0 below the float range, inf above it)."""
    if not math.isfinite(x):
        return x if x > 0 else 0.0
    return 2.0 ** x if x < 1024 else math.inf


def kv_values(fields: dict[str, str]) -> tuple[float | None, float | None, float | None,
                                               int | None, float | None]:
    """``(loss, grad_norm, scale, step, scale_log2)`` of a record given as ``{key: value text}``
    (``scale_log2``: the printed base-2 logarithm, where the scale is printed as one)."""
    nums: dict[str, float] = {}
    for k, v in fields.items():
        x = _num(v)
        if x is not None:
            nums[k] = x
    loss = pick_loss(nums)
    gnorm = next((v for k, v in nums.items() if "norm" in k and "grad" in k or k == "gnorm"),
                 None)
    key = next((k for k in nums if k in _SCALE_KEYS or k in LOG2_SCALE_KEYS), None)
    lg2 = nums[key] if key in LOG2_SCALE_KEYS else None
    scale = (log2_scale(nums[key]) if lg2 is not None else nums[key]) if key else None
    step_v = next((v for k, v in nums.items() if k in _STEP_KEYS and math.isfinite(v)), None)
    step = int(step_v) if step_v is not None and 0 <= step_v < 1e15 else None
    return loss, gnorm, scale, step, lg2
