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
    if acc.first_nan is not None and c.lasting is None and verdict == "healthy":
        caveats.append(CAVEATS["transient-nan"])
        c.evidence.append(acc.first_nan)
    if acc.gn_bad_finite_loss and verdict in ("healthy", "overflow"):
        caveats.append(CAVEATS["grad-nan-skipped"])
    if sum(r.duplicates for r in acc.runs) >= 1:
        caveats.append(CAVEATS["multi-rank"])
    if fw == "hf" or "hf" in acc.fw:
        caveats.append(CAVEATS["hf-filter"])
    if fw == "megatron":
        caveats.append(CAVEATS["megatron"])
    if acc.fairseq_avg:
        caveats.append(CAVEATS["fairseq-avg"])
    if fw in SILENT and verdict in ("data", "no-scaler", "unknown", "healthy") and acc.backoffs == 0:
        caveats.append(CAVEATS["silent"])
    if acc.applied is not None and c.precision != "fp16":
        caveats.append(CAVEATS["applied-nonfinite"])
    if acc.scaler_skip is not None and acc.precision_ev is acc.scaler_skip:
        caveats.append(CAVEATS["inferred-fp16"])
        c.evidence.append(acc.scaler_skip)
    bad = sorted(r for r, b in acc.rank_nan.items() if b)
    if bad and len(bad) < len(acc.rank_nan):
        good = sorted(r for r, b in acc.rank_nan.items() if not b)
        caveats.append(CAVEATS["ranks-disagree"].format(bad=", ".join(map(str, bad[:8])),
                                                        good=", ".join(map(str, good[:8]))))
    if "truncated" in acc.notes:
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


def decide(acc: Accumulator, precision: str | None) -> Diagnosis:
    case = Case.of(acc, precision)
    name, found = run_checks(case)
    verdict = found.verdict
    _caveats(case, verdict)
    advice = list(ADVICE[verdict])
    if verdict in ("overflow", "no-scaler") and case.fw in FRAMEWORK_HINTS:
        advice.append(FRAMEWORK_HINTS[case.fw])
    if acc.precision_ev is not None and verdict in ("data", "no-scaler", "unknown"):
        case.evidence.append(acc.precision_ev)   # the stated precision decides only these
    first_bad = acc.first_nan or acc.first_bad_grad
    return Diagnosis(
        verdict=verdict, reason=found.reason, evidence=_evidence(case.evidence),
        first_nan_step=first_bad.step if first_bad else None,
        first_nan_line=first_bad.line_no if first_bad else None,
        backoffs=acc.backoffs, min_scale=acc.min_scale, final_scale=acc.final_scale,
        min_scale_log2=acc.min_log2, final_scale_log2=acc.final_log2,
        framework=case.fw, advice=advice, caveats=list(dict.fromkeys(case.caveats)),
        certainty=found.certainty, precision=precision, hysteresis=acc.hyst,
        growths=acc.growths, skips=acc.skips, events_read=acc.n, trajectory=acc.traj.points,
        losses=acc.loss_s.points, backoff_marks=acc.bmarks.points, nan_marks=acc.nmarks.points,
        check=name)
