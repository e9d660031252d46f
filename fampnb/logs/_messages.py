"""The framework message table: one regular expression per wording of each framework's scaler
and error messages (``reference/loss-scalers.md`` §3, derived from the frameworks' sources), the
verdict-carrying messages of any framework (the loss became NaN/diverged, grad scale too small,
minimum loss scale) and the precision a line states.  Patterns are lower case, searched in the
lower-cased line; the words they need are ``fampnb.logs._triggers``."""

from __future__ import annotations

from fampnb.logs._event import _c
from fampnb.logs._num import NUM as _NUM

__all__ = ["START", "ARTICLE", "DS_REDUCE", "DS_HYST", "DS_MIN", "DYN_DOWN", "DYN_UP", "DS_GRAD_OVF", "LEGACY_SCALE", "LG_CHANGE", "TF_NAN", "PYRO_NAN", "FASTTEXT_NAN", "NAN_FIRST", "NAN_DETECTED", "TF_CHECK", "DIST_INVALID", "NAN_ASSERT", "OVF_EXIT", "APEX", "APEX_SKIP", "FAIRSEQ", "FS_OVF_ERR", "FS_AMP_SKIP", "MIN_REACHED", "REACHED", "GRADS_NONFINITE", "GRAD_ERR", "DS_PROGRESS", "CAI_SKIP", "CAI_SCALE", "MARIAN", "MARIAN_MIN", "MS_OVF", "PADDLE_DECR", "NAN_CHECK", "ASSERT_ERR", "LR0", "SCHED_WARN", "MISUSE", "ANOMALY", "EVAL_BEFORE", "MISUSE_WORDS", "ANOMALY_WORDS", "PREC_WORDS", "TRACE_ERR", "IPY_TRACEBACK", "CUDA_ASSERT", "NAN_INPUT", "OOM", "SCALE_SMALL", "LOSS_ERR", "PREC"]

# ---- scaler records (can occur several times per segment) ---------------------------------
ARTICLE = _c(r"loss scaling:\s*(" + _NUM + r")\s*->\s*(" + _NUM + r")(?:\s*\((\w+)\))?")
DS_REDUCE = _c(r"attempted loss scale:\s*(" + _NUM + r"),\s*reducing to\s*(" + _NUM + ")")
DS_HYST = _c(r"attempted loss scale:\s*(" + _NUM + r"),\s*but hysteresis is\s*(\d+)")
DS_MIN = _c(r"current loss scale already at minimum")
DYN_DOWN = _c(r"reducing dynamic loss scale from\s*(" + _NUM + r")\s*to\s*(" + _NUM + ")")
DYN_UP = _c(r"increasing dynamic loss scale from\s*(" + _NUM + r")\s*to\s*(" + _NUM + ")")
DS_GRAD_OVF = _c(r"grad overflow on iteration\s*(\d+)")
# legacy apex ``DynamicLossScaler`` (and DeepSpeed's copy): ``Grad overflow on iteration N`` then,
# on the next line, the scale now in force
LEGACY_SCALE = _c(r"using dynamic loss scale of\s*(" + _NUM + ")")
# loss scales kept as a base-2 logarithm: ``Found NaN, decreased lg_loss_scale to -3.354``
LG_CHANGE = _c(r"\b(decreas|reduc|lower|increas|rais|grow|grew)\w*\s+(?:the\s+)?(?:lg|log2?)_loss_scale"
                r"\s*(?:to|=|:)\s*(" + _NUM + ")")
# TF Estimator / Keras: NaN losses reported in words
TF_NAN = _c(r"model diverged with loss\s*=\s*(?:nan|[-+]?inf)|nan loss during training|"
             r"invalid loss,\s*terminating training|"
             # a trainer's own guard (SMPLify-X: ``NaN loss value, stopping!``)
             r"\bnan loss (?:value|encountered|detected)\b|\bencountered (?:an? )?nan loss\b")
#: Pyro's check of the ELBO (``warn_if_nan(loss, "loss")``: ``UserWarning: Encountered NaN: loss``):
#: the loss of the step in progress is NaN
PYRO_NAN = _c(r"\bencountered nan: loss\b")
#: fastText's trainer stopping on a non-finite loss (``std::runtime_error``, ``what():  Encountered
#: NaN.``): the loss of the step in progress is NaN
FASTTEXT_NAN = _c(r"\bencountered nan\.(?!\d)")
#: a trainer's check that the first epoch (step, iteration) gave NaN: GluonTS's ``GluonTSUserError:
#: Got NaN in first epoch. Try reducing initial learning rate.``: a NaN at the start of training
#: (not ``no NaN in the first epoch``)
NAN_FIRST = _c(r"(?<!no )\bnans? (?:losse?s? )?(?:in|at|during) (?:the )?(?:very )?first "
               r"(?:epoch|step|iteration|iter|batch|update)s?\b")
#: a trainer's NaN guard noticing the loss (Ultralytics 8.4: ``WARNING ⚠️ Loss NaN/Inf detected (attempt
#: 1/3), recovering from last.pt...``), or a user's check noticing a tensor (``NaN detected in
#: gradient of embedding.weight``, ``NaN detected in model output``; not ``No NaN detected in ...``):
#: when it was noticed, not when the NaN began
NAN_DETECTED = _c(r"\bloss (?:nan/inf|inf/nan|nan or inf|nan|inf) detected\b|"
                  r"(?<!no )\bnan (?:values? )?detected in\b|"
                  # (PyTorch Ignite's ``TerminateOnNan``: ``Output '{...}' contains NaN or Inf.
                  # Stop training``)
                  r"\bcontains nan or inf\.\s*stop training\b")
#: TensorFlow's numeric checks failing: ``tf.debugging.check_numerics`` (``<message> : Tensor had
#: NaN values``), ``clip_by_global_norm``'s (``Found Inf or NaN global norm.``) and a histogram
#: summary's (``Nan in summary histogram for: <tensor>``): a tensor of the run went non-finite
TF_CHECK = _c(r"tensor had (?:nan|inf)(?: and (?:nan|inf))? values|\bnan in summary histogram\b|"
              r"found inf or nan global norm")
#: ``torch.distributions`` checking a distribution's parameters (``ValueError: Expected parameter
#: loc (Tensor of shape (24, 16)) of distribution Normal(...) to satisfy the constraint Real(), but
#: found invalid values:``): a network output the distribution is built from went NaN
DIST_INVALID = _c(r"\bto satisfy the constraint\b.{0,200}?\bbut found invalid values\b")
#: GPT-NeoX's overflow monitor ending the run (``Exception: Skipped 50 iterations in a row due to
#: Overflow - Exiting training.``)
OVF_EXIT = _c(r"skipped \d+ iterations in a row due to overflow")
#: a kernel's or a check's failed assertion that says it was given a NaN (Paddle's
#: ``bce_loss_kernel.cu:42 Assertion `(x >= ...)` failed. ... but recieved nan.``, sic)
NAN_ASSERT = _c(r"assert\w*\b.{0,200}?\bfailed\b.{0,200}?\b(?:received|recieved|got) (?:nan|inf)\b")
APEX = _c(r"(?:gradient overflow[.,]\s*skipping step|overflow within closure!\s*skipping step),?"
           r"\s*(?:loss scaler\s*\d+\s*)?reducing loss scale to\s*(" + _NUM + ")")
APEX_SKIP = _c(r"gradient overflow,\s*skipping update")
FAIRSEQ = _c(r"overflow detected,\s*(?:ignoring gradient,\s*)?setting (?:loss )?scale to(?: to)?"
              r":?\s*(" + _NUM + ")")
FS_OVF_ERR = _c(r"overflowerror:\s*setting loss scale to:?\s*(" + _NUM + ")")
FS_AMP_SKIP = _c(r"amp: skipping this batch")
MIN_REACHED = _c(r"minimum loss scale reached\s*\(\s*(" + _NUM + r")\s*\)")
#: the same fairseq message by its second sentence (``... reached (0.0001). Your loss is probably
#: exploding. Try lowering ...``, both the fp16 and the AMP wordings)
REACHED = _c(r"reached\s*\(\s*(" + _NUM + r")\s*\)[.\s]*your loss is probably exploding")
GRADS_NONFINITE = _c(r"gradients are nan/inf")
#: an error saying a gradient is not finite, whatever the framework (DyNet's ``RuntimeError:
#: Magnitude of gradient is bad: -nan``): as fairseq's ``gradients are Nan/Inf``
GRAD_ERR = _c(r"\b\w*error\b:\s+(?=.{0,200}?\bgrad(?:ient)?s?\b)(?=.{0,200}?(?:\bnan\b|\binf\b|"
              r"not finite|non-finite))")
DS_PROGRESS = _c(r"\bstep=(\d+),\s*skipped=(\d+)")
#: ColossalAI's skipped fp16 steps (both only where the fp16 scaler is at work, never in bf16):
#: (any run of whitespace between the words: a console's wrap, joined, keeps its padding)
#: ``found inf during ShardedOptimV2 step`` (legacy ``ShardedOptimizerV2.step``, a warning) and
#: ``Found overflow. Skip step`` (low-level ZeRO, Gemini and offload optimizers, verbose mode)
CAI_SKIP = _c(r"found\s+inf\s+during\s+shardedoptimv2\s+step|found\s+overflow\.\s*skip\s+step")
#: ColossalAI's ``DynamicGradScaler`` (verbose): ``Overflow occurs, the loss scale is adjusted to
#: X`` (a backoff, after the hysteresis) and ``No overflow for consecutive N steps, the loss scale
#: is adjusted to X`` (a growth); only the new scale is printed
CAI_SCALE = _c(r"(no\s+overflow\s+for\s+consecutive\s*\d+\s*steps|overflow\s+occurs),\s*the\s+loss\s+"
               r"scale\s+is\s+adjusted\s+to\s*(" + _NUM + ")")
#: Marian's cost scaling (``src/training/graph_group.cpp``; only the new factor is printed):
#: ``NaN/Inf percentage 0.70 in 10 gradient updates, reducing cost-scaling factor to 16384``,
#: ``Seen NaN/Inf after 3 gradient updates. Reduced cost-scaling factor to 8192`` (``... to minimum
#: 1. Pruning NaNs now.``), ``No NaN/Inf after 2000 gradient updates. Increasing cost-scaling
#: factor to 32768``
MARIAN = _c(r"(reduc|increas)\w*\s+cost-scaling\s+factor\s+to\s+(?:minimum\s+)?(" + _NUM + ")")
#: ``NaN/Inf percentage 0.70 in 10 gradient updates, but cost-scaling factor 7.62939e-06 is already
#: at minimum``: an overflow with the factor at its floor (Marian goes on)
MARIAN_MIN = _c(r"cost-scaling\s+factor\s+(" + _NUM + r")\s+is\s+already\s+at\s+minimum")
#: MindSpore trainers (MindYOLO ``overflow, still update, loss scale adjust to 1024.0`` / ``overflow,
#: drop step, loss scale adjust to 512.0``; ``overflow, still update.``, ``Step 3/10, overflow,
#: skip.``): ``still update`` applies the overflowed step (``overflow_still_update``), the others
#: drop it; the scale printed is the one now in force
MS_OVF = _c(r"\boverflow,\s*(still update|drop (?:the )?step|skip)\b"
            r"(?:,\s*loss scale adjust(?:ed)? to\s*(" + _NUM + "))?")
#: PaddlePaddle's ``paddle.amp.GradScaler`` (``AmpScaler._update``): ``Found inf or nan, current
#: scale is: 32768.0, decrease to: 32768.0*0.5`` (every ``decr_every_n_nan_or_inf`` skipped steps)
PADDLE_DECR = _c(r"found inf or nan, current scale is:\s*(" + _NUM + r"),\s*decrease to:\s*(" + _NUM
                 + r")\s*\*\s*(" + _NUM + ")")
#: a traceback's source line that checks for NaN (``assert (x==x).all()``, ``assert not
#: torch.isnan(loss)``, ``assert torch.isfinite(grad).all()``): followed by ``AssertionError`` it
#: says the run stopped on a NaN
NAN_CHECK = _c(r"^\s*assert\b.*?(?:isnan|isfinite|isinf|\bnan\b|\b([a-z_][\w.]*)\s*==\s*\1\b)")
ASSERT_ERR = _c(r"^\s*assertionerror\b")
LR0 = _c(r"tried to get lr value before scheduler/optimizer started stepping")
SCHED_WARN = _c(r"lr_scheduler\.step\(\)`?\s*before\s*`?optimizer\.step\(\)")
MISUSE = _c(r"attempting to unscale fp16 gradients|unscale_\(\) has already been called|"
             r"step\(\) has already been called since the last update|"
             r"does not allow for gradient clipping")
ANOMALY = _c(r"returned nan values|found nan in local grad norm|"
              r"loss\b[^|\n]{0,60}?\bis\s+(?:nan|inf|not finite)|non-finite loss|loss is nan")
#: an evaluation's split named right before the loss an ``ANOMALY`` message reads
#: (``Current val loss is nan``): the evaluation's NaN, not training's
EVAL_BEFORE = _c(r"(?:^|[^a-z])(?:val|valid|validation|eval|evaluation|test|dev)[ _]?\Z")
MISUSE_WORDS = ("unscale", "already been called", "gradient clipping")
ANOMALY_WORDS = ("returned nan", "found nan", " is nan", " is inf", "not finite",
                  "non-finite loss", "loss is")
PREC_WORDS = ("bf16", "fp16", "bfloat", "float16", "16-mixed", "16bit", "precision", "fp32",
               "32-true")
TRACE_ERR = _c(r"\b(floatingpointerror|overflowerror)\b:?\s*(.{0,200})|"
                r"\(34, 'numerical result out of range'\)")
#: IPython's (a notebook's) traceback header: the exception's name, padding, then the header
#: (``RuntimeError                              Traceback (most recent call last)``)
IPY_TRACEBACK = _c(r"([a-z_][\w.]*)\s{2,}traceback \(most recent call last\)")
#: a CUDA kernel's device-side assertion (``Distributions.cu:290: ... Assertion `0 <= p4 && p4 <= 1`
#: failed.``): the process stops there, as after a traceback
CUDA_ASSERT = _c(r"\.cu:\d+: .{0,600}?assertion `[^`]{1,200}` failed")
#: the log says the input holds NaN (WeatherGenerator's ``Skipping prediction for ERA5 because of
#: 40320 NaN in tc_tokens.``, scikit-learn's ``Input X contains NaN.`` / ``Input contains NaN,
#: infinity or a value too large``; not ``No NaN in input``): the data is at fault
NAN_INPUT = _c(r"(?<!no )\b(?:\d+ )?nans? (?:values? )?in (?:the )?(?:input|inputs|data|dataset|batch|"
               r"features?|labels?|targets?|[a-z_]*tokens)\b|\binput(?: [xy])? contains nan\b")
#: the process ran out of memory (PyTorch's ``CUDA out of memory``, ``OutOfMemoryError``, TF's
#: ``ResourceExhaustedError``, a trainer's own ``OOM Detected, reducing batch/grad size``): a run that
#: stops there stopped for memory, not for a NaN
OOM = _c(r"\bout of memory\b|outofmemoryerror|resourceexhaustederror|\boom detected\b|"
         r"\boom when allocating\b")
#: a scale too small to go on, in words (icefall/k2 trainers: ``Grad scale is small: 0.0``,
#: ``grad_scale is too small, exiting: 2.3e-10``): an observation, or the run's end
SCALE_SMALL = _c(r"\bgrad[_ ]scale is (?:too )?small(,? exiting)?\s*:?\s*(" + _NUM + ")")
#: an error saying the loss became NaN or infinite, at the step it names after it (detectron2's
#: ``FloatingPointError: Loss became infinite or NaN at iteration=0!``): a NaN record at that step
LOSS_BECAME = _c(r"\bloss (?:became|becomes|has become|turned|went) (?:infinite or nan|nan or inf"
                 r"(?:inite)?|nan|inf(?:inite)?|non-finite)\b")
#: any other exception whose message says the loss diverged or is not finite (a training script's
#: own check: ``RuntimeError: Loss is diverging!``, ``ValueError: loss is nan``, SlowFast's
#: ``RuntimeError: ERROR: Got NaN losses <time>``)
LOSS_ERR = _c(r"\b(\w*error)\b:\s+(?=.{0,200}?\bloss(?:es)?\b)(?=.{0,200}?(?:diverg|explod|\bnan\b|"
               r"\binf(?:inity)?\b|not finite|non-finite))")

# ---- precision hints -------------------------------------------------------------------------
PREC = (
    (_c(r"--bf16\b|['\"]?\bbf16['\"]?\s*[:=]\s*(?:true|1\b)|bf16-mixed|bf16_enabled\s*[:=]\s*true|"
        r"mixed_precision\s*[:=]\s*['\"]?bf16|['\"]bf16['\"]\s*:\s*\{\s*['\"]enabled['\"]\s*:\s*true|"
        r"using bfloat16|params_dtype\s*[:=]\s*torch\.bfloat16|torch_dtype\s*[:=]\s*torch\.bfloat16|"
        r"mixed_bfloat16|(?:amp_)?dtype\s*[:=]\s*(?:torch\.)?bfloat16|"
        r"precision\s*[:=]\s*['\"]?(?:bf16|bfloat16)\b|"
        r"\b(?:bfloat16_enabled|bf16_enabled|bf16)\s*\.{3,}\s*true\b"),
     "bf16"),
    (_c(r"--fp16\b|['\"]?\bfp16['\"]?\s*[:=]\s*(?:true|1\b)|(?<!bf)16-mixed|"
        r"mixed_precision\s*[:=]\s*['\"]?fp16|['\"]fp16['\"]\s*:\s*\{\s*['\"]enabled['\"]\s*:\s*true|"
        r"using 16bit (?:native )?automatic mixed precision|fp16_enabled\s*[:=]\s*true|"
        r"params_dtype\s*[:=]\s*torch\.float16|mixed_float16|(?:amp_)?dtype\s*[:=]\s*(?:torch\.)?float16|"
        r"using (?:16bit|float16|fp16) (?:native )?(?:automatic )?mixed precision|"
        r"precision\s*[:=]\s*['\"]?(?:fp16|float16|16)\b(?!-true|\.\d)|"
        r"\b(?:fp16_enabled|fp16)\s*\.{3,}\s*true\b"), "fp16"),
    (_c(r"precision\s*[:=]\s*['\"]?(?:32|32-true|fp32)\b|--fp32\b|"
        r"may support faster training with --fp16"), "fp32"),
)


#: a start-up line: the log shows the start of training (``Start training``)
START = _c(r"(?:^|[^a-z])(?:start(?:ing)?\s+training|training\s+started)\b")
#: the run saying it finished (muse-maskgit's ``training complete``): what comes after it, a
#: traceback included, is no longer the training's
FINISHED = _c(r"(?:^|[^a-z])(?:training\s+(?:complete|completed|finished|done)|"
              r"finished\s+training)\b")
