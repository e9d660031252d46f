"""fampnb.logs: every wording of reference/loss-scalers.md, sources, bad input, fast scan."""

from __future__ import annotations

import gzip
import io
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fampnb import logs
from fampnb.logs import Event, parse

ROOT = Path(__file__).resolve().parent.parent


def one(line: str) -> Event:
    evs = [e for e in parse([line]) if e.rule != "precision"]
    assert len(evs) == 1, evs
    return evs[0]


def key(events) -> list[str]:
    return [json.dumps(e.to_dict(), sort_keys=True) for e in events]


# ---- wordings (reference section 3 and 4) --------------------------------------------------
BACKOFFS = [
    ("Loss scaling: 65536 -> 32768 (overflow)", 65536, 32768, "seed"),
    ("[2020-05-01 10:00:00,000] [INFO] [deepscale] OVERFLOW! Rank 0 Skipping step. Attempted loss "
     "scale: 4294967296, reducing to 2147483648.0", 4294967296, 2147483648, "deepspeed"),
    ("[2024-09-11 17:52:18,030] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! "
     "Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768", 65536, 32768,
     "deepspeed"),
    ("[deepspeed] fp16 dynamic loss scale overflow! Skipping step. Attempted loss scale: 128.0, "
     "reducing to 64.0", 128, 64, "deepspeed"),
    ("[Rank 0] Overflow detected. Skipping step. Attempted loss scale: 524288.0, reducing to "
     "262144.0", 524288, 262144, "deepspeed"),
    ("Reducing dynamic loss scale from 1024.0 to 512.0", 1024, 512, "deepspeed"),
    ("Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0", None, 32768,
     "apex"),
    ("Gradient overflow, skipping step, loss scaler 0 reducing loss scale to 16384.0", None, 16384,
     "apex"),
    ("Gradient overflow.  Skipping step, reducing loss scale to 8.289046e-317", None, 8.289046e-317,
     "apex"),
    ("OVERFLOW within closure! Skipping step, reducing loss scale to 256.0", None, 256, "apex"),
    ("| WARNING: overflow detected, setting loss scale to: 0.25", None, 0.25, "fairseq"),
    ("2020-08-01 12:39:16 | INFO | fairseq.trainer | NOTE: overflow detected, setting loss scale "
     "to: 1024.0", None, 1024, "fairseq"),
    ("2021-03-01 12:00:00 | INFO | fairseq.trainer | NOTE: gradient overflow detected, ignoring "
     "gradient, setting loss scale to: 64.0", None, 64, "fairseq"),
    ("AMP: overflow detected, setting scale to to 32.0", None, 32, "fairseq"),
]


@pytest.mark.parametrize("line,before,after,fw", BACKOFFS)
def test_backoff_wordings(line, before, after, fw):
    e = one(line)
    assert e.kind == "backoff"
    assert e.framework == fw
    assert e.scale_after == pytest.approx(after, rel=1e-12)
    if before is not None:
        assert e.scale_before == pytest.approx(before)


@pytest.mark.parametrize("line,kind,rule", [
    ("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, but hysteresis is 2."
     " Reducing hysteresis to 1", "hysteresis", "ds-hysteresis"),
    ("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 65536",
     "hysteresis", "ds-overflow"),
    ("Increasing dynamic loss scale from 512.0 to 1024.0", "growth", "dyn-increase"),
    ("Loss scaling: 1024 -> 2048 (growth)", "growth", "article"),
    ("Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting "
     "run.", "fatal", "min-scale"),
    ("FloatingPointError: Minimum loss scale reached (0.0001). Your loss is probably exploding. "
     "Try lowering the learning rate, using gradient clipping or increasing the batch size.",
     "fatal", "min-scale"),
    ("AMP: Minimum loss scale reached (0.0001). Your loss is probably exploding. Try restarting "
     "training or use fp32.", "fatal", "min-scale"),
    ("FloatingPointError: gradients are Nan/Inf", "fatal", "nonfinite-grad"),
    ("OverflowError: cannot convert float infinity to integer", "fatal", "overflowerror"),
    ("ValueError: Attempting to unscale FP16 gradients.", "fatal", "misuse"),
    ("RuntimeError: unscale_() has already been called on this optimizer since the last update().",
     "fatal", "misuse"),
    ("Grad overflow on iteration 1234", "skip", "ds-grad-overflow"),
    ("[deepspeed] OVERFLOW! Rank 0 Skipping step.", "skip", "ds-overflow-noscale"),
    ("Gradient overflow, skipping update", "skip", "apex-skip"),
    ("AMP: skipping this batch.", "skip", "fairseq-amp-skip"),
    ("tried to get lr value before scheduler/optimizer started stepping, returning lr=0", "skip",
     "lr-zero"),
    ("/usr/lib/python3/torch/optim/lr_scheduler.py:134: UserWarning: Detected call of "
     "`lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later", "skip",
     "sched-warning"),
    ("Loss is nan, stopping training", "nan", "anomaly"),
    ("RuntimeError: Function 'LogSoftmaxBackward0' returned nan values in its 0th output.", "nan",
     "anomaly"),
])
def test_other_wordings(line, kind, rule):
    e = one(line)
    assert (e.kind, e.rule) == (kind, rule)


def test_min_scale_values():
    assert one("FloatingPointError: Minimum loss scale reached (0.0001). x").scale_after == 1e-4


def test_ds_progress_counter_emits_deltas():
    lines = ["[Rank 0] step=10, skipped=0, lr=[1e-4], mom=[(0.9, 0.999)]",
             "[Rank 0] step=20, skipped=3, lr=[1e-4], mom=[(0.9, 0.999)]",
             "[Rank 0] step=30, skipped=3, lr=[1e-4], mom=[(0.9, 0.999)]",
             "[Rank 0] step=40, skipped=5, lr=[1e-4], mom=[(0.9, 0.999)]"]
    zero = [e for e in parse(lines) if e.rule == "ds-counter-zero"]
    assert [(e.step, e.count) for e in zero] == [(10, 0)]   # a counter at 0: nothing skipped yet
    held = [e for e in parse(lines) if e.rule == "ds-counter-held"]
    assert [(e.step, e.count) for e in held] == [(30, 0)]   # unchanged: the steps went through
    evs = [e for e in parse(lines) if e.rule not in ("ds-counter-zero", "ds-counter-held")]
    assert [(e.step, e.count) for e in evs] == [(20, 3), (40, 2)]
    assert all(e.kind == "skip" and e.framework == "deepspeed" for e in evs)


MEG = (" iteration     3383/    8000 | consumed samples:       216512 | elapsed time per iteration "
       "(ms): 7613.1 | learning rate: 6.680E-06 | global batch size:    64 | {loss}loss scale: "
       "{scale} | grad norm: 0.752 | number of skipped iterations: {skip:3d} | number of nan "
       "iterations: {nan:3d} |")


def test_megatron_fields():
    e = one(MEG.format(loss="lm loss: 7.334521E-01 | ", scale="1.0", skip=0, nan=0))
    assert (e.kind, e.step, e.total) == ("loss", 3383, 8000)
    assert e.loss == pytest.approx(0.7334521)
    assert e.scale_after == 1.0 and e.grad_norm == pytest.approx(0.752)


def test_megatron_cells_without_colons():
    """Megatron-LM before 2020 and its forks print ``| lm loss 6.758929E+00 | loss scale 64.0 |``."""
    old = (" iteration      {it}/    3000 | elapsed time per iteration (ms): 12879.0 | learning "
           "rate 6.300E-06 | lm loss {loss} | loss scale {scale} |")
    e = one(old.format(it=400, loss="6.758929E+00", scale="64.0"))
    assert (e.kind, e.rule, e.step, e.total) == ("loss", "megatron-loss", 400, 3000)
    assert e.loss == pytest.approx(6.758929) and e.scale_after == 64.0
    e = one(old.format(it=700, loss="NAN", scale="0.1"))
    assert e.kind == "nan" and math.isnan(e.loss) and e.scale_after == 0.1


def test_fairseq_min_scale_message_by_its_second_sentence():
    """fairseq's minimum-scale error, its head cut or wrapped away, is known by the rest of it."""
    e = one("    ).format(self.args. scale reached (0.0001). Your loss is probably exploding. Try "
            "lowering the learning rate, using gradient clipping or increasing the batch size.")
    assert (e.kind, e.framework, e.rule, e.scale_after) == ("fatal", "fairseq", "min-scale", 1e-4)
    e = one("Your loss is probably exploding. Try restarting training or use fp32.")
    assert (e.kind, e.rule, e.scale_after) == ("fatal", "min-scale", None)


def test_exceptions_that_say_the_loss_diverged_end_the_run():
    """A training script's own check (``RuntimeError: Loss is diverging!``) is a fatal record;
    other errors, or errors that only name a loss, are not."""
    for line, rule in (("RuntimeError: Loss is diverging!", "runtimeerror"),
                       ("ValueError: the loss diverged at step 12", "valueerror"),
                       ("AssertionError: the loss exploded (1e+30)", "assertionerror")):
        e = one(line)
        assert (e.kind, e.rule) == ("fatal", rule), line
    for line in ("KeyError: 'loss'", "RuntimeError: CUDA error: out of memory",
                 "ValueError: expected loss_fn to be callable"):
        assert not [e for e in parse([line]) if e.kind == "fatal"], line


def test_timm_train_lines_name_a_global_step():
    """timm's train.py prints ``Train: {epoch} [{batch}/{batches} (pct%)]`` (epochs from 0)."""
    e = one("Train: 4 [ 300/5004 (  6%)]  Loss:       nan (   nan)  Time: 3.225s,   79.37/s  "
            "LR: 6.227e-02  Data: 3.035 (0.453)")
    assert (e.kind, e.step, e.total, e.explicit) == ("nan", 4 * 5004 + 300, 5004, True)
    assert one("Train: 0 [  50/5004 (  1%)]  Loss:  6.9 (6.9)").step == 50


def test_hf_learning_rate_that_stops_with_a_nonfinite_grad_norm_is_a_skipped_step():
    """Trainer/Accelerate skip the scheduler with a skipped optimizer step: a learning rate that
    was moving and stops on a record with a non-finite grad norm is a step an fp16 scaler
    skipped; a constant learning rate, or a finite grad norm, says nothing."""
    def rec(loss: str, gn: str, lr: str) -> str:
        return f"{{'loss': {loss}, 'grad_norm': {gn}, 'learning_rate': {lr}, 'epoch': 0.01}}"

    moving = [rec("3.6", "7.3", "4.9997e-05"), rec("63.4", "nan", "4.9990e-05"),
              rec("0.0", "nan", "4.9990e-05")]
    evs = list(parse(moving))
    assert [(e.line_no, e.kind, e.rule) for e in evs] == [
        (1, "loss", "hf-dict"), (2, "loss", "hf-dict"), (3, "loss", "hf-dict"),
        (3, "skip", "lr-frozen")]
    constant = [rec("3.6", "7.3", "5e-05"), rec("63.4", "nan", "5e-05"), rec("0.0", "nan", "5e-05")]
    assert not [e for e in parse(constant) if e.kind == "skip"]
    finite = [rec("3.6", "7.3", "4.9997e-05"), rec("3.5", "7.1", "4.9990e-05"),
              rec("3.4", "7.0", "4.9990e-05")]
    assert not [e for e in parse(finite) if e.kind == "skip"]


def test_component_lines_after_a_total_belong_to_its_record():
    """Caffe and tf-faster-rcnn print an iteration's total loss, then one component a line: those
    lines are not records of their own; components with no total before them still are."""
    tf = ["iter: 20 / 70000, total loss: nan", " >>> rpn_loss_cls: 0.648382",
          " >>> loss_box: 0.199051", " >>> lr: 0.010000", "iter: 40 / 70000, total loss: 1.5",
          " >>> loss_cls: 0.5"]
    evs = list(parse(tf))
    assert [(e.line_no, e.kind, e.step) for e in evs] == [(1, "nan", 20), (5, "loss", 40)]
    caffe = ["I0426 19:55:49.662811 30135 solver.cpp:229] Iteration 0, loss = nan",
             "I0426 19:55:49.662861 30135 solver.cpp:245]     Train net output #0: loss_bbox = nan"
             " (* 1 = nan loss)",
             "I0426 19:55:49.662870 30135 solver.cpp:245]     Train net output #1: loss_cls = 1.88"
             " (* 1 = 1.88 loss)"]
    assert [(e.line_no, e.framework) for e in parse(caffe)] == [(1, "caffe")]
    alone = ["Epoch 3", "loss_cls: 0.5", "loss_cls: 0.4"]          # no total: each line counts
    assert [e.loss for e in parse(alone)] == [0.5, 0.4]
    after_new_step = ["iter: 20, total loss: 2.0", "iter: 30", "loss_cls: 0.5"]
    assert [e.line_no for e in parse(after_new_step)] == [1, 3]


def test_megatron_missing_loss_is_nan_without_skips_and_skip_with_them():
    e = one(MEG.format(loss="", scale="1.0", skip=0, nan=0))
    assert e.kind == "nan" and e.rule == "megatron-loss-missing"
    e = one(MEG.format(loss="", scale="8388608.0", skip=10, nan=0))
    assert e.kind == "skip" and e.count == 10 and e.scale_after == 8388608.0
    e = one(MEG.format(loss="lm loss: 2.0 | ", scale="1.0", skip=0, nan=3))
    assert e.kind == "nan"


def test_hf_dicts():
    e = one("{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 4.998e-05, 'epoch': 0.03}")
    assert (e.kind, e.framework, e.loss) == ("loss", "hf", 0.0)
    assert math.isnan(e.grad_norm)
    e = one("{'loss': nan, 'grad_norm': inf, 'learning_rate': 0, 'epoch': 0.5}")
    assert e.kind == "nan" and math.isinf(e.grad_norm)


@pytest.mark.parametrize("line,kind,loss,gnorm,scale,fw", [
    ("Epoch 0:  12%|█▏ | 120/1000 [00:10<01:20, 11.0it/s, loss=nan, v_num=0]", "nan", math.nan,
     None, None, "lightning"),
    ("10/30 22:19:57 - mmengine - INFO - Epoch(train) [1][240/735]  lr: 1.9813e-04  loss: 2.5128  "
     "grad_norm: nan", "loss", 2.5128, math.nan, None, "mmengine"),
    ("Training: 2023-03-14 09:08:47,984-Speed 2183.37 samples/sec   Loss nan   Global Step: 30   "
     "Fp16 Grad Scale:  0   Required: 144 hours", "nan", math.nan, None, 0.0, "insightface"),
    ("I0302 02:15:34.291999 140737349982016 model_training_utils.py:538] Step: 47 Lr 1.6526e-05 "
     "Loss scale 32768", "scale", None, None, 32768.0, "keras"),
    ("Epoch: [3]  [ 200/1251]  eta: 0:10:00  lr: 0.000100  loss: 6.9 (6.9)  loss_scale: 8192.0000 "
     "(8646.0600)  grad_norm: 0.3922 (nan)", "loss", 6.9, 0.3922, 8192.0, "generic"),
    ("2020-03-23 11:39:44 | INFO | train_inner | epoch 003:      5 / 356 loss=9.44, nll_loss=8.44, "
     "num_updates=700, gnorm=156.036, loss_scale=0, train_wall=1281", "loss", 9.44, 156.036, 0.0,
     "fairseq"),
    ("step 10: loss tensor(nan, device='cuda:0')", "nan", math.nan, None, None, "generic"),
    ("val_loss = inf is not finite", "nan", None, None, None, "torch"),
])
def test_generic_records(line, kind, loss, gnorm, scale, fw):
    e = one(line)
    assert (e.kind, e.framework) == (kind, fw)
    for got, want in ((e.loss, loss), (e.grad_norm, gnorm), (e.scale_after, scale)):
        if want is None:
            continue
        assert (math.isnan(got) if math.isnan(want) else got == pytest.approx(want))


@pytest.mark.parametrize("line,step,total", [
    (" iteration       10/ 1000000 | loss scale: 1.0 |", 10, 1000000),
    ("[Rank 0] step=77, skipped=2, lr=[1e-4]", 77, None),
    ("Epoch: 0   Global Step: 20   Fp16 Grad Scale:  0", 20, None),
    ("Epoch(train) [1][200/735]  loss: 2.75", 200, 735),
    ("Epoch(train) [3][200/735]  loss: 2.75", 2 * 735 + 200, 735),
    ("[session 1][epoch  1][iter  100/2892] loss: nan, lr: 1.00e-04", 100, 2892),
    ("Epoch: 00 Iteration: 00000001/00100000 DLoss:nan Reg:nan", 1, 100000),
    (" 14%|██▍ | 378/2724 [13:58:09<86:18:35, 132.44s/it] loss: 2.0", 378, 2724),
    ("Train Step: 47/90  / loss = 11.0390625 / time = 0.136 sec", 47, 90),
    ("| epoch 002 | loss 9.803 | num_updates 695 | gnorm 55.005 | loss_scale 0 |", 695, None),
    # more counter forms: bracketed, Keras bars, JSON keys
    ("Step [120/5000] loss: 2.3411 grad_norm: 0.88", 120, 5000),
    ("Iter [300/9000] lr: 1.0e-4, loss: 0.9", 300, 9000),
    ("  57/938 [==>...........................] - ETA: 1:12 - loss: 0.71", 57, 938),
    ('{"step": 1200, "train/loss": 0.25}', 1200, None),
    ('{"global_step": 7, "loss": 1.0}', 7, None),
])
def test_steps_from_the_line(line, step, total):
    e = next(e for e in parse([line]))
    assert (e.step, e.total, e.explicit) == (step, total, True)


def test_step_falls_back_to_last_step_then_line_order():
    evs = list(parse(["{'loss': 1.0}", "{'loss': 0.9}", "step=5, skipped=1", "{'loss': 0.8}"]))
    assert [(e.step, e.explicit) for e in evs] == [(1, False), (2, False), (5, True), (5, False)]


def test_tqdm_glued_records_and_carriage_returns():
    line = (" 14%|█▍        | 378/2724 [13:58:09<86:18:35, 132.44s/it][2023-06-07 22:16:00,018] "
            "[INFO] [loss_scaler.py:181:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. "
            "Attempted loss scale: 64, reducing to 32")
    e = one(line)
    assert (e.kind, e.step, e.scale_after) == ("backoff", 378, 32)
    cr = ("  1%|          | 1/100 [00:01<00:10]\r  2%|          | 2/100 [00:02<00:10]"
          "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0\r"
          "  3%|          | 3/100 [00:03]Gradient overflow.  Skipping step, loss scaler 0 "
          "reducing loss scale to 16384.0\n")
    evs = [e for e in parse(io.BytesIO(cr.encode())) if e.kind == "backoff"]
    assert [e.scale_after for e in evs] == [32768.0, 16384.0]
    assert all(e.line_no == 1 for e in evs)


def test_nothing_is_evaluated(tmp_path):
    marker = tmp_path / "pwned"
    evil = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    lines = ["{'loss': " + evil + ", 'grad_norm': " + evil + "}",
             "Loss scaling: " + evil + " -> 1 (overflow)", "loss: " + evil]
    list(parse(lines))
    list(logs.scan(io.BytesIO("\n".join(lines).encode())))
    assert not marker.exists()
    paths = [*(ROOT / "fampnb" / "logs").glob("*.py"), *(ROOT / "fampnb" / "diagnose").glob("*.py")]
    assert len(paths) > 10
    for path in paths:
        src = path.read_text()
        assert "eval(" not in src and "literal_eval" not in src and "exec(" not in src, path


# ---- sources -------------------------------------------------------------------------------
SAMPLE = "apex_apex_834.log"


def test_sources_agree(tmp_path):
    text = "\n".join(logs.read_sample(SAMPLE)) + "\n"
    p = tmp_path / "a.log"
    p.write_text(text)
    gz = tmp_path / "a.log.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    nogz_suffix = tmp_path / "compressed.txt"
    nogz_suffix.write_bytes(gzip.compress(text.encode()))
    ref = key(parse(p))
    assert len(ref) == 17
    assert key(parse(str(p))) == ref
    assert key(parse(gz)) == ref
    assert key(parse(nogz_suffix)) == ref
    assert key(parse(io.StringIO(text))) == ref
    assert key(parse(io.BytesIO(text.encode()))) == ref
    assert key(parse(text.splitlines())) == ref
    assert key(parse(line.encode() for line in text.splitlines())) == ref
    with open(p) as fh:
        assert key(parse(fh)) == ref
    with open(p, "rb") as fh:
        assert key(parse(fh)) == ref


def test_parse_is_lazy():
    def lines():
        yield "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0"
        raise RuntimeError("the reader asked for more than it needed")

    it = parse(lines())
    assert next(it).scale_after == 32768.0


def test_bad_item_type():
    with pytest.raises(TypeError):
        list(parse([1, 2]))


# ---- bad input -----------------------------------------------------------------------------
def test_missing_file_and_directory(tmp_path):
    with pytest.raises(FileNotFoundError):
        list(parse(tmp_path / "nope.log"))
    with pytest.raises(IsADirectoryError):
        list(parse(tmp_path))


def test_empty_and_garbage(tmp_path):
    assert list(parse(io.BytesIO(b""))) == []
    garbage = bytes(range(256)) * 50 + b"\x00\xff\xfe" * 1000
    assert all(e.kind in logs.KINDS for e in parse(io.BytesIO(garbage)))


def test_non_utf8_bytes_still_parse():
    data = b"\xff\xfe caf\xe9 Loss scaling: 65536 -> 32768 (overflow)\n\xc3\x28 loss: nan\n"
    evs = list(parse(io.BytesIO(data)))
    assert [e.kind for e in evs] == ["backoff", "nan"]
    assert "caf\u00e9" in evs[0].text     # not UTF-8: read as Latin-1, nothing lost


def test_ten_megabyte_single_line_is_flat(tmp_path):
    big = b"x" * (10 << 20) + b" loss: nan\n" + b"Gradient overflow.  Skipping step, loss scaler 0 " \
          b"reducing loss scale to 2.0\n"
    p = tmp_path / "big.log"
    p.write_bytes(big)
    evs = list(parse(p))
    assert [(e.kind, e.line_no) for e in evs] == [("nan", 1), ("backoff", 2)]
    assert all(len(e.text) < 1000 for e in evs)
    assert key(logs.scan(p)) == key(evs)


def test_truncated_gzip_is_read_up_to_the_cut_with_a_note(tmp_path):
    """A gzip cut short: the events read so far, then a ``note`` event saying it was cut (parse
    and scan alike); the diagnosis carries a caveat."""
    from fampnb.diagnose import diagnose

    text = ("Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 2.0\n" * 20000)
    p = tmp_path / "t.log.gz"
    p.write_bytes(gzip.compress(text.encode())[:-200])
    for evs in (list(parse(p)), list(logs.scan(p))):
        assert len(evs) > 100 and evs[-1].kind == "note" and evs[-1].rule == "truncated"
        assert all(e.kind == "backoff" for e in evs[:-1])
    d = diagnose(parse(p))
    assert any("cut short" in c for c in d.caveats)


def test_utf16_and_latin1_logs_read_like_utf8(tmp_path):
    """UTF-16 with a BOM (PowerShell's ``>``) and without one, and Latin-1 bytes, give the events
    of the same log written in UTF-8 (parse and scan)."""
    from fampnb.diagnose import diagnose

    lines = [f"step {i} loss {2.0 - i / 100:.3f} loss_scale 65536" for i in range(1, 30)]
    lines += [f"step {i} loss nan loss_scale 1.0 caf\u00e9" for i in range(30, 40)]
    text = "\r\n".join(lines) + "\r\n"
    ref = diagnose(parse(lines))
    for name, data in (("bom.log", text.encode("utf-16")), ("le.log", text.encode("utf-16-le")),
                       ("latin.log", text.encode("latin-1"))):
        p = tmp_path / name
        p.write_bytes(data)
        for d in (diagnose(parse(p)), diagnose(logs.scan(p))):
            assert (d.verdict, d.first_nan_line) == (ref.verdict, ref.first_nan_line), name
    assert ref.first_nan_line == 30


def test_crlf_line_ends():
    data = (b"Loss scaling: 65536 -> 32768 (overflow)\r\n{'loss': nan, 'grad_norm': nan}\r\n"
)
    evs = list(parse(io.BytesIO(data)))
    assert [(e.kind, e.line_no) for e in evs] == [("backoff", 1), ("nan", 2)]
    assert not any(e.text.endswith("\r") for e in evs)


def test_interleaved_multi_rank_lines():
    lines = []
    for i, s in enumerate([32768, 16384, 8192]):
        for rank in range(4):
            lines.append(f"[rank{rank}]: Gradient overflow.  Skipping step, loss scaler 0 "
                         f"reducing loss scale to {s}.0")
            lines.append(f"{rank}: {{'loss': {2.0 - i / 10}, 'grad_norm': 1.0}}")
    evs = list(parse(lines))
    assert sum(e.kind == "backoff" for e in evs) == 12
    assert sum(e.kind == "loss" for e in evs) == 12


# ---- shipped samples -----------------------------------------------------------------------
def test_samples_shipped_with_attribution():
    names = logs.sample_logs()
    assert len(names) == 14
    readme = Path(str(next(iter(names.values())))).parent / "README.md"
    assert readme.exists() and "GitHub" in readme.read_text()
    assert logs.read_sample(SAMPLE)[0].startswith("Gradient overflow.")
    with pytest.raises(KeyError):
        logs.read_sample("nope.log")


def test_expected_verdicts_come_from_the_readme():
    table = logs.expected_verdicts()
    assert set(table) == set(logs.sample_logs())
    assert {v["verdict"] for v in table.values()} <= {"healthy", "overflow", "data", "no-scaler",
                                                      "unknown"}
    assert table["apex_apex_834.log"]["verdict"] == "overflow"
    assert table["apex_apex_834.log"]["certainty"] == "certain"


@pytest.mark.parametrize("name", sorted(logs.sample_logs()))
def test_scan_equals_parse_on_samples(name):
    data = logs.sample_logs()[name].read_bytes()
    assert key(logs.scan(io.BytesIO(data))) == key(parse(io.BytesIO(data)))


def test_import_is_light():
    code = ("import sys, fampnb.logs, fampnb.diagnose, fampnb.report; "
            "print(sorted(m for m in ('matplotlib', 'torch', 'ipywidgets') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "[]", out.stderr


# ---- property-based ------------------------------------------------------------------------
WORDS = st.sampled_from(["loss", "nan", "inf", "Loss scaling:", "->", "overflow", "reducing to",
                         "Attempted loss scale:", "|", "iteration", "skipped=", "step=", "'loss':",
                         "grad_norm", ":", "=", "1e400", "-inf", "65536", "0.5", "\r", "\n", " ",
                         "[1][2/3]", "loss scale:", "Minimum loss scale reached (", ")", "{", "}"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(WORDS, max_size=60).map("".join))
def test_property_logish_text(text):
    evs = list(parse(text.splitlines() or [""]))
    for e in evs:
        assert e.kind in logs.KINDS and e.line_no >= 1
        json.dumps(e.to_dict(), allow_nan=False)
    assert key(logs.scan(io.BytesIO(text.encode()))) == key(parse(io.BytesIO(text.encode())))


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=3000))
def test_property_arbitrary_bytes(data):
    evs = list(parse(io.BytesIO(data)))
    assert all(e.kind in logs.KINDS for e in evs)
    assert key(logs.scan(io.BytesIO(data))) == key(evs)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=2000))
def test_property_arbitrary_text(text):
    assert all(e.kind in logs.KINDS for e in parse(io.StringIO(text)))


# ---- the fast scan on multi-block logs (small blocks to exercise every boundary) -------------
def _hf_log(n: int, nan_at: int | None = None, seed: int = 0) -> list[str]:
    import random

    rng = random.Random(seed)
    out = ["TrainingArguments(fp16=True, logging_steps=10)"]
    for i in range(n):
        out.append(f" {i * 100 // n:3d}%|███       | {i}/{n} [00:{i % 60:02d}<01:00, 1.{i % 9}it/s]")
        if i % 10 == 0:
            loss = "nan" if nan_at is not None and i >= nan_at else f"{2.5 - i / n + rng.random() / 10:.4f}"
            out.append(f"{{'loss': {loss}, 'grad_norm': {rng.random():.4f}, "
                       f"'learning_rate': 1e-05, 'epoch': {i / n:.2f}}}")
        if i in (n // 3, n // 3 + 1):
            out.append(f"[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: "
                       f"{65536 >> (i - n // 3)}, reducing to {32768 >> (i - n // 3)}")
        if i % 50 == 0:
            out.append(f"[Rank 0] step={i}, skipped={2 if i > n // 3 else 0}, lr=[1e-05]")
    return out


def _megatron_log(n: int, drop_at: int, bf16: bool = False) -> list[str]:
    out = []
    scale = 1.0 if bf16 else 65536.0
    for i in range(1, n + 1):
        skipped = 0
        if not bf16 and i >= drop_at and scale > 1:
            scale /= 2
            skipped = 1
        loss = "" if (bf16 and i >= drop_at) else f"lm loss: {2.0 - i / n:.6E} | "
        out.append(f" iteration {i:8d}/{n:8d} | consumed samples: {i * 64:12d} | learning rate: "
                   f"1.000E-04 | global batch size:    64 | {loss}loss scale: {scale:.1f} | "
                   f"grad norm: 0.500 | number of skipped iterations: {skipped:3d} | number of "
                   f"nan iterations:   0 |")
    return out


def _ds_cascade_log(n: int, at: int, depth: int) -> list[str]:
    out = []
    for i in range(n):
        if at <= i < at + depth:
            k = 16 - (i - at)
            out.append(f"[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: "
                       f"{2 ** k}, reducing to {2 ** (k - 1)}")
        out.append(f"{{'loss': {2.0 - i / n:.4f}, 'grad_norm': 0.5, 'epoch': {i / n:.3f}}}")
        out.append(f"  {i}/{n} [00:00<00:00, 1.0it/s]")
    return out


@pytest.mark.parametrize("lines", [
    _hf_log(12000), _hf_log(12000, nan_at=7000), _hf_log(12000, nan_at=20),
    _hf_log(40000, nan_at=4000), _ds_cascade_log(9000, 5000, 3), _ds_cascade_log(9000, 8990, 9),
    _megatron_log(6000, 4000), _megatron_log(6000, 4000, bf16=True),
    _megatron_log(6000, 10**9),
], ids=["hf-healthy", "hf-midrun-nan", "hf-early-nan", "hf-nan-on-most-lines",
        "ds-cascade-recovers", "ds-cascade-at-the-end", "megatron-collapse", "megatron-bf16-nan",
        "megatron-healthy"])
def test_scan_verdict_equals_parse_on_long_logs(lines, monkeypatch, tmp_path):
    from fampnb.diagnose import diagnose
    from fampnb.logs import _blocks as _logscan
    from fampnb.logs import _pick as _logpick
    from fampnb.logs import _scan as _scanmod

    monkeypatch.setattr(_logscan, "BLOCK", 64 << 10)
    monkeypatch.setattr(_logpick, "SAMPLE", 200)
    monkeypatch.setattr(_logpick, "EDGE", 4 << 10)
    data = ("\n".join(lines) + "\n").encode()
    full = diagnose(parse(io.BytesIO(data)))
    fast = diagnose(logs.scan(io.BytesIO(data)))
    assert (fast.verdict, fast.first_nan_line, fast.backoffs, fast.final_scale) == (
        full.verdict, full.first_nan_line, full.backoffs, full.final_scale)
    p = tmp_path / "run.log"
    p.write_bytes(data)
    mapped = diagnose(logs.scan(p))    # one process, memory-mapped blocks
    assert mapped.to_dict() == fast.to_dict()
    monkeypatch.setattr(_scanmod, "PARALLEL_BYTES", 1)
    par = diagnose(logs.scan(p, workers=2))
    assert (par.verdict, par.first_nan_line, par.final_scale) == (
        full.verdict, full.first_nan_line, full.final_scale)
    assert {e.line_no for e in par.evidence} <= {e.line_no for e in parse(io.BytesIO(data))}


def test_scan_paths_opened_at_call_time_progress_and_pipes(tmp_path, monkeypatch):
    """A missing path fails when ``scan`` is called (the doctor's workers start then); a big
    file reports progress up to its size; a named pipe is read once, as a stream."""
    import os
    import threading

    from fampnb.logs import _blocks as _logscan

    with pytest.raises(FileNotFoundError):
        logs.scan(tmp_path / "missing.log")
    data = ("\n".join(_hf_log(3000, nan_at=2000)) + "\n").encode()
    p = tmp_path / "run.log"
    p.write_bytes(data)
    monkeypatch.setattr(_logscan, "BLOCK", 16 << 10)
    seen: list[tuple[int, int]] = []
    evs = list(logs.scan(p, progress=lambda done, total: seen.append((done, total))))
    assert key(evs) == key(logs.scan(io.BytesIO(data)))
    assert len(seen) > 3 and seen[-1] == (len(data), len(data))
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    if not hasattr(os, "mkfifo"):
        return
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_bytes, args=(data,))
    writer.start()
    try:
        assert key(logs.scan(fifo)) == key(evs)
    finally:
        writer.join(10)


# ---- wordings and metric styles added for the held-out generalisation -------------------------
NAN_SPELLINGS = [("nan", "nan"), ("NaN", "nan"), ("nan.0", "nan"), ("-nan", "nan"),
                 ("inf", "inf"), ("-inf", "-inf"), ("Infinity", "inf")]
STYLES = [
    "Epoch 2:  40%|####      | 400/1000 [00:41<01:02,  9.6it/s, v_num=1, train_loss_step={v}]",
    "Step [400/1000] loss: {v}  lr: 1.0e-04",
    "{{'loss': {v}, 'learning_rate': 1e-05, 'epoch': 0.4}}",
    '{{"step": 400, "loss": {v}, "lr": 1e-05}}',
    "epoch 1 iter 400: loss={v}, acc=0.12",
]


@pytest.mark.parametrize("spelling,value", NAN_SPELLINGS)
@pytest.mark.parametrize("style", STYLES)
def test_non_finite_spellings_in_every_metric_style(style, spelling, value):
    e = one(style.format(v=spelling))
    assert e.kind == "nan" and str(e.loss) == value, e


@pytest.mark.parametrize("style", STYLES)
def test_finite_loss_in_every_metric_style(style):
    e = one(style.format(v="0.4375"))
    assert e.kind == "loss" and e.loss == 0.4375


def test_exact_total_loss_key_wins_over_components():
    line = ("2024-01-02 10:00:00,000 - mmdet - INFO - Epoch [2][100/900]\tlr: 1.0e-04, "
            "det.loss_cls: 0.4410, det.loss_bbox: 0.2207, seg.loss_mask: 0.1500, loss: nan, "
            "grad_norm: nan")
    e = one(line)
    assert e.kind == "nan" and math.isnan(e.loss)
    e = one("Epoch [1][10/50]  loss_rpn: 0.31, loss_rcnn: 0.42, total_loss: 0.73, grad_norm: 3.1")
    assert (e.kind, e.loss) == ("loss", 0.73)
    e = one(" iteration      300/   10000 | lm loss: 2.500000E+00 | mtp loss: 9.0E+00 |"
            " loss scale: 1.0 | grad norm: 0.400 | number of skipped iterations:   0 |")
    assert e.loss == 2.5


def test_legacy_apex_two_line_overflow():
    lines = ["Grad overflow on iteration 30", "Using dynamic loss scale of 4096.0",
             "train loss 1.5", "Grad overflow on iteration 31", "Using dynamic loss scale of 2048.0",
             "Using dynamic loss scale of 4096.0"]
    evs = [e for e in parse(lines) if e.kind in ("backoff", "growth")]
    assert [(e.kind, e.scale_before, e.scale_after, e.line_no) for e in evs] == [
        ("backoff", None, 4096.0, 2), ("backoff", 4096.0, 2048.0, 5),
        ("growth", 2048.0, 4096.0, 6)]
    assert all(e.framework == "apex" for e in evs)


def test_log2_scales():
    evs = list(parse(["Found NaN, decreased lg_loss_scale to 13.0",
                      "Found Inf, decreased lg_loss_scale to 12.0",
                      "increased log2_loss_scale to 13", "lg_loss_scale=-2.0 loss=0.31"]))
    assert [(e.kind, e.scale_before, e.scale_after) for e in evs] == [
        ("backoff", None, 8192.0), ("backoff", 8192.0, 4096.0), ("growth", 4096.0, 8192.0),
        ("loss", None, 0.25)]
    far = one("Found NaN, decreased lg_loss_scale to -20000.5")   # below the float range
    assert far.kind == "backoff" and far.scale_after == 0.0


def test_tf_nan_endings():
    for line in ["ERROR:tensorflow:Model diverged with loss = NaN.",
                 "E0101 10:00:00.000000 1234 basic_session_run_hooks.py:760] Model diverged with "
                 "loss = NaN.",
                 "tensorflow.python.training.basic_session_run_hooks.NanLossDuringTrainingError: "
                 "NaN loss during training.",
                 "Batch 17: Invalid loss, terminating training"]:
        e = one(line)
        assert (e.kind, e.rule, e.framework) == ("nan", "tf-nan-loss", "keras"), line


@pytest.mark.parametrize("line,prec", [
    ("Using bfloat16 Automatic Mixed Precision (AMP)", "bf16"),
    ("Using 16bit native Automatic Mixed Precision (AMP)", "fp16"),
    ("Mixed precision compatibility check (mixed_float16): OK", "fp16"),
    ("INFO:tensorflow:Mixed precision policy: mixed_bfloat16", "bf16"),
    ("trainer: precision=bf16-mixed", "bf16"),
    ("amp_dtype: bfloat16", "bf16"),
    ("Trainer(precision=16)", "fp16"),
    ("precision: fp16 autocast, GradScaler(init_scale=65536)", "fp16"),
    ("run config: precision: bf16, loss scaling: off", "bf16"),
    ("[2024-03-02 10:11:12,345] [INFO] [config.py:988:print]   bfloat16_enabled ............. True",
     "bf16"),
    ("[2024-03-02 10:11:12,345] [INFO] [config.py:988:print]   fp16_enabled ................. True",
     "fp16"),
    ("  fp16 ............................................ True", "fp16"),
])
def test_precision_start_up_lines(line, prec):
    evs = [e for e in parse([line]) if e.rule == "precision"]
    assert [e.precision for e in evs] == [prec]


@pytest.mark.parametrize("line", [
    "[2024-03-02 10:11:12,345] [INFO] [config.py:988:print]   bfloat16_enabled ............. False",
    "[2024-03-02 10:11:12,345] [INFO] [config.py:988:print]   fp16_enabled ................. False",
    "epoch 3 | precision: 16.4 | recall: 12.0",
    "Trainer(precision='16-true')",
])
def test_precision_lines_that_state_nothing(line):
    assert [e.precision for e in parse([line]) if e.rule == "precision"] == []


# ---- records wrapped at the terminal width ---------------------------------------------------
def _wrappable() -> list[tuple[str, int, int]]:
    """(line, first cut, last cut) for each backoff wording of ``BACKOFFS`` that ``_logwrap``
    knows: a cut anywhere after the wording's anchor and before its last number."""
    from fampnb.logs._num import NUM
    from fampnb.logs._wrap import WORDINGS, _full_rx

    out = []
    for line, *_ in BACKOFFS:
        low = line.lower()
        for anchor, rest in WORDINGS:
            m = _full_rx(anchor, rest).search(low)
            if m:
                last = list(re.finditer(NUM, m.group(0)))[-1]
                out.append((line, m.start() + len(anchor), m.start() + last.start()))
                break
    return out


WRAPPABLE = _wrappable()


def test_most_backoff_wordings_can_be_wrapped():
    assert len(WRAPPABLE) >= 10


@pytest.mark.parametrize("line,first,last", WRAPPABLE, ids=[w[0][:40] for w in WRAPPABLE])
def test_wrapped_backoff_reads_as_one_record(line, first, last):
    """A record split over two physical lines anywhere inside its wording (mid-word too) reads
    as the same single backoff, on the first line; a space lost at the break is put back."""
    whole = one(line)
    for cut in range(first, last + 1):
        pairs = [(line[:cut], line[cut:])]
        if line[cut] == " ":
            pairs.append((line[:cut], line[cut + 1:]))
        for head, tail in pairs:
            evs = [e for e in parse([head, tail]) if e.kind == "backoff"]
            assert [(e.line_no, e.scale_before, e.scale_after) for e in evs] == [
                (1, whole.scale_before, whole.scale_after)], (head, tail)
            assert evs[0].text == head + tail or evs[0].text == head + " " + tail


def test_wrap_is_only_taken_when_the_next_line_completes_the_record():
    head = ("[2023-02-21 22:12:48,690] [INFO] [stage_1_and_2.py:1762:step] [deepspeed] OVERFLOW! "
            "Rank 0 Skipping step. Attempted loss sc")
    evs = list(parse([head, "{'loss': 1.25, 'grad_norm': 0.5}"]))
    assert [(e.line_no, e.kind) for e in evs] == [(1, "skip"), (2, "loss")]
    # a blank line between: not a wrap; and a head at the very end is read on its own
    assert [e.kind for e in parse([head, "", "ale: 4096.0, reducing to 2048.0"])] == ["skip"]
    assert [e.kind for e in parse([head])] == ["skip"]
    # a complete line that ends in a number is never joined with the next one
    done = "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 4096, reducing to 20"
    evs = list(parse([done, "48"]))
    assert [(e.kind, e.scale_after) for e in evs] == [("backoff", 20.0)]


def _wrapped_ds_log(n: int) -> list[str]:
    out = []
    scale = 65536
    for i in range(n):
        out.append(f"[losses/total_loss: {0.5 - i / (4 * n):.2f}]:  2%| | {i}/{n} [00:00<00:00]")
        if i % 97 == 0 or i > n - 6:
            out.append("[2023-02-21 22:12:48,690] [INFO] [stage_1_and_2.py:1762:step] [deepspeed]"
                       " OVERFLOW! Rank 0 Skipping step. Attempted loss sc")
            out.append(f"ale: {scale:.1f}, reducing to {scale / 2:.1f}")
            scale = scale // 2 if i > n - 6 else scale
    return out


def test_records_after_a_rare_line_that_ends_a_block_are_picked_in_the_next(monkeypatch):
    """The ``AFTER`` loss records that follow a rare line are picked also when the line is the
    last one of a block: the next block picks them (the rules count them as a full parse does)."""
    from fampnb.logs import _blocks as _logscan
    from fampnb.logs import _pick as _logpick
    from fampnb.logs._blocks import pick_stream

    monkeypatch.setattr(_logscan, "BLOCK", 4 << 10)
    monkeypatch.setattr(_logpick, "EDGE", 128)
    monkeypatch.setattr(_logpick, "SAMPLE", 10**6)
    head = [f"step {i} loss 2.{i:02d}" for i in range(12)]          # the log's first records
    rare = "OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 4096, reducing to 2048"
    used = sum(len(x) + 1 for x in head) + len(rare) + 1
    filler = ["x" * 40] * ((4096 - used) // 41)
    pad = "y" * (4096 - used - 41 * len(filler) - 1) if 4096 - used - 41 * len(filler) > 1 else ""
    first = head + filler + ([pad] if pad else []) + [rare]
    assert sum(len(x) + 1 for x in first) <= 4096 < sum(len(x) + 1 for x in first) + 41
    after = ["z" * 40] * 3 + [f"step {100 + i} loss 1.{i:02d}" for i in range(6)] + ["x" * 40] * 300
    data = ("\n".join(first + after) + "\n").encode()
    picked = {i for i, _ in pick_stream(io.BytesIO(data), True, True, _logpick.Picker())}
    records = [len(first) + 3 + k for k in range(6)]
    assert len(first) - 1 in picked                                   # the rare line itself
    assert [i in picked for i in records] == [True] * 4 + [False] * 2


def test_scan_joins_wrapped_records_like_parse(monkeypatch, tmp_path):
    from fampnb.diagnose import diagnose
    from fampnb.logs import _blocks as _logscan
    from fampnb.logs import _pick as _logpick
    from fampnb.logs import _scan as _scanmod

    monkeypatch.setattr(_logscan, "BLOCK", 8 << 10)
    monkeypatch.setattr(_logpick, "SAMPLE", 200)
    monkeypatch.setattr(_logpick, "EDGE", 1 << 10)
    data = ("\n".join(_wrapped_ds_log(6000)) + "\n").encode()
    def backoffs(evs):
        return [(e.line_no, e.scale_before, e.scale_after) for e in evs if e.kind == "backoff"]
    full = list(parse(io.BytesIO(data)))
    assert len(backoffs(full)) == 67
    assert backoffs(logs.scan(io.BytesIO(data))) == backoffs(full)
    p = tmp_path / "wrapped.log"
    p.write_bytes(data)
    monkeypatch.setattr(_scanmod, "PARALLEL_BYTES", 1)
    assert backoffs(logs.scan(p, workers=3)) == backoffs(full)
    assert diagnose(logs.scan(p, workers=3)).to_dict()["verdict"] == diagnose(iter(full)).verdict


def test_key_value_tables_are_one_record():
    table = ["-" * 26, "| grad_norm       | 0.51     |", "| log2_loss_scale | 15       |",
             "| loss            | 2.33     |", "| loss_aux        | nan      |",
             "| step            | 4e+03    |", "-" * 26, "some other line",
             "| loss | inf |", "| step | 4.1e+03 |"]
    evs = list(parse(table))
    assert [(e.line_no, e.step, e.explicit, e.kind, e.rule) for e in evs] == [
        (6, 4000, True, "loss", "table"), (10, 4100, True, "nan", "table")]
    assert (evs[0].loss, evs[0].grad_norm, evs[0].scale_after) == (2.33, 0.51, 32768.0)
    # a gap in the line numbers closes a table (the fast reader picks lines); wide rows are not
    # tables, and a fairseq summary is a record of its own
    assert len(list(parse(["| loss | 1.0 |", "", "| loss | 2.0 |"]))) == 2
    assert [e.loss for e in parse(["| loss | 1.0 |", "| loss | 2.0 |"])] == [1.0, 2.0]
    many = [f"| k{i} | {i} |" for i in range(1000)] + ["| loss | 0.5 |"]
    assert [e.loss for e in parse(many)] == [0.5]        # bounded: fields flushed in chunks
    fs = one("| epoch 051 | loss 3.622 | nll_loss 1.9 | num_updates 12960 | loss_scale 0.500 |")
    assert (fs.loss, fs.framework) == (3.622, "fairseq")


def test_scan_reads_the_new_wordings_like_parse(monkeypatch):
    from fampnb.diagnose import diagnose
    from fampnb.logs import _blocks as _logscan
    from fampnb.logs import _pick as _logpick
    from fampnb.logs import _scan as _scanmod  # noqa: F401  (imported as the test ran before)

    monkeypatch.setattr(_logscan, "BLOCK", 64 << 10)
    monkeypatch.setattr(_logpick, "SAMPLE", 200)
    monkeypatch.setattr(_logpick, "EDGE", 4 << 10)
    lines: list[str] = []
    lg = 16.0
    for i in range(1, 6001):
        if i % 50 == 0:
            lines += ["-" * 22, f"| lg_loss_scale | {lg:.3g} |",
                      f"| loss          | {'nan' if i > 5500 else f'{1.0 - i / 9000:.4f}'} |",
                      f"| step          | {i:.3g} |", "-" * 22]
        if i in (3000, 5600, 5700, 5800):
            lg -= 1
            lines.append(f"Found NaN, decreased lg_loss_scale to {lg:.3f}")
        if i == 4000:
            lines += ["Grad overflow on iteration 4000", "Using dynamic loss scale of 512.0"]
        lines.append(f"step {i} done")
    data = ("\n".join(lines) + "\n").encode()
    full = diagnose(parse(io.BytesIO(data)))
    fast = diagnose(logs.scan(io.BytesIO(data)))
    assert full.verdict == "overflow", full.reason
    assert (fast.verdict, fast.backoffs, fast.final_scale) == (
        full.verdict, full.backoffs, full.final_scale)


# ---- the reader's fast paths agree with the full rules -----------------------------------------
HF_KEYS = ("loss", "grad_norm", "learning_rate", "epoch")


@settings(max_examples=200, deadline=None)
@given(pairs=st.lists(st.tuples(st.sampled_from(HF_KEYS),
                                st.floats(allow_nan=False, allow_infinity=False, width=32)),
                      min_size=1, max_size=5),
       step=st.sampled_from([None, 7]), table_open=st.booleans())
def test_hf_plain_dicts_parse_as_the_full_rules_do(pairs, step, table_open):
    """An HF Trainer dict of finite numbers takes a short path (``_logrules._hf_plain``); its
    events and state equal the full path's, whatever the reader's state."""
    import re as _re

    from fampnb.logs import _rules as _logrules
    from fampnb.logs._event import LineState

    text = "{" + ", ".join(f"'{k}': {v!r}" for k, v in pairs) + "}"
    assert _logrules._HF_PLAIN.fullmatch(text), text

    def run() -> tuple[list[Event], LineState]:
        state = LineState(step=step)
        if table_open:
            state.table, state.table_line = {"loss": "1.0"}, 4
        return _logrules.parse_segment(text, 5, state), state

    fast = run()
    plain = _logrules._HF_PLAIN
    _logrules._HF_PLAIN = _re.compile(r"(?!)")        # never matches: the full path
    try:
        full = run()
    finally:
        _logrules._HF_PLAIN = plain
    assert fast == full


def test_hf_plain_leaves_other_dicts_to_the_full_rules():
    from fampnb.logs._rules import _HF_PLAIN

    for line in ("{'loss': nan, 'epoch': 1.0}", "{'loss': 1.0, 'step': 3}",
                 "{'loss': inf}", "{'train_loss': 1.0, 'epoch': 1.0}", "{'loss': 1.0} overflow",
                 "{'Loss': 1.0}", "{'loss': 1,0}", "{'loss': 1e400}x"):
        assert not _HF_PLAIN.fullmatch(line), line


def test_parallel_scan_equals_the_in_process_scan(tmp_path, monkeypatch):
    """Worker processes (``fampnb.logs._parallel``) over byte ranges give the same events as the
    in-process scan; an iterator closed early shuts its pool down."""
    from fampnb.diagnose import diagnose
    from fampnb.logs import _blocks, _scan

    monkeypatch.setattr(_scan, "PARALLEL_BYTES", 1)
    monkeypatch.setattr(_blocks, "BLOCK", 16 << 10)
    p = tmp_path / "run.log"
    p.write_bytes(("\n".join(_hf_log(4000, nan_at=3000)) + "\n").encode())
    par, one = diagnose(logs.scan(p, workers=2)), diagnose(logs.scan(p))
    full = diagnose(logs.parse(p))
    for d in (par, one):
        assert (d.verdict, d.first_nan_line, d.backoffs) == (
            full.verdict, full.first_nan_line, full.backoffs)
    assert full.first_nan_line is not None
    evs = logs.scan(p, workers=2)
    assert next(evs).line_no >= 1
    evs.close()


# ---- TensorBoard event files (the optional extra) -----------------------------------------------
def _tfevents(tmp_path, scalars: list[tuple[int, dict[str, float]]]) -> Path:
    import importlib.util

    from conftest import require

    require(importlib.util.find_spec("tensorboard") is not None,
            "the TensorBoard extra is not installed", "Enable with: pip install -e '.[tensorboard]'")
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    writer = EventFileWriter(str(tmp_path))
    for step, tags in scalars:
        values = [summary_pb2.Summary.Value(tag=t, simple_value=v) for t, v in tags.items()]
        writer.add_event(event_pb2.Event(step=step, wall_time=1.0 + step,
                                         summary=summary_pb2.Summary(value=values)))
    writer.close()
    (path,) = tmp_path.glob("events.out.tfevents.*")
    renamed = tmp_path / "run.bin"             # recognised by content, whatever it is called
    path.rename(renamed)
    return renamed


@pytest.mark.tensorboard
def test_tensorboard_event_file_is_read_by_its_content(tmp_path):
    from fampnb.diagnose import diagnose

    steps = [(s, {"train/loss": 2.0 - s / 100, "train/loss_scale": 65536.0}) for s in range(1, 40)]
    steps += [(s, {"train/loss": math.nan, "train/loss_scale": 1.0}) for s in range(40, 50)]
    p = _tfevents(tmp_path, steps)
    evs = list(parse(p))
    assert len(evs) == 49 and evs[0].step == 1 and evs[0].loss == pytest.approx(1.99)
    assert evs[-1].kind == "nan" and evs[-1].step == 49
    for d in (diagnose(parse(p)), diagnose(logs.scan(p))):
        assert d.verdict == "overflow" and d.first_nan_step == 40


def test_tensorboard_without_the_extra_is_a_one_line_hint(tmp_path, monkeypatch, capsys):
    """An event file (its first record names ``brain.Event:2``) without the tensorboard package:
    ``MissingExtra`` with the install hint, and one line from the CLI."""
    import struct
    import sys

    payload = b"\x09" + struct.pack("<d", 1.0) + b"\x1a\x0dbrain.Event:2"
    p = tmp_path / "events.out.tfevents.1.host"
    p.write_bytes(struct.pack("<Q", len(payload)) + b"\0" * 4 + payload + b"\0" * 4)
    monkeypatch.setitem(sys.modules, "tensorboard.backend.event_processing.event_file_loader", None)
    with pytest.raises(logs.MissingExtra, match="pip install tensorboard"):
        list(parse(p))
    from fampnb.report import doctor_main

    capsys.readouterr()
    assert doctor_main([str(p)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install tensorboard" in err and "Traceback" not in err
