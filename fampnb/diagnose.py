"""Events -> ``Diagnosis``: what kind of NaN a training log shows, and which switch to turn first.

``diagnose(events, precision=None)`` reads the events of ``fampnb.logs.parse`` in one pass with
bounded memory and applies the principles of ``reference/loss-scalers.md`` section 7, not single
lines:

- **calibration** (benign): consecutive halvings at the very start of the log, from a typical
  initial power of two, then silence; isolated mid-run backoffs that do not cascade;
- **failure** (``overflow``): backoffs that calibration does not explain (after a healthy stretch,
  consecutive, heading below 256, to the floor or below 1), a minimum-scale error, endless
  halving at the floor (overflow records, twice or more, with the scale already at the floor:
  DeepSpeed's ``Attempted loss scale: 1, reducing to 1``, or ``0, reducing to 0`` for a floor
  below 1, as it prints ``int(scale)``), or a lasting NaN right after backoffs;
- ``data``: a lasting NaN at (or within two records of) the first step of training with no
  backoff before it; where the log counts steps, the counter decides (iteration 5426 is not the
  start, even on the excerpt's first line); ``no-scaler``: a lasting NaN later in the run with no
  dynamic scaler at work (bf16, fp32, a static scale such as Megatron's ``loss scale: 1.0`` with
  zero skips, a skip counter that stays 0 through the NaN, or a non-finite update that reached
  the weights, seen as ``loss 0.0`` after ``grad_norm nan``, once training happened: a finite,
  non-zero loss before it; as the run's very first record, at its start, it is ``data``).
  Silence is evidence only where a scaler would print: a later NaN under a silent-scaler
  framework (mmengine, Lightning, Keras, HF, GradScaler) with no stated precision is ``unknown``;
- a scale below 1 that grows back (or returns to a level it already grew back from) while
  training goes on is an oscillation, not a collapse; a lone mid-run backoff is healthy only when
  the log shows that the scale held (growth, or records after it without a spike), else
  ``unknown``; a window that opens with backoffs from an unprinted scale may be the tail of
  start-up calibration;
- ``grad_norm`` nan with a finite, falling loss is a skipped step (healthy); a Megatron line
  without its loss field is a skipped interval when the skip counter says so, NaN otherwise.

``precision`` (``"fp16" "bf16" "fp32"``) overrides what the log states (config lines such as
``--bf16``, ``precision: fp16``, ``"bf16": {"enabled": true}`` or DeepSpeed's config dump
``bfloat16_enabled ...... True`` are detected; the line is evidence only for the verdicts it
decides: ``data``, ``no-scaler``, ``unknown``).  The rules live in
``fampnb._diagrules``; the wording of advice and caveats in ``fampnb._diagtext``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from fampnb._logrules import Event, jsonable

__all__ = ["Diagnosis", "diagnose", "VERDICTS", "PRECISIONS"]

VERDICTS = ("healthy", "overflow", "data", "no-scaler", "unknown")
PRECISIONS = ("fp16", "bf16", "fp32")


@dataclass
class Diagnosis:
    """The doctor's answer for one log.

    ``verdict`` is one of ``VERDICTS``; ``reason`` one sentence; ``evidence`` the events (with line
    numbers) that decided it; ``first_nan_step``/``first_nan_line`` the first non-finite loss (or
    grad norm) record, ``None`` if none; ``backoffs`` the number of backoff records; ``min_scale``
    / ``final_scale`` the smallest and last loss scale seen (``None`` if the log shows none), with
    ``min_scale_log2`` / ``final_scale_log2`` their base-2 logarithms where the log prints the
    scale as one (a scale below the float range reads 0.0 but keeps its size there);
    ``advice`` ordered, first switch first; ``caveats`` where the chain can mislead.  For plots:
    ``trajectory`` ``(step, line_no, scale)``, ``losses`` ``(step, loss)`` (thinned to at most a
    few thousand points), ``backoff_marks`` ``(step, line_no, scale_after)`` and ``nan_marks``
    ``(step, line_no)``.
    """

    verdict: str
    reason: str
    evidence: list[Event] = field(default_factory=list)
    first_nan_step: int | None = None
    first_nan_line: int | None = None
    backoffs: int = 0
    min_scale: float | None = None
    final_scale: float | None = None
    min_scale_log2: float | None = None
    final_scale_log2: float | None = None
    framework: str = "unknown"
    advice: list[str] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)
    certainty: str = "likely"
    precision: str | None = None
    hysteresis: int = 0
    growths: int = 0
    skips: int = 0
    events_read: int = 0
    trajectory: list[tuple[int, int, float]] = field(default_factory=list)
    losses: list[tuple[int, float]] = field(default_factory=list)
    backoff_marks: list[tuple[int, int, float]] = field(default_factory=list)
    nan_marks: list[tuple[int, int]] = field(default_factory=list)

    @property
    def first_switch(self) -> str:
        """The first item of ``advice`` (the switch to turn first)."""
        return self.advice[0] if self.advice else ""

    def to_dict(self) -> dict[str, object]:
        """JSON-safe: NaN/inf as the strings ``"nan" "inf" "-inf"``; events as dicts."""
        out: dict[str, object] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if name == "evidence":
                value = [e.to_dict() for e in value]
            elif isinstance(value, list):
                value = [[jsonable(x) for x in v] if isinstance(v, tuple) else jsonable(v)
                         for v in value]
            else:
                value = jsonable(value)
            out[name] = value
        out["first_switch"] = self.first_switch
        return out


def diagnose(events: Iterable[Event], precision: str | None = None) -> Diagnosis:
    """Diagnose a stream of events (one pass, bounded memory); see the module docstring.

    ``precision`` must be ``None`` or one of ``PRECISIONS`` (``ValueError`` otherwise).
    """
    if precision is not None:
        precision = precision.lower().replace("float16", "fp16").replace("bfloat16", "bf16")
        precision = {"float32": "fp32", "half": "fp16"}.get(precision, precision)
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    from fampnb._diagrules import Accumulator

    acc = Accumulator()
    for ev in events:
        acc.feed(ev)
    from fampnb.localize import localize   # reason/advice/caveats in the chosen language

    return localize(acc.finish(precision))
