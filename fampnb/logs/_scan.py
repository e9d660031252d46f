"""The doctor's fast reader: find the rare decisive lines at C speed, parse only those.

``scan(source)`` reads 512 KiB blocks of complete lines (a regular file by offset, ``os.pread``) and
hands each to a ``fampnb.logs._pick.Picker``, which chooses the few lines that can change a verdict
(rare templates, the records around them, a sample of the rest: see there); only those are
parsed, with the same rules and line numbers as ``parse``.

For a large file on a machine with several cores, the picking (the C-heavy part) can run in
worker processes over byte ranges of the file (``fampnb.logs._parallel``, one function on
``concurrent.futures``); the picks are parsed in order, with the same rules and line numbers.  The
events are a subset of ``parse``'s and the verdict is the same (the tests compare both on every
sample, on generated logs and on random runs in random notations).  A file whose content is
structured (a CSV/TSV header, a pretty-printed JSON document such as HF's ``trainer_state.json``)
or not UTF-8 (UTF-16) is parsed whole: every row is a record there.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING, Any

from fampnb.logs import _blocks
from fampnb.logs._blocks import pick_stream
from fampnb.logs._notation import structured_head
from fampnb.logs._pick import Pick, Picker
from fampnb.logs._read import Reader, decode, open_binary, segments, wrap

if TYPE_CHECKING:   # the rules load when the first event is asked for: workers start first
    from fampnb.logs._event import Event
    from fampnb.logs._rules import LineState

MAX_PIECE = 1 << 20
PARALLEL_BYTES = 24 << 20   # files at least this large are pre-scanned by worker processes


def _parse_picks(picks: Iterator[Pick], base: int, state: LineState) -> Iterator[Event]:
    from fampnb.logs._rules import parse_segment

    for idx, raw in picks:
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if b"\r" not in raw and 0 < len(raw) <= MAX_PIECE:    # (the common case)
            yield from parse_segment(decode(raw), base + idx + 1, state)
            continue
        for part in raw.split(b"\r") if b"\r" in raw else (raw,):
            for i in range(0, len(part), MAX_PIECE):
                piece = part[i:i + MAX_PIECE]
                if piece:
                    yield from parse_segment(decode(piece), base + idx + 1,
                                             state)


def scan(source: str | os.PathLike[str] | IO[Any], workers: int = 1,
         progress: Callable[[int, int], None] | None = None) -> Iterator[Event]:
    """Events of the decisive lines of ``source`` (a path, or a binary/text file object).

    ``workers``: processes for the pre-scan of a large uncompressed file (``_parallel``); 1 (the
    default, right for notebooks and threaded programs) reads in this process, 0 means the CPUs
    available (at most 4; the doctor CLI uses it).  Gzip files and streams are read in-process.
    ``progress(done, total)`` is called with bytes read (of the file on disk) as reading goes.
    A path is looked at now (``OSError`` here, not at the first event).
    """
    if not isinstance(source, (str, os.PathLike)):
        return _scan_stream(wrap(source), None)
    path = os.fspath(source)
    info = os.stat(path)
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(21, "Is a directory", path)
    plain = False
    if stat.S_ISREG(info.st_mode):          # (a pipe is read once, as a stream)
        with open(path, "rb") as fh:
            head = fh.read(64 << 10)
        plain = head[:2] != b"\x1f\x8b" and not structured_head(head)
    n = _workers() if workers == 0 else max(1, workers)
    if plain and n > 1 and info.st_size >= PARALLEL_BYTES:
        from fampnb.logs._parallel import pick_ranges

        return _scan_ranges(pick_ranges(path, info.st_size, n), info.st_size, progress)
    return _scan_path(path, plain, info.st_size, progress)


def _workers() -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    return max(1, min(4, cpus))


def _scan_ranges(results: Iterator[tuple[int, int, list[Pick]]], size: int,
                 progress: Callable[[int, int], None] | None) -> Iterator[Event]:
    """Parse the picks of consecutive byte ranges, in order: ``(end, lines, picks)`` each."""
    from fampnb.logs._rules import LineState, finish

    state, base = LineState(), 0
    for end, n_lines, picks in results:
        yield from _parse_picks(iter(picks), base, state)
        base += n_lines
        if progress:
            progress(end, size)
    yield from finish(state)


def _scan_path(path: str, plain: bool, size: int,
               progress: Callable[[int, int], None] | None) -> Iterator[Event]:
    from fampnb.logs._rules import LineState, finish

    if plain:                               # a regular uncompressed file: read by offset
        state = LineState()
        yield from _parse_picks(pick_stream((path, 0, size, progress), True, True,
                                             Picker()), 0, state)
        yield from finish(state)
        return
    with open_binary(path) as rd:
        raw = getattr(rd.fh, "fileobj", rd.fh)
        yield from _scan_stream(rd, _Counting(raw, size, progress) if progress else None)


class _Counting:
    """Reports the position of the underlying (maybe compressed) file after each block."""

    def __init__(self, raw: IO[Any], total: int, progress: Callable[[int, int], None]) -> None:
        self.raw, self.total, self.progress = raw, total, progress

    def __call__(self, more: bool) -> None:
        try:
            self.progress(self.raw.tell() if more else self.total, self.total)
        except (OSError, ValueError):
            pass


class _Blocks:
    """A reader's blocks with its first block put back (read to look at the content)."""

    def __init__(self, rd: Reader, first: bytes, tick: Callable[[bool], None] | None) -> None:
        self.rd, self.first, self.tick = rd, first, tick

    def read(self, n: int = -1) -> bytes:
        if self.first:
            data, self.first = self.first, b""
        else:
            data = self.rd.read(n if n > 0 else _blocks.BLOCK)
        if self.tick:
            self.tick(bool(data))
        return data


def _scan_stream(rd: Reader, tick: Callable[[bool], None] | None) -> Iterator[Event]:
    """A stream: the picker's lines, or every line where the content is structured (a CSV
    header, a pretty-printed JSON document) or transcoded from UTF-16."""
    from fampnb.logs._rules import LineState, finish, parse_segment, truncated_note

    first = rd.read(_blocks.BLOCK)
    state = LineState()
    src = _Blocks(rd, first, tick)
    if structured_head(first) or rd.transcoded:
        for line_no, text in segments(src):
            yield from parse_segment(text, line_no, state)
    else:
        yield from _parse_picks(pick_stream(src, True, True, Picker()), 0, state)  # type: ignore[arg-type]
    yield from finish(state)
    yield from truncated_note([rd], state)
