"""Terminal colour codes in a log (``fampnb.logs._ansi``): both readers read a line without them,
whether the escape character is there (a console's output saved) or was lost on the way (a log
pasted into a web page: ``[1m32/32[0m``)."""

from __future__ import annotations

import io

import pytest

from fampnb import logs
from fampnb.diagnose import diagnose
from fampnb.logs import _ansi

ESC = "\x1b"


def _both(lines: list[str]) -> list[logs.Event]:
    full = list(logs.parse(lines))
    fast = list(logs.scan(io.BytesIO("\n".join(lines).encode() + b"\n")))
    assert [e.to_dict() for e in fast] == [e.to_dict() for e in full]
    return full


@pytest.mark.parametrize("raw,plain", [
    (b"\x1b[32mloss\x1b[0m: 2.5", b"loss: 2.5"),
    (b"loss \x1b[1;36m0.25\x1b[0m", b"loss 0.25"),
    (b"\x1b[2K\x1b[1Gstep 3 loss nan", b"step 3 loss nan"),       # erase line, cursor moves
    (b"[1m 32/100[0m [32m\xe2\x94\x81\xe2\x94\x81[0m - loss: nan",
     b" 32/100 \xe2\x94\x81\xe2\x94\x81 - loss: nan"),
    (b"eta [1m 2s] loss 0.5", b"eta [1m 2s] loss 0.5"),          # no reset left: maybe text
])
def test_strip(raw: bytes, plain: bytes) -> None:
    assert _ansi.strip(raw) == plain


def test_coloured_keys_and_values_are_records() -> None:
    lines = [f"step {i}: {ESC}[32mloss{ESC}[0m: {ESC}[1;36m{2.0 / i:.4f}{ESC}[0m" for i in range(1, 9)]
    lines += [f"step {i}: loss: {ESC}[31mnan{ESC}[0m" for i in range(9, 13)]
    evs = _both(lines)
    assert [(e.kind, e.step) for e in evs if e.kind in ("loss", "nan")] == (
        [("loss", i) for i in range(1, 9)] + [("nan", i) for i in range(9, 13)])
    assert all(ESC not in e.text for e in evs)


def test_keras3_bar_names_the_step_with_or_without_its_escapes() -> None:
    bar = "\u2501" * 20
    for esc in (ESC, ""):
        lines = ["Epoch 1/1"] + [
            f"{esc}[1m{i:3d}/100{esc}[0m {esc}[32m{bar[:i // 5]}{esc}[0m{esc}[37m{bar[i // 5:]}{esc}[0m "
            f"{esc}[1m3s{esc}[0m 40ms/step - loss: {'nan' if i > 40 else f'{1.0 / i:.4f}'}"
            for i in range(10, 60, 10)]
        evs = [e for e in _both(lines) if e.kind in ("loss", "nan")]
        assert [(e.step, e.explicit) for e in evs] == [(i, True) for i in range(10, 60, 10)]


def test_a_coloured_printed_scale_is_read_by_both_readers() -> None:
    # the fast reader compares printed scales line by line: with codes around the number, too
    lines = [f"it {i} | loss {1.0 / i:.4f} | loss scale {ESC}[1;36m{65536 if i < 30 else 32768}{ESC}[0m"
             for i in range(1, 60)]
    evs = _both(lines)
    assert [e.scale_after for e in evs] == [65536.0] * 29 + [32768.0] * 30
    fast = diagnose(logs.scan(io.BytesIO("\n".join(lines).encode() + b"\n")))
    assert fast.to_dict() == diagnose(logs.parse(lines)).to_dict()


def test_a_coloured_nan_in_a_long_log_is_found_by_the_fast_reader() -> None:
    lines = [f"step {i} loss {3.0 - i * 1e-4:.4f} scale 65536" for i in range(1, 20001)]
    lines[15000] = f"step 15001 loss {ESC}[31mnan{ESC}[0m scale 65536"
    fast = list(logs.scan(io.BytesIO("\n".join(lines).encode() + b"\n")))
    assert [(e.line_no, e.step) for e in fast if e.kind == "nan"] == [(15001, 15001)]
    assert diagnose(iter(fast)).verdict == diagnose(logs.parse(lines)).verdict
