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
from .i18n import t
from .scenarios import LOG_KINDS, synthetic_log
from .seed import WARN_SCALE

__all__ = ["CHECKLIST", "checklist", "LINES", "NAN_WHEN", "LOG_KINDS", "LOG_STYLES", "WARN_SCALE",
           "ChainResult", "walk_chain", "generate_log", "answers_from_diagnosis"]

#: The article's copyable checklist (its four items and the bf16 shortcut), in English;
#: ``checklist()`` gives it in the current language.
CHECKLIST = t("chain.checklist", lang="en")


def checklist() -> str:
    """The article's checklist in the current language (``fampnb.i18n``)."""
    return t("chain.checklist")


#: answers to question 1 (key -> label, English; the widget shows ``t("chain.lines.<key>")``)
LINES: dict[str, str] = {k: t(f"chain.lines.{k}", lang="en") for k in ("updating", "stopped", "none")}
#: answers to question 3 (key -> label)
NAN_WHEN: dict[str, str] = {k: t(f"chain.nan.{k}", lang="en") for k in ("step0", "later", "none")}
#: log styles (``Trace.log_lines`` styles) -> label
LOG_STYLES: dict[str, str] = {
    "seed": t("chain.style.seed", lang="en"), "deepspeed": "DeepSpeed", "apex": "apex",
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
        return "\n".join(lines + [t("chain.verdict", verdict=self.verdict),
                                  t("chain.first_switch", first=self.first_switch)])


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
        step2 = t("chain.a2.unknown")
    else:
        scaled, article = judge(g, scale, fmt)  # raises ValueError on bad g / scale
        exact = Zone(int(fmt.classify(np.float64(scaled)))).name
        step2 = t("chain.a2.known", g=f"{g:g}", scale=f"{scale:g}", scaled=f"{scaled:.6g}",
                  article=article, fmt=fmt.name, exact=exact)
    res = ChainResult(verdict="healthy", first_switch="", scaled=scaled, article_zone=article,
                      exact_zone=exact)

    if precision == "bf16":
        res.steps.append((t("chain.q1"), t("chain.a1.bf16")))
        res.steps.append((t("chain.q2"), step2 + t("chain.a2.bf16_range", lo=f"{BF16.min_normal:.3g}",
                                                   hi=f"{BF16.max:.4g}")))
        if nan == "none":
            res.steps.append((t("chain.q3"), t("chain.a3.no_nan")))
            res.verdict, res.first_switch = "healthy", t("chain.fs.keep_training")
        elif nan == "step0":
            res.steps.append((t("chain.q3"), t("chain.a3.bf16_step0")))
            res.verdict = "data"
            res.first_switch = t("chain.fs.bf16_data")
        else:
            res.steps.append((t("chain.q3"), t("chain.a3.bf16_later")))
            res.verdict = "no-scaler"
            res.first_switch = t("chain.fs.no_scaler")
        return res

    # fp16: step 1
    if lines == "updating":
        below = scale < WARN_SCALE
        res.steps.append((t("chain.q1"), t("chain.a1.updating") + (
            t("chain.a1.below", scale=f"{scale:g}") if below else t("chain.a1.watch"))))
    elif lines == "stopped":
        res.steps.append((t("chain.q1"), t("chain.a1.stopped")))
    else:
        res.steps.append((t("chain.q1"), t("chain.a1.none")))
    # step 2
    res.steps.append((t("chain.q2"), step2))
    # step 3
    if nan == "step0" and lines != "updating":
        if bf16_pretrained:
            res.steps.append((t("chain.q3"), t("chain.a3.bf16_pretrained")))
        else:
            res.steps.append((t("chain.q3"), t("chain.a3.data")))
    else:
        res.steps.append((t("chain.q3"), t({"step0": "chain.a3.step0_with_lines",
                                             "later": "chain.a3.later", "none": "chain.a3.no_nan"}[nan])))

    # verdict
    if nan == "step0" and lines != "updating":
        if bf16_pretrained:
            res.verdict = "forward-overflow"
            res.first_switch = t("chain.fs.forward_overflow")
        else:
            res.verdict = "data"
            res.first_switch = t("chain.fs.data")
    elif article == "OVERFLOW" and (lines == "updating" or nan != "none"):
        res.verdict = "overflow"
        res.first_switch = t("chain.fs.overflow_confirmed")
    elif article == "UNDERFLOW":
        res.verdict = "underflow"
        res.first_switch = t("chain.fs.underflow") + (
            t("chain.fs.underflow_subnormal") if exact == "SUBNORMAL" else "")
    elif lines == "updating":
        if nan != "none" or scale < WARN_SCALE:
            res.verdict = "overflow"
            res.first_switch = t("chain.fs.overflow")
        else:
            res.verdict = "healthy"
            res.first_switch = t("chain.fs.calibrating")
    elif nan == "later":
        res.verdict = "data"
        res.first_switch = t("chain.fs.forward_nan")
    else:
        res.verdict = "healthy"
        res.first_switch = t("chain.fs.nothing")
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
