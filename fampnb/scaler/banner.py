"""What a framework prints before training starts: its config dump, which states the precision.

DeepSpeed's ``DeepSpeedConfig.print`` lines, Megatron-LM's argument dump, fairseq's ``Namespace``,
the HF ``TrainingArguments`` repr, apex's ``amp.initialize`` banner, and a user loop's own line.
A bf16/fp32 run is one whose policy is a ``StaticScaler``.  ``fampnb.scenarios.synthetic_log`` puts
these lines before ``Trace.log_lines`` so that a synthetic log states its precision as real ones do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .policies import StaticScaler

if TYPE_CHECKING:
    from .trace import Trace

__all__ = ["start_up_lines"]


def _ds_cfg(arg: str, value: Any) -> str:
    """DeepSpeed's config dump line (``DeepSpeedConfig.print``: 29-column dot padding)."""
    return (f"[2024-09-11 17:51:58,046] [INFO] [config.py:988:print]   {arg} "
            f"{'.' * (29 - len(arg))} {value}")


def _mg_arg(arg: str, value: Any) -> str:
    """Megatron-LM's argument dump line (48-column dot padding)."""
    return f"  {arg} {'.' * (48 - len(arg))} {value}"


def _apex_banner(level: str, what: str, scale: str, half: bool) -> list[str]:
    """What ``amp.initialize`` prints for an optimization level."""
    return [f"Selected optimization level {level}:  {what}", "",
            "Defaults for this optimization level are:",
            "enabled                : True", f"opt_level              : {level}",
            f"cast_model_type        : {'None' if half else 'torch.float32'}",
            f"patch_torch_functions  : {half}", "keep_batchnorm_fp32    : None",
            f"master_weights         : {'None' if half else 'False'}",
            f"loss_scale             : {scale}"]


def start_up_lines(style: str, trace: Trace, steps: int) -> list[str]:
    """The start-up lines that state a run's precision and initial scale, as each framework (or a
    user loop) prints them before training; ``steps`` is the run's planned length."""
    p = trace.policy
    bf16 = isinstance(p, StaticScaler)
    start = p.start_scale
    if style == "deepspeed":
        return [_ds_cfg("bfloat16_enabled", bf16), _ds_cfg("fp16_enabled", not bf16),
                _ds_cfg("initial_dynamic_scale", 1 if bf16 else int(start)),
                _ds_cfg("loss_scale", 1.0 if bf16 else 0)]
    if style == "megatron":
        return ["------------------------ arguments ------------------------",
                _mg_arg("bf16", bf16), _mg_arg("fp16", not bf16),
                _mg_arg("initial_loss_scale", float(getattr(p, "initial_scale", 2.0 ** 32))),
                _mg_arg("log_interval", 10), _mg_arg("loss_scale", None),
                "-------------------- end of arguments ---------------------", "training ..."]
    if style == "fairseq":
        init = 128 if bf16 else int(start)
        return [f"2024-09-11 17:51:58 | INFO | fairseq_cli.train | Namespace(arch='transformer', "
                f"bf16={bf16}, fp16={not bf16}, fp16_init_scale={init}, min_loss_scale=0.0001, "
                f"log_interval=10, max_update={steps})",
                "2024-09-11 17:52:10 | INFO | fairseq_cli.train | begin training epoch 1"]
    if style == "hf":
        return ["TrainingArguments(", f"bf16={bf16},", f"fp16={not bf16},",
                "logging_nan_inf_filter=False,", "logging_steps=10,", ")",
                "***** Running training *****", f"  Num examples = {steps * 64:,}",
                "  Num Epochs = 1", f"  Total optimization steps = {steps:,}"]
    if style == "apex":
        if bf16:
            return _apex_banner("O0", "Pure FP32 training.", "1.0", False)
        return _apex_banner("O1", "Insert automatic casts around Pytorch functions and Tensor "
                            "methods.", "dynamic", True)
    if style == "torch":
        return ["precision: fp32, GradScaler: off" if bf16 else
                f"precision: fp16 autocast, GradScaler(init_scale={start:g})"]
    return ["precision: bf16, loss scaling: off" if bf16 else
            f"precision: fp16, loss scaling: dynamic (start {start})"]
