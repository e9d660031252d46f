"""The log doctor's command line and human report: ``python -m fampnb doctor FILE... [--json]``.

``doctor_main(argv)`` diagnoses each file (``-`` reads stdin; ``.gz`` is recognised by content)
with the fast streaming reader (``fampnb.logs.scan``) and prints either a human report per file
(verdict, reason, evidence lines with their numbers, the scale trajectory as a sparkline, the
first switch to turn, caveats) or, with ``--json``, one JSON object per line per file (the
``Diagnosis.to_dict()`` fields plus ``"file"``).  ``--precision fp16|bf16|fp32`` tells the doctor
what the log does not say.  Files over ~50 MB show progress on stderr.

Exit status: 0 when every file was read; 2 on a usage error or when a file could not be read
(missing, a directory, no permission), with one line on stderr per problem and
never a traceback.  The files that could be read are still reported.
"""

from __future__ import annotations

import json
import math
import os
import sys
import zlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:   # imported when used: a big log's reading starts before the rules load
    from fampnb.diagnose import Diagnosis

__all__ = ["doctor_main", "render_report", "evidence_text", "sparkline", "USAGE"]

USAGE = "usage: python -m fampnb doctor FILE... [--json] [--precision fp16|bf16|fp32]  (- = stdin)"
PROGRESS_BYTES = 50 * 1024 * 1024
EVIDENCE_WIDTH = 110     # characters of an evidence line shown before it is cut in the middle
_BARS = "▁▂▃▄▅▆▇█"
_ASCII = "_.-:=+*#"


def sparkline(values: list[float], width: int = 48, ascii_only: bool = False) -> str:
    """A one-line chart of ``log2(values)`` (non-positive/non-finite values drawn as ``!``),
    resampled to at most ``width`` characters (the smallest value of each bucket)."""
    ramp = _ASCII if ascii_only else _BARS
    if not values:
        return ""
    if len(values) > width:   # the smallest value of each bucket: dips stay visible
        n = len(values)
        values = [min(values[i * n // width:max(i * n // width + 1, (i + 1) * n // width)],
                      key=lambda v: v if v == v else -math.inf) for i in range(width)]
    logs = [math.log2(v) if v > 0 and math.isfinite(v) else None for v in values]
    good = [x for x in logs if x is not None]
    if not good:
        return "!" * len(values)
    lo, hi = min(good), max(good)
    span = hi - lo or 1.0
    return "".join("!" if x is None else ramp[int((x - lo) / span * (len(ramp) - 1) + 0.5)]
                   for x in logs)


def _scale(x: float | None, log2: float | None = None) -> str:
    if x is None:
        return "-" if log2 is None else f"2^{log2:.10g}"
    if log2 is not None and (x == 0 or not math.isfinite(x)):
        return f"2^{log2:.10g}"     # printed as a logarithm, beyond the float range
    if not math.isfinite(x):
        return str(x)
    if x > 0:
        k = math.log2(x)
        if k == int(k) and abs(k) >= 10:
            return f"2^{int(k)}"
    return f"{x:g}"


def evidence_text(text: str, width: int = EVIDENCE_WIDTH) -> str:
    """A log line as it is (only a trailing newline/CR removed); a line longer than ``width``
    keeps both ends around an ellipsis (records glued to progress bars sit at the end)."""
    text = text.rstrip("\r\n")
    if len(text) <= width:
        return text
    head = width // 3
    return text[:head] + " ... " + text[len(text) - (width - head - 5):]


def render_report(d: Diagnosis, name: str, ascii_only: bool = False) -> str:
    """The human report of one diagnosis (plain text, ends with a newline), in the current
    language (``fampnb.i18n``; the verdict code, numbers and evidence lines never change)."""
    from .i18n import t
    from .localize import localize

    d = localize(d)
    out = [f"== {name} ==",
           t("doctor.verdict", verdict=d.verdict.upper(), certainty=_certainty(d.certainty),
             framework=d.framework, precision=d.precision or t("doctor.not_stated")),
           t("doctor.reason", reason=d.reason)]
    # (a log that counts no steps gives each record its line number as its step: the line alone
    # is named then; a counted step equal to its line number reads the same, and stays true)
    nan = (t("doctor.none") if d.first_nan_line is None
           else t("doctor.nan_line", line=d.first_nan_line) if d.first_nan_step == d.first_nan_line
           else t("doctor.nan_at", step=d.first_nan_step, line=d.first_nan_line))
    out.append(t("doctor.counts", nan=nan, backoffs=d.backoffs, hysteresis=d.hysteresis,
                 skips=d.skips, min=_scale(d.min_scale, d.min_scale_log2),
                 final=_scale(d.final_scale, d.final_scale_log2)))
    if d.trajectory:
        scales = [s for _, _, s in d.trajectory]
        out.append(t("doctor.trajectory", first=_scale(scales[0]),
                     spark=sparkline(scales, ascii_only=ascii_only), last=_scale(scales[-1]),
                     n=len(scales)))
    if d.evidence:
        out.append(t("doctor.evidence"))
        for e in d.evidence:
            out.append(t("doctor.evidence_line", line=f"{e.line_no:>7}", kind=e.kind,
                         text=evidence_text(e.text)))
    if d.advice:
        out.append(t("doctor.first_switch", advice=d.advice[0]))
        for i, a in enumerate(d.advice[1:], 2):
            out.append(f"  {i}. {a}")
    if d.caveats:
        out.append(t("doctor.caveats"))
        out += [f"  - {c}" for c in d.caveats]
    return "\n".join(out) + "\n"


def _certainty(word: str) -> str:
    """``likely`` / ``certain`` in the current language (another word as it is)."""
    from .i18n import messages, t

    key = f"doctor.certainty.{word}"
    return t(key) if key in messages("en") else word


class _Progress:
    """Prints ``reading NAME NN%`` on stderr (every 5 %) for big files."""

    def __init__(self, name: str) -> None:
        self.name, self.shown = name, -1

    def __call__(self, done: int, total: int) -> None:
        pct = min(100, done * 100 // max(1, total))
        if pct // 5 != self.shown // 5 or (pct == 100 and self.shown != 100):
            self.shown = pct
            end = "\n" if pct == 100 else ""
            sys.stderr.write(f"\rfampnb doctor: reading {self.name} {pct:3d}%{end}")
            sys.stderr.flush()


def _diagnose_file(name: str, precision: str | None) -> Diagnosis:
    from fampnb.logs import scan

    if name == "-":
        events = scan(sys.stdin.buffer)
    else:
        if os.path.isdir(name):
            raise IsADirectoryError(21, "is a directory")
        big = os.path.getsize(name) > PROGRESS_BYTES
        progress = _Progress(os.path.basename(name)) if big else None
        events = scan(name, workers=0, progress=progress)   # workers start reading now
    from fampnb.diagnose import diagnose

    return diagnose(events, precision=precision)


def _why(exc: BaseException) -> str:
    from fampnb.logs import MissingExtra

    if isinstance(exc, MissingExtra):
        return str(exc)
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower() if isinstance(exc, IsADirectoryError) else exc.strerror
    if isinstance(exc, (EOFError, zlib.error)) or type(exc).__name__ == "BadGzipFile":
        return f"truncated or corrupt gzip ({exc})" if str(exc) else "truncated or corrupt gzip"
    return f"{type(exc).__name__}: {exc}"


def doctor_main(argv: list[str]) -> int:
    """Run the doctor on ``argv`` (file names and options); returns the exit status."""
    files: list[str] = []
    as_json, precision, only_files = False, None, False
    it = iter(argv)
    for arg in it:
        if only_files or arg == "-" or not arg.startswith("-"):
            files.append(arg)
        elif arg == "--":
            only_files = True
        elif arg == "--json":
            as_json = True
        elif arg in ("-h", "--help"):
            print(USAGE)
            return 0
        elif arg == "--precision" or arg.startswith("--precision="):
            value = arg.split("=", 1)[1] if "=" in arg else next(it, "")
            from fampnb.diagnose import PRECISIONS

            if value.lower() not in PRECISIONS:
                print(f"fampnb doctor: --precision must be one of {', '.join(PRECISIONS)}; "
                      f"{USAGE}", file=sys.stderr)
                return 2
            precision = value.lower()
        else:
            print(f"fampnb doctor: unknown option {arg!r}; {USAGE}", file=sys.stderr)
            return 2
    if not files:
        print(f"fampnb doctor: no log file given; {USAGE}", file=sys.stderr)
        return 2
    ascii_only = (getattr(sys.stdout, "encoding", None) or "ascii").lower().replace("-", "") \
        not in ("utf8", "utf16", "utf32")
    status = 0
    for name in files:
        try:
            d = _diagnose_file(name, precision)
        except KeyboardInterrupt:
            raise
        except BrokenPipeError:
            raise
        except (OSError, EOFError, zlib.error, ValueError, MemoryError) as exc:
            print(f"fampnb doctor: cannot read {name}: {_why(exc)}", file=sys.stderr)
            status = 2
            continue
        if as_json:
            print(json.dumps({"file": name, **d.to_dict()}, allow_nan=False))
        else:
            print(render_report(d, name, ascii_only=ascii_only))
        sys.stdout.flush()
    return status
