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
  without its loss field is a skipped interval when the skip counter says so, NaN otherwise;
- a NaN at the start that the scaler's own overflow/skip messages go with (ColossalAI's ``found
  inf during ShardedOptimV2 step``) is not the ``data`` case (which has no overflow record):
  ``unknown``; a loss that collapses to exactly 0 (written so, ``0.0000e+00``; not a rounded
  ``0.0000``) after non-zero records and stays there is no healthy run: ``unknown`` (``no-scaler``
  when the log states fp16 and shows no scaler).

``precision`` (``"fp16" "bf16" "fp32"``) overrides what the log states (config lines such as
``--bf16``, ``precision: fp16``, ``"bf16": {"enabled": true}`` or DeepSpeed's config dump
``bfloat16_enabled ...... True`` are detected; the line is evidence only for the verdicts it
decides: ``data``, ``no-scaler``, ``unknown``).  The events feed the trackers of
``fampnb.diagnose._accumulate``; the decision is the ordered list of named checks of
``fampnb.diagnose._checks`` (``Diagnosis.check`` names the one that decided), which judge runs of
backoffs with ``fampnb.diagnose._judge``; the wording of advice and caveats is in
``fampnb.diagnose._text``.
"""

from __future__ import annotations

from collections.abc import Iterable

from fampnb.diagnose._accumulate import Accumulator
from fampnb.diagnose._decide import decide
from fampnb.diagnose._diagnosis import PRECISIONS, VERDICTS, Diagnosis
from fampnb.diagnose._ranks import RankSeries
from fampnb.logs import Event

__all__ = ["Diagnosis", "diagnose", "VERDICTS", "PRECISIONS"]


def diagnose(events: Iterable[Event], precision: str | None = None) -> Diagnosis:
    """Diagnose a stream of events (one pass, bounded memory); see the module docstring.

    ``precision`` must be ``None`` or one of ``PRECISIONS`` (``ValueError`` otherwise).
    """
    if precision is not None:
        precision = precision.lower().replace("float16", "fp16").replace("bfloat16", "bf16")
        precision = {"float32": "fp32", "half": "fp16"}.get(precision, precision)
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    acc, ranks = Accumulator(), RankSeries()
    for ev in events:
        acc.feed(ev)
        ranks.feed(ev)
    from fampnb.localize import localize  # reason/advice/caveats in the chosen language

    split = ranks.disagree(acc)
    read = ranks.series(split[0][0]) if split else None
    if split and read is not None:      # the ranks disagree: read one that shows the NaN
        return localize(decide(read, read.close(precision), split))
    calm = None if split else ranks.calm_apart(acc)
    read = ranks.series(calm) if calm is not None else None
    if read is not None:                # an explosion only the interleaving shows
        return localize(decide(read, read.close(precision), apart=sorted(ranks.accs)))
    return localize(decide(acc, acc.close(precision), split))
