"""Record rules of the log reader: Megatron iteration lines (with their skip/NaN counters), HF
Trainer dicts (with the frozen-learning-rate skip), and any other record in any notation
(``fampnb.logs._notation`` + ``fampnb.logs._vocab``); at most one record per segment.

Values are read with ``float()`` on matched digits; nothing is evaluated.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from fampnb.logs._event import NUM as _NUM
from fampnb.logs._event import Event, LineState, _c, _f
from fampnb.logs._notation import exact_zero, number, pairs
from fampnb.logs._num import BARE_ROW, FIELD_KEY
from fampnb.logs._triggers import RECORD_WORDS as _RULE_FIELDS
from fampnb.logs._vocab import (
    LETTER_KEYS,
    LOG2_SCALE_KEYS,
    NOT_LETTER_LOSS,
    TOTAL_LOSS,
    VALUE_ROLES,
    role,
    summary,
    whole_loss,
)
from fampnb.logs._vocab import loss_key as _vocab_loss_key
from fampnb.logs._vocab import pick_loss as _vocab_pick_loss
from fampnb.logs._vocab import record as vocab_record

__all__ = ["records", "bare_row", "hf", "hf_fields", "framework_of", "pick_loss", "table_row", "kv_values",
           "numbers", "metrics",
           "evaluation", "eval_record", "eval_rule", "field_row",
           "log2_scale", "zero_written", "LOG2_SCALE_KEYS"]

# ---- records (at most one of each kind per segment) -----------------------------------------
_MEGATRON = _c(r"\biteration\s+\d+\s*/\s*\d+\s*\|")
#: ``| key: value |`` cells, or ``| key value |`` with a number (Megatron-LM before 2020 and its
#: forks print ``| lm loss 6.758929E+00 | loss scale 64.0 |``)
_MEG_FIELD = re.compile(r"\|\s*([A-Za-z][A-Za-z0-9 _\-()/]*?)\s*(?::\s*([^|]*?)|\s(?i:(" + _NUM
                        + r")))\s*(?=\||$)")
_HF_FIELD = _c(r"'(loss|grad_norm|learning_rate|epoch|train_loss|eval_loss)':\s*(" + _NUM + ")")
_FAIRSEQ_SUMMARY = re.compile(r"\| (?:train|valid|train_inner) \||^\| epoch \d+ \|")
_GLOG = re.compile(r"^[IWEF]\d{4} \d\d:\d\d")

#: Marian's training record: ``Ep. 8 : Up. 535500 : Sen. 94,495,934 : Cost nan : ...``
_MARIAN = re.compile(r"\bep\. \d+ : up\. \d+ :")


#: Keras's progress bar (``  3/226 [====>.....] - ETA: 5s - loss: 0.5``, Keras 3's bar of ``━``)
#: with its time per step: the record is a Keras run's (its loss scaler is silent)
_KERAS_BAR = re.compile(r"\d+/\d+ (?:\[[=>.]{3,}\]|\u2501)")


def framework_of(text: str, default: str) -> str:
    low = text.lower()
    if "mmengine" in low or "mmdet" in low:
        return "mmengine"
    if "v_num" in low or "lightning" in low:
        return "lightning"
    if "fairseq" in low or "train_inner" in low or _FAIRSEQ_SUMMARY.search(text):
        return "fairseq"
    if _GLOG.match(text):
        return "caffe" if ".cpp:" in text else "keras"   # glog: Caffe's C++, else TF/absl
    if "/step" in low and _KERAS_BAR.search(low):
        return "keras"          # (its progress bar: ``1/1 [======] - 0s 4ms/step - loss: 1603.08``)
    if "up. " in low and _MARIAN.search(low):
        return "marian"
    if "tot_loss[" in low and "grad_scale" in low:
        return "icefall"        # (k2/icefall: ``loss[...], tot_loss[...], ..., grad_scale: 0.25``)
    return default


def records(text: str, low: str, st: LineState, ev: object, out: list[Event],
            step: int | None = None) -> None:
    """The record of a line (``step``: the step the line itself names, if any)."""
    if "iteration" in low and _MEGATRON.search(low):
        _megatron(text, st, ev)
    elif low[:7] == "(epoch:" and (m := _CYCLEGAN.match(low)):
        _cyclegan(m, st, ev)
    elif " avg" in low and (m := _DARKNET.search(low)):
        _stepped(st, ev, "darknet", m.group(1), m.group(2))
    elif ("'loss'" in low or "'grad_norm'" in low or "'train_loss'" in low) and hf(low, st, ev):
        pass
    elif "[(" in low and (m := _HISTORY.search(low)) and role(m.group(1)) == "loss":
        _history(low[m.end(1):], st, ev)
    elif "score at iteration" in low and (m := _DL4J.search(low)):
        _stepped(st, ev, "dl4j-score", m.group(1), m.group(2))   # (Deeplearning4j's loss: its score)
    elif "fit progress: (" in low and (m := _FLOWER.search(low)):
        _stepped(st, ev, "flower-fit-progress", m.group(1), m.group(2))
    elif not out and (m := bare_row(low, st)) is not None:
        _bare(m, st, ev)
    elif not out or out[-1].kind in ("scale", "skip") or out[-1].rule == "out-of-memory":
        # (a line with quoted keys that is no HF dict, ``'loss': '9.35'`` with quoted values
        # among ``iter: 3700, lr: ...`` fields, is read as a record in any notation; so is a bar
        # the trainer's out-of-memory message was glued to, ``...loss=0.0584]OOM Detected``)
        # (a line with a field the message rules read, DeepSpeed's ``skipped=``, is their record)
        _generic(text, low, st, ev, step, not out and not any(w in low for w in _RULE_FIELDS))


#: pytorch-CycleGAN-and-pix2pix's ``print_current_losses``: ``(epoch: 1, iters: 300, time: 0.064,
#: data: 0.001) G_GAN: 10.084 D_real: 0.000 D_fake: 0.000 G_L1: 9.473`` -- every field after the
#: parenthesis is a loss (``model.get_current_losses()``); ``iters`` counts within the epoch
_CYCLEGAN = re.compile(r"\(epoch: (\d+), iters: \d+, time: [^,)]*, data: [^)]*\) (.*)$")


#: darknet's iteration line (``detector.c``): ``897: 0.044502, 0.056504 avg, 0.000647 rate, 1.18
#: seconds, 57408 images`` (AlexeyAB's fork: ``avg loss``): the batch, its loss, the running mean
_DARKNET = re.compile(r"(?:^|\|)\s*(\d{1,12}): (" + _NUM + r"), (" + _NUM + r") avg(?: loss)?, ("
                      + _NUM + r") rate")


#: a loss history printed as a list of ``(step, value)`` pairs (Flower's run summary: ``app_fit:
#: losses_centralized [(0, 722.71), (1, nan), (2, nan)]``): a record per pair, at its step
_HISTORY = re.compile(r"([a-z][\w./-]*)\s*:?\s*\[\(\d+,\s*(?:" + _NUM + r")\)")
_PAIR_ITEM = re.compile(r"\((\d{1,12}),\s*(" + _NUM + r")\)")


#: Flower's server after each round (``flwr.server``: ``log(INFO, "fit progress: (%s, %s, %s, %s)",
#: current_round, loss_cen, metrics_cen, elapsed)``): the round and the loss the strategy's
#: evaluation gave, the run's loss as in its loss history (``_HISTORY``)
_FLOWER = re.compile(r"fit progress: \((\d{1,12}), (" + _NUM + r"),")


#: Deeplearning4j's ``ScoreIterationListener``: ``Score at iteration 60 is NaN`` (the score is the
#: network's loss)
_DL4J = re.compile(r"\bscore at iteration (\d+) is (" + _NUM + ")")


_BARE = _c(BARE_ROW)
_BARE_CELL = re.compile(r"\[[^\]]*\]|tensor\([^)]*\)|[^\s|,]+")


def bare_row(low: str, st: LineState) -> re.Match[str] | None:
    """A row of numbers under no name (``_num.BARE_ROW``), read only where no header is in force
    and no loss under a name was read before it (after one, bare numbers are something else: a
    classification report, a printed array)."""
    if st.header is not None or st.named or not (low[:1].isdigit() or low[:1] in " [|"):
        return None
    return _BARE.match(low)


def _bare(m: re.Match[str], st: LineState, ev: object) -> None:
    """The record of a bare row: the integers that lead it count (the last the step, the first
    the epoch when there are two or more: Chainer's ``epoch iteration main/loss ...``); a column
    without a name may be any value, so the record's loss is the row's first non-finite number
    (WeSpeaker's ``| 3| 300| 0.54052| 0| nan| 17.698|``: the learning rate and the margin come
    first), else the first number after the integers (a bracketed list: its first non-finite
    element, else its sum: DeepXDE's loss terms)."""
    lead = [int(m.group(1)[:12])]
    values: list[float] = []
    for cell in _BARE_CELL.findall(m.group(2)):
        if not values and cell.isdigit():
            lead.append(int(cell[:12]))
            continue
        items = ([_f(x) for x in re.findall(_NUM, cell)] if cell.startswith(("[", "tensor("))
                 else [_f(cell)])
        bad = [x for x in items if not math.isfinite(x)]
        values.append(bad[0] if bad else math.fsum(items))
    if not values:
        return
    bad = [x for x in values if not math.isfinite(x)]
    loss = bad[0] if bad else values[0]
    step = lead[-1]
    epoch = lead[0] if len(lead) > 1 else None
    st.step = step          # (the epoch is the row's own: not the one later lines are in)
    ev("loss" if math.isfinite(loss) else "nan", "generic", "bare-row",  # type: ignore[operator]
       loss=loss, step=step, explicit=True, **({"epoch": epoch} if epoch is not None else {}))


def _stepped(st: LineState, ev: object, rule: str, step_text: str, loss_text: str) -> None:
    """A loss record at the step the line names (darknet, Deeplearning4j, a loss history)."""
    step, loss = int(step_text[:12]), _f(loss_text)
    st.step = step
    ev("loss" if math.isfinite(loss) else "nan", "generic", rule, loss=loss,  # type: ignore[operator]
       step=step, explicit=True)


def _history(rest: str, st: LineState, ev: object) -> None:
    for m in _PAIR_ITEM.finditer(rest[:rest.find("]") + 1 or None]):
        _stepped(st, ev, "loss-history", m.group(1), m.group(2))


def _cyclegan(m: re.Match[str], st: LineState, ev: object) -> None:
    losses = [x for v in pairs(m.group(2)).values() if (x := _num(v)) is not None]
    if not losses:
        return
    epoch = int(m.group(1)[:6])
    st.epoch = epoch
    bad = [x for x in losses if not math.isfinite(x)]
    loss = bad[0] if bad else losses[0]   # (as for other components: the first non-finite one)
    ev("nan" if bad else "loss", "generic", "cyclegan-losses", loss=loss,  # type: ignore[operator]
       epoch=epoch)


def _megatron(text: str, st: LineState, ev: object) -> None:
    fields = {k.strip().lower(): v or n for k, v, n in _MEG_FIELD.findall(text)}
    loss_keys = [k for k in fields if "loss" in k and "scale" not in k]
    loss_key = _best_loss_key(loss_keys, {k: _num(fields[k]) for k in loss_keys})
    scale = _num(fields.get("loss scale"))
    gnorm = _num(fields.get("grad norm"))
    skipped = _int(fields.get("number of skipped iterations"))
    nans = _int(fields.get("number of nan iterations"))
    emit = ev  # type: ignore[assignment]
    if loss_key is not None:
        loss = _num(fields[loss_key])
        kind = "nan" if loss is None or not math.isfinite(loss) or (nans or 0) > 0 else "loss"
        emit(kind, "megatron", "megatron-loss", loss=loss if loss is not None else math.nan,
             grad_norm=gnorm, scale_after=scale, count=skipped,
             exact_zero=loss == 0.0 and zero_written({loss_key: fields[loss_key]}))  # type: ignore[operator]
    elif scale is not None or gnorm is not None or skipped is not None:
        # the loss key is printed before ``loss scale``: absent here means it vanished (NaN),
        # unless every iteration of the interval was skipped (skip counter > 0)
        if skipped:
            emit("skip", "megatron", "megatron-all-skipped", scale_after=scale, grad_norm=gnorm,
                 count=skipped)  # type: ignore[operator]
        else:
            emit("nan", "megatron", "megatron-loss-missing", loss=math.nan, scale_after=scale,
                 grad_norm=gnorm, count=skipped)  # type: ignore[operator]
    if scale is not None:
        st.seen["megatron-scale"] = 1


def hf(text: str, st: LineState, ev: object) -> bool:
    """An HF Trainer dict's record; False when the line has no unquoted HF loss or grad norm."""
    return hf_fields(_HF_FIELD.findall(text), st, ev)   # (text is lower-cased)


def hf_fields(found: list[tuple[str, str]], st: LineState, ev: object) -> bool:
    """``hf`` of the dict's ``(key, value text)`` fields."""
    vals = {k: _f(v) for k, v in found}
    loss = vals.get("loss", vals.get("train_loss"))
    gnorm = vals.get("grad_norm")
    if loss is None and gnorm is None:
        if "eval_loss" not in vals:
            return False
        eval_record(ev, vals["eval_loss"], epoch=vals.get("epoch"))
        return True
    kind = "nan" if loss is not None and not math.isfinite(loss) else "loss"
    ev(kind, "hf", "hf-dict", loss=loss, grad_norm=gnorm, epoch=vals.get("epoch"),
       exact_zero=loss == 0.0 and zero_written(dict(found)))  # type: ignore[operator]
    lr = vals.get("learning_rate")
    if lr is None:
        return True
    if not st.hf_lr_moved:
        # a learning rate still exactly 0 on a later record: the Trainer steps its scheduler
        # only after an optimizer step that ran, so none has run yet (until the rate moves)
        st.hf_lr_moved = lr != 0.0
        st.hf_lr_zero += not st.hf_lr_moved
        if st.hf_lr_zero >= 2:
            ev("note", "hf", "lr-stepped" if st.hf_lr_moved else "lr-never-stepped",
               count=st.hf_lr_zero)  # type: ignore[operator]
    before, last = st.hf_lr
    st.hf_lr = (last, lr)
    if gnorm is not None and not math.isfinite(gnorm) and lr == last and before not in (None, last):
        # a non-finite grad norm and a learning rate that stopped although it was moving: the
        # Trainer (Accelerate) skips the scheduler with the optimizer step, and only an fp16
        # loss scaler skips that (reference: "Skip detection")
        ev("skip", "hf", "lr-frozen", count=1, grad_norm=gnorm)  # type: ignore[operator]
    return True


#: the name of an evaluation's metric (``val_loss``, ``eval/loss``, ``valid loss``, ``test_loss``,
#: Informer's ``Vali Loss``)
_EVAL = re.compile(r"(?:val|vali|valid|validation|eval|evaluation|test|dev)[_/ ]|"
                   r"[\u4e00-\u9fff]*(?:测试|验证)")     # (``整体测试集上的loss``: the test set's)


#: a line tagged as an evaluation's (``Epoch 0 [CV] progress 290/341 loss nan``, WeNet's ``CV Batch
#: 3/100 loss 0.9``, mmengine's ``Epoch(val) [1][100/500]``, a bar's ``Valid Epoch: 16 Loss: nan``,
#: DeepSpeech's ``Validation of Epoch 0 - loss: 95.8``, a line that opens with the word and a colon:
#: TF's translate tutorial ``  eval: bucket 0 perplexity 8992400.69``, a MetricLogger header's
#: ``Test: [1/4]``, torchvision's and Pointcept's): its record is the evaluation's
_EVAL_TAG = re.compile(r"\[(?:cv|val|valid|validation|eval|evaluation|test|dev)\]|"
                       r"\((?:val|valid|validation|eval|test)\)|"
                       r"\b(?:cv|val|valid|eval|test)\s+batch\s+\d|"
                       r"\b(?:val|valid|validation|eval|evaluation|test):\s*\[\s*\d+\s*/\s*\d+\s*\]|"
                       r"^\s*(?:val|valid|validation|eval|evaluation|test)(?:\s+(?:of|for))?"
                       r"(?:[:\s]+(?:epoch|step|iter)|\s*:\s)")


def evaluation(keys: Iterable[str]) -> bool:
    """Are the loss fields of a record (its names ``keys``) all an evaluation's (``eval_loss``,
    ``val_loss``): a record of the evaluation, not of a training step?"""
    losses = ([k for k in keys if role(k) == "loss"]
              or [k for k in keys if role(k) == "error"])   # (a regression error in its place)
    return bool(losses) and all(_EVAL.match(k) for k in losses)


def eval_rule(nums: dict[str, float]) -> str | None:
    """The rule of a training record with an evaluation's loss beside it (``train_loss= 0.0012
    ... val_loss= nan``): ``loss-eval-nan`` when that loss is not finite (the NaN is the
    evaluation's), ``loss-eval`` when it is; None without one."""
    evals = eval_losses(nums)
    if not evals:
        return None
    return "loss-eval" if all(math.isfinite(x) for x in evals) else "loss-eval-nan"


def eval_losses(nums: dict[str, float]) -> tuple[float, ...]:
    """The evaluation losses among a record's numbers (``val_loss``, ``test loss``)."""
    return tuple(x for k, x in nums.items() if _EVAL.match(k) and role(k) == "loss")


def _nan_by_evaluation(nums: dict[str, float], st: LineState) -> str | None:
    """The rule of a NaN training record with a finite evaluation loss beside it:
    ``nan-eval-moved`` when that loss differs from the one beside the NaN record before (a new
    evaluation of finite weights: Keras's ``loss: nan - val_loss: 0.2637``, then ``0.2188``),
    ``nan-eval-finite`` when it does not (yet); None without one, or with a non-finite one."""
    evals = eval_losses(nums)
    if not evals or not all(math.isfinite(x) for x in evals):
        st.nan_eval = None
        return None
    moved = st.nan_eval is not None and st.nan_eval != evals
    st.nan_eval = evals
    return "nan-eval-moved" if moved else "nan-eval-finite"


def eval_record(ev: object, loss: float, **kw: object) -> None:
    """The record of an evaluation: a ``note`` (``rule="eval-loss"``) with its loss, kept out of
    the training records (a NaN there is the evaluation's: ``eval-nan-only``)."""
    ev("note", "generic", "eval-loss", loss=loss, **kw)  # type: ignore[operator]


def _generic(text: str, low: str, st: LineState, ev: object, step: int | None,
             alone: bool = True) -> None:
    """A record in any ``key <sep> value`` notation (``fampnb.logs._notation``), its fields given
    roles by the vocabulary (``fampnb.logs._vocab``); ``alone``: no other event came from the line
    (only such a line can be a record of other values: ``metrics``)."""
    fields = pairs(low)
    if not fields:
        return
    if len(fields) >= 2 and ": " in text:
        fields = letter_losses(fields, text)
    if "train" in fields:
        fields = bare_losses(fields, low)
    if "losses" in low:
        fields = grouped_losses(fields, low)
    nums = {k: x for k, v in fields.items() if role(k) is not None and (x := _num(v)) is not None}
    rec = vocab_record(nums)
    loss = rec.get("loss")
    if loss is not None and (evaluation(nums) or _EVAL_TAG.search(low)):
        eval_record(ev, loss, epoch=rec.get("epoch"))
        return
    if loss is not None:
        total = any(whole_loss(k) and role(k) == "loss" for k in nums)
        if total:
            st.total_step = step
        elif step is None and st.total_step is not None and st.total_step == st.step:
            # a component (``loss_cls: 0.64``) on a line of its own right after the total loss
            # of the same step (Caffe, tf-faster-rcnn print one field a line): part of that
            # record, not a record of its own
            loss = None
    gnorm = rec.get("grad_norm")
    scale = rec.get("scale")
    lg2 = rec.get("log2_scale") if scale is None else None
    if lg2 is not None:
        scale = log2_scale(lg2)
    if loss is None and gnorm is None and scale is None:
        if alone:
            metrics(fields, rec, step, ev)
        return
    named = {}
    # a step the record names by a key (``step=1600``, ``[step] 104``, ``"global_step": 7``) is
    # the run's counter: it wins over an ``iter [14/15]`` counter within an epoch
    if "step" in rec and 0 <= rec["step"] < 1e15:
        named = {"step": int(rec["step"]), "explicit": True}
        st.step = named["step"]
    # (a user's print in a log that TensorFlow's logger writes too is a TF/Keras run's record)
    fw = framework_of(text, "keras" if st.seen.get("tensorflow") else "generic")
    if "grad scale" in fields:
        fw = "insightface"
    if loss is not None:
        kind = "nan" if not math.isfinite(loss) else "loss"
        # a finite training loss beside a validation loss: the record says by its rule whether
        # the evaluation's is finite
        # (``ppl``: a perplexity standing in for a loss the record does not print; ``error``: a
        # regression error, where it prints neither)
        rule = (eval_rule(nums) if kind == "loss" else _nan_by_evaluation(nums, st)) or (
            "loss" if any(role(k) == "loss" for k in nums)
            else "ppl" if any(role(k) == "ppl" for k in nums) else "error")
        ev(kind, fw, rule, loss=loss, grad_norm=gnorm, scale_after=scale,
           scale_log2=lg2, epoch=rec.get("epoch"), exact_zero=loss == 0.0 and zero_written(fields),
           **named)  # type: ignore[operator]
    elif gnorm is not None and not math.isfinite(gnorm):
        ev("skip", fw, "grad-norm-nonfinite", grad_norm=gnorm, scale_after=scale,
           scale_log2=lg2, **named)  # type: ignore[operator]
    elif scale is not None:
        ev("scale", fw, "scale", scale_after=scale, scale_log2=lg2, **named)  # type: ignore[operator]


def letter_losses(fields: dict[str, str], text: str) -> dict[str, str]:
    """The fields of a line that names its losses by one or two capital letters (``LETTER_KEYS``:
    ``G: 1.51 | D: 0.21 | GP: 0.00``): two or more such names, none of them something else
    (``NOT_LETTER_LOSS``: ``X:``, ``P:``), on a line that names no loss, loss scale or grad norm
    otherwise, are its losses (``g_loss``, ``d_loss``, ``gp_loss``: components, none the total)."""
    if any(role(k) in VALUE_ROLES for k in fields):
        return fields
    keys = {k for m in LETTER_KEYS.finditer(text)
            if (k := m.group(1).lower()) in fields and k not in NOT_LETTER_LOSS and role(k) is None}
    if len(keys) < 2:
        return fields
    return {(f"{k}_loss" if k in keys else k): v for k, v in fields.items()}


#: a value no measure of a run that goes well reaches (a count of samples or tokens stays far
#: below it)
ASTRONOMICAL = 1e15


def metrics(fields: dict[str, str], rec: dict[str, float], step: int | None,
            ev: object) -> None:
    """A record with no loss, loss scale or grad norm: a ``metrics`` note where it names a step
    or an epoch and its other values are numbers, every one finite (f2-nerf's ``Iter: 99700
    PSNR: 22.95 ...``, KGAT's ``Epoch 0001 | Precision 0.0138 Recall 0.1298``), a
    ``metrics-unstepped`` note where it names neither but a measure of quality
    (``test_Accuracy = 0.6977``, an evaluation's summary); a ``metrics-nonfinite`` note where one
    of them is not finite or is astronomical (``ASTRONOMICAL``: eesen's objective ``-8.6e+29``
    beside its token accuracy), step or none."""
    others = {k: x for k, v in fields.items() if role(k) is None and (x := _num(v)) is not None}
    if not others:
        return
    # (``count``: the measures of quality among them, PSNR, SSIM and LPIPS of one evaluation)
    measures = sum(1 for k in others if _MEASURE.search(k))
    # (a best value so far at infinity is where its search starts, not a value of the run:
    # LightGBM's ``No further splits with positive gain, best gain: -inf``)
    if not all(math.isfinite(x) and abs(x) < ASTRONOMICAL or math.isinf(x) and summary(k)
               for k, x in others.items()):
        ev("note", "generic", "metrics-nonfinite")  # type: ignore[operator]
    elif "step" in rec and 0 <= rec["step"] < 1e15:
        ev("note", "generic", "metrics", step=int(rec["step"]), explicit=True,  # type: ignore[operator]
           count=measures)
    elif step is not None or "epoch" in rec:
        ev("note", "generic", "metrics", count=measures)  # type: ignore[operator]
    elif measures:
        ev("note", "generic", "metrics-unstepped", count=measures)  # type: ignore[operator]


#: the bare names of an evaluation's value beside a bare ``train`` (``bare_losses``)
_BARE_EVAL = ("valid", "val", "dev", "test", "eval", "validation", "cv")
#: a measure other than the loss, named before the bare values (``Accuracy: train=0.93 val=0.91``)
_MEASURE = re.compile(r"acc|f1|bleu|\bwer\b|\bcer\b|auc|\bmap\b|iou|dice|psnr|ssim|lpips|score|"
                      r"precision|recall|rouge|error|\btop-?\d")
#: the bare ``train`` key itself (not ``trainer.py``, ``train/loss``)
_TRAIN_KEY = re.compile(r"(?<![\w./])train\b(?![\w/])")


def bare_losses(fields: dict[str, str], low: str) -> dict[str, str]:
    """A record that names its training and evaluation values bare (svoice's ``Epoch 0:
    train=4.61770 valid=13.24654``, uPIT's ``Loss(time/mini-batch) - Epoch  1: train = nan(...) |
    dev = nan(...)``; svoice's ``history.json``, a JSON object of them, read as a table): those are its
    losses (``train_loss``, ``<eval>_loss``), when no field is named a loss, no other measure is
    named before them and the training value is no whole number."""
    ev = next((k for k in _BARE_EVAL if k in fields), None)
    if (ev is None or "train" not in fields or any(role(k) == "loss" for k in fields)
            or fields["train"].isdigit()):
        return fields       # (a whole number is a count: Megatron's ``train: 4000000`` samples)
    key = _TRAIN_KEY.search(low)
    if key is None or _MEASURE.search(low, 0, key.start()):
        return fields
    names = {"train": "train_loss", ev: f"{ev}_loss"}
    return {names.get(k, k): v for k, v in fields.items()}


#: a group of values under a name that says they are losses (MotionCLIP's ``Epoch 20, train
#: losses: {'rc': 0.0086, 'vel': 0.0004, ...}``, SMPL-Fitting's ``losses: DATA:nan, PRIOR:nan``)
_LOSSES = re.compile(r"(?<![\w./-])(?:(train|training|val|valid|validation|eval|test|dev)\s+)?"
                     r"losses(?:\s+[a-z]+)?\s*[:=]\s*")


def grouped_losses(fields: dict[str, str], low: str) -> dict[str, str]:
    """The fields of a record whose values after ``losses:`` are each a loss under a name of its
    own (``rc``, ``DATA``), where no field is named a loss: those names made losses (``rc_loss``,
    ``val_rc_loss`` under ``val losses:``)."""
    m = _LOSSES.search(low)
    if m is None or any(role(k) == "loss" for k in fields):
        return fields
    group = pairs(low[m.end():])
    pre = f"{m.group(1)}_" if m.group(1) else ""
    return {(f"{pre}{k}_loss" if k in group and role(k) is None else k): v
            for k, v in fields.items()}


def zero_written(fields: dict[str, str]) -> bool:
    """Is the loss of a record (``{name: value text}``; the field ``pick_loss`` takes) 0 written
    as an exact zero (``fampnb.logs._notation.exact_zero``)?  Not a perplexity standing in for
    the loss: one is at least 1, and a printed 0 is a meter that logged nothing (fairseq's
    ``loss None | ppl 0``), not a loss of 0."""
    nums = {k: x for k, v in fields.items() if role(k) is not None and (x := number(v)) is not None}
    k = _vocab_loss_key(nums)
    return (k is not None and nums[k] == 0.0 and exact_zero(fields[k])
            and role(k) != "ppl")


def _num(text: str | None) -> float | None:
    return None if text is None else number(text)


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    m = re.match(r"\d+", text.strip())
    return int(m.group(0)[:12]) if m else None


# ---- which of several loss fields is the loss (Megatron cells) ---------------------------------
def _best_loss_key(keys: list[str], values: dict[str, float | None]) -> str | None:
    """The exact total-loss key if there is one, else the first non-finite component (mmdet
    prints ``loss_cls: nan``), else the first nonzero one, else the first key (as
    ``fampnb.logs._vocab.pick_loss``)."""
    for k in keys:
        if k in TOTAL_LOSS:
            return k
    for k in keys:
        v = values.get(k)
        if v is not None and not math.isfinite(v):
            return k
    for k in keys:
        if values.get(k):
            return k
    return keys[0] if keys else None


def pick_loss(pairs: dict[str, float]) -> float | None:
    """The loss of a record given as ``{key: value}`` (``fampnb.logs._vocab.pick_loss``)."""
    return _vocab_pick_loss(pairs)


# ---- ``| key | value |`` tables (one field per line, e.g. guided-diffusion's logger) -----------
_TABLE_ROW = re.compile(r"^\|\s*([A-Za-z_][\w./\- ]*?)\s*\|\s*(\S[^|]*?)\s*\|$")


#: one field on an indented line of its own, a block of which is one record (RSL-RL's right-aligned
#: ``               Value function loss: inf``, Coqui's `` | > loss_disc: nan  (nan)`` with its
#: running mean, Composer's ``\t Train loss/train/total: 2.3``)
_FIELD_ROW = re.compile(r"^[ \t]+(?:\|\s*>\s*)?(" + FIELD_KEY + r")\s*:\s+(" + _NUM
                        + r")(?:\s+\([^()]*\))?\s*$")


def field_row(text: str) -> tuple[str, str] | None:
    """``(key, value)`` of an indented line that holds one ``key: number`` field and nothing
    else, lower-cased (``_FIELD_ROW``); else None."""
    m = _FIELD_ROW.match(text.lower())
    return (m.group(1), m.group(2)) if m else None


def table_row(text: str) -> tuple[str, str] | None:
    """``(key, value)`` of a two-cell table row ``| loss | nan |``, lower-cased; else None."""
    s = text.strip()
    if len(s) < 5 or s[0] != "|" or s[-1] != "|" or s.count("|") != 3:
        return None
    m = _TABLE_ROW.match(s)
    return (m.group(1).lower(), m.group(2).lower()) if m else None


def log2_scale(x: float) -> float:
    """The scale whose base-2 logarithm is ``x`` (0.0 below the float range, inf above it)."""
    if not math.isfinite(x):
        return x if x > 0 else 0.0
    return 2.0 ** x if x < 1024 else math.inf


def numbers(fields: dict[str, str]) -> dict[str, float]:
    """The fields of a record given as ``{key: value text}`` whose value is a number."""
    return {k: x for k, v in fields.items() if (x := _num(v)) is not None}


def kv_values(nums: dict[str, float]) -> tuple[float | None, float | None, float | None,
                                               int | None, float | None, float | None]:
    """``(loss, grad_norm, scale, step, scale_log2, epoch)`` of a record's numbers (``numbers``;
    ``scale_log2``: the printed base-2 logarithm, where the scale is printed as one)."""
    rec = vocab_record(nums)
    lg2 = rec.get("log2_scale") if "scale" not in rec else None
    scale = log2_scale(lg2) if lg2 is not None else rec.get("scale")
    step_v = rec.get("step")
    step = int(step_v) if step_v is not None and math.isfinite(step_v) and 0 <= step_v < 1e15 \
        else None
    epoch = rec.get("epoch")
    if epoch is not None and not (math.isfinite(epoch) and 0 <= epoch < 1e9):
        epoch = None
    return rec.get("loss"), rec.get("grad_norm"), scale, step, lg2, epoch
