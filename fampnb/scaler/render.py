"""Render a ``Trace`` as the log lines each framework prints (``fampnb.scaler.STYLES``).

Wordings follow the frameworks' own log calls and the real excerpts shipped in
``fampnb/data/real-logs/``: apex
``Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0``; DeepSpeed
``[date] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step.
Attempted loss scale: 65536, reducing to 32768`` (and the hysteresis and min-scale variants);
fairseq ``NOTE: gradient overflow detected, ignoring gradient, setting loss scale to: 64.0``;
Megatron ``iteration`` lines every ``log_interval`` with ``loss scale:`` and the skipped/nan
counters (the ``lm loss:`` field vanishes when its interval average is NaN or nothing was applied,
as Megatron's ``avg > 0.0`` test does); HF Trainer dicts (no scale field; ``grad_norm`` nan on
skipped steps; the loss shown as ``logging_nan_inf_filter=False`` would show it); the article's
``Loss scaling: 65536 -> 32768 (overflow)``.  Times are synthetic and deterministic.  The gradient
norm printed where a framework prints one is the step's ``grad_abs_max`` (a stand-in).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from .policies import DeepSpeedScaler, MegatronScaler, StaticScaler

START = datetime(2024, 9, 11, 17, 52, 11, 320000)
DS_PREFIX = "[{t}] [INFO] [{where}] "
DS_OVERFLOW = ("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: {a}, "
               "reducing to {b}")
DS_HYSTERESIS = ("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: {a}, "
                 "but hysteresis is {h}. Reducing hysteresis to {h1}")
DS_RESTORE = "Consecutive hysteresis is enabled. Restoring hysteresis to {n}"
DS_PROGRESS = "[Rank 0] step={n}, skipped={k}, lr=[{lr!r}], mom=[(0.9, 0.999)]"
APEX_OVERFLOW = "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {b}"
FAIRSEQ_OVERFLOW = ("NOTE: gradient overflow detected, ignoring gradient, setting loss scale "
                    "to: {b}")
FAIRSEQ_NAN = "FloatingPointError: gradients are Nan/Inf"
SEED_LINE = "Loss scaling: {a} -> {b} ({why})"
TORCH_WARNING = (
    "/usr/local/lib/python3.10/dist-packages/torch/optim/lr_scheduler.py:216: UserWarning: "
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and "
    "later, you should call them in the opposite order: `optimizer.step()` before "
    "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first value "
    "of the learning rate schedule. See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate")
TRACEBACKS = {
    "Exception": [
        '  File "/usr/local/lib/python3.10/dist-packages/deepspeed/runtime/zero/'
        'stage_1_and_2.py", line 2079, in _update_scale',
        "    self.loss_scaler.update_scale(has_overflow)",
        '  File "/usr/local/lib/python3.10/dist-packages/deepspeed/runtime/fp16/loss_scaler.py",'
        " line 175, in update_scale",
        "    raise Exception("],
    "FloatingPointError": [
        '  File "/usr/local/lib/python3.10/dist-packages/fairseq/trainer.py", line 932, in '
        "train_step",
        "    grad_norm = self.clip_grad_norm(self.cfg.optimization.clip_norm)",
        '  File "/usr/local/lib/python3.10/dist-packages/fairseq/optim/fp16_optimizer.py", '
        "line 201, in clip_grad_norm",
        "    self.scaler.check_overflow(grad_norm)",
        '  File "/usr/local/lib/python3.10/dist-packages/fairseq/optim/dynamic_loss_scaler.py", '
        "line 61, in check_overflow",
        "    raise FloatingPointError("],
    "nan": [
        '  File "/usr/local/lib/python3.10/dist-packages/fairseq/trainer.py", line 955, in '
        "train_step",
        '    raise FloatingPointError("gradients are Nan/Inf")'],
}


def _intish(x: float) -> str:
    """An integral value as an int (``65536``), anything else as Python prints the float."""
    if isinstance(x, int):
        return str(x)
    if math.isfinite(x) and x == int(x) and abs(x) < 2 ** 63:
        return str(int(x))
    return repr(float(x))


def _ds_int(x: float) -> str:
    """DeepSpeed's ``int(scale)`` (``int(inf)`` would raise there; printed as ``inf`` here)."""
    return str(int(x)) if math.isfinite(x) else repr(float(x))


class _Ctx:
    """Per-render state: times, learning rate, loss averaging."""

    def __init__(self, trace: Any, loss: Sequence[float] | None, log_interval: int,
                 opts: dict[str, Any]) -> None:
        n = len(trace)
        if isinstance(log_interval, bool) or not isinstance(log_interval, int) or log_interval < 1:
            raise ValueError(f"log_interval must be an integer >= 1, got {log_interval!r}")
        if loss is not None:
            loss = [float(v) for v in loss]
            if len(loss) < n:
                raise ValueError(f"loss must have one value per step ({n}), got {len(loss)}")
        unknown = set(opts) - {"lr", "warmup", "decay", "start", "seconds_per_step",
                               "total_steps", "global_batch_size", "steps_per_epoch",
                               "show_scale", "nan_inf_filter"}
        if unknown:
            raise ValueError(f"unknown log_lines option(s): {sorted(unknown)}")
        self.trace, self.loss, self.every = trace, loss, log_interval
        self.lr0 = float(opts.get("lr", 1e-4))
        self.warmup = int(opts.get("warmup", 0))
        #: linear decay to 0 over ``total_steps`` applied steps (HF Trainer's default schedule)
        self.decay = bool(opts.get("decay", False))
        self.start: datetime = opts.get("start", START)
        self.dt = float(opts.get("seconds_per_step", 2.0))
        self.total = int(opts.get("total_steps", len(loss) if loss is not None else n))
        self.gbs = int(opts.get("global_batch_size", 64))
        self.spe = int(opts.get("steps_per_epoch", 1000))
        self.show_scale = opts.get("show_scale")
        self.nan_filter = bool(opts.get("nan_inf_filter", False))
        self.applied = 0  # optimizer steps applied so far (the LR schedule advances on these)

    def time(self, step: int) -> datetime:
        jitter = 0.4 * ((step * 0.6180339887) % 1.0)  # deterministic, keeps times increasing
        return self.start + timedelta(seconds=self.dt * (step - 1 + jitter))

    def ds_time(self, step: int) -> str:
        t = self.time(step)
        return t.strftime("%Y-%m-%d %H:%M:%S") + f",{t.microsecond // 1000:03d}"

    def fs_time(self, step: int) -> str:
        return self.time(step).strftime("%Y-%m-%d %H:%M:%S")

    def lr(self) -> float:
        """The scheduler's LR: it advances only on applied steps (frozen while steps skip)."""
        lr = self.lr0
        if self.warmup > 0:
            lr *= min(1.0, self.applied / self.warmup)
        if self.decay:
            lr *= max(0.0, 1.0 - self.applied / max(1, self.total))
        return lr

    def mean_loss(self, lo: int, hi: int, applied_only: bool) -> float | None:
        """Mean loss over steps ``lo..hi-1`` (0-based), of applied steps only if asked."""
        if self.loss is None:
            return None
        sk = self.trace.skipped
        vals = [self.loss[i] for i in range(lo, hi) if not (applied_only and sk[i])]
        return sum(vals) / len(vals) if vals else None

    def grad(self, i: int) -> float | None:
        g = self.trace.grad_abs_max
        return None if g is None else g[i]


def _fatal(trace: Any) -> list[str]:
    kind = trace.fatal.split(":", 1)[0]
    return ["Traceback (most recent call last):", *TRACEBACKS.get(kind, []), trace.fatal]


def _hysteresis_replay(trace: Any) -> list[int]:
    """The hysteresis counter before each step (DeepSpeed/Megatron rules), for the log wording."""
    p = trace.policy
    full = getattr(p, "hysteresis", 2)
    consecutive = isinstance(p, DeepSpeedScaler) and p.consecutive_hysteresis
    out, h = [], full
    for ov, ev in zip(trace.overflow, trace.events):
        out.append(h)
        if ev == "hysteresis" or (ov and isinstance(p, MegatronScaler)):
            h -= 1
        elif ev == "growth" or (consecutive and not ov):
            h = full
    return out


def _deepspeed(c: _Ctx) -> list[str]:
    tr, out = c.trace, list[str]()
    hyst = _hysteresis_replay(tr)
    consecutive = isinstance(tr.policy, DeepSpeedScaler) and tr.policy.consecutive_hysteresis
    half = tr.fmt.name == "fp16"
    skipped, loss_lo = 0, 0
    for i, (s, ns, ov, sk, ev) in enumerate(zip(tr.scales, tr.next_scales, tr.overflow,
                                                tr.skipped, tr.events)):
        step = i + 1
        if ev == "min-scale" and tr.fatal and i == len(tr) - 1:
            return out + _fatal(tr)
        if ov and sk and not half:  # DeepSpeed prints the scales only when dtype is fp16
            out.append(DS_PREFIX.format(t=c.ds_time(step), where="loss_scaler.py:183:update_scale")
                       + DS_OVERFLOW.split(" Attempted")[0])
        elif ev == "hysteresis":
            out.append(DS_PREFIX.format(t=c.ds_time(step), where="loss_scaler.py:188:update_scale")
                       + DS_HYSTERESIS.format(a=_ds_int(s), h=hyst[i], h1=hyst[i] - 1))
        elif ov and sk:
            out.append(DS_PREFIX.format(t=c.ds_time(step), where="loss_scaler.py:183:update_scale")
                       + DS_OVERFLOW.format(a=_ds_int(s), b=_ds_int(ns)))
        elif consecutive and not ov:
            out.append(DS_PREFIX.format(t=c.ds_time(step), where="loss_scaler.py:197:update_scale")
                       + DS_RESTORE.format(n=tr.policy.hysteresis))
        if sk:
            skipped += 1
        else:
            c.applied += 1
        if c.loss is not None and step % c.every == 0:
            out.append(DS_PREFIX.format(t=c.ds_time(step), where="logging.py:96:log_dist")
                       + DS_PROGRESS.format(n=step, k=skipped, lr=c.lr()))
            rec = {"loss": round(c.mean_loss(loss_lo, step, False), 4),  # type: ignore[arg-type]
                   "learning_rate": c.lr(), "epoch": round(step / c.spe, 2)}
            out.append(repr(rec))
            loss_lo = step
    return out + (_fatal(tr) if tr.fatal else [])


def _apex(c: _Ctx) -> list[str]:
    return _user_loop(c, lambda s, ns, ev: APEX_OVERFLOW.format(b=repr(float(ns))), False)


def _seed(c: _Ctx) -> list[str]:
    def line(s: float, ns: float, ev: str | None) -> str:
        return SEED_LINE.format(a=_intish(s), b=_intish(ns), why="overflow")
    return _user_loop(c, line, False, growth=True)


def _torch(c: _Ctx) -> list[str]:
    show = not isinstance(c.trace.policy, StaticScaler)
    out = _user_loop(c, None, show)
    if c.trace.skipped and c.trace.skipped[0]:
        out[0:0] = [TORCH_WARNING, "  warnings.warn("]
    return out


def _user_loop(c: _Ctx, skip_line: Callable[[float, float, Any], str] | None,
               show_scale: bool, growth: bool = False) -> list[str]:
    """Skip lines from the framework (if any) plus a typical user print every ``log_interval``:
    ``step N: loss X`` (``, loss scale S`` when shown)."""
    tr, out, lo = c.trace, [], 0
    show = show_scale if c.show_scale is None else bool(c.show_scale)
    for i, (s, ns, ov, sk, ev) in enumerate(zip(tr.scales, tr.next_scales, tr.overflow,
                                                tr.skipped, tr.events)):
        step = i + 1
        if skip_line is not None and ov and sk and not (tr.fatal and i == len(tr) - 1):
            out.append(skip_line(s, ns, ev))
        elif growth and ev == "growth":
            out.append(SEED_LINE.format(a=_intish(s), b=_intish(ns), why="growth"))
        if step % c.every == 0 and (c.loss is not None or show):
            parts = [f"step {step}:"]
            if c.loss is not None:
                parts.append(f"loss {c.mean_loss(lo, step, False):.4f}" + ("," if show else ""))
            if show:
                parts.append(f"loss scale {ns:g}")
            out.append(" ".join(parts))
            lo = step
    return out + (_fatal(tr) if tr.fatal else [])


def _fairseq(c: _Ctx) -> list[str]:
    tr, out = c.trace, list[str]()
    has_scaler = not isinstance(tr.policy, StaticScaler)
    acc: list[int] = []
    for i, (s, ns, ov, sk, ev) in enumerate(zip(tr.scales, tr.next_scales, tr.overflow,
                                                tr.skipped, tr.events)):
        step = i + 1
        if tr.fatal and i == len(tr) - 1:
            return out + _fatal(tr)
        if ov and not sk:  # bf16/fp32: no scaler to absorb a non-finite gradient norm
            return out + ["Traceback (most recent call last):", *TRACEBACKS["nan"], FAIRSEQ_NAN]
        if sk:
            out.append(f"{c.fs_time(step)} | INFO | fairseq.trainer | "
                       + FAIRSEQ_OVERFLOW.format(b=repr(float(ns))))
            continue
        c.applied += 1
        acc.append(i)
        if c.applied % c.every == 0:
            fields = []
            if c.loss is not None:
                loss = sum(c.loss[j] for j in acc) / len(acc)
                fields += [f"loss={round(loss, 3):g}", f"ppl={round(2 ** loss, 2):g}"
                           if math.isfinite(loss) and loss < 1000 else "ppl=inf"]
            fields += [f"wps={round(c.gbs * 512 / c.dt, 1):g}", f"ups={round(1 / c.dt, 2):g}",
                       f"wpb={c.gbs * 512}", f"bsz={c.gbs}", f"num_updates={c.applied}",
                       f"lr={c.lr():g}"]
            gs = [c.grad(j) for j in acc]
            if all(v is not None for v in gs):
                fields.append(f"gnorm={round(sum(gs) / len(gs), 3):g}")  # type: ignore[arg-type]
            if has_scaler:
                avg = sum(tr.next_scales[j] for j in acc) / len(acc)
                fields.append(f"loss_scale={round(avg, 4):g}")
            fields += [f"train_wall={round(c.dt * step)}", f"wall={round(c.dt * step + 5)}"]
            out.append(f"{c.fs_time(step)} | INFO | train_inner | epoch 001:  {step:5d} / "
                       f"{c.total} " + ", ".join(fields))
            acc = []
    return out + (_fatal(tr) if tr.fatal else [])


def _megatron(c: _Ctx) -> list[str]:
    tr, out = c.trace, list[str]()
    skipped = nan = 0
    lo = 0
    for i, (ns, ov, sk) in enumerate(zip(tr.next_scales, tr.overflow, tr.skipped)):
        step = i + 1
        if sk:
            skipped += 1
            if c.loss is not None and not math.isfinite(c.loss[i]):
                nan += 1  # Megatron counts NaN only on skipped iterations
        else:
            c.applied += 1
        if step % c.every:
            continue
        line = (f" iteration {step:8d}/{c.total:8d} | consumed samples: {step * c.gbs:12d} |"
                f" elapsed time per iteration (ms): {c.dt * 1000:.1f} |"
                f" learning rate: {c.lr():.3E} | global batch size: {c.gbs:5d} |")
        avg = c.mean_loss(lo, step, True)
        if avg is not None and avg > 0.0:  # NaN fails the comparison: the field vanishes
            line += f" lm loss: {avg:.6E} |"
        line += f" loss scale: {ns:.1f} |"
        g = c.grad(i)
        if not sk and g is not None:
            line += f" grad norm: {g:.3f} |"
        line += (f" number of skipped iterations: {skipped:3d} |"
                 f" number of nan iterations: {nan:3d} |")
        out.append(line)
        skipped = nan = 0
        lo = step
    return out + (_fatal(tr) if tr.fatal else [])


def _hf(c: _Ctx) -> list[str]:
    """Trainer ``log()`` dicts.  ``nan_inf_filter=True`` is the Trainer default
    ``logging_nan_inf_filter``: a non-finite step loss adds ``tr_loss / (1 + steps so far in the
    interval)`` instead, so the printed loss stays finite (transformers
    ``Trainer._inner_training_loop``)."""
    tr, out, acc, k = c.trace, [], 0.0, 0
    for i, sk in enumerate(tr.skipped):
        step = i + 1
        if not sk:
            c.applied += 1
        if c.loss is not None:
            x = c.loss[i]
            acc += acc / (1 + k) if c.nan_filter and not math.isfinite(x) else x
            k += 1
        if step % c.every:
            continue
        rec: dict[str, float] = {}
        if c.loss is not None:
            rec["loss"] = round(acc / k, 4)
            acc, k = 0.0, 0
        g = c.grad(i)
        if sk or tr.overflow[i]:
            rec["grad_norm"] = math.nan
        elif g is not None:
            rec["grad_norm"] = g
        rec["learning_rate"] = c.lr()
        rec["epoch"] = round(step / c.spe, 2)
        out.append(repr(rec))
    return out + (_fatal(tr) if tr.fatal else [])


RENDERERS = {"seed": _seed, "deepspeed": _deepspeed, "apex": _apex, "fairseq": _fairseq,
             "megatron": _megatron, "hf": _hf, "torch": _torch}


def render(trace: Any, style: str, *, loss: Sequence[float] | None = None, log_interval: int = 10,
           **opts: Any) -> list[str]:
    """Lines of ``style`` for ``trace`` (see the module docstring); ValueError for bad input."""
    if style not in RENDERERS:
        raise ValueError(f"style must be one of {tuple(RENDERERS)}, got {style!r}")
    if style in ("hf", "deepspeed"):
        opts.setdefault("decay", True)  # HF Trainer's default linear schedule
    return RENDERERS[style](_Ctx(trace, loss, log_interval, opts))
