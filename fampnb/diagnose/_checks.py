"""The decision: an ordered list of named checks, the article's chain (``CHECKS``).

Each check looks at the ``Case`` (what the trackers of ``fampnb.diagnose._accumulate`` hold, plus
what every check shares: the lasting NaN, the failed and unheld runs of backoffs) and returns a
``Finding`` (verdict, reason, certainty) or ``None``; the first finding decides, its check's name
is ``Diagnosis.check``.  A check may add evidence and caveats to the case.  The last check always
finds (``healthy``).
"""

from __future__ import annotations

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
)
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

    @classmethod
    def of(cls, acc: Accumulator, precision: str | None) -> Case:
        fw = acc.fw.most_common(1)[0][0] if acc.fw else ("generic" if acc.n else "unknown")
        case = cls(acc, precision, fw)
        # lasting NaN: the last loss record is non-finite, or the weights were destroyed
        if acc.first_nan is not None and acc.last_record_nan:
            case.lasting = acc.first_nan
        elif acc.applied is not None:
            case.lasting = acc.first_bad_grad or acc.applied
        case.failures = [(r, why) for r in acc.runs if (why := failure_run(r, acc, case.lasting))]
        failed = {id(r) for r, _ in case.failures}
        case.calib = [r for r in acc.runs if at_start(r, acc) and id(r) not in failed]
        calib = {id(r) for r in case.calib}
        case.unheld = [r for r in acc.runs if id(r) not in calib and id(r) not in failed
                       and not held(r, acc)]
        if case.calib:
            case.caveats.append(CAVEATS["calibration"])
            case.evidence += [case.calib[0].first, case.calib[0].last]
        return case


def min_scale_error(c: Case) -> Finding | None:
    e = next((e for e in c.acc.fatal if e.rule == "min-scale"), None)
    if e is None:
        return None
    c.evidence += [x for r, _ in c.failures[:2] for x in (r.first, r.last)] + [e]
    return Finding("overflow", "the scaler hit its minimum and the run stopped: "
                   f"{e.text.strip()[:160]}", "certain")


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
    acc = c.acc
    if acc.floor_attempts < 2 or acc.floor_first is None or acc.floor_last is None:
        return None
    at = acc.floor_last.scale_before
    shown = ("0 (printed as an integer: a scale below 1)" if at == 0
             else fmt(at, acc.floor_last.scale_log2))
    c.evidence += [acc.floor_first, acc.floor_last]
    if at is not None and at < FLOOR:
        c.caveats.append(CAVEATS["below-one"])
    return Finding("overflow", f"the scaler is stuck at its floor: {acc.floor_attempts} overflow "
                   f"records (lines {acc.floor_first.line_no}-{acc.floor_last.line_no}) with the "
                   f"scale already at {shown}, so it cannot halve any further and every step is "
                   "skipped", "certain" if acc.floor_attempts >= 3 else "likely")


def skipping_at_floor(c: Case) -> Finding | None:
    acc = c.acc
    if not (acc.floor_hits >= 3 or (acc.final_scale is not None and acc.final_scale <= FLOOR
                                    and acc.skip_after_floor >= 2 and acc.obs_values != {1.0})):
        return None
    c.evidence += [r.last for r in acc.runs[-2:]] + list(acc.skip_rules.values())[:2]
    return Finding("overflow", "the scale sits at its floor and the steps keep being skipped")


def skipping_forever(c: Case) -> Finding | None:
    acc = c.acc
    if not (acc.full_skips_late >= 3 or (acc.skip_counted >= 20 and acc.max_step >= 50
                                         and acc.skip_counted >= 0.5 * acc.max_step)):
        return None
    c.evidence += [acc.full_skip_ev] + list(acc.skip_rules.values())[:3]
    return Finding("overflow", f"{acc.skip_counted} steps were skipped, every step of the last "
                   f"{max(acc.full_skips, 1)} counter interval(s): the fp16 steps keep "
                   "overflowing (skipping forever)")


def silent_skips_into_nan(c: Case) -> Finding | None:
    acc, p = c.acc, c.precision
    streak = acc.streak_at_nan or acc.gn_streak
    if not (c.lasting is not None and len(streak) >= 2 and (acc.applied is None or p == "fp16")
            and p not in ("bf16", "fp32")):
        return None
    ending = (f"a lasting NaN loss at line {acc.first_nan.line_no}" if acc.first_nan
              else "a loss that never recovers")
    c.evidence += [streak[0], streak[-1], c.lasting]
    return Finding("overflow", f"{len(streak)} consecutive records with a non-finite grad norm "
                   f"(steps the silent scaler skipped, from line {streak[0].line_no}) run "
                   f"straight into {ending}")


def lasting_nan(c: Case) -> Finding | None:
    if c.lasting is None:
        return None
    verdict, reason, certainty = nan_verdict(c.acc, c.lasting, c.precision, c.caveats, c.fw)
    c.evidence += [c.lasting, c.acc.applied]
    return Finding(verdict, reason, certainty)


def scale_below_one(c: Case) -> Finding | None:
    acc = c.acc
    if not (acc.obs_values and acc.obs_scale is not None and acc.obs_scale < FLOOR
            and not scale_holds(acc)):
        return None
    c.caveats.append(CAVEATS["below-one"])
    c.evidence.append(acc.first_obs)
    return Finding("overflow", f"the printed loss scale is {fmt(acc.obs_scale)}, below 1: a "
                   "silent scaler has halved it on every overflowing step")


def silent_scaler_stuck(c: Case) -> Finding | None:
    if not (stuck_skipping(c.acc) and c.precision not in ("bf16", "fp32")):
        return None
    c.evidence.append(c.acc.first_bad_grad)
    return Finding("overflow", f"the last {c.acc.trailing_gn_bad} records all have a non-finite "
                   "grad norm and the loss does not improve: the silent scaler keeps skipping "
                   "every step")


def api_misuse(c: Case) -> Finding | None:
    mis = next((e for e in c.acc.fatal if e.rule == "misuse"), None)
    if mis is None:
        return None
    c.caveats.append(CAVEATS["misuse"])
    c.evidence.append(mis)
    return Finding("unknown", f"an API misuse error, not a NaN diagnosis: {mis.text.strip()[:160]}")


def nonfinite_grad_error(c: Case) -> Finding | None:
    e = next((e for e in c.acc.fatal if e.rule == "nonfinite-grad"), None)
    if e is None:
        return None
    early = c.acc.finite <= 1
    c.evidence.append(e)
    return Finding("data" if early else "no-scaler",
                   "non-finite gradients with no loss scaler to absorb them (fairseq bf16/fp32: "
                   "'gradients are Nan/Inf')" + (" at the start" if early else " mid-run"))


def error_ends_log(c: Case) -> Finding | None:
    if not c.acc.fatal:
        return None
    c.evidence.append(c.acc.fatal[0])
    return Finding("unknown", f"an error ends the log: {c.acc.fatal[0].text.strip()[:160]}")


def unheld_backoff(c: Case) -> Finding | None:
    if not c.unheld:
        return None
    r = c.unheld[-1]
    after = ("the excerpt ends right after it" if r.loss_after == 0 else
             f"the next record jumps (loss {fmt(r.loss_ref)} -> {fmt(r.loss_next)}, grad norm "
             f"{fmt(r.gn_ref)} -> {fmt(r.gn_next)}) and the excerpt ends")
    c.evidence += r.events[:3] + [c.acc.last_loss_ev]
    return Finding("unknown", f"a mid-run backoff ({fmt(r.start_scale)} -> {fmt(r.end_scale)}, "
                   f"line {r.last.line_no}) that may be isolated or the start of a cascade: "
                   f"{after}, so nothing shows that the scale held")


def bad_grad_jump_at_end(c: Case) -> Finding | None:
    jump = ends_on_bad_grad_jump(c.acc)
    if jump is None:
        return None
    c.evidence += [c.acc.first_bad_grad, c.acc.last_loss_ev]
    return Finding("unknown", f"the excerpt ends on {c.acc.trailing_gn_bad} record(s) with a "
                   f"non-finite grad norm whose loss jumps ({fmt(jump[0])} -> {fmt(jump[1])}): a "
                   "step that an fp16 scaler skipped, or the start of a collapse (bf16 has no "
                   "scaler to skip it); nothing after it shows which")


def no_records(c: Case) -> Finding | None:
    acc = c.acc
    if not (acc.n == 0 or (acc.finite == 0 and not acc.runs and not acc.skips
                           and acc.final_scale is None and acc.first_nan is None)):
        return None
    roles = ", ".join(sorted(acc.roles)) or "none"
    return Finding("unknown", f"no training records recognised: {acc.n} event(s) read, "
                   f"{acc.finite} finite loss record(s), roles seen: {roles}; to decide, the log "
                   "would need to show the loss per step (with its step), the loss scale or the "
                   "framework's overflow lines, and the precision")


def healthy(c: Case) -> Finding:
    return Finding("healthy", healthy_reason(c.acc, c.caveats, c.evidence))  # type: ignore[arg-type]


#: the chain, in order: the first check that finds decides
CHECKS: tuple[tuple[str, Callable[[Case], Finding | None]], ...] = (
    ("min-scale-error", min_scale_error),
    ("failed-backoffs", failed_backoffs),
    ("stuck-at-floor", stuck_at_floor),
    ("skipping-at-floor", skipping_at_floor),
    ("skipping-forever", skipping_forever),
    ("silent-skips-into-nan", silent_skips_into_nan),
    ("lasting-nan", lasting_nan),
    ("scale-below-one", scale_below_one),
    ("silent-scaler-stuck", silent_scaler_stuck),
    ("api-misuse", api_misuse),
    ("nonfinite-grad-error", nonfinite_grad_error),
    ("error-ends-log", error_ends_log),
    ("unheld-backoff", unheld_backoff),
    ("bad-grad-jump-at-end", bad_grad_jump_at_end),
    ("no-records", no_records),
    ("healthy", healthy),
)


def run_checks(case: Case) -> tuple[str, Finding]:
    """``(name, finding)`` of the first check of ``CHECKS`` that finds."""
    for name, check in CHECKS:
        found = check(case)
        if found is not None:
            return name, found
    raise AssertionError("the last check always finds")   # pragma: no cover
