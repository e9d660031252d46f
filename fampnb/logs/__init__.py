"""Streaming log reader: training-log lines -> ``Event`` records (framework auto-detected).

``parse(source)`` accepts a path (``str``/``PathLike``; gzip is recognised by its magic bytes, so a
``.gz`` suffix is not required; a TensorBoard event file is read with the optional tensorboard
package, ``fampnb.logs._tensorboard``), a file object in text or binary mode, or any iterable of lines
(``str`` or ``bytes``).  It reads 1 MiB blocks and never holds more than one block plus one line
(lines longer than 1 MiB are cut into pieces with the same line number), so memory stays flat.
Bytes are decoded as UTF-8, UTF-16 (BOM) or Latin-1 (``fampnb.logs._read``): binary garbage
yields no events, not an error; a gzip cut short yields the events read and a ``note`` event
(``rule="truncated"``).  ``\\r`` inside a line (tqdm progress bars) separates records: each
part is read on its own.

The rules themselves live in ``fampnb.logs._rules`` (one regex per wording of
``reference/loss-scalers.md``); nothing in a log is ever evaluated.  ``scan(path)`` is the fast
path of the doctor (``fampnb.logs._scan``): the same events for every line that can change a
verdict, and a sample of ordinary loss records.

The shipped real excerpts (``fampnb/data/real-logs``, with their README and attribution) are
available as ``sample_logs()``, ``read_sample(name)`` and ``expected_verdicts()``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

from fampnb.logs._num import SOFTMAX_FLOOR
from fampnb.logs._read import Source, open_binary, segments
from fampnb.logs._tensorboard import MissingExtra, is_event_file

if TYPE_CHECKING:
    from fampnb.logs._event import KINDS, Event, jsonable
    from fampnb.logs._samples import expected_verdicts, read_sample, sample_logs

__all__ = ["Event", "KINDS", "parse", "scan", "segments", "sample_logs", "read_sample",
           "expected_verdicts", "jsonable", "open_binary", "Source", "MissingExtra",
           "SOFTMAX_FLOOR"]

#: names loaded on first use (the doctor's workers start before the rules are imported)
_LAZY = {"Event": "_event", "KINDS": "_event", "jsonable": "_event", "sample_logs": "_samples",
         "read_sample": "_samples", "expected_verdicts": "_samples",
         "_split_row": "_samples"}    # (``split_row``: the held-out test's reader)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module = importlib.import_module(f"fampnb.logs.{_LAZY[name]}")
        return getattr(module, "split_row" if name == "_split_row" else name)
    raise AttributeError(f"module 'fampnb.logs' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


def parse(source: Source) -> Iterator[Event]:
    """Events of every line of ``source``, in order, streaming (see the module docstring).

    Opening errors (missing file, directory, permissions) raise ``OSError`` on the first
    ``next()``; a gzip cut short ends with a ``note`` event saying so.
    """
    if _tensorboard_file(source):
        yield from _tensorboard_events(source)  # type: ignore[arg-type]
        return
    from fampnb.logs._rules import LineState, finish, parse_segment, truncated_note

    state = LineState()
    readers: list[Any] = []
    for line_no, text in segments(source, readers):
        yield from parse_segment(text, line_no, state)
    yield from finish(state)
    yield from truncated_note(readers, state)


def scan(path: str | os.PathLike[str] | IO[bytes], **kw: Any) -> Iterator[Event]:
    """The doctor's fast reader (``workers=``, ``progress=``): the decisive lines only, found at
    C speed; same verdict as ``parse``.  See ``fampnb.logs._scan``."""
    if _tensorboard_file(path):
        return _tensorboard_events(path)  # type: ignore[arg-type]
    from fampnb.logs._scan import scan as fast_scan

    return fast_scan(path, **kw)


def _tensorboard_file(source: object) -> bool:
    """Is ``source`` a path to a TensorBoard event file (by content)?"""
    if not isinstance(source, (str, os.PathLike)) or not os.path.isfile(source):
        return False
    with open(source, "rb") as fh:
        return is_event_file(fh.read(64))


def _tensorboard_events(path: str | os.PathLike[str]) -> Iterator[Event]:
    """The records of an event file, one per step (``line_no``: the record's number); raises
    ``MissingExtra`` without the tensorboard package."""
    from fampnb.logs._rules import LineState, table_record
    from fampnb.logs._tensorboard import records

    state = LineState()
    for k, (step, fields) in enumerate(records(path), 1):
        yield from table_record(state, {"step": str(step), **fields}, k, "tensorboard")
