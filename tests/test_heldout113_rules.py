"""The general rule heldout113's to heldout116's first runs led to, on lines of its own (not the
held-out files): an aligned table whose rows leave cells empty (Chainer's ``LogReport`` before
any validation ran) is cut where its header's columns start."""

from __future__ import annotations

from doctor_helpers import diagnose_both as _both

from fampnb import logs
from fampnb.logs._notation import fixed_row

HEAD = ("epoch       main/loss   validation/main/loss  main/accuracy  validation/main/accuracy  "
        "lr          elapsed_time")


def _row(epoch: object, loss: object, valid: object, vacc: object, k: int) -> str:
    return (f"{epoch!s:<12}{loss!s:<12}{valid!s:<22}{0.63:<15}{vacc!s:<26}{0.0001:<12}"
            f"{40.0 * (k + 1):<14}")


ROWS = [_row(e, x, v, va, k) for k, (e, x, v, va) in enumerate(
    [(0, 0.691012, "", ""), (0, 0.685441, "", ""), (1, 0.6712, 0.7031, 0.61),
     (1, "nan", "nan", "")])]


def test_an_aligned_row_with_empty_cells_is_cut_at_the_headers_columns() -> None:
    names = HEAD.split()
    cells = fixed_row(ROWS[0].lower(), HEAD.lower(), names)
    assert cells == {"epoch": "0", "main/loss": "0.691012", "lr": "0.0001"}
    assert fixed_row(ROWS[2].lower(), HEAD.lower(), names) is None   # (no empty cell: ``row``)
    # a row that only stops early is a cut line, not one with empty cells
    assert fixed_row(ROWS[2][:40].lower(), HEAD.lower(), names) is None
    events = list(logs.parse([HEAD] + ROWS[:3]))
    assert [(e.kind, e.loss) for e in events] == [("loss", 0.691012), ("loss", 0.685441),
                                                  ("loss", 0.6712)]
    assert _both([HEAD] + ROWS[:3]).verdict == "healthy"
    assert [e.kind for e in logs.parse([HEAD] + ROWS)][-1] == "nan"
    # a row not aligned with the header (a cut would split a token) is no row of it
    assert fixed_row("0.691012 0 0.0001 40.06", HEAD.lower(), names) is None
