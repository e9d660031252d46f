"""The decision: an ordered list of named checks, the article's chain (``CHECKS``).

Each check looks at the ``Case`` (what the trackers of ``fampnb.diagnose._accumulate`` hold, plus
what every check shares: the lasting NaN, the failed and unheld runs of backoffs) and returns a
``Finding`` (verdict, reason, certainty) or ``None``; the first finding decides, its check's name
is ``Diagnosis.check``.  A check may add evidence and caveats to the case.  The last check always
finds (``healthy``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from fampnb.diagnose._accumulate import FLOOR, Accumulator, Run
from fampnb.diagnose._judge import (
    at_start,
    ends_on_bad_grad_jump,
    failure_run,
    fmt,
    healthy_reason,
    held,
    nan_verdict,
    scale_holds,
    stuck_skipping,
    where_text,
)
from fampnb.diagnose._limits import ASTRONOMICAL, PPL_BEYOND, SAID_AT_MINIMUM, SMALL_SCALE
from fampnb.diagnose._text import CAVEATS
from fampnb.logs import Event

__all__ = ["Case", "Finding", "CHECKS", "run_checks"]


@dataclass
class Finding:
    verdict: str
    reason: str
    certainty: str = "likely"


@dataclass
class Case:
    """What the checks read and add to."""

    acc: Accumulator
    precision: str | None
    fw: str
    lasting: Event | None = None
    failures: list[tuple[Run, str]] = field(default_factory=list)
    calib: list[Run] = field(default_factory=list)
    unheld: list[Run] = field(default_factory=list)
    evidence: list[Event | None] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)
    ranks: tuple[list[int], list[int]] | None = None   # (with a NaN, without) where they disagree
    apart: list[int] | None = None     # ranks read apart: interleaved, their losses read as an explosion

    @classmethod
    def of(cls, acc: Accumulator, precision: str | None) -> Case:
        votes = acc.log.fw
        fw = votes.most_common(1)[0][0] if votes else ("generic" if acc.log.n else "unknown")
        case = cls(acc, precision, fw)
        # lasting NaN: the last loss record is non-finite, or the weights were destroyed
        if acc.nan.first_nan is not None and (acc.nan.last_record_nan
                                              or acc.nan.frozen_after_nan):
            case.lasting = acc.nan.first_nan
        elif acc.grad.applied is not None:
            case.lasting = acc.grad.first_bad_grad or acc.grad.applied
        case.failures = [(r, why) for r in acc.scale.runs
                         if (why := failure_run(r, acc, case.lasting))]
        failed = {id(r) for r, _ in case.failures}
        case.calib = [r for r in acc.scale.runs if at_start(r, acc) and id(r) not in failed]
        calib = {id(r) for r in case.calib}
        case.unheld = [r for r in acc.scale.runs if id(r) not in calib and id(r) not in failed
                       and not held(r, acc)]
        if case.calib:
            case.caveats.append(CAVEATS["calibration"])
            case.evidence += [case.calib[0].first, case.calib[0].last]
        return case


def min_scale_error(c: Case) -> Finding | None:
    """An error that ends the run on the scaler: its minimum reached (DeepSpeed, fairseq, torch),
    or too many overflows in a row (GPT-NeoX's ``Skipped 50 iterations in a row due to
    Overflow``)."""
    e = next((e for e in c.acc.log.fatal if e.rule in ("min-scale", "overflow-exit")), None)
    if e is None:
        return None
    c.evidence += [x for r, _ in c.failures[:2] for x in (r.first, r.last)] + [e]
    said = ("the scaler hit its minimum and the run stopped" if e.rule == "min-scale" else
            "the steps kept overflowing and the run stopped on it")
    return Finding("overflow", f"{said}: {e.text.strip()[:160]}", "certain")


def nan_before_backoffs(c: Case) -> Finding | None:
    """The first record is already NaN, at the start, before the first backoff, and no finite
    loss follows (PaddleDetection's ``loss: nan`` at learning rate 0, then ``Found inf or nan,
    current scale is: 1024.0, decrease to: 1024.0*0.5`` down to 1): the scaler meets non-finite
    values at every scale, which no scale fixes (section 7: treat it like a data case)."""
    nan = c.acc.nan
    if (not c.failures or c.lasting is None or nan.first_nan is None or nan.finite
            or not nan.first_nan_explicit_early or nan.first_nan_rec):
        return None
    r = c.failures[0][0]
    if r.first.line_no <= nan.first_nan.line_no:
        return None
    c.evidence += [nan.first_nan, r.first, r.last]
    return Finding("data", f"NaN from the first record ({_where(nan.first_nan, c)}), before the "
                   "first backoff, and no finite loss after it: the scaler then halves at every "
                   "scale, which no scale fixes")


def failed_backoffs(c: Case) -> Finding | None:
    if not c.failures:
        return None
    r, why = c.failures[0]
    c.evidence += r.events[:3] + r.events[-3:] + [c.lasting]
    if r.end_scale is not None and r.end_scale < FLOOR:
        c.caveats.append(CAVEATS["below-one"])
    sure = (r.end_scale or 1) < FLOOR or r.levels >= 5
    return Finding("overflow", f"overflow: {why}", "certain" if sure else "likely")


def stuck_at_floor(c: Case) -> Finding | None:
    """Overflow records with the scale already at the floor: two or more, or one whose scale is
    a float 0 (``0.0``: halved to nothing, over a thousand halvings; an ``int()``-printed ``0``
    is a scale somewhere below 1, and once decides nothing by itself), or one that says so
    (Marian's ``cost-scaling factor ... is already at minimum``)."""
    sc = c.acc.scale
    if sc.floor_first is None or sc.floor_last is None:
        return None
    at = sc.floor_last.scale_before
    _, marker, printed = sc.floor_last.text.lower().partition("attempted loss scale:")
    nothing = at == 0 and bool(marker) and printed.lstrip().startswith("0.")
    said = sc.floor_last.rule in SAID_AT_MINIMUM
    if sc.floor_attempts < 2 and not nothing and not said:
        return None
    shown = ("0 (halved to nothing)" if nothing
             else "0 (printed as an integer: a scale below 1)" if at == 0
             else fmt(at, sc.floor_last.scale_log2))
    c.evidence += [sc.floor_first, sc.floor_last]
    if at is not None and at < FLOOR:
        c.caveats.append(CAVEATS["below-one"])
    records = (f"{sc.floor_attempts} overflow records (lines {sc.floor_first.line_no}-"
               f"{sc.floor_last.line_no})" if sc.floor_attempts > 1
               else f"1 overflow record (line {sc.floor_last.line_no})")
    return Finding("overflow", f"the scaler is stuck at its floor: {records} with the scale "
                   f"already at {shown}, so it cannot halve any further and every step is "
                   "skipped", "certain" if sc.floor_attempts >= 3 else "likely")


#: overflow records in a row at one unchanged scale that make it the finding
FIXED_RECORDS = 3


def overflow_at_fixed_scale(c: Case) -> Finding | None:
    """Overflow records, again and again, that print the same scale after the overflow
    (MindSpore's ``overflow, still update, loss scale adjust to 1024.0``): the scale never falls
    (a static scale), so the steps keep overflowing; with ``still update`` they are applied."""
    skip = c.acc.skip
    if skip.fixed_n < FIXED_RECORDS or not skip.fixed:
        return None
    if c.acc.nan.finite == 0 and c.acc.nan.first_nan is not None:
        return None   # (the loss is NaN from its first record: the forward pass is, and the
    #                    scale multiplies the loss after it, so the overflows follow the NaN)
    first, last = skip.fixed[0], skip.fixed[-1]
    applied = last.rule.endswith("-applied")
    c.evidence += [first, last, c.acc.nan.last_loss_ev]
    return Finding("overflow", f"{skip.fixed_n} overflow records in a row (lines {first.line_no}-"
                   f"{last.line_no}) at an unchanging loss scale of {fmt(first.scale_after)}: the "
                   "scale never falls (a static scale), so the steps keep overflowing"
                   + ("; the framework applies the overflowed steps instead of skipping them "
                      "(overflow_still_update)" if applied else ""))


#: steps a skip counter must cover, all of them skipped, to say that every step is skipped
ALL_SKIPPED_STEPS = 10


def skipping_at_floor(c: Case) -> Finding | None:
    """The scale at its floor and steps still skipped: three records at the floor, two skips
    after it, or a skip counter that says every step so far was skipped (DeepSpeed's ``step=17,
    skipped=17``)."""
    acc, sc, skip = c.acc, c.acc.scale, c.acc.skip
    floor = sc.final_scale is not None and sc.final_scale <= FLOOR
    every = (skip.counter_step is not None and skip.counter_step >= ALL_SKIPPED_STEPS
             and skip.counted >= skip.counter_step)
    if not (sc.floor_hits >= 3 or (floor and skip.after_floor >= 2 and sc.obs_values != {1.0})
            or (floor and every)):
        return None
    c.evidence += [r.last for r in acc.scale.runs[-2:]] + list(acc.skip.rules.values())[:2]
    return Finding("overflow", "the scale sits at its floor and the steps keep being skipped")


def skipping_forever(c: Case) -> Finding | None:
    acc = c.acc
    if not (acc.skip.full_skips_late >= 3 or (acc.skip.counted >= 20 and acc.log.max_step >= 50
                                         and acc.skip.counted >= 0.5 * acc.log.max_step)):
        return None
    c.evidence += [acc.skip.full_skip_ev] + list(acc.skip.rules.values())[:3]
    return Finding("overflow", f"{acc.skip.counted} steps were skipped, every step of the last "
                   f"{max(acc.skip.full_skips, 1)} counter interval(s): the fp16 steps keep "
                   "overflowing (skipping forever)")


def silent_skips_into_nan(c: Case) -> Finding | None:
    acc, p = c.acc, c.precision
    streak = acc.grad.streak_at_nan or acc.grad.gn_streak
    if not (c.lasting is not None and len(streak) >= 2 and (acc.grad.applied is None or p == "fp16")
            and p not in ("bf16", "fp32")):
        return None
    ending = (f"a lasting NaN loss at line {acc.nan.first_nan.line_no}" if acc.nan.first_nan
              else "a loss that never recovers")
    c.evidence += [streak[0], streak[-1], c.lasting]
    return Finding("overflow", f"{len(streak)} consecutive records with a non-finite grad norm "
                   f"(steps the silent scaler skipped, from line {streak[0].line_no}) run "
                   f"straight into {ending}")


def overflow_skips_at_nan(c: Case) -> Finding | None:
    """A NaN at the start of the excerpt that the scaler's overflow messages go with (ColossalAI's
    ``found inf during ShardedOptimV2 step``, apex's ``Gradient overflow, skipping update``, ...):
    not the ``data`` case of the chain, which is a NaN at the start *with no overflow record*."""
    acc, ovf = c.acc, c.acc.skip.overflow
    nan = acc.nan.first_nan
    if c.lasting is None or ovf is None or nan is None or not acc.nan.first_nan_explicit_early:
        return None
    c.evidence += [nan, ovf, c.lasting]
    said = " ".join(ovf.text.split())[:120]      # (a console's padding collapsed)
    return Finding("unknown", f"NaN from the start of the excerpt (step {nan.step}, line "
                   f"{nan.line_no}), but the scaler's overflow messages go with it (line "
                   f"{ovf.line_no}: {said}): the steps are being skipped, so this is no plain data "
                   "NaN. A cascade of overflows that began before the excerpt and a "
                   "NaN from the forward pass (a bad batch, or fp16 activations overflowing, which no "
                   "loss scale fixes) look the same here; the lines before it, with the loss scale, "
                   "would tell")


def nan_input(c: Case) -> Finding | None:
    """The log says the input holds NaN (a trainer skipping a sample for its NaN tokens,
    scikit-learn's ``Input contains NaN``): the data is at fault, whatever the loss did after."""
    e = c.acc.log.notes.get("nan-input")
    if e is None:
        return None
    c.evidence.append(e)
    return Finding("data", f"the log says the input holds NaN at {_where(e, c)}: "
                   f"{e.text.strip()[:120]}")


def nan_beside_finite_evaluation(c: Case) -> Finding | None:
    """Every NaN training record carries a finite evaluation loss, two or more of them, and that
    loss moves from one to the next (Keras's ``loss: nan - ... - val_loss: 0.2637``, then
    ``0.2188``: evaluated again, not a value held over): NaN weights would make the evaluation NaN
    too, so the NaN is in the training loss as printed (a metric averaged across devices, a masked
    sample), not in the model: no verdict on the run from it."""
    nan = c.acc.nan
    if c.lasting is None or nan.nan_eval_finite < 2 or nan.nan_eval_moved < 1:
        return None
    c.evidence.append(c.lasting)
    return Finding("unknown", f"the training loss reads NaN from {_where(c.lasting, c)} while the "
                   "evaluation loss beside it stays finite on every record: NaN weights would make "
                   "it NaN too, so the NaN is in the printed training loss, not in the model")


def lasting_nan(c: Case) -> Finding | None:
    if c.lasting is None:
        return None
    verdict, reason, certainty = nan_verdict(c.acc, c.lasting, c.precision, c.caveats, c.fw)
    c.evidence += [c.lasting, c.acc.grad.applied]
    return Finding(verdict, reason, certainty)


def scale_below_one(c: Case) -> Finding | None:
    """A printed scale below 1 (below the framework's own "small", where it keeps the scale near
    1 on purpose: ``SMALL_SCALE``) that does not hold."""
    acc = c.acc
    floor = min(FLOOR, SMALL_SCALE.get(c.fw, FLOOR))
    if not (acc.scale.obs_values and acc.scale.obs_scale is not None and acc.scale.obs_scale < floor
            and not scale_holds(acc)):
        return None
    c.caveats.append(CAVEATS["below-one"])
    c.evidence.append(acc.scale.first_obs)
    return Finding("overflow", f"the printed loss scale is {fmt(acc.scale.obs_scale)}, below 1: a "
                   "silent scaler has halved it on every overflowing step")


def silent_scaler_stuck(c: Case) -> Finding | None:
    if not (stuck_skipping(c.acc) and c.precision not in ("bf16", "fp32")):
        return None
    c.evidence.append(c.acc.grad.first_bad_grad)
    return Finding("overflow", f"the last {c.acc.grad.trailing_gn_bad} records all have a non-finite "
                   "grad norm and the loss does not improve: the silent scaler keeps skipping "
                   "every step")


def api_misuse(c: Case) -> Finding | None:
    mis = next((e for e in c.acc.log.fatal if e.rule == "misuse"), None)
    if mis is None:
        return None
    c.caveats.append(CAVEATS["misuse"])
    c.evidence.append(mis)
    return Finding("unknown", f"an API misuse error, not a NaN diagnosis: {mis.text.strip()[:160]}")


def nonfinite_grad_error(c: Case) -> Finding | None:
    e = next((e for e in c.acc.log.fatal if e.rule == "nonfinite-grad"), None)
    if e is None:
        return None
    c.evidence.append(e)
    if c.acc.nan.finite == 0 and not c.acc.log.start_seen:
        # (an ending message with no record and no start of training before it: when in the run
        # the gradients went bad, the lines do not say, as for the other ending messages)
        return Finding("unknown", "an error says the gradients are not finite, but no record or "
                       "start of training before it says how far the run had got")
    early = c.acc.nan.finite <= 1
    return Finding("data" if early else "no-scaler",
                   "an error says the gradients are not finite, with no loss scaler to absorb "
                   "them (fairseq bf16/fp32: 'gradients are Nan/Inf'; DyNet: 'Magnitude of "
                   "gradient is bad: -nan')" + (" at the start" if early else " mid-run"))


def error_ends_log(c: Case) -> Finding | None:
    if not c.acc.log.fatal:
        return None
    c.evidence.append(c.acc.log.fatal[0])
    return Finding("unknown", f"an error ends the log: {c.acc.log.fatal[0].text.strip()[:160]}")


def unheld_backoff(c: Case) -> Finding | None:
    if not c.unheld:
        return None
    r = c.unheld[-1]
    after = ("the excerpt ends right after it" if r.loss_after == 0 else
             f"the next record jumps (loss {fmt(r.loss_ref)} -> {fmt(r.loss_next)}, grad norm "
             f"{fmt(r.gn_ref)} -> {fmt(r.gn_next)}) and the excerpt ends")
    c.evidence += r.events[:3] + [c.acc.nan.last_loss_ev]
    return Finding("unknown", f"a mid-run backoff ({fmt(r.start_scale)} -> {fmt(r.end_scale)}, "
                   f"line {r.last.line_no}) that may be isolated or the start of a cascade: "
                   f"{after}, so nothing shows that the scale held")


def bad_grad_jump_at_end(c: Case) -> Finding | None:
    jump = ends_on_bad_grad_jump(c.acc)
    if jump is None:
        return None
    c.evidence += [c.acc.grad.first_bad_grad, c.acc.nan.last_loss_ev]
    return Finding("unknown", f"the excerpt ends on {c.acc.grad.trailing_gn_bad} record(s) with a "
                   f"non-finite grad norm whose loss jumps ({fmt(jump[0])} -> {fmt(jump[1])}): a "
                   "step that an fp16 scaler skipped, or the start of a collapse (bf16 has no "
                   "scaler to skip it); nothing after it shows which")


def bad_grad_only(c: Case) -> Finding | None:
    """Every loss record of the excerpt has a non-finite grad norm (and a finite loss): an fp16
    scaler skipping its first steps and a NaN gradient applied in bf16 or fp32 print the same
    record, and no record with a finite grad norm shows training going on."""
    acc = c.acc
    k = acc.grad.trailing_gn_bad
    if not k or k != acc.nan.finite or acc.nan.first_nan is not None or c.precision == "fp16":
        return None
    c.evidence += [acc.grad.first_bad_grad, acc.nan.last_loss_ev]
    return Finding("unknown", f"every loss record ({k}) has a non-finite grad norm: a step that "
                   "an fp16 scaler skipped (at start-up it is calibrating) or a NaN gradient that "
                   "bf16 or fp32 applies; no record with a finite grad norm shows training go on, "
                   "and the log states no precision")


def _where(ev: Event, c: Case) -> str:
    """``step N (line L)`` where the log counts steps, else ``line L`` (``where_text``)."""
    return where_text(ev, c.acc.log.steps_seen)


#: records in a row, at the end of the log, with a loss written as an exact 0
ZERO_RECORDS = 3
#: a loss below this share of its first value has declined towards 0 (a 0 after it may be the
#: decline's end, printed exactly): only a drop from above it is a loss that "became" 0
DECLINED = 0.1


def lr_never_stepped(c: Case) -> Finding | None:
    """HF Trainer records whose learning rate stays exactly 0.0 while training goes on (a
    warm-up from 0 that never starts): the Trainer steps its scheduler only after an optimizer
    step that ran, and only an fp16 loss scaler skips one; skipping every step from the first
    means non-finite gradients at every scale it tried (§7's data case; a bf16-pretrained model
    trained in fp16 reads the same)."""
    note = c.acc.log.lr_never
    if note is None or c.precision in ("bf16", "fp32"):
        return None
    c.evidence += [note, c.acc.nan.last_loss_ev]
    return Finding("data", f"the learning rate is still exactly 0.0 on record {note.count} "
                   f"(line {note.line_no}): the Trainer steps its scheduler only after an optimizer "
                   "step that ran, so the fp16 loss scaler (silent) has skipped every step from "
                   "the first: the gradients are non-finite at every scale it tried. Check the "
                   "data, and whether the model was pretrained in bf16", "likely")


def loss_became_zero(c: Case) -> Finding | None:
    """The loss collapsed to exactly 0 after non-zero records and stays there, or is 0 on every
    record (the last ``ZERO_RECORDS`` records or more, each written as an exact zero:
    ``0.0000e+00``, ``0.0``; a ``0.0000`` can be a small loss rounded, see ``Event.exact_zero``):
    no healthy training, but an underflow or a degenerate run.  ``no-scaler`` when the log states
    fp16 and shows no scaler.  Not when each of those records shows a finite, non-zero grad norm
    (an underflowed or degenerate loss has no gradient), unless it is one value repeated to the
    last digit (a norm that no batch changes: HF's ``1.4142135381698608`` beside ``'loss': 0.0``)."""
    nan = c.acc.nan
    z = nan.zero_first
    every = nan.zero_after == 0 and nan.zero_run == nan.finite   # (0 on every record, from the first)
    # (a loss never 0 before, over ZERO_RECORDS records or more, that drops to 0 from where it
    # was, not from a decline towards it: HF Trainer's dicts after a step that destroyed the
    # weights; a loss that has been 0 and came back is an objective that saturates now and
    # then, DPO's)
    before = list(nan.last_losses)[:-nan.zero_run] if nan.zero_run else []
    first = (nan.first_zero is z and nan.zero_after >= ZERO_RECORDS and bool(before)
             and abs(before[-1]) >= DECLINED * abs(nan.first_losses[0]))
    # (a finite, non-zero grad norm on each: the gradients flow, the 0 is the printed mean of a
    # term that is not 0 itself, TRL's GRPO/DPO policy loss -- unless that norm is one value to
    # the last digit on every record: no gradient of changing batches)
    # (two such records already say it: no two real gradients agree to the last digit)
    stuck = nan.zero_flowing == nan.zero_run >= 2 and len(nan.zero_norms) == 1
    flowing = nan.zero_flowing == nan.zero_run and not stuck
    if nan.zero_run < (1 if every or first or stuck else ZERO_RECORDS) or z is None or flowing:
        return None
    sc, skip = c.acc.scale, c.acc.skip
    c.evidence += [nan.zero_first, nan.last_loss_ev]
    where = _where(z, c)
    if nan.zero_after:
        said = (f"the loss became exactly 0 at {where}, after {nan.zero_after} non-zero record(s), "
                f"and stays 0 on the last {nan.zero_run} records")
    else:   # no non-zero loss anywhere: 0 from the first record (HF Trainer's NaN runs read so)
        said = (f"the loss is exactly 0 on every finite record, from the first one at "
                f"{_where(nan.first_zero or z, c)} "
                f"(the last {nan.zero_run} in a row)")
    scaler = (sc.backoffs or sc.growths or sc.hyst or skip.count
              or any(v != 1.0 for v in sc.obs_values))
    norm = (f"; the grad norm reads {next(iter(nan.zero_norms))!r} on each of them, one value to "
            "the last digit: no gradient of changing batches") if stuck else ""
    if c.precision == "fp16" and not scaler:
        return Finding("no-scaler", f"{said}: the run is fp16 and shows no loss scaler, so the "
                       "loss and gradients underflow to 0 below fp16's smallest subnormal; add "
                       f"dynamic loss scaling (or train in bf16){norm}")
    return Finding("unknown", f"{said}: not healthy training but an underflow or a degenerate "
                   "run. Check the precision (fp16 without loss scaling flushes small losses and "
                   "gradients to 0) and the labels and loss function (empty or masked-out targets, "
                   f"a wrong reduction give an identical 0){norm}")


#: records with a NaN validation loss (and a finite training loss) that make it the finding
EVAL_NAN_RECORDS = 3


def loss_astronomical(c: Case) -> Finding | None:
    """No NaN in the window, but a finite loss of ``ASTRONOMICAL`` or more (keras-rl's ``loss:
    3.6e23`` from its first record): the run had diverged before or within the window, with no
    smaller loss before it for ``loss-explodes`` to measure from; not healthy, and whether or
    when it turns NaN is not in the lines."""
    nan = c.acc.nan
    if nan.first_nan is not None or (nan.peak < ASTRONOMICAL and nan.ppl_peak < PPL_BEYOND):
        return None
    if nan.last_loss_ev is not None:
        c.evidence.append(nan.last_loss_ev)
    if nan.peak < ASTRONOMICAL:
        return Finding("unknown", f"no NaN, but the perplexity reaches {fmt(nan.ppl_peak)}: more "
                       "than any vocabulary's size, worse than a uniform guess, so the model had "
                       "diverged before or within the window; when it began, and whether it ends "
                       "in a NaN, is not in the lines")
    return Finding("unknown", f"no NaN, but the loss reaches {fmt(nan.peak)}: no training that works "
                   "prints a loss that large, so the run had diverged before or within the window; "
                   "when it began, and whether it ends in a NaN, is not in the lines")


def eval_nan_only(c: Case) -> Finding | None:
    """The validation loss is NaN on most records, or on every evaluation the log shows, while
    training never is (``train_loss= 0.0012 ... val_loss= nan``, ``{'eval_loss': nan, ...}``): not
    healthy, but not a training NaN either."""
    nan = c.acc.nan
    e = nan.eval_nan_first
    most = nan.eval_nan >= EVAL_NAN_RECORDS and 2 * nan.eval_nan >= nan.finite
    every = nan.eval_finite == 0 and nan.finite >= 1
    if e is None or nan.first_nan is not None or not (most or every):
        return None
    c.evidence.append(e)
    return Finding("unknown", f"the validation loss is NaN on {nan.eval_nan} record(s) beside "
                   f"{nan.finite} finite training record(s), from {_where(e, c)}, while the training "
                   "loss stays finite: the NaN comes "
                   "from the evaluation, not from training. Check the validation data (an empty "
                   "or broken split gives NaN) and whether the evaluation runs in a lower "
                   "precision than training")


def loss_explodes(c: Case) -> Finding | None:
    """No NaN is printed, but the loss exploded (``EXPLODE`` times the largest loss before it)
    and the last record is still that far up: the divergence that ends in a NaN, caught before
    it.  Judged as a lasting NaN at the record where it exploded."""
    nan = c.acc.nan
    ev = nan.exploded
    if ev is None or nan.first_nan is not None or not nan.still_exploded:
        return None
    verdict, reason, certainty = nan_verdict(c.acc, ev, c.precision, c.caveats, c.fw,
                                             onset=(nan.exploded_early, 1))
    c.evidence += [ev, nan.last_loss_ev]
    return Finding(verdict, f"the loss explodes from at most {fmt(nan.explode_from)} to "
                   f"{fmt(ev.loss)} at {_where(ev, c)} and stays up (the last record reads "
                   f"{fmt(nan.last_losses[-1])}): a divergence, read as the onset of the NaN "
                   f"it ends in; {reason}", certainty)


def skips_only(c: Case) -> Finding | None:
    """Skipped steps for a non-finite gradient (ESPnet's ``The grad norm is nan. Skipping updating
    the model.``, Megatron's ``loss scale: 1.0 | grad norm: nan``) and not one loss record:
    nothing shows how it began, so nothing is healthy.  A printed scale that never moved from 1
    is no dynamic scaler at work (Megatron prints 1.0 for bf16)."""
    acc = c.acc
    sc = acc.scale
    static = sc.final_scale is None or (sc.final_scale == 1.0 and sc.min_scale == 1.0
                                        and not (sc.backoffs or sc.hyst or sc.growths))
    if not (acc.skip.count and acc.nan.finite == 0 and acc.nan.first_nan is None
            and acc.skip.overflow is None and not acc.scale.runs and static
            and not acc.nan.eval_finite and all(
                e.grad_norm is not None and not math.isfinite(e.grad_norm)
                for e in acc.skip.rules.values())):
        return None
    c.evidence += list(acc.skip.rules.values())[:2]
    return Finding("unknown", f"{acc.skip.count} step(s) skipped for a non-finite gradient and no "
                   "loss record: an fp16 overflow that the scaler skips and a NaN from a bad batch "
                   "look the same here; the loss per step, the loss scale and the precision would "
                   "tell")


#: records of other values (no loss), at two steps or epochs at least, that show training going on
METRIC_RECORDS = 3


def metrics_only(c: Case) -> Finding | None:
    """No loss record, but records of other values at their steps or epochs (accuracy, PSNR,
    recall, rewards), or measures of quality without a step (an evaluation's summary:
    ``test_Accuracy = 0.6977``, a table of F1 scores), every value finite, and nothing else in
    the log: no NaN, no scaler line, no error.  What the log shows of the run is finite: healthy
    where it shows."""
    acc, log = c.acc, c.acc.log
    stepped = log.metrics >= METRIC_RECORDS and len(log.metric_at) >= 2
    if (not (stepped or log.metrics + log.unstepped >= METRIC_RECORDS
             or log.measures >= METRIC_RECORDS)
            or "metrics-nonfinite" in log.notes or log.n or acc.nan.eval_nan
            or log.traceback is not None or log.fatal):
        return None
    if stepped:
        c.evidence.append(log.notes["metrics"])
        return Finding("healthy", f"no loss in the log, but {log.metrics} record(s) of other "
                       "values at their steps or epochs, every one finite, and no NaN, overflow "
                       "or error line")
    c.evidence.append(log.notes.get("metrics-unstepped") or log.notes["metrics"])
    return Finding("healthy", f"no loss and no training step in the log, but "
                   f"{log.metrics + log.unstepped} finite measure(s) of the run (an "
                   "evaluation's accuracy, F1, PSNR and the like), and no NaN, overflow or error "
                   "line: healthy where it shows")


def no_records(c: Case) -> Finding | None:
    acc = c.acc
    if acc.nan.eval_finite and not acc.nan.eval_nan:
        return None     # only an evaluation's records, every one finite: healthy where it shows
    if not (acc.log.n == 0 or (acc.nan.finite == 0 and not acc.scale.runs and not acc.skip.count
                           and acc.scale.final_scale is None and acc.nan.first_nan is None)):
        return None
    e = acc.nan.eval_nan_first
    if e is not None and acc.nan.finite == 0 and acc.nan.first_nan is None:
        c.evidence.append(e)    # (an ``***** eval metrics *****`` block alone: ``eval_loss = nan``)
        return Finding("unknown", f"the only NaN is an evaluation's loss ({acc.nan.eval_nan} "
                       f"record(s), from {_where(e, c)}) and no training record is in the log: "
                       "whether training itself stayed finite cannot be read; the training loss "
                       "per step would tell")
    roles = ", ".join(sorted(acc.log.roles)) or "none"
    return Finding("unknown", f"no training records recognised: {acc.log.n} event(s) read, "
                   f"{acc.nan.finite} finite loss record(s), roles seen: {roles}; to decide, the log "
                   "would need to show the loss per step (with its step), the loss scale or the "
                   "framework's overflow lines, and the precision")


#: lines between an out-of-memory message and the traceback it explains (the message may close it)
OOM_NEAR = 60


def traceback_ends_log(c: Case) -> Finding | None:
    """Finite records, then an exception's traceback and no record after it: the run stopped
    there, for a reason the log does not show as a NaN (not Ctrl-C: ``KeyboardInterrupt``; not
    out of memory, said within ``OOM_NEAR`` lines of the traceback; not after the run said it
    finished training: what failed then was no longer training)."""
    acc, tb = c.acc, c.acc.log.traceback
    if tb is None or acc.log.traceback_records != acc.nan.rec_index or not acc.nan.rec_index:
        return None
    fin, last = acc.log.finished, acc.nan.last_loss_ev
    if fin is not None and fin.line_no < tb.line_no and (last is None or fin.line_no > last.line_no):
        return None
    oom = acc.log.notes.get("out-of-memory")
    if oom is not None and abs(oom.line_no - tb.line_no) <= OOM_NEAR:
        return None     # it stopped for memory (the caveat says so), not for a NaN
    c.evidence += [acc.nan.last_loss_ev, tb]
    return Finding("unknown", f"the run stops with an exception after its last record (the "
                   f"traceback at line {tb.line_no}): its cause is not in the records before it, "
                   "and the exception's own line would tell whether it is a NaN or overflow "
                   "check (a scale of 0 dividing, a non-finite check) or something else")


def healthy(c: Case) -> Finding:
    return Finding("healthy", healthy_reason(c.acc, c.caveats, c.evidence))  # type: ignore[arg-type]


#: the chain, in order: the first check that finds decides
CHECKS: tuple[tuple[str, Callable[[Case], Finding | None]], ...] = (
    ("min-scale-error", min_scale_error),
    ("nan-before-backoffs", nan_before_backoffs),
    ("failed-backoffs", failed_backoffs),
    ("stuck-at-floor", stuck_at_floor),
    ("overflow-at-fixed-scale", overflow_at_fixed_scale),
    ("skipping-at-floor", skipping_at_floor),
    ("skipping-forever", skipping_forever),
    ("silent-skips-into-nan", silent_skips_into_nan),
    ("overflow-skips-at-nan", overflow_skips_at_nan),
    ("nan-input", nan_input),
    ("nan-beside-finite-eval", nan_beside_finite_evaluation),
    ("lasting-nan", lasting_nan),
    ("scale-below-one", scale_below_one),
    ("silent-scaler-stuck", silent_scaler_stuck),
    ("api-misuse", api_misuse),
    ("nonfinite-grad-error", nonfinite_grad_error),
    ("error-ends-log", error_ends_log),
    ("unheld-backoff", unheld_backoff),
    ("bad-grad-jump-at-end", bad_grad_jump_at_end),
    ("bad-grad-only", bad_grad_only),
    ("lr-never-stepped", lr_never_stepped),
    ("loss-became-zero", loss_became_zero),
    ("loss-explodes", loss_explodes),
    ("loss-astronomical", loss_astronomical),
    ("eval-nan-only", eval_nan_only),
    ("skips-only", skips_only),
    ("metrics-only", metrics_only),
    ("no-records", no_records),
    ("traceback-ends-log", traceback_ends_log),
    ("healthy", healthy),
)


def run_checks(case: Case) -> tuple[str, Finding]:
    """``(name, finding)`` of the first check of ``CHECKS`` that finds."""
    for name, check in CHECKS:
        found = check(case)
        if found is not None:
            return name, found
    raise AssertionError("the last check always finds")   # pragma: no cover
