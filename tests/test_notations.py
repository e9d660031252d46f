"""The log doctor reads the metric notations real logs use (issue 16).

Written from the spec (the issue and docs/DESIGN.md), not from the doctor's code. Four runs whose verdict
is unambiguous (tests/notation_runs.py) are rendered in every notation and must get their verdict from
``diagnose(parse(lines))``, ``diagnose(scan(path))`` and the CLI; then encodings, a cut gzip, a 100 MB
line, torchrun rank prefixes, a NaN traceback at iteration 0, and an ``unknown`` that says why.
"""

from __future__ import annotations

import gzip
import json
import math
import re
import tracemalloc
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from notation_runs import (
    CARRIES_SCALE,
    NOTATIONS,
    RUNS,
    Run,
    data_run,
    healthy_run,
    no_scaler_run,
    overflow_run,
    pairs,
    render,
    text,
)

from fampnb.diagnose import diagnose
from fampnb.logs import parse, scan

DEFAULT = {name: make() for name, make in RUNS.items()}
PAIRS = pairs()
TARGET_SHARE = 0.95


def _file_name(notation: str) -> str:
    # trainer_state.json is recognised by its content, whatever the file is called
    return "state.txt" if notation == "trainer_state" else "train.log"


def _write(tmp: Path, run: Run, notation: str) -> Path:
    path = tmp / f"{run.name}-{notation}" / _file_name(notation)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text(render(run, notation)), encoding="utf-8")
    return path


def _words(d) -> str:
    """Everything the diagnosis says in prose (reason, caveats, advice)."""
    parts = [str(d.reason)] + [str(c) for c in (d.caveats or [])] + [str(a) for a in (d.advice or [])]
    return " ".join(parts)


def _verdict_or_error(lines: list[str]) -> tuple[str, str]:
    try:
        d = diagnose(parse(lines))
    except Exception as exc:  # a miss, reported with the rest: the share test lists them all
        return "raised", f"{type(exc).__name__}: {exc}"
    return d.verdict, str(d.reason)


def test_the_corpus_covers_the_issue():
    """The corpus itself: >= 14 notations, >= 12 per run, every verdict-bearing run carries a scale."""
    assert len(NOTATIONS) >= 14
    per_run = defaultdict(list)
    for run, nt in PAIRS:
        per_run[run].append(nt)
    assert set(per_run) == {"data", "no-scaler", "overflow", "healthy"}
    assert all(len(v) >= 12 for v in per_run.values()), {k: len(v) for k, v in per_run.items()}
    for run, nt in PAIRS:
        lines = render(DEFAULT[run], nt)
        assert lines and all("\n" not in ln for ln in lines)
        if DEFAULT[run].needs_scale:
            assert CARRIES_SCALE[nt]
    # the runs are what the spec says
    ov = [r.scale for r in DEFAULT["overflow"].records]
    assert ov[0] == 65536.0 and ov[-1] < 1 and all(b in (a, a / 2) for a, b in zip(ov, ov[1:]))
    assert all(not math.isfinite(r.loss) for r in DEFAULT["data"].records)
    ns = DEFAULT["no-scaler"].records
    first_bad = next(i for i, r in enumerate(ns) if not math.isfinite(r.loss))
    assert ns[first_bad].step > 200 and all(r.scale == 1.0 for r in ns)
    assert all(not math.isfinite(r.loss) for r in ns[first_bad:])
    hs = DEFAULT["healthy"].records
    assert all(math.isfinite(r.loss) for r in hs) and hs[-1].loss < hs[0].loss
    assert hs[0].scale == 65536.0 and hs[10].scale <= 16384.0


@pytest.mark.parametrize(("run", "notation"), PAIRS, ids=[f"{r}-{n}" for r, n in PAIRS])
def test_pair(run, notation):
    """Every (run, notation) pair gets the run's verdict from diagnose(parse(lines))."""
    d = diagnose(parse(render(DEFAULT[run], notation)))
    assert d.verdict == run, f"{run} rendered as {notation}: got {d.verdict!r} ({d.reason})"


def test_matrix_share_right():
    """The issue's target: >= 95% of the pairs right; prints the share per notation and lists the misses."""
    per_nt: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    misses = []
    for run, nt in PAIRS:
        got, why = _verdict_or_error(render(DEFAULT[run], nt))
        per_nt[nt][1] += 1
        if got == run:
            per_nt[nt][0] += 1
        else:
            misses.append(f"{run} in {nt}: got {got} ({why[:120]})")
    right = sum(v[0] for v in per_nt.values())
    report = "\n".join(f"  {nt:18s} {ok}/{n}" for nt, (ok, n) in per_nt.items())
    print(f"\nmatrix: {right} of {len(PAIRS)} pairs right\n{report}")
    assert right / len(PAIRS) >= TARGET_SHARE, (
        f"{right} of {len(PAIRS)} pairs right ({right / len(PAIRS):.0%} < {TARGET_SHARE:.0%}); misses:\n  "
        + "\n  ".join(misses))


def _sample() -> list[tuple[str, str]]:
    """Each notation once, the runs taken in turn (only the runs a notation can render)."""
    out = []
    for i, nt in enumerate(NOTATIONS):
        runs = [r for r, n in PAIRS if n == nt]
        out.append((runs[i % len(runs)], nt))
    return out


SAMPLE = _sample()


@pytest.mark.parametrize(("run", "notation"), SAMPLE, ids=[f"{r}-{n}" for r, n in SAMPLE])
def test_scan_and_parse_of_a_file(tmp_path, run, notation):
    path = _write(tmp_path, DEFAULT[run], notation)
    assert diagnose(scan(path)).verdict == run
    assert diagnose(scan(str(path))).verdict == run
    assert diagnose(parse(path)).verdict == run


def test_cli_json_on_a_sample(tmp_path, run_cli):
    paths = [_write(tmp_path, DEFAULT[run], nt) for run, nt in SAMPLE]
    res = run_cli("doctor", *map(str, paths), "--json")
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    objs = [json.loads(ln) for ln in res.stdout.splitlines() if ln.strip()]
    assert len(objs) == len(paths)
    for path, obj in zip(paths, objs):  # one object per file, in the order given
        assert Path(str(obj.get("file", path))).name == path.name, (obj.get("file"), path)
    got = {f"{run}-{nt}": obj["verdict"] for (run, nt), obj in zip(SAMPLE, objs)}
    assert got == {f"{run}-{nt}": run for run, nt in SAMPLE}


# ----------------------------------------------------------------------------------- random variants

@st.composite
def variants(draw) -> tuple[Run, str]:
    name = draw(st.sampled_from(list(RUNS)))
    seed = draw(st.integers(0, 2**20))
    if name == "data":
        run = data_run(seed, n=draw(st.integers(5, 60)), every=draw(st.sampled_from([1, 10])))
    elif name == "no-scaler":
        every = draw(st.sampled_from([1, 10]))
        run = no_scaler_run(seed, healthy_steps=draw(st.integers(200, 800 if every == 1 else 3000)),
                            every=every, nan_records=draw(st.integers(3, 30)))
    elif name == "overflow":
        run = overflow_run(seed, prefix=draw(st.integers(20, 200)), nan_after=draw(st.integers(1, 8)),
                           floor_exp=draw(st.integers(-4, -1)))
    else:
        run = healthy_run(seed, n=draw(st.integers(150, 500)), calib=draw(st.integers(2, 4)),
                          growth=draw(st.integers(60, 250)))
    notation = draw(st.sampled_from([n for n in NOTATIONS if CARRIES_SCALE[n] or name == "data"]))
    return run, notation


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variants(), st.booleans())
def test_random_variant_parse_and_scan_agree(tmp_path_factory, case, keepends):
    run, notation = case
    body = text(render(run, notation))
    path = tmp_path_factory.mktemp("v") / _file_name(notation)
    path.write_text(body, encoding="utf-8")
    by_lines = diagnose(parse(body.splitlines(keepends=keepends))).verdict
    by_file = diagnose(scan(path)).verdict
    assert by_lines == by_file == run.verdict, (notation, by_lines, by_file)


# ----------------------------------------------------------------------------------------- encodings

HEADER = "dataset: «wikitext-103» (Müller, résumé), µbatch 4"  # every character exists in Latin-1


@pytest.mark.parametrize(("encoding", "newline"), [("utf-16", "\r\n"), ("utf-8-sig", "\n"),
                                                   ("latin-1", "\n")],
                         ids=["utf16-bom-powershell", "utf8-bom", "latin1"])
@pytest.mark.parametrize("run", ["overflow", "no-scaler"])
def test_encodings_give_the_utf8_verdict(tmp_path, run, encoding, newline):
    lines = [HEADER] + render(DEFAULT[run], "colon_comma")
    utf8 = tmp_path / "utf8.log"
    utf8.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))
    other = tmp_path / f"{encoding}.log"
    other.write_bytes((newline.join(lines) + newline).encode(encoding))
    if encoding == "utf-16":
        assert other.read_bytes()[:2] in (b"\xff\xfe", b"\xfe\xff")  # the BOM PowerShell writes
    want = diagnose(scan(utf8)).verdict
    assert want == run
    assert diagnose(scan(other)).verdict == want
    assert diagnose(parse(other)).verdict == want


def test_cut_gzip_gives_a_verdict_and_says_it_was_cut(tmp_path):
    body = text(render(data_run(seed=3, n=3000), "jsonl")).encode()
    whole = gzip.compress(body)
    path = tmp_path / "train.log.gz"
    path.write_bytes(whole[: len(whole) // 2])
    for d in (diagnose(scan(path)), diagnose(parse(path))):
        assert d.verdict == "data"
        said = " ".join(str(c) for c in d.caveats)
        assert re.search(r"trunc|cut|incomplete|unexpected end", said, re.I), d.caveats


def test_a_100mb_line_without_newline_is_read_in_bounded_memory(tmp_path):
    path = tmp_path / "train.log"
    with path.open("wb") as f:
        f.write(text(render(data_run(seed=4, n=20), "jsonl")).encode())
        chunk = b"=" * (1 << 20)
        for _ in range(100):  # a 100 MB progress bar that never ended
            f.write(chunk)
    tracemalloc.start()
    try:
        d = diagnose(scan(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert d.verdict == "data"
    assert peak < 20 * 2**20, f"peak {peak / 2**20:.1f} MiB while reading a 100 MiB line"


# ------------------------------------------------------------------------------------- ranks, errors

def test_ranks_that_disagree_are_not_healthy_and_are_named():
    ok = no_scaler_run(seed=5, healthy_steps=300).records[:40]
    bad = data_run(seed=5, n=40).records
    r0 = render(Run("no-scaler", ok, 1000, 250), "kv_space")
    r1 = render(Run("data", bad, 1000, 250), "kv_space")
    lines = [ln for pair in zip(r0, r1) for ln in (f"[rank0]:{pair[0]}", f"[rank1]:{pair[1]}")]
    d = diagnose(parse(lines))
    assert d.verdict != "healthy"
    said = _words(d)
    assert re.search(r"rank", said, re.I), said
    assert re.search(r"disagree|differ|mismatch|inconsistent|not all|only (on )?rank|one rank|diverge",
                     said, re.I), said


DETECTRON2 = """\
[05/01 10:00:00 d2.engine.defaults]: Model:
GeneralizedRCNN(
  (backbone): FPN(
[05/01 10:00:03 d2.data.build]: Using training sampler TrainingSampler
[05/01 10:00:05 d2.engine.train_loop]: Starting training from iteration 0
ERROR [05/01 10:00:07 d2.engine.train_loop]: Exception during training:
Traceback (most recent call last):
  File "/opt/detectron2/detectron2/engine/train_loop.py", line 155, in train
    self.run_step()
  File "/opt/detectron2/detectron2/engine/defaults.py", line 498, in run_step
    self._trainer.run_step()
  File "/opt/detectron2/detectron2/engine/train_loop.py", line 310, in run_step
    self._write_metrics(loss_dict, data_time)
  File "/opt/detectron2/detectron2/engine/train_loop.py", line 347, in _write_metrics
    raise FloatingPointError(
FloatingPointError: Loss became infinite or NaN at iteration=0!
loss_dict = {'loss_cls': nan, 'loss_box_reg': nan, 'loss_rpn_cls': 0.6931, 'loss_rpn_loc': nan}
[05/01 10:00:07 d2.engine.hooks]: Total training time: 0:00:02 (0:00:00 on hooks)
"""

TORCHVISION = """\
Creating data loaders
Creating model
Start training
Loss is nan, stopping training
{'loss_classifier': tensor(nan, device='cuda:0'), 'loss_box_reg': tensor(nan, device='cuda:0'), \
'loss_objectness': tensor(0.6930, device='cuda:0'), 'loss_rpn_box_reg': tensor(nan, device='cuda:0')}
"""

RAISED = """\
Start training
Traceback (most recent call last):
  File "train.py", line 212, in <module>
    main(args)
  File "train.py", line 160, in main
    train_one_epoch(model, optimizer, data_loader, device, epoch)
  File "train.py", line 48, in train_one_epoch
    raise RuntimeError(f"Loss is {loss_value}, stopping training")
RuntimeError: Loss is nan, stopping training
"""


@pytest.mark.parametrize("log", [DETECTRON2, TORCHVISION, RAISED],
                         ids=["detectron2-iteration0", "torchvision-print", "runtimeerror"])
def test_a_loss_nan_error_at_the_first_iteration_is_data(log):
    d = diagnose(parse(log.splitlines()))
    assert d.verdict == "data", (d.verdict, d.reason)


def test_unknown_says_what_it_found():
    lines = [json.dumps({"step": s, "loss": v}) for s, v in [(1, 2.31), (2, 2.27), (3, 2.25)]]
    d = diagnose(parse(lines))
    assert d.verdict in ("unknown", "healthy")
    if d.verdict == "unknown":
        assert re.search(r"\b3\b", str(d.reason)), d.reason
