"""Streaming log reader: training-log lines -> ``Event`` records (framework auto-detected).

``parse(source)`` accepts a path (``str``/``PathLike``; gzip is recognised by its magic bytes, so a
``.gz`` suffix is not required), a file object in text or binary mode, or any iterable of lines
(``str`` or ``bytes``).  It reads 1 MiB blocks and never holds more than one block plus one line
(lines longer than 1 MiB are cut into pieces with the same line number), so memory stays flat.
Bytes are decoded as UTF-8 with replacement characters: binary garbage yields no events, not an
error.  ``\\r`` inside a line (tqdm progress bars) separates records: each part is read on its own.

The rules themselves live in ``fampnb._logrules`` (one regex per wording of
``reference/loss-scalers.md``); nothing in a log is ever evaluated.  ``scan(path)`` is the fast
path of the doctor (``fampnb._logscan``): the same events for every line that can change a
verdict, and a sample of ordinary loss records.

The shipped real excerpts (``fampnb/data/real-logs``, with their README and attribution) are
available as ``sample_logs()``, ``read_sample(name)`` and ``expected_verdicts()``.
"""

from __future__ import annotations

import gzip
import os
import re
from collections.abc import Iterable, Iterator
from importlib import resources
from typing import IO, TYPE_CHECKING, Any, Union

from fampnb._logrules import KINDS, Event, LineState, finish, jsonable, parse_segment

if TYPE_CHECKING:  # importlib.resources.abc is 3.11+; importlib.abc has it on 3.10
    from importlib.abc import Traversable

__all__ = ["Event", "KINDS", "parse", "scan", "segments", "sample_logs", "read_sample",
           "expected_verdicts", "jsonable", "open_binary", "Source"]

#: what ``parse`` accepts
Source = Union[str, "os.PathLike[str]", IO[Any], Iterable[Any]]

BLOCK = 1 << 20          # bytes read at a time
MAX_LINE = 1 << 20       # longer lines are handed on in pieces of this size


def open_binary(path: str | os.PathLike[str]) -> IO[bytes]:
    """Open ``path`` for reading bytes, through gzip when it starts with the gzip magic.

    Raises ``OSError`` (``FileNotFoundError``, ``IsADirectoryError``, ``PermissionError``) as
    ``open`` does; a truncated gzip raises ``EOFError`` while it is read.
    """
    fh = open(path, "rb")  # noqa: SIM115 - returned to the caller
    try:
        magic = fh.peek(2)[:2]          # not read: a pipe cannot seek back
    except OSError:
        fh.close()
        raise
    if magic == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=fh, mode="rb")  # type: ignore[return-value]
    return fh


def _chunks(source: Source) -> Iterator[bytes]:
    """The source as a stream of ``bytes`` blocks (lines from an iterable keep their ``\\n``)."""
    if isinstance(source, (str, os.PathLike)):
        with open_binary(source) as fh:
            yield from _read_blocks(fh)
        return
    if hasattr(source, "read"):
        yield from _read_blocks(source)  # type: ignore[arg-type]
        return
    if isinstance(source, (bytes, bytearray)):
        yield bytes(source)
        return
    for item in source:  # type: ignore[union-attr]
        if isinstance(item, str):
            data = item.encode("utf-8", "replace")
        elif isinstance(item, (bytes, bytearray)):
            data = bytes(item)
        else:
            raise TypeError(f"parse: lines must be str or bytes, got {type(item).__name__}")
        yield data if data.endswith(b"\n") else data + b"\n"


def _read_blocks(fh: IO[Any]) -> Iterator[bytes]:
    while True:
        block = fh.read(BLOCK)
        if not block:
            return
        if isinstance(block, str):
            block = block.encode("utf-8", "replace")
        yield block


def _pieces(line: bytes) -> Iterator[bytes]:
    """``\\r``-separated parts of one line, each at most ``MAX_LINE`` bytes."""
    if line.endswith(b"\r"):
        line = line[:-1]
    parts = line.split(b"\r") if b"\r" in line else (line,)
    for part in parts:
        for i in range(0, len(part), MAX_LINE):
            yield part[i:i + MAX_LINE]


def segments(source: Source) -> Iterator[tuple[int, str]]:
    """``(line_no, text)`` for every non-empty segment of every physical line, streaming."""
    pending = b""
    line_no = 0
    for block in _chunks(source):
        buf = pending + block if pending else block
        start = 0
        while True:
            nl = buf.find(b"\n", start)
            if nl < 0:
                break
            line_no += 1
            for piece in _pieces(buf[start:nl]):
                if piece:
                    yield line_no, piece.decode("utf-8", "replace")
            start = nl + 1
        pending = buf[start:]
        if len(pending) > MAX_LINE:
            # a very long line: hand on what is complete up to the last \r (or a hard cut)
            cut = pending.rfind(b"\r")
            cut = cut + 1 if cut > 0 else MAX_LINE
            for piece in _pieces(pending[:cut]):
                if piece:
                    yield line_no + 1, piece.decode("utf-8", "replace")
            pending = pending[cut:]
    if pending:
        line_no += 1
        for piece in _pieces(pending):
            if piece:
                yield line_no, piece.decode("utf-8", "replace")


def parse(source: Source) -> Iterator[Event]:
    """Events of every line of ``source``, in order, streaming (see the module docstring).

    Opening errors (missing file, directory, permissions) raise ``OSError`` on the first
    ``next()``; a truncated gzip raises ``EOFError`` after the events read so far.
    """
    state = LineState()
    for line_no, text in segments(source):
        yield from parse_segment(text, line_no, state)
    yield from finish(state)


def scan(path: str | os.PathLike[str] | IO[bytes], **kw: Any) -> Iterator[Event]:
    """The doctor's fast reader (``workers=``, ``progress=``): the decisive lines only, found at
    C speed; same verdict as ``parse``.  See ``fampnb._logscan``."""
    from fampnb._logscan import scan as _scan

    return _scan(path, **kw)


# ---- shipped samples -------------------------------------------------------------------------
def _sample_dir() -> Traversable:
    return resources.files("fampnb").joinpath("data").joinpath("real-logs")


def sample_logs() -> dict[str, Traversable]:
    """The shipped real excerpts: file name -> resource (``.read_text()``, or pass to ``parse``
    via ``read_sample``).  Works from an installed wheel (``importlib.resources``)."""
    return {p.name: p for p in sorted(_sample_dir().iterdir(), key=lambda p: p.name)
            if p.name.endswith(".log")}


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
        cells = [c.strip() for c in _split_row(line)]
        row = dict(zip(header, cells))
        verdict = row.get("expected verdict", "").strip("` ")
        certainty = row.get("certainty", "").split(" ")[0].strip()
        out[m.group(1)] = {"verdict": verdict, "certainty": certainty,
                           "framework": row.get("framework", ""), "source": row.get("source", "")}
    return out


def _split_row(line: str) -> list[str]:
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
