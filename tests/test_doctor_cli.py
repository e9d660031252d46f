"""``python -m fampnb doctor``: reports, --json, exit codes, bad input (never a traceback)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from fampnb import logs
from fampnb.report import doctor_main, render_report, sparkline

REAL = Path(str(next(iter(logs.sample_logs().values())))).parent


def assert_one_clean_line(stderr: str) -> None:
    assert "Traceback" not in stderr
    assert len(stderr.strip().splitlines()) == 1, stderr


def test_human_report(run_cli):
    r = run_cli("doctor", str(REAL / "apex_apex_834.log"))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for part in ("verdict:   OVERFLOW", "reason:", "evidence:", "line       1", "first switch:",
                 "scale:", "caveats:"):
        assert part in out, part
    assert r.stderr == ""
    # evidence lines are shown as they are in the log (apex prints two spaces there)
    raw = (REAL / "apex_apex_834.log").read_text(encoding="utf-8").splitlines()[0]
    assert "overflow.  Skipping" in raw
    assert f"line       1  [backoff] {raw}\n" in out


def test_json_one_object_per_file(run_cli):
    names = sorted(logs.sample_logs())
    r = run_cli("doctor", "--json", *[str(REAL / n) for n in names])
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [Path(row["file"]).name for row in rows] == names
    expected = logs.expected_verdicts()
    assert {Path(row["file"]).name: row["verdict"] for row in rows} == {
        n: expected[n]["verdict"] for n in names}
    assert all({"reason", "evidence", "advice", "caveats", "first_switch"} <= set(row)
               for row in rows)


def test_stdin_and_precision(run_cli):
    text = (REAL / "hf-trainer_LlamaFactory_5660-bf16.log").read_text()
    r = run_cli("doctor", "--json", "--precision", "bf16", "-", stdin=text)
    assert r.returncode == 0, r.stderr
    row = json.loads(r.stdout)
    assert (row["file"], row["verdict"], row["precision"]) == ("-", "no-scaler", "bf16")


@pytest.mark.parametrize("args", [[], ["--nope", "x.log"], ["--precision", "int8", "x.log"]])
def test_usage_errors(run_cli, args):
    r = run_cli("doctor", *args)
    assert r.returncode == 2
    assert_one_clean_line(r.stderr)
    assert "usage" in r.stderr


def test_missing_file_and_directory(run_cli, tmp_path):
    ok = str(REAL / "megatron_nccl_743.log")
    r = run_cli("doctor", "--json", str(tmp_path / "missing.log"), ok)
    assert r.returncode == 2
    assert_one_clean_line(r.stderr)
    assert "missing.log" in r.stderr and "No such file" in r.stderr
    assert json.loads(r.stdout)["verdict"] == "healthy"      # the readable file is still reported
    r = run_cli("doctor", str(tmp_path))
    assert r.returncode == 2
    assert_one_clean_line(r.stderr)
    assert "directory" in r.stderr


def test_empty_garbage_non_utf8_crlf(run_cli, tmp_path):
    files = {"empty.log": b"", "garbage.bin": bytes(range(256)) * 200,
             "latin1.log": "caf\xe9 loss: nan\n".encode("latin-1") * 3,
             "crlf.log": b"Loss scaling: 65536 -> 32768 (overflow)\r\n" * 3 + b"loss: nan\r\n" * 3}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    r = run_cli("doctor", "--json", *[str(tmp_path / n) for n in files])
    assert r.returncode == 0, r.stderr
    rows = {Path(row["file"]).name: row for row in map(json.loads, r.stdout.splitlines())}
    assert rows["empty.log"]["verdict"] == "unknown"
    assert rows["garbage.bin"]["verdict"] == "unknown"
    assert rows["latin1.log"]["verdict"] == "data"
    assert rows["crlf.log"]["verdict"] == "overflow"


def test_truncated_gzip(run_cli, tmp_path):
    p = tmp_path / "run.log.gz"
    p.write_bytes(gzip.compress(b"{'loss': 1.0, 'grad_norm': 0.5}\n" * 50000)[:-100])
    r = run_cli("doctor", "--json", str(p))
    assert r.returncode == 0, r.stderr       # read up to the cut: a verdict, with a caveat
    row = json.loads(r.stdout)
    assert row["verdict"] == "healthy" and row["events_read"] > 1000
    assert any("cut short" in c for c in row["caveats"])


def test_gzip_and_long_line(run_cli, tmp_path):
    gz = tmp_path / "ok.log.gz"
    gz.write_bytes(gzip.compress((REAL / "apex_apex_834.log").read_bytes()))
    long = tmp_path / "long.log"
    long.write_bytes(b"y" * (10 << 20) + b"\n")
    r = run_cli("doctor", "--json", str(gz), str(long))
    assert r.returncode == 0, r.stderr
    v = [json.loads(line)["verdict"] for line in r.stdout.splitlines()]
    assert v == ["overflow", "unknown"]


def test_progress_on_stderr_for_big_files(tmp_path, capsys):
    p = tmp_path / "big.log"
    line = b"{'loss': 1.2345, 'grad_norm': 0.5, 'learning_rate': 1e-05, 'epoch': 0.5}\n"
    with open(p, "wb") as fh:
        for _ in range(52):
            fh.write(line * ((1 << 20) // len(line) + 1))
    assert p.stat().st_size > 50 * 1024 * 1024
    assert doctor_main([str(p)]) == 0
    err = capsys.readouterr().err
    assert "100%" in err and "Traceback" not in err


def test_sparkline_and_render():
    assert sparkline([]) == ""
    s = sparkline([65536, 32768, 16384, 1])
    assert len(s) == 4 and s[0] == "█" and s[-1] == "▁"
    assert sparkline([1.0, 0.0, float("nan")], ascii_only=True)[1:] == "!!"
    assert len(sparkline([2.0 ** (i % 20) for i in range(1000)], width=40)) == 40
    from fampnb.diagnose import diagnose

    text = render_report(diagnose(logs.parse(logs.read_sample("megatron_nccl_743.log"))), "x",
                         ascii_only=True)
    assert text.startswith("== x ==") and "HEALTHY" in text


def test_evidence_text_is_verbatim_and_long_lines_keep_both_ends():
    from fampnb.report import EVIDENCE_WIDTH, evidence_text

    assert evidence_text("\tGradient overflow.  Skipping step,  loss  \r\n") == (
        "\tGradient overflow.  Skipping step,  loss  ")
    long = "x" * 50 + "  middle  " + "y" * 200 + "| loss: nan |"
    cut = evidence_text(long)
    assert len(cut) == EVIDENCE_WIDTH and cut.startswith("x" * 30) and cut.endswith("| loss: nan |")
    assert " ... " in cut


def test_report_names_log2_scales_below_the_float_range():
    from fampnb.diagnose import diagnose

    lines = ["| lg_loss_scale | -1.6e+04 |", "| loss | nan |", "| step | 1.5e+05 |", "-" * 20]
    lines += [f"Found NaN, decreased lg_loss_scale to {-16001.25 - k:.3f}" for k in range(5)]
    text = render_report(diagnose(logs.parse(lines)), "lg", ascii_only=True)
    assert "2^-16000 -> 2^-16005.25 in 5 backoff records" in text and "0 -> 0" not in text
    # the counters line too: the smallest and the last scale by their printed logarithms
    assert "scale: min 2^-16005.25, final 2^-16005.25" in text, text
    d = diagnose(logs.parse(lines))
    assert (d.min_scale, d.min_scale_log2) == (0.0, -16005.25) == (d.final_scale, d.final_scale_log2)
    assert json.loads(json.dumps(d.to_dict()))["min_scale_log2"] == -16005.25
