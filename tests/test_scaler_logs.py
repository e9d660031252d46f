"""``Trace.log_lines``: the wording of every style against the real excerpts in fampnb/data."""

from __future__ import annotations

import math
import re
from importlib import resources

import pytest

from fampnb.formats import BF16
from fampnb.scaler import (
    STYLES,
    ApexScaler,
    DeepSpeedScaler,
    FairseqScaler,
    MegatronScaler,
    SeedHalving,
    StaticScaler,
    TorchGradScaler,
    simulate,
)
from fampnb.seed import EXP2_G_MAX

DS_PREFIX = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] \[INFO\] "
                       r"\[loss_scaler\.py:\d+:update_scale\] ")


def real(name: str) -> list[str]:
    return (resources.files("fampnb") / "data" / "real-logs" / name).read_text(
        encoding="utf-8").splitlines()


def numbers_masked(line: str) -> str:
    return re.sub(r" *\d+(\.\d+)?(E[-+]\d+)?", " N", line)


def test_apex_lines_equal_the_real_apex_834_excerpt():
    tr = simulate(ApexScaler(), found_inf=[True] * 17)
    assert tr.log_lines("apex") == real("apex_apex_834.log")
    assert tr.log_lines() == tr.log_lines("apex")  # the policy's own style by default


def test_apex_prints_late_collapse_as_python_floats():
    tr = simulate(ApexScaler(init_scale=2.0 ** -1071), found_inf=[True] * 3)
    assert tr.log_lines("apex")[-1].endswith("reducing loss scale to 5e-324")


def test_deepspeed_lines_match_cogvideo_233():
    """2**32 (the old class default, hysteresis 1): six OVERFLOW lines down to 67108864."""
    lines = [ln for ln in real("deepspeed_CogVideo_233.log") if "OVERFLOW" in ln]
    tr = simulate(DeepSpeedScaler(init_scale=2 ** 32, hysteresis=1), found_inf=[True] * 6)
    ours = tr.log_lines("deepspeed")
    assert len(ours) == len(lines) == 6
    for a, b in zip(ours, lines):
        assert DS_PREFIX.match(a) and DS_PREFIX.match(b)
        assert DS_PREFIX.sub("", a) == DS_PREFIX.sub("", b)
        assert a.split("] [INFO] [")[1].startswith("loss_scaler.py:183:update_scale]")


def test_deepspeed_lines_match_the_tqdm_glued_chinese_llama_534_records():
    msgs = [DS_PREFIX.split(ln)[1] for ln in real("deepspeed_Chinese-LLaMA-Alpaca_534.log")
            if "OVERFLOW" in ln]
    tr = simulate(DeepSpeedScaler(init_scale=64, hysteresis=1), found_inf=[True] * 5)
    assert [DS_PREFIX.sub("", ln) for ln in tr.log_lines("deepspeed")] == msgs


def test_deepspeed_hysteresis_and_min_scale_wording():
    tr = simulate(DeepSpeedScaler(init_scale=65536, hysteresis=2), found_inf=[True] * 2)
    first, second = tr.log_lines("deepspeed")
    assert DS_PREFIX.sub("", first) == ("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted "
                                        "loss scale: 65536, but hysteresis is 2. Reducing "
                                        "hysteresis to 1")
    assert DS_PREFIX.sub("", second).endswith("Attempted loss scale: 65536, reducing to 32768")
    tr = simulate(DeepSpeedScaler(init_scale=2, hysteresis=1), found_inf=[True] * 5)
    lines = tr.log_lines("deepspeed")
    assert lines[-1] == ("Exception: Current loss scale already at minimum - cannot decrease "
                         "scale anymore. Exiting run.")
    assert "Traceback (most recent call last):" in lines
    old = simulate(DeepSpeedScaler(init_scale=2, hysteresis=1, raise_error_at_min_scale=False),
                   found_inf=[True] * 3).log_lines("deepspeed")
    assert DS_PREFIX.sub("", old[-1]).endswith("Attempted loss scale: 1, reducing to 1")
    cons = simulate(DeepSpeedScaler(init_scale=64, consecutive_hysteresis=True),
                    found_inf=[True, False]).log_lines("deepspeed")
    assert cons[-1].endswith("Consecutive hysteresis is enabled. Restoring hysteresis to 2")


def test_deepspeed_progress_and_trainer_records():
    tr = simulate(DeepSpeedScaler(init_scale=2 ** 16), found_inf=[True] * 6 + [False] * 14)
    lines = tr.log_lines("deepspeed", loss=[2.0491] * 20, log_interval=10, decay=False)
    prog = [ln for ln in lines if "log_dist" in ln]
    assert prog[0].endswith("[Rank 0] step=10, skipped=6, lr=[0.0001], mom=[(0.9, 0.999)]")
    assert "{'loss': 2.0491, 'learning_rate': 0.0001, 'epoch': 0.01}" in lines
    real_rec = [ln for ln in real("deepspeed_Chinese-LLaMA-Alpaca_534.log") if ln.startswith("{")]
    ours = [ln for ln in lines if ln.startswith("{")]
    assert numbers_masked(ours[0]) == numbers_masked(real_rec[0])


def test_fairseq_overflow_line_and_fatal():
    tr = simulate(FairseqScaler(init_scale=2048), found_inf=[True])
    (line,) = tr.log_lines("fairseq")
    old = real("fairseq_fairseq_2404.log")[0]  # 2020 wording: "NOTE: overflow detected, ..."
    head = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \| INFO \| fairseq\.trainer \| NOTE: ")
    assert head.match(line) and head.match(old)
    assert line.endswith("NOTE: gradient overflow detected, ignoring gradient, setting loss "
                         "scale to: 1024.0")
    assert old.endswith("setting loss scale to: 1024.0")
    tr = simulate(FairseqScaler(init_scale=2.0 ** -12), found_inf=[True] * 3)
    lines = tr.log_lines("fairseq")
    assert lines[0].endswith("setting loss scale to: 0.0001220703125")
    assert lines[-1] == ("FloatingPointError: Minimum loss scale reached (0.0001). Your loss is "
                         "probably exploding. Try lowering the learning rate, using gradient "
                         "clipping or increasing the batch size.")


def test_fairseq_train_inner_structure_matches_2404():
    g = [1.0] * 40
    tr = simulate(FairseqScaler(init_scale=128), g)
    lines = tr.log_lines("fairseq", loss=[0.439] * 40, log_interval=20)
    ours = [ln for ln in lines if "train_inner" in ln]
    ref = real("fairseq_fairseq_2404.log")[1]
    pat = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \| INFO \| train_inner \| epoch \d{3}: +"
                     r"\d+ / \d+ loss=")
    assert len(ours) == 2 and pat.match(ours[0]) and pat.match(ref)
    assert re.search(r" epoch 001: {5}20 / 40 loss=0\.439, ", ours[0])
    for key in ("num_updates=20", "lr=0.0001", "gnorm=1", "loss_scale=128"):
        assert key in ours[0]
    assert re.search(r"epoch \d{3}:\s+(\d+) /", ref).group(0).startswith("epoch 001:   3615")
    # bf16/fp32: no loss_scale metric, and a non-finite gradient is fatal
    tr = simulate(StaticScaler(), [1.0] * 20 + [math.nan], fmt=BF16)
    lines = tr.log_lines("fairseq", loss=[1.0] * 21, log_interval=10)
    assert "loss_scale" not in lines[0] and lines[-1] == "FloatingPointError: gradients are Nan/Inf"


def test_megatron_line_equals_nccl_743():
    tr = simulate(MegatronScaler(), found_inf=[True] * 10)
    (line,) = tr.log_lines("megatron", log_interval=10, total_steps=1000000, global_batch_size=4,
                           seconds_per_step=0.3562, lr=0.0)
    assert line == real("megatron_nccl_743.log")[2]


def test_megatron_bf16_lm_loss_vanishes_on_nan_like_megatron_llm_33():
    ref = real("megatron_Megatron-LLM_33.log")
    g = [0.752, 0.741, math.nan]
    loss = [0.7334521, 0.7072597, math.nan]
    tr = simulate(StaticScaler(), g, fmt=BF16)
    lines = tr.log_lines("megatron", loss=loss, log_interval=1, total_steps=8000,
                         seconds_per_step=7.6131, lr=6.680e-06)
    for ours, theirs in zip(lines[:2], ref[:2]):
        assert numbers_masked(ours.strip()) == numbers_masked(theirs)
    assert "lm loss: 7.334521E-01 | loss scale: 1.0 | grad norm: 0.752 |" in lines[0]
    assert "lm loss" not in lines[2] and "loss scale: 1.0 |" in lines[2]
    assert numbers_masked(lines[2].strip()).startswith(numbers_masked(ref[2]))
    assert lines[2].endswith("number of skipped iterations:   0 | number of nan iterations:   0 |")


def test_megatron_counts_nan_only_on_skipped_iterations():
    tr = simulate(MegatronScaler(initial_scale=4.0), found_inf=[True] * 10)
    line = tr.log_lines("megatron", loss=[math.nan] * 10, log_interval=10)[0]
    assert "number of skipped iterations:  10 | number of nan iterations:  10 |" in line
    assert "lm loss" not in line and "loss scale: 1.0" in line


def test_seed_line_is_the_articles():
    lines = simulate(SeedHalving(), EXP2_G_MAX).log_lines("seed")
    assert lines[0] == "Loss scaling: 65536 -> 32768 (overflow)"
    assert lines[-1] == "Loss scaling: 512 -> 256 (overflow)" and len(lines) == 8


def test_hf_trainer_records_have_no_scale_and_nan_grad_norm_on_skips():
    ref = real("hf-trainer_LlamaFactory_5660-bf16.log")[0]
    tr = simulate(TorchGradScaler(), [1.0] * 9 + [1e9] + [1.0] * 10)
    lines = tr.log_lines("hf", loss=[0.1234] * 20, log_interval=10, decay=False, lr=5e-05)
    assert lines[0] == "{'loss': 0.1234, 'grad_norm': nan, 'learning_rate': 5e-05, 'epoch': 0.01}"
    assert numbers_masked(lines[0]).replace("N-N", "N") == numbers_masked(ref).replace("N-N", "N")
    assert "'grad_norm': 1.0" in lines[1] and "scale" not in " ".join(lines)


def test_torch_style_is_a_user_loop_plus_the_scheduler_warning():
    ref = real("gradscaler_semantic-segmentation_28.log")[0]
    tr = simulate(TorchGradScaler(), [0.5, 0.5] + [1e9] * 8)
    lines = tr.log_lines("torch", loss=[0.5] * 10, log_interval=5)
    assert lines == ["step 5: loss 0.5000, loss scale 8192", "step 10: loss 0.5000, loss scale 256"]
    tr = simulate(TorchGradScaler(), [1e9] * 5)
    warn = tr.log_lines("torch", loss=[0.5] * 5, log_interval=5)[0]
    assert warn.split("UserWarning:", 1)[1] == ref.split("UserWarning:", 1)[1]


@pytest.mark.parametrize("style", STYLES)
def test_every_style_renders_loss_and_is_deterministic(style):
    tr = simulate(MegatronScaler(initial_scale=2.0 ** 20), [0.5] * 10 + [1e9] * 5 + [0.5] * 25)
    loss = [2.0 - 0.01 * i for i in range(40)]
    a = tr.log_lines(style, loss=loss, log_interval=10)
    assert a == tr.log_lines(style, loss=loss, log_interval=10) and a
    assert all(isinstance(x, str) and "\n" not in x for x in a)


def test_hf_nan_inf_filter_hides_nan_like_the_trainer_default():
    tr = simulate(TorchGradScaler(), [0.5] * 10)
    loss = [1.0] * 5 + [math.nan] + [1.0] * 4
    shown = tr.log_lines("hf", loss=loss, log_interval=10)[0]
    hidden = tr.log_lines("hf", loss=loss, log_interval=10, nan_inf_filter=True)[0]
    assert "'loss': nan" in shown and "'loss': 0.9833" in hidden  # (5 + 5/6 + 4) / 10


def test_learning_rate_schedule_freezes_while_steps_are_skipped():
    tr = simulate(TorchGradScaler(), [0.5] * 10 + [1e9] * 20)
    lines = tr.log_lines("hf", loss=[1.0] * 30, log_interval=10, lr=1e-4, total_steps=100)
    lrs = [float(re.search(r"'learning_rate': ([^,]+)", ln).group(1)) for ln in lines]
    assert lrs[0] == pytest.approx(9e-05) and lrs[1] == lrs[2] == lrs[0]
    meg = simulate(MegatronScaler(), found_inf=[True] * 10).log_lines(
        "megatron", log_interval=10, lr=1e-4, warmup=100)
    assert "learning rate: 0.000E+00" in meg[0]  # as in nccl#743: warm-up never started


def test_deepspeed_line_stops_after_skipping_step_when_not_fp16():
    tr = simulate(DeepSpeedScaler(hysteresis=1), [math.inf], fmt=BF16)
    (line,) = tr.log_lines("deepspeed")
    assert DS_PREFIX.sub("", line) == "[deepspeed] OVERFLOW! Rank 0 Skipping step."
