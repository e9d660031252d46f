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

import os
from collections.abc import Iterator
from typing import IO, Any

from fampnb.logs._event import KINDS, Event, jsonable
from fampnb.logs._read import Source, open_binary, segments
from fampnb.logs._rules import LineState, finish, parse_segment, table_record, truncated_note
from fampnb.logs._samples import expected_verdicts, read_sample, sample_logs
from fampnb.logs._samples import split_row as _split_row  # noqa: F401 (the held-out test's reader)
from fampnb.logs._scan import scan as _fast_scan
from fampnb.logs._tensorboard import MissingExtra, is_event_file, records

__all__ = ["Event", "KINDS", "parse", "scan", "segments", "sample_logs", "read_sample",
           "expected_verdicts", "jsonable", "open_binary", "Source", "MissingExtra"]


def parse(source: Source) -> Iterator[Event]:
    """Events of every line of ``source``, in order, streaming (see the module docstring).

    Opening errors (missing file, directory, permissions) raise ``OSError`` on the first
    ``next()``; a gzip cut short ends with a ``note`` event saying so.
    """
    if _tensorboard_file(source):
        yield from _tensorboard_events(source)  # type: ignore[arg-type]
        return
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
    return _fast_scan(path, **kw)


def _tensorboard_file(source: object) -> bool:
    """Is ``source`` a path to a TensorBoard event file (by content)?"""
    if not isinstance(source, (str, os.PathLike)) or not os.path.isfile(source):
        return False
    with open(source, "rb") as fh:
        return is_event_file(fh.read(64))


def _tensorboard_events(path: str | os.PathLike[str]) -> Iterator[Event]:
    """The records of an event file, one per step (``line_no``: the record's number); raises
    ``MissingExtra`` without the tensorboard package."""
    state = LineState()
    for k, (step, fields) in enumerate(records(path), 1):
        yield from table_record(state, {"step": str(step), **fields}, k, "tensorboard")
