"""The source article's two experiments, as data, reproduced exactly.

Experiment 1 puts two gradient maxima through the article's range model (``formats.judge``);
experiment 2 halves a loss scale of 65536 on every overflow for eight fixed steps.  The numbers are
the article's, computed here (``python -m fampnb seed`` prints them; the output is byte-identical on
every run; its captions
follow ``fampnb.i18n``: English by default, Chinese with ``FAMPNB_LANG=zh``).
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


def _pad(text: str, width: int, right: bool = False) -> str:
    """``text`` padded to ``width`` terminal columns (a CJK character takes two)."""
    import unicodedata

    cols = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)
    fill = " " * max(0, width - cols)
    return fill + text if right else text + fill


def render() -> str:
    """Both experiments as the text ``python -m fampnb seed`` prints (deterministic); captions in
    the current language (``fampnb.i18n``), numbers and verdict words unchanged."""
    from .i18n import t

    e1, e2 = experiment_1(), experiment_2()
    out = [
        t("seed.exp1.title", max=repr(FP16.max), min_normal=repr(FP16.min_normal)),
        f"{_pad(t('seed.col.case'), 5)}{_pad(t('seed.col.grad_abs_max'), 14, True)}  "
        f"{_pad(t('seed.col.scale'), 31)}{_pad(t('seed.col.scaled'), 24, True)}  "
        f"{t('seed.col.verdict')}",
    ]
    for r in e1:
        scale = f"{r.scale_expr} = {r.scale!r}" if r.scale_expr != repr(r.scale) else repr(r.scale)
        out.append(f"{r.case:<5}{r.g_abs_max!r:>14}  {scale:<31}{r.scaled!r:>24}  {r.verdict}")
    marks = [r.verdict for r in e1 if r.verdict in ("OVERFLOW", "UNDERFLOW")]
    out += [
        t("seed.exp1.marked", overflow=marks.count("OVERFLOW"),
          underflow=marks.count("UNDERFLOW"), total=len(marks), n=len(e1)),
        "",
        t("seed.exp2.title", start=EXP2_START, steps=len(EXP2_G_MAX), max=repr(FP16.max)),
        f"{_pad(t('seed.col.row'), 3, True)}  {_pad(t('seed.col.scale'), 6, True)}  "
        f"{_pad(t('seed.col.grad_max'), 9, True)}  {_pad(t('seed.col.scaled'), 13, True)}  "
        f"{_pad(t('seed.col.verdict'), 9)} {t('seed.col.next')}",
    ]
    for row in e2:
        out.append(f"{row.row:>3}  {row.scale:>6}  {row.g_abs_max!r:>9}  {row.scaled!r:>13}  "
                   f"{row.verdict:<9} {row.next_scale}")
    got = e2[EXP2_CHECK_ROW - 1].scale
    out += [
        t("seed.exp2.check", row=EXP2_CHECK_ROW, got=got, expected=EXP2_EXPECTED,
          result="MATCH" if got == EXP2_EXPECTED else "MISMATCH"),
        t("seed.exp2.sequence", sequence=",".join(str(r.scale) for r in e2)),
    ]
    return "\n".join(out) + "\n"


def main() -> int:
    print(render(), end="")
    return 0
