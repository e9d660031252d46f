"""What the doctor remembers of a log: a one-pass, bounded-memory accumulator over ``Event`` records.

``Accumulator.feed(event)`` updates counters and the current run of backoffs; ``close()`` ends
the input; the named checks of ``fampnb.diagnose._checks`` then decide from what it holds (the
principles of ``reference/loss-scalers.md`` section 7, see ``fampnb.diagnose``).  Memory is
bounded: series are thinned, runs and evidence are capped.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from dataclasses import dataclass, field

from fampnb.logs import Event

EARLY_STEPS = 100          # a NaN at or before this step (or within 5% of the run) is "at the start"
EARLY_EPOCH = 0.05         # ... or an HF record at or before this epoch (with no step counter)
NEAR_RECORDS = 3           # finite loss records allowed between backoffs and a NaN they explain
CALIBRATION_FLOOR = 256.0  # the article's line: below it and still falling is a failure
FLOOR = 1.0                # DeepSpeed/Megatron minimum; below it the gradients are non-finite
CAP = 4096                 # points kept per plotted series
#: backoff wordings that print only the new scale (the reader fills ``scale_before`` from the
#: last one printed, which misses any growth in between)
TARGET_ONLY = frozenset({"apex-overflow", "fairseq-overflow", "apex-legacy-overflow"})
#: NaN messages that end a run (no step of their own): see ``_early``
ENDING_RULES = frozenset({"tf-nan-loss", "anomaly"})


def _pow2(x: float) -> bool:
    """Is ``x`` a power of two (a scale a scaler set, not an average across a change)?"""
    return x > 0 and math.isfinite(x) and math.frexp(x)[0] == 0.5


class Thin:
    """A series thinned to at most ``2 * cap`` points by keeping every 2^k-th point."""

    def __init__(self, cap: int = CAP) -> None:
        self.cap, self.stride, self.seen, self.points = cap, 1, 0, []  # type: ignore[var-annotated]

    def add(self, point: tuple) -> None:  # type: ignore[type-arg]
        if self.seen % self.stride == 0:
            self.points.append(point)
            if len(self.points) >= 2 * self.cap:
                self.points = self.points[::2]
                self.stride *= 2
        self.seen += 1


@dataclass
class Run:
    """Consecutive backoffs (no growth and at most two finite loss records between them)."""

    first: Event
    last: Event
    start_scale: float | None
    end_scale: float | None
    loss_before: int
    n: int = 1
    levels: int = 1
    duplicates: int = 0
    loss_after: int = 0
    growth_after: bool = False
    nan_after: bool = False
    events: list[Event] = field(default_factory=list)
    loss_ref: float | None = None       # the last finite loss / grad norm before the run
    gn_ref: float | None = None
    loss_next: float | None = None      # the first finite loss / grad norm after it
    gn_next: float | None = None
    start_log2: float | None = None     # base-2 logs of the scales, where the log prints them so
    end_log2: float | None = None


def _early(ev: Event, max_total: int | None, rec_index: int, steps_seen: bool = False,
           start_seen: bool = False) -> bool:
    """Is ``ev`` at or near the first step *of training*, not just of the excerpt?

    Where the log counts steps (on this line, or earlier: ``steps_seen``) the counter decides:
    one of the very first steps, or among the first records of the log (at most two before it)
    within the first 100 steps (5 % of a short run, at most 500 steps).  Without a step counter,
    a training record among the first three of the log counts as early; a NaN *ending* message
    (``Model diverged with loss = NaN``, ``loss is nan, stopping``) is not a record of a step: it
    says when the run stopped, not when the NaN began, so with no counter and no earlier record
    it is early only when the log shows its start (a start-up line: ``start_seen``)."""
    if ev.explicit or steps_seen:
        total = ev.total or max_total or 0
        if ev.step <= 10:
            return True
        return rec_index <= 2 and ev.step <= max(EARLY_STEPS, min(0.05 * total, 5 * EARLY_STEPS))
    if ev.rule in ENDING_RULES:
        return rec_index <= 2 and start_seen
    return rec_index <= 2


class Accumulator:
    def __init__(self) -> None:
        self.n = 0
        self.notes: dict[str, Event] = {}     # reader notes (``truncated``)
        self.rank_nan: dict[int, bool] = {}   # rank -> has it shown a NaN loss
        self.roles: set[str] = set()          # the record roles seen (for an ``unknown``)
        self.fw: Counter[str] = Counter()
        self.precision: str | None = None
        self.scaler_skip: Event | None = None   # a skipped step that only an fp16 scaler skips
        self.runs: list[Run] = []
        self.run: Run | None = None
        self.backoffs = self.hyst = self.growths = self.skips = 0
        self.floor_hits = 0
        self.floor_attempts = 0           # overflow records with the scale already at the floor
        self.floor_first: Event | None = None
        self.floor_last: Event | None = None
        self.final_log2: float | None = None
        self.min_scale: float | None = None
        self.min_log2: float | None = None     # the printed log2 of min_scale, if any
        self.min_key = math.inf
        self.final_scale: float | None = None
        self.obs_scale: float | None = None
        self.obs_same = 0                 # observations in a row at ``obs_scale``
        self.obs_values: set[float] = set()
        self.first_obs: Event | None = None
        self.rec_index = 0
        self.finite = 0
        self.first_losses: list[float] = []
        self.last_loss_ev: Event | None = None
        self.last_losses: deque[float] = deque(maxlen=8)
        self.first_nan: Event | None = None
        self.first_nan_rec = 0
        self.first_nan_explicit_early = False
        self.nans = 0
        self.finite_after_nan = 0
        self.last_record_nan = False
        self.gn_bad_finite_loss = 0
        self.trailing_gn_bad = 0
        self.prev_gn_bad = False
        self.applied: Event | None = None
        self.nonzero_finite = 0           # finite, non-zero losses read so far
        self.applied_trained = False      # ... some before ``applied``: training happened first
        self.applied_early = False        # ``applied`` is the run's first record, at its start
        self.gn_streak: list[Event] = []        # consecutive finite-loss records, grad norm bad
        self.streak_at_nan: list[Event] = []
        self.first_bad_grad: Event | None = None
        self.fatal: list[Event] = []
        self.skip_rules: dict[str, Event] = {}
        self.skip_counted = 0
        self.counter_step: int | None = None
        self.full_skips = self.full_skips_late = 0
        self.full_skip_ev: Event | None = None
        self.skip_after_floor = 0
        self.max_step = 0
        self.max_total: int | None = None
        self.fairseq_avg = False
        self.precision_ev: Event | None = None
        self.counter_zero = False         # a skip counter read 0
        self.zero_skips_after_nan = False  # ... and still read 0 after the first NaN
        self.steps_seen = False           # some line named its step (a step counter exists)
        self.start_seen = False           # a start-up line (precision/config) came before a record
        self.last_gn: float | None = None
        self.traj, self.loss_s = Thin(), Thin()
        self.bmarks, self.nmarks = Thin(1024), Thin(1024)

    # ---- feeding ------------------------------------------------------------------------
    def feed(self, ev: Event) -> None:
        if ev.kind == "note":
            self.notes.setdefault(ev.rule, ev)
            if ev.rule == "start" and self.rec_index == 0:
                self.start_seen = True    # a start-up line before any record
            return
        self.n += 1
        for role, value in (("loss", ev.loss), ("grad norm", ev.grad_norm),
                            ("loss scale", ev.scale_after), ("step", ev.step if ev.explicit else None)):
            if value is not None:
                self.roles.add(role)
        if ev.rank is not None and ev.kind in ("loss", "nan") and len(self.rank_nan) < 1024:
            bad = ev.kind == "nan" or (ev.loss is not None and not math.isfinite(ev.loss))
            self.rank_nan[ev.rank] = self.rank_nan.get(ev.rank, False) or bad
        if ev.rule == "ds-counter-zero":
            # a skip counter at zero: no dynamic scaler has skipped a step so far (reference §7:
            # the counters family is evidence, unlike silence); after a NaN it says nothing
            # skipped the non-finite step
            self.counter_zero = True
            if self.first_nan is not None:
                self.zero_skips_after_nan = True
            if ev.explicit:
                self.max_step = max(self.max_step, ev.step)
                self.steps_seen = True
            return
        if ev.framework != "generic":
            self.fw[ev.framework] += 2 if ev.kind in ("backoff", "hysteresis", "fatal") else 1
        if ev.explicit:
            self.max_step = max(self.max_step, ev.step)
            self.steps_seen = True
        if ev.rule == "precision" and self.rec_index == 0:
            self.start_seen = True
        if ev.total:
            self.max_total = max(self.max_total or 0, ev.total)
        if ev.precision:
            self.precision = ev.precision
            self.precision_ev = self.precision_ev or ev
        kind = ev.kind
        if kind in ("backoff", "hysteresis", "growth"):
            self._scaler(ev)
        elif ev.scale_after is not None and kind in ("loss", "nan", "scale", "skip"):
            self._observe(ev)
        if kind in ("loss", "nan"):
            self._record(ev)
        elif kind == "skip":
            self.skips += ev.count or 1
            self.skip_rules.setdefault(ev.rule, ev)
            if ev.rule in ("ds-skipped-counter", "megatron-all-skipped"):
                self.skip_counted += ev.count or 1
            if self.final_scale is not None and self.final_scale <= FLOOR:
                self.skip_after_floor += 1
            if ev.grad_norm is not None and not math.isfinite(ev.grad_norm):
                self.first_bad_grad = self.first_bad_grad or ev
            if ev.rule == "lr-frozen":
                self.scaler_skip = self.scaler_skip or ev
        elif kind == "fatal":
            if len(self.fatal) < 20:
                self.fatal.append(ev)
        if kind == "loss" and ev.count and ev.framework == "megatron":
            self.skips += ev.count
            self.skip_counted += ev.count
        if ev.explicit and ev.count is not None and ev.rule in (
                "ds-skipped-counter", "megatron-all-skipped", "megatron-loss",
                "megatron-loss-missing"):
            self._counter(ev)

    def _counter(self, ev: Event) -> None:
        """Counter records (DeepSpeed ``skipped=``, Megatron's skipped iterations): how many in a
        row report every step of their interval skipped."""
        prev = self.counter_step
        self.counter_step = ev.step
        if prev is None or ev.step <= prev:
            return
        if (ev.count or 0) >= ev.step - prev:
            self.full_skips += 1
            self.full_skip_ev = self.full_skip_ev or ev
            if prev > EARLY_STEPS:
                self.full_skips_late += 1
        else:
            self.full_skips = self.full_skips_late = 0
            self.full_skip_ev = None

    def _set_scale(self, scale: float, ev: Event, log2: float | None = None) -> None:
        self.final_scale, self.final_log2 = scale, log2
        # (compared by log2 where the log prints one: scales below the float range all read 0.0)
        key = log2 if log2 is not None else math.log2(scale) if scale > 0 else -math.inf
        if self.min_scale is None or key < self.min_key:
            self.min_scale, self.min_log2, self.min_key = scale, log2, key
        self.traj.add((ev.step, ev.line_no, scale))

    def _scaler(self, ev: Event, synthetic: bool = False) -> None:
        after, before = ev.scale_after, ev.scale_before
        r0, known = self.run, self.final_scale
        grew = known is not None and (
            (after is not None and after >= known) if ev.rule in TARGET_ONLY
            else (before is not None and before > known))
        if ev.kind == "backoff" and r0 is not None and r0.loss_after >= 1 and grew:
            # a backoff that starts above the last known scale, training records in between: the
            # scale grew back meanwhile, silently (apex/fairseq print only the new, halved value:
            # "reducing to X" at or above the last scale means it had doubled at least once)
            r0.growth_after = True
            self.floor_hits = 0             # it left the floor: not "sitting there"
            self._close()
        prev_log2 = self.final_log2 if before is not None and before == known else None
        if before is not None and math.isfinite(before) and before != self.final_scale:
            self._set_scale(before, ev)        # the scale in force before this record
        if after is not None and math.isfinite(after):
            self._set_scale(after, ev, ev.scale_log2)
        if ev.kind == "growth":
            self.growths += 1
            self.floor_hits = self.floor_attempts = 0
            if self.run is not None:
                self.run.growth_after = True
                self._close()
            return
        if after is not None and after <= FLOOR:
            self.floor_hits += 1
        if (not synthetic and ev.rule not in TARGET_ONLY and before is not None
                and before <= FLOOR and (self.floor_last is None or ev.step != self.floor_last.step
                                         or not ev.explicit)):
            # an overflow with the scale already at (or below) the floor: DeepSpeed's
            # ``Attempted loss scale: 1, reducing to 1`` (``0``: int() of a scale below 1)
            self.floor_attempts += 1
            self.floor_first = self.floor_first or ev
            self.floor_last = ev
            if ev.kind == "hysteresis":   # ``reducing to 1`` from 1: a step skipped at the
                self.skips += 1           # floor, not a hysteresis credit spent
                return
        if ev.kind == "hysteresis":
            self.hyst += 1
            return
        self.backoffs += 1
        self.bmarks.add((ev.step, ev.line_no, after if after is not None else math.nan))
        r = self.run
        if r is not None and not r.growth_after and r.loss_after <= 2 and not (
                ev.explicit and r.last.explicit and ev.step - r.last.step > 50):
            r.n += 1
            prev = r.end_scale
            if after is not None and prev is not None and after < prev:
                r.levels += max(1, round(math.log2(prev / after))) if after > 0 else 1
            elif after is not None and prev is not None and (after > 0 or prev > 0):
                r.duplicates += 1
            r.last, r.end_scale, r.loss_after, r.end_log2 = ev, after, 0, ev.scale_log2
            if len(r.events) < 40:
                r.events.append(ev)
            return
        self._close()
        start = before if before is not None else (after * 2 if after is not None else None)
        lg = ev.scale_log2
        self.run = Run(first=ev, last=ev, start_scale=start, end_scale=after,
                       loss_before=self.finite, events=[ev],
                       loss_ref=self.last_losses[-1] if self.last_losses else None,
                       gn_ref=self.last_gn, end_log2=lg,
                       start_log2=prev_log2 if prev_log2 is not None and (
                           lg is None or prev_log2 >= lg) else (lg + 1 if lg is not None else None))

    def _close(self) -> None:
        if self.run is not None:
            if len(self.runs) >= 200:
                del self.runs[100]
            self.runs.append(self.run)
            self.run = None

    def _observe(self, ev: Event) -> None:
        scale = ev.scale_after
        assert scale is not None
        if ev.framework == "fairseq" and not (_pow2(scale) and (
                self.obs_scale is None or _pow2(self.obs_scale))):
            self.fairseq_avg = True     # an interval average: plotted, not read as a backoff
            self.traj.add((ev.step, ev.line_no, scale))
            return
        self.obs_values.add(scale) if len(self.obs_values) < 64 else None
        self.first_obs = self.first_obs or ev
        prev = self.obs_scale
        self.obs_scale = scale
        self.obs_same = self.obs_same + 1 if prev == scale else 1
        if prev is not None and scale < prev:
            self._scaler(Event(ev.line_no, ev.step, "backoff", prev, scale, framework=ev.framework,
                               text=ev.text, rule="scale-drop", explicit=ev.explicit,
                               total=ev.total), synthetic=True)
        elif prev is not None and scale > prev:
            self._scaler(Event(ev.line_no, ev.step, "growth", prev, scale, framework=ev.framework,
                               text=ev.text, rule="scale-rise", explicit=ev.explicit))
        else:
            self._set_scale(scale, ev, ev.scale_log2)

    def _record(self, ev: Event) -> None:
        loss, gn = ev.loss, ev.grad_norm
        bad = ev.kind == "nan" or (loss is not None and not math.isfinite(loss))
        gn_bad = gn is not None and not math.isfinite(gn)
        if gn_bad:
            self.first_bad_grad = self.first_bad_grad or ev
        if bad:
            self.nans += 1
            self.nmarks.add((ev.step, ev.line_no))
            if self.first_nan is None:
                self.first_nan, self.first_nan_rec = ev, self.rec_index
                self.streak_at_nan = self.gn_streak[:]
                self.first_nan_explicit_early = _early(ev, self.max_total, self.rec_index,
                                                       self.steps_seen, self.start_seen)
            if self.run is not None:
                self.run.nan_after = True
            self.last_record_nan = True
        elif loss is not None:
            self.finite += 1
            if self.first_nan is not None:
                self.finite_after_nan += 1
            if len(self.first_losses) < 8:
                self.first_losses.append(loss)
            self.last_losses.append(loss)
            self.last_loss_ev = ev
            self.loss_s.add((ev.step, loss))
            if self.run is not None:
                if self.run.loss_after == 0:
                    self.run.loss_next, self.run.gn_next = loss, gn
                self.run.loss_after += 1
            if loss == 0.0 and (self.prev_gn_bad or gn_bad) and self.applied is None:
                self.applied = ev       # a loss of exactly 0.0 next to non-finite gradients
                # it means "the update was applied" only after training happened (a finite,
                # non-zero loss before it); as the run's first record it is NaN from step 1
                self.applied_trained = self.nonzero_finite > 0
                self.applied_early = not self.applied_trained and (
                    self.rec_index <= 2 and ev.epoch <= EARLY_EPOCH
                    if ev.epoch is not None and not (ev.explicit or self.steps_seen)
                    else _early(ev, self.max_total, self.rec_index, self.steps_seen,
                                self.start_seen))
            if loss != 0.0:
                self.nonzero_finite += 1
            self.last_record_nan = False
            if gn_bad:
                self.gn_bad_finite_loss += 1
                if len(self.gn_streak) < 64:
                    self.gn_streak.append(ev)
            else:
                self.gn_streak = []
        self.trailing_gn_bad = self.trailing_gn_bad + 1 if gn_bad else 0
        if gn is not None:
            self.prev_gn_bad = gn_bad
            if not gn_bad:
                self.last_gn = gn
        self.rec_index += 1

    # ---- deciding -----------------------------------------------------------------------
    def close(self, precision: str | None) -> str | None:
        """End of the input: the open run is closed; returns the precision to decide with (the
        one given, else the one stated, else fp16 where a step was skipped as only fp16's scaler
        does)."""
        self._close()
        if not (precision or self.precision) and self.scaler_skip is not None:
            self.precision, self.precision_ev = "fp16", self.scaler_skip
        return precision or self.precision


__all__ = ["Accumulator", "Run", "Thin", "EARLY_STEPS", "EARLY_EPOCH", "NEAR_RECORDS",
           "CALIBRATION_FLOOR", "FLOOR"]
