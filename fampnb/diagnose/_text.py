"""Advice and caveat texts of the log doctor (the article's decision chain, in its order).

Kept apart from ``fampnb.diagnose`` so that the rules stay short and the wording is in one place.
Each advice list is ordered: the first item is the first switch to turn.
"""

from __future__ import annotations

__all__ = ["ADVICE", "CAVEATS", "FRAMEWORK_HINTS", "SILENT"]

ADVICE: dict[str, list[str]] = {
    "overflow": [
        "Lower the learning rate (e.g. by 2-10x) and tighten gradient clipping (e.g. max_norm 1.0) "
        "first: the overflow line is still updating, so the gradients are too large for the scale.",
        "Watch the scale: below 256 and still halving (eight halvings in a row) means the gradients "
        "are persistently too large; waiting for the scaler will not help, act on gradients and data.",
        "Print the gradient abs max G and check G x scale: > 65504 confirms overflow (lower LR, "
        "tighten clipping); < 6.1e-05 is underflow: reduce the batch size or switch to bf16.",
        "If the model was pretrained in bf16 (T5, GLM, Mistral, LLaMA), train in bf16 (or fp32) "
        "instead of fp16: its activations do not fit fp16's range.",
        "Only then touch the scaler (a lower min_loss_scale or a static loss scale): it hides the "
        "symptom, it does not remove the cause.",
    ],
    "data": [
        "Check the data first: labels and inputs for inf/NaN (torch.isfinite on a batch), empty or "
        "corrupt samples, and the normalisation parameters (a zero std, mean/std swapped).",
        "Run the first batch in fp32 (or bf16): if it is still NaN the cause is the data or the "
        "model, not fp16's range; if it is finite only in bf16/fp32, it is a range problem.",
        "Do not tune the loss scaler or the learning rate yet: data-type NaN does not improve when "
        "the scale halves.",
    ],
    "no-scaler": [
        "No dynamic loss scaler is at work here (bf16, fp32 or a static scale), so nothing skips a "
        "non-finite step: inspect the batch at the first NaN step for inf/NaN labels or inputs.",
        "Lower the learning rate and tighten gradient clipping; look for a loss or grad-norm spike "
        "just before the NaN.",
        "Make the run skip non-finite steps (a finite grad-norm check before optimizer.step) and log "
        "the raw per-step loss and grad norm so that the next NaN is visible where it starts.",
    ],
    "healthy": [
        "Nothing to turn: the scaler is doing its job. Keep an eye on the scale line: trouble starts "
        "when it keeps halving past start-up, falls below 256 and does not recover.",
    ],
    "unknown": [
        "Log more to decide: the loss every step, the grad norm, the loss scale (or the framework's "
        "overflow lines), and state the precision (fp16/bf16/fp32) of the run.",
        "Then apply the chain: overflow line still updating -> lower LR and tighten clipping; NaN at "
        "step 0 with no overflow line -> check the data.",
    ],
}

CAVEATS: dict[str, str] = {
    "bf16-pretrained": (
        "NaN at step 0 in fp16 is not always data: a model pretrained in bf16 (T5, GLM, Mistral, "
        "LLaMA) overflows fp16 in its forward activations, which loss scaling cannot fix. To tell: "
        "run one batch in bf16 or fp32; finite there and NaN in fp16 means a range problem (train "
        "in bf16), NaN everywhere means the data."),
    "calibration": (
        "The backoffs at start-up are calibration: the scaler starts high (2^16, 2^32, 2^15) and "
        "halves until the gradients fit. That is normal as long as no lasting NaN follows."),
    "hf-filter": (
        "HF Trainer replaces a non-finite step loss by a running average (logging_nan_inf_filter, "
        "on by default), so a printed finite loss can hide NaN; set logging_nan_inf_filter=False. "
        "grad_norm is not filtered: nan/inf there under fp16 is a skipped step."),
    "megatron": (
        "Megatron hides NaN: a NaN loss makes the loss field vanish from the iteration line instead "
        "of printing nan, and the nan-iterations counter can stay 0 (bf16). A missing loss with a "
        "non-zero skipped counter means skipped steps; without it, NaN."),
    "silent": (
        "This framework's scaler is silent (torch GradScaler, Accelerate, Lightning, Keras): it "
        "prints nothing when it skips a step, so the absence of overflow lines proves nothing; only "
        "indirect traces (grad_norm nan, a falling printed scale, the lr_scheduler warning) remain."),
    "below-one": (
        "The scale fell below 1 and kept halving: at that point the gradients are non-finite at any "
        "scale, so the inf/NaN comes from the forward pass, the data or a bug, not from fp16's "
        "gradient range."),
    "fairseq-avg": (
        "fairseq's loss_scale metric is an interval average rounded for display: values such as "
        "1399 or 0 are artefacts (0 means below 0.5), not literal scales."),
    "grad-nan-skipped": (
        "grad_norm nan/inf with a finite, falling loss means the scaler skipped those steps: "
        "normal under fp16."),
    "transient-nan": (
        "A single NaN record followed by finite values was printed on a skipped step; only a NaN "
        "that lasts is a failure."),
    "precision-unknown": (
        "The log does not state the precision. bf16 and fp32 never print backoffs, so timing alone "
        "cannot separate data from no-scaler there; pass the precision (--precision) if known."),
    "no-scaler-silent": (
        "No scaler is visible in the log. If the run used fp16 with a silent scaler (GradScaler, "
        "Accelerate, Lightning, Keras), the NaN may be a hidden overflow: log the scale."),
    "multi-rank": (
        "The same backoff appears from several ranks or loss scalers: counted once per line, but "
        "the cascade depth uses distinct scale values."),
    "applied-nonfinite": (
        "The loss turned exactly 0.0 after a non-finite grad norm: the non-finite update reached "
        "the weights, which a dynamic fp16 scaler would have skipped (the usual bf16 trace)."),
    "inferred-fp16": (
        "The log does not state the precision; fp16 is inferred: a record with a non-finite grad "
        "norm left the learning rate where it was although it had been moving, so the step was "
        "skipped, which only an fp16 loss scaler does. Pass --precision if that is wrong."),
    "truncated": (
        "The file was cut short (a compressed log that ends early): the verdict is read from the "
        "lines before the cut; what came after it is unknown."),
    "ranks-disagree": (
        "The ranks disagree: rank(s) {bad} show a NaN loss, rank(s) {good} do not; the verdict "
        "reads rank {read}'s own records (a NaN on one rank only points at its data shard or its "
        "device)."),
    "ranks-apart": (
        "The ranks print losses of different sizes (ranks {ranks}, each its own): read together "
        "they look like a loss that exploded, which no rank's own records show; the verdict reads "
        "rank {read}'s own records."),
    "out-of-memory": (
        "The process ran out of memory (line {line}): a run that stops there stopped for memory, "
        "not for a NaN; lower the batch size or use gradient checkpointing, and read the verdict "
        "from the records before it."),
    "frozen-after-nan": (
        "After the NaN the loss reads {value} on every one of the {n} records that follow, to all "
        "its digits: the weights no longer change (a NaN reached them, or every step is skipped), "
        "so the NaN is read as lasting, not as a recovery."),
    "softmax-floor": (
        "A loss of 87.3365 is -ln(FLT_MIN): Caffe's softmax loss clamps the true class's "
        "probability at float32's smallest normal number, so it prints this value once the "
        "probability is 0, when the network's outputs have gone to inf or NaN. It is read as a "
        "NaN loss."),
    "misuse": (
        "An API misuse error is in the log (e.g. fp16 parameters with GradScaler, unscale_/step "
        "called twice, clipping with a fused optimizer): fix the call order first (unscale_ before "
        "clip_grad_norm_, one step() and one update() per iteration)."),
}

#: frameworks whose scaler prints nothing on a skipped step
SILENT = frozenset({"torch", "hf", "lightning", "keras", "mmengine", "insightface", "generic",
                    "marian"})     # (Marian's cost scaling logs at the debug level since 1.11)

FRAMEWORK_HINTS: dict[str, str] = {
    "deepspeed": "DeepSpeed: fp16.min_loss_scale / fp16.loss_scale (static) / bf16.enabled in the "
                 "config; the 'Current loss scale already at minimum' exception is the ending.",
    "fairseq": "fairseq: --min-loss-scale, --fp16-scale-tolerance, --bf16; FloatingPointError "
               "'Minimum loss scale reached' is the ending.",
    "megatron": "Megatron: --bf16, or a static --loss-scale; --min-loss-scale; "
                "--check-for-nan-in-loss-and-grad.",
    "apex": "apex amp: min_loss_scale in amp.initialize (no floor by default); apex amp is "
            "deprecated, torch.amp is its successor.",
}
