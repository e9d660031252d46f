"""How the checks judge what the ``Accumulator`` holds: runs of backoffs (calibration, failure, held
or not), a lasting NaN's kind, a scale that holds, the healthy reason (``fampnb.diagnose._checks``
asks these)."""

from __future__ import annotations

import math

from fampnb.diagnose._accumulate import CALIBRATION_FLOOR, EARLY_STEPS, FLOOR, NEAR_RECORDS, Accumulator, Run
from fampnb.diagnose._text import CAVEATS, SILENT
from fampnb.logs import Event

__all__ = ["at_start", "fmt", "failure_run", "settled", "held", "scale_holds", "stuck_skipping",
           "ends_on_bad_grad_jump", "nan_verdict", "healthy_reason", "SILENT_SCALER", "FIRST_STEPS"]


#: frameworks known to run a scaler that never prints (``generic`` user prints are not one)
SILENT_SCALER = SILENT - {"generic"}
#: initial scales of real scalers (fairseq's CLI starts at 128 and grows): calibration halves
#: down from one of these, so a first backoff from a lower scale is not start-up calibration
TYPICAL_INIT = 2.0 ** 15
FAIRSEQ_INIT = 128.0


#: the first steps of training: a run of backoffs there, from the scale the log printed at its
#: first step, is start-up calibration from the scale the run was configured with
FIRST_STEPS = 10


def at_start(r: Run, acc: Accumulator) -> bool:
    """A run in calibration position: before any real training stretch, from a high scale; or
    within the first steps, from the scale the first step printed (``--fp16-init-scale 4``
    calibrates from 4: the log shows that scale at update 1).

    When the window opens with the run and the line does not print the scale before it (apex,
    fairseq: "reducing to X" only), the start of the halving may lie before the window: a run that
    has not yet gone below the calibration floor is then in calibration position too.  Either
    way within the first ``EARLY_STEPS`` steps: the backoff's own step, or for a line without one
    (DeepSpeed's ``OVERFLOW!``), the step a record before it named."""
    shown = acc.scale.first_obs
    if (shown is not None and shown.explicit and shown.step <= FIRST_STEPS
            and r.first.step <= FIRST_STEPS and r.start_scale == shown.scale_after):
        return True
    if r.loss_before > 1:
        return False
    init = FAIRSEQ_INIT if r.first.framework == "fairseq" else TYPICAL_INIT
    unseen_start = (r.first.scale_before is None and r.loss_before == 0
                    and (r.end_scale is None or r.end_scale >= CALIBRATION_FLOOR))
    if r.start_scale is not None and r.start_scale < init and not unseen_start:
        return False
    if r.first.explicit:
        return r.first.step <= EARLY_STEPS
    # (a backoff line without a step of its own: a record before it that names a step past the
    # calibration's first EARLY_STEPS shows the window opens mid-run)
    rec = acc.nan.first_rec
    return not (rec is not None and rec.explicit and rec.line_no < r.first.line_no
                and rec.step > EARLY_STEPS)


def fmt(x: float | None, log2: float | None = None) -> str:
    """A scale or loss for a sentence; ``log2`` (the printed base-2 logarithm) names a scale
    that a float cannot hold (``2^-16199.354``, not ``0``)."""
    if x is None:
        return "?" if log2 is None else f"2^{log2:.10g}"
    if log2 is not None and (x == 0 or not math.isfinite(x)):
        return f"2^{log2:.10g}"
    if x != 0 and (abs(x) < 1e-3 or abs(x) >= 1e7):
        return f"{x:.6g}"
    return f"{x:g}"


def failure_run(r: Run, acc: Accumulator, lasting_nan: Event | None) -> str | None:
    """Why this run of backoffs is a failure (None: calibration or isolated)."""
    start, end = r.start_scale, r.end_scale
    recovered = r.loss_after > 1 or r.growth_after
    span = f"{fmt(start, r.start_log2)} -> {fmt(end, r.end_log2)} in {r.n} backoff records"
    if settled(r, acc) and not r.nan_after and lasting_nan is None:
        return None          # back at a level the scale already grew back from: oscillation
    if end is not None and end < FLOOR and r.levels >= 1 and not (
            r.growth_after and not r.nan_after):
        return f"the scale kept halving below 1 ({span})"
    if end is not None and end <= FLOOR and r.n >= 3 and r.levels >= 3:
        return f"the scale halved down to its floor ({span})"
    if lasting_nan is not None and r.last.line_no <= lasting_nan.line_no and (
            r.loss_after <= NEAR_RECORDS):
        return f"a lasting NaN (line {lasting_nan.line_no}) follows the backoffs ({span})"
    if at_start(r, acc):
        if end is not None and end <= CALIBRATION_FLOOR and r.levels >= 8 and not recovered:
            return f"start-up halving went below {CALIBRATION_FLOOR:g} and never recovered ({span})"
        return None
    if end is not None and end < CALIBRATION_FLOOR and r.levels >= 2:
        return f"backoffs after a healthy stretch took the scale below 256 ({span})"
    if end is not None and end < CALIBRATION_FLOOR and r.nan_after and _still_falling(r, acc):
        return (f"the scale, already below 256, kept halving with no growth between its backoffs "
                f"(down to {fmt(end, r.end_log2)}), each on a NaN record")
    if r.levels >= 3 and not recovered:
        return f"consecutive backoffs after a healthy stretch, no recovery ({span})"
    return None


def _still_falling(r: Run, acc: Accumulator) -> bool:
    """The run before ``r`` also ended below the article's 256 line, above ``r``'s end, on a NaN
    record, with no growth since: one descent below 256 printed as isolated backoffs (a
    GradScaler's scale 4 -> 2 -> 1 a few hundred steps apart)."""
    before = [x for x in acc.scale.runs if x is not r and x.last.line_no < r.first.line_no]
    if not before:
        return False
    x = before[-1]
    return (not x.growth_after and x.nan_after and x.end_scale is not None
            and r.end_scale is not None and r.end_scale < x.end_scale < CALIBRATION_FLOOR)


def settled(r: Run, acc: Accumulator) -> bool:
    """The run goes no lower than a level the scale already grew back from earlier in the log
    (an oscillation around a settled scale, not a new descent)."""
    if r.end_scale is None:
        return False
    lows = [x.end_scale for x in acc.scale.runs if x is not r and x.growth_after and not x.nan_after
            and x.end_scale is not None and x.last.line_no < r.first.line_no]
    return bool(lows) and r.end_scale >= min(lows)


#: a loss (grad norm) this many times the last one before a backoff is a spike, not a hold
SPIKE_LOSS, SPIKE_GNORM = 1.2, 3.0


def held(r: Run, acc: Accumulator) -> bool:
    """Does the log show that the scale held after an isolated backoff: growth afterwards, a
    return to a level it had already recovered from, a skip counter after it that shows steps
    going through (DeepSpeed's ``skipped=K``: ``Run.quiet_after``), or training records after it
    without a spike (a spike is fine once NEAR_RECORDS records have followed)?  A window that
    ends at the backoff, or right after a spike, does not show it."""
    if r.growth_after or settled(r, acc) or (r.quiet_after and not r.nan_after):
        return True
    if r.loss_after == 0 or r.loss_next is None:
        return False
    if r.loss_after >= NEAR_RECORDS:
        return True
    spike = (r.loss_ref is not None and r.loss_ref > 0 and r.loss_next > SPIKE_LOSS * r.loss_ref) or (
        r.gn_ref is not None and r.gn_next is not None and r.gn_ref > 0
        and r.gn_next > SPIKE_GNORM * r.gn_ref)
    return not spike


def scale_holds(acc: Accumulator) -> bool:
    """A printed scale that stays where it is over the last records while the loss, finite
    throughout, does not rise: it holds (fairseq may settle below 1), whatever its level."""
    recent = list(acc.nan.last_losses)
    return (acc.scale.obs_same >= 2 and acc.nan.first_nan is None and len(recent) >= 2
            and recent[-1] <= recent[-2])


def ends_on_bad_grad_jump(acc: Accumulator) -> tuple[float, float] | None:
    """``(loss before, last loss)`` when the excerpt ends on one or two finite-loss records with a
    non-finite grad norm and the loss jumps there (more than ``SPIKE_LOSS`` times the record
    before them): as with a backoff at the window's end (``_held``), the lines stop before they
    show whether training went on."""
    k = acc.grad.trailing_gn_bad
    recent = list(acc.nan.last_losses)
    if not 1 <= k <= 2 or acc.nan.last_record_nan or len(recent) <= k:
        return None
    ref, last = recent[-1 - k], recent[-1]
    return (ref, last) if ref > 0 and last > SPIKE_LOSS * ref else None


def stuck_skipping(acc: Accumulator) -> bool:
    """A silent scaler skipping every step: a long trailing run of non-finite grad norms."""
    k = acc.grad.trailing_gn_bad
    if k >= 20:
        return True
    if k < 3:
        return False
    recent = list(acc.nan.last_losses)[-min(k, len(acc.nan.last_losses)):]
    if len(recent) < 3:
        return False
    # three records: only a clearly rising loss; four or more: a loss that does not improve
    return recent[-1] > 1.25 * recent[0] if k == 3 else recent[-1] >= recent[0]


def where_text(ev: Event, steps_seen: bool) -> str:
    """``step N (line L)`` where the log counts steps, else ``line L`` (a record of a log that
    counts none takes its line number as its step: no step the log printed)."""
    return (f"step {ev.step} (line {ev.line_no})" if ev.explicit or steps_seen
            else f"line {ev.line_no}")


def nan_verdict(acc: Accumulator, nan: Event, precision: str | None, caveats: list[str],
                 fw: str, onset: tuple[bool, int] | None = None) -> tuple[str, str, str]:
    """The verdict of a lasting NaN at ``nan`` (``onset``: ``(at the start of training, records
    before it)`` of another onset than the first NaN: an exploded loss)."""
    where = where_text(nan, acc.log.steps_seen)
    if acc.grad.applied is not None and precision != "fp16" and acc.grad.applied_trained:
        return ("no-scaler",
                f"a non-finite gradient reached the weights at {where}: the loss then reads "
                f"exactly 0.0 (line {acc.grad.applied.line_no}); no dynamic scaler skipped the step "
                "(the bf16 trace)", "likely")
    early, recs_before = onset or (
        acc.nan.first_nan is not None and acc.nan.first_nan_explicit_early, acc.nan.first_nan_rec)
    g = acc.grad
    from_start = g.applied is not None and not g.applied_trained and g.applied_early
    first_scale = acc.scale.first_obs.scale_after if acc.scale.first_obs is not None else None
    if early or from_start:
        if precision in (None, "fp16"):
            caveats.append(CAVEATS["bf16-pretrained"])
        if precision is None:
            caveats.append(CAVEATS["precision-unknown"])
        extra = ""
        if first_scale is not None and first_scale < FLOOR:
            extra = f"; the scale is already {fmt(first_scale)} at the first record"
            caveats.append(CAVEATS["below-one"])
        if from_start and not early and acc.grad.applied is not None:
            where = where_text(acc.grad.applied, acc.log.steps_seen)
            extra += ("; the first record already reads loss 0.0 with a non-finite grad norm, "
                      "no finite loss before it")
        return ("data", f"NaN from the start of the log ({where}) with no overflow record "
                f"before it{extra}", "likely")
    obs = acc.scale.obs_scale
    if obs is not None and obs < FLOOR and precision not in ("bf16", "fp32"):
        return ("overflow", f"NaN appears mid-run at {where} with the printed loss scale at "
                f"{fmt(acc.scale.obs_scale)}, below 1: the scaler has halved it away on overflowing "
                "steps", "likely")
    static = acc.scale.obs_values == {1.0} and acc.skip.count == 0
    counted = acc.skip.zero_skips_after_nan and acc.skip.count == 0 and precision != "fp16"
    if precision in ("bf16", "fp32") or static or counted:
        why = (f"the run is {precision}" if precision in ("bf16", "fp32")
               else "the loss scale is a constant 1.0 with no skipped steps" if static
               else "the skip counter stays at 0 through the NaN: nothing skips the step")
        return ("no-scaler", f"NaN appears mid-run at {where} and no dynamic scaler is at work "
                f"({why})", "likely")
    sc = acc.scale
    dynamic = (sc.backoffs or sc.growths or sc.hyst or len(sc.obs_values) > 1
               or precision == "fp16" or (sc.obs_values and max(sc.obs_values) > 1.0))
    if dynamic:
        return ("unknown", f"NaN appears mid-run at {where} although a dynamic scaler is at work "
                "and no overflow record precedes it: a bad batch (data) or a hidden overflow",
                "likely")
    caveats.append(CAVEATS["no-scaler-silent"])
    if precision is None:
        caveats.append(CAVEATS["precision-unknown"])
        # "no scaler lines" is evidence only where a scaler would print them (reference §7):
        # a framework whose scaler is silent, or a NaN with no finite record before it, and no
        # stated precision, does not tell a silent fp16 scaler from bf16/fp32
        if fw in SILENT_SCALER or recs_before == 0:
            at = where if nan.explicit or acc.log.steps_seen else f"line {nan.line_no}"
            return ("unknown", f"NaN appears at {at}, not at the start of training, and the "
                    "log neither states the precision nor can show a scaler (this framework's "
                    "scaler is silent, or no record precedes the NaN)", "likely")
    return ("no-scaler", f"NaN appears mid-run at {where} with no loss scaler visible in the log",
            "likely")


def healthy_reason(acc: Accumulator, caveats: list[str], evidence: list[Event]) -> str:
    parts = []
    if acc.scale.runs:
        parts.append(f"{acc.scale.backoffs} backoff record(s), start-up calibration or isolated; "
                     f"the scale holds at {fmt(acc.scale.final_scale)}")
    elif acc.scale.final_scale is not None:
        parts.append(f"the loss scale holds at {fmt(acc.scale.final_scale)}")
        if acc.scale.first_obs is not None:
            evidence.append(acc.scale.first_obs)
    if acc.grad.gn_bad_finite_loss:
        parts.append(f"{acc.grad.gn_bad_finite_loss} record(s) with a non-finite grad norm and a "
                     "finite loss are skipped steps")
        evidence.append(acc.grad.first_bad_grad)  # type: ignore[arg-type]
    if "sched-warning" in acc.skip.rules:
        parts.append("the lr_scheduler-before-optimizer warning only means the first fp16 step "
                     "was skipped")
        evidence.append(acc.skip.rules["sched-warning"])
    if "megatron-all-skipped" in acc.skip.rules:
        e = acc.skip.rules["megatron-all-skipped"]
        parts.append("the missing loss field goes with a non-zero skipped-iterations counter: "
                     "skipped start-up steps, not NaN")
        evidence.append(e)
    if acc.nan.finite:
        parts.append(f"{acc.nan.finite} finite loss record(s), no lasting NaN")
        if acc.nan.last_loss_ev is not None:
            evidence.append(acc.nan.last_loss_ev)
    elif acc.nan.eval_finite:
        parts.append(f"{acc.nan.eval_finite} finite evaluation record(s) and no training record: "
                     "the model stays finite where the log shows it")
    return "; ".join(parts) if parts else "no NaN, no failure signature"
