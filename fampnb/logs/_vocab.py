"""The key vocabulary: which metric names play which role in a record, whatever wrote the line.

``role(key)`` maps a (lower-cased) metric name to one of ``ROLES`` or ``None``: ``loss`` (loss,
``*_loss``, ``loss_*``, lm loss, total loss, xent, nll and the negative log-likelihood spelled out,
cost, ``*crossentropy``, ``*smoothl1``, a separation objective ``*si-snr``/``*si-sdr``, BasicSR's
``l_*``),
``ppl`` (perplexity: a loss stand-in when no loss is printed), ``error`` (a regression error,
``rmse``, ``mse``, ``mae`` and their spelled-out names, alone or with a split or a quantity around
them: ``RMSE_train``, ``rmse_e_trn``, ``Validation RMSE``: what a regression trainer prints in place
of a loss, and a stand-in after a perplexity), ``scale`` (loss_scale, loss scale,
grad_scale, scale, cur_scale), ``log2_scale`` (a scale printed as its base-2 logarithm,
``lg_loss_scale``), ``grad_norm`` (grad_norm, gnorm, grad norm, gradient norm, total_norm), ``step``
(step, global_step, iter, iteration, batch, num_updates, update, Marian's ``up.``), ``epoch``
(epoch, PaddlePaddle's ``pass``, Marian's ``ep.``) and ``lr``, and their Chinese names
(``ZH_NAMES``). A ``train/``, ``train_`` or
``train `` prefix (and ``trainer/``) is dropped first.  A summary's name (``min_``, ``max_``,
``best_``, ``lowest_``: the best value so far, ``Min_val_loss: 1e10``) has no role.

``WORDS`` are the words some role's names contain: the reader's prefilter and the fast reader's
"record-like line" test are built from them (``fampnb.logs._rules``, ``fampnb.logs._pick``).
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

__all__ = ["ROLES", "VALUE_ROLES", "WORDS", "RECORD_WORDS", "LETTER_KEY", "LETTER_KEYS",
           "NOT_LETTER_LOSS", "role", "summary", "TOTAL_LOSS", "whole_loss",
           "LOG2_SCALE_KEYS", "pick_loss", "loss_key", "record"]

ROLES = ("loss", "ppl", "error", "scale", "log2_scale", "grad_norm", "step", "epoch", "lr")
#: the roles whose value makes a record of a line (a loss or its stand-ins, a loss scale, a grad
#: norm): a table header names one, a key left open at a line's end is one
VALUE_ROLES = ("loss", "ppl", "error", "scale", "log2_scale", "grad_norm")

#: the negative log-likelihood spelled out (a CRF tagger's ``Negative loglikelihood: 9806.49``)
NLL = ("negative loglikelihood", "negative log likelihood", "negative log-likelihood",
       "negative_log_likelihood", "neg_log_likelihood", "neg log likelihood")
#: Chinese names (course code and Chinese-community trainers: ``训练次数：100, Loss：1.98``,
#: ``第 3 轮, 训练损失: nan``); a name that ends in 损失 (loss) is a loss too (``role``)
ZH_NAMES = ((("损失", "训练损失", "总损失", "损失值", "平均损失"), "loss"),
            (("训练次数", "训练步数", "步数", "迭代次数"), "step"),
            (("轮", "轮次", "轮数"), "epoch"),
            (("学习率",), "lr"),
            (("梯度范数",), "grad_norm"))
#: the scale-invariant signal-to-noise (distortion) ratio: what speech and music separation
#: recipes train on (negated) and print as their loss (SpeechBrain's SepFormer ``train si-snr:
#: 1.96 - valid si-snr: 8.69e-02``, asteroid's ``neg_si_sdr``); a name that ends in one is a loss
SEPARATION = ("si-snr", "si_snr", "sisnr", "si-sdr", "si_sdr", "sisdr")
_EXACT: dict[str, str] = {}
for _names, _role in (*ZH_NAMES,
    (("loss", "lm loss", "lm_loss", "total loss", "total_loss", "loss_total", "overall_loss",
      "xent", "nll", "cross_entropy", "cross entropy", "cross-entropy",   # (MXNet's metric)
      "cost", "avg_cost", "avg cost", "avgcost", "currentcost", "current_cost", "mean_cost",
      "l1", "learn", *NLL), "loss"),  # (Marian's ``Cost``, Paddle's ``avg_cost``, Paddle v1's
    # ``AvgCost=``; EDSR and its descendants name the loss by its kind: ``[L1: 5.96]``; CatBoost
    # prints the objective on the training data as ``learn``: ``34:	learn: 0.9508429	test: ...``)
    (("ppl", "perplexity"), "ppl"),
    (("loss_scale", "loss scale", "grad_scale", "grad scale", "scale", "cur_scale", "scaler",
      "amp_scale", "amp scale", "loss_scaler", "lossscale", "loss-scale",
      "current loss scale", "amp_scaler"), "scale"),   # (Coqui's ``| > amp_scaler: 0.00000``)
    (("lg_loss_scale", "log2_loss_scale", "log_loss_scale", "lg_scale", "log2_scale"),
     "log2_scale"),
    (("grad_norm", "gnorm", "grad norm", "gradient norm", "gradient_norm", "total_norm",
      "grad-norm", "grad_norm_total", "gradnorm", "g_norm"), "grad_norm"),
    (("step", "steps", "global_step", "global step", "iter", "iters", "iteration", "batch",
      "num_updates", "update", "updates", "_step", "up.", "#", "tick", "round", "server_round"),
     "step"),   # (federated learning counts rounds: ``round, loss, acc ===> 003, 0.82, 0.39``)
    # (Marian: ``Up. 535500``; spaCy v3's table: ``E    #    LOSS NER``; StyleGAN's training loop:
    # ``tick 1401  kimg 5738.6  time 1d 06h 06m ...``)
    (("epoch", "epochs", "pass", "ep.", "ep"), "epoch"),  # (PaddlePaddle: ``Pass 0, batch 100``;
    #                                                         Marian; ``EP 42 ( 75) | loss: nan``)
    (("lr", "learning_rate", "learning rate"), "lr"),
):
    for _n in _names:
        _EXACT[_n] = _role

#: the loss terms GAN trainers print under their own names, no ``loss`` in them (``role``: so is
#: a name that ends in ``_gan``)
GAN_TERMS = ("perceptual", "feature_matching")

#: the words the names of a record's values contain (loss, scale, grad norm, epoch, a regression
#: error, and the measures of quality an evaluation's summary names: ``metrics-unstepped`` in
#: ``fampnb.logs._fields``; lower case): the fast reader's "record-like line" test is built from
#: them (``fampnb.logs._pick.LOSSY``)
RECORD_WORDS = ("loss", "xent", "nll", "ppl", "perplexity", "entropy", "scale", "norm", "epoch",
                "mse", "mae", "mspe", "mape", "squared_error", "absolute_error",  # (``rmse`` too)
                "acc", "f1", "auc", "psnr", "recall", "bleu", "iou", "dice", "ssim", "lpips", "rouge",
                "cost", "smoothl1", "likelihood", "nloglik", "learn", "score at iteration", "损失", "轮",
                " avg, ",   # (darknet names no value: ``N: loss, mean avg, ...``)
                " l_",      # (BasicSR's ``l_pix: 1.2e-02``: ``role``)
                "l1:", "l1=",   # (EDSR's ``[L1: 5.9633]``: the loss named by its kind)
                "fit progress: (",  # (Flower's server: ``fit progress: (3, 11.009, {...}, 307.7)``)
                "_gan", *GAN_TERMS)
#: losses named by one or two capital letters, before ``:`` and a number (lucidrains' GAN trainers
#: ``G: 1.51 | D: 0.21 | GP: 0.00 | PL: 0.00``, yolact's ``B: 4.292 | C: 2.520 | ... | T: 12.029``,
#: PytorchSSD's ``L: nan C: nan``): a pattern on the line as written (case decides), for the
#: record reader (``fampnb.logs._fields.letter_losses``) and the fast reader's record-like test
LETTER_KEY = r"(?<![\w.])([A-Z]{1,2}):\s*(?=[-+]?(?:\d|\.\d|(?i:nan|inf)))"
LETTER_KEYS = re.compile(LETTER_KEY)
#: capitals that name other things (coordinates, sizes, counts, precision and recall, units, ids)
NOT_LETTER_LOSS = frozenset({"ap", "ar", "p", "r", "x", "y", "z", "w", "h", "n", "it", "id", "ok",
                             "kb", "mb", "gb", "tb", "ms", "us", "ns"})
#: the words some role's names contain: the reader's prefilter is built from them
WORDS = RECORD_WORDS + ("step", "iter", "batch", "update", "tick", "次数", "步数")
#: keys that name the total loss of a record (every other key with ``loss`` is a component)
TOTAL_LOSS = frozenset({"loss", "total_loss", "train_loss", "loss_total", "lm loss", "lm_loss",
                        "train_loss_step", "overall_loss", "train/loss", "total loss", "xent",
                        "nll", *NLL})
#: the loss averaged over an epoch or a window (mmskeleton's ``mean_loss: nan`` after its last
#: ``Iter 0 Done. | loss: 1.4058`` line): a whole loss, never one component of the record before it
_MEAN_LOSS = re.compile(r"^(?:mean|avg|average|running|epoch)[ _]loss$|"
                        r"^loss[ _](?:mean|avg|average)$")


def whole_loss(key: str) -> bool:
    """Is the (lower-cased) name a total loss or the loss's mean, not one component of it?"""
    return key in TOTAL_LOSS or _MEAN_LOSS.match(_strip(key)) is not None


LOG2_SCALE_KEYS = frozenset(k for k, r in _EXACT.items() if r == "log2_scale")
_PREFIX = re.compile(r"^(?:trainer/|train/|train_|train |train-|training[ _/])")   # (MXNet's
#                                                                           ``Train-Perplexity=``)
#: a summary's prefix: the best (lowest, highest) value so far, not the value of this record
_SUMMARY = re.compile(r"^(?:min|max|best|lowest)[_ ./-]")


def summary(key: str) -> bool:
    """Does the (lower-cased) name hold the best value so far (``min_val_loss``, ``best loss``)?"""
    return key[:3] in ("min", "max", "bes", "low") and _SUMMARY.match(key) is not None


def _strip(key: str) -> str:
    key = key.strip().strip("'\"").rstrip("#").strip()      # (dlib's ``step#: 15853``)
    return _PREFIX.sub("", key, count=1) if key[:5] == "train" else key


@lru_cache(maxsize=4096)
def role(key: str) -> str | None:
    """The role of a lower-cased metric name (see the module docstring), or ``None``."""
    k = _strip(key) or key.strip()      # (``#`` alone: spaCy's step column, not dlib's ``step#``)
    r = _EXACT.get(k)
    if r is not None:
        return r
    if summary(k):
        return None     # the best value so far (``Min_val_loss: 1e10``, ``best_loss``): no record's
    if k.endswith(("crossentropy", "smoothl1")) or "crossentropyloss" in k:
        return "loss"   # (GluonCV's ``CrossEntropy=``/``SmoothL1=``, Trax's ``CrossEntropyLossWith...``)
    if "loss" in k:
        if "scal" in k or "weight" in k or "coef" in k or "fn" in k:
            return None
        # (``_loss_``: a component with a qualifier after it, FastSpeech2's ``mel_loss_before``)
        if k.endswith(("_loss", " loss", "-loss", "/loss", "loss")) or k.startswith("loss") \
                or "_loss_" in k or "lossper" in k or "loss per" in k:
            return "loss"   # (and a loss per item: CNTK's ``TrainLossPerSample``)
        return None
    if k.endswith(("_xent", "/xent", "_nll", "/nll", "nloglik", "损失")):
        return "loss"   # (XGBoost's negative log-likelihoods: ``[0]	train-gamma-nloglik:nan``)
    if k[:2] == "l_" and k[2:3].isalpha():
        return "loss"   # (BasicSR, mmsr and their forks name each loss ``l_``: ``l_pix``, ``l_d_real``)
    if k.endswith("_gan") or k in GAN_TERMS:
        return "loss"   # (a GAN trainer's terms: first-order-model's ``gen_gan - 0.438; perceptual - 144.0``)
    if k.endswith(SEPARATION):
        return "loss"   # (a separation recipe's objective: SpeechBrain's ``train si-snr: 1.96``)
    if ("mse" in k or "mae" in k or "_error" in k or "mspe" in k or "mape" in k) and _ERROR.search(k):
        return "error"
    return None


#: a regression error among the words of a name (``_`` `` `` ``-`` ``/`` ``.`` between them):
#: DLKcat's ``RMSE_train``, DeePMD-kit's ``rmse_e_trn``, PES-Learn's ``Validation RMSE``, Keras's
#: ``mean_squared_error``, XGBoost's percentage errors ``train-rmspe``, ``mape``
_ERROR = re.compile(r"(?:^|[_ \-/.])(?:r?mse|mae|rmspe|mape|(?:root_)?mean_(?:squared|absolute)_error)"
                    r"(?:$|[_ \-/.])")
#: an evaluation's split among the words of a name (``rmse_val``, ``Validation RMSE``)
_EVAL_WORD = re.compile(r"(?:^|[_ \-/.])(?:val|valid|validation|eval|test|dev)(?:$|[_ \-/.])")


def loss_key(pairs: dict[str, float]) -> str | None:
    """The key whose value is the loss of a record given as ``{key: value}`` (``pick_loss``)."""
    keys = [k for k in pairs if role(k) == "loss"]
    # (the training split's where a record holds both: Ultralytics' ``train/box_loss`` beside
    # ``val/box_loss``)
    keys = [k for k in keys if not _EVAL_WORD.search(k)] or keys
    for k in keys:
        if _strip(k) in TOTAL_LOSS or k in TOTAL_LOSS:
            return k
    for k in keys:
        if not math.isfinite(pairs[k]):
            return k
    for k in keys:
        if pairs[k] != 0.0:
            return k    # (a component at exactly 0 is a head with nothing to learn: YOLOv6's iou/dfl)
    if keys:
        return keys[0]
    ppl = [k for k in pairs if role(k) == "ppl"]
    if ppl:
        return ppl[0]
    errors = [k for k in pairs if role(k) == "error"]
    trained = [k for k in errors if not _EVAL_WORD.search(k)]
    return (trained or errors or [None])[0]   # (the training split's: ``rmse_trn``, not ``rmse_val``)


def pick_loss(pairs: dict[str, float]) -> float | None:
    """The loss of a record given as ``{key: value}``: the exact total-loss key if there is one,
    else the first non-finite component (mmdet prints ``loss_cls: nan``), else the first nonzero
    one (YOLOv6's ``iou_loss 0  dfl_loss 0  cls_loss 0.5756``: a record is at zero when all its
    components are), else the first loss, else a perplexity, else a regression error (the
    training split's first)."""
    k = loss_key(pairs)
    return None if k is None else pairs[k]


#: step names, most specific first (fairseq's JSON ``update`` is a fractional epoch, its
#: ``num_updates`` the step)
_STEP_ORDER = ("global_step", "global step", "num_updates", "step", "steps", "_step", "iteration",
               "iter", "iters", "updates", "update", "up.", "batch", "#", "tick", "server_round",
               "round", *(n for names, r in ZH_NAMES if r == "step" for n in names))


#: settings of a dynamic loss scaler: a record that names one is the scaler's configuration, whose
#: ``loss_scale`` is a setting, not the scale in force (DeepSpeed's ``"fp16": {"loss_scale": 0,
#: "loss_scale_window": 1000, "initial_scale_power": 9, ...}``: 0 selects dynamic scaling)
SCALER_SETTINGS = frozenset({"loss_scale_window", "initial_scale_power", "scale_window",
                             "min_loss_scale", "growth_interval", "initial_scale",
                             "init_scale", "hysteresis", "dynamic_loss_scale"})


def record(pairs: dict[str, float]) -> dict[str, float]:
    """``{role: value}`` of a record's numeric fields: the loss by ``pick_loss``; the step by
    ``_STEP_ORDER`` among whole numbers (a fraction is no step); the first name of each other
    role."""
    out: dict[str, float] = {}
    loss = pick_loss(pairs)
    if loss is not None:
        out["loss"] = loss
    steps: dict[str, float] = {}
    for k, v in pairs.items():
        r = role(k)
        if r == "step":
            if math.isfinite(v) and v == int(v) and v >= 0:
                steps[_strip(k) or k] = v      # (``#`` alone: spaCy's step column)
        elif r is not None and r not in ("loss", "ppl", "error") and r not in out:
            if r == "scale" and (math.isnan(v) or not SCALER_SETTINGS.isdisjoint(pairs)):
                continue    # (no loss scaler holds NaN: SMPL-Fitting's body ``scale: [nan]``;
                #             a scaler's configuration: ``SCALER_SETTINGS``)
            out[r] = v
    for k in _STEP_ORDER:
        if k in steps:
            out["step"] = steps[k]
            break
    return out
