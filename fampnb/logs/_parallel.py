"""Reading a large file in parallel: one function, on the standard library's process pool.

``pick_ranges(path, size, workers)`` cuts the file at line starts into about ``4 * workers`` byte
ranges (``_targets``) and picks each in a worker process (``fampnb.logs._blocks.pick_range``); it
yields ``(end, lines, picks)`` per range, in file order, as the results arrive.  The workers
start at the call (the caller imports the rules meanwhile); the pool is shut down when the
iterator ends or is dropped (``with`` inside a generator that has started: ``close()`` runs it).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

from fampnb.logs._blocks import pick_range
from fampnb.logs._pick import Pick

__all__ = ["pick_ranges"]


def _targets(size: int, workers: int) -> list[int]:
    """Offsets to cut near: ``4 * workers`` equal ranges, the first and the last of them cut
    again into one piece per worker (the parsing process gets its first picks sooner, and has
    less left to parse once the workers are done)."""
    parts, small = 4 * workers, 4 * workers * workers
    cuts = {size * k // parts for k in range(1, parts)}
    cuts |= {size * j // small for j in range(1, workers)}
    cuts |= {size - size * j // small for j in range(1, workers)}
    return sorted(cuts)


def _split_points(path: str, size: int, targets: list[int]) -> list[int]:
    points = [0]
    with open(path, "rb") as fh:
        for t in targets:
            fh.seek(t)
            fh.readline()
            points.append(max(points[-1], fh.tell()))
    points.append(size)
    return points


def pick_ranges(path: str, size: int, workers: int) -> Iterator[tuple[int, int, list[Pick]]]:
    """``(end, lines, picks)`` of each byte range of ``path``, in order (see the module)."""
    gen = _results(path, size, workers)
    next(gen)                   # runs up to the first ``yield``: the ranges are submitted now
    return gen  # type: ignore[return-value]


def _results(path: str, size: int, workers: int) -> Iterator[tuple[int, int, list[Pick]] | None]:
    points = _split_points(path, size, _targets(size, workers))
    ranges = [(a, b) for a, b in zip(points, points[1:]) if a < b]
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
    with ProcessPoolExecutor(max_workers=min(workers, len(ranges)), mp_context=ctx) as pool:
        futures = [pool.submit(pick_range, path, a, b, k == 0, k == len(ranges) - 1)
                   for k, (a, b) in enumerate(ranges)]
        try:
            yield None
            for (_, end), fut in zip(ranges, futures):
                n_lines, picks = fut.result()
                yield end, n_lines, picks
        finally:
            for fut in futures:
                fut.cancel()
