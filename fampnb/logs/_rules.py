"""Line rules of the log reader: one physical-line segment -> zero or more ``Event`` objects.

Two kinds of rule: the framework message table (``fampnb.logs._messages``, one pattern per
wording of ``reference/loss-scalers.md`` section 3, searched *inside* the line: records glued to
tqdm bars, rank prefixes and timestamps are common), and the records reader (``_notation``: any
notation, its names given roles by ``_vocab``; header rows, pretty-printed JSON fields and
``| key | value |`` tables are collected into one record).  The words the message rules need are
one list (``_triggers``).  Numbers are converted with ``float()`` on matched digits only: nothing
in a log is ever evaluated.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from fampnb.logs._event import KINDS, MAX_TEXT, Event, LineState, _f, jsonable
from fampnb.logs._fields import bare_losses as _bare_losses
from fampnb.logs._fields import bare_row as _bare_row
from fampnb.logs._fields import eval_record as _eval_record
from fampnb.logs._fields import eval_rule as _eval_rule
from fampnb.logs._fields import evaluation as _evaluation
from fampnb.logs._fields import field_row as _field_row
from fampnb.logs._fields import hf_fields as _hf_fields
from fampnb.logs._fields import kv_values as _kv_values
from fampnb.logs._fields import log2_scale as _log2_scale
from fampnb.logs._fields import metrics as _metrics
from fampnb.logs._fields import numbers as _numbers
from fampnb.logs._fields import records as _records
from fampnb.logs._fields import table_row as _table_row
from fampnb.logs._fields import zero_written as _zero_written
from fampnb.logs._messages import (
    ANOMALY,
    ANOMALY_WORDS,
    APEX,
    APEX_SKIP,
    ARTICLE,
    ASSERT_ERR,
    CAI_SCALE,
    CAI_SKIP,
    CUDA_ASSERT,
    DIST_INVALID,
    DS_GRAD_OVF,
    DS_HYST,
    DS_MIN,
    DS_PROGRESS,
    DS_REDUCE,
    DYN_DOWN,
    DYN_UP,
    EVAL_BEFORE,
    FAIRSEQ,
    FASTTEXT_NAN,
    FINISHED,
    FS_OVF_ERR,
    GRAD_ERR,
    GRADS_NONFINITE,
    IPY_TRACEBACK,
    LEGACY_SCALE,
    LG_CHANGE,
    LOSS_BECAME,
    LOSS_ERR,
    MARIAN,
    MARIAN_MIN,
    MIN_REACHED,
    MISUSE,
    MISUSE_WORDS,
    MS_OVF,
    NAN_ASSERT,
    NAN_CHECK,
    NAN_DETECTED,
    NAN_FIRST,
    NAN_INPUT,
    OOM,
    OVF_EXIT,
    PADDLE_DECR,
    PREC,
    PREC_WORDS,
    PYRO_NAN,
    REACHED,
    SCALE_SMALL,
    SCHED_WARN,
    START,
    TF_CHECK,
    TF_NAN,
    TRACE_ERR,
)
from fampnb.logs._notation import fixed_row as _fixed_row
from fampnb.logs._notation import header as _header
from fampnb.logs._notation import json_field as _json_field
from fampnb.logs._notation import lower as _lower
from fampnb.logs._notation import row as _csv_row
from fampnb.logs._notation import structured_head
from fampnb.logs._steps import EPOCH as _EPOCH
from fampnb.logs._steps import LEAD_EPOCH as _LEAD_EPOCH
from fampnb.logs._steps import YOLO_EPOCH as _YOLO_EPOCH
from fampnb.logs._steps import ZH_EPOCH as _ZH_EPOCH
from fampnb.logs._steps import step_of as _step
from fampnb.logs._triggers import GATE
from fampnb.logs._vocab import LETTER_KEYS as _LETTER_KEYS
from fampnb.logs._vocab import LOG2_SCALE_KEYS as _LOG2_KEYS
from fampnb.logs._vocab import WORDS as _ROLE_WORDS
from fampnb.logs._vocab import record as _record
from fampnb.logs._vocab import role as _role
from fampnb.logs._wrap import MAX_JOINED
from fampnb.logs._wrap import join as _join
from fampnb.logs._wrap import open_array as _open_array
from fampnb.logs._wrap import wrap_head as _wrap_head

__all__ = ["Event", "LineState", "parse_segment", "finish", "jsonable", "KINDS", "PREFILTER",
           "MAX_TEXT", "structured_head", "truncated_note", "table_record"]

#: a cheap test (substring checks on the lower-cased line): lines without any of these words
#: carry nothing for the doctor
PREFILTER = tuple(dict.fromkeys(_ROLE_WORDS + (
    "scal", "overflow", "nan", "inf", ".#ind", "skipp", "error", "exception", "minimum", "hysteresis",
    "lr_scheduler", "grad", "bf16", "fp16", "float16", "16-mixed", "16bit", "precision", "fp32",
    "lr=0", "diverged", "invalid loss", "start training", "starting training",
    "training complete", "training finished", "finished training", "training done",
    "training started", "found", "assert", "traceback (most recent call last)",
    "keyboardinterrupt")))
#: an HF Trainer dict of finite numbers under the keys the dict rule reads (``_hf_plain``)
_HF_KEY_NUM = r"'(?:loss|grad_norm|learning_rate|epoch)': -?\d+(?:\.\d+)?(?:e[-+]\d+)?"
_HF_PLAIN = re.compile(r"\{" + _HF_KEY_NUM + "(?:, " + _HF_KEY_NUM + r")*\}")
#: TensorFlow 1.x's Python logger prefixes (``INFO:tensorflow:Saving checkpoints for 0 ...``)
_TF_LOGGER = ("info:tensorflow:", "warning:tensorflow:", "error:tensorflow:")
#: lines after a step named alone (``wandb:   step 458``, RSL-RL's ``Learning iteration 8391/10000``
#: above its block) whose records are at that step
STEP_LINES = 4
#: fields kept per ``| key | value |`` table (memory stays bounded on any input)
MAX_TABLE = 128
#: lines without any of these words need only the record rules (loss / scale / grad norm)
_GATE = GATE


def _word_at(low: str, word: str) -> bool:
    """Does ``word`` occur in ``low`` as a word (``nan`` but not ``nano``; ``inf`` not ``info``;
    ``nanxxx`` is one: a format's fill, ``_num.NUM``)?  A plain ``str.find`` loop: faster than a
    regex that starts with a look-behind."""
    i = low.find(word)
    n = len(word)
    while i >= 0:
        before = low[i - 1] if i else " "
        j = i + n
        while j < len(low) and low[j] == "x":
            j += 1
        after = low[j] if j < len(low) else " "
        if not before.isalpha() and not (after.isalpha() and low[i:i + 8] != "infinity"):
            return True
        i = low.find(word, i + 1)
    return False


def _gate(low: str) -> bool:
    return _has(low, _GATE) or _word_at(low, "nan") or _word_at(low, "inf")


def _has(low: str, words: tuple[str, ...]) -> bool:
    for w in words:
        if w in low:
            return True
    return False


def _scale_kind(before: float, after: float) -> str:
    if after < before:
        return "backoff"
    if after > before:
        return "growth"
    return "hysteresis"


def parse_segment(text: str, line_no: int, st: LineState) -> list[Event]:
    """Events of one segment of a physical line (see ``_parse_segment``); ``st.named`` is set
    once a loss record under a name has been read (a row of bare numbers after it is not read
    as a record: ``_fields.bare_row``)."""
    out = _parse_segment(text, line_no, st)
    if out and not st.named:
        st.named = any(e.kind in ("loss", "nan") and e.rule != "bare-row" for e in out)
    return out


def _parse_segment(text: str, line_no: int, st: LineState) -> list[Event]:
    """Events of one segment of a physical line (``\\r``-separated parts are parsed apart).

    Two-cell table rows (``| loss | nan |``) are collected in ``st`` and read as one record when
    the table ends (a line that is not a row, a gap in the line numbers, a key seen again, or
    ``finish``); at most ``MAX_TABLE`` fields are kept per table.  A line that ends inside a
    scaler wording (wrapped at the terminal width, ``fampnb.logs._wrap``) is held back for one
    segment: read joined with the next physical line when that completes the wording, else on
    its own (its events then come just before the next line's).  So is a line that ends inside an
    open array of numbers (numpy's wrap): joined with the next lines while they continue it, read
    as one record on its first line once a line closes it."""
    if st.head is not None:
        head, head_line, last_line = st.head
        st.head = None
        joined = _join(head, text) if line_no == last_line + 1 else None
        if joined is not None:
            if len(joined) < MAX_JOINED and _open_array(joined.lower()):
                st.head = (joined, head_line, line_no)    # an array wrapped over more lines
                return []
            return _segment(joined, head_line, st, False)
        return _segment(head, head_line, st, False) + parse_segment(text, line_no, st)
    if text[-1:] == ":" and text.endswith(_TB_HEAD) and len(text) > len(_TB_HEAD):
        # a traceback's header glued to the end of the line before it (a progress bar ends with
        # no newline): that line first, then the header, as two lines
        cut = len(text) - len(_TB_HEAD)
        return _segment(text[:cut], line_no, st, False) + _segment(text[cut:], line_no, st, False)
    parts = _glued(text) if text.count("/") > 1 else None
    if parts is not None:
        out: list[Event] = []
        for k, part in enumerate(parts):
            out += _segment(part, line_no, st, k == len(parts) - 1)
        return out
    return _segment(text, line_no, st, True)


_TB_HEAD = "Traceback (most recent call last):"

#: a progress update's counter (Keras ``  2/632 [....``, tqdm `` 23/27 [00:15<``)
_UPDATE = re.compile(r"(?:^|(?<=\s))\d+/(\d+) \[(?:[=>.]{3}|\d)")


def _glued(text: str) -> list[str] | None:
    """A line that holds several progress updates of one bar (the carriage returns between them
    lost in a paste: ``1/632 [...] - loss: 5.17 - ... 2/632 [...] - loss: nan``), cut before each
    update's counter; None for a line with one update."""
    found = list(_UPDATE.finditer(text))
    if len(found) < 2 or len({m.group(1) for m in found}) != 1:
        return None
    cuts = [0] + [m.start() for m in found[1:]] + [len(text)]
    return [text[a:b] for a, b in zip(cuts, cuts[1:])]


#: a format string's placeholder (``f"Loss became infinite or NaN at iteration={self.iter}!"``,
#: ``{loss:.4f}``): a line that holds one is program source (a traceback shows the ``raise`` line),
#: not output (an object printed with a space after its colon, ``{loss: 0.5}``, is output)
_PLACEHOLDER = re.compile(r"\{(?:self\.)?[A-Za-z_]\w*(?:\.\w+)*(?:![rsa])?(?::[-<>=^+#0-9.,_%a-zA-Z]*)?\}")


#: a ``raise`` statement, indented: a traceback's source line (``raise RuntimeError('loss became
#: NaN')``), program source as a placeholder's line is, not output
_RAISE = re.compile(r"\s+raise [A-Za-z_][\w.]*(?:\(|$)")


#: a row of Lightning's model summary (``1 | loss_fn  | CrossEntropyLoss   | 0      | train``: index,
#: module name, its class, its parameter count, and more cells in newer versions): no record
#: (a module named ``loss_fn`` with 0 parameters is no loss of 0)
MODEL_SUMMARY = re.compile(r"\s*\d+\s*\|\s*[\w.]+\s*\|\s*[A-Z]\w*\s*\|\s*\d[\d.,]*\s*[KMBT]?\s*(?:\|.*)?")

#: a traceback's frame line: the next line is the program's source (``_segment``)
_FRAME = re.compile(r"\s+File \"[^\"]*\", line \d+")

#: read DeepSpeed's progress lines by ``DS_LINE`` alone (the tests turn it off to compare)
FAST_DS = True


def _segment(text: str, line_no: int, st: LineState, may_wrap: bool) -> list[Event]:
    # (the line after a traceback's frame line is the program's source: its ``perplexity=30``
    # or ``loss = 0`` is code, no record; its words may still be a check, ``NAN_CHECK``)
    source = False
    if text[:1] in " \t":
        source = st.frame_line == line_no - 1
        if _FRAME.match(text):
            st.frame_line = line_no
    if text[:2] == "{'" and not st.table and _HF_PLAIN.fullmatch(text):
        return _hf_plain(text, line_no, st)
    if ("{" in text and _PLACEHOLDER.search(text)) or (text[:1] == " " and _RAISE.match(text)):
        return _finish_table(st)
    if "|" in text and text.lstrip()[:1].isdigit() and MODEL_SUMMARY.fullmatch(text):
        return _finish_table(st)
    row = _table_row(text) if "|" in text else None
    if row is None and text[:1] in " \t" and ":" in text:
        row = _field_row(text)     # one field on an indented line: a block of them is a record
    if row is None and text.lstrip()[:1] in ('"', "'"):
        row = _json_field(text.lower())      # a field of a pretty-printed JSON object (or dict)
    if row is None and st.header is not None:
        out = _header_row(text, line_no, st)
        if out is not None:
            return _finish_table(st) + out if st.table else out
    flushed: list[Event] = []
    if st.table and (row is None or line_no > st.table_line + 1 or row[0] in st.table
                     or len(st.table) >= MAX_TABLE):
        flushed = _finish_table(st)   # the table ended (a repeated key starts the next one)
    if row is not None:
        if not st.table:
            st.table_first = line_no
        st.table[row[0]] = row[1][:40]
        st.table_line = line_no
        return flushed
    low = _lower(text)
    if low.startswith(_TF_LOGGER):
        st.seen["tensorflow"] = 1       # TensorFlow's own logger: the records are a TF run's
    # (losses named by capitals, ``G: 1.51 | D: 0.21``: a record the prefilter's words miss)
    if (not _has(low, PREFILTER) and not (": " in text and _LETTER_KEYS.search(text))
            and _bare_row(low, st) is None):
        return flushed
    if flushed:
        return flushed + _segment(text, line_no, st, may_wrap)
    if "skipped=" in low and FAST_DS and (m := DS_LINE.fullmatch(low)):
        st.step, st.step_line = int(m.group(1)), line_no
        out, ev = _emitter(text, line_no, st, st.step, None)
        _ds_counter(int(m.group(2)), st, ev)
        return out
    if not source and ("loss" in low or "scale" in low or "norm" in low or "ppl" in low
                       or "xent" in low or "gpu_mem" in low or "mse" in low or "mae" in low
                       or "_error" in low):
        head = _header(low)
        if head is not None:
            st.header, st.header_text = head, low
            return flushed
    if may_wrap and _wrap_head(low):
        st.head = (text, line_no, line_no)   # read with the next line (``parse_segment``)
        return flushed
    step, total = (None, None) if source else _progress(low, line_no, st)
    out, ev = _emitter(text, line_no, st, step, total)
    if not _gate(low):
        if not source:
            _records(text, low, st, ev, out, step)
        return out

    def scaled(kind: str, before: float | None, after: float | None, fw: str, rule: str,
               log2: float | None = None) -> None:
        ev(kind, fw, rule, scale_before=before, scale_after=after, scale_log2=log2)
        if after is not None:
            st.scale = after

    for m in ARTICLE.finditer(low) if "loss scaling" in low else ():
        b, a = _f(m.group(1)), _f(m.group(2))
        note = (m.group(3) or "").lower()
        kind = _scale_kind(b, a)
        if kind == "hysteresis" and note != "overflow":
            kind = "scale"
        scaled(kind, b, a, "seed", "article")
    ds = "attempted loss scale" in low
    for m in DS_REDUCE.finditer(low) if ds else ():
        b, a = _f(m.group(1)), _f(m.group(2))
        scaled("backoff" if a < b else "hysteresis", b, a, "deepspeed", "ds-overflow")
    for m in DS_HYST.finditer(low) if ds else ():
        b = _f(m.group(1))
        scaled("hysteresis", b, b, "deepspeed", "ds-hysteresis")
    if not ds and "skipping step" in low and ("overflow!" in low or "overflow detected." in low):
        ev("skip", "deepspeed", "ds-overflow-noscale", count=1)   # non-fp16 dtype: no scales
    if "already at minimum" in low and DS_MIN.search(low):
        ev("fatal", "deepspeed", "min-scale", scale_after=st.scale)
    dyn = "dynamic loss scale" in low
    for m in DYN_DOWN.finditer(low) if dyn else ():
        scaled("backoff", _f(m.group(1)), _f(m.group(2)), "deepspeed", "dyn-reduce")
    for m in DYN_UP.finditer(low) if dyn else ():
        scaled("growth", _f(m.group(1)), _f(m.group(2)), "deepspeed", "dyn-increase")
    for m in DS_GRAD_OVF.finditer(low) if "grad overflow on" in low else ():
        ev("skip", "deepspeed", "ds-grad-overflow", step=int(m.group(1)[:12]), total=None,
           count=1, explicit=True)
        st.overflow_line = line_no
    m = LEGACY_SCALE.search(low) if "using dynamic loss scale" in low else None
    if m:
        a, prev = _f(m.group(1)), st.scale
        after_ovf = st.overflow_line is not None and 0 <= line_no - st.overflow_line <= 2
        if after_ovf or (prev is not None and a < prev):
            scaled("backoff", prev if prev is not None and prev >= a else None, a, "apex",
                   "apex-legacy-overflow")
        elif prev is not None and a > prev:
            scaled("growth", prev, a, "apex", "apex-legacy-growth")
        else:
            scaled("scale", None, a, "apex", "apex-legacy-scale")
        st.overflow_line = None
    for m in LG_CHANGE.finditer(low) if "_loss_scale" in low else ():
        lg2 = _f(m.group(2))
        a, prev = _log2_scale(lg2), st.scale
        if m.group(1).startswith(("decreas", "reduc", "lower")):
            scaled("backoff", prev if prev is not None and prev >= a else None, a, "generic",
                   "log2-scale-decrease", lg2)
        else:
            scaled("growth", prev if prev is not None and prev <= a else None, a, "generic",
                   "log2-scale-increase", lg2)
    if ("diverged" in low or "loss" in low) and (m := TF_NAN.search(low)):
        ev("nan", "keras", "tf-nan-loss", loss=math.nan, **_when(low[m.end():]))
    elif "encountered nan" in low and PYRO_NAN.search(low):
        ev("nan", "generic", "pyro-nan-loss", loss=math.nan)
    elif "encountered nan" in low and FASTTEXT_NAN.search(low):
        ev("nan", "generic", "fasttext-nan-loss", loss=math.nan)
    elif ("detected" in low or "stop training" in low) and NAN_DETECTED.search(low):
        ev("nan", "generic", "nan-detected", loss=math.nan)
    elif "first" in low and NAN_FIRST.search(low):
        ev("nan", "generic", "nan-first", loss=math.nan, step=0, explicit=True)
    if ("tensor had" in low or "summary histogram" in low or "found inf or nan" in low) \
            and TF_CHECK.search(low):
        ev("nan", "keras", "tf-check-numerics", loss=math.nan)
    if "invalid values" in low and DIST_INVALID.search(low):
        ev("nan", "generic", "nan-distribution", loss=math.nan)
    if "in a row due to overflow" in low and OVF_EXIT.search(low):
        ev("fatal", "deepspeed", "overflow-exit")
    if "assert" in low and NAN_ASSERT.search(low):
        ev("nan", "generic", "nan-kernel-assert", loss=math.nan)
    for m in APEX.finditer(low) if "reducing loss scale to" in low else ():
        a = _f(m.group(1))
        b = st.scale if st.scale is not None and st.scale >= a else None
        scaled("backoff", b, a, "apex", "apex-overflow")
    if "skipping update" in low and APEX_SKIP.search(low):
        ev("skip", "apex", "apex-skip", count=1)
    if "found" in low and CAI_SKIP.search(low):
        ev("skip", "colossalai", "colossalai-skip", count=1)
    m = CAI_SCALE.search(low) if "adjusted" in low else None
    if m:
        a, prev = _f(m.group(2)), st.scale
        if m.group(1).startswith("no"):
            scaled("growth", prev if prev is not None and prev <= a else None, a, "colossalai",
                   "colossalai-growth")
        else:
            scaled("backoff", prev if prev is not None and prev >= a else None, a, "colossalai",
                   "colossalai-backoff")
    for m in MARIAN.finditer(low) if "cost-scaling" in low else ():
        a, prev = _f(m.group(2)), st.scale
        if m.group(1) == "reduc":
            scaled("backoff", prev if prev is not None and prev >= a else None, a, "marian",
                   "marian-backoff")
        else:
            scaled("growth", prev if prev is not None and prev <= a else None, a, "marian",
                   "marian-growth")
    m = MARIAN_MIN.search(low) if "already at minimum" in low else None
    if m:       # an overflow with the factor already at its floor: it stays there
        a = _f(m.group(1))
        scaled("hysteresis", a, a, "marian", "marian-at-minimum")
    m = PADDLE_DECR.search(low) if "found inf or nan" in low else None
    if m:
        b, a = _f(m.group(1)), _f(m.group(2)) * _f(m.group(3))
        scaled("backoff" if a < b else "hysteresis", b, a, "paddle", "paddle-decrease")
    m = MS_OVF.search(low) if "overflow," in low else None
    if m:
        # an overflow record (the step dropped, or applied: ``still update``), with the scale now
        # in force where it is printed (a drop of it is a backoff, as any printed scale's)
        rule = "mindspore-overflow-applied" if m.group(1) == "still update" else "mindspore-overflow"
        ev("skip", "mindspore", rule, count=1,
           scale_after=_f(m.group(2)) if m.group(2) is not None else None)
    fs = (list(FAIRSEQ.finditer(low)) or list(FS_OVF_ERR.finditer(low))
          if "scale to" in low else [])
    for m in fs:
        a = _f(m.group(1))
        b = st.scale if st.scale is not None and st.scale >= a else None
        scaled("backoff", b, a, "fairseq", "fairseq-overflow")
    m = SCALE_SMALL.search(low) if "small" in low else None
    if m:
        x = _f(m.group(2))
        if m.group(1) or "error" in low:
            ev("fatal", "torch", "min-scale", scale_after=x)
        else:
            scaled("scale", None, x, "torch", "scale-small")
    if "amp: skipping" in low:
        ev("skip", "fairseq", "fairseq-amp-skip", count=1)
    m = MIN_REACHED.search(low) if "minimum loss scale" in low else None
    exploding = m is None and "probably exploding" in low   # the message's second sentence,
    if exploding:                                           # its head cut or wrapped away
        m = REACHED.search(low)
    if m or exploding:
        ev("fatal", "fairseq", "min-scale", scale_after=_f(m.group(1)) if m else None)
    elif "nan/inf" in low and GRADS_NONFINITE.search(low):
        ev("fatal", "fairseq", "nonfinite-grad", grad_norm=math.nan)
    elif "error" in low and "grad" in low and GRAD_ERR.search(low):
        ev("fatal", "generic", "nonfinite-grad", grad_norm=math.nan)
    elif not fs and ("error" in low or "out of range" in low):
        m = TRACE_ERR.search(low) or (LOSS_ERR.search(low) if "loss" in low and not out
                                       else None)
        if m:
            ev("fatal", "torch", (m.group(1) or "overflowerror").lower())
            if (b := LOSS_BECAME.search(low)) is not None:
                ev("nan", "torch", "loss-became-nan", loss=math.nan, **_when(low[b.end():]))
    m = DS_PROGRESS.search(low) if "skipped=" in low else None
    if m:
        _ds_counter(int(m.group(2)[:12]), st, ev)
    if ("start training" in low or "starting training" in low or "training started" in low) \
            and "epoch" not in low and "error" not in low and START.search(low):
        ev("note", "generic", "start")      # the log shows the start of training
    if "training" in low and "epoch" not in low and FINISHED.search(low):
        ev("note", "generic", "finished")   # the run says it finished
    if low.startswith(("traceback (most recent call last)", "keyboardinterrupt")):
        # an exception's traceback (the run stopped there, unless the reader pressed Ctrl-C)
        ev("note", "generic", "traceback" if low[0] == "t" else "interrupted")
    elif "traceback (most recent" in low and (m := IPY_TRACEBACK.match(low)):
        # IPython's (a notebook's) header: ``RuntimeError     Traceback (most recent call last)``
        ev("note", "generic", "interrupted" if m.group(1) == "keyboardinterrupt" else "traceback")
    elif "assertion `" in low and ".cu:" in low and CUDA_ASSERT.search(low):
        ev("note", "generic", "traceback")      # a CUDA device-side assertion stopped the process
    if "nan" in low and NAN_INPUT.search(low):
        ev("note", "generic", "nan-input")      # the log says the input holds NaN
    if ("memory" in low or "oom" in low or "exhausted" in low) and OOM.search(low):
        ev("note", "generic", "out-of-memory")  # the process ran out of memory
    if "assert" in low:     # a NaN check that failed: its source line, then ``AssertionError``
        if NAN_CHECK.search(low):
            st.nan_check = line_no
        elif (st.nan_check is not None and 0 < line_no - st.nan_check <= 3
              and ASSERT_ERR.match(low) and not ANOMALY.search(low)):
            ev("nan", "torch", "nan-assert", loss=math.nan)   # (a message saying so: ``anomaly``)
    if "lr value before" in low:
        ev("skip", "hf", "lr-zero", count=1)
    if "lr_scheduler" in low and SCHED_WARN.search(low):
        ev("skip", "torch", "sched-warning", count=1)
    if _has(low, MISUSE_WORDS) and MISUSE.search(low):
        ev("fatal", "torch", "misuse")
    if _has(low, ANOMALY_WORDS) and (m := ANOMALY.search(low)):
        if (low.startswith("loss", m.start()) and "=" not in m.group()
                and EVAL_BEFORE.search(low, 0, m.start())):
            # ``Current val loss is nan``: the evaluation's NaN (Lightning's early stopping,
            # ``val_loss = inf is not finite``, stops the run: a run-ending NaN as before)
            _eval_record(ev, math.nan)
        else:
            ev("nan", "torch", "anomaly", loss=math.nan)
    for rx, prec in PREC if _has(low, PREC_WORDS) else ():
        if rx.search(low):
            ev("scale", "generic", "precision", precision=prec)
            break

    if not source:
        _records(text, low, st, ev, out, step)
    return out


def _hf_plain(text: str, line_no: int, st: LineState) -> list[Event]:
    """What ``_segment`` makes of an HF Trainer dict of finite numbers under the keys its rule
    reads (the most common line of a Trainer log): no step, scaler wording, gate word, table or
    wrapped wording can occur in such a line, so only the dict rule applies (its events made
    as ``_emitter`` makes them: no rank prefix or step on the line, the last step named)."""
    out: list[Event] = []
    cur = st.step if st.step is not None else line_no
    short = text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "..."

    def ev(kind: str, fw: str, rule: str, **kw: Any) -> None:
        e = Event(line_no, cur, kind, framework=fw, text=short, rule=rule, **kw)
        if e.epoch is None and st.epoch is not None:
            e.epoch = st.epoch
        out.append(e)

    # (the dict's shape is known: ``'key': number`` items joined by ``, ``)
    _hf_fields([(k[1:-1], v) for k, v in (x.split(": ") for x in text[1:-1].split(", "))],
               st, ev)
    return out


#: a rank prefix (torchrun ``[rank3]:``, ``[RANK 0]``, ``[R0]``, ``[default3]:``; Open MPI's
#: ``--tag-output``, which Horovod's ``horovodrun`` turns on: ``[1,0]<stderr>:``, job 1, rank 0)
_RANK = re.compile(r"^\s*\[(?:(?:rank|r|default)\s*(\d+)\]:?|\d+,(\d+)\]<std(?:out|err)>:)", re.I)


#: where a NaN message says it happened, right after its words (AutoGluon's ``NaN loss encountered
#: in epoch 0!``, ``Encountered NaN loss at step 120``)
_NAN_AT = re.compile(r"^\s*(?:in|at|during)\s+(?:the\s+)?(epoch|step|iteration|iter|batch)\s*[=:]?\s*"
                     r"(\d{1,12})\b")


def _when(rest: str) -> dict[str, object]:
    """The step (explicit) a NaN message names after its words; an epoch of 0 or 1 is the first
    epoch, step 0 (as ``NaN in first epoch``), a later one is that epoch."""
    m = _NAN_AT.match(rest)
    if m is None:
        return {}
    n = int(m.group(2))
    if m.group(1) != "epoch":
        return {"step": n, "explicit": True}
    return {"step": 0, "explicit": True, "epoch": n} if n <= 1 else {"epoch": n}


def _progress(low: str, line_no: int, st: LineState) -> tuple[int | None, int | None]:
    """The step (and its total) the line names, if any; the step and the epoch it names are
    remembered in ``st``."""
    step, total, named = _step(low)
    if step is not None:
        st.step = step
        if named:
            st.step_line = line_no
    if "epoch" in low:
        ep = _EPOCH.search(low)
        if ep:
            st.epoch = int(ep.group(1)[:6])
    elif "轮" in low and (ep := _ZH_EPOCH.search(low)):
        st.epoch = int(ep.group(1))
    elif low[:1].isdigit() or low[:1] == " ":
        ep = _LEAD_EPOCH.match(low) or _YOLO_EPOCH.match(low)
        if ep:
            st.epoch = int(ep.group(1))
    return step, total


def _ds_counter(k: int, st: LineState, ev: Callable[..., None]) -> None:
    """DeepSpeed's skip counter ``skipped=k``: how much it rose since the last one, or that it
    is still at zero, or unchanged (the steps since the last print went through)."""
    if st.ds_skipped is not None and k > st.ds_skipped:
        ev("skip", "deepspeed", "ds-skipped-counter", count=k - st.ds_skipped)
    elif st.ds_skipped is None and k > 0:
        ev("skip", "deepspeed", "ds-skipped-counter", count=k)
    elif k == 0:        # a counter still at zero: nothing has been skipped (so far)
        ev("skip", "deepspeed", "ds-counter-zero", count=0)
    elif k == st.ds_skipped:
        ev("skip", "deepspeed", "ds-counter-held", count=0)
    st.ds_skipped = k


#: DeepSpeed's progress line and nothing else (``[2023-04-18 01:54:57,424] [INFO]
#: [logging.py:96:log_dist] [Rank 0] step=640, skipped=10, lr=[9.47e-06], mom=[(0.9, 0.95)]``,
#: printed every few steps): no other rule can read anything in it, so only its step and
#: counter are read (``_segment``; the same events as the full reading, see the tests)
DS_LINE = re.compile(r"(?:\[[\d:, -]+\] \[info\] \[logging\.py:\d+:log_dist\] )?\[rank \d+\] "
                     r"step=(\d{1,12}), skipped=(\d{1,12}), lr=\[[-+\d.e, ]*\], "
                     r"mom=\[[-+\d.e, ()]*\]")


def _emitter(text: str, line_no: int, st: LineState, step: int | None,
             total: int | None) -> tuple[list[Event], Callable[..., None]]:
    """``(out, ev)``: ``ev(kind, framework, rule, **fields)`` appends an ``Event`` of this line to
    ``out``; its step is the one the line names, else the last one named, else the line number
    (``step``, ``total`` and ``explicit`` can be given instead)."""
    cur = step if step is not None else (st.step if st.step is not None else line_no)
    short = text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "..."
    near = _near_step(st, line_no)
    named = {"step": cur, "total": total, "explicit": step is not None}
    out: list[Event] = []

    m = _RANK.match(text)
    rank = int((m.group(1) or m.group(2))[:6]) if m else None

    def ev(kind: str, fw: str, rule: str, **kw: object) -> None:
        e = Event(rank=rank, line_no=line_no, kind=kind, framework=fw, text=short, rule=rule,
                  **{**named, **kw})  # type: ignore[arg-type]
        if near and kind in ("loss", "nan", "note"):
            e.explicit = True
        if e.epoch is None and st.epoch is not None:
            e.epoch = st.epoch          # the epoch the log named last (``Epoch 29``)
        out.append(e)

    return out, ev


def _near_step(st: LineState, line_no: int) -> bool:
    """Was a step named by a word on a line just before ``line_no`` (a W&B summary's ``step
    458``, Coqui's ``GLOBAL_STEP: 246025`` above its block)?  A record there is at that step as
    much as one that names it (a record's: a message printed after a step's lines does not say
    when it happened)."""
    return st.step_line is not None and 0 < line_no - st.step_line <= STEP_LINES


def finish(st: LineState) -> list[Event]:
    """What is still held at the end of the input: a line that ended inside a wording (read on
    its own) and the record of a ``| key | value |`` table still open."""
    out: list[Event] = []
    if st.head is not None:
        head, head_line, _ = st.head
        st.head = None
        out = _segment(head, head_line, st, False)
    return out + _finish_table(st)


def _finish_table(st: LineState, rule: str = "table") -> list[Event]:
    """The record of a ``| key | value |`` table, or a block of one-field lines (the reader calls
    it when the table ends).  One record per table: its loss (the exact ``loss`` key first), grad
    norm, loss scale (``lg_loss_scale`` is a base-2 logarithm) and step (or the step a line named
    just above it: Coqui's ``GLOBAL_STEP: 246025``)."""
    if not st.table:
        return []
    fields, line_no = st.table, st.table_line
    near = _near_step(st, st.table_first)
    st.table = {}
    if "train" in fields:   # (svoice's bare ``train``/``valid`` in its history.json as on its lines)
        fields = _bare_losses(fields, " ".join(fields))
    nums = _numbers(fields)
    loss, gnorm, scale, step, lg2, epoch = _kv_values(nums)
    if step is not None:
        st.step = step
    if epoch is not None and epoch == int(epoch):
        st.epoch = int(epoch)       # (a table's epoch column: YOLO's ``36/299``, a CSV's)
    cur = step if step is not None else (st.step if st.step is not None else line_no)
    text = " ".join(f"| {k} | {v} |" for k, v in list(fields.items())[:12])[:MAX_TEXT]
    # YOLOv3/v5/v7's train.py (the ``gpu_mem`` table) trains under torch.cuda.amp's silent GradScaler
    fw = "torch" if rule == "row" and st.header and "gpu_mem" in st.header[1] else "generic"
    kw = dict(line_no=line_no, step=cur, framework=fw, text=text, rule=rule,
              explicit=step is not None or near, loss=loss, grad_norm=gnorm, scale_after=scale,
              scale_log2=lg2, epoch=epoch if epoch is not None else st.epoch,
              exact_zero=loss == 0.0 and _zero_written(fields), precision=_diffusion_fp32(fields))
    if scale is not None:
        st.scale = scale
    if loss is not None and _evaluation(fields):
        return [Event(kind="note", **{**kw, "rule": "eval-loss"})]  # type: ignore[arg-type]
    if loss is not None:
        kind = "loss" if math.isfinite(loss) else "nan"
        if kind == "loss":
            kw["rule"] = _eval_rule(nums) or rule
        return [Event(kind=kind, **kw)]  # type: ignore[arg-type]
    if gnorm is not None and not math.isfinite(gnorm):
        return [Event(kind="skip", **kw)]  # type: ignore[arg-type]
    if scale is not None:
        return [Event(kind="scale", **kw)]  # type: ignore[arg-type]
    out: list[Event] = []      # (measures of quality alone: MVSGaussian's ``  SSIM :    0.41``)

    def note(kind: str, fw: str, rule: str, **extra: Any) -> None:
        out.append(Event(kind=kind, **{**kw, "framework": fw, "rule": rule, **extra}))  # type: ignore[arg-type]

    _metrics(fields, _record(nums), step, note)
    return out


#: the rows guided-diffusion's (and improved-diffusion's) logger prints in every table
_DIFFUSION_ROWS = ("grad_norm", "param_norm", "samples", "step")


def _diffusion_fp32(fields: dict[str, str]) -> str | None:
    """"fp32" for a guided-diffusion table without its ``lg_loss_scale`` row: its trainer logs
    that row on every step of an fp16 run (``use_fp16``) and never in an fp32 one."""
    if all(k in fields for k in _DIFFUSION_ROWS) and not any(k in fields for k in _LOG2_KEYS):
        return "fp32"
    return None


def _header_row(text: str, line_no: int, st: LineState) -> list[Event] | None:
    """The record of a data row under the header row read before (None: not such a row)."""
    assert st.header is not None
    delim, names = st.header
    low = _lower(text)
    cells = _csv_row(low, delim, names)
    if cells is None and delim in (" ", "  "):
        cells = _fixed_row(low, st.header_text, names)   # (aligned, with empty cells)
    if cells is None:
        return None
    st.table = dict(cells)
    st.table_line = line_no
    if "step" not in {_role(n) for n in names}:
        # an aligned row that goes on with its progress bar (YOLO's ``0/119  6.51G  0.086 ...
        # 1024:  81%|███ | 2990/3683 [1:03:00<``): the bar's counter places the record, as a
        # batch of the epoch the row names, not a step the run counts (``explicit`` stays False)
        step = _step(low)[0]
        if step is not None:
            st.step = step
    return _finish_table(st, rule="row")


def truncated_note(readers: list, st: LineState) -> list[Event]:  # type: ignore[type-arg]
    """A ``note`` event when a compressed input was cut short (the diagnosis caveats it)."""
    for rd in readers:
        why = getattr(rd, "truncated", "")
        if why:
            step = st.step if st.step is not None else 0
            return [Event(line_no=0, step=step, kind="note", rule="truncated",
                          text=f"the compressed file ends early ({why})"[:MAX_TEXT])]
    return []


def table_record(st: LineState, fields: dict[str, str], line_no: int, rule: str) -> list[Event]:
    """The record of ``{name: value text}`` fields that arrive as one (a TensorBoard step)."""
    st.table, st.table_line = dict(fields), line_no
    return _finish_table(st, rule=rule)
