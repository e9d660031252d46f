"""The doctor's limits and the two helpers every tracker shares: a thinned series (``Thin``) and
"at the start of training" (``early``)."""

from __future__ import annotations

import math

from fampnb.logs import SOFTMAX_FLOOR, Event

__all__ = ["EARLY_STEPS", "EARLY_EPOCH", "EXPLODE", "EXPLODE_AT", "CLIMB_RECORDS", "ASTRONOMICAL",
           "PPL_BEYOND", "NEAR_RECORDS", "SOFTMAX_FLOOR", "FROZEN", "floored",
           "CALIBRATION_FLOOR", "FLOOR", "SMALL_SCALE", "CAP", "TARGET_ONLY", "SAID_AT_MINIMUM",
           "ENDING_RULES", "Thin", "early", "pow2"]

EARLY_STEPS = 100          # a NaN at or before this step (or within 5% of the run) is "at the start"
EARLY_EPOCH = 0.05         # ... or an HF record at or before this epoch (with no step counter)
EXPLODE = 1000.0           # a finite loss this many times the largest before it has exploded
EXPLODE_AT = 1000.0        # ... and is at least this large (a loss of 1e-5 rising to 0.05 is not)
CLIMB_RECORDS = 12         # ... or EXPLODE times where it started, rising on every record of at most
#                            this many (a geometric climb: 1.8x a record at least, as a learning
#                            rate too high for the model gives; a running total grows slower)
ASTRONOMICAL = 1e20        # a finite loss this large is a diverged run, whatever the window shows
PPL_BEYOND = 1e7           # ... as is a perplexity above any vocabulary's size (a model that does
#                            worse than guessing uniformly: MXNet's char-rnn at its 1e10 floor)
FROZEN = 5                 # records after a NaN that print one loss, to all its digits: the
#                            weights no longer change (a loss frozen there is no recovery)
NEAR_RECORDS = 3           # finite loss records allowed between backoffs and a NaN they explain
CALIBRATION_FLOOR = 256.0  # the article's line: below it and still falling is a failure
FLOOR = 1.0                # DeepSpeed/Megatron minimum; below it the gradients are non-finite
#: frameworks that keep a printed scale near or below 1 on purpose, and the level below which
#: their own source calls it small (icefall's trainers double any scale under 1 or 8 and warn
#: "Grad scale is small" under 0.01): a printed scale below FLOOR is no collapse above it
SMALL_SCALE = {"icefall": 0.01}
CAP = 4096                 # points kept per plotted series
#: backoff wordings that print only the new scale (the reader fills ``scale_before`` from the
#: last one printed, which misses any growth in between)
TARGET_ONLY = frozenset({"apex-overflow", "fairseq-overflow", "apex-legacy-overflow",
                         "colossalai-backoff", "marian-backoff"})
#: overflow records that say the scale is at its minimum: one is enough to be stuck there
SAID_AT_MINIMUM = frozenset({"marian-at-minimum"})
#: NaN messages that end a run (no step of their own): see ``early``
ENDING_RULES = frozenset({"tf-nan-loss", "tf-check-numerics", "anomaly", "nan-assert",
                          "nan-kernel-assert", "nan-detected", "nan-distribution",
                          "loss-became-nan", "fasttext-nan-loss"})


def floored(loss: float | None) -> bool:
    """Is ``loss`` ``SOFTMAX_FLOOR`` as a log prints it (to four decimals or more: ``87.3365``,
    a test net's average ``87.3366``)?  Such a loss stands for a non-finite one."""
    return loss is not None and abs(loss - SOFTMAX_FLOOR) < 6e-5


def pow2(x: float) -> bool:
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


def early(ev: Event, max_total: int | None, rec_index: int, steps_seen: bool = False,
          start_seen: bool = False) -> bool:
    """Is ``ev`` at or near the first step *of training*, not just of the excerpt?

    A record that names an epoch above 1 (``Epoch: 69``, a Lightning bar's ``Epoch 12:``, HF's
    ``'epoch': 1.5``) is past the first epoch whatever its step: never the start of training --
    unless its step already counts the epochs before it (``[epoch 2][iter 0/88]`` is step 88:
    tiny epochs), when the step decides.
    Where the log counts steps (on this line, or earlier: ``steps_seen``) the counter decides:
    one of the very first steps, or among the first records of the log (at most two before it)
    within the first 100 steps (5 % of a short run, at most 500 steps); the end-of-epoch record of
    the first epoch (``N/N`` batches, Keras) is early however many batches it counts.  Without a
    step counter,
    a training record among the first three of the log counts as early; a NaN *ending* message
    (``Model diverged with loss = NaN``, ``loss is nan, stopping``) is not a record of a step: it
    says when the run stopped, not when the NaN began, so with no counter and no earlier record
    it is early only when the log shows its start (a start-up line: ``start_seen``)."""
    if ev.epoch is not None and ev.epoch > 1 and not (
            ev.explicit and ev.total and ev.step >= (ev.epoch - 1) * ev.total):
        return False
    if (ev.epoch is not None and ev.epoch <= 1 and ev.explicit and ev.total
            and ev.step == ev.total and rec_index <= 2):
        return True     # the first epoch's summary (Keras ``124/124 ... loss: nan`` after ``Epoch
        #                 1/50``): its counter counts the epoch's batches, the epoch is the start
    if ev.explicit or steps_seen:
        total = ev.total or max_total or 0
        if ev.step <= 10:
            return True
        return rec_index <= 2 and ev.step <= max(EARLY_STEPS, min(0.05 * total, 5 * EARLY_STEPS))
    if ev.rule in ENDING_RULES:
        return rec_index <= 2 and start_seen
    return rec_index <= 2
