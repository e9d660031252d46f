"""The small trackers besides the scale's (``fampnb.diagnose._scale``): what the log is
(``LogTracker``: events, ranks, roles, frameworks, steps, start-up, fatal lines), its loss
records and NaNs (``NanTracker``), its gradients (``GradTracker``: non-finite grad norms, an
update applied with them), its skipped steps (``SkipTracker``) and its stated precision
(``PrecisionTracker``).  Each is fed by ``fampnb.diagnose._accumulate.Accumulator``; memory is
bounded."""

from __future__ import annotations

import math
from collections import Counter, deque

from fampnb.diagnose._limits import (
    CLIMB_RECORDS,
    EARLY_EPOCH,
    EARLY_STEPS,
    ENDING_RULES,
    EXPLODE,
    EXPLODE_AT,
    FLOOR,
    FROZEN,
    Thin,
    early,
    floored,
)
from fampnb.logs import Event

__all__ = ["LogTracker", "NanTracker", "GradTracker", "SkipTracker", "PrecisionTracker",
           "OVERFLOW_SKIPS", "SCALER_SKIPS"]


class LogTracker:
    """What kind of log it is: events read, reader notes, ranks with a NaN, record roles,
    frameworks (voted), the step counter and the run's length, a start-up line, fatal lines."""

    def __init__(self) -> None:
        self.n = 0
        self.notes: dict[str, Event] = {}     # reader notes (``truncated``)
        self.rank_nan: dict[int, bool] = {}   # rank -> has it shown a NaN loss
        self.roles: set[str] = set()          # the record roles seen (for an ``unknown``)
        self.fw: Counter[str] = Counter()
        self.max_step = 0
        self.max_total: int | None = None
        self.steps_seen = False           # some line named its step (a step counter exists)
        self.start_seen = False           # a start-up line (precision/config) came before a record
        self.fatal: list[Event] = []
        self.traceback: Event | None = None   # the last traceback's first line (Ctrl-C's: None)
        self.traceback_records = 0        # loss records before it
        self.finished: Event | None = None    # the last line saying that training finished
        self.lr_never: Event | None = None    # HF records whose learning rate never left 0.0
        self.metrics = 0                  # records of other values only, at a step, all finite
        self.unstepped = 0                # measures of quality with no step (an evaluation's summary)
        self.measures = 0                 # measures of quality in those records, all told
        self.metric_at: set[tuple[int, float | None]] = set()   # (step, epoch) of some of them

    def count(self, ev: Event) -> None:
        """A non-note event: its roles and rank."""
        self.n += 1
        step = ev.step if ev.explicit else None
        for role, value in (("loss", ev.loss), ("grad norm", ev.grad_norm),
                            ("loss scale", ev.scale_after), ("step", step)):
            if value is not None:
                self.roles.add(role)
        if ev.rank is not None and ev.kind in ("loss", "nan") and len(self.rank_nan) < 1024:
            bad = ev.kind == "nan" or (ev.loss is not None and not math.isfinite(ev.loss))
            self.rank_nan[ev.rank] = self.rank_nan.get(ev.rank, False) or bad

    def step(self, ev: Event) -> None:
        """An event that may name its step."""
        if ev.explicit:
            self.max_step = max(self.max_step, ev.step)
            self.steps_seen = True

    def context(self, ev: Event, records: int) -> None:
        """Framework vote, step, start-up and run length of a record-like event (``records``:
        loss records so far)."""
        if ev.framework != "generic":
            self.fw[ev.framework] += 2 if ev.kind in ("backoff", "hysteresis", "fatal") else 1
        self.step(ev)
        if ev.rule == "precision" and records == 0:
            self.start_seen = True
        if ev.total:
            self.max_total = max(self.max_total or 0, ev.total)
        if ev.kind == "fatal" and len(self.fatal) < 20:
            self.fatal.append(ev)


#: lines apart, at most, of one step's fields printed a line each
STEP_LINES = 8


def _same_step(nan: Event | None, ev: Event) -> bool:
    """Is ``ev`` another field of the step whose field ``nan`` was (both with a step the line
    names, the same one, a few lines apart)?"""
    return (nan is not None and nan.explicit and ev.explicit and nan.step == ev.step
            and 0 < ev.line_no - nan.line_no <= STEP_LINES)


class NanTracker:
    """The loss records: finite ones (first and last few, a thinned series), the first NaN (and
    whether it is at the start of training), NaNs after it, whether the log ends on one, and the
    trailing run of records whose loss is written as an exact 0 (``zero_run``, from ``zero_first``,
    after ``zero_after`` non-zero records; ``zero_flowing`` of them with a finite, non-zero grad
    norm, ``zero_norms`` two of those norms at most), and the first finite loss that explodes
    (``exploded``: ``EXPLODE`` times the largest before it, ``explode_from``) and whether the
    last record is still that far up (and not falling back from the peak by a like factor:
    recovering)."""

    def __init__(self) -> None:
        self.rec_index = 0                # records so far (those of one named step count once)
        self.rec_step: int | None = None  # the named step of the last record
        self.finite = 0
        self.first_losses: list[float] = []
        self.last_loss_ev: Event | None = None
        self.last_losses: deque[float] = deque(maxlen=8)
        self.first_nan: Event | None = None
        self.first_nan_rec = 0
        self.first_nan_explicit_early = False
        self.unanchored = False           # the first NaN named no step, and none was named before
        self.nans = 0
        self.finite_after_nan = 0
        self.last_record_nan = False
        self.last_nan: Event | None = None
        self.first_rec: Event | None = None   # the first finite loss record
        self.nonzero = 0                  # finite, non-zero loss records so far
        self.zero_run = 0                 # the last records in a row with a loss of exactly 0
        self.zero_first: Event | None = None
        self.zero_after = 0               # non-zero records before that run
        self.first_zero: Event | None = None   # the first record with a loss of exactly 0
        self.zero_flowing = 0             # records of the zero run whose gradients are not 0
        self.zero_norms: set[float] = set()   # their grad norms (one value repeated: no gradient
        #                                       of changing data, HF's constant sqrt(2) beside 0.0)
        self.peak = 0.0                   # the largest |loss| of the finite records so far
        self.ppl_peak = 0.0               # ... of those whose loss is a perplexity (rule ``ppl``)
        self.climb: list[float] = []      # the last records' |loss|, each above the one before
        self.exploded: Event | None = None
        self.explode_from = 0.0           # the largest |loss| before ``exploded``
        self.exploded_early = False       # ``exploded`` is at the start of training
        self.still_exploded = False       # the last finite record is still EXPLODE times up
        self.eval_nan = 0                 # finite training records beside a non-finite validation
        self.eval_nan_first: Event | None = None   # loss (``rule="loss-eval-nan"``), the first,
        #                                   and evaluation records of their own (``eval-loss``)
        self.eval_finite = 0              # evaluation records with a finite loss
        self.loss_s, self.nmarks = Thin(), Thin(1024)
        self.floored: Event | None = None   # the first loss read as SOFTMAX_FLOOR (non-finite)
        self.frozen = 0                   # finite records since the last NaN, all one value
        self.frozen_at: float | None = None  # ... that value (None: they differ, or none yet)
        self.nan_eval_finite = 0          # NaN records, each beside a finite evaluation loss
        #                                   (-1: one NaN record had none, or a NaN one)
        self.nan_eval_moved = 0           # ... of which that loss differs from the one before

    def evaluation(self, ev: Event) -> None:
        """An evaluation's record of its own (``rule="eval-loss"``): not a training record, but
        a finite one shows the model was finite then (a NaN after it is not at the start)."""
        if ev.loss is not None and math.isfinite(ev.loss) and not self.at_floor(ev):
            self.eval_finite += 1
            self.rec_index += 1
        else:
            self.eval_nan += 1
            self.eval_nan_first = self.eval_nan_first or ev

    def at_floor(self, ev: Event) -> bool:
        """Does ``ev`` print Caffe's softmax floor (``floored``: a loss that stands for a non-finite
        one)?  The first such record is kept for the caveat."""
        if not floored(ev.loss):
            return False
        self.floored = self.floored or ev
        return True

    def record(self, ev: Event, bad: bool, log: LogTracker) -> bool:
        """A loss record (``bad``: non-finite); True when it is the first NaN."""
        first = False
        if self.unanchored and (ev.explicit or ev.epoch is not None):
            # the first NaN came before the log named any step (a window that starts inside a
            # record: Caffe's ``Train net output`` line before ``Iteration 870, loss = nan``, a
            # trainer's ``(loss terms) l1 nan`` before ``EP 42 ( 75) | loss: nan``): it is at the
            # start only if the steps (or the epoch) that follow it begin there
            self.unanchored = False
            if self.rec_index - self.first_nan_rec <= 2:
                self.first_nan_explicit_early = self.first_nan_explicit_early and early(
                    ev, log.max_total, self.first_nan_rec, ev.explicit or log.steps_seen,
                    log.start_seen)
        if ev.rule == "loss-eval-nan":
            self.eval_nan += 1
            self.eval_nan_first = self.eval_nan_first or ev
        elif ev.rule == "loss-eval":
            self.eval_finite += 1
        if bad and self.nan_eval_finite >= 0:   # (NaN training records beside finite evaluations)
            finite = ev.rule in ("nan-eval-finite", "nan-eval-moved")
            self.nan_eval_finite = self.nan_eval_finite + 1 if finite else -1
            self.nan_eval_moved += ev.rule == "nan-eval-moved"
        if not bad and ev.loss == 0.0 and ev.exact_zero:
            self.first_zero = self.first_zero or ev
            if self.zero_run == 0:
                self.zero_first, self.zero_after, self.zero_flowing = ev, self.nonzero, 0
                self.zero_norms = set()
            self.zero_run += 1
            gn = ev.grad_norm
            if gn is not None and math.isfinite(gn) and gn > 0:
                self.zero_flowing += 1
                if len(self.zero_norms) < 2:
                    self.zero_norms.add(gn)
        else:
            self.zero_run = 0
            self.nonzero += not bad and ev.loss is not None and ev.loss != 0.0
        if bad:
            self.nans += 1
            self.nmarks.add((ev.step, ev.line_no))
            if self.first_nan is None:
                first = True
                self.first_nan, self.first_nan_rec = ev, self.rec_index
                self.first_nan_explicit_early = early(ev, log.max_total, self.rec_index,
                                                      log.steps_seen, log.start_seen)
                self.unanchored = not (ev.explicit or log.steps_seen or ev.epoch is not None
                                       or ev.rule in ENDING_RULES)
            self.last_record_nan = True
            self.frozen, self.frozen_at = 0, None
        elif ev.loss is not None:
            self._freeze(ev.loss)
            self._explosion(ev, log)
            self.finite += 1
            if self.first_nan is not None:
                self.finite_after_nan += 1
            if len(self.first_losses) < 8:
                self.first_losses.append(ev.loss)
            self.first_rec = self.first_rec or ev
            self.last_losses.append(ev.loss)
            self.last_loss_ev = ev
            self.loss_s.add((ev.step, ev.loss))
            # (a finite field of the NaN's own step, printed on a line of its own right after it:
            # pix2pix's ``discrim_loss nan`` / ``gen_loss_L1 380.2``; the step stays a NaN one)
            self.last_record_nan = self.last_record_nan and _same_step(self.last_nan, ev)
        if bad:
            self.last_nan = ev
        # (records of one named step count once: Caffe prints each iteration's loss twice,
        # ``Iteration 0, loss = 2.47`` then ``Train net output #0: loss = 2.47``)
        if not (ev.explicit and ev.step == self.rec_step):
            self.rec_index += 1
        self.rec_step = ev.step if ev.explicit else None
        return first

    def _freeze(self, loss: float) -> None:
        """Count the finite records after a NaN while they all print one value (with at least
        three significant digits: a loss written ``0.00`` is not frozen, only rounded)."""
        if self.first_nan is None:
            return
        if self.frozen == 0 and _digits(loss) >= 3:
            self.frozen, self.frozen_at = 1, loss
        elif self.frozen and loss == self.frozen_at:
            self.frozen += 1
        else:
            self.frozen, self.frozen_at = -1, None   # (-1: they differ; no later record counts)

    @property
    def frozen_after_nan(self) -> bool:
        """The records after the last NaN all print one loss (``FROZEN`` or more of them): the
        weights no longer change, the NaN has not passed."""
        return self.frozen >= FROZEN

    def _explosion(self, ev: Event, log: LogTracker) -> None:
        """A finite training loss EXPLODE times the largest before it, or EXPLODE times where a
        climb of at most CLIMB_RECORDS records, each above the one before, started (and at least
        EXPLODE_AT): the divergence that ends in a NaN, before the NaN is printed.  A row of
        numbers under no name (``rule="bare-row"``) is left out: which of its columns is the loss
        is not known (an elapsed time grows a thousandfold in a long run)."""
        if ev.loss is None or ev.rule == "bare-row":
            return
        size = abs(ev.loss)
        self.climb = self.climb + [size] if self.climb and size > self.climb[-1] else [size]
        del self.climb[:-CLIMB_RECORDS]
        start = self.climb[0] if len(self.climb) > 2 else 0.0
        if self.exploded is None and size >= EXPLODE_AT and (
                self.peak > 0 and size >= EXPLODE * self.peak
                or start > 0 and size >= EXPLODE * start):
            self.exploded = ev
            self.explode_from = self.peak if size >= EXPLODE * self.peak else start
            self.exploded_early = early(ev, log.max_total, self.rec_index, log.steps_seen,
                                        log.start_seen)
        self.peak = max(self.peak, size)
        if ev.rule == "ppl":
            self.ppl_peak = max(self.ppl_peak, size)
        # still up, and not falling back from its peak by as much as it rose (recovering)
        self.still_exploded = (self.exploded is not None and size >= EXPLODE * self.explode_from
                               and size * EXPLODE >= self.peak)


class GradTracker:
    """Grad norms: the first non-finite one, finite losses with a non-finite grad norm (skipped
    steps), the streak of them (and at the first NaN), and a loss of exactly 0.0 next to a
    non-finite grad norm (``applied``: the update reached the weights)."""

    def __init__(self) -> None:
        self.first_bad_grad: Event | None = None
        self.gn_bad_finite_loss = 0
        self.trailing_gn_bad = 0
        self.prev_gn_bad = False
        self.last_gn: float | None = None
        self.gn_streak: list[Event] = []        # consecutive finite-loss records, grad norm bad
        self.streak_at_nan: list[Event] = []
        self.applied: Event | None = None
        self.nonzero_finite = 0           # finite, non-zero losses read so far
        self.applied_trained = False      # ... some before ``applied``: training happened first
        self.applied_early = False        # ``applied`` is the run's first record, at its start

    def bad(self, ev: Event) -> None:
        """An event with a non-finite gradient."""
        self.first_bad_grad = self.first_bad_grad or ev

    def record(self, ev: Event, bad: bool, first_nan: bool, rec_index: int,
               log: LogTracker) -> None:
        """A loss record (``rec_index``: its place among the records)."""
        loss, gn = ev.loss, ev.grad_norm
        gn_bad = gn is not None and not math.isfinite(gn)
        if gn_bad:
            self.bad(ev)
        if first_nan:
            self.streak_at_nan = self.gn_streak[:]
        if not bad and loss is not None:
            if loss == 0.0 and (self.prev_gn_bad or gn_bad) and self.applied is None:
                self.applied = ev       # a loss of exactly 0.0 next to non-finite gradients
                # it means "the update was applied" only after training happened (a finite,
                # non-zero loss before it); as the run's first record it is NaN from step 1
                self.applied_trained = self.nonzero_finite > 0
                self.applied_early = not self.applied_trained and (
                    rec_index <= 2 and ev.epoch <= EARLY_EPOCH
                    if ev.epoch is not None and not (ev.explicit or log.steps_seen)
                    else early(ev, log.max_total, rec_index, log.steps_seen, log.start_seen))
            if loss != 0.0:
                self.nonzero_finite += 1
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


#: skip messages that state an overflow: the scaler (or the optimizer's finiteness check) dropped
#: the step because its gradients were not finite
OVERFLOW_SKIPS = frozenset({"ds-overflow-noscale", "ds-grad-overflow", "apex-skip",
                            "fairseq-amp-skip", "colossalai-skip", "mindspore-overflow",
                            "mindspore-overflow-applied"})
#: skip messages that only an fp16 loss scaler prints (never a bf16 or fp32 run)
SCALER_SKIPS = frozenset({"lr-frozen", "colossalai-skip"})


class SkipTracker:
    """Skipped steps: how many (``count``), by which rule, by a counter (DeepSpeed ``skipped=``,
    Megatron's skipped iterations: intervals skipped in full), at the floor, one that only an
    fp16 scaler skips (``scaler_skip``), the first message stating an overflow (``overflow``),
    a skip counter that read 0 (before/after a NaN), and the overflow messages in a row that print
    one unchanged scale (``fixed``: the first and the last, ``fixed_n`` of them)."""

    def __init__(self) -> None:
        self.count = 0
        self.rules: dict[str, Event] = {}
        self.counted = 0
        self.after_floor = 0
        self.scaler_skip: Event | None = None   # a skipped step that only an fp16 scaler skips
        self.overflow: Event | None = None      # the first skip message stating an overflow
        self.counter_step: int | None = None
        self.full_skips = self.full_skips_late = 0
        self.full_skip_ev: Event | None = None
        self.counter_zero = False         # a skip counter read 0
        self.zero_skips_after_nan = False  # ... and still read 0 after the first NaN
        self.fixed: list[Event] = []
        self.fixed_n = 0

    def zero(self, after_nan: bool) -> None:
        """A skip counter at zero: no dynamic scaler has skipped a step so far (reference §7: the
        counters family is evidence, unlike silence); after a NaN it says nothing skipped it."""
        self.counter_zero = True
        if after_nan:
            self.zero_skips_after_nan = True

    def skip(self, ev: Event, final_scale: float | None) -> None:
        """A skip record (``final_scale``: the scale in force)."""
        self.count += ev.count or 1
        self.rules.setdefault(ev.rule, ev)
        if ev.rule in ("ds-skipped-counter", "megatron-all-skipped"):
            self.counted += ev.count or 1
        if final_scale is not None and final_scale <= FLOOR:
            self.after_floor += 1
        if ev.rule in SCALER_SKIPS:
            self.scaler_skip = self.scaler_skip or ev
        if ev.rule in OVERFLOW_SKIPS:
            self.overflow = self.overflow or ev
            if ev.scale_after is None or not self.fixed or \
                    self.fixed[0].scale_after != ev.scale_after:
                self.fixed, self.fixed_n = ([ev] if ev.scale_after is not None else []), 1
            else:
                self.fixed, self.fixed_n = [self.fixed[0], ev], self.fixed_n + 1

    def counted_on_record(self, ev: Event) -> None:
        """Megatron's loss record with its skipped-iterations counter, and counter records:
        how many in a row report every step of their interval skipped."""
        if ev.kind == "loss" and ev.count and ev.framework == "megatron":
            self.count += ev.count
            self.counted += ev.count
        if ev.explicit and ev.count is not None and ev.rule in (
                "ds-skipped-counter", "megatron-all-skipped", "megatron-loss",
                "megatron-loss-missing"):
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


class PrecisionTracker:
    """The precision the log states (the last one stated; ``ev``: the first line stating one)."""

    def __init__(self) -> None:
        self.stated: str | None = None
        self.ev: Event | None = None

    def feed(self, ev: Event) -> None:
        if ev.precision:
            self.stated = ev.precision
            self.ev = self.ev or ev

    def close(self, given: str | None, scaler_skip: Event | None) -> str | None:
        """The precision to decide with: the one given, else the one stated, else fp16 where a
        step was skipped as only fp16's scaler does (``scaler_skip``)."""
        if not (given or self.stated) and scaler_skip is not None:
            self.stated, self.ev = "fp16", scaler_skip
        return given or self.stated


def _digits(x: float) -> int:
    """Significant digits of ``x`` as Python writes it (``4.4755``: 5; ``2.0``: 1)."""
    mantissa = repr(abs(x)).split("e")[0].replace(".", "")
    return len(mantissa.lstrip("0").rstrip("0"))
