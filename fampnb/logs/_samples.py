"""The shipped real excerpts (``fampnb/data/real-logs``, with their README and attribution)."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # importlib.resources.abc is 3.11+; importlib.abc has it on 3.10
    from importlib.abc import Traversable

__all__ = ["sample_logs", "read_sample", "expected_verdicts", "split_row"]


def _sample_dir() -> Traversable:
    return resources.files("fampnb").joinpath("data").joinpath("real-logs")


def sample_logs() -> dict[str, Traversable]:
    """The shipped real excerpts: file name -> resource (``.read_text()``, or pass to ``parse``
    via ``read_sample``).  Works from an installed wheel (``importlib.resources``)."""
    return dict(_listing())


@lru_cache(maxsize=1)
def _listing() -> tuple[tuple[str, Traversable], ...]:
    """The folder's ``.log`` files, by name, listed once (shipped data: it does not change while
    a kernel runs; the log reader asks at each sample it shows)."""
    return tuple((p.name, p) for p in sorted(_sample_dir().iterdir(), key=lambda p: p.name)
                 if p.name.endswith(".log"))


def read_sample(name: str) -> list[str]:
    """Lines (without line ends) of one shipped excerpt, e.g. ``"apex_apex_834.log"``."""
    logs = sample_logs()
    if name not in logs:
        raise KeyError(f"no sample log {name!r}; have {', '.join(logs)}")
    return logs[name].read_text(encoding="utf-8").splitlines()


_ROW = re.compile(r"^\|\s*`([^`]+\.log)`\s*\|(.*)$")


def expected_verdicts() -> dict[str, dict[str, str]]:
    """The README's per-file table: name -> ``{"verdict", "certainty", "framework", "source"}``.

    Parsed from the shipped README (never retyped), so the tests follow the attribution file.
    """
    text = _sample_dir().joinpath("README.md").read_text(encoding="utf-8")
    header: list[str] = []
    out: dict[str, dict[str, str]] = {}
    for line in text.splitlines():
        if line.startswith("| file |"):
            header = [c.strip() for c in line.strip().strip("|").split("|")]
            continue
        m = _ROW.match(line)
        if not m or not header:
            continue
        cells = [c.strip() for c in split_row(line)]
        row = dict(zip(header, cells))
        verdict = row.get("expected verdict", "").strip("` ")
        certainty = row.get("certainty", "").split(" ")[0].strip()
        out[m.group(1)] = {"verdict": verdict, "certainty": certainty,
                           "framework": row.get("framework", ""), "source": row.get("source", "")}
    return out


def split_row(line: str) -> list[str]:
    """Split a markdown table row on ``|`` outside backticks (cells may contain ``\\|``)."""
    cells, cur, tick = [], [], False
    body = line.strip()[1:-1] if line.strip().endswith("|") else line.strip()[1:]
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body) and body[i + 1] == "|":
            cur.append("|")
            i += 2
            continue
        if ch == "`":
            tick = not tick
        if ch == "|" and not tick:
            cells.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    cells.append("".join(cur))
    return cells
