"""English texts (the default language).  See ``fampnb.i18n``."""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    # -- python -m fampnb seed (fampnb.seed.render) ------------------------------------------
    "seed.exp1.title": "Experiment 1: the fp16 range model (max normal {max}, min normal {min_normal})",
    "seed.col.case": "case",
    "seed.col.grad_abs_max": "grad abs max",
    "seed.col.scale": "scale",
    "seed.col.scaled": "scaled",
    "seed.col.verdict": "verdict",
    "seed.exp1.marked": "marked: OVERFLOW {overflow}  UNDERFLOW {underflow}  total {total}/{n}",
    "seed.exp2.title": ("Experiment 2: scale decay from {start}, halve on every overflow, never grow, "
                        "{steps} steps (fp16 max {max})"),
    "seed.col.row": "row",
    "seed.col.grad_max": "grad max",
    "seed.col.next": "next",
    "seed.exp2.check": "check: row {row} = {got}, expected {expected}, {result}",
    "seed.exp2.sequence": "sequence: {sequence}",
}
