"""The diagnosis of what the trackers hold: the named checks decide (``fampnb.diagnose._checks``),
then the caveats that apply to the verdict, the advice in the article's order, the evidence."""

from __future__ import annotations

from fampnb.diagnose._accumulate import Accumulator
from fampnb.diagnose._checks import Case, run_checks
from fampnb.diagnose._diagnosis import Diagnosis
from fampnb.diagnose._text import ADVICE, CAVEATS, FRAMEWORK_HINTS, SILENT
from fampnb.logs import Event

__all__ = ["decide"]


def _caveats(c: Case, verdict: str) -> None:
    acc, fw, caveats = c.acc, c.fw, c.caveats
    if acc.nan.first_nan is not None and c.lasting is None and verdict == "healthy":
        caveats.append(CAVEATS["transient-nan"])
        c.evidence.append(acc.nan.first_nan)
    if acc.grad.gn_bad_finite_loss and verdict in ("healthy", "overflow"):
        caveats.append(CAVEATS["grad-nan-skipped"])
    if sum(r.duplicates for r in acc.scale.runs) >= 1:
        caveats.append(CAVEATS["multi-rank"])
    if fw == "hf" or "hf" in acc.log.fw:
        caveats.append(CAVEATS["hf-filter"])
    if fw == "megatron":
        caveats.append(CAVEATS["megatron"])
    if acc.scale.fairseq_avg:
        caveats.append(CAVEATS["fairseq-avg"])
    if (fw in SILENT and verdict in ("data", "no-scaler", "unknown", "healthy")
            and acc.scale.backoffs == 0):
        caveats.append(CAVEATS["silent"])
    if acc.grad.applied is not None and c.precision != "fp16":
        caveats.append(CAVEATS["applied-nonfinite"])
    if acc.skip.scaler_skip is not None and acc.precision.ev is acc.skip.scaler_skip:
        caveats.append(CAVEATS["inferred-fp16"])
        c.evidence.append(acc.skip.scaler_skip)
    if c.ranks is not None:
        bad, good = c.ranks
        caveats.append(CAVEATS["ranks-disagree"].format(bad=", ".join(map(str, bad[:8])),
                                                        good=", ".join(map(str, good[:8])),
                                                        read=bad[0]))
    if c.apart:
        caveats.append(CAVEATS["ranks-apart"].format(ranks=", ".join(map(str, c.apart[:8])),
                                                     read=c.apart[0]))
    if "out-of-memory" in acc.log.notes:
        caveats.append(CAVEATS["out-of-memory"].format(line=acc.log.notes["out-of-memory"].line_no))
    if acc.nan.frozen_after_nan and not acc.nan.last_record_nan and verdict != "healthy":
        caveats.append(CAVEATS["frozen-after-nan"].format(value=f"{acc.nan.frozen_at:g}",
                                                          n=acc.nan.frozen))
        c.evidence.append(acc.nan.last_loss_ev)
    if acc.nan.floored is not None and verdict != "healthy":
        caveats.append(CAVEATS["softmax-floor"])
        c.evidence.append(acc.nan.floored)
    if "truncated" in acc.log.notes:
        caveats.append(CAVEATS["truncated"])


def _evidence(events: list[Event | None]) -> list[Event]:
    seen: set[tuple[int, str, str]] = set()
    out = []
    for e in sorted((e for e in events if e is not None), key=lambda e: e.line_no):
        key = (e.line_no, e.kind, e.rule)
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out[:16]


def decide(acc: Accumulator, precision: str | None,
           ranks: tuple[list[int], list[int]] | None = None,
           apart: list[int] | None = None) -> Diagnosis:
    """The diagnosis of ``acc``; ``ranks``: the ranks with and without a NaN loss where they
    disagree (``acc`` is then the series of the first of them, ``fampnb.diagnose._ranks``);
    ``apart``: the ranks whose interleaved losses read as an explosion none of them shows
    (``acc`` is the first one's series)."""
    case = Case.of(acc, precision)
    case.ranks, case.apart = ranks, apart
    name, found = run_checks(case)
    verdict = found.verdict
    _caveats(case, verdict)
    advice = list(ADVICE[verdict])
    if verdict in ("overflow", "no-scaler") and case.fw in FRAMEWORK_HINTS:
        advice.append(FRAMEWORK_HINTS[case.fw])
    if acc.precision.ev is not None and verdict in ("data", "no-scaler", "unknown"):
        case.evidence.append(acc.precision.ev)   # the stated precision decides only these
    first_bad = acc.nan.first_nan or acc.grad.first_bad_grad
    sc = acc.scale
    return Diagnosis(
        verdict=verdict, reason=found.reason, evidence=_evidence(case.evidence),
        first_nan_step=first_bad.step if first_bad else None,
        first_nan_line=first_bad.line_no if first_bad else None,
        backoffs=sc.backoffs, min_scale=sc.min_scale, final_scale=sc.final_scale,
        min_scale_log2=sc.min_log2, final_scale_log2=sc.final_log2,
        framework=case.fw, advice=advice, caveats=list(dict.fromkeys(case.caveats)),
        certainty=found.certainty, precision=precision, hysteresis=sc.hyst,
        growths=sc.growths, skips=acc.skip.count, events_read=acc.log.n,
        trajectory=sc.traj.points, losses=acc.nan.loss_s.points, backoff_marks=sc.bmarks.points,
        nan_marks=acc.nan.nmarks.points, check=name)
