"""The source article's two experiments, as data, reproduced exactly.

Experiment 1 puts two gradient maxima through the article's range model (``formats.judge``);
experiment 2 halves a loss scale of 65536 on every overflow for eight fixed steps.  The numbers are
the article's, computed here (``python -m fampnb seed`` prints them; the output is byte-identical on
every run).
"""

from __future__ import annotations

from dataclasses import dataclass

from .formats import FP16, judge

__all__ = ["Exp1Row", "Exp2Row", "experiment_1", "experiment_2", "EXP2_G_MAX", "EXP2_START",
           "WARN_SCALE", "render", "main"]

#: The article's warning level: a scale below 256 that keeps halving is the overflow-type pattern
#: (its checklist's last item).  Defined here once; the chain, the stories and the plots use it.
WARN_SCALE = 256.0

#: Experiment 2's fixed inputs: start scale and the gradient abs max of each of the eight steps.
EXP2_START = 65536
EXP2_G_MAX: tuple[float, ...] = (3.2e4, 1.6e4, 8.0e3, 4.0e3, 2.0e3, 1.0e3, 5.0e2, 2.5e2)
#: The row the article checks, and the value it expects there.
EXP2_CHECK_ROW, EXP2_EXPECTED = 4, 8192


@dataclass(frozen=True)
class Exp1Row:
    """One case of experiment 1: ``scaled = g_abs_max * scale`` and the article's verdict."""

    case: str
    g_abs_max: float
    scale: float
    scale_expr: str
    scaled: float
    verdict: str


@dataclass(frozen=True)
class Exp2Row:
    """One step of experiment 2; ``next_scale`` is the article's ``scale // 2`` column."""

    row: int
    scale: int
    g_abs_max: float
    scaled: float
    verdict: str
    next_scale: int


def experiment_1() -> list[Exp1Row]:
    """Case A (3.2e4 at scale 65536 -> OVERFLOW) and case B (3.0e3 at 2**-32 -> UNDERFLOW)."""
    rows = []
    for case, g, scale, expr in (("A", 3.2e4, 65536.0, "65536.0"), ("B", 3.0e3, 2.0**-32, "2**-32")):
        scaled, verdict = judge(g, scale, FP16)
        rows.append(Exp1Row(case, g, scale, expr, scaled, verdict))
    return rows


def experiment_2() -> list[Exp2Row]:
    """Eight steps from 65536, integer-halving on every overflow, never growing."""
    rows, scale = [], EXP2_START
    for i, g in enumerate(EXP2_G_MAX, start=1):
        scaled = g * scale
        overflow = scaled > FP16.max
        rows.append(Exp2Row(i, scale, g, scaled, "OVERFLOW" if overflow else "IN_RANGE", scale // 2))
        if overflow:
            scale //= 2
    return rows


def render() -> str:
    """Both experiments as the text ``python -m fampnb seed`` prints (deterministic)."""
    e1, e2 = experiment_1(), experiment_2()
    out = [
        "Experiment 1: the fp16 range model "
        f"(max normal {FP16.max!r}, min normal {FP16.min_normal!r})",
        f"{'case':<5}{'grad abs max':>14}  {'scale':<31}{'scaled':>24}  verdict",
    ]
    for r in e1:
        scale = f"{r.scale_expr} = {r.scale!r}" if r.scale_expr != repr(r.scale) else repr(r.scale)
        out.append(f"{r.case:<5}{r.g_abs_max!r:>14}  {scale:<31}{r.scaled!r:>24}  {r.verdict}")
    marks = [r.verdict for r in e1 if r.verdict in ("OVERFLOW", "UNDERFLOW")]
    out += [
        f"marked: OVERFLOW {marks.count('OVERFLOW')}  UNDERFLOW {marks.count('UNDERFLOW')}  "
        f"total {len(marks)}/{len(e1)}",
        "",
        f"Experiment 2: scale decay from {EXP2_START}, halve on every overflow, never grow, "
        f"{len(EXP2_G_MAX)} steps (fp16 max {FP16.max!r})",
        f"{'row':>3}  {'scale':>6}  {'grad max':>9}  {'scaled':>13}  {'verdict':<9} next",
    ]
    for row in e2:
        out.append(f"{row.row:>3}  {row.scale:>6}  {row.g_abs_max!r:>9}  {row.scaled!r:>13}  "
                   f"{row.verdict:<9} {row.next_scale}")
    got = e2[EXP2_CHECK_ROW - 1].scale
    out += [
        f"check: row {EXP2_CHECK_ROW} = {got}, expected {EXP2_EXPECTED}, "
        f"{'MATCH' if got == EXP2_EXPECTED else 'MISMATCH'}",
        "sequence: " + ",".join(str(r.scale) for r in e2),
    ]
    return "\n".join(out) + "\n"


def main() -> int:
    print(render(), end="")
    return 0
