"""The doctor's fast reader: find the rare decisive lines at C speed, parse only those.

Long logs repeat a few line *templates* (the same line with other digits).  ``scan(source)``
reads 2 MiB blocks, maps every digit to ``0`` (``bytes.translate``), splits the block and takes
the set of templates, all in C.  Each new template is classified once with the full rule test
(``RARE``: nan/inf, overflow, minimum, error, precision words, ...), so per block only these
lines are parsed:

- the lines of rare templates, and the line after those that start a record (DeepSpeed's verbose
  ``Reducing dynamic loss scale`` follows its ``Grad overflow`` line; traceback messages and
  warning sources follow their header);
- lines that end inside a scaler wording (wrapped at the terminal width, ``fampnb._logwrap``) and
  the line after each (the reader joins them), also across block and range boundaries;
- the first and last 64 KiB of the log (start-up and ending);
- every line where a printed loss scale changes (Megatron/Keras/user loops print one on every
  line; digits are invisible in templates, so the value is compared on those lines);
- Megatron lines with a non-zero skipped/nan counter or a missing loss field;
- the first and last DeepSpeed ``skipped=`` counter of each block (its sum telescopes);
- the first ``FIRST_RECORDS`` loss records of the log, the ``AFTER`` loss records that follow
  each rare line (the rules count at most 3: the counts agree with a full parse), and a sample
  of the others (the first line of each template, then one after every ``SAMPLE`` lines);
- a block with very many lines of one rare template (NaN on every line) keeps the first and last
  ``RARE_CAP`` of them.

For a large file on a machine with several cores, the picking (the C-heavy part) runs in worker
processes over byte ranges of the file; the parent parses the picked lines in order.  The events
are a subset of ``parse``'s with the same line numbers, and the verdict is the same (the tests
compare both on every sample and on generated logs).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator
from itertools import compress, count
from typing import IO, TYPE_CHECKING, Any

from fampnb._logwrap import wrap_head

if TYPE_CHECKING:   # the rules are imported where lines are parsed: workers only pick
    from fampnb._logrules import Event, LineState

BLOCK = 2 << 20
EDGE = 64 << 10
SAMPLE = 2048         # one ordinary loss record in this many lines
MAX_PIECE = 1 << 20
MAX_TEMPLATES = 200_000
FIRST_RECORDS = 8     # the log's first loss records are all parsed (what "at the start" means)
AFTER = 4             # loss records parsed after each rare line (more than the rules count)
RARE_CAP = 128        # per rare template and block: the first and last this many lines
PARALLEL_BYTES = 24 << 20   # files at least this large are pre-scanned by worker processes

_DIGITS = bytes.maketrans(b"123456789", b"000000000")
# (templates have every digit mapped to 0: ``bf16`` reads ``bf00`` there)
RARE = re.compile(
    rb"(?i)(?<![a-z])(?:nan|inf|infinity)(?![a-z])|overflow|hysteresis|minimum|"
    rb"dynamic loss scale|loss scaling|skipping|lr value before|lr_scheduler|unscale|"
    rb"already been called|gradient clipping|error|exception|bf00|fp00|00-mixed|00bit|bfloat|"
    rb"precision|float00|non-finite|not finite|returned nan|_loss_scale\s+to|diverged with loss|"
    rb"invalid loss")
#: rare lines whose next line belongs to the same record (its scale, or the error message)
CONTEXT = re.compile(rb"(?i)grad overflow on iteration|traceback|error|exception|warning")
LOSSY = re.compile(rb"(?i)loss|grad[_ ]?norm|gnorm")
#: a printed scale (also a ``| loss_scale | 1024 |`` table row, ``lg_loss_scale`` included)
SCALE = re.compile(rb"(?i)(?:loss[ _]scale|grad scale)['\"]?\s*[:=|]?\s*([-+0-9.eE]+)")
MEG_SCALE = b"| loss scale:"
MEG_WITH_LOSS = re.compile(rb"loss: [^|\n]*\|\s*loss scale:")
MEG_COUNTER = re.compile(rb"iterations:\s*0*[1-9]")
_R, _S, _L, _O = 3, 2, 1, 0   # template classes: rare, scale printed, loss-like, other

Pick = tuple[int, bytes]      # (line index from the start of the range, the raw line)


class Picker:
    """Chooses the lines of each block to parse (no parsing: safe to run in a worker)."""

    def __init__(self) -> None:
        self.cls: dict[bytes, int] = {}
        self.last_scale: bytes | None = None
        self.sampled: set[bytes] = set()
        self.counters: set[bytes] = set()
        self.megatron = False
        self.lines_done = 0          # complete lines before the current block
        self.first_left = FIRST_RECORDS
        self.heads: set[bytes] = set()   # templates that end inside a wording (wrapped records)
        self.pick_first = False      # the previous block ended with a wrapped record's head

    def _classify(self, templates: set[bytes]) -> None:
        cls = self.cls
        if len(cls) > MAX_TEMPLATES:
            cls.clear()
            self.counters.clear()
            self.heads.clear()
        for t in templates.difference(cls):
            cls[t] = (_R if RARE.search(t) else _S if SCALE.search(t)
                      else _L if LOSSY.search(t) else _O)
            if wrap_head(t.rstrip(b"\r").decode("utf-8", "replace").lower()):
                self.heads.add(t)
            if b"skipped=" in t:
                self.counters.add(t)
            if MEG_SCALE in t:
                self.megatron = True

    def block(self, buf: bytes, head: bool, tail: bool, first: bool = False) -> list[Pick]:
        """The picked lines of ``buf`` (complete lines, except a very long line's piece);
        ``first``: pick the first line (it may continue a wrapped record before the range)."""
        tb = buf.translate(_DIGITS)
        lines = tb.split(b"\n")
        complete = buf.endswith(b"\n")
        if complete:
            lines.pop()
        n = len(lines)
        if n == 0:
            return []
        templates = set(lines)
        self._classify(templates)
        cls = self.cls
        pick: set[int] = set()
        if self.pick_first or first:
            pick.add(0)
        self.pick_first = False
        wrapped = templates & self.heads
        if wrapped:
            for i in _indexes(lines, wrapped):
                pick.add(i)
                pick.add(i + 1)
            self.pick_first = lines[-1] in wrapped
        if head:
            self._edge(lines, range(n), pick)
        if tail:
            self._edge(lines, range(n - 1, -1, -1), pick)
        if self.first_left:           # the first loss records of the log, all of them
            for i, t in enumerate(lines):
                if cls[t] in (_L, _S):
                    pick.add(i)
                    self.first_left -= 1
                    if not self.first_left:
                        break
        rare = {t for t in templates if cls[t] == _R}
        if rare:
            hits = _indexes(lines, rare)
            if len(hits) > 2 * RARE_CAP:
                hits = self._cap(lines, hits)
            pick.update(hits)
            ctx = {t for t in rare if CONTEXT.search(t)}
            for i in hits:
                if lines[i] in ctx:
                    pick.add(i + 1)
                self._after(lines, i, pick)
        for t in templates & self.counters:  # DeepSpeed ``skipped=``: first and last
            pick.add(lines.index(t))
            pick.add(n - 1 - lines[::-1].index(t))
        if len(self.sampled) < 1000:
            for t in templates:
                if cls[t] in (_L, _S) and t not in self.sampled:
                    self.sampled.add(t)
                    pick.add(lines.index(t))
        k = (-self.lines_done) % SAMPLE
        while k < n:
            for j in range(k, min(n, k + 64)):   # the next loss-like line
                if cls[lines[j]] in (_L, _S):
                    pick.add(j)
                    break
            k += SAMPLE
        scale_t = {t for t in templates if cls[t] == _S}
        offs: list[int] = []
        if scale_t or (self.megatron and MEG_SCALE in buf):
            offs = self._offsets(lines, range(n))
            if scale_t:
                self._scale_changes(buf, lines, offs, scale_t, pick)
            if self.megatron and MEG_SCALE in buf:
                self._megatron(buf, offs, pick)
        out: list[Pick] = []
        at, off = 0, 0
        for i in sorted(pick):
            if not 0 <= i < n:
                continue
            if offs:
                off = offs[i]
            else:
                off += sum(map(len, lines[at:i])) + (i - at)
                at = i
            out.append((self.lines_done + i, buf[off:off + len(lines[i])]))
        # a block that ends inside a very long line: its next piece keeps the line number
        self.lines_done += n if complete else n - 1
        return out

    @staticmethod
    def _cap(lines: list[bytes], hits: list[int]) -> list[int]:
        """At most the first and last ``RARE_CAP`` lines of each rare template in a block (a
        log that is NaN on every line stays fast; first, last and streaks are kept)."""
        per: dict[bytes, list[int]] = {}
        for i in hits:
            per.setdefault(lines[i], []).append(i)
        out: list[int] = []
        for idx in per.values():
            out += idx if len(idx) <= 2 * RARE_CAP else idx[:RARE_CAP] + idx[-RARE_CAP:]
        return sorted(out)

    def _after(self, lines: list[bytes], i: int, pick: set[int]) -> None:
        """The next ``AFTER`` loss records after a rare line: whether training goes on after a
        backoff or a NaN is read from the same records as a full parse would count."""
        cls, left = self.cls, AFTER
        for j in range(i + 1, min(len(lines), i + 257)):
            if cls[lines[j]] in (_L, _S):
                pick.add(j)
                left -= 1
                if not left:
                    return

    @staticmethod
    def _edge(lines: list[bytes], order: range, pick: set[int]) -> None:
        """The lines within ``EDGE`` bytes of the block's start (or end, for a reversed order)."""
        total = 0
        for i in order:
            pick.add(i)
            total += len(lines[i]) + 1
            if total >= EDGE:
                break

    @staticmethod
    def _offsets(lines: list[bytes], order: range) -> list[int]:
        out, off = [], 0
        for t in lines:
            out.append(off)
            off += len(t) + 1
        return out

    def _scale_changes(self, buf: bytes, lines: list[bytes], offs: list[int],
                       scale_t: set[bytes], pick: set[int]) -> None:
        """Lines where the printed loss scale differs from the one printed before."""
        prev = self.last_scale
        for i, t in enumerate(lines):
            if t in scale_t:
                m = SCALE.search(buf, offs[i], offs[i] + len(t))
                if m and m.group(1) != prev:
                    pick.add(i)
                    prev = m.group(1)
        self.last_scale = prev

    @staticmethod
    def _megatron(buf: bytes, offs: list[int], pick: set[int]) -> None:
        """Megatron lines with a non-zero counter, or (if any) lacking their loss field."""
        from bisect import bisect_right

        hits = [m.start() for m in MEG_COUNTER.finditer(buf)]
        if buf.count(MEG_SCALE) != len(MEG_WITH_LOSS.findall(buf)):
            start = 0
            while (j := buf.find(MEG_SCALE, start)) >= 0:
                hits.append(j)
                start = j + 1
        pick.update(bisect_right(offs, h) - 1 for h in hits)


def _indexes(lines: list[bytes], templates: set[bytes]) -> list[int]:
    """The indexes of the lines in ``templates``, in order, found in C: ``list.index`` per
    template for a few templates, one membership pass for many."""
    if len(templates) > 4:
        return list(compress(count(), map(templates.__contains__, lines)))
    out: list[int] = []
    for t in templates:
        i = -1
        try:
            while True:
                i = lines.index(t, i + 1)
                out.append(i)
        except ValueError:
            pass
    out.sort()
    return out


def _blocks(fh: IO[Any], limit: int | None = None) -> Iterator[bytes]:
    """Blocks of complete lines (a line longer than 4 blocks is handed on in pieces)."""
    carry = b""
    left = limit
    while True:
        size = BLOCK if left is None else min(BLOCK, left)
        data = fh.read(size) if size > 0 else b""
        if isinstance(data, str):
            data = data.encode("utf-8", "replace")
        if left is not None:
            left -= len(data)
        if not data:
            if carry:
                yield carry
            return
        buf = carry + data if carry else data
        cut = buf.rfind(b"\n") + 1
        if cut == 0 and len(buf) < BLOCK * 4:
            carry = buf
            continue
        if cut == 0:
            cut = len(buf)
        carry = buf[cut:]
        yield buf[:cut]


def _mapped_blocks(path: str, start: int, end: int,
                   progress: Callable[[int, int], None] | None = None) -> Iterator[bytes]:
    """``_blocks`` of ``path[start:end]`` through a memory map (no read buffers to join);
    ``progress(done, end)`` after each block."""
    import mmap

    if end <= start:
        if progress:
            progress(end, end)
        return
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        pos, edge = start, start     # blocks end at the last newline before start + k*BLOCK
        while pos < end:
            for _ in range(4):
                edge = min(end, edge + BLOCK)
                cut = mm.rfind(b"\n", pos, edge) + 1
                if cut or edge == end:
                    break
            yield mm[pos:cut or edge]
            pos = cut or edge
            if progress:
                progress(pos, end)


def _pick_stream(source: IO[Any] | tuple[Any, ...], limit: int | None, head: bool,
                 tail: bool, pk: Picker) -> Iterator[Pick]:
    """Picked lines of a file object (``limit`` bytes at most), or of ``(path, start, end)``
    (and a progress callback) through a memory map."""
    prev: bytes | None = None
    first = True
    blocks = (_mapped_blocks(*source) if isinstance(source, tuple)
              else _blocks(source, limit))
    for buf in blocks:
        if prev is not None:
            yield from pk.block(prev, head=head and first, tail=False, first=first and not head)
            first = False
        prev = buf
    if prev is not None:
        yield from pk.block(prev, head=head and first, tail=tail, first=first and not head)


def _pick_range(path: str, start: int, end: int, head: bool, tail: bool) -> tuple[int, list[Pick]]:
    """Worker: (lines in the range, picked lines) of ``path[start:end]``."""
    pk = Picker()
    picks = list(_pick_stream((path, start, end), None, head, tail, pk))
    return pk.lines_done, picks


def _parse_picks(picks: Iterator[Pick], base: int, state: LineState) -> Iterator[Event]:
    from fampnb._logrules import parse_segment

    for idx, raw in picks:
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        for part in raw.split(b"\r") if b"\r" in raw else (raw,):
            for i in range(0, len(part), MAX_PIECE):
                piece = part[i:i + MAX_PIECE]
                if piece:
                    yield from parse_segment(piece.decode("utf-8", "replace"), base + idx + 1,
                                             state)


def _split_points(path: str, size: int, parts: int) -> list[int]:
    points = [0]
    with open(path, "rb") as fh:
        for k in range(1, parts):
            fh.seek(size * k // parts)
            fh.readline()
            points.append(max(points[-1], fh.tell()))
    points.append(size)
    return points


def _workers() -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    return max(1, min(4, cpus))


def _start_parallel(path: str, size: int, workers: int,
                    progress: Callable[[int, int], None] | None) -> Iterator[Event]:
    """Submit the byte ranges of ``path`` to ``workers`` forked processes now; the returned
    iterator parses their picks in order as they arrive (the caller imports and sets up the
    rest of its work meanwhile)."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    parts = workers * 4      # the parent parses range k while the workers read on
    points = _split_points(path, size, parts)
    ranges = [(points[k], points[k + 1]) for k in range(parts) if points[k] < points[k + 1]]
    pool = ProcessPoolExecutor(workers, mp_context=get_context("fork"))
    futures = [pool.submit(_pick_range, path, a, b, k == 0, k == len(ranges) - 1)
               for k, (a, b) in enumerate(ranges)]

    def events() -> Iterator[Event]:
        from fampnb._logrules import LineState, finish

        state, base = LineState(), 0
        with pool:
            for fut, (_, end) in zip(futures, ranges):
                n_lines, picks = fut.result()
                yield from _parse_picks(iter(picks), base, state)
                base += n_lines
                if progress:
                    progress(end, size)
        yield from finish(state)

    return events()


def scan(source: str | os.PathLike[str] | IO[Any], workers: int = 1,
         progress: Callable[[int, int], None] | None = None) -> Iterator[Event]:
    """Events of the decisive lines of ``source`` (a path, or a binary/text file object).

    ``workers``: processes (forked) for the pre-scan of a large uncompressed file; 1 (the
    default, right for notebooks and threaded programs) reads in this process, 0 means the CPUs
    available (at most 4; the doctor CLI uses it).  Gzip files and streams are read in-process.
    ``progress(done, total)`` is called with bytes read (of the file on disk) as reading goes.
    A path is looked at now (``OSError`` here, not at the first event) and, for the parallel
    pre-scan, the workers start now.
    """
    if not isinstance(source, (str, os.PathLike)):
        return _scan_stream(source)
    path = os.fspath(source)
    info = os.stat(path)
    plain = False
    if stat.S_ISREG(info.st_mode):          # (a pipe is read once, as a stream)
        with open(path, "rb") as fh:
            plain = fh.read(2) != b"\x1f\x8b"
    n = _workers() if workers == 0 else max(1, workers)
    if plain and n > 1 and info.st_size >= PARALLEL_BYTES and _can_fork():
        return _start_parallel(path, info.st_size, n, progress)
    return _scan_path(path, plain, info.st_size, progress)


def _scan_path(path: str, plain: bool, size: int,
               progress: Callable[[int, int], None] | None) -> Iterator[Event]:
    from fampnb._logrules import LineState, finish
    from fampnb.logs import open_binary

    if plain:                               # a regular uncompressed file: memory-mapped
        state = LineState()
        yield from _parse_picks(_pick_stream((path, 0, size, progress), None, True, True,
                                             Picker()), 0, state)
        yield from finish(state)
        return
    with open_binary(path) as fh:
        raw = getattr(fh, "fileobj", fh)
        yield from _scan_stream(_Counting(fh, raw, size, progress) if progress else fh)


class _Counting:
    """A file wrapper that reports the position of the underlying (maybe compressed) file."""

    def __init__(self, fh: IO[Any], raw: IO[Any], total: int,
                 progress: Callable[[int, int], None]) -> None:
        self.fh, self.raw, self.total, self.progress = fh, raw, total, progress

    def read(self, n: int = -1) -> Any:
        data = self.fh.read(n)
        try:
            self.progress(self.raw.tell() if data else self.total, self.total)
        except (OSError, ValueError):
            pass
        return data


def _can_fork() -> bool:
    try:
        from multiprocessing import get_all_start_methods
    except ImportError:
        return False
    return "fork" in get_all_start_methods()


def _scan_stream(fh: IO[Any]) -> Iterator[Event]:
    from fampnb._logrules import LineState, finish

    state = LineState()
    yield from _parse_picks(_pick_stream(fh, None, True, True, Picker()), 0, state)
    yield from finish(state)
