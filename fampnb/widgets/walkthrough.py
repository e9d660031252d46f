"""The article's three-step NaN decision chain, as a walkthrough (notebook 04).

``walk_chain()`` is the chain itself, pure (numpy + ``fampnb.formats``): (1) is the overflow line
still updating?  (2) ``G x scale`` against fp16's thresholds, by the article's model (``judge``) and
by the exact cast (``Format.classify``); (3) NaN at step 0 with no overflow line?  It returns every
step's finding, a verdict and the first switch to turn.  It also knows the trap the article misses:
a bf16-pretrained model run in fp16 gives NaN at step 0 with no overflow line, which looks like data
but is a forward-activation overflow that no loss scale can fix.

``make_walkthrough()`` puts the chain behind controls, and adds a generator of synthetic training
logs (``fampnb.scenarios.synthetic_log``) whose lines are shown, diagnosed with
``fampnb.diagnose`` and used to fill in the chain's answers.
"""

from __future__ import annotations

import html
import inspect
import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CHECKLIST", "LINES", "NAN_WHEN", "LOG_KINDS", "LOG_STYLES", "ChainResult", "walk_chain",
           "answers_from_diagnosis", "generate_log", "make_walkthrough"]

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
#: synthetic log kinds (``fampnb.scenarios.synthetic_log``) -> label
LOG_KINDS: dict[str, str] = {
    "overflow": "overflow-type (fp16, backoffs then NaN)",
    "data": "data-type (NaN at step 0)",
    "no-scaler": "bf16, no scaler (NaN mid-run)",
    "healthy": "healthy calibration",
}
#: log styles (``Trace.log_lines`` styles) -> label
LOG_STYLES: dict[str, str] = {
    "seed": "the article's line", "deepspeed": "DeepSpeed", "apex": "apex",
    "fairseq": "fairseq", "megatron": "Megatron-LM",
}

#: the article's warning level for a falling scale
WARN_SCALE = 256.0


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
    import numpy as np

    from ..formats import BF16, FP16, Zone, judge

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
                             "warning sign" if below else f"; watch whether it drops below 256 "
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
    from .. import scenarios

    _check("kind", kind, LOG_KINDS)
    _check("style", style, LOG_STYLES)
    fn = scenarios.synthetic_log
    params = inspect.signature(fn).parameters
    kw: dict[str, Any] = {}
    if "steps" in params:
        kw["steps"] = int(steps)
    if "seed" in params:
        kw["seed"] = int(seed)
    out = fn(kind, style, **kw)
    if isinstance(out, str):
        return out.splitlines()
    return [str(x).rstrip("\n") for x in out]


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


# --- the widget -----------------------------------------------------------------------------

NAME = "walk"


def _window(n: int, focus: int | None, head: int = 4, before: int = 3, after: int = 14,
            tail: int = 3) -> list[int | None]:
    """0-based line indices to show (None: an elision): the head, a window around ``focus``
    (1-based line number), the tail."""
    if focus is None or n <= head + before + after + tail + 2:
        keep = set(range(min(n, head + before + after + tail)))
    else:
        f = focus - 1
        keep = set(range(min(head, n))) | set(range(max(0, f - before), min(n, f + after)))
    keep |= set(range(max(0, n - tail), n))
    out: list[int | None] = []
    for i in range(n):
        if i in keep:
            out.append(i)
        elif out and out[-1] is not None:
            out.append(None)
    return out


def _pre(lines: list[str], focus: int | None = None) -> str:
    rows = ["     ..." if i is None else f"{i + 1:>4}  {lines[i]}"
            for i in _window(len(lines), focus)]
    body = html.escape("\n".join(rows) + f"\n({len(lines)} lines)")
    return (f'<pre style="font-size:11px;line-height:1.3;max-height:300px;overflow:auto;'
            f'white-space:pre;background:#f7f7f7;padding:6px">{body}</pre>')


def _diag_html(d: Any) -> str:
    adv = getattr(d, "advice", None) or []
    adv = [adv] if isinstance(adv, str) else list(adv)
    ev = getattr(d, "evidence", None) or []
    ev_lines = []
    for e in list(ev)[:6]:
        ln = getattr(e, "line_no", None)
        text = str(getattr(e, "text", e))
        text = text if len(text) <= 150 else "..." + text[-140:]
        ev_lines.append(f"line {ln}: {text}" if ln is not None else text)
    parts = [f"<b>fampnb.diagnose: {html.escape(str(d.verdict))}</b> - "
             f"{html.escape(str(getattr(d, 'reason', '')))}"]
    if adv:
        parts.append("first switch: " + html.escape(str(adv[0])))
    if ev_lines:
        parts.append("evidence:<br>" + "<br>".join("&nbsp;&nbsp;" + html.escape(t)
                                                    for t in ev_lines))
    return "<br>".join(parts)


def _chain_html(r: ChainResult) -> str:
    colour = {"healthy": "#2e7d32", "overflow": "#c62828", "data": "#6a1b9a",
              "no-scaler": "#ef6c00", "underflow": "#1565c0",
              "forward-overflow": "#ad1457"}.get(r.verdict, "#333")
    steps = "".join(f"<li><b>{html.escape(q)}</b><br>{html.escape(a)}</li>" for q, a in r.steps)
    return (f"<ol style='margin:0 0 4px 0'>{steps}</ol>"
            f"<div style='font-size:15px'>verdict: <b style='color:{colour}'>{r.verdict}</b></div>"
            f"<div>first switch: <b>{html.escape(r.first_switch)}</b></div>")


def make_walkthrough(kind: str = "overflow", style: str = "deepspeed", seed: int = 0,
                     steps: int = 100) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """The decision walkthrough -> ``(ui, controls, artists)``.

    controls: ``lines, g, scale, nan, precision, bf16_pretrained`` (the chain's answers) and
    ``kind, style, seed, load`` (the log generator; ``load`` is a Button copying the generated
    log's answers into the chain).  artists: ``chain_text`` (steps, verdict, first switch),
    ``log_text`` (the generated lines), ``diagnosis_text`` (``fampnb.diagnose`` on them),
    ``checklist_text``, ``range`` (``draw_range_check`` artists), ``status``, ``figure``.
    """
    import ipywidgets as w

    from .. import diagnose as doctor
    from .. import logs
    from ..formats import get
    from ..plots.scale import draw_range_check, update_range_check
    from .base import LiveFigure, guard, status_line, tag

    st = {"description_width": "150px"}
    tb = {"description_width": "150px", "button_width": "auto"}
    wide = w.Layout(width="460px")
    c: dict[str, Any] = {
        "lines": w.ToggleButtons(options=[(v, k) for k, v in LINES.items()], value="updating",
                                 description="1. overflow line?", style=tb),
        "g": w.FloatText(value=3.2e4, description="2. gradient abs max G", style=st,
                         layout=w.Layout(width="300px")),
        "scale": w.FloatLogSlider(value=65536.0, base=2, min=-48, max=32, step=1,
                                  description="loss scale", readout_format=".6g", style=st,
                                  layout=wide),
        "nan": w.ToggleButtons(options=[(v, k) for k, v in NAN_WHEN.items()], value="later",
                               description="3. first NaN?", style=tb),
        "precision": w.ToggleButtons(options=["fp16", "bf16"], value="fp16",
                                     description="precision", style=st),
        "bf16_pretrained": w.Checkbox(value=False, description="model pretrained in bf16",
                                      indent=False),
        "kind": w.Dropdown(options=[(v, k) for k, v in LOG_KINDS.items()], value=kind,
                           description="log kind", style=st, layout=wide),
        "style": w.Dropdown(options=[(v, k) for k, v in LOG_STYLES.items()], value=style,
                            description="framework style", style=st),
        "seed": w.BoundedIntText(value=seed, min=0, max=10**6, description="seed", style=st,
                                 layout=w.Layout(width="260px")),
        "load": w.Button(description="answer the chain from this log", icon="arrow-up",
                         layout=w.Layout(width="260px")),
    }
    for key, ctl in c.items():
        tag(ctl, f"{NAME}-{key.replace('_', '-')}")
    chain_text = tag(w.HTML(), f"{NAME}-chain-text")
    log_text = tag(w.HTML(), f"{NAME}-log-text")
    diag_text = tag(w.HTML(), f"{NAME}-diagnosis-text")
    checklist_text = tag(w.HTML(f"<pre style='font-size:11px'>{html.escape(CHECKLIST)}</pre>"),
                         f"{NAME}-checklist-text")
    status = status_line(NAME)

    live = LiveFigure(figsize=(8.0, 1.9), height="210px")
    fmt0 = get(c["precision"].value)
    rng = draw_range_check(live.ax, {"g": c["g"].value, "scale": c["scale"].value, "fmt": fmt0})
    artists: dict[str, Any] = {"chain_text": chain_text, "log_text": log_text,
                               "diagnosis_text": diag_text, "checklist_text": checklist_text,
                               "range": rng, "status": status, "figure": live,
                               "diagnosis": None, "result": None, "log_lines": []}

    def rechain(_: Any = None) -> None:
        g, s = float(c["g"].value), float(c["scale"].value)
        r = walk_chain(c["lines"].value, g, s, c["nan"].value, c["precision"].value,
                       bool(c["bf16_pretrained"].value))
        artists["result"] = r
        chain_text.value = _chain_html(r)
        update_range_check(rng, {"g": g, "scale": s, "fmt": get(c["precision"].value)})
        live.refresh()

    def regenerate(_: Any = None) -> None:
        lines = generate_log(c["kind"].value, c["style"].value, steps, int(c["seed"].value))
        artists["log_lines"] = lines
        d = doctor.diagnose(logs.parse(lines))
        artists["diagnosis"] = d
        ev = [e for e in (d.evidence or []) if getattr(e, "line_no", None)]
        log_text.value = _pre(lines, ev[0].line_no if ev else None)
        diag_text.value = _diag_html(d)

    def load(_: Any = None) -> None:
        d = artists["diagnosis"]
        if d is None:
            return
        ans = answers_from_diagnosis(d)
        for key in ("precision", "lines", "nan", "scale"):
            if key in ans:
                c[key].value = ans[key]
        rechain()

    cb_chain, cb_log, cb_load = guard(status, rechain), guard(status, regenerate), guard(status, load)
    for key in ("lines", "g", "scale", "nan", "precision", "bf16_pretrained"):
        c[key].observe(cb_chain, names="value")
    for key in ("kind", "style", "seed"):
        c[key].observe(cb_log, names="value")
    c["load"].on_click(lambda _b: cb_load())
    cb_log()
    cb_chain()

    chain_box = w.VBox([w.HTML("<b>The chain</b> - answer the three questions:"), c["lines"],
                        c["g"], c["scale"], c["nan"], w.HBox([c["precision"], c["bf16_pretrained"]]),
                        live.view, chain_text])
    log_box = w.VBox([w.HTML("<b>A generated log</b> - and the doctor's reading of it:"),
                      w.HBox([c["kind"], c["style"]]), w.HBox([c["seed"], c["load"]]),
                      log_text, diag_text])
    ui = tag(w.VBox([chain_box, status, log_box, w.HTML("<b>The article's checklist</b>"),
                     checklist_text]), NAME)
    return ui, c, artists
