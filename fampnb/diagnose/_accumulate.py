"""What the doctor remembers of a log: small trackers fed in one pass over ``Event`` records.

``Accumulator.feed(event)`` routes each event to the trackers it concerns: ``log``
(``LogTracker``: events, ranks, roles, frameworks, steps, fatal lines), ``scale``
(``fampnb.diagnose._scale.ScaleTracker``: trajectory, runs of backoffs, floor), ``nan``
(``NanTracker``: loss records, the first NaN), ``grad`` (``GradTracker``), ``skip``
(``SkipTracker``) and ``precision`` (``PrecisionTracker``); ``close()`` ends the input.  The named
checks of ``fampnb.diagnose._checks`` then decide from what the trackers hold (the principles of
``reference/loss-scalers.md`` section 7, see ``fampnb.diagnose``).  Memory is bounded: series are
thinned, runs and evidence are capped.
"""

from __future__ import annotations

import math

from fampnb.diagnose._limits import (
    CALIBRATION_FLOOR,
    EARLY_EPOCH,
    EARLY_STEPS,
    FLOOR,
    NEAR_RECORDS,
    Thin,
)
from fampnb.diagnose._scale import Run, ScaleTracker
from fampnb.diagnose._trackers import GradTracker, LogTracker, NanTracker, PrecisionTracker, SkipTracker
from fampnb.logs import Event

__all__ = ["Accumulator", "Run", "Thin", "EARLY_STEPS", "EARLY_EPOCH", "NEAR_RECORDS",
           "CALIBRATION_FLOOR", "FLOOR"]


class Accumulator:
    """The trackers of one log, and the routing of its events to them."""

    def __init__(self) -> None:
        self.log = LogTracker()
        self.scale = ScaleTracker()
        self.nan = NanTracker()
        self.grad = GradTracker()
        self.skip = SkipTracker()
        self.precision = PrecisionTracker()
        self.counter_step: int | None = None  # DeepSpeed's last skip counter: its step, and the
        self.overflows = 0                    # overflow records printed since

    def feed(self, ev: Event) -> None:
        log, nan = self.log, self.nan
        if ev.kind == "note":
            log.notes.setdefault(ev.rule, ev)
            if ev.rule in ("metrics", "metrics-unstepped"):
                log.measures += ev.count or 0
            if ev.rule == "metrics-unstepped":
                log.unstepped += 1
            if ev.rule == "metrics":
                log.metrics += 1
                if len(log.metric_at) < 8:
                    log.metric_at.add((ev.step, ev.epoch))
            if ev.rule == "eval-loss":
                nan.evaluation(ev)
            if ev.rule == "finished":
                log.finished = ev
            if ev.rule == "start" and nan.rec_index == 0:
                log.start_seen = True    # a start-up line before any record
            if ev.rule in ("lr-never-stepped", "lr-stepped"):
                log.lr_never = ev if ev.rule == "lr-never-stepped" else None
            if ev.rule in ("traceback", "interrupted"):
                log.traceback = ev if ev.rule == "traceback" else None
                log.traceback_records = nan.rec_index
            return
        log.count(ev)
        if ev.rule in ("ds-counter-held", "ds-counter-zero", "ds-skipped-counter"):
            self._counter(ev)
        if ev.rule == "ds-counter-held":
            log.step(ev)
            return
        if ev.rule == "ds-counter-zero":
            self.skip.zero(nan.first_nan is not None)
            log.step(ev)
            return
        log.context(ev, nan.rec_index)
        if ev.precision:
            self.precision.feed(ev)
        kind = ev.kind
        if kind in ("backoff", "hysteresis", "growth"):
            self.overflows += kind != "growth"
            if self.scale.scaler(ev, *self._ref()):
                self.skip.count += 1
        elif ev.scale_after is not None and kind in ("loss", "nan", "scale", "skip"):
            self.scale.observe(ev, *self._ref())
        if kind in ("loss", "nan"):
            bad = (kind == "nan" or (ev.loss is not None and not math.isfinite(ev.loss))
                   or nan.at_floor(ev))           # (Caffe's 87.3365: a probability of 0)
            index = nan.rec_index
            first = nan.record(ev, bad, log)
            if self.scale.run is not None:
                self.scale.record(bad, ev.loss, ev.grad_norm)
            self.grad.record(ev, bad, first, index, log)
        elif kind == "skip":
            self.skip.skip(ev, self.scale.final_scale)
            if ev.grad_norm is not None and not math.isfinite(ev.grad_norm):
                self.grad.bad(ev)
        if ev.count is not None:      # (counter records: the skip tracker's)
            self.skip.counted_on_record(ev)

    def _counter(self, ev: Event) -> None:
        """DeepSpeed's ``step=N, skipped=K``: when the step moved on by more than the counter
        (``ev.count``: how much it rose), and the counter rose by no more than the overflow
        records printed since the last one, the other steps went through: the open run of
        backoffs is followed by steps that did not overflow (``ScaleTracker.quiet``)."""
        rose, last = ev.count or 0, self.counter_step
        if (ev.rule != "ds-counter-zero" and last is not None and ev.step - last > rose
                and rose <= self.overflows):
            self.scale.quiet()
        self.counter_step, self.overflows = ev.step, 0

    def _ref(self) -> tuple[int, float | None, float | None]:
        """What a new run of backoffs remembers: finite loss records so far, the last finite
        loss and grad norm."""
        nan = self.nan
        return nan.finite, nan.last_losses[-1] if nan.last_losses else None, self.grad.last_gn

    def close(self, precision: str | None) -> str | None:
        """End of the input: the open run is closed; returns the precision to decide with (the
        one given, else the one stated, else fp16 where a step was skipped as only fp16's scaler
        does)."""
        self.scale.close()
        return self.precision.close(precision, self.skip.scaler_skip)
