"""Record what the probes did on a real GPU, and render docs/gpu-results.md from the records.

    bash tools/gpu_check.sh                       # on the GPU machine: writes $OUT (see there)
    python tools/gpu_results.py record OUTDIR     # here: OUTDIR -> fampnb/data/gpu/<device>.json
    python tools/gpu_results.py render            # rewrite docs/gpu-results.md from the records

``record`` also runs ``cast_checks("cpu")`` here, with the stack CI uses, as the CPU column next to
the GPU's.  Every number in docs/gpu-results.md comes from a record; tests/test_gpu_results.py
checks that the page is the rendering of the records and that the model still agrees with them.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:      # run as a script from a checkout without an install
    sys.path.insert(0, str(ROOT))

from fampnb import probe  # noqa: E402
from fampnb.formats import FP8_E4M3  # noqa: E402
from fampnb.probe.recorded import _restore, row_differences  # noqa: E402

DATA = ROOT / "fampnb" / "data" / "gpu"
PAGE = ROOT / "docs" / "gpu-results.md"
SOURCE = "tools/gpu_check.sh on the GPU machine, then tools/gpu_results.py record"


def _lines(path: Path, keep: Any) -> list[str]:
    return [ln.rstrip() for ln in path.read_text(encoding="utf-8").splitlines() if keep(ln)]


def record(outdir: Path) -> Path:
    """Store the output of tools/gpu_check.sh (``outdir``) as a record; returns its path."""
    result = json.loads((outdir / "probe.json").read_text(encoding="utf-8"))
    if not str(result["device"]["device"]).startswith("cuda:"):
        raise SystemExit(f"gpu_results: {outdir} is not a GPU run ({result['device']['device']})")
    text = (outdir / "probe.txt").read_text(encoding="utf-8").splitlines()
    versions = next(ln for ln in text if ln.startswith("python "))
    bench = _lines(outdir / "bench_probe.txt",  # without the sync-debug-mode warning's 2 lines
                   lambda ln: not ln.startswith("==") and "_cuda_set_sync_debug_mode" not in ln
                   and "UserWarning" not in ln)
    checks = _lines(outdir / "pytest.txt", lambda ln: not ln.startswith(".") and ln.strip())
    cpu = probe.cast_checks("cpu")
    rec = {"recorded": _iso(text[0]), "source": SOURCE,
           "versions": versions, "probe": result,
           "cpu_reference": probe.jsonable({"torch": cpu["torch"], "rows": cpu["rows"]}),
           "bench_probe": bench,
           "checks": checks}
    name = re.sub(r"[^a-z0-9]+", "-", result["device"]["name"].lower()).strip("-")
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"{name}.json"
    path.write_text(json.dumps(rec, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _iso(line: str) -> str:
    """The date of ``date -u`` output ("Sun Nov 29 07:30:40 PM UTC 2026") as YYYY-MM-DD."""
    from datetime import datetime

    for fmt in ("%a %b %d %I:%M:%S %p %Z %Y", "%a %b %d %H:%M:%S %Z %Y"):
        try:
            return datetime.strptime(line.strip(), fmt).date().isoformat()
        except ValueError:
            continue
    return "unknown"


# ------------------------------------------------------------------------------------ render
def _num(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, str):
        return v
    return f"{v:.10g}"


def _agree(r: dict[str, Any]) -> str:
    if r["documented"]:
        return "no (documented)"
    return {True: "yes", False: "**NO**", None: "—"}[r["agree"]]


def render_record(rec: dict[str, Any]) -> list[str]:
    """One device's section of the page (``rec`` as stored: non-finite floats are strings)."""
    dev, casts, amp = rec["probe"]["device"], rec["probe"]["cast_checks"], rec["probe"]["amp_decay"]
    rows, cpu_rows = casts["rows"], {(r["kind"], r["dtype"], r["label"]): r
                                     for r in rec["cpu_reference"]["rows"]}
    agree = sum(r["agree"] is True for r in rows)
    out = [f"## {dev['name']} — recorded {rec['recorded']}", "",
           f"`{dev['device']}` [{dev['measurement']}]. Made with {rec['source']}.", "",
           "| setting | value |", "| --- | --- |"]
    for key in ("torch", "cuda", "compute_capability", "bf16_supported", "tf32_matmul",
                "tf32_cudnn", "float32_matmul_precision", "fp16_reduced_precision_reduction",
                "nvidia_smi", "python", "platform"):
        out.append(f"| {key} | `{dev[key]}` |")
    out.append(f"| stack | {rec['versions'].replace(' | ', ', ')} |")
    out += ["", f"### Casts and arithmetic: {agree} of {len(rows)} rows agree with the model", "",
            f"Device column: the GPU. CPU column: the same rows on a CPU with torch "
            f"{rec['cpu_reference']['torch']} (the stack CI tests). Model: `fampnb.formats` "
            f"(numpy/ml_dtypes).", "",
            "| kind | dtype | input | GPU | CPU | model | GPU agrees |",
            "| --- | --- | --- | ---: | ---: | ---: | --- |"]
    for r in rows:
        c = cpu_rows.get((r["kind"], r["dtype"], r["label"]))
        out.append(f"| {r['kind']} | {r['dtype']} | {r['label']} | {_num(r['device_result'])} | "
                   f"{_num(c['device_result'] if c else None)} | {_num(r['model_result'])} | "
                   f"{_agree(r)} |")
    differ = row_differences(_restore(rows), _restore(rec["cpu_reference"]["rows"]))
    out += ["", f"- Flushes subnormals: `{casts['flushes_subnormals']}`.",
            f"- Undocumented disagreements with the model: "
            f"{', '.join(casts['disagreements']) or 'none'}.",
            f"- Rows where this GPU (torch {dev['torch']}) and the CPU (torch "
            f"{rec['cpu_reference']['torch']}) differ: "
            + ("; ".join(f"{r['dtype']} {r['label']}: GPU {_num(r['device_result'])}, CPU "
                         f"{_num(cpu)}" for r, cpu in differ) or "none") + "."]
    if differ and all(r["dtype"] == "float8_e4m3fn" and abs(cpu) == FP8_E4M3.max
                      for r, cpu in differ):
        out.append("  These are e4m3fn overflows: torch >= 2.12 saturates them to ±448, older torch "
                   "and ml_dtypes give NaN (`fampnb.probe` marks the saturation as a documented "
                   "stack difference). Whether torch >= 2.12 saturates on CUDA too was not "
                   "measured here.")
    bf = amp["bf16"]
    out += ["", "### AMP: the real GradScaler against the simulator", "",
            f"Settings `{amp['settings']}`, {amp['steps']} steps of `amp_decay`.", "",
            "| step | " + " | ".join(str(i) for i in range(amp["steps"])) + " |",
            "| --- |" + " ---: |" * amp["steps"],
            "| real GradScaler scale | " + " | ".join(_num(s) for s in amp["scales"]) + " |",
            "| non-finite gradients | " + " | ".join(str(f) for f in amp["found_inf"]) + " |",
            "| `fampnb.scaler.simulate` | " + " | ".join(_num(s) for s in amp["simulated"]) + " |",
            "", f"Simulator matches the real scaler: **{amp['match']}**. "
            + (f"bf16 autocast without a scaler: {sum(bf['found_inf'])} of {len(bf['found_inf'])} "
               f"steps non-finite, loss {bf['losses'][0]:.4g} → {bf['losses'][-1]:.4g}."
               if "error" not in bf else f"bf16 run: {bf['error']}"),
            "", "### Cost of the gradient-histogram hook (`benchmarks/bench_probe.py --hidden 1024`)",
            "", "A small model's training step is a few dozen kernel launches, so its time is set "
            "by the host issuing them, not by GPU work, and ratios move by a few percent between "
            "runs (a ratio below 1 is that noise). The recorder's step adds one `_foreach_copy_` "
            "into its staging buffer; binning runs once per filled buffer. The host-sync line uses "
            "`torch.cuda.set_sync_debug_mode`, which torch calls a prototype that does not detect "
            "every synchronising operation (its warning is left out below); the recorder's step "
            "has none by construction: no `.item()`, `.cpu()` or data-dependent shape.",
            "", "```", *rec["bench_probe"], "```", "",
            "### Other checks run there", "",
            "`tools/gpu_exactness.py` (the on-device histogram against numpy on the host), then "
            "pytest with the machine's own stack (above): notebooks 06 and 07 under nbval and the "
            "torch-backed unit tests.", "", "```", *rec["checks"], "```", ""]
    return out


HEADER = """# GPU results

What the probes of `fampnb.probe` measured on real GPUs, next to the exact model
(`fampnb.formats`, `fampnb.scaler`). Generated by `python tools/gpu_results.py render` from the
records in `fampnb/data/gpu/` (also readable from Python: `fampnb.probe.recorded_results()`,
shown by notebook 06 on a machine without a GPU); do not edit by hand. To add a device: run
`bash tools/gpu_check.sh` there, copy its output folder back, `python tools/gpu_results.py record
DIR`, then `render`.
"""


def render(records: list[dict[str, Any]] | None = None) -> str:
    if records is None:
        records = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(DATA.glob("*.json"))]
    lines = [HEADER]
    for rec in records:
        lines += render_record(rec)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str]) -> int:
    if argv[:1] == ["record"] and len(argv) == 2:
        print(f"recorded {record(Path(argv[1])).relative_to(ROOT)}")
        argv = ["render"]
    if argv == ["render"]:
        PAGE.write_text(render(), encoding="utf-8")
        print(f"wrote {PAGE.relative_to(ROOT)}")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
