"""Synthetic training runs with an unambiguous verdict, rendered in the metric notations real logs use.

Written from the log doctor's spec (issue 16, docs/DESIGN.md), not from its code: nothing here imports
fampnb. A run is pure data (a tuple of ``Record``); a renderer turns it into the lines one logger would
print (a realistic, self-consistent line shape: the prefixes, separators, number formats and NaN
spellings that logger really uses). ``NOTATIONS`` maps a notation's name to its renderer.

The four runs (``RUNS``), each seeded and parametric so a property test can draw variants:

- ``data``: the loss is non-finite from the first logged record on; static scale 1.0, constant.
- ``no-scaler``: 200+ steps of finite, falling loss, then a lasting NaN late; static scale 1.0 throughout.
- ``overflow``: a steady 65536, then the scale halves in every record down to below 1 (0.25 by
  default); the loss turns NaN a few halvings in.
- ``healthy``: start-up calibration (the scale halves 2-4 times within the first 10 steps), then long
  finite, falling loss; the scale holds and doubles now and then.

Non-finite values are drawn from nan, -nan, inf, -inf; each renderer spells them as its logger does
(JSON ``NaN``/``Infinity``, Python ``nan``/``inf``, glibc ``-nan``, pandas ``NaN``, ``%E`` ``NAN``/``INF``,
fairseq's quoted ``"nan"``).
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

NEG_NAN = -math.nan  # a NaN with the sign bit set (what glibc prints as -nan)


@dataclass(frozen=True)
class Record:
    """One logged step. ``scale`` is the loss scale in force after the step (1.0: static scale)."""

    step: int
    loss: float
    grad_norm: float
    lr: float
    scale: float
    skipped: bool  # the scale was cut at this step (an overflow backoff)


@dataclass(frozen=True)
class Run:
    name: str                 # also the verdict the doctor must give
    records: tuple[Record, ...]
    total_steps: int          # M of the N/M counters
    epoch_steps: int          # updates per epoch (fairseq / HF epoch fractions)

    @property
    def verdict(self) -> str:
        return self.name

    @property
    def needs_scale(self) -> bool:
        """The verdict depends on the printed loss scale (every run but ``data``)."""
        return self.name != "data"


# ---------------------------------------------------------------------------------------------- runs

def _bad(rng: random.Random) -> float:
    return rng.choice([math.nan, math.nan, math.nan, math.nan, NEG_NAN, math.inf, -math.inf])


def _falling(rng: random.Random, n: int, start: float, end: float) -> list[float]:
    """n values decaying from ``start`` toward ``end`` with 1% multiplicative noise."""
    return [(end + (start - end) * math.exp(-3.0 * i / max(n, 1))) * (1 + rng.gauss(0, 0.01))
            for i in range(n)]


def _lr(step: int, total: int, peak: float = 1e-4) -> float:
    return peak * (1.0 - 0.5 * step / total)


def _total(last_step: int) -> int:
    return max(1000, -(-last_step // 1000) * 1000)


def data_run(seed: int = 0, n: int = 20, every: int = 1) -> Run:
    """NaN from the first logged record on (step ``every``); static scale 1.0; no backoff."""
    rng = random.Random(seed)
    total = _total(n * every)
    recs = tuple(Record(step=(i + 1) * every, loss=_bad(rng),
                        grad_norm=rng.choice([math.nan, math.inf]),
                        lr=_lr((i + 1) * every, total), scale=1.0, skipped=False) for i in range(n))
    return Run("data", recs, total, epoch_steps=max(total // 4, 1))


def no_scaler_run(seed: int = 0, healthy_steps: int = 300, every: int = 1, nan_records: int = 10) -> Run:
    """``healthy_steps`` (>= 200) of finite falling loss at static scale 1.0, then a lasting NaN."""
    rng = random.Random(seed)
    n_ok = max(healthy_steps // every, 1)
    total = _total((n_ok + nan_records) * every)
    start = rng.uniform(3.0, 10.0)
    losses = _falling(rng, n_ok, start, start * rng.uniform(0.25, 0.45))
    norms = _falling(rng, n_ok, rng.uniform(2.0, 6.0), rng.uniform(0.3, 0.9))
    recs = [Record((i + 1) * every, losses[i], norms[i], _lr((i + 1) * every, total), 1.0, False)
            for i in range(n_ok)]
    recs += [Record((n_ok + j + 1) * every, _bad(rng), math.nan, _lr((n_ok + j + 1) * every, total),
                    1.0, False) for j in range(nan_records)]
    return Run("no-scaler", tuple(recs), total, epoch_steps=max(total // 4, 1))


def overflow_run(seed: int = 0, prefix: int = 60, nan_after: int = 4, floor_exp: int = -2) -> Run:
    """``prefix`` steps at a steady 65536, then one halving per step down to 2**floor_exp (< 1).

    The loss stays finite (rising) for the first ``nan_after`` halvings, then is non-finite."""
    rng = random.Random(seed)
    exps = list(range(15, floor_exp - 1, -1))  # 32768 ... 2**floor_exp
    n = prefix + len(exps)
    total = _total(n)
    start = rng.uniform(3.0, 10.0)
    losses = _falling(rng, prefix, start, start * rng.uniform(0.4, 0.6))
    norms = _falling(rng, prefix, rng.uniform(2.0, 6.0), rng.uniform(0.5, 1.0))
    recs = [Record(i + 1, losses[i], norms[i], _lr(i + 1, total), 65536.0, False) for i in range(prefix)]
    last_loss, last_norm = losses[-1], norms[-1]
    for j, e in enumerate(exps):
        step = prefix + j + 1
        if j < nan_after:
            loss = last_loss * (1.05 + 0.1 * j) * (1 + rng.gauss(0, 0.01))
            norm = last_norm * 3.0 ** (j + 1)
        else:
            loss, norm = _bad(rng), math.nan
        recs.append(Record(step, loss, norm, _lr(step, total), 2.0 ** e, True))
    return Run("overflow", tuple(recs), total, epoch_steps=max(total // 4, 1))


def healthy_run(seed: int = 0, n: int = 300, calib: int = 3, growth: int = 120) -> Run:
    """Calibration: ``calib`` halvings of 65536 within steps 1-10; then finite falling loss, the
    scale doubling every ``growth`` steps after step 10. One record per step."""
    rng = random.Random(seed)
    total = _total(n)
    cuts = set(rng.sample(range(2, 11), calib))
    start = rng.uniform(3.0, 10.0)
    losses = _falling(rng, n, start, start * rng.uniform(0.25, 0.45))
    norms = _falling(rng, n, rng.uniform(2.0, 6.0), rng.uniform(0.3, 0.9))
    scale, recs = 65536.0, []
    for i in range(n):
        step = i + 1
        cut = step in cuts
        if cut:
            scale /= 2
        elif step > 10 and (step - 10) % growth == 0:
            scale *= 2
        recs.append(Record(step, losses[i], norms[i], _lr(step, total), scale, cut))
    return Run("healthy", tuple(recs), total, epoch_steps=max(total // 4, 1))


RUNS: dict[str, Callable[..., Run]] = {
    "data": data_run,
    "no-scaler": no_scaler_run,
    "overflow": overflow_run,
    "healthy": healthy_run,
}


# ------------------------------------------------------------------------------------ spelling helpers

def _py(x: float, fmt: str = ".4f") -> str:
    """Python's format: nan (sign dropped), inf, -inf."""
    return format(x, fmt)


def _glibc(x: float, fmt: str = "g") -> str:
    """printf / ostream: a NaN keeps its sign (-nan)."""
    if math.isnan(x):
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    return format(x, fmt)


def _msvc(x: float) -> str:
    """The Microsoft C runtime's printf('%.8f'): 1.#QNAN000 (-1.#IND00 with the sign bit), 1.#INF000."""
    if math.isnan(x):
        return "-1.#IND00" if math.copysign(1.0, x) < 0 else "1.#QNAN000"
    if math.isinf(x):
        return "-1.#INF000" if x < 0 else "1.#INF000"
    return f"{x:.8f}"


def _tqdm_num(x: float) -> str:
    """tqdm.format_num: '{:.3g}' unless str() is no longer."""
    f = f"{x:.3g}".replace("+0", "+").replace("-0", "-")
    s = str(x)
    return f if len(f) < len(s) else s


def _clock(step: int, per_step: float = 1.3) -> datetime:
    return datetime(2024, 5, 1, 10, 0, 0) + timedelta(seconds=step * per_step)


def _hms(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 60:02d}:{s % 60:02d}" if s < 3600 else f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def _epoch_pos(run: Run, step: int) -> tuple[int, int]:
    """(1-based epoch, update within it)."""
    return (step - 1) // run.epoch_steps + 1, (step - 1) % run.epoch_steps + 1


# ------------------------------------------------------------------------------------------ notations

NOTATIONS: dict[str, Callable[[Run], list[str]]] = {}
CARRIES_SCALE: dict[str, bool] = {}


def notation(name: str, scale: bool = True):
    def register(fn: Callable[[Run], list[str]]):
        NOTATIONS[name] = fn
        CARRIES_SCALE[name] = scale
        return fn
    return register


@notation("jsonl")
def render_jsonl(run: Run) -> list[str]:
    """JSON lines with numbers (json.dumps: NaN, Infinity, -Infinity)."""
    return [json.dumps({"step": r.step, "loss": round(r.loss, 4), "grad_norm": round(r.grad_norm, 4),
                        "loss_scale": r.scale, "lr": r.lr}) for r in run.records]


@notation("fairseq_json")
def render_fairseq_json(run: Run) -> list[str]:
    """fairseq --log-format json: every stat a quoted string ('{:g}'), behind the logging prefix."""
    out = []
    for r in run.records:
        ep, k = _epoch_pos(run, r.step)
        g = lambda v: f"{v:g}"  # noqa: E731
        loss = round(r.loss, 3) if math.isfinite(r.loss) else r.loss
        stats = {"epoch": ep, "update": round(ep - 1 + k / run.epoch_steps, 3), "loss": g(loss),
                 "nll_loss": g(round(loss * 0.9, 3) if math.isfinite(loss) else loss),
                 "ppl": g(round(2 ** (loss * 0.9), 2) if math.isfinite(loss) else abs(loss)),
                 "wps": "30690.8", "ups": "2.66", "wpb": "31075.5", "bsz": "64",
                 "num_updates": str(r.step), "lr": g(r.lr), "gnorm": g(round(r.grad_norm, 3)),
                 "loss_scale": g(r.scale), "train_wall": str(r.step // 3), "wall": str(r.step // 2 + 40)}
        out.append(f"{_clock(r.step):%Y-%m-%d %H:%M:%S} | INFO | train_inner | {json.dumps(stats)}")
    return out


def _hf_record(run: Run, r: Record) -> str:
    rec = {"loss": round(r.loss, 4), "grad_norm": r.grad_norm, "learning_rate": r.lr,
           "epoch": round(r.step / run.epoch_steps, 2)}
    return repr(rec)


def _tqdm_bar(n: int, m: int, width: int = 10, fill: str = "█") -> str:
    frac = n / m
    full = int(frac * width)
    return f"{int(frac * 100):3d}%|{fill * full}{' ' * (width - full)}| {n}/{m}"


@notation("hf_dict", scale=False)
def render_hf_dict(run: Run) -> list[str]:
    """HF Trainer: the tqdm bar line, then the log dict (Python repr: nan, inf)."""
    out = []
    for r in run.records:
        out.append(f"{_tqdm_bar(r.step, run.total_steps)} [{_hms(r.step * 1.3)}<"
                   f"{_hms((run.total_steps - r.step) * 1.3)},  1.30s/it]")
        out.append(_hf_record(run, r))
    return out


@notation("hf_dict_bare", scale=False)
def render_hf_dict_bare(run: Run) -> list[str]:
    """HF Trainer log dicts alone (no step anywhere)."""
    return [_hf_record(run, r) for r in run.records]


@notation("kv_space")
def render_kv_space(run: Run) -> list[str]:
    """A Python logger printing space-separated key=value pairs, train_ prefix."""
    return [f"{_clock(r.step):%Y-%m-%d %H:%M:%S},123 INFO train: global_step={r.step} "
            f"train_loss={_py(r.loss)} total_norm={_py(r.grad_norm)} grad_scale={r.scale!r} "
            f"lr={r.lr:.3e}" for r in run.records]


@notation("caffe_eq")
def render_caffe_eq(run: Run) -> list[str]:
    """glog / C++ ostream (Caffe-like) 'key = value' pairs: a NaN keeps its sign (-nan)."""
    return [f"I{_clock(r.step):%m%d %H:%M:%S}.{r.step * 7919 % 1000000:06d}  4242 solver.cpp:218] "
            f"Iteration {r.step}, loss = {_glibc(r.loss)}, cur_scale = {_glibc(r.scale)}, "
            f"lr = {_glibc(r.lr)}" for r in run.records]


@notation("colon_comma")
def render_colon_comma(run: Run) -> list[str]:
    """'key: value' pairs separated by ', ' (a custom print with multi-word keys)."""
    return [f"[{_clock(r.step):%Y-%m-%d %H:%M:%S}] epoch: {_epoch_pos(run, r.step)[0]}, iter: {r.step}, "
            f"total loss: {_py(r.loss)}, grad norm: {_py(r.grad_norm)}, loss scale: {r.scale}, "
            f"lr: {r.lr:.3e}" for r in run.records]


@notation("zh_print")
def render_zh_print(run: Run) -> list[str]:
    """A Chinese course-style print: Chinese names, full-width colons and commas (as a Chinese input
    method types them), the scale under its English name (``scaler.get_scale()``)."""
    return [f"第 {_epoch_pos(run, r.step)[0]} 轮  训练次数：{r.step}，损失：{_py(r.loss)}，"
            f"学习率：{r.lr:.2e}，scale：{r.scale:g}" for r in run.records]


@notation("dots")
def render_dots(run: Run) -> list[str]:
    """A custom print whose fields end in ``...`` (a HAR trainer's ``Epoch: 349/500... Train Loss:
    0.1328... Val Loss: 0.7956...``), here with the step and the scale too."""
    return [f"Epoch: {_epoch_pos(run, r.step)[0]}/{run.total_steps // run.epoch_steps + 1}... "
            f"Step: {r.step}... Train Loss: {_py(r.loss)}... Loss Scale: {r.scale:g}... "
            f"LR: {r.lr:.2e}..." for r in run.records]


@notation("qualified")
def render_qualified(run: Run) -> list[str]:
    """Keys with a parenthesised qualifier (litgpt's ``Ep 1 | iter 4 | step 1: loss train (curr):
    1.585, val (prev val iter): None | iter time: 181.34 ms``), here with the scale too."""
    return [f"Ep {_epoch_pos(run, r.step)[0]} | iter {r.step} | step {r.step}: loss train (curr): "
            f"{_py(r.loss, '.3f')}, val (prev val iter): None | loss scale (now): {r.scale:g} | "
            f"iter time: 181.34 ms" for r in run.records]


@notation("cntk", scale=False)
def render_cntk(run: Run) -> list[str]:
    """CNTK's minibatch progress on Windows (``Epoch[ 1 of 1]-Minibatch[ 501-1000]: SamplesSeen =
    500; TrainLossPerSample =  1.#QNAN000; ...``): the C runtime's non-finite spellings."""
    n = 500
    return [f" Epoch[ 1 of 1]-Minibatch[{(r.step - 1) * n + 1:4d}-{r.step * n:4d}]: SamplesSeen = {n}; "
            f"TrainLossPerSample = {_msvc(r.loss):>11}; EvalErr[0]PerSample = 0.27600000; "
            f"TotalTime = 2.7641s; SamplesPerSecond = 180.9" for r in run.records]


def _megatron_scale(x: float) -> str:
    """Megatron prints '%.1f'; it clamps at min_scale 1.0, so below 1 this corpus prints '%g' to keep
    each halving visible (0.25 would read 0.2)."""
    return f"{x:.1f}" if x >= 1 else f"{x:g}"


@notation("megatron")
def render_megatron(run: Run) -> list[str]:
    """Megatron-LM's iteration line: ' key: value |' fields, '%.6E' loss (NAN/INF when non-finite)."""
    out = []
    for r in run.records:
        nan_iter = int(not math.isfinite(r.loss))
        out.append(f" iteration {r.step:8d}/{run.total_steps:8d} | consumed samples: {r.step * 64:12d} |"
                   f" elapsed time per iteration (ms): {356.2 + r.step % 7:.1f} |"
                   f" learning rate: {r.lr:.3E} | global batch size: {64:5d} |"
                   f" lm loss: {r.loss:.6E} | loss scale: {_megatron_scale(r.scale)} |"
                   f" grad norm: {r.grad_norm:.3f} |"
                   f" number of skipped iterations: {int(r.skipped):3d} |"
                   f" number of nan iterations: {nan_iter:3d} |")
    return out


def _fairseq_stats(r: Record, speed: tuple[str, str, str, str]) -> list[tuple[str, str]]:
    """The stats of one fairseq update, as its progress bar formats them ({:g}; loss rounded to 3);
    ``speed``: the wps, ups, wpb, bsz values."""
    loss = round(r.loss, 3) if math.isfinite(r.loss) else r.loss
    return [("loss", f"{loss:g}"), *zip(("wps", "ups", "wpb", "bsz"), speed),
            ("num_updates", str(r.step)), ("lr", f"{r.lr:g}"), ("gnorm", f"{round(r.grad_norm, 3):g}"),
            ("loss_scale", f"{r.scale:g}"), ("train_wall", str(r.step // 3)), ("wall", str(r.step // 2 + 40))]


@notation("fairseq_pipe")
def render_fairseq_pipe(run: Run) -> list[str]:
    """fairseq's stats print: '| '-joined 'key value' pairs ({:g} numbers)."""
    speed = ("31194.9", "0.07", "430468", "14485.4")
    return [f"{_clock(r.step):%Y-%m-%d %H:%M:%S} | INFO | train | epoch {_epoch_pos(run, r.step)[0]:03d} | "
            + " | ".join(f"{k} {v}" for k, v in _fairseq_stats(r, speed)) for r in run.records]


@notation("fairseq_inner")
def render_fairseq_inner(run: Run) -> list[str]:
    """fairseq simple format: 'epoch 001:    100 / 356 key=value, key=value, ...'."""
    out, speed = [], ("30690.8", "2.66", "31075.5", "64")
    for r in run.records:
        ep, k = _epoch_pos(run, r.step)
        out.append(f"{_clock(r.step):%Y-%m-%d %H:%M:%S} | INFO | train_inner | epoch {ep:03d}: {k:6d} / "
                   f"{run.epoch_steps} " + ", ".join(f"{key}={v}" for key, v in _fairseq_stats(r, speed)))
    return out


@notation("semicolon")
def render_semicolon(run: Run) -> list[str]:
    """A custom print: capitalised 'Key: value' fields separated by '; '."""
    return [f"Step: {r.step}/{run.total_steps}; Loss: {_py(r.loss)}; Grad norm: {_py(r.grad_norm, '.3f')}; "
            f"Scale: {r.scale:g}; LR: {r.lr:.2e}" for r in run.records]


def _keras_bar(n: int, m: int, width: int = 30) -> str:
    """Keras Progbar: '=' * (w-1) + '>' then dots ('=' all along when done)."""
    w = int(width * n / m)
    bar = ("=" * (w - 1) + (">" if n < m else "=")) if w > 0 else ""
    return bar + "." * (width - w)


@notation("keras", scale=False)
def render_keras(run: Run) -> list[str]:
    """tf.keras verbose=1 progress bar, one update per line (as written to a file)."""
    m = run.total_steps
    digits = len(str(m))
    out = ["Epoch 1/1"]
    for r in run.records:
        loss = f"{r.loss:.4f}" if not math.isfinite(r.loss) or abs(r.loss) > 1e-3 else f"{r.loss:.4e}"
        eta = int((m - r.step) * 0.12)
        eta_s = f"{eta // 60}:{eta % 60:02d}" if eta > 60 else f"{eta}s"
        out.append(f"{r.step:{digits}d}/{m} [{_keras_bar(r.step, m)}] - ETA: {eta_s} - loss: {loss}")
    return out


@notation("keras3", scale=False)
def render_keras3(run: Run) -> list[str]:
    """Keras 3's Progbar written to a file (no dynamic display: one update per line), its colour
    codes kept: bold counter, a bar of '━' in green and grey, bold ETA (keras/src/utils/progbar.py)."""
    m = run.total_steps
    digits = len(str(m))
    out = ["Epoch 1/1"]
    for r in run.records:
        w = int(20 * r.step / m)
        green = f"\x1b[32m{'━' * w}\x1b[0m" if w > 0 else ""
        loss = f"{r.loss:.4f}" if not math.isfinite(r.loss) or abs(r.loss) > 1e-3 else f"{r.loss:.4e}"
        out.append(f"\x1b[1m{r.step:{digits}d}/{m}\x1b[0m {green}\x1b[37m{'━' * (20 - w)}\x1b[0m "
                   f"\x1b[1m{int((m - r.step) * 0.05)}s\x1b[0m 50ms/step - loss: {loss}")
    return out


def _rich_num(text: str) -> str:
    """rich's ReprHighlighter: a number in bold cyan (``nan``/``inf`` are words to it, not numbers)."""
    return text if text.lstrip("-").isalpha() else f"\x1b[1;36m{text}\x1b[0m"


@notation("rich_log")
def render_rich_log(run: Run) -> list[str]:
    """rich's RichHandler on a terminal (a console copied with its codes, or a forced terminal):
    dim time, blue level, the message with every number highlighted, the source in dim grey."""
    return [f"\x1b[2;36m[{_clock(r.step):%m/%d/%y %H:%M:%S}]\x1b[0m\x1b[2;36m \x1b[0m\x1b[34mINFO    \x1b[0m "
            f"step {_rich_num(str(r.step))} | loss {_rich_num(_py(r.loss))} | grad_norm "
            f"{_rich_num(_py(r.grad_norm, '.3f'))} | loss_scale {_rich_num(f'{r.scale:g}')}      "
            f"\x1b[2mtrain.py\x1b[0m\x1b[2m:\x1b[0m\x1b[2m88\x1b[0m" for r in run.records]


@notation("tqdm_postfix")
def render_tqdm_postfix(run: Run) -> list[str]:
    """tqdm (ascii=True, to a file) with set_postfix(loss=..., scale=...) (tqdm.format_num)."""
    out = []
    for r in run.records:
        m = run.total_steps
        out.append(f"{_tqdm_bar(r.step, m, fill='#')} [{_hms(r.step / 12)}<{_hms((m - r.step) / 12)}, "
                   f"12.00it/s, loss={_tqdm_num(round(r.loss, 4))}, scale={_tqdm_num(r.scale)}]")
    return out


def _lightning_num(x: float) -> str:
    s = _tqdm_num(x)
    if math.isfinite(x) and "e" not in s:
        if "." not in s and len(s) < 5:
            s += "."
        s += "0" * (5 - len(s))
    return s


@notation("lightning_bar")
def render_lightning_bar(run: Run) -> list[str]:
    """Lightning's progress bar: 'Epoch 0: ... [..., v_num=0, train/loss=2.310, train/loss_scale=...]'."""
    out = []
    for r in run.records:
        ep, k = _epoch_pos(run, r.step)
        out.append(f"Epoch {ep - 1}: {_tqdm_bar(k, run.epoch_steps)} [{_hms(k * 1.3)}<"
                   f"{_hms((run.epoch_steps - k) * 1.3)},  0.77it/s, v_num=0, "
                   f"train/loss={_lightning_num(r.loss)}, train/grad_norm={_lightning_num(r.grad_norm)}, "
                   f"train/loss_scale={_lightning_num(r.scale)}]")
    return out


@notation("tsv")
def render_tsv(run: Run) -> list[str]:
    """Tab-separated with a header row (numpy.savetxt-like numbers)."""
    return ["step\tloss\tgrad_norm\tloss_scale\tlr"] + [
        f"{r.step}\t{_py(r.loss, '.6f')}\t{_py(r.grad_norm, '.6f')}\t{r.scale:g}\t{r.lr:.6e}"
        for r in run.records]


@notation("csv")
def render_csv(run: Run) -> list[str]:
    """CSV with a header row (Lightning CSVLogger-like: repr floats, train_ prefix)."""
    return ["epoch,step,train_loss,grad_norm,loss_scale,lr"] + [
        f"{_epoch_pos(run, r.step)[0] - 1},{r.step},{r.loss!r},{r.grad_norm!r},{r.scale!r},{r.lr!r}"
        for r in run.records]


def _pandas_float(x: float, digits: int) -> str:
    if math.isnan(x):
        return "NaN"
    return format(x, f".{digits}f") if math.isfinite(x) else ("inf" if x > 0 else "-inf")


@notation("table")
def render_table(run: Run) -> list[str]:
    """An aligned whitespace table with a header row (pandas DataFrame.to_string(index=False))."""
    cols = {"iter": [str(r.step) for r in run.records],
            "loss": [_pandas_float(r.loss, 6) for r in run.records],
            "gnorm": [_pandas_float(r.grad_norm, 6) for r in run.records],
            "scale": [_pandas_float(r.scale, 6) for r in run.records],
            "lr": [f"{r.lr:.6f}" for r in run.records]}
    widths = {k: max(len(k), *(len(v) for v in vs)) for k, vs in cols.items()}
    lines = [" ".join(k.rjust(widths[k]) for k in cols)]
    for i in range(len(run.records)):
        lines.append(" ".join(cols[k][i].rjust(widths[k]) for k in cols))
    return lines


@notation("mmengine_prefixed")
def render_mmengine_prefixed(run: Run) -> list[str]:
    """mmengine's logger line ('key: value' fields, two spaces apart) with train/ metric names."""
    m = run.total_steps
    w = len(str(m))
    return [f"{_clock(r.step):%Y/%m/%d %H:%M:%S} - mmengine - INFO - Iter(train) [{r.step:>{w}}/{m}]  "
            f"lr: {r.lr:.4e}  eta: {_hms((m - r.step) * 2.89)}  time: 2.8906  data_time: 0.0042  "
            f"memory: 10762  train/loss: {_py(r.loss)}  train/grad_norm: {_py(r.grad_norm)}  "
            f"train/loss_scale: {r.scale:.4f}" for r in run.records]


@notation("field_block")
def render_field_block(run: Run) -> list[str]:
    """One field per indented, right-aligned line, a block per iteration under a centred header
    (RSL-RL's console print)."""
    out = []
    for r in run.records:
        out += [f"{'Learning iteration ' + str(r.step) + '/' + str(run.total_steps):^70}", "",
                f"{'Loss:':>30} {_py(r.loss)}", f"{'Grad norm:':>30} {_py(r.grad_norm)}",
                f"{'Loss scale:':>30} {r.scale:g}", f"{'Mean total reward:':>30} 25.66",
                f"{'Learning rate:':>30} {r.lr:.6f}", ""]
    return out


@notation("trainer_state", scale=False)
def render_trainer_state(run: Run) -> list[str]:
    """An HF trainer_state.json document (json.dumps(indent=2, sort_keys=True): NaN, Infinity)."""
    hist = [{"epoch": round(r.step / run.epoch_steps, 4), "grad_norm": r.grad_norm,
             "learning_rate": r.lr, "loss": round(r.loss, 4), "step": r.step} for r in run.records]
    last = run.records[-1].step
    state = {"best_metric": None, "best_model_checkpoint": None, "epoch": round(last / run.epoch_steps, 4),
             "eval_steps": 500, "global_step": last, "is_hyper_param_search": False,
             "is_local_process_zero": True, "is_world_process_zero": True, "log_history": hist,
             "logging_steps": run.records[1].step - run.records[0].step if len(run.records) > 1 else 1,
             "max_steps": run.total_steps, "num_input_tokens_seen": 0, "num_train_epochs": 4,
             "save_steps": 500, "stateful_callbacks": {}, "total_flos": 1.2e15, "train_batch_size": 8,
             "trial_name": None, "trial_params": None}
    return (json.dumps(state, indent=2, sort_keys=True) + "\n").splitlines()


def pairs() -> list[tuple[str, str]]:
    """Every (run, notation) pair the matrix covers: notations without a scale only render ``data``."""
    return [(run, nt) for run in RUNS for nt in NOTATIONS if CARRIES_SCALE[nt] or run == "data"]


def render(run: Run, name: str) -> list[str]:
    return NOTATIONS[name](run)


def text(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"
