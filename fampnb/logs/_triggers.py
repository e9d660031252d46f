"""The words the message rules of ``fampnb.logs._rules`` need: one list, from which both the
reader's gate (a line without any of them needs only the record rules) and the fast reader's
"rare line" test (``fampnb.logs._pick.RARE``) are built, so that ``scan`` picks every line a
message rule can read.  A rule added to ``_rules`` adds its word here."""

from __future__ import annotations

__all__ = ["MESSAGE_WORDS", "RECORD_WORDS", "GATE"]

#: words of the framework messages and verdict-carrying messages (lower case)
MESSAGE_WORDS = (
    "overflow", "hysteresis", "minimum", "small", "out of range", "dynamic loss scale",
    "loss scaling", "skipping", "lr value before", "lr_scheduler", "unscale",
    "already been called", "gradient clipping", "error", "exception", "bf16", "fp16",
    "16-mixed", "bfloat", "precision", "float16", "finite", "16bit", "fp32", "32-true",
    "diverged", "invalid loss", "probably exploding", "faster training with", "start training",
    "starting training", "training started", "training complete", "training finished",
    "finished training", "training done", "found inf", "cost-scaling", "assert",
    "tensor had", "summary histogram", "invalid values", "stop training",
    "traceback (most recent call last)", "keyboardinterrupt",
    "out of memory", "outofmemory", "resourceexhausted", "oom detected", "oom when",
    "encountered nan")
#: words of per-record fields that the message rules read too (printed on every record: the
#: fast reader samples them as records, it does not pick them all)
RECORD_WORDS = ("skipped=", "lg_loss_scale", "log2_loss_scale", "log_loss_scale")
GATE = MESSAGE_WORDS + RECORD_WORDS
