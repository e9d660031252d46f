"""Bytes in, text lines out: what any source of a log becomes before the rules read it.

``open_binary(path)`` opens a file for reading bytes, through gzip when it starts with the gzip
magic, and hands on UTF-8: a UTF-16 file (with a BOM, as Windows PowerShell's ``>`` writes it, or
without one but with the zero bytes of ASCII text in UTF-16) is transcoded as it is read.  A
compressed stream cut short ends where it was cut: ``reader.truncated`` then says why, and the
reader adds a ``note`` event (``rule="truncated"``) that the diagnosis turns into a caveat.

``segments(source)`` yields ``(line_no, text)`` for every non-empty ``\\r``-separated part of every
physical line, never holding more than one block plus ``MAX_LINE`` bytes (a 100 MB line without a
newline is handed on in pieces with the same line number).  Each piece is decoded as UTF-8, and
as Latin-1 when it is not valid UTF-8 (every byte is a character there: nothing is lost); terminal
colour codes are taken out (``fampnb.logs._ansi``).
"""

from __future__ import annotations

import codecs
import gzip
import os
import zlib
from collections.abc import Iterable, Iterator
from typing import IO, Any, Union

from fampnb.logs import _ansi

__all__ = ["Source", "open_binary", "segments", "decode", "pieces", "Reader", "wrap", "utf16",
           "BLOCK", "MAX_LINE"]

#: what ``parse`` accepts
Source = Union[str, "os.PathLike[str]", IO[Any], Iterable[Any]]

BLOCK = 1 << 20          # bytes read at a time
MAX_LINE = 1 << 20       # longer lines are handed on in pieces of this size
_CUT = (EOFError, zlib.error, gzip.BadGzipFile)


def decode(data: bytes) -> str:
    """UTF-8, else Latin-1 (a line from a Windows tool, or binary garbage: never an error), without
    terminal colour codes (``fampnb.logs._ansi``)."""
    if _ansi.coloured(data):
        data = _ansi.strip(data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def utf16(head: bytes) -> str | None:
    """The UTF-16 codec a file's first bytes show (a BOM before text with zero bytes, as any
    mostly-ASCII text has in UTF-16; or such text without a BOM)."""
    body = head[2:514]
    if head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) and (
            len(body) < 4 or body.count(0) * 4 >= len(body)):
        return "utf-16"
    sample = head[:512]
    if len(sample) >= 8 and sample.count(0) * 3 >= len(sample):
        odd_zero = sample[1::2].count(0) >= len(sample) // 2 * 0.9
        even_zero = sample[0::2].count(0) >= len(sample) // 2 * 0.9
        return "utf-16-le" if odd_zero else ("utf-16-be" if even_zero else None)
    return None


class Reader:
    """A binary reader over ``fh`` that hands on UTF-8 (UTF-16 transcoded, a UTF-8 BOM dropped)
    and ends quietly where a compressed stream was cut (``truncated`` says why)."""

    def __init__(self, fh: IO[Any], compressed: bool) -> None:
        self.fh, self.compressed = fh, compressed
        self.truncated = ""
        self._dec: codecs.IncrementalDecoder | None = None
        self._first = True

    def _raw(self, n: int) -> bytes:
        try:
            if self.compressed:     # one decompression at a time: a cut loses only the last
                data = self.fh.read1(n)
            else:
                data = self.fh.read(n)
        except _CUT as exc:
            self.truncated = str(exc) or type(exc).__name__
            return b""
        if isinstance(data, str):
            return data.encode("utf-8", "surrogatepass")
        return bytes(data)

    def read(self, n: int = BLOCK) -> bytes:
        data = self._raw(n)
        if self._first:
            self._first = False
            codec = utf16(data)
            if codec:
                self._dec = codecs.getincrementaldecoder(codec)("replace")
            elif data[:3] == codecs.BOM_UTF8:
                data = data[3:]
        if self._dec is not None:
            final = not data
            text = self._dec.decode(data, final)
            return text.encode("utf-8") if text or final else self.read(n)
        return data

    @property
    def transcoded(self) -> bool:
        """Is the content UTF-16 (transcoded to UTF-8 as it is read)?"""
        return self._dec is not None

    def close(self) -> None:
        self.fh.close()

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_binary(path: str | os.PathLike[str]) -> Reader:
    """Open ``path`` for reading UTF-8 bytes (see the module docstring).

    Raises ``OSError`` (``FileNotFoundError``, ``IsADirectoryError``, ``PermissionError``) as
    ``open`` does."""
    fh = open(path, "rb")  # noqa: SIM115 - returned to the caller
    try:
        magic = fh.peek(2)[:2]          # not read: a pipe cannot seek back
    except OSError:
        fh.close()
        raise
    if magic == b"\x1f\x8b":
        return Reader(gzip.GzipFile(fileobj=fh, mode="rb"), True)
    return Reader(fh, False)


def wrap(fh: IO[Any]) -> Reader:
    """A file object given by the caller (text or binary, maybe gzip) as a ``Reader``."""
    if isinstance(fh, Reader):
        return fh
    return Reader(fh, isinstance(fh, gzip.GzipFile))


def _chunks(source: Source, readers: list[Reader]) -> Iterator[bytes]:
    """The source as a stream of ``bytes`` blocks (lines from an iterable keep their ``\\n``)."""
    if isinstance(source, (str, os.PathLike)):
        with open_binary(source) as rd:
            readers.append(rd)
            yield from _read_blocks(rd)
        return
    if hasattr(source, "read"):
        rd = wrap(source)  # type: ignore[arg-type]
        readers.append(rd)
        yield from _read_blocks(rd)
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


def _read_blocks(rd: Reader) -> Iterator[bytes]:
    while True:
        block = rd.read(BLOCK)
        if not block:
            return
        yield block


def pieces(line: bytes) -> Iterator[bytes]:
    """``\\r``-separated parts of one line, each at most ``MAX_LINE`` bytes."""
    if line.endswith(b"\r"):
        line = line[:-1]
    parts = line.split(b"\r") if b"\r" in line else (line,)
    for part in parts:
        for i in range(0, len(part), MAX_LINE):
            yield part[i:i + MAX_LINE]


def segments(source: Source, readers: list[Reader] | None = None) -> Iterator[tuple[int, str]]:
    """``(line_no, text)`` for every non-empty segment of every physical line, streaming
    (``readers``: the file readers opened are appended, to ask them about truncation)."""
    pending = b""
    line_no = 0
    for block in _chunks(source, readers if readers is not None else []):
        buf = pending + block if pending else block
        start = 0
        while True:
            nl = buf.find(b"\n", start)
            if nl < 0:
                break
            line_no += 1
            for piece in pieces(buf[start:nl]):
                if piece:
                    yield line_no, decode(piece)
            start = nl + 1
        pending = buf[start:]
        if len(pending) > MAX_LINE:
            # a very long line: hand on what is complete up to the last \r (or a hard cut)
            cut = pending.rfind(b"\r")
            cut = cut + 1 if cut > 0 else MAX_LINE
            for piece in pieces(pending[:cut]):
                if piece:
                    yield line_no + 1, decode(piece)
            pending = pending[cut:]
    if pending:
        line_no += 1
        for piece in pieces(pending):
            if piece:
                yield line_no, decode(piece)
