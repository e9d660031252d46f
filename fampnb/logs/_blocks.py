"""Blocks of complete lines, and the picker's lines of each (``fampnb.logs._pick``): the reading
half of the fast reader, shared by the in-process scan and the worker processes."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import IO, Any

from fampnb.logs._pick import Pick, Picker

__all__ = ["BLOCK", "pick_stream", "pick_range"]

#: blocks a line may span before it is handed on in pieces (memory stays within a few blocks;
#: a line up to 2 MiB stays whole)
LONG = 4

#: bytes a block: a block, its template copy and its line objects then fit in a core's L2 cache
#: (2 MiB blocks made splitting and freeing the lines about twice as slow)
BLOCK = 512 << 10


def _blocks(fh: IO[Any]) -> Iterator[tuple[bytes, int]]:
    """Blocks of complete lines, as ``(buffer, end)``: the block is ``buffer[:end]`` (not cut out:
    a copy saved); a line longer than LONG blocks is handed on in pieces."""
    carry = b""
    while True:
        data = fh.read(BLOCK)
        if isinstance(data, str):
            data = data.encode("utf-8", "replace")
        if not data:
            if carry:
                yield carry, len(carry)
            return
        buf = carry + data if carry else data
        cut = buf.rfind(b"\n") + 1
        if cut == 0 and len(buf) < BLOCK * LONG:
            carry = buf
            continue
        if cut == 0:
            cut = len(buf)
        carry = buf[cut:]
        yield buf, cut


def _file_blocks(path: str, start: int, end: int,
                 progress: Callable[[int, int], None] | None = None) -> Iterator[tuple[bytes, int]]:
    """``_blocks`` of ``path[start:end]``, each read at its offset (``os.pread``: no read buffers
    to join, and a file truncated meanwhile just ends early); ``progress(done, end)`` after each
    block."""
    if end <= start:
        if progress:
            progress(end, end)
        return
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        pos = start                   # blocks end at the last newline before start + k*BLOCK
        edge = start
        while pos < end:
            for _ in range(LONG):
                edge = min(end, edge + BLOCK)
                data = _pread(fd, edge - pos, pos)
                cut = data.rfind(b"\n") + 1
                if cut or edge == end or len(data) < edge - pos:
                    break
            if not data:
                break
            yield data, cut or len(data)
            pos += cut or len(data)
            if progress:
                progress(pos, end)
    finally:
        os.close(fd)


def _pread(fd: int, n: int, offset: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, n, offset)
    os.lseek(fd, offset, os.SEEK_SET)     # (Windows)
    return os.read(fd, n)


def pick_stream(source: IO[Any] | tuple[Any, ...], head: bool, tail: bool,
                 pk: Picker) -> Iterator[Pick]:
    """Picked lines of a file object, or of ``(path, start, end)`` (and a progress callback)
    read by offset."""
    prev: tuple[bytes, int] | None = None
    first = True
    blocks = (_file_blocks(*source) if isinstance(source, tuple)
              else _blocks(source))
    for block in blocks:
        if prev is not None:
            yield from pk.block(*prev, head=head and first, tail=False, first=first and not head)
            first = False
        prev = block
    if prev is not None:
        yield from pk.block(*prev, head=head and first, tail=tail, first=first and not head)


def pick_range(path: str, start: int, end: int, head: bool, tail: bool) -> tuple[int, list[Pick]]:
    """Worker: (lines in the range, picked lines) of ``path[start:end]``."""
    pk = Picker()
    picks = list(pick_stream((path, start, end), head, tail, pk))
    return pk.lines_done, picks


