"""Log doctor throughput: ``python -m fampnb doctor`` vs ``grep -ciE`` on a 200 MB generated log.

Writes a DeepSpeed ZeRO fp16 + HF Trainer log (tqdm bars every step, ``step=N, skipped=K`` and a
Trainer dict every 10 steps, start-up calibration and rare isolated backoffs glued to the bars),
with the scale sequence from ``fampnb.scaler.simulate`` (DeepSpeedScaler) when that module is
present, else from a built-in halving/doubling rule.  Then times, side by side in one run (median
of ``--repeat`` alternating runs):

- ``grep -ciE 'overflow|nan|inf|loss scal' FILE`` (the scan a user would otherwise run), and
- ``python -m fampnb doctor --json FILE`` (a fresh process: start-up included),

and prints both wall times and their ratio (target <= 3: the median of the ratios of each doctor
run to the grep run just before it, so that a slow spell of this shared machine hits both sides of
a ratio alike), the CPU times (user + system, the doctor's worker processes included: on a loaded
machine the wall ratio is noisy, the CPU ratio is not), and the doctor's peak RSS (target
< 300 MB), each command measured through its own helper process.

``--floor`` times, in the same alternation, what any doctor of this design pays before it parses a
line: the interpreter's start, the doctor on an empty log (start-up and imports: mostly compiling
the rules' regular expressions) and a bare template pass (``TEMPLATE_PASS``: read, map digits to 0,
split the lines, take their set; the standard library's fastest way to see every line's template,
which ``fampnb.logs._pick`` builds on), whole and over half the file (one of two workers' share),
and prints each as a ratio to ``grep``.

``--against DIR`` times a second doctor too, from another source tree (``git archive REV fampnb |
tar -x -C DIR``; run with ``PYTHONPATH=DIR``), alternating with the others, and prints this doctor's
wall and CPU ratios to it (the CPU ratio is the stable figure on a shared machine).

    python benchmarks/bench_doctor.py [--mb 200] [--repeat 5] [--keep] [--out PATH] [--against DIR]
                                      [--floor]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: the bare template pass of ``--floor``: argv = path, start, end
TEMPLATE_PASS = """import os, sys
path, pos, end = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
digits = bytes.maketrans(b"123456789", b"000000000")
fd, n = os.open(path, os.O_RDONLY), 0
while pos < end:
    data = os.pread(fd, min(512 << 10, end - pos), pos)
    if not data:
        break
    lines = data.translate(digits).split(b"\\n")
    if len(lines) == 1:                # (no newline before ``end``: the rest is one piece)
        break
    n += len(set(lines[:-1]))          # (the piece after the last newline is read again)
    pos += len(data) - len(lines[-1])
print(n)
"""


def scales_for(steps: int, seed: int = 0) -> tuple[list[float], list[bool], str]:
    """Per-step scale and overflow flags: calibration at the start, rare spikes later."""
    rng = random.Random(seed)
    grads = [0.02 + 0.01 * rng.random() for _ in range(steps)]
    for i in range(steps):
        if i < 6 or rng.random() < 2e-5:
            grads[i] = 1e4 if i < 6 else 2e3
    try:
        sys.path.insert(0, str(ROOT))
        from fampnb.scaler import DeepSpeedScaler, simulate
    except ImportError:
        scale, out, ovf = 65536.0 * 2 ** 6, [], []
        clean = 0
        for g in grads:
            over = g * scale > 65504
            out.append(scale)
            ovf.append(over)
            if over:
                scale, clean = max(scale / 2, 1.0), 0
            else:
                clean += 1
                if clean % 1000 == 0:
                    scale *= 2
        return out, ovf, "built-in rule"
    tr = simulate(DeepSpeedScaler(init_scale=2.0 ** 22, hysteresis=1), grads)
    return list(tr.scales), list(tr.overflow), "fampnb.scaler.simulate(DeepSpeedScaler)"


def write_log(path: Path, megabytes: float, seed: int = 0) -> tuple[int, str]:
    """Write the log; returns (steps, where the scales came from)."""
    target = int(megabytes * 1e6)
    steps = max(100, target // 96)
    scales, overflow, source = scales_for(steps, seed)
    rng = random.Random(seed + 1)
    bar = "\u2588" * 3 + "\u258d"
    skipped, size, loss = 0, 0, 2.5
    with open(path, "w", encoding="utf-8") as fh:
        buf: list[str] = []
        for i in range(steps):
            step = i + 1
            line = (f" {100 * step // steps:3d}%|{bar:<10}| {step}/{steps} "
                    f"[1:{step % 60:02d}:{step % 59:02d}<9:00:00,  1.{step % 97:02d}it/s]")
            if overflow[i]:
                skipped += 1
                s = scales[i]
                line += (f"[2024-09-11 17:52:{step % 60:02d},320] [INFO] [loss_scaler.py:183:"
                         f"update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted "
                         f"loss scale: {int(s)}, reducing to {int(max(s / 2, 1))}")
            buf.append(line)
            if step % 10 == 0:
                loss = max(0.5, loss - 1e-6 + 0.01 * (rng.random() - 0.5))
                buf.append(f"[2024-09-11 17:53:{step % 60:02d},101] [INFO] [logging.py:96:log_dist]"
                           f" [Rank 0] step={step}, skipped={skipped}, lr=[9.99e-05], "
                           f"mom=[(0.9, 0.999)]")
                buf.append(f"{{'loss': {loss:.4f}, 'grad_norm': {0.3 + rng.random():.4f}, "
                           f"'learning_rate': 9.99e-05, 'epoch': {step / steps:.2f}}}")
            if len(buf) >= 20000:
                text = "\n".join(buf) + "\n"
                size += len(text.encode())
                fh.write(text)
                buf = []
        if buf:
            fh.write("\n".join(buf) + "\n")
    return steps, source


def run_measured(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float, str]:
    """Like ``timed`` but through a fresh helper process, so that the peak RSS is this command's
    alone (``RUSAGE_CHILDREN`` keeps the maximum over every child a process ever had)."""
    helper = ("import json, resource, subprocess, sys, time\n"
              "t0 = time.perf_counter()\n"
              "r = subprocess.run(sys.argv[1:], capture_output=True)\n"
              "dt = time.perf_counter() - t0\n"
              "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
              "print(json.dumps({'rc': r.returncode, 'wall': dt, 'cpu': u.ru_utime + u.ru_stime,"
              " 'rss': u.ru_maxrss / 1024, 'out': r.stdout.decode(errors='replace'),"
              " 'err': r.stderr.decode(errors='replace')[-300:]}))\n")
    res = subprocess.run([sys.executable, "-c", helper, *cmd], capture_output=True, text=True,
                         cwd=ROOT if env is None else tempfile.gettempdir(), env=env)
    row = json.loads(res.stdout)
    if row["rc"] not in (0, 1):
        raise SystemExit(f"{cmd[0]} failed ({row['rc']}): {row['err']}")
    return row["wall"], row["cpu"], row["rss"], row["out"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=200.0)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--keep", action="store_true", help="keep the generated log")
    ap.add_argument("--out", type=Path, default=None, help="where to write the log")
    ap.add_argument("--floor", action="store_true",
                    help="also time start-up, imports and a bare template pass (see the module)")
    ap.add_argument("--against", type=Path, default=None,
                    help="a source tree holding another fampnb/ to time side by side")
    args = ap.parse_args(argv)
    path = args.out or Path(tempfile.gettempdir()) / f"bench-doctor-{args.mb:g}MB.log"
    t0 = time.perf_counter()
    steps, source = write_log(path, args.mb)
    mb = path.stat().st_size / 1e6
    print(f"log: {path} ({mb:.1f} MB, {steps} steps, scales from {source}, "
          f"written in {time.perf_counter() - t0:.1f} s)")
    grep = ["grep", "-ciE", "overflow|nan|inf|loss scal", str(path)]
    doctor = [sys.executable, "-m", "fampnb", "doctor", "--json", str(path)]
    runs: dict[str, list[tuple[float, float, float, str]]] = {"grep": [], "doctor": [], "other": []}
    floors: dict[str, list[str]] = {}
    if args.floor:
        empty = Path(tempfile.gettempdir()) / "bench-doctor-empty.log"
        empty.write_bytes(b"")
        size = path.stat().st_size
        floors = {
            "python start-up": [sys.executable, "-c", "pass"],
            "doctor on an empty log": [sys.executable, "-m", "fampnb", "doctor", "--json", str(empty)],
            "template pass, whole file": [sys.executable, "-c", TEMPLATE_PASS, str(path), "0",
                                          str(size)],
            "template pass, half the file": [sys.executable, "-c", TEMPLATE_PASS, str(path), "0",
                                             str(size // 2)],
        }
        runs.update({name: [] for name in floors})
    other_env = None if args.against is None else {
        **os.environ, "PYTHONPATH": str(args.against.resolve())}
    run_measured(grep)  # warm the page cache once for both
    for _ in range(args.repeat):          # alternate, so that load changes hit both alike
        runs["grep"].append(run_measured(grep))
        runs["doctor"].append(run_measured(doctor))
        if other_env is not None:
            runs["other"].append(run_measured(doctor, other_env))
        for name, cmd in floors.items():
            runs[name].append(run_measured(cmd))
    g = statistics.median(r[0] for r in runs["grep"])
    d = statistics.median(r[0] for r in runs["doctor"])
    ratio = statistics.median(b[0] / a[0] for a, b in zip(runs["grep"], runs["doctor"]))
    gc = statistics.median(r[1] for r in runs["grep"])
    dc = statistics.median(r[1] for r in runs["doctor"])
    rss = max(r[2] for r in runs["doctor"])
    out = runs["doctor"][-1][3]
    verdict = json.loads(out.splitlines()[0])["verdict"] if out.strip() else "?"
    try:
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    print(f"grep -ciE: {g:.3f} s   doctor: {d:.3f} s   ratio: {ratio:.2f}x (target <= 3)   "
          f"[wall, medians of {args.repeat} alternating runs]")
    print(f"CPU (user+sys, with worker processes): grep {gc:.3f} s, doctor {dc:.3f} s, "
          f"ratio {dc / max(gc, 1e-9):.2f}x")
    print(f"doctor peak RSS: {rss:.0f} MB (target < 300)   verdict: {verdict}   "
          f"throughput: {mb / d:.0f} MB/s   cpus: {os.cpu_count()}   load avg: {load}")
    if floors:
        print("floor (each: median of its ratios to the grep run just before it, wall):")
        for name in floors:
            r = statistics.median(b[0] / a[0] for a, b in zip(runs["grep"], runs[name]))
            print(f"  {name:30s} {statistics.median(x[0] for x in runs[name]):.3f} s   {r:.2f}x")
        least = statistics.median(
            (e[0] + h[0]) / g[0] for g, e, h in zip(runs["grep"], runs["doctor on an empty log"],
                                                    runs["template pass, half the file"]))
        print(f"  start-up and imports + half a template pass (two workers at best, no line parsed): "
              f"{least:.2f}x")
    if runs["other"]:
        pairs = list(zip(runs["other"], runs["doctor"]))
        wall = statistics.median(b[0] / a[0] for a, b in pairs)
        cpu = statistics.median(b[1] / a[1] for a, b in pairs)
        o_out = runs["other"][-1][3]
        o_verdict = json.loads(o_out.splitlines()[0])["verdict"] if o_out.strip() else "?"
        print(f"vs {args.against}: this doctor / that one: wall {wall:.2f}x, CPU {cpu:.2f}x "
              f"(that one: {statistics.median(r[1] for r in runs['other']):.3f} s CPU, "
              f"verdict {o_verdict})")
    if args.floor:
        empty.unlink()
    if not args.keep:
        os.unlink(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
