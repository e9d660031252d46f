"""The watch's verdict in the doctor's vocabulary (``fampnb.diagnose``): the one place that
couples ``fampnb.probe.watch`` to the doctor, through its public names only.

- a NaN/inf already in the model's input (the batch) is ``data``;
- an inf/NaN produced inside a module from finite inputs is ``overflow``, a range problem (with
  the module, the largest finite value before it against the format's max, and the fix: run that
  module in fp32, or the model in bf16), even at step 1, where the article's timing rule alone
  would say ``data``;
- backward infs with a scaler are judged as the doctor judges the scale history
  (``diagnose(parse(w.log_lines()))``: start-up calibration is healthy); without a scaler they are
  ``overflow`` of the gradients;
- nothing non-finite: ``healthy`` (the ``near`` list goes into the caveats).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..diagnose import PRECISIONS, Diagnosis, diagnose
from ..logs import parse

__all__ = ["WatchDiagnosis", "diagnosis"]


@dataclass
class WatchDiagnosis(Diagnosis):
    """A ``Diagnosis`` plus ``where`` (the ``Origin`` that decided it, or None) and ``near``."""

    where: Any = None
    near: list[Any] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        out = super().to_dict()
        out["where"] = None if self.where is None else _plain(vars(self.where))
        out["near"] = [_plain(vars(n)) for n in self.near]
        return out


def _plain(d: dict[str, Any]) -> dict[str, Any]:
    """Non-finite floats as the strings ``"inf" "-inf" "nan"`` (strict JSON has none)."""
    return {k: (str(v) if isinstance(v, float) and not math.isfinite(v) else v)
            for k, v in d.items()}


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def diagnosis(w: Any) -> WatchDiagnosis:
    """The verdict for the ``Watch`` ``w`` (see the module docstring)."""
    fmt, near = w.fmt, w.near
    prec = fmt.name if fmt.name in PRECISIONS else None
    watched = sum(s.watched for s in w.steps)
    near_notes = [f"{n.module or 'the model'} {n.tensor} ({n.phase}) reached {_fmt(n.abs_max)} at "
                  f"step {n.step}: {n.ratio:.3g}× the {fmt.name} max {_fmt(fmt.max)}"
                  for n in near[:5]]
    fwd = next((o for o in w.origins if o.phase == "forward"), None)
    bwd = next((o for o in w.origins if o.phase == "backward"), None)
    base: dict[str, Any] = {"framework": "fampnb.watch", "precision": prec,
                            "events_read": len(w.steps), "certainty": "certain"}
    if fwd is not None and (bwd is None or fwd.step <= bwd.step or w.scaler is not None):
        return _forward(w, fwd, base, near_notes)
    if bwd is not None:
        return _backward(w, bwd, base, near_notes)
    if w.scaler is not None:
        doc = diagnose(parse(w.log_lines()), precision=prec)
        return _wrap(doc, None, near)
    reason = (f"no inf or NaN in any watched tensor over {watched} watched step(s) of "
              f"{len(w.steps)}")
    caveats = ([f"Close to the {fmt.name} range (within {w.factor:g}×): " + "; ".join(near_notes)]
               if near_notes else [])
    return WatchDiagnosis(verdict="healthy", reason=reason, advice=[
        "Nothing to turn." + (" Watch the modules listed in the caveats: they are the first to "
                              "leave the range if activations grow." if near_notes else "")],
        caveats=caveats, near=near, **base)


def _forward(w: Any, o: Any, base: dict[str, Any], notes: list[str]) -> WatchDiagnosis:
    fmt = w.fmt
    if o.module == "" and o.tensor == "input":
        return WatchDiagnosis(
            verdict="data", first_nan_step=o.step, where=o, near=w.near,
            reason=f"step {o.step}: the batch already holds {o.kind} (the model's input), "
                   "before any layer ran",
            advice=[f"Check the data of step {o.step}: find the sample with the {o.kind} and fix "
                    "or drop it (an assert on torch.isfinite(batch) in the loader catches it)",
                    "Not a precision problem: fp32 or bf16 would fail the same way"],
            caveats=[], **base)
    who = "the model" if o.module == "" else f"'{o.module}'"
    where = f"{who} {o.tensor}" if o.tensor == "output" else f"the input of {who}"
    reason = (f"step {o.step}: {where} became {o.kind} in the forward pass from finite values "
              f"(largest before it {_fmt(o.before)}; the {fmt.name} max is {_fmt(fmt.max)}): a "
              f"range problem inside {who}, not the data")
    advice = [f"Run {who} in fp32: wrap it in torch.autocast(device_type, enabled=False) and "
              "feed it .float() inputs (or keep its inner op — softmax, exp, variance — in fp32)",
              "Or run the model in bf16: the same 8 exponent bits as fp32 (max 3.39e38), no "
              "loss scaler needed",
              "A loss scaler cannot help: it scales the backward pass, not the forward"]
    caveats = []
    if o.step == 1:
        caveats.append("The article's timing rule would call a NaN at the first step 'data'; the "
                       "watch saw finite inputs turn non-finite inside the module, so it is "
                       "overflow.")
    caveats += notes[:3]
    return WatchDiagnosis(verdict="overflow", reason=reason, first_nan_step=o.step, where=o,
                          advice=advice, caveats=caveats, near=w.near, **base)


def _backward(w: Any, o: Any, base: dict[str, Any], notes: list[str]) -> WatchDiagnosis:
    fmt = w.fmt
    who = "the model" if o.module == "" else f"'{o.module}'"
    what = f"the gradient of {who}.{o.param}" if o.param else f"the gradient into {who}"
    if w.scaler is not None:
        doc = diagnose(parse(w.log_lines()), precision=base["precision"])
        backing = sum(1 for s in w.steps if s.backward_bad)
        doc.reason = (f"{doc.reason}; the watch saw {what} first non-finite at step {o.step} "
                      f"({backing} step(s) with backward inf/NaN, each skipped by the scaler)")
        return _wrap(doc, o, w.near)
    return WatchDiagnosis(
        verdict="overflow", first_nan_step=o.step, where=o, near=w.near,
        reason=f"step {o.step}: {what} became {o.kind} in the backward pass (largest finite "
               f"gradient before it {_fmt(o.before)}; the {fmt.name} max is {_fmt(fmt.max)}), "
               "and no scaler skips the step",
        advice=["Use a dynamic loss scaler (torch.amp.GradScaler): it skips such steps and "
                "halves the scale until the gradients fit",
                f"Or keep {who} (its backward) in fp32, or run the model in bf16"],
        caveats=notes[:3], **base)


def _wrap(doc: Diagnosis, where: Any, near: list[Any]) -> WatchDiagnosis:
    fields = {k: getattr(doc, k) for k in doc.__dataclass_fields__}
    fields["framework"] = "fampnb.watch"
    return WatchDiagnosis(**fields, where=where, near=near)
