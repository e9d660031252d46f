"""The article's three-step NaN decision chain, pure (notebook 04's walkthrough uses it).

``walk_chain()`` is the chain itself: (1) is the overflow line still updating?  (2) ``G x scale``
against fp16's thresholds, by the article's model (``judge``) and by the exact cast
(``Format.classify``); (3) NaN at step 0 with no overflow line?  It returns every step's finding, a
verdict and the first switch to turn.  It also knows the trap the article misses: a bf16-pretrained
model run in fp16 gives NaN at step 0 with no overflow line, which looks like data but is a
forward-activation overflow that no loss scale can fix.  ``generate_log`` renders a synthetic log of
one kind (``fampnb.scenarios.synthetic_log``) and ``answers_from_diagnosis`` reads the chain's
answers off a ``fampnb.diagnose.Diagnosis``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .formats import BF16, FP16, Zone, judge
from .scenarios import LOG_KINDS, synthetic_log
from .seed import WARN_SCALE

__all__ = ["CHECKLIST", "LINES", "NAN_WHEN", "LOG_KINDS", "LOG_STYLES", "WARN_SCALE", "ChainResult",
           "walk_chain", "generate_log", "answers_from_diagnosis"]

#: The article's copyable checklist (its four items and the bf16 shortcut), in English.
CHECKLIST = """\
NaN checklist (mixed precision)
[ ] 1. Is the "Loss scaling ... (overflow)" line still updating?
       yes -> overflow-type NaN;  none at all -> data-type NaN.
[ ] 2. Print the gradient abs max G.
       G x scale > 65504     -> lower the learning rate / tighten gradient clipping.
       G x scale < 6.1e-05   -> reduce the batch size or switch to bf16; stop tuning the scale.
[ ] 3. Data-type: inf labels, nulls, normalization parameters -
       everything that is already NaN at step 0.
[ ] 4. The scale halving eight steps in a row without turning back: the gradients are the
       problem; waiting for the scaler will not help.
bf16: go straight to 3.
(Trap the article misses: a bf16-pretrained model run in fp16 can be NaN at step 0 with no
 overflow line - a forward-activation overflow. Run it in bf16 or fp32.)"""

#: answers to question 1 (key -> label)
LINES: dict[str, str] = {
    "updating": "yes, still updating (backoffs keep coming)",
    "stopped": "a few at start-up, then silence",
    "none": "none at all",
}
#: answers to question 3 (key -> label)
NAN_WHEN: dict[str, str] = {
    "step0": "at step 0 (the first logged steps)",
    "later": "later in the run",
    "none": "no NaN in the loss",
}
#: log styles (``Trace.log_lines`` styles) -> label
LOG_STYLES: dict[str, str] = {
    "seed": "the article's line", "deepspeed": "DeepSpeed", "apex": "apex",
    "fairseq": "fairseq", "megatron": "Megatron-LM",
}


@dataclass
class ChainResult:
    """The chain applied to one set of answers."""

    verdict: str                     #: healthy overflow data no-scaler underflow forward-overflow
    first_switch: str                #: the first thing to change
    steps: list[tuple[str, str]] = field(default_factory=list)  #: (question, finding) per step
    scaled: float = float("nan")     #: G x scale
    article_zone: str = ""           #: judge(): OVERFLOW / UNDERFLOW / IN_RANGE
    exact_zone: str = ""             #: Format.classify(): NORMAL / SUBNORMAL / OVERFLOW / ...

    def to_text(self) -> str:
        lines = [f"{i}. {q}\n   -> {a}" for i, (q, a) in enumerate(self.steps, start=1)]
        return "\n".join(lines + [f"verdict: {self.verdict}", f"first switch: {self.first_switch}"])


def _check(name: str, value: str, allowed: dict[str, str]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def walk_chain(lines: str = "updating", g: float | None = 3.2e4, scale: float = 65536.0,
               nan: str = "later", precision: str = "fp16",
               bf16_pretrained: bool = False) -> ChainResult:
    """Apply the article's chain to the answers: ``lines`` (LINES key), ``g`` the gradient abs max,
    ``scale`` the loss scale in force, ``nan`` (NAN_WHEN key), ``precision`` "fp16" or "bf16",
    ``bf16_pretrained`` (the model's weights come from bf16 training).

    ``G x scale`` is judged twice: by the article's model (``formats.judge``: above 65504 /
    below 2**-14) and by the exact fp16 cast (``FP16.classify``), which also knows the subnormal
    band.  Negative, NaN or infinite ``g``/``scale`` raise ValueError.
    """
    _check("lines", lines, LINES)
    _check("nan", nan, NAN_WHEN)
    if precision not in ("fp16", "bf16"):
        raise ValueError(f"precision must be 'fp16' or 'bf16', got {precision!r}")
    fmt = FP16 if precision == "fp16" else BF16
    if g is None:
        judge(0.0, scale, fmt)  # validates scale
        scaled, article, exact = float("nan"), "", ""
        step2 = ("G not known (logs rarely print it): print the gradient abs max to confirm "
                 "overflow or underflow")
    else:
        scaled, article = judge(g, scale, fmt)  # raises ValueError on bad g / scale
        exact = Zone(int(fmt.classify(np.float64(scaled)))).name
        step2 = (f"G x scale = {g:g} x {scale:g} = {scaled:.6g}: article's model {article}, "
                 f"exact {fmt.name} cast {exact}")
    res = ChainResult(verdict="healthy", first_switch="", scaled=scaled, article_zone=article,
                      exact_zone=exact)

    if precision == "bf16":
        res.steps.append(("Overflow line still updating?",
                          "bf16 keeps fp32's exponent range: no scaler, no overflow line - go "
                          "straight to step 3"))
        res.steps.append(("G x scale against the thresholds?", step2 + " (bf16's normal range "
                          f"is {BF16.min_normal:.3g} .. {BF16.max:.4g})"))
        if nan == "none":
            res.steps.append(("NaN at step 0 with no overflow line?", "no NaN"))
            res.verdict, res.first_switch = "healthy", "nothing to fix; keep training"
        elif nan == "step0":
            res.steps.append(("NaN at step 0 with no overflow line?", "yes: the data is NaN "
                              "before any optimisation could have diverged"))
            res.verdict = "data"
            res.first_switch = ("check the inputs and labels for inf/NaN and the normalisation "
                                "parameters (mean/std, division by zero)")
        else:
            res.steps.append(("NaN at step 0 with no overflow line?", "no: NaN later, and bf16 "
                              "has no scaler to skip the step - the NaN went into the weights"))
            res.verdict = "no-scaler"
            res.first_switch = ("lower the learning rate and tighten gradient clipping; add a "
                                "finite-grad-norm check that skips bad steps; then check the "
                                "batch where it started")
        return res

    # fp16: step 1
    if lines == "updating":
        below = scale < WARN_SCALE
        res.steps.append(("Overflow line still updating?",
                          "yes: overflow-type. The scaler is rescuing itself"
                          + (f"; the scale ({scale:g}) is already below 256 - the article's "
                             "warning sign" if below else "; watch whether it drops below 256 "
                             "and keeps going")))
    elif lines == "stopped":
        res.steps.append(("Overflow line still updating?", "no: a few backoffs at start-up then "
                          "silence - that is calibration, the scaler found its level"))
    else:
        res.steps.append(("Overflow line still updating?", "none at all: not an fp16 gradient "
                          "overflow (if your framework logs backoffs) - go to step 3"))
    # step 2
    res.steps.append(("G x scale against the thresholds?", step2))
    # step 3
    if nan == "step0" and lines != "updating":
        if bf16_pretrained:
            res.steps.append(("NaN at step 0 with no overflow line?",
                              "yes - but the model was pretrained in bf16: its activations can "
                              "exceed 65504 in the forward pass, which no loss scale touches "
                              "(the trap the article misses)"))
        else:
            res.steps.append(("NaN at step 0 with no overflow line?",
                              "yes: data-type - the NaN exists before the scaler has moved"))
    else:
        res.steps.append(("NaN at step 0 with no overflow line?",
                          {"step0": "NaN at step 0, but overflow lines too",
                           "later": "no: the NaN came later",
                           "none": "no NaN"}[nan]))

    # verdict
    if nan == "step0" and lines != "updating":
        if bf16_pretrained:
            res.verdict = "forward-overflow"
            res.first_switch = ("run the model in bf16 (or fp32): its activations do not fit fp16, "
                                "and loss scaling acts on the backward pass only")
        else:
            res.verdict = "data"
            res.first_switch = ("do not suspect fp16: check labels and inputs for inf/NaN and the "
                                "normalisation parameters")
    elif article == "OVERFLOW" and (lines == "updating" or nan != "none"):
        res.verdict = "overflow"
        res.first_switch = ("lower the learning rate and tighten gradient clipping (G x scale "
                            "> 65504 confirms it)")
    elif article == "UNDERFLOW":
        res.verdict = "underflow"
        res.first_switch = ("reduce the batch size or switch to bf16; stop fiddling with the scale"
                            + (" (the exact cast keeps it as a subnormal, with lost precision)"
                               if exact == "SUBNORMAL" else ""))
    elif lines == "updating":
        if nan != "none" or scale < WARN_SCALE:
            res.verdict = "overflow"
            res.first_switch = ("lower the learning rate and tighten gradient clipping; a scale "
                                "halving below 256 is the gradients' fault, not the scaler's")
        else:
            res.verdict = "healthy"
            res.first_switch = ("nothing yet: the scaler is calibrating; come back if it falls "
                                "below 256 and keeps halving")
    elif nan == "later":
        res.verdict = "data"
        res.first_switch = ("a NaN without any backoff came from the forward pass: find the batch "
                            "where it started (inputs, labels), then lower the learning rate")
    else:
        res.verdict = "healthy"
        res.first_switch = "nothing to fix: keep training"
    return res


# --- synthetic logs and the doctor ---------------------------------------------------------

def generate_log(kind: str = "overflow", style: str = "deepspeed", steps: int = 100,
                 seed: int = 0) -> list[str]:
    """Lines of a synthetic training log of ``kind`` rendered in ``style``
    (``fampnb.scenarios.synthetic_log``)."""
    _check("kind", kind, LOG_KINDS)
    _check("style", style, LOG_STYLES)
    return [line.rstrip("\n") for line in synthetic_log(kind, style, steps=int(steps), seed=int(seed))]


def answers_from_diagnosis(d: Any) -> dict[str, Any]:
    """The chain's answers read off a ``Diagnosis`` (``fampnb.diagnose``).

    Question 1 from its backoff count (none; still coming when the doctor saw a failure or a NaN
    after them; else start-up only), question 3 from its first NaN step and verdict (the doctor
    also reads fatal lines such as fairseq's ``gradients are Nan/Inf``), the precision from what the
    log states (bf16/fp32 -> the chain's "bf16" branch: no scaler), the scale from the final scale.
    """
    backoffs = int(getattr(d, "backoffs", 0) or 0)
    first_nan = getattr(d, "first_nan_step", None)
    final = getattr(d, "final_scale", None)
    verdict = getattr(d, "verdict", "unknown")
    stated = getattr(d, "precision", None)
    if backoffs == 0:
        lines = "none"
    elif verdict == "overflow" or first_nan is not None:
        lines = "updating"
    else:
        lines = "stopped"
    if verdict == "data":
        nan = "step0"
    elif first_nan is None:
        nan = "later" if verdict == "no-scaler" else "none"
    else:
        nan = "step0" if first_nan <= 2 and backoffs == 0 else "later"
    bf16 = stated in ("bf16", "fp32") or (verdict == "no-scaler" and backoffs == 0)
    out: dict[str, Any] = {"lines": lines, "nan": nan, "precision": "bf16" if bf16 else "fp16"}
    if final is not None and math.isfinite(final) and final > 0:
        out["scale"] = float(final)
    return out
