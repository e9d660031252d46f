"""The doctor's fast reader: find the rare decisive lines at C speed, parse only those.

``scan(source)`` reads 2 MiB blocks of complete lines (a regular file by offset, ``os.pread``) and
hands each to a ``fampnb._logpick.Picker``, which chooses the few lines that can change a verdict
(rare templates, the records around them, a sample of the rest: see there); only those are
parsed, with the same rules and line numbers as ``parse``.

For a large file on a machine with several cores, the picking (the C-heavy part) runs in forked
worker processes over byte ranges of the file, started as soon as ``scan`` is called; the parent
parses each range's picks in order as they arrive, while the workers read on.  The events are a
subset of ``parse``'s with the same line numbers, and the verdict is the same (the tests compare
both on every sample and on generated logs).  The workers are forked directly (``_Feed``): the
whole run is CPU-bound on two cores, so start-up spent importing a process pool is time lost.
Measured on the 2-core CI box (``benchmarks/bench_doctor.py``, a 190 MB DeepSpeed + HF Trainer
log): ~0.5 s, 4.4-4.8x ``grep -ciE`` on the same file, ~0.9 s of CPU in all, 24 MB peak RSS.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING, Any

from fampnb._logpick import Pick, Picker

if TYPE_CHECKING:   # the rules are imported where lines are parsed: workers only pick
    from fampnb._logrules import Event, LineState

BLOCK = 2 << 20
MAX_PIECE = 1 << 20
PARALLEL_BYTES = 24 << 20   # files at least this large are pre-scanned by worker processes


def _blocks(fh: IO[Any]) -> Iterator[tuple[bytes, int]]:
    """Blocks of complete lines, as ``(buffer, end)``: the block is ``buffer[:end]`` (not cut out:
    a copy saved); a line longer than 4 blocks is handed on in pieces."""
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
        if cut == 0 and len(buf) < BLOCK * 4:
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
            for _ in range(4):
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


def _pick_stream(source: IO[Any] | tuple[Any, ...], head: bool, tail: bool,
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


def _pick_range(path: str, start: int, end: int, head: bool, tail: bool) -> tuple[int, list[Pick]]:
    """Worker: (lines in the range, picked lines) of ``path[start:end]``."""
    pk = Picker()
    picks = list(_pick_stream((path, start, end), head, tail, pk))
    return pk.lines_done, picks


def _parse_picks(picks: Iterator[Pick], base: int, state: LineState) -> Iterator[Event]:
    from fampnb._logrules import parse_segment

    for idx, raw in picks:
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if b"\r" not in raw and 0 < len(raw) <= MAX_PIECE:    # (the common case)
            yield from parse_segment(raw.decode("utf-8", "replace"), base + idx + 1, state)
            continue
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


def _keep_freed() -> None:
    """In a worker process: let glibc keep freed blocks in the heap.  By default it hands each
    freed 2 MiB block back to the OS and the next block page-faults it in again (~500 faults a
    block, ~12% of the picking time here).  A no-op where ``mallopt`` is missing."""
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        libc.mallopt(-3, 64 << 20)     # M_MMAP_THRESHOLD: blocks come from the heap
        libc.mallopt(-1, 256 << 20)    # M_TRIM_THRESHOLD: and stay there when freed
    except (ImportError, OSError, AttributeError):
        pass


def _start_parallel(path: str, size: int, workers: int,
                    progress: Callable[[int, int], None] | None) -> Iterator[Event]:
    """Fork ``workers`` processes now, each picking every ``workers``-th byte range of ``path``;
    the returned iterator parses the ranges' picks in order as they arrive (the caller imports
    and sets up the rest of its work meanwhile)."""
    parts = workers * 4      # the parent parses range k while the workers read on
    points = _split_points(path, size, parts)
    ranges = [(points[k], points[k + 1]) for k in range(parts) if points[k] < points[k + 1]]
    jobs = [(a, b, k == 0, k == len(ranges) - 1) for k, (a, b) in enumerate(ranges)]
    workers = min(workers, len(jobs))
    feeds: list[_Feed] = []
    try:
        for w in range(workers):
            feeds.append(_Feed(path, jobs[w::workers]))
        for f in feeds:         # (the threads start once every worker is forked)
            f.start()
    except BaseException:
        _close_all(feeds, kill=True)
        raise

    def events() -> Iterator[Event]:
        from fampnb._logrules import LineState, finish

        state, base, done = LineState(), 0, False
        try:
            for k, (_, end) in enumerate(ranges):
                n_lines, picks = feeds[k % workers].next()
                yield from _parse_picks(iter(picks), base, state)
                base += n_lines
                if progress:
                    progress(end, size)
            done = True
        finally:            # (also when the caller stops early: the workers are stopped)
            _close_all(feeds, kill=not done)
        yield from finish(state)

    import weakref

    gen = events()
    weakref.finalize(gen, _close_all, feeds, True)  # (an iterator dropped before it started)
    return gen


def _close_all(feeds: list[_Feed], kill: bool) -> None:
    for f in feeds:
        f.close(kill)


class _Feed:
    """A forked worker process that picks its byte ranges of a file in order, and a thread that
    reads each range's result from the worker's pipe as soon as it is written (a worker never
    waits for the parent to parse before it starts its next range)."""

    def __init__(self, path: str, jobs: list[tuple[int, int, bool, bool]]) -> None:
        import pickle
        import queue
        import threading

        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:                              # the worker: never returns
            status = 1
            try:
                os.close(r)
                _keep_freed()
                with open(w, "wb") as out:
                    for job in jobs:
                        try:
                            item: tuple[str, Any] = ("ok", _pick_range(path, *job))
                        except Exception as exc:  # noqa: BLE001 (raised again in the parent)
                            item = ("error", exc)
                        try:
                            data = pickle.dumps(item, pickle.HIGHEST_PROTOCOL)
                        except Exception as exc:  # noqa: BLE001 (e.g. an error that won't pickle)
                            err = item[1] if item[0] == "error" else exc
                            item = ("error", OSError(f"{type(err).__name__}: {err}"))
                            data = pickle.dumps(item)
                        out.write(data)
                        out.flush()
                        if item[0] == "error":
                            break
                status = 0
            finally:
                os._exit(status)
        os.close(w)
        self.pid, self.fh = pid, open(r, "rb")
        self.items: queue.SimpleQueue[tuple[str, Any] | None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.closed = False

    def start(self) -> None:
        self.thread.start()

    def _read(self) -> None:
        import pickle

        try:
            while True:
                self.items.put(pickle.load(self.fh))
        except Exception:  # noqa: BLE001 (EOF, or a worker stopped mid-write: ``next`` says so)
            self.items.put(None)

    def next(self) -> tuple[int, list[Pick]]:
        """The next range's (lines in the range, picked lines); a worker's error is raised."""
        item = self.items.get()
        if item is None:
            raise OSError(f"a reader process (pid {self.pid}) ended before its part of the "
                          f"file was read")
        if item[0] == "error":
            raise item[1]
        return item[1]  # type: ignore[no-any-return]

    def close(self, kill: bool) -> None:
        """Reap the worker (stopped first when ``kill``: the caller stopped early); once only
        (a reaped worker's pid may belong to another process by now)."""
        if self.closed:
            return
        self.closed = True
        if kill:
            import signal

            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
        if self.thread.ident is not None:
            self.thread.join()
        self.fh.close()


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

    if plain:                               # a regular uncompressed file: read by offset
        state = LineState()
        yield from _parse_picks(_pick_stream((path, 0, size, progress), True, True,
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
    return hasattr(os, "fork")


def _scan_stream(fh: IO[Any]) -> Iterator[Event]:
    from fampnb._logrules import LineState, finish

    state = LineState()
    yield from _parse_picks(_pick_stream(fh, True, True, Picker()), 0, state)
    yield from finish(state)
