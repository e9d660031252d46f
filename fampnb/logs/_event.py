"""The record type of the log reader (``Event``) and the small helpers its rules share."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, cast

from fampnb.logs._num import NUM, nonfinite

__all__ = ["Event", "LineState", "jsonable", "KINDS", "MAX_TEXT", "NUM"]

#: event kinds, as in DESIGN.md
KINDS = ("backoff", "hysteresis", "growth", "skip", "loss", "nan", "fatal", "scale", "note")
#: characters of the line kept in ``Event.text``
MAX_TEXT = 400


@dataclass(slots=True)
class Event:
    """One record read from a log line.

    ``line_no`` is the 1-based physical line (``\\n``-separated); ``step`` the step/iteration the
    line names (``explicit=True``), else the last step named earlier in the log, else ``line_no``.
    ``scale_before``/``scale_after`` are loss scales (``scale_after`` alone for observations),
    ``loss`` and ``grad_norm`` floats (NaN/inf kept as float NaN/inf), ``framework`` the rule family
    that matched (``"deepspeed" "apex" "fairseq" "megatron" "hf" "torch" "keras" "mmengine"
    "insightface" "lightning" "caffe" "seed" "generic"``), ``text`` the line (truncated).
    Extra fields: ``rule`` names the matched wording, ``count`` how many steps a counter record
    covers, ``total`` the run length the line names (``iter 100/2892``), ``precision`` a precision
    the line states, ``epoch`` the (fractional) epoch an HF Trainer record names, ``scale_log2`` the
    base-2 logarithm of ``scale_after`` where the line prints the scale as one (``lg_loss_scale``:
    it keeps the size of a scale below or above the float range, where ``scale_after`` reads 0.0
    or inf).  ``rank`` is the rank a prefix names (``[rank3]:``, ``[RANK 0]``, ``[R0]``).
    ``exact_zero``: the loss is 0 *as written* (``0``, ``0.0``, ``0.0000e+00``, or zeros to six or
    more decimals: ``fampnb.logs._notation.exact_zero``), not a small loss rounded to ``0.0000``.
    """

    line_no: int
    step: int
    kind: str
    scale_before: float | None = None
    scale_after: float | None = None
    loss: float | None = None
    grad_norm: float | None = None
    framework: str = "generic"
    text: str = ""
    rule: str = ""
    count: int | None = None
    total: int | None = None
    explicit: bool = False
    precision: str | None = None
    epoch: float | None = None
    scale_log2: float | None = None
    rank: int | None = None
    exact_zero: bool = False

    def to_dict(self) -> dict[str, object]:
        """JSON-safe dict: non-finite floats become the strings ``"nan" "inf" "-inf"``."""
        out: dict[str, object] = {}
        for name in self.__slots__:  # type: ignore[attr-defined]
            value = getattr(self, name)
            out[name] = jsonable(value)
        return out


def jsonable(value: object) -> object:
    """Floats that JSON cannot hold (NaN, +-inf) as strings; everything else unchanged."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


@dataclass(slots=True)
class LineState:
    """What the reader remembers between lines (all O(1))."""

    step: int | None = None
    scale: float | None = None          # last exact scale (backoff/growth records)
    ds_skipped: int | None = None       # DeepSpeed ``skipped=`` counter
    prev_grad_nan: bool = False
    seen: dict[str, int] = field(default_factory=dict)
    overflow_line: int | None = None    # last ``Grad overflow on iteration N`` line
    table: dict[str, str] = field(default_factory=dict)   # rows of a ``| key | value |`` table
    table_line: int = 0                 # line of the table's last row
    table_first: int = 0                # ... and of its first
    head: tuple[str, int, int] | None = None  # a line that ends inside a record's wording
    #                                    (wrapped): its text, first and last physical line
    total_step: int | None = None       # step named by the last line with a total-loss field
    hf_lr: tuple[float | None, float | None] = (None, None)   # the last two HF learning rates
    hf_lr_zero: int = 0                 # HF records whose learning rate is exactly 0.0
    hf_lr_moved: bool = False           # an HF record's learning rate was not 0.0
    epoch: int | None = None            # the last ``Epoch N`` a line named
    step_line: int | None = None        # the last line that named a step by a word (``step 458``,
    #                                     ``GLOBAL_STEP: 246025``; not a bare ``N/M`` counter)
    nan_check: int | None = None        # the last traceback line that asserts there is no NaN
    frame_line: int = -2                # the last traceback frame line (``  File "x.py", line 3``)
    header: tuple[str, list[str]] | None = None   # a CSV/TSV/table header row: (delimiter, names)
    header_text: str = ""               # ... as written (lower case): an aligned one's columns
    named: bool = False                 # a loss record under a name was read (then a row of
    #                                     bare numbers is something else: ``_fields.bare_row``)
    nan_eval: tuple[float, ...] | None = None   # the finite evaluation losses beside the last NaN
    #                                     training record (``_fields._nan_by_evaluation``)


def _f(text: str) -> float:
    """``float()`` of a matched number; ``nan.0``/``inf.0`` (Lightning), ``nanxxx`` (a fill
    character) and ``nan.08`` (an overwritten value's end: ``_num.NUM``) read as ``nan``/``inf``."""
    try:
        return float(text)
    except ValueError:
        return nonfinite(text)


def _c(pattern: str) -> re.Pattern[str]:
    """Patterns are written in lower case and searched in the lower-cased line (fast in ``re``);
    each is compiled when first used (most logs meet few of the rules: the doctor starts sooner)."""
    return cast("re.Pattern[str]", _Lazy(pattern))


class _Lazy:
    """A pattern compiled on first use; its methods are then the compiled pattern's own."""

    _METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "split")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern

    def __getattr__(self, name: str) -> Any:    # (only called while a method is missing)
        rx = re.compile(self.pattern)
        for method in self._METHODS:
            setattr(self, method, getattr(rx, method))
        return getattr(rx, name)
